#include "dscope/Tensor.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "dscope/Error.h"
#include "dscope/format/Tensor.h"

namespace dscope {

// ---------------------------------------------------------------- allocators

namespace {

struct CPUAllocator final : Allocator {
  void* allocate(size_t nbytes) override {
    void* p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
    DSCOPE_CHECK(p || nbytes == 0, "CPU allocator: out of memory allocating " + std::to_string(nbytes) + " bytes");
    return p;
  }
  void deallocate(void* p) override { std::free(p); }
};

std::atomic<Allocator*>& allocatorSlot(DeviceType t) {
  static std::atomic<Allocator*> slots[4] = {};
  switch (t) {
    case DeviceType::CPU: return slots[0];
    case DeviceType::CUDA: return slots[1];
    case DeviceType::Meta: return slots[2];
    case DeviceType::PrivateUse1: return slots[3];
  }
  throw Error("unknown device type");
}

}  // namespace

void setAllocator(DeviceType t, Allocator* a) { allocatorSlot(t).store(a); }

Allocator* getAllocator(DeviceType t) {
  static CPUAllocator cpu;
  if (t == DeviceType::CPU && !allocatorSlot(t).load()) return &cpu;
  Allocator* a = allocatorSlot(t).load();
  DSCOPE_CHECK(a, std::string("no allocator is registered for device type ") + toString(t) +
                      " (a backend installs one with dscope::setAllocator)");
  return a;
}

StorageImpl::~StorageImpl() {
  if (allocator && data) allocator->deallocate(data);
}

// ---------------------------------------------------------------- TensorImpl

int64_t TensorImpl::numel() const {
  int64_t n = 1;
  for (int i = 0; i < dim; ++i) n *= sizes[i];
  return n;
}

bool TensorImpl::is_contiguous() const {
  int64_t expected = 1;
  for (int i = dim - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

DispatchKeySet computeTensorKeySet(DeviceType t) {
  BackendComponent b = toBackendComponent(t);
  return DispatchKeySet(computeDispatchKey(t)) | getAutogradRelatedKeySetFromBackend(b) |
         getAutocastRelatedKeySetFromBackend(b);
}

std::vector<int64_t> contiguous_strides(IntArrayRef sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

namespace {
intrusive_ptr<TensorImpl> newImpl(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device) {
  DSCOPE_CHECK(sizes.size() <= TensorImpl::kMaxDim,
               "tensors have at most " + std::to_string(TensorImpl::kMaxDim) + " dimensions");
  for (int64_t s : sizes) DSCOPE_CHECK(s >= 0, "negative dimension " + std::to_string(s));
  auto impl = intrusive_ptr<TensorImpl>::adopt(new TensorImpl());
  impl->key_set = computeTensorKeySet(device.type);
  impl->dtype = dtype;
  impl->device = device;
  impl->dim = static_cast<uint8_t>(sizes.size());
  std::copy(sizes.begin(), sizes.end(), impl->sizes);
  std::copy(strides.begin(), strides.end(), impl->strides);
  return impl;
}
}  // namespace

Tensor make_tensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  auto strides = contiguous_strides(sizes);
  auto impl = newImpl(sizes, strides, dtype, device);
  auto storage = intrusive_ptr<StorageImpl>::adopt(new StorageImpl());
  storage->device = device;
  storage->nbytes = static_cast<size_t>(impl->numel()) * elementSize(dtype);
  if (device.type != DeviceType::Meta) {
    storage->allocator = getAllocator(device.type);
    storage->data = storage->allocator->allocate(storage->nbytes);
  }
  impl->storage = std::move(storage);
  return Tensor(std::move(impl));
}

// ---------------------------------------------------------------- Tensor

void* Tensor::data_ptr() const {
  void* base = impl_->storage->data;
  return base ? static_cast<char*>(base) + impl_->storage_offset * static_cast<int64_t>(element_size()) : nullptr;
}

double Tensor::item() const {
  DSCOPE_CHECK(defined(), "item() on an undefined tensor");
  DSCOPE_CHECK(numel() == 1, "a Tensor with " + std::to_string(numel()) + " elements cannot be converted to Scalar");
  DSCOPE_CHECK(!is_meta(), "Tensor.item() cannot be called on meta tensors");
  // Another device's memory (CUDA) is read through a copy, as PyTorch's _local_scalar_dense does.
  if (!is_cpu()) return to(Device(DeviceType::CPU)).item();
  switch (dtype()) {
    case ScalarType::Long: return static_cast<double>(*data_ptr<int64_t>());
    case ScalarType::Half: return *data_ptr<Half>();
    case ScalarType::Float: return *data_ptr<float>();
    case ScalarType::Double: return *data_ptr<double>();
    case ScalarType::BFloat16: return *data_ptr<BFloat16>();
  }
  return 0;
}

std::string Tensor::toString() const {
  if (!defined()) return "Tensor(undefined)";
  return format::tensorLine(sizes(), dtype(), device(), requires_grad());
}

AutogradMeta& Tensor::autogradMeta() const {
  if (!impl_->autograd_meta) impl_->autograd_meta = std::make_unique<AutogradMeta>();
  return *impl_->autograd_meta;
}

bool Tensor::requires_grad() const {
  const auto& m = impl_->autograd_meta;
  return m && (m->requires_grad || m->grad_fn);
}

Tensor& Tensor::set_requires_grad(bool r) {
  DSCOPE_CHECK(!r || isFloatingType(dtype()), "only Tensors of floating point dtype can require gradients");
  DSCOPE_CHECK(is_leaf() || r, "you can only change requires_grad flags of leaf variables");
  autogradMeta().requires_grad = r;
  return *this;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  const auto& m = impl_->autograd_meta;
  return m && m->grad ? *m->grad : undefined;
}

void Tensor::set_grad(const Tensor& g) const { autogradMeta().grad = std::make_unique<Tensor>(g); }

const std::shared_ptr<autograd::Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<autograd::Node> none;
  const auto& m = impl_->autograd_meta;
  return m ? m->grad_fn : none;
}

uint32_t Tensor::output_nr() const { return impl_->autograd_meta ? impl_->autograd_meta->output_nr : 0; }

void Tensor::set_history(std::shared_ptr<autograd::Node> fn, uint32_t output_nr) const {
  auto& m = autogradMeta();
  m.grad_fn = std::move(fn);
  m.output_nr = output_nr;
}

Tensor Tensor::as_strided_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const {
  auto impl = newImpl(sizes, strides, dtype(), device());
  impl->key_set = impl_->key_set;
  impl->storage = impl_->storage;
  impl->storage_offset = offset;
  return Tensor(std::move(impl));
}

Tensor Tensor::detach() const { return as_strided_view(sizes(), strides(), storage_offset()); }

Tensor Tensor::t() const {
  DSCOPE_CHECK(dim() == 2, "t() expects a 2-D tensor, got " + std::to_string(dim()) + "-D");
  int64_t sz[2] = {size(1), size(0)};
  int64_t st[2] = {stride(1), stride(0)};
  return as_strided_view(sz, st, storage_offset());
}

Tensor Tensor::expand(IntArrayRef new_sizes) const {
  std::vector<int64_t> st(new_sizes.size(), 0);
  if (dim() != 0) {
    DSCOPE_CHECK(dim() == static_cast<int64_t>(new_sizes.size()), "expand: rank mismatch");
    for (int64_t i = 0; i < dim(); ++i) {
      DSCOPE_CHECK(size(i) == new_sizes[i] || size(i) == 1, "expand: size mismatch at dimension " + std::to_string(i));
      st[i] = size(i) == new_sizes[i] ? stride(i) : 0;
    }
  }
  return as_strided_view(new_sizes, st, storage_offset());
}

}  // namespace dscope
