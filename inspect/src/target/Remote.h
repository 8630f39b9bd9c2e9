// Remote memory: every read of the target goes through here, bounded and checked, and every
// failure becomes an InspectError whose message is the one line the user sees.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "target/Symbolizer.h"
#include "dscope/inspect.h"

namespace dscope::inspect {

// The one error type of the library: what() is a single line starting with "dscope: ".
class InspectError : public std::runtime_error {
 public:
  explicit InspectError(const std::string& line) : std::runtime_error(line) {}
};

// The runtime is not there yet: no process or core, its library not loaded, or its descriptor
// not written yet (an executable's copy before the dynamic linker ran). What waits for the
// runtime (a pending dispatch-break) tells this apart from a runtime that is there but unusable.
class RuntimeNotLoaded : public InspectError {
 public:
  using InspectError::InspectError;
};

// "dscope: " + message, made one line.
std::string errorLine(const std::string& message);
// A front end's dscope_value with its strings NUL-terminated, whatever the front end wrote.
void terminate(dscope_value& value);
// An error line's message: the line without "dscope: ".
std::string messageOf(const InspectError& e);
// Throws E(errorLine(message)): an InspectError, or one a caller tells apart (RuntimeNotLoaded).
template <class E = InspectError>
[[noreturn]] void fail(const std::string& message) {
  throw E(errorLine(message));
}

// "0x1a2b"
std::string hex(uint64_t value);
// "1 234 567": long depths and repeat counts read better grouped.
std::string groupThousands(uint64_t n);
// "1 frame", "20 000 frames": a grouped count and its noun, plural unless one.
std::string counted(uint64_t n, const std::string& noun);
// What the user typed, as an error line echoes it: at most 64 characters (a 10 kB argument is
// cut, with "..."), so that the line stays one a person reads.
std::string shown(const std::string& text);

// Longest string read from the target (names, schemas, debug strings); longer means garbage.
constexpr uint64_t kMaxStringLength = 4096;

// The one line for "nothing to read": no target at all, or one with no thread selected (the
// program not started yet or exited, and no core open).
constexpr const char* kNoProcess = "no process or core file (start the program, attach to one, or load a core)";

// One Remote lives for one command (a Session), while the target stands still, so it keeps what
// it has read: whole pages, and symbol names. A command asks for the same few pages hundreds of
// times (an operator's fields, its kernels, their strings), and every call into the debugger
// costs microseconds. What it read passes to the next command only under the same nonzero
// memory_generation (inspect.h: the front end's word that nothing can have changed the memory),
// so a stop, a continue or another process never sees stale bytes; writes and expression
// evaluations drop what they may change.
class ThreadIds;

// Kernel names by a KernelFunction's four pointers (functor, boxed, unboxed, sym_unboxed).
struct KernelAddressesHash {
  size_t operator()(const std::array<uint64_t, 4>& a) const {
    uint64_t h = 0;
    for (uint64_t w : a) h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return static_cast<size_t>(h ^ (h >> 32));
  }
};
using KernelNames = std::unordered_map<std::array<uint64_t, 4>, std::string, KernelAddressesHash>;

class Remote {
 public:
  // target may be null: then every read fails with "no process".
  explicit Remote(const dscope_target* target);
  ~Remote();
  Remote(const Remote&) = delete;
  Remote& operator=(const Remote&) = delete;

  const dscope_target* target() const { return target_; }
  // The front end's memory generation (0: none; what is read is then never kept past the command).
  uint64_t generation() const { return target_ ? target_->memory_generation : 0; }

  // Reads size bytes at addr; `what` names the object in the error ("operator list").
  void read(uint64_t addr, void* out, uint64_t size, const char* what) const;
  template <class T>
  T read(uint64_t addr, const char* what) const {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    read(addr, &value, sizeof(T), what);
    return value;
  }
  uint64_t readPointer(uint64_t addr, const char* what) const { return read<uint64_t>(addr, what); }
  // A NUL-terminated string of at most kMaxStringLength bytes at addr.
  std::string readString(uint64_t addr, const char* what) const;
  // Reads the pages of [addr, addr + size) into the page cache with one call of the front end,
  // when it can read them all (else nothing: later reads go page by page): for a walk that is
  // about to read many objects lying close together (each call costs more than its bytes).
  // False when nothing was read.
  bool prefetch(uint64_t addr, uint64_t size) const;
  // Whether the page holding addr is in the page cache (read or known unreadable).
  bool holds(uint64_t addr) const;

  bool canWrite() const { return target_ && target_->write_memory; }
  void write(uint64_t addr, const void* data, uint64_t size, const char* what) const;
  // A core file: nothing runs on, so nothing waits for the runtime to load.
  bool isCore() const { return target_ && target_->is_core; }
  // Asks the front end for its breakpoint on dscope_debug_break_hook (place_break_hook).
  void placeBreakHook() const;

  std::optional<uint64_t> findSymbol(const char* name) const;
  // Names worked out from memory at up to four addresses (a kernel's, from its functor and its
  // functions: TorchView::kernelName), by those addresses: the asker's memo, kept across commands
  // with the pages, since the same memory gives the same name.
  KernelNames& namesByAddresses() const { return names_by_addresses_; }
  // What is at a code address (describeCodeAddress, Symbolizer.h), or "" when no module file
  // the target maps says.
  std::string symbolize(uint64_t addr) const;
  // The functions running at a code address, or before a return address (functionsAt,
  // Symbolizer.h).
  const FramePc& functionsAt(uint64_t addr, bool return_address) const;
  // Evaluates a debugger expression; nullopt with the reason in *error when it cannot (no reason:
  // the front end evaluates nothing).
  std::optional<dscope_value> evaluate(const std::string& expr, std::string* error) const;
  // The selected frame's variable (or parameter) `name` (frame_variable): 0, or 1 (none), 2 (unreadable, the
  // reason in *error), 3 (no debug information), -1 (the front end reads no frame variables).
  int frameVariable(const char* name, bool parameter, dscope_value* value, std::string* error) const;
  std::optional<int64_t> threadTid(int64_t n) const;
  // The thread a command's --thread N means: the debugger's thread N where it has one, else the
  // OS thread id N; without the option the debugger's selected thread (0 when it has none).
  int64_t chosenThread(std::optional<int64_t> n) const { return n ? threadTid(*n).value_or(*n) : selectedTid(); }
  // chosenThread, refused in one line ("no thread N ...") where the front end says the process has
  // no such thread.
  int64_t askedThread(std::optional<int64_t> n) const;
  // The threads a command that reads every thread walks (ThreadIds::threads(), the first at_most),
  // or the selected one alone where the front end numbers none; empty without a process.
  std::vector<int64_t> everyThread(size_t at_most) const;
  int64_t selectedTid() const { return target_ ? target_->selected_tid : 0; }
  // Whether the process has a thread of that OS id; nullopt when the front end cannot tell.
  std::optional<bool> threadExists(int64_t tid) const;
  // The thread pointer (fs_base) of thread tid; nullopt when the front end cannot tell.
  std::optional<uint64_t> threadPointer(int64_t tid) const;
  // The threads' ids as the process knows them (ThreadLocal.h), worked out on first use.
  const ThreadIds& threadIds() const;
  // Where the target maps files from their first byte (empty when the front end cannot tell).
  std::vector<uint64_t> mappingStarts() const;
  // The build-id (hex) of the executable file the debugger opened, or "".
  std::string executableBuildId() const;
  // The files the target maps (module_at), asked once per command, each as the file it is read
  // from (ModuleFiles.h: under the sysroot, the process's root, or its own path); a module whose
  // file is found nowhere is left out.
  const std::vector<ModuleMapping>& modules() const;
  // The line (without "dscope: ") saying the file of the module named `prefix` ("libtorch_cpu.so")
  // is missing or another build, with the front end's setting that fixes it; "" when it was found
  // or the target maps no such module.
  std::string missingModuleFile(const std::string& prefix) const;

 private:
  struct PageCache;
  struct Kept;
  static Kept& kept();
  static constexpr uint64_t kPageSize = 4096;
  // Copies [addr, addr + size) from cached pages, reading each missing page whole; false when a
  // page cannot be read whole (the edge of a mapping, a core's section boundary): the caller then
  // reads exactly what was asked.
  bool readThroughPages(uint64_t addr, void* out, uint64_t size) const;
  // Whether every page of [addr, addr + size) is in the page cache (size > 0, no wrap).
  bool cached(uint64_t addr, uint64_t size) const;
  // A cached page's bytes, read now if it is not cached; null when it cannot be read whole.
  const unsigned char* page(uint64_t number) const;
  const unsigned char* readPage(uint64_t number) const;  // page() past its memo of the last page
  std::optional<uint64_t> lookUpSymbol(const char* name) const;
  void forgetPages(uint64_t addr, uint64_t size) const;

  const dscope_target* target_;
  mutable std::unique_ptr<PageCache> pages_;
  mutable std::unordered_map<uint64_t, std::string> symbols_;          // symbolize() answers
  mutable std::unordered_map<std::string, std::optional<uint64_t>> addresses_;  // findSymbol() answers
  mutable KernelNames names_by_addresses_;
  mutable std::unordered_map<uint64_t, FramePc> functions_[2];         // functionsAt() answers
  struct ModuleFiles;
  mutable std::shared_ptr<const ModuleFiles> modules_;  // asked once per command
  mutable std::unique_ptr<ThreadIds> thread_ids_;
};

}  // namespace dscope::inspect
