// dispatch-trace --frames in the inspect library, over a stack the test describes through the
// frame callbacks (the real debuggers' stacks are covered end to end in tests/e2e). The operator
// entries, kernels and tensors behind the frames are this process's real runtime objects, so the
// expected operator, key and kernel come from the scenario: the autograd kernel of frm::loop
// calling frm::loop again, N times.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "dscope/Library.h"
#include "dscope/debug/Layout.h"
#include "test_util.h"

using namespace dscope;
using K = DispatchKey;

namespace {

Tensor loopAutograd(const Tensor& x) { return x; }  // never runs: the frames below only describe it
Tensor loopCpu(const Tensor& x) { return x; }

impl::OperatorEntry& loopEntry() {
  static Library* lib = [] {
    auto* l = new Library(Library::FRAGMENT, "frm", std::nullopt, "test_frames.cpp", 1);
    l->def("loop(Tensor x) -> Tensor");
    l->impl("loop", dispatch(K::AutogradCPU, &loopAutograd));
    l->impl("loop", dispatch(K::CPU, &loopCpu));
    return l;
  }();
  (void)lib;
  return Dispatcher::singleton().findSchemaOrThrow("frm::loop", "").entry();
}

// Where code is entered, as a number (a member function's: the first word of its pointer).
template <class F>
uint64_t addressOf(F f) {
  uint64_t a = 0;
  std::memcpy(&a, &f, sizeof a);
  return a;
}

// The function a kernel is entered through from the dispatcher (a KernelFunction field).
uint64_t kernelField(const impl::AnnotatedKernel& k, uint64_t field) {
  uint64_t fn = 0;
  std::memcpy(&fn, reinterpret_cast<const char*>(&k) + debug::Layout::AnnotatedKernel_kernel + field, sizeof fn);
  return fn;
}

// A stack as a debugger would give it: each stack frame's pc (a return address into a real
// function of this process, which the library symbolizes from the module files), no stack memory.
struct FakeStack : testing::TestTarget {
  std::vector<uint64_t> pcs;  // innermost first
  int64_t tid = 4242;
  int walk_end = DSCOPE_FRAMES_OUTERMOST;  // what frame_walk_end answers

  FakeStack() {
    t.selected_tid = tid;
    t.stack_frame = [](void* ctx, int64_t tid, uint64_t level, uint64_t* pc, uint64_t* sp) {
      auto* self = static_cast<FakeStack*>(ctx);
      if (tid != self->tid || level >= self->pcs.size()) return 1;
      *pc = self->pcs[level];
      *sp = 0;
      return 0;
    };
    t.frame_walk_end = [](void* ctx, int64_t, uint64_t) { return static_cast<FakeStack*>(ctx)->walk_end; };
  }

  // frm::loop dispatched `depth` times from its own autograd kernel through the boxed entry
  // point: OperatorHandle::callBoxed, the kernel's boxed trampoline (which every kernel of that
  // signature shares), the kernel's own function. 3 stack frames a level.
  void overflow(int depth, const Tensor& x) {
    impl::OperatorEntry& e = loopEntry();
    const impl::AnnotatedKernel& k = e.lookup(e.dispatchKeyExtractor().getDispatchKeySetUnboxed(x));
    const uint64_t call_boxed = addressOf(static_cast<void (OperatorHandle::*)(Stack*) const>(&OperatorHandle::callBoxed));
    for (int d = 0; d < depth; ++d) {
      pcs.push_back(kernelField(k, debug::Layout::KernelFunction_functor) + 1);
      pcs.push_back(kernelField(k, debug::Layout::KernelFunction_boxed_fn) + 1);
      pcs.push_back(call_boxed + 1);
    }
  }
};

Tensor cpuTensor() { return make_tensor(std::vector<int64_t>{2}, ScalarType::Float, Device(DeviceType::CPU)); }

}  // namespace

TEST_CASE("dispatch-trace --frames maps pcs to the dispatcher's functions and the kernels entered, and folds the cycle") {
  FakeStack s;
  Tensor x = cpuTensor();
  s.overflow(10, x);
  REQUIRE((loopEntry().dispatchKeyExtractor().getDispatchKeySetUnboxed(x).highestPriorityTypeId() == K::AutogradCPU));
  auto r = testing::run(s, "dispatch-trace --frames");
  INFO(r.text);
  REQUIRE_FALSE(r.error);
  CHECK(r.text.find("(30 frames walked)") != std::string::npos);
  CHECK(r.text.find("thread tid 4242: dispatch depth 10 on the stack\n") != std::string::npos);
  // The boxed trampoline alone would leave frm::loop's CPU kernel too (same signature): the
  // kernel's own function inside it decides.
  CHECK(r.text.find("[callBoxed] op=[frm::loop], key=[AutogradCPU] ... repeated 10 times") != std::string::npos);
  CHECK(r.text.find("#9 [callBoxed] op=[frm::loop], key=[AutogradCPU]  (stack frame #2)\n") != std::string::npos);
  CHECK(r.text.find("#8 [callBoxed] op=[frm::loop], key=[AutogradCPU]  (stack frame #5)\n") != std::string::npos);
  CHECK(r.text.find("frm::loop's AutogradCPU kernel") != std::string::npos);
  CHECK(r.text.find("registered at test_frames.cpp:1") != std::string::npos);
  CHECK(r.text.find("note:") == std::string::npos);
  auto json = testing::run(s, "dispatch-trace --frames --json").text;
  CHECK(testing::JsonChecker::valid(json));
  CHECK(json.find("\"op\":\"frm::loop\",\"key\":\"AutogradCPU\",\"slot\":") != std::string::npos);

  // Caught in the trampoline, before the kernel's function: the innermost dispatch's kernel is one
  // of those the trampoline enters (frm::loop's two, and other operators' of that signature); the
  // loop takes it in.
  s.pcs.erase(s.pcs.begin());
  auto caught = testing::run(s, "dispatch-trace --frames");
  INFO(caught.text);
  CHECK(caught.text.find("#9 [callBoxed] op=[<one of ") != std::string::npos);
  CHECK(caught.text.find(" operators>], key=[?]  (stack frame #1)") != std::string::npos);
  CHECK(caught.text.find("[callBoxed] op=[frm::loop], key=[AutogradCPU] ... repeated 10 times") != std::string::npos);
  CHECK(caught.text.find("note: 1 dispatch on the stack did not show which kernel it entered") != std::string::npos);
  CHECK(testing::run(s, "dispatch-trace --frames --json").text.find("\"op\":null,\"key\":null,\"candidate_ops\":") !=
        std::string::npos);
  s.pcs.erase(s.pcs.begin());  // caught in callBoxed: no kernel entered
  CHECK(testing::run(s, "dispatch-trace --frames").text.find("#9 [callBoxed] op=[<no kernel entered>], key=[?]") !=
        std::string::npos);
}

TEST_CASE("dispatch-trace --frames says where the walk stopped: its bound, or the debugger's frame cap") {
  FakeStack s;
  Tensor x = cpuTensor();
  s.overflow(10, x);
  auto bounded = testing::run(s, "dispatch-trace --frames --max-frames 12");
  INFO(bounded.text);
  CHECK(bounded.text.find("(12 frames walked; stopped at the 12-frame bound (--max-frames)") != std::string::npos);
  CHECK(bounded.text.find("dispatch depth 4 on the stack walked (the chain's start was not reached)") != std::string::npos);

  s.t.frame_cap = 12;  // the debugger unwinds no deeper (LLDB's max-backtrace-depth)
  s.pcs.resize(12);
  s.walk_end = DSCOPE_FRAMES_CAP;
  auto capped = testing::run(s, "dispatch-trace --frames");
  INFO(capped.text);
  CHECK(capped.text.find("(12 frames walked; stopped at the debugger's 12-frame cap") != std::string::npos);
  CHECK(capped.text.find("(it may begin below the frames walked)") != std::string::npos);
}

TEST_CASE("dispatch-trace --frames: one line when it cannot work") {
  FakeStack none;
  none.t.selected_tid = 0;
  testing::checkOneLineError(testing::run(none, "dispatch-trace --frames"));
  FakeStack no_callbacks;
  no_callbacks.t.stack_frame = nullptr;
  testing::checkOneLineError(testing::run(no_callbacks, "dispatch-trace --frames"));
  testing::checkOneLineError(testing::run(no_callbacks, "dispatch-trace --frames --all"));
  testing::checkOneLineError(testing::run(no_callbacks, "dispatch-trace --max-frames 3"));
}

TEST_CASE("dispatch-trace --frames says why the debugger's unwinder stopped, and refuses a process that died") {
  Tensor x = cpuTensor();
  FakeStack s;
  s.overflow(10, x);
  s.pcs.resize(9);  // the stack below 3 dispatches is not in a truncated core
  s.walk_end = DSCOPE_FRAMES_UNREADABLE;
  auto unreadable = testing::run(s, "dispatch-trace --frames");
  INFO(unreadable.text);
  REQUIRE_FALSE(unreadable.error);
  CHECK(unreadable.text.find("dispatch chain from the native stack (9 frames walked; the debugger could not unwind past "
                             "the last one: the stack memory of its caller is unreadable (a truncated core, or unmapped "
                             "memory), older frames not read):\n") == 0);
  CHECK(unreadable.text.find("thread tid 4242: dispatch depth 3 on the stack walked (the chain's start was not reached)") !=
        std::string::npos);
  CHECK(testing::run(s, "dispatch-trace --frames --json").text.find("\"walk_ended_at\":\"unreadable stack\"") !=
        std::string::npos);
  s.walk_end = DSCOPE_FRAMES_CORRUPT;
  CHECK(testing::run(s, "dispatch-trace --frames").text.find("(9 frames walked; the debugger could not unwind past the "
                                                            "last one: the stack is corrupt there, older frames not read)") !=
        std::string::npos);
  s.pcs.resize(2);  // the kernel and its trampoline: no dispatch among the frames walked
  s.walk_end = DSCOPE_FRAMES_UNREADABLE;
  auto none = testing::run(s, "dispatch-trace --frames");
  INFO(none.text);
  CHECK(none.text.find("thread tid 4242: no dispatch frame in the frames walked\n") != std::string::npos);

  // The process died during the walk: its frames stop early and the front end says it is gone.
  // No chain made of what was read.
  s.pcs.resize(9);
  s.walk_end = DSCOPE_FRAMES_GONE;
  auto r = testing::run(s, "dispatch-trace --frames");
  testing::checkOneLineError(r);
  CHECK(r.text == "dscope: the process exited during the walk: its stack can no longer be read (9 frames walked)\n");
}
