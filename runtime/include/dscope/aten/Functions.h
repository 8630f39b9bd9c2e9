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
#include "dscope/Dispatcher.h"
#include "dscope/DispatchKeySet.h"
#include "dscope/ScalarType.h"
#include "dscope/Tensor.h"

#include <vector>

namespace dscope::at {

namespace _ops {

// What every operator struct gets from its name, overload and C++ signature: the typed handle,
// looked up once, and call / redispatch through it (PyTorch's generated Operators.cpp).
template <class Op, class Sig>
struct TypedOp;
template <class Op, class Ret, class... Args>
struct TypedOp<Op, Ret(Args...)> {
  using schema = Ret(Args...);
  static const TypedOperatorHandle<schema>& handle() {
    static const auto h = Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name).template typed<schema>();
    return h;
  }
  static Ret call(Args... args) { return handle().call(std::forward<Args>(args)...); }
  static Ret redispatch(DispatchKeySet ks, Args... args) { return handle().redispatch(ks, std::forward<Args>(args)...); }
};

// Each struct: the operator's name, overload and schema text (the one m.def() registers); its C++
// signature, call and redispatch come from TypedOp.

// Reduced vs PyTorch: no layout, pin_memory or memory_format arguments.
struct empty_memory_format : TypedOp<empty_memory_format, Tensor(IntArrayRef, std::optional<ScalarType>, std::optional<Device>)> {
  static constexpr const char* name = "aten::empty";
  static constexpr const char* overload_name = "memory_format";
  static constexpr const char* schema_str =
      "empty.memory_format(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor";
};

// zeros / ones / randn: reduced vs PyTorch like empty (no layout, pin_memory).
struct zeros : TypedOp<zeros, Tensor(IntArrayRef, std::optional<ScalarType>, std::optional<Device>)> {
  static constexpr const char* name = "aten::zeros";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "zeros(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor";
};

struct ones : TypedOp<ones, Tensor(IntArrayRef, std::optional<ScalarType>, std::optional<Device>)> {
  static constexpr const char* name = "aten::ones";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "ones(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor";
};

struct randn : TypedOp<randn, Tensor(IntArrayRef, std::optional<ScalarType>, std::optional<Device>)> {
  static constexpr const char* name = "aten::randn";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "randn(int[] size, *, ScalarType? dtype=None, Device? device=None) -> Tensor";
};

struct fill__Scalar : TypedOp<fill__Scalar, Tensor(const Tensor&, const Scalar&)> {
  static constexpr const char* name = "aten::fill_";
  static constexpr const char* overload_name = "Scalar";
  static constexpr const char* schema_str = "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)";
};

// Reduced vs PyTorch: an optional integer seed instead of `Generator? generator`.
struct normal_ : TypedOp<normal_, Tensor(const Tensor&, double, double, std::optional<int64_t>)> {
  static constexpr const char* name = "aten::normal_";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "normal_(Tensor(a!) self, float mean=0, float std=1, *, int? seed=None) -> Tensor(a!)";
};

struct add_Tensor : TypedOp<add_Tensor, Tensor(const Tensor&, const Tensor&, const Scalar&)> {
  static constexpr const char* name = "aten::add";
  static constexpr const char* overload_name = "Tensor";
  static constexpr const char* schema_str = "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
};

struct add__Tensor : TypedOp<add__Tensor, Tensor(const Tensor&, const Tensor&, const Scalar&)> {
  static constexpr const char* name = "aten::add_";
  static constexpr const char* overload_name = "Tensor";
  static constexpr const char* schema_str =
      "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)";
};

struct mul_Tensor : TypedOp<mul_Tensor, Tensor(const Tensor&, const Tensor&)> {
  static constexpr const char* name = "aten::mul";
  static constexpr const char* overload_name = "Tensor";
  static constexpr const char* schema_str = "mul.Tensor(Tensor self, Tensor other) -> Tensor";
};

struct mm : TypedOp<mm, Tensor(const Tensor&, const Tensor&)> {
  static constexpr const char* name = "aten::mm";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str = "mm(Tensor self, Tensor mat2) -> Tensor";
};

struct sum : TypedOp<sum, Tensor(const Tensor&, std::optional<ScalarType>)> {
  static constexpr const char* name = "aten::sum";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str = "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor";
};

struct relu : TypedOp<relu, Tensor(const Tensor&)> {
  static constexpr const char* name = "aten::relu";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str = "relu(Tensor self) -> Tensor";
};

struct threshold_backward : TypedOp<threshold_backward, Tensor(const Tensor&, const Tensor&, const Scalar&)> {
  static constexpr const char* name = "aten::threshold_backward";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor";
};

struct copy_ : TypedOp<copy_, Tensor(const Tensor&, const Tensor&, bool)> {
  static constexpr const char* name = "aten::copy_";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str = "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)";
};

// Reduced vs PyTorch: no layout, pin_memory or memory_format arguments.
struct _to_copy : TypedOp<_to_copy, Tensor(const Tensor&, std::optional<ScalarType>, std::optional<Device>, bool)> {
  static constexpr const char* name = "aten::_to_copy";
  static constexpr const char* overload_name = "";
  static constexpr const char* schema_str =
      "_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, bool non_blocking=False) -> Tensor";
};

// Reduced vs PyTorch: no memory_format argument.
struct to_device : TypedOp<to_device, Tensor(const Tensor&, Device, ScalarType, bool, bool)> {
  static constexpr const char* name = "aten::to";
  static constexpr const char* overload_name = "device";
  static constexpr const char* schema_str =
      "to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False) -> Tensor(a)";
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
