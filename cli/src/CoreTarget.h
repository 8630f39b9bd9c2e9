// A core file opened with elfutils (libdwfl) and presented as the dscope_target a debugger's front
// end gives the inspect library: memory from the core's segments and, for pages the core does not
// hold, from the module files; symbols and modules from libdwfl's view of the link map; threads
// and their physical stack frames from the core's notes, unwound by libdwfl. No debugger involved.
// A compressed core (zstd, LZ4 frame, xz) is read as the core it holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <libelf.h>

#include "DwflTarget.h"

namespace dscope::cli {

// The core file's ELF side: its bytes (decompressed), segments and auxiliary vector. A base of
// CoreTarget ahead of DwflTarget, so that libdwfl, which keeps pointers into the core's image,
// ends before the image does.
class CoreFile {
 public:
  // The threads' NT_PRSTATUS notes, in the core's order (the thread that crashed first): the tid
  // and the general registers as DWARF numbers them (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp,
  // r8-r15, then rip), and its thread pointer (fs_base).
  struct ThreadRegisters {
    int64_t tid;
    uint64_t dwarf[17];
    uint64_t fs_base;
  };

 protected:
  struct Segment {
    uint64_t vaddr, filesz, memsz, offset;
  };

  explicit CoreFile(const std::string& core);
  ~CoreFile();
  CoreFile(const CoreFile&) = delete;
  CoreFile& operator=(const CoreFile&) = delete;

  int fd_ = -1;
  Elf* elf_ = nullptr;
  uint64_t file_size_ = 0;           // what the file (decompressed) holds
  uint64_t needed_size_ = 0;         // what its program headers say it holds
  std::vector<Segment> segments_;    // PT_LOAD, in the core's order
  std::vector<unsigned char> auxv_;  // the NT_AUXV note
  std::vector<ThreadRegisters> threads_;
  std::vector<std::pair<uint64_t, uint64_t>> overlaps_;  // [start, end) where PT_LOADs overlap, sorted, disjoint

  // Whether [addr, addr+size) touches memory two PT_LOADs claim.
  bool inOverlap(uint64_t addr, uint64_t size) const;

 private:
  void readHeaders(const std::string& core);
  void findOverlaps();
  void release();
};

class CoreTarget : private CoreFile, public DwflTarget {
 public:
  // Opens `core` with `executable` ("" : the program the core names), its modules' files looked
  // for under `sysroot` first ("": none; a copy of the root the process ran in). Throws
  // std::runtime_error with a one-line reason (not a core, a module file missing or another build, ...).
  CoreTarget(const std::string& core, const std::string& executable, const std::string& sysroot = "");

  // A truncated core: how much of it is there and which memory it lacks; overlapping segments.
  std::vector<std::string> notes() const override;

 private:
  // The modules read: those the link map lists (libdwfl opened their files) and the program.
  void useCoreModules(const std::string& core, const std::string& executable);
  // The file of a module libdwfl found no file for, and its build-id; refuseMissingFiles names in
  // one line the modules no place holds (and how to give the process's root).
  std::optional<std::pair<std::string, std::string>> mappedFile(const Module& m, bool is_program, const std::string& core);
  void refuseMissingFiles(const std::string& core) const;
  std::vector<std::string> missing_;        // the modules no place holds a file of
  std::string other_build_;                 // the first "FILE is not the file ..." of another build
  bool other_build_in_sysroot_ = false;     // that file is the sysroot's
  bool program_missing_ = false;
  std::string setting_;                     // dscope core --sysroot DIR CORE
  // libdwfl's unwinder over the threads of the notes, reading the stack through read(): its own
  // core reader (dwfl_core_file_attach) costs elfutils 0.188 a search of every chunk read so far
  // at each read, 45 s for 20 000 frames of an overflow core.
  void attachThreads(const std::string& core);
  bool read(uint64_t addr, void* out, uint64_t size) const override;
};

}  // namespace dscope::cli
