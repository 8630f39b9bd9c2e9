// CPU kernels: real numerics for int64, float16, bfloat16, float32, float64 through any strides.
// Every elementwise kernel goes through forEachElement and dispatchDtype (Loops.h).
#include <mutex>
#include <random>

#include "Checks.h"
#include "Loops.h"
#include "dscope/Library.h"
#include "dscope/aten/Functions.h"

namespace dscope::at::native {

// ---------------------------------------------------------------- shared loops

void copyElements(const Tensor& dst, const Tensor& src) {
  dispatchDtype(dst.dtype(), [&]<class O>(TypeTag<O>) {
    dispatchDtype(src.dtype(), [&]<class I>(TypeTag<I>) {
      forEachElement<O, const I>([](O& o, const I& i) { o = convert<O>(i); }, dst, src);
    });
  });
}

namespace {

// out = op(a, b) elementwise, computed in op-math precision; op is generic over that type.
template <class Op>
void binaryLoop(const Tensor& out, const Tensor& a, const Tensor& b, Op op) {
  dispatchDtype(out.dtype(), [&]<class T>(TypeTag<T>) {
    using M = opmath_t<T>;
    forEachElement<T, const T, const T>([&](T& o, const T& x, const T& y) { o = T(op(M(x), M(y))); }, out, a, b);
  });
}

template <class Op>
void unaryLoop(const Tensor& out, const Tensor& a, Op op) {
  dispatchDtype(out.dtype(), [&]<class T>(TypeTag<T>) {
    using M = opmath_t<T>;
    forEachElement<T, const T>([&](T& o, const T& x) { o = T(op(M(x))); }, out, a);
  });
}

Tensor emptyLike(const Tensor& t) { return make_tensor(t.sizes(), t.dtype(), t.device()); }

// The default generator (PyTorch's default CPU seed); normal_ without a seed draws from it.
constexpr uint64_t kDefaultSeed = 67280421310721ULL;
std::mutex& generatorMutex() {
  static std::mutex m;
  return m;
}
std::mt19937_64& defaultGenerator() {
  static std::mt19937_64 g(kDefaultSeed);
  return g;
}

// ---------------------------------------------------------------- kernels

Tensor empty_cpu(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device) {
  return make_tensor(size, dtype.value_or(ScalarType::Float), device.value_or(Device(DeviceType::CPU)));
}

Tensor fill_cpu(const Tensor& self, const Scalar& value) {
  dispatchDtype(self.dtype(), [&]<class T>(TypeTag<T>) {
    const T v = T(value.to<opmath_t<T>>());
    forEachElement<T>([&](T& o) { o = v; }, self);
  });
  return self;
}

Tensor normal_cpu(const Tensor& self, double mean, double std, std::optional<int64_t> seed) {
  checkNormalArgs(self, std);
  std::normal_distribution<double> dist(mean, std);
  auto fill = [&](std::mt19937_64& gen) {
    dispatchDtype(self.dtype(), [&]<class T>(TypeTag<T>) {
      forEachElement<T>([&](T& o) { o = convert<T>(dist(gen)); }, self);
    });
  };
  if (seed) {
    std::mt19937_64 gen(static_cast<uint64_t>(*seed));
    fill(gen);
  } else {
    std::lock_guard lock(generatorMutex());
    fill(defaultGenerator());
  }
  return self;
}

Tensor add_cpu(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  auto ops = elementwiseOperands("add", self, other);
  checkAlpha(self.dtype(), alpha);
  Tensor out = emptyLike(ops.self);
  binaryLoop(out, ops.self, ops.other, [&](auto x, auto y) { return x + alpha.to<decltype(x)>() * y; });
  return out;
}

Tensor add__cpu(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  auto ops = elementwiseOperands("add_", self, other, /*self_is_output=*/true);
  checkAlpha(self.dtype(), alpha);
  binaryLoop(self, self, ops.other, [&](auto x, auto y) { return x + alpha.to<decltype(x)>() * y; });
  return self;
}

Tensor mul_cpu(const Tensor& self, const Tensor& other) {
  auto ops = elementwiseOperands("mul", self, other);
  Tensor out = emptyLike(ops.self);
  binaryLoop(out, ops.self, ops.other, [](auto x, auto y) { return x * y; });
  return out;
}

Tensor mm_cpu(const Tensor& self, const Tensor& mat2) {
  Tensor out = make_tensor(mmOutputShape(self, mat2), self.dtype(), self.device());
  const int64_t n = self.size(0), k = self.size(1), m = mat2.size(1);
  dispatchDtype(self.dtype(), [&]<class T>(TypeTag<T>) {
    using Acc = acc_t<T>;
    const T* a = self.data_ptr<const T>();
    const T* b = mat2.data_ptr<const T>();
    T* c = out.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        Acc acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += convert<Acc>(a[i * self.stride(0) + p * self.stride(1)]) *
                 convert<Acc>(b[p * mat2.stride(0) + j * mat2.stride(1)]);
        c[i * out.stride(0) + j * out.stride(1)] = convert<T>(acc);
      }
  });
  return out;
}

// Sums in the output dtype's accumulation type, like PyTorch's sum(dtype=...).
Tensor sum_cpu(const Tensor& self, std::optional<ScalarType> dtype) {
  Tensor out = make_tensor({}, dtype.value_or(self.dtype()), self.device());
  dispatchDtype(out.dtype(), [&]<class O>(TypeTag<O>) {
    acc_t<O> total = 0;
    dispatchDtype(self.dtype(), [&]<class I>(TypeTag<I>) {
      forEachElement<const I>([&](const I& x) { total += convert<acc_t<O>>(convert<O>(x)); }, self);
    });
    *out.data_ptr<O>() = convert<O>(total);
  });
  return out;
}

Tensor relu_cpu(const Tensor& self) {
  Tensor out = emptyLike(self);
  unaryLoop(out, self, [](auto x) { return x < 0 ? decltype(x)(0) : x; });  // NaN stays NaN
  return out;
}

Tensor threshold_backward_cpu(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  auto ops = elementwiseOperands("threshold_backward", grad_output, self);
  Tensor out = emptyLike(ops.self);
  binaryLoop(out, ops.self, ops.other,
             [&](auto grad, auto x) { return x <= threshold.to<decltype(x)>() ? decltype(grad)(0) : grad; });
  return out;
}

// Host memory on both sides: CPU, or a PrivateUse1 backend whose allocator hands out host memory.
// PrivateUse1 outranks CUDA, so a copy between the two lands here too: refuse it (reading device
// memory on the host would crash) rather than in copyElements.
Tensor copy_host(const Tensor& self, const Tensor& src, bool /*non_blocking*/) {
  auto host = [](const Tensor& t) { return t.is_cpu() || t.device().type == DeviceType::PrivateUse1; };
  DSCOPE_CHECK(host(self) && host(src), "copy_: cannot copy from " + src.device().str() + " to " +
                                            self.device().str() + " directly; copy through cpu");
  copyElements(self, copySource(self, src));
  return self;
}

}  // namespace

void manualSeedDefaultGenerator(uint64_t seed) {
  std::lock_guard lock(generatorMutex());
  defaultGenerator().seed(seed);
}

DSCOPE_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("empty.memory_format", empty_cpu);
  m.impl("fill_.Scalar", fill_cpu);
  m.impl("normal_", normal_cpu);
  m.impl("add.Tensor", add_cpu);
  m.impl("add_.Tensor", add__cpu);
  m.impl("mul.Tensor", mul_cpu);
  m.impl("mm", mm_cpu);
  m.impl("sum", sum_cpu);
  m.impl("relu", relu_cpu);
  m.impl("threshold_backward", threshold_backward_cpu);
  m.impl("copy_", copy_host);
}

// Deviation from PyTorch (where each backend registers its own copy_): PrivateUse1 memory in
// dscope is host memory from the backend's allocator, so the host copy serves it; a backend
// that registers its own copy_ replaces this one.
DSCOPE_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("copy_", copy_host); }

}  // namespace dscope::at::native
