# Core-corruption fuzz (issue 21): DispatchScope's commands in GDB and lldb-16 on damaged copies
# of the crash tests' kernel cores must end in time, without a traceback or a crash, and print
# either the pristine core's text or a "dscope:" line (tests/e2e/core_fuzz.py says how the
# mutations are made and checked). Included from tests/CMakeLists.txt in the g++ release preset,
# where dscope_lldb is built and the crash fixtures leave plain kernel cores; E2E, DSCOPE_CORES,
# GDB_SCRIPT and Python3_EXECUTABLE come from there. Seeded and bounded: 60 mutations, 2 at a time,
# 30 s per debugger session; a longer local run: core_fuzz.py ... --count 300 --seed N.
set(DSCOPE_FUZZ_CORES)
foreach(sample infinite_redispatch multithread missing_kernel tls_leak op_catalog)
  list(APPEND DSCOPE_FUZZ_CORES --core ${sample}=$<TARGET_FILE:${sample}>=${DSCOPE_CORES}/crash_${sample}.core)
endforeach()
add_test(NAME core_fuzz
  COMMAND ${Python3_EXECUTABLE} ${E2E}/core_fuzz.py --gdb-script ${GDB_SCRIPT}
          --lldb-plugin $<TARGET_FILE:dscope_lldb> ${DSCOPE_FUZZ_CORES} --jobs 2 --timeout 30)
# TIMEOUT: one hang costs 2 x 30 s; ctest's own limit only guards against the script itself hanging.
set_tests_properties(core_fuzz PROPERTIES LABELS "fuzz;gdb;lldb" TIMEOUT 900
  FIXTURES_REQUIRED "crash_infinite_redispatch;crash_multithread;crash_missing_kernel;crash_tls_leak;crash_op_catalog")
