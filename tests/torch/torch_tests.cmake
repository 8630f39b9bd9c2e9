# Real PyTorch (Debian's python3-torch 1.13, installed by scripts/ensure-packages.sh): GDB and lldb-16 read
# the dispatcher of a live Python process and of its gcore core through the shipped layout
# profile, and every answer must equal what that process's torch._C printed for itself
# (tests/torch/torch_oracle_test.py): every operator's dumps (each read live and on the core, half
# of them live by GDB and on the core by lldb-16, the other half the other way round), every
# tensor's key set (also from its raw word, where torch prints it), the TLS, op-table --key,
# --missing and --list; dscope pid and dscope core on all of the same, each in one session (--commands).
set(TORCH_TESTS ${PROJECT_SOURCE_DIR}/tests/torch)
if(TARGET dscope_lldb)
  set(TORCH_LLDB --lldb-plugin $<TARGET_FILE:dscope_lldb>)
endif()
add_test(NAME torch_oracle
  COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/torch_oracle_test.py --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB} --mode live+core
          --dscope $<TARGET_FILE:dscope> --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_oracle)
set_tests_properties(torch_oracle PROPERTIES LABELS "gdb;lldb;torch" TIMEOUT 600)
# The refusals on a gcore core of the same program: no profile, a profile of another build, a
# profile whose offsets do not fit, and bad input.
add_test(NAME torch_oracle_refusals
  COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/torch_oracle_test.py --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB} --mode refusals
          --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_oracle_refusals
          --profile ${PROJECT_SOURCE_DIR}/profiles/feaefbc559e74298c67a4aca95dd5e2c49a4c739.profile)
set_tests_properties(torch_oracle_refusals PROPERTIES LABELS "gdb;lldb;torch" TIMEOUT 300)
# The same oracle for real PyTorch 2.x (issue 35): oracle_program.py runs inside a Debian root of
# scripts/torch-roots.sh (trixie: 2.6; sid: whatever torch sid has, so nothing here names a
# version) as a container runs it, and GDB, lldb-16 and dscope read it from the host: the live
# process (through /proc/PID/root), then one gcore core of it, as torch_oracle does. The fixture
# torch_root_profiles (torch_profile_roots, below) makes a missing root and the profile of a torch
# none ships.
foreach(suite trixie sid)
  add_test(NAME torch_oracle_${suite}
    COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/torch_oracle_test.py --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB}
            --mode live+core --root ${suite} --dscope $<TARGET_FILE:dscope>
            --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_oracle_${suite})
  set_tests_properties(torch_oracle_${suite} PROPERTIES FIXTURES_REQUIRED torch_root_profiles
                       LABELS "gdb;lldb;torch" TIMEOUT 300)
endforeach()
# keyset ADDR on what users pass it (issue 34): a Python list, dict, nn.Module, storage and a
# data_ptr() refused in one line saying what they are, three kinds of Python tensor decoded as
# torch._C._dispatch_keys says, and keyset --tls under inference_mode naming AutogradFunctionality
# when the process's exclude set holds it; live, a raw key set with no process names its key table
# and decodes with --profile as the process says (tests/torch/keyset_input_test.py).
foreach(mode live core)
  add_test(NAME torch_keyset_input_${mode}
    COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/keyset_input_test.py --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB} --mode ${mode}
            --dscope $<TARGET_FILE:dscope> --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_keyset_input_${mode}
            --profile ${PROJECT_SOURCE_DIR}/profiles/feaefbc559e74298c67a4aca95dd5e2c49a4c739.profile)
  set_tests_properties(torch_keyset_input_${mode} PROPERTIES LABELS "gdb;lldb;torch" TIMEOUT 300)
endforeach()
# One process with both runtimes (ours preloaded into the torch process): the default and --runtime.
add_test(NAME torch_both_runtimes
  COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/torch_oracle_test.py --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB} --mode both
          --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_both_runtimes --runtime-library $<TARGET_FILE:dscope_runtime>
          --dscope $<TARGET_FILE:dscope>)
set_tests_properties(torch_both_runtimes PROPERTIES LABELS "gdb;lldb;torch" TIMEOUT 300)
include(${TORCH_TESTS}/libtorch_program.cmake)  # a C++ libtorch program and its kernel core
# dispatch-break on a Python program, five breakpoints in one run per debugger (an unboxed, an
# autograd, a SymInt, a composite kernel given a None `Tensor?`, a Python kernel): stops counted
# against the program's own calls, the explanation against its torch._C
# (tests/torch/torch_break_test.py).
add_test(NAME torch_dispatch_break
  COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/torch_break_test.py --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB}
          --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_dispatch_break)
set_tests_properties(torch_dispatch_break PROPERTIES LABELS "gdb;lldb;torch" TIMEOUT 600)
# The same on PyTorch 2.6 and 2.14, the program in its Debian root (scripts/torch-roots.sh), GDB
# and lldb-16 attached from the host; there also aten::mm under a TorchDispatchMode of the
# program's and under FakeTensorMode (its Meta kernel), each stop's Python dispatch state and
# "because" lines against what the program printed at that call.
foreach(suite trixie sid)
  add_test(NAME torch_dispatch_break_${suite}
    COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/torch_break_test.py --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB} --suite ${suite}
            --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_dispatch_break_${suite})
  set_tests_properties(torch_dispatch_break_${suite} PROPERTIES LABELS "gdb;lldb;torch;torch2" TIMEOUT 300
                       FIXTURES_REQUIRED torch_root_profiles)
endforeach()
# dispatch-break in a torch process no layout profile describes: refused in one line naming the
# build-id, never "pending" (tests/torch/torch_break_noprofile_test.py).
add_test(NAME torch_dispatch_break_noprofile
  COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/torch_break_noprofile_test.py --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB}
          --dscope $<TARGET_FILE:dscope> --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_dispatch_break_noprofile)
set_tests_properties(torch_dispatch_break_noprofile PROPERTIES LABELS "gdb;lldb;torch" TIMEOUT 300)
# Bad and ill-fitting layout profiles on a real PyTorch core (tests/torch/profile_fuzz.py, issue
# 33), one core for both parts: the issue's headline cases in dscope core, GDB and lldb-16, each
# one dscope: line naming the profile; then a seeded, bounded fuzz of mutated profiles (numbers,
# names, truncation, duplicates, garbage, special files) whose every answer is the pristine
# profile's or one such line (more with --count N --seed S by hand).
add_test(NAME torch_profile_fuzz
  COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/profile_fuzz.py --headline --fuzz --dscope $<TARGET_FILE:dscope>
          --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB} --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_profile_fuzz
          --profile ${PROJECT_SOURCE_DIR}/profiles/feaefbc559e74298c67a4aca95dd5e2c49a4c739.profile)
set_tests_properties(torch_profile_fuzz PROPERTIES LABELS "gdb;lldb;torch" TIMEOUT 900)
# The probe against PyTorch 2.x in its Debian roots (scripts/torch-roots.sh, made when missing):
# dscope-profile --root makes each root's profile, byte-identical to the shipped one for that build;
# where none ships (sid moved on), it is installed in the per-user cache for the 2.x tests, which
# need it (fixture torch_root_profiles) (tests/torch/profile_roots_test.py).
add_test(NAME torch_profile_roots
  COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/profile_roots_test.py --source-dir ${PROJECT_SOURCE_DIR}
          --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_profile_roots trixie sid)
set_tests_properties(torch_profile_roots PROPERTIES LABELS "torch" TIMEOUT 900 FIXTURES_SETUP torch_root_profiles)
include(${TORCH_TESTS}/container_tests.cmake)  # PyTorch 2.x in the roots, read as containers from the host

# The overflows of tests/torch/torch_loop.cpp on real PyTorch 2.x (issue 35 item 5): the program is
# built inside each Debian root by the root's g++ against its libtorch-dev (once per source and
# torch, kept in this build folder), runs there as a container, and its kernel core is read from the
# host by GDB, lldb-16 and dscope core (the root as sysroot), each in one session
# (torch_loop_test.py --suite): a kernel calling itself, two ops calling each other, an aten::mm
# override. Release preset only; a missing root is made first (scripts/torch-roots.sh ensure).
if(TARGET dscope_lldb AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo"
   AND EXISTS ${DSCOPE_ROOTS_SCRIPT})
  foreach(suite trixie sid)
    foreach(scenario self mutual mm)
      add_test(NAME torch_loop_${suite}_${scenario}_trace
        COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/torch_loop_test.py --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB}
                --dscope $<TARGET_FILE:dscope> --suite ${suite} --roots ${DSCOPE_ROOTS_SCRIPT}
                --cache ${CMAKE_CURRENT_BINARY_DIR}/torch_loop_roots --scenario ${scenario})
      # Minutes only where the root is made or the program compiled (once per root); a run is under a minute.
      # Each leaves its core for the batch below (fixture torch_loop_${suite}_cores).
      set_tests_properties(torch_loop_${suite}_${scenario}_trace PROPERTIES LABELS "gdb;lldb;torch;roots" TIMEOUT 900
                           SKIP_RETURN_CODE 77 FIXTURES_REQUIRED torch_root_profiles
                           FIXTURES_SETUP torch_loop_${suite}_cores)
    endforeach()
    # The three cores in one `dscope core --sysroot ROOT CORE...` batch: each record GDB's summary of
    # that core, the signature from the source; the cores are removed after.
    add_test(NAME torch_loop_${suite}_batch
      COMMAND ${Python3_EXECUTABLE} ${TORCH_TESTS}/torch_loop_test.py --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB}
              --dscope $<TARGET_FILE:dscope> --suite ${suite} --roots ${DSCOPE_ROOTS_SCRIPT}
              --cache ${CMAKE_CURRENT_BINARY_DIR}/torch_loop_roots --scenario batch)
    set_tests_properties(torch_loop_${suite}_batch PROPERTIES LABELS "torch;roots" TIMEOUT 300 SKIP_RETURN_CODE 77
                         FIXTURES_REQUIRED "torch_root_profiles;torch_loop_${suite}_cores")
  endforeach()
endif()
