// A core file opened with elfutils (libdwfl) and presented as the dscope_target a debugger's front
// end gives the inspect library: memory from the core's segments and, for pages the core does not
// hold, from the module files; symbols and modules from libdwfl's view of the link map; threads
// and their physical stack frames from the core's notes, unwound by libdwfl. No debugger involved.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <elfutils/libdwfl.h>

#include "dscope/inspect.h"

namespace dscope::cli {

class CoreTarget {
 public:
  // Opens `core` with `executable` ("" : the program the core names). Throws std::runtime_error
  // with a one-line reason (not a core, a module file missing, ...).
  CoreTarget(const std::string& core, const std::string& executable);
  ~CoreTarget();
  CoreTarget(const CoreTarget&) = delete;
  CoreTarget& operator=(const CoreTarget&) = delete;

  const dscope_target* target() const { return &target_; }

 private:
  struct Segment {
    uint64_t vaddr, filesz, memsz, offset;
  };
  struct Module {
    uint64_t start;
    std::string path;
    Dwfl_Module* module;
  };
  struct Frame {
    uint64_t pc, sp;
  };

  bool read(uint64_t addr, void* out, uint64_t size) const;
  bool readFromModule(uint64_t addr, void* out, uint64_t size) const;
  const std::vector<Frame>& frames(int64_t tid, uint64_t at_least);

  static int readMemory(void* ctx, uint64_t addr, void* out, uint64_t size);
  static int findSymbol(void* ctx, const char* name, uint64_t* addr);
  static int moduleAt(void* ctx, uint64_t index, uint64_t* start, char* path, uint64_t path_size);
  static int threadTid(void* ctx, int64_t n, int64_t* tid);
  static int stackFrame(void* ctx, int64_t tid, uint64_t level, uint64_t* pc, uint64_t* sp);
  static int threadExists(void* ctx, int64_t tid);

  int fd_ = -1;
  Elf* elf_ = nullptr;
  Dwfl* dwfl_ = nullptr;
  std::vector<Segment> segments_;
  std::vector<Module> modules_;
  std::vector<int64_t> tids_;  // in the core's order: the thread that crashed first
  std::unordered_map<std::string, uint64_t> symbols_;
  bool symbols_read_ = false;
  std::map<int64_t, std::pair<bool, std::vector<Frame>>> frames_;  // tid -> (walked to the end, frames)
  dscope_target target_{};
};

}  // namespace dscope::cli
