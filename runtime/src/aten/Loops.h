// Private helpers of the CPU kernels: one dtype switch and one strided element walk.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "dscope/Error.h"
#include "dscope/Tensor.h"

namespace dscope::at::native {

template <class T>
struct TypeTag {
  using type = T;
};

// Calls f(TypeTag<T>{}) with the C++ element type of `dtype`.
template <class F>
decltype(auto) dispatchDtype(ScalarType dtype, F&& f) {
  switch (dtype) {
    case ScalarType::Long: return f(TypeTag<int64_t>{});
    case ScalarType::Half: return f(TypeTag<Half>{});
    case ScalarType::Float: return f(TypeTag<float>{});
    case ScalarType::Double: return f(TypeTag<double>{});
    case ScalarType::BFloat16: return f(TypeTag<BFloat16>{});
  }
  throw Error("unsupported dtype " + std::to_string(static_cast<int>(dtype)));
}

// The type arithmetic happens in: 16-bit floats compute in float (c10's opmath_type).
template <class T>
using opmath_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
// The type reductions accumulate in on CPU (c10's acc_type): float accumulates in double.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, float>, double, opmath_t<T>>;

// Element conversion through the op-math types (Half -> float -> double, int64 -> float -> Half ...).
template <class To, class From>
To convert(const From& v) {
  return To(static_cast<opmath_t<To>>(static_cast<opmath_t<From>>(v)));
}

// Calls f(offsets) for every index of `sizes` in row-major order, where offsets[k] is the
// element offset of that index in tensor k (its strides may be anything, 0 included).
template <size_t N, class F>
void forEachOffset(IntArrayRef sizes, const std::array<IntArrayRef, N>& strides, F&& f) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const int dims = static_cast<int>(sizes.size());
  std::array<int64_t, TensorImpl::kMaxDim> index{};
  std::array<int64_t, N> offsets{};
  for (int64_t n = 0; n < numel; ++n) {
    f(offsets);
    for (int d = dims - 1; d >= 0; --d) {  // odometer increment, innermost dimension first
      if (++index[d] < sizes[d]) {
        for (size_t k = 0; k < N; ++k) offsets[k] += strides[k][d];
        break;
      }
      index[d] = 0;
      for (size_t k = 0; k < N; ++k) offsets[k] -= strides[k][d] * (sizes[d] - 1);
    }
  }
}

// Calls f(e0, e1, ...) with references to the matching elements of tensors t0, t1, ... (all of
// t0's shape), whose element types are Ts... (const-qualify the inputs).
template <class... Ts, class F, class... Tensors>
void forEachElement(F&& f, const Tensors&... tensors) {
  static_assert(sizeof...(Ts) == sizeof...(Tensors), "one element type per tensor");
  constexpr size_t N = sizeof...(Ts);
  std::array<const Tensor*, N> ts{&tensors...};
  std::array<IntArrayRef, N> strides{tensors.strides()...};
  [&]<size_t... I>(std::index_sequence<I...>) {
    std::tuple<Ts*...> data{static_cast<Ts*>(ts[I]->data_ptr())...};
    forEachOffset<N>(ts[0]->sizes(), strides,
                     [&](const std::array<int64_t, N>& off) { f(std::get<I>(data)[off[I]]...); });
  }(std::index_sequence_for<Ts...>());
}

// dst[i] = src[i] converted to dst's dtype (same shapes, any strides; host memory).
void copyElements(const Tensor& dst, const Tensor& src);

}  // namespace dscope::at::native

namespace dscope::at::native {
// Reseeds the generator normal_ uses when no seed is given.
void manualSeedDefaultGenerator(uint64_t seed);
}  // namespace dscope::at::native
