// The commands of docs (ARCHITECTURE.md §4) as the inspect library runs them: each takes the
// words after the command name and returns the text (or JSON) to print, or throws InspectError.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "Session.h"
#include "commands/CommandLine.h"
#include "text/Json.h"
#include "source/dscope/Values.h"

namespace dscope::inspect {

// The user commands' usage lines, alternatives joined by " | ": what their usage errors print and
// what `help CMD` shows in both debuggers (dscope_inspect_usage), so the three never differ.
extern const char* const kKeysetUsage;
extern const char* const kOpTableUsage;
extern const char* const kDispatchTraceUsage;
extern const char* const kDispatchBreakUsage;
extern const char* const kDispatchSummaryUsage;
extern const char* const kPythonBtUsage;
// Their options (parseArgs), which completion also reads.
extern const OptionSpec kKeysetOptions;
extern const OptionSpec kOpTableOptions;
extern const OptionSpec kDispatchTraceOptions;
extern const OptionSpec kDispatchBreakOptions;
extern const OptionSpec kDispatchSummaryOptions;
extern const OptionSpec kPythonBtOptions;

std::string runKeyset(Session& s, const std::vector<std::string>& words);
std::string runOpTable(Session& s, const std::vector<std::string>& words);
std::string runDispatchTrace(Session& s, const std::vector<std::string>& words);
std::string runDispatchSummary(Session& s, const std::vector<std::string>& words);
std::string runPythonBt(Session& s, const std::vector<std::string>& words);

// ---- shared by the commands ----

// `keyset EXPR`'s key set in the dispatcher's terms: a number (Dispatcher::keySetOfWord), else what
// the debugger's value of EXPR holds; InspectError "cannot evaluate 'EXPR': ..." otherwise.
uint64_t keySetArgument(Session& s, const Dispatcher& d, const std::string& text);

// A thread's Python dispatch state (PyTorch 2.x) as keyset --tls and a dispatch-break stop show it:
// one summary ("2 TorchDispatchModes (bottom to top: FakeTensorMode [infra FAKE], MyMode), Python
// dispatcher on, functorch depth 1, grad mode on, inference mode off"), and per cause in effect what
// it put in the sets ("2 TorchDispatchModes -> included Python, PythonTLSSnapshot").
std::string pythonStateSummary(const PythonDispatchState& s);
std::string causeText(const TlsCause& c);
// The JSON object of both ("python_state").
void pythonStateJson(Json& j, const PythonDispatchState& s, const std::vector<TlsCause>& causes);

}  // namespace dscope::inspect
