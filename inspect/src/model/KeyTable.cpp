#include "model/KeyTable.h"

#include <algorithm>
#include <cstdio>

#include "target/Remote.h"

namespace dscope::inspect {

KeyTable::KeyTable(std::vector<KeyInfo> keys, std::vector<int> runtime_order, std::vector<std::string> backend_names,
                   Defaults defaults)
    : runtime_order_(std::move(runtime_order)),
      backend_names_(std::move(backend_names)),
      backends_(static_cast<int>(backend_names_.size())),
      defaults_(defaults) {
  int top = 0;
  for (const auto& k : keys) top = std::max(top, k.value);
  keys_.resize(top + 1);
  for (auto& k : keys) {
    by_name_.emplace(k.name, k.value);
    known_bits_ |= k.bits;
    keys_[k.value] = std::move(k);
  }
}

const KeyInfo* KeyTable::byValue(int value) const {
  if (value < 0 || value >= static_cast<int>(keys_.size()) || keys_[value].name.empty()) return nullptr;
  return &keys_[value];
}

const KeyInfo* KeyTable::byName(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &keys_[it->second];
}

const KeyInfo& KeyTable::named(const std::string& name) const {
  if (const KeyInfo* k = byName(name)) return *k;
  fail("unknown dispatch key '" + shown(name) + "' (PyTorch's names: CPU, AutogradCPU, Meta, BackendSelect, ...)");
}

const std::string& KeyTable::name(int value) const {
  static const std::string unknown = "(unknown key)";
  const KeyInfo* k = byValue(value);
  return k ? k->name : unknown;
}

bool KeyTable::inAlias(const KeyInfo& k, std::string_view alias) const { return inAlias(k, byName(alias)); }

bool KeyTable::inAlias(const KeyInfo& k, const KeyInfo* alias) {
  return alias && std::find(k.in_aliases.begin(), k.in_aliases.end(), alias->value) != k.in_aliases.end();
}

std::vector<int> KeyTable::keysOf(uint64_t raw) const {
  std::vector<int> out;
  for (int v : runtime_order_)
    if (const KeyInfo* k = byValue(v); k && has(raw, *k)) out.push_back(v);
  // A functionality bit no key has is a sentinel's (EndOfFunctionalityKeys, bit 63). c10's iterator
  // yields it, last, only after a per-backend key: its end state is the sentinel's with the
  // backend it starts with, which only a per-backend key changes.
  const auto per_backend = [&] { return std::any_of(out.begin(), out.end(), [&](int v) { return byValue(v)->bits & backendMask(); }); };
  if (const uint64_t top = raw & ~backendMask() & ~known_bits_; top && per_backend()) {
    const KeyInfo* k = byValue(functionalityKey(63 - __builtin_clzll(top)));
    if (k && !k->alias && k->value != 0 && k->bits == 0) out.push_back(k->value);
  }
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

std::vector<int> KeyTable::backendlessFunctionalities(uint64_t raw) const {
  const uint64_t backend_mask = (uint64_t{1} << backends_) - 1;
  uint64_t shown = 0;  // the functionality bits raw's runtime keys show
  for (int v : keysOf(raw)) shown |= byValue(v)->bits & ~backend_mask;
  std::vector<int> out;
  for (uint64_t rest = raw & ~backend_mask & ~shown; rest; rest &= rest - 1) {
    const uint64_t bit = rest & -rest;
    // The functionality's own key: the first key of exactly this bit (Dense before Unknown).
    for (const auto& k : keys_)
      if (!k.alias && k.bits == bit) {
        out.push_back(k.value);
        break;
      }
  }
  return out;
}

std::string KeyTable::keyNames(uint64_t raw) const {
  const uint64_t backend_mask = (uint64_t{1} << backends_) - 1;
  std::vector<std::pair<uint64_t, std::string>> named;  // (functionality bits, name)
  for (int v : keysOf(raw)) named.emplace_back(byValue(v)->bits & ~backend_mask, name(v));
  for (int v : backendlessFunctionalities(raw)) named.emplace_back(byValue(v)->bits, name(v));
  std::stable_sort(named.begin(), named.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [bits, text] : named) out += (out.empty() ? "" : ", ") + text;
  return out;
}

std::string KeyTable::keySetShown(uint64_t raw) const {
  std::string out = keySetString(raw);
  for (int v : backendlessFunctionalities(raw)) out += " + " + name(v) + " (every backend)";
  return out;
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
  // No key has the bit: c10 names the functionality by the bit's index (EndOfFunctionalityKeys for
  // bit 63, a sentinel whose set has no key).
  const int by_index = functionalityKey(63 - __builtin_clzll(functionality));
  if (best == 0 && byValue(by_index)) return by_index;
  return best;
}

int KeyTable::functionalityKey(int bit) const { return bit - backends_ + 1; }

std::string KeyTable::bitName(int bit) const {
  if (bit < backends_) return backend_names_[bit];
  const KeyInfo* k = byValue(functionalityKey(bit));
  if (!k) return "(no key of this build)";
  if (k->bits != uint64_t{1} << bit) return k->name + " (a sentinel, not a real key)";
  return k->name;
}

int KeyTable::slotOfKey(int key) const {
  if (key == 0) return 0;
  const KeyInfo* k = byValue(key);
  return k ? k->slot : -1;
}

int KeyTable::slotOf(uint64_t raw) const { return slotOfKey(highestKey(raw)); }

std::string KeyTable::keyWithSlot(uint64_t raw) const {
  const int key = highestKey(raw), slot = slotOfKey(key);
  if (slot >= 0) return name(key) + " (dispatch-table slot " + std::to_string(slot) + ")";
  return name(key) + " (bit " + std::to_string(63 - __builtin_clzll(raw & ~backendMask())) + " is set: the " + name(key) +
         " sentinel has no dispatch-table slot)";
}

std::string KeyTable::keySetWithRaw(uint64_t raw) const {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(raw));
  return keySetString(raw) + " (raw " + text + ")";
}

}  // namespace dscope::inspect
