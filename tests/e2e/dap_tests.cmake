# dap_tests (included from tests/CMakeLists.txt when the LLDB plugin is built): lldb-vscode-16
# driven over the Debug Adapter Protocol the way an IDE drives it (tests/e2e/dap_client.py). Its
# variables view shows a runtime value's decoded summary (the plugin's `dscope` summaries) and
# expands it with the synthetic children of pretty_printers/dscope_printers/lldb_synthetic.py.
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
set(DSCOPE_LLDB_SYNTHETIC ${PROJECT_SOURCE_DIR}/pretty_printers/dscope_printers/lldb_synthetic.py)

add_executable(dap_program ${E2E}/dap_program.cpp)
target_link_libraries(dap_program PRIVATE dscope::runtime)
target_compile_options(dap_program PRIVATE -O0 -g -Wall -Wextra)

set(DSCOPE_CPU_TENSOR_KEYS "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)")
add_test(NAME dap_keyset_in_kernel
  COMMAND ${Python3_EXECUTABLE} ${E2E}/dap_client.py --adapter ${DSCOPE_LLDB_VSCODE}
    --program $<TARGET_FILE:dap_program>
    --init "plugin load $<TARGET_FILE:dscope_lldb>" --init "command script import ${DSCOPE_LLDB_SYNTHETIC}"
    --break probe_autograd
    --expect "ks=DispatchKeySet(CPU, AutogradCPU)" --expect-children "ks=CPU|AutogradCPU"
    --expect "x=Tensor[2, 3] float32 cpu requires_grad keys=${DSCOPE_CPU_TENSOR_KEYS}"
    --expect-children "x=${DSCOPE_CPU_TENSOR_KEYS}|float32|cpu|true")
set_tests_properties(dap_keyset_in_kernel PROPERTIES LABELS "lldb;dap" TIMEOUT 120)

# The locals of printers_program's main (the GDB printer tests' scenario, stopped in stop_here):
# a CPU tensor's key set, the tensor c = mm(x, y) with its MmBackward0 node, the operator entry
# of printers::probe (3 kernels), the thread's default TLS sets.
# KNOWN BUG (see lldb_tests.cmake): the reference probe_entry has no LLDB summary in clang -O2 builds.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR CMAKE_BUILD_TYPE STREQUAL "Debug")
  set(DSCOPE_DAP_PROBE_ENTRY --expect "probe_entry=OperatorEntry(printers::probe, schema: printers::probe(Tensor x) -> Tensor, 3 registered kernels)")
else()
  set(DSCOPE_DAP_PROBE_ENTRY "")
endif()
add_test(NAME dap_printers_locals
  COMMAND ${Python3_EXECUTABLE} ${E2E}/dap_client.py --adapter ${DSCOPE_LLDB_VSCODE}
    --program $<TARGET_FILE:printers_program>
    --init "plugin load $<TARGET_FILE:dscope_lldb>" --init "command script import ${DSCOPE_LLDB_SYNTHETIC}"
    --break stop_here --frame main
    --expect "ks=${DSCOPE_CPU_TENSOR_KEYS}" --expect-children "ks=CPU|ADInplaceOrView|AutogradCPU|AutocastCPU"
    --expect "c=Tensor[2, 4] float32 cpu requires_grad keys=${DSCOPE_CPU_TENSOR_KEYS} grad_fn=<MmBackward0>"
    ${DSCOPE_DAP_PROBE_ENTRY}
    --expect "tls=included=DispatchKeySet(BackendSelect, ADInplaceOrView), excluded=DispatchKeySet(AutocastCPU"
    --expect-children "tls=DispatchKeySet(BackendSelect, ADInplaceOrView)")
set_tests_properties(dap_printers_locals PROPERTIES LABELS "lldb;dap" TIMEOUT 120)
