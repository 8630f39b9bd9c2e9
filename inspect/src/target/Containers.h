// Walkers of the standard containers the readers meet in a target: libstdc++'s std::string,
// std::vector, std::list, the node list of a std::unordered_set, std::optional, c10's
// ska::flat_hash_map, and a null-terminated chain of objects linked by their own pointers.
// Each reads through Remote, so every read is bounded and checked, and knows only the container's
// own rules: where its members lie is passed in by the caller (a small struct of offsets, filled
// from the profile's typed layout), as is how a container that breaks them is reported (the
// caller's one line, which names the object the container belongs to; a vector's line is its own).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "target/Remote.h"

namespace dscope::inspect {

// The line (without "dscope: ") saying a container is corrupt, given the value that broke its
// rule (a string's length, an engaged flag's byte).
using CorruptLine = std::function<std::string(uint64_t value)>;

// libstdc++'s std::string: the pointer to its characters and their count.
struct StdStringLayout {
  uint64_t data = 0;
  uint64_t size = 0;
};
// The string at addr, at most max_length bytes (a longer one fails with too_long(length)). The
// data pointer is read first, then the length, and the characters only when there are any.
std::string readStdString(const Remote& mem, uint64_t addr, const StdStringLayout& layout, uint64_t max_length,
                          const char* what, const CorruptLine& too_long);

// libstdc++'s std::vector: its [begin, end) pointers.
struct StdVectorLayout {
  uint64_t begin = 0;
  uint64_t end = 0;
};
// The vector's [begin, end), checked: whole elements of element_size (> 0) bytes, at most max of them;
// else "<what> at <addr> is corrupt (a vector from <begin> to <end>)".
std::pair<uint64_t, uint64_t> stdVectorRange(const Remote& mem, uint64_t addr, const StdVectorLayout& layout,
                                             uint64_t element_size, uint64_t max, const char* what);
// The addresses of its elements, checked as stdVectorRange checks them.
std::vector<uint64_t> stdVectorElements(const Remote& mem, uint64_t addr, const StdVectorLayout& layout,
                                        uint64_t element_size, uint64_t max, const char* what);

// libstdc++'s std::list: a circular list through its head (the list object itself), whose nodes
// hold their value at `data`.
struct StdListLayout {
  uint64_t next = 0;  // a node's (and the head's) pointer to the next node
  uint64_t prev = 0;  // ... to the previous one: the head's is the last node
  uint64_t size = 0;  // the list's count
  uint64_t data = 0;  // a node's value
};
// What a walk is called in its refusal ("<name()> does not end (corrupt memory)"), made only when
// one is given: the walks run for every command that reads kernels, their refusals almost never.
using ContainerName = std::function<std::string()>;

// Calls visit(value address) for each node from the head's next until the walk is back at the
// head, and returns how many it visited. A list of more than max_nodes nodes (a cycle that misses
// the head, or a wild link into other memory) fails with "<name()> does not end (corrupt memory)".
// read_ahead > 0: where a node's page is not read yet, the pages of the read_ahead bytes from it
// are read at once (nodes allocated one after another lie close together), until that fails once.
uint64_t walkStdList(const Remote& mem, uint64_t head, const StdListLayout& layout, uint64_t max_nodes,
                     const char* what, const ContainerName& name, const std::function<void(uint64_t value)>& visit,
                     uint64_t read_ahead = 0);
// The list's count, as its size member says (not walked).
uint64_t stdListSize(const Remote& mem, uint64_t head, const StdListLayout& layout, const char* what);

// A null-terminated singly linked node list (the nodes of a libstdc++ std::unordered_set, from its
// before-begin node): `first` is the offset of the first node's pointer in the container, `next`
// that of a node's pointer to the next one.
struct ForwardListLayout {
  uint64_t first = 0;
  uint64_t next = 0;
};
// Calls visit(node address) for each node; more than max_nodes fails as walkStdList does.
uint64_t walkForwardList(const Remote& mem, uint64_t list, const ForwardListLayout& layout, uint64_t max_nodes,
                         const char* what, const ContainerName& name, const std::function<void(uint64_t node)>& visit);

// A chain of objects, each pointing to the next (0 ends it), whose links only the caller can read:
// visit(node) returns the next node. The walk stops at 0 or after max_nodes nodes (the count the
// chain's owner states); a node met twice fails with loops_back(node).
uint64_t walkChain(uint64_t first, uint64_t max_nodes, const std::function<uint64_t(uint64_t node)>& visit,
                   const CorruptLine& loops_back);

// std::optional (and c10::optional): its engaged flag, a bool, and its value.
struct OptionalLayout {
  uint64_t engaged = 0;
  uint64_t payload = 0;
};
// The value's address when the optional at addr is engaged, nullopt when not; a flag byte that is
// neither 0 nor 1 fails with corrupt(byte).
std::optional<uint64_t> engagedValue(const Remote& mem, uint64_t addr, const OptionalLayout& layout, const char* what,
                                     const CorruptLine& corrupt);

// ska::flat_hash_map (c10/util/flat_hash_map.h) with its fibonacci_hash_policy: a table of
// num_slots_minus_one + max_lookups entries of entry_size bytes, each starting with its int8
// distance from the slot its key hashes to (negative: empty).
struct FlatHashMapLayout {
  uint64_t entries = 0;
  uint64_t num_slots_minus_one = 0;
  uint64_t max_lookups = 0;
  uint64_t num_elements = 0;
  uint64_t entry_size = 0;
  uint64_t entry_distance = 0;  // the entry's distance_from_desired
};
// A full entry of the table, as the walk visits it.
struct FlatHashEntry {
  uint64_t index = 0;  // its slot in the table
  uint64_t addr = 0;   // the entry (its value: the caller's layout of the entry type)
  int8_t distance = 0;
  int bits = 0;  // log2 of the table's slot count
  int8_t max_lookups = 0;
  // Whether a key of this hash belongs here: in the slot it hashes to plus its distance, within
  // the table's lookup bound (where ska's find looks for it).
  bool holds(uint64_t hash) const;
};
// Checks the table's shape (a power-of-two slot count of at most max_slots, the lookup bound ska
// computes for it, a table pointer), calls visit for each full entry in slot order, then checks
// that as many were full as the map counts. Every refusal is one line starting with corrupt()
// ("the kernel map of aten::mm at 0x... is corrupt (") and closed with ")". `what` names the map
// in a failed read, entry_what an entry.
void walkFlatHashMap(const Remote& mem, uint64_t map, const FlatHashMapLayout& layout, uint64_t max_slots,
                     const char* what, const char* entry_what, const ContainerName& corrupt,
                     const std::function<void(const FlatHashEntry&)>& visit);

}  // namespace dscope::inspect
