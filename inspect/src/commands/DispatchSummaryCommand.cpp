// dispatch-summary [--json]: every thread's dispatch state and the crash signature (DispatchSummary.h),
// on our runtime from its record blocks and on PyTorch from the threads' native stacks. The text
// and the JSON (docs/JSON-SCHEMA.md, "dispatch-summary") are two renderings of one model.
#include <algorithm>
#include <string>
#include <vector>

#include "commands/CommandLine.h"
#include "commands/Commands.h"
#include "source/python/PythonView.h"
#include "stack/DispatchSummary.h"
#include "text/Json.h"

namespace dscope::inspect {

const char* const kDispatchSummaryUsage = "dispatch-summary [--json]";
const OptionSpec kDispatchSummaryOptions{{"--json"}, {"--runtime"}, {}, {}};

namespace {

// The JSON's version: a minor step adds fields, a major one changes or removes any.
const char* const kSchemaVersion = "1.1";

std::string threadText(const ProcessDispatchState& p, const ThreadDispatchState& t) {
  std::string out = (t.tid == p.selected_tid ? "* " : "  ") + std::string("thread tid ") + (t.shown_tid.empty() ? std::to_string(t.tid) : t.shown_tid) +
                    (t.state.empty() ? "" : " (" + t.state + ")") + ": ";
  const std::string python =
      t.python_name.empty() ? "" : "    python: " + pythonLocation(t.python_file, t.python_line, t.python_name) + "\n";
  if (!t.error.empty() && t.innermost.empty() && !t.loop) return out + t.error + "\n" + python;
  if (p.source == "stack")
    out += counted(t.frames_walked, "frame") + (t.stack_whole ? " (the whole stack), " : " walked, ") +
           counted(t.depth, "kernel frame");
  else
    out += t.depth ? "dispatch depth " + groupThousands(t.depth) : "no dispatch in progress";
  if (!t.innermost.empty()) out += ", innermost " + t.innermost;
  if (t.innermost_unregistered) out += " (no kernel registered there)";
  if (!t.tls_change.empty()) out += "; TLS " + t.tls_change;
  out += "\n";
  if (t.loop) {
    const DispatchLoop& l = *t.loop;
    out += "    loop: a cycle of " + counted(l.period, p.source == "stack" ? "stack frame" : "dispatch") + ", " +
           (l.at_least ? "at least " : "") + groupThousands(l.repeats) + " repetitions";
    if (!l.op.empty()) out += "; it re-enters " + l.op + " at " + l.key + " (kernel " + l.kernel + ")";
    out += "\n";
  }
  out += python;
  if (!t.error.empty()) out += "    " + t.error + "\n";
  return out;
}

std::string summaryText(const ProcessDispatchState& p, const CrashSignature& sig) {
  std::string out = p.source == "stack"
                        ? "dispatch summary (PyTorch, rebuilt from each thread's innermost stack frames): "
                        : "dispatch summary (DispatchScope runtime, from the dispatch records): ";
  out += counted(p.threads.size(), "thread") + (p.source == "stack" ? "" : " with records") +
         " (* the selected thread; in a core, the one that crashed)\n";
  for (const auto& t : p.threads) out += threadText(p, t);
  return out + "signature: " + sig.line() + "\n";
}

std::string summaryJson(const ProcessDispatchState& p, const CrashSignature& sig) {
  Json j;
  j.beginObject().field("schema", "dscope-dispatch-summary").field("version", kSchemaVersion);
  j.field("runtime", p.runtime).field("source", p.source).field("selected_tid", p.selected_tid);
  auto names = [&](const char* name, const std::string& s) {
    j.key(name).beginArray();
    for (const auto& n : splitNames(s)) j.value(n);
    j.endArray();
  };
  j.key("threads").beginArray();
  for (const auto& t : p.threads) {
    j.beginObject().field("tid", t.tid).field("selected", t.tid == p.selected_tid);
    j.text("state", t.state);
    j.field("depth", t.depth);
    if (p.source == "stack") j.field("frames_walked", t.frames_walked).field("whole_stack", t.stack_whole);
    j.key("innermost");
    if (t.innermost.empty()) {
      j.null();
    } else {
      j.beginObject().field("line", t.innermost).field("op", t.innermost_op).field("key", t.innermost_key);
      j.field("kernel_registered", !t.innermost_unregistered).endObject();
    }
    j.key("loop");
    if (!t.loop) {
      j.null();
    } else {
      const DispatchLoop& l = *t.loop;
      j.beginObject().field("period", l.period).field("repeats", l.repeats).field("at_least", l.at_least);
      j.text("op", l.op);
      j.text("key", l.key);
      j.text("kernel", l.kernel);
      j.endObject();
    }
    j.key("tls");
    if (t.tls_included.empty() && t.tls_excluded.empty() && t.tls_change.empty()) {
      j.null();
    } else {
      j.beginObject();
      names("included", t.tls_included);
      names("excluded", t.tls_excluded);
      j.text("change", t.tls_change);
      j.endObject();
    }
    j.text("error", t.error);
    j.key("python");
    if (t.python_name.empty()) {
      j.null();
    } else {
      j.beginObject().field("name", t.python_name).field("file", t.python_file).key("line");
      if (t.python_line < 0) j.null();
      else j.value(t.python_line);
      j.endObject();
    }
    j.endObject();
  }
  j.endArray();
  j.key("signature").beginObject().field("line", sig.line()).field("cause", sig.cause).key("parts").beginArray();
  for (const auto& part : sig.parts) j.value(part);
  j.endArray().endObject();
  return j.endObject().str();
}

}  // namespace

std::string runDispatchSummary(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, kDispatchSummaryOptions, kDispatchSummaryUsage);
  if (!args.positional.empty()) usageError("unexpected argument '" + shown(args.positional.front()) + "'", kDispatchSummaryUsage);
  ProcessDispatchState process = s.dispatcher(args.value("--runtime")).dispatchState();
  if (const PythonView* py = s.pythonIfReadable()) {
    for (ThreadDispatchState& t : process.threads)
      if (const PythonFrame* f = py->innermostFrame(t.tid)) t.python_name = f->name, t.python_file = f->file, t.python_line = f->line;
  }
  const CrashSignature sig = crashSignature(process);
  return args.has("--json") ? summaryJson(process, sig) : summaryText(process, sig);
}

}  // namespace dscope::inspect
