// The autograd engine and autograd kernels: gradients against central finite differences,
// grad_fn names, in-place rules, the autograd fallback and the Autograd -> CPU redispatch.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "dscope/Dispatcher.h"
#include "dscope/Library.h"
#include "dscope/aten/Autocast.h"
#include "dscope/aten/Functions.h"
#include "dscope/autograd/Autograd.h"
#include "test_util.h"

using namespace dscope;
using dscope::testing::errorOf;

namespace {

Tensor doubles(std::vector<int64_t> sizes, std::vector<double> vals) {
  Tensor t = make_tensor(sizes, ScalarType::Double, Device(DeviceType::CPU));
  for (size_t i = 0; i < vals.size(); ++i) t.data_ptr<double>()[i] = vals[i];
  return t;
}

Tensor leaf(std::vector<int64_t> sizes, std::vector<double> vals) {
  Tensor t = doubles(std::move(sizes), std::move(vals));
  t.set_requires_grad(true);
  return t;
}

// Checks d loss / d input[k] (from backward) against central differences of loss(inputs),
// a scalar function of contiguous float64 leaves.
void checkGradients(std::vector<Tensor> inputs, const std::function<Tensor(const std::vector<Tensor>&)>& loss) {
  loss(inputs).backward();
  const double h = 1e-6;
  for (size_t k = 0; k < inputs.size(); ++k) {
    CAPTURE(k);
    REQUIRE(inputs[k].grad().defined());
    const Tensor& g = inputs[k].grad();
    double* x = inputs[k].data_ptr<double>();
    for (int64_t i = 0; i < inputs[k].numel(); ++i) {
      autograd::NoGradGuard no_grad;
      double saved = x[i];
      x[i] = saved + h;
      double up = loss(inputs).item();
      x[i] = saved - h;
      double down = loss(inputs).item();
      x[i] = saved;
      double numeric = (up - down) / (2 * h);
      // grad may be any layout: read it through its strides
      int64_t off = 0, rem = i;
      for (int64_t d = g.dim() - 1; d >= 0; --d) {
        off += (rem % g.size(d)) * g.stride(d);
        rem /= g.size(d);
      }
      CHECK(g.data_ptr<double>()[off] == doctest::Approx(numeric).epsilon(1e-6));
    }
  }
}

// Weights that make every output element matter differently.
Tensor weights(IntArrayRef sizes) {
  int64_t n = 1;
  for (auto s : sizes) n *= s;
  std::vector<double> w;
  for (int64_t i = 0; i < n; ++i) w.push_back(0.5 + 0.25 * static_cast<double>(i));
  return doubles({sizes.begin(), sizes.end()}, w);
}

Tensor weightedSum(const Tensor& t) { return t.mul(weights(t.sizes())).sum(); }


}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("mm gradients match finite differences (float64)") {
    checkGradients({leaf({2, 3}, {0.5, -1, 2, 1.5, 0.25, -0.75}), leaf({3, 2}, {1, 2, -1, 0.5, 0.3, -2})},
                   [](const std::vector<Tensor>& in) { return weightedSum(in[0].mm(in[1])); });
  }

  TEST_CASE("add (with alpha and a broadcast 0-d other), mul, sum, relu gradients") {
    checkGradients({leaf({2, 2}, {1, -2, 3, 0.5}), leaf({2, 2}, {0.5, 0.25, -1, 2})},
                   [](const std::vector<Tensor>& in) { return weightedSum(in[0].add(in[1], 3)); });
    checkGradients({leaf({2, 2}, {1, -2, 3, 0.5}), leaf({}, {1.5})},
                   [](const std::vector<Tensor>& in) { return weightedSum(in[0].add(in[1])); });
    checkGradients({leaf({3}, {1, -2, 3}), leaf({3}, {0.5, 0.25, -1})},
                   [](const std::vector<Tensor>& in) { return weightedSum(in[0].mul(in[1])); });
    checkGradients({leaf({2, 3}, {1, -2, 3, 4, 5, -6})}, [](const std::vector<Tensor>& in) { return in[0].sum(); });
    checkGradients({leaf({4}, {1, -2, 3, -0.5})},
                   [](const std::vector<Tensor>& in) { return weightedSum(in[0].relu()); });
    // A little network: relu(x @ w1) @ w2, summed.
    checkGradients({leaf({2, 3}, {0.5, -1, 2, 1.5, 0.25, -0.75}), leaf({3, 2}, {1, 2, -1, 0.5, 0.3, -2}),
                    leaf({2, 1}, {0.7, -0.4})},
                   [](const std::vector<Tensor>& in) { return in[0].mm(in[1]).relu().mm(in[2]).sum(); });
  }

  TEST_CASE("sum backward is a stride-0 expand - the leaf's .grad is a contiguous copy") {
    Tensor x = leaf({2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor s = x.sum();
    CHECK(s.grad_fn()->name() == "SumBackward0");
    s.backward();
    CHECK(x.grad().is_contiguous());
    CHECK(x.grad().sum().item() == 6);
    x.sum().backward();  // gradients accumulate
    CHECK(x.grad().sum().item() == 12);
  }

  TEST_CASE("grad_fn names follow PyTorch") {
    Tensor a = leaf({2, 2}, {1, 2, 3, 4}), b = leaf({2, 2}, {1, 0, 0, 1});
    CHECK(a.add(b).grad_fn()->name() == "AddBackward0");
    CHECK(a.mul(b).grad_fn()->name() == "MulBackward0");
    CHECK(a.mm(b).grad_fn()->name() == "MmBackward0");
    CHECK(a.relu().grad_fn()->name() == "ReluBackward0");
    CHECK(a.to(ScalarType::Float).grad_fn()->name() == "ToCopyBackward0");
    Tensor c = doubles({2, 2}, {0, 0, 0, 0});
    c.copy_(a);
    CHECK(c.grad_fn()->name() == "CopyBackwards");
    CHECK(a.is_leaf());
    CHECK(autograd::gradient_edge(a).function->name() == "torch::autograd::AccumulateGrad");
  }

  TEST_CASE("no_grad builds no graph - new threads start with grad mode enabled") {
    Tensor a = leaf({2}, {1, 2});
    {
      autograd::NoGradGuard no_grad;
      CHECK_FALSE(autograd::GradMode::is_enabled());
      Tensor b = a.mul(a);
      CHECK_FALSE(b.requires_grad());
      bool other_thread_enabled = false;
      std::thread([&] { other_thread_enabled = autograd::GradMode::is_enabled(); }).join();
      CHECK(other_thread_enabled);
    }
    CHECK(autograd::GradMode::is_enabled());
    CHECK(a.mul(a).requires_grad());
  }

  TEST_CASE("add_: version counter, leaf error, rebased history") {
    Tensor x = doubles({2}, {1, 2});
    uint32_t v0 = x._version();
    x.add_(doubles({2}, {1, 1}));
    CHECK(x._version() == v0 + 1);

    Tensor w = leaf({2}, {1, 2});
    CHECK(errorOf([&] { w.add_(doubles({2}, {1, 1})); }) ==
          "a leaf Variable that requires grad is being used in an in-place operation.");
    {
      autograd::NoGradGuard no_grad;  // allowed under no_grad (an optimizer step)
      w.add_(doubles({2}, {1, 1}));
    }
    CHECK(w.data_ptr<double>()[0] == 2);

    Tensor y = w.mul(doubles({2}, {3, 3}));  // non-leaf
    y.add_(w, 2);                            // y = 3w + 2w
    CHECK(y.grad_fn()->name() == "AddBackward0");
    y.sum().backward();
    CHECK(w.grad().data_ptr<double>()[0] == doctest::Approx(5));
    CHECK(w.grad().data_ptr<double>()[1] == doctest::Approx(5));
  }

  TEST_CASE("saved tensors: modified in place is an error - a second backward needs retain_graph") {
    Tensor a = leaf({2}, {1, 2});
    Tensor b = doubles({2}, {3, 4});
    Tensor y = a.mul(b).sum();
    b.add_(doubles({2}, {1, 1}));
    CHECK(errorOf([&] { y.backward(); }).find("modified by an inplace operation") != std::string::npos);

    Tensor z = a.mul(doubles({2}, {1, 1})).sum();
    z.backward();
    CHECK(errorOf([&] { z.backward(); }).find("Trying to backward through the graph a second time") == 0);
    Tensor r = a.mul(doubles({2}, {1, 1})).sum();
    autograd::backward({r}, {}, /*retain_graph=*/true);
    autograd::backward({r});
    CHECK(errorOf([&] { doubles({2}, {1, 2}).sum().backward(); }) ==
          "element 0 of tensors does not require grad and does not have a grad_fn");
    CHECK(errorOf([&] { a.mul(a).backward(); }) == "grad can be implicitly created only for scalar outputs");
  }

  TEST_CASE("autocast mm is differentiable: the float32 leaves get float32 gradients") {
    Tensor a = at::ones({2, 3}, TensorOptions(ScalarType::Float).requires_grad(true));
    Tensor b = at::ones({3, 2}, TensorOptions(ScalarType::Float).requires_grad(true));
    Tensor prod;
    {
      autocast::AutocastMode on(DeviceType::CPU);
      prod = a.mm(b);
    }
    CHECK((prod.dtype() == ScalarType::BFloat16));
    prod.sum().backward();
    CHECK((a.grad().dtype() == ScalarType::Float));
    CHECK(a.grad().sum().item() == 12);
  }

  TEST_CASE("the autograd fallback gives outputs of ops without an autograd kernel a NotImplemented grad_fn") {
    Library def(Library::DEF, "testops", std::nullopt, __FILE__, __LINE__);
    def.def("twice(Tensor self) -> Tensor");
    Library cpu(Library::IMPL, "testops", DispatchKey::CPU, __FILE__, __LINE__);
    cpu.impl("twice", [](const Tensor& t) { return t.add(t); });
    auto op = Dispatcher::singleton().findSchemaOrThrow("testops::twice", "").typed<Tensor(const Tensor&)>();

    Tensor plain = doubles({2}, {1, 2});
    Tensor r = op.call(plain);
    CHECK_FALSE(r.requires_grad());
    CHECK(r.data_ptr<double>()[1] == 4);

    Tensor x = leaf({2}, {1, 2});
    Tensor y = op.call(x);
    REQUIRE(y.grad_fn());
    CHECK(y.grad_fn()->name() == "NotImplemented");
    // The kernel ran below autograd: its inner add built no graph of its own.
    CHECK(y.grad_fn()->next_edges.size() == 1);
    CHECK(errorOf([&] { y.sum().backward(); }) == "derivative for testops::twice is not implemented");
  }

  TEST_CASE("an autograd kernel redispatches below autograd: the trace is AutogradCPU -> CPU") {
    static std::vector<std::string> trace;
    trace.clear();
    Library def(Library::DEF, "tracetest", std::nullopt, __FILE__, __LINE__);
    def.def("traced(Tensor self) -> Tensor");
    static const auto handle = [] {
      return Dispatcher::singleton().findSchemaOrThrow("tracetest::traced", "").typed<Tensor(const Tensor&)>();
    };
    Library ag(Library::IMPL, "tracetest", DispatchKey::AutogradCPU, __FILE__, __LINE__);
    ag.impl("traced", [](DispatchKeySet ks, const Tensor& t) {
      trace.push_back("AutogradCPU " + toString(ks));
      AutoDispatchBelowADInplaceOrView guard;
      return handle().redispatch(ks & after_autograd_keyset, t);
    });
    Library cpu(Library::IMPL, "tracetest", DispatchKey::CPU, __FILE__, __LINE__);
    cpu.impl("traced", [](DispatchKeySet ks, const Tensor& t) {
      trace.push_back("CPU " + toString(ks));
      return t;
    });
    handle().call(doubles({1}, {1}));
    REQUIRE(trace.size() == 2);
    CHECK(trace[0] == "AutogradCPU DispatchKeySet(CPU, AutogradCPU)");
    CHECK(trace[1] == "CPU DispatchKeySet(CPU)");
  }
}
