#include "source/python/PythonLayout.h"

#include <cstring>
#include <memory>
#include <mutex>

#include "model/Profile.h"
#include "source/c10/TorchProfile.h"
#include "target/Remote.h"
#include "target/TargetImage.h"

namespace dscope::inspect {

std::vector<std::pair<const char*, uint64_t>> PythonLayout::values() const {
  std::vector<std::pair<const char*, uint64_t>> out;
#define DSCOPE_PY_VALUE(name) out.emplace_back(#name, name);
  DSCOPE_PY_DEBUG_OFFSETS(DSCOPE_PY_VALUE)
  DSCOPE_PY_CONTRACT_VALUES(DSCOPE_PY_VALUE)
#undef DSCOPE_PY_VALUE
  return out;
}

bool optionalPythonValue(const std::string& name) {
  return name == "cframe_current_frame" || name == "interpreter_frame_is_entry" || name == "frame_owner_hidden_from";
}

namespace {

// A minor version's _Py_DebugOffsets contract: where the struct keeps each value it publishes
// (offsetof(_Py_DebugOffsets, ...), measured by python_probe.c against that version's headers), and
// the values it does not publish. The tests hold both against the probe run on each version's
// headers (tests/python).
struct DebugOffsetsContract {
  uint64_t version;  // PY_VERSION_HEX >> 16: 0x030d for 3.13
  struct Places {
#define DSCOPE_PY_PLACE(name) uint64_t name;
    DSCOPE_PY_DEBUG_OFFSETS(DSCOPE_PY_PLACE)
#undef DSCOPE_PY_PLACE
  } places;
  uint64_t free_threaded;  // where the struct says whether the build is free-threaded
  PythonLayout constants;  // only DSCOPE_PY_CONTRACT_VALUES set
};

PythonLayout contractValues(uint64_t cstack, uint64_t tag_bits) {
  PythonLayout l;
  l.frame_owner_hidden_from = cstack;
  l.executable_tag_bits = tag_bits;
  l.sizeof_PyCompactUnicodeObject = 56;
  l.function_code = 48, l.function_qualname = 40, l.function_module = 104;
  return l;
}

const DebugOffsetsContract kContracts[] = {
    {0x030d,
     {40, 64, 72, 168, 200, 192, 184, 232, 240, 248, 264, 280, 288, 296, 304, 312, 344, 360, 376, 520, 528, 552, 544, 560},
     16, contractValues(3, 0)},
    {0x030e,
     {40, 64, 72, 192, 224, 216, 208, 256, 264, 272, 288, 320, 328, 336, 344, 352, 384, 408, 424, 600, 608, 632, 624, 640},
     16, contractValues(3, 3)},
};

constexpr char kCookie[8] = {'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'};
// A value's bound: a member offset or a struct size of the interpreter (the largest, a
// PyInterpreterState member, is near 8 000 in 3.14).
constexpr uint64_t kMaxPythonOffset = 1u << 16;

std::string versionText(uint64_t hex) {
  return std::to_string(hex >> 24) + "." + std::to_string((hex >> 16) & 0xff) + "." + std::to_string((hex >> 8) & 0xff);
}

// Every value present and in range, the optional ones excepted: what both sources are checked by.
void checkLayout(const PythonLayout& l, const std::string& origin) {
  for (const auto& [name, value] : l.values()) {
    if (value == kAbsentValue && optionalPythonValue(name)) continue;
    if (value == kAbsentValue) fail(origin + " has no " + name);
    if (value >= kMaxPythonOffset) fail(origin + " is unusable: its " + name + " is " + std::to_string(value));
  }
  if (l.thread_state_current_frame == kAbsentValue || l.interpreter_frame_previous == l.interpreter_frame_executable)
    fail(origin + " is unusable: its frame offsets coincide");
}

ResolvedPython fromDebugOffsets(const Remote& mem, uint64_t runtime) {
  const uint64_t hex = mem.read<uint64_t>(runtime + 8, "the interpreter's _Py_DebugOffsets");
  const std::string version = versionText(hex);
  const DebugOffsetsContract* contract = nullptr;
  for (const auto& c : kContracts)
    if (c.version == hex >> 16) contract = &c;
  if (!contract)
    fail("Python " + version + " publishes _Py_DebugOffsets of a layout this dscope does not know (it knows 3.13 and 3.14)");
  const std::string origin = "Python " + version + "'s _Py_DebugOffsets";
  // The whole struct at once: every value is one word of it.
  uint64_t words[128] = {};
  static_assert(sizeof(words) > 640 + 8);
  mem.read(runtime, words, sizeof(words), "the interpreter's _Py_DebugOffsets");
  const auto word = [&](uint64_t place) { return words[place / 8]; };
  if (word(contract->free_threaded) != 0)
    fail("Python " + version + " is a free-threaded build, which python-bt does not read yet");
  ResolvedPython r{contract->constants, version, origin + " (contract " + versionText(hex).substr(0, version.rfind('.')) + ")", {}};
#define DSCOPE_PY_READ(name) \
  r.layout.name = word(contract->places.name), r.places.emplace_back("debug_offset_" #name, contract->places.name);
  DSCOPE_PY_DEBUG_OFFSETS(DSCOPE_PY_READ)
#undef DSCOPE_PY_READ
  r.places.emplace_back("debug_offset_free_threaded", contract->free_threaded);
  checkLayout(r.layout, origin);
  return r;
}

// A 3.11 (or 3.12) interpreter's profile: "<build-id>.profile" of runtime "cpython" in the profile
// directories (TorchProfile.h), parsed once per file version.
std::shared_ptr<const ResolvedPython> findPythonProfile(const std::string& build_id) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<ProfileFileVersion, std::shared_ptr<const ResolvedPython>>> parsed;
  const auto file = findProfileFile(build_id);
  if (!file) return nullptr;
  std::lock_guard lock(mutex);
  if (auto it = parsed.find(file->path); it != parsed.end() && it->second.first == file->version) return it->second.second;
  auto r = std::make_shared<const ResolvedPython>(
      pythonProfileLayout(readProfileText(file->path), "the layout profile " + file->path, build_id));
  parsed[file->path] = {file->version, r};
  return r;
}

}  // namespace

ResolvedPython pythonProfileLayout(const std::string& text, const std::string& origin, const std::string& build_id) {
  ProfileNeeds needs;
  needs.runtime = "cpython";
  needs.key_table = false;
  needs.build_ids = {"python"};
  const PythonLayout names;
  for (const auto& [name, value] : names.values())
    if (!optionalPythonValue(name)) needs.values.push_back(name);
  const Profile p = parseProfile(text, origin, " (regenerate it with dscope-python-profile)", needs);
  ResolvedPython r;
  r.version = p.version;
  r.origin = origin;
#define DSCOPE_PY_PROFILE(name) \
  if (auto it = p.values.find(#name); it != p.values.end()) r.layout.name = it->second;
  DSCOPE_PY_DEBUG_OFFSETS(DSCOPE_PY_PROFILE)
  DSCOPE_PY_CONTRACT_VALUES(DSCOPE_PY_PROFILE)
#undef DSCOPE_PY_PROFILE
  if (p.build_ids.at("python") != build_id) p.refuse("it is for build-id " + p.build_ids.at("python") + ", not " + build_id);
  checkLayout(r.layout, origin);
  return r;
}

ResolvedPython resolvePythonLayout(const Remote& mem, uint64_t runtime, const std::string& file) {
  char cookie[8];
  mem.read(runtime, cookie, sizeof cookie, "the interpreter's _PyRuntime");
  if (std::memcmp(cookie, kCookie, sizeof cookie) == 0) return fromDebugOffsets(mem, runtime);
  const std::string id = fileBuildId(file);
  if (id.empty()) fail("cannot read the build-id of " + file + ", the Python interpreter");
  if (auto profile = findPythonProfile(id)) return *profile;
  fail("no layout profile for this Python (" + file + ", build-id " + id +
       ", which publishes no _Py_DebugOffsets); run dscope-python-profile where it is installed, or copy its " + id +
       ".profile into " + (profileDirectories().empty() ? std::string("a profile directory") : profileDirectories().back()));
}

}  // namespace dscope::inspect
