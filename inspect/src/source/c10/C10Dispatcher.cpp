#include "source/c10/C10Dispatcher.h"

#include <algorithm>
#include <cstring>

#include "source/c10/TorchPythonState.h"
#include "source/c10/TorchSchema.h"
#include "stack/TorchTrace.h"
#include "target/ThreadLocal.h"

namespace dscope::inspect {

namespace {
constexpr uint64_t kPrefetchBytes = 256 << 10;  // one read of the operator tables lying within this span
}

format::OperatorSnapshot C10Dispatcher::registrations(const Operator& op) const { return registrationsOf(tv_, op); }

// dispatchTable_: inline KernelFunctions, one per slot, read by address with each run of tables
// lying close together fetched in one read (a page per operator, one front-end call each, was
// most of a first dispatch-trace in GDB).
void C10Dispatcher::visitStoredKernels(const std::function<void(const StoredKernel&)>& visit) const {
  const C10Layout& l = tv_.layout();
  std::vector<int> slot_key(l.count_table_slots, -1);
  for (int k : keys().runtimeKeys())
    if (const KeyInfo* info = keys().byValue(k); info && info->slot >= 0 && slot_key[info->slot] < 0) slot_key[info->slot] = k;
  const uint64_t size = l.sizeof_KernelFunction, slots = slot_key.size();
  std::vector<unsigned char> table(size * slots);
  std::vector<const Operator*> by_address;
  for (const auto& op : tv_.operators()) by_address.push_back(&op);
  std::sort(by_address.begin(), by_address.end(), [](const auto* a, const auto* b) { return a->entry < b->entry; });
  const uint64_t offset = l.OperatorEntry_dispatchTable;
  const uint64_t fallthrough = tv_.fallthroughKernel();
  uint64_t fetched_to = 0;
  for (size_t i = 0; i < by_address.size(); ++i) {
    const Operator& op = *by_address[i];
    if (op.entry + offset + table.size() > fetched_to) {
      size_t j = i;
      while (j + 1 < by_address.size() &&
             by_address[j + 1]->entry + offset + table.size() - (op.entry + offset) <= kPrefetchBytes)
        ++j;
      fetched_to = by_address[j]->entry + offset + table.size();
      tv_.mem().prefetch(op.entry + offset, fetched_to - (op.entry + offset));
    }
    try {
      tv_.mem().read(op.entry + offset, table.data(), table.size(), "a dispatch table");
    } catch (const InspectError&) {
      continue;
    }
    for (uint64_t s = 0; s < slots; ++s) {
      if (slot_key[s] < 0) continue;
      const unsigned char* element = table.data() + s * size;
      auto word = [&](uint64_t at) {
        uint64_t w = 0;
        std::memcpy(&w, element + at, 8);
        return w;
      };
      const uint64_t boxed = word(l.KernelFunction_boxed);
      if (fallthrough && boxed == fallthrough) continue;
      visit({&op, slot_key[s], op.entry + offset + s * size, word(l.KernelFunction_functor),
             {word(l.KernelFunction_unboxed), boxed, word(l.KernelFunction_sym_unboxed)}});
    }
  }
}

ProcessDispatchState C10Dispatcher::dispatchState() const { return torchDispatchState(tv_, *this, python_()); }

std::string C10Dispatcher::dispatchTrace(const TraceRequest& request) const {
  return torchDispatchTrace(tv_, *this, python_(), request);
}

ThreadKeySets C10Dispatcher::threadKeySets(int64_t tid) const {
  if (!tid) fail("no thread to read: the debugger has no selected thread");
  const auto [included, excluded] = tv_.threadTls(tid);
  return {tid, tv_.mem().threadIds().shown(tid), true, included, excluded, torchPythonState(tv_, tid)};
}

// A number in a PyTorch process: an address the process maps names a tensor (a Python tensor as
// hex(id(t)) prints it, or a TensorImpl; anything else is refused, saying what it is); any other
// number is a raw key set, of this build's keys only. Real key sets lie far below where Linux maps
// a process's heap and libraries, so the two never meet.
uint64_t C10Dispatcher::keySetOfWord(uint64_t word) const {
  bool readable = true;
  try {
    tv_.mem().readPointer(word, "an address");
  } catch (const InspectError&) {
    readable = false;
  }
  if (readable) return tv_.tensorKeySet(tv_.tensorImplAt(word));
  if (const uint64_t unknown = keys().unknownBits(word))
    fail(hex(word) + " is no address in this process and no key set of its PyTorch " + tv_.profile().version + " (bits " +
         hex(unknown) + " belong to no key of its key table)");
  return word;
}

// A debugger value of c10's or ATen's types (where the user's code has DWARF).
uint64_t C10Dispatcher::keySetOfValue(const std::string& text, const dscope_value& v) const {
  if (v.kind == DSCOPE_KIND_INTEGER) return keySetOfWord(v.bits);
  const std::string type = v.type;
  uint64_t at = v.kind == DSCOPE_KIND_POINTER ? v.bits : v.address;
  if (v.kind == DSCOPE_KIND_POINTER && !at) fail(text + " is a null pointer");
  if (type == "c10::DispatchKeySet") return at ? tv_.mem().readPointer(at, "a key set") : v.bits;
  if (type == "at::Tensor" || type == "at::TensorBase") {
    at = tv_.mem().readPointer(at, "a tensor");  // impl_, the intrusive_ptr's only member
    if (!at) fail(text + " is an undefined tensor");
  } else if (type != "c10::TensorImpl") {
    fail(text + " is a " + (v.kind == DSCOPE_KIND_POINTER ? type : std::string(v.shown)) + ", not a DispatchKeySet or a tensor");
  }
  return tv_.tensorKeySet(at);
}

}  // namespace dscope::inspect
