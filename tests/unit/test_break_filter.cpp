// The break filter's bloom word (docs/DEBUG-INTERFACE.md §6): a dispatch leaves its inline path
// only when the descriptor's break_bloom meets its operator's mask, so the word must always
// cover the armed entries. Checked in-process (debug::addBreak) and through libdscope_inspect's
// dispatch-break writing this process's memory, as a debugger writes a stopped one.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "dscope/DebugInterface.h"
#include "dscope/Library.h"
#include "test_util.h"

using namespace dscope;
using K = DispatchKey;
using testing::Breaks;
using testing::TestTarget;

namespace {

using Unary = TypedOperatorHandle<int64_t(const Tensor&)>;

Tensor cpuTensor() { return make_tensor(std::vector<int64_t>{2}, ScalarType::Float, Device(DeviceType::CPU)); }

// The bit as the contract defines it, written out here rather than taken from the header.
uint64_t bitOf(const char* name) { return uint64_t{1} << (dscope_fnv1a64(name) >> 58); }

// An operator name whose bloom bit is `bit` but which is not `avoid` (found by counting up).
std::string nameWithBit(uint64_t bit, const std::string& avoid) {
  for (int i = 0;; ++i) {
    std::string name = "bloom::twin" + std::to_string(i);
    if (name != avoid && bitOf(name.c_str()) == bit) return name;
  }
}

// Registers ns::name(Tensor) -> int with a CPU kernel that returns `value`.
struct Ops {
  Library lib{Library::FRAGMENT, "bloom", std::nullopt, "test_break_filter.cpp", 1};
  std::string twin;  // an operator that shares bloom::watched's bit
  Ops() {
    twin = nameWithBit(bitOf("bloom::watched"), "bloom::watched");
    for (const std::string& name : {std::string("watched.Tensor"), std::string("other"), twin.substr(7)}) {
      lib.def(name + "(Tensor x) -> int");
      lib.impl(name, dispatch(K::CPU, [](const Tensor&) -> int64_t { return 1; }));
    }
  }
  static Unary op(const std::string& full) {
    auto dot = full.find('.');
    return Dispatcher::singleton()
        .findSchemaOrThrow(full.substr(0, dot), dot == std::string::npos ? "" : full.substr(dot + 1))
        .typed<int64_t(const Tensor&)>();
  }
};

Ops& ops() {
  static Ops o;
  return o;
}

uint32_t hits() { return dscope_debug_descriptor.break_hits; }

// Dispatches op at CPU (below autograd) and returns how many times the hook ran.
uint32_t hooksFor(const std::string& op) {
  AutoDispatchBelowAutograd below;
  uint32_t before = hits();
  Ops::op(op).call(cpuTensor());
  return hits() - before;
}

}  // namespace

TEST_SUITE("break_filter") {
  TEST_CASE("bloom: each operator's mask holds the bits of its full and base name hashes") {
    ops();
    CHECK(dscope_break_bloom_bit(0x5477c27790740cdfull) == uint64_t{1} << 21);  // aten::mm's hash, top 6 bits 21
    auto watched = Ops::op("bloom::watched.Tensor");
    CHECK(watched.entry().breakMask() == (bitOf("bloom::watched.Tensor") | bitOf("bloom::watched")));
    CHECK(Ops::op("bloom::other").entry().breakMask() == bitOf("bloom::other"));
  }

  TEST_CASE("bloom: addBreak sets the entry's bit and clearBreaks clears the word") {
    ops();
    debug::clearBreaks();
    CHECK(dscope_debug_descriptor.break_bloom == 0);
    REQUIRE(debug::addBreak("bloom::watched.Tensor"));
    REQUIRE(debug::addBreak("bloom::other", K::CPU));
    CHECK(dscope_debug_descriptor.break_bloom == (bitOf("bloom::watched.Tensor") | bitOf("bloom::other")));
    debug::clearBreaks();
    CHECK(dscope_debug_descriptor.break_bloom == 0);
    CHECK(dscope_debug_descriptor.break_count == 0);
  }

  TEST_CASE("bloom: an armed op reaches the hook and others do not and keys still filter") {
    const std::string twin = ops().twin;
    debug::clearBreaks();
    CHECK(hooksFor("bloom::watched.Tensor") == 0);  // nothing armed
    REQUIRE(debug::addBreak("bloom::watched"));       // the base name: every overload
    CHECK(hooksFor("bloom::watched.Tensor") == 1);
    CHECK(hooksFor("bloom::other") == 0);
    // Shares the armed bit: leaves the inline path, and the name check in checkBreakFilter
    // still refuses it.
    REQUIRE((Ops::op(twin).entry().breakMask() & dscope_debug_descriptor.break_bloom) != 0);
    CHECK(hooksFor(twin) == 0);
    debug::clearBreaks();
    REQUIRE(debug::addBreak("bloom::watched", K::CUDA));  // the dispatch goes to CPU: no stop
    CHECK(hooksFor("bloom::watched.Tensor") == 0);
    debug::clearBreaks();
    REQUIRE(debug::addBreak("bloom::watched.Tensor", K::CPU));
    CHECK(hooksFor("bloom::watched.Tensor") == 1);
    debug::clearBreaks();
  }

  TEST_CASE("bloom: the runtime reads only the word so an entry without its bit is not seen") {
    ops();
    auto& d = dscope_debug_descriptor;
    debug::clearBreaks();
    // What a writer that forgot the bloom word would leave: entry and count, word 0.
    d.breaks[0] = {dscope_fnv1a64("bloom::other"), DSCOPE_BREAK_ANY_KEY, {}};
    d.break_count = 1;
    CHECK(hooksFor("bloom::other") == 0);
    d.break_bloom = bitOf("bloom::other");
    CHECK(hooksFor("bloom::other") == 1);
    debug::clearBreaks();
    CHECK(hooksFor("bloom::other") == 0);
  }

  TEST_CASE("dispatch-break writes the bloom word with the entries, and deleting the last clears it") {
    const std::string twin = ops().twin;
    auto& d = dscope_debug_descriptor;
    TestTarget t;
    Breaks breaks;
    debug::clearBreaks();
    d.break_bloom = ~uint64_t{0};  // stale bits from an earlier writer: arming rebuilds the word
    REQUIRE(!breaks.command(t, "bloom::watched --key CPU").error);
    CHECK(d.break_count == 1);
    CHECK(d.break_bloom == bitOf("bloom::watched"));
    CHECK(hooksFor("bloom::watched.Tensor") == 1);
    CHECK(hooksFor("bloom::other") == 0);
    CHECK(hooksFor(twin) == 0);
    REQUIRE(!breaks.command(t, "bloom::other").error);
    CHECK(d.break_count == 2);
    CHECK(d.break_bloom == (bitOf("bloom::watched") | bitOf("bloom::other")));
    CHECK(hooksFor("bloom::other") == 1);
    CHECK(hooksFor("bloom::watched.Tensor") == 1);
    REQUIRE(!breaks.command(t, "--delete 1").error);
    CHECK(d.break_count == 1);
    CHECK(d.break_bloom == bitOf("bloom::other"));
    CHECK(hooksFor("bloom::watched.Tensor") == 0);
    REQUIRE(!breaks.command(t, "--delete 2").error);
    CHECK(d.break_count == 0);
    CHECK(d.break_bloom == 0);
    CHECK(hooksFor("bloom::other") == 0);
    // The key filter through the debugger's path: armed at CUDA, a CPU dispatch does not stop.
    REQUIRE(!breaks.command(t, "bloom::watched.Tensor --key CUDA").error);
    CHECK(hooksFor("bloom::watched.Tensor") == 0);
    REQUIRE(!breaks.command(t, "--delete 3").error);
    CHECK(d.break_count == 0);
  }
}
