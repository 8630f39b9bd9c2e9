#include "target/TargetImage.h"

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
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

// libelf's view of the image whose first pages are `bytes`, or nullptr for no 64-bit ELF image.
// Only the program headers are in these pages: the section header table lies at the end of the
// file, so the copy is made to say it has none (libelf would look for it past the buffer).
Elf* imageElf(std::vector<unsigned char>& bytes) {
  if (bytes.size() < 64 || bytes[0] != 0x7f || bytes[1] != 'E' || bytes[2] != 'L' || bytes[3] != 'F') return nullptr;
  if (bytes[4] != ELFCLASS64) return nullptr;
  auto* ehdr = reinterpret_cast<Elf64_Ehdr*>(bytes.data());
  ehdr->e_shoff = 0;
  ehdr->e_shnum = 0;
  ehdr->e_shstrndx = 0;
  elf_version(EV_CURRENT);
  Elf* elf = elf_memory(reinterpret_cast<char*>(bytes.data()), bytes.size());
  if (elf && elf_kind(elf) != ELF_K_ELF) {
    elf_end(elf);
    return nullptr;
  }
  return elf;
}

// The program headers of `elf`, in order.
std::vector<GElf_Phdr> programHeaders(Elf* elf) {
  std::vector<GElf_Phdr> out;
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) return out;
  for (size_t i = 0; i < phnum; ++i)
    if (GElf_Phdr phdr; gelf_getphdr(elf, static_cast<int>(i), &phdr)) out.push_back(phdr);
  return out;
}

bool isProgram(const std::vector<GElf_Phdr>& headers) {
  return std::any_of(headers.begin(), headers.end(), [](const GElf_Phdr& h) { return h.p_type == PT_INTERP; });
}

// The build-id of the image at `bytes` when it is a program (it names an interpreter), else "".
std::string programImageBuildId(std::vector<unsigned char>& bytes) {
  Elf* elf = imageElf(bytes);
  if (!elf) return "";
  const std::string id = isProgram(programHeaders(elf)) ? gnuBuildId(elf) : "";
  elf_end(elf);
  return id;
}

// Where the program image mapped at `start` keeps its dynamic section in memory (PT_DYNAMIC's
// address plus the load bias) and its size; nullopt for an image that is no program.
std::optional<std::pair<uint64_t, uint64_t>> programDynamic(std::vector<unsigned char>& bytes, uint64_t start) {
  Elf* elf = imageElf(bytes);
  if (!elf) return std::nullopt;
  const std::vector<GElf_Phdr> headers = programHeaders(elf);
  elf_end(elf);
  const auto load = std::find_if(headers.begin(), headers.end(), [](const GElf_Phdr& h) { return h.p_type == PT_LOAD; });
  const auto dynamic = std::find_if(headers.begin(), headers.end(), [](const GElf_Phdr& h) { return h.p_type == PT_DYNAMIC; });
  if (!isProgram(headers) || load == headers.end() || dynamic == headers.end()) return std::nullopt;
  return std::pair{dynamic->p_vaddr - (load->p_vaddr & ~uint64_t{0xfff}) + start, dynamic->p_memsz};
}

}  // namespace

namespace {

// The address of the program's r_debug (its DT_DEBUG entry's value: ld.so writes &_r_debug there
// at start-up, 0 before), or nullopt for a target with no dynamic program. InspectError where the
// dynamic section's memory is missing.
std::optional<uint64_t> programRDebug(const Remote& mem) {
  constexpr uint64_t kMaxDynamicEntries = 512;  // a program has a few dozen
  for (uint64_t start : mem.mappingStarts()) {
    std::vector<unsigned char> bytes = headPages(mem, start);
    const auto dynamic = programDynamic(bytes, start);
    if (!dynamic) continue;
    const auto [addr, size] = *dynamic;
    for (uint64_t i = 0; i < std::min(size / 16, kMaxDynamicEntries); ++i) {
      const uint64_t tag = mem.read<uint64_t>(addr + 16 * i, "the program's dynamic section");
      if (tag == DT_NULL) break;
      if (tag == DT_DEBUG) return mem.readPointer(addr + 16 * i + 8, "the program's DT_DEBUG entry");
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::string libraryListLost(const Remote& mem) {
  try {
    // r_debug's r_map, at 8, heads the list of loaded objects the debugger reads.
    const auto r_debug = programRDebug(mem);
    if (!r_debug || !*r_debug) return "";
    const uint64_t r_map = mem.readPointer(*r_debug + 8, "r_debug");
    if (r_map) mem.readPointer(r_map + 24, "the first link_map entry");  // l_next
    return "";
  } catch (const InspectError&) {
    // No address in the line: a debugger may read other bytes than the core's where it has none
    // (GDB found r_debug and a wild link_map where dscope and LLDB found no r_debug).
    return "the core lacks the memory of the process's shared-library list (r_debug and the link_map it heads), so "
           "none of the libraries the process loaded is known, nor what they define (a truncated core: the part "
           "cut off held it)";
  }
}

std::vector<ModuleMapping> linkMapModules(const Remote& mem) {
  constexpr uint64_t kMaxLibraries = 4096;  // a Python process with torch has a few hundred
  std::vector<ModuleMapping> out;
  try {
    const auto r_debug = programRDebug(mem);
    // link_map: l_addr at 0, l_name at 8, l_next at 24.
    uint64_t entry = r_debug && *r_debug ? mem.readPointer(*r_debug + 8, "r_debug") : 0;
    for (uint64_t n = 0; entry && n < kMaxLibraries; ++n, entry = mem.readPointer(entry + 24, "a link_map entry")) {
      const uint64_t bias = mem.readPointer(entry, "a link_map entry");
      const uint64_t name = mem.readPointer(entry + 8, "a link_map entry");
      std::string path;
      try {  // the vDSO's name lies in its image, which a core may leave out
        path = name ? mem.readString(name, "a library's name") : "";
      } catch (const InspectError&) {
      }
      if (bias && !path.empty() && path.front() == '/') out.push_back({bias, path});
    }
  } catch (const InspectError&) {  // the list is cut there: what was read stands
  }
  return out;
}

std::string programBuildId(const Remote& mem) {
  for (uint64_t start : mem.mappingStarts()) {
    std::vector<unsigned char> bytes = headPages(mem, start);
    if (std::string id = programImageBuildId(bytes); !id.empty()) return id;
  }
  return "";
}

std::string imageBuildId(const Remote& mem, uint64_t start) {
  std::vector<unsigned char> bytes = headPages(mem, start);
  Elf* elf = imageElf(bytes);
  if (!elf) return "";
  const std::string id = gnuBuildId(elf);
  elf_end(elf);
  return id;
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
