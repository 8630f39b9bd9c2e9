#include "model/Profile.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <set>
#include <sstream>

#include "target/Remote.h"
#include "dscope/DebugInterface.h"

namespace dscope::inspect {

namespace {

constexpr const char* kFormat = "dscope-profile 1";
constexpr const char* kDigest = "digest fnv1a64 ";

constexpr uint64_t kMaxKeys = 4096;  // c10's DispatchKey is a uint16_t; builds have ~130
constexpr uint64_t kMaxTableSlots = 4096;
constexpr uint64_t kMaxFromSymbol = uint64_t{1} << 30;  // a static's distance from an exported function in one library
// Keys every c10 has and the readers name (alias keys and the keys the checks rely on).
constexpr const char* kRequiredKeys[] = {"Undefined", "BackendSelect", "ADInplaceOrView", "AutogradOther", "Autograd",
                                         "CompositeImplicitAutograd", "CompositeExplicitAutograd"};

// Where a line-level complaint is: "line 57 ('key -5 CPU ...')".
struct Where {
  const Profile& p;
  size_t line = 0;
  const std::string* text = nullptr;
  [[noreturn]] void bad(const std::string& why) const {
    p.refuse("line " + std::to_string(line) + " ('" + shown(text ? *text : "") + "') " + why);
  }
};

// A decimal or 0x-hexadecimal number no larger than max (no sign, nothing after it).
uint64_t numberIn(const Where& at, const std::string& text, uint64_t max) {
  const bool hex_digits = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* first = text.data() + (hex_digits ? 2 : 0);
  const char* last = text.data() + text.size();
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(first, last, v, hex_digits ? 16 : 10);
  if (text.empty() || ec == std::errc::invalid_argument || end != last || (ec != std::errc() && ec != std::errc::result_out_of_range))
    at.bad("has '" + shown(text) + "', which is not a number");
  if (ec == std::errc::result_out_of_range || v > max)
    at.bad("has " + shown(text) + ", out of range (at most " + std::to_string(max) + ")");
  return v;
}

// "key 43 CPU bits=0x4001 slot=1 in=118,120,121 autograd-backends=0x4001 [alias]"
KeyInfo keyLine(const Where& at, std::istringstream& in) {
  KeyInfo k;
  std::string value, word;
  if (!(in >> value >> k.name)) at.bad("is not 'key VALUE NAME FIELDS...'");
  k.value = static_cast<int>(numberIn(at, value, kMaxKeys - 1));
  std::set<std::string> seen;
  while (in >> word) {
    const auto eq = word.find('=');
    const std::string field = word.substr(0, eq), arg = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (!seen.insert(field).second) at.bad("sets '" + shown(field) + "' twice");
    if (field == "alias" && eq == std::string::npos) k.alias = true;
    else if (field == "bits") k.bits = numberIn(at, arg, UINT64_MAX);
    else if (field == "slot") k.slot = arg == "-1" ? -1 : static_cast<int>(numberIn(at, arg, kMaxTableSlots - 1));
    else if (field == "autograd-backends") k.autograd_backends = numberIn(at, arg, UINT64_MAX);
    else if (field == "in") {
      std::istringstream list(arg);
      for (std::string v; std::getline(list, v, ',');) k.in_aliases.push_back(static_cast<int>(numberIn(at, v, kMaxKeys - 1)));
    } else at.bad("has an unknown key field '" + shown(field) + "'");
  }
  return k;
}

// The text before the digest line, after checking that it is printable ASCII lines ending in
// "digest fnv1a64 0x<FNV-1a 64 of everything before that line>" (dscope-profile writes it):
// a profile cut short, edited or damaged is refused here, whatever it still parses as.
std::string checkedText(const Profile& p, const std::string& bytes) {
  if (bytes.rfind(std::string(kFormat) + "\n", 0) != 0) p.refuse("it does not start with '" + std::string(kFormat) + "'");
  size_t line = 1;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '\n') ++line;
    else if (c < 0x20 || c > 0x7e) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", c);
      p.refuse("line " + std::to_string(line) + " holds byte " + byte + ", which is not printable text");
    }
  }
  if (bytes.empty() || bytes.back() != '\n') p.refuse("its last line is cut short (no newline)");
  const size_t start = bytes.rfind('\n', bytes.size() - 2) + 1;
  const std::string last = bytes.substr(start, bytes.size() - 1 - start);
  if (last.rfind(kDigest, 0) != 0)
    p.refuse("it does not end with its digest line (cut short, or written by an older dscope-profile)");
  std::string text = bytes.substr(0, start);
  char expected[32];
  std::snprintf(expected, sizeof expected, "0x%016llx", static_cast<unsigned long long>(dscope_fnv1a64(text.c_str())));
  if (last.substr(std::strlen(kDigest)) != expected)
    p.refuse("its digest does not match its contents (edited or damaged)");
  return text;
}

bool isName(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

int popcount(uint64_t v) { return __builtin_popcountll(v); }

// Every value within the range its kind of name allows: sizes, offsets, distances from a symbol.
void checkRanges(const Profile& p) {
  // In name order, so that a profile with several bad values is refused for the same one each time.
  for (const auto& [name, v] : std::map<std::string, uint64_t>(p.values.begin(), p.values.end())) {
    const bool size = name.rfind("sizeof_", 0) == 0, count = name.rfind("count_", 0) == 0, set = name.rfind("set_", 0) == 0;
    const bool from_symbol = name.find("_from_") != std::string::npos;
    if (size && (v == 0 || v > kMaxProfileOffset)) p.refuse(name + " is " + std::to_string(v) + " bytes");
    if (from_symbol && v >= kMaxFromSymbol) p.refuse(name + " " + std::to_string(v) + " is out of range");
    if (!size && !count && !set && !from_symbol && v >= kMaxProfileOffset) p.refuse(name + " " + std::to_string(v) + " is out of range");
  }
}

// The key table against itself and the counts (c10's DispatchKeySet rules): every value once,
// each key's bits one functionality bit and at most one backend bit inside the counts, a
// per-backend key named after its backend, runtime keys known and in distinct slots, and the
// default TLS sets c10 builds from named keys.
// The part of a BackendComponent's name that its per-backend keys end with: c10 names most
// components "<backend>Bit" ("CPUBit"), but 2.x's newer ones by the backend alone ("MTIA", "MAIA").
std::string backendSuffix(const std::string& bit_name) {
  const bool bit = bit_name.size() > 3 && bit_name.compare(bit_name.size() - 3, 3, "Bit") == 0;
  return bit ? bit_name.substr(0, bit_name.size() - 3) : bit_name;
}

void checkKeys(const Profile& p, const std::vector<KeyInfo>& keys, const std::vector<int>& runtime_order) {
  const auto bad = [&](const std::string& why) { p.refuse(why); };
  const uint64_t backends = p.at("count_backends"), functionalities = p.at("count_functionality_keys");
  const uint64_t count = p.at("count_dispatch_keys"), slots = p.at("count_table_slots");
  if (p.backend_names.size() != backends)
    bad("it names " + std::to_string(p.backend_names.size()) + " backends, count_backends says " + std::to_string(backends));
  const uint64_t backend_mask = (uint64_t{1} << backends) - 1;
  const uint64_t all_bits = backends + functionalities - 1 == 64 ? ~uint64_t{0} : (uint64_t{1} << (backends + functionalities - 1)) - 1;
  if (p.at("set_full_backend_mask") != backend_mask) bad("set_full_backend_mask is not the " + std::to_string(backends) + " backend bits");
  std::set<std::string> backend_seen;
  for (const auto& b : p.backend_names)
    if (backendSuffix(b).empty() || !isName(b) || !backend_seen.insert(b).second)
      bad("backend name '" + shown(b) + "' is not a distinct c10 BackendComponent name");
  if (keys.size() != count)
    bad("it lists " + std::to_string(keys.size()) + " keys, count_dispatch_keys says " + std::to_string(count) + " (cut short?)");
  std::vector<const KeyInfo*> by_value(count, nullptr);
  std::map<std::string, const KeyInfo*> by_name;
  for (const auto& k : keys) {
    const std::string key = "key " + std::to_string(k.value) + " (" + shown(k.name) + ")";
    if (static_cast<uint64_t>(k.value) >= count) bad(key + " is beyond count_dispatch_keys " + std::to_string(count));
    if (by_value[k.value]) bad("key " + std::to_string(k.value) + " is listed twice");
    by_value[k.value] = &k;
    // Names are distinct, but for the placeholder that starts a per-backend functionality's keys
    // (StartOfDenseBackends, ...): 2.x prints it as its functionality of the Undefined backend, so
    // Dense's is "Undefined" again (1.13 said "Unknown"). Lookups by name keep the first key.
    const bool placeholder = k.bits && !(k.bits & backend_mask) && k.slot >= 0 && by_name.count(k.name);
    if (!isName(k.name) || (!by_name.emplace(k.name, &k).second && !placeholder))
      bad(key + " has a name that is not a distinct key name");
    if (k.slot >= 0 && static_cast<uint64_t>(k.slot) >= slots) bad(key + " has slot " + std::to_string(k.slot) + ", beyond count_table_slots");
    if (k.alias && (k.bits || k.slot >= 0 || !k.in_aliases.empty())) bad(key + " is an alias with bits, a slot or aliases");
    if ((k.bits != 0) != (k.slot >= 0)) bad(key + " has " + (k.bits ? "bits but no slot" : "a slot but no bits"));
    const uint64_t backend = k.bits & backend_mask, functionality = k.bits & ~backend_mask;
    if ((k.bits & ~all_bits) || popcount(backend) > 1 || popcount(functionality) > 1 || (backend && !functionality))
      bad(key + " has bits " + hex(k.bits) + ", not one functionality bit and at most one of the " + std::to_string(backends) +
          " backend bits");
    // An autograd key's backends (getBackendKeySetFromAutograd) are its own backend's keys.
    if ((k.autograd_backends & ~all_bits) || (backend && k.autograd_backends && (k.autograd_backends & backend_mask) != backend))
      bad(key + " has autograd-backends " + hex(k.autograd_backends) + ", not its own backend's");
  }
  for (const auto& k : keys)
    for (int a : k.in_aliases)
      if (static_cast<uint64_t>(a) >= count || !by_value[a] || !by_value[a]->alias)
        bad("key " + k.name + " is in alias " + std::to_string(a) + ", which is no alias key");
  if (by_value[0]->name != "Undefined" || by_value[0]->bits) bad("key 0 is not Undefined");
  for (const char* name : kRequiredKeys)
    if (!by_name.count(name)) bad("its key table has no " + std::string(name) + " (cut short?)");
  // A per-backend key is its functionality's prefix and its backend's name ("QuantizedCPU",
  // "AutogradCUDA", Dense's "CPU"): the suffix is the backend's, the prefix the same for every
  // backend of one functionality and differs between functionalities.
  std::map<uint64_t, std::string> prefix_of;
  std::map<std::string, uint64_t> functionality_of;
  for (const auto& k : keys) {
    const uint64_t backend = k.bits & backend_mask, functionality = k.bits & ~backend_mask;
    if (k.alias || !backend) continue;
    const std::string& bit_name = p.backend_names[__builtin_ctzll(backend)];
    const std::string suffix = backendSuffix(bit_name);
    if (k.name.size() < suffix.size() || k.name.compare(k.name.size() - suffix.size(), suffix.size(), suffix) != 0)
      bad("key " + std::to_string(k.value) + " is named " + k.name + ", but its bits " + hex(k.bits) + " are backend " + bit_name);
    const std::string prefix = k.name.substr(0, k.name.size() - suffix.size());
    const auto [it, fresh] = prefix_of.emplace(functionality, prefix);
    const auto [jt, fresh_prefix] = functionality_of.emplace(prefix, functionality);
    if (it->second != prefix || jt->second != functionality)
      bad("key " + std::to_string(k.value) + " is named " + k.name + ", but its bits " + hex(k.bits) + " name another functionality");
  }
  if (runtime_order.empty() || runtime_order.front() != 0) bad("its runtime-keys do not start with Undefined");
  std::set<int> runtime_seen, slot_seen;
  std::set<uint64_t> bits_seen;
  for (int v : runtime_order) {
    if (static_cast<uint64_t>(v) >= count || !by_value[v] || by_value[v]->alias || !runtime_seen.insert(v).second)
      bad("runtime key " + std::to_string(v) + " is not a distinct runtime key of its key table");
    if (v != 0 && (by_value[v]->slot < 0 || !slot_seen.insert(by_value[v]->slot).second))
      bad("runtime key " + by_value[v]->name + " has no slot of its own");
    if (v != 0 && !bits_seen.insert(by_value[v]->bits).second)
      bad("runtime key " + by_value[v]->name + " has the bits of another runtime key (" + hex(by_value[v]->bits) + ")");
  }
  // c10's default TLS sets: included {BackendSelect, ADInplaceOrView}, excluded every Autocast key.
  uint64_t autocast = 0;
  for (const auto& k : keys)
    if (!k.alias && k.name.rfind("Autocast", 0) == 0) autocast |= k.bits;
  if (p.at("set_default_included") != (by_name["BackendSelect"]->bits | by_name["ADInplaceOrView"]->bits))
    bad("set_default_included " + hex(p.at("set_default_included")) + " is not {BackendSelect, ADInplaceOrView}");
  if (!autocast || p.at("set_default_excluded") != autocast)
    bad("set_default_excluded " + hex(p.at("set_default_excluded")) + " is not the Autocast keys' " + hex(autocast));
  if (p.at("set_autogradother_backends") & ~all_bits) bad("set_autogradother_backends has bits beyond its key set");
}

// The counts everything else is sized by, first: a zero or absurd one is named as such.
void checkCounts(const Profile& p) {
  const auto bad = [&](const std::string& why) { p.refuse(why); };
  const uint64_t backends = p.at("count_backends"), functionalities = p.at("count_functionality_keys");
  const uint64_t count = p.at("count_dispatch_keys"), slots = p.at("count_table_slots");
  if (backends == 0 || functionalities == 0 || backends + functionalities - 1 > 64)
    bad("count_backends " + std::to_string(backends) + " and count_functionality_keys " + std::to_string(functionalities) +
        " do not fit a 64-bit key set");
  if (count == 0 || count > kMaxKeys) bad("count_dispatch_keys is " + std::to_string(count));
  if (slots == 0 || slots > kMaxTableSlots) bad("count_table_slots is " + std::to_string(slots));
}

void checkNeeds(const Profile& p, const ProfileNeeds& needs) {
  for (std::string_view name : needs.values)
    if (!p.values.count(name)) p.refuse("it has no '" + std::string(name) + "' (cut short, or of another schema)");
  for (std::string_view role : needs.symbols)
    if (!p.symbols.count(std::string(role))) p.refuse("it names no symbol for '" + std::string(role) + "'");
  for (std::string_view library : needs.build_ids)
    if (!p.build_ids.count(std::string(library))) p.refuse("it names no " + std::string(library) + " build-id");
  for (const auto& [table, name] : needs.names) {
    bool found = false;
    if (auto t = p.names.find(std::string(table)); t != p.names.end())
      for (const auto& [value, text] : t->second) found = found || text == name;
    if (!found) p.refuse("its " + std::string(table) + " table has no '" + std::string(name) + "'");
  }
}

}  // namespace

uint64_t Profile::at(std::string_view name) const {
  // A reader asks for a value by a literal name for every entry it reads: no string is made.
  auto it = values.find(name);
  if (it == values.end()) refuse("it has no '" + std::string(name) + "'");
  return it->second;
}

const std::string& Profile::symbol(const std::string& role) const {
  auto it = symbols.find(role);
  if (it == symbols.end()) refuse("it names no symbol for '" + role + "'");
  return it->second;
}

const std::string* Profile::nameOf(const std::string& table, uint64_t value) const {
  auto t = names.find(table);
  if (t == names.end()) return nullptr;
  auto it = t->second.find(value);
  return it == t->second.end() ? nullptr : &it->second;
}

uint64_t Profile::valueNamed(const std::string& table, const std::string& name) const {
  if (auto t = names.find(table); t != names.end())
    for (const auto& [value, text] : t->second)
      if (text == name) return value;
  refuse("its " + table + " table has no '" + name + "'");
}

void Profile::refuse(const std::string& why) const { fail(origin + " is unusable: " + why + remedy); }

Profile parseProfile(const std::string& bytes, const std::string& origin, const std::string& remedy, const ProfileNeeds& needs) {
  Profile p;
  p.origin = origin;
  p.remedy = remedy;
  const std::string text = checkedText(p, bytes);
  std::vector<KeyInfo> keys;
  std::vector<int> runtime_order;
  bool runtime_keys = false;
  std::istringstream file(text);
  std::string line;
  std::getline(file, line);  // the format line, checked
  for (size_t number = 2; std::getline(file, line); ++number) {
    const Where at{p, number, &line};
    std::istringstream in(line);
    std::string word, a, b, extra;
    if (!(in >> word) || word[0] == '#') continue;
    auto words = [&](int n) {  // exactly n more words, into a (and b)
      if (!(n < 1 || in >> a) || !(n < 2 || in >> b) || (in >> extra)) at.bad("is not '" + word + "' followed by " + std::to_string(n) + (n == 1 ? " word" : " words"));
    };
    if (word == "runtime") {
      words(1);
      if (a != needs.runtime) p.refuse("it describes runtime '" + shown(a) + "', not " + needs.runtime);
      p.runtime = a;
    } else if (word == "version") words(1), p.version = a;
    else if (word == "build-id" || word == "symbol") {
      words(2);
      if (!(word == "symbol" ? p.symbols : p.build_ids).emplace(a, b).second) at.bad("names '" + shown(a) + "' a second time");
    } else if (word == "backend") {
      words(2);
      if (numberIn(at, a, 63) != p.backend_names.size()) at.bad("is out of order (backend " + std::to_string(p.backend_names.size()) + " expected)");
      p.backend_names.push_back(b);
    } else if (word == "key") keys.push_back(keyLine(at, in));
    else if (word == "name") {  // "name TABLE VALUE TEXT": TEXT is the rest of the line
      std::string value_text, name;
      in >> a >> value_text;
      std::getline(in >> std::ws, name);
      if (name.empty()) at.bad("has no text");
      if (!p.names[a].emplace(numberIn(at, value_text, UINT64_MAX), name).second) at.bad("names a value a second time");
    } else if (word == "runtime-keys") {
      if (runtime_keys) at.bad("is a second runtime-keys line");
      runtime_keys = true;
      while (in >> a) runtime_order.push_back(static_cast<int>(numberIn(at, a, kMaxKeys - 1)));
    } else {
      if (!isName(word)) at.bad("is not 'NAME VALUE'");
      words(1);
      if (!p.values.emplace(word, numberIn(at, a, UINT64_MAX)).second) at.bad("sets " + word + " a second time");
    }
  }
  if (p.runtime.empty()) p.refuse("it names no runtime (of another schema)");
  checkNeeds(p, needs);
  if (needs.key_table) checkCounts(p);
  checkRanges(p);
  if (needs.check_layout) needs.check_layout(p);
  if (!needs.key_table) {
    if (!keys.empty() || runtime_keys) p.refuse("it lists dispatch keys, which a " + needs.runtime + " profile has none of");
    return p;
  }
  checkKeys(p, keys, runtime_order);
  p.keys = KeyTable(std::move(keys), std::move(runtime_order), p.backend_names,
                    {p.at("set_default_included"), p.at("set_default_excluded")});
  return p;
}

}  // namespace dscope::inspect
