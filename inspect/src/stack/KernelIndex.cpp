#include "stack/KernelIndex.h"

namespace dscope::inspect {

KernelIndex::KernelIndex(const Dispatcher& d, const std::unordered_set<uint64_t>* wanted, const Remote* jumps)
    : operators_(d.operatorList()) {
  std::unordered_map<uint64_t, uint64_t> jump_of;  // a functor kernel's function -> where it jumps (0: nowhere)
  auto add = [&](uint64_t fn, const KernelUse& use) {
    if (!fn || (wanted && !wanted->count(fn))) return;
    auto& uses = by_function_[fn];
    if (uses.empty() || !uses.back().sameEntry(use)) uses.push_back(use);  // a function that is two of them
  };
  d.visitStoredKernels([&](const StoredKernel& k) {
    const KernelUse use{k.op, k.key, k.kernel, k.functor};
    for (uint64_t fn : k.functions) {
      add(fn, use);
      if (!jumps || !fn || !k.functor) continue;
      auto [it, added] = jump_of.try_emplace(fn, 0);
      if (added) it->second = tailJumpTarget(jumps->modules(), fn).value_or(0);
      add(it->second, use);
    }
  });
}

const std::vector<KernelUse>* KernelIndex::at(uint64_t entry) const {
  auto it = by_function_.find(entry);
  return it == by_function_.end() ? nullptr : &it->second;
}

}  // namespace dscope::inspect
