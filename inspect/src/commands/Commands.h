// The commands of docs (ARCHITECTURE.md §4) as the inspect library runs them: each takes the
// words after the command name and returns the text (or JSON) to print, or throws InspectError.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "commands/CommandLine.h"
#include "commands/Json.h"
#include "target/Remote.h"
#include "source/c10/C10Dispatcher.h"
#include "source/dscope/DscopeDispatcher.h"

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
  // The dispatcher the commands read, the one readsTorch chooses.
  const Dispatcher& dispatcher(const std::optional<std::string>& runtime_option);
  // What dispatch-break asks of the runtime the process runs (readsTorch's choice, no option): its
  // dispatcher's break support, or, while PyTorch's dispatcher cannot be read yet, breakpoints that
  // wait for it.
  const BreakSupport& breaks();
  // What the runtime view could not read whole (RuntimeView::warnings), once each.
  std::vector<std::string> warnings() const;

 private:
  // The models, made on first use (PyTorch's reads its dispatcher first: InspectError).
  const DscopeDispatcher& dscopeModel();
  const C10Dispatcher& c10Model();

  Remote mem_;
  std::optional<RuntimeView> view_;
  std::optional<TorchView> torch_;
  std::optional<DscopeDispatcher> dscope_model_;
  std::optional<C10Dispatcher> c10_model_;
  std::optional<PendingC10Breaks> pending_c10_breaks_;
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
// dispatch-trace's answer from each runtime, after the common argument checks: on real PyTorch
// (stack/TorchTrace.cpp) and from our runtime's records (DispatchTraceCommand.cpp).
std::string runTorchDispatchTrace(Session& s, const ParsedArgs& args);
std::string recordsDispatchTrace(Session& s, const ParsedArgs& args);

// ---- values (Values.cpp, ValueSummary.cpp) ----

// The key set word a debugger value of our runtime's types holds: a DispatchKeySet's repr_; a
// tensor's (Tensor, TensorImpl, or a pointer to either); an integer as it is. InspectError with
// the message after "cannot evaluate".
uint64_t keySetWord(Session& s, const std::string& expr, const dscope_value& v);
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

// `keyset EXPR`'s key set in the dispatcher's terms: a number (Dispatcher::keySetOfWord), else what
// the debugger's value of EXPR holds; InspectError "cannot evaluate 'EXPR': ..." otherwise.
uint64_t keySetArgument(Session& s, const Dispatcher& d, const std::string& text);
// The thread --thread N means: the debugger's thread N where it has one, else the OS thread id N;
// without the option the debugger's selected thread (0 when it has none).
int64_t chosenThread(const Remote& mem, const std::optional<std::string>& thread_option);
// Why a computed entry of `op` at `key` holds what it holds (c10's computeDispatchTableEntry
// rules), its kernel registered at `registered_key`: the `why:` line of `op-table OP --key K`.
std::string whyText(impl::TableEntrySource source, const std::string& key, const std::string& registered_key,
                    const std::string& op);

// The block of thread tid (0: the first alive block). A block found corrupt is no thread's:
// InspectError saying so, as when the thread's block may be in a part of the list that was lost.
const ThreadBlock& selectThread(const RuntimeView& rt, const std::vector<ThreadBlock>& blocks, int64_t tid);
// "dscope: the record block at 0x... is corrupt (state 7 is neither alive nor dead)"
std::string corruptBlockLine(const ThreadBlock& b);

}  // namespace dscope::inspect
