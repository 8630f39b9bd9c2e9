// The commands of docs (ARCHITECTURE.md §4) as the inspect library runs them: each takes the
// words after the command name and returns the text (or JSON) to print, or throws InspectError.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "Session.h"
#include "commands/CommandLine.h"
#include "commands/Json.h"
#include "source/dscope/Values.h"

namespace dscope::inspect {

// The user commands' usage lines, alternatives joined by " | ": what their usage errors print and
// what `help CMD` shows in both debuggers (dscope_inspect_usage), so the three never differ.
extern const char* const kKeysetUsage;
extern const char* const kOpTableUsage;
extern const char* const kDispatchTraceUsage;
extern const char* const kDispatchBreakUsage;
// Their options (parseArgs), which completion also reads.
extern const OptionSpec kKeysetOptions;
extern const OptionSpec kOpTableOptions;
extern const OptionSpec kDispatchTraceOptions;
extern const OptionSpec kDispatchBreakOptions;

std::string runKeyset(Session& s, const std::vector<std::string>& words);
std::string runOpTable(Session& s, const std::vector<std::string>& words);
std::string runDispatchTrace(Session& s, const std::vector<std::string>& words);
// dispatch-trace's answer from each runtime, after the common argument checks: on real PyTorch
// (stack/TorchTrace.cpp) and from our runtime's records (DispatchTraceCommand.cpp).
std::string runTorchDispatchTrace(Session& s, const ParsedArgs& args);
std::string recordsDispatchTrace(Session& s, const ParsedArgs& args);

// ---- shared by the commands ----

// `keyset EXPR`'s key set in the dispatcher's terms: a number (Dispatcher::keySetOfWord), else what
// the debugger's value of EXPR holds; InspectError "cannot evaluate 'EXPR': ..." otherwise.
uint64_t keySetArgument(Session& s, const Dispatcher& d, const std::string& text);
// The thread --thread N means: the debugger's thread N where it has one, else the OS thread id N;
// without the option the debugger's selected thread (0 when it has none).
int64_t chosenThread(const Remote& mem, const std::optional<std::string>& thread_option);
// The block of thread tid (0: the first alive block). A block found corrupt is no thread's:
// InspectError saying so, as when the thread's block may be in a part of the list that was lost.
const ThreadBlock& selectThread(const RuntimeView& rt, const std::vector<ThreadBlock>& blocks, int64_t tid);
// "dscope: the record block at 0x... is corrupt (state 7 is neither alive nor dead)"
std::string corruptBlockLine(const ThreadBlock& b);

}  // namespace dscope::inspect
