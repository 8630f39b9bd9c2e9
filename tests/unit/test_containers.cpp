// The container walkers of the inspect library's target layer (target/Containers.h), over this
// test's own memory (TestTarget: a read copies it): real std::string, std::vector, std::list and
// std::optional objects read back, and damaged copies refused in one line. A Remote keeps the
// pages it read, as for one command while the target stands still: a walk of memory the test has
// changed since takes a new one. Where each member
// lies is found in the object itself (the word holding its data pointer, its size), as a profile
// records it for a build, not assumed.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <vector>

#include "target/Containers.h"
#include "target/Remote.h"
#include "test_util.h"

using namespace dscope::inspect;
using dscope::testing::TestTarget;

namespace {

template <class T>
uint64_t addr(const T* p) {
  return reinterpret_cast<uint64_t>(p);
}

// The offset of the first 8-byte word of object that holds value; the test fails when none does.
template <class T>
uint64_t offsetOfWord(const T& object, uint64_t value) {
  static_assert(sizeof(T) % 8 == 0);
  for (uint64_t off = 0; off < sizeof(T); off += 8) {
    uint64_t word;
    std::memcpy(&word, reinterpret_cast<const char*>(&object) + off, 8);
    if (word == value) return off;
  }
  FAIL("no word of the object holds " << value);
  return 0;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InspectError& e) {
    return e.what();
  }
  return "(no error)";
}

ContainerName named(std::string name) {
  return [name] { return name; };
}

StdStringLayout stringLayout() {
  std::string probe;  // a long one, whose capacity differs from its length
  probe.reserve(100);
  probe.assign(40, 'p');
  return {offsetOfWord(probe, addr(probe.data())), offsetOfWord(probe, probe.size())};
}

CorruptLine tooLong(uint64_t at) {
  return [at](uint64_t size) { return "the test string at " + hex(at) + " claims " + std::to_string(size) + " bytes"; };
}

// A list of three ints: its head's words lead to the nodes, whose values are ints at one offset.
StdListLayout listLayout(const std::list<int>& l) {
  REQUIRE(l.size() == 3);
  StdListLayout layout;
  layout.size = offsetOfWord(l, 3);
  // The head's next is the first node, and the first value lies a few bytes into it.
  for (uint64_t off = 0; off < sizeof l; off += 8) {
    uint64_t word;
    std::memcpy(&word, reinterpret_cast<const char*>(&l) + off, 8);
    if (word && addr(&l.front()) > word && addr(&l.front()) - word <= 64) {
      layout.next = off;
      layout.data = addr(&l.front()) - word;
      break;
    }
  }
  REQUIRE(layout.data != 0);
  layout.prev = offsetOfWord(l, addr(&l.back()) - layout.data);
  return layout;
}

}  // namespace

TEST_SUITE("containers") {
  TEST_CASE("std::string: short and long strings read back; an absurd length is refused in one line") {
    TestTarget t;
    const Remote mem(t.get());
    const StdStringLayout layout = stringLayout();
    const std::string empty, short_one = "aten::mm", long_one(300, 'x');
    for (const std::string* s : {&empty, &short_one, &long_one})
      CHECK(readStdString(mem, addr(s), layout, kMaxStringLength, "a test string", tooLong(addr(s))) == *s);
    // At most max_length bytes: the long string is refused by a bound below its length.
    CHECK(errorOf([&] { readStdString(Remote(t.get()), addr(&long_one), layout, 299, "a test string", tooLong(addr(&long_one))); }) ==
          "dscope: the test string at " + hex(addr(&long_one)) + " claims 300 bytes");

    alignas(std::string) unsigned char copy[sizeof(std::string)];
    std::memcpy(copy, static_cast<const void*>(&long_one), sizeof copy);
    const uint64_t absurd = 1ull << 40;
    std::memcpy(copy + layout.size, &absurd, sizeof absurd);
    CHECK(errorOf([&] { readStdString(Remote(t.get()), addr(copy), layout, kMaxStringLength, "a test string", tooLong(addr(copy))); }) ==
          "dscope: the test string at " + hex(addr(copy)) + " claims 1099511627776 bytes");
    // Unreadable characters: the read's own line, naming the object.
    const uint64_t wild = 8;
    std::memcpy(copy + layout.data, &wild, sizeof wild);
    const uint64_t three = 3;
    std::memcpy(copy + layout.size, &three, sizeof three);
    CHECK(errorOf([&] { readStdString(Remote(t.get()), addr(copy), layout, kMaxStringLength, "a test string", tooLong(addr(copy))); }) ==
          "dscope: cannot read memory at 0x8 (a test string)");
  }

  TEST_CASE("std::vector: its elements' addresses; a range of part-elements or too many is refused") {
    TestTarget t;
    const Remote mem(t.get());
    const std::vector<int> v{1, 2, 3, 4, 5};
    const StdVectorLayout layout{offsetOfWord(v, addr(v.data())), offsetOfWord(v, addr(v.data() + v.size()))};
    const auto elements = stdVectorElements(mem, addr(&v), layout, sizeof(int), 16, "a test vector");
    REQUIRE(elements.size() == v.size());
    for (size_t i = 0; i < v.size(); ++i) CHECK(elements[i] == addr(&v[i]));
    const std::string corrupt = "dscope: a test vector at " + hex(addr(&v)) + " is corrupt (a vector from " +
                                hex(addr(v.data())) + " to " + hex(addr(v.data() + v.size())) + ")";
    CHECK(errorOf([&] { stdVectorElements(Remote(t.get()), addr(&v), layout, sizeof(int), 4, "a test vector"); }) == corrupt);
    CHECK(errorOf([&] { stdVectorElements(Remote(t.get()), addr(&v), layout, 8, 16, "a test vector"); }) == corrupt);
  }

  TEST_CASE("std::list: a real list walks in order; a cycle that misses the head is refused in one line") {
    TestTarget t;
    const Remote mem(t.get());
    const std::list<int> l{10, 20, 30};
    const StdListLayout layout = listLayout(l);
    std::vector<int> seen;
    const auto visit = [&](uint64_t value) { seen.push_back(mem.read<int>(value, "a test list's value")); };
    CHECK(walkStdList(mem, addr(&l), layout, 16, "a test list", named("the test list"), visit) == 3);
    CHECK(seen == std::vector<int>{10, 20, 30});
    CHECK(stdListSize(mem, addr(&l), layout, "a test list") == 3);
    seen.clear();
    CHECK(walkStdList(mem, addr(&l), layout, 16, "a test list", named("the test list"), visit, 4096) == 3);  // reading ahead
    CHECK(seen == std::vector<int>{10, 20, 30});
    // No more nodes than the bound: a list longer than it is refused like a cycle.
    CHECK(errorOf([&] { walkStdList(Remote(t.get()), addr(&l), layout, 2, "a test list", named("the test list"), visit); }) ==
          "dscope: the test list does not end (corrupt memory)");

    // A head whose first node links to itself: the walk never comes back to the head.
    alignas(8) uint64_t head[8] = {}, node[16] = {};
    head[layout.next / 8] = addr(node);
    head[layout.prev / 8] = addr(node);
    head[layout.size / 8] = 1;
    node[layout.next / 8] = addr(node);
    CHECK(errorOf([&] { walkStdList(Remote(t.get()), addr(head), layout, 1024, "a test list", [&] { return "the test list at " + hex(addr(head)); }, [](uint64_t) {}); }) ==
          "dscope: the test list at " + hex(addr(head)) + " does not end (corrupt memory)");
    // A wild link: the read's own line.
    node[layout.next / 8] = 16;
    CHECK(errorOf([&] { walkStdList(Remote(t.get()), addr(head), layout, 1024, "a test list", named("the test list"), [](uint64_t) {}); }) ==
          "dscope: cannot read memory at 0x10 (a test list)");
  }

  TEST_CASE("forward list: nodes until null; a cycle is refused in one line") {
    TestTarget t;
    const Remote mem(t.get());
    // Nodes of {next, value}, the container holding the first node's pointer at 8.
    alignas(8) uint64_t nodes[3][2] = {{0, 1}, {0, 2}, {0, 3}};
    nodes[0][0] = addr(nodes[1]);
    nodes[1][0] = addr(nodes[2]);
    alignas(8) uint64_t set[2] = {0, addr(nodes[0])};
    const ForwardListLayout layout{8, 0};
    std::vector<uint64_t> values;
    const auto visit = [&](uint64_t node) { values.push_back(mem.readPointer(node + 8, "a test node")); };
    CHECK(walkForwardList(mem, addr(set), layout, 8, "a test set", named("the test set"), visit) == 3);
    CHECK(values == std::vector<uint64_t>{1, 2, 3});
    nodes[2][0] = addr(nodes[0]);
    CHECK(errorOf([&] { walkForwardList(Remote(t.get()), addr(set), layout, 8, "a test set", named("the test set"), visit); }) ==
          "dscope: the test set does not end (corrupt memory)");
  }

  TEST_CASE("chain: stops at null or the stated count; a node met twice is refused in one line") {
    alignas(8) uint64_t nodes[3] = {};
    nodes[0] = addr(&nodes[1]);
    nodes[1] = addr(&nodes[2]);
    const auto next = [](uint64_t node) { return *reinterpret_cast<const uint64_t*>(node); };
    const CorruptLine loops = [](uint64_t node) { return "the test chain loops back to " + hex(node); };
    CHECK(walkChain(addr(&nodes[0]), 10, next, loops) == 3);
    CHECK(walkChain(addr(&nodes[0]), 2, next, loops) == 2);
    nodes[2] = addr(&nodes[1]);
    CHECK(errorOf([&] { walkChain(addr(&nodes[0]), 10, next, loops); }) == "dscope: the test chain loops back to " + hex(addr(&nodes[1])));
    CHECK(walkChain(addr(&nodes[0]), 3, next, loops) == 3);  // the count ends it before the loop shows
  }

  TEST_CASE("std::optional: engaged and disengaged; a flag that is no bool is refused in one line") {
    TestTarget t;
    const Remote mem(t.get());
    std::optional<int> o = 42;
    const uint64_t payload = addr(&*o) - addr(&o);
    // The engaged flag: the byte that reset() clears.
    unsigned char engaged_bytes[sizeof o], reset_bytes[sizeof o];
    std::memcpy(engaged_bytes, static_cast<const void*>(&o), sizeof o);
    std::optional<int> cleared = o;
    cleared.reset();
    std::memcpy(reset_bytes, static_cast<const void*>(&cleared), sizeof o);
    uint64_t engaged = sizeof o;
    for (uint64_t i = 0; i < sizeof o; ++i)
      if (i < payload || i >= payload + sizeof(int))
        if (engaged_bytes[i] == 1 && reset_bytes[i] == 0) engaged = i;
    REQUIRE(engaged < sizeof o);
    const OptionalLayout layout{engaged, payload};
    const auto corrupt = [](uint64_t flag) { return "the test optional's flag holds " + std::to_string(flag); };
    const auto value = engagedValue(mem, addr(&o), layout, "a test optional", corrupt);
    REQUIRE(value);
    CHECK(mem.read<int>(*value, "a test optional") == 42);
    CHECK_FALSE(engagedValue(mem, addr(&cleared), layout, "a test optional", corrupt));
    unsigned char damaged[sizeof o];
    std::memcpy(damaged, engaged_bytes, sizeof o);
    damaged[engaged] = 2;
    CHECK(errorOf([&] { engagedValue(Remote(t.get()), addr(damaged), layout, "a test optional", corrupt); }) ==
          "dscope: the test optional's flag holds 2");
  }

  TEST_CASE("flat_hash_map: full entries in slot order, in their hash's place; a damaged shape is refused") {
    TestTarget t;
    const Remote mem(t.get());
    // A map of 4 slots (bits 2, ska's lookup bound max(4, bits) = 4): 4 + 4 - 1 entries of
    // {int8 distance, key}, then the end marker. Key 1 sits at the slot ska's fibonacci hash gives it.
    struct Entry {
      int8_t distance;
      uint64_t key;
    };
    Entry entries[8];
    for (Entry& e : entries) e = {-1, 0};
    entries[7] = {0, 0};  // the end marker
    const uint64_t key = 1, slot = (11400714819323198485ull * key) >> 62;
    entries[slot] = {0, key};
    struct Map {
      uint64_t entries, slots_minus_one;
      int8_t max_lookups;
      uint64_t num_elements;
    } map{addr(entries), 3, 4, 1};
    const FlatHashMapLayout layout{offsetof(Map, entries), offsetof(Map, slots_minus_one), offsetof(Map, max_lookups),
                                   offsetof(Map, num_elements), sizeof(Entry), offsetof(Entry, distance)};
    const auto corrupt = [&] { return "the test map at " + hex(addr(&map)) + " is corrupt ("; };
    std::vector<FlatHashEntry> seen;
    const auto visit = [&](const FlatHashEntry& e) { seen.push_back(e); };
    walkFlatHashMap(mem, addr(&map), layout, 64, "a test map", "a test map entry", corrupt, visit);
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].index == slot);
    CHECK(seen[0].addr == addr(&entries[slot]));
    CHECK(seen[0].holds(key));
    uint64_t elsewhere = key + 1;  // a hash whose slot is another
    while ((11400714819323198485ull * elsewhere) >> 62 == slot) ++elsewhere;
    CHECK_FALSE(seen[0].holds(elsewhere));

    const std::string line = "dscope: the test map at " + hex(addr(&map)) + " is corrupt (";
    map.num_elements = 2;
    CHECK(errorOf([&] { walkFlatHashMap(Remote(t.get()), addr(&map), layout, 64, "a test map", "a test map entry", corrupt, visit); }) ==
          line + "it holds 1 keys, its size says 2)");
    map.num_elements = 1, map.slots_minus_one = 5;
    CHECK(errorOf([&] { walkFlatHashMap(Remote(t.get()), addr(&map), layout, 64, "a test map", "a test map entry", corrupt, visit); }) ==
          line + "5+1 slots)");
    map.slots_minus_one = 3, map.max_lookups = 9;
    CHECK(errorOf([&] { walkFlatHashMap(Remote(t.get()), addr(&map), layout, 64, "a test map", "a test map entry", corrupt, visit); }) ==
          line + "9 lookups in 4 slots)");
    map.max_lookups = 4, map.entries = 0;
    CHECK(errorOf([&] { walkFlatHashMap(Remote(t.get()), addr(&map), layout, 64, "a test map", "a test map entry", corrupt, visit); }) ==
          line + "no table)");
  }
}
