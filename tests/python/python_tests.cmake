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
# python_dispatch_{host,trixie,sid}_{stop,crash,gcore} (tests/python/python_dispatch_test.py):
# Python kernels and Python frames in the dispatch answers: a Python kernel that re-enters its
# operator, stopped (dscope pid, GDB, lldb-16), crashed through ctypes (its kernel core: dscope core,
# GDB) and stopped again for a gcore core (dscope core, GDB, lldb-16); op-table also names a Python
# meta kernel and (2.x) custom_op's and register_fake's kernels by their functions.
set(PYTHON_TESTS ${PROJECT_SOURCE_DIR}/tests/python)
set(PYTHON_BT_ROOTS_SCRIPT ${PROJECT_SOURCE_DIR}/scripts/torch-roots.sh)
set(PYTHON_BT_LLDB "")
if(TARGET dscope_lldb)
  set(PYTHON_BT_LLDB --lldb-plugin $<TARGET_FILE:dscope_lldb>)
endif()
# Where the Python tests run: the host, and (the release preset with g++) the roots.
set(PYTHON_SUITES host)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo" AND EXISTS ${PYTHON_BT_ROOTS_SCRIPT})
  list(APPEND PYTHON_SUITES trixie sid)
endif()

# A test's labels, and in a root the fixture that makes the roots.
function(dscope_python_placed name suite labels)
  if(NOT suite STREQUAL "host")
    string(APPEND labels ";roots")
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED torch_root_profiles)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77)
endfunction()

# python_FAMILY_CHECK: tests/python/python_FAMILY_test.py --check CHECK (bt, dispatch), CHECK being
# SUITE_MODE or bad_input.
function(dscope_python_test family check suite labels)
  set(samples "")
  if(family STREQUAL "bt")
    set(samples --samples $<TARGET_FILE_DIR:op_catalog>)
  endif()
  add_test(NAME python_${family}_${check}
    COMMAND ${Python3_EXECUTABLE} ${PYTHON_TESTS}/python_${family}_test.py --check ${check} --dscope $<TARGET_FILE:dscope>
            --gdb-script ${GDB_SCRIPT} ${PYTHON_BT_LLDB} --roots-script ${PYTHON_BT_ROOTS_SCRIPT} ${samples}
            --workdir ${CMAKE_CURRENT_BINARY_DIR}/python_${family}_${check})
  set_tests_properties(python_${family}_${check} PROPERTIES TIMEOUT 240)
  dscope_python_placed(python_${family}_${check} ${suite} "${labels}")
endfunction()

function(dscope_python_layout_test suite)
  add_test(NAME python_layout_${suite}
    COMMAND ${Python3_EXECUTABLE} ${PYTHON_TESTS}/python_layout_test.py --check ${suite} --dscope $<TARGET_FILE:dscope>
            --profiles ${PROJECT_SOURCE_DIR}/profiles --probe ${PROJECT_SOURCE_DIR}/profiles/probe/dscope-python-profile
            --roots-script ${PYTHON_BT_ROOTS_SCRIPT} --workdir ${CMAKE_CURRENT_BINARY_DIR}/python_layout_${suite})
  set_tests_properties(python_layout_${suite} PROPERTIES TIMEOUT 300)
  dscope_python_placed(python_layout_${suite} ${suite} "torch;python")
endfunction()

dscope_python_test(bt bad_input host "gdb;lldb;python")
if(DSCOPE_TORCH_TESTS)
  foreach(suite ${PYTHON_SUITES})
    foreach(mode live core)
      dscope_python_test(bt ${suite}_${mode} ${suite} "gdb;lldb;torch;python")
    endforeach()
    foreach(mode stop crash gcore)
      dscope_python_test(dispatch ${suite}_${mode} ${suite} "gdb;lldb;torch;python")
    endforeach()
    dscope_python_layout_test(${suite})
  endforeach()
endif()
