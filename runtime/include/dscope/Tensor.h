// A minimal refcounted Tensor: enough state to dispatch and compute like PyTorch.
//
// Layout is plain on purpose (fixed-size sizes/strides arrays, a raw storage pointer): a
// debugger reads a TensorImpl without calling any code.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dscope/Device.h"
#include "dscope/DispatchKeySet.h"
#include "dscope/ScalarType.h"

namespace dscope {

using IntArrayRef = std::span<const int64_t>;

namespace autograd {
struct Node;
}

// Where the bytes of a device come from. CPU and Meta are built in; a backend (CUDA,
// a PrivateUse1 device) installs its own with setAllocator.
struct Allocator {
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr) = 0;
};
void setAllocator(DeviceType t, Allocator* a);
Allocator* getAllocator(DeviceType t);  // throws dscope::Error when none is installed

// Refcount base for intrusive_ptr (the count starts at 1 for the creating pointer).
struct intrusive_target {
  std::atomic<uint32_t> refcount_{1};
};

template <class T>
class intrusive_ptr {
 public:
  intrusive_ptr() = default;
  static intrusive_ptr adopt(T* p) { intrusive_ptr r; r.p_ = p; return r; }  // takes the initial ref
  intrusive_ptr(const intrusive_ptr& o) : p_(o.p_) { retain(); }
  intrusive_ptr(intrusive_ptr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  intrusive_ptr& operator=(intrusive_ptr o) noexcept { std::swap(p_, o.p_); return *this; }
  ~intrusive_ptr() { release(); }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  uint32_t use_count() const { return p_ ? p_->refcount_.load(std::memory_order_relaxed) : 0; }

 private:
  void retain() { if (p_) p_->refcount_.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (p_ && p_->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete p_;
  }
  T* p_ = nullptr;
};

struct StorageImpl : intrusive_target {
  void* data = nullptr;     // null for Meta
  size_t nbytes = 0;
  Device device;
  Allocator* allocator = nullptr;            // frees data; null when not owned
  std::atomic<uint32_t> version{0};          // bumped by in-place ops (shared by all views)
  ~StorageImpl();
};

class Tensor;

// Autograd state, present only on tensors that take part in autograd.
struct AutogradMeta {
  std::unique_ptr<Tensor> grad;                // accumulated gradient of a leaf
  std::shared_ptr<autograd::Node> grad_fn;     // producer of a non-leaf
  uint32_t output_nr = 0;                      // which output of grad_fn this is
  bool requires_grad = false;                  // set on leaves by the user
};

struct TensorImpl : intrusive_target {
  static constexpr int kMaxDim = 8;

  DispatchKeySet key_set;
  ScalarType dtype = ScalarType::Float;
  Device device;
  uint8_t dim = 0;
  int64_t sizes[kMaxDim] = {};
  int64_t strides[kMaxDim] = {};
  int64_t storage_offset = 0;  // in elements
  intrusive_ptr<StorageImpl> storage;
  std::unique_ptr<AutogradMeta> autograd_meta;

  int64_t numel() const;
  bool is_contiguous() const;
};

// The key set PyTorch gives a dense tensor on device type t:
// {backend, ADInplaceOrView, Autograd<backend>, Autocast<backend>}.
DispatchKeySet computeTensorKeySet(DeviceType t);

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  // Dispatch reads this: an undefined tensor contributes nothing.
  DispatchKeySet key_set() const { return impl_ ? impl_->key_set : DispatchKeySet(); }
  bool is_same(const Tensor& o) const { return impl_.get() == o.impl_.get(); }
  uint32_t use_count() const { return impl_.use_count(); }

  int64_t dim() const { return impl_->dim; }
  IntArrayRef sizes() const { return {impl_->sizes, impl_->dim}; }
  IntArrayRef strides() const { return {impl_->strides, impl_->dim}; }
  int64_t size(int64_t d) const { return impl_->sizes[d < 0 ? d + dim() : d]; }
  int64_t stride(int64_t d) const { return impl_->strides[d < 0 ? d + dim() : d]; }
  int64_t numel() const { return impl_->numel(); }
  int64_t storage_offset() const { return impl_->storage_offset; }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  ScalarType scalar_type() const { return impl_->dtype; }
  ScalarType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->device; }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_meta() const { return device().is_meta(); }
  size_t element_size() const { return elementSize(dtype()); }
  uint32_t _version() const { return impl_->storage->version.load(std::memory_order_relaxed); }
  void bump_version() const { impl_->storage->version.fetch_add(1, std::memory_order_relaxed); }

  // Raw element pointer (storage offset applied); null for Meta tensors.
  void* data_ptr() const;
  template <class T>
  T* data_ptr() const { return static_cast<T*>(data_ptr()); }
  // The value of a one-element CPU tensor.
  double item() const;
  std::string toString() const;  // "Tensor[2, 3] float32 cpu requires_grad"

  // ---- autograd ----
  bool requires_grad() const;
  Tensor& set_requires_grad(bool r);
  const Tensor& grad() const;                 // undefined tensor when none
  void set_grad(const Tensor& g) const;
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  bool is_leaf() const { return !grad_fn(); }
  uint32_t output_nr() const;
  void set_history(std::shared_ptr<autograd::Node> fn, uint32_t output_nr) const;
  void backward(const Tensor& gradient = Tensor()) const;
  Tensor detach() const;  // shares storage, no autograd history

  // ---- views (plain functions of the runtime, not dispatched operators) ----
  Tensor t() const;                          // 2-D transpose view
  Tensor expand(IntArrayRef sizes) const;    // broadcast a 0-d or same-rank tensor (stride 0)
  Tensor as_strided_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const;

  // ---- operator methods, each a Dispatcher call (defined in the aten library) ----
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add_(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mm(const Tensor& mat2) const;
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor relu() const;
  Tensor copy_(const Tensor& src, bool non_blocking = false) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device) const { return to(device, dtype()); }
  Tensor to(ScalarType dtype) const { return to(device(), dtype); }

 private:
  AutogradMeta& autogradMeta() const;
  intrusive_ptr<TensorImpl> impl_;
};

using TensorList = std::span<const Tensor>;

// A new tensor with fresh storage from the device's allocator (what empty() kernels call).
Tensor make_tensor(IntArrayRef sizes, ScalarType dtype, Device device);
std::vector<int64_t> contiguous_strides(IntArrayRef sizes);

// Options for factories (c10::TensorOptions, reduced to what we support).
struct TensorOptions {
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;

  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}
  TensorOptions(Device d) : device_(d) {}
  TensorOptions(DeviceType d) : device_(Device(d)) {}
  TensorOptions dtype(ScalarType t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions device(Device d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions requires_grad(bool r) const { auto o = *this; o.requires_grad_ = r; return o; }
};

}  // namespace dscope
