# A core from another build: the infinite_redispatch kernel core read by tools whose layout hash
# differs (DSCOPE_LAYOUT_HASH_SALT, as after changing a runtime header without rebuilding the tools). Every command that reads the runtime must refuse in one line; a raw key
# set still decodes. GDB loads that library through DSCOPE_INSPECT_LIBRARY.
# Built for one configuration only (g++ release): it costs a second build of the inspect library.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
  get_target_property(sources dscope_inspect SOURCES)
  get_target_property(source_dir dscope_inspect SOURCE_DIR)
  list(TRANSFORM sources PREPEND ${source_dir}/)
  add_library(dscope_inspect_foreign SHARED ${sources})
  target_include_directories(dscope_inspect_foreign PRIVATE ${source_dir}/include ${source_dir}/src)
  target_link_libraries(dscope_inspect_foreign PRIVATE dscope_common PkgConfig::LIBDW)
  get_target_property(definitions dscope_inspect COMPILE_DEFINITIONS)
  target_compile_definitions(dscope_inspect_foreign PRIVATE ${definitions} DSCOPE_LAYOUT_HASH_SALT=1)
  set_target_properties(dscope_inspect_foreign PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(dscope_inspect_foreign PRIVATE -Wl,--version-script=${source_dir}/src/exports.map)

  dscope_gdb_test(gdb_core_from_another_build PROGRAM infinite_redispatch CORE_OF crash_infinite_redispatch
    CMD "dispatch-trace" "op-table myops::my_add" "keyset --tls" "keyset 0x12800010001"
    EXPECT "dscope: the runtime in this process was built with a different layout (hash 0x"
           "; rebuild the tools from the same source"
           "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)")
  set_tests_properties(gdb_core_from_another_build PROPERTIES
    ENVIRONMENT DSCOPE_INSPECT_LIBRARY=$<TARGET_FILE:dscope_inspect_foreign>
    # the foreign library must not decode anything of the runtime
    FAIL_REGULAR_EXPRESSION "\\[call\\] op=|name: myops::my_add|included: ")
endif()
