// A runtime's key table, in that build's own terms: every DispatchKey with its bits, slot and
// aliases, the backend bits' names and the TLS defaults. Both sources give one (a c10 build's
// profile, our runtime's descriptor), and every key-set question is answered from it: nothing of
// a compiled key enum applies to a build read from outside.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dscope::inspect {

// One DispatchKey of the build: its value, name, DispatchKeySet bits and table slot (-1: none).
struct KeyInfo {
  int value = 0;
  std::string name;
  uint64_t bits = 0;
  int slot = -1;
  bool alias = false;
  std::vector<int> in_aliases;     // the alias keys that cover it (isIncludedInAlias)
  uint64_t autograd_backends = 0;  // getBackendKeySetFromAutograd: its backends, for an autograd key
  bool operator==(const KeyInfo&) const = default;
};

class KeyTable {
 public:
  // c10's TLS defaults (default_included_set, default_excluded_set): what a thread's stored sets
  // are XORed with, and what keyset --tls reports departures from.
  struct Defaults {
    uint64_t included = 0, excluded = 0;
    bool operator==(const Defaults&) const = default;
  };
  KeyTable() = default;
  KeyTable(std::vector<KeyInfo> keys, std::vector<int> runtime_order, std::vector<std::string> backend_names, Defaults defaults);

  // The same keys, runtime order, backends and defaults: the same table.
  bool operator==(const KeyTable& o) const {
    return keys_ == o.keys_ && runtime_order_ == o.runtime_order_ && backend_names_ == o.backend_names_ && defaults_ == o.defaults_;
  }

  const KeyInfo* byValue(int value) const;
  const KeyInfo* byName(std::string_view name) const;
  // A key by its name ("CPU", "AutogradCPU", "Autograd"); InspectError naming it otherwise.
  const KeyInfo& named(const std::string& name) const;
  // The runtime keys in c10's DispatchKeySet(FULL) order (Undefined first): the rows a computed
  // table may print.
  const std::vector<int>& runtimeKeys() const { return runtime_order_; }
  int backends() const { return backends_; }
  const std::string& name(int value) const;
  const Defaults& defaults() const { return defaults_; }
  // The backend bits (c10's full_backend_mask): excluding never removes them.
  uint64_t backendMask() const { return (uint64_t{1} << backends_) - 1; }
  // A bit's name: its BackendComponent ("CPUBit") below the backends, else its functionality key
  // ("Dense"), marked when that key is a sentinel without a slot (EndOfFunctionalityKeys, bit 63).
  std::string bitName(int bit) const;
  // The dispatch-table slot getDispatchTableIndexForDispatchKeySet gives the highest key: 0 for an
  // empty set (Undefined's computed entry), -1 when that key has none (the bit-63 sentinel).
  int slotOf(uint64_t raw) const;
  // "AutogradCPU (dispatch-table slot 97)", or why the highest key has no slot.
  std::string keyWithSlot(uint64_t raw) const;
  // "DispatchKeySet(CPU, AutogradCPU) (raw 0x2000010001)"
  std::string keySetWithRaw(uint64_t raw) const;

  // The runtime keys a raw key set holds, in iteration order (c10's DispatchKeySet iterator).
  std::vector<int> keysOf(uint64_t raw) const;
  // "DispatchKeySet(CPU, AutogradCPU)", as c10's toString(DispatchKeySet) of this build.
  std::string keySetString(uint64_t raw) const;
  // The functionality keys (AutogradFunctionality, Dense, ...) whose per-backend functionality bit
  // raw holds without a backend bit for it: c10 prints no key for such a bit (its iterator yields
  // per-backend keys only), yet an exclude set holding it skips that functionality on every
  // backend (inference_mode excludes AutogradFunctionality so).
  std::vector<int> backendlessFunctionalities(uint64_t raw) const;
  // Every key raw holds, in c10's order: its runtime keys and its backendless functionalities,
  // each by its c10 name ("AutogradOther, AutogradFunctionality, AutogradNestedTensor"). "" for none.
  std::string keyNames(uint64_t raw) const;
  // keySetString, then " + AutogradFunctionality (every backend)" for what it cannot show.
  std::string keySetShown(uint64_t raw) const;
  // highestPriorityTypeId(): the key of the highest functionality bit (with the highest backend
  // bit for a per-backend functionality); Undefined (0) for an empty set.
  int highestKey(uint64_t raw) const;
  // isIncludedInAlias(k, alias): whether the alias key named `alias` covers k.
  bool inAlias(const KeyInfo& k, std::string_view alias) const;
  // The same for an alias key already looked up (null: a key this build lacks covers nothing).
  static bool inAlias(const KeyInfo& k, const KeyInfo* alias);
  // DispatchKeySet(key).has(other) for a runtime key: every bit of `other` is in raw.
  static bool has(uint64_t raw, const KeyInfo& k) { return k.bits && (raw & k.bits) == k.bits; }
  // The bits of raw that no key of this build has: a key set read through a profile that does not
  // fit the process (or damaged memory) holds some.
  uint64_t unknownBits(uint64_t raw) const { return raw & ~known_bits_; }

 private:
  // The functionality key a functionality bit stands for (its index past the backends).
  int functionalityKey(int bit) const;
  // slotOf for the set's highest key.
  int slotOfKey(int key) const;

  std::vector<KeyInfo> keys_;  // by value
  std::map<std::string, int, std::less<>> by_name_;
  std::vector<int> runtime_order_;
  std::vector<std::string> backend_names_;  // by backend bit
  int backends_ = 0;
  Defaults defaults_;
  uint64_t known_bits_ = 0;
};

}  // namespace dscope::inspect
