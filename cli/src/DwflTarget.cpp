#include "DwflTarget.h"

#include <elf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace dscope::cli {

namespace {

constexpr uint64_t kMaxFrames = 1u << 20;  // an overflow core has ~80 000; a walk past this is a broken stack
constexpr unsigned kDwarfRsp = 7;          // x86-64 DWARF register number of rsp

std::string hex(const unsigned char* bytes, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    char byte[3];
    std::snprintf(byte, sizeof byte, "%02x", bytes[i]);
    out += byte;
  }
  return out;
}

std::string moduleBuildId(Dwfl_Module* m) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int n = dwfl_module_build_id(m, &bits, &vaddr);
  return n > 0 ? hex(bits, static_cast<size_t>(n)) : "";
}

}  // namespace

namespace {
char* debuginfoPath = nullptr;
std::string sysroot_;
int64_t pid_ = 0;

// The module's file where the inspect library reads it from, opened for libdwfl; -1 when no place
// holds a file of the module's build-id.
int openModuleFile(Dwfl_Module* mod, const char* name, char** file_name) {
  if (!name || name[0] != '/') return -1;
  const std::string id = moduleBuildId(mod);  // reported from the core's memory; "" for a process
  char* file = dscope_module_file(name, id.c_str(), sysroot_.c_str(), pid_);
  if (!file) return -1;
  const int fd = ::open(file, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) *file_name = ::strdup(file);
  dscope_inspect_free(file);
  return fd;
}

int findCoreModuleElf(Dwfl_Module* mod, void** userdata, const char* name, Dwarf_Addr base, char** file_name, Elf** elf) {
  const int fd = openModuleFile(mod, name, file_name);
  return fd >= 0 ? fd : dwfl_build_id_find_elf(mod, userdata, name, base, file_name, elf);
}

int findProcessModuleElf(Dwfl_Module* mod, void** userdata, const char* name, Dwarf_Addr base, char** file_name, Elf** elf) {
  const int fd = openModuleFile(mod, name, file_name);
  return fd >= 0 ? fd : dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elf);
}
}  // namespace

void useFileRoots(const std::string& sysroot, int64_t pid) {
  sysroot_ = sysroot;
  pid_ = pid;
}

const std::string& fileSysroot() { return sysroot_; }

const Dwfl_Callbacks kCoreFileCallbacks = {
    .find_elf = findCoreModuleElf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = &debuginfoPath,
};
const Dwfl_Callbacks kProcessCallbacks = {
    .find_elf = findProcessModuleElf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = &debuginfoPath,
};

std::optional<std::string> fileBuildId(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  std::optional<std::string> id;
  if (elf && elf_kind(elf) == ELF_K_ELF) {
    const void* bits = nullptr;
    const ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
    id = n > 0 ? hex(static_cast<const unsigned char*>(bits), static_cast<size_t>(n)) : "";
  }
  if (elf) elf_end(elf);
  ::close(fd);
  return id;
}

uint64_t programHeadersAddress(const void* auxv, uint64_t size) {
  const auto* entries = static_cast<const unsigned char*>(auxv);
  for (uint64_t at = 0; at + sizeof(Elf64_auxv_t) <= size; at += sizeof(Elf64_auxv_t)) {
    Elf64_auxv_t entry;
    std::memcpy(&entry, entries + at, sizeof entry);
    if (entry.a_type == AT_NULL) break;
    if (entry.a_type == AT_PHDR) return entry.a_un.a_val;
  }
  return 0;
}

DwflTarget::DwflTarget() {
  target_.ctx = this;
  target_.read_memory = &DwflTarget::readMemory;
  target_.find_symbol = &DwflTarget::findSymbol;
  target_.module_at = &DwflTarget::moduleAt;
  target_.thread_tid = &DwflTarget::threadTid;
  target_.stack_frame = &DwflTarget::stackFrame;
  target_.frame_cap = kMaxFrames;
  target_.frame_walk_end = &DwflTarget::frameWalkEnd;
  target_.thread_exists = &DwflTarget::threadExists;
  target_.mapping_starts = &DwflTarget::mappingStarts;
  target_.executable_build_id = &DwflTarget::executableBuildId;
  target_.thread_pointer = &DwflTarget::threadPointer;
}

DwflTarget::~DwflTarget() {
  if (dwfl_) dwfl_end(dwfl_);
}

void DwflTarget::listModules() {
  dwfl_getmodules(
      dwfl_,
      [](Dwfl_Module* m, void**, const char* name, Dwarf_Addr start, void* arg) -> int {
        Dwarf_Addr bias = 0;
        dwfl_module_getelf(m, &bias);  // libdwfl looks for a module's file on first use
        const char* file = nullptr;
        dwfl_module_info(m, nullptr, nullptr, nullptr, nullptr, nullptr, &file, nullptr);
        static_cast<std::vector<Module>*>(arg)->push_back(
            {m, start, name ? name : "", file ? file : "", moduleBuildId(m)});
        return DWARF_CB_OK;
      },
      &reported_, 0);
  std::sort(reported_.begin(), reported_.end(), [](const Module& a, const Module& b) { return a.start < b.start; });
}

const DwflTarget::Module* DwflTarget::reportedModuleAt(uint64_t addr) const {
  Dwfl_Module* m = addr ? dwfl_addrmodule(dwfl_, addr) : nullptr;
  for (const auto& r : reported_)
    if (r.module == m) return &r;
  return nullptr;
}

void DwflTarget::useModules(std::vector<Module> modules, std::string executable_build_id, bool symbols) {
  modules_ = std::move(modules);
  std::sort(modules_.begin(), modules_.end(), [](const Module& a, const Module& b) { return a.start < b.start; });
  executable_build_id_ = std::move(executable_build_id);
  symbols_ = symbols;
}

void DwflTarget::useThreads(std::vector<int64_t> tids) {
  tids_ = std::move(tids);
  target_.selected_tid = tids_.empty() ? 0 : tids_.front();
}

std::vector<int64_t> DwflTarget::dwflThreads() const {
  std::vector<int64_t> tids;
  dwfl_getthreads(
      dwfl_,
      [](Dwfl_Thread* thread, void* arg) -> int {
        static_cast<std::vector<int64_t>*>(arg)->push_back(dwfl_thread_tid(thread));
        return DWARF_CB_OK;
      },
      &tids);
  return tids;
}

bool DwflTarget::readFromModuleFile(uint64_t addr, void* out, uint64_t size) const {
  Dwfl_Module* m = dwfl_addrmodule(dwfl_, addr);
  if (!m) return false;
  Dwarf_Addr bias = 0;
  Elf* file = dwfl_module_getelf(m, &bias);
  size_t phnum = 0, file_size = 0;
  const char* bytes = file ? elf_rawfile(file, &file_size) : nullptr;
  if (!bytes || elf_getphdrnum(file, &phnum) != 0) return false;
  const uint64_t at = addr - bias;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(file, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
    if (at < ph.p_vaddr || at + size > ph.p_vaddr + ph.p_memsz) continue;
    auto* dst = static_cast<unsigned char*>(out);
    for (uint64_t k = 0; k < size; ++k) {
      const uint64_t offset = at + k - ph.p_vaddr;
      if (offset >= ph.p_filesz) dst[k] = 0;  // .bss the target did not hold: never written
      else if (ph.p_offset + offset < file_size) dst[k] = static_cast<unsigned char>(bytes[ph.p_offset + offset]);
      else return false;
    }
    return true;
  }
  return false;
}

const DwflTarget::Walk& DwflTarget::frames(int64_t tid, uint64_t at_least) {
  Walk& walk = walks_[tid];
  if (walk.complete || walk.frames.size() > at_least) return walk;
  // libdwfl walks a thread from its innermost frame each time: asked for more, walk twice as far.
  struct Collect {
    std::vector<Frame> frames;
    uint64_t limit;
  } collect{{}, std::min(kMaxFrames, std::max<uint64_t>(2 * at_least, 512))};
  const int rc = dwfl_getthread_frames(
      dwfl_, static_cast<pid_t>(tid),
      [](Dwfl_Frame* state, void* arg) -> int {
        auto* c = static_cast<Collect*>(arg);
        Dwarf_Addr pc = 0;
        bool activation = false;
        if (!dwfl_frame_pc(state, &pc, &activation)) return -1;  // as an unwinding error
        Dwarf_Word sp = 0;
        dwfl_frame_reg(state, kDwarfRsp, &sp);
        c->frames.push_back({pc, sp});
        return c->frames.size() >= c->limit ? DWARF_CB_ABORT : DWARF_CB_OK;
      },
      &collect);
  const bool at_limit = rc == DWARF_CB_ABORT && collect.frames.size() >= collect.limit;
  walk.frames = std::move(collect.frames);
  walk.complete = !at_limit || collect.limit == kMaxFrames;
  if (walk.complete) walk.end = at_limit ? DSCOPE_FRAMES_CAP : walkEnd(tid, walk, rc);
  return walk;
}

// Why libdwfl listed no frame past the last. The caller's return address lies on the stack at or
// above the last frame's sp: where that memory cannot be read, the target lacks the stack (a
// truncated core), whatever libdwfl says (it ends such a walk as at an outermost frame too).
// Otherwise libdwfl's own answer: the outermost frame (the CFI says there is no caller), or a
// frame it could not unwind.
int DwflTarget::walkEnd(int64_t tid, const Walk& walk, int rc) const {
  if (std::find(tids_.begin(), tids_.end(), tid) == tids_.end()) return DSCOPE_FRAMES_GONE;
  uint64_t word = 0;
  if (!walk.frames.empty() && !read(walk.frames.back().sp, &word, sizeof word)) return DSCOPE_FRAMES_UNREADABLE;
  return rc == 0 ? DSCOPE_FRAMES_OUTERMOST : DSCOPE_FRAMES_CORRUPT;
}

int DwflTarget::readMemory(void* ctx, uint64_t addr, void* out, uint64_t size) {
  return static_cast<DwflTarget*>(ctx)->read(addr, out, size) ? 0 : 1;
}

int DwflTarget::findSymbol(void* ctx, const char* name, uint64_t* addr) {
  auto* self = static_cast<DwflTarget*>(ctx);
  if (!self->symbols_) return 1;
  const std::hash<std::string_view> hash;
  auto& hashes = self->symbol_hashes_;
  if (!self->symbols_read_) {  // every module's symbols once
    self->symbols_read_ = true;
    size_t count = 0;
    for (const auto& m : self->modules_) count += static_cast<size_t>(std::max(dwfl_module_getsymtab(m.module), 0));
    self->symbol_table_.reserve(count);
    hashes.reserve(count);
    for (const auto& m : self->modules_) {
      const int n = dwfl_module_getsymtab(m.module);
      for (int i = 1; i < n; ++i) {
        GElf_Sym sym;
        GElf_Addr value = 0;
        const char* s = dwfl_module_getsym_info(m.module, i, &sym, &value, nullptr, nullptr, nullptr);
        if (s && *s && sym.st_shndx != SHN_UNDEF && GELF_ST_TYPE(sym.st_info) != STT_TLS) {
          self->symbol_table_.emplace_back(s, value);
          hashes.push_back(hash(s));
        }
      }
    }
  }
  const size_t h = hash(name);
  for (auto it = std::find(hashes.begin(), hashes.end(), h); it != hashes.end(); it = std::find(it + 1, hashes.end(), h)) {
    const auto& [symbol, value] = self->symbol_table_[static_cast<size_t>(it - hashes.begin())];
    if (std::strcmp(symbol, name) == 0) {  // the first definition of the name
      *addr = value;
      return 0;
    }
  }
  return 1;
}

int DwflTarget::moduleAt(void* ctx, uint64_t index, uint64_t* start, char* path, uint64_t path_size) {
  const auto& modules = static_cast<DwflTarget*>(ctx)->modules_;
  if (index >= modules.size() || path_size == 0) return 1;
  *start = modules[index].start;
  std::snprintf(path, path_size, "%s", modules[index].file.c_str());
  return 0;
}

int DwflTarget::threadTid(void* ctx, int64_t n, int64_t* tid) {
  const auto& tids = static_cast<DwflTarget*>(ctx)->tids_;
  if (n < 1 || static_cast<uint64_t>(n) > tids.size()) return 1;
  *tid = tids[n - 1];
  return 0;
}

int DwflTarget::stackFrame(void* ctx, int64_t tid, uint64_t level, uint64_t* pc, uint64_t* sp) {
  const auto& list = static_cast<DwflTarget*>(ctx)->frames(tid, level).frames;
  if (level >= list.size()) return 1;
  *pc = list[level].pc;
  *sp = list[level].sp;
  return 0;
}

int DwflTarget::frameWalkEnd(void* ctx, int64_t tid, uint64_t level) {
  const Walk& walk = static_cast<DwflTarget*>(ctx)->frames(tid, level);
  return walk.complete ? walk.end : DSCOPE_FRAMES_CAP;
}

int DwflTarget::threadExists(void* ctx, int64_t tid) {
  const auto& tids = static_cast<DwflTarget*>(ctx)->tids_;
  return std::find(tids.begin(), tids.end(), tid) != tids.end() ? 1 : 0;
}

// Every module libdwfl found starts where its file's first byte is mapped: the program among them,
// whichever files the target reads.
int DwflTarget::mappingStarts(void* ctx, uint64_t* starts, uint64_t max, uint64_t* count) {
  const auto& reported = static_cast<DwflTarget*>(ctx)->reported_;
  uint64_t n = 0;
  for (const auto& m : reported)
    if (n < max) starts[n++] = m.start;
  *count = n;
  return 0;
}

int DwflTarget::executableBuildId(void* ctx, char* out, uint64_t out_size) {
  const auto& id = static_cast<DwflTarget*>(ctx)->executable_build_id_;
  if (id.empty() || out_size <= id.size()) return 1;
  std::snprintf(out, out_size, "%s", id.c_str());
  return 0;
}

int DwflTarget::threadPointer(void* ctx, int64_t tid, uint64_t* addr) {
  const auto& pointers = static_cast<DwflTarget*>(ctx)->thread_pointers_;
  auto it = pointers.find(tid);
  if (it == pointers.end()) return 1;
  *addr = it->second;
  return 0;
}

}  // namespace dscope::cli
