// namespace_program: threads that stay inside a dispatch until the process is killed, the scenario
// of reading a process in a pid namespace of its own (a container) from outside it
// (tests/cli/cli_live_test.py --check namespace-*).
//
// Each of 3 threads calls ns::hold on a tensor that requires grad: its AutogradCPU kernel
// redispatches below autograd to the CPU kernel, which prints "thread N holds (tid T)", T the id
// the thread sees itself by (gettid: the namespace's), and waits for ever. The main thread prints
// "ready (pid P)" once all three hold, and waits too. Every read of the process, from inside the
// namespace or outside it, live or from a core, finds the same two-record chain on each thread.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "dscope/Library.h"
#include "dscope/aten/Functions.h"

using namespace dscope;

namespace {

using Unary = Tensor(const Tensor&);
constexpr int kThreads = 3;
std::atomic<int> holding{0};
thread_local int thread_index = 0;

const TypedOperatorHandle<Unary>& holdOp() {
  static auto op = Dispatcher::singleton().findSchemaOrThrow("ns::hold", "").typed<Unary>();
  return op;
}

Tensor hold_cpu(const Tensor& x) {
  std::printf("thread %d holds (tid %ld)\n", thread_index, static_cast<long>(::syscall(SYS_gettid)));
  ++holding;
  for (;;) ::pause();
  return x;
}

Tensor hold_autograd(DispatchKeySet ks, const Tensor& x) {
  AutoDispatchBelowADInplaceOrView below;
  return holdOp().redispatch(ks & after_autograd_keyset, x);
}

DSCOPE_LIBRARY(ns, m) { m.def("hold(Tensor x) -> Tensor"); }
DSCOPE_LIBRARY_IMPL(ns, CPU, m) { m.impl("hold", &hold_cpu); }
DSCOPE_LIBRARY_IMPL(ns, AutogradCPU, m) { m.impl("hold", &hold_autograd); }

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<std::thread> threads;
  for (int i = 1; i <= kThreads; ++i)
    threads.emplace_back([i] {
      thread_index = i;
      holdOp().call(at::randn({2, 2}, TensorOptions().requires_grad(true)));
    });
  while (holding.load() < kThreads) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::printf("ready (pid %ld)\n", static_cast<long>(::getpid()));
  for (;;) ::pause();
}
