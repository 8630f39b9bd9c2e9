# lldb-16 on the samples and cores of the GDB tests (tests/CMakeLists.txt, gdb_loading.cmake),
# with the plugin (lldb/, `plugin load`). Same scenarios, same expected texts: they come from what
# each sample does (which operator, which key, which kernel), never from recorded output. An LLDB
# crash, an unknown command (the plugin did not load) or a traceback fails every test.
set(LLDB_PLUGIN $<TARGET_FILE:dscope_lldb>)
function(dscope_lldb_test name)
  cmake_parse_arguments(T "" "CORE;CORE_OF;PROGRAM;PLUGIN" "CMD;EXPECT;REJECT;ARGS;SETTINGS;ON_CRASH;REQUIRES" ${ARGN})
  if(NOT T_PLUGIN)
    set(T_PLUGIN ${LLDB_PLUGIN})
  endif()
  set(command ${Python3_EXECUTABLE} ${E2E}/debugger.py --debugger lldb --lldb-plugin ${T_PLUGIN})
  if(T_PROGRAM)
    list(APPEND command --program $<TARGET_FILE:${T_PROGRAM}>)
  endif()
  if(T_CORE_OF)
    list(APPEND command --core ${DSCOPE_CORES}/${T_CORE_OF}.core)
  elseif(T_CORE)
    list(APPEND command --core ${T_CORE})
  endif()
  foreach(s ${T_SETTINGS})
    list(APPEND command --lldb-setting ${s})
  endforeach()
  foreach(c ${T_CMD})
    list(APPEND command --cmd ${c})
  endforeach()
  foreach(c ${T_ON_CRASH})
    list(APPEND command --on-crash ${c})
  endforeach()
  foreach(e ${T_EXPECT})
    list(APPEND command --expect ${e})
  endforeach()
  foreach(r ${T_REJECT})
    list(APPEND command --reject ${r})
  endforeach()
  if(T_ARGS)
    list(APPEND command --args ${T_ARGS})
  endif()
  add_test(NAME ${name} COMMAND ${command})
  set_tests_properties(${name} PROPERTIES LABELS "lldb")
  set(required ${T_REQUIRES})
  if(T_CORE_OF)
    list(APPEND required ${T_CORE_OF})
  endif()
  if(required)
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED "${required}")
  endif()
endfunction()

set(DSCOPE_CPU_KEYS "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)")

# ---- kernel cores (the crash tests' fixtures) ----

# infinite_redispatch: my_add's AutogradCPU kernel calls my_add again; the records fold the cycle
# and name the kernel and the fix, without unwinding the 200 000-frame stack.
dscope_lldb_test(lldb_dispatch_trace_overflow_core PROGRAM infinite_redispatch CORE_OF crash_infinite_redispatch
  CMD "dispatch-trace"
  EXPECT "[call] op=[myops::my_add], key=[AutogradCPU] ... repeated" "from depth 0 to the top"
         "my_add_autograd" "ks & after_autograd_keyset")
# multithread: every worker loops on myops::loop at AutogradCPU; --all shows each thread.
dscope_lldb_test(lldb_dispatch_trace_multithread_core PROGRAM multithread CORE_OF crash_multithread
  CMD "dispatch-trace --all"
  EXPECT "[call] op=[myops::loop], key=[AutogradCPU] ... repeated" "loop_autograd" "(alive)")
# missing_kernel: only_cpu has no Meta kernel, so Meta falls to the Meta backend fallback.
dscope_lldb_test(lldb_missing_kernel_core PROGRAM missing_kernel CORE_OF crash_missing_kernel
  CMD "dispatch-trace" "op-table myops::only_cpu --key Meta"
  EXPECT "#0 [call] op=[myops::only_cpu], key=[AutogradMeta]" "[redispatchBoxed] op=[myops::only_cpu], key=[Meta]"
         "[backend fallback]" "metaFallback")
# The same chain from the native stack: both kernels are backend fallbacks every operator's table
# shares, so the operator comes from the words the dispatch left on the stack (the handle). The
# kind of the inner one, [redispatchBoxed], comes from g++'s DWARF call site of autogradFallback's
# call (the entry points tail-call dispatchBoxed: no frame); clang 14 describes none there (GDB's
# bt shows no tail-call frame either), so it is [?].
set(missing_kernel_inner "#1 [?] op=[myops::only_cpu], key=[Meta]")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(missing_kernel_inner "#1 [redispatchBoxed] op=[myops::only_cpu], key=[Meta]")
endif()
dscope_lldb_test(lldb_missing_kernel_core_frames PROGRAM missing_kernel CORE_OF crash_missing_kernel
  CMD "dispatch-trace --frames"
  EXPECT "#0 [call] op=[myops::only_cpu], key=[AutogradMeta]" "${missing_kernel_inner}"
  REJECT "one of" "note:")
# Ctrl-C during the long --frames walk on the overflow core ends it with one line (LLDB drops an
# interrupted command's result: the plugin writes the line itself), and lldb still works.
add_test(NAME lldb_interrupt_frames_walk COMMAND ${Python3_EXECUTABLE} ${E2E}/interrupt.py --lldb-plugin ${LLDB_PLUGIN}
  --program $<TARGET_FILE:infinite_redispatch> --core ${DSCOPE_CORES}/crash_infinite_redispatch.core
  --cmd "dispatch-trace --frames" --after "keyset 0x12800010001" --expect-after "${DSCOPE_CPU_KEYS}")
set_tests_properties(lldb_interrupt_frames_walk PROPERTIES LABELS "lldb" FIXTURES_REQUIRED crash_infinite_redispatch)
# The overflow core cut at half its size (tests/CMakeLists.txt): LLDB 16 gives no reason why its
# unwinder stopped; the plugin finds the caller's return address unreadable, and --frames says so
# in GDB's words (DSCOPE_TRUNCATED_FRAMES_EXPECT).
if(DSCOPE_TRUNCATED_FRAMES_EXPECT)
  dscope_lldb_test(lldb_truncated_core_frames PROGRAM infinite_redispatch CORE_OF truncated_infinite_redispatch
    CMD "dispatch-trace --frames" "dispatch-trace --frames --json" EXPECT ${DSCOPE_TRUNCATED_FRAMES_EXPECT}
    REJECT "no dispatch frame on the stack" "\"outermost frame\"")
endif()
# tls_leak: an ExcludeDispatchKeyGuard for AutogradCPU that was never undone, read from the
# thread records (LLDB 16 cannot read thread_local in a core).
dscope_lldb_test(lldb_tls_leak_core PROGRAM tls_leak CORE_OF crash_tls_leak
  CMD "keyset --tls"
  EXPECT "excluded: DispatchKeySet(AutogradCPU, AutocastCPU" "excluded beyond the default: AutogradCPU")
# op_catalog: PyTorch's operator names at scale; aten::linear is registered with its schema.
dscope_lldb_test(lldb_op_catalog_core PROGRAM op_catalog CORE_OF crash_op_catalog
  CMD "op-table --list" "op-table aten::linear --registered"
  EXPECT "operators registered" "name: aten::linear" "schema: aten::linear(Tensor self) -> Tensor")
# Bad input: one "dscope:" line each, and the batch goes on (the last command still runs).
dscope_lldb_test(lldb_bad_input_core PROGRAM infinite_redispatch CORE_OF crash_infinite_redispatch
  CMD "op-table aten::mmm" "keyset garbage+" "keyset --bogus" "dispatch-break aten::mm" "dispatch-break"
      "dispatch-trace --thread 99" "keyset 1/0" "keyset 1e3" "keyset abort" "keyset 0x12800010001"
  EXPECT "dscope: unknown operator 'aten::mmm'; did you mean aten::mm" "dscope: cannot evaluate 'garbage+'"
         "dscope: cannot evaluate '1/0': division by zero is undefined\n"
         "dscope: unknown option --bogus" "dscope: cannot write memory"
         "dscope: dispatch-break needs an operator name; usage: dispatch-break OP [--key K] | dispatch-break --list"
         "dscope: no thread 99" "dscope: cannot evaluate '1e3': 1e3 is a double, not a DispatchKeySet or a tensor"
         "dscope: cannot evaluate 'abort': abort is a void (*)(), not a DispatchKeySet or a tensor\n"
         "${DSCOPE_CPU_KEYS}"
  REJECT "<user expression")  # the reason without clang's location (LLDB fails 1/0 on a warning)
# At a live stop, expressions that have no value are refused as GDB refuses them, never decoded:
# 1/0 (clang's JIT left an undefined value; the IR interpreter, which runs no code in the
# process, refuses it), a function (clang decays abort to its address).
dscope_lldb_test(lldb_bad_input_live PROGRAM basic_dispatch
  CMD "breakpoint set -n mm_cpu" "process launch" "keyset 1/0" "keyset abort" "keyset &abort" "process kill"
  EXPECT "stop reason = breakpoint" "dscope: cannot evaluate '1/0': division by zero is undefined\n"
         "dscope: cannot evaluate 'abort': abort is a void (*)(), not a DispatchKeySet or a tensor\n"
         "dscope: cannot evaluate '&abort': &abort is a void (*)(), not a DispatchKeySet or a tensor\n"
  REJECT "raw: 0x")
# A program not started: LLDB reads the executable's file as GDB does, but only what lies in its
# sections: address 0 (the ELF header's place in the first segment) is unreadable, as in GDB; a
# global's value is still read from the file. (The sample's own copy of the constexpr
# after_autograd_keyset: g++ emits it; clang folds every use and emits none to read.)
set(not_started_cmd "keyset *(long*)0" "keyset *(long*)8")
set(not_started_expect "dscope: cannot evaluate '*(long*)0': Cannot access memory at address 0x0\n"
    "dscope: cannot evaluate '*(long*)8': Cannot access memory at address 0x8\n")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND not_started_cmd "keyset dscope::after_autograd_keyset")
  list(APPEND not_started_expect "(lldb) keyset dscope::after_autograd_keyset\nDispatchKeySet(CPU, CUDA, HIP,")
endif()
dscope_lldb_test(lldb_keyset_not_started PROGRAM infinite_redispatch CMD ${not_started_cmd} EXPECT ${not_started_expect})
# Raw key sets decode with no program at all; the commands that need one say so in one line.
dscope_lldb_test(lldb_keyset_without_process
  CMD "keyset 0x12800010001" "keyset 0x8000000000010001" "keyset --tls" "op-table aten::mm" "help keyset"
      "help dispatch-break"
  EXPECT "${DSCOPE_CPU_KEYS}" "DispatchKeySet(CPU, UnknownUnknown)"
         "dscope: no process or core file (start the program" "Syntax: keyset EXPR|RAW [--verbose] [--json] [--profile FILE] | keyset --tls"
         "Syntax: dispatch-break OP [--key K] | dispatch-break --list | dispatch-break --delete N")
# A command while the process runs (async mode, as lldb-dap runs LLDB) is refused in the line GDB
# prints (tests/CMakeLists.txt gdb_process_running).
dscope_lldb_test(lldb_process_running
  CMD "script lldb.debugger.SetAsync(True)" "target create ${DSCOPE_SLEEP}" "process launch -- 30" "keyset 1"
      "process kill"
  EXPECT "(lldb) keyset 1\n${DSCOPE_RUNNING_LINE}" REJECT "DispatchKeySet(")

# ---- live ----

# dispatch-break before `process launch`: pending, armed before the first dispatch, stops only at
# aten::mm dispatched to CPU (basic_dispatch's forward pass: mm enters at AutogradCPU and
# redispatches to CPU). The plugin's own breakpoints stay out of `breakpoint list`.
dscope_lldb_test(lldb_dispatch_break_live PROGRAM basic_dispatch
  CMD "dispatch-break aten::mm --key CPU" "process launch" "dispatch-trace" "dispatch-break --list"
      "breakpoint list" "process kill"
  EXPECT "pending" "dispatch-break: aten::mm at CPU" "stop reason = breakpoint"
         "  argument self   DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)\n  argument mat2   "
         "  dispatched      DispatchKeySet(CPU) (a redispatch: the kernel that called it passed this set)"
         "[call] op=[aten::mm], key=[AutogradCPU]" "[redispatch] op=[aten::mm], key=[CPU]"
         "1  aten::mm at CPU" "Current breakpoints:\n(lldb) process kill"
  REJECT "[call] op=[aten::randn]")
# Before launch, the executable's zeroed copy of the descriptor is no runtime: "no process". Stopped
# at the entry point, before the runtime is loaded: pending, armed when it loads; the 17th of 16
# filter entries is refused when typed (sixteen_breaks: tests/CMakeLists.txt).
dscope_lldb_test(lldb_dispatch_break_before_runtime PROGRAM infinite_redispatch
  CMD "dispatch-trace" "process launch --stop-at-entry" ${sixteen_breaks} "dispatch-break aten::mm" "continue" "dispatch-trace"
      "process kill"
  EXPECT "dscope: no process or core file (start the program"
         "Dispatch breakpoint 1 (myops::my_add) pending" "Dispatch breakpoint 16 (myops::op16) pending"
         "dscope: 16 dispatch breakpoints are set, as many as the runtime's break filter holds: delete one first"
         "dispatch-break: myops::my_add at AutogradCPU" "thread tid"
  REJECT "Dispatch breakpoint 17" "all zeros")
# Armed at once in a live process; a base name matches every overload; --delete disarms.
dscope_lldb_test(lldb_dispatch_break_armed_live PROGRAM basic_dispatch
  CMD "b main" "process launch" "dispatch-break aten::add" "dispatch-break aten::relu"
      "dispatch-break --delete 2" "dispatch-break --list" "continue" "dispatch-trace" "process kill"
  EXPECT "Dispatch breakpoint 1: aten::add" "Dispatch breakpoint 2: aten::relu" "1  aten::add\n"
         "dispatch-break: aten::add.Tensor at AutogradCPU" "[call] op=[aten::add.Tensor], key=[AutogradCPU]"
  REJECT "2  aten::relu" "dispatch-break: aten::relu")
# The breakpoints reach a target created afterwards (LLDB's dummy target copies them, as GDB's
# breakpoints apply to every program), and `breakpoint delete` keeps them: the second launch,
# after it, stops at aten::add again. Before the fix the second target never stopped, and a copy
# from the dummy target was deleted.
set(basic_dispatch $<TARGET_FILE:basic_dispatch>)
dscope_lldb_test(lldb_dispatch_break_second_target
  CMD "target create ${basic_dispatch}" "dispatch-break aten::add" "target create ${basic_dispatch}"
      "process launch" "dispatch-trace" "process kill"
  EXPECT "dispatch-break: aten::add.Tensor at AutogradCPU" "[call] op=[aten::add.Tensor], key=[AutogradCPU]")
dscope_lldb_test(lldb_dispatch_break_kept_by_delete
  CMD "dispatch-break aten::add" "target create ${basic_dispatch}" "process launch" "process kill"
      "breakpoint delete -f" "breakpoint list" "process launch" "dispatch-trace" "process kill"
  EXPECT "dispatch-break: aten::add.Tensor at AutogradCPU" "[call] op=[aten::add.Tensor], key=[AutogradCPU]"
  REJECT "name = 'dscope_debug_break_hook'")

# Type summaries (the `dscope` category): main's locals in printers_program (see
# printers_program.cpp: a CPU tensor's key set, AutogradCPU, CPUBit, a 2x3 float32 tensor).
# References (probe_entry, the kernels) show their referent as GDB's printers do, in every build:
# clang's default limited debug info declares OperatorEntry without defining it in this program
# (its definition is in the runtime's), so the summary follows the reference's own value.
# `plugin load` alone imports the synthetic children: the key set and the operator entry
# expand; a KernelFunction, which GDB prints without children, shows no members.
dscope_lldb_test(lldb_summaries_live PROGRAM printers_program
  CMD "b stop_here" "process launch" "up" "frame variable ks key backend x undefined add_name probe tls c"
      "frame variable mm probe_entry cpu_kernel meta_kernel boxed_kernel cuda_kernel"
      "frame variable corrupt_impl dangling" "keyset ks" "keyset x.impl_.p_->key_set --verbose"
      "keyset &x" "keyset undefined" "type category list dscope"
      "process kill"
  EXPECT "(dscope::DispatchKeySet) ks = ${DSCOPE_CPU_KEYS}" "(dscope::DispatchKey) key = AutogradCPU\n"
         "(dscope::BackendComponent) backend = CPUBit\n"
         "(dscope::Tensor) x = Tensor[2, 3] float32 cpu requires_grad keys=${DSCOPE_CPU_KEYS}"
         "(dscope::Tensor) undefined = Tensor(undefined)" "(dscope::OperatorName) add_name = aten::add.Tensor\n"
         "(dscope::OperatorHandle) probe = OperatorHandle(printers::probe, schema: printers::probe(Tensor x) -> Tensor)"
         "tls = included=DispatchKeySet(BackendSelect, ADInplaceOrView), excluded=DispatchKeySet(AutocastCPU"
         "grad_fn=<MmBackward0>"
         " mm = OperatorHandle(aten::mm, schema: aten::mm(Tensor self, Tensor mat2) -> Tensor)"
         "probe_entry = OperatorEntry(printers::probe, schema: printers::probe(Tensor x) -> Tensor, 3 registered kernels)"
         "ks = ${DSCOPE_CPU_KEYS} {\n  [0] = CPU\n  [1] = ADInplaceOrView\n  [2] = AutogradCPU\n  [3] = AutocastCPU\n}"
         "  [2] = \"CPU: registered at " "  [0] = \"PrivateUse1: registered at "
         "cpu_kernel = probe_cpu(dscope::Tensor const&) at " "meta_kernel = fallthrough\n"
         "boxed_kernel = boxed probe_boxed(" "cuda_kernel = missing\n"
         "corrupt_impl = <error: tensor of 200 dimensions" "dangling = <error: 0x10 is no operator: its name is unreadable"
         "raw: 0x12800010001\nhighest key: AutocastCPU" "\n${DSCOPE_CPU_KEYS}\n"
         "(lldb) keyset &x\n${DSCOPE_CPU_KEYS}\nraw: 0x12800010001\n"
         "dscope: cannot evaluate 'undefined': undefined is an undefined tensor\n" "Category: dscope (enabled)"
  REJECT "functor_ =" "boxed_fn_ =" "<error: the value is not in memory>" "dscope: no lldb_synthetic.py")

# A copy of the plugin with no lldb_synthetic.py where an installed one would have it: one
# "dscope: " line at `plugin load`, and everything else works (summaries, commands).
set(DSCOPE_LLDB_PLUGIN_ALONE ${CMAKE_CURRENT_BINARY_DIR}/lldb_plugin_alone/libdscope_lldb.so)
add_test(NAME lldb_plugin_alone_copy COMMAND ${CMAKE_COMMAND} -E copy ${LLDB_PLUGIN} ${DSCOPE_LLDB_PLUGIN_ALONE})
set_tests_properties(lldb_plugin_alone_copy PROPERTIES LABELS "lldb" FIXTURES_SETUP lldb_plugin_alone)
dscope_lldb_test(lldb_plugin_without_synthetic PLUGIN ${DSCOPE_LLDB_PLUGIN_ALONE} REQUIRES lldb_plugin_alone
  PROGRAM printers_program
  CMD "b stop_here" "process launch" "up" "frame variable ks" "keyset 0x12800010001" "process kill"
  EXPECT "dscope: no lldb_synthetic.py at ${CMAKE_CURRENT_BINARY_DIR}/lldb_plugin_alone/"
         ": values show their summaries but do not expand into children\n(lldb) "
         "(dscope::DispatchKeySet) ks = ${DSCOPE_CPU_KEYS} {\n  repr_ = " "\n${DSCOPE_CPU_KEYS}\nraw: 0x12800010001"
  REJECT "[0] = CPU")

# dispatch-trace --frames: the chain rebuilt from LLDB's stack frames, one at a time, at a live
# stop in the CPU mm kernel (mm enters at AutogradCPU, redispatches to CPU), and on the overflow
# core, where the walk stops at its bound without unwinding the rest. mm's autograd kernel is
# registered for every autograd key: the CPU key of the dispatch inside it picks AutogradCPU.
dscope_lldb_test(lldb_frames_live PROGRAM basic_dispatch
  CMD "b mm_cpu" "process launch" "dispatch-trace --frames" "process kill"
  EXPECT "from the native stack (" "frames walked)" "#0 [call] op=[aten::mm], key=[AutogradCPU]  (stack frame #"
         "#1 [redispatch] op=[aten::mm], key=[CPU]  (stack frame #"
  REJECT "note:")
dscope_lldb_test(lldb_frames_overflow_core PROGRAM infinite_redispatch CORE_OF crash_infinite_redispatch
  CMD "dispatch-trace --frames"
  EXPECT "stopped at the 20 000-frame bound" "[call] op=[myops::my_add], key=[AutogradCPU] ... repeated"
         "my_add_autograd" "ks & after_autograd_keyset")
# LLDB stops unwinding at target.process.thread.max-backtrace-depth (600 000 by default): a
# walk that reaches the cap says so.
dscope_lldb_test(lldb_frames_cap_core PROGRAM infinite_redispatch CORE_OF crash_infinite_redispatch
  SETTINGS "target.process.thread.max-backtrace-depth 1000"
  CMD "dispatch-trace --frames --max-frames 100000"
  EXPECT "(1 000 frames walked; stopped at the debugger's 1 000-frame cap (GDB: set backtrace limit, LLDB: settings set target.process.thread.max-backtrace-depth)"
         "[call] op=[myops::my_add], key=[AutogradCPU] ... repeated")

# ---- the cores of gdb_loading.cmake: a stripped runtime, a gcore core ----

# The infinite redispatch with a `strip --strip-debug` runtime: everything through the
# descriptor and the ELF symbols. The runtime's fallback kernels are named by their symbols alone
# (as GDB's `info symbol`), the sample's own kernels (not stripped) with their source line.
dscope_lldb_test(lldb_stripped_runtime_core PROGRAM infinite_redispatch
  CORE ${LOADING_WORK}/stripped_overflow.core REQUIRES "gdb_loading_prefix;gdb_loading_stripped_core"
  CMD "image list libdscope_runtime.so.0.1" "dispatch-trace" "op-table myops::my_add"
  EXPECT "/stripped/libdscope_runtime.so" "[call] op=[myops::my_add], key=[AutogradCPU] ... repeated"
         "my_add_autograd"
         "AutogradOther: dscope::(anonymous namespace)::autogradFallback(dscope::OperatorHandle const&, dscope::DispatchKeySet, std::vector<dscope::IValue, std::allocator<dscope::IValue> >*)\n"
         "AutogradCPU: (anonymous namespace)::my_add_autograd(dscope::DispatchKeySet, dscope::Tensor const&, dscope::Tensor const&) at ")
# GDB's generate-core-file of tls_leak at its checkpoint: no dispatch in progress, AutogradCPU
# still excluded.
dscope_lldb_test(lldb_gcore PROGRAM tls_leak CORE ${LOADING_WORK}_gcore/tls_leak.core REQUIRES gdb_loading_gcore
  CMD "dispatch-trace" "keyset --tls"
  EXPECT "no dispatch in progress" "excluded: DispatchKeySet(AutogradCPU, AutocastCPU"
         "excluded beyond the default: AutogradCPU")

# ---- kernels named by the library's symbolizer ----

# The runtime's autograd fallback and the sample's autograd kernel (a GCC hot/cold-split function
# LLDB 16 has no Function for) are named from their DWARF by the library, as in GDB: the typedef
# dscope::Stack, not its expansion, and each kernel's own definition line.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
dscope_lldb_test(lldb_kernel_names_core PROGRAM infinite_redispatch CORE_OF crash_infinite_redispatch
  CMD "op-table myops::my_add"
  EXPECT "AutogradOther: dscope::(anonymous namespace)::autogradFallback(dscope::OperatorHandle const&, dscope::DispatchKeySet, dscope::Stack*) at "
         "AutogradCPU: (anonymous namespace)::my_add_autograd(dscope::DispatchKeySet, dscope::Tensor const&, dscope::Tensor const&) at "
         "samples/infinite_redispatch.cpp:34\n"
         "BackendSelect: dscope::detail::fallthroughKernel(void*, dscope::OperatorHandle const&, dscope::DispatchKeySet, std::vector<dscope::IValue, std::allocator<dscope::IValue> >*) at ")
endif()
