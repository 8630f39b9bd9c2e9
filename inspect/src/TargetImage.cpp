#include "TargetImage.h"

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include <cstdio>
#include <vector>

namespace dscope::inspect {

namespace {

// An ELF's NT_GNU_BUILD_ID note in hex, or "".
std::string gnuBuildId(Elf* elf) {
  const void* bits = nullptr;
  const ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
  std::string id;
  for (ssize_t i = 0; i < n; ++i) {
    char hex_byte[3];
    std::snprintf(hex_byte, sizeof hex_byte, "%02x", static_cast<const unsigned char*>(bits)[i]);
    id += hex_byte;
  }
  return id;
}

// The first bytes of a file mapping: the ELF header, the program headers and (in every linker's
// layout) the build-id note right after them. Two pages, or one at the end of a mapping.
std::vector<unsigned char> headPages(const Remote& mem, uint64_t start) {
  for (uint64_t size : {8192u, 4096u}) {
    std::vector<unsigned char> bytes(size);
    try {
      mem.read(start, bytes.data(), size, "ELF header");
      return bytes;
    } catch (const InspectError&) {
    }
  }
  return {};
}

// The build-id of the image at `bytes` when it is a program (it names an interpreter), else "".
std::string programImageBuildId(std::vector<unsigned char>& bytes) {
  if (bytes.size() < 64 || bytes[0] != 0x7f || bytes[1] != 'E' || bytes[2] != 'L' || bytes[3] != 'F') return "";
  if (bytes[4] != ELFCLASS64) return "";
  // Only the program headers are in these pages: the section header table lies at the end of the
  // file, so the copy says it has none (libelf would look for it past the buffer).
  auto* ehdr = reinterpret_cast<Elf64_Ehdr*>(bytes.data());
  ehdr->e_shoff = 0;
  ehdr->e_shnum = 0;
  ehdr->e_shstrndx = 0;
  elf_version(EV_CURRENT);
  Elf* elf = elf_memory(reinterpret_cast<char*>(bytes.data()), bytes.size());
  if (!elf) return "";
  std::string id;
  size_t phnum = 0;
  bool program = false;
  if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &phnum) == 0) {
    for (size_t i = 0; i < phnum && !program; ++i) {
      GElf_Phdr phdr;
      program = gelf_getphdr(elf, static_cast<int>(i), &phdr) && phdr.p_type == PT_INTERP;
    }
  }
  if (program) id = gnuBuildId(elf);
  elf_end(elf);
  return id;
}

}  // namespace

std::string programBuildId(const Remote& mem) {
  for (uint64_t start : mem.mappingStarts()) {
    std::vector<unsigned char> bytes = headPages(mem, start);
    if (std::string id = programImageBuildId(bytes); !id.empty()) return id;
  }
  return "";
}

std::string programMismatch(const Remote& mem) {
  const std::string opened = mem.executableBuildId();
  if (opened.empty()) return "";
  const std::string in_target = programBuildId(mem);
  if (in_target.empty() || in_target == opened) return "";
  return "the core file was not written by this executable: its program has build-id " + in_target +
         ", the executable opened has " + opened + " (open the core with the program that crashed)";
}

std::string fileBuildId(const std::string& path) {
  // Read once per file version: a command asks for libtorch's every time.
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::pair<int64_t, int64_t>, std::string>> known;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "";
  const std::pair<int64_t, int64_t> version{st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, st.st_size};
  std::lock_guard lock(mutex);
  if (auto it = known.find(path); it != known.end() && it->second.first == version) return it->second.second;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  const std::string id = elf ? gnuBuildId(elf) : "";
  if (elf) elf_end(elf);
  close(fd);
  known[path] = {version, id};
  return id;
}

}  // namespace dscope::inspect
