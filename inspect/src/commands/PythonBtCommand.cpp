// python-bt [--thread N | --all] [--json]: a thread's Python stack alone, read out of the process
// (PythonView.h), each frame as traceback.format_stack() writes its first line, innermost first.
// --layout prints the interpreter layout the reader resolved, and for _Py_DebugOffsets where it
// read each value (tests/python/python_layout_test.py holds both against the interpreter's own
// headers).
#include <string>
#include <vector>

#include "commands/CommandLine.h"
#include "commands/Commands.h"
#include "source/python/PythonView.h"
#include "target/ThreadLocal.h"
#include "text/Json.h"

namespace dscope::inspect {

const char* const kPythonBtUsage = "python-bt [--thread N | --all] [--json]";
const OptionSpec kPythonBtOptions{{"--all", "--json", "--layout"}, {"--thread"}, {}, {}};

namespace {

const char* const kSchemaVersion = "1.0";

// A target's thread and what Python knows of it (nothing: no thread state).
struct AskedThread {
  int64_t tid = 0;
  const PythonThread* python = nullptr;
};

std::string threadText(const Remote& mem, const AskedThread& a) {
  std::string out = "Python stack of thread " + mem.threadIds().shown(a.tid);
  if (!a.python) return out + ": no Python thread state (a thread Python never ran on)\n";
  const PythonThread& t = *a.python;
  uint64_t frames = 0;
  for (const auto& f : t.frames) frames += f.corrupt.empty();
  out += " (" + counted(frames, "frame") + ", innermost first):\n";
  for (const auto& f : t.frames)
    out += "  " + f.text() + "\n";
  if (t.cut) out += "  ... (the walk stops after " + groupThousands(kMaxPythonFrames) + " frames)\n";
  return out;
}

void threadJson(Json& j, const Remote& mem, const AskedThread& a) {
  j.beginObject().field("tid", a.tid).field("shown_tid", mem.threadIds().shown(a.tid));
  j.key("frames");
  if (!a.python) {
    j.null();
    j.endObject();
    return;
  }
  j.beginArray();
  for (const auto& f : a.python->frames) pythonFrameJson(j, f);
  j.endArray().field("cut", a.python->cut).endObject();
}

}  // namespace

std::string runPythonBt(Session& s, const std::vector<std::string>& words) {
  const ParsedArgs args = parseArgs(words, kPythonBtOptions, kPythonBtUsage);
  if (!args.positional.empty()) usageError("python-bt takes no operand ('" + shown(args.positional[0]) + "')", kPythonBtUsage);
  const auto thread = threadOption(args.value("--thread"));
  if (thread && args.has("--all")) usageError("--thread and --all exclude each other", kPythonBtUsage);
  const Remote& mem = s.mem();
  if (!mem.target()) fail(kNoProcess);
  const PythonView* py = s.python();
  if (!py) fail("this process runs no Python interpreter (no _PyRuntime)");
  if (args.has("--layout")) {
    std::string out = "python " + py->version() + "\n";
    for (const auto& [name, value] : py->layout().values())
      out += std::string(name) + " " + (value == kAbsentValue ? std::string("absent") : std::to_string(value)) + "\n";
    for (const auto& [name, place] : py->places()) out += name + " " + std::to_string(place) + "\n";
    return out;
  }
  std::vector<AskedThread> asked;
  if (args.has("--all")) {
    for (const int64_t tid : mem.everyThread(kMaxPythonThreads)) asked.push_back({tid, py->thread(tid)});
    for (const auto& t : py->threads()) {  // threads Python knows that the target does not number
      bool listed = false;
      for (const auto& a : asked) listed = listed || a.tid == t.tid;
      if (!listed) asked.push_back({t.tid, &t});
    }
  } else {
    const int64_t tid = mem.askedThread(thread);
    if (!tid) fail(kNoProcess);
    asked.push_back({tid, py->thread(tid)});
  }
  if (args.has("--json")) {
    Json j;
    j.beginObject().field("schema", "dscope-python-bt").field("version", kSchemaVersion).field("python", py->version());
    j.key("threads").beginArray();
    for (const auto& a : asked) threadJson(j, mem, a);
    j.endArray().endObject();
    return j.str();
  }
  std::string out;
  for (size_t i = 0; i < asked.size(); ++i) out += (i ? "\n" : "") + threadText(mem, asked[i]);
  return out;
}

}  // namespace dscope::inspect
