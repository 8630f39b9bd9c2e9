// The runtime's layout profile's values, from the one list in debug/LayoutProfile.h: this is where
// that list's expressions are evaluated (runtime/tools/write_profile.cpp writes them into the
// profile text the descriptor carries; tests check this build's objects with them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "dscope/DebugInterface.h"
#include "dscope/Dispatcher.h"
#include "dscope/Tensor.h"

namespace dscope::debug {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"

// A friend of the runtime classes whose private members the list names.
struct Layout {
  using AnnotatedKernel = impl::AnnotatedKernel;
  using OperatorEntry = impl::OperatorEntry;
  using RegisteredSchema = impl::RegisteredSchema;

  // Layout::Dispatcher_operators_head, Layout::sizeof_Tensor, ...: one constant per entry. Readers
  // take offsets from the profile of the runtime they read, never from these constants.
#define DSCOPE_LAYOUT_CONSTANT(name, expression) static constexpr uint64_t name = (expression);
  DSCOPE_LAYOUT_PROFILE(DSCOPE_LAYOUT_CONSTANT)
#undef DSCOPE_LAYOUT_CONSTANT

  // FNV-1a 64 (dscope_fnv1a64's basis) over the little-endian bytes of each value.
  static constexpr uint64_t mix(std::initializer_list<uint64_t> values) {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t v : values)
      for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
    return h;
  }

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
