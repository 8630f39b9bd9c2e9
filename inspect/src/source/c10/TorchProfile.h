// A layout profile of one real c10 build (docs/DEBUG-INTERFACE.md §9, "c10 profiles"): the file
// profiles/probe/dscope-profile writes from a probe compiled against that build's own headers,
// found by the build-id of its libtorch_cpu. It holds the named offsets and sizes the torch
// reader needs, the exported symbols it looks up, and the build's key table, from which
// KeyTable answers every key-set question in that build's own terms (a 1.13 key set prints as
// PyTorch 1.13 prints it; nothing of the 2.11 mirror's enum applies).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/KeyTable.h"

namespace dscope::inspect {

// A hash of any string type, so that a lookup by a literal or a string_view makes no std::string.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct TorchProfile {
  std::string path;  // the file it was read from, for messages
  std::string version;
  std::map<std::string, std::string> build_ids;  // "libtorch_cpu" -> hex
  std::map<std::string, std::string> symbols;    // role -> mangled name
  // Offsets, sizes, counts, sets: looked up by name for every field a command reads.
  std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>> values;
  // Name tables, "name TABLE VALUE TEXT" lines: an enum's names as the build spells them
  // ("TypeKind", "IValueTag", "AliasAnalysisKind") and the fixed str() of types ("TypeStr").
  std::map<std::string, std::map<uint64_t, std::string>> names;
  std::vector<std::string> backend_names;        // "CPUBit", ... by backend bit
  KeyTable keys;

  // A named value (readTorchProfile checked that every value a reader needs is there);
  // InspectError naming the profile when it lacks one.
  uint64_t at(std::string_view name) const;
  const std::string& symbol(const std::string& role) const;
  // A name table's text for value, or nullptr; the value of a name in a table, or InspectError.
  const std::string* nameOf(const std::string& table, uint64_t value) const;
  uint64_t valueNamed(const std::string& table, const std::string& name) const;
};

// Reads and checks a profile file before anything uses it; InspectError naming the file and what
// is wrong with it. Only a regular file of bounded size is read (never a FIFO or a device); it must
// end with the digest dscope-profile writes, hold every value, symbol and name the readers look up,
// offsets inside the structs they index, and a key table consistent with its counts and c10's
// rules (TorchProfile.cpp, checkLayout and checkKeys).
TorchProfile readTorchProfile(const std::string& path);

// The directories searched for "<build-id>.profile", in order: the installed profiles, the
// source tree's (a build used in place), the per-user cache ($XDG_CACHE_HOME/dscope/profiles,
// where dscope-profile writes); or only those of $DSCOPE_PROFILE_PATH (colon-separated) when set.
std::vector<std::string> profileDirectories();
// The profile of a libtorch_cpu build-id, or null when no directory has one. Read once per file
// version and shared: every command looks its profile up again.
std::shared_ptr<const TorchProfile> findTorchProfile(const std::string& build_id);

}  // namespace dscope::inspect
