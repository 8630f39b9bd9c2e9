# ctest: install the build tree into a scratch prefix, then configure, build and run a
# consumer project that uses find_package(DispatchScope). Inputs: BUILD_DIR, SOURCE_DIR, WORK_DIR.
file(REMOVE_RECURSE "${WORK_DIR}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUTPUT "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
if(NOT EXISTS "${WORK_DIR}/prefix/lib/libdscope_runtime.so")
  message(FATAL_ERROR "libdscope_runtime.so was not installed")
endif()
# The installed dscope starts (it finds the installed inspect library) and answers a file that is no
# core with its one line.
execute_process(COMMAND "${WORK_DIR}/prefix/bin/dscope" core "${SOURCE_DIR}/CMakeLists.txt"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT out STREQUAL "" OR NOT err STREQUAL "dscope: ${SOURCE_DIR}/CMakeLists.txt is not a core file\n")
  message(FATAL_ERROR "the installed dscope: exit ${rc}, stdout '${out}', stderr '${err}'")
endif()
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/install/consumer" -B "${WORK_DIR}/build" -G Ninja
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_RPATH=${WORK_DIR}/prefix/lib)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
if(NOT LAST_OUTPUT MATCHES "consumer::twice=12 keys=DispatchKeySet\\(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU\\)")
  message(FATAL_ERROR "unexpected consumer output: ${LAST_OUTPUT}")
endif()
# A build with the CUDA backend installs it too, and the consumer links it (DSCOPE_WITH_CUDA).
if(EXISTS "${BUILD_DIR}/cuda/libdscope_cuda.so" AND NOT LAST_OUTPUT MATCHES "consumer: dscope::cuda linked, ")
  message(FATAL_ERROR "dscope::cuda is built but the installed package does not give it: ${LAST_OUTPUT}")
endif()
message(STATUS "${LAST_OUTPUT}")
