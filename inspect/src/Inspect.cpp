// The C ABI (include/dscope/inspect.h): parses the command word, runs the command, and turns
// every failure into one "dscope: ..." line. Nothing escapes: no exception crosses the ABI.
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>

#include "commands/BreakTable.h"
#include "commands/CommandLine.h"
#include "commands/Commands.h"
#include "stack/DispatchSummary.h"
#include "text/Json.h"
#include "frontends/FrontEnds.h"
#include "target/ModuleFiles.h"

#define DSCOPE_INSPECT_EXPORT extern "C" __attribute__((visibility("default")))

namespace dscope::inspect {
namespace {

const char* kCommands = "keyset, op-table, dispatch-trace, dispatch-summary, python-bt";

// A user command's usage line and the options it parses its words with.
struct CommandSyntax {
  const char* usage;
  const OptionSpec* options;
};
const std::map<std::string, CommandSyntax>& userCommandSyntax() {
  static const std::map<std::string, CommandSyntax> syntax{
      {"keyset", {kKeysetUsage, &kKeysetOptions}},
      {"op-table", {kOpTableUsage, &kOpTableOptions}},
      {"dispatch-trace", {kDispatchTraceUsage, &kDispatchTraceOptions}},
      {"dispatch-summary", {kDispatchSummaryUsage, &kDispatchSummaryOptions}},
      {"dispatch-break", {kDispatchBreakUsage, &kDispatchBreakOptions}},
      {"python-bt", {kPythonBtUsage, &kPythonBtOptions}}};
  return syntax;
}

// A user command's usage line, for the front ends' help.
std::string usageOf(const std::string& command) {
  const auto& syntax = userCommandSyntax();
  if (auto it = syntax.find(command); it != syntax.end()) return std::string(it->second.usage) + "\n";
  std::string names;
  for (const auto& [name, usage] : syntax) names += (names.empty() ? "" : ", ") + name;
  fail("no command '" + shown(command) + "'; commands: " + names);
}

// The runtime keys of a key table whose names start with prefix, in c10's order.
std::vector<std::string> keyNamesFrom(const KeyTable& keys, const std::string& prefix) {
  std::vector<std::string> names;
  for (int k : keys.runtimeKeys()) {
    const std::string& name = keys.name(k);
    if (k != 0 && name.compare(0, prefix.size(), prefix) == 0) names.push_back(name);
  }
  return names;
}

// The runtime keys (what --key and --missing take) starting with prefix, of the runtime the target
// holds; DispatchScope's own with no target or none readable.
std::vector<std::string> keyNames(const dscope_target* target, const std::string& prefix) {
  if (target) {
    try {
      Session session(target);
      return keyNamesFrom(session.dispatcher(std::nullopt).keys(), prefix);
    } catch (const InspectError&) {  // no runtime readable: our own table's names
    }
  }
  return keyNamesFrom(dscopeKeyTable(), prefix);
}

// The names of the operators of the runtime the target holds that start with prefix, at most limit.
std::vector<std::string> operatorNames(const dscope_target* target, const std::string& prefix, int limit) {
  Session session(target);
  std::vector<std::string> names;
  for (const auto& op : session.dispatcher(std::nullopt).operators()) {
    if (static_cast<int>(names.size()) >= limit) break;
    if (op.name.compare(0, prefix.size(), prefix) == 0) names.push_back(op.name);
  }
  return names;
}

// The most operator names a completion offers (a runtime holds thousands).
constexpr int kCompletedOperators = 200;

// What the operand of a user command completes to (its DSCOPE_COMMAND_COMPLETES_* flag).
Completes operandOf(const std::string& command) {
  const uint32_t flags = commandFlags(command);
  if (flags & DSCOPE_COMMAND_COMPLETES_EXPRESSION) return Completes::Expression;
  if (flags & DSCOPE_COMMAND_COMPLETES_OPERATOR) return Completes::Operator;
  return Completes::Nothing;
}

// dscope_inspect_complete's names: what each candidate adds to the word typed, one per line.
std::string completion(const dscope_target* target, const std::string& command, const std::string& arguments,
                       int* completes) {
  const auto& syntax = userCommandSyntax();
  const auto it = syntax.find(command);
  if (it == syntax.end()) return "";
  const TypedWord typed = typedWord(arguments, *it->second.options, operandOf(command));
  std::vector<std::string> names;
  switch (typed.completes) {
    case Completes::Expression:
      if (completes) *completes = DSCOPE_COMPLETES_EXPRESSION;
      return "";
    case Completes::Operator:
      names = operatorNames(target, typed.text, kCompletedOperators);
      break;
    case Completes::KeyName:
      names = keyNames(target, typed.text);
      break;
    case Completes::Nothing:
      break;
  }
  std::string out;
  for (const std::string& name : names) out += name.substr(typed.text.size()) + "\n";
  return out;
}

std::string lines(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += name + "\n";
  return out;
}

// A user command's answer and what its walks could not read whole: "dscope: ..." lines after a
// text answer; in a JSON answer (one object) a "warnings" array, so that it stays one document.
std::string withWarnings(std::string answer, const std::vector<std::string>& warnings) {
  if (warnings.empty()) return answer;
  if (!answer.empty() && answer.front() == '{') {
    Json j;
    j.beginArray();
    for (const auto& w : warnings) j.value(errorLine(w));
    j.endArray();
    std::string array = j.str();
    array.pop_back();  // its newline
    answer.insert(answer.rfind('}'), ",\"warnings\":" + array);
    return answer;
  }
  for (const auto& w : warnings) answer += errorLine(w) + "\n";
  return answer;
}

std::string run(const dscope_target* target, const char* command_line) {
  if (!command_line) fail("empty command; commands: " + std::string(kCommands));
  auto words = splitWords(command_line);
  if (words.empty()) fail("empty command; commands: " + std::string(kCommands));
  const std::string command = words.front();
  words.erase(words.begin());
  Session session(target);
  using UserCommand = std::string (*)(Session&, const std::vector<std::string>&);
  const std::map<std::string, UserCommand> user_commands{
      {"keyset", runKeyset}, {"op-table", runOpTable}, {"dispatch-trace", runDispatchTrace},
      {"dispatch-summary", runDispatchSummary}, {"python-bt", runPythonBt}};
  if (auto it = user_commands.find(command); it != user_commands.end()) {
    std::string answer = it->second(session, words);  // before the warnings it leaves
    return withWarnings(std::move(answer), session.warnings());
  }
  fail("unknown command '" + shown(command) + "'; commands: " + kCommands);
}

// A malloc'd copy (the ABI's strings are freed with dscope_inspect_free, i.e. free()).
char* copyOut(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

}  // namespace

bool Session::readsTorch(const std::optional<std::string>& runtime_option) {
  if (runtime_option && *runtime_option != "torch" && *runtime_option != "dscope")
    fail("--runtime takes torch or dscope, not '" + shown(*runtime_option) + "'");
  if (runtime_option == "dscope") return false;
  // PyTorch is read from its libraries' files: one the process maps but no place holds is the
  // answer (which file, which build, how to give the process's root).
  for (const char* needed : {"libtorch_cpu.so", "libc10.so"})
    if (std::string missing = mem_.missingModuleFile(needed); !missing.empty()) fail(missing);
  if (runtime_option) return true;
  if (!TorchView::findLibtorch(mem_)) return false;
  if (!mem_.findSymbol("dscope_debug_descriptor")) return true;
  note_ = "this process holds DispatchScope's runtime and PyTorch: this is DispatchScope's (--runtime torch reads PyTorch's)";
  return false;
}

const Dispatcher& Session::dispatcher(const std::optional<std::string>& runtime_option) {
  if (readsTorch(runtime_option)) return c10Model();
  return dscopeModel();
}

const BreakSupport& Session::breaks() {
  if (!readsTorch(std::nullopt)) return dscopeModel().breaks();
  try {
    return c10Model().breaks();
  } catch (const InspectError&) {
    if (!pending_c10_breaks_) pending_c10_breaks_.emplace(mem_, std::current_exception());
    return *pending_c10_breaks_;
  }
}

const DscopeDispatcher& Session::dscopeModel() {
  if (!dscope_model_) dscope_model_.emplace(*this);
  return *dscope_model_;
}

const C10Dispatcher& Session::c10Model() {
  if (!c10_model_) c10_model_.emplace(torch(), [this] { return pythonIfReadable(); });
  return *c10_model_;
}

std::vector<std::string> Session::warnings() const {
  std::vector<std::string> out;
  if (!note_.empty()) out.push_back(note_);
  if (!python_note_.empty()) out.push_back(python_note_);
  if (view_)
    for (const auto& w : view_->warnings())
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  return out;
}

}  // namespace dscope::inspect

namespace dscope::inspect {
namespace {

// Why memory ran out: an address-space limit (`ulimit -v`: the module files a command maps count
// against it) is the likelier cause where one is set; else sizes read from damaged memory.
std::string outOfMemoryCause() {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    return "under the address-space limit of " + std::to_string(limit.rlim_cur / 1024) +
           " KiB (ulimit -v): the module files read count against it; raise it";
  return "(corrupt sizes in the target?)";
}

// Every entry point's answer: what `answer` returns, or, for anything it throws, exactly one
// "dscope: " line with *is_error set. No exception crosses the ABI.
template <class Answer>
char* guarded(int* is_error, Answer answer) {
  std::string text;
  bool error = true;
  try {
    text = answer();
    error = false;
  } catch (const InspectError& e) {
    text = e.what();
  } catch (const std::bad_alloc&) {
    text = "dscope: out of memory " + outOfMemoryCause();
  } catch (const std::exception& e) {
    text = std::string("dscope: internal error: ") + e.what();
    for (char& c : text)
      if (c == '\n') c = ' ';
  } catch (...) {
    text = "dscope: internal error";
  }
  if (is_error) *is_error = error ? 1 : 0;
  // The error contract: exactly one line.
  if (error && (text.empty() || text.back() != '\n')) text += '\n';
  return copyOut(text);
}

}  // namespace
}  // namespace dscope::inspect

// dscope_value_summary's answer and the strings it points into.
struct SummaryBox : dscope_summary {
  std::string text_storage;
  dscope::inspect::Summary summary;
  std::vector<dscope_value_child> rows;
};

// The handle of dscope_breaks_new: one debugger session's dispatch breakpoints.
struct dscope_breaks {
  dscope::inspect::BreakTable table;
};

DSCOPE_INSPECT_EXPORT char* dscope_inspect_run(const dscope_target* target, const char* command_line, int* is_error) {
  return dscope::inspect::guarded(is_error, [&] { return dscope::inspect::run(target, command_line); });
}

DSCOPE_INSPECT_EXPORT char* dscope_module_file(const char* path, const char* build_id, const char* sysroot, int64_t pid) {
  try {
    const auto file = dscope::inspect::findModuleFile(path ? path : "", build_id ? build_id : "",
                                                      {sysroot ? sysroot : "", pid}, nullptr);
    return file ? dscope::inspect::copyOut(*file) : nullptr;
  } catch (...) {  // no exception crosses the ABI
    return nullptr;
  }
}

DSCOPE_INSPECT_EXPORT char* dscope_inspect_usage(const char* command, int* is_error) {
  return dscope::inspect::guarded(is_error, [&] { return dscope::inspect::usageOf(command ? command : ""); });
}

DSCOPE_INSPECT_EXPORT char* dscope_inspect_complete_keys(const dscope_target* target, const char* prefix) {
  using namespace dscope::inspect;
  return guarded(nullptr, [&] { return lines(keyNames(target, prefix ? prefix : "")); });
}

DSCOPE_INSPECT_EXPORT char* dscope_inspect_complete(const dscope_target* target, const char* command,
                                                    const char* arguments, int* completes) {
  using namespace dscope::inspect;
  if (completes) *completes = DSCOPE_COMPLETES_NAMES;
  std::string out;
  try {
    out = completion(target, command ? command : "", arguments ? arguments : "", completes);
  } catch (...) {  // completion offers nothing rather than an error
    out.clear();
    if (completes) *completes = DSCOPE_COMPLETES_NAMES;
  }
  return copyOut(out);
}

DSCOPE_INSPECT_EXPORT int dscope_frame_op_is(const dscope_target* target, const char* frame, const char* name,
                                             char** error) {
  using namespace dscope::inspect;
  int answer = -1;
  int is_error = 0;
  char* text = guarded(&is_error, [&] {
    Session session(target);
    answer = frameOpIs(session, frame ? frame : "??", name ? name : "") ? 1 : 0;
    return std::string();
  });
  if (is_error && error) {
    *error = text;
    return -1;
  }
  std::free(text);
  return answer;
}

DSCOPE_INSPECT_EXPORT char* dscope_frame_key(const dscope_target* target, const char* frame, int* is_error) {
  using namespace dscope::inspect;
  return guarded(is_error, [&] {
    Session session(target);
    return frameKey(session, frame ? frame : "??");
  });
}

DSCOPE_INSPECT_EXPORT dscope_summary* dscope_value_summary(const dscope_target* target, const dscope_value* value) {
  using namespace dscope::inspect;
  auto* box = new (std::nothrow) SummaryBox{};
  if (!box) return nullptr;
  int is_error = 0;
  char* text = guarded(&is_error, [&] {
    if (!value) fail("no value");
    dscope_value v = *value;
    terminate(v);
    Session session(target);
    box->summary = summarize(session, v);
    return box->summary.text;
  });
  box->text_storage = text ? text : "dscope: out of memory";
  std::free(text);
  if (is_error) box->summary.children.clear();
  while (!box->text_storage.empty() && box->text_storage.back() == '\n') box->text_storage.pop_back();
  for (const Child& c : box->summary.children)
    box->rows.push_back({c.name.c_str(), c.summary.c_str(), c.type.empty() ? nullptr : c.type.c_str(), c.word,
                         c.elements.data(), c.elements.size()});
  box->text = box->text_storage.c_str();
  box->is_error = is_error;
  box->child_count = box->rows.size();
  box->children = box->rows.data();
  return box;
}

DSCOPE_INSPECT_EXPORT void dscope_summary_free(dscope_summary* summary) { delete static_cast<SummaryBox*>(summary); }

DSCOPE_INSPECT_EXPORT const dscope_value_type* dscope_value_type_at(uint64_t index) {
  return dscope::inspect::valueTypeAt(index);
}

DSCOPE_INSPECT_EXPORT dscope_breaks* dscope_breaks_new(void) { return new (std::nothrow) dscope_breaks; }

DSCOPE_INSPECT_EXPORT void dscope_breaks_free(dscope_breaks* breaks) { delete breaks; }

DSCOPE_INSPECT_EXPORT char* dscope_breaks_command(dscope_breaks* breaks, const dscope_target* target,
                                                  const char* arguments, int* is_error) {
  using namespace dscope::inspect;
  return guarded(is_error, [&] {
    if (!breaks) fail("no dispatch breakpoint table");
    Session session(target);
    return breaks->table.command(session, splitWords(arguments ? arguments : ""));
  });
}

DSCOPE_INSPECT_EXPORT char* dscope_breaks_arm(dscope_breaks* breaks, const dscope_target* target, int* is_error) {
  using namespace dscope::inspect;
  return guarded(is_error, [&] {
    if (!breaks) fail("no dispatch breakpoint table");
    Session session(target);
    breaks->table.armIfNew(session);
    return std::string();
  });
}

DSCOPE_INSPECT_EXPORT int dscope_breaks_count(const dscope_breaks* breaks) {
  return breaks ? static_cast<int>(breaks->table.size()) : 0;
}

DSCOPE_INSPECT_EXPORT char* dscope_breaks_hit(dscope_breaks* breaks, const dscope_target* target,
                                              const dscope_stop_registers* registers, int* action, int* is_error) {
  using namespace dscope::inspect;
  if (action) *action = DSCOPE_HIT_CONTINUE;
  return guarded(is_error, [&] {
    if (!breaks) fail("no dispatch breakpoint table");
    if (!registers) fail("no registers");
    Session session(target);
    std::string text;
    const dscope_hit_action a = breaks->table.hit(session, *registers, &text);
    if (action) *action = a;
    return text;
  });
}

DSCOPE_INSPECT_EXPORT char* dscope_breaks_hit_registers(dscope_breaks* breaks, const dscope_target* target, int64_t tid,
                                                        const uint64_t* values, uint64_t count, int* action,
                                                        int* is_error) {
  // The words after tid, in dscope_stop_register_at's order (FrontEnds.cpp checks their number).
  constexpr uint64_t kWords = (sizeof(dscope_stop_registers) - sizeof(int64_t)) / sizeof(uint64_t);
  if (!values || count != kWords) {
    if (action) *action = DSCOPE_HIT_CONTINUE;
    return dscope::inspect::guarded(is_error, [&]() -> std::string {
      dscope::inspect::fail("dispatch-break: " + std::to_string(count) + " registers given, " +
                            std::to_string(kWords) + " needed (dscope_stop_register_at)");
    });
  }
  dscope_stop_registers registers{};
  registers.tid = tid;
  registers.pc = values[0];
  registers.sp = values[1];
  std::copy(values + 2, values + kWords, registers.args);
  return dscope_breaks_hit(breaks, target, &registers, action, is_error);
}

DSCOPE_INSPECT_EXPORT char* dscope_breaks_locations(dscope_breaks* breaks, const dscope_target* target, int* is_error) {
  using namespace dscope::inspect;
  return guarded(is_error, [&] {
    if (!breaks) fail("no dispatch breakpoint table");
    Session session(target);
    std::string out;
    for (uint64_t address : breaks->table.locations(session)) out += hex(address) + "\n";
    return out;
  });
}

DSCOPE_INSPECT_EXPORT char* dscope_inspect_complete_ops(const dscope_target* target, const char* prefix, int limit) {
  using namespace dscope::inspect;
  std::string out;
  try {
    out = lines(operatorNames(target, prefix ? prefix : "", limit));
  } catch (...) {
    out.clear();  // completion offers nothing rather than an error
  }
  return copyOut(out);
}

DSCOPE_INSPECT_EXPORT void dscope_inspect_free(char* s) { std::free(s); }
