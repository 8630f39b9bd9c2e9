// libdscope_inspect in-process: a dscope_target whose reads copy this test's own memory. Every
// expected value comes from the scenario or from the runtime's own in-process API (dumpState,
// toString, findDispatchCycle, the TLS accessors), never from the library's output.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "dscope/DebugInterface.h"
#include "dscope/Library.h"
#include "dscope/debug/Layout.h"
#include "dscope/format/DispatchRecord.h"
#include "dscope/inspect.h"
#include "test_util.h"

using namespace dscope;
using K = DispatchKey;

namespace {

// The in-process target and its helpers (TestTarget, run, checkOneLineError, JsonChecker) are
// in test_util.h, shared with test_summary.cpp.
using testing::breakStop;
using testing::Breaks;
using testing::checkOneLineError;
using testing::JsonChecker;
using testing::Result;
using testing::run;
using testing::summaryOf;
using testing::taken;
using testing::usageOf;
using testing::keyNames;
using testing::TestTarget;

// ---------------------------------------------------------------- the scenario

Tensor cpuTensor() { return make_tensor(std::vector<int64_t>{2}, ScalarType::Float, Device(DeviceType::CPU)); }

using Unary = TypedOperatorHandle<Tensor(const Tensor&)>;
Unary typedOp(const char* name) { return Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Tensor(const Tensor&)>(); }

std::string captured;          // what a kernel saw when it ran dscope_inspect_run
std::string captured_json;
std::string trace_command = "dispatch-trace";
TestTarget* capture_target = nullptr;
int recursion_left = 0;
std::function<void()> at_bottom;  // run by recurseAutograd at the bottom of its chain, instead of the capture

// The kernels' definition lines: the library's symbolizer names each kernel with its own.
constexpr int kProbeCpuLine = __LINE__ + 1;
Tensor probeCpu(const Tensor& x) { return x; }
Tensor probeAutograd(DispatchKeySet ks, const Tensor& x) { return typedOp("insp::probe").redispatch(ks & after_autograd_keyset, x); }
Tensor nestAutograd(DispatchKeySet ks, const Tensor& x) { return typedOp("insp::nest").redispatch(ks & after_autograd_keyset, x); }
Tensor nestCpu(const Tensor& x) {
  captured = run(*capture_target, trace_command).text;
  captured_json = run(*capture_target, "dispatch-trace --json").text;
  return x;
}
Tensor outerAutograd(const Tensor& x) { return typedOp("insp::recurse").call(x); }
// The bug of samples/infinite_redispatch.cpp, stopped after a fixed depth: call() instead of redispatch().
constexpr int kRecurseAutogradLine = __LINE__ + 1;
Tensor recurseAutograd(const Tensor& x) {
  if (--recursion_left > 0) return typedOp("insp::recurse").call(x);
  if (at_bottom) {
    at_bottom();
    return x;
  }
  captured = run(*capture_target, trace_command).text;
  captured_json = run(*capture_target, "dispatch-trace --json").text;
  const auto& r = *debug::current_thread_records;
  auto cycle = debug::findDispatchCycle(r.depth, [&](uint64_t d) { return debug::recordAt(r, d); });
  captured += "\nRUNTIME period=" + std::to_string(cycle.period) + " start=" + std::to_string(cycle.start_depth) +
              " repeats=" + std::to_string(cycle.repeats) + " depth=" + std::to_string(r.depth) + "\n";
  return x;
}
// Two ops whose autograd kernels call each other: a cycle of 2 that is not a self re-entry.
Tensor pingAutograd(const Tensor& x) {
  if (--recursion_left > 0) return typedOp("insp::pong").call(x);
  captured = run(*capture_target, trace_command).text;
  return x;
}
constexpr int kPongAutogradLine = __LINE__ + 1;
Tensor pongAutograd(const Tensor& x) { return typedOp("insp::ping").call(x); }

// What op-table and dispatch-trace print for a kernel of this file, as GDB names it.
std::string kernelText(const std::string& name, int line) {
  return "(anonymous namespace)::" + name + "(dscope::Tensor const&) at " __FILE__ ":" + std::to_string(line);
}

// Registered once for the whole binary (operator entries outlive their libraries anyway).
void registerTestOps() {
  static Library* lib = [] {
    auto* l = new Library(Library::FRAGMENT, "insp", std::nullopt, "test_inspect.cpp", 7);
    l->def("probe(Tensor x) -> Tensor");
    l->impl("probe", dispatch(K::CPU, &probeCpu));
    l->impl("probe", dispatch(K::Autograd, &probeAutograd));
    l->impl("probe", dispatch(K::Meta, CppFunction::makeFallthrough()));
    l->def("nest(Tensor x) -> Tensor");
    l->impl("nest", dispatch(K::AutogradCPU, &nestAutograd));
    l->impl("nest", dispatch(K::CPU, &nestCpu));
    l->def("outer(Tensor x) -> Tensor");
    l->impl("outer", dispatch(K::AutogradCPU, &outerAutograd));
    l->def("recurse(Tensor x) -> Tensor");
    l->impl("recurse", dispatch(K::AutogradCPU, &recurseAutograd));
    l->def("ping(Tensor x) -> Tensor");
    l->impl("ping", dispatch(K::AutogradCPU, &pingAutograd));
    l->def("over.a(Tensor x) -> Tensor");
    l->def("over.b(Tensor x) -> Tensor");
    l->def("pong(Tensor x) -> Tensor");
    l->impl("pong", dispatch(K::AutogradCPU, &pongAutograd));
    return l;
  }();
  (void)lib;
}

TestTarget& liveTarget() {
  registerTestOps();
  static TestTarget t;
  if (!debug::current_thread_records) debug::registerCurrentThread();
  t.t.selected_tid = static_cast<int64_t>(::syscall(SYS_gettid));
  capture_target = &t;
  return t;
}

impl::OperatorEntry& entryOf(const std::string& full_name) {
  auto h = Dispatcher::singleton().findOp(OperatorName::parse(full_name));
  REQUIRE(h);
  return h->entry();
}

// A copy of the descriptor whose registry is one record block, the selected thread's and alive,
// holding what the test writes into it: records of insp::probe as the runtime pushes them.
struct FakeRecords {
  TestTarget t;
  struct dscope_debug_descriptor_t descriptor;
  dscope_thread_records block{};

  FakeRecords() {
    registerTestOps();
    std::memcpy(&descriptor, &dscope_debug_descriptor, sizeof descriptor);
    t.symbol_overrides["dscope_debug_descriptor"] = reinterpret_cast<uint64_t>(&descriptor);
    block.magic = DSCOPE_THREAD_RECORDS_MAGIC;
    block.tid = static_cast<int32_t>(t.t.selected_tid);
    block.state = DSCOPE_THREAD_ALIVE;
    descriptor.thread_records = &block;
    descriptor.thread_records_count = 1;
  }
  FakeRecords(const FakeRecords&) = delete;

  // A [call] of insp::probe with key set ks: its slot, and the kernel its table holds there.
  static dscope_dispatch_record probe(DispatchKeySet ks) {
    dscope_dispatch_record rec{};
    rec.op = &entryOf("insp::probe");
    rec.keyset = ks.raw_repr();
    rec.slot = static_cast<uint16_t>(ks.getDispatchTableIndexForDispatchKeySet());
    rec.kernel = &entryOf("insp::probe").lookupSlot(rec.slot);
    rec.kind = DSCOPE_RECORD_CALL;
    return rec;
  }
};

std::vector<std::string> lines(const std::string& s) { return dscope::testing::splitLines(s); }
bool hasLine(const std::string& text, const std::string& line) {
  for (const auto& l : lines(text))
    if (l == line) return true;
  return false;
}

}  // namespace

TEST_SUITE("inspect") {
  TEST_CASE("op-table: _dispatch_dump and _dispatch_dump_table byte for byte as the runtime prints them") {
    auto& t = liveTarget();
    for (const std::string op : {"aten::mm", "aten::add.Tensor", "insp::probe"}) {
      CAPTURE(op);
      const auto& e = entryOf(op);
      Result registered = run(t, "op-table " + op + " --registered");
      Result computed = run(t, "op-table " + op + " --computed");
      REQUIRE(!registered.error);
      REQUIRE(!computed.error);
      CHECK(registered.text == e.dumpState());
      CHECK(computed.text == e.dumpComputedTable());
      // The default view holds both dumps verbatim, under headers, then the kernels.
      Result both = run(t, "op-table " + op);
      CHECK(both.text.find("\n" + e.dumpState()) != std::string::npos);
      CHECK(both.text.find("\n" + e.dumpComputedTable()) != std::string::npos);
      Result json = run(t, "op-table " + op + " --json");
      CHECK(JsonChecker::valid(json.text));
      // --registered / --computed keep their half in JSON too.
      for (const char* half : {" --registered", " --computed"}) {
        CAPTURE(half);
        const std::string part = run(t, "op-table " + op + half + " --json").text;
        CHECK(JsonChecker::valid(part));
        const bool reg = std::string(half) == " --registered";
        CHECK((part.find("\"registered\":[") != std::string::npos) == reg);
        CHECK((part.find("\"dispatch_dump\":") != std::string::npos) == reg);
        CHECK((part.find("\"computed\":[") != std::string::npos) == !reg);
        CHECK((part.find("\"dispatch_dump_table\":") != std::string::npos) == !reg);
        CHECK(json.text.find(reg ? "\"registered\":[" : "\"computed\":[") != std::string::npos);
      }
    }
    // The test op's fallthrough and its kernels' symbols.
    CHECK(entryOf("insp::probe").dumpState().find("Meta: registered at test_inspect.cpp:7 :: (none) [ fallthrough boxed ]") !=
          std::string::npos);
    Result probe = run(t, "op-table insp::probe");
    CHECK(hasLine(probe.text, "CPU: " + kernelText("probeCpu", kProbeCpuLine)));
    CHECK(probe.text.find("== kernels of the computed table (key: symbol)\n") != std::string::npos);
    // A base name that names exactly one operator is enough (aten::add has one overload here).
    size_t add_overloads = 0;
    for (const auto& n : Dispatcher::singleton().getAllOpNames()) add_overloads += n.rfind("aten::add.", 0) == 0 || n == "aten::add";
    REQUIRE(add_overloads == 1);
    CHECK(run(t, "op-table aten::add --computed").text == entryOf("aten::add.Tensor").dumpComputedTable());
  }

  TEST_CASE("op-table --key: one entry - why it resolved that way - the kernel's symbol") {
    auto& t = liveTarget();
    Result cpu = run(t, "op-table insp::probe --key CPU");
    REQUIRE(!cpu.error);
    CHECK(hasLine(cpu.text, "insp::probe at CPU (dispatch-table slot " + std::to_string(getDispatchTableIndexForDispatchKey(K::CPU)) + "):"));
    CHECK(hasLine(cpu.text, "  entry:  CPU: registered at test_inspect.cpp:7 [kernel]"));
    CHECK(hasLine(cpu.text, "  why:    a kernel is registered at CPU itself"));
    CHECK(hasLine(cpu.text, "  symbol: " + kernelText("probeCpu", kProbeCpuLine)));
    Result ag = run(t, "op-table insp::probe --key AutogradCUDA");
    CHECK(hasLine(ag.text, "  entry:  AutogradCUDA: registered at test_inspect.cpp:7 [autograd kernel]"));
    CHECK(hasLine(ag.text, "  kernel: registered at key Autograd, registered at test_inspect.cpp:7"));
    Result meta = run(t, "op-table insp::probe --key Meta");
    CHECK(hasLine(meta.text, "  entry:  Meta: fallthrough registered at test_inspect.cpp:7 [kernel]"));
    CHECK(meta.text.find("  note:   a fallthrough") != std::string::npos);
    Result missing = run(t, "op-table insp::probe --key XLA");
    CHECK(hasLine(missing.text, "  entry:  XLA: (missing)"));
    CHECK(missing.text.find("Could not run 'insp::probe' with arguments from the 'XLA' backend") != std::string::npos);
    CHECK(JsonChecker::valid(run(t, "op-table insp::probe --key CPU --json").text));
    checkOneLineError(run(t, "op-table insp::probe --key Autograd"));  // alias keys are not table entries
    checkOneLineError(run(t, "op-table insp::probe --key Bogus"));
  }

  TEST_CASE("op-table --list and --missing - and operator completion") {
    auto& t = liveTarget();
    // Every entry the runtime keeps (it never frees one, even when other tests in this process
    // removed all of an operator's registrations): what the operator list holds.
    const auto all = Dispatcher::singleton().operators();
    Result list = run(t, "op-table --list insp::p");
    CHECK(list.text == "insp::probe\ninsp::ping\ninsp::pong\n3 of " + std::to_string(all.size()) + " operators match 'insp::p'\n");
    Result everything = run(t, "op-table --list");
    CHECK(lines(everything.text).size() == all.size() + 1);
    CHECK(lines(everything.text).back() == std::to_string(all.size()) + " operators registered");
    CHECK(JsonChecker::valid(run(t, "op-table --list mm --json").text));
    // Operators without a valid computed entry at XLA, by the runtime's own predicate.
    std::string want;
    size_t n = 0;
    for (auto* e : Dispatcher::singleton().operators()) {
      if (e->hasComputedKernelForDispatchKey(K::XLA)) continue;
      want += std::string(e->name_cstr()) + "\n";
      ++n;
    }
    Result missing = run(t, "op-table --missing XLA");
    CHECK(missing.text.rfind(want, 0) == 0);
    CHECK(lines(missing.text).back().rfind(std::to_string(n) + " of " + std::to_string(all.size()) + " operators have no kernel for XLA", 0) == 0);
    checkOneLineError(run(t, "op-table --missing Autograd"));
    char* completions = dscope_inspect_complete_ops(t.get(), "insp::p", 2);
    CHECK(std::string(completions) == "insp::probe\ninsp::ping\n");
    dscope_inspect_free(completions);
    // Where the operator goes, the operators of the process (what each adds to the word typed).
    int completes = -1;
    completions = dscope_inspect_complete(t.get(), "op-table", "--key CPU insp::p", &completes);
    CHECK(completes == DSCOPE_COMPLETES_NAMES);
    CHECK(std::string(completions).rfind("robe\ning\n", 0) == 0);
    dscope_inspect_free(completions);
    completions = dscope_inspect_complete(t.get(), "op-table", "insp::probe insp::p", &completes);
    CHECK(std::string(completions).empty());  // one operator: not after it
    dscope_inspect_free(completions);
  }

  TEST_CASE("keyset: PyTorch's repr - raw value and highest key - with no process at all") {
    for (uint64_t raw : {0x12800010001ull, 0x0ull, 0x1ull, 0x2000010001ull, 0x3ff0000000000ull, 0x8000000000000000ull,
                         0xffffffffffffffffull, 0x400000ull}) {
      CAPTURE(raw);
      auto ks = DispatchKeySet::from_raw_repr(raw);
      Result r = run(nullptr, "keyset " + std::to_string(raw));
      REQUIRE(!r.error);
      auto ls = lines(r.text);
      REQUIRE(ls.size() == 4);
      CHECK(ls[0] == toString(ks));
      CHECK(ls[3].rfind("key table: DispatchScope's own (PyTorch 2.11's keys): no process to read; ", 0) == 0);
      char hexraw[32];
      std::snprintf(hexraw, sizeof hexraw, "raw: 0x%llx", static_cast<unsigned long long>(raw));
      CHECK(ls[1] == hexraw);
      std::string highest = std::string("highest key: ") + toString(ks.highestPriorityTypeId());
      CHECK(ls[2].rfind(highest + " (", 0) == 0);
      if (!(raw >> 63)) CHECK(ls[2] == highest + " (dispatch-table slot " + std::to_string(ks.getDispatchTableIndexForDispatchKeySet()) + ")");
      CHECK(run(nullptr, "keyset " + std::string(hexraw + 5)).text == r.text);  // hex and decimal agree
      CHECK(JsonChecker::valid(run(nullptr, "keyset " + std::to_string(raw) + " --json --verbose").text));
    }
    CHECK(run(nullptr, "keyset 0x12800010001").text ==
          "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)\nraw: 0x12800010001\n"
          "highest key: AutocastCPU (dispatch-table slot 115)\n"  // the highest functionality bit wins
          "key table: DispatchScope's own (PyTorch 2.11's keys): no process to read; `keyset RAW --profile FILE` "
          "decodes with the table of the PyTorch build a layout profile describes\n");
  }

  TEST_CASE("keyset: every PyTorch 2.11 vector's repr") {
    // shared/data/keyset-vectors.json, read as test_keyset.cpp does: raw then repr, one per line.
    std::string text = dscope::testing::readSharedFile("data/keyset-vectors.json");
    int checked = 0, failures = 0;
    uint64_t raw = 0;
    for (const auto& l : lines(text)) {
      if (auto p = l.find("\"raw\":"); p != std::string::npos) raw = std::stoull(l.substr(p + 6));
      if (auto p = l.find("\"repr\":"); p != std::string::npos) {
        auto q1 = l.find('"', p + 7), q2 = l.rfind('"');
        std::string repr = l.substr(q1 + 1, q2 - q1 - 1);
        std::string first = lines(run(nullptr, "keyset " + std::to_string(raw)).text).at(0);
        if (first != repr && ++failures < 5) FAIL_CHECK("raw " << raw << ": " << first << " != " << repr);
        ++checked;
      }
    }
    CHECK(checked == 932);
    CHECK(failures == 0);
  }

  TEST_CASE("keyset --verbose: functionality and backend bits by name") {
    Result r = run(nullptr, "keyset 0x12800010001 --verbose");
    // CPU is Dense + CPUBit: one bit of each kind; bit 15 + v is functionality key v.
    std::string want = "functionality bits:\n";
    for (K f : {K::Dense, K::ADInplaceOrView, K::AutogradFunctionality, K::AutocastCPU})
      want += "  bit " + std::to_string(15 + static_cast<int>(f)) + ": " + toString(f) + "\n";
    want += "backend bits:\n  bit 0: " + std::string(toString(BackendComponent::CPUBit)) + "\n";
    CHECK(r.text.find(want) != std::string::npos);
    CHECK(run(nullptr, "keyset 0 --verbose").text.find("functionality bits: none\nbackend bits: none\n") != std::string::npos);
  }

  TEST_CASE("keyset --tls: this thread's sets - what differs from the defaults - --explain") {
    auto& t = liveTarget();
    const std::string tid = std::to_string(::syscall(SYS_gettid));
    Result plain = run(t, "keyset --tls");
    REQUIRE(!plain.error);
    CHECK(hasLine(plain.text, "thread tid " + tid + ":"));
    CHECK(hasLine(plain.text, "  (both are the defaults: nothing included or excluded by hand)"));
    {
      impl::ForceDispatchKeyGuard restore_all;  // guards leave backend bits behind (as in c10): restore exactly
      impl::ExcludeDispatchKeyGuard leak(K::AutogradCPU);  // tls_leak's state
      Result r = run(t, "keyset --tls");
      auto raw = [](DispatchKeySet ks) {
        char b[32];
        std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(ks.raw_repr()));
        return std::string(b);
      };
      CHECK(hasLine(r.text, "  included: " + toString(tls_local_include_set()) + " (raw " + raw(tls_local_include_set()) + ")"));
      CHECK(hasLine(r.text, "  excluded: " + toString(tls_local_exclude_set()) + " (raw " + raw(tls_local_exclude_set()) + ")"));
      CHECK(hasLine(r.text, "  excluded beyond the default: AutogradCPU"));
      // --explain: (ks | included) - excluded, as the runtime's extractor computes it (no fallthrough mask).
      auto ks = DispatchKeySet(K::CPU) | DispatchKeySet(K::AutogradCPU);
      auto effective = (ks | tls_local_include_set()) - tls_local_exclude_set();
      Result e = run(t, "keyset --tls --explain " + raw(ks));
      CHECK(hasLine(e.text, "  ks              = " + toString(ks) + " (raw " + raw(ks) + ")"));
      CHECK(hasLine(e.text, "  key chosen: " + std::string(toString(effective.highestPriorityTypeId())) +
                                " (dispatch-table slot " + std::to_string(effective.getDispatchTableIndexForDispatchKeySet()) + ")"));
      CHECK(e.text.find("without the operator's fallthrough mask") != std::string::npos);
      CHECK(JsonChecker::valid(run(t, "keyset --tls --json --explain 0x10001").text));
    }
    {
      impl::ForceDispatchKeyGuard restore_all;
      impl::IncludeDispatchKeyGuard inc(K::AutocastCPU);
      impl::tls_set_dispatch_key_excluded(K::AutocastCPU, false);
      Result r = run(t, "keyset --tls");
      CHECK(hasLine(r.text, "  included beyond the default: AutocastCPU"));
      CHECK(hasLine(r.text, "  not excluded although excluded by default: AutocastCPU"));
      impl::tls_set_dispatch_key_excluded(K::AutocastCPU, true);
    }
    CHECK(run(t, "keyset --tls").text == plain.text);
    {
      // What a guard leaves behind: the backend bit of the key it excluded. Harmless, and said so.
      impl::ForceDispatchKeyGuard restore_all;
      { impl::ExcludeDispatchKeyGuard scoped(K::AutogradCPU); }
      REQUIRE(tls_local_exclude_set().raw_repr() == (default_excluded_set.raw_repr() | 1));
      Result r = run(t, "keyset --tls");
      CHECK(r.text.find("excluded beyond the default") == std::string::npos);
      CHECK(hasLine(r.text, "  excluded also holds backend bits: CPUBit (harmless: excluding never removes backend bits; "
                            "guards leave them behind, as in c10)"));
    }
    checkOneLineError(run(t, "keyset --tls --thread 999999999"));
    // Each misuse of --tls names itself.
    CHECK(run(t, "keyset --tls 0x1").text.rfind("dscope: --tls takes no key set (--explain EXPR explains one); usage: ", 0) == 0);
    CHECK(run(t, "keyset --tls --verbose").text.rfind("dscope: --verbose is for a key set, not --tls; usage: ", 0) == 0);
  }

  TEST_CASE("dispatch-trace inside a nested dispatch: entry records - kinds - keys") {
    auto& t = liveTarget();
    captured.clear();
    typedOp("insp::nest").call(cpuTensor());
    CHECK(debug::current_thread_records->depth == 0);
    const std::string tid = std::to_string(::syscall(SYS_gettid));
    CHECK(captured == "thread tid " + tid + " (alive): dispatch depth 2\n"
                      "    #0 [call] op=[insp::nest], key=[AutogradCPU]\n"
                      "    #1 [redispatch] op=[insp::nest], key=[CPU]  (innermost)\n");
    CHECK(JsonChecker::valid(captured_json));
    CHECK(captured_json.find(R"("kind":"redispatch","op":"insp::nest","key":"CPU","keyset":"0x10001","slot":1)") != std::string::npos);
    // Outside any dispatch.
    CHECK(run(t, "dispatch-trace").text == "thread tid " + tid + " (alive): no dispatch in progress\n");
    Result all = run(t, "dispatch-trace --all");
    CHECK(all.text.find("thread tid " + tid + " (alive): no dispatch in progress\n") != std::string::npos);
  }

  TEST_CASE("dispatch-trace on a deep self re-entry: the folded cycle and the diagnosis") {
    auto& t = liveTarget();
    captured.clear();
    recursion_left = 400;  // deeper than first + ring: the middle of the chain is overwritten
    typedOp("insp::outer").call(cpuTensor());
    const auto ls = lines(captured);
    // The runtime's own view of the chain at the moment of the capture (last line).
    CHECK(ls.back() == "RUNTIME period=1 start=1 repeats=400 depth=401");
    CHECK(hasLine(captured, "  entry (before the loop):"));
    CHECK(hasLine(captured, "    #0 [call] op=[insp::outer], key=[AutogradCPU]"));
    CHECK(hasLine(captured, "  loop: a cycle of 1 dispatch from depth 1 to the top:"));
    CHECK(hasLine(captured, "    [call] op=[insp::recurse], key=[AutogradCPU] ... repeated 400 times"));
    CHECK(hasLine(captured, "    #400 [call] op=[insp::recurse], key=[AutogradCPU]"));
    CHECK(captured.find("  diagnosis: insp::recurse's AutogradCPU kernel (" + kernelText("recurseAutograd", kRecurseAutogradLine) +
                        ", registered at test_inspect.cpp:7) calls insp::recurse again with op.call(...)") !=
          std::string::npos);
    CHECK(captured.find("  fix: in that kernel, continue below autograd: op.redispatch(ks & after_autograd_keyset, ...)") !=
          std::string::npos);
    CHECK(JsonChecker::valid(captured_json));
    CHECK(captured_json.find(R"("cycle":{"period":1,"start_depth":1,"repeats":400,"start_in_gap":false)") != std::string::npos);
    CHECK(debug::current_thread_records->depth == 0);
  }

  TEST_CASE("dispatch-trace --full over a chain deeper than the records - and a cycle of two operators") {
    auto& t = liveTarget();
    // --full from inside the deep chain: every record the block still holds, the gap named.
    trace_command = "dispatch-trace --full";
    recursion_left = 400;
    typedOp("insp::outer").call(cpuTensor());
    trace_command = "dispatch-trace";
    const uint64_t depth = 401, first_ring = depth - DSCOPE_RECORDS_RING;
    CHECK(hasLine(captured, "    #0 [call] op=[insp::outer], key=[AutogradCPU]"));
    CHECK(hasLine(captured, "    #63 [call] op=[insp::recurse], key=[AutogradCPU]"));
    CHECK(hasLine(captured, "    ... depths 64 to " + std::to_string(first_ring - 1) +
                                " overwritten (the block keeps the first 64 and the last 256 records)"));
    CHECK(hasLine(captured, "    #" + std::to_string(first_ring) + " [call] op=[insp::recurse], key=[AutogradCPU]"));
    CHECK(hasLine(captured, "    #400 [call] op=[insp::recurse], key=[AutogradCPU]  (innermost)"));
    CHECK(captured.find("diagnosis") == std::string::npos);
    CHECK(lines(captured).size() == 1 + 64 + 1 + 256 + 2);  // header, first, gap, ring, blank + RUNTIME line
    captured.clear();
    recursion_left = 5;  // ping -> pong -> ping ...: a period of 2
    typedOp("insp::ping").call(cpuTensor());
    CHECK(hasLine(captured, "  loop: a cycle of 2 dispatches from depth 0 to the top:"));
    CHECK(hasLine(captured, "    [call] op=[insp::ping], key=[AutogradCPU]"));
    CHECK(hasLine(captured, "    [call] op=[insp::pong], key=[AutogradCPU]"));
    CHECK(captured.find("  diagnosis: insp::pong's AutogradCPU kernel (" + kernelText("pongAutograd", kPongAutogradLine) +
                        ", registered at test_inspect.cpp:7) dispatches insp::ping at AutogradCPU ([call])") != std::string::npos);
  }

  TEST_CASE("dispatch-summary: the crash signature of each cause, from inside the dispatch") {
    auto& t = liveTarget();
    const std::string tid = std::to_string(::syscall(SYS_gettid));
    trace_command = "dispatch-summary";
    // A self re-entry, from its innermost dispatch.
    recursion_left = 300;
    typedOp("insp::outer").call(cpuTensor());
    CHECK(hasLine(captured, "* thread tid " + tid + " (alive): dispatch depth 301, innermost [call] op=[insp::recurse], key=[AutogradCPU]"));
    CHECK(hasLine(captured, "    loop: a cycle of 1 dispatch, 300 repetitions; it re-enters insp::recurse at AutogradCPU (kernel recurseAutograd)"));
    CHECK(hasLine(captured, "signature: infinite-redispatch insp::recurse AutogradCPU kernel=recurseAutograd"));
    // ping and pong call each other: the signature names the smaller operator, wherever the chain stops.
    for (int depth : {6, 7}) {
      captured.clear();
      recursion_left = depth;
      typedOp("insp::ping").call(cpuTensor());
      CHECK(hasLine(captured, "signature: infinite-redispatch insp::ping AutogradCPU kernel=pingAutograd"));
    }
    // Inside a kernel registered for the key.
    captured.clear();
    typedOp("insp::nest").call(cpuTensor());
    // (A redispatch below autograd leaves the thread-local sets alone.)
    CHECK(hasLine(captured, "* thread tid " + tid + " (alive): dispatch depth 2, innermost [redispatch] op=[insp::nest], key=[CPU]"));
    CHECK(hasLine(captured, "signature: in-kernel insp::nest CPU"));
    trace_command = "dispatch-trace";
    // Outside any dispatch: a guard left behind, then nothing.
    {
      impl::ForceDispatchKeyGuard restore_all;
      impl::ExcludeDispatchKeyGuard leak(K::AutogradCPU);
      Result r = run(t, "dispatch-summary");
      CHECK(hasLine(r.text, "* thread tid " + tid + " (alive): no dispatch in progress; TLS excluded +AutogradCPU"));
      CHECK(hasLine(r.text, "signature: tls-not-restored excluded+AutogradCPU"));
      Result j = run(t, "dispatch-summary --json");
      CHECK(JsonChecker::valid(j.text));
      CHECK(j.text.find(R"("signature":{"line":"tls-not-restored excluded+AutogradCPU","cause":"tls-not-restored","parts":["excluded+AutogradCPU"]})") !=
            std::string::npos);
    }
    CHECK(hasLine(run(t, "dispatch-summary").text, "signature: no-dispatch"));
    const std::string all = run(t, "dispatch-summary --all").text;
    CHECK(all == "dscope: unknown option --all; usage: dispatch-summary [--json]\n");
  }

  TEST_CASE("usage: each command's usage line is the syntax block of its section in the user guide") {
    std::ifstream in(std::string(DSCOPE_SOURCE_DIR) + "/docs/USER-GUIDE.md");
    REQUIRE(in);
    const std::string guide((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const std::string command : {"keyset", "op-table", "dispatch-trace", "dispatch-summary", "dispatch-break"}) {
      CAPTURE(command);
      // "### 4.N `command`", then at once a ``` block of one alternative per line.
      const std::string heading = "`" + command + "`\n\n```\n";
      const size_t open = guide.find(heading, guide.find("### 4."));
      REQUIRE(open != std::string::npos);
      const size_t first = open + heading.size(), close = guide.find("\n```", first);
      REQUIRE(close != std::string::npos);
      std::string joined = guide.substr(first, close - first);
      for (size_t nl; (nl = joined.find('\n')) != std::string::npos;) joined.replace(nl, 1, " | ");
      Result usage = usageOf(command);
      CHECK(!usage.error);
      CHECK(usage.text == joined + "\n");
      // The same line ends every usage error of the command (dispatch-break's command line is
      // read by dscope_breaks_command).
      Breaks breaks;
      Result error = command == "dispatch-break" ? breaks.command(nullptr, "--bogus") : run(nullptr, command + " --bogus");
      CHECK(error.text == "dscope: unknown option --bogus; usage: " + joined + "\n");
    }
    checkOneLineError(usageOf(""));
    checkOneLineError(usageOf("dispatch-break-parse"));  // no user command
  }

  TEST_CASE("dscope_inspect_complete_keys: the runtime keys that --key and --missing take, for completion") {
    const std::vector<std::string> all = lines(keyNames(""));
    for (const std::string& name : all) {
      CAPTURE(name);
      auto key = parseDispatchKey(name);
      REQUIRE(key);
      CHECK(!isAliasDispatchKey(*key));
    }
    auto has = [&](const char* name) { return std::find(all.begin(), all.end(), name) != all.end(); };
    for (const char* runtime : {"CPU", "CUDA", "Meta", "PrivateUse1", "BackendSelect", "ADInplaceOrView", "AutogradCPU",
                                "AutogradOther", "AutocastCUDA", "QuantizedCPU", "SparseCsrCUDA", "PythonDispatcher"})
      CHECK_MESSAGE(has(runtime), runtime);
    // Functionality-only building blocks, alias keys and the sentinels are no runtime keys.
    for (const char* other : {"Dense", "AutogradFunctionality", "Autograd", "CompositeImplicitAutograd", "Undefined"})
      CHECK_MESSAGE(!has(other), other);
    CHECK(keyNames("AutogradC") == "AutogradCPU\nAutogradCUDA\n");
    CHECK(keyNames("Nope").empty());
  }

  TEST_CASE("dispatch-break: the command line, checked before a breakpoint is kept") {
    Breaks breaks;
    const std::string usage =
        "; usage: dispatch-break OP [--key K] | dispatch-break --list | dispatch-break --delete N | dispatch-break --why [--json]\n";
    for (auto [line, problem] : std::vector<std::pair<std::string, std::string>>{
             {"", "dispatch-break needs an operator name"},
             {"aten::mm aten::add", "dispatch-break takes one operator name"},
             {"aten::mm --key", "--key needs a value"},
             {"aten::mm --key CPU --key CUDA", "--key is given twice"},
             {"--list extra", "--list takes nothing else"},
             {"--list --list", "--list is given twice"},
             {"--list --delete 1", "--list takes nothing else"},
             {"--delete 1 aten::mm", "--delete takes only a breakpoint number"},
             {"aten::mm --bogus", "unknown option --bogus"},
             {"--why aten::mm", "--why takes only --json"},
             {"aten::mm --json", "--json goes with --why"}}) {
      Result r = breaks.command(nullptr, line);
      checkOneLineError(r);
      CHECK(r.text == "dscope: " + problem + usage);
    }
    CHECK(breaks.command(nullptr, "--delete abc").text == "dscope: --delete needs a breakpoint number, got 'abc'\n");
    CHECK(breaks.command(nullptr, "--delete -1").text == "dscope: --delete needs a breakpoint number, got '-1'\n");
    // Past 64 bits is out of range like past the option's maximum; a long value is cut when echoed.
    CHECK(breaks.command(nullptr, "--delete 99999999999999999999999").text ==
          "dscope: --delete needs a breakpoint number, got '99999999999999999999999'\n");
    CHECK(breaks.command(nullptr, "--delete " + std::string(100, '7')).text ==
          "dscope: --delete needs a breakpoint number, got '" + std::string(61, '7') + "...'\n");
    for (const char* bad : {"::", "aten::", "::mm", "aten::mm.", "aten::.x", "'aten::m m'", "aten::mm --key Bogus",
                            "aten::mm --key Autograd", "aten::mm;x", "aten::mm#1", "a::b::c", "1ns::mm", "aten::mm.a.b",
                            "aten::1mm", "'aten::mm\nfoo'", "aten:mm"}) {
      CAPTURE(bad);
      checkOneLineError(breaks.command(nullptr, bad));
    }
    CHECK(breaks.count() == 0);  // nothing refused was kept
    CHECK(breaks.command(nullptr, "--list").text == "No dispatch breakpoints.\n");
    int number = 0;
    for (const char* good : {"aten::__and__.Tensor", "aten::_foreach_add_.List", "my_ns2::op.1", "aten::pow.Scalar_out"})
      CHECK(breaks.command(nullptr, good).text == "Dispatch breakpoint " + std::to_string(++number) + " (" + good +
                                                      ") pending: it arms when the runtime is loaded.\n");
    CHECK(breaks.command(nullptr, "--key AutogradCPU 'aten::add'").text ==
          "Dispatch breakpoint 5 (aten::add) pending: it arms when the runtime is loaded.\n");
    CHECK(breaks.command(nullptr, "--list").text ==
          "1  aten::__and__.Tensor\n2  aten::_foreach_add_.List\n3  my_ns2::op.1\n4  aten::pow.Scalar_out\n"
          "5  aten::add at AutogradCPU\n");
    CHECK(breaks.command(nullptr, "--delete 0x2").text.empty());
    CHECK(breaks.command(nullptr, "--delete 2").text == "dscope: no dispatch breakpoint 2\n");
    CHECK(breaks.count() == 4);
    // Numbers are never reused.
    CHECK(breaks.command(nullptr, "aten::mm").text.rfind("Dispatch breakpoint 6 ", 0) == 0);
  }

  TEST_CASE("dispatch-break: armed in the runtime's filter, pending without one, refused in a core") {
    auto& t = liveTarget();
    auto& d = dscope_debug_descriptor;
    debug::clearBreaks();
    // The front end's breakpoint on the hook is asked for before any entry is written.
    struct Placed {
      int calls = 0;
      uint32_t count_then = 99;
    } static placed;
    placed = {};
    t.t.place_break_hook = [](void*) {
      ++placed.calls;
      placed.count_then = dscope_debug_descriptor.break_count;
      return 0;
    };
    Breaks breaks;
    Result armed = breaks.command(t, "insp::probe --key CPU");
    CHECK(armed.text == "Dispatch breakpoint 1: insp::probe at CPU\n");
    CHECK(placed.calls == 1);
    CHECK(placed.count_then == 0);
    REQUIRE(d.break_count == 1);
    CHECK(d.breaks[0].name_hash == dscope_fnv1a64("insp::probe"));
    CHECK(d.breaks[0].key == static_cast<uint16_t>(K::CPU));
    uint32_t hits = d.break_hits;
    {
      AutoDispatchBelowAutograd below;
      typedOp("insp::probe").call(cpuTensor());  // the runtime's own filter check fires
    }
    CHECK(d.break_hits == hits + 1);
    // Two breakpoints on one operator and key share one filter entry.
    CHECK(breaks.command(t, "insp::probe --key CPU").text == "Dispatch breakpoint 2: insp::probe at CPU\n");
    CHECK(d.break_count == 1);
    // A typo arms an entry that never matches: said.
    CHECK(breaks.command(t, "insp::nope").text ==
          "Dispatch breakpoint 3: insp::nope\n"
          "dispatch-break: no operator named insp::nope is registered yet; the entry matches once one is\n");
    CHECK(d.break_count == 2);
    for (int i = 4; i <= DSCOPE_MAX_BREAKS; ++i) REQUIRE(!breaks.command(t, "insp::x" + std::to_string(i)).error);
    Result full = breaks.command(t, "insp::one_too_many");
    checkOneLineError(full);
    CHECK(full.text.find(std::to_string(DSCOPE_MAX_BREAKS) + " dispatch breakpoints are set") != std::string::npos);
    CHECK(full.text.find("dispatch-break --delete N") != std::string::npos);
    CHECK(breaks.count() == DSCOPE_MAX_BREAKS);
    CHECK(d.break_count == DSCOPE_MAX_BREAKS - 1);  // 1 and 2 share one
    // --delete writes the rest again; the last one gone clears the filter and its bloom word.
    CHECK(breaks.command(t, "--delete 3").text.empty());
    CHECK(d.break_count == DSCOPE_MAX_BREAKS - 2);
    for (int i = 1; i <= DSCOPE_MAX_BREAKS; ++i) breaks.command(t, "--delete " + std::to_string(i));
    CHECK(breaks.count() == 0);
    CHECK(d.break_count == 0);
    CHECK(d.break_bloom == 0);
    // A target that cannot be written keeps nothing it could not arm.
    t.writable = false;
    checkOneLineError(breaks.command(t, "aten::mm"));
    t.writable = true;
    CHECK(breaks.count() == 0);
    // Pending until the runtime is there; dscope_breaks_arm then writes it once per process.
    TestTarget unloaded;
    unloaded.t.find_symbol = [](void*, const char*, uint64_t*) { return 1; };
    CHECK(breaks.command(unloaded, "insp::probe").text ==
          "Dispatch breakpoint 17 (insp::probe) pending: it arms when the runtime is loaded.\n");
    CHECK(breaks.arm(unloaded).text.empty());  // still nothing to arm
    CHECK(d.break_count == 0);
    CHECK(breaks.arm(t).text.empty());
    CHECK(d.break_count == 1);
    debug::clearBreaks();  // what the table wrote into this process is not written twice
    CHECK(breaks.arm(t).text.empty());
    CHECK(d.break_count == 0);
    // A core never loads anything: no breakpoint waits there.
    TestTarget core;
    core.t.find_symbol = [](void*, const char*, uint64_t*) { return 1; };
    core.t.is_core = 1;
    Breaks in_core;
    checkOneLineError(in_core.command(core, "insp::probe"));
    CHECK(in_core.count() == 0);
    t.t.place_break_hook = nullptr;
    // A stop: the hook's arguments as a debugger reads them at the breakpoint.
    CHECK(testing::breakStopLine(t.get(), &entryOf("insp::probe"), 0x10001, static_cast<uint64_t>(K::CPU)) ==
          "dispatch-break: insp::probe at CPU (keyset DispatchKeySet(CPU))\n");
    {
      // The same stop from the registers a front end reads by the library's names, in its order
      // (pc, sp, then the argument registers: test_front_ends.cpp).
      std::vector<uint64_t> values{reinterpret_cast<uint64_t>(&dscope_debug_break_hook), 0,
                                   reinterpret_cast<uint64_t>(&entryOf("insp::probe")), 0x10001,
                                   static_cast<uint64_t>(K::CPU), 0, 0, 0};
      dscope_breaks* table = dscope_breaks_new();
      int is_error = -1, action = -1;
      char* out = dscope_breaks_hit_registers(table, t.get(), 0, values.data(), values.size(), &action, &is_error);
      const Result r = taken(out, is_error);
      CHECK(action == DSCOPE_HIT_STOP);
      CHECK(r.text.substr(0, r.text.find('\n') + 1) == "dispatch-break: insp::probe at CPU (keyset DispatchKeySet(CPU))\n");
      // A register short: one line, and the program goes on.
      out = dscope_breaks_hit_registers(table, t.get(), 0, values.data(), values.size() - 1, &action, &is_error);
      checkOneLineError(taken(out, is_error));
      CHECK(action == DSCOPE_HIT_CONTINUE);
      dscope_breaks_free(table);
    }
    checkOneLineError(breakStop(t.get(), reinterpret_cast<const void*>(0x10), 0x10001, 50));  // not an operator
    checkOneLineError(breakStop(t.get(), &entryOf("insp::probe"), 0x10001, 0xFFFF));  // no such key
  }

  TEST_CASE("bad input: one line each - never a crash") {
    auto& t = liveTarget();
    Result unknown = run(t, "op-table aten::mmm");
    checkOneLineError(unknown);
    CHECK(unknown.text.rfind("dscope: unknown operator 'aten::mmm'; did you mean aten::mm", 0) == 0);
    Result ambiguous = run(t, "op-table insp::over");  // a base name of two overloads
    checkOneLineError(ambiguous);
    CHECK(ambiguous.text.find("insp::over.a, insp::over.b") != std::string::npos);
    Result garbage = run(nullptr, "keyset 12abc");
    checkOneLineError(garbage);
    CHECK(garbage.text.rfind("dscope: not a number: 12abc", 0) == 0);
    for (const char* bad : {"keyset 0x", "keyset 99999999999999999999999", "keyset -1", "keyset 0xfffffffffffffffff"})
      checkOneLineError(run(nullptr, bad));
    checkOneLineError(run(nullptr, "op-table aten::mm"));  // no process
    checkOneLineError(run(t, "frobnicate"));
    checkOneLineError(run(t, ""));
    checkOneLineError(run(t, "keyset 1 --bogus"));
    CHECK(run(t, "keyset 1 --bogus").text.find("usage: keyset") != std::string::npos);
    checkOneLineError(run(t, "dispatch-trace --thread 1 --all"));
    checkOneLineError(run(t, "op-table 'unterminated"));
    Result null_line = run(t.get(), std::string());
    checkOneLineError(null_line);
    int is_error = 0;
    char* p = dscope_inspect_run(t.get(), nullptr, &is_error);
    CHECK(is_error == 1);
    dscope_inspect_free(p);
  }

  TEST_CASE("a target whose reads always fail") {
    TestTarget t;
    t.reads_fail = true;
    Breaks breaks;
    for (const char* cmd : {"op-table aten::mm", "op-table --list", "keyset --tls", "dispatch-trace --all", "dispatch-break aten::mm"}) {
      CAPTURE(cmd);
      Result r = std::string(cmd).rfind("dispatch-break ", 0) == 0 ? breaks.command(t, cmd + 15) : run(t, cmd);
      checkOneLineError(r);
      char want[128];
      std::snprintf(want, sizeof want, "dscope: cannot read memory at %p (dscope_debug_descriptor)", static_cast<void*>(&dscope_debug_descriptor));
      CHECK(r.text == std::string(want) + "\n");
    }
    CHECK(!run(t, "keyset 0x10001").error);  // keyset on numbers needs no memory
    char* c = dscope_inspect_complete_ops(t.get(), "aten::", 5);
    CHECK(std::string(c).empty());
    dscope_inspect_free(c);
  }

  TEST_CASE("memory that changes under the reader: seeded corruption of the live runtime's reads") {
    // One read in `one_in` comes back changed (a byte, or a word made a pointer to itself or
    // anything): a core with stray writes, or a process that changed between two reads. Whatever
    // the bytes, every command answers text or one "dscope:" line, bounded, and never crashes. Run
    // at the bottom of a 300-deep dispatch chain, so that the records, the thread registry, the
    // operators and a tensor are all read.
    struct FlippingTarget {
      TestTarget& base;
      std::mt19937_64 rng;
      uint64_t one_in, flips = 0;
      dscope_target t{};
      FlippingTarget(TestTarget& b, uint64_t seed, uint64_t n) : base(b), rng(seed), one_in(n) {
        t = *b.get();
        t.ctx = this;
        t.write_memory = nullptr;
        t.read_memory = [](void* c, uint64_t addr, void* out, uint64_t size) {
          auto* self = static_cast<FlippingTarget*>(c);
          if (TestTarget::read(&self->base, addr, out, size) != 0) return 1;
          if (size == 0 || self->rng() % self->one_in != 0) return 0;
          ++self->flips;
          auto* bytes = static_cast<unsigned char*>(out);
          const uint64_t how = size < 8 ? 0 : self->rng() % 3;
          if (how == 0) {  // one byte: a count, a length, a key, a character
            bytes[self->rng() % size] ^= static_cast<unsigned char>(1 + self->rng() % 255);
          } else {  // one aligned word: a pointer back to what was read (a cycle), or anything
            const uint64_t word = how == 1 ? addr : self->rng();
            std::memcpy(bytes + (self->rng() % (size / 8)) * 8, &word, 8);
          }
          return 0;
        };
        t.find_symbol = [](void* c, const char* name, uint64_t* addr) {
          return TestTarget::findSymbol(&static_cast<FlippingTarget*>(c)->base, name, addr);
        };
        t.module_at = &TestTarget::moduleAt;
      }
    };
    auto& t = liveTarget();
    const Tensor x = cpuTensor();
    char tensor[64], entry[64];
    std::snprintf(tensor, sizeof tensor, "%p", static_cast<const void*>(&x));
    std::snprintf(entry, sizeof entry, "%p", static_cast<const void*>(&entryOf("insp::probe")));
    const std::vector<std::string> commands = {
        "dispatch-trace", "dispatch-trace --full", "dispatch-trace --json", "dispatch-trace --all",
        "op-table insp::probe", "op-table insp::probe --json", "op-table insp::probe --key Meta", "op-table --list",
        "op-table --missing Meta", "keyset --tls", "keyset --tls --explain 0x12800010001",
        std::string("summary Tensor ") + tensor, std::string("summary OperatorEntry ") + entry};
    auto answer = [](const dscope_target* target, const std::string& command) {  // the printers' too
      uint64_t word = 0;
      char type[32] = {};
      if (std::sscanf(command.c_str(), "summary %31s %" SCNx64, type, &word) == 2) return summaryOf(target, type, word);
      return run(target, command);
    };
    uint64_t flips = 0, answers = 0, errors = 0;
    at_bottom = [&] {
      for (uint64_t seed = 1; seed <= 1000; ++seed) {
        FlippingTarget ft(t, seed, 1 + seed % 16);
        for (const auto& command : commands) {
          CAPTURE(seed);
          CAPTURE(command);
          Result r = answer(&ft.t, command);
          if (r.error) {
            ++errors;
            checkOneLineError(r);
          } else {
            ++answers;
            CHECK(!r.text.empty());
          }
          CHECK(r.text.size() < (1u << 20));
        }
        flips += ft.flips;
      }
    };
    recursion_left = 300;
    typedOp("insp::outer").call(x);
    at_bottom = nullptr;
    MESSAGE(flips << " reads changed; " << answers << " answers, " << errors << " one-line errors");
    CHECK(flips > 1000);  // the test corrupts, and both outcomes happen
    CHECK(answers > 0);
    CHECK(errors > 0);
  }

  TEST_CASE("a corrupted descriptor copy: magic - version - layout hash") {
    TestTarget t;
    static struct dscope_debug_descriptor_t fake;
    t.symbol_overrides["dscope_debug_descriptor"] = reinterpret_cast<uint64_t>(&fake);
    std::memcpy(&fake, &dscope_debug_descriptor, sizeof fake);
    CHECK(!run(t, "op-table aten::mm --computed").error);  // the copy itself decodes
    fake.magic[0] = 'X';
    Result magic = run(t, "op-table aten::mm");
    checkOneLineError(magic);
    CHECK(magic.text.find("no DSCOPEDD magic") != std::string::npos);
    std::memcpy(&fake, &dscope_debug_descriptor, sizeof fake);
    fake.version = 99;
    CHECK(run(t, "dispatch-trace").text.find("debug interface version 99") != std::string::npos);
    std::memcpy(&fake, &dscope_debug_descriptor, sizeof fake);
    // The profile text must be the one the layout hash names, complete, and of our keys.
    const std::string text(dscope_debug_descriptor.profile_text, dscope_debug_descriptor.profile_size);
    auto useText = [&](std::string body) {  // body: a profile without its digest line, sealed here
      static std::string kept;
      char digest[64];
      std::snprintf(digest, sizeof digest, "digest fnv1a64 0x%016llx\n", static_cast<unsigned long long>(dscope_fnv1a64(body.c_str())));
      kept = body + digest;
      fake.profile_text = kept.c_str();
      fake.profile_size = kept.size();
      fake.layout_hash = dscope_fnv1a64(body.c_str());
    };
    const std::string body = text.substr(0, text.rfind("digest fnv1a64 "));
    fake.layout_hash ^= 1;
    Result hash = run(t, "keyset --tls");
    checkOneLineError(hash);
    CHECK(hash.text.find("dscope: the layout profile in dscope_debug_descriptor at ") == 0);
    CHECK(hash.text.find("is unusable: its digest is not the descriptor's layout hash 0x") != std::string::npos);
    // A reader of the same build takes its own profile by the digest; another digest's text is read.
    std::memcpy(&fake, &dscope_debug_descriptor, sizeof fake);
    std::string damaged = text;
    damaged[damaged.find("OperatorEntry_next ") + 20] ^= 1;
    fake.profile_text = damaged.c_str();
    CHECK(!run(t, "op-table --list").error);
    fake.layout_hash ^= 1;
    Result edited = run(t, "op-table --list");
    checkOneLineError(edited);
    CHECK(edited.text.find("is unusable: its digest does not match its contents") != std::string::npos);
    // A profile without a name the reader resolves is refused before any command reads with it.
    std::memcpy(&fake, &dscope_debug_descriptor, sizeof fake);
    const size_t next = body.find("\nOperatorEntry_next ");
    useText(body.substr(0, next) + body.substr(body.find('\n', next + 1)));
    Result lacking = run(t, "op-table aten::mm");
    checkOneLineError(lacking);
    CHECK(lacking.text.find("is unusable: it has no 'OperatorEntry_next' (cut short, or of another schema)") != std::string::npos);
    // A runtime of other keys than the reader's is read with its own key table: its names, not
    // this library's, in every answer.
    std::memcpy(&fake, &dscope_debug_descriptor, sizeof fake);
    const Result own_keys = run(t, "op-table aten::empty");
    REQUIRE(!own_keys.error);
    REQUIRE(own_keys.text.find("AutocastCPU: ") != std::string::npos);
    std::string renamed = body;
    renamed.replace(renamed.find(" AutocastCPU "), 13, " AutocastCPX ");
    useText(renamed);
    const Result keys = run(t, "op-table aten::empty");
    CHECK(!keys.error);
    CHECK(keys.text.find("AutocastCPU") == std::string::npos);
    std::string expected = own_keys.text;
    for (size_t at; (at = expected.find("AutocastCPU")) != std::string::npos;) expected.replace(at, 11, "AutocastCPX");
    CHECK(keys.text == expected);
    CHECK(run(t, "op-table aten::empty --key AutocastCPX").text.find("AutocastCPX: ") != std::string::npos);
    // The sentinel kernels come from the descriptor, not from their symbols: a null one is corrupt.
    std::memcpy(&fake, &dscope_debug_descriptor, sizeof fake);
    fake.missing_kernel = nullptr;
    Result sentinel = run(t, "op-table aten::mm");
    checkOneLineError(sentinel);
    CHECK(sentinel.text.find("holds no missing_kernel address (corrupt memory)") != std::string::npos);
    // Which kernels are sentinels is what the descriptor says: swapped, the table reads otherwise.
    std::memcpy(&fake, &dscope_debug_descriptor, sizeof fake);
    const Result pristine = run(t, "op-table aten::mm");
    std::swap(fake.fallthrough_kernel, fake.missing_kernel);
    const Result swapped = run(t, "op-table aten::mm");
    CHECK(!pristine.error);
    CHECK(!swapped.error);
    CHECK(swapped.text != pristine.text);
    t.symbol_overrides.clear();
    // A debugger that has not loaded the runtime library (a truncated core's lost library list)
    // finds the descriptor (an executable's copy) but not the library's hook: no kernel is decoded
    // from memory it does not serve, and the line says why; operator names need no kernel.
    dscope_target descriptor_only = *t.get();
    descriptor_only.find_symbol = [](void*, const char* name, uint64_t* addr) {
      if (std::strcmp(name, "dscope_debug_descriptor") != 0) return 1;
      *addr = reinterpret_cast<uint64_t>(&dscope_debug_descriptor);
      return 0;
    };
    Result unloaded = run(&descriptor_only, "op-table aten::mm");
    checkOneLineError(unloaded);
    CHECK(unloaded.text.rfind("dscope: cannot find dscope_debug_break_hook in the runtime's dynamic symbols", 0) == 0);
    CHECK(unloaded.text.find("is libdscope_runtime loaded?") != std::string::npos);
    CHECK(run(&descriptor_only, "op-table --list aten::mm").text.find("aten::mm\n") == 0);
    dscope_target no_symbols = *t.get();
    no_symbols.find_symbol = [](void*, const char*, uint64_t*) { return 1; };
    checkOneLineError(run(&no_symbols, "op-table aten::mm"));
    // A thread but no runtime (not loaded yet), or no thread at all (no process, no core).
    CHECK(run(&no_symbols, "op-table aten::mm").text.rfind("dscope: no DispatchScope runtime in this process", 0) == 0);
    no_symbols.selected_tid = 0;
    CHECK(run(&no_symbols, "dispatch-trace").text.rfind("dscope: no process or core file (start the program", 0) == 0);
  }

  TEST_CASE("fake operator lists: a cycle - an absurd count - an unterminated name") {
    TestTarget t;
    static struct dscope_debug_descriptor_t fake;
    std::memcpy(&fake, &dscope_debug_descriptor, sizeof fake);
    t.symbol_overrides["dscope_debug_descriptor"] = reinterpret_cast<uint64_t>(&fake);
    using L = debug::Layout;
    // Raw bytes laid out as the runtime's objects (offsets from Layout, like the library reads them).
    alignas(16) static unsigned char dispatcher[sizeof(Dispatcher)];
    alignas(16) static unsigned char op_a[sizeof(impl::OperatorEntry)];
    alignas(16) static unsigned char op_b[sizeof(impl::OperatorEntry)];
    static const char* name_a = "fake::a";
    static const char* name_b = "fake::b";
    auto put = [](unsigned char* base, size_t offset, auto value) { std::memcpy(base + offset, &value, sizeof value); };
    put(op_a, L::OperatorEntry_full_name, name_a);
    put(op_b, L::OperatorEntry_full_name, name_b);
    put(op_a, L::OperatorEntry_next, static_cast<void*>(op_b));
    put(op_b, L::OperatorEntry_next, static_cast<void*>(op_a));  // the cycle
    put(dispatcher, L::Dispatcher_operators_head, static_cast<void*>(op_a));
    put(dispatcher, L::Dispatcher_num_operators, uint32_t{5});
    fake.dispatcher = dispatcher;
    // A walk that ends before the count shows what it read and says where it broke.
    char broken[200];
    std::snprintf(broken, sizeof broken,
                  "dscope: the operator list ends after 2 of the 5 operators the dispatcher counts (a link back to %p: "
                  "corrupt memory): the rest are not shown\n",
                  static_cast<void*>(op_a));
    CHECK(run(t, "op-table --list").text == std::string("fake::a\nfake::b\n2 operators registered\n") + broken);
    Result lost = run(t, "op-table fake::c");
    checkOneLineError(lost);
    CHECK(lost.text.find("unknown operator 'fake::c'") != std::string::npos);
    CHECK(lost.text.find("(the operator list ends after 2 of the 5 operators") != std::string::npos);
    CHECK(run(t, "op-table --list --json").text.find("\"warnings\":[\"dscope: the operator list ends after 2") !=
          std::string::npos);
    CHECK(JsonChecker::valid(run(t, "op-table --list --json").text));
    // A count bound without a cycle: the walk stops at the count.
    put(dispatcher, L::Dispatcher_num_operators, uint32_t{1});
    CHECK(run(t, "op-table --list").text == "fake::a\n1 operator registered\n");
    put(dispatcher, L::Dispatcher_num_operators, uint32_t{0xffffffff});
    checkOneLineError(run(t, "op-table --list"));
    // A name with no NUL within the string limit, or that is no operator name: left out, and said.
    static std::vector<char> endless(3 * 4096, 'x');
    static const char* garbage = "aten::emp\xc3" "y.\x80" "emory_format";
    put(dispatcher, L::Dispatcher_num_operators, uint32_t{2});
    put(op_a, L::OperatorEntry_full_name, static_cast<const char*>(endless.data()));
    put(op_b, L::OperatorEntry_full_name, garbage);
    put(op_b, L::OperatorEntry_next, static_cast<void*>(nullptr));
    char left_out[2][120];
    for (int i = 0; i < 2; ++i)
      std::snprintf(left_out[i], sizeof left_out[i], "dscope: the operator at %p has no operator name (corrupt memory): left out\n",
                    static_cast<void*>(i == 0 ? op_a : op_b));
    CHECK(run(t, "op-table --list").text == std::string("0 operators registered\n") + left_out[0] + left_out[1]);
    // A dangling operator pointer.
    put(dispatcher, L::Dispatcher_num_operators, uint32_t{1});
    put(dispatcher, L::Dispatcher_operators_head, reinterpret_cast<void*>(uintptr_t{0x10}));
    char dangling[300];
    std::snprintf(dangling, sizeof dangling,
                  "0 operators registered\ndscope: the operator at 0x10 has no operator name (corrupt memory): left out\n"
                  "dscope: the operator list ends after 0 of the 1 operators the dispatcher counts (cannot read memory at "
                  "0x%llx (operator list): corrupt memory): the rest are not shown\n",
                  static_cast<unsigned long long>(0x10 + L::OperatorEntry_next));
    CHECK(run(t, "op-table --list").text == dangling);
  }

  TEST_CASE("a record block with a corrupt depth: bounded, and unwritten records are named") {
    // A depth of 2^62 (one flipped bit) over a block whose held records all repeat: every walk
    // costs what the block holds; it hung walking the overwritten middle once.
    FakeRecords f;
    auto& t = f.t;
    auto& block = f.block;
    block.depth = uint64_t{1} << 62;
    for (auto& r : block.ring) r = FakeRecords::probe({K::CPU, K::AutogradCPU});
    // The bottom records differ: the loop begins in the gap.
    for (auto& r : block.first) r = FakeRecords::probe(DispatchKeySet(K::CPU));
    // No stack holds 2^62 dispatches: the block is corrupt, and so is a depth within 256 of 2^64
    // (a pop at depth 0), which once made every walk wrap around and spin.
    const std::map<uint64_t, std::string> corrupt_depths{{uint64_t{1} << 62, "4 611 686 018 427 387 904"},
                                                         {~uint64_t{0}, "18 446 744 073 709 551 615"},
                                                         {~uint64_t{0} - 200, "18 446 744 073 709 551 415"}};
    for (const auto& [depth, grouped] : corrupt_depths) {
      block.depth = depth;
      for (const char* command : {"dispatch-trace", "dispatch-trace --all", "dispatch-trace --json", "keyset --tls"}) {
        CAPTURE(command);
        CHECK(run(t, command).text.find("is corrupt (dispatch depth " + grouped + " is more than any stack holds)") !=
              std::string::npos);
      }
    }
    // The deepest plausible depth, over a block whose held records all repeat: every walk costs
    // what the block holds.
    block.depth = uint64_t{1} << 32;
    const std::string header = "thread tid " + std::to_string(block.tid) + " (alive): dispatch depth 4 294 967 296";
    Result folded = run(t, "dispatch-trace");
    CHECK(lines(folded.text).front() == header);
    uint64_t entry_shown = 0;
    for (const auto& l : lines(folded.text)) entry_shown += l.rfind("    #", 0) == 0 && l.find("key=[CPU]") != std::string::npos;
    CHECK(hasLine(folded.text, "    ... " + std::to_string(DSCOPE_RECORDS_FIRST - entry_shown) + " more (dispatch-trace --full)"));
    Result full = run(t, "dispatch-trace --full");
    CHECK(lines(full.text).size() == 1 + DSCOPE_RECORDS_FIRST + 1 + DSCOPE_RECORDS_RING);  // header, first, gap line, ring
    CHECK(JsonChecker::valid(run(t, "dispatch-trace --full --json").text));
    // One record the runtime never wrote (kind 0) below the innermost: the loop is folded around
    // it, and a line says where it is.
    block.ring[7] = dscope_dispatch_record{};
    Result one = run(t, "dispatch-trace");
    CHECK(lines(one.text).front() == header);
    CHECK(one.text.find("  diagnosis: insp::probe's AutogradCPU kernel") != std::string::npos);
    CHECK(hasLine(one.text, "dscope: thread tid " + std::to_string(block.tid) + ": the record at depth " +
                                "4 294 967 047 is corrupt (kind 0 is no dispatch); the chain is read around it"));
    // Many: not a chain the thread pushed. One line naming the first.
    for (int i = 0; i < 20; ++i) block.ring[i] = dscope_dispatch_record{};
    Result unwritten = run(t, "dispatch-trace");
    checkOneLineError(unwritten);
    CHECK(unwritten.text.find(": 20 of the 320 records it holds are not dispatches (the first, at depth 4 294 967 040 "
                              "of 4 294 967 296: kind 0 is no dispatch)") != std::string::npos);
  }

  TEST_CASE("a record that breaks a loop the records on both sides of it repeat is read around") {
    // A flipped bit that keeps every field plausible (ADInplaceOrView added to the key set: the
    // slot is still AutogradCPU's): the loop, its start and its diagnosis stay, and a line names it.
    FakeRecords f;
    auto& t = f.t;
    auto& block = f.block;
    const DispatchKeySet ks{K::CPU, K::AutogradCPU};
    const dscope_dispatch_record rec = FakeRecords::probe(ks);
    block.depth = 1000;
    for (auto& r : block.ring) r = rec;
    for (auto& r : block.first) r = rec;
    const uint64_t flipped = 900;
    block.ring[flipped % DSCOPE_RECORDS_RING].keyset = (ks | DispatchKeySet(K::ADInplaceOrView)).raw_repr();
    Result r = run(t, "dispatch-trace");
    CHECK(hasLine(r.text, "  loop: a cycle of 1 dispatch from depth 0 to the top:"));
    CHECK(r.text.find("  diagnosis: insp::probe's AutogradCPU kernel") != std::string::npos);
    CHECK(hasLine(r.text, "dscope: thread tid " + std::to_string(block.tid) + ": the record at depth 900 is corrupt (it "
                          "breaks the loop the records on both sides of it repeat); the chain is read around it"));
    // The same record in a chain's entry (16 records or fewer below it) may be a real dispatch: kept.
    block.ring[flipped % DSCOPE_RECORDS_RING] = rec;
    block.first[10].keyset = (ks | DispatchKeySet(K::ADInplaceOrView)).raw_repr();
    r = run(t, "dispatch-trace");
    CHECK(hasLine(r.text, "  loop: a cycle of 1 dispatch from depth 11 to the top:"));
    CHECK(r.text.find("is corrupt") == std::string::npos);
  }

  TEST_CASE("values described by a debugger: keyset EXPR, $dispatch_op_is, $dispatch_key") {
    // A front end that evaluates every expression, and every frame variable, to `value`.
    static dscope_value value;
    static int variable_status = 0;
    static std::string variable_name;
    liveTarget();  // registers the insp:: operators
    TestTarget described;
    described.t.evaluate = [](void*, const char*, dscope_value* out, char*, uint64_t) {
      *out = value;
      return 0;
    };
    described.t.frame_variable = [](void*, const char* name, int, dscope_value* out, char*, uint64_t) {
      if (variable_status != 0 || name != variable_name) return variable_status ? variable_status : 1;
      *out = value;
      return 0;
    };
    auto describe = [](uint32_t kind, const char* type, uint64_t bits, uint64_t address) {
      value = dscope_value{};
      value.kind = kind;
      value.bits = bits;
      value.address = address;
      std::snprintf(value.type, sizeof value.type, "%s", type);
      std::snprintf(value.shown, sizeof value.shown, "%s", type);
    };
    const Tensor x = cpuTensor();
    const std::string keys = toString(x.key_set());
    describe(DSCOPE_KIND_OBJECT, "dscope::Tensor", 0, reinterpret_cast<uint64_t>(&x));
    CHECK(run(described, "keyset x").text.find(keys) != std::string::npos);
    describe(DSCOPE_KIND_POINTER, "dscope::TensorImpl", reinterpret_cast<uint64_t>(x.unsafeGetTensorImpl()), 0);
    CHECK(run(described, "keyset p").text.find(keys) != std::string::npos);
    const DispatchKeySet ks = x.key_set();
    describe(DSCOPE_KIND_OBJECT, "dscope::DispatchKeySet", 0, reinterpret_cast<uint64_t>(&ks));
    CHECK(run(described, "keyset ks").text.find(keys) != std::string::npos);
    describe(DSCOPE_KIND_OBJECT, "dscope::DispatchKeySet", ks.raw_repr(), 0);  // in registers
    CHECK(run(described, "keyset ks").text.find(keys) != std::string::npos);
    const Tensor undefined;
    describe(DSCOPE_KIND_OBJECT, "dscope::Tensor", 0, reinterpret_cast<uint64_t>(&undefined));
    CHECK(run(described, "keyset u").text == "dscope: cannot evaluate 'u': u is an undefined tensor\n");
    describe(DSCOPE_KIND_POINTER, "dscope::Tensor", 0, 0);
    CHECK(run(described, "keyset n").text == "dscope: cannot evaluate 'n': n is a null pointer\n");
    describe(DSCOPE_KIND_OTHER, "double", 0, 0);
    CHECK(run(described, "keyset 1e3").text ==
          "dscope: cannot evaluate '1e3': 1e3 is a double, not a DispatchKeySet or a tensor\n");

    // The frame's operator: a handle `this` (its entry_), an entry, the hook's untyped `op`.
    OperatorHandle over_a = Dispatcher::singleton().findSchemaOrThrow("insp::over", "a");
    auto opIs = [&](const char* name) {
      char* error = nullptr;
      const int answer = dscope_frame_op_is(described.get(), "insp_frame", name, &error);
      Result r{error ? error : std::to_string(answer), answer < 0};
      dscope_inspect_free(error);
      return r;
    };
    variable_name = "this";
    describe(DSCOPE_KIND_POINTER, "dscope::TypedOperatorHandle<dscope::Tensor (dscope::Tensor const&)>",
             reinterpret_cast<uint64_t>(&over_a), 0);
    CHECK(opIs("insp::over").text == "1");  // a base name: every overload
    CHECK(opIs("insp::over.a").text == "1");
    CHECK(opIs("insp::over.b").text == "0");
    for (const char* bad : {"insp", "insp::", "insp::over.", "a::b::c", "insp::probe x"}) {
      CAPTURE(bad);
      const Result r = opIs(bad);
      CHECK(r.error);
      CHECK(r.text.find("is not an operator name") != std::string::npos);
    }
    variable_name = "op";
    describe(DSCOPE_KIND_INTEGER, "const void *", reinterpret_cast<uint64_t>(&entryOf("insp::probe")), 0);
    CHECK(opIs("insp::probe").text == "1");
    describe(DSCOPE_KIND_OBJECT, "dscope::impl::OperatorEntry", 0, reinterpret_cast<uint64_t>(&entryOf("insp::probe")));
    CHECK(opIs("insp::probe").text == "1");
    describe(DSCOPE_KIND_INTEGER, "const void *", 0, 0);
    CHECK(opIs("insp::probe").text == "dscope: the operator handle in insp_frame is null\n");
    describe(DSCOPE_KIND_OBJECT, "dscope::Tensor", 0, reinterpret_cast<uint64_t>(&x));  // no operator
    CHECK(opIs("insp::probe").text.find("insp_frame is not dispatching an operator") != std::string::npos);
    variable_status = 3;
    CHECK(opIs("insp::probe").text.find("no debug information for insp_frame (DWARF needed)") != std::string::npos);

    // The frame's key: the highest of its key set `ks`.
    variable_status = 0;
    variable_name = "ks";
    describe(DSCOPE_KIND_OBJECT, "dscope::DispatchKeySet", ks.raw_repr(), 0);
    auto frameKey = [&] {
      int is_error = -1;
      char* out = dscope_frame_key(described.get(), "insp_frame", &is_error);
      return taken(out, is_error);
    };
    CHECK(frameKey().text == toString(ks.highestPriorityTypeId()));
    variable_name = "none";
    CHECK(frameKey().text.find("insp_frame has no dispatch key set argument `ks`") != std::string::npos);
  }

  TEST_CASE("the shared record formatter is the trace's") {
    CHECK(format::recordLine(DSCOPE_RECORD_CALL, "aten::mm", K::AutogradCPU) == "[call] op=[aten::mm], key=[AutogradCPU]");
    CHECK(std::string(format::recordKindLabel(9)) == "[?]");
  }
}
