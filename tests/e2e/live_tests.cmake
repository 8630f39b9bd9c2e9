# Live targets that change or hide under the reader (issue 33, items 5 and 6; included from
# tests/CMakeLists.txt): dscope pid on processes that die or churn threads while they are read, or
# that another tracer holds; and a process in a pid namespace of its own read from the host by
# dscope pid, GDB and lldb-16 attached, and by the three on a gcore core of it
# (tests/cli/cli_live_test.py; tests/e2e/namespace_program.cpp is the scenario).

add_executable(namespace_program ${E2E}/namespace_program.cpp)
target_link_libraries(namespace_program PRIVATE dscope::runtime)
target_compile_options(namespace_program PRIVATE -Wall -Wextra)

set(live_checks dying traced namespace-dscope namespace-gdb)
if(TARGET dscope_lldb)
  list(APPEND live_checks namespace-lldb)
endif()
# A PyTorch process in its own pid namespace: its worker's TLS by host tid, in dscope pid, GDB and
# lldb-16 attached, against what torch._C says of it.
if(DSCOPE_TORCH_TESTS)
  list(APPEND live_checks namespace-torch)
endif()
foreach(check ${live_checks})
  set(lldb_plugin "")
  if(TARGET dscope_lldb)
    set(lldb_plugin --lldb-plugin $<TARGET_FILE:dscope_lldb>)
  endif()
  add_test(NAME cli_live_${check}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/cli/cli_live_test.py --check ${check}
            --dscope $<TARGET_FILE:dscope> --samples $<TARGET_FILE_DIR:multithread>
            --program $<TARGET_FILE:namespace_program> --gdb-script ${GDB_SCRIPT} ${lldb_plugin}
            --workdir ${CMAKE_CURRENT_BINARY_DIR}/cli_live)
  set_tests_properties(cli_live_${check} PROPERTIES LABELS "cli" TIMEOUT 240 SKIP_RETURN_CODE 77)
endforeach()
set_tests_properties(cli_live_namespace-gdb PROPERTIES LABELS "gdb;cli")
if(TARGET dscope_lldb)
  set_tests_properties(cli_live_namespace-lldb PROPERTIES LABELS "lldb;cli")
endif()
if(DSCOPE_TORCH_TESTS)
  set_tests_properties(cli_live_namespace-torch PROPERTIES LABELS "gdb;lldb;torch;cli")
endif()
