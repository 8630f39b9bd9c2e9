// The aten-like op library: numerics against naive references, strided inputs, Meta shapes,
// error texts, BackendSelect routing, factories, to/_to_copy and autocast.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "dscope/Dispatcher.h"
#include "dscope/Library.h"
#include "dscope/LocalDispatchKeySet.h"
#include "dscope/aten/Autocast.h"
#include "dscope/aten/Functions.h"
#include "test_util.h"

using namespace dscope;
using dscope::testing::errorOf;

namespace {

// Element i (row-major logical index) of any strided CPU tensor, as double.
double elementAt(const Tensor& t, int64_t i) {
  int64_t offset = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    offset += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  switch (t.dtype()) {
    case ScalarType::Long: return static_cast<double>(t.data_ptr<int64_t>()[offset]);
    case ScalarType::Half: return t.data_ptr<Half>()[offset];
    case ScalarType::Float: return t.data_ptr<float>()[offset];
    case ScalarType::Double: return t.data_ptr<double>()[offset];
    case ScalarType::BFloat16: return t.data_ptr<BFloat16>()[offset];
  }
  return 0;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(elementAt(t, i));
  return v;
}

// A CPU tensor of `sizes` holding `vals` (converted to dtype) through the copy_ kernel.
Tensor tensorOf(std::vector<int64_t> sizes, const std::vector<double>& vals, ScalarType dtype = ScalarType::Float) {
  Tensor src = make_tensor(sizes, ScalarType::Double, Device(DeviceType::CPU));
  for (size_t i = 0; i < vals.size(); ++i) src.data_ptr<double>()[i] = vals[i];
  return dtype == ScalarType::Double ? src : src.to(dtype);
}

// Small integers, exactly representable in every dtype.
std::vector<double> sampleValues(size_t n, int seed) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(static_cast<double>((static_cast<int>(i) * 7 + seed) % 11 - 5));
  return v;
}

double tolerance(ScalarType t) {
  switch (t) {
    case ScalarType::Half: return 1e-2;
    case ScalarType::BFloat16: return 5e-2;
    default: return 1e-6;
  }
}

void checkClose(const std::vector<double>& got, const std::vector<double>& want, double rtol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(std::fabs(got[i] - want[i]) <= rtol * (1 + std::fabs(want[i])));
}

const ScalarType kAllDtypes[] = {ScalarType::Long, ScalarType::Half, ScalarType::Float, ScalarType::Double,
                                 ScalarType::BFloat16};


// A host allocator for a fake PrivateUse1 device (what a backend installs).
struct HostAllocator final : Allocator {
  void* allocate(size_t n) override { return std::malloc(n ? n : 1); }
  void deallocate(void* p) override { std::free(p); }
};

}  // namespace

TEST_SUITE("aten") {
  TEST_CASE("add, mul, relu, sum and mm match naive references in every dtype") {
    for (ScalarType dt : kAllDtypes) {
      CAPTURE(dt);
      auto av = sampleValues(6, 1), bv = sampleValues(6, 4);
      Tensor a = tensorOf({2, 3}, av, dt), b = tensorOf({2, 3}, bv, dt);
      std::vector<double> add, mul, relu;
      double sum = 0;
      for (size_t i = 0; i < 6; ++i) {
        add.push_back(av[i] + 2 * bv[i]);
        mul.push_back(av[i] * bv[i]);
        relu.push_back(av[i] < 0 ? 0 : av[i]);
        sum += av[i];
      }
      checkClose(values(a.add(b, 2)), add, tolerance(dt));
      checkClose(values(a.mul(b)), mul, tolerance(dt));
      checkClose(values(a.relu()), relu, tolerance(dt));
      Tensor s = a.sum();
      CHECK(s.dim() == 0);
      CHECK((s.dtype() == dt));
      CHECK(s.item() == doctest::Approx(sum).epsilon(tolerance(dt)));

      Tensor m = tensorOf({3, 2}, bv, dt);
      std::vector<double> mm(4, 0);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
          for (int k = 0; k < 3; ++k) mm[i * 2 + j] += av[i * 3 + k] * bv[k * 2 + j];
      Tensor c = a.mm(m);
      CHECK((c.dtype() == dt));
      CHECK(c.size(0) == 2);
      CHECK(c.size(1) == 2);
      checkClose(values(c), mm, tolerance(dt));
    }
  }

  TEST_CASE("kernels read through strides: t() and expand()") {
    auto av = sampleValues(6, 2);
    Tensor a = tensorOf({2, 3}, av, ScalarType::Double);
    Tensor at_ = a.t();  // [3, 2], strides [1, 3]
    CHECK_FALSE(at_.is_contiguous());
    std::vector<double> transposed;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) transposed.push_back(av[j * 3 + i]);
    checkClose(values(at_.relu()), [&] {
      std::vector<double> r;
      for (double x : transposed) r.push_back(x < 0 ? 0 : x);
      return r;
    }(), 0);
    // a.t() @ a, both operands strided
    Tensor g = at_.mm(a);
    std::vector<double> want(9, 0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 2; ++k) want[i * 3 + j] += av[k * 3 + i] * av[k * 3 + j];
    checkClose(values(g), want, 1e-12);

    // A 0-d value expanded with stride 0, and a 0-d other broadcasting in add.
    Tensor five = at::full({}, 5.0, ScalarType::Double);
    Tensor e = five.expand(a.sizes());
    CHECK(e.stride(0) == 0);
    CHECK(e.stride(1) == 0);
    std::vector<double> plus5;
    for (double x : av) plus5.push_back(x + 5);
    checkClose(values(a.add(e)), plus5, 0);
    checkClose(values(a.add(five)), plus5, 0);
    CHECK(e.sum().item() == doctest::Approx(30));
    // Writing into a transposed view goes through its strides too.
    Tensor dst = at::zeros({3, 2}, ScalarType::Double);
    dst.t().copy_(a);
    checkClose(values(dst), transposed, 0);
  }

  TEST_CASE("add with alpha, add_ in place, sum with dtype, threshold_backward") {
    Tensor a = tensorOf({3}, {1, 2, 3}, ScalarType::Long);
    Tensor b = tensorOf({3}, {10, 20, 30}, ScalarType::Long);
    checkClose(values(a.add(b, 3)), {31, 62, 93}, 0);
    CHECK(errorOf([&] { a.add(b, 0.5); }) == "For integral input tensors, argument alpha must not be a floating point number.");
    Tensor r = a.add_(b);
    CHECK(r.is_same(a));
    checkClose(values(a), {11, 22, 33}, 0);
    Tensor f = tensorOf({2}, {0.25, 0.5}, ScalarType::Half);
    Tensor s = f.sum(ScalarType::Double);
    CHECK((s.dtype() == ScalarType::Double));
    CHECK(s.item() == 0.75);
    Tensor g = tensorOf({4}, {1, 2, 3, 4}), x = tensorOf({4}, {-1, 0, 0.5, 2});
    checkClose(values(at::threshold_backward(g, x, 0)), {0, 0, 3, 4}, 0);
  }

  TEST_CASE("error messages: shapes, dtypes, devices") {
    Tensor a = at::ones({2, 3}), b = at::ones({4, 5});
    CHECK(errorOf([&] { at::mm(a, b); }) == "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
    CHECK(errorOf([&] { at::mm(a, at::ones({3})); }) == "mat2 must be a matrix");
    CHECK(errorOf([&] { at::mm(a, at::ones({3, 2}, ScalarType::Double)); }) ==
          "expected mat1 and mat2 to have the same dtype, but got: float32 != float64");
    CHECK(errorOf([&] { a.add(at::ones({2, 4})); }) ==
          "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1");
    CHECK(errorOf([&] { a.mul(at::ones({3})); }).find("same-shape") != std::string::npos);
    CHECK(errorOf([&] { a.add(at::ones({2, 3}, ScalarType::Long)); }).find("same dtype") != std::string::npos);
    // A Meta operand sends the call to the Meta kernel, which checks devices like PyTorch.
    CHECK(errorOf([&] { a.add(at::ones({2, 3}, Device(DeviceType::Meta))); }) ==
          "Expected all tensors to be on the same device, but found at least two devices, cpu and meta!");
    // Meta kernels check exactly what CPU kernels check.
    Tensor ma = at::empty({2, 3}, Device(DeviceType::Meta));
    CHECK(errorOf([&] { at::mm(ma, at::empty({4, 5}, Device(DeviceType::Meta))); }) ==
          "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
    CHECK(errorOf([&] { at::normal_(at::ones({2}, ScalarType::Long)); }).find("floating-point") != std::string::npos);
  }

  TEST_CASE("Meta tensors: shapes and dtypes only") {
    Device meta(DeviceType::Meta);
    Tensor a = at::empty({2, 3}, TensorOptions(meta).dtype(ScalarType::Half));
    Tensor b = at::empty({3, 4}, TensorOptions(meta).dtype(ScalarType::Half));
    CHECK(a.is_meta());
    CHECK(a.data_ptr() == nullptr);
    Tensor c = a.mm(b);
    CHECK(c.is_meta());
    CHECK(c.size(0) == 2);
    CHECK(c.size(1) == 4);
    CHECK((c.dtype() == ScalarType::Half));
    CHECK(a.add(a).sizes().size() == 2);
    CHECK((a.sum(ScalarType::Float).dtype() == ScalarType::Float));
    CHECK(a.sum().dim() == 0);
    CHECK(a.relu().is_meta());
    CHECK(at::zeros({5}, meta).is_meta());
    CHECK(at::randn({5}, meta).is_meta());
    // copy_ into meta is a no-op; out of meta there is no data.
    CHECK(a.copy_(at::ones({2, 3})).is_same(a));
    CHECK(errorOf([&] { at::ones({2, 3}).copy_(a); }) == "Cannot copy out of meta tensor; no data!");
    Tensor moved = at::ones({2, 2}).to(meta);
    CHECK(moved.is_meta());
    CHECK(errorOf([&] { at::zeros({}, meta).item(); }) == "Tensor.item() cannot be called on meta tensors");
  }

  TEST_CASE("BackendSelect routes empty by its device argument") {
    Tensor cpu = at::empty({2});
    CHECK(cpu.is_cpu());
    CHECK(cpu.data_ptr() != nullptr);
    CHECK((cpu.dtype() == ScalarType::Float));
    Tensor meta = at::empty({2}, Device(DeviceType::Meta));
    CHECK(meta.is_meta());
    CHECK((meta.key_set() == computeTensorKeySet(DeviceType::Meta)));
    // The dispatcher's own view: empty has a BackendSelect kernel, zeros resolves to its
    // CompositeExplicitAutograd kernel at the Undefined slot (no tensor arguments).
    auto empty_op = Dispatcher::singleton().findSchemaOrThrow("aten::empty", "memory_format");
    CHECK(empty_op.entry().dumpComputedTable().find("BackendSelect: registered at") != std::string::npos);
    auto zeros_op = Dispatcher::singleton().findSchemaOrThrow("aten::zeros", "");
    CHECK(zeros_op.entry().dumpComputedTable().rfind("Undefined: registered at", 0) == 0);
  }

  TEST_CASE("zeros, ones, full, randn") {
    checkClose(values(at::zeros({2, 2}, ScalarType::Long)), {0, 0, 0, 0}, 0);
    checkClose(values(at::ones({3}, ScalarType::BFloat16)), {1, 1, 1}, 0);
    checkClose(values(at::full({2}, 2.5, ScalarType::Half)), {2.5, 2.5}, 0);
    at::manual_seed(7);
    Tensor r1 = at::randn({1000}, ScalarType::Double);
    at::manual_seed(7);
    Tensor r2 = at::randn({1000}, ScalarType::Double);
    CHECK(values(r1) == values(r2));  // deterministic
    double mean = r1.sum().item() / 1000;
    double var = r1.mul(r1).sum().item() / 1000 - mean * mean;
    CHECK(std::fabs(mean) < 0.15);
    CHECK(std::fabs(var - 1) < 0.2);
    Tensor s1 = at::normal_(at::empty({8}), 3, 0.5, 42), s2 = at::normal_(at::empty({8}), 3, 0.5, 42);
    CHECK(values(s1) == values(s2));
  }

  TEST_CASE("to and _to_copy: same tensor when nothing changes, a converted copy otherwise") {
    Tensor a = tensorOf({2, 2}, {1.5, -2, 3, 4});
    CHECK(a.to(ScalarType::Float).is_same(a));
    CHECK(a.to(Device(DeviceType::CPU)).is_same(a));
    Tensor copy = a.to(Device(DeviceType::CPU), ScalarType::Float, false, /*copy=*/true);
    CHECK_FALSE(copy.is_same(a));
    CHECK(values(copy) == values(a));
    Tensor l = a.to(ScalarType::Long);
    CHECK((l.dtype() == ScalarType::Long));
    checkClose(values(l), {1, -2, 3, 4}, 0);  // truncation toward zero
    Tensor h = at::_to_copy(a.t(), ScalarType::Half);
    CHECK(h.is_contiguous());
    checkClose(values(h), {1.5, 3, -2, 4}, 0);
  }

  TEST_CASE("PrivateUse1: copy_ through host memory, and the real missing-kernel error for mm") {
    static HostAllocator allocator;
    setAllocator(DeviceType::PrivateUse1, &allocator);
    Device pu1(DeviceType::PrivateUse1);
    Tensor x = make_tensor(std::vector<int64_t>{2, 2}, ScalarType::Float, pu1);
    x.copy_(tensorOf({2, 2}, {1, 2, 3, 4}, ScalarType::Double));
    Tensor back = make_tensor(std::vector<int64_t>{2, 2}, ScalarType::Double, Device(DeviceType::CPU));
    back.copy_(x);
    checkClose(values(back), {1, 2, 3, 4}, 0);
    Tensor one = make_tensor(std::vector<int64_t>{}, ScalarType::Float, pu1);
    one.copy_(at::full({}, 7.0));
    CHECK(one.item() == 7.0);  // through a copy to the CPU
    std::string err = errorOf([&] { at::mm(x, x); });
    CHECK(err.rfind("Could not run 'aten::mm' with arguments from the 'PrivateUse1' backend", 0) == 0);
    CHECK_THROWS_AS(at::mm(x, x), NotImplementedError);
    setAllocator(DeviceType::PrivateUse1, nullptr);
  }

  TEST_CASE("autocast: mm runs in bfloat16 inside the guard only") {
    Tensor a = tensorOf({2, 3}, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6});
    Tensor b = tensorOf({3, 2}, {1.5, -0.5, 0.25, 2, -1, 0.75});
    Tensor ref = a.mm(b);
    CHECK((ref.dtype() == ScalarType::Float));
    CHECK_FALSE(autocast::is_autocast_enabled(DeviceType::CPU));
    CHECK(tls_local_exclude_set().has(DispatchKey::AutocastCPU));
    {
      autocast::AutocastMode on(DeviceType::CPU);
      CHECK(autocast::is_autocast_enabled(DeviceType::CPU));
      CHECK_FALSE(tls_local_exclude_set().has(DispatchKey::AutocastCPU));
      Tensor c = a.mm(b);
      CHECK((c.dtype() == ScalarType::BFloat16));
      checkClose(values(c), values(ref), 2e-2);
      // float64 is not eligible for the lower-precision cast (PyTorch's is_eligible).
      CHECK((a.to(ScalarType::Double).mm(b.to(ScalarType::Double)).dtype() == ScalarType::Double));
      // Ops without an autocast kernel fall through.
      CHECK((a.add(a).dtype() == ScalarType::Float));
    }
    CHECK_FALSE(autocast::is_autocast_enabled(DeviceType::CPU));
    CHECK((tls_local_exclude_set() == default_excluded_set));
    CHECK((a.mm(b).dtype() == ScalarType::Float));
  }

  TEST_CASE("the Meta fallback names the operator (custom op without a Meta kernel)") {
    Library def(Library::DEF, "atentest", std::nullopt, __FILE__, __LINE__);
    def.def("cpu_only(Tensor self) -> Tensor");
    Library impl(Library::IMPL, "atentest", DispatchKey::CPU, __FILE__, __LINE__);
    impl.impl("cpu_only", [](const Tensor& t) { return t; });
    auto op = Dispatcher::singleton().findSchemaOrThrow("atentest::cpu_only", "").typed<Tensor(const Tensor&)>();
    CHECK_THROWS_WITH_AS(op.call(at::empty({1}, Device(DeviceType::Meta))),
                         doctest::Contains("atentest::cpu_only: attempted to run this operator with Meta tensors, but "
                                           "there was no fake impl or Meta kernel registered."),
                         NotImplementedError);
  }
}
