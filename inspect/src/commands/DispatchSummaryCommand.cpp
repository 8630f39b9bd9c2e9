// dispatch-summary [--json]: every thread's dispatch state and the crash signature (DispatchSummary.h),
// on our runtime from its record blocks and on PyTorch from the threads' native stacks. The text
// and the JSON (docs/JSON-SCHEMA.md, "dispatch-summary") are two renderings of one model.
#include <algorithm>
#include <string>
#include <vector>

#include "commands/CommandLine.h"
#include "commands/Commands.h"
#include "stack/DispatchSummary.h"
#include "commands/Json.h"

namespace dscope::inspect {

const char* const kDispatchSummaryUsage = "dispatch-summary [--json]";
const OptionSpec kDispatchSummaryOptions{{"--json"}, {"--runtime"}, {}, {}};

namespace {

// The JSON's version: a minor step adds fields, a major one changes or removes any.
const char* const kSchemaVersion = "1.0";

// A signature is one line of words: what names it must not break it in two.
std::string word(const std::string& s) {
  if (s.empty() || s.front() == '<') return "?";  // not known ("<one of 3 operators>")
  std::string out;
  for (char c : s)
    if (c != ' ') out += c;
  return out;
}

const ThreadDispatchState* selectedThread(const ProcessDispatchState& p) {
  for (const auto& t : p.threads)
    if (t.tid == p.selected_tid) return &t;
  return nullptr;
}

std::vector<std::string> splitNames(const std::string& names) {
  std::vector<std::string> out;
  for (size_t at = 0; at < names.size();) {
    const size_t comma = names.find(", ", at);
    out.push_back(names.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    at = comma == std::string::npos ? names.size() : comma + 2;
  }
  return out;
}

std::string threadText(const ProcessDispatchState& p, const ThreadDispatchState& t) {
  std::string out = (t.tid == p.selected_tid ? "* " : "  ") + std::string("thread tid ") + (t.shown_tid.empty() ? std::to_string(t.tid) : t.shown_tid) +
                    (t.state.empty() ? "" : " (" + t.state + ")") + ": ";
  if (!t.error.empty() && t.innermost.empty() && !t.loop) return out + t.error + "\n";
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
  auto text = [&](const char* name, const std::string& s) {
    j.key(name);
    if (s.empty()) j.null();
    else j.value(s);
  };
  auto names = [&](const char* name, const std::string& s) {
    j.key(name).beginArray();
    for (const auto& n : splitNames(s)) j.value(n);
    j.endArray();
  };
  j.key("threads").beginArray();
  for (const auto& t : p.threads) {
    j.beginObject().field("tid", t.tid).field("selected", t.tid == p.selected_tid);
    text("state", t.state);
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
      text("op", l.op);
      text("key", l.key);
      text("kernel", l.kernel);
      j.endObject();
    }
    j.key("tls");
    if (t.tls_included.empty() && t.tls_excluded.empty() && t.tls_change.empty()) {
      j.null();
    } else {
      j.beginObject();
      names("included", t.tls_included);
      names("excluded", t.tls_excluded);
      text("change", t.tls_change);
      j.endObject();
    }
    text("error", t.error);
    j.endObject();
  }
  j.endArray();
  j.key("signature").beginObject().field("line", sig.line()).field("cause", sig.cause).key("parts").beginArray();
  for (const auto& part : sig.parts) j.value(part);
  j.endArray().endObject();
  return j.endObject().str();
}

}  // namespace

std::string CrashSignature::line() const {
  std::string out = cause;
  for (const auto& part : parts) out += " " + part;
  return out;
}

// The cause, by what best explains a crash: a re-dispatch loop (on the selected thread, else any,
// which may be why another thread ran out of stack), the selected thread's innermost dispatch
// reaching no kernel of its own, a crash inside a kernel, thread-local sets changed outside any
// dispatch and no throw in progress (a guard never restored).
CrashSignature crashSignature(const ProcessDispatchState& process) {
  const ThreadDispatchState* selected = selectedThread(process);
  const ThreadDispatchState* looping = selected && selected->loop ? selected : nullptr;
  for (const auto& t : process.threads)
    if (!looping && t.loop) looping = &t;
  if (looping) {
    const DispatchLoop& l = *looping->loop;
    return {"infinite-redispatch", {word(l.op), word(l.key), "kernel=" + word(l.kernel)}};
  }
  if (!selected) return {"no-dispatch", {}};
  if (!selected->innermost.empty() && selected->innermost_unregistered)
    return {"missing-kernel", {word(selected->innermost_op), word(selected->innermost_key)}};
  if (!selected->innermost.empty()) return {"in-kernel", {word(selected->innermost_op), word(selected->innermost_key)}};
  if (!selected->tls_change.empty() && !selected->throw_in_progress) {
    std::vector<std::string> parts;
    for (const auto& change : splitNames(selected->tls_change)) parts.push_back(word(change));
    return {"tls-not-restored", parts};
  }
  return {"no-dispatch", {}};
}

std::string shortFunctionName(const std::string& symbol) {
  std::string s = symbol.substr(0, symbol.find(" at "));  // the runtime's symbolizer adds "at FILE:LINE"
  // The parameter list: the last top-level (...) group.
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      depth += s[i] == ')' ? 1 : s[i] == '(' ? -1 : 0;
      if (depth == 0) {
        s.erase(i);
        break;
      }
    }
  }
  // Its components at nesting depth 0 (a template's or a lambda's "::" are inside brackets).
  std::vector<std::string> parts{""};
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    depth += (c == '<' || c == '(' || c == '{') ? 1 : (c == '>' || c == ')' || c == '}') ? -1 : 0;
    if (depth == 0 && c == ':' && i + 1 < s.size() && s[i + 1] == ':') {
      parts.emplace_back();
      ++i;
      continue;
    }
    parts.back() += c;
  }
  // g++'s "{lambda(at::Tensor const&)#1}" without its parameters, clang's "$_7": a lambda keeps
  // the function it is in.
  std::string last = parts.back();
  if (last.rfind("{lambda(", 0) == 0 && last.find(")#") != std::string::npos) last = "{lambda" + last.substr(last.rfind(")#") + 1);
  const bool lambda = last.rfind("{lambda", 0) == 0 || last.rfind("$_", 0) == 0;
  if (lambda && parts.size() > 1) return word(parts[parts.size() - 2] + "::" + last);
  return word(last);
}

std::string tlsChange(std::pair<uint64_t, uint64_t> sets, std::pair<uint64_t, uint64_t> defaults,
                      const std::function<std::string(uint64_t)>& names) {
  std::string out;
  auto delta = [&](const char* which, uint64_t now, uint64_t fallback) {
    const uint64_t added = now & ~fallback, removed = fallback & ~now;
    if (!added && !removed) return;
    out += (out.empty() ? "" : ", ") + std::string(which);
    if (added) out += " +" + word(names(added));  // "+AutogradCPU,AutogradCUDA": ", " parts the two sets
    if (removed) out += " -" + word(names(removed));
  };
  delta("included", sets.first, defaults.first);
  delta("excluded", sets.second, defaults.second);
  return out;
}

std::string runDispatchSummary(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, kDispatchSummaryOptions, kDispatchSummaryUsage);
  if (!args.positional.empty()) usageError("unexpected argument '" + shown(args.positional.front()) + "'", kDispatchSummaryUsage);
  const ProcessDispatchState process = s.dispatcher(args.value("--runtime")).dispatchState();
  const CrashSignature sig = crashSignature(process);
  return args.has("--json") ? summaryJson(process, sig) : summaryText(process, sig);
}

}  // namespace dscope::inspect
