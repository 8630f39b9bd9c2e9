// A layout profile (docs/DEBUG-INTERFACE.md §9): how to read one build of a c10 dispatcher from
// outside, in the one text schema both sources use. A real PyTorch build's profile is a file
// (profiles/<build-id>.profile, written by profiles/probe); our runtime's is text its descriptor
// carries (written at build time by runtime/tools/write_profile.cpp). Both state named values
// (offsets, sizes, counts, key sets) and the key table, the key table by the same code
// (profiles/probe/key_table.h). One parser reads both: it checks the text, its digest, the
// counts, the ranges and the key table by c10's rules, and the names the source needs, before
// anything uses the profile.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
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

struct Profile {
  std::string origin;  // "the layout profile PATH": what a refusal names
  std::string remedy;  // what a refusal ends with: " (regenerate it with dscope-profile)"
  std::string runtime;  // "c10" or "dscope"
  std::string version;
  std::map<std::string, std::string> build_ids;  // "libtorch_cpu" -> hex
  std::map<std::string, std::string> symbols;    // role -> mangled name
  // Offsets, sizes, counts, sets, by name.
  std::unordered_map<std::string, uint64_t, StringHash, std::equal_to<>> values;
  // Name tables, "name TABLE VALUE TEXT" lines: an enum's names as the build spells them
  // ("TypeKind", "IValueTag", "AliasAnalysisKind") and the fixed str() of types ("TypeStr").
  std::map<std::string, std::map<uint64_t, std::string>> names;
  std::vector<std::string> backend_names;  // "CPUBit", ... by backend bit
  KeyTable keys;

  // A named value; InspectError naming the profile when it lacks one.
  uint64_t at(std::string_view name) const;
  const std::string& symbol(const std::string& role) const;
  // A name table's text for value, or nullptr; the value of a name in a table, or InspectError.
  const std::string* nameOf(const std::string& table, uint64_t value) const;
  uint64_t valueNamed(const std::string& table, const std::string& name) const;
  // InspectError: "ORIGIN is unusable: WHY REMEDY".
  [[noreturn]] void refuse(const std::string& why) const;
};

// What a source reads of a profile, checked when it loads: its runtime ("c10", "dscope"), the
// values, symbols, build-ids and name-table entries it looks up, and its own check of the
// layout (offsets inside the structs they index), run after the ranges and before the keys.
struct ProfileNeeds {
  std::string runtime;
  std::vector<std::string_view> values, symbols, build_ids;
  std::vector<std::pair<std::string_view, std::string_view>> names;  // table, name
  std::function<void(const Profile&)> check_layout;
  // Whether the runtime has a key table (a dispatcher's profile; an interpreter's has none).
  bool key_table = true;
};

// Parses and checks a profile's whole text (its digest line included): InspectError
// "ORIGIN is unusable: ..." when it is not a well-formed profile of needs.runtime with every
// name needs lists and a key table consistent with its counts and c10's rules.
Profile parseProfile(const std::string& bytes, const std::string& origin, const std::string& remedy, const ProfileNeeds& needs);

// Bounds on what a profile may say; anything beyond is a damaged text, refused before use.
constexpr uint64_t kMaxProfileBytes = 1u << 20;  // a profile is ~12 KB
constexpr uint64_t kMaxProfileOffset = 1u << 16;  // a member offset or a struct size

}  // namespace dscope::inspect
