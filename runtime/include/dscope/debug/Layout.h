// The runtime's layout profile and its hash, from the one list in debug/LayoutProfile.h: this is
// where that list's expressions are evaluated. The descriptor carries profile() and hash(); a
// reader compiled from other headers than the runtime it reads sees a different hash and refuses
// to decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "dscope/DebugInterface.h"
#include "dscope/Dispatcher.h"
#include "dscope/Tensor.h"

// Nonzero only in a test build of the tools that must see every runtime as foreign (a core from
// another build) without changing any struct: changing a size would break the one-definition rule
// with the objects the tools share with the runtime.
#ifndef DSCOPE_LAYOUT_HASH_SALT
#define DSCOPE_LAYOUT_HASH_SALT 0
#endif

namespace dscope::debug {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"

// A friend of the runtime classes whose private members the list names. Readers take offsets
// from a profile (the one in the descriptor they read), never from these constants: the named
// constants are for code that lays out or checks this build's own objects (tests).
struct Layout {
  using AnnotatedKernel = impl::AnnotatedKernel;
  using OperatorEntry = impl::OperatorEntry;
  using RegisteredSchema = impl::RegisteredSchema;

  // Layout::Dispatcher_operators_head, Layout::sizeof_Tensor, ...: one constant per entry.
#define DSCOPE_LAYOUT_CONSTANT(name, expression) static constexpr uint64_t name = (expression);
  DSCOPE_LAYOUT_PROFILE(DSCOPE_LAYOUT_CONSTANT)
#undef DSCOPE_LAYOUT_CONSTANT

  // The profile of this build: what the runtime's descriptor carries.
  static constexpr dscope_layout_profile profile() {
    return {
#define DSCOPE_LAYOUT_VALUE(name, expression) .name = name,
        DSCOPE_LAYOUT_PROFILE(DSCOPE_LAYOUT_VALUE)
#undef DSCOPE_LAYOUT_VALUE
    };
  }

  // FNV-1a 64 (dscope_fnv1a64's basis) over the little-endian bytes of each value.
  static constexpr uint64_t mix(std::initializer_list<uint64_t> values) {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t v : values)
      for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
    return h;
  }
  // The layout hash of any profile: the salt, then every value in list order. Equal profiles
  // hash equal, so a reader compares one number before it trusts a profile's offsets.
  static constexpr uint64_t hashOf(const dscope_layout_profile& p) {
    return mix({
        DSCOPE_LAYOUT_HASH_SALT,
#define DSCOPE_LAYOUT_HASHED(name, expression) p.name,
        DSCOPE_LAYOUT_PROFILE(DSCOPE_LAYOUT_HASHED)
#undef DSCOPE_LAYOUT_HASHED
    });
  }
  static constexpr uint64_t hash() { return hashOf(profile()); }

  // What the entries with a fixed value assume: a one-pointer handle (Tensor, OperatorHandle)
  // holds its pointer at offset 0 (its only member, private); std::unique_ptr (default deleter)
  // and std::shared_ptr hold the object pointer first, and a libstdc++ std::string is
  // {char* data, size_t length, ...} (unit tests check all three in-process).
  static_assert(sizeof(Tensor) == sizeof(void*) && sizeof(OperatorHandle) == sizeof(void*));
  static_assert(sizeof(std::unique_ptr<AutogradMeta>) == sizeof(void*));
  static_assert(sizeof(Device) == 2 && sizeof(ScalarType) == 1);
};

#pragma GCC diagnostic pop

}  // namespace dscope::debug
