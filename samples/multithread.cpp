// multithread: 8 threads dispatching at once; one of them overflows its stack.
//
// Threads 0-7 each run mm/add/relu/sum with autograd in a loop. Thread 5, after a few
// iterations, calls myops::loop, whose AutogradCPU kernel calls op.call(...) on itself (the
// infinite_redispatch bug), and overflows. Every thread has its own record block, so the
// crash handler and the debuggers can tell the overflowing thread (deep myops::loop chain)
// from the healthy ones (shallow aten chains) by their records alone.
//
// What you should see: "thread N started (tid T)" lines, then SIGSEGV with the dispatch
// summary of thread 5 (myops::loop at AutogradCPU repeating) and a core. With --no-crash all
// threads finish and the program prints "all 8 threads done". With --until-killed the threads
// go on dispatching until the process is killed (a live target that cannot exit before a test
// has stopped it and attached).
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "dscope/Library.h"
#include "dscope/aten/Functions.h"
#include "sample_util.h"

using namespace dscope;

namespace {

const TypedOperatorHandle<Tensor(const Tensor&)>& loopOp() {
  static auto op = Dispatcher::singleton().findSchemaOrThrow("myops::loop", "").typed<Tensor(const Tensor&)>();
  return op;
}
Tensor loop_cpu(const Tensor& x) { return x; }
Tensor loop_autograd(const Tensor& x) { return loopOp().call(x); }  // BUG: re-enters AutogradCPU

DSCOPE_LIBRARY(myops, m) { m.def("loop(Tensor x) -> Tensor"); }
DSCOPE_LIBRARY_IMPL(myops, CPU, m) { m.impl("loop", &loop_cpu); }
DSCOPE_LIBRARY_IMPL(myops, AutogradCPU, m) { m.impl("loop", &loop_autograd); }

constexpr int kThreads = 8;
constexpr int kCrashingThread = 5;
std::atomic<int> started{0};

void work(int index, bool crash, bool until_killed) {
  std::printf("thread %d started (tid %ld)\n", index, static_cast<long>(::syscall(SYS_gettid)));
  ++started;
  while (started.load() < kThreads) std::this_thread::yield();
  Tensor a = at::randn({8, 8}, TensorOptions().requires_grad(true));
  for (long i = 0; until_killed || i < 2000; ++i) {
    Tensor loss = at::sum(at::relu(at::add(at::mm(a, a), a)));
    if (i % 100 == 0) loss.backward();
    if (crash && index == kCrashingThread && i == 50) loopOp().call(a);
  }
}

}  // namespace

int main(int argc, char** argv) {
  sample::start(argc, argv);
  bool crash = !sample::hasFlag(argc, argv, "--no-crash");
  bool until_killed = sample::hasFlag(argc, argv, "--until-killed");
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(work, i, crash, until_killed);
  for (auto& t : threads) t.join();
  std::printf("all %d threads done\n", kThreads);
  return 0;
}
