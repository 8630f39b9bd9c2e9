# GDB auto-load of DispatchScope for libdscope_runtime (included from runtime/CMakeLists.txt,
# before the runtime is defined). Configures gdb/dscope-autoload.py.in once for every use:
#  - embedded in the runtime's .debug_gdb_scripts section (DSCOPE_GDB_AUTOLOAD_SOURCE, a
#    generated .cpp to add to the runtime's sources);
#  - installed by gdb/CMakeLists.txt as the objfile script
#    share/gdb/auto-load/<prefix>/<libdir>/libdscope_runtime.so.<version>-gdb.py and as
#    share/dscope/gdb/dscope-gdb.py.
set(DSCOPE_GDB_PKG_DESTINATION ${CMAKE_INSTALL_DATADIR}/dscope/gdb)  # holds dscope_gdb/
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(_dscope_libdir "${CMAKE_INSTALL_LIBDIR}")
else()
  set(_dscope_libdir "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}")
endif()
set(_dscope_pkgdir "${CMAKE_INSTALL_PREFIX}/${DSCOPE_GDB_PKG_DESTINATION}")
file(RELATIVE_PATH DSCOPE_GDB_REL_LIB_TO_PKG "${_dscope_libdir}" "${_dscope_pkgdir}")
file(RELATIVE_PATH DSCOPE_GDB_REL_PKG_TO_LIB "${_dscope_pkgdir}" "${_dscope_libdir}")
set(DSCOPE_GDB_FULL_PKG_DIR "${_dscope_pkgdir}")
set(DSCOPE_GDB_FULL_LIBDIR "${_dscope_libdir}")
set(DSCOPE_INSPECT_SONAME
  ${CMAKE_SHARED_LIBRARY_PREFIX}dscope_inspect${CMAKE_SHARED_LIBRARY_SUFFIX}.${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
set(DSCOPE_GDB_BUILD_RUNTIME_DIR "${PROJECT_BINARY_DIR}/runtime")
set(DSCOPE_GDB_SOURCE_PKG_DIR "${PROJECT_SOURCE_DIR}/gdb")
set(DSCOPE_GDB_BUILD_INSPECT "${PROJECT_BINARY_DIR}/inspect/${DSCOPE_INSPECT_SONAME}")

set(DSCOPE_GDB_AUTOLOAD_SCRIPT ${PROJECT_BINARY_DIR}/gdb/dscope-autoload.py)
configure_file(${PROJECT_SOURCE_DIR}/gdb/dscope-autoload.py.in ${DSCOPE_GDB_AUTOLOAD_SCRIPT} @ONLY)
# The section entry: the script's name on the first line, then the script (no NUL inside).
file(READ ${DSCOPE_GDB_AUTOLOAD_SCRIPT} _dscope_script)
set(DSCOPE_GDB_AUTOLOAD_EMBEDDED ${PROJECT_BINARY_DIR}/gdb/dscope-autoload.embedded)
file(CONFIGURE OUTPUT ${DSCOPE_GDB_AUTOLOAD_EMBEDDED} CONTENT "dscope-gdb\n${_dscope_script}" @ONLY)
string(SHA256 DSCOPE_GDB_AUTOLOAD_DIGEST "${_dscope_script}")
set(DSCOPE_GDB_AUTOLOAD_SOURCE ${PROJECT_BINARY_DIR}/gdb/debug_gdb_scripts.cpp)
configure_file(${PROJECT_SOURCE_DIR}/gdb/debug_gdb_scripts.cpp.in ${DSCOPE_GDB_AUTOLOAD_SOURCE} @ONLY)
