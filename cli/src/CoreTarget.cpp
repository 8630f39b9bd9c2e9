#include "CoreTarget.h"

#include <gelf.h>
#include <sys/procfs.h>
#include <sys/user.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "CompressedCore.h"
#include "ElfutilsGuard.h"
#include "Refusal.h"

namespace dscope::cli {

namespace {

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string sizeText(uint64_t bytes) {
  const bool small = bytes < (1u << 20);
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", static_cast<double>(bytes) / (small ? 1024.0 : 1024.0 * 1024.0),
                small ? "KiB" : "MiB");
  return text;
}

// The NT_AUXV note's descriptor and every NT_PRSTATUS note's registers, from one PT_NOTE segment.
void readNotes(Elf* elf, const GElf_Phdr& ph, std::vector<unsigned char>& auxv,
               std::vector<CoreFile::ThreadRegisters>& threads) {
  Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(ph.p_offset), ph.p_filesz,
                                        ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
  if (!data) return;
  GElf_Nhdr note;
  size_t name_at = 0, desc_at = 0;
  for (size_t at = 0; (at = gelf_getnote(data, at, &note, &name_at, &desc_at)) > 0;) {
    const auto* bytes = static_cast<const unsigned char*>(data->d_buf);
    if (note.n_namesz != sizeof "CORE" || std::memcmp(bytes + name_at, "CORE", 5) != 0) continue;
    if (note.n_type == NT_AUXV && auxv.empty()) auxv.assign(bytes + desc_at, bytes + desc_at + note.n_descsz);
    if (note.n_type == NT_PRSTATUS && note.n_descsz >= sizeof(elf_prstatus)) {
      elf_prstatus status;
      std::memcpy(&status, bytes + desc_at, sizeof status);
      user_regs_struct r;
      static_assert(sizeof r == sizeof status.pr_reg);
      std::memcpy(&r, &status.pr_reg, sizeof r);
      threads.push_back({status.pr_pid,
                         {r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp, r.r8, r.r9, r.r10, r.r11, r.r12, r.r13,
                          r.r14, r.r15, r.rip},
                         r.fs_base});
    }
  }
}

}  // namespace

CoreFile::CoreFile(const std::string& core) : fd_(openCoreBytes(core)) {
  try {
    readHeaders(core);
  } catch (...) {
    release();
    throw;
  }
}

CoreFile::~CoreFile() { release(); }

void CoreFile::release() {
  if (elf_) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
  elf_ = nullptr;
  fd_ = -1;
}

void CoreFile::readHeaders(const std::string& core) {
  struct stat st{};
  if (::fstat(fd_, &st) == 0) file_size_ = static_cast<uint64_t>(st.st_size);
  elf_version(EV_CURRENT);
  elf_ = elf_begin(fd_, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr ehdr;
  if (!elf_ || !gelf_getehdr(elf_, &ehdr) || ehdr.e_type != ET_CORE) refuse(core + " is not a core file");
  if (ehdr.e_machine != EM_X86_64) refuse(core + " is not an x86-64 core");
  size_t phnum = 0;
  elf_getphdrnum(elf_, &phnum);
  std::vector<GElf_Phdr> notes;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf_, static_cast<int>(i), &ph)) continue;
    needed_size_ = std::max(needed_size_, ph.p_offset + ph.p_filesz);
    if (ph.p_type == PT_LOAD) segments_.push_back({ph.p_vaddr, ph.p_filesz, ph.p_memsz, ph.p_offset});
    if (ph.p_type == PT_NOTE) notes.push_back(ph);
  }
  // Note segments that share bytes would count their notes again for each header (2 000 headers
  // over one block of 30 000 thread notes: 60 million threads); apart, the notes are bounded by
  // the file's size.
  std::vector<GElf_Phdr> by_offset = notes;
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GElf_Phdr& a, const GElf_Phdr& b) { return a.p_offset < b.p_offset; });
  uint64_t end = 0;  // of the notes so far, in the file
  for (const GElf_Phdr& ph : by_offset) {
    if (ph.p_filesz == 0) continue;
    if (ph.p_offset < end)
      refuse(core + " is corrupt: its " + std::to_string(notes.size()) + " note segments (PT_NOTE) overlap in the file");
    end = ph.p_offset + ph.p_filesz;
  }
  for (const GElf_Phdr& ph : notes) readNotes(elf_, ph, auxv_, threads_);
  findOverlaps();
}

// The kernel and gcore write each mapping once, so segments that overlap are damaged headers, and
// which one holds the true bytes is unknown: read() reads neither there (a command that needs
// those bytes fails in one line), and notes() names the overlap.
void CoreFile::findOverlaps() {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // [start, end), by start: one sweep finds every overlap
  for (const auto& seg : segments_)
    if (seg.memsz) ranges.push_back({seg.vaddr, seg.vaddr + std::min(seg.memsz, UINT64_MAX - seg.vaddr)});
  std::sort(ranges.begin(), ranges.end());
  uint64_t reach = 0;  // the furthest end of the ranges before
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto [start, end] = ranges[i];
    if (i > 0 && start < reach) {
      const uint64_t to = std::min(end, reach);
      if (!overlaps_.empty() && start <= overlaps_.back().second) overlaps_.back().second = std::max(overlaps_.back().second, to);
      else overlaps_.push_back({start, to});
    }
    reach = std::max(reach, end);
  }
}

bool CoreFile::inOverlap(uint64_t addr, uint64_t size) const {
  // The first overlap ending after addr is the only one that can hold [addr, addr+size)'s start.
  auto it = std::upper_bound(overlaps_.begin(), overlaps_.end(), addr,
                             [](uint64_t a, const std::pair<uint64_t, uint64_t>& o) { return a < o.second; });
  return it != overlaps_.end() && (it->first <= addr || it->first - addr < size);
}

CoreTarget::CoreTarget(const std::string& core, const std::string& executable, const std::string& sysroot)
    : CoreFile(core) {
  useFileRoots(sysroot, 0);
  setting_ = "dscope core --sysroot DIR " + core;
  target_.sysroot = fileSysroot().c_str();
  target_.sysroot_setting = setting_.c_str();
  Dwfl* dwfl = dwfl_begin(&kCoreFileCallbacks);
  if (!dwfl) refuse("elfutils cannot start: " + std::string(dwfl_errmsg(-1)));
  adopt(dwfl);  // from here on ended with this target, also when the constructor throws
  dwfl_report_begin(dwfl_);
  int reported = 0;
  guardElfutils("reading the modules of " + core,
                [&] { reported = dwfl_core_file_report(dwfl_, elf_, executable.empty() ? nullptr : executable.c_str()); });
  if (reported < 0) refuse("cannot read the modules of " + core + ": " + dwfl_errmsg(-1));
  dwfl_report_end(dwfl_, nullptr, nullptr);
  attachThreads(core);
  listModules();
  useCoreModules(core, executable);
  useThreads(dwflThreads());  // in the core's order: the thread that crashed first
  std::map<int64_t, uint64_t> pointers;
  for (const ThreadRegisters& t : threads_) pointers.emplace(t.tid, t.fs_base);
  useThreadPointers(std::move(pointers));
  target_.is_core = 1;
  target_.memory_generation = 1;  // a core never changes
}

void CoreTarget::attachThreads(const std::string& core) {
  if (threads_.empty()) refuse(core + " holds no thread");
  static const Dwfl_Thread_Callbacks kThreads = {
      .next_thread = [](Dwfl*, void* arg, void** thread) -> pid_t {
        auto* self = static_cast<CoreTarget*>(arg);
        auto next = *thread ? static_cast<const ThreadRegisters*>(*thread) + 1 : self->threads_.data();
        if (next == self->threads_.data() + self->threads_.size()) return 0;
        *thread = const_cast<ThreadRegisters*>(next);
        return static_cast<pid_t>(next->tid);
      },
      .get_thread = nullptr,
      .memory_read = [](Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) -> bool {
        return static_cast<CoreTarget*>(arg)->read(addr, result, sizeof *result);
      },
      .set_initial_registers = [](Dwfl_Thread* thread, void* arg) -> bool {
        const auto* t = static_cast<const ThreadRegisters*>(arg);
        return dwfl_thread_state_registers(thread, 0, 17, t->dwarf);
      },
      .detach = nullptr,
      .thread_detach = nullptr,
  };
  if (!dwfl_attach_state(dwfl_, elf_, static_cast<pid_t>(threads_.front().tid), &kThreads, this))
    refuse("cannot read the threads of " + core + ": " + dwfl_errmsg(-1));
}

// libdwfl has opened the file of each module the link map lists (where dscope_module_file found
// it: under the sysroot, at its path, with the core's build-id), and of the program when it was
// named (a program that did not write the core is not taken). A module it found only as an ELF
// image in the core's memory (the program when the link map is unreadable, as in a truncated core;
// a library whose file it could not take; an ELF file mapped as data) has the core's file
// mapping's path as its name: that file must be the one the process mapped.
void CoreTarget::useCoreModules(const std::string& core, const std::string& executable) {
  const Module* program = reportedModuleAt(programHeadersAddress(auxv_.data(), auxv_.size()));
  std::optional<std::string> named_id;
  if (!executable.empty() && !(named_id = fileBuildId(executable))) refuse("cannot read " + executable + " as an ELF file");
  std::vector<Module> used;
  std::string executable_id;
  bool symbols = true;
  for (const Module& m : reportedModules()) {
    const bool is_program = &m == program;
    if (!m.file.empty()) {
      used.push_back(m);
      if (is_program) executable_id = fileBuildId(m.file).value_or("");
    } else if (is_program && named_id) {
      executable_id = *named_id;
      // A core opened with another program: none of the symbols describe this core's memory (the
      // libraries' copies of the program's copy-relocated variables are stale), so the target
      // answers none, and the library names the mismatch from the two build-ids.
      if (m.build_id.empty() || m.build_id == *named_id) used.push_back({m.module, m.start, m.name, executable, m.build_id});
      else symbols = false;
    } else if (!m.name.empty() && m.name.front() == '/') {  // a mapped file's path (the vDSO has none)
      const auto file = mappedFile(m, is_program, core);
      if (file && is_program) {
        used.push_back({m.module, m.start, m.name, file->first, m.build_id});
        executable_id = file->second;
      }
    }
  }
  refuseMissingFiles(core);
  useModules(std::move(used), executable_id, symbols);
}

// The file (and its build-id) of a module libdwfl built from the core's memory; nullopt when no
// place holds it: then it is counted in missing_ (or other_build_) for refuseMissingFiles.
std::optional<std::pair<std::string, std::string>> CoreTarget::mappedFile(const Module& m, bool is_program,
                                                                         const std::string& core) {
  if (char* found = dscope_module_file(m.name.c_str(), m.build_id.c_str(), fileSysroot().c_str(), 0)) {
    const std::string file = found;
    dscope_inspect_free(found);
    const std::optional<std::string> id = fileBuildId(file);
    if (!id) refuse("cannot read " + file + " as an ELF file, which the process of " + core + " had mapped");
    return std::pair{file, *id};
  }
  // Not there: a file of another build in its place (the sysroot's first), or none.
  const std::string& sysroot = fileSysroot();
  for (const std::string& place : {sysroot.empty() ? std::string() : sysroot + m.name, m.name}) {
    const std::optional<std::string> id = place.empty() || ::access(place.c_str(), F_OK) != 0 ? std::nullopt : fileBuildId(place);
    if (!id) continue;
    if (other_build_.empty()) {
      other_build_ = place + " is not the file the process of " + core + " had mapped: its build-id is " + *id +
                     ", the core's " + m.build_id;
      other_build_in_sysroot_ = place != m.name;
    }
    return std::nullopt;
  }
  if (is_program) missing_.insert(missing_.begin(), m.name), program_missing_ = true;
  else missing_.push_back(m.name);
  return std::nullopt;
}

// Refuses a core whose modules' files are not all found, in one line: a file of another build in
// the sysroot; else every file found nowhere; else a file of another build on this machine. Each
// says how to give the root the process ran in.
void CoreTarget::refuseMissingFiles(const std::string& core) const {
  const std::string& sysroot = fileSysroot();
  const std::string give = "give the root the process ran in (a copy of its /, an unpacked container image): " +
                           std::string("dscope core --sysroot DIR ") + core;
  if (!other_build_.empty() && other_build_in_sysroot_)
    refuse(other_build_ + " (another build in the sysroot " + sysroot + "; " + give + ")");
  if (!missing_.empty()) {
    std::string line = "cannot find " + missing_.front() + (sysroot.empty() ? "" : " under the sysroot " + sysroot + " or here") +
                       (program_missing_ ? ", the program of " + core : ", which the process of " + core + " had mapped");
    if (missing_.size() > 1) {
      // A few of the others by name, PyTorch's first (a Python process maps hundreds of files).
      constexpr size_t kNamed = 3;
      std::vector<std::string> others(missing_.begin() + 1, missing_.end());
      std::stable_partition(others.begin(), others.end(), [](const std::string& path) {
        const std::string name = path.substr(path.rfind('/') + 1);
        return name.rfind("libtorch", 0) == 0 || name.rfind("libc10", 0) == 0;
      });
      line += ", nor " + std::to_string(others.size()) + " more of its files (";
      for (size_t i = 0; i < std::min(kNamed, others.size()); ++i) line += (i ? ", " : "") + others[i];
      line += others.size() > kNamed ? ", ...)" : ")";
    }
    line += program_missing_ && missing_.size() == 1 && sysroot.empty()
                ? ": name it after the core (dscope core CORE EXE), or, if it ran in a container or on another host, " + give
                : " (dscope reads symbols and code from those files): if it ran in a container or on another host, " + give;
    refuse(line);
  }
  if (!other_build_.empty())
    refuse(other_build_ + " (the file changed since, or the process ran in a container or on another host: " + give + ")");
}

std::vector<std::string> CoreTarget::notes() const {
  std::vector<std::string> out;
  if (!overlaps_.empty()) {
    const auto& [from, to] = overlaps_.front();
    out.push_back("the core is corrupt: its memory segments (PT_LOAD) overlap, from " + hex(from) + " to " + hex(to) +
                  (overlaps_.size() > 1 ? " and in " + std::to_string(overlaps_.size() - 1) + " more places" : std::string()) +
                  "; memory there is not read");
  }
  if (file_size_ >= needed_size_) return out;
  uint64_t from = UINT64_MAX, to = 0, count = 0;
  for (const auto& s : segments_) {
    if (s.filesz == 0 || s.offset + s.filesz <= file_size_) continue;
    ++count;
    from = std::min(from, s.vaddr + (s.offset < file_size_ ? file_size_ - s.offset : 0));
    to = std::max(to, s.vaddr + s.filesz);
  }
  std::string line = "the core is truncated: it holds " + sizeText(file_size_) + " of the " + sizeText(needed_size_) +
                     " its segments need";
  if (count > 0)
    line += "; memory from " + hex(from) + " to " + hex(to) + " (" + std::to_string(count) + " segment" +
            (count == 1 ? "" : "s") + ") is missing";
  out.push_back(line);
  return out;
}

// The core's bytes where it holds them; the module file's where it does not (a core leaves out
// file-backed pages that were never written); zeros past a module segment's file size (.bss).
// Bytes a truncated core lost are unreadable: the file's may not be what the process had there.
bool CoreTarget::read(uint64_t addr, void* out, uint64_t size) const {
  if (inOverlap(addr, size)) return false;
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
      if (!readFromModuleFile(addr, dst, n)) return false;
    }
    dst += n;
    addr += n;
    size -= n;
  }
  return true;
}

}  // namespace dscope::cli
