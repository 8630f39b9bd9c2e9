// Our runtime's key table as data, from the DispatchKey enum this library is compiled with (the
// runtime mirrors PyTorch 2.11's): the same facts, by the same rules, as profiles/probe/probe.cpp
// writes for a c10 build, so that one KeyTable answers for both.
#include "source/dscope/DscopeDispatcher.h"

#include "dscope/DispatchKeySet.h"

namespace dscope::inspect {

const KeyTable& dscopeKeyTable() {
  static const KeyTable table = [] {
    std::vector<std::string> backends;
    for (int b = 1; b <= num_backends; ++b) backends.push_back(toString(static_cast<BackendComponent>(b)));
    std::vector<int> runtime_order{0};
    for (DispatchKey k : DispatchKeySet(DispatchKeySet::FULL)) runtime_order.push_back(static_cast<int>(k));
    std::vector<DispatchKey> aliases;
    for (int v = 0; v < num_all_dispatch_keys; ++v)
      if (isAliasDispatchKey(static_cast<DispatchKey>(v))) aliases.push_back(static_cast<DispatchKey>(v));
    std::vector<KeyInfo> keys;
    for (int v = 0; v < num_all_dispatch_keys; ++v) {
      const auto k = static_cast<DispatchKey>(v);
      KeyInfo info;
      info.value = v;
      info.name = toString(k);
      info.alias = isAliasDispatchKey(k);
      if (!info.alias && v != 0 && k != DispatchKey::EndOfFunctionalityKeys) {
        info.bits = DispatchKeySet(k).raw_repr();
        info.slot = getDispatchTableIndexForDispatchKey(k);
      }
      if (!info.alias && v != 0) {
        for (DispatchKey a : aliases)
          if (runtimeDispatchKeySetHas(a, k)) info.in_aliases.push_back(static_cast<int>(a));
        info.autograd_backends = getBackendKeySetFromAutograd(k).raw_repr();
      }
      keys.push_back(std::move(info));
    }
    return KeyTable(std::move(keys), std::move(runtime_order), std::move(backends),
                    {default_included_set.raw_repr(), default_excluded_set.raw_repr()});
  }();
  return table;
}

}  // namespace dscope::inspect
