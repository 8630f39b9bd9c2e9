# dap_tests (included from tests/CMakeLists.txt when the LLDB plugin is built): lldb-vscode-16
# driven over the Debug Adapter Protocol the way an IDE drives it (tests/e2e/dap_client.py). Its
# variables view shows a runtime value's decoded summary (the plugin's `dscope` summaries) and
# expands it with the synthetic children of pretty_printers/dscope_printers/lldb_synthetic.py,
# which `plugin load` imports by itself: the only initCommand is the plugin load. A child shows
# exactly what GDB's printer shows for it (one key name, not "CPU CPU"); a value GDB prints
# without children (a KernelFunction) does not expand.
#
# Scenario (tests/e2e/dap_program.cpp): dap::probe's AutogradCPU kernel probe_autograd runs on a
# 2x3 float32 CPU tensor `x` that requires grad, with ks = DispatchKeySet(CPU, AutogradCPU): the
# key it runs at and the backend below it (autocast is excluded by the default TLS, and
# ADInplaceOrView is a fallthrough). Built -O0 -g: in the -O2 samples LLDB 16 lists no variables
# at all for such a kernel's frame (infinite_redispatch's my_add_autograd).
find_program(DSCOPE_LLDB_VSCODE NAMES lldb-vscode-16 lldb-vscode PATHS /usr/lib/llvm-16/bin)
if(NOT DSCOPE_LLDB_VSCODE)
  message(STATUS "DispatchScope: lldb-vscode-16 not found: no DAP tests")
  return()
endif()

add_executable(dap_program ${E2E}/dap_program.cpp)
target_link_libraries(dap_program PRIVATE dscope::runtime)
target_compile_options(dap_program PRIVATE -O0 -g -Wall -Wextra)

set(DSCOPE_CPU_TENSOR_KEYS "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)")
add_test(NAME dap_keyset_in_kernel
  COMMAND ${Python3_EXECUTABLE} ${E2E}/dap_client.py --adapter ${DSCOPE_LLDB_VSCODE}
    --program $<TARGET_FILE:dap_program>
    --init "plugin load $<TARGET_FILE:dscope_lldb>"
    --break probe_autograd
    --expect "ks=DispatchKeySet(CPU, AutogradCPU)" --expect-children "ks=CPU|AutogradCPU"
    --expect "x=Tensor[2, 3] float32 cpu requires_grad keys=${DSCOPE_CPU_TENSOR_KEYS}"
    # sizes, strides (int64 arrays: lldb-vscode shows their type), dtype (the enumerator Float,
    # then the summary), device, key_set, requires_grad, grad_fn (none: x is a leaf).
    --expect-children "x=long[2]|long[2]|Float float32|cpu|${DSCOPE_CPU_TENSOR_KEYS}|true|0x0000000000000000")
set_tests_properties(dap_keyset_in_kernel PROPERTIES LABELS "lldb;dap" TIMEOUT 120)

# The locals of printers_program's main (the GDB printer tests' scenario, stopped in stop_here):
# a CPU tensor's key set, the tensor c = mm(x, y) with its MmBackward0 node, the operator entry
# of printers::probe (3 kernels), the thread's default TLS sets.
add_test(NAME dap_printers_locals
  COMMAND ${Python3_EXECUTABLE} ${E2E}/dap_client.py --adapter ${DSCOPE_LLDB_VSCODE}
    --program $<TARGET_FILE:printers_program>
    --init "plugin load $<TARGET_FILE:dscope_lldb>"
    --break stop_here --frame main
    --expect "ks=${DSCOPE_CPU_TENSOR_KEYS}" --expect-children "ks=CPU|ADInplaceOrView|AutogradCPU|AutocastCPU"
    --expect-exact "key=AutogradCPU" --expect-children "key="
    --expect "c=Tensor[2, 4] float32 cpu requires_grad keys=${DSCOPE_CPU_TENSOR_KEYS} grad_fn=<MmBackward0>"
    --expect "probe_entry=OperatorEntry(printers::probe, schema: printers::probe(Tensor x) -> Tensor, 3 registered kernels)"
    --expect-children "probe_entry=\"PrivateUse1: registered at ...|\"Meta: registered at ...|\"CPU: registered at ..."
    --expect "cpu_kernel=probe_cpu(dscope::Tensor const&) at " --expect-children "cpu_kernel="
    --expect "meta_kernel=fallthrough" --expect-children "meta_kernel="
    --expect "tls=included=DispatchKeySet(BackendSelect, ADInplaceOrView), excluded=DispatchKeySet(AutocastCPU"
    --expect-children "tls=DispatchKeySet(BackendSelect, ADInplaceOrView)|DispatchKeySet(AutocastCPU, ...")
set_tests_properties(dap_printers_locals PROPERTIES LABELS "lldb;dap" TIMEOUT 120)
