#include "target/ModuleFiles.h"

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

#include "target/TargetImage.h"

namespace dscope::inspect {

namespace {

bool exists(const std::string& file) {
  struct stat st {};
  return ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The components of a path, in order ("/usr//lib/" -> usr, lib).
std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  for (size_t at = 0; at < path.size();) {
    const size_t end = std::min(path.find('/', at), path.size());
    if (end > at) out.push_back(path.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The absolute `path` of a process whose root is `root`, as a path of this machine: each symbolic
// link on the way is followed inside root, an absolute target starting again at root, as the
// process's own lookups went. root + path alone would leave the root at its first absolute link
// (Debian's /usr/lib/x86_64-linux-gnu/libblas.so.3 -> /etc/alternatives/...) for this machine's
// files. Bounded as the kernel bounds it (40 links); what does not exist is left as it is.
std::string underRoot(const std::string& root, const std::string& path) {
  constexpr int kMaxLinks = 40;
  std::vector<std::string> rest = components(path);
  std::reverse(rest.begin(), rest.end());  // the next component last
  std::string resolved;                    // below root: "" or "/usr/lib"
  for (int links = 0; !rest.empty();) {
    const std::string c = std::move(rest.back());
    rest.pop_back();
    if (c == ".") continue;
    if (c == "..") {
      resolved.erase(std::min(resolved.rfind('/'), resolved.size()));
      continue;
    }
    const std::string next = resolved + "/" + c;
    struct stat st {};
    if (::lstat((root + next).c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      resolved = next;
      continue;
    }
    char target[4096];
    const ssize_t n = ::readlink((root + next).c_str(), target, sizeof target);
    if (++links > kMaxLinks || n <= 0 || n == static_cast<ssize_t>(sizeof target)) return root + path;
    const std::string link(target, static_cast<size_t>(n));
    if (link.front() == '/') resolved.clear();
    const auto parts = components(link);
    rest.insert(rest.end(), parts.rbegin(), parts.rend());
  }
  return root + resolved;
}

// The places a module's file may be, most specific first: the sysroot the user gave names the
// process's files even where this machine has files of the same name; a live process's own root
// holds exactly its files. In each root, the path with its links followed inside the root, then as
// this machine follows them (as GDB opens a sysroot's files: a sysroot made of links to files
// elsewhere on this machine).
std::vector<std::string> candidates(const std::string& path, const FileRoots& roots) {
  std::vector<std::string> out;
  if (path.empty() || path.front() != '/') return {path};
  auto inRoot = [&](const std::string& root) {
    out.push_back(underRoot(root, path));
    if (out.back() != root + path) out.push_back(root + path);
  };
  if (!roots.sysroot.empty()) inRoot(roots.sysroot.back() == '/' ? roots.sysroot.substr(0, roots.sysroot.size() - 1) : roots.sysroot);
  if (roots.pid > 0) inRoot("/proc/" + std::to_string(roots.pid) + "/root");
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

// A module's .dynsym as the dynamic linker looks names up in it: through its .gnu.hash table,
// so that a lookup reads one bucket's chain and no other symbol.
struct GnuHashIndex {
  Elf_Data* symbols = nullptr;  // .dynsym
  size_t strings = 0;           // its string table's section index
  size_t count = 0;             // .dynsym's entries
  uint32_t symoffset = 0;       // the first symbol in the table
  const uint32_t* buckets = nullptr;
  uint32_t nbuckets = 0;
  const uint32_t* chain = nullptr;  // chain[i - symoffset]: symbol i's hash, bit 0 set at a chain's end
  size_t chain_len = 0;

  static uint32_t hash(std::string_view name) {
    uint32_t h = 5381;
    for (unsigned char c : name) h = h * 33 + c;
    return h;
  }

  // Every index bounded by the sections' sizes: the file may be corrupt.
  template <typename Accept>
  std::optional<uint64_t> find(Elf* elf, std::string_view name, Accept accept) const {
    if (!nbuckets) return std::nullopt;
    const uint32_t h = hash(name);
    for (uint64_t i = buckets[h % nbuckets]; i >= symoffset && i < count && i - symoffset < chain_len; ++i) {
      const uint32_t c = chain[i - symoffset];
      if ((c | 1) == (h | 1)) {
        GElf_Sym sym;
        const char* s = gelf_getsym(symbols, static_cast<int>(i), &sym) ? elf_strptr(elf, strings, sym.st_name) : nullptr;
        if (s && name == s && accept(sym)) return sym.st_value;
      }
      if (c & 1) break;
    }
    return std::nullopt;
  }
};

// The index of `table` (.dynsym, `header` its section header) from the .gnu.hash section `scn`;
// an index of no buckets where the section does not have the layout it must.
GnuHashIndex gnuHashIndex(Elf* elf, Elf_Scn* scn, Elf_Data* table, const GElf_Shdr& header) {
  GnuHashIndex index;
  Elf_Data* data = elf_getdata(scn, nullptr);
  const size_t word = gelf_getclass(elf) == ELFCLASS64 ? 8 : 4;  // a bloom filter word
  if (!data || !data->d_buf || data->d_size < 16 || !header.sh_entsize) return index;
  const auto* words = static_cast<const uint32_t*>(data->d_buf);
  const uint64_t nbuckets = words[0], bloom_words = words[2], size = data->d_size / 4;
  const uint64_t buckets_at = 4 + bloom_words * word / 4;
  if (nbuckets == 0 || buckets_at > size || nbuckets > size - buckets_at) return index;
  index.symbols = table;
  index.strings = header.sh_link;
  index.count = header.sh_size / header.sh_entsize;
  index.symoffset = words[1];
  index.buckets = words + buckets_at;
  index.nbuckets = static_cast<uint32_t>(nbuckets);
  index.chain = index.buckets + nbuckets;
  index.chain_len = size - buckets_at - nbuckets;
  return index;
}

// A module file's defined global symbols (as a debugger's global lookup finds them), and the
// address its file offset 0 is linked at. The file stays mapped while the symbols are kept, so
// their names are read in place: a libtorch defines some 250 000, and copying each name into a
// map cost more than everything else `dscope core` does on a container core. .dynsym is looked
// up through its .gnu.hash table where it has one; other tables are listed with each name's hash.
struct FileSymbols {
  int fd = -1;
  Elf* elf = nullptr;
  GnuHashIndex dynamic;
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

  // A symbol a global lookup finds: defined, not thread-local, not local to its file.
  static bool global(const GElf_Sym& sym) {
    return sym.st_shndx != SHN_UNDEF && GELF_ST_TYPE(sym.st_info) != STT_TLS && GELF_ST_BIND(sym.st_info) != STB_LOCAL;
  }

  std::optional<uint64_t> find(std::string_view name) const {
    if (auto value = dynamic.find(elf, name, global)) return value;  // .dynsym comes first, as it did when listed
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
  // .dynsym through its .gnu.hash where the file has one.
  for (Elf_Scn* scn = elf ? elf_nextscn(elf, nullptr) : nullptr; scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh, table_header;
    Elf_Scn* table = nullptr;
    if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_HASH && (table = elf_getscn(elf, sh.sh_link)) &&
        gelf_getshdr(table, &table_header) && table_header.sh_type == SHT_DYNSYM)
      if (Elf_Data* data = elf_getdata(table, nullptr)) {
        out->dynamic = gnuHashIndex(elf, scn, data, table_header);
        break;
      }
  }
  const std::hash<std::string_view> hash;
  for (Elf_Scn* scn = elf ? elf_nextscn(elf, nullptr) : nullptr; scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || !sh.sh_entsize) continue;
    if (sh.sh_type == SHT_DYNSYM && out->dynamic.nbuckets) continue;  // looked up through its .gnu.hash
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 1; data && i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || !FileSymbols::global(sym)) continue;
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
