// dispatch-trace --frames in the inspect library, over a stack the test describes through the
// frame callbacks (the real debuggers' stacks are covered end to end in tests/e2e). The operator
// entries, kernels and tensors behind the frames are this process's real runtime objects, so the
// expected operator, key and kernel come from the scenario: the autograd kernel of frm::loop
// calling frm::loop again, N times.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "dscope/Library.h"
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

// One frame as a debugger would describe it: a name and the variables it can read.
struct FakeFrame {
  std::string name;
  std::map<std::string, uint64_t> values;
  std::vector<uint64_t> tensors;
  bool tensors_known = true;
  bool inlined = false;  // a call inlined into the next outer frame (no stack frame of its own)
};

struct FakeStack : testing::TestTarget {
  std::vector<FakeFrame> frames;  // innermost first
  int64_t tid = 4242;
  int walk_end = DSCOPE_FRAMES_OUTERMOST;  // what frame_walk_end answers
  bool values_fail = false;                 // every frame_value fails (a process that died)

  FakeStack() {
    t.selected_tid = tid;
    t.frame_function = [](void* ctx, int64_t tid, uint64_t level, char* out, uint64_t size) {
      auto* self = static_cast<FakeStack*>(ctx);
      if (tid != self->tid || level >= self->frames.size()) return 1;
      std::snprintf(out, size, "%s", self->frames[level].name.c_str());
      return 0;
    };
    t.frame_walk_end = [](void* ctx, int64_t, uint64_t) { return static_cast<FakeStack*>(ctx)->walk_end; };
    t.frame_value = [](void* ctx, int64_t, uint64_t level, const char* path, uint64_t* value) {
      if (static_cast<FakeStack*>(ctx)->values_fail) return 1;
      auto& f = static_cast<FakeStack*>(ctx)->frames[level];
      auto it = f.values.find(path);
      if (it == f.values.end()) return 1;
      *value = it->second;
      return 0;
    };
    t.frame_tensors = [](void* ctx, int64_t, uint64_t level, uint64_t* impls, uint64_t max, uint64_t* count) {
      auto& f = static_cast<FakeStack*>(ctx)->frames[level];
      if (!f.tensors_known || f.tensors.size() > max) return 1;
      for (size_t i = 0; i < f.tensors.size(); ++i) impls[i] = f.tensors[i];
      *count = f.tensors.size();
      return 0;
    };
    t.frame_inlined = [](void* ctx, int64_t, uint64_t level) {
      auto& f = static_cast<FakeStack*>(ctx)->frames;
      return level < f.size() && f[level].inlined ? 1 : 0;
    };
  }

  // frm::loop dispatched `depth` times from its own autograd kernel (call(), not redispatch()),
  // each level as g++ -O2 leaves it: dispatch (ks optimized out), call inlined into the kernel,
  // the kernel; 3 frames, 2 stack frames. The innermost dispatch still has its ks.
  void overflow(int depth, const Tensor& x, bool with_values = true) {
    impl::OperatorEntry& e = loopEntry();
    const DispatchKeySet ks = e.dispatchKeyExtractor().getDispatchKeySetUnboxed(x);  // what call() computes
    const auto* kernel = &e.lookup(ks);
    for (int d = 0; d < depth; ++d) {
      FakeFrame dispatch{"dscope::TypedOperatorHandle<dscope::Tensor (dscope::Tensor const&)>::dispatch("
                         "dscope_record_kind, dscope::DispatchKeySet, dscope::Tensor const&) const"};
      if (with_values) {
        dispatch.values = {{"kind", DSCOPE_RECORD_CALL},
                           {"this->entry_", reinterpret_cast<uint64_t>(&e)},
                           {"k", reinterpret_cast<uint64_t>(kernel)}};
        if (d == 0) dispatch.values["ks"] = ks.raw_repr();
        dispatch.tensors = {reinterpret_cast<uint64_t>(x.unsafeGetTensorImpl())};
      }
      frames.push_back(dispatch);
      frames.push_back({.name = "dscope::TypedOperatorHandle<dscope::Tensor (dscope::Tensor const&)>::call", .inlined = true});
      frames.push_back({"(anonymous namespace)::loopAutograd(dscope::Tensor const&)"});
    }
    frames.push_back({"main"});
    frames.push_back({"__libc_start_call_main"});  // LLDB goes on past main, GDB does not: the walk ends at main
    frames.push_back({"_start"});
  }
};

Tensor cpuTensor() { return make_tensor(std::vector<int64_t>{2}, ScalarType::Float, Device(DeviceType::CPU)); }

}  // namespace

TEST_CASE("dispatch-trace --frames finds the dispatch frames, recovers dropped keys and folds the cycle") {
  FakeStack s;
  Tensor x = cpuTensor();
  s.overflow(10, x);
  auto r = testing::run(s, "dispatch-trace --frames");
  INFO(r.text);
  REQUIRE_FALSE(r.error);
  // The scenario: a CPU tensor enters at autograd (the autocast key falls through).
  const bool enters_at_autograd =
      loopEntry().dispatchKeyExtractor().getDispatchKeySetUnboxed(x).highestPriorityTypeId() == K::AutogradCPU;
  REQUIRE(enters_at_autograd);
  CHECK(r.text.find("(21 frames walked)") != std::string::npos);  // stack frames: inlined calls are not counted
  CHECK(r.text.find("thread tid 4242: dispatch depth 10 on the stack\n") != std::string::npos);
  // The innermost dispatch kept its whole key set, the others only the recovered key: the fold
  // runs below it (as for a dispatch caught half-way).
  CHECK(r.text.find("[call] op=[frm::loop], key=[AutogradCPU] ... repeated 9 times") != std::string::npos);
  CHECK(r.text.find("#9 [call] op=[frm::loop], key=[AutogradCPU]  (frame #0)\n") != std::string::npos);
  CHECK(r.text.find("#8 [call] op=[frm::loop], key=[AutogradCPU]  (frame #3; key from the kernel that ran)") !=
        std::string::npos);
  CHECK(r.text.find("frm::loop's AutogradCPU kernel") != std::string::npos);
  CHECK(r.text.find("registered at test_frames.cpp:1") != std::string::npos);
  CHECK(r.text.find("note: the optimizer dropped the key set of 9 dispatch frames:") != std::string::npos);
  CHECK(testing::JsonChecker::valid(testing::run(s, "dispatch-trace --frames --json").text));
}

TEST_CASE("dispatch-trace --frames says where the walk stopped: its bound, or the debugger's frame cap") {
  FakeStack s;
  Tensor x = cpuTensor();
  s.overflow(10, x);
  // The bound counts stack frames (2 per level here), so a debugger that lists more or fewer
  // inlined calls stops at the same dispatch.
  auto bounded = testing::run(s, "dispatch-trace --frames --max-frames 12");
  INFO(bounded.text);
  CHECK(bounded.text.find("(12 frames walked; stopped at the 12-frame bound (--max-frames)") != std::string::npos);
  CHECK(bounded.text.find("dispatch depth 6 on the stack walked (the chain's start was not reached)") != std::string::npos);
  for (auto& f : s.frames) f.inlined = false;  // a debugger that shows no inlined call
  auto no_inlined = testing::run(s, "dispatch-trace --frames --max-frames 12");
  CHECK(no_inlined.text.find("dispatch depth 4 on the stack walked") != std::string::npos);
  for (auto& f : s.frames) f.inlined = true;  // a debugger that says every frame is inlined
  CHECK(testing::run(s, "dispatch-trace --frames").text.find("(1 frame walked)") != std::string::npos);
  FakeStack deep;  // ... on 301 frames: no more than 256 are believed to share one stack frame
  deep.overflow(100, x);
  for (auto& f : deep.frames) f.inlined = true;
  auto all_inlined = testing::run(deep, "dispatch-trace --frames --max-frames 1");
  INFO(all_inlined.text);
  CHECK(all_inlined.text.find("(1 frame walked; stopped at the 1-frame bound") != std::string::npos);
  for (auto& f : s.frames) f.inlined = false;

  s.t.frame_cap = 12;  // the debugger unwinds no deeper (LLDB's max-backtrace-depth)
  s.frames.resize(12);
  auto capped = testing::run(s, "dispatch-trace --frames");
  INFO(capped.text);
  CHECK(capped.text.find("stopped at the debugger's 12-frame cap") != std::string::npos);
  CHECK(capped.text.find("(it may begin below the frames walked)") != std::string::npos);
}

TEST_CASE("dispatch-trace --frames: one line when it cannot work") {
  Tensor x = cpuTensor();
  FakeStack stripped;  // a runtime without DWARF: frames are named, no variable is readable
  stripped.overflow(5, x, /*with_values=*/false);
  auto r = testing::run(stripped, "dispatch-trace --frames");
  testing::checkOneLineError(r);
  CHECK(r.text.find("no readable variables") != std::string::npos);

  FakeStack none;
  none.t.selected_tid = 0;
  testing::checkOneLineError(testing::run(none, "dispatch-trace --frames"));
  FakeStack no_callbacks;
  no_callbacks.t.frame_function = nullptr;
  testing::checkOneLineError(testing::run(no_callbacks, "dispatch-trace --frames"));
  testing::checkOneLineError(testing::run(no_callbacks, "dispatch-trace --frames --all"));
  testing::checkOneLineError(testing::run(no_callbacks, "dispatch-trace --max-frames 3"));
}

TEST_CASE("dispatch-trace --frames says why the debugger's unwinder stopped, and refuses a process that died") {
  Tensor x = cpuTensor();
  FakeStack s;
  s.overflow(10, x);
  s.frames.resize(7);  // the stack below 3 dispatches (5 stack frames) is not in a truncated core
  s.walk_end = DSCOPE_FRAMES_UNREADABLE;
  auto unreadable = testing::run(s, "dispatch-trace --frames");
  INFO(unreadable.text);
  REQUIRE_FALSE(unreadable.error);
  CHECK(unreadable.text.find("dispatch chain from the native stack (5 frames walked; the debugger could not unwind past "
                             "the last one: the stack memory of its caller is unreadable (a truncated core, or unmapped "
                             "memory), older frames not read):\n") == 0);
  CHECK(unreadable.text.find("thread tid 4242: dispatch depth 3 on the stack walked (the chain's start was not reached)") !=
        std::string::npos);
  CHECK(testing::run(s, "dispatch-trace --frames --json").text.find("\"walk_ended_at\":\"unreadable stack\"") !=
        std::string::npos);
  s.walk_end = DSCOPE_FRAMES_CORRUPT;
  CHECK(testing::run(s, "dispatch-trace --frames").text.find("(5 frames walked; the debugger could not unwind past the "
                                                            "last one: the stack is corrupt there, older frames not read)") !=
        std::string::npos);
  s.frames = {{"dscope::detail::fallthroughKernel"}, {"(anonymous namespace)::loopAutograd(dscope::Tensor const&)"}};
  s.walk_end = DSCOPE_FRAMES_UNREADABLE;
  auto none = testing::run(s, "dispatch-trace --frames");  // no dispatch among the frames walked
  INFO(none.text);
  CHECK(none.text.find("thread tid 4242: no dispatch frame in the frames walked\n") != std::string::npos);

  // The process died during the walk: its frames stop early and their values fail, and the front
  // end says it is gone. No chain made of what was read, no "stripped runtime" guess.
  FakeStack dead;
  dead.overflow(10, x);
  dead.frames.resize(7);
  dead.values_fail = true;
  dead.walk_end = DSCOPE_FRAMES_GONE;
  auto r = testing::run(dead, "dispatch-trace --frames");
  testing::checkOneLineError(r);
  CHECK(r.text == "dscope: the process exited during the walk: its stack can no longer be read (5 frames walked)\n");
  dead.overflow(0, x);  // ... or it died after the names were read, while the values were: walked to main
  dead.frames.erase(dead.frames.begin() + 7, dead.frames.begin() + 10);
  CHECK(testing::run(dead, "dispatch-trace --frames").text.find("dscope: the process exited during the walk") == 0);
  dead.walk_end = DSCOPE_FRAMES_OUTERMOST;  // a front end that cannot tell: the stripped-runtime guess stays
  CHECK(testing::run(dead, "dispatch-trace --frames").text.find("no readable variables") != std::string::npos);
}
