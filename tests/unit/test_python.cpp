// The CPython reader's parts that need no Python process (source/python/; its reads of a real
// process are tests/python's):
//  * the location-table decoder (pythonLineAt) over real tables of CPython 3.11, 3.13 and 3.14,
//    each code unit's line as CPython's own co_lines() gives it (python_line_tables.inc, written by
//    gen_python_line_tables.py; the tables hold every kind of entry);
//  * a cpython layout profile refused in one line when it lacks a value, fails its digest, lists
//    dispatch keys, names another runtime or another build-id (the shipped 3.11 profile, edited
//    and sealed again as dscope-python-profile seals one);
//  * _Py_DebugOffsets refused in one line: an unknown version, a free-threaded build, values that
//    cannot be a layout, a wrong cookie (no debug offsets: the interpreter's build-id and its
//    profile then) — a block in this test's own memory read through a Remote (TestTarget).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dscope/DebugInterface.h"
#include "source/python/PythonLayout.h"
#include "source/python/PythonView.h"
#include "target/Remote.h"
#include "target/TargetImage.h"
#include "test_util.h"

using namespace dscope::inspect;
using dscope::testing::errorOf;
using dscope::testing::TestTarget;

namespace {

struct LineTable {
  const char* python;  // the interpreter that compiled it
  const char* name;    // co_qualname
  int64_t first_line;  // co_firstlineno
  const char* table;   // co_linetable, hex
  std::vector<int64_t> lines;  // each code unit's line (co_lines; -1: None)
};

const std::vector<LineTable>& lineTables() {
  static const std::vector<LineTable> tables = {
#include "python_line_tables.inc"
  };
  return tables;
}

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

// One line: "dscope: " and no newline inside.
bool oneLine(const std::string& message) {
  return message.rfind("dscope: ", 0) == 0 && message.find('\n') == std::string::npos;
}

// ------------------------------------------------------------------ profiles

const char* const kBuildId = "571d98e01096d5c1c32420d229a6731a0a50d2a0";  // Debian 12's python3.11
const char* const kOrigin = "the layout profile TEST";

std::string shippedProfile() {
  std::ifstream in(std::string(DSCOPE_SOURCE_DIR) + "/profiles/" + kBuildId + ".profile");
  REQUIRE_MESSAGE(in, "cannot open profiles/" << kBuildId << ".profile");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text without its digest line, and the text sealed with the digest the tools write.
std::string unsealed(const std::string& profile) {
  const size_t digest = profile.rfind("digest fnv1a64 ");
  REQUIRE(digest != std::string::npos);
  return profile.substr(0, digest);
}
std::string sealed(const std::string& text) {
  char line[64];
  std::snprintf(line, sizeof line, "digest fnv1a64 0x%016llx\n", static_cast<unsigned long long>(dscope_fnv1a64(text.c_str())));
  return text + line;
}

// The profile's "NAME VALUE" lines: what the probe measured.
std::map<std::string, uint64_t> profileValues(const std::string& profile) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(unsealed(profile));
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string name, value, extra;
    if (words >> name >> value && !(words >> extra) && name != "dscope-profile" && name != "runtime" && name != "version")
      out[name] = std::stoull(value);
  }
  return out;
}

std::string refusalOf(const std::string& profile, const std::string& build_id = kBuildId) {
  return errorOf([&] { pythonProfileLayout(profile, kOrigin, build_id); });
}

// ------------------------------------------------------------------ _Py_DebugOffsets

// The start of a _PyRuntime as 3.13+ lays it out: _Py_DebugOffsets (cookie, PY_VERSION_HEX, then
// free_threaded at 16 in 3.13 and 3.14, then the offsets), here all of it the test's to write.
struct FakeRuntime {
  alignas(8) unsigned char bytes[2048] = {};
  FakeRuntime(const char* cookie, uint64_t version_hex, uint64_t free_threaded = 0) {
    std::memcpy(bytes, cookie, 8);
    std::memcpy(bytes + 8, &version_hex, 8);
    std::memcpy(bytes + 16, &free_threaded, 8);
  }
  void word(uint64_t at, uint64_t value) { std::memcpy(bytes + at, &value, 8); }
  uint64_t address() const { return reinterpret_cast<uint64_t>(bytes); }
};

std::string resolveError(const FakeRuntime& runtime, const std::string& file = "/nonexistent/python3") {
  TestTarget t;
  const Remote mem(t.get());
  return errorOf([&] { resolvePythonLayout(mem, runtime.address(), file); });
}

// DSCOPE_PROFILE_PATH set for one scope (the profile directories, TorchProfile.h).
struct ProfilePath {
  std::string old;
  bool had;
  explicit ProfilePath(const std::string& dirs) : had(std::getenv("DSCOPE_PROFILE_PATH") != nullptr) {
    if (had) old = std::getenv("DSCOPE_PROFILE_PATH");
    setenv("DSCOPE_PROFILE_PATH", dirs.c_str(), 1);
  }
  ~ProfilePath() {
    if (had) setenv("DSCOPE_PROFILE_PATH", old.c_str(), 1);
    else unsetenv("DSCOPE_PROFILE_PATH");
  }
};

}  // namespace

TEST_SUITE("python") {
  TEST_CASE("pythonLineAt: every code unit's line as CPython's co_lines() gives it, for 3.11, 3.13 and 3.14") {
    std::map<std::string, size_t> units_by_python;
    for (const LineTable& t : lineTables()) {
      const std::string table = unhex(t.table);
      REQUIRE(table.size() * 2 == std::strlen(t.table));
      for (size_t unit = 0; unit < t.lines.size(); ++unit) {
        INFO("Python " << t.python << ", " << t.name << " (first line " << t.first_line << "), code unit " << unit);
        CHECK(pythonLineAt(table, t.first_line, static_cast<int64_t>(2 * unit)) == t.lines[unit]);
      }
      units_by_python[t.python] += t.lines.size();
      // Past the table's last entry there is no location (our convention: -1, as for None).
      CHECK(pythonLineAt(table, t.first_line, static_cast<int64_t>(2 * t.lines.size())) == -1);
    }
    // The data holds all three versions, with real amounts of code.
    REQUIRE(units_by_python.size() == 3);
    for (const auto& entry : units_by_python) {  // no structured binding: clang 14 captures none in INFO
      INFO("Python " << entry.first);
      CHECK(entry.second > 300);
    }
  }

  TEST_CASE("pythonLineAt: an empty, a cut or a damaged table ends the walk: -1 or a line, never past the bytes") {
    CHECK(pythonLineAt("", 10, 0) == -1);
    CHECK(pythonLineAt("", 10, -2) == -1);
    for (const LineTable& t : lineTables()) {
      const std::string table = unhex(t.table);
      for (size_t cut = 0; cut < table.size(); cut += 3) {
        std::string part = table.substr(0, cut);
        for (size_t unit = 0; unit <= t.lines.size(); unit += 5) (void)pythonLineAt(part, t.first_line, static_cast<int64_t>(2 * unit));
        // A varint whose continuation bits never end (every byte 0x7f after a long-form head).
        part += "\xf0" + std::string(40, '\x7f');
        (void)pythonLineAt(part, t.first_line, 1 << 20);
      }
    }
  }

  TEST_CASE("a cpython profile: the shipped 3.11 one reads as its lines say") {
    const std::string profile = shippedProfile();
    const ResolvedPython r = pythonProfileLayout(profile, kOrigin, kBuildId);
    CHECK(r.version == "3.11.2");
    CHECK(r.origin == kOrigin);
    CHECK(r.places.empty());
    const auto want = profileValues(profile);
    size_t compared = 0;
    for (const auto& entry : r.layout.values()) {
      const char* name = entry.first;
      const uint64_t value = entry.second;
      INFO(name);
      if (auto it = want.find(name); it != want.end()) {
        CHECK(value == it->second);
        ++compared;
      } else {
        CHECK((value == kAbsentValue && optionalPythonValue(name)));
      }
    }
    CHECK(compared == want.size());
  }

  TEST_CASE("a cpython profile is refused in one line: a value missing, a bad digest, dispatch keys, another runtime or build") {
    const std::string profile = shippedProfile(), text = unsealed(profile);
    const std::string prefix = std::string("dscope: ") + kOrigin + " is unusable: ";
    const std::string remedy = " (regenerate it with dscope-python-profile)";
    REQUIRE(refusalOf(profile) == "(no error)");

    // A value the reader needs, gone (the profile sealed again, as an older probe would write it).
    const std::string line = "code_object_linetable 136\n";
    REQUIRE(text.find(line) != std::string::npos);
    std::string less = text;
    less.erase(less.find(line), line.size());
    CHECK(refusalOf(sealed(less)) == prefix + "it has no 'code_object_linetable' (cut short, or of another schema)" + remedy);
    // An optional one may be missing: 3.11's profile has no frame_owner_hidden_from at all.
    CHECK(text.find("frame_owner_hidden_from") == std::string::npos);

    // One value edited, the digest left: the digest refuses it.
    std::string edited = profile;
    edited.replace(edited.find(line), line.size(), "code_object_linetable 144\n");
    CHECK(refusalOf(edited) == prefix + "its digest does not match its contents (edited or damaged)" + remedy);
    // Cut short: no digest line at all.
    CHECK(refusalOf(text) == prefix + "it does not end with its digest line (cut short, or written by an older dscope-profile)" + remedy);

    // Dispatch keys in an interpreter's profile (a key line, a runtime-keys line), sealed.
    CHECK(refusalOf(sealed(text + "key 0 Undefined bits=0x0 slot=-1\n")) ==
          prefix + "it lists dispatch keys, which a cpython profile has none of" + remedy);
    CHECK(refusalOf(sealed(text + "runtime-keys 0\n")) == prefix + "it lists dispatch keys, which a cpython profile has none of" + remedy);

    // Another runtime's profile, and this one for another interpreter build.
    std::string c10 = text;
    c10.replace(c10.find("runtime cpython"), std::strlen("runtime cpython"), "runtime c10");
    CHECK(refusalOf(sealed(c10)) == prefix + "it describes runtime 'c10', not cpython" + remedy);
    const std::string other = "0123456789abcdef0123456789abcdef01234567";
    CHECK(refusalOf(profile, other) == prefix + "it is for build-id " + kBuildId + ", not " + other + remedy);

    // A value out of any struct's range.
    std::string far = text;
    far.replace(far.find(line), line.size(), "code_object_linetable 70000\n");
    CHECK(refusalOf(sealed(far)) == prefix + "code_object_linetable 70000 is out of range" + remedy);

    for (const auto& message : {refusalOf(sealed(less)), refusalOf(edited), refusalOf(sealed(c10)), refusalOf(profile, other)})
      CHECK(oneLine(message));
  }

  TEST_CASE("_Py_DebugOffsets is refused in one line: an unknown version, a free-threaded build, no layout") {
    // 3.12 publishes none and 3.15 one this dscope does not know: either is refused by its version.
    CHECK(resolveError(FakeRuntime("xdebugpy", 0x030c04f0)) ==
          "dscope: Python 3.12.4 publishes _Py_DebugOffsets of a layout this dscope does not know (it knows 3.13 and 3.14)");
    CHECK(resolveError(FakeRuntime("xdebugpy", 0x030f00a1)) ==
          "dscope: Python 3.15.0 publishes _Py_DebugOffsets of a layout this dscope does not know (it knows 3.13 and 3.14)");
    // A free-threaded build (its free_threaded word set): its thread states differ.
    CHECK(resolveError(FakeRuntime("xdebugpy", 0x030d05f0, 1)) ==
          "dscope: Python 3.13.5 is a free-threaded build, which python-bt does not read yet");
    CHECK(resolveError(FakeRuntime("xdebugpy", 0x030e00f0, 1)) ==
          "dscope: Python 3.14.0 is a free-threaded build, which python-bt does not read yet");
    // A known version whose offsets are all zero: the frame's offsets coincide.
    CHECK(resolveError(FakeRuntime("xdebugpy", 0x030d05f0)) == "dscope: Python 3.13.5's _Py_DebugOffsets is unusable: its frame offsets coincide");
    // Every word absurd: the first value of the list is refused by its bound.
    FakeRuntime absurd("xdebugpy", 0x030e00f0);
    for (uint64_t at = 24; at < sizeof absurd.bytes; at += 8) absurd.word(at, uint64_t{1} << 40);
    CHECK(resolveError(absurd) == "dscope: Python 3.14.0's _Py_DebugOffsets is unusable: its runtime_state_interpreters_head is 1099511627776");
  }

  TEST_CASE("no _Py_DebugOffsets (a wrong cookie): the interpreter's build-id, then its profile, each refused in one line") {
    const FakeRuntime wrong("xdebugpz", 0x030d05f0);
    // A file without a build-id.
    CHECK(resolveError(wrong) == "dscope: cannot read the build-id of /nonexistent/python3, the Python interpreter");
    // A file with one (this test program) and no profile for it.
    const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    const std::string id = fileBuildId(exe);
    REQUIRE(!id.empty());
    const auto dir = std::filesystem::temp_directory_path() / ("dscope-test-python-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    {
      ProfilePath path(dir.string());
      CHECK(resolveError(wrong, exe) == "dscope: no layout profile for this Python (" + exe + ", build-id " + id +
                                             ", which publishes no _Py_DebugOffsets); run dscope-python-profile where it is installed, "
                                             "or copy its " + id + ".profile into " + dir.string());
      // A profile under its name that is another build's (the shipped 3.11 one, copied).
      const std::string copied = (dir / (id + ".profile")).string();
      std::ofstream(copied) << shippedProfile();
      CHECK(resolveError(wrong, exe) == "dscope: the layout profile " + copied + " is unusable: it is for build-id " + kBuildId +
                                             ", not " + id + " (regenerate it with dscope-python-profile)");
    }
    std::filesystem::remove_all(dir);
  }
}
