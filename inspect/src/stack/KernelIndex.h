// Which kernels a function on the stack is: every stored kernel of the dispatcher model (the
// tables the dispatcher indexes) by the functions a dispatch enters it through. One index serves
// both stack readers (StackChain for our runtime, TorchTrace for a c10 build).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/Dispatcher.h"
#include "target/Remote.h"

namespace dscope::inspect {

// A stored kernel a function enters: its operator and key, and what its table slot holds.
struct KernelUse {
  const Operator* op = nullptr;
  int key = 0;
  uint64_t kernel = 0;   // StoredKernel::kernel
  uint64_t functor = 0;  // StoredKernel::functor
  bool sameEntry(const KernelUse& o) const { return op == o.op && key == o.key; }
};

class KernelIndex {
 public:
  // Every stored kernel's functions, or (wanted) only those among them: a stack reader that knows
  // its frames' functions keeps the index small. With jumps (the target's memory), a functor
  // kernel's function that only jumps on (tailJumpTarget: a boxed trampoline, which leaves no frame)
  // is indexed by where it jumps too: that function's frame is the kernel's.
  explicit KernelIndex(const Dispatcher& d, const std::unordered_set<uint64_t>* wanted = nullptr, const Remote* jumps = nullptr);

  // The uses of function `entry`, or nullptr when it enters no stored kernel.
  const std::vector<KernelUse>* at(uint64_t entry) const;
  const std::unordered_map<uint64_t, std::vector<KernelUse>>& byFunction() const { return by_function_; }

 private:
  std::shared_ptr<const std::vector<Operator>> operators_;  // what KernelUse::op points into
  std::unordered_map<uint64_t, std::vector<KernelUse>> by_function_;
};

}  // namespace dscope::inspect
