// The one dispatcher model, in c10's own terms: operators, an operator's registrations and
// computed table, kernels, the key table, threads' TLS key sets, what a value's key set is. Two
// sources implement it: our runtime read through its descriptor (source/dscope) and a real c10
// build read through its layout profile (source/c10). Commands are written once over it and never
// ask which runtime they read; keys are the source's own key values, named by its key table.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dscope/OperatorEntry.h"
#include "dscope/format/OperatorSnapshot.h"
#include "dscope/inspect.h"
#include "model/KeyTable.h"
#include "stack/DispatchSummary.h"

namespace dscope::inspect {

class BreakSupport;

// An impl::AnnotatedKernel: its KernelFunction's pointers and its "registered at ..." string. A
// c10 kernel whose C++ signature takes c10::SymInt has sym_unboxed and no unboxed function
// (makeFromUnboxedFunctor); KernelFunction::call prefers sym_unboxed.
struct Kernel {
  uint64_t addr = 0;
  uint64_t functor = 0, boxed = 0, unboxed = 0, sym_unboxed = 0;
  std::string debug;
  bool valid() const { return boxed != 0; }  // KernelFunction::isValid()
};
// The same KernelFunction: the same functor and functions.
inline bool sameKernel(const Kernel& a, const Kernel& b) {
  return a.functor == b.functor && a.boxed == b.boxed && a.unboxed == b.unboxed && a.sym_unboxed == b.sym_unboxed;
}

struct Operator {
  uint64_t entry = 0;  // its impl::OperatorEntry
  std::string name;    // "aten::add.Tensor"
};

// One entry of a computed dispatch table, as OperatorEntry::computeDispatchTableEntryWithDebug
// finds it: the kernel, why (c10's rules and labels), and the key it was registered at (an alias
// key for an alias kernel; -1 for a backend fallback or none).
struct TableEntry {
  int key = 0;
  int slot = -1;
  Kernel kernel;
  impl::TableEntrySource source = impl::TableEntrySource::Missing;
  int registered_key = -1;
  bool fallthrough = false;
  bool ambiguous() const { return source == impl::TableEntrySource::AmbiguousAutogradOther; }
  bool present() const { return source != impl::TableEntrySource::Missing; }
};

// Why a computed entry of `op` at `key` holds what it holds (c10's computeDispatchTableEntry
// rules), its kernel registered at `registered_key`: the `why:` line of `op-table OP --key K` and
// of a dispatch-break stop.
std::string whyText(impl::TableEntrySource source, const std::string& key, const std::string& registered_key,
                    const std::string& op);

// A kernel as the dispatch table the dispatcher indexes stores it (not recomputed): the functions
// a dispatch enters it through, by which a stack frame is told to be that kernel.
struct StoredKernel {
  const Operator* op = nullptr;  // an entry of the source's operatorList()
  int key = 0;                   // the runtime key whose slot holds it
  // What the slot points at or holds: our runtime's impl::AnnotatedKernel, a c10 build's
  // KernelFunction (the dispatch table's own element).
  uint64_t kernel = 0;
  uint64_t functor = 0;          // its functor (c10: the OperatorKernel object), 0 for none
  // The functions a dispatch enters it through, 0 for none: ours, a function kernel's own function
  // (its functor), the unboxed and the boxed function; c10's, the unboxed, boxed and sym_unboxed.
  uint64_t functions[3] = {};
};

// dispatch-trace's question, its options parsed and checked (commands/DispatchTraceCommand.cpp).
struct TraceRequest {
  std::optional<int64_t> thread;       // --thread N: a debugger thread number or an OS thread id
  bool all = false;                    // every thread
  bool frames = false;                 // rebuilt from the native stack where records are the default
  std::optional<uint64_t> max_frames;  // at least 1
  bool full = false, json = false;
};

// One part of a thread's Python dispatch state: stated by the build's profile or not (1.13's has no
// TorchDispatchModeTLS of 2.x's form), and then read, or unreadable (the reason in `error`).
template <class T>
struct StatePart {
  bool in_profile = false;
  std::optional<T> value;  // nullopt where in_profile: unreadable
  std::string error;       // why it could not be read (an error line's message)
};

// What puts keys into a thread's TLS sets on PyTorch 2.x, read from the thread-locals the build's
// profile locates: the TorchDispatchMode stack (which includes Python and PythonTLSSnapshot), the
// Python dispatcher (PythonDispatcher), functorch's dynamic layers (FuncTorchDynamicLayerFront/
// BackMode) and inference mode (excludes the autograd keys, takes out ADInplaceOrView); grad mode
// changes no key set, and is told beside them.
struct PythonDispatchState {
  struct Mode {
    std::string name;   // its Python class's name
    std::string infra;  // "" for a mode on the user stack, else its infra slot (FAKE, PROXY, FUNCTIONAL)
  };
  struct Modes {
    uint64_t count = 0;       // the logical stack's length (engaged infra modes, then the user stack)
    std::vector<Mode> stack;  // bottom to top, as _get_current_dispatch_mode_stack() lists them; at most
                              // kMaxDispatchModes (count says how many there are)
  };
  static constexpr uint64_t kMaxDispatchModes = 64;
  StatePart<Modes> modes;
  StatePart<bool> python_dispatcher, grad_mode, inference_mode;
  StatePart<uint64_t> functorch_depth;  // DynamicLayers: transforms (vmap, grad, jvp, ...) the thread is inside

  bool any() const {
    return modes.in_profile || python_dispatcher.in_profile || grad_mode.in_profile || functorch_depth.in_profile;
  }
};

// One cause of keys in a thread's TLS sets and the keys it accounts for: those of its keys the sets
// hold as it puts them (included, excluded, default includes it takes out: removed) and those they
// do not hold now although it would (missing: a guard in a frame above changed them since).
struct TlsCause {
  std::string cause;  // "2 TorchDispatchModes", "Python dispatcher on", "functorch depth 1", "inference mode on"
  std::vector<std::string> included, excluded, removed;
  std::vector<std::string> missing;  // "Python not included", "ADInplaceOrView still included"
};

// The causes in effect in a thread's Python dispatch state (empty when none is), by c10's rules:
// a TorchDispatchMode includes Python and PythonTLSSnapshot, the Python dispatcher PythonDispatcher,
// a functorch layer FuncTorchDynamicLayerFrontMode and FuncTorchDynamicLayerBackMode, inference mode
// excludes the autograd keys (autograd_dispatch_keyset) and takes ADInplaceOrView out of the included set.
// Keys the key table lacks are left out.
std::vector<TlsCause> tlsCauses(const KeyTable& kt, uint64_t included, uint64_t excluded, const PythonDispatchState& s);

// A thread's TLS key sets, decoded (stored XOR the key table's defaults).
struct ThreadKeySets {
  int64_t tid = 0;
  std::string shown_tid;  // "4242 (tid 5 in its pid namespace)", or "4242"
  bool alive = true;      // false: the last sets a thread that has exited left behind
  uint64_t included = 0, excluded = 0;
  std::optional<PythonDispatchState> python;  // nullopt: the runtime has none (ours)
};

class Dispatcher {
 public:
  virtual ~Dispatcher() = default;

  // The JSON's "runtime" field, the same in every answer (docs/JSON-SCHEMA.md): "dscope" or
  // "pytorch" (which `--runtime torch` selects).
  virtual const char* runtimeId() const = 0;
  virtual const KeyTable& keys() const = 0;

  // ---- operators ----
  // Registration order, held by the source for as long as the target is unchanged.
  virtual std::shared_ptr<const std::vector<Operator>> operatorList() const = 0;
  const std::vector<Operator>& operators() const { return *operatorList(); }
  // By full name, else by base name when that names one operator; InspectError naming the
  // overloads a base name has, or up to three close names.
  Operator findOperator(const std::string& query) const;
  // What `_dispatch_dump` prints: the schema and every registration in key order (the snapshot's
  // table is left empty: computedTable gives it).
  virtual format::OperatorSnapshot registrations(const Operator& op) const = 0;
  // The computed entry of every runtime key, Undefined first, in the order _dispatch_dump_table
  // prints them (missing ones included).
  virtual std::vector<TableEntry> computedTable(const Operator& op) const = 0;
  // The computed entry of one runtime key.
  virtual TableEntry computedEntry(const Operator& op, int key) const = 0;
  // What a kernel is: the user's function where it can be named, else the functor's type or the
  // boxed function's symbol.
  virtual std::string kernelName(const Kernel& k) const = 0;

  // ---- threads and values ----
  // The TLS key sets of thread tid (the debugger's id), or of the first thread that has any when
  // tid is 0; InspectError saying why there are none.
  virtual ThreadKeySets threadKeySets(int64_t tid) const = 0;
  // Every stored kernel but fallthroughs (the dispatcher never enters those), once per operator and
  // runtime key, operators in registration order; an operator whose table cannot be read is
  // passed over (its kernels are then not recognized; the others' still are).
  virtual void visitStoredKernels(const std::function<void(const StoredKernel&)>& visit) const = 0;

  // The key set a number names: a raw key set, or what lies at an address (a tensor).
  virtual uint64_t keySetOfWord(uint64_t word) const = 0;
  // The key set a debugger value holds (a key set, a tensor, a pointer to either); InspectError.
  virtual uint64_t keySetOfValue(const std::string& text, const dscope_value& value) const = 0;

  // ---- stacks: frames -> dispatches ----
  // Every thread's dispatch state (dispatch-summary, dscope core's default answer): ours from its
  // dispatch records, a c10 build's rebuilt from the threads' native stacks.
  virtual ProcessDispatchState dispatchState() const = 0;
  // Whether dispatch-trace reads dispatch records by default (ours; --frames rebuilds from the
  // stack) rather than the stack alone (a c10 build).
  virtual bool tracesFromRecords() const = 0;
  // dispatch-trace's answer: ours from the records (or the stack with --frames), a c10 build's
  // from the stack.
  virtual std::string dispatchTrace(const TraceRequest& request) const = 0;

  // ---- dispatch breakpoints (model/BreakSupport.h) ----
  virtual const BreakSupport& breaks() const = 0;

 protected:
  // What an unknown name's error adds: the reason the operator list may be incomplete.
  virtual std::string incompleteListNote() const { return ""; }
};

// name is "ns::name" or "ns::name.overload" (identifiers; the overload may start with a digit), as
// PyTorch spells operators (every one of its 3 694 operator names has this shape).
bool isOperatorName(const std::string& name);
// Fails (one line) unless isOperatorName(name).
void checkOperatorName(const std::string& name);
// The operator full_name is `name`, or `name` is its base name (aten::add for aten::add.Tensor):
// what a dispatch breakpoint and $dispatch_op_is match.
bool namesOperator(const std::string& full_name, const std::string& name);

// Close operator names for "did you mean" (at most `limit`, best first).
std::vector<std::string> closeNames(const std::string& query, const std::vector<Operator>& ops, size_t limit);

}  // namespace dscope::inspect
