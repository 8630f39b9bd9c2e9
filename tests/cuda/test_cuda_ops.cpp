// The CUDA backend on a real GPU: every CUDA kernel against the CPU kernel on the same input,
// copies in both directions (dtype conversion, strides, broadcast), autocast, autograd, and
// errors. Test suite "gpu" (main.cpp skips it, exit 77, without a usable GPU).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "dscope/aten/Autocast.h"
#include "dscope/aten/Functions.h"
#include "dscope/autograd/Autograd.h"
#include "dscope/cuda/CUDA.h"

using namespace dscope;

namespace {

const Device kCPU("cpu");
const Device kCUDA("cuda");

Tensor gpu(const Tensor& t) { return t.to(kCUDA); }
// Names, so that a failed CHECK prints them.
std::string dtypeOf(const Tensor& t) { return toString(t.dtype()); }
std::string deviceOf(const Tensor& t) { return t.device().str(); }

// Every element of t (any device, dtype, strides) as double, through a copy into a float64 CPU tensor.
std::vector<double> values(const Tensor& t) {
  Tensor host = at::empty(t.sizes(), TensorOptions(ScalarType::Double));
  host.copy_(t);
  return {host.data_ptr<double>(), host.data_ptr<double>() + host.numel()};
}

// The largest |got - expected| / max(1, |expected|); infinity when the shapes differ.
double maxRelError(const Tensor& got, const Tensor& expected) {
  if (!std::equal(got.sizes().begin(), got.sizes().end(), expected.sizes().begin(), expected.sizes().end()))
    return INFINITY;
  auto g = values(got), e = values(expected);
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    double err = std::abs(g[i] - e[i]) / std::max(1.0, std::abs(e[i]));
    if (std::isnan(err)) return INFINITY;
    worst = std::max(worst, err);
  }
  return worst;
}

// What separates the GPU's rounding from the CPU's (FMA, summation order) in each dtype.
double tolerance(ScalarType t) {
  switch (t) {
    case ScalarType::Long: return 0;
    case ScalarType::Double: return 1e-12;
    case ScalarType::Float: return 1e-5;
    case ScalarType::Half: return 2e-3;
    case ScalarType::BFloat16: return 2e-2;
  }
  return 0;
}

const ScalarType kAllDtypes[] = {ScalarType::Long, ScalarType::Half, ScalarType::Float, ScalarType::Double,
                                 ScalarType::BFloat16};
const ScalarType kFloatDtypes[] = {ScalarType::Half, ScalarType::Float, ScalarType::Double, ScalarType::BFloat16};

// A CPU tensor of dtype t with values spread over negatives and positives (integers for int64).
Tensor sample(std::initializer_list<int64_t> sizes, ScalarType t) {
  Tensor x = at::randn(sizes);
  if (t == ScalarType::Long) return x.mul(at::full({}, 10.0)).to(t);
  return x.to(t);
}

bool sameBytes(const Tensor& a, const Tensor& b) {
  return a.numel() == b.numel() && a.dtype() == b.dtype() && a.is_contiguous() && b.is_contiguous() &&
         std::memcmp(a.data_ptr(), b.data_ptr(), static_cast<size_t>(a.numel()) * a.element_size()) == 0;
}

}  // namespace

TEST_SUITE_BEGIN("gpu");

TEST_CASE("to(cuda) and back keeps every value of every dtype") {
  at::manual_seed(1);
  for (ScalarType t : kAllDtypes) {
    CAPTURE(toString(t));
    Tensor x = sample({3, 5}, t);
    Tensor y = gpu(x);
    CHECK(deviceOf(y) == "cuda");
    CHECK(dtypeOf(y) == toString(t));
    CHECK(y.toString() == std::string("Tensor[3, 5] ") + toString(t) + " cuda");
    CHECK(gpu(y).is_same(y));  // already there: to() returns the tensor itself
    CHECK(sameBytes(y.to(kCPU), x));
  }
}

TEST_CASE("copies convert dtypes, follow strides and broadcast, in both directions") {
  at::manual_seed(2);
  Tensor x = at::randn({4, 6});
  Tensor y = gpu(x);
  SUBCASE("a transposed CPU tensor to the GPU") { CHECK(maxRelError(gpu(x.t()), x.t()) == 0); }
  SUBCASE("a transposed GPU tensor to the CPU") { CHECK(maxRelError(y.t().to(kCPU), x.t()) == 0); }
  SUBCASE("float32 CPU to a float16 GPU tensor, as the CPU converts") {
    Tensor h = at::empty({4, 6}, TensorOptions(ScalarType::Half).device(kCUDA));
    h.copy_(x);
    CHECK(sameBytes(h.to(kCPU), x.to(ScalarType::Half)));
  }
  SUBCASE("a GPU tensor into a transposed (non-contiguous) CPU tensor") {
    Tensor dst = at::zeros({6, 4});
    dst.t().copy_(y);
    CHECK(maxRelError(dst.t(), x) == 0);
  }
  SUBCASE("on the GPU with a dtype change") {
    Tensor d = y.to(ScalarType::Double);
    CHECK(deviceOf(d) == "cuda");
    CHECK(maxRelError(d, x) == 0);
  }
  SUBCASE("a 0-d CPU tensor broadcast into a GPU tensor") {
    Tensor z = at::empty({2, 3}, TensorOptions(kCUDA));
    z.copy_(at::full({}, 7.0));
    CHECK(values(z) == std::vector<double>(6, 7.0));
  }
  SUBCASE("a strided GPU view (every other column) to the CPU") {
    const int64_t sizes[] = {4, 3}, strides[] = {6, 2};
    CHECK(maxRelError(y.as_strided_view(sizes, strides, 1).to(kCPU), x.as_strided_view(sizes, strides, 1)) == 0);
  }
}

TEST_CASE("factories: zeros, ones and full on the GPU") {
  for (ScalarType t : kAllDtypes) {
    CAPTURE(toString(t));
    CHECK(values(at::zeros({3}, TensorOptions(t).device(kCUDA))) == std::vector<double>(3, 0.0));
    CHECK(values(at::ones({2, 2}, TensorOptions(t).device(kCUDA))) == std::vector<double>(4, 1.0));
    CHECK(values(at::full({2}, -3, TensorOptions(t).device(kCUDA))) == std::vector<double>(2, -3.0));
  }
}

TEST_CASE("add, add_, mul and relu match the CPU kernels") {
  at::manual_seed(3);
  for (ScalarType t : kAllDtypes) {
    CAPTURE(toString(t));
    Tensor a = sample({5, 7}, t), b = sample({5, 7}, t);
    Tensor s = sample({}, t);  // 0-d: broadcast
    const double tol = tolerance(t);
    const Scalar alpha = t == ScalarType::Long ? Scalar(3) : Scalar(2.5);
    CHECK(maxRelError(at::add(gpu(a), gpu(b), alpha), at::add(a, b, alpha)) <= tol);
    CHECK(maxRelError(at::add(gpu(a).t(), gpu(b).t()), at::add(a.t(), b.t())) <= tol);
    CHECK(maxRelError(at::add(gpu(a), gpu(s)), at::add(a, s)) <= tol);
    CHECK(maxRelError(at::add(gpu(s), gpu(b)), at::add(s, b)) <= tol);
    CHECK(maxRelError(at::mul(gpu(a), gpu(b)), at::mul(a, b)) <= tol);
    CHECK(maxRelError(at::mul(gpu(a).t(), gpu(s)), at::mul(a.t(), s)) <= tol);
    CHECK(maxRelError(at::relu(gpu(a)), at::relu(a)) <= tol);
    CHECK(maxRelError(at::relu(gpu(a).t()), at::relu(a.t())) <= tol);

    Tensor g = gpu(a);
    const uint32_t version = g._version();
    Tensor r = g.add_(gpu(b), alpha);
    CHECK(r.is_same(g));
    CHECK(g._version() == version + 1);
    Tensor expected = a.to(kCPU, t, false, /*copy=*/true);
    expected.add_(b, alpha);
    CHECK(maxRelError(g, expected) <= tol);

    Tensor gt = gpu(a).t();  // in place through a transposed view
    gt.add_(gpu(s));
    CHECK(maxRelError(gt, at::add(a.t(), s)) <= tol);
  }
}

TEST_CASE("sum matches the CPU kernel, with and without a dtype") {
  at::manual_seed(4);
  for (ScalarType t : kAllDtypes) {
    CAPTURE(toString(t));
    Tensor a = sample({37, 11}, t);
    Tensor got = at::sum(gpu(a));
    CHECK(got.dim() == 0);
    CHECK(dtypeOf(got) == toString(t));
    CHECK(maxRelError(got, at::sum(a)) <= tolerance(t));
    CHECK(maxRelError(at::sum(gpu(a).t()), at::sum(a.t())) <= tolerance(t));
    CHECK(maxRelError(at::sum(gpu(a), ScalarType::Double), at::sum(a, ScalarType::Double)) <= 1e-12);
  }
  // More elements than one pass of the grid covers (65535 blocks x 256 threads would not; 1024
  // partial sums do), and an empty tensor.
  Tensor big = at::randn({1 << 22});
  CHECK(maxRelError(at::sum(gpu(big)), at::sum(big)) <= 1e-6);
  CHECK(values(at::sum(at::empty({0, 3}, TensorOptions(kCUDA)))) == std::vector<double>{0.0});
}

TEST_CASE("mm matches the CPU kernel: float32 and float64, transposed and strided operands") {
  at::manual_seed(5);
  for (ScalarType t : kFloatDtypes) {
    CAPTURE(toString(t));
    Tensor a = sample({33, 17}, t), b = sample({17, 9}, t);
    const double tol = t == ScalarType::Float ? 1e-5 : tolerance(t);
    Tensor c = at::mm(gpu(a), gpu(b));
    CHECK(dtypeOf(c) == toString(t));
    CHECK(maxRelError(c, at::mm(a, b)) <= tol);
    // Transposed views: cuBLAS reads them as they are (op T).
    Tensor at_ = gpu(sample({17, 33}, t)), bt = gpu(sample({9, 17}, t));
    CHECK(maxRelError(at::mm(at_.t(), bt.t()), at::mm(at_.to(kCPU).t(), bt.to(kCPU).t())) <= tol);
    // A strided view (every other column): copied to contiguous first.
    Tensor wide = sample({17, 18}, t);
    const int64_t sizes[] = {17, 9}, strides[] = {18, 2};
    CHECK(maxRelError(at::mm(gpu(a), gpu(wide).as_strided_view(sizes, strides, 0)),
                      at::mm(a, wide.as_strided_view(sizes, strides, 0))) <= tol);
  }
  SUBCASE("an empty inner dimension gives zeros, an empty outer one an empty result") {
    Tensor z = at::mm(at::empty({3, 0}, TensorOptions(kCUDA)), at::empty({0, 4}, TensorOptions(kCUDA)));
    CHECK(values(z) == std::vector<double>(12, 0.0));
    CHECK(at::mm(at::empty({0, 5}, TensorOptions(kCUDA)), at::empty({5, 2}, TensorOptions(kCUDA))).numel() == 0);
  }
  SUBCASE("int64 is refused, as in PyTorch") {
    Tensor l = gpu(sample({2, 2}, ScalarType::Long));
    CHECK_THROWS_WITH_AS(at::mm(l, l), doctest::Contains("int64 is not supported"), Error);
  }
}

TEST_CASE("AutocastCUDA: mm computes in float16 (or the chosen bfloat16) with cuBLAS") {
  at::manual_seed(6);
  Tensor a = at::randn({64, 32}), b = at::randn({32, 16});
  Tensor exact = at::mm(a, b);
  {
    autocast::AutocastMode on(DeviceType::CUDA);
    Tensor c = at::mm(gpu(a), gpu(b));
    CHECK(dtypeOf(c) == "float16");
    CHECK(deviceOf(c) == "cuda");
    // Inputs and result rounded to float16: errors of a few 1e-3 (a wrong product is off by O(1)).
    CHECK(maxRelError(c, exact) <= 5e-2);
    // float64 is not eligible; CPU tensors are AutocastCPU's business, not this region's.
    CHECK(dtypeOf(at::mm(gpu(a.to(ScalarType::Double)), gpu(b.to(ScalarType::Double)))) == "float64");
    CHECK(dtypeOf(at::mm(a, b)) == "float32");
  }
  {
    autocast::AutocastMode on(DeviceType::CUDA, ScalarType::BFloat16);
    Tensor c = at::mm(gpu(a), gpu(b));
    CHECK(dtypeOf(c) == "bfloat16");
    CHECK(maxRelError(c, exact) <= 2e-1);  // bfloat16 keeps 8 bits of mantissa
  }
  CHECK(dtypeOf(at::mm(gpu(a), gpu(b))) == "float32");  // the region is over
}

TEST_CASE("autograd on the GPU: basic_dispatch's step gives the CPU gradients") {
  at::manual_seed(7);
  Tensor a = at::randn({2, 3}, TensorOptions().requires_grad(true));
  Tensor b = at::randn({3, 2}, TensorOptions().requires_grad(true));
  Tensor c = at::mm(a, b);
  at::sum(at::add(at::relu(c), c)).backward();

  Tensor ga = gpu(a.detach()), gb = gpu(b.detach());
  ga.set_requires_grad(true);
  gb.set_requires_grad(true);
  Tensor gc = at::mm(ga, gb);
  CHECK(gc.grad_fn()->name() == "MmBackward0");
  at::sum(at::add(at::relu(gc), gc)).backward();
  REQUIRE(ga.grad().defined());
  CHECK(deviceOf(ga.grad()) == "cuda");
  CHECK(maxRelError(ga.grad(), a.grad()) <= 1e-5);
  CHECK(maxRelError(gb.grad(), b.grad()) <= 1e-5);
}

TEST_CASE("errors: mixed devices, CUDA errors by name, host reads of device memory") {
  Tensor x = at::ones({2});
  Tensor y = gpu(x);
  CHECK_THROWS_WITH_AS(at::add(x, y), doctest::Contains("Expected all tensors to be on the same device"), Error);
  CHECK_THROWS_WITH_AS(at::mm(gpu(at::ones({2, 2})), at::ones({2, 2})),
                       doctest::Contains("Expected all tensors to be on the same device"), Error);
  CHECK(at::sum(y).item() == 2.0);  // through a copy to the host
  CHECK_THROWS_WITH_AS(y.item(), doctest::Contains("a Tensor with 2 elements cannot be converted to Scalar"), Error);
  CHECK_THROWS_WITH_AS(at::empty({2}, TensorOptions(Device("cuda:1"))), doctest::Contains("uses one GPU (cuda:0)"),
                       Error);

  // PrivateUse1 outranks CUDA, so its host copy_ sees the GPU tensor: refused, not read on the host.
  setAllocator(DeviceType::PrivateUse1, getAllocator(DeviceType::CPU));
  Tensor host_backend = make_tensor(std::vector<int64_t>{2}, ScalarType::Float, Device(DeviceType::PrivateUse1));
  CHECK_THROWS_WITH_AS(host_backend.copy_(y), doctest::Contains("cannot copy from cuda"), Error);
  CHECK_THROWS_WITH_AS(y.copy_(host_backend), doctest::Contains("directly; copy through cpu"), Error);
  setAllocator(DeviceType::PrivateUse1, nullptr);

  // 2^48 float32 elements (1 PiB): cudaMalloc fails, after the cache is released once.
  const uint64_t ooms = cuda::memory_stats().num_ooms;
  CHECK_THROWS_WITH_AS(at::empty({int64_t{1} << 48}, TensorOptions(kCUDA)),
                       doctest::Contains("CUDA out of memory: cudaErrorMemoryAllocation (2)"), Error);
  CHECK(cuda::memory_stats().num_ooms > ooms);
  // The error was cleared: the next kernel works.
  CHECK(values(at::add(y, y)) == std::vector<double>{2.0, 2.0});
}

TEST_CASE("the caching allocator behind CUDA tensors: reuse, statistics, empty_cache") {
  cuda::synchronize();
  cuda::empty_cache();
  const auto before = cuda::memory_stats();
  CHECK(before.reserved_bytes == before.allocated_bytes);  // nothing cached after empty_cache
  {
    Tensor t = at::empty({1000}, TensorOptions(kCUDA));  // 4000 bytes: a 4096-byte block
    auto st = cuda::memory_stats();
    CHECK(st.allocated_bytes == before.allocated_bytes + 4096);
    CHECK(st.reserved_bytes == before.reserved_bytes + 4096);
  }
  auto st = cuda::memory_stats();
  CHECK(st.allocated_bytes == before.allocated_bytes);
  CHECK(st.reserved_bytes == before.reserved_bytes + 4096);  // cached
  {
    Tensor t = at::empty({1000}, TensorOptions(kCUDA));
    CHECK(cuda::memory_stats().num_cache_hits == st.num_cache_hits + 1);
    CHECK(cuda::memory_stats().num_source_allocs == st.num_source_allocs);
  }
  cuda::empty_cache();
  st = cuda::memory_stats();
  CHECK(st.reserved_bytes == st.allocated_bytes);
}

TEST_SUITE_END();
