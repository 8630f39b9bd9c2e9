// Dispatch overhead of a no-op operator, measured side by side in one process:
//   (a) the CPU kernel called directly as a plain function,
//   (b) Dispatcher call below autograd (1 level: CPU),
//   (c) Dispatcher call with autograd (2 levels: AutogradCPU redispatches to CPU).
// Each repeat times the three variants back to back; the best repeat of each is reported, so
// a noisy moment hurts all three alike. Each repeat also runs (c) in the same program built
// over a runtime without dispatch records (DSCOPE_DISPATCH_RECORDS=0), as a child process, to
// report what the records cost.
// Usage: dispatch_overhead [iterations] [repeats]; the child: --two-level-only ITERATIONS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

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

#ifdef DSCOPE_NORECORDS_BENCH
// (c) measured by the records-off build, in a child process.
double twoLevelsWithoutRecords(long iters) {
  std::string cmd = std::string(DSCOPE_NORECORDS_BENCH) + " --two-level-only " + std::to_string(iters);
  FILE* child = popen(cmd.c_str(), "r");
  double ns = 0;
  if (!child || std::fscanf(child, "two_level_ns=%lf", &ns) != 1) {
    std::fprintf(stderr, "dispatch_overhead: could not run %s\n", cmd.c_str());
    std::exit(1);
  }
  pclose(child);
  return ns;
}
#endif

int main(int argc, char** argv) {
  Tensor x = make_tensor(std::vector<int64_t>{1}, ScalarType::Float, Device(DeviceType::CPU));
  const auto& op = noopOp();
  if (argc > 2 && std::string_view(argv[1]) == "--two-level-only") {
    std::printf("two_level_ns=%.3f\n", nsPerCall(std::atol(argv[2]), [&] { Tensor r = op.call(x); }));
    return 0;
  }
  long iters = argc > 1 ? std::atol(argv[1]) : 2'000'000;
  int repeats = argc > 2 ? std::atoi(argv[2]) : 15;
  // The same result flows through every variant, so each does the same refcount work.
  auto direct = [&] { Tensor r = noop_cpu(x); };
  auto one_level = [&] {
    AutoDispatchBelowAutograd below;
    return nsPerCall(iters, [&] { Tensor r = op.call(x); });
  };
  auto two_levels = [&] { Tensor r = op.call(x); };

  double best_a = 1e30, best_b = 1e30, best_c = 1e30, best_off = 1e30;
  for (int r = 0; r < repeats; ++r) {
    best_a = std::min(best_a, nsPerCall(iters, direct));
    best_b = std::min(best_b, one_level());
    best_c = std::min(best_c, nsPerCall(iters, two_levels));
#ifdef DSCOPE_NORECORDS_BENCH
    best_off = std::min(best_off, twoLevelsWithoutRecords(iters));
#endif
  }
  std::printf("iterations=%ld repeats=%d (best repeat reported)\n", iters, repeats);
#ifdef DSCOPE_NORECORDS_BENCH
  std::printf("records_cost_per_dispatch_ns=%.2f\n", (best_c - best_off) / 2);
  std::printf("records_on_2level_ns=%.2f records_off_2level_ns=%.2f\n", best_c, best_off);
#endif
  std::printf("dispatch_2level_minus_direct_ns=%.2f ratio_2level_over_direct=%.2f\n", best_c - best_a, best_c / best_a);
  std::printf("direct_ns=%.2f dispatch_1level_ns=%.2f dispatch_2level_ns=%.2f\n", best_a, best_b, best_c);
  return 0;
}
