#include "TorchProfile.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <fstream>
#include <sstream>

#include "Remote.h"

namespace dscope::inspect {

namespace {

constexpr const char* kFormat = "dscope-profile 1";

[[noreturn]] void badProfile(const std::string& path, const std::string& why) {
  fail("the layout profile " + path + " is unusable: " + why + " (regenerate it with dscope-profile)");
}

uint64_t numberIn(const std::string& path, const std::string& text) {
  try {
    size_t used = 0;
    const uint64_t v = std::stoull(text, &used, 0);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  badProfile(path, "'" + shown(text) + "' is not a number");
}

// "key 43 CPU bits=0x4001 slot=1 in=118,120 autograd-backends=0x4001 [alias]"
KeyInfo keyLine(const std::string& path, std::istringstream& in) {
  KeyInfo k;
  std::string value, word;
  in >> value >> k.name;
  k.value = static_cast<int>(numberIn(path, value));
  while (in >> word) {
    const auto eq = word.find('=');
    const std::string field = word.substr(0, eq), arg = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (field == "alias") k.alias = true;
    else if (field == "bits") k.bits = numberIn(path, arg);
    else if (field == "slot") k.slot = arg == "-1" ? -1 : static_cast<int>(numberIn(path, arg));
    else if (field == "autograd-backends") k.autograd_backends = numberIn(path, arg);
    else if (field == "in") {
      std::istringstream list(arg);
      for (std::string v; std::getline(list, v, ',');) k.in_aliases.push_back(static_cast<int>(numberIn(path, v)));
    } else badProfile(path, "unknown key field '" + shown(field) + "'");
  }
  return k;
}

}  // namespace

KeyTable::KeyTable(std::vector<KeyInfo> keys, std::vector<int> runtime_order, int backends)
    : runtime_order_(std::move(runtime_order)), backends_(backends) {
  int top = 0;
  for (const auto& k : keys) top = std::max(top, k.value);
  keys_.resize(top + 1);
  for (auto& k : keys) {
    by_name_.emplace(k.name, k.value);
    keys_[k.value] = std::move(k);
  }
}

const KeyInfo* KeyTable::byValue(int value) const {
  if (value < 0 || value >= static_cast<int>(keys_.size()) || keys_[value].name.empty()) return nullptr;
  return &keys_[value];
}

const KeyInfo* KeyTable::byName(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &keys_[it->second];
}

const std::string& KeyTable::name(int value) const {
  static const std::string unknown = "(unknown key)";
  const KeyInfo* k = byValue(value);
  return k ? k->name : unknown;
}

bool KeyTable::inAlias(const KeyInfo& k, const char* alias) const {
  const KeyInfo* a = byName(alias);
  return a && std::find(k.in_aliases.begin(), k.in_aliases.end(), a->value) != k.in_aliases.end();
}

std::vector<int> KeyTable::keysOf(uint64_t raw) const {
  std::vector<int> out;
  for (int v : runtime_order_)
    if (const KeyInfo* k = byValue(v); k && has(raw, *k)) out.push_back(v);
  return out;
}

std::string KeyTable::keySetString(uint64_t raw) const {
  std::string out = "DispatchKeySet(";
  bool first = true;
  for (int v : keysOf(raw)) {
    out += (first ? "" : ", ") + name(v);
    first = false;
  }
  return out + ")";
}

int KeyTable::highestKey(uint64_t raw) const {
  const uint64_t backend_mask = (uint64_t{1} << backends_) - 1;
  const uint64_t functionality = raw & ~backend_mask;
  if (!functionality) return 0;
  const uint64_t top = uint64_t{1} << (63 - __builtin_clzll(functionality));
  const uint64_t backends = raw & backend_mask;
  const uint64_t with_backend = backends ? top | (uint64_t{1} << (63 - __builtin_clzll(backends))) : top;
  // The highest value with exactly those bits: a per-backend key (CPU) before its functionality
  // (Dense), StartOfDenseBackends ("Unknown") before Dense when no backend bit is set, as c10.
  int best = 0;
  for (const auto& k : keys_)
    if (!k.alias && (k.bits == with_backend || (k.bits == top && best == 0))) best = std::max(best, k.value);
  return best;
}

uint64_t TorchProfile::at(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end()) badProfile(path, "it has no '" + name + "'");
  return it->second;
}

const std::string& TorchProfile::symbol(const std::string& role) const {
  auto it = symbols.find(role);
  if (it == symbols.end()) badProfile(path, "it names no symbol for '" + role + "'");
  return it->second;
}

const std::string* TorchProfile::nameOf(const std::string& table, uint64_t value) const {
  auto t = names.find(table);
  if (t == names.end()) return nullptr;
  auto it = t->second.find(value);
  return it == t->second.end() ? nullptr : &it->second;
}

uint64_t TorchProfile::valueNamed(const std::string& table, const std::string& name) const {
  if (auto t = names.find(table); t != names.end())
    for (const auto& [value, text] : t->second)
      if (text == name) return value;
  badProfile(path, "its " + table + " table has no '" + name + "'");
}

TorchProfile readTorchProfile(const std::string& path) {
  std::ifstream file(path);
  if (!file) fail("cannot read the layout profile " + path);
  TorchProfile p;
  p.path = path;
  std::string line;
  if (!std::getline(file, line) || line != kFormat) badProfile(path, "it does not start with '" + std::string(kFormat) + "'");
  std::vector<KeyInfo> keys;
  std::vector<int> runtime_order;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string word, a, b;
    if (!(in >> word) || word[0] == '#') continue;
    if (word == "runtime") {
      in >> a;
      if (a != "c10") badProfile(path, "it describes runtime '" + shown(a) + "', not c10");
    } else if (word == "version") in >> p.version;
    else if (word == "build-id") in >> a >> b, p.build_ids[a] = b;
    else if (word == "symbol") in >> a >> b, p.symbols[a] = b;
    else if (word == "backend") in >> a >> b, p.backend_names.push_back(b);
    else if (word == "key") keys.push_back(keyLine(path, in));
    else if (word == "name") {  // "name TABLE VALUE TEXT": TEXT is the rest of the line
      in >> a >> b;
      std::string text;
      std::getline(in >> std::ws, text);
      if (text.empty()) badProfile(path, "a name line has no text: '" + shown(line) + "'");
      p.names[a][numberIn(path, b)] = text;
    }
    else if (word == "runtime-keys") {
      while (in >> a) runtime_order.push_back(static_cast<int>(numberIn(path, a)));
    } else {
      in >> a;
      p.values[word] = numberIn(path, a);
    }
  }
  const int backends = static_cast<int>(p.at("count_backends"));
  if (keys.empty() || runtime_order.empty() || static_cast<int>(p.backend_names.size()) != backends)
    badProfile(path, "its key table is incomplete");
  p.keys = KeyTable(std::move(keys), std::move(runtime_order), backends);
  return p;
}

std::vector<std::string> profileDirectories() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("DSCOPE_PROFILE_PATH")) {
    std::istringstream list(env);
    for (std::string d; std::getline(list, d, ':');)
      if (!d.empty()) dirs.push_back(d);
    return dirs;
  }
  dirs.push_back(DSCOPE_INSTALLED_PROFILES);
  dirs.push_back(DSCOPE_SOURCE_PROFILES);
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache) dirs.push_back(std::string(cache) + "/dscope/profiles");
  else if (const char* home = std::getenv("HOME")) dirs.push_back(std::string(home) + "/.cache/dscope/profiles");
  return dirs;
}

std::optional<TorchProfile> findTorchProfile(const std::string& build_id) {
  // Parsed once per file version: every command looks its profile up again.
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::pair<int64_t, int64_t>, TorchProfile>> parsed;  // by path
  for (const auto& dir : profileDirectories()) {
    const std::string path = dir + "/" + build_id + ".profile";
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) continue;
    const std::pair<int64_t, int64_t> version{st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec, st.st_size};
    std::lock_guard lock(mutex);
    if (auto it = parsed.find(path); it != parsed.end() && it->second.first == version) return it->second.second;
    TorchProfile profile = readTorchProfile(path);
    parsed[path] = {version, profile};
    return profile;
  }
  return std::nullopt;
}

}  // namespace dscope::inspect
