// DispatchKeySet: c10's 64-bit dispatch key bitmap, bit for bit (PyTorch 2.11).
//
//   bits  0..15  backend bits: bit i is BackendComponent(i+1)           (CPUBit .. MetaBit)
//   bits 16..62  functionality bits: bit 15+v is functionality key v     (Dense .. PythonDispatcher)
//   bit  63      DispatchKeySet(EndOfFunctionalityKeys = 48), a sentinel that is still a bit
//
// A runtime key such as AutogradCUDA is *two* bits: its functionality (AutogradFunctionality)
// and its backend (CUDABit). Consequences every reader must keep in mind:
//   * has(AutogradCUDA) needs both bits; {CPU, AutogradCUDA} therefore also "has" AutogradCPU
//     and CUDA (the iterator yields the cross product of per-backend bits and backend bits).
//   * a - b never removes backend bits (they are shared by all functionalities).
//   * the dispatch-table slot is derived from the highest functionality bit plus, for
//     per-backend functionalities, the highest backend bit.
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>

#include "dscope/DispatchKey.h"

namespace dscope {

constexpr uint64_t full_backend_mask = (1ULL << num_backends) - 1;  // 0xffff

struct FunctionalityOffsetAndMask {
  uint16_t offset = 0;  // first dispatch-table slot of the functionality
  uint16_t mask = 0;    // 0xffff for per-backend functionalities, else 0
};

// One entry per functionality value 0..47, plus a zero guard entry for the bit-63 sentinel
// (c10 reads past its 48-entry array there; we assert in debug builds and read the guard).
constexpr std::array<FunctionalityOffsetAndMask, num_functionality_keys + 1> initializeFunctionalityOffsetsAndMasks() {
  std::array<FunctionalityOffsetAndMask, num_functionality_keys + 1> t{};
  for (uint16_t i = 1; i < num_functionality_keys; ++i) {
    uint16_t prev_width = t[i - 1].mask ? num_backends : 1;
    t[i].offset = static_cast<uint16_t>(t[i - 1].offset + prev_width);
    t[i].mask = isPerBackendFunctionalityKey(static_cast<DispatchKey>(i)) ? full_backend_mask : 0;
  }
  return t;
}
inline constexpr auto kFunctionalityOffsetsAndMasks = initializeFunctionalityOffsetsAndMasks();

// 138 = 48 functionality slots + 6 per-backend functionalities x 15 extra backend slots.
constexpr int num_runtime_entries =
    num_functionality_keys + numPerBackendFunctionalityKeys() * (num_backends - 1);
static_assert(num_runtime_entries == 138);
static_assert(kFunctionalityOffsetsAndMasks[num_functionality_keys - 1].offset == 137);

class DispatchKeySet final {
 public:
  enum Full { FULL };
  enum FullAfter { FULL_AFTER };
  enum Raw { RAW };

  constexpr DispatchKeySet() = default;
  // Bits 0..62; bit 63 (the sentinel) is excluded.
  constexpr DispatchKeySet(Full) : repr_((1ULL << 63) - 1) {}
  // Every bit strictly below t's functionality bit, then PythonDispatcher (as c10 does).
  constexpr DispatchKeySet(FullAfter, DispatchKey t)
      : repr_(((1ULL << (num_backends + static_cast<uint8_t>(toFunctionalityKey(t)) - 1)) - 1) |
              bitOf(DispatchKey::PythonDispatcher)) {}
  constexpr DispatchKeySet(Raw, uint64_t x) : repr_(x) {}

  constexpr explicit DispatchKeySet(BackendComponent b)
      : repr_(b == BackendComponent::InvalidBit ? 0 : 1ULL << (static_cast<uint8_t>(b) - 1)) {}

  constexpr explicit DispatchKeySet(DispatchKey k) : repr_(keyBits(k)) {}

  constexpr DispatchKeySet(std::initializer_list<DispatchKey> ks) {
    for (auto k : ks) repr_ |= keyBits(k);
  }
  constexpr DispatchKeySet(std::initializer_list<BackendComponent> bs) {
    for (auto b : bs) repr_ |= DispatchKeySet(b).repr_;
  }

  static constexpr DispatchKeySet from_raw_repr(uint64_t x) { return DispatchKeySet(RAW, x); }
  constexpr uint64_t raw_repr() const { return repr_; }

  constexpr bool has(DispatchKey k) const {
    assert(k != DispatchKey::Undefined);
    return has_all(DispatchKeySet(k));
  }
  constexpr bool has_backend(BackendComponent b) const { return has_all(DispatchKeySet(b)); }
  constexpr bool has_all(DispatchKeySet ks) const { return (repr_ & ks.repr_) == ks.repr_; }
  constexpr bool has_any(DispatchKeySet ks) const { return (repr_ & ks.repr_) != 0; }
  constexpr bool isSupersetOf(DispatchKeySet ks) const { return has_all(ks); }
  constexpr bool empty() const { return repr_ == 0; }

  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return {RAW, repr_ | o.repr_}; }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const { return {RAW, repr_ & o.repr_}; }
  constexpr DispatchKeySet operator^(DispatchKeySet o) const { return {RAW, repr_ ^ o.repr_}; }
  // Removes o's functionality bits only: backend bits are shared, so they always stay.
  constexpr DispatchKeySet operator-(DispatchKeySet o) const {
    return {RAW, repr_ & (full_backend_mask | ~o.repr_)};
  }
  constexpr bool operator==(DispatchKeySet o) const { return repr_ == o.repr_; }

  constexpr DispatchKeySet add(DispatchKey k) const { return *this | DispatchKeySet(k); }
  constexpr DispatchKeySet add(DispatchKeySet ks) const { return *this | ks; }
  // Clears only k's functionality bit (so removing AutogradCPU removes every Autograd<X>).
  constexpr DispatchKeySet remove(DispatchKey k) const {
    return {RAW, repr_ & ~(DispatchKeySet(k).repr_ & ~full_backend_mask)};
  }
  constexpr DispatchKeySet remove_backend(BackendComponent b) const {
    return {RAW, repr_ & ~DispatchKeySet(b).repr_};
  }

  // 1-based index of the highest set bit; 0 for the empty set.
  constexpr uint8_t indexOfHighestBit() const { return 64 - std::countl_zero(repr_); }

  constexpr DispatchKey highestFunctionalityKey() const {
    auto i = indexOfHighestBit();
    if (i < num_backends) return DispatchKey::Undefined;
    return static_cast<DispatchKey>(i - num_backends);
  }
  constexpr BackendComponent highestBackendKey() const {
    return static_cast<BackendComponent>(DispatchKeySet(RAW, repr_ & full_backend_mask).indexOfHighestBit());
  }
  // The key a dispatch on this set goes to: a per-backend functionality is paired with the
  // highest backend bit (a PB bit without backend gives StartOf<F>Backends).
  constexpr DispatchKey highestPriorityTypeId() const {
    auto f = highestFunctionalityKey();
    if (isPerBackendFunctionalityKey(f)) return toRuntimePerBackendFunctionalityKey(f, highestBackendKey());
    return f;
  }
  // 0-based index of the highest backend bit: CPU 0 .. Meta 15; 0 with no backend.
  constexpr uint8_t getBackendIndex() const {
    return DispatchKeySet(RAW, (repr_ & full_backend_mask) >> 1).indexOfHighestBit();
  }
  constexpr int getDispatchTableIndexForDispatchKeySet() const {
    auto f = DispatchKeySet(RAW, repr_ >> num_backends).indexOfHighestBit();
    assert(f < num_functionality_keys && "bit 63 (EndOfFunctionalityKeys) has no table slot");
    auto om = kFunctionalityOffsetsAndMasks[f];
    return om.offset + DispatchKeySet(RAW, (repr_ & om.mask) >> 1).indexOfHighestBit();
  }

  // Yields runtime keys from lowest to highest priority, in c10's exact order (including its
  // bit-63 quirk: the sentinel is yielded only after some per-backend key was).
  class iterator {
   public:
    using value_type = DispatchKey;
    using difference_type = std::ptrdiff_t;
    static constexpr uint8_t end_iter_mask_val = num_backends + num_functionality_keys;  // 64
    static constexpr uint8_t end_iter_key_val = num_functionality_keys;                  // 48

    constexpr explicit iterator(const uint64_t* data, uint8_t next_functionality = num_backends)
        : data_(data), next_functionality_(next_functionality) {
      ++*this;
    }
    constexpr DispatchKey operator*() const {
      auto f = static_cast<DispatchKey>(current_key_);
      if (isPerBackendFunctionalityKey(f))
        return toRuntimePerBackendFunctionalityKey(f, static_cast<BackendComponent>(current_backend_));
      return f;
    }
    constexpr iterator& operator++();
    constexpr iterator operator++(int) { auto old = *this; ++*this; return old; }
    constexpr bool operator==(const iterator& o) const {
      return next_functionality_ == o.next_functionality_ && next_backend_ == o.next_backend_ &&
             current_key_ == o.current_key_ && current_backend_ == o.current_backend_;
    }

   private:
    const uint64_t* data_;
    uint8_t next_functionality_;
    uint8_t next_backend_ = 0;
    uint8_t current_key_ = end_iter_key_val;
    uint8_t current_backend_ = end_iter_key_val;
  };
  constexpr iterator begin() const { return iterator(&repr_); }
  constexpr iterator end() const { return iterator(&repr_, iterator::end_iter_mask_val); }

 private:
  static constexpr uint64_t bitOf(DispatchKey functionality) {
    return 1ULL << (num_backends + static_cast<uint16_t>(functionality) - 1);
  }
  static constexpr uint64_t keyBits(DispatchKey k) {
    if (k == DispatchKey::Undefined) return 0;
    if (k <= DispatchKey::EndOfFunctionalityKeys) return bitOf(k);
    if (k <= DispatchKey::EndOfRuntimeBackendKeys)
      return bitOf(toFunctionalityKey(k)) | DispatchKeySet(toBackendComponent(k)).repr_;
    return 0;  // alias keys have no bit
  }

  uint64_t repr_ = 0;
};

constexpr DispatchKeySet::iterator& DispatchKeySet::iterator::operator++() {
  for (;;) {
    // Lowest set functionality bit >= next_functionality_, lowest backend bit >= next_backend_.
    uint64_t f_bits = next_functionality_ >= 64 ? 0 : (*data_ & (~0ULL << next_functionality_));
    uint64_t b_bits = *data_ & full_backend_mask & (~0ULL << next_backend_);
    if (f_bits == 0 || next_functionality_ == end_iter_mask_val) {
      next_functionality_ = end_iter_mask_val;
      current_key_ = end_iter_key_val;
      next_backend_ = 0;
      current_backend_ = end_iter_key_val;
      return *this;
    }
    uint8_t f_bit = std::countr_zero(f_bits);
    uint8_t key = f_bit + 1 - num_backends;
    if (!isPerBackendFunctionalityKey(static_cast<DispatchKey>(key))) {
      current_key_ = key;  // current_backend_ deliberately untouched (c10 does the same)
      next_functionality_ = f_bit + 1;
      return *this;
    }
    if (b_bits == 0) {  // a per-backend bit with no backend bit yields nothing
      next_functionality_ = f_bit + 1;
      continue;
    }
    uint8_t b_bit = std::countr_zero(b_bits);
    current_key_ = key;
    current_backend_ = b_bit + 1;
    if (*data_ & full_backend_mask & (~0ULL << (b_bit + 1))) {
      next_backend_ = b_bit + 1;  // same functionality, next backend
    } else {
      next_functionality_ = f_bit + 1;
      next_backend_ = 0;
    }
    return *this;
  }
}

// "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)", as PyTorch prints it.
std::string toString(DispatchKeySet ks);
std::ostream& operator<<(std::ostream&, DispatchKeySet);

constexpr int getDispatchTableIndexForDispatchKey(DispatchKey k) {
  return DispatchKeySet(k).getDispatchTableIndexForDispatchKeySet();
}

// ---- Named key sets (values checked against PyTorch 2.11; see the layout reference §6) ----

constexpr DispatchKeySet autograd_dispatch_keyset{DispatchKey::AutogradFunctionality,
                                                  DispatchKey::AutogradOther,
                                                  DispatchKey::AutogradNestedTensor};
constexpr DispatchKeySet autograd_dispatch_keyset_with_ADInplaceOrView =
    autograd_dispatch_keyset | DispatchKeySet(DispatchKey::ADInplaceOrView);
constexpr DispatchKeySet autocast_dispatch_keyset{
    DispatchKey::AutocastCPU, DispatchKey::AutocastMPS,  DispatchKey::AutocastCUDA,
    DispatchKey::AutocastXPU, DispatchKey::AutocastIPU,  DispatchKey::AutocastHPU,
    DispatchKey::AutocastXLA, DispatchKey::AutocastPrivateUse1, DispatchKey::AutocastMTIA,
    DispatchKey::AutocastMAIA};
constexpr DispatchKeySet default_included_set{DispatchKey::BackendSelect, DispatchKey::ADInplaceOrView};
constexpr DispatchKeySet default_excluded_set = autocast_dispatch_keyset;
constexpr DispatchKeySet python_ks{DispatchKey::Python, DispatchKey::PythonTLSSnapshot};
constexpr DispatchKeySet autogradother_backends =
    DispatchKeySet{DispatchKey::FPGA, DispatchKey::Vulkan, DispatchKey::Metal,
                   DispatchKey::CustomRNGKeyId, DispatchKey::MkldnnCPU, DispatchKey::Sparse,
                   DispatchKey::SparseCsr, DispatchKey::Quantized} |
    DispatchKeySet(DispatchKeySet::RAW, full_backend_mask);
constexpr DispatchKeySet after_autograd_keyset{DispatchKeySet::FULL_AFTER, DispatchKey::AutogradOther};
constexpr DispatchKeySet after_ADInplaceOrView_keyset{DispatchKeySet::FULL_AFTER, DispatchKey::ADInplaceOrView};
constexpr DispatchKeySet after_func_keyset =
    DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::Functionalize).remove(DispatchKey::ADInplaceOrView);
constexpr DispatchKeySet backend_functionality_keys =
    DispatchKeySet{DispatchKey::Dense, DispatchKey::Quantized, DispatchKey::Sparse, DispatchKey::SparseCsr} |
    DispatchKeySet(DispatchKeySet::RAW, full_backend_mask);
constexpr DispatchKeySet functorch_transforms_ks{DispatchKey::FuncTorchBatched, DispatchKey::FuncTorchVmapMode,
                                                 DispatchKey::Batched, DispatchKey::VmapMode,
                                                 DispatchKey::FuncTorchGradWrapper};
// The runtime key sets of the alias keys (DispatchKeySet.cpp in c10).
constexpr DispatchKeySet backend_dispatch_keyset = autogradother_backends | DispatchKeySet(DispatchKey::Dense);
constexpr DispatchKeySet non_functional_backend_dispatch_keyset =
    backend_dispatch_keyset.remove(DispatchKey::Sparse)
        .remove_backend(BackendComponent::XLABit)
        .remove_backend(BackendComponent::LazyBit);
constexpr DispatchKeySet math_dispatch_keyset =
    backend_dispatch_keyset | autograd_dispatch_keyset | DispatchKeySet(DispatchKey::NestedTensor);
constexpr DispatchKeySet nested_dispatch_keyset =
    DispatchKeySet{DispatchKey::AutogradNestedTensor, DispatchKey::NestedTensor} |
    DispatchKeySet(DispatchKeySet::RAW, full_backend_mask);

static_assert(autograd_dispatch_keyset.raw_repr() == 0x7000000000);
static_assert(autocast_dispatch_keyset.raw_repr() == 0x3ff0000000000);
static_assert(default_included_set.raw_repr() == 0x804000000);
static_assert(autogradother_backends.raw_repr() == 0x1feffff);
static_assert(after_autograd_keyset.raw_repr() == 0x4000000fffffffff);
static_assert(after_ADInplaceOrView_keyset.raw_repr() == 0x40000007ffffffff);
static_assert(after_func_keyset.raw_repr() == 0x400000003fffffff);
static_assert(non_functional_backend_dispatch_keyset.raw_repr() == 0x17ffdf7);
static_assert(math_dispatch_keyset.raw_repr() == 0x7003ffffff);
static_assert(nested_dispatch_keyset.raw_repr() == 0x400200ffff);

// The runtime keys an alias key stands for (the key itself for a non-alias key).
DispatchKeySet getRuntimeDispatchKeySet(DispatchKey t);
// Whether runtime key k is covered by alias (or plain) key t.
bool runtimeDispatchKeySetHas(DispatchKey t, DispatchKey k);
// Whether runtime key k (not Undefined) is one of alias key `alias`'s.
bool isIncludedInAlias(DispatchKey k, DispatchKey alias);
// The backend keys whose kernels an Autograd<X> key stands in front of.
DispatchKeySet getBackendKeySetFromAutograd(DispatchKey t);
bool isBackendDispatchKey(DispatchKey t);
// ADInplaceOrView + Autograd<b> (AutogradOther for HIP, VE and no backend).
DispatchKeySet getAutogradRelatedKeySetFromBackend(BackendComponent b);
// The autograd key in front of backend b: Autograd<b>, or AutogradOther for HIP, VE and none
// (c10 defines it as the highest key of the set above).
DispatchKey getAutogradKeyFromBackend(BackendComponent b);
// Autocast<b> where PyTorch has one, else empty.
DispatchKeySet getAutocastRelatedKeySetFromBackend(BackendComponent b);

}  // namespace dscope
