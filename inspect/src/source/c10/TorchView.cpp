#include "source/c10/TorchView.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "target/Remote.h"
#include "target/TargetImage.h"
#include "target/ThreadLocal.h"
#include "source/python/PythonView.h"

namespace dscope::inspect {

namespace {


// Bounds on what a profile's structures may hold: a larger count is corrupt memory.
constexpr uint64_t kMaxTorchOperators = 1u << 20;
constexpr uint64_t kListReadAhead = 256 << 10;  // what the operator walk reads at once where its page is not read yet
constexpr uint64_t kMaxKernelSlots = 1u << 16;
constexpr uint64_t kMaxKernelsPerKey = 1024;
constexpr int kMaxTypeBases = 64;  // a tp_base chain is a few types long; a longer one is damaged memory
constexpr int kMaxMetatypes = 4;   // object -> its type -> a metaclass -> type, whose type is itself

}  // namespace

namespace {

// A mangled type name as std::type_info::name() holds it: one the demangler reads whole.
bool isMangledTypeName(const std::string& name) {
  if (name.empty()) return false;
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::free(text);
  return status == 0;
}

}  // namespace

// The dynamic type of a C++ object with a vtable, as its type_info names it: vptr, then vptr[-1]
// -> type_info, whose name pointer follows its own vptr. Every step is checked, since a damaged
// pointer leads to bytes that would read as a name: the vtable, the type_info and the name lie in
// a module's read-only data, and the name is a valid mangled type name. "" with *why set when not.
std::string checkedTypeName(const Remote& mem, uint64_t addr, std::string* why) {
  auto inReadOnlyData = [&](uint64_t p) { return p % 8 == 0 && isReadOnlyData(mem.modules(), p); };
  try {
    const uint64_t vptr = mem.readPointer(addr, "an object");
    if (!inReadOnlyData(vptr))  // vptr[-1] then lies in the same segment, or the type_info check fails
      return *why = "its vtable pointer " + hex(vptr) + " points into no module's read-only data", "";
    const uint64_t type_info = mem.readPointer(vptr - 8, "a vtable");
    if (!inReadOnlyData(type_info)) return *why = "its vtable's type_info pointer " + hex(type_info) + " points into no module's read-only data", "";
    const uint64_t name_at = mem.readPointer(type_info + 8, "a type_info");
    if (!isReadOnlyData(mem.modules(), name_at)) return *why = "its type_info's name pointer " + hex(name_at) + " points into no module's read-only data", "";
    std::string name = mem.readString(name_at, "a type name");
    if (!name.empty() && name[0] == '*') name = name.substr(1);  // a local type's
    if (!isMangledTypeName(name)) return *why = "its type name '" + shown(name) + "' is no mangled C++ name", "";
    return name;
  } catch (const InspectError& e) {
    return *why = messageOf(e), "";
  }
}

std::string dynamicTypeName(const Remote& mem, uint64_t addr) {
  std::string why;
  return checkedTypeName(mem, addr, &why);
}

std::optional<ModuleMapping> mappedModule(const Remote& mem, const char* prefix) {
  for (const auto& m : mem.modules())
    if (std::string_view(m.path).substr(m.path.rfind('/') + 1).starts_with(prefix)) return m;
  return std::nullopt;
}

std::optional<ModuleMapping> TorchView::findLibtorch(const Remote& mem) { return mappedModule(mem, "libtorch_cpu.so"); }

namespace {

// What a TorchView finds and checks before its first answer (the library's build-id, the Dispatcher,
// the checks of validate), kept across commands under one memory generation, as Remote keeps
// pages, for as long as the same profile is found for that build-id (the profile directories may
// change between two commands).
struct KeptAnchors {
  uint64_t generation = 0;
  ModuleMapping libtorch;
  std::string build_id;
  std::shared_ptr<const C10Profile> profile;
  uint64_t dispatcher = 0, fallthrough = 0;
};
std::mutex anchors_mutex;
KeptAnchors kept_anchors;

}  // namespace

TorchView::TorchView(const Remote& mem, std::function<const PythonView*()> python) : mem_(mem), python_(std::move(python)) {
  auto lib = findLibtorch(mem);
  if (!lib) fail<RuntimeNotLoaded>("no PyTorch in this process (libtorch_cpu is not loaded)");
  libtorch_ = *lib;
  {
    std::unique_lock lock(anchors_mutex);
    const KeptAnchors k = kept_anchors;
    lock.unlock();
    if (k.generation && k.generation == mem.generation() && k.libtorch.start == libtorch_.start &&
        k.libtorch.path == libtorch_.path && findTorchProfile(k.build_id) == k.profile) {
      profile_ = k.profile, dispatcher_ = k.dispatcher, fallthrough_ = k.fallthrough;
      resolveAliases();
      return;
    }
  }
  const std::string id = fileBuildId(libtorch_.path);
  if (id.empty()) fail("cannot read the build-id of " + libtorch_.path);
  auto profile = findTorchProfile(id);
  if (!profile)
    fail("no layout profile for this PyTorch (" + libtorch_.path + ", build-id " + id +
         "); run dscope-profile where this torch is installed, or copy its " + id + ".profile into " +
         (profileDirectories().empty() ? std::string("a profile directory") : profileDirectories().back()));
  profile_ = std::move(profile);
  const auto stated = profile_->profile.build_ids.find("libtorch_cpu");
  const std::string profile_id = stated == profile_->profile.build_ids.end() ? "" : stated->second;
  if (profile_id != id)
    fail(profile_->profile.origin + " is for libtorch_cpu build-id " + profile_id +
         ", not " + id);
  auto singleton = mem.findSymbol(profile_->profile.symbol("realSingleton").c_str());
  if (!singleton || !*singleton) fail("libtorch_cpu exports no c10::Dispatcher::realSingleton()");
  dispatcher_ = *singleton + layout().Dispatcher_from_realSingleton;
  auto fallthrough = mem.findSymbol(profile_->profile.symbol("fallthrough_kernel").c_str());
  fallthrough_ = fallthrough ? *fallthrough : 0;
  resolveAliases();
  validate();
  std::lock_guard lock(anchors_mutex);
  kept_anchors = {mem.generation(), libtorch_, id, profile_, dispatcher_, fallthrough_};
}

void TorchView::resolveAliases() {
  const KeyTable& kt = keys();
  for (impl::TableAlias a : impl::kTableAliases) aliases_[static_cast<size_t>(a)] = kt.byName(impl::toString(a));
}

std::string TorchView::refusal() const { return profile_->profile.origin + " does not fit this process: "; }

// The checks of docs/DEBUG-INTERFACE.md §9 for a c10 profile, before any answer is given: the
// operator list (checkOperators, once per list) and the fallthrough sentinel.
void TorchView::validate() const {
  const std::string refuse = refusal();
  try {
    operators();
  } catch (const RuntimeNotLoaded&) {
    throw;
  } catch (const InspectError& e) {  // the profile's offsets lead nowhere readable
    const std::string why = messageOf(e);
    if (why.rfind(refuse, 0) == 0) throw;
    fail(refuse + why);
  }
  // Every build registers a fallthrough backend fallback for ADInplaceOrView.
  const KeyInfo* view = keys().byName("ADInplaceOrView");
  if (!view || view->slot < 0) fail(refuse + "its key table has no ADInplaceOrView slot");
  const uint64_t fallback = dispatcher_ + layout().Dispatcher_backendFallbackKernels +
                            view->slot * layout().sizeof_AnnotatedKernel + layout().AnnotatedKernel_kernel;
  if (!fallthrough_ || mem_.readPointer(fallback + layout().KernelFunction_boxed, "a backend fallback") != fallthrough_)
    fail(refuse + "the ADInplaceOrView backend fallback is not c10::fallthrough_kernel");
}

// The list walked must be as long as its size says, and its first operators named and annotated
// as c10 names and annotates them.
void TorchView::checkOperators(uint64_t count, const std::vector<Operator>& ops) const {
  const std::string refuse = refusal();
  if (count == 0 || count > kMaxTorchOperators)
    fail(refuse + "its operator list claims " + std::to_string(count) + " operators (not initialized yet?)");
  if (ops.size() != count)
    fail(refuse + "the operator list holds " + std::to_string(ops.size()) + " operators, its size says " +
         std::to_string(count));
  for (size_t i = 0; i < ops.size() && i < 16; ++i) {
    if (!isOperatorName(ops[i].name)) fail(refuse + "operator " + std::to_string(i) + " is named '" + shown(ops[i].name) + "'");
    if (auto debug = schemaDebug(ops[i]); debug && debug->rfind("registered at ", 0) != 0)
      fail(refuse + "the schema of " + ops[i].name + " says '" + shown(*debug) + "', not 'registered at ...'");
  }
}

std::string readCppString(const Remote& mem, uint64_t addr, const char* what) {
  return readStdString(mem, addr, kStdStringLayout, kMaxStringLength, what, [&](uint64_t size) {
    return std::string(what) + " at " + hex(addr) + " is corrupt (a string of " + std::to_string(size) + " bytes)";
  });
}

// The operator list is walked once and kept across commands: a walk reads a page per operator
// (each OperatorEntry is ~4 KB), ~20 ms for 3 380 operators, which an op-table per operator
// would pay every time. c10 only appends operators (push_back) and erases deregistered ones, so
// a list whose size and both ends are unchanged is the same list (an allocator that put a new
// node exactly where the erased last one was is the one case this misses; kernels and tables are
// never kept, they are read per command).
struct TorchView::ListKey {
  uint64_t head = 0, size = 0, first = 0, last = 0;
  bool operator==(const ListKey&) const = default;
};

namespace {
std::mutex operator_cache_mutex;
std::map<uint64_t, std::pair<TorchView::ListKey, std::shared_ptr<const std::vector<Operator>>>> operator_cache;
}  // namespace

const std::vector<Operator>& TorchView::operators() const {
  if (operators_) return *operators_;
  const uint64_t head = dispatcher_ + layout().Dispatcher_operators;
  const StdListLayout list = stdListLayout(layout());
  ListKey key{head, stdListSize(mem_, head, list, "the operator list"), mem_.readPointer(head + list.next, "the operator list"),
              mem_.readPointer(head + list.prev, "the operator list")};
  // Before libtorch's static initializers run, the Dispatcher (a function-local static) is zeros;
  // a constructed list head points at itself even when empty.
  if (key.first == 0 && key.last == 0 && key.size == 0)
    fail<RuntimeNotLoaded>("PyTorch's dispatcher is not constructed yet (libtorch_cpu is loaded, its initializers "
                           "have not run: continue until `import torch` or the program's start has returned)");
  {
    std::lock_guard lock(operator_cache_mutex);
    if (auto it = operator_cache.find(head); it != operator_cache.end() && it->second.first == key) {
      operators_ = it->second.second;
      return *operators_;
    }
  }
  std::vector<Operator> ops;
  // The nodes lie mostly in allocation order: a page per node would cost one call each.
  walkStdList(mem_, head, list, kMaxTorchOperators, "the operator list", [&] { return "the operator list at " + hex(head); },
              [&](uint64_t def) {
                Operator op;
                op.entry = def + layout().OperatorDef_op;
                const uint64_t name = op.entry + layout().OperatorEntry_name;
                op.name = readStdString(name + layout().OperatorName_name, "an operator name");
                std::string overload = readStdString(name + layout().OperatorName_overload_name, "an operator name");
                if (!overload.empty()) op.name += "." + overload;
                ops.push_back(std::move(op));
              },
              kListReadAhead);
  checkOperators(key.size, ops);
  operators_ = std::make_shared<const std::vector<Operator>>(std::move(ops));
  std::lock_guard lock(operator_cache_mutex);
  operator_cache[head] = {key, operators_};
  return *operators_;
}

Kernel TorchView::readKernel(uint64_t addr) const {
  Kernel k;
  k.addr = addr;
  const uint64_t fn = addr + layout().AnnotatedKernel_kernel;
  k.functor = mem_.readPointer(fn + layout().KernelFunction_functor, "a kernel");
  k.boxed = mem_.readPointer(fn + layout().KernelFunction_boxed, "a kernel");
  k.unboxed = mem_.readPointer(fn + layout().KernelFunction_unboxed, "a kernel");
  k.sym_unboxed = mem_.readPointer(fn + layout().KernelFunction_sym_unboxed, "a kernel");
  k.debug = readStdString(addr + layout().AnnotatedKernel_debug, "a kernel's debug string");
  return k;
}

const std::vector<std::pair<int, std::vector<Kernel>>>& TorchView::registered(const Operator& op) const {
  return kernelsOf(op).kernels;
}

// The last operator's stored table and kernels, kept for the command: `op-table OP` prints its
// registrations and then its computed table, both from the same kernel map.
const TorchView::OperatorKernels& TorchView::kernelsOf(const Operator& op) const {
  if (last_kernels_ && last_kernels_->entry == op.entry) return *last_kernels_;
  OperatorKernels k{op.entry, storedTable(op), {}};
  k.kernels = registered(op, k.table);
  return *(last_kernels_ = std::move(k));
}

// The stored dispatch table, in one read (106 entries of 32 bytes in 1.13): each slot's
// KernelFunction as c10 copied it there (functor, boxed, unboxed and sym_unboxed; no debug string).
std::vector<Kernel> TorchView::storedTable(const Operator& op) const {
  const uint64_t size = layout().sizeof_KernelFunction, slots = layout().count_table_slots;
  const uint64_t functor = layout().KernelFunction_functor, boxed = layout().KernelFunction_boxed, unboxed = layout().KernelFunction_unboxed;
  const uint64_t sym_unboxed = layout().KernelFunction_sym_unboxed;
  if (size > 256 || slots > 4096 || std::max({functor, boxed, unboxed, sym_unboxed}) + 8 > size)
    fail(refusal() + "its dispatch table has " + std::to_string(slots) + " entries of " + std::to_string(size) + " bytes");
  std::vector<unsigned char> bytes(size * slots);
  const uint64_t at = op.entry + layout().OperatorEntry_dispatchTable;
  mem_.read(at, bytes.data(), bytes.size(), "a dispatch table");
  std::vector<Kernel> table(slots);
  for (uint64_t s = 0; s < slots; ++s) {
    table[s].addr = at + s * size;
    std::memcpy(&table[s].functor, bytes.data() + s * size + functor, 8);
    std::memcpy(&table[s].boxed, bytes.data() + s * size + boxed, 8);
    std::memcpy(&table[s].unboxed, bytes.data() + s * size + unboxed, 8);
    std::memcpy(&table[s].sym_unboxed, bytes.data() + s * size + sym_unboxed, 8);
  }
  return table;
}

// The kernel map, checked as it is walked against what ska::flat_hash_map and c10 keep true of
// it: a power-of-two table whose lookup bound matches its size; each entry in the slot its key
// hashes to plus its distance; each key one of this build's keys that can hold kernels, once;
// as many entries as the map counts; every list as long as its size and not empty; and a runtime
// key's first kernel the one the dispatch table holds for it. A damaged byte that breaks none of
// these would be a kernel listed under another key, printed as fact.
std::vector<std::pair<int, std::vector<Kernel>>> TorchView::registered(const Operator& op,
                                                                             const std::vector<Kernel>& table) const {
  const uint64_t map = op.entry + layout().OperatorEntry_kernels;
  // The refusal's start, made only when one is given (this runs for every op-table).
  auto corrupt = [&] { return "the kernel map of " + op.name + " at " + hex(map) + " is corrupt ("; };
  const StdListLayout kernel_list = stdListLayout(layout());
  std::vector<std::pair<int, std::vector<Kernel>>> out;
  walkFlatHashMap(mem_, map, kernelMapLayout(layout()), kMaxKernelSlots, "a kernel map", "a kernel map entry", corrupt,
                  [&](const FlatHashEntry& e) {
    const int key = mem_.read<uint16_t>(e.addr + layout().KernelMapEntry_key, "a kernel map entry");
    const KeyInfo* info = keys().byValue(key);
    auto where = [&] { return "entry " + std::to_string(e.index) + ", key " + std::to_string(key); };
    if (!info || (!info->alias && info->slot < 0) || key == 0) fail(corrupt() + where() + " is no key kernels are registered at)");
    // std::hash<DispatchKey> is the key's value.
    if (!e.holds(static_cast<uint64_t>(key))) fail(corrupt() + where() + " (" + info->name + ") is not where its hash puts it)");
    for (const auto& [k, _] : out)
      if (k == key) fail(corrupt() + info->name + " is in it twice)");
    const uint64_t head = e.addr + layout().KernelMapEntry_list;
    std::vector<Kernel> list;
    walkStdList(mem_, head, kernel_list, kMaxKernelsPerKey, "a kernel list", [&] { return "the kernel list of " + op.name; },
                [&](uint64_t kernel) { list.push_back(readKernel(kernel)); });
    const uint64_t size = stdListSize(mem_, head, kernel_list, "a kernel list");
    if (list.empty() || size != list.size())
      fail(corrupt() + info->name + "'s list holds " + std::to_string(list.size()) + " kernels, its size says " + std::to_string(size) + ")");
    if (!info->alias && static_cast<size_t>(info->slot) < table.size() && !sameKernel(list.front(), table[info->slot]))
      fail(corrupt() + info->name + "'s kernel is not the one its dispatch table holds)");
    out.emplace_back(key, std::move(list));
  });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::optional<std::string> TorchView::schemaDebug(const Operator& op) const {
  const uint64_t schema = op.entry + layout().OperatorEntry_schema;
  const auto annotated = engagedValue(mem_, schema, {layout().OptionalSchema_engaged, layout().OptionalSchema_payload},
                                      "an operator schema", [&](uint64_t engaged) {
    return "the schema of " + op.name + " at " + hex(schema) + " is corrupt (its optional's flag holds " + std::to_string(engaged) + ")";
  });
  if (!annotated) return std::nullopt;
  return readStdString(*annotated + layout().AnnotatedSchema_debug, "a schema debug string");
}

// OperatorEntry::computeDispatchTableEntryWithDebug (dscope/TableRules.h), asked of the kernel map
// read from the process and the build's key table.
TableEntry TorchView::computeEntry(const std::vector<std::pair<int, std::vector<Kernel>>>& kernels, int key) const {
  struct Query {
    const TorchView& tv;
    const std::vector<std::pair<int, std::vector<Kernel>>>& kernels;
    int key;
    const KeyInfo* info;
    const Kernel* kernelAt(int k) const {
      for (const auto& [registered_key, list] : kernels)
        if (registered_key == k && !list.empty()) return &list.front();
      return nullptr;
    }
    bool hasKernelIn(uint64_t raw) const {
      for (const auto& [k, list] : kernels)
        if (const KeyInfo* ki = tv.keys().byValue(k); ki && !ki->alias && KeyTable::has(raw, *ki)) return true;
      return false;
    }
    const KeyInfo* alias(impl::TableAlias a) const { return tv.aliases_[static_cast<size_t>(a)]; }
    bool undefined() const { return key == 0; }
    const Kernel* direct() const { return kernelAt(key); }
    bool covers(impl::TableAlias a) const { return info && KeyTable::inAlias(*info, alias(a)); }
    const Kernel* at(impl::TableAlias a) const { return alias(a) ? kernelAt(alias(a)->value) : nullptr; }
    bool backendKernel() const { return hasKernelIn(info ? info->autograd_backends : 0); }
    bool ambiguousAutogradOther() const {
      return info && info->name == "AutogradOther" && hasKernelIn(tv.layout().set_autogradother_backends);
    }
    const Kernel* ambiguous() const {
      static const Kernel sentinel = [] {  // c10's ambiguousAutogradOtherKernel(): its debug string is this
        Kernel k;
        k.debug = "ambiguous_autogradother";
        return k;
      }();
      return &sentinel;
    }
    const Kernel* fallback() const {
      const auto& fallbacks = tv.backendFallbacks();
      const int slot = info ? info->slot : -1;
      return slot >= 0 && static_cast<size_t>(slot) < fallbacks.size() && fallbacks[slot].valid() ? &fallbacks[slot] : nullptr;
    }
  };
  const Query q{*this, kernels, key, keys().byValue(key)};
  const auto choice = impl::chooseTableEntry(q);
  TableEntry e;
  e.key = key;
  e.slot = q.info ? q.info->slot : -1;
  if (choice.kernel) e.kernel = *choice.kernel;
  e.source = choice.source;
  if (choice.source == impl::TableEntrySource::Kernel) e.registered_key = key;
  if (choice.alias) e.registered_key = q.alias(*choice.alias)->value;
  e.fallthrough = fallthrough_ && e.kernel.boxed == fallthrough_;
  return e;
}

// The Dispatcher's backend fallbacks (one AnnotatedKernel per slot), kept across commands while
// the block's bytes are unchanged: they hold each kernel's pointers and its debug string's pointer
// and length, so equal bytes are equal kernels (the strings are never written in place). Reading
// the 106 debug strings anew would cost every op-table a hundred page reads.
const std::vector<Kernel>& TorchView::backendFallbacks() const {
  if (fallbacks_) return *fallbacks_;
  static std::mutex mutex;
  static std::map<uint64_t, std::pair<std::vector<unsigned char>, std::shared_ptr<const std::vector<Kernel>>>> kept;
  const uint64_t base = dispatcher_ + layout().Dispatcher_backendFallbackKernels;
  const uint64_t size = layout().sizeof_AnnotatedKernel, slots = layout().count_table_slots;
  std::vector<unsigned char> bytes(size * slots);
  mem_.read(base, bytes.data(), bytes.size(), "the backend fallbacks");
  std::lock_guard lock(mutex);
  if (auto it = kept.find(base); it != kept.end() && it->second.first == bytes) return *(fallbacks_ = it->second.second);
  auto all = std::make_shared<std::vector<Kernel>>();
  for (uint64_t s = 0; s < slots; ++s) all->push_back(readKernel(base + s * size));
  kept[base] = {std::move(bytes), all};
  return *(fallbacks_ = all);
}

// A computed entry must be what c10 computed and stored in the table (the same rules, the same
// kernel maps and fallbacks): a kernel map or fallback that says otherwise was damaged, and the
// entry would be printed as fact. An ambiguous AutogradOther entry is c10's own sentinel kernel.
TableEntry TorchView::checkedEntry(const Operator& op, const std::vector<std::pair<int, std::vector<Kernel>>>& kernels,
                                        int key, const std::vector<Kernel>& table) const {
  TableEntry e = computeEntry(kernels, key);
  if (e.slot < 0 || static_cast<size_t>(e.slot) >= table.size() || e.ambiguous()) return e;
  const Kernel& stored = table[e.slot];
  if (!sameKernel(e.present() ? e.kernel : Kernel{}, stored))
    fail("the kernels of " + op.name + " are corrupt (for " + keys().name(key) + " its kernel map and fallbacks give " +
         (e.present() ? "the kernel " + shown(e.kernel.debug) : std::string("none")) + ", its dispatch table holds another)");
  return e;
}

std::vector<TableEntry> TorchView::computedTable(const Operator& op) const {
  const OperatorKernels& k = kernelsOf(op);
  std::vector<TableEntry> out;
  out.reserve(keys().runtimeKeys().size());
  for (int key : keys().runtimeKeys()) out.push_back(checkedEntry(op, k.kernels, key, k.table));
  return out;
}

TableEntry TorchView::computedEntry(const Operator& op, int key) const {
  const OperatorKernels& k = kernelsOf(op);
  return checkedEntry(op, k.kernels, key, k.table);
}


namespace {

// "&at::(anonymous namespace)::wrapper_mm" out of a demangled
// "...WrapFunctionIntoFunctor_<c10::CompileTimeFunctionPointer<Sig, &fn>, ...>": the function, or "".
std::string compileTimeFunction(const std::string& type) {
  const std::string marker = "CompileTimeFunctionPointer<";
  const size_t start = type.find(marker);
  if (start == std::string::npos) return "";
  int depth = 0;
  size_t amp = std::string::npos;
  for (size_t i = start + marker.size(); i < type.size(); ++i) {
    const char c = type[i];
    if (c == '<' || c == '(') ++depth;
    else if ((c == '>' || c == ')') && depth > 0) --depth;
    else if (c == '>' && depth == 0) {
      if (amp == std::string::npos) return "";
      std::string fn = type.substr(amp + 1, i - amp - 1);
      // "&(f(int))" for a function whose name has a parameter list: the function, as GDB names it.
      if (fn.size() > 2 && fn.front() == '(' && fn.back() == ')') fn = fn.substr(1, fn.size() - 2);
      return fn;
    }
    else if (c == '&' && depth == 0 && i > 0 && type[i - 1] == ' ' && type[i - 2] == ',') amp = i;
  }
  return "";
}

// A runtime functor made from a lambda or another functor type holds that object, not a function
// pointer: WrapFunctionIntoRuntimeFunctor_<Functor, Return, typelist<...>>'s first argument names
// it. "" when the first argument is a function pointer type (the functor keeps the pointer).
std::string runtimeFunctorObject(const std::string& type) {
  const std::string marker = "WrapFunctionIntoRuntimeFunctor_<";
  const size_t start = type.find(marker);
  if (start == std::string::npos) return "";
  int depth = 0;
  for (size_t i = start + marker.size(); i < type.size(); ++i) {
    const char c = type[i];
    if (c == '<' || c == '(' || c == '{') ++depth;
    else if ((c == '>' || c == ')' || c == '}') && depth > 0) --depth;
    else if ((c == ',' || c == '>') && depth == 0) {
      std::string first = type.substr(start + marker.size(), i - start - marker.size());
      return first.find("(*)") == std::string::npos ? first : "";
    }
  }
  return "";
}

std::string demangledType(const std::string& mangled) {
  int status = 0;
  char* text = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && text ? text : mangled;
  std::free(text);
  return out;
}

// What a functor type's mangled name says: the compile-time function's name, "" for a runtime
// functor, else the demangled type. Kept for the library's life: demangling these long template
// names costs more than everything else an op-table reads, and a name means the same everywhere.
std::string functorTypeName(const std::string& mangled) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(mangled); it != known.end()) return it->second;
  const std::string type = demangledType(mangled);
  std::string name = compileTimeFunction(type);
  if (name.empty()) name = runtimeFunctorObject(type);
  if (name.empty() && type.find("WrapFunctionIntoRuntimeFunctor_<") == std::string::npos) name = type;
  return known[mangled] = name;
}

}  // namespace

std::string TorchView::kernelName(const Kernel& k) const {
  // A computed table names the same few kernels many times (a default backend kernel fills a
  // dozen slots), and op-table of every operator names the same kernels again: each is named
  // once per memory generation.
  auto& names = mem_.namesByAddresses();
  const std::array<uint64_t, 4> key{k.functor, k.boxed, k.unboxed, k.sym_unboxed};
  if (auto it = names.find(key); it != names.end()) return it->second;
  return names[key] = nameKernel(k);
}

uint64_t TorchView::runtimeFunction(uint64_t functor) const {
  const std::string mangled = functor ? dynamicTypeName(mem_, functor) : "";
  // functorTypeName says "" for exactly a runtime functor that keeps a function pointer.
  if (mangled.empty() || !functorTypeName(mangled).empty()) return 0;
  const uint64_t target = mem_.readPointer(functor + layout().RuntimeFunctor_kernel_func, "a kernel functor");
  return isCode(mem_.modules(), target) ? target : 0;
}

// A kernel's function pointer leads into a module's code, or the kernel is damaged.
void TorchView::checkCode(const Kernel& k, uint64_t fn, const char* what) const {
  if (!isCode(mem_.modules(), fn))
    fail("the kernel " + shown(k.debug) + " at " + hex(k.addr) + " is corrupt (" + what + ", " + hex(fn) +
         ", is in no module's code)");
}

// A Python kernel (torch.library's impl, custom_op, a Python meta registration): the Python function
// its holder keeps, "module.qualname at file.py:LINE"; the holder's type where that cannot be read.
namespace {
// The holder of every Python kernel's function (torch/csrc/utils/python_dispatch.cpp), by its RTTI name.
constexpr const char* kPythonKernelHolder = "torch::impl::dispatch::PythonKernelHolder";
}  // namespace

uint64_t TorchView::holderObject(uint64_t holder) const {
  return mem_.readPointer(holder + layout().PythonKernelHolder_func, "a Python kernel's function");
}

std::string TorchView::pythonKernelName(uint64_t holder) const {
  const PythonView* py = python_ ? python_() : nullptr;
  if (!py) return kPythonKernelHolder;
  try {
    const uint64_t object = holderObject(holder);
    if (auto f = py->function(object)) return f->text();
    return "a Python " + py->typeName(object) + " (" + kPythonKernelHolder + ")";
  } catch (const InspectError& e) {
    return std::string(kPythonKernelHolder) + " (its Python function cannot be read: " + messageOf(e) + ")";
  }
}

std::optional<uint64_t> TorchView::pythonKernelObject(uint64_t functor) const {
  if (!functor || functorTypeName(dynamicTypeName(mem_, functor)) != kPythonKernelHolder) return std::nullopt;
  return holderObject(functor);
}

std::string TorchView::nameKernel(const Kernel& k) const {
  if (fallthrough_ && k.boxed == fallthrough_) return "c10::fallthrough_kernel";
  if (!k.valid()) return "(no kernel)";
  if (k.functor) {  // an OperatorKernel: it has a vtable, and its type names the kernel
    std::string why;
    const std::string mangled = checkedTypeName(mem_, k.functor, &why);
    if (mangled.empty())
      fail("the functor at " + hex(k.functor) + " of the kernel " + shown(k.debug) + " is corrupt (" + why + ")");
    const std::string type = functorTypeName(mangled);
    if (type == kPythonKernelHolder) return pythonKernelName(k.functor);
    if (!type.empty()) return type;
    {  // a runtime functor: the function it wraps
      const uint64_t target = mem_.readPointer(k.functor + layout().RuntimeFunctor_kernel_func, "a kernel functor");
      checkCode(k, target, "the function its functor wraps");
      const std::string name = mem_.symbolize(target);
      return name.empty() ? "a function at " + hex(target) + " (no symbol: not exported)" : name;
    }
  }
  checkCode(k, k.boxed, "its boxed function");
  const std::string boxed = mem_.symbolize(k.boxed);
  return boxed.empty() ? "a boxed function at " + hex(k.boxed) + " (no symbol: not exported)" : boxed;
}

std::pair<uint64_t, uint64_t> TorchView::threadTls(int64_t tid) const {
  const auto c10 = mappedModule(mem_, "libc10.so");
  if (!c10) fail("libc10 is not loaded in this process");
  // Both words are zero until the thread first changes its sets (a block not allocated yet).
  uint64_t included = 0, excluded = 0;
  if (auto tls = threadLocalAddress(mem_, tid, *c10, profile_->profile.symbol("tls_dispatch_key_set"))) {
    included = mem_.readPointer(*tls + layout().PODLocalDispatchKeySet_included, "the thread's TLS key sets");
    excluded = mem_.readPointer(*tls + layout().PODLocalDispatchKeySet_excluded, "the thread's TLS key sets");
  }
  included ^= layout().set_default_included, excluded ^= layout().set_default_excluded;
  // Decoded with a profile of this build, both sets hold keys of this build only.
  if (const uint64_t unknown = keys().unknownBits(included | excluded))
    fail(refusal() + "thread " + std::to_string(tid) + "'s TLS key sets hold bits no key of this build has (" + hex(unknown) + ")");
  return {included, excluded};
}

uint64_t TorchView::tensorKeySet(uint64_t impl) const {
  const uint64_t raw = mem_.readPointer(impl + layout().TensorImpl_key_set, "a TensorImpl");
  // Every defined tensor has a backend: a per-backend key that is no autograd key (CPU, Meta,
  // QuantizedCPU, SparseCPU, NestedTensorCUDA, ...) or one of the backends of their own
  // (SparseCsrCPU/CUDA, MkldnnCPU). A set without one was read at the wrong offset (a profile that
  // does not fit), unless the tensor is the undefined one.
  if (const uint64_t unknown = keys().unknownBits(raw))
    fail(refusal() + "the TensorImpl at " + hex(impl) + " holds key set " + hex(raw) + ", with bits no key of this build has (" +
         hex(unknown) + ")");
  const uint64_t backend_mask = layout().set_full_backend_mask;
  bool backend = false;
  for (int k : keys().keysOf(raw)) {
    const KeyInfo& key = *keys().byValue(k);
    backend = backend || ((key.bits & backend_mask) && !keys().inAlias(key, impl::toString(impl::TableAlias::Autograd))) || key.name == "SparseCsrCPU" ||
              key.name == "SparseCsrCUDA" || key.name == "MkldnnCPU";
  }
  if (!backend && dynamicTypeName(mem_, impl).find("UndefinedTensorImpl") == std::string::npos)
    fail(refusal() + "the TensorImpl at " + hex(impl) + " holds key set " + hex(raw) + ", which names no backend");
  return raw;
}

// The type object of the Python object at addr, or 0 when addr holds none. An object's type's type
// is `type` or a metaclass whose own type chain reaches `type`, the one type that is its own type:
// a chain that gets there in a few steps, through types whose names are readable, is no accident.
uint64_t TorchView::pythonTypeOf(uint64_t addr) const {
  const uint64_t ob_type = layout().PyObject_ob_type, tp_name = layout().PyTypeObject_tp_name;
  try {
    const uint64_t type = mem_.readPointer(addr + ob_type, "a Python object");
    uint64_t t = type;
    for (int step = 0; step < kMaxMetatypes; ++step) {
      if (!t || t % 8 || mem_.readString(mem_.readPointer(t + tp_name, "a Python type"), "a type name").empty()) return 0;
      const uint64_t its_type = mem_.readPointer(t + ob_type, "a Python type");
      if (its_type == t) return type;
      t = its_type;
    }
  } catch (const InspectError&) {
  }
  return 0;
}

// torch.Tensor or a type derived from it (nn.Parameter, a user's subclass): tp_base leads there.
// libtorch_python exports THPVariableClass, the word that holds torch.Tensor (every build does;
// 2.14 no longer exports the type object of torch._C.TensorBase itself).
bool TorchView::isTensorType(uint64_t type) const {
  const auto tensor_class = mem_.findSymbol(profile_->profile.symbol("THPVariableClass").c_str());
  if (!tensor_class) return false;  // no libtorch_python: no Python tensors
  const uint64_t tensor = mem_.readPointer(*tensor_class, "torch.Tensor's type");
  for (int depth = 0; tensor && type && depth < kMaxTypeBases; ++depth) {
    if (type == tensor) return true;
    type = mem_.readPointer(type + layout().PyTypeObject_tp_base, "a Python type");
  }
  return false;
}

uint64_t TorchView::tensorImplAt(uint64_t addr) const {
  const std::string what = hex(addr) + " is ";
  const std::string takes = " (keyset takes a Python tensor's hex(id(t)), a TensorImpl's address or a raw key set)";
  if (const uint64_t type = pythonTypeOf(addr)) {
    const std::string name = mem_.readString(mem_.readPointer(type + layout().PyTypeObject_tp_name, "a Python type"), "a type name");
    if (!isTensorType(type)) fail(what + "a Python " + shown(name) + " object, not a tensor" + takes);
    const uint64_t impl = mem_.readPointer(addr + layout().THPVariable_cdata, "a Python tensor");
    if (dynamicTypeName(mem_, impl).find("TensorImpl") == std::string::npos)
      fail(what + "a Python " + shown(name) + " object whose TensorImpl pointer " + hex(impl) + " leads to no TensorImpl");
    return impl;
  }
  std::string why;
  const std::string type = checkedTypeName(mem_, addr, &why);
  if (type.find("TensorImpl") != std::string::npos) return addr;
  if (!type.empty()) fail(what + "a C++ " + demangledType(type) + ", not a TensorImpl" + takes);
  fail(what + "memory of this process holding no Python object and no C++ object with a vtable" + takes);
}

}  // namespace dscope::inspect
