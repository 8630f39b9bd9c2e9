// The aten-like operator library: typed operator handles (at::_ops::X, as in PyTorch's
// Operators.h) and convenience functions (at::mm(a, b), ...). Each handle looks its
// operator up once and caches the typed handle in a function-local static.
//
// Deviation from c10: in-place ops (add_, fill_, normal_, copy_) return a new `Tensor` handle
// to self instead of `Tensor&` (our kernels all return by value; the handle shares self's impl).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

#include "dscope/Device.h"
#include "dscope/DispatchKeySet.h"
#include "dscope/ScalarType.h"
#include "dscope/Tensor.h"

#include <vector>

namespace dscope::at {

namespace _ops {

// Each struct: the operator's name, overload, schema text (the one m.def() registers), its C++
// signature (`schema`), and call / redispatch through the dispatcher.

// Reduced vs PyTorch: no layout, pin_memory or memory_format arguments.
struct empty_memory_format {
  static constexpr const char* name = "aten::empty";
  static constexpr const char* overload_name = "memory_format";
  static constexpr const char* schema_str =
      "empty.memory_format(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor";
  using schema = Tensor(IntArrayRef, std::optional<ScalarType>, std::optional<Device>);
  static Tensor call(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device);
  static Tensor redispatch(DispatchKeySet ks, IntArrayRef size, std::optional<ScalarType> dtype,
                           std::optional<Device> device);
};

// zeros / ones / randn: reduced vs PyTorch like empty (no layout, pin_memory).
struct zeros {
  static constexpr const char* name = "aten::zeros";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "zeros(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor";
  using schema = Tensor(IntArrayRef, std::optional<ScalarType>, std::optional<Device>);
  static Tensor call(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device);
  static Tensor redispatch(DispatchKeySet ks, IntArrayRef size, std::optional<ScalarType> dtype,
                           std::optional<Device> device);
};

struct ones {
  static constexpr const char* name = "aten::ones";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "ones(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor";
  using schema = Tensor(IntArrayRef, std::optional<ScalarType>, std::optional<Device>);
  static Tensor call(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device);
  static Tensor redispatch(DispatchKeySet ks, IntArrayRef size, std::optional<ScalarType> dtype,
                           std::optional<Device> device);
};

struct randn {
  static constexpr const char* name = "aten::randn";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "randn(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor";
  using schema = Tensor(IntArrayRef, std::optional<ScalarType>, std::optional<Device>);
  static Tensor call(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device);
  static Tensor redispatch(DispatchKeySet ks, IntArrayRef size, std::optional<ScalarType> dtype,
                           std::optional<Device> device);
};

struct fill__Scalar {
  static constexpr const char* name = "aten::fill_";
  static constexpr const char* overload_name = "Scalar";
  static constexpr const char* schema_str = "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)";
  using schema = Tensor(const Tensor&, const Scalar&);
  static Tensor call(const Tensor& self, const Scalar& value);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& self, const Scalar& value);
};

// Reduced vs PyTorch: an optional integer seed instead of `Generator? generator`.
struct normal_ {
  static constexpr const char* name = "aten::normal_";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "normal_(Tensor(a!) self, float mean=0, float std=1, *, int? seed=None) -> Tensor(a!)";
  using schema = Tensor(const Tensor&, double, double, std::optional<int64_t>);
  static Tensor call(const Tensor& self, double mean, double std, std::optional<int64_t> seed);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& self, double mean, double std,
                           std::optional<int64_t> seed);
};

struct add_Tensor {
  static constexpr const char* name = "aten::add";
  static constexpr const char* overload_name = "Tensor";
  static constexpr const char* schema_str = "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
  using schema = Tensor(const Tensor&, const Tensor&, const Scalar&);
  static Tensor call(const Tensor& self, const Tensor& other, const Scalar& alpha);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& self, const Tensor& other, const Scalar& alpha);
};

struct add__Tensor {
  static constexpr const char* name = "aten::add_";
  static constexpr const char* overload_name = "Tensor";
  static constexpr const char* schema_str =
      "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)";
  using schema = Tensor(const Tensor&, const Tensor&, const Scalar&);
  static Tensor call(const Tensor& self, const Tensor& other, const Scalar& alpha);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& self, const Tensor& other, const Scalar& alpha);
};

struct mul_Tensor {
  static constexpr const char* name = "aten::mul";
  static constexpr const char* overload_name = "Tensor";
  static constexpr const char* schema_str = "mul.Tensor(Tensor self, Tensor other) -> Tensor";
  using schema = Tensor(const Tensor&, const Tensor&);
  static Tensor call(const Tensor& self, const Tensor& other);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& self, const Tensor& other);
};

struct mm {
  static constexpr const char* name = "aten::mm";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str = "mm(Tensor self, Tensor mat2) -> Tensor";
  using schema = Tensor(const Tensor&, const Tensor&);
  static Tensor call(const Tensor& self, const Tensor& mat2);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& self, const Tensor& mat2);
};

struct sum {
  static constexpr const char* name = "aten::sum";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str = "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor";
  using schema = Tensor(const Tensor&, std::optional<ScalarType>);
  static Tensor call(const Tensor& self, std::optional<ScalarType> dtype);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& self, std::optional<ScalarType> dtype);
};

struct relu {
  static constexpr const char* name = "aten::relu";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str = "relu(Tensor self) -> Tensor";
  using schema = Tensor(const Tensor&);
  static Tensor call(const Tensor& self);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& self);
};

struct threshold_backward {
  static constexpr const char* name = "aten::threshold_backward";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor";
  using schema = Tensor(const Tensor&, const Tensor&, const Scalar&);
  static Tensor call(const Tensor& grad_output, const Tensor& self, const Scalar& threshold);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& grad_output, const Tensor& self, const Scalar& threshold);
};

struct copy_ {
  static constexpr const char* name = "aten::copy_";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str = "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)";
  using schema = Tensor(const Tensor&, const Tensor&, bool);
  static Tensor call(const Tensor& self, const Tensor& src, bool non_blocking);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& self, const Tensor& src, bool non_blocking);
};

// Reduced vs PyTorch: no layout, pin_memory or memory_format arguments.
struct _to_copy {
  static constexpr const char* name = "aten::_to_copy";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, bool non_blocking=False) -> Tensor";
  using schema = Tensor(const Tensor&, std::optional<ScalarType>, std::optional<Device>, bool);
  static Tensor call(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
                     bool non_blocking);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& self, std::optional<ScalarType> dtype,
                           std::optional<Device> device, bool non_blocking);
};

// Reduced vs PyTorch: no memory_format argument.
struct to_device {
  static constexpr const char* name = "aten::to";
  static constexpr const char* overload_name = "device";
  static constexpr const char* schema_str =
      "to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False) -> Tensor(a)";
  using schema = Tensor(const Tensor&, Device, ScalarType, bool, bool);
  static Tensor call(const Tensor& self, Device device, ScalarType dtype, bool non_blocking, bool copy);
  static Tensor redispatch(DispatchKeySet ks, const Tensor& self, Device device, ScalarType dtype, bool non_blocking,
                           bool copy);
};

}  // namespace _ops

// A size argument that also binds a braced list (at::ones({2, 3})), as c10::IntArrayRef does;
// std::span cannot. The list lives until the end of the call's full expression.
struct SizesRef : IntArrayRef {
  SizesRef() = default;
  SizesRef(IntArrayRef r) : IntArrayRef(r) {}
  SizesRef(const std::vector<int64_t>& v) : IntArrayRef(v) {}
  SizesRef(std::initializer_list<int64_t> l) : IntArrayRef(l.begin(), l.size()) {}
};

// ---- convenience functions (each one dispatcher call; factories honour options.requires_grad_) ----
Tensor empty(SizesRef size, TensorOptions options = {});
Tensor zeros(SizesRef size, TensorOptions options = {});
Tensor ones(SizesRef size, TensorOptions options = {});
Tensor randn(SizesRef size, TensorOptions options = {});
// A tensor of `size` filled with `value` (empty + fill_; not an operator of its own).
Tensor full(SizesRef size, const Scalar& value, TensorOptions options = {});
Tensor fill_(const Tensor& self, const Scalar& value);
Tensor normal_(const Tensor& self, double mean = 0, double std = 1, std::optional<int64_t> seed = std::nullopt);
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor add_(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor mul(const Tensor& self, const Tensor& other);
Tensor mm(const Tensor& self, const Tensor& mat2);
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor relu(const Tensor& self);
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold);
Tensor copy_(const Tensor& self, const Tensor& src, bool non_blocking = false);
Tensor _to_copy(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt,
                std::optional<Device> device = std::nullopt, bool non_blocking = false);

// Reseeds the default generator that normal_/randn use when no seed is given (torch.manual_seed).
void manual_seed(uint64_t seed);

}  // namespace dscope::at
