// The LLDB side of the inspect library's dscope_target (inspect/include/dscope/inspect.h):
// memory, symbols, expressions, threads and stack frames come from LLDB's SB API. Every decode,
// every format and every argument parse lives in libdscope_inspect; this only adapts LLDB to it,
// so LLDB prints what GDB prints.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "dscope/inspect.h"
#include "lldb/API/LLDB.h"

namespace dscope::lldb_plugin {

// What one inspect command returned.
struct InspectResult {
  std::string text;  // ends with '\n'
  bool is_error = false;
  // Ctrl-C ended the command (text is the library's DSCOPE_MESSAGE_INTERRUPTED line). LLDB drops
  // an interrupted command's result ("... Interrupted."), so the caller writes the line to the
  // debugger's output itself.
  bool interrupted = false;
};

// One dscope_target over an LLDB target, its process (live or core, or none) and the selected
// frame (for expressions). Built per command: cheap, and never stale across process restarts.
class LldbTarget {
 public:
  explicit LldbTarget(lldb::SBTarget target, lldb::SBFrame frame = lldb::SBFrame());
  // The callbacks get `this` as their context: never copied or moved.
  LldbTarget(const LldbTarget&) = delete;
  LldbTarget& operator=(const LldbTarget&) = delete;

  // The debugger's selected target, thread and frame.
  static LldbTarget forSelected(lldb::SBDebugger& debugger);

  // Runs "<command> <arguments>" through the inspect library.
  InspectResult run(const std::string& command_line);
  // Any entry point of the library that answers a string: `call(target, is_error)` returns it.
  InspectResult answer(const std::function<char*(const dscope_target*, int*)>& call);

  // The library's summary and children of a value (dscope_value_summary), or null with the reason
  // when LLDB cannot describe the value.
  using Summary = std::unique_ptr<dscope_summary, decltype(&dscope_summary_free)>;
  Summary summarize(lldb::SBValue value, std::string* error);

  lldb::SBTarget& target() { return target_; }
  bool hasLiveProcess() const { return live_; }
  bool isCore() const { return core_; }

 private:
  // The dscope_target callbacks: each answers a C caller and never throws.
  static int readMemory(void* ctx, uint64_t addr, void* out, uint64_t size);
  static int writeMemory(void* ctx, uint64_t addr, const void* data, uint64_t size);
  static int findSymbol(void* ctx, const char* name, uint64_t* addr);
  static int moduleAt(void* ctx, uint64_t index, uint64_t* start, char* path, uint64_t path_size);
  static int evaluate(void* ctx, const char* expr, dscope_value* value, char* err, uint64_t err_size);
  static int threadTid(void* ctx, int64_t n, int64_t* tid);
  static int stackFrame(void* ctx, int64_t tid, uint64_t level, uint64_t* pc, uint64_t* sp);
  static int frameWalkEnd(void* ctx, int64_t tid, uint64_t level);
  static int threadExists(void* ctx, int64_t tid);
  static int mappingStarts(void* ctx, uint64_t* starts, uint64_t max, uint64_t* count);
  static int executableBuildId(void* ctx, char* out, uint64_t out_size);

  lldb::SBAddress resolveLoadAddress(uint64_t addr);
  bool read(uint64_t addr, void* out, uint64_t size);
  bool readFromModuleFile(uint64_t addr, void* out, uint64_t size);
  bool isProcessFile(lldb::SBModule module);
  bool lookupSymbol(const std::string& name, uint64_t* addr);
  bool evaluateExpression(const std::string& expr, dscope_value* value, std::string* error);
  // LLDB's frame listing the stack frame `level` of thread tid (its innermost inlined call, if any),
  // invalid past the outermost.
  lldb::SBFrame stackFrameOf(int64_t tid, uint64_t level);
  uint64_t frameCap();
  // Whether the user pressed Ctrl-C during this command (the lldb driver turns SIGINT into
  // SBDebugger::DispatchInputInterrupt, which marks the running command interrupted). From then
  // on every callback fails, so the library's walk ends at once.
  bool interrupted();

  lldb::SBTarget target_;
  lldb::SBProcess process_;
  lldb::SBFrame frame_;
  bool live_ = false;  // a running (stopped) process: memory is read and written normally
  bool core_ = false;  // a core file: read-only file-backed bytes come from the module files
  lldb::SBDebugger debugger_;
  std::string sysroot_;  // c_.sysroot
  std::string platformSysroot();
  bool interrupted_ = false;
  dscope_target c_{};
  // The walk of one thread's stack (dispatch-trace --frames): LLDB's frame index of each stack
  // frame found so far; `listed` frames were read, the last one at `last_cfa`.
  struct StackWalk {
    int64_t tid = 0;
    lldb::SBThread thread;
    std::vector<uint32_t> starts;
    uint32_t listed = 0;
    uint64_t last_cfa = 0;
    bool complete = false;
  } walk_;
};

// A value as the inspect library's dscope_value describes it (a reference as its referent), or
// false with the reason.
bool describeValue(lldb::SBValue value, dscope_value* out, std::string* error);

// Writes text (with a final newline) to the debugger's output, for breakpoint callbacks that
// have no command result to print into.
void writeToDebugger(lldb::SBDebugger debugger, const std::string& text);

}  // namespace dscope::lldb_plugin
