// dispatch-break: the table of breakpoints (BreakTable.h) and the line a stop prints, over the
// break support of the runtime the process runs (model/BreakSupport.h). Every message of the
// command in both debuggers is here or in the break supports.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "commands/BreakTable.h"
#include "commands/CommandLine.h"
#include "source/python/PythonView.h"
#include "text/Json.h"

namespace dscope::inspect {

const char* const kDispatchBreakUsage =
    "dispatch-break OP [--key K] | dispatch-break --list | dispatch-break --delete N | dispatch-break --why [--json]";
const OptionSpec kDispatchBreakOptions{{"--list", "--why", "--json"}, {"--key", "--delete"}, {"--key"}, {}};

namespace {

// Whether any operator is named `name` in full or as its base name (what a breakpoint matches).
bool operatorExists(const std::vector<Operator>& ops, const std::string& name) {
  return std::any_of(ops.begin(), ops.end(), [&](const Operator& op) { return namesOperator(op.name, name); });
}

std::string described(const DispatchBreakpoint& b) { return b.op + (b.key.empty() ? "" : " at " + b.key); }

void row(std::string& out, const std::string& label, const std::string& text) {
  out += "  " + label + std::string(label.size() < 16 ? 16 - label.size() : 1, ' ') + text + "\n";
}

}  // namespace

std::string explanationText(const DispatchExplanation& e) {
  std::string out = "dispatch-break: " + e.op + " at " + e.key + " (keyset " + e.dispatched + ")\n";
  if (!e.python_caller.empty()) row(out, "python caller", e.python_caller);
  for (const auto& a : e.arguments) row(out, "argument " + a.name, a.keys);
  if (!e.arguments_note.empty()) row(out, "arguments", e.arguments_note);
  if (e.included) row(out, "TLS included", *e.included);
  if (e.excluded) row(out, "TLS excluded", *e.excluded);
  if (e.python && e.python->any()) {
    row(out, "python state", pythonStateSummary(*e.python));
    for (const TlsCause& c : e.causes) row(out, "because", causeText(c));
  }
  if (!e.fallthrough.empty()) {
    std::string keys;
    for (const auto& k : e.fallthrough) keys += (keys.empty() ? "" : ", ") + k;
    row(out, "fallthrough", keys + " (the operator falls through there: masked out)");
  }
  if (!e.computed.empty()) row(out, "computed", e.computed + " (arguments | TLS included - TLS excluded, fallthroughs masked)");
  std::string how;  // what made the set: the runtime says (kind); else the sets tell a redispatch
  if (e.kind == "call" || e.kind == "callBoxed") how = "a call: the dispatcher computed it";
  else if (e.kind == "redispatch" || e.kind == "redispatchBoxed") how = "a redispatch: the kernel that called it passed this set";
  else if (!e.computed.empty())
    how = e.computed == e.dispatched ? "the computed set" : "not the computed set: a kernel redispatched with this one";
  row(out, "dispatched", e.dispatched + (how.empty() ? "" : " (" + how + ")"));
  row(out, "slot", std::to_string(e.slot) + " (" + e.key + ", the set's highest key)");
  if (!e.kernel.empty()) row(out, "kernel", e.kernel);
  if (!e.why.empty()) row(out, "why", e.why);
  if (!e.registered.empty()) row(out, "registered", e.registered);
  return out;
}

std::string explanationJson(const DispatchExplanation& e) {
  Json j;
  j.beginObject().field("op", e.op).field("key", e.key).field("slot", e.slot).field("keyset", e.dispatched);
  j.field("kind", e.kind);
  j.text("python_caller", e.python_caller);
  j.key("arguments").beginArray();
  for (const auto& a : e.arguments) j.beginObject().field("name", a.name).field("keyset", a.keys).endObject();
  j.endArray().field("arguments_note", e.arguments_note);
  j.key("tls").beginObject();
  if (e.included) j.field("included", *e.included);
  if (e.excluded) j.field("excluded", *e.excluded);
  j.endObject();
  j.key("python_state");
  if (e.python && e.python->any()) pythonStateJson(j, *e.python, e.causes);
  else j.null();
  j.key("fallthrough").beginArray();
  for (const auto& k : e.fallthrough) j.value(k);
  j.endArray().field("computed", e.computed);
  j.key("kernel").beginObject().field("name", e.kernel).field("why", e.why).field("registered", e.registered).endObject();
  j.field("tid", e.tid).field("pc", hex(e.pc));
  return j.endObject().str();
}

std::string BreakTable::command(Session& s, const std::vector<std::string>& words) {
  ParsedArgs args = parseArgs(words, kDispatchBreakOptions, kDispatchBreakUsage);
  if (args.has("--why")) {
    if (!args.positional.empty() || !args.values.empty() || args.has("--list")) usageError("--why takes only --json", kDispatchBreakUsage);
    return why(s, args.has("--json"));
  }
  if (args.has("--json")) usageError("--json goes with --why", kDispatchBreakUsage);
  if (args.has("--list")) {
    if (!args.positional.empty() || !args.values.empty()) usageError("--list takes nothing else", kDispatchBreakUsage);
    return list();
  }
  if (auto number = args.value("--delete")) {
    if (!args.positional.empty() || args.value("--key")) usageError("--delete takes only a breakpoint number", kDispatchBreakUsage);
    return remove(s, static_cast<int64_t>(numberOption("--delete", *number, "a breakpoint number", INT32_MAX)));
  }
  if (args.positional.size() != 1)
    usageError(args.positional.empty() ? "dispatch-break needs an operator name" : "dispatch-break takes one operator name",
               kDispatchBreakUsage);
  // Name and key are checked before a breakpoint is kept, pending or not: a bad entry would keep
  // the others from arming later, and so would one more than the runtime's filter holds.
  const std::string& op = args.positional.front();
  checkOperatorName(op);
  return add(s, op, args.value("--key").value_or(""));
}

std::string BreakTable::list() const {
  if (breaks_.empty()) return "No dispatch breakpoints.\n";
  std::string out;
  for (const auto& b : breaks_) out += std::to_string(b.number) + "  " + described(b) + "\n";
  return out;
}

std::string BreakTable::remove(Session& s, int64_t number) {
  auto it = std::find_if(breaks_.begin(), breaks_.end(), [&](const auto& b) { return b.number == number; });
  if (it == breaks_.end()) fail("no dispatch breakpoint " + std::to_string(number));
  breaks_.erase(it);
  if (placed_) placed_->breaksChanged();  // until locations() runs again
  try {
    s.breaks().arm(breaks_, armed_instance_);  // the rest, without the deleted one; nothing to say when no runtime is there
  } catch (const InspectError&) {
  }
  return "";
}

void BreakTable::keep(const DispatchBreakpoint& b) {
  breaks_.push_back(b);
  ++next_;
  if (placed_) placed_->breaksChanged();  // until locations() runs again
}

std::string BreakTable::add(Session& s, const std::string& op, const std::string& key) {
  if (breaks_.size() >= DSCOPE_MAX_BREAKS)
    fail(std::to_string(breaks_.size()) + " dispatch breakpoints are set, as many as the runtime's break filter holds: "
         "delete one first (dispatch-break --delete N)");
  const DispatchBreakpoint b{next_, op, key};
  const BreakSupport& support = s.breaks();
  support.checkTarget();
  auto checkKey = [&] {
    if (const KeyTable* keys = support.keys(); keys && !key.empty()) checkedBreakKey(*keys, key);
  };
  if (support.pending()) {
    // Kept until the runtime can be read, its key checked against the key table it will have
    // (unchecked where that is not known yet, until the breakpoint is placed).
    armed_instance_ = 0;  // a process's filter no longer holds the whole table
    checkKey();
    keep(b);
    return "Dispatch breakpoint " + std::to_string(b.number) + " (" + op + ") pending: it arms when the runtime is loaded.\n";
  }
  checkKey();
  // Kept, with the line that says so (a typo such as aten::mmm is kept too: it may be registered
  // later); whether it is registered is not said where the operators cannot be read.
  std::optional<bool> registered;
  if (const auto ops = support.operators()) registered = operatorExists(*ops, op);
  keep(b);
  std::string out = "Dispatch breakpoint " + std::to_string(b.number) + ": " + described(b) + "\n";
  if (registered == false) out += "dispatch-break: no operator named " + op + " is registered yet; the entry matches once one is\n";
  try {
    support.arm(breaks_, armed_instance_);
  } catch (...) {
    breaks_.pop_back();  // a core file, or a runtime that cannot take it: nothing was armed
    --next_;
    throw;
  }
  return out;
}

void BreakTable::armIfNew(Session& s) {
  if (breaks_.empty()) return;
  s.breaks().armIfNew(breaks_, armed_instance_);
}

std::vector<uint64_t> BreakTable::locations(Session& s) {
  placed_.reset();
  if (breaks_.empty() || s.mem().isCore()) return {};  // a core runs no more
  placed_ = s.breaks().place(breaks_);
  return placed_ ? placed_->locations() : std::vector<uint64_t>{};
}

dscope_hit_action BreakTable::hit(Session& s, const dscope_stop_registers& r, std::string* text) {
  // The stops the placed breakpoints settle first, from the registers alone where they can: a
  // kernel breakpoint is hit thousands of times, and the first symbol lookup or profile read of a
  // stop costs a walk of the process's mappings (in LLDB a packet per mapping).
  if (placed_)
    if (const auto action = placed_->settled(s.mem(), breaks_, r)) return *action;
  auto e = s.breaks().explain(breaks_, r);
  if (!e) return DSCOPE_HIT_CONTINUE;
  // The Python line that made the call: the thread's innermost Python frame.
  if (const PythonView* py = s.pythonIfReadable())
    if (const PythonFrame* caller = py->innermostFrame(e->tid)) e->python_caller = caller->text();
  *text = stopped(std::move(*e));
  return DSCOPE_HIT_STOP;
}

std::string BreakTable::stopped(DispatchExplanation e) {
  lastBreakStop() = e;
  last_ = std::move(e);
  return explanationText(*last_);
}

std::string BreakTable::why(Session& s, bool json) const {
  if (!last_) fail("no dispatch-break stop to explain");
  // Only while the thread is still at that stop: its innermost frame is where it stopped.
  const dscope_target* t = s.mem().target();
  uint64_t pc = 0, sp = 0;
  if (!t || !t->stack_frame || t->stack_frame(t->ctx, last_->tid, 0, &pc, &sp) != 0 || pc != last_->pc || sp != last_->sp)
    fail("thread " + std::to_string(last_->tid) + " has moved on from the last dispatch-break stop (" + last_->op + " at " +
         last_->key + "); --why explains a stop while the thread is still there");
  return json ? explanationJson(*last_) : explanationText(*last_);
}

}  // namespace dscope::inspect
