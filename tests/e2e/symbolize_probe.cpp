// symbolize_probe FILE < addresses: the inspect library's symbolizer (inspect/src/Symbolizer.h) on
// file addresses of one module, "ADDR<TAB>text" a line; symbols_vs_gdb.py compares it with GDB.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "target/Symbolizer.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: symbolize_probe FILE < addresses\n");
    return 2;
  }
  for (std::string line; std::getline(std::cin, line);) {
    const unsigned long long addr = std::strtoull(line.c_str(), nullptr, 0);
    std::printf("0x%llx\t%s\n", addr, dscope::inspect::describeFileAddress(argv[1], addr).c_str());
  }
  return 0;
}
