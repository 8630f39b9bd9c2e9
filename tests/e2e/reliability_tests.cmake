# Issue 21's failure classes, each in both debuggers on a real process or core (included from
# tests/CMakeLists.txt; dscope_gdb_test there, dscope_lldb_test in lldb_tests.cmake). Expected
# text comes from each scenario: which names a run registered, which field was damaged.

# A re-run with other operators of the same count (the same addresses: debuggers turn ASLR off)
# must list the new run's operators: nothing read from the first process survives it.
set(RERUN_NAMES_1 ${CMAKE_CURRENT_BINARY_DIR}/rerun_names_1.txt)
set(RERUN_NAMES_2 ${CMAKE_CURRENT_BINARY_DIR}/rerun_names_2.txt)
file(WRITE ${RERUN_NAMES_1} "alpha::one\nalpha::two\nalpha::three\n")
file(WRITE ${RERUN_NAMES_2} "beta::uno\nbeta::dos\nbeta::tres\n")
set(RERUN_EXPECT "alpha::one\nalpha::two\nalpha::three\n19 of 19 operators match '::'"
    "beta::uno\nbeta::dos\nbeta::tres\n19 of 19 operators match '::'"
    "name: beta::dos\nschema: beta::dos(Tensor self) -> Tensor")
dscope_gdb_test(gdb_rerun_not_stale PROGRAM op_catalog
  CMD "break sample_checkpoint" "run ${RERUN_NAMES_1}" "op-table --list ::" "kill" "run ${RERUN_NAMES_2}"
      "op-table --list ::" "op-table beta::dos --registered" "kill"
  EXPECT ${RERUN_EXPECT})

# A pop at depth 0 leaves the depth at 2^64 - 1, a flipped bit 2^62: no stack holds either, and
# every walk stops at once (the first spun forever in both debuggers, the second was printed).
dscope_gdb_test(gdb_corrupt_depth_live PROGRAM infinite_redispatch
  CMD "run" "set var dscope_debug_descriptor.thread_records->depth = -1" "dispatch-trace" "dispatch-trace --all"
      "set var dscope_debug_descriptor.thread_records->depth = 1ul << 62" "dispatch-trace --json" "keyset --tls" "kill"
  EXPECT "is corrupt (dispatch depth 18 446 744 073 709 551 615 is more than any stack holds)"
         "is corrupt (dispatch depth 4 611 686 018 427 387 904 is more than any stack holds)"
  REJECT "dispatch depth 4 611 686 018 427 387 904\n")
set_tests_properties(gdb_corrupt_depth_live PROPERTIES TIMEOUT 120)

if(TARGET dscope_lldb)
  dscope_lldb_test(lldb_rerun_not_stale PROGRAM op_catalog
    CMD "b sample_checkpoint" "process launch -- ${RERUN_NAMES_1}" "op-table --list ::" "process kill"
        "process launch -- ${RERUN_NAMES_2}" "op-table --list ::" "op-table beta::dos --registered" "process kill"
    EXPECT ${RERUN_EXPECT})
endif()
