// basic_dispatch: what one PyTorch-style training step looks like to the dispatcher.
//
// Creates two CPU tensors that require grad, computes sum(relu(a.mm(b)) + a.mm(b)), runs
// backward(), and prints the gradients next to a hand-computed check.
//
// Run it with DSCOPE_SHOW_DISPATCH_TRACE=1 to see every dispatch, in PyTorch's format:
//    [call] op=[aten::mm], key=[AutogradCPU]      <- highest key of the tensors' key set
//     [redispatch] op=[aten::mm], key=[CPU]       <- the autograd kernel, below autograd
// Factories go through BackendSelect first, which picks the backend from the options:
//    [call] op=[aten::randn], key=[BackendSelect]
//     [redispatch] op=[aten::randn], key=[CPU]
// In backward() the gradient formulas run with grad mode off: they still enter at AutogradCPU
// (grad mode does not change key sets, as in PyTorch) but record nothing and go straight down.
//
// Built with the CUDA backend and run where a GPU is usable, it then does the same step on the
// GPU ("== cuda forward"): the dispatcher tutorials' trace, from real GPU work (mm is cuBLAS):
//    [call] op=[aten::mm], key=[AutogradCUDA]
//     [redispatch] op=[aten::mm], key=[CUDA]
// Without a usable GPU it prints one line, "cuda: skipped (no usable GPU: ...)".
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "dscope/aten/Functions.h"
#include "dscope/autograd/Autograd.h"
#if DSCOPE_WITH_CUDA
#include "dscope/cuda/CUDA.h"
#endif

using namespace dscope;

static void section(const char* title) { std::fprintf(stderr, "== %s\n", title); }

#if DSCOPE_WITH_CUDA
// The same step on copies of a and b on the GPU; true when its gradient matches the CPU one.
static bool cudaStep(const Tensor& a, const Tensor& b, double cpu_loss) {
  if (!cuda::is_available()) {
    std::printf("cuda: skipped (no usable GPU: %s)\n", cuda::unavailable_reason().c_str());
    return true;
  }
  const Device gpu("cuda"), cpu("cpu");
  section("cuda factories");
  Tensor ga = a.detach().to(gpu);
  Tensor gb = b.detach().to(gpu);
  ga.set_requires_grad(true);
  gb.set_requires_grad(true);

  section("cuda forward");
  Tensor c = at::mm(ga, gb);
  Tensor loss = at::sum(at::add(at::relu(c), c));

  section("cuda backward");
  loss.backward();
  Tensor grad = ga.grad().to(cpu);
  double worst = 0;
  for (int64_t i = 0; i < grad.numel(); ++i)
    worst = std::max(worst, double(std::abs(grad.data_ptr<float>()[i] - a.grad().data_ptr<float>()[i])));
  std::printf("cuda: loss=%.6f (cpu %.6f), max |a.grad on cuda - a.grad on cpu| = %.2e\n", loss.to(cpu).item(),
              cpu_loss, worst);
  return worst < 1e-5;
}
#endif

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // keep stdout in step with the trace on stderr
  at::manual_seed(0);
  section("factories");
  Tensor a = at::randn({2, 3}, TensorOptions().requires_grad(true));
  Tensor b = at::randn({3, 2}, TensorOptions().requires_grad(true));
  std::printf("a: %s keys=%s\n", a.toString().c_str(), toString(a.key_set()).c_str());

  section("forward");
  Tensor c = at::mm(a, b);
  Tensor loss = at::sum(at::add(at::relu(c), c));
  std::printf("c.grad_fn=%s loss.grad_fn=%s loss=%.6f\n", c.grad_fn()->name().c_str(),
              loss.grad_fn()->name().c_str(), loss.item());

  section("backward");
  loss.backward();

  // d loss / d c = 1 + (c > 0); d loss / d a = (1 + (c > 0)) @ b^T. Checked element by element.
  double worst = 0;
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 3; ++k) {
      double expected = 0;
      for (int j = 0; j < 2; ++j) {
        double cij = c.data_ptr<float>()[i * 2 + j];
        expected += (1.0 + (cij > 0)) * b.data_ptr<float>()[k * 2 + j];
      }
      double got = a.grad().data_ptr<float>()[i * 3 + k];
      worst = std::max(worst, std::abs(got - expected));
    }
  }
  std::printf("a.grad: %s, max |error| against the hand-computed gradient = %.2e\n",
              a.grad().toString().c_str(), worst);
  bool ok = worst < 1e-5;
#if DSCOPE_WITH_CUDA
  ok = cudaStep(a, b, loss.item()) && ok;
#endif
  return ok ? 0 : 1;
}
