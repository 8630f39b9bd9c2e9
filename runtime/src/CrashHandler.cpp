#include "dscope/CrashHandler.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <boost/stacktrace.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "dscope/DispatchRecords.h"
#include "dscope/OperatorEntry.h"
#include "dscope/format/DispatchRecord.h"

namespace dscope {

namespace {

constexpr size_t kAltStackSize = 256 * 1024;  // symbolizing needs more than the 8 KiB minimum
constexpr uint64_t kFirstRecordsShown = 8;
constexpr size_t kFramesShown = 24;

// One line per record, in the trace's own words: "  #3 [redispatch] op=[aten::mm], key=[CPU]".
void printRecord(uint64_t depth, const dscope_dispatch_record& r) {
  const auto* op = static_cast<const impl::OperatorEntry*>(r.op);
  std::fprintf(stderr, "  #%llu %s op=[%s], key=[%s]\n", static_cast<unsigned long long>(depth),
               format::recordKindLabel(r.kind), op->name_cstr(), toString(debug::recordKey(r)));
}

void printDispatchSummary(const char* signal_name) {
  const dscope_thread_records* r = debug::current_thread_records;
  if (!r || r->depth == 0) {
    std::fprintf(stderr, "dscope: fatal signal %s outside any dispatch\n", signal_name);
    return;
  }
  auto at = [&](uint64_t d) { return debug::recordAt(*r, d); };
  auto cycle = debug::findDispatchCycle(r->depth, at);
  const auto& top = *at(r->depth - 1);
  const auto* op = static_cast<const impl::OperatorEntry*>(top.op);
  if (cycle.period) {
    std::fprintf(stderr,
                 "dscope: fatal signal %s at dispatch depth %llu: %s at %s repeats (cycle of %llu dispatch(es), "
                 "%llu repetitions since depth %s%llu): infinite redispatch?\n",
                 signal_name, static_cast<unsigned long long>(r->depth), op->name_cstr(),
                 toString(debug::recordKey(top)), static_cast<unsigned long long>(cycle.period),
                 static_cast<unsigned long long>(cycle.repeats), cycle.start_in_gap ? "<= " : "",
                 static_cast<unsigned long long>(cycle.start_depth));
  } else {
    std::fprintf(stderr, "dscope: fatal signal %s at dispatch depth %llu, innermost: %s at %s\n", signal_name,
                 static_cast<unsigned long long>(r->depth), op->name_cstr(),
                 toString(debug::recordKey(top)));
  }
  std::fprintf(stderr, "dscope: first dispatch records:\n");
  for (uint64_t d = 0; d < r->depth && d < kFirstRecordsShown; ++d) printRecord(d, *at(d));
}

void onFatalSignal(int sig) {
  printDispatchSummary(sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : "SIGABRT");
  std::fprintf(stderr, "dscope: native stack (innermost %zu frames):\n", kFramesShown);
  std::string trace = boost::stacktrace::to_string(boost::stacktrace::stacktrace(0, kFramesShown));
  (void)!::write(STDERR_FILENO, trace.data(), trace.size());
  // Let the default action run (terminate + core) once this handler returns.
  signal(sig, SIG_DFL);
  raise(sig);
}

std::atomic<bool> installed{false};

// This thread's alternate signal stack, released when the thread exits.
struct ThreadAltStack {
  void* memory = nullptr;
  ~ThreadAltStack() {
    if (!memory) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    std::free(memory);
  }
};
thread_local ThreadAltStack alt_stack;

void ensureAltStack() {
  if (alt_stack.memory) return;
  alt_stack.memory = std::malloc(kAltStackSize);
  stack_t ss{};
  ss.ss_sp = alt_stack.memory;
  ss.ss_size = kAltStackSize;
  sigaltstack(&ss, nullptr);
}

bool envEnabled() {
  const char* v = std::getenv("DSCOPE_CRASH_HANDLER");
  return v && std::string_view(v) == "1";
}

const bool kInstalledFromEnv = [] {
  if (envEnabled()) install_crash_handler();
  return true;
}();

}  // namespace

void detail::onThreadRegistered() {
  if (installed.load(std::memory_order_acquire)) ensureAltStack();
}

void install_crash_handler() {
  if (installed.exchange(true)) return;
  ensureAltStack();
  // Warm up the unwinder and the symbolizer now: the first use allocates.
  (void)boost::stacktrace::to_string(boost::stacktrace::stacktrace(0, 1));
  struct sigaction sa{};
  sa.sa_handler = &onFatalSignal;
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT}) sigaction(sig, &sa, nullptr);
}

}  // namespace dscope
