// The debug interface seen from inside the process: the descriptor, per-thread dispatch
// records, the registry, the break filter, the max-depth guard and the cycle finder.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "dscope/DebugInterface.h"
#include "dscope/Library.h"
#include "dscope/debug/Layout.h"
#include "test_util.h"

using namespace dscope;
using K = DispatchKey;

namespace {

Tensor cpuTensor() { return make_tensor(std::vector<int64_t>{2}, ScalarType::Float, Device(DeviceType::CPU)); }

const dscope_thread_records& myRecords() {
  if (!debug::current_thread_records) debug::registerCurrentThread();
  return *debug::current_thread_records;
}

std::vector<dscope_dispatch_record> liveChain() {
  const auto& r = myRecords();
  std::vector<dscope_dispatch_record> out;
  for (uint64_t d = 0; d < r.depth; ++d) out.push_back(*debug::recordAt(r, d));
  return out;
}

const char* opName(const dscope_dispatch_record& r) { return static_cast<const impl::OperatorEntry*>(r.op)->name_cstr(); }

// rec.op/kind/key of a synthetic chain for the cycle finder: "a b c b c b c" style.
std::vector<dscope_dispatch_record> chain(const std::string& pattern) {
  static int ops[26];
  std::vector<dscope_dispatch_record> out;
  for (char c : pattern) out.push_back({&ops[c - 'a'], nullptr, 0, 0, DSCOPE_RECORD_CALL, {}});
  return out;
}

debug::DispatchCycle cycleOf(const std::vector<dscope_dispatch_record>& c, uint64_t window = DSCOPE_RECORDS_RING) {
  return debug::findDispatchCycle(c.size(), [&](uint64_t d) { return d < c.size() ? &c[d] : nullptr; }, window);
}

}  // namespace

TEST_SUITE("debug_interface") {
  TEST_CASE("the descriptor: magic, version, pointer size, dispatcher, registry") {
    const auto& d = dscope_debug_descriptor;
    CHECK(std::memcmp(d.magic, DSCOPE_DEBUG_MAGIC, 8) == 0);
    CHECK(d.version == DSCOPE_DEBUG_INTERFACE_VERSION);
    CHECK(d.pointer_size == sizeof(void*));
    CHECK(d.dispatcher == &Dispatcher::singleton());
    CHECK(d.records_first == DSCOPE_RECORDS_FIRST);
    CHECK(d.records_ring == DSCOPE_RECORDS_RING);
    CHECK(d.records_enabled == 1);
    const auto* mine = &myRecords();
    bool found = false;
    uint32_t n = 0;
    for (auto* r = d.thread_records; r; r = r->next, ++n) found |= r == mine;
    CHECK(found);
    CHECK(n == d.thread_records_count);
    CHECK(mine->magic == DSCOPE_THREAD_RECORDS_MAGIC);
    CHECK(mine->state == DSCOPE_THREAD_ALIVE);
    CHECK(mine->tls == &impl::raw_local_dispatch_key_set);
  }

  TEST_CASE("the descriptor's layout profile: every entry by name, the key table, its digest, in writable data") {
    const auto& d = dscope_debug_descriptor;
    REQUIRE(d.profile_text != nullptr);
    const std::string text(d.profile_text, d.profile_size);
    CHECK(std::strlen(d.profile_text) == d.profile_size);
    CHECK(text.rfind("dscope-profile 1\nruntime dscope\n", 0) == 0);
    auto line = [&](const std::string& l) { return text.find("\n" + l + "\n") != std::string::npos; };
#define CHECK_PROFILE_ENTRY(name, expression) \
  CHECK_MESSAGE(line(#name " " + std::to_string(debug::Layout::name)), #name);
    DSCOPE_LAYOUT_PROFILE(CHECK_PROFILE_ENTRY)
#undef CHECK_PROFILE_ENTRY
    CHECK(line("Descriptor_profile_text " + std::to_string(offsetof(dscope_debug_descriptor_t, profile_text))));
    // The key table, as c10's functions state it for this build.
    CHECK(line("count_table_slots " + std::to_string(num_runtime_entries)));
    CHECK(line("count_dispatch_keys " + std::to_string(num_all_dispatch_keys)));
    CHECK(line("set_default_included 0x0000000804000000"));
    CHECK(line("backend 0 CPUBit"));
    const int cpu = static_cast<int>(DispatchKey::CPU), autograd_cpu = static_cast<int>(DispatchKey::AutogradCPU);
    char key[128];
    std::snprintf(key, sizeof key, "key %d CPU bits=0x%llx slot=%d", cpu,
                  static_cast<unsigned long long>(DispatchKeySet(DispatchKey::CPU).raw_repr()),
                  getDispatchTableIndexForDispatchKey(DispatchKey::CPU));
    CHECK(text.find(std::string("\n") + key + " in=") != std::string::npos);
    std::snprintf(key, sizeof key, "key %d AutogradCPU bits=0x%llx slot=%d", autograd_cpu,
                  static_cast<unsigned long long>(DispatchKeySet(DispatchKey::AutogradCPU).raw_repr()),
                  getDispatchTableIndexForDispatchKey(DispatchKey::AutogradCPU));
    CHECK(text.find(std::string("\n") + key) != std::string::npos);
    // The last line is the digest of everything before it, and the descriptor's layout hash.
    const size_t last = text.rfind('\n', text.size() - 2) + 1;
    char digest[64];
    std::snprintf(digest, sizeof digest, "digest fnv1a64 0x%016llx\n", static_cast<unsigned long long>(d.layout_hash));
    CHECK(text.substr(last) == digest);
    CHECK(dscope_fnv1a64(text.substr(0, last).c_str()) == d.layout_hash);
    // In a writable mapping: what a kernel core keeps of a library (its read-only file pages not).
    std::ifstream maps("/proc/self/maps");
    bool writable = false;
    for (std::string m; std::getline(maps, m);) {
      unsigned long long lo = 0, hi = 0;
      char perms[5] = {};
      if (std::sscanf(m.c_str(), "%llx-%llx %4s", &lo, &hi, perms) != 3) continue;
      const auto at = reinterpret_cast<uintptr_t>(d.profile_text);
      if (at >= lo && at + d.profile_size <= hi) writable = perms[1] == 'w';
    }
    CHECK(writable);
    // The sentinel kernels by address: the functions KernelFunction::isFallthrough() and the
    // like compare boxed_fn_ with, as a sentinel KernelFunction holds them.
    CHECK(d.fallthrough_kernel == reinterpret_cast<const void*>(&detail::fallthroughKernel));
    CHECK(d.missing_kernel == reinterpret_cast<const void*>(&detail::missingKernel));
    CHECK(d.ambiguous_autograd_other_kernel == reinterpret_cast<const void*>(&detail::ambiguousAutogradOtherKernel));
    auto boxedFn = [&](const KernelFunction& k) {
      const void* fn = nullptr;
      std::memcpy(&fn, reinterpret_cast<const char*>(&k) + debug::Layout::KernelFunction_boxed_fn, sizeof fn);
      return fn;
    };
    CHECK(boxedFn(KernelFunction::makeFallthrough()) == d.fallthrough_kernel);
    CHECK(boxedFn(KernelFunction::makeMissing()) == d.missing_kernel);
    CHECK(boxedFn(KernelFunction::makeAmbiguousAutogradOther()) == d.ambiguous_autograd_other_kernel);
  }

  TEST_CASE("records: the live chain inside nested redispatch, popped after return and after exceptions") {
    Library lib(Library::FRAGMENT, "dbg", std::nullopt, "dbg.cpp", 1);
    lib.def("chain(Tensor x) -> int");
    static std::vector<dscope_dispatch_record> seen;
    static auto op = [] { return Dispatcher::singleton().findSchemaOrThrow("dbg::chain", ""); };
    lib.impl("chain", dispatch(K::AutogradCPU, [](DispatchKeySet ks, const Tensor& x) -> int64_t {
      return op().typed<int64_t(const Tensor&)>().redispatch(ks & after_autograd_keyset, x);
    }));
    lib.impl("chain", dispatch(K::CPU, [](const Tensor& x) -> int64_t {
      seen = liveChain();
      if (x.numel() == 3) throw Error("kernel failed");
      return 0;
    }));
    uint64_t before = myRecords().depth;
    auto typed = op().typed<int64_t(const Tensor&)>();
    typed.call(cpuTensor());
    REQUIRE(seen.size() == before + 2);
    const auto& outer = seen[before];
    const auto& inner = seen[before + 1];
    CHECK(std::string(opName(outer)) == "dbg::chain");
    CHECK(outer.kind == DSCOPE_RECORD_CALL);
    CHECK((debug::recordKey(outer) == K::AutogradCPU));
    CHECK(outer.slot == 97);
    CHECK(outer.keyset == 0x2000010001);  // {CPU, AutogradCPU}
    CHECK(inner.kind == DSCOPE_RECORD_REDISPATCH);
    CHECK((debug::recordKey(inner) == K::CPU));
    CHECK(inner.slot == 1);
    CHECK(inner.keyset == 0x10001);
    // The kernel field is the table entry that ran: its debug string names the registration.
    CHECK(std::string(static_cast<const impl::AnnotatedKernel*>(inner.kernel)->debug) == "registered at dbg.cpp:1");
    CHECK(myRecords().depth == before);
    CHECK_THROWS_AS(typed.call(make_tensor(std::vector<int64_t>{3}, ScalarType::Float, Device(DeviceType::CPU))), Error);
    CHECK(myRecords().depth == before);  // popped during unwinding
    // Boxed calls are recorded too.
    Stack stack{IValue(cpuTensor())};
    typed.callBoxed(&stack);
    REQUIRE(seen.size() == before + 2);
    CHECK(seen[before].kind == DSCOPE_RECORD_CALL_BOXED);
    CHECK(seen[before + 1].kind == DSCOPE_RECORD_REDISPATCH);
  }

  TEST_CASE("registry: a block per thread, marked dead at exit, reused by the next thread") {
    const int32_t main_tid = myRecords().tid;  // this thread's block exists before the others start
    const dscope_thread_records* block = nullptr;
    int32_t tid = 0;
    std::thread([&] {
      block = &myRecords();
      tid = block->tid;
      CHECK(block->state == DSCOPE_THREAD_ALIVE);
    }).join();
    REQUIRE(block);
    CHECK(tid > 0);
    CHECK(tid != main_tid);
    CHECK(block->state == DSCOPE_THREAD_DEAD);
    uint32_t count = dscope_debug_descriptor.thread_records_count;
    const dscope_thread_records* reused = nullptr;
    std::thread([&] { reused = &myRecords(); }).join();
    CHECK(dscope_debug_descriptor.thread_records_count == count);  // no new block
    CHECK(reused->state == DSCOPE_THREAD_DEAD);
    CHECK(reused->magic == DSCOPE_THREAD_RECORDS_MAGIC);
  }

  TEST_CASE("break filter: the hook fires exactly for matching operators and keys") {
    Library lib(Library::FRAGMENT, "dbg", std::nullopt, "dbg.cpp", 2);
    lib.def("watched.Tensor(Tensor x) -> int");
    lib.def("other(Tensor x) -> int");
    lib.impl("watched.Tensor", dispatch(K::CPU, [](const Tensor&) -> int64_t { return 1; }));
    lib.impl("other", dispatch(K::CPU, [](const Tensor&) -> int64_t { return 2; }));
    auto watched = Dispatcher::singleton().findSchemaOrThrow("dbg::watched", "Tensor").typed<int64_t(const Tensor&)>();
    auto other = Dispatcher::singleton().findSchemaOrThrow("dbg::other", "").typed<int64_t(const Tensor&)>();
    auto hits = [] { return dscope_debug_descriptor.break_hits; };
    AutoDispatchBelowAutograd below;  // both ops go straight to CPU
    uint32_t h0 = hits();
    watched.call(cpuTensor());
    CHECK(hits() == h0);  // filter empty
    REQUIRE(debug::addBreak("dbg::watched.Tensor"));
    watched.call(cpuTensor());
    other.call(cpuTensor());
    CHECK(hits() == h0 + 1);
    debug::clearBreaks();
    REQUIRE(debug::addBreak("dbg::watched"));  // base name matches every overload
    watched.call(cpuTensor());
    CHECK(hits() == h0 + 2);
    debug::clearBreaks();
    REQUIRE(debug::addBreak("dbg::watched", K::CUDA));  // wrong key: no stop
    watched.call(cpuTensor());
    CHECK(hits() == h0 + 2);
    debug::clearBreaks();
    REQUIRE(debug::addBreak("dbg::watched", K::CPU));
    watched.call(cpuTensor());
    watched.redispatch(DispatchKeySet(K::CPU), cpuTensor());
    CHECK(hits() == h0 + 4);
    debug::clearBreaks();
    CHECK(dscope_fnv1a64("aten::mm") == 0x5477c27790740cdfull);  // FNV-1a 64, computed with Python
    for (int i = 0; i < DSCOPE_MAX_BREAKS; ++i) CHECK(debug::addBreak("dbg::x" + std::to_string(i)));
    CHECK(!debug::addBreak("dbg::one_too_many"));
    debug::clearBreaks();
  }

  TEST_CASE("max dispatch depth: a dscope::Error naming the repeating op and key") {
    Library lib(Library::FRAGMENT, "dbg", std::nullopt, "dbg.cpp", 3);
    lib.def("recurse(Tensor x) -> int");
    lib.impl("recurse", dispatch(K::AutogradCPU, [](const Tensor& x) -> int64_t {
      return Dispatcher::singleton().findSchemaOrThrow("dbg::recurse", "").typed<int64_t(const Tensor&)>().call(x);
    }));
    auto& r = const_cast<dscope_thread_records&>(myRecords());
    uint64_t saved = r.depth_limit;
    r.depth_limit = r.depth + 300;  // deeper than the ring: the start comes from the first records
    r.slow_depth = std::min<uint64_t>(r.depth_limit, DSCOPE_RECORDS_RING);
    auto op = Dispatcher::singleton().findSchemaOrThrow("dbg::recurse", "").typed<int64_t(const Tensor&)>();
    std::string want = "dispatch depth exceeded DSCOPE_MAX_DISPATCH_DEPTH=" + std::to_string(r.depth_limit) +
                       ": dbg::recurse at AutogradCPU (call) re-enters the dispatcher in a cycle of 1 dispatch(es), "
                       "repeated 300 times since depth 0";
    CHECK_THROWS_WITH_AS(op.call(cpuTensor()), doctest::Contains(want.c_str()), Error);
    r.depth_limit = saved;
    r.slow_depth = std::min<uint64_t>(saved, DSCOPE_RECORDS_RING);
    CHECK(r.depth == 0);
  }

  TEST_CASE("cycle finder: shortest period, start, repeats, gaps and no cycle") {
    auto c1 = cycleOf(chain("xyaaaaaaaaaa"));
    CHECK(c1.period == 1);
    CHECK(c1.start_depth == 2);
    CHECK(c1.repeats == 10);
    auto c2 = cycleOf(chain("xbcdbcdbcdbcd"));
    CHECK(c2.period == 3);
    CHECK(c2.start_depth == 1);
    CHECK(c2.repeats == 4);
    CHECK(cycleOf(chain("abcdefgh")).period == 0);
    CHECK(cycleOf(chain("")).period == 0);
    // A deep chain whose middle is gone: bottom records 0..3 and top records 96..99 only.
    auto deep = chain(std::string("xy") + std::string(98, 'a'));
    auto sparse = [&](uint64_t d) -> const dscope_dispatch_record* { return d < 4 || d >= 96 ? &deep[d] : nullptr; };
    auto c3 = debug::findDispatchCycle(100, sparse, 4);
    CHECK(c3.period == 1);
    CHECK(c3.start_depth == 2);
    CHECK(!c3.start_in_gap);
    CHECK(c3.repeats == 98);
    // The loop starts inside the gap: the bottom records do not repeat.
    auto late = chain(std::string("xyzw") + std::string(96, 'a'));
    auto c4 = debug::findDispatchCycle(100, [&](uint64_t d) -> const dscope_dispatch_record* {
      return d < 4 || d >= 96 ? &late[d] : nullptr;
    }, 4);
    CHECK(c4.period == 1);
    CHECK(c4.start_in_gap);
    CHECK(c4.start_depth == 96);
  }
}
