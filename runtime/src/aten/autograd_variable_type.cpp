// Autograd kernels (PyTorch's generated VariableType / ADInplaceOrViewType) and the backward
// functions they record (torch/csrc/autograd/generated/Functions.h), for the ops with derivatives.
#include <array>
#include <functional>

#include "dscope/Library.h"
#include "dscope/LocalDispatchKeySet.h"
#include "dscope/aten/Functions.h"
#include "dscope/autograd/Autograd.h"

namespace dscope::autograd {
namespace {

// ---------------------------------------------------------------- backward functions

// Common shape: gradients for inputs whose edge is valid, undefined for the others.
template <size_t N>
std::vector<Tensor> gradsFor(const Node& node, std::array<std::function<Tensor()>, N> compute) {
  std::vector<Tensor> out(N);
  for (size_t i = 0; i < N; ++i)
    if (node.should_compute_output(i)) out[i] = compute[i]();
  return out;
}

Tensor scalarLike(const Tensor& t, const Scalar& value) {
  return at::full({}, value, TensorOptions(t.dtype()).device(t.device()));
}

struct AddBackward0 final : Node {
  Scalar alpha;
  std::string name() const override { return "AddBackward0"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    const Tensor& g = grads[0];
    return gradsFor<2>(*this, {[&] { return g; },
                               [&] { return alpha.toDouble() == 1.0 ? g : g.mul(scalarLike(g, alpha)); }});
  }
};

struct MulBackward0 final : Node {
  SavedVariable self_, other_;
  std::string name() const override { return "MulBackward0"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    const Tensor& g = grads[0];
    return gradsFor<2>(*this, {[&] { return g.mul(other_.unpack(*this)); }, [&] { return g.mul(self_.unpack(*this)); }});
  }
  void release_variables() override { self_.reset(); other_.reset(); }
};

struct MmBackward0 final : Node {
  SavedVariable self_, mat2_;
  std::string name() const override { return "MmBackward0"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    const Tensor& g = grads[0];
    return gradsFor<2>(*this, {[&] { return g.mm(mat2_.unpack(*this).t()); },
                               [&] { return self_.unpack(*this).t().mm(g); }});
  }
  void release_variables() override { self_.reset(); mat2_.reset(); }
};

struct SumBackward0 final : Node {
  std::vector<int64_t> self_sizes;
  std::string name() const override { return "SumBackward0"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    return gradsFor<1>(*this, {[&] { return grads[0].expand(self_sizes); }});  // a stride-0 view
  }
};

struct ReluBackward0 final : Node {
  SavedVariable result_;
  std::string name() const override { return "ReluBackward0"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    return gradsFor<1>(*this, {[&] { return at::threshold_backward(grads[0], result_.unpack(*this), 0); }});
  }
  void release_variables() override { result_.reset(); }
};

// copy_(self, src): self's old value is overwritten (zero gradient); src gets the gradient
// converted back to its own dtype and device.
struct CopyBackwards final : Node {
  ScalarType src_dtype = ScalarType::Float;
  Device src_device;
  std::string name() const override { return "CopyBackwards"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    const Tensor& g = grads[0];
    return gradsFor<2>(*this, {[&] { return at::zeros(g.sizes(), TensorOptions(g.dtype()).device(g.device())); },
                               [&] { return g.to(src_device, src_dtype); }});
  }
};

struct ToCopyBackward0 final : Node {
  ScalarType self_dtype = ScalarType::Float;
  Device self_device;
  std::string name() const override { return "ToCopyBackward0"; }
  std::vector<Tensor> apply(std::vector<Tensor> grads) override {
    return gradsFor<1>(*this, {[&] { return grads[0].to(self_device, self_dtype); }});
  }
};

// ---------------------------------------------------------------- autograd kernels

// Every autograd kernel computes its result below autograd: the key set as dispatched minus
// the autograd keys, with autograd and ADInplaceOrView excluded for nested calls.
constexpr DispatchKeySet belowAutograd(DispatchKeySet ks) { return ks & after_autograd_keyset; }

Tensor add_Tensor_autograd(DispatchKeySet ks, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  std::shared_ptr<AddBackward0> grad_fn;
  if (compute_requires_grad(self, other)) {
    grad_fn = std::make_shared<AddBackward0>();
    grad_fn->set_next_edges(collect_next_edges(self, other));
    grad_fn->alpha = alpha;
  }
  Tensor result;
  {
    AutoDispatchBelowADInplaceOrView guard;
    result = at::_ops::add_Tensor::redispatch(belowAutograd(ks), self, other, alpha);
  }
  if (grad_fn) set_history(result, grad_fn);
  return result;
}

Tensor add__Tensor_autograd(DispatchKeySet ks, const Tensor& self, const Tensor& other, const Scalar& alpha) {
  bool requires_grad = compute_requires_grad(self, other);
  check_inplace(self, requires_grad);
  std::shared_ptr<AddBackward0> grad_fn;
  if (requires_grad) {
    grad_fn = std::make_shared<AddBackward0>();
    grad_fn->set_next_edges(collect_next_edges(self, other));  // self's history before the update
    grad_fn->alpha = alpha;
  }
  {
    AutoDispatchBelowAutograd guard;  // ADInplaceOrView still runs: it bumps the version
    at::_ops::add__Tensor::redispatch(belowAutograd(ks), self, other, alpha);
  }
  if (grad_fn) rebase_history(self, grad_fn);
  return self;
}

Tensor mul_Tensor_autograd(DispatchKeySet ks, const Tensor& self, const Tensor& other) {
  std::shared_ptr<MulBackward0> grad_fn;
  if (compute_requires_grad(self, other)) {
    grad_fn = std::make_shared<MulBackward0>();
    grad_fn->set_next_edges(collect_next_edges(self, other));
    if (grad_fn->should_compute_output(1)) grad_fn->self_ = SavedVariable(self);
    if (grad_fn->should_compute_output(0)) grad_fn->other_ = SavedVariable(other);
  }
  Tensor result;
  {
    AutoDispatchBelowADInplaceOrView guard;
    result = at::_ops::mul_Tensor::redispatch(belowAutograd(ks), self, other);
  }
  if (grad_fn) set_history(result, grad_fn);
  return result;
}

Tensor mm_autograd(DispatchKeySet ks, const Tensor& self, const Tensor& mat2) {
  std::shared_ptr<MmBackward0> grad_fn;
  if (compute_requires_grad(self, mat2)) {
    grad_fn = std::make_shared<MmBackward0>();
    grad_fn->set_next_edges(collect_next_edges(self, mat2));
    if (grad_fn->should_compute_output(1)) grad_fn->self_ = SavedVariable(self);
    if (grad_fn->should_compute_output(0)) grad_fn->mat2_ = SavedVariable(mat2);
  }
  Tensor result;
  {
    AutoDispatchBelowADInplaceOrView guard;
    result = at::_ops::mm::redispatch(belowAutograd(ks), self, mat2);
  }
  if (grad_fn) set_history(result, grad_fn);
  return result;
}

Tensor sum_autograd(DispatchKeySet ks, const Tensor& self, std::optional<ScalarType> dtype) {
  std::shared_ptr<SumBackward0> grad_fn;
  if (compute_requires_grad(self)) {
    grad_fn = std::make_shared<SumBackward0>();
    grad_fn->set_next_edges(collect_next_edges(self));
    grad_fn->self_sizes.assign(self.sizes().begin(), self.sizes().end());
  }
  Tensor result;
  {
    AutoDispatchBelowADInplaceOrView guard;
    result = at::_ops::sum::redispatch(belowAutograd(ks), self, dtype);
  }
  if (grad_fn) set_history(result, grad_fn);
  return result;
}

Tensor relu_autograd(DispatchKeySet ks, const Tensor& self) {
  std::shared_ptr<ReluBackward0> grad_fn;
  if (compute_requires_grad(self)) {
    grad_fn = std::make_shared<ReluBackward0>();
    grad_fn->set_next_edges(collect_next_edges(self));
  }
  Tensor result;
  {
    AutoDispatchBelowADInplaceOrView guard;
    result = at::_ops::relu::redispatch(belowAutograd(ks), self);
  }
  if (grad_fn) {
    set_history(result, grad_fn);
    grad_fn->result_ = SavedVariable(result);  // saved detached: no cycle through grad_fn
  }
  return result;
}

Tensor copy__autograd(DispatchKeySet ks, const Tensor& self, const Tensor& src, bool non_blocking) {
  bool requires_grad = compute_requires_grad(self, src);
  check_inplace(self, requires_grad);
  std::shared_ptr<CopyBackwards> grad_fn;
  if (requires_grad) {
    grad_fn = std::make_shared<CopyBackwards>();
    grad_fn->set_next_edges(collect_next_edges(self, src));
    grad_fn->src_dtype = src.dtype();
    grad_fn->src_device = src.device();
  }
  {
    AutoDispatchBelowAutograd guard;
    at::_ops::copy_::redispatch(belowAutograd(ks), self, src, non_blocking);
  }
  if (grad_fn) rebase_history(self, grad_fn);
  return self;
}

Tensor _to_copy_autograd(DispatchKeySet ks, const Tensor& self, std::optional<ScalarType> dtype,
                         std::optional<Device> device, bool non_blocking) {
  std::shared_ptr<ToCopyBackward0> grad_fn;
  if (compute_requires_grad(self)) {
    grad_fn = std::make_shared<ToCopyBackward0>();
    grad_fn->set_next_edges(collect_next_edges(self));
    grad_fn->self_dtype = self.dtype();
    grad_fn->self_device = self.device();
  }
  Tensor result;
  {
    AutoDispatchBelowADInplaceOrView guard;
    result = at::_ops::_to_copy::redispatch(belowAutograd(ks), self, dtype, device, non_blocking);
  }
  if (grad_fn) set_history(result, grad_fn);
  return result;
}

// ---------------------------------------------------------------- ADInplaceOrView kernels

// In-place ops: run below ADInplaceOrView, then bump self's version counter so that saved
// tensors notice the change. One template for every in-place op of shape (self, args...).
template <class Op, class Sig = typename Op::schema>
struct InplaceOrView;
template <class Op, class... Args>
struct InplaceOrView<Op, Tensor(const Tensor&, Args...)> {
  static Tensor kernel(DispatchKeySet ks, const Tensor& self, Args... args) {
    {
      AutoDispatchBelowADInplaceOrView guard;
      Op::redispatch(ks & after_ADInplaceOrView_keyset, self, args...);
    }
    self.bump_version();
    return self;
  }
};

}  // namespace

DSCOPE_LIBRARY_IMPL(aten, Autograd, m) {
  m.impl("add.Tensor", add_Tensor_autograd);
  m.impl("add_.Tensor", add__Tensor_autograd);
  m.impl("mul.Tensor", mul_Tensor_autograd);
  m.impl("mm", mm_autograd);
  m.impl("sum", sum_autograd);
  m.impl("relu", relu_autograd);
  m.impl("copy_", copy__autograd);
  m.impl("_to_copy", _to_copy_autograd);
}

DSCOPE_LIBRARY_IMPL(aten, ADInplaceOrView, m) {
  m.impl("add_.Tensor", &InplaceOrView<at::_ops::add__Tensor>::kernel);
  m.impl("copy_", &InplaceOrView<at::_ops::copy_>::kernel);
  m.impl("fill_.Scalar", &InplaceOrView<at::_ops::fill__Scalar>::kernel);
  m.impl("normal_", &InplaceOrView<at::_ops::normal_>::kernel);
}

}  // namespace dscope::autograd
