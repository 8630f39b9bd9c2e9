#include "target/Containers.h"

#include <algorithm>
#include <bit>
#include <unordered_set>

namespace dscope::inspect {

std::string readStdString(const Remote& mem, uint64_t addr, const StdStringLayout& layout, uint64_t max_length,
                          const char* what, const CorruptLine& too_long) {
  const uint64_t data = mem.readPointer(addr + layout.data, what);
  const uint64_t size = mem.readPointer(addr + layout.size, what);
  if (size > max_length) fail(too_long(size));
  std::string s(size, '\0');
  if (size) mem.read(data, s.data(), size, what);
  return s;
}

std::pair<uint64_t, uint64_t> stdVectorRange(const Remote& mem, uint64_t addr, const StdVectorLayout& layout,
                                             uint64_t element_size, uint64_t max, const char* what) {
  const uint64_t begin = mem.readPointer(addr + layout.begin, what), end = mem.readPointer(addr + layout.end, what);
  if (end < begin || (end - begin) % element_size || (end - begin) / element_size > max)
    fail(std::string(what) + " at " + hex(addr) + " is corrupt (a vector from " + hex(begin) + " to " + hex(end) + ")");
  return {begin, end};
}

std::vector<uint64_t> stdVectorElements(const Remote& mem, uint64_t addr, const StdVectorLayout& layout,
                                        uint64_t element_size, uint64_t max, const char* what) {
  const auto [begin, end] = stdVectorRange(mem, addr, layout, element_size, max, what);
  std::vector<uint64_t> out;
  for (uint64_t e = begin; e < end; e += element_size) out.push_back(e);
  return out;
}

uint64_t walkStdList(const Remote& mem, uint64_t head, const StdListLayout& layout, uint64_t max_nodes,
                     const char* what, const ContainerName& name, const std::function<void(uint64_t value)>& visit,
                     uint64_t read_ahead) {
  uint64_t count = 0;
  bool reading_ahead = read_ahead > 0;
  // Every node but the head is visited once: a walk that has not met the head after max_nodes
  // nodes never will (a cycle that skips it, or links into other memory).
  for (uint64_t node = mem.readPointer(head + layout.next, what); node != head;
       node = mem.readPointer(node + layout.next, what)) {
    if (count >= max_nodes) fail(name() + " does not end (corrupt memory)");
    if (reading_ahead && !mem.holds(node)) reading_ahead = mem.prefetch(node, read_ahead);
    visit(node + layout.data);
    ++count;
  }
  return count;
}

uint64_t stdListSize(const Remote& mem, uint64_t head, const StdListLayout& layout, const char* what) {
  return mem.readPointer(head + layout.size, what);
}

uint64_t walkForwardList(const Remote& mem, uint64_t list, const ForwardListLayout& layout, uint64_t max_nodes,
                         const char* what, const ContainerName& name, const std::function<void(uint64_t node)>& visit) {
  uint64_t count = 0;
  for (uint64_t node = mem.readPointer(list + layout.first, what); node; node = mem.readPointer(node + layout.next, what)) {
    if (count >= max_nodes) fail(name() + " does not end (corrupt memory)");
    visit(node);
    ++count;
  }
  return count;
}

uint64_t walkChain(uint64_t first, uint64_t max_nodes, const std::function<uint64_t(uint64_t node)>& visit,
                   const CorruptLine& loops_back) {
  std::unordered_set<uint64_t> seen;
  uint64_t count = 0;
  for (uint64_t node = first; node && count < max_nodes; ++count) {
    if (!seen.insert(node).second) fail(loops_back(node));
    node = visit(node);
  }
  return count;
}

std::optional<uint64_t> engagedValue(const Remote& mem, uint64_t addr, const OptionalLayout& layout, const char* what,
                                     const CorruptLine& corrupt) {
  // A bool is stored as 0 or 1: another byte is not a flag, and reading it as one would print a
  // value that is not there (or hide one that is).
  const uint8_t engaged = mem.read<uint8_t>(addr + layout.engaged, what);
  if (engaged > 1) fail(corrupt(engaged));
  if (!engaged) return std::nullopt;
  return addr + layout.payload;
}

namespace {

// fibonacci_hash_policy: the slot a hash wants in a table of 2^bits slots, and the lookups a
// table of that size allows (compute_max_lookups).
uint64_t desiredSlot(uint64_t hash, int bits) { return bits ? (11400714819323198485ull * hash) >> (64 - bits) : 0; }
int8_t maxLookups(int bits) { return static_cast<int8_t>(std::max(4, bits)); }

}  // namespace

bool FlatHashEntry::holds(uint64_t hash) const {
  // bits == 0: the empty table (ska's static one), which holds nothing.
  return bits && distance < max_lookups && desiredSlot(hash, bits) + static_cast<uint64_t>(distance) == index;
}

void walkFlatHashMap(const Remote& mem, uint64_t map, const FlatHashMapLayout& layout, uint64_t max_slots,
                     const char* what, const char* entry_what, const ContainerName& corrupt,
                     const std::function<void(const FlatHashEntry&)>& visit) {
  const uint64_t entries = mem.readPointer(map + layout.entries, what);
  const uint64_t slots_minus_one = mem.readPointer(map + layout.num_slots_minus_one, what);
  const int8_t max_lookups = mem.read<int8_t>(map + layout.max_lookups, what);
  const uint64_t num_elements = mem.readPointer(map + layout.num_elements, what);
  if (slots_minus_one >= max_slots || (slots_minus_one & (slots_minus_one + 1)))
    fail(corrupt() + std::to_string(slots_minus_one) + "+1 slots)");
  const int bits = slots_minus_one ? std::bit_width(slots_minus_one) : 0;
  // An empty map points at ska's static empty table of min_lookups-1 lookups.
  if (slots_minus_one ? max_lookups != maxLookups(bits) : max_lookups != 3)
    fail(corrupt() + std::to_string(max_lookups) + " lookups in " + std::to_string(slots_minus_one + 1) + " slots)");
  if (!entries) fail(corrupt() + "no table)");
  // The slots, and the max_lookups - 1 entries past them that a key near the end may probe into;
  // ska's end marker (distance 0: it would read as full) follows them and is not read.
  const uint64_t slots = slots_minus_one + static_cast<uint64_t>(max_lookups);
  uint64_t full = 0;
  for (uint64_t i = 0; i < slots; ++i) {
    const uint64_t e = entries + i * layout.entry_size;
    const int8_t distance = mem.read<int8_t>(e + layout.entry_distance, entry_what);
    if (distance < 0) continue;  // distance_from_desired < 0: empty
    visit({i, e, distance, bits, max_lookups});
    ++full;
  }
  if (full != num_elements)
    fail(corrupt() + "it holds " + std::to_string(full) + " keys, its size says " + std::to_string(num_elements) + ")");
}

}  // namespace dscope::inspect
