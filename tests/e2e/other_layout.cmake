# A runtime laid out unlike the tools' (as one built from other sources would be): infinite_redispatch
# linked with a runtime whose Dispatcher and OperatorEntry carry padding (DSCOPE_TEST_LAYOUT_PADDING).
# This build's dscope and GDB read its kernel core through the profile its descriptor carries and
# answer as they answer on this build's own sample's core (tests/e2e/other_layout_test.py).
# Built for one configuration only (g++ release): it costs a second build of the runtime.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
  dscope_add_runtime(dscope_runtime_padded 1 DSCOPE_TEST_LAYOUT_PADDING=40)
  add_executable(infinite_redispatch_padded ${PROJECT_SOURCE_DIR}/samples/infinite_redispatch.cpp)
  target_link_libraries(infinite_redispatch_padded PRIVATE dscope_runtime_padded)
  get_target_property(own_profile dscope_runtime DSCOPE_PROFILE_DIR)
  get_target_property(padded_profile dscope_runtime_padded DSCOPE_PROFILE_DIR)
  add_test(NAME other_layout_core COMMAND ${Python3_EXECUTABLE} ${E2E}/other_layout_test.py
    --build ${CMAKE_BINARY_DIR} --program $<TARGET_FILE:infinite_redispatch_padded>
    --profiles ${own_profile}/dscope/debug/ProfileText.h ${padded_profile}/dscope/debug/ProfileText.h
    --workdir ${CMAKE_CURRENT_BINARY_DIR}/other_layout)
  set_tests_properties(other_layout_core PROPERTIES LABELS "gdb;crash" SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
