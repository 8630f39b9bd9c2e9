// Helpers shared by the unit tests: reading the real PyTorch outputs in shared/data, and an
// in-process dscope_target for the tests of libdscope_inspect.
#pragma once

#include <dlfcn.h>
#include <link.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "dscope/DebugInterface.h"
#include "dscope/inspect.h"

namespace dscope::testing {

inline std::string readSharedFile(const std::string& relative) {
  std::ifstream in(std::string(DSCOPE_SHARED_DIR) + "/" + relative);
  REQUIRE_MESSAGE(in, "cannot open shared/" << relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The sections of torch-2.11-dump-examples.txt: "_dispatch_dump('aten::mm')" -> its lines.
inline std::map<std::string, std::vector<std::string>> dumpExampleSections() {
  std::map<std::string, std::vector<std::string>> sections;
  std::string current;
  for (const auto& line : splitLines(readSharedFile("data/torch-2.11-dump-examples.txt"))) {
    if (line.rfind("===== ", 0) == 0) {
      current = line.substr(6);
      sections[current];
    } else if (!current.empty() && !line.empty()) {
      sections[current].push_back(line);
    }
  }
  return sections;
}

// The message of the exception f throws, or "(no error)".
inline std::string errorOf(auto&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

inline std::string joinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// ---------------------------------------------------------------- libdscope_inspect in-process
// A dscope_target whose reads copy this test's own memory, for the tests of libdscope_inspect
// (test_inspect.cpp, test_summary.cpp): expected values come from the runtime's own in-process
// API, never from the library's output.

struct TestTarget {
  dscope_target t{};
  std::map<std::string, uint64_t> symbol_overrides;  // e.g. a fake descriptor
  bool reads_fail = false;
  bool writable = true;

  TestTarget() {
    t.ctx = this;
    t.read_memory = &read;
    t.write_memory = &write;
    t.find_symbol = &findSymbol;
    t.module_at = &moduleAt;
    t.selected_tid = static_cast<int64_t>(::syscall(SYS_gettid));
  }
  const dscope_target* get() {
    t.write_memory = writable ? &write : nullptr;
    return &t;
  }

  // A copy of our own memory. Through process_vm_readv rather than memcpy so that a bad address
  // fails instead of crashing, and ASan does not flag the page-bounded chunks of string reads.
  static int read(void* ctx, uint64_t addr, void* out, uint64_t size) {
    if (static_cast<TestTarget*>(ctx)->reads_fail) return 1;
    iovec local{out, size}, remote{reinterpret_cast<void*>(addr), size};
    ssize_t n = ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0);
    if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
      std::memcpy(out, reinterpret_cast<const void*>(addr), size);
      return 0;
    }
    return n == static_cast<ssize_t>(size) ? 0 : 1;
  }
  static int write(void*, uint64_t addr, const void* data, uint64_t size) {
    std::memcpy(reinterpret_cast<void*>(addr), data, size);
    return 0;
  }
  static int findSymbol(void* ctx, const char* name, uint64_t* addr) {
    auto* self = static_cast<TestTarget*>(ctx);
    if (auto it = self->symbol_overrides.find(name); it != self->symbol_overrides.end()) {
      *addr = it->second;
      return 0;
    }
    void* p = ::dlsym(RTLD_DEFAULT, name);
    if (!p) return 1;
    *addr = reinterpret_cast<uint64_t>(p);
    return 0;
  }
  // This process's modules (the test program, the runtime, libc, ...), from the dynamic linker.
  static int moduleAt(void*, uint64_t index, uint64_t* start, char* path, uint64_t path_size) {
    struct Walk {
      uint64_t want, seen = 0, start = 0;
      std::string path;
      bool found = false;
    } walk{index};
    ::dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* arg) {
          auto* w = static_cast<Walk*>(arg);
          if (w->seen++ != w->want) return 0;
          // The main program's name is "": /proc/self/exe is its file.
          w->path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
          for (int i = 0; i < info->dlpi_phnum; ++i)
            if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_offset == 0)
              w->start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
          w->found = true;
          return 1;
        },
        &walk);
    if (!walk.found) return 1;
    *start = walk.start;
    std::snprintf(path, path_size, "%s", walk.start ? walk.path.c_str() : "");
    return 0;
  }
};

struct Result {
  std::string text;
  bool error = false;
};

// What an entry point of the ABI answered: its string (freed here) and its is_error.
inline Result taken(char* out, int is_error) {
  REQUIRE(out);
  Result r{out, is_error == 1};
  dscope_inspect_free(out);
  REQUIRE((is_error == 0 || is_error == 1));
  return r;
}

inline Result run(const dscope_target* target, const std::string& line) {
  int is_error = -1;
  char* out = dscope_inspect_run(target, line.c_str(), &is_error);
  return taken(out, is_error);
}
inline Result run(TestTarget& t, const std::string& line) { return run(t.get(), line); }

// A user command's usage line (dscope_inspect_usage).
inline Result usageOf(const std::string& command) {
  int is_error = -1;
  char* out = dscope_inspect_usage(command.c_str(), &is_error);
  return taken(out, is_error);
}
// The runtime keys starting with prefix (dscope_inspect_complete_keys).
inline std::string keyNames(const std::string& prefix) { return taken(dscope_inspect_complete_keys(nullptr, prefix.c_str()), 0).text; }

// A value of a type of the value printers' table (its C++ or short name) as a front end describes
// it: a value type by its bits (word), anything else as the object at address word.
inline dscope_value valueOf(const std::string& type, uint64_t word) {
  dscope_value v{};
  bool by_bits = false;
  for (uint64_t i = 0; const dscope_value_type* row = dscope_value_type_at(i); ++i)
    by_bits = by_bits || ((type == row->type_name || type == row->summary_type) && row->word_size);
  v.kind = by_bits ? DSCOPE_KIND_INTEGER : DSCOPE_KIND_OBJECT;
  (by_bits ? v.bits : v.address) = word;
  std::snprintf(v.type, sizeof v.type, "%s", type.c_str());
  return v;
}

// dscope_value_summary's answer for valueOf(type, word): its line and a newline, or (json) the
// line and the children written as one JSON object, {"summary", "children": [{"name", "summary",
// ["type", "word" (hex) | "elements"]}]}, so a check reads as one string.
inline Result summaryOf(const dscope_target* target, const std::string& type, uint64_t word, bool json = false) {
  const dscope_value v = valueOf(type, word);
  dscope_summary* s = dscope_value_summary(target, &v);
  REQUIRE(s);
  Result r{std::string(s->text) + "\n", s->is_error != 0};
  REQUIRE((s->child_count == 0 || !r.error));
  if (json && !r.error) {
    auto quoted = [](const std::string& text) { return "\"" + text + "\""; };  // no quotes in these texts
    r.text = "{\"summary\":" + quoted(s->text) + ",\"children\":[";
    for (uint64_t i = 0; i < s->child_count; ++i) {
      const dscope_value_child& c = s->children[i];
      r.text += std::string(i ? "," : "") + "{\"name\":" + quoted(c.name) + ",\"summary\":" + quoted(c.summary);
      if (c.type) r.text += ",\"type\":" + quoted(c.type);
      if (c.type && std::string(c.type) == "int64[]") {
        r.text += ",\"elements\":[";
        for (uint64_t e = 0; e < c.element_count; ++e) r.text += (e ? "," : "") + std::to_string(c.elements[e]);
        r.text += "]";
      } else if (c.type) {
        char hex[24];
        std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(c.word));
        r.text += ",\"word\":" + quoted(hex);
      }
      r.text += "}";
    }
    r.text += "]}\n";
  }
  dscope_summary_free(s);
  return r;
}
inline Result summaryOf(TestTarget& t, const std::string& type, uint64_t word, bool json = false) {
  return summaryOf(t.get(), type, word, json);
}

// One debugger session's dispatch breakpoints (dscope_breaks_*), as a front end holds them.
struct Breaks {
  dscope_breaks* table = dscope_breaks_new();
  Breaks() { REQUIRE(table); }
  ~Breaks() { dscope_breaks_free(table); }
  Breaks(const Breaks&) = delete;
  Breaks& operator=(const Breaks&) = delete;

  // The user's `dispatch-break ARGUMENTS`.
  Result command(const dscope_target* target, const std::string& arguments) {
    int is_error = -1;
    char* out = dscope_breaks_command(table, target, arguments.c_str(), &is_error);
    return taken(out, is_error);
  }
  Result command(TestTarget& t, const std::string& arguments) { return command(t.get(), arguments); }
  Result arm(TestTarget& t) {
    int is_error = -1;
    char* out = dscope_breaks_arm(table, t.get(), &is_error);
    return taken(out, is_error);
  }
  int count() const { return dscope_breaks_count(table); }
};

// A stop at dscope_debug_break_hook(op, keyset, key, dispatch) as a front end reports it: the
// registers at the hook's first instruction (the target must resolve the hook's symbol to `pc`).
inline Result breakStop(const dscope_target* target, const void* op, uint64_t keyset, uint64_t key, uint64_t dispatch = 0,
                        uint64_t pc = reinterpret_cast<uint64_t>(&dscope_debug_break_hook)) {
  dscope_breaks* table = dscope_breaks_new();
  const dscope_stop_registers registers{0, pc, 0, {reinterpret_cast<uint64_t>(op), keyset, key, dispatch, 0, 0}};
  int is_error = -1, stop = -1;
  char* out = dscope_breaks_hit(table, target, &registers, &stop, &is_error);
  dscope_breaks_free(table);
  if (!is_error) CHECK(stop == 1);
  return taken(out, is_error);
}
// Its first line.
inline std::string breakStopLine(const dscope_target* target, const void* op, uint64_t keyset, uint64_t key) {
  const std::string text = breakStop(target, op, keyset, key).text;
  return text.substr(0, text.find('\n') + 1);
}

// The error contract: one line starting with "dscope: ".
inline void checkOneLineError(const Result& r) {
  CHECK(r.error);
  CHECK(r.text.rfind("dscope: ", 0) == 0);
  CHECK(r.text.find('\n') == r.text.size() - 1);
}

// A strict JSON syntax check (objects, arrays, strings, numbers, literals), enough to know that
// what --json prints parses.
class JsonChecker {
 public:
  static bool valid(const std::string& s) {
    JsonChecker c{s};
    c.ws();
    if (!c.value()) return false;
    c.ws();
    return c.i == s.size();
  }

 private:
  explicit JsonChecker(const std::string& s) : s(s) {}
  const std::string& s;
  size_t i = 0;
  void ws() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool lit(const char* w) {
    size_t n = std::strlen(w);
    if (s.compare(i, n, w) != 0) return false;
    i += n;
    return true;
  }
  bool string() {
    if (s[i] != '"') return false;
    for (++i; i < s.size(); ++i) {
      if (s[i] == '"') return ++i, true;
      if (static_cast<unsigned char>(s[i]) < 0x20) return false;
      if (s[i] == '\\') ++i;
    }
    return false;
  }
  bool number() {
    size_t start = i;
    if (s[i] == '-') ++i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e')) ++i;
    return i > start;
  }
  bool value() {
    if (i >= s.size()) return false;
    char c = s[i];
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      ++i;
      ws();
      if (s[i] == close) return ++i, true;
      for (;;) {
        ws();
        if (c == '{') {
          if (!string()) return false;
          ws();
          if (s[i++] != ':') return false;
          ws();
        }
        if (!value()) return false;
        ws();
        if (s[i] == ',') { ++i; continue; }
        if (s[i] == close) return ++i, true;
        return false;
      }
    }
    if (c == '"') return string();
    return lit("true") || lit("false") || lit("null") || number();
  }
};

}  // namespace dscope::testing

// doctest stringifies with an unqualified toString(), which finds dscope::toString by ADL and
// fails to compile; so CHECKs compare dscope enums and key sets inside double parentheses (no
// decomposition) or compare their raw values / strings.
