# python-bt (issue 37; tests/python/python_bt_test.py): every thread's Python frames read out of
# process, against what the process itself says of them (python_stacks_program.py writes each
# Python thread's traceback.format_stack() by native thread id, then stands still). dscope, GDB and
# lldb-16 answer `python-bt --all` in text and --json, `--thread`, the selected thread and bad
# input, each in one session, and must agree with the program and with one another:
#   host_live / host_core      the host's CPython 3.11 (torch 1.13): attached / a gcore core
#   SUITE_live / SUITE_core    CPython 3.13 (trixie, torch 2.6) and 3.14 (sid, torch 2.14), the program
#                              in its Debian root as a container, read from the host: attached with
#                              the root as sysroot / a gcore core and its kernel core, the root's
#                              folder as sysroot
#   bad_input                  a process with no Python (the op_catalog sample), live and its core
# python_layout_{host,trixie,sid} (tests/python/python_layout_test.py): the layout `python-bt --layout`
# resolves for a live process of the interpreter against dscope-python-profile --print over that
# interpreter's own headers (the headers are the oracle); the host's also holds the shipped 3.11
# profile against a fresh one, byte for byte.
# Included from tests/CMakeLists.txt (samples built, no sanitizer). The torch variants go with the
# torch tests (DSCOPE_TORCH_TESTS); the roots' in the release preset only, as container_tests.cmake
# (the roots are made when missing by the fixture torch_root_profiles).
set(PYTHON_TESTS ${PROJECT_SOURCE_DIR}/tests/python)
set(PYTHON_BT_ROOTS_SCRIPT ${PROJECT_SOURCE_DIR}/scripts/torch-roots.sh)
set(PYTHON_BT_LLDB "")
if(TARGET dscope_lldb)
  set(PYTHON_BT_LLDB --lldb-plugin $<TARGET_FILE:dscope_lldb>)
endif()
function(dscope_python_bt_test check labels)
  add_test(NAME python_bt_${check}
    COMMAND ${Python3_EXECUTABLE} ${PYTHON_TESTS}/python_bt_test.py --check ${check} --dscope $<TARGET_FILE:dscope>
            --gdb-script ${GDB_SCRIPT} ${PYTHON_BT_LLDB} --roots-script ${PYTHON_BT_ROOTS_SCRIPT}
            --samples $<TARGET_FILE_DIR:op_catalog> --workdir ${CMAKE_CURRENT_BINARY_DIR}/python_bt_${check})
  set_tests_properties(python_bt_${check} PROPERTIES LABELS "${labels}" TIMEOUT 240 SKIP_RETURN_CODE 77)
endfunction()

function(dscope_python_layout_test check labels)
  add_test(NAME python_layout_${check}
    COMMAND ${Python3_EXECUTABLE} ${PYTHON_TESTS}/python_layout_test.py --check ${check} --dscope $<TARGET_FILE:dscope>
            --profiles ${PROJECT_SOURCE_DIR}/profiles --probe ${PROJECT_SOURCE_DIR}/profiles/probe/dscope-python-profile
            --roots-script ${PYTHON_BT_ROOTS_SCRIPT} --workdir ${CMAKE_CURRENT_BINARY_DIR}/python_layout_${check})
  set_tests_properties(python_layout_${check} PROPERTIES LABELS "${labels}" TIMEOUT 300 SKIP_RETURN_CODE 77)
endfunction()

dscope_python_bt_test(bad_input "gdb;lldb;python")
if(DSCOPE_TORCH_TESTS)
  foreach(mode live core)
    dscope_python_bt_test(host_${mode} "gdb;lldb;torch;python")
  endforeach()
  dscope_python_layout_test(host "torch;python")
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo" AND EXISTS ${PYTHON_BT_ROOTS_SCRIPT})
    foreach(suite trixie sid)
      foreach(mode live core)
        dscope_python_bt_test(${suite}_${mode} "gdb;lldb;torch;python;roots")
        set_tests_properties(python_bt_${suite}_${mode} PROPERTIES FIXTURES_REQUIRED torch_root_profiles)
      endforeach()
      dscope_python_layout_test(${suite} "torch;python;roots")
      set_tests_properties(python_layout_${suite} PROPERTIES FIXTURES_REQUIRED torch_root_profiles)
    endforeach()
  endif()
endif()

# Python kernels and Python frames in the dispatch answers (tests/python/python_dispatch_test.py):
# a Python kernel that re-enters its operator, stopped (dscope pid, GDB, lldb-16) and crashed
# through ctypes (its kernel core: dscope core, GDB), on the host and in the roots; stopped, op-table
# also names a Python meta kernel and (2.x) custom_op's and register_fake's kernels by their functions.
function(dscope_python_dispatch_test check labels)
  add_test(NAME python_dispatch_${check}
    COMMAND ${Python3_EXECUTABLE} ${PYTHON_TESTS}/python_dispatch_test.py --check ${check} --dscope $<TARGET_FILE:dscope>
            --gdb-script ${GDB_SCRIPT} ${PYTHON_BT_LLDB} --roots-script ${PYTHON_BT_ROOTS_SCRIPT}
            --workdir ${CMAKE_CURRENT_BINARY_DIR}/python_dispatch_${check})
  set_tests_properties(python_dispatch_${check} PROPERTIES LABELS "${labels}" TIMEOUT 240 SKIP_RETURN_CODE 77)
endfunction()
if(DSCOPE_TORCH_TESTS)
  foreach(mode stop crash)
    dscope_python_dispatch_test(host_${mode} "gdb;lldb;torch;python")
  endforeach()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo" AND EXISTS ${PYTHON_BT_ROOTS_SCRIPT})
    foreach(suite trixie sid)
      foreach(mode stop crash)
        dscope_python_dispatch_test(${suite}_${mode} "gdb;lldb;torch;python;roots")
        set_tests_properties(python_dispatch_${suite}_${mode} PROPERTIES FIXTURES_REQUIRED torch_root_profiles)
      endforeach()
    endforeach()
  endif()
endif()
