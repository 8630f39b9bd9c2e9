// What a debugger front end must know of the runtimes, the ABI and its own user commands, answered
// through the C ABI (include/dscope/inspect.h, "front ends"), so that GDB's and LLDB's front ends
// hold none of it: each only reconciles its native breakpoints and commands with these tables.
// The tables are static: their pointers stay valid for the process's life.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dscope/inspect.h"
#include "frontends/FrontEnds.h"

#define DSCOPE_INSPECT_EXPORT extern "C" __attribute__((visibility("default")))

namespace dscope::inspect {
namespace {

// The runtime's break hook: the runtime calls it for a dispatch its filter matches, with the
// dispatch in its argument registers (so they are read at its first instruction).
constexpr const char* kHook = "dscope_debug_break_hook";
// Every thread of our runtime calls it before its first dispatch, which checks the filter.
constexpr const char* kFirstDispatch = "dscope::debug::registerCurrentThread";
// Real PyTorch's static initializers have registered its kernels by the time a C++ program's main
// runs, and by the time Python initializes the torch._C module.
constexpr const char* kKernelsRegistered[] = {"main", "PyInit__C"};
// Part of the file name of our runtime's library (libdscope_runtime.so.*).
constexpr const char* kRuntimeFile = "dscope_runtime";

// GDB stops when a library is loaded, before its static initializers run: the filter is armed
// there (the library is loaded and mapped), before any dispatch of the runtime. LLDB 16 on Linux
// resolves breakpoints in the program's libraries only at its entry point, after their
// constructors ran: it arms where each thread first dispatches, and at main for a thread that
// dispatched in a static constructor.
const dscope_break_point kGdbPoints[] = {
    {DSCOPE_POINT_FUNCTION, kHook, DSCOPE_POINT_HITS},
    {DSCOPE_POINT_LOAD, kRuntimeFile, DSCOPE_POINT_ARMS},
    {DSCOPE_POINT_FUNCTION, kKernelsRegistered[0], DSCOPE_POINT_LOCATES},
    {DSCOPE_POINT_FUNCTION, kKernelsRegistered[1], DSCOPE_POINT_LOCATES},
};
const dscope_break_point kLldbPoints[] = {
    {DSCOPE_POINT_FUNCTION, kHook, DSCOPE_POINT_HITS},
    {DSCOPE_POINT_FUNCTION, kFirstDispatch, DSCOPE_POINT_ARMS | DSCOPE_POINT_LOCATES},
    {DSCOPE_POINT_FUNCTION, kKernelsRegistered[0], DSCOPE_POINT_ARMS | DSCOPE_POINT_LOCATES},
    {DSCOPE_POINT_FUNCTION, kKernelsRegistered[1], DSCOPE_POINT_ARMS | DSCOPE_POINT_LOCATES},
};

// System V x86-64, at a function's first instruction: the pc, the stack pointer (pointing at the
// return address), and the six integer argument registers in argument order; dscope_stop_registers'
// words after tid are in this order. Both debuggers know "pc" and "sp" by these names.
constexpr const char* kStopRegisters[] = {"pc", "sp", "rdi", "rsi", "rdx", "rcx", "r8", "r9"};
static_assert(sizeof(kStopRegisters) / sizeof(*kStopRegisters) ==
              (sizeof(dscope_stop_registers) - sizeof(int64_t)) / sizeof(uint64_t));
// x86-64 Linux: a thread's thread pointer (glibc's struct pthread) is its fs base.
constexpr const char* kThreadPointerRegister = "fs_base";

// The lines a front end prints itself, where the library is not asked (dscope_message).
constexpr const char* kMessages[] = {
    "dscope: the process is running: stop it first (GDB: interrupt, LLDB: process interrupt)",
    "dscope: interrupted (Ctrl-C)",
};
static_assert(std::size(kMessages) == DSCOPE_MESSAGE_INTERRUPTED + 1);

// The words a help text uses for one debugger's own commands and limits.
struct DebuggerWords {
  const char* front_end;      // the name the front end asks by
  const char* name;           // as users know it
  const char* launch;         // the command that starts the program
  const char* thread_number;  // what --thread N is
  const char* frame_limit;    // the debugger's own limit on the frames it unwinds (frame_cap)
  const char* placed_again;   // when, besides those the help names, the kernels are placed again
};
constexpr DebuggerWords kGdb{"gdb", "GDB", "`run`", "GDB's thread number (N of `info threads`)",
                             "`set backtrace limit` frames (unlimited by default)", ", and at every stop"};
constexpr DebuggerWords kLldb{"lldb", "LLDB", "`process launch`", "LLDB's thread index (thread #N of `thread list`)",
                              "target.process.thread.max-backtrace-depth frames (600000 by default)", ""};

// One command's help, its strings kept for the process's life.
struct CommandText {
  std::string name, summary, details;
  uint32_t flags;
};

std::vector<CommandText> commandTexts(const DebuggerWords& w) {
  const std::string name = w.name;
  return {
      {"keyset", "Decode a DispatchKeySet.",
       "EXPR is any expression of type DispatchKeySet, or a tensor (Tensor or TensorImpl, or a pointer or reference "
       "to one) for its key set, or a raw 64-bit value (e.g. a number copied from PyTorch's ks.raw_repr()). Prints "
       "the keys in c10's DispatchKeySet(...) order, the highest-priority key and its dispatch-table slot. --tls "
       "shows the thread's include/exclude sets (from the runtime's thread records, so it also works in core "
       "files); --thread N is " + std::string(w.thread_number) + ".",
       DSCOPE_COMMAND_COMPLETES_EXPRESSION},
      {"op-table", "Show an operator's kernels.",
       "Prints PyTorch's _dispatch_dump (registered kernels) and _dispatch_dump_table (the computed dispatch table) "
       "with each kernel's symbol and source line. Also: op-table --list [PATTERN], op-table --missing KEY "
       "(operators with no kernel for KEY).",
       DSCOPE_COMMAND_COMPLETES_OPERATOR},
      {"dispatch-trace", "Show the dispatch chain of a thread.",
       "Read from the runtime's per-thread dispatch records, not from the native stack, so it answers in well under "
       "a second even for a 100 000-frame stack overflow: the entry call, the repeating cycle folded, and a "
       "diagnosis of infinite redispatch with the fix.\n\n"
       "dispatch-trace --frames rebuilds the chain from " + name + "'s stack instead (for "
       "DSCOPE_DISPATCH_RECORDS=OFF builds): it walks at most 20 000 stack frames (inlined calls not counted) from "
       "the innermost, one at a time, needs the runtime's DWARF, and prints the same record lines. " + name +
       " unwinds at most " + w.frame_limit + "; --frames says so when the walk reaches that cap.",
       0},
      {"dispatch-summary", "Summarize every thread's dispatch state, with a crash signature.",
       "Every thread's dispatch state in one screen and a one-line crash signature for grouping crashes of the same "
       "cause (infinite-redispatch OP KEY kernel=NAME, missing-kernel OP KEY, in-kernel OP KEY, tls-not-restored "
       "CHANGE, no-dispatch). On DispatchScope's runtime from the per-thread dispatch records; on PyTorch from each "
       "thread's innermost 400 stack frames. --json: the same in the versioned schema of docs/JSON-SCHEMA.md.",
       0},
      {"dispatch-break", "Stop when an operator is dispatched.",
       "The runtime checks the operator name (and key) itself and calls a hook only on a match, so the program runs "
       "at full speed between stops. OP is a full name (aten::add.Tensor) or a base name (aten::add, every "
       "overload). Set before " + std::string(w.launch) + " (or before the runtime is loaded), it stays pending "
       "and arms when the runtime is loaded (before its first dispatch). At most 16: the runtime's filter holds 16 "
       "entries.\n\n"
       "In a process with real PyTorch (libtorch, no DispatchScope runtime) the breakpoints go on the operator's "
       "kernels themselves, placed once libtorch has registered them (at main, or when Python initializes "
       "torch._C), again where a registration for the operator returns" + std::string(w.placed_again) +
       ". Each stop prints why the dispatch went to that kernel; `dispatch-break --why [--json]` prints it again.",
       DSCOPE_COMMAND_BREAKS | DSCOPE_COMMAND_COMPLETES_OPERATOR},
      {"python-bt", "Show a thread's Python stack.",
       "Reads the CPython interpreter's frames out of the process or core, with no debug info and no call into the "
       "process (CPython 3.13 and later describe themselves through _Py_DebugOffsets; 3.11 through a layout profile "
       "of its build). Each frame is printed as traceback.format_stack() prints it, innermost first. --thread N is " +
           std::string(w.thread_number) + "; --all: every thread. --json: the same in the schema of "
           "docs/JSON-SCHEMA.md.",
       0},
  };
}

// The C rows of one debugger's command table, pointing into its texts.
struct CommandTable {
  std::vector<CommandText> texts;
  std::vector<dscope_command_help> rows;
  explicit CommandTable(const DebuggerWords& w) : texts(commandTexts(w)) {
    for (const CommandText& t : texts) rows.push_back({t.name.c_str(), t.summary.c_str(), t.details.c_str(), t.flags});
  }
};

const DebuggerWords* wordsOf(const char* front_end) {
  if (!front_end) return nullptr;
  for (const DebuggerWords* w : {&kGdb, &kLldb})
    if (std::strcmp(front_end, w->front_end) == 0) return w;
  return nullptr;
}

template <size_t N>
const dscope_break_point* rowOf(const dscope_break_point (&table)[N], uint64_t index) {
  return index < N ? &table[index] : nullptr;
}

}  // namespace

uint32_t commandFlags(const std::string& name) {
  for (uint64_t i = 0; const dscope_command_help* row = dscope_command_at("gdb", i); ++i)
    if (name == row->name) return row->flags;
  return 0;
}

}  // namespace dscope::inspect

DSCOPE_INSPECT_EXPORT const dscope_break_point* dscope_break_point_at(const char* front_end, uint64_t index) {
  using namespace dscope::inspect;
  const DebuggerWords* w = wordsOf(front_end);
  if (w == &kGdb) return rowOf(kGdbPoints, index);
  if (w == &kLldb) return rowOf(kLldbPoints, index);
  return nullptr;
}

DSCOPE_INSPECT_EXPORT const char* dscope_stop_register_at(uint64_t index) {
  using namespace dscope::inspect;
  return index < std::size(kStopRegisters) ? kStopRegisters[index] : nullptr;
}

DSCOPE_INSPECT_EXPORT const char* dscope_thread_pointer_register(void) {
  return dscope::inspect::kThreadPointerRegister;
}

DSCOPE_INSPECT_EXPORT const dscope_command_help* dscope_command_at(const char* front_end, uint64_t index) {
  using namespace dscope::inspect;
  try {
    const DebuggerWords* w = wordsOf(front_end);
    if (!w) return nullptr;
    // Built once per debugger (thread-safe static initialization), never freed.
    static const CommandTable* gdb = new CommandTable(kGdb);
    static const CommandTable* lldb = new CommandTable(kLldb);
    const CommandTable& table = w == &kGdb ? *gdb : *lldb;
    return index < table.rows.size() ? &table.rows[index] : nullptr;
  } catch (...) {  // no exception crosses the ABI (out of memory)
    return nullptr;
  }
}

DSCOPE_INSPECT_EXPORT const char* dscope_inspect_message(int which) {
  using namespace dscope::inspect;
  return which >= 0 && static_cast<size_t>(which) < std::size(kMessages) ? kMessages[which] : nullptr;
}
