// dispatch-summary: what every thread of the process is dispatching, and one crash signature for
// grouping crashes of the same cause. Each runtime fills the same model (our runtime from its
// record blocks, PyTorch from the native stacks); one text and one JSON view are rendered from it
// (docs/JSON-SCHEMA.md), so the two never say different things.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dscope::inspect {

// A re-dispatch loop on one thread.
struct DispatchLoop {
  uint64_t period = 0;   // dispatches (records) or stack frames (PyTorch) in one repetition
  uint64_t repeats = 0;  // whole repetitions seen
  bool at_least = false; // the walk stopped before the loop's start: there are more
  // The kernel that re-enters the dispatcher, told the same way by every crash of the loop
  // (wherever the stack ran out): of the cycle's kernels, the one with the smallest (operator,
  // key; PyTorch: an alias key for a kernel registered at one). Empty when no frame of the cycle is
  // one operator's kernel at one key (or one alias key), nor the stack tells the kernel otherwise.
  std::string op, key, kernel;  // kernel: the function's short name (shortFunctionName)
};

// One thread's dispatch state.
struct ThreadDispatchState {
  int64_t tid = 0;         // the debugger's (the target's) id of the thread
  std::string shown_tid;   // how the text names it (ThreadIds::shown); "": tid
  std::string state;  // "alive" or "dead" (a record block's); "" (read from the stack)
  // Dispatches in progress (records), or kernel frames among the frames walked (stack).
  uint64_t depth = 0;
  uint64_t frames_walked = 0;  // stack only
  bool stack_whole = true;     // stack only: the walk reached the outermost frame
  // The innermost dispatch: its line as dispatch-trace prints it, operator and key ("" when none).
  std::string innermost, innermost_op, innermost_key;
  // Its table entry holds no kernel registered for that operator at that key: a backend fallback
  // or no kernel at all (records; on PyTorch, the "Could not run" error an uncaught throw left).
  bool innermost_unregistered = false;
  // A C++ throw std::terminate never unwound (stack only): every guard of the frames still on the
  // stack is in scope, so thread-local sets that differ from the defaults are no guard left unrestored.
  bool throw_in_progress = false;
  std::optional<DispatchLoop> loop;
  // The thread-local sets in full, and how they differ from the defaults ("" when they do not):
  // "excluded +AutogradCPU", "included +X, excluded -Y".
  std::string tls_included, tls_excluded, tls_change;
  std::string error;  // the one line why this thread's state cannot be read ("" when it can)
  // Its innermost Python frame, in a process that runs Python (name "" when none).
  std::string python_name, python_file;
  int64_t python_line = -1;
};

struct ProcessDispatchState {
  std::string runtime;  // "dscope" (our runtime's records) or "pytorch" (libtorch, its stacks)
  std::string source;   // "records" or "stack"
  int64_t selected_tid = 0;  // the target's selected thread: a core's is the thread that crashed
  std::vector<ThreadDispatchState> threads;
};

// The crash signature: one line made of the cause and what it names, stable across crashes of the
// same bug (no addresses, depths or thread ids).
struct CrashSignature {
  std::string cause;  // infinite-redispatch | missing-kernel | in-kernel | tls-not-restored | no-dispatch
  std::vector<std::string> parts;  // operator, key, kernel=NAME, or the TLS change
  std::string line() const;
};
CrashSignature crashSignature(const ProcessDispatchState& process);

// "(anonymous namespace)::my_add_autograd(dscope::Tensor const&) at f.cpp:3" -> "my_add_autograd";
// a lambda keeps the function it is in: "twice::{lambda#1}".
std::string shortFunctionName(const std::string& symbol);

// How a thread's {included, excluded} raw key sets differ from the defaults, by bits (c10's
// operator- keeps backend bits): "excluded +AutogradCPU"; "" when they do not. names: a raw set's
// key names.
std::string tlsChange(std::pair<uint64_t, uint64_t> sets, std::pair<uint64_t, uint64_t> defaults,
                      const std::function<std::string(uint64_t)>& names);

// "AutogradCPU, ADInplaceOrView" -> its names (a key-name list as the state's strings hold them).
std::vector<std::string> splitNames(const std::string& names);

}  // namespace dscope::inspect
