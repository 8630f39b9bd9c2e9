#include "source/python/PythonView.h"

#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "source/python/PythonObjects.h"
#include "target/ModuleFiles.h"
#include "target/ThreadLocal.h"
#include "text/Json.h"

namespace dscope::inspect {

namespace {

// Interpreters in one process (subinterpreters): more is a corrupt list.
constexpr uint64_t kMaxInterpreters = 256;
// A code object's line table: a few bytes per instruction; more is no line table.
constexpr uint64_t kMaxLineTable = 1u << 20;

// PyASCIIObject's state bit field (interned:2, kind:3, compact:1, ascii:1), the same in 3.11-3.14.
constexpr unsigned kKindShift = 2, kCompactBit = 1u << 5, kAsciiBit = 1u << 6;

// One code point as UTF-8.
void appendUtf8(std::string& out, uint32_t c) {
  if (c < 0x80) out += static_cast<char>(c);
  else if (c < 0x800) out += static_cast<char>(0xc0 | (c >> 6)), out += static_cast<char>(0x80 | (c & 0x3f));
  else if (c < 0x10000)
    out += static_cast<char>(0xe0 | (c >> 12)), out += static_cast<char>(0x80 | ((c >> 6) & 0x3f)),
        out += static_cast<char>(0x80 | (c & 0x3f));
  else
    out += static_cast<char>(0xf0 | (c >> 18)), out += static_cast<char>(0x80 | ((c >> 12) & 0x3f)),
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3f)), out += static_cast<char>(0x80 | (c & 0x3f));
}

}  // namespace

int64_t pythonLineAt(const std::string& table, int64_t first_line, int64_t byte_offset) {
  size_t p = 0;
  auto byte = [&]() -> unsigned { return p < table.size() ? static_cast<unsigned char>(table[p++]) : 0u; };
  auto varint = [&]() {
    unsigned b = byte();
    uint64_t value = b & 63;
    for (unsigned shift = 6; (b & 64) && shift < 64; shift += 6) b = byte(), value |= uint64_t{b & 63} << shift;
    return value;
  };
  // The line moves in wrapping (unsigned) steps: a damaged table's deltas may sum past 64 bits, and
  // what it then says is no line (negative: -1), never undefined behaviour.
  auto signedVarint = [&]() {
    const uint64_t v = varint();
    return (v & 1) ? ~(v >> 1) + 1 : v >> 1;
  };
  uint64_t line = static_cast<uint64_t>(first_line);
  int64_t start = 0;
  while (p < table.size()) {
    const unsigned head = byte();
    const unsigned code = (head >> 3) & 15;
    const int64_t end = start + 2 * ((head & 7) + 1);
    bool none = false;
    if (code == 15) none = true;
    else if (code == 14) line += signedVarint(), varint(), varint(), varint();
    else if (code == 13) line += signedVarint();
    else if (code >= 10) line += code - 10, byte(), byte();
    else byte();
    if (byte_offset >= start && byte_offset < end) return none || static_cast<int64_t>(line) < 0 ? -1 : static_cast<int64_t>(line);
    start = end;
  }
  return -1;
}

std::string pythonLocation(const std::string& file, int64_t line, const std::string& name) {
  return "File \"" + file + "\", line " + (line < 0 ? std::string("None") : std::to_string(line)) + ", in " + name;
}

std::string PythonFrame::text() const {
  return corrupt.empty() ? pythonLocation(file, line, name) : "<corrupt Python frame at " + hex(address) + ": " + corrupt + ">";
}

void pythonFrameJson(Json& j, const PythonFrame& f) {
  j.beginObject();
  if (!f.corrupt.empty()) {
    j.field("corrupt", f.corrupt).field("address", hex(f.address));
  } else {
    j.field("name", f.name).field("qualname", f.qualname).field("file", f.file).key("line");
    if (f.line < 0) j.null();
    else j.value(f.line);
  }
  j.endObject();
}

std::string PythonFunction::text() const {
  return (module.empty() ? "" : module + ".") + qualname + " at " + file + ":" + std::to_string(first_line);
}

std::vector<std::vector<PythonFrame>> pythonSegments(const PythonThread& t) {
  std::vector<std::vector<PythonFrame>> segments(1);
  for (const PythonFrame& f : t.frames) {
    segments.back().push_back(f);
    if (f.entry) segments.emplace_back();
  }
  if (segments.back().empty()) segments.pop_back();
  return segments;
}

std::unique_ptr<PythonView> PythonView::find(const Remote& mem) {
  for (const ModuleMapping& m : mem.modules()) {
    const auto runtime = symbolInFile(m.path, m.start, "_PyRuntime");
    if (!runtime || !*runtime) continue;
    ResolvedPython r = resolvePythonLayout(mem, *runtime, m.path);
    return std::unique_ptr<PythonView>(new PythonView(mem, *runtime, std::move(r)));
  }
  return nullptr;
}

PythonView::PythonView(const Remote& mem, uint64_t runtime, ResolvedPython resolved)
    : mem_(mem), runtime_(runtime), layout_(resolved.layout), version_(std::move(resolved.version)),
      places_(std::move(resolved.places)) {}

std::string PythonView::unicode(uint64_t object, const char* what) const {
  const PythonLayout& l = layout_;
  const uint32_t state = mem_.read<uint32_t>(object + l.unicode_object_state, what);
  const int64_t length = mem_.read<int64_t>(object + l.unicode_object_length, what);
  const unsigned kind = (state >> kKindShift) & 7;
  if (!(state & kCompactBit) || (kind != 1 && kind != 2 && kind != 4) || length < 0 ||
      static_cast<uint64_t>(length) > kMaxStringLength)
    fail(std::string("the ") + what + " at " + hex(object) + " is no readable str");
  const uint64_t data = object + ((state & kAsciiBit) ? l.sizeof_PyASCIIObject : l.sizeof_PyCompactUnicodeObject);
  std::string bytes(static_cast<size_t>(length) * kind, '\0');
  if (length) mem_.read(data, bytes.data(), bytes.size(), what);
  if (kind == 1 && (state & kAsciiBit)) return bytes;
  std::string out;
  for (int64_t i = 0; i < length; ++i) {
    uint32_t c = 0;
    std::memcpy(&c, bytes.data() + i * kind, kind);
    appendUtf8(out, c);
  }
  return out;
}

std::string PythonView::typeName(uint64_t object) const {
  return pythonTypeName(mem_, object, layout_.pyobject_ob_type, layout_.type_object_tp_name);
}

bool PythonView::isCode(uint64_t object) const {
  if (!object) return false;
  if (codes_.count(object)) return true;
  return typeName(object) == "code";
}

const PythonView::Code& PythonView::code(uint64_t object) const {
  if (auto it = codes_.find(object); it != codes_.end()) return it->second;
  const PythonLayout& l = layout_;
  Code c;
  c.name = unicode(mem_.readPointer(object + l.code_object_name, "a code object"), "code object's name");
  c.qualname = unicode(mem_.readPointer(object + l.code_object_qualname, "a code object"), "code object's qualname");
  c.file = unicode(mem_.readPointer(object + l.code_object_filename, "a code object"), "code object's file name");
  c.first_line = mem_.read<int32_t>(object + l.code_object_firstlineno, "a code object's first line");
  const uint64_t table = mem_.readPointer(object + l.code_object_linetable, "a code object's line table");
  const int64_t size = mem_.read<int64_t>(table + l.bytes_object_ob_size, "a code object's line table");
  if (size < 0 || static_cast<uint64_t>(size) > kMaxLineTable) fail("a code object's line table at " + hex(table) + " is corrupt");
  c.line_table.resize(static_cast<size_t>(size));
  if (size) mem_.read(table + l.bytes_object_ob_sval, c.line_table.data(), c.line_table.size(), "a code object's line table");
  return codes_.emplace(object, std::move(c)).first->second;
}

PythonFrame PythonView::readFrame(uint64_t frame, uint64_t code_object) const {
  const PythonLayout& l = layout_;
  PythonFrame f;
  f.address = frame;
  f.code = code_object;
  const Code& c = code(code_object);
  f.name = c.name, f.qualname = c.qualname, f.file = c.file;
  const uint64_t instr = mem_.readPointer(frame + l.interpreter_frame_instr_ptr, "a Python frame");
  const int64_t addr = static_cast<int64_t>(instr - (code_object + l.code_object_co_code_adaptive));
  f.line = addr < 0 ? c.first_line : pythonLineAt(c.line_table, c.first_line, addr & ~int64_t{1});
  return f;
}

PythonThread PythonView::readThread(uint64_t tstate) const {
  const PythonLayout& l = layout_;
  PythonThread t;
  t.own_tid = static_cast<int64_t>(mem_.read<uint64_t>(tstate + l.thread_state_native_thread_id, "a Python thread state"));
  t.tid = mem_.threadIds().targetTid(t.own_tid).value_or(t.own_tid);
  uint64_t frame = mem_.readPointer(tstate + l.thread_state_current_frame, "a Python thread state");
  if (l.cframe_current_frame != kAbsentValue && frame) frame = mem_.readPointer(frame + l.cframe_current_frame, "a Python thread's _PyCFrame");
  std::set<uint64_t> seen;
  for (uint64_t n = 0; frame; ++n) {
    if (n == kMaxPythonFrames) {
      t.cut = true;
      break;
    }
    try {
      if (!seen.insert(frame).second) fail("the Python frame at " + hex(frame) + " comes round again (a corrupt frame chain)");
      const uint8_t owner = mem_.read<uint8_t>(frame + l.interpreter_frame_owner, "a Python frame");
      const uint64_t previous = mem_.readPointer(frame + l.interpreter_frame_previous, "a Python frame");
      if (l.frame_owner_hidden_from != kAbsentValue && owner >= l.frame_owner_hidden_from) {
        // An evaluation loop's entry (a local of its native frame): the frame inside it is the
        // first that loop ran.
        if (!t.frames.empty()) t.frames.back().entry = true, t.frames.back().loop_local = frame;
      } else if (const uint64_t executable = mem_.readPointer(frame + l.interpreter_frame_executable, "a Python frame") &
                                              ~l.executable_tag_bits;
                 isCode(executable)) {  // else no Python code's frame (3.14: a thread's base frame runs None)
        PythonFrame f = readFrame(frame, executable);
        if (l.interpreter_frame_is_entry != kAbsentValue)
          f.entry = mem_.read<uint8_t>(frame + l.interpreter_frame_is_entry, "a Python frame") != 0;
        t.frames.push_back(std::move(f));
      } else if (!executable) {
        // Every frame runs something (an entry or base frame None): zeros where the chain goes on.
        // A gcore core of a glibc 2.42+ process holds zeros for each thread's C stack (its guard
        // pages fail gcore's read), where 3.12+ keep an evaluation loop's entry frame.
        fail("it runs nothing (zeros: memory the core lacks, or corrupt memory)");
      }
      frame = previous;
    } catch (const InspectError& e) {
      PythonFrame bad;
      bad.address = frame;
      bad.corrupt = messageOf(e);
      t.frames.push_back(std::move(bad));
      break;
    }
  }
  return t;
}

const std::vector<PythonThread>& PythonView::threads() const {
  if (threads_) return *threads_;
  const PythonLayout& l = layout_;
  std::vector<uint64_t> states;
  std::set<uint64_t> seen;
  uint64_t interp = mem_.readPointer(runtime_ + l.runtime_state_interpreters_head, "the interpreter list");
  for (uint64_t i = 0; interp && i < kMaxInterpreters; ++i) {
    uint64_t tstate = mem_.readPointer(interp + l.interpreter_state_threads_head, "an interpreter's thread list");
    for (uint64_t n = 0; tstate && n < kMaxPythonThreads && seen.insert(tstate).second; ++n) {
      states.push_back(tstate);
      tstate = mem_.readPointer(tstate + l.thread_state_next, "a Python thread state");
    }
    interp = mem_.readPointer(interp + l.interpreter_state_next, "the interpreter list");
  }
  // Each thread state's pthread_t beside its native id: what maps the ids where glibc's own record
  // of a thread is not in memory (ThreadIds::addHandles).
  std::map<uint64_t, int64_t> handles;
  for (const uint64_t tstate : states) {
    const auto own = static_cast<int64_t>(mem_.read<uint64_t>(tstate + l.thread_state_native_thread_id, "a Python thread state"));
    const uint64_t handle = mem_.read<uint64_t>(tstate + l.thread_state_thread_id, "a Python thread state");
    auto [at, added] = handles.emplace(handle, own);
    if (!added && at->second != own) at->second = 0;  // two ids: the pthread_t tells nothing
  }
  mem_.threadIds().addHandles(handles);
  threads_.emplace();
  for (const uint64_t tstate : states) threads_->push_back(readThread(tstate));
  return *threads_;
}

const PythonThread* PythonView::thread(int64_t tid) const {
  for (const PythonThread& t : threads())
    if (t.tid == tid) return &t;
  return nullptr;
}

const PythonFrame* PythonView::innermostFrame(int64_t tid) const {
  const PythonThread* t = thread(tid);
  return t && !t->frames.empty() && t->frames.front().corrupt.empty() ? &t->frames.front() : nullptr;
}

std::optional<PythonFunction> PythonView::function(uint64_t object) const {
  if (typeName(object) != "function") return std::nullopt;
  const PythonLayout& l = layout_;
  PythonFunction f;
  f.qualname = unicode(mem_.readPointer(object + l.function_qualname, "a Python function"), "function's qualname");
  const uint64_t module = mem_.readPointer(object + l.function_module, "a Python function");
  if (module && typeName(module) == "str") f.module = unicode(module, "function's module");
  f.code = mem_.readPointer(object + l.function_code, "a Python function");
  const Code& c = code(f.code);
  f.file = c.file;
  f.first_line = c.first_line;
  return f;
}

}  // namespace dscope::inspect
