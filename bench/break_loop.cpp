// break_loop: the workload of the GDB dispatch-break benchmark (bench/gdb_bench.py).
//
// Runs ITERATIONS top-level operator calls through the dispatcher: every 1000th is
// at::mm(2x2, 2x2) (AutogradCPU -> CPU), the others bench_break::noop(x) (AutogradCPU -> CPU,
// a kernel that returns its argument). With the default 200 000 iterations that is 200 aten::mm
// calls among 199 800 no-ops. Prints the loop's own time, so a debugger's start-up and stops
// can be told apart from what it costs the running program:
//   break_loop: 200000 calls, 200 aten::mm, loop_ns=12345678
// Usage: break_loop [ITERATIONS] [REPEATS] [ARM]   (REPEATS > 1: the best loop time of REPEATS runs;
// ARM: an operator name to arm in the break filter in-process, as dispatch-break does from a
// debugger, e.g. aten::relu; for instruction counts under callgrind, where no debugger can attach)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "dscope/DispatchRecords.h"
#include "dscope/Library.h"
#include "dscope/aten/Functions.h"

using namespace dscope;

namespace {

[[gnu::noinline]] Tensor noop_cpu(const Tensor& x) { return x; }
Tensor noop_autograd(DispatchKeySet ks, const Tensor& x);

DSCOPE_LIBRARY(bench_break, m) { m.def("noop(Tensor x) -> Tensor"); }
DSCOPE_LIBRARY_IMPL(bench_break, CPU, m) { m.impl("noop", &noop_cpu); }
DSCOPE_LIBRARY_IMPL(bench_break, AutogradCPU, m) { m.impl("noop", &noop_autograd); }

const TypedOperatorHandle<Tensor(const Tensor&)>& noopOp() {
  static auto op = Dispatcher::singleton().findSchemaOrThrow("bench_break::noop", "").typed<Tensor(const Tensor&)>();
  return op;
}

Tensor noop_autograd(DispatchKeySet ks, const Tensor& x) {
  AutoDispatchBelowADInplaceOrView guard;
  return noopOp().redispatch(ks & after_autograd_keyset, x);
}

}  // namespace

int main(int argc, char** argv) {
  long iters = argc > 1 ? std::atol(argv[1]) : 200'000;
  int repeats = argc > 2 ? std::atoi(argv[2]) : 1;
  if (argc > 3 && !debug::addBreak(argv[3])) return 1;
  Tensor a = at::ones({2, 2});
  Tensor b = at::ones({2, 2});
  const auto& noop = noopOp();
  double best = 1e300;
  long mm_calls = 0;
  for (int r = 0; r < std::max(repeats, 1); ++r) {
    mm_calls = 0;
    auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < iters; ++i) {
      if (i % 1000 == 999) {
        Tensor c = at::mm(a, b);
        ++mm_calls;
      } else {
        Tensor c = noop.call(a);
      }
    }
    std::chrono::duration<double, std::nano> dt = std::chrono::steady_clock::now() - start;
    best = std::min(best, dt.count());
  }
  std::printf("break_loop: %ld calls, %ld aten::mm, loop_ns=%.0f\n", iters, mm_calls, best);
  return 0;
}
