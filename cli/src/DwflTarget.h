// The libdwfl half of a target, the same for a core file and a live process: its modules and their
// symbols, its threads and their stack frames, presented as the dscope_target the inspect library
// reads every process through. Where the bytes come from is the subclass's (read): the core's
// segments, or the process's memory.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <elfutils/libdwfl.h>

#include "dscope/inspect.h"

namespace dscope::cli {

class DwflTarget {
 public:
  virtual ~DwflTarget();
  DwflTarget(const DwflTarget&) = delete;
  DwflTarget& operator=(const DwflTarget&) = delete;

  const dscope_target* target() const { return &target_; }
  // What the target lacks that a reader should know (a truncated core: which memory is missing),
  // one line each, without the "dscope: " prefix. None for a complete target.
  virtual std::vector<std::string> notes() const { return {}; }
  // Why no answer read from the target stands, one line without the "dscope: " prefix (a process
  // that exited while it was read); nullopt when it stands. Asked after the answer is made.
  virtual std::optional<std::string> lost() const { return std::nullopt; }

 protected:
  // A module as libdwfl reported it: `file` is the file libdwfl opened for it, "" when it built the
  // module from the target's memory (a file mapping the link map does not list: the program when
  // the link map is unreadable, or an ELF file the program mapped as data).
  struct Module {
    Dwfl_Module* module;
    uint64_t start;
    std::string name;
    std::string file;
    std::string build_id;  // hex, from the target's memory; "" when it has none
  };

  DwflTarget();
  // Takes `dwfl`, ended with this target. The subclass reports its modules and attaches its
  // threads, lists the modules (listModules), chooses what the target reads them as (useModules),
  // numbers its threads (useThreads) and fills in the rest of target_. What libdwfl reads through
  // (the core's image, the stopped process) belongs in a base class ahead of this one, so that it
  // ends after libdwfl.
  void adopt(Dwfl* dwfl) { dwfl_ = dwfl; }
  void listModules();
  const std::vector<Module>& reportedModules() const { return reported_; }
  // The module whose image holds `addr` (the program holds its program headers, AT_PHDR).
  const Module* reportedModuleAt(uint64_t addr) const;
  // The modules the target's symbols and code come from, by the file each is read from, and the
  // build-id of the executable file opened for the program ("" when none). With symbols false,
  // find_symbol answers nothing: the files named do not describe this target's memory.
  void useModules(std::vector<Module> modules, std::string executable_build_id, bool symbols);
  // Thread numbers from 1 in this order; the first is the selected thread.
  void useThreads(std::vector<int64_t> tids);
  // Each thread's thread pointer (fs_base), by tid: what maps the tids to those the process knows
  // its threads by in a pid namespace of its own (inspect.h thread_pointer).
  void useThreadPointers(std::map<int64_t, uint64_t> pointers) { thread_pointers_ = std::move(pointers); }
  // The threads libdwfl lists, in its order.
  std::vector<int64_t> dwflThreads() const;

  // The target's bytes at [addr, addr + size): false when any of them cannot be read.
  virtual bool read(uint64_t addr, void* out, uint64_t size) const = 0;
  // Bytes of a module's file where it maps them (zeros past a segment's file size: .bss); false
  // when the range is in no module segment or the file lacks it.
  bool readFromModuleFile(uint64_t addr, void* out, uint64_t size) const;

  Dwfl* dwfl_ = nullptr;
  dscope_target target_{};

 private:
  struct Frame {
    uint64_t pc, sp;
  };
  struct Walk {
    std::vector<Frame> frames;
    bool complete = false;
    int end = DSCOPE_FRAMES_OUTERMOST;  // dscope_frames_end, once complete
  };

  const Walk& frames(int64_t tid, uint64_t at_least);
  int walkEnd(int64_t tid, const Walk& walk, int rc) const;

  static int readMemory(void* ctx, uint64_t addr, void* out, uint64_t size);
  static int findSymbol(void* ctx, const char* name, uint64_t* addr);
  static int moduleAt(void* ctx, uint64_t index, uint64_t* start, char* path, uint64_t path_size);
  static int threadTid(void* ctx, int64_t n, int64_t* tid);
  static int stackFrame(void* ctx, int64_t tid, uint64_t level, uint64_t* pc, uint64_t* sp);
  static int frameWalkEnd(void* ctx, int64_t tid, uint64_t level);
  static int threadExists(void* ctx, int64_t tid);
  static int mappingStarts(void* ctx, uint64_t* starts, uint64_t max, uint64_t* count);
  static int executableBuildId(void* ctx, char* out, uint64_t out_size);
  static int threadPointer(void* ctx, int64_t tid, uint64_t* addr);

  std::vector<Module> reported_;
  std::vector<Module> modules_;  // by start
  std::string executable_build_id_;
  bool symbols_ = true;
  std::vector<int64_t> tids_;
  std::map<int64_t, uint64_t> thread_pointers_;
  // Every module's symbols (name and address) in module and table order, so that the first of
  // equal names is the first definition, and beside them the std::hash of each name: a lookup
  // scans the hashes (8 bytes a symbol, in order). The names are libelf's own strings, which live
  // as long as dwfl_. A process with torch has 250 000 symbols and asks for about 15: a hash map of
  // copied names (a node each) cost more than the rest of a summary, sorting them a tenth of it.
  std::vector<std::pair<const char*, uint64_t>> symbol_table_;
  std::vector<size_t> symbol_hashes_;
  bool symbols_read_ = false;
  std::map<int64_t, Walk> walks_;
};

// libdwfl's ways of finding a module's file: first where the inspect library reads it from
// (dscope_module_file: under the sysroot, in a live process's root /proc/PID/root, at its path,
// with the build-id of its image), then a core's (by build-id in the debug directories) and a live
// process's (its image in memory); debug files in the standard places.
extern const Dwfl_Callbacks kCoreFileCallbacks;
extern const Dwfl_Callbacks kProcessCallbacks;
// Where those callbacks look for the files of the target being opened: a copy of the root its
// process ran in ("": none), the live process's pid (0: a core). One target at a time.
void useFileRoots(const std::string& sysroot, int64_t pid);
const std::string& fileSysroot();

// The GNU build-id of the ELF file at `path` in hex ("" when it has none); nullopt when it cannot
// be opened as an ELF file.
std::optional<std::string> fileBuildId(const std::string& path);

// AT_PHDR of an auxiliary vector (the address of the program's program headers), 0 if absent.
uint64_t programHeadersAddress(const void* auxv, uint64_t size);

}  // namespace dscope::cli
