# A C++ libtorch program (Debian's libtorch-dev, PyTorch 1.13) that defines its own operators,
# writes what its dispatcher says about itself and aborts; GDB reads the kernel core and must
# print the same (tests/torch/libtorch_core_test.py). Included from torch_tests.cmake, where
# Python3_EXECUTABLE and GDB_SCRIPT are defined. Built only where libtorch-dev is installed.
# Debian puts torch/library.h in /usr/include, the C++ frontend's headers (torch/all.h) in
# /usr/include/torch/csrc/api/include.
find_library(DSCOPE_TORCH_CPU_LIBRARY torch_cpu)
find_path(DSCOPE_TORCH_LIBRARY_INCLUDE torch/library.h)
set(DSCOPE_TORCH_API_INCLUDE /usr/include/torch/csrc/api/include)
# A program of tests/torch/NAME.cpp against Debian's libtorch, compiled with the given flags.
function(dscope_libtorch_program name)
  add_executable(${name} ${PROJECT_SOURCE_DIR}/tests/torch/${name}.cpp)
  # PyTorch 1.13's headers are written for C++14/17.
  set_target_properties(${name} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  target_compile_definitions(${name} PRIVATE _GLIBCXX_USE_CXX11_ABI=1)
  target_include_directories(${name} SYSTEM PRIVATE ${DSCOPE_TORCH_API_INCLUDE})
  target_compile_options(${name} PRIVATE ${ARGN})
  target_link_libraries(${name} PRIVATE torch torch_cpu c10)
endfunction()
if(DSCOPE_TORCH_CPU_LIBRARY AND DSCOPE_TORCH_LIBRARY_INCLUDE AND EXISTS ${DSCOPE_TORCH_API_INCLUDE}/torch/all.h)
  dscope_libtorch_program(libtorch_program -g)
  add_test(NAME torch_libtorch_core
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/torch/libtorch_core_test.py --gdb-script ${GDB_SCRIPT} ${TORCH_LLDB}
            --dscope $<TARGET_FILE:dscope>
            --program $<TARGET_FILE:libtorch_program> --workdir ${CMAKE_CURRENT_BINARY_DIR}/libtorch_core)
  set_tests_properties(torch_libtorch_core PROPERTIES LABELS "gdb;lldb;torch" TIMEOUT 600 SKIP_RETURN_CODE 77)
else()
  message(STATUS "libtorch-dev not found (torch_cpu, torch/library.h): no libtorch_program, no torch_libtorch_core test")
endif()

# Infinite re-dispatch on real PyTorch (tests/torch/torch_loop.cpp: self, mutual, aten::mm
# overrides that call at::mm or at::matmul, a kernel at the Autograd alias key, function-pointer
# kernels of one signature on a worker thread, a boxed kernel calling op.callBoxed), with and
# without debug info for the user's program: dispatch-trace on the kernel core, GDB and lldb-16
# alike (torch_loop_test.py). torch_loop_nodbg is torch_loop with its DWARF stripped: the same
# code (-g never changes what g++ or clang emit), one compile of a libtorch source fewer. Without
# debug info the scenarios whose frames differ in kind are run: a kernel of its own signature, an
# aten override, kernels behind the shared trampoline.
if(TARGET libtorch_program)
  dscope_libtorch_program(torch_loop -O2 -g)
  set(DSCOPE_TORCH_LOOP_NODBG ${CMAKE_CURRENT_BINARY_DIR}/torch_loop.nodbg)
  add_custom_command(OUTPUT ${DSCOPE_TORCH_LOOP_NODBG}
    COMMAND ${CMAKE_OBJCOPY} --strip-debug $<TARGET_FILE:torch_loop> ${DSCOPE_TORCH_LOOP_NODBG}
    DEPENDS torch_loop VERBATIM)
  add_custom_target(torch_loop_nodbg ALL DEPENDS ${DSCOPE_TORCH_LOOP_NODBG})
  foreach(test torch_loop:self torch_loop:mutual torch_loop:mm torch_loop:matmul torch_loop:alias torch_loop:shared
               torch_loop:boxed torch_loop_nodbg:self torch_loop_nodbg:mm torch_loop_nodbg:shared)
    string(REPLACE ":" ";" parts ${test})
    list(GET parts 0 variant)
    list(GET parts 1 scenario)
    set(program $<TARGET_FILE:torch_loop>)
    if(variant STREQUAL "torch_loop_nodbg")
      set(program ${DSCOPE_TORCH_LOOP_NODBG})
    endif()
    add_test(NAME ${variant}_${scenario}_trace
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/torch/torch_loop_test.py --gdb-script ${GDB_SCRIPT}
              ${TORCH_LLDB} --dscope $<TARGET_FILE:dscope> --program ${program} --scenario ${scenario}
              --workdir ${CMAKE_CURRENT_BINARY_DIR}/${variant}_${scenario}_core)
    set_tests_properties(${variant}_${scenario}_trace PROPERTIES LABELS "gdb;lldb;torch" TIMEOUT 300)
  endforeach()
endif()

# An uncaught "Could not run" (tests/torch/torch_missing.cpp): dispatch-summary's signature on the
# kernel core, in GDB, lldb-16 and dscope core (torch_missing_test.py).
if(TARGET libtorch_program)
  dscope_libtorch_program(torch_missing -O2 -g)
  foreach(scenario plain below)
    add_test(NAME torch_missing_${scenario}
      COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/torch/torch_missing_test.py --gdb-script ${GDB_SCRIPT}
              ${TORCH_LLDB} --dscope $<TARGET_FILE:dscope> --program $<TARGET_FILE:torch_missing> --scenario ${scenario}
              --workdir ${CMAKE_CURRENT_BINARY_DIR}/torch_missing_${scenario}_core)
    set_tests_properties(torch_missing_${scenario} PROPERTIES LABELS "gdb;lldb;torch" TIMEOUT 300)
  endforeach()
endif()
