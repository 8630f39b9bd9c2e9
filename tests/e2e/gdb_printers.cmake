# gdb_printers tests (see tests/CMakeLists.txt for dscope_gdb_test): the pretty-printers, GDB/MI
# varobjs and the $dispatch_op_is / $dispatch_key convenience functions, on printers_program
# (tests/e2e/printers_program.cpp), a live process stopped in stop_here(). Every expected text
# comes from that program's scenario: the key set PyTorch gives a CPU tensor, the sizes it
# creates, the kernels it registers, the operators it dispatches and how often.

# -O0 -g whatever the preset: every local and every TypedOperatorHandle::dispatch argument is live.
add_executable(printers_program ${E2E}/printers_program.cpp)
target_link_libraries(printers_program PRIVATE dscope::runtime)
target_compile_options(printers_program PRIVATE -O0 -g -Wall -Wextra)

set(DSCOPE_CPU_KEYS "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)")
# The one C++ signature of aten::mm and aten::mul.Tensor, whose dispatch the program runs.
set(DSCOPE_BINARY_DISPATCH
  "dscope::TypedOperatorHandle<dscope::Tensor (dscope::Tensor const&, dscope::Tensor const&)>::dispatch")

dscope_gdb_test(gdb_printers_values PROGRAM printers_program
  CMD "break stop_here" "run" "up"
      "print ks" "print key" "print backend"
      "print x" "print undefined" "print x.impl_.p_->sizes[1]"
      "print add_name" "print mm" "print probe" "print probe_entry"
      "print cpu_kernel" "print meta_kernel" "print boxed_kernel" "print cuda_kernel"
      "print tls" "print c"
      "print dscope_debug_descriptor.thread_records->ring[0]"
      "print dscope_debug_descriptor.thread_records->ring[1]"
      "print corrupt_impl" "print dangling" "keyset x" "keyset undefined"
      "print $dispatch_op_is(\"aten::mm\")" "print $dispatch_key()"
      "kill"
  EXPECT "= ${DSCOPE_CPU_KEYS} = {CPU, ADInplaceOrView, AutogradCPU, AutocastCPU}"
         "= AutogradCPU\n" "= CPUBit\n"
         "= Tensor[2, 3] float32 cpu requires_grad keys=${DSCOPE_CPU_KEYS}"
         "sizes = {2, 3}" "strides = {3, 1}" "dtype = float32" "device = cpu" "requires_grad = true"
         "= Tensor(undefined)\n" "= 3\n"
         "= aten::add.Tensor\n"
         "= OperatorHandle(aten::mm, schema: aten::mm(Tensor self, Tensor mat2) -> Tensor)"
         "= OperatorHandle(printers::probe, schema: printers::probe(Tensor x) -> Tensor)"
         "OperatorEntry(printers::probe, schema: printers::probe(Tensor x) -> Tensor, 3 registered kernels)"
         "CPU: registered at " "Meta: registered at " "PrivateUse1: registered at " "printers_program.cpp:"
         ": probe_cpu(dscope::Tensor const&) at " ": fallthrough\n" ": boxed probe_boxed(" ": missing\n"
         "included=DispatchKeySet(BackendSelect, ADInplaceOrView), excluded=DispatchKeySet(AutocastCPU"
         "= [call] op=[aten::mm], key=[AutogradCPU]\n"
         "= [redispatch] op=[aten::mm], key=[CPU]\n"
         "= Tensor[2, 4] float32 cpu requires_grad keys=${DSCOPE_CPU_KEYS} grad_fn=<MmBackward0> = {sizes = {2, 4}"
         "= <error: tensor of 200 dimensions" "= <error: 0x10 is no operator: its name is unreadable"
         "dscope: $dispatch_op_is: main is not dispatching an operator"
         "dscope: $dispatch_key: main has no dispatch key set argument `ks`"
         "${DSCOPE_CPU_KEYS}\nraw: 0x12800010001\n" "dscope: cannot evaluate 'undefined': undefined is an undefined tensor")

# GDB/MI (what IDEs use): a DispatchKeySet varobj is an array with one child per key. (GDB gives
# every varobj whose printer has children the value "{...}"; the children carry the names.)
dscope_gdb_test(gdb_printers_mi_varobj PROGRAM printers_program
  CMD "break stop_here" "run" "up"
      "interpreter-exec mi2 \"-enable-pretty-printing\""
      "interpreter-exec mi2 \"-var-create ks_var * ks\""
      "interpreter-exec mi2 \"-var-list-children --all-values ks_var\""
      "interpreter-exec mi2 \"-var-create x_var * x\""
      "interpreter-exec mi2 \"-var-list-children --all-values x_var\""
      "kill"
  EXPECT "name=\"ks_var\",numchild=\"0\",value=\"{...}\",type=\"dscope::DispatchKeySet\""
         "displayhint=\"array\",dynamic=\"1\",has_more=\"1\""
         "numchild=\"4\",displayhint=\"array\",children="
         "name=\"ks_var.[0]\",exp=\"[0]\",numchild=\"0\",value=\"CPU\""
         "name=\"ks_var.[1]\",exp=\"[1]\",numchild=\"0\",value=\"ADInplaceOrView\""
         "name=\"ks_var.[2]\",exp=\"[2]\",numchild=\"0\",value=\"AutogradCPU\""
         "name=\"ks_var.[3]\",exp=\"[3]\",numchild=\"0\",value=\"AutocastCPU\""
         "name=\"x_var.sizes\",exp=\"sizes\",numchild=\"2\""
         "name=\"x_var.key_set\",exp=\"key_set\",numchild=\"0\",value=\"{...}\",type=\"dscope::DispatchKeySet\"")

# Below autograd the program dispatches mm twice and mul.Tensor three times, all through one
# signature's dispatch: a breakpoint there with $dispatch_op_is("aten::mm") stops exactly twice,
# at CPU (the continue after the second stop runs to the end).
dscope_gdb_test(gdb_printers_break_on_mm PROGRAM printers_program ARGS --below-autograd
  CMD "break -qualified ${DSCOPE_BINARY_DISPATCH}"
      "condition $bpnum $dispatch_op_is(\"aten::mm\")"
      "run"
      "print $dispatch_key()" "print $dispatch_op_is(\"aten::mm\")" "print $dispatch_op_is(\"aten::mul\")"
      "continue" "print $dispatch_key()" "continue" "info breakpoints"
  EXPECT "$1 = \"CPU\"\n$2 = 1\n$3 = 0\n" "$4 = \"CPU\"\n" "exited normally" "breakpoint already hit 2 times")

# A base name matches every overload: aten::mul stops at the three aten::mul.Tensor dispatches.
dscope_gdb_test(gdb_printers_break_on_base_name PROGRAM printers_program ARGS --below-autograd
  CMD "break -qualified ${DSCOPE_BINARY_DISPATCH}"
      "condition $bpnum $dispatch_op_is(\"aten::mul\")"
      "run" "print $dispatch_op_is(\"aten::mul.Tensor\")" "print $dispatch_op_is(\"aten::mm\")"
      "print this->entry_->full_name_"
      "continue" "continue" "continue" "info breakpoints"
  EXPECT "$1 = 1\n$2 = 0\n" "\"aten::mul.Tensor\"" "exited normally" "breakpoint already hit 3 times")

# In a core file (no process): a record of the overflowing chain, decoded from the core's memory.
# Every record of that chain is the same call (the crash test's expected "#0" line).
dscope_gdb_test(gdb_printers_record_in_core PROGRAM infinite_redispatch CORE_OF crash_infinite_redispatch
  CMD "print dscope_debug_descriptor.thread_records->first[0]"
      "print dscope_debug_descriptor.thread_records->ring[0]"
  EXPECT "$1 = [call] op=[myops::my_add], key=[AutogradCPU]\n$2 = [call] op=[myops::my_add], key=[AutogradCPU]\n")

# The TLS printer in a kernel core of tls_leak, which aborts after its leaked exclude of
# AutogradCPU: the thread's exclude set holds AutogradCPU besides the default autocast keys.
# (From main's frame: stopped in libc, GDB has not read the dscope::impl types yet.)
dscope_gdb_test(gdb_printers_tls_in_core PROGRAM tls_leak CORE_OF crash_tls_leak
  CMD "frame function main" "print *(dscope::impl::PODLocalDispatchKeySet*)dscope_debug_descriptor.thread_records->tls"
  EXPECT "= included=DispatchKeySet(BackendSelect, ADInplaceOrView), excluded=DispatchKeySet(AutogradCPU, AutocastCPU"
         "{included = DispatchKeySet(BackendSelect, ADInplaceOrView) = {BackendSelect, ADInplaceOrView}")

# Installed (the gdb_loading_prefix fixture of gdb_loading.cmake): the runtime's auto-load script
# loads the printers from <prefix>/share/dscope/pretty_printers, and they decode tls_leak's TLS at
# its checkpoint (after the leaked exclude of AutogradCPU).
add_test(NAME gdb_printers_installed
  COMMAND ${Python3_EXECUTABLE} ${E2E}/gdb_loading.py run --work ${CMAKE_CURRENT_BINARY_DIR}/gdb_loading
    --env LD_LIBRARY_PATH=@WORK@/prefix/lib --iex "add-auto-load-scripts-directory @WORK@/prefix/share/gdb/auto-load"
    --cmd "break sample_checkpoint" --cmd "run"
    --cmd "print *(dscope::impl::PODLocalDispatchKeySet*)dscope_debug_descriptor.thread_records->tls"
    --cmd "python import dscope_printers; print(dscope_printers.__file__)" --cmd "kill"
    --expect "= included=DispatchKeySet(BackendSelect, ADInplaceOrView), excluded=DispatchKeySet(AutogradCPU, AutocastCPU"
    --expect "@WORK@/prefix/share/dscope/pretty_printers/dscope_printers/__init__.py"
    --reject "GDB support not loaded"
    -- $<TARGET_FILE:tls_leak>)
set_tests_properties(gdb_printers_installed PROPERTIES LABELS "gdb" FIXTURES_REQUIRED gdb_loading_prefix)
