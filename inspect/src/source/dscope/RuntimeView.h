// The runtime's state as read out of a target: the validated descriptor, the operator list,
// operator snapshots for the shared formatter, kernels, thread record blocks and their TLS.
// Offsets and sizes come from the layout profile the runtime's descriptor carries (layout()),
// resolved by name when the view is made, so a reader of one build reads a runtime of another.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/Dispatcher.h"
#include "source/dscope/DscopeProfile.h"
#include "target/Remote.h"
#include "dscope/DebugInterface.h"
#include "dscope/OperatorEntry.h"
#include "dscope/format/OperatorSnapshot.h"

namespace dscope::inspect {

// Hard caps on top of every count the runtime stores (a corrupt count must not mean a long walk).
constexpr uint32_t kMaxOperators = 1u << 20;
constexpr uint32_t kMaxKernelsPerOperator = 4096;
constexpr uint32_t kMaxThreadBlocks = 1u << 16;
// A dispatch takes well over 64 bytes of stack, so 2^32 of them would need 256 GiB: a deeper
// record block is corrupt memory (a pop at depth 0 leaves 2^64 - 1).
constexpr uint64_t kMaxPlausibleDepth = 1ull << 32;
// Linux thread ids are at most 2^22 (PID_MAX_LIMIT).
constexpr int64_t kMaxThreadId = 1 << 22;

// An impl::AnnotatedKernel read from the target.
struct RemoteKernel {
  uint64_t addr = 0;
  uint64_t functor = 0, boxed_fn = 0, unboxed_fn = 0;
  std::string debug;
  std::optional<std::string> inferred_schema;
  int key = 0;  // the key it is registered at, a value of the runtime's key table
  uint64_t next = 0;
};

// A target's operator list as RuntimeView::operators() reads it, with an index by address.
struct OperatorList {
  std::vector<Operator> ops;
  std::unordered_map<uint64_t, size_t> by_addr;  // operatorName() without a read
  std::vector<std::string> warnings;             // the walk's, repeated whenever the list is used
};

// One computed dispatch-table entry, with the kernel behind it.
struct RemoteTableEntry {
  int key = 0;  // a runtime key of the runtime's key table (0: Undefined)
  int slot = 0;
  impl::TableEntrySource source = impl::TableEntrySource::Missing;
  RemoteKernel kernel;
};

// A copy of one dscope_thread_records block and where it lives.
struct ThreadBlock {
  uint64_t addr = 0;
  dscope_thread_records records{};
  // The thread as the target knows it: records.tid is the id the thread sees itself by, which in a
  // pid namespace of its own is not the debugger's (ThreadIds). The block's own id when no thread
  // has it (a dead block's, a corrupt one's).
  int64_t tid = 0;
  std::string shown_tid;  // "4242 (tid 5 in its pid namespace)", or "5" where the ids agree
  std::string corrupt;  // why its fields cannot be a thread's (tid, state, depth); "" when they can
};

class RuntimeView {
 public:
  // Finds dscope_debug_descriptor and refuses (InspectError) unless magic, version and pointer
  // size are this library's and the profile text it carries is a complete profile whose digest is
  // the descriptor's layout hash. Its keys, records, tables and TLS sets are decoded with that
  // profile's key table, whatever keys this library was built with.
  explicit RuntimeView(const Remote& mem);

  const Remote& mem() const { return mem_; }
  const struct dscope_debug_descriptor_t& descriptor() const { return descriptor_; }
  uint64_t descriptorAddress() const { return descriptor_addr_; }
  // The offsets and sizes of the runtime being read (its descriptor's profile).
  const dscope_layout_profile& layout() const { return profile_->layout; }
  // The runtime's own key table (its descriptor's profile).
  const KeyTable& keys() const { return profile_->profile.keys; }

  // ---- operators ----
  // Registration order; names read once per view.
  const std::vector<Operator>& operators() const;
  // The same list, shared (the model's operatorList()).
  std::shared_ptr<const std::vector<Operator>> operatorList() const;
  // Why the list may lack an operator (the walk's last warning), or "".
  std::string incompleteListNote() const;
  // An operator's name; InspectError when op is no operator (its name unreadable or no name).
  std::string operatorName(uint64_t op) const;
  // The same, or nullopt: for checking whether a pointer read from a record is an operator.
  std::optional<std::string> tryOperatorName(uint64_t op) const;
  // What OperatorEntry::snapshot() builds in-process, from remote memory (without the computed
  // table unless with_table).
  format::OperatorSnapshot snapshot(uint64_t op, bool with_table = true) const;
  // The computed entry of a runtime key (Undefined: slot 0); InspectError for a value that is no
  // runtime key of the runtime's table.
  RemoteTableEntry tableEntry(uint64_t op, int key) const;
  // The AnnotatedKernel address an operator's table holds at a slot; 0 past the table.
  uint64_t tableKernel(uint64_t op, int slot) const {
    const RemoteTable& t = table(op);
    return slot >= 0 && static_cast<size_t>(slot) < t.kernels.size() ? t.kernels[slot] : 0;
  }
  // Every entry, Undefined first then slot order.
  std::vector<RemoteTableEntry> tableEntries(uint64_t op) const;
  // The entries that hold a kernel (not the missing sentinel), Undefined first then slot order:
  // the rows of _dispatch_dump_table.
  std::vector<RemoteTableEntry> validTableEntries(uint64_t op) const;

  // ---- kernels ----
  RemoteKernel kernel(uint64_t addr) const;
  // The runtime's sentinel kernels (KernelFunction::isFallthrough() and the like compare boxed_fn_
  // with them), by the addresses its descriptor holds.
  bool isFallthrough(const RemoteKernel& k) const {
    return k.boxed_fn == sentinel(descriptor_.fallthrough_kernel, "fallthrough_kernel");
  }
  bool isMissing(const RemoteKernel& k) const { return k.boxed_fn == sentinel(descriptor_.missing_kernel, "missing_kernel"); }
  bool isAmbiguousAutogradOther(const RemoteKernel& k) const {
    return k.boxed_fn == sentinel(descriptor_.ambiguous_autograd_other_kernel, "ambiguous_autograd_other_kernel");
  }
  // The user's function when the debugger can name it (else the trampoline's name or an address).
  std::string kernelSymbol(const RemoteKernel& k) const;

  // ---- threads ----
  // The registry's blocks, newest first; a walk that ends before the runtime's block count (a
  // foreign block, a broken link) leaves a warning.
  std::vector<ThreadBlock> threadBlocks() const;
  // The decoded TLS include/exclude sets of an alive thread's block, raw (stored XOR the key
  // table's defaults); InspectError when the block's tls pointer is not that thread's TLS or the
  // sets hold bits no key has.
  std::pair<uint64_t, uint64_t> threadTls(const ThreadBlock& b) const;

  // ---- what a walk could not read whole ----
  // One line each (without "dscope: "), printed after the command's answer: a list shorter than
  // the count the runtime keeps, an entry skipped as corrupt.
  const std::vector<std::string>& warnings() const { return warnings_; }
  void warn(std::string line) const;

 private:
  // The descriptor cannot be used: not there yet (RuntimeNotLoaded), or unusable; either way the
  // program mismatch of a core opened with another executable, when that is the cause.
  enum NoRuntime { kNotLoaded, kUnusable };
  [[noreturn]] void noRuntime(NoRuntime kind, const std::string& message) const;

 public:

 private:
  uint64_t dispatcher() const;
  // A sentinel kernel's address (a descriptor field); InspectError when the descriptor holds none
  // (corrupt memory) or the debugger has not loaded the runtime library, whose memory kernels are
  // decoded from.
  uint64_t sentinel(const void* address, const char* field) const;

  std::string readText(uint64_t addr, const char* what) const;
  // The descriptor's profile text, read, parsed and checked against its layout hash.
  std::shared_ptr<const DscopeProfile> readProfile() const;

  const Remote& mem_;
  uint64_t descriptor_addr_ = 0;
  mutable std::vector<std::string> warnings_;
  struct dscope_debug_descriptor_t descriptor_{};
  std::shared_ptr<const DscopeProfile> profile_;
  // Shared (not copied) with the cache of the last target read: a copy of 3 693 names per
  // command cost more than the command itself.
  mutable std::shared_ptr<const OperatorList> operators_;
  mutable std::unordered_map<uint64_t, std::string> names_;  // operators read one by one
  mutable std::unordered_map<uint64_t, RemoteKernel> kernels_;
  // An operator's computed table, read in two bulk reads (one per array) instead of two per slot;
  // as many slots as the runtime's key table counts.
  struct RemoteTable {
    std::vector<uint64_t> kernels;
    std::vector<uint8_t> sources;
  };
  const RemoteTable& table(uint64_t op) const;
  mutable std::unordered_map<uint64_t, RemoteTable> tables_;
  mutable bool runtime_library_found_ = false;
};

// The block of thread tid (0: the first alive block). A block found corrupt is no thread's:
// InspectError saying so, as when the thread's block may be in a part of the list that was lost.
const ThreadBlock& selectThread(const RuntimeView& rt, const std::vector<ThreadBlock>& blocks, int64_t tid);
// "dscope: the record block at 0x... is corrupt (state 7 is neither alive nor dead)"
std::string corruptBlockLine(const ThreadBlock& b);

}  // namespace dscope::inspect
