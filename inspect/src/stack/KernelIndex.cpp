#include "stack/KernelIndex.h"

namespace dscope::inspect {

KernelIndex::KernelIndex(const Dispatcher& d, const std::unordered_set<uint64_t>* wanted) : operators_(d.operatorList()) {
  d.visitStoredKernels([&](const StoredKernel& k) {
    const KernelUse use{k.op, k.key, k.kernel, k.functor};
    for (uint64_t fn : k.functions) {
      if (!fn || (wanted && !wanted->count(fn))) continue;
      auto& uses = by_function_[fn];
      if (uses.empty() || !uses.back().sameEntry(use)) uses.push_back(use);  // a function that is two of them
    }
  });
}

const std::vector<KernelUse>* KernelIndex::at(uint64_t entry) const {
  auto it = by_function_.find(entry);
  return it == by_function_.end() ? nullptr : &it->second;
}

}  // namespace dscope::inspect
