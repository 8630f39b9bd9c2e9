# gdb_loading tests (see tests/CMakeLists.txt for dscope_gdb_test)
