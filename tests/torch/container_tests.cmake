# PyTorch in a container (issue 35, item 2; tests/torch/container_test.py): a program built in the
# sid root against its libtorch, run there as a container, read from the host by dscope pid, GDB and
# lldb-16 live; its kernel core by dscope core with and without --sysroot and with the trixie root;
# its gcore core by GDB and lldb-16 with and without their sysroot settings. Release preset only, and
# the roots made when missing (scripts/torch-roots.sh ensure, through the fixture torch_profile_roots).
set(DSCOPE_ROOTS_SCRIPT ${PROJECT_SOURCE_DIR}/scripts/torch-roots.sh)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
  foreach(check live core gcore)
    add_test(NAME torch_container_${check}
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/torch/container_test.py --check ${check}
              --roots-script ${DSCOPE_ROOTS_SCRIPT} --dscope $<TARGET_FILE:dscope> --gdb-script ${GDB_SCRIPT}
              ${TORCH_LLDB} --profiles ${PROJECT_SOURCE_DIR}/profiles
              --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_container_${check})
    # The roots are made (when missing) by the fixture torch_profile_roots sets up.
    set_tests_properties(torch_container_${check} PROPERTIES LABELS "gdb;lldb;torch;roots" TIMEOUT 300
                         FIXTURES_REQUIRED torch_root_profiles)
  endforeach()
  # keyset --tls's Python dispatch state on 2.x (issue 37; tests/torch/python_state_test.py): a Python
  # program in each root with three threads stopped inside TorchDispatchModes (a FakeTensorMode among
  # them), the Python dispatcher and vmap(grad()), inference mode, no_grad; dscope pid, GDB and lldb-16
  # attached, then dscope core, GDB and lldb-16 on its gcore core, against each thread's own account.
  foreach(suite trixie sid)
    add_test(NAME torch_keyset_python_state_${suite}
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/torch/python_state_test.py --suite ${suite}
              --roots-script ${DSCOPE_ROOTS_SCRIPT} --dscope $<TARGET_FILE:dscope> --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB}
              --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_keyset_python_state_${suite})
    set_tests_properties(torch_keyset_python_state_${suite} PROPERTIES LABELS "gdb;lldb;torch;roots" TIMEOUT 300
                         FIXTURES_REQUIRED torch_root_profiles)
  endforeach()
endif()
