// dispatch-break on real PyTorch. Release builds have no break filter, so the breakpoints go on the
// kernels themselves: each computed-table entry (dispatchTable_, what the dispatcher calls) of the
// operator at the key, at its unboxed function (what at::_ops::<op>::call and ::redispatch call),
// at its sym_unboxed function for a kernel whose C++ signature takes c10::SymInt (it has no unboxed
// one, and KernelFunction::call prefers sym_unboxed), and at its boxed function, what callBoxed and
// redispatchBoxed call (every call from Python through torch.ops and OpOverload, so every call a
// TorchDispatchMode makes, and a boxed fallback's redispatch, such as PythonTLSSnapshot's): a kernel
// with an unboxed function is reached either way, and its boxed wrapper calls the kernel's
// operator() inlined, not through the unboxed function. Several kernels may share a function (a
// runtime functor's trampoline, a backend fallback), so a hit is only ours when the registers say
// so: the kernel's functor is its first argument, and the key set it was given selects the entry's
// slot (the dispatcher passes the set it looked the kernel up with); a boxed function's operator is
// the OperatorHandle it was given.
//
// Calling conventions (System V x86-64, c10 KernelFunction, 1.13 to 2.14):
//   unboxed  Ret fn(OperatorKernel* functor, DispatchKeySet ks, Args... args)
//            a Ret returned in memory (at::Tensor, tuples) takes rdi first: functor moves to rsi
//   sym_unboxed  the same, with the C++ types of SymInt schema types (c10::SymInt, SymIntArrayRef)
//            where an unboxed function has int64_t, IntArrayRef
//   boxed    void fn(OperatorKernel* functor, const OperatorHandle& op, DispatchKeySet ks, Stack* stack)
#include "source/c10/C10Breaks.h"

#include "source/c10/TorchPythonState.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "target/Remote.h"
#include "Session.h"
#include "source/c10/TorchSchema.h"
#include "source/c10/TorchView.h"
#include "target/TargetImage.h"

namespace dscope::inspect {

namespace {

constexpr uint64_t kMaxListTensors = 1024;  // a Tensor[] argument longer than this is corrupt memory

// One way into a computed-table entry a breakpoint asks for.
struct Site {
  const Operator* op;
  int key, slot;
  uint64_t functor, boxed, unboxed, sym_unboxed;
  // The entry's boxed function, where the entry also has an unboxed one (KernelFunction::callBoxed).
  bool boxed_call = false;
  // The function the dispatcher calls (KernelFunction::call's order): unboxed, else sym_unboxed,
  // else boxed; or callBoxed's. The first two are called with the unboxed convention.
  uint64_t location() const { return boxed_call ? boxed : unboxed ? unboxed : sym_unboxed ? sym_unboxed : boxed; }
  bool calledUnboxed() const { return !boxed_call && (unboxed || sym_unboxed); }
  bool symInt() const { return calledUnboxed() && !unboxed; }
};

std::vector<Site> sites(const TorchView& tv, const std::vector<DispatchBreakpoint>& breaks) {
  const C10Layout& l = tv.layout();
  const uint64_t size = l.sizeof_KernelFunction;
  std::vector<Site> out;
  std::set<std::pair<uint64_t, int>> seen;  // (operator, slot): two breakpoints may ask for one
  std::vector<unsigned char> fn(size);
  for (const auto& b : breaks) {
    const int only = b.key.empty() ? -1 : checkedBreakKey(tv.keys(), b.key);
    for (const auto& op : tv.operators()) {
      if (!namesOperator(op.name, b.op)) continue;
      for (int k : tv.keys().runtimeKeys()) {
        const KeyInfo* info = tv.keys().byValue(k);
        if (!info || info->slot < 0 || (only >= 0 && k != only) || !seen.insert({op.entry, info->slot}).second) continue;
        tv.mem().read(op.entry + l.OperatorEntry_dispatchTable + info->slot * size, fn.data(), size, "a dispatch table");
        auto word = [&](uint64_t field) {
          uint64_t w;
          std::memcpy(&w, fn.data() + field, 8);
          return w;
        };
        Site site{&op, k, info->slot, word(l.KernelFunction_functor), word(l.KernelFunction_boxed), word(l.KernelFunction_unboxed),
                  word(l.KernelFunction_sym_unboxed)};
        // No kernel (the dispatcher reports an error before calling one), or a fallthrough (never called).
        if (!site.boxed || site.boxed == tv.fallthroughKernel()) continue;
        out.push_back(site);
        if (site.calledUnboxed()) {
          site.boxed_call = true;
          out.push_back(site);
        }
      }
    }
  }
  return out;
}

// The key set a call at a site's entry was given and the register of its first argument after it,
// by the site's calling convention; nullopt when the functor says it is another kernel's call (a
// trampoline several kernels share). Boxed: the operator handle (rsi) must be checked too.
struct EntryCall {
  uint64_t ks;
  int first;
};
std::optional<EntryCall> entryCall(uint64_t functor, bool called_unboxed, const dscope_stop_registers& r) {
  if (called_unboxed) {
    if (r.args[0] == functor) return EntryCall{r.args[1], 2};
    if (r.args[1] == functor) return EntryCall{r.args[2], 3};  // a return value in memory
    return std::nullopt;
  }
  if (r.args[0] != functor) return std::nullopt;
  return EntryCall{r.args[2], 3};  // then the Stack*
}

// Whether the key set selects the entry at `slot` (the dispatcher passes the set it looked the
// kernel up with): else this kernel runs for another of its keys.
bool selectsSlot(const KeyTable& keys, uint64_t ks, int slot) {
  const KeyInfo* chosen = keys.byValue(keys.highestKey(ks));
  return chosen && chosen->slot == slot;
}

// How a kernel's unboxed signature passes an argument of a schema type, in integer registers and
// stack slots (c10's C++ types for schema types; the System V rules for them). A SymInt kernel's
// signature (sym_unboxed) has c10::SymInt where an unboxed one has int64_t; SymInt's copy and
// destructor are not trivial, so a SymInt, or a std/c10::optional<SymInt>, is passed by a pointer
// to a copy: one word either way.
enum class Passing { Tensor, OptionalTensor, TensorList, OneWord, TwoWords, NoWord, Unknown };

Passing passing(const std::string& type, bool sym_int) {
  if (type == "Tensor") return Passing::Tensor;                  // const at::Tensor&
  if (type == "Tensor?") return Passing::OptionalTensor;         // const optional<at::Tensor>&
  if (type == "SymInt?") return sym_int ? Passing::OneWord : Passing::TwoWords;  // optional<SymInt> / optional<int64_t>
  if (type == "Tensor[]") return Passing::TensorList;            // at::TensorList: data, size
  if (type == "float") return Passing::NoWord;                   // double, in an SSE register
  static const std::set<std::string> one = {
      // by value in one register, or (non-trivial types) by a pointer to a copy
      "int", "SymInt", "bool", "bool?", "ScalarType", "ScalarType?", "Layout", "Layout?", "MemoryFormat",
      "MemoryFormat?", "Device", "Device?", "Scalar", "Scalar?", "Tensor?[]", "Generator?", "Storage", "float?"};
  if (one.count(type)) return Passing::OneWord;
  static const std::set<std::string> two = {"str", "int?", "int[]", "SymInt[]", "float[]", "bool[]", "Dimname[]"};
  if (two.count(type)) return Passing::TwoWords;  // c10::ArrayRef (SymIntArrayRef), a string_view, optional<int64_t>
  return Passing::Unknown;
}

// Reads the words of the arguments a function got at its first instruction, in order.
class ArgumentWords {
 public:
  ArgumentWords(const TorchView& tv, const dscope_stop_registers& r, int first) : tv_(tv), r_(r), next_reg_(first) {}
  // The next argument of `words` words (1 or 2), from registers, or from the stack when they do not
  // hold it whole (an aggregate never straddles the two).
  std::vector<uint64_t> take(int words) {
    std::vector<uint64_t> out;
    if (next_reg_ + words <= 6) {
      for (int i = 0; i < words; ++i) out.push_back(r_.args[next_reg_++]);
    } else {
      for (int i = 0; i < words; ++i) out.push_back(tv_.mem().readPointer(r_.sp + 8 * ++stack_slot_, "a stack argument"));
    }
    return out;
  }

 private:
  const TorchView& tv_;
  const dscope_stop_registers& r_;
  int next_reg_;
  uint64_t stack_slot_ = 0;  // the return address is at sp; the stack arguments follow it
};

// An at::Tensor's key set (its first word is the TensorImpl*), checked as tensorKeySet checks it.
uint64_t keySetOfTensor(const TorchView& tv, uint64_t tensor) {
  return tv.tensorKeySet(tv.mem().readPointer(tensor, "a tensor"));
}

// The dispatch-relevant arguments of an unboxed call and the union of their key sets (what
// multi_dispatch_key_set gives). A type the reader cannot place ends the walk: the arguments after
// it are named in the note.
uint64_t unboxedArguments(const TorchView& tv, const std::vector<SchemaParameter>& params, const dscope_stop_registers& r,
                          int first, bool sym_int, DispatchExplanation& e) {
  ArgumentWords words(tv, r, first);
  uint64_t all = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const Passing how = passing(params[i].type, sym_int);
    if (how == Passing::Unknown) {
      std::string rest;
      for (size_t j = i; j < params.size(); ++j)
        if (params[j].type.rfind("Tensor", 0) == 0) rest += (rest.empty() ? "" : ", ") + params[j].name;
      if (!rest.empty())
        e.arguments_note = "not read: " + rest + " (after " + params[i].name + ", a " + params[i].type +
                           ", whose passing the reader does not know)";
      break;
    }
    if (how == Passing::NoWord) continue;
    const auto w = words.take(how == Passing::TwoWords || how == Passing::TensorList ? 2 : 1);
    if (how == Passing::Tensor) {
      const uint64_t ks = keySetOfTensor(tv, w[0]);
      all |= ks;
      e.arguments.push_back({params[i].name, tv.keys().keySetString(ks)});
    } else if (how == Passing::OptionalTensor) {
      // optional<at::Tensor>: where its engaged flag and its Tensor lie is the build's (c10::optional
      // puts the flag first, std::optional after the Tensor).
      const C10Layout& l = tv.layout();
      if (!tv.mem().read<uint8_t>(w[0] + l.OptionalTensor_engaged, "an optional tensor")) {
        e.arguments.push_back({params[i].name, "None"});
        continue;
      }
      const uint64_t ks = keySetOfTensor(tv, w[0] + l.OptionalTensor_payload);
      all |= ks;
      e.arguments.push_back({params[i].name, tv.keys().keySetString(ks)});
    } else if (how == Passing::TensorList) {
      if (w[1] > kMaxListTensors) fail("the Tensor[] argument " + params[i].name + " holds " + std::to_string(w[1]) + " tensors (corrupt memory?)");
      uint64_t list = 0;
      for (uint64_t t = 0; t < w[1]; ++t) list |= keySetOfTensor(tv, w[0] + 8 * t);
      all |= list;
      e.arguments.push_back({params[i].name, std::to_string(w[1]) + " tensors: " + tv.keys().keySetString(list)});
    }
  }
  return all;
}

// The same for a boxed call: the arguments are the last ones on its stack, as IValues.
uint64_t boxedArguments(const TorchView& tv, const std::vector<SchemaParameter>& params, uint64_t stack, DispatchExplanation& e) {
  const C10Layout& l = tv.layout();
  const uint64_t begin = tv.mem().readPointer(stack + l.StdVector_begin, "the argument stack");
  const uint64_t end = tv.mem().readPointer(stack + l.StdVector_end, "the argument stack");
  const uint64_t size = l.sizeof_IValue, n = params.size();
  if (end < begin || (end - begin) % size || (end - begin) / size < n || (end - begin) / size > 4096)
    fail("the argument stack at " + hex(stack) + " is corrupt (from " + hex(begin) + " to " + hex(end) + ")");
  const uint64_t tensor_tag = tv.profile().valueNamed("IValueTag", "Tensor");
  uint64_t all = 0;
  for (uint64_t i = 0; i < n; ++i) {
    if (params[i].type != "Tensor" && params[i].type != "Tensor?") continue;
    const uint64_t value = end - (n - i) * size;
    if (tv.mem().read<uint32_t>(value + l.IValue_tag, "an argument") != tensor_tag) {
      e.arguments.push_back({params[i].name, "None"});
      continue;
    }
    const uint64_t ks = tv.tensorKeySet(tv.mem().readPointer(value + l.IValue_payload, "an argument"));
    all |= ks;
    e.arguments.push_back({params[i].name, tv.keys().keySetString(ks)});
  }
  return all;
}

// computeDispatchKeySet: ((arguments | included) - excluded) & the operator's non-fallthrough mask
// (per backend when its fallthroughs differ by backend). `-` keeps backend bits (c10's operator-).
void computedSet(const TorchView& tv, const Site& site, uint64_t arguments, int64_t tid, DispatchExplanation& e) {
  const C10Layout& l = tv.layout();
  const auto [included, excluded] = tv.threadTls(tid);
  e.included = tv.keys().keySetString(included);
  e.excluded = tv.keys().keySetShown(excluded);
  e.python = torchPythonState(tv, tid);
  e.causes = tlsCauses(tv.keys(), included, excluded, *e.python);
  const uint64_t extractor = site.op->entry + l.OperatorEntry_dispatchKeyExtractor;
  uint64_t mask = tv.mem().readPointer(extractor + l.DispatchKeyExtractor_nonFallthroughKeys, "a key extractor");
  if (tv.mem().read<uint8_t>(extractor + l.DispatchKeyExtractor_requiresBitsetPerBackend, "a key extractor")) {
    const uint64_t backends = (arguments & l.set_full_backend_mask) >> 1;  // getBackendIndex()
    const uint64_t index = backends ? 64 - __builtin_clzll(backends) : 0;
    mask = tv.mem().readPointer(extractor + l.DispatchKeyExtractor_nonFallthroughKeysPerBackend + 8 * index, "a key extractor");
  }
  const uint64_t effective = (arguments | included) & (l.set_full_backend_mask | ~excluded);
  const uint64_t computed = effective & mask;
  for (int k : tv.keys().keysOf(effective))
    if (!KeyTable::has(computed, *tv.keys().byValue(k))) e.fallthrough.push_back(tv.keys().name(k));
  e.computed = tv.keys().keySetString(computed);
}

// Where c10 registers kernels: Dispatcher::registerImpl, registerFallback (0: not found), and where
// an OperatorName keeps its two strings.
struct Registrations {
  uint64_t impl = 0, fallback = 0;
  uint64_t name = 0, overload = 0;
};

Registrations registrations(const TorchView& tv) {
  Registrations out;
  if (auto a = tv.mem().findSymbol(tv.profile().symbol("registerImpl").c_str())) out.impl = *a;
  if (auto a = tv.mem().findSymbol(tv.profile().symbol("registerFallback").c_str())) out.fallback = *a;
  out.name = tv.layout().OperatorName_name;
  out.overload = tv.layout().OperatorName_overload_name;
  return out;
}

// Whether a stop at registerImpl or registerFallback registers a kernel for a breakpoint's
// operator (their kernels then change), from the registers and the registered name alone (no walk
// of the dispatcher): c10 registers hundreds of kernels after a breakpoint is placed (Python's
// meta kernels at import). At the entry of RegistrationHandleRAII
// Dispatcher::registerImpl(OperatorName, ...): the handle is returned in memory (rdi), `this` is
// rsi, and the OperatorName (two std::strings) is passed by reference to a copy (rdx).
// registerFallback changes every operator's table at its key.
bool registrationConcerns(const Remote& mem, const Registrations& at, const std::vector<DispatchBreakpoint>& breaks,
                          const dscope_stop_registers& r) {
  if (r.pc != at.impl) return !breaks.empty();
  std::string name = readCppString(mem, r.args[2] + at.name, "a registered operator's name");
  const std::string overload = readCppString(mem, r.args[2] + at.overload, "a registered operator's name");
  if (!overload.empty()) name += "." + overload;
  return std::any_of(breaks.begin(), breaks.end(), [&](const auto& b) { return namesOperator(name, b.op); });
}

// The kernel entries the breakpoints are on, each with what its call looks like in the registers
// at its first instruction, and the build's key table; and where kernels are registered: enough to
// let most stops there run on without reading the process (a shared trampoline running another
// kernel, the kernel called for another of its keys). Every other stop is explain()'s.
class PlacedKernels final : public PlacedBreaks {
 public:
  PlacedKernels(const TorchView& tv, const std::vector<DispatchBreakpoint>& breaks) {
    for (const Site& site : sites(tv, breaks)) sites_.push_back({site.location(), site.functor, site.slot, site.calledUnboxed()});
    keys_ = tv.keys();
    registrations_ = registrations(tv);
  }

  std::vector<uint64_t> locations() const override {
    std::set<uint64_t> kernels;
    for (const auto& site : sites_) kernels.insert(site.location);
    std::vector<uint64_t> out(kernels.begin(), kernels.end());
    for (uint64_t a : {registrations_.impl, registrations_.fallback})
      if (a) out.push_back(a);
    return out;
  }

  std::optional<dscope_hit_action> settled(const Remote& mem, const std::vector<DispatchBreakpoint>& breaks,
                                           const dscope_stop_registers& r) const override {
    if (r.pc && (r.pc == registrations_.impl || r.pc == registrations_.fallback))
      return registrationConcerns(mem, registrations_, breaks, r) ? DSCOPE_HIT_SYNC_ON_RETURN : DSCOPE_HIT_CONTINUE;
    if (callRuledOut(r)) return DSCOPE_HIT_CONTINUE;
    return std::nullopt;
  }

  // The sites were found for the old breakpoints; registerImpl and registerFallback stay where they are.
  void breaksChanged() override { sites_.clear(); }

 private:
  struct KernelSite {
    uint64_t location, functor;
    int slot;
    bool called_unboxed;
  };

  // A stop at one of the sites' locations whose registers show no site's call (what explain()
  // would answer, by the same rules); false elsewhere, or when memory must tell.
  bool callRuledOut(const dscope_stop_registers& r) const {
    bool located = false;
    for (const auto& site : sites_) {
      if (site.location != r.pc) continue;
      located = true;
      const auto call = entryCall(site.functor, site.called_unboxed, r);
      if (call && selectsSlot(keys_, call->ks, site.slot)) return false;  // it may be this site's
    }
    return located;
  }

  std::vector<KernelSite> sites_;
  KeyTable keys_;
  Registrations registrations_;
};

void refuseCore(const Remote& mem) {
  if (mem.isCore()) fail("cannot arm a dispatch breakpoint: the target is not writable (a core file?)");
}

}  // namespace

void C10Breaks::checkTarget() const { refuseCore(tv_.mem()); }

const KeyTable* C10Breaks::keys() const { return &tv_.keys(); }

std::shared_ptr<const std::vector<Operator>> C10Breaks::operators() const { return tv_.operatorList(); }

std::unique_ptr<PlacedBreaks> C10Breaks::place(const std::vector<DispatchBreakpoint>& breaks) const {
  return std::make_unique<PlacedKernels>(tv_, breaks);
}

std::optional<DispatchExplanation> C10Breaks::explain(const std::vector<DispatchBreakpoint>& breaks,
                                                     const dscope_stop_registers& r) const {
  const TorchView& tv = tv_;
  const C10Layout& l = tv.layout();
  for (const Site& site : sites(tv, breaks)) {
    if (site.location() != r.pc) continue;
    const auto call = entryCall(site.functor, site.calledUnboxed(), r);
    if (!call || !selectsSlot(tv.keys(), call->ks, site.slot)) continue;
    const uint64_t ks = call->ks;
    // A boxed wrapper that calls the unboxed function out of line (not inlined) was stopped at its
    // own entry already: its return address is in the site's boxed function.
    if (site.calledUnboxed() && site.boxed) {
      try {
        const uint64_t returned = tv.mem().readPointer(r.sp, "the stopped thread's stack");
        if (tv.mem().functionsAt(returned - 1, true).entry == site.boxed) continue;
      } catch (const InspectError&) {
      }
    }
    if (!site.calledUnboxed()) {
      uint64_t def = 0;
      try {
        def = tv.mem().readPointer(r.args[1] + l.OperatorHandle_operatorDef, "an operator handle");
      } catch (const InspectError&) {
        continue;
      }
      if (def + l.OperatorDef_op != site.op->entry) continue;  // another operator's
    }

    DispatchExplanation e;
    e.op = site.op->name;
    e.key = tv.keys().name(site.key);
    e.slot = site.slot;
    e.dispatched = tv.keys().keySetString(ks);
    e.tid = r.tid, e.pc = r.pc, e.sp = r.sp;
    if (auto params = schemaArguments(tv, *site.op)) {
      const uint64_t arguments = site.calledUnboxed() ? unboxedArguments(tv, *params, r, call->first, site.symInt(), e)
                                                      : boxedArguments(tv, *params, r.args[call->first], e);
      if (e.arguments_note.empty()) computedSet(tv, site, arguments, r.tid, e);
    } else {
      e.arguments_note = "the operator has no schema: its arguments cannot be told apart";
    }
    if (!e.included) {
      const auto [included, excluded] = tv.threadTls(r.tid);
      e.included = tv.keys().keySetString(included), e.excluded = tv.keys().keySetShown(excluded);
      e.python = torchPythonState(tv, r.tid);
      e.causes = tlsCauses(tv.keys(), included, excluded, *e.python);
    }
    // The computed entry explains the table's (the same kernel unless registrations are changing).
    const TableEntry entry = tv.computedEntry(*site.op, site.key);
    Kernel kernel = entry.kernel;
    kernel.functor = site.functor, kernel.boxed = site.boxed, kernel.unboxed = site.unboxed, kernel.sym_unboxed = site.sym_unboxed;
    e.kernel = tv.kernelName(kernel);
    if (entry.kernel.functor == site.functor && entry.kernel.boxed == site.boxed) {
      const std::string registered_key = entry.registered_key >= 0 ? tv.keys().name(entry.registered_key) : "";
      e.why = whyText(entry.source, e.key, registered_key, e.op);
      e.registered = entry.kernel.debug;
    }
    return e;
  }
  return std::nullopt;
}

void PendingC10Breaks::refuseUnprofiled() const {
  try {
    std::rethrow_exception(why_);
  } catch (const RuntimeNotLoaded&) {
  } catch (const InspectError& e) {
    const auto libtorch = TorchView::findLibtorch(mem_);
    if (libtorch && !findTorchProfile(fileBuildId(libtorch->path))) fail("cannot arm a dispatch breakpoint: " + messageOf(e));
  }
}

void PendingC10Breaks::checkTarget() const {
  refuseCore(mem_);
  refuseUnprofiled();
}

const KeyTable* PendingC10Breaks::keys() const {
  const auto libtorch = TorchView::findLibtorch(mem_);
  if (!libtorch) return nullptr;
  profile_ = findTorchProfile(fileBuildId(libtorch->path));
  return profile_ ? &profile_->profile.keys : nullptr;
}

std::unique_ptr<PlacedBreaks> PendingC10Breaks::place(const std::vector<DispatchBreakpoint>&) const {
  refuseUnprofiled();
  return nullptr;
}

std::optional<DispatchExplanation> PendingC10Breaks::explain(const std::vector<DispatchBreakpoint>&,
                                                            const dscope_stop_registers&) const {
  std::rethrow_exception(why_);
}

}  // namespace dscope::inspect
