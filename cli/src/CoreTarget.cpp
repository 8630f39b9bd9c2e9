#include "CoreTarget.h"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace dscope::cli {

namespace {

constexpr uint64_t kMaxFrames = 1u << 20;   // an overflow core has ~80 000; a walk past this is a broken stack
constexpr unsigned kDwarfRsp = 7;           // x86-64 DWARF register number of rsp

char* debuginfoPath = nullptr;
const Dwfl_Callbacks kCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = &debuginfoPath,
};

[[noreturn]] void refuse(const std::string& message) { throw std::runtime_error(message); }

}  // namespace

CoreTarget::CoreTarget(const std::string& core, const std::string& executable) {
  elf_version(EV_CURRENT);
  fd_ = ::open(core.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) refuse("cannot open " + core + ": " + std::strerror(errno));
  elf_ = elf_begin(fd_, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr ehdr;
  if (!elf_ || !gelf_getehdr(elf_, &ehdr) || ehdr.e_type != ET_CORE) refuse(core + " is not a core file");
  if (ehdr.e_machine != EM_X86_64) refuse(core + " is not an x86-64 core");
  size_t phnum = 0;
  elf_getphdrnum(elf_, &phnum);
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf_, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
      segments_.push_back({ph.p_vaddr, ph.p_filesz, ph.p_memsz, ph.p_offset});
  }
  dwfl_ = dwfl_begin(&kCallbacks);
  if (!dwfl_) refuse("elfutils cannot start: " + std::string(dwfl_errmsg(-1)));
  dwfl_report_begin(dwfl_);
  if (dwfl_core_file_report(dwfl_, elf_, executable.empty() ? nullptr : executable.c_str()) < 0)
    refuse("cannot read the modules of " + core + ": " + dwfl_errmsg(-1));
  dwfl_report_end(dwfl_, nullptr, nullptr);
  if (dwfl_core_file_attach(dwfl_, elf_) < 0) refuse("cannot read the threads of " + core + ": " + dwfl_errmsg(-1));
  dwfl_getmodules(
      dwfl_,
      [](Dwfl_Module* m, void**, const char*, Dwarf_Addr, void* arg) -> int {
        Dwarf_Addr low = 0;
        const char* file = nullptr;
        dwfl_module_info(m, nullptr, &low, nullptr, nullptr, nullptr, &file, nullptr);
        if (!file) {  // the file is found on first use
          Dwarf_Addr bias;
          dwfl_module_getelf(m, &bias);
          dwfl_module_info(m, nullptr, &low, nullptr, nullptr, nullptr, &file, nullptr);
        }
        if (file) static_cast<std::vector<Module>*>(arg)->push_back({low, file, m});
        return DWARF_CB_OK;
      },
      &modules_, 0);
  std::sort(modules_.begin(), modules_.end(), [](const Module& a, const Module& b) { return a.start < b.start; });
  dwfl_getthreads(
      dwfl_,
      [](Dwfl_Thread* thread, void* arg) -> int {
        static_cast<std::vector<int64_t>*>(arg)->push_back(dwfl_thread_tid(thread));
        return DWARF_CB_OK;
      },
      &tids_);
  if (tids_.empty()) refuse(core + " holds no thread");

  target_.ctx = this;
  target_.read_memory = &CoreTarget::readMemory;
  target_.find_symbol = &CoreTarget::findSymbol;
  target_.module_at = &CoreTarget::moduleAt;
  target_.thread_tid = &CoreTarget::threadTid;
  target_.selected_tid = tids_.front();
  target_.stack_frame = &CoreTarget::stackFrame;
  target_.thread_exists = &CoreTarget::threadExists;
  target_.is_core = 1;
  target_.memory_generation = 1;  // a core never changes
}

CoreTarget::~CoreTarget() {
  if (dwfl_) dwfl_end(dwfl_);
  if (elf_) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
}

// The core's bytes where it holds them; the module file's where it does not (a core leaves out
// file-backed pages that were never written); zeros past a module segment's file size (.bss).
bool CoreTarget::read(uint64_t addr, void* out, uint64_t size) const {
  auto* dst = static_cast<unsigned char*>(out);
  while (size > 0) {
    const Segment* seg = nullptr;
    for (const auto& s : segments_)
      if (addr >= s.vaddr && addr < s.vaddr + s.memsz) seg = &s;
    uint64_t n = size;
    if (seg && addr < seg->vaddr + seg->filesz) {
      n = std::min(size, seg->vaddr + seg->filesz - addr);
      if (::pread(fd_, dst, n, static_cast<off_t>(seg->offset + (addr - seg->vaddr))) != static_cast<ssize_t>(n)) return false;
    } else {
      if (seg) n = std::min(size, seg->vaddr + seg->memsz - addr);
      if (!readFromModule(addr, dst, n)) return false;
    }
    dst += n;
    addr += n;
    size -= n;
  }
  return true;
}

bool CoreTarget::readFromModule(uint64_t addr, void* out, uint64_t size) const {
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
      if (offset >= ph.p_filesz) dst[k] = 0;  // .bss the core did not hold: never written
      else if (ph.p_offset + offset < file_size) dst[k] = static_cast<unsigned char>(bytes[ph.p_offset + offset]);
      else return false;
    }
    return true;
  }
  return false;
}

const std::vector<CoreTarget::Frame>& CoreTarget::frames(int64_t tid, uint64_t at_least) {
  auto& [complete, list] = frames_[tid];
  if (complete || list.size() > at_least) return list;
  // libdwfl walks a thread from its innermost frame each time: asked for more, walk twice as far.
  struct Walk {
    std::vector<Frame> frames;
    uint64_t limit;
  } walk{{}, std::min(kMaxFrames, std::max<uint64_t>(2 * at_least, 512))};
  const int rc = dwfl_getthread_frames(
      dwfl_, static_cast<pid_t>(tid),
      [](Dwfl_Frame* state, void* arg) -> int {
        auto* w = static_cast<Walk*>(arg);
        Dwarf_Addr pc = 0;
        bool activation = false;
        if (!dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
        Dwarf_Word sp = 0;
        dwfl_frame_reg(state, kDwarfRsp, &sp);
        w->frames.push_back({pc, sp});
        return w->frames.size() >= w->limit ? DWARF_CB_ABORT : DWARF_CB_OK;
      },
      &walk);
  complete = rc == 0 || walk.frames.size() < walk.limit;
  list = std::move(walk.frames);
  return list;
}

int CoreTarget::readMemory(void* ctx, uint64_t addr, void* out, uint64_t size) {
  return static_cast<CoreTarget*>(ctx)->read(addr, out, size) ? 0 : 1;
}

int CoreTarget::findSymbol(void* ctx, const char* name, uint64_t* addr) {
  auto* self = static_cast<CoreTarget*>(ctx);
  if (!self->symbols_read_) {  // every module's symbols once (the first definition of a name wins)
    self->symbols_read_ = true;
    for (const auto& m : self->modules_) {
      const int n = dwfl_module_getsymtab(m.module);
      for (int i = 1; i < n; ++i) {
        GElf_Sym sym;
        GElf_Addr value = 0;
        const char* s = dwfl_module_getsym_info(m.module, i, &sym, &value, nullptr, nullptr, nullptr);
        if (s && *s && sym.st_shndx != SHN_UNDEF && GELF_ST_TYPE(sym.st_info) != STT_TLS) self->symbols_.emplace(s, value);
      }
    }
  }
  auto it = self->symbols_.find(name);
  if (it == self->symbols_.end()) return 1;
  *addr = it->second;
  return 0;
}

int CoreTarget::moduleAt(void* ctx, uint64_t index, uint64_t* start, char* path, uint64_t path_size) {
  const auto& modules = static_cast<CoreTarget*>(ctx)->modules_;
  if (index >= modules.size() || path_size == 0) return 1;
  *start = modules[index].start;
  std::snprintf(path, path_size, "%s", modules[index].path.c_str());
  return 0;
}

int CoreTarget::threadTid(void* ctx, int64_t n, int64_t* tid) {
  const auto& tids = static_cast<CoreTarget*>(ctx)->tids_;
  if (n < 1 || static_cast<uint64_t>(n) > tids.size()) return 1;  // thread numbers from 1, in the core's order
  *tid = tids[n - 1];
  return 0;
}

int CoreTarget::stackFrame(void* ctx, int64_t tid, uint64_t level, uint64_t* pc, uint64_t* sp) {
  const auto& list = static_cast<CoreTarget*>(ctx)->frames(tid, level);
  if (level >= list.size()) return 1;
  *pc = list[level].pc;
  *sp = list[level].sp;
  return 0;
}

int CoreTarget::threadExists(void* ctx, int64_t tid) {
  const auto& tids = static_cast<CoreTarget*>(ctx)->tids_;
  return std::find(tids.begin(), tids.end(), tid) != tids.end() ? 1 : 0;
}

}  // namespace dscope::cli
