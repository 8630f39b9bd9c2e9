// The commands of docs (ARCHITECTURE.md §4) as the inspect library runs them: each takes the
// words after the command name and returns the text (or JSON) to print, or throws InspectError.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands/CommandLine.h"
#include "commands/Json.h"
#include "target/Remote.h"
#include "source/dscope/RuntimeView.h"
#include "source/c10/TorchView.h"

namespace dscope::inspect {

// What one dscope_inspect_run call works with: the target, and the runtime view made on
// first use (keyset RAW needs no process at all).
class Session {
 public:
  explicit Session(const dscope_target* target) : mem_(target) {}
  const Remote& mem() const { return mem_; }
  const RuntimeView& runtime() {
    if (!view_) view_.emplace(mem_);
    return *view_;
  }
  // Real PyTorch's dispatcher (libtorch with a layout profile), made on first use.
  const TorchView& torch() {
    if (!torch_) torch_.emplace(mem_);
    return *torch_;
  }
  // Whether the commands read PyTorch's dispatcher rather than ours: --runtime torch|dscope when
  // given, else PyTorch's when the process maps libtorch and holds no runtime of ours. With both,
  // ours, and a note saying so (among the warnings).
  bool readsTorch(const std::optional<std::string>& runtime_option);
  // What the runtime view could not read whole (RuntimeView::warnings), once each.
  std::vector<std::string> warnings() const;

 private:
  Remote mem_;
  std::optional<RuntimeView> view_;
  std::optional<TorchView> torch_;
  std::string note_;
};

// The user commands' usage lines, alternatives joined by " | ": what their usage errors print and
// what `help CMD` shows in both debuggers (dscope_inspect_usage), so the three never differ.
extern const char* const kKeysetUsage;
extern const char* const kOpTableUsage;
extern const char* const kDispatchTraceUsage;
extern const char* const kDispatchBreakUsage;

std::string runKeyset(Session& s, const std::vector<std::string>& words);
std::string runOpTable(Session& s, const std::vector<std::string>& words);
std::string runDispatchTrace(Session& s, const std::vector<std::string>& words);
// The same commands on real PyTorch (TorchCommands.cpp), after the common argument checks.
std::string runTorchKeyset(Session& s, const ParsedArgs& args);
std::string runProfileKeyset(Session& s, const ParsedArgs& args, const std::string& path);
std::string runTorchOpTable(Session& s, const ParsedArgs& args);
std::string runTorchDispatchTrace(Session& s, const ParsedArgs& args);

// ---- values (Values.cpp, ValueSummary.cpp) ----

// `keyset EXPR`'s key set: a number, else what the debugger's value of EXPR holds (a key set, a
// tensor's, an integer); InspectError "cannot evaluate 'EXPR': ..." otherwise.
DispatchKeySet keySetArgument(Session& s, const std::string& text);
// The dispatch in the debugger's selected frame (named `frame`): whether its operator is `name`
// (full or base name), and its key (inspect.h dscope_frame_op_is, dscope_frame_key).
bool frameOpIs(Session& s, const std::string& frame, const std::string& name);
std::string frameKey(Session& s, const std::string& frame);

// One child an IDE shows under a value (inspect.h dscope_value_child; "" for no type).
struct Child {
  std::string name;
  std::string summary;
  std::string type;
  uint64_t word = 0;
  std::vector<int64_t> elements;
};
struct Summary {
  std::string text;
  std::vector<Child> children;
};
// A value of a table type: its one line and its children (inspect.h dscope_value_summary).
Summary summarize(Session& s, const dscope_value& value);
// Row `index` of the value printers' type table (inspect.h dscope_value_type_at), else nullptr.
const dscope_value_type* valueTypeAt(uint64_t index);

// ---- shared by the commands ----

// One computed-table row as op-table shows it beside the dump: the key, its slot, why, the kernel's
// registered-at string and name. The plain op-table's text and the JSON's "computed" array are
// made of these for both runtimes.
struct ComputedRow {
  std::string key;
  int slot = 0;
  std::string label, debug;
  bool fallthrough = false;
  std::string symbol;
};
void computedJson(Json& j, const std::vector<ComputedRow>& rows, const std::string& table);
std::string wholeOperatorText(const std::string& name, const std::string& dump, const std::string& table,
                              const std::vector<ComputedRow>& rows);
// op-table --list [PATTERN] [--json] over a runtime's operator names, and --missing KEY's answer
// (the operators whose computed entry for key is missing): one text and JSON for both runtimes.
std::string operatorListAnswer(const std::vector<std::string>& names, const ParsedArgs& args);
std::string missingAnswer(const std::string& key, const std::vector<std::string>& missing, size_t total, bool json);
// Why a computed entry of `op` at `key` holds what it holds (c10's computeDispatchTableEntry
// rules), its kernel registered at `registered_key`: the `why:` line of `op-table OP --key K`.
std::string whyText(impl::TableEntrySource source, const std::string& key, const std::string& registered_key,
                    const std::string& op);
// "DispatchKeySet(CPU, AutogradCPU) (raw 0x2000010001)"
std::string keySetWithRaw(DispatchKeySet ks);
// "AutogradCPU (dispatch-table slot 97)", also right for bit 63 (the sentinel has no slot).
std::string keyWithSlot(DispatchKeySet ks);
// The runtime keys of ks, comma-separated ("" when none).
std::string keyNames(DispatchKeySet ks);

// The block of the thread the user means: --thread N (the debugger's thread number), else the
// debugger's selected thread, else the first alive block. A block found corrupt is no thread's:
// InspectError saying so, as when the thread's block may be in a part of the list that was lost.
const ThreadBlock& selectThread(const RuntimeView& rt, const std::vector<ThreadBlock>& blocks,
                                const std::optional<std::string>& thread_option);
// "dscope: the record block at 0x... is corrupt (state 7 is neither alive nor dead)"
std::string corruptBlockLine(const ThreadBlock& b);

}  // namespace dscope::inspect
