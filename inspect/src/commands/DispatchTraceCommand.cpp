// dispatch-trace [--thread N|--all] [--full] [--json]
// dispatch-trace --frames [--thread N] [--max-frames N] [--full] [--json]
//
// The options parsed and checked once, for every runtime; the chain is the model's answer (our
// runtime's records or stack: stack/RecordTrace.h; a c10 build's stack: stack/TorchTrace.h).
#include "commands/CommandLine.h"
#include "commands/Commands.h"

namespace dscope::inspect {

const char* const kDispatchTraceUsage =
    "dispatch-trace [--thread N|--all] [--full] [--json] | "
    "dispatch-trace --frames [--thread N] [--max-frames N] [--full] [--json]";
const OptionSpec kDispatchTraceOptions{
    {"--all", "--full", "--json", "--frames"}, {"--thread", "--max-frames", "--runtime"}, {}, {}};

namespace {

constexpr uint64_t kMaxFramesBound = 1u << 30;  // --max-frames: more than any stack holds

}  // namespace

std::string runDispatchTrace(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, kDispatchTraceOptions, kDispatchTraceUsage);
  if (!args.positional.empty()) usageError("unexpected argument '" + shown(args.positional.front()) + "'", kDispatchTraceUsage);
  if (args.has("--all") && args.value("--thread")) usageError("--thread or --all, not both", kDispatchTraceUsage);
  TraceRequest request;
  request.thread = threadOption(args.value("--thread"));
  request.all = args.has("--all");
  request.frames = args.has("--frames");
  request.full = args.has("--full");
  request.json = args.has("--json");
  if (auto m = args.value("--max-frames")) {
    request.max_frames = numberOption("--max-frames", *m, "a number of frames", kMaxFramesBound);
    if (*request.max_frames == 0) usageError("--max-frames must be at least 1", kDispatchTraceUsage);
  }
  const Dispatcher& d = s.dispatcher(args.value("--runtime"));
  // Where records are the default, --frames and --max-frames read one thread's stack.
  if (d.tracesFromRecords()) {
    if (request.frames && request.all) usageError("--frames reads one thread's stack: --thread N, not --all", kDispatchTraceUsage);
    if (request.max_frames && !request.frames) usageError("--max-frames goes with --frames", kDispatchTraceUsage);
  }
  return d.dispatchTrace(request);
}

}  // namespace dscope::inspect
