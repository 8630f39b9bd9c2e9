# Core-corruption fuzz (issue 21): DispatchScope's commands in GDB and lldb-16 on damaged copies
# of the crash tests' kernel cores must end in time, without a traceback or a crash, and print
# either the pristine core's text or a "dscope:" line (tests/e2e/core_fuzz.py says how the
# mutations are made and checked). Included from tests/CMakeLists.txt in the g++ release preset,
# where dscope_lldb is built and the crash fixtures leave plain kernel cores; E2E, DSCOPE_CORES,
# GDB_SCRIPT and Python3_EXECUTABLE come from there. Seeded and bounded: 24 mutations, 2 at a time,
# 30 s per debugger session; a longer local run: core_fuzz.py ... --count 300 --seed N.
set(DSCOPE_FUZZ_CORES)
foreach(sample infinite_redispatch multithread missing_kernel tls_leak op_catalog)
  list(APPEND DSCOPE_FUZZ_CORES --core ${sample}=$<TARGET_FILE:${sample}>=${DSCOPE_CORES}/crash_${sample}.core)
endforeach()
add_test(NAME core_fuzz
  COMMAND ${Python3_EXECUTABLE} ${E2E}/core_fuzz.py --gdb-script ${GDB_SCRIPT}
          --lldb-plugin $<TARGET_FILE:dscope_lldb> ${DSCOPE_FUZZ_CORES} --count 24 --jobs 2 --timeout 30)
# TIMEOUT: one hang costs 2 x 30 s; ctest's own limit only guards against the script itself hanging.
set_tests_properties(core_fuzz PROPERTIES LABELS "fuzz;gdb;lldb" TIMEOUT 900
  FIXTURES_REQUIRED "crash_infinite_redispatch;crash_multithread;crash_missing_kernel;crash_tls_leak;crash_op_catalog")

# The same on real PyTorch 1.13 (issue 33, item 7): dscope core, GDB and lldb-16 on damaged
# copies of the libtorch program's kernel core (tests/torch/libtorch_program.cpp; defined by
# tests/torch/torch_tests.cmake, in the release preset with torch tests on). Kernel maps,
# vtable pointers, schema bytes, program headers and heap bytes; every output the pristine
# core's or a "dscope:" line (tests/torch/torch_core_fuzz.py). One core, one pristine reading:
# the four headline cases, then 4 seeded mutations (a longer local run: --count 60 --seed N).
if(TARGET libtorch_program)
  add_test(NAME torch_core_fuzz
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/torch/torch_core_fuzz.py
            --gdb-script ${GDB_SCRIPT} --lldb-plugin $<TARGET_FILE:dscope_lldb> --dscope $<TARGET_FILE:dscope>
            --program $<TARGET_FILE:libtorch_program>
            --profile ${PROJECT_SOURCE_DIR}/profiles/feaefbc559e74298c67a4aca95dd5e2c49a4c739.profile
            --count 4 --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_core_fuzz)
  # TIMEOUT: one hang costs 3 x 60 s; ctest's own limit only guards against the script itself hanging.
  set_tests_properties(torch_core_fuzz PROPERTIES LABELS "fuzz;gdb;lldb;torch" TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
