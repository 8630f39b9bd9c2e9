// dscope_lldb_lines_probe FILE < addresses: GdbLineTable's answer ("file:line", or "-") for each
// file address read from stdin, one per line. Test-only (tests/e2e/lldb_tests.cmake compares it
// with GDB's find_pc_line on every row address of a module); reads the ELF sections itself so it
// needs no debugger.
#include <elf.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "GdbDwarfNames.h"
#include "GdbLines.h"

namespace {

std::vector<uint8_t> section(const std::vector<uint8_t>& file, const char* wanted) {
  if (file.size() < sizeof(Elf64_Ehdr)) return {};
  Elf64_Ehdr eh;
  std::memcpy(&eh, file.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) return {};
  auto header = [&](size_t i) {
    Elf64_Shdr sh{};
    size_t at = eh.e_shoff + i * eh.e_shentsize;
    if (at + sizeof sh <= file.size()) std::memcpy(&sh, file.data() + at, sizeof sh);
    return sh;
  };
  Elf64_Shdr names = header(eh.e_shstrndx);
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh = header(i);
    if (names.sh_offset + sh.sh_name >= file.size()) continue;
    if (std::strcmp(reinterpret_cast<const char*>(file.data() + names.sh_offset + sh.sh_name), wanted) != 0) continue;
    if (sh.sh_type == SHT_NOBITS || sh.sh_offset + sh.sh_size > file.size()) return {};
    return {file.begin() + sh.sh_offset, file.begin() + sh.sh_offset + sh.sh_size};
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s ELF-FILE < addresses\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto s = dscope::lldb_plugin::dwarfSections([&](const char* name) { return section(file, name); });
  auto table = dscope::lldb_plugin::GdbLineTable::parse(section(file, ".debug_line"), s.line_str, s.str,
                                                        dscope::lldb_plugin::compileUnitRanges(s));
  std::string word;
  while (std::cin >> word) {
    auto line = table->lookup(std::stoull(word, nullptr, 0));
    std::cout << word << " " << (line ? line->file + ":" + std::to_string(line->line) : "-") << "\n";
  }
  return 0;
}
