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

# ---- kernel cores with one field damaged (tests/e2e/corrupt_core.py writes each copy)

# One test per debugger on the same target: gdb_NAME and, when the plugin is built, lldb_NAME.
function(dscope_both_test name)
  cmake_parse_arguments(T "" "CORE_OF;PROGRAM" "CMD;EXPECT;REJECT" ${ARGN})
  dscope_gdb_test(gdb_${name} PROGRAM ${T_PROGRAM} CORE_OF ${T_CORE_OF} CMD ${T_CMD} EXPECT ${T_EXPECT} REJECT ${T_REJECT})
  if(TARGET dscope_lldb)
    dscope_lldb_test(lldb_${name} PROGRAM ${T_PROGRAM} CORE_OF ${T_CORE_OF} CMD ${T_CMD} EXPECT ${T_EXPECT}
      REJECT ${T_REJECT})
  endif()
endfunction()

# dscope_both_test NAME on corrupt_KIND.core: the SAMPLE's crash core with the field KIND names
# damaged (corrupt_core.py writes the copy, a fixture of its own).
function(dscope_corrupt_test name kind sample)
  add_test(NAME corrupt_${kind}
    COMMAND ${Python3_EXECUTABLE} ${E2E}/corrupt_core.py --program $<TARGET_FILE:${sample}>
            --core ${DSCOPE_CORES}/crash_${sample}.core --out ${DSCOPE_CORES}/corrupt_${kind}.core ${kind})
  set_tests_properties(corrupt_${kind} PROPERTIES LABELS "crash" FIXTURES_REQUIRED crash_${sample}
    FIXTURES_SETUP corrupt_${kind})
  dscope_both_test(${name} PROGRAM ${sample} CORE_OF corrupt_${kind} ${ARGN})
endfunction()

set(LOOP_LINE "[call] op=[myops::my_add], key=[AutogradCPU] ... repeated")

# 1. A pop at depth 0: 2^64 - 1, which no stack holds; every command stops at once.
dscope_corrupt_test(corrupt_depth_core depth-underflow infinite_redispatch
  CMD "dispatch-trace" "dispatch-trace --all" "keyset --tls"
  EXPECT "is corrupt (dispatch depth 18 446 744 073 709 551 615 is more than any stack holds)")

# 4. A block in the middle of the registry without its magic: the threads before it, and a line
# saying the walk ended early (it listed 2 of 7 threads and said nothing).
dscope_corrupt_test(corrupt_block_magic_core block-magic multithread
  CMD "dispatch-trace --all"
  EXPECT "dscope: the thread record list ends after " " blocks the runtime counts (the block at 0x"
         " has no DRECORDS magic: corrupt memory): threads in the rest are not shown")
# 4. The operator list cut at its 600th link: the 600 read, and a line saying so.
dscope_corrupt_test(corrupt_op_list_core op-next-null op_catalog
  CMD "op-table --list"
  EXPECT "\n600 operators registered\ndscope: the operator list ends after 600 of the 3 "
         " operators the dispatcher counts (a null link: corrupt memory): the rest are not shown")

# 5. Fields no thread has, and garbage where text or an operator belongs: named, not printed.
dscope_corrupt_test(corrupt_block_state_core block-state infinite_redispatch
  CMD "dispatch-trace" "dispatch-trace --all"
  EXPECT "is corrupt (state 7 is neither alive nor dead)" REJECT "(dead): dispatch depth")
dscope_corrupt_test(corrupt_block_tid_core block-tid infinite_redispatch
  CMD "dispatch-trace" "dispatch-trace --all"
  EXPECT "has no readable dispatch records: the record block at 0x" "dscope: the record block at 0x"
         "is corrupt (tid 0 is no thread id)"
  REJECT "thread tid 0 (alive)" "(it has not dispatched yet)")
dscope_corrupt_test(corrupt_block_tls_core block-tls tls_leak
  CMD "keyset --tls"
  EXPECT "of its record block points to memory that cannot be read (corrupt memory, or memory the core lacks)"
  REJECT "included: ")
dscope_corrupt_test(corrupt_block_tls_other_core block-tls-other tls_leak
  CMD "keyset --tls"
  EXPECT "of its record block is not that thread's TLS (corrupt memory)" REJECT "included: ")
dscope_corrupt_test(corrupt_op_name_core op-name op_catalog
  CMD "op-table --list linear"
  EXPECT "aten::linear.out\n" "has no operator name (corrupt memory): left out")
dscope_corrupt_test(corrupt_registered_at_core registered-at infinite_redispatch
  CMD "op-table myops::my_add"
  EXPECT "is not text (corrupt memory)" REJECT "registered at \\xff")
dscope_corrupt_test(corrupt_record_op_core record-op multithread
  CMD "dispatch-trace"
  EXPECT "[call] op=[myops::loop], key=[AutogradCPU] ... repeated" "is no operator)"
         ": the innermost, perhaps caught being written; the chain is read around it")
dscope_corrupt_test(corrupt_record_keyset_core record-keyset infinite_redispatch
  CMD "dispatch-trace"
  EXPECT ${LOOP_LINE} "(corrupt record: key set 0xffffffffffffffff has bits no dispatch key has)"
  REJECT "UnknownUnknown")

# 6. One odd record: the innermost half-written (the interface allows it) or one in the middle
# flipped. The loop, its diagnosis and its fix stay (one printed 320 raw records and no loop, the
# other hid the loop under "... 157 more"), and a line says where the odd record is.
dscope_corrupt_test(corrupt_innermost_record_core innermost-kind infinite_redispatch
  CMD "dispatch-trace"
  EXPECT ${LOOP_LINE} "from depth 0 to the top" "diagnosis: myops::my_add's AutogradCPU kernel"
         "is corrupt (kind 0 is no dispatch): the innermost, perhaps caught being written; the chain is read around it")
dscope_corrupt_test(corrupt_middle_record_core middle-slot infinite_redispatch
  CMD "dispatch-trace"
  EXPECT ${LOOP_LINE} "from depth 0 to the top" "diagnosis: myops::my_add's AutogradCPU kernel"
         "is corrupt (slot 7 is not the slot of its key set 0x2000010001); the chain is read around it"
  REJECT "more (dispatch-trace --full)")

# 9. A core opened with another program: said, the same in both (they said different things).
dscope_both_test(core_of_another_program PROGRAM tls_leak CORE_OF crash_infinite_redispatch
  CMD "dispatch-trace" "op-table aten::mm"
  EXPECT "dscope: the core file was not written by this executable: its program has build-id ")
# 9. Numbers as C reads them, an error line echoes at most 64 characters of an argument, and a
# non-ASCII word is a word like any other (in a UTF-8 locale: under LC_ALL=C GDB cannot hand it to
# any Python command, USER-GUIDE 4.7).
dscope_both_test(numbers_and_echoes PROGRAM infinite_redispatch CORE_OF crash_infinite_redispatch
  CMD "keyset 02000000200001" "keyset 019" "keyset é"
      "op-table aten::xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
  EXPECT "DispatchKeySet(CPU, AutogradCPU)"
         "dscope: 019 is no number: a leading 0 makes it octal, as in C, and 8 and 9 are no octal digits"
         "dscope: unknown operator 'aten::xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'\n"
         "dscope: cannot evaluate 'é': ")
