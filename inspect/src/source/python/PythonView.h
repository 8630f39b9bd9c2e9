// A CPython interpreter read from outside (ARCHITECTURE.md §2, "a Python interpreter"): every
// thread's Python frames, and the Python objects the dispatcher holds (a Python kernel's function,
// a TorchDispatchMode's class), without debug info and without calling into the process.
// Where the layout comes from: 3.13 and later publish _Py_DebugOffsets at the start of _PyRuntime
// (cookie "xdebugpy", PY_VERSION_HEX), read from the target and checked; 3.11 publishes none, so
// its offsets come from a layout profile measured against that interpreter's own headers
// (profiles/probe/python_probe.c), found by the interpreter's build-id. Both fill one PythonLayout
// (PythonLayout.h), resolved once; one walker reads every version.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "source/python/PythonLayout.h"
#include "target/Remote.h"

namespace dscope::inspect {

// One Python frame: what traceback.format_stack() says of it.
struct PythonFrame {
  uint64_t address = 0;  // its _PyInterpreterFrame
  uint64_t code = 0;     // the code object it runs
  std::string name;      // co_name, as tracebacks print it
  std::string qualname;  // co_qualname
  std::string file;      // co_filename
  int64_t line = -1;     // from the code object's line table; -1 when it has none there
  // The frame an evaluation loop (_PyEval_EvalFrameDefault) was entered with: the frames from here
  // inwards up to the next entry frame run in one native frame of that function.
  bool entry = false;
  // Of an entry frame in 3.12 and later: the address of the evaluation loop's own entry frame (the
  // hidden one outside it), a local of that loop's native frame (0 where there is none: 3.11).
  uint64_t loop_local = 0;
  std::string corrupt;   // why the frame cannot be read ("" when it can); the walk ends there
  // `File "/p/prog.py", line 10, in inner`, traceback's own first line for the frame (without its
  // indent); a corrupt frame: `<corrupt Python frame at 0x...: WHY>`.
  std::string text() const;
};

// traceback's line for a frame: `File "FILE", line LINE, in NAME` ("line None" where line < 0).
std::string pythonLocation(const std::string& file, int64_t line, const std::string& name);

class Json;
// A frame as every --json answer carries it: {"name","qualname","file","line"} (line null where
// the table has none), or {"corrupt","address"}.
void pythonFrameJson(Json& j, const PythonFrame& f);

// A thread Python knows (a PyThreadState), innermost frame first.
struct PythonThread {
  int64_t tid = 0;        // the target's id of the thread (0 when no thread of the target is it)
  int64_t own_tid = 0;    // its native_thread_id, as the process knows it
  std::vector<PythonFrame> frames;
  bool cut = false;       // the walk stopped at its bound (kMaxPythonFrames)
};

// A Python function object as a Python kernel holds it: "module.qualname at file.py:LINE".
struct PythonFunction {
  std::string module, qualname, file;
  int64_t first_line = 0;
  uint64_t code = 0;  // its code object: what a frame that runs it runs
  std::string text() const;
};

// The interpreter's evaluation loop: each native frame of it on a thread's stack runs one segment
// of the thread's Python frames (pythonSegments).
constexpr const char* kEvalFunction = "_PyEval_EvalFrameDefault";
// A thread's Python frames as its evaluation loops run them, innermost loop first: the frames
// from one entry frame inwards up to the next (a corrupt frame ends the last segment). The native
// frames of the evaluation loop on its stack, innermost first, run these segments in order: the
// one whose stack holds the segment's loop_local (3.12+), else the next one of kEvalFunction.
std::vector<std::vector<PythonFrame>> pythonSegments(const PythonThread& t);

// The line of the code unit at byte_offset in a 3.11+ location table (co_linetable; Objects/
// locations.md) of a code object whose co_firstlineno is first_line: entries of (code, length in
// code units), each moving the line by its delta; -1 where an entry says "no location", or past
// the table. Pure: tests/unit/test_python.cpp holds it against CPython's own co_lines().
int64_t pythonLineAt(const std::string& table, int64_t first_line, int64_t byte_offset);

constexpr uint64_t kMaxPythonFrames = 10000;
constexpr uint64_t kMaxPythonThreads = 4096;

class PythonView {
 public:
  // Finds the interpreter the target maps (_PyRuntime) and its layout; nullptr when it maps none.
  // InspectError (one line) when it maps one that cannot be read: a version without a layout, a
  // debug-offsets block that fails its checks, a 3.11 without its profile.
  static std::unique_ptr<PythonView> find(const Remote& mem);

  const Remote& mem() const { return mem_; }
  const PythonLayout& layout() const { return layout_; }
  const std::string& version() const { return version_; }  // "3.11.2"
  // Where _Py_DebugOffsets gave each value (ResolvedPython::places); empty for a profile's layout.
  const std::vector<std::pair<std::string, uint64_t>>& places() const { return places_; }

  // Every thread state of every interpreter, in the interpreters' own order (newest first): read
  // once per view (a view lives for one command, while the target stands still).
  const std::vector<PythonThread>& threads() const;
  // The thread state of the target's thread tid, or null when Python knows no such thread.
  const PythonThread* thread(int64_t tid) const;
  // That thread's innermost Python frame where it can be read, else null: the Python line its
  // native code was called from.
  const PythonFrame* innermostFrame(int64_t tid) const;

  // Py_TYPE(object)->tp_name ("FakeTensorMode"); InspectError when unreadable.
  std::string typeName(uint64_t object) const;
  // A function object's module, qualname, file and first line; nullopt when object is no function.
  std::optional<PythonFunction> function(uint64_t object) const;
  // A str object's text (UTF-8); InspectError when it is no readable str.
  std::string unicode(uint64_t object, const char* what) const;

 private:
  PythonView(const Remote& mem, uint64_t runtime, ResolvedPython resolved);
  // What a code object tells of every frame that runs it, read once per view.
  struct Code {
    std::string name, qualname, file, line_table;
    int64_t first_line = 0;
  };
  const Code& code(uint64_t object) const;
  bool isCode(uint64_t object) const;  // a code object (Py_TYPE's name "code")
  PythonFrame readFrame(uint64_t frame, uint64_t code_object) const;
  PythonThread readThread(uint64_t tstate) const;

  const Remote& mem_;
  uint64_t runtime_;  // &_PyRuntime
  PythonLayout layout_;
  std::string version_;
  std::vector<std::pair<std::string, uint64_t>> places_;
  mutable std::unordered_map<uint64_t, Code> codes_;  // by code object, for this command
  mutable std::optional<std::vector<PythonThread>> threads_;  // threads()' answer
};


}  // namespace dscope::inspect
