// Dispatch overhead of a no-op operator, measured side by side in one process:
//   (a) the CPU kernel called directly as a plain function,
//   (b) Dispatcher call below autograd (1 level: CPU),
//   (c) Dispatcher call with autograd (2 levels: AutogradCPU redispatches to CPU).
// Each repeat times the three variants back to back; the best repeat of each is reported, so
// a noisy moment hurts all three alike. Usage: dispatch_overhead [iterations] [repeats]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "dscope/Library.h"

using namespace dscope;

namespace {

[[gnu::noinline]] Tensor noop_cpu(const Tensor& x) { return x; }

Tensor noop_autograd(DispatchKeySet ks, const Tensor& x);

DSCOPE_LIBRARY(bench, m) { m.def("noop(Tensor x) -> Tensor"); }
DSCOPE_LIBRARY_IMPL(bench, CPU, m) { m.impl("noop", &noop_cpu); }
DSCOPE_LIBRARY_IMPL(bench, AutogradCPU, m) { m.impl("noop", &noop_autograd); }

const TypedOperatorHandle<Tensor(const Tensor&)>& noopOp() {
  static auto op = Dispatcher::singleton().findSchemaOrThrow("bench::noop", "").typed<Tensor(const Tensor&)>();
  return op;
}

Tensor noop_autograd(DispatchKeySet ks, const Tensor& x) { return noopOp().redispatch(ks & after_autograd_keyset, x); }

template <class F>
double nsPerCall(long iters, F&& f) {
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < iters; ++i) f();
  std::chrono::duration<double, std::nano> dt = std::chrono::steady_clock::now() - start;
  return dt.count() / static_cast<double>(iters);
}

}  // namespace

int main(int argc, char** argv) {
  long iters = argc > 1 ? std::atol(argv[1]) : 2'000'000;
  int repeats = argc > 2 ? std::atoi(argv[2]) : 15;
  Tensor x = make_tensor(std::vector<int64_t>{1}, ScalarType::Float, Device(DeviceType::CPU));
  const auto& op = noopOp();
  // The same result flows through every variant, so each does the same refcount work.
  auto direct = [&] { Tensor r = noop_cpu(x); };
  auto one_level = [&] {
    AutoDispatchBelowAutograd below;
    return nsPerCall(iters, [&] { Tensor r = op.call(x); });
  };
  auto two_levels = [&] { Tensor r = op.call(x); };

  double best_a = 1e30, best_b = 1e30, best_c = 1e30;
  for (int r = 0; r < repeats; ++r) {
    best_a = std::min(best_a, nsPerCall(iters, direct));
    best_b = std::min(best_b, one_level());
    best_c = std::min(best_c, nsPerCall(iters, two_levels));
  }
  std::printf("iterations=%ld repeats=%d (best repeat reported)\n", iters, repeats);
  std::printf("dispatch_2level_minus_direct_ns=%.2f ratio_2level_over_direct=%.2f\n", best_c - best_a, best_c / best_a);
  std::printf("direct_ns=%.2f dispatch_1level_ns=%.2f dispatch_2level_ns=%.2f\n", best_a, best_b, best_c);
  return 0;
}
