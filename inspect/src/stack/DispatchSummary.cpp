#include "stack/DispatchSummary.h"

#include <string>
#include <vector>

namespace dscope::inspect {

namespace {

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

}  // namespace

std::vector<std::string> splitNames(const std::string& names) {
  std::vector<std::string> out;
  for (size_t at = 0; at < names.size();) {
    const size_t comma = names.find(", ", at);
    out.push_back(names.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    at = comma == std::string::npos ? names.size() : comma + 2;
  }
  return out;
}

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

}  // namespace dscope::inspect
