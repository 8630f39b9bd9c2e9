# gdb_printers tests (see tests/CMakeLists.txt for dscope_gdb_test)
