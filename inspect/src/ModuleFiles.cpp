#include "ModuleFiles.h"

#include <gelf.h>
#include <libelf.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "TargetImage.h"

namespace dscope::inspect {

namespace {

bool exists(const std::string& file) {
  struct stat st {};
  return ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The places a module's file may be, most specific first: the sysroot the user gave names the
// process's files even where this machine has files of the same name; a live process's own root
// holds exactly its files.
std::vector<std::string> candidates(const std::string& path, const FileRoots& roots) {
  std::vector<std::string> out;
  if (path.empty() || path.front() != '/') return {path};
  if (!roots.sysroot.empty()) out.push_back((roots.sysroot.back() == '/' ? roots.sysroot.substr(0, roots.sysroot.size() - 1) : roots.sysroot) + path);
  if (roots.pid > 0) out.push_back("/proc/" + std::to_string(roots.pid) + "/root" + path);
  out.push_back(path);
  return out;
}

}  // namespace

std::optional<std::string> findModuleFile(const std::string& path, const std::string& build_id, const FileRoots& roots,
                                          MissingModuleFile* missing) {
  MissingModuleFile why{path, build_id, "", ""};
  for (const std::string& file : candidates(path, roots)) {
    if (!exists(file)) continue;
    if (build_id.empty()) return file;
    const std::string id = fileBuildId(file);
    if (id == build_id || id.empty()) return file;  // a file without build-id cannot be told apart
    if (why.other_file.empty()) why.other_file = file, why.other_build_id = id;
  }
  if (missing) *missing = why;
  return std::nullopt;
}

std::string missingFileLine(const MissingModuleFile& missing, const FileRoots& roots, const std::string& setting) {
  std::string line;
  if (!missing.other_file.empty()) {
    line = missing.other_file + " is another build than the process's " + missing.path + ": its build-id is " +
           missing.other_build_id + ", the process's " + (missing.build_id.empty() ? "unknown" : missing.build_id);
  } else {
    line = "cannot find " + missing.path + (missing.build_id.empty() ? "" : " (build-id " + missing.build_id + ")") +
           ", which the process mapped, ";
    std::vector<std::string> places;
    if (!roots.sysroot.empty()) places.push_back("under the sysroot " + roots.sysroot);
    if (roots.pid > 0) places.push_back("in its root /proc/" + std::to_string(roots.pid) + "/root");
    places.push_back("on this machine");
    for (size_t i = 0; i < places.size(); ++i)
      line += (i == 0 ? "" : i + 1 == places.size() ? " or " : ", ") + places[i];
  }
  if (!setting.empty())
    line += "; give the root the process ran in (a copy of its /, an unpacked container image) as DIR: " + setting;
  return line;
}

namespace {

// A module file's defined global symbols (as a debugger's global lookup finds them), and the
// address its file offset 0 is linked at. The file stays mapped while the symbols are kept, so
// their names are read in place: a libtorch defines some 250 000, and copying each name into a
// map cost more than everything else `dscope core` does on a container core.
struct FileSymbols {
  int fd = -1;
  Elf* elf = nullptr;
  std::vector<const char*> names;  // in the mapped string tables
  std::vector<size_t> hashes;      // of names, in the same order: a lookup scans these
  std::vector<uint64_t> values;
  uint64_t offset_zero_vaddr = 0;

  FileSymbols() = default;
  FileSymbols(const FileSymbols&) = delete;
  FileSymbols& operator=(const FileSymbols&) = delete;
  ~FileSymbols() {
    if (elf) elf_end(elf);
    if (fd >= 0) ::close(fd);
  }

  std::optional<uint64_t> find(std::string_view name) const {
    const size_t h = std::hash<std::string_view>{}(name);
    for (auto it = std::find(hashes.begin(), hashes.end(), h); it != hashes.end(); it = std::find(it + 1, hashes.end(), h))
      if (const auto i = static_cast<size_t>(it - hashes.begin()); names[i] == name) return values[i];  // the first definition
    return std::nullopt;
  }
};

std::unique_ptr<FileSymbols> readSymbols(const std::string& file) {
  auto out = std::make_unique<FileSymbols>();
  out->fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (out->fd < 0) return out;
  elf_version(EV_CURRENT);
  Elf* elf = out->elf = elf_begin(out->fd, ELF_C_READ_MMAP, nullptr);
  size_t phnum = 0;
  if (elf && elf_getphdrnum(elf, &phnum) == 0)
    for (size_t i = 0; i < phnum; ++i)
      if (GElf_Phdr ph; gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD) {
        out->offset_zero_vaddr = ph.p_vaddr - ph.p_offset;  // the first PT_LOAD maps the file's start
        break;
      }
  const std::hash<std::string_view> hash;
  for (Elf_Scn* scn = elf ? elf_nextscn(elf, nullptr) : nullptr; scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || !sh.sh_entsize) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 1; data && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF ||
          GELF_ST_TYPE(sym.st_info) == STT_TLS || GELF_ST_BIND(sym.st_info) == STB_LOCAL)
        continue;
      if (const char* name = elf_strptr(elf, sh.sh_link, sym.st_name); name && *name) {
        out->names.push_back(name);
        out->hashes.push_back(hash(name));
        out->values.push_back(sym.st_value);
      }
    }
  }
  return out;
}

}  // namespace

std::optional<uint64_t> symbolInFile(const std::string& file, uint64_t start, const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<FileSymbols>> files;
  std::lock_guard lock(mutex);
  auto& symbols = files[file];
  if (!symbols) symbols = readSymbols(file);
  const auto value = symbols->find(name);
  if (!value) return std::nullopt;
  return start + *value - symbols->offset_zero_vaddr;
}

}  // namespace dscope::inspect
