// The layout probe: compiled against one torch install's own headers and linked with its own
// libraries, it prints that build's layout profile (docs/DEBUG-INTERFACE.md §9, "c10" profiles)
// on stdout. dscope-profile builds and runs it; nothing else uses it.
//
// Private members are read with offsetof after `#define private public`, which must come after
// the standard library (libstdc++ rejects it: "redeclared with different access"). Members
// private by default (a `class` without a label, ska's flat_hash_map) are reached through a
// derived type. Key semantics (alias membership, the autograd backends) are asked of this
// build's libc10 itself, so that a reader never needs them hard-coded per version.
#include <bits/stdc++.h>
#include <dlfcn.h>
#include <link.h>

#define private public
#define protected public
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/TensorImpl.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/core/impl/PythonDispatcherTLS.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <c10/core/AutogradState.h>
#include <ATen/FuncTorchTLS.h>
#include <ATen/core/class_type.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/interned_strings_class.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/api/include/torch/version.h>
#undef private
#undef protected

using namespace c10;

// functorch's dynamic layer stack: its header (ATen/functorch/DynamicLayer.h) needs nlohmann/json in
// 2.14, which libtorch-dev does not ship, so the one function used is declared here, as that header
// declares it (the mangled name does not hold the return type).
namespace at::functorch {
struct DynamicLayer;
TORCH_API const std::vector<DynamicLayer>& getDynamicLayerStack();
}  // namespace at::functorch

namespace {

template <class T>
void entry(const char* name, T value) { std::printf("%s %llu\n", name, static_cast<unsigned long long>(value)); }
void hexEntry(const char* name, uint64_t value) { std::printf("%s 0x%016llx\n", name, static_cast<unsigned long long>(value)); }
// c10::Error's members are private by default (a `class`), which `#define private` does not
// reach; an explicit instantiation may name a private member (C++ [temp.spec]), so this one hands
// out a pointer to Error::msg_.
struct ErrorMsg {
  using type = std::string c10::Error::*;
  friend type get(ErrorMsg);
};
template <class Tag, typename Tag::type member>
struct PrivateMember {
  friend typename Tag::type get(Tag) { return member; }
};
template struct PrivateMember<ErrorMsg, &c10::Error::msg_>;
uint64_t rawBits(DispatchKeySet ks) { return ks.raw_repr(); }  // raw_repr() is non-const in 1.13
#include "key_table.h"  // in this namespace, with c10 in scope

// The GNU build-id of every loaded object whose file name contains `part`.
std::string buildIdOf(const char* part) {
  struct Query { const char* part; std::string id; } q{part, ""};
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* data) {
    auto* q = static_cast<Query*>(data);
    if (!info->dlpi_name || !std::strstr(info->dlpi_name, q->part)) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const auto& ph = info->dlpi_phdr[i];
      if (ph.p_type != PT_NOTE) continue;
      const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
      const char* end = p + ph.p_memsz;
      while (p + sizeof(ElfW(Nhdr)) <= end) {
        auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
        const char* name = p + sizeof(*n);
        const unsigned char* desc = reinterpret_cast<const unsigned char*>(name + ((n->n_namesz + 3) & ~3u));
        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
          char buf[3];
          for (unsigned j = 0; j < n->n_descsz; ++j) std::snprintf(buf, sizeof buf, "%02x", desc[j]), q->id += buf;
          return 1;
        }
        p = reinterpret_cast<const char*>(desc) + ((n->n_descsz + 3) & ~3u);
      }
    }
    return 0;
  }, &q);
  return q.id;
}

// The exported (mangled) name of a function of this build, as the dynamic linker knows it.
std::string exportedName(void* fn) {
  Dl_info info{};
  if (!dladdr(fn, &info) || !info.dli_sname) {
    std::fprintf(stderr, "dscope-profile: a function the tools need is not exported\n");
    std::exit(1);
  }
  return info.dli_sname;
}

// ska::flat_hash_map's table and entry keep their members private by default.
using KernelMap = decltype(impl::OperatorEntry::kernels_);
struct KM : KernelMap {
  static constexpr size_t entries = offsetof(KernelMap, entries);
  static constexpr size_t num_slots_minus_one = offsetof(KernelMap, num_slots_minus_one);
  static constexpr size_t max_lookups = offsetof(KernelMap, max_lookups);
  static constexpr size_t num_elements = offsetof(KernelMap, num_elements);
};
using KE = std::remove_pointer_t<decltype(std::declval<KernelMap&>().entries)>;


// ---------------------------------------------------------------------------------------------
// Schemas, types, default values and alias sets: what op-table --registered needs to print
// OperatorEntry::dumpState() from memory (inspect/src/TorchSchema.cpp). Besides offsets it
// prints name tables ("name TABLE VALUE TEXT"): the TypeKind enum, str() of every type whose
// str() is fixed (each singleton with a static get()), IValue's tags and AliasAnalysisKind.
// A few libstdc++ facts are measured on live objects (wordAt), where the members are private.

// The offset of the one aligned word of the object at obj (size bytes) that equals value.
size_t wordAt(const void* obj, size_t size, uint64_t value, const char* what) {
  size_t found = SIZE_MAX, hits = 0;
  for (size_t off = 0; off + 8 <= size; off += 8) {
    uint64_t word;
    std::memcpy(&word, static_cast<const char*>(obj) + off, 8);
    if (word == value) found = off, ++hits;
  }
  if (hits != 1) {
    std::fprintf(stderr, "dscope-profile: cannot measure %s (%zu candidates)\n", what, hits);
    std::exit(1);
  }
  return found;
}

// Where an optional<T> keeps its value and its engaged flag: c10's own class in 1.13 (flag first),
// std::optional in 2.x (value first, flag after it), measured the same way for both. The value's
// offset is that of *opt; the flag is the one byte outside the value that an engaged optional
// sets and a disengaged one leaves clear (both built in zeroed storage).
template <class T>
void optionalLayout(const char* name, T value) {
  using Opt = c10::optional<T>;
  alignas(Opt) unsigned char on[sizeof(Opt)] = {}, off[sizeof(Opt)] = {};
  auto* engaged = new (on) Opt(std::move(value));
  auto* empty = new (off) Opt();
  const size_t payload = reinterpret_cast<const unsigned char*>(&**engaged) - on;
  size_t flag = SIZE_MAX, hits = 0;
  for (size_t i = 0; i < sizeof(Opt); ++i)
    if ((i < payload || i >= payload + sizeof(T)) && on[i] != off[i]) flag = i, ++hits;
  if (hits != 1 || on[flag] != 1 || off[flag] != 0) {
    std::fprintf(stderr, "dscope-profile: cannot measure the engaged flag of an optional (%s: %zu candidates)\n", name, hits);
    std::exit(1);
  }
  std::printf("Optional%s_engaged %zu\nOptional%s_payload %zu\n", name, flag, name, payload);
  engaged->~Opt();
  empty->~Opt();
}

// A type's str() for every type kind whose type is a singleton with a static get() (the kinds
// differ between builds: SymBoolType is 2.x's).
template <class T, class = void>
struct IsSingletonType : std::false_type {};
template <class T>
struct IsSingletonType<T, std::void_t<decltype(T::get()->str())>> : std::true_type {};
template <class T>
void singletonTypeStr() {
  if constexpr (IsSingletonType<T>::value)
    std::printf("name TypeStr %d %s\n", static_cast<int>(T::Kind), T::get()->str().c_str());
}

// c10's InternedStrings (globalStrings(), a static of libtorch_cpu that it does not export):
// found as the one word in libtorch_cpu's writable segments that holds the start of its
// sym_to_info_ vector, which a symbol interned at run time leads to (its qual_name is short,
// so its characters lie inside its SymbolInfo).
uint64_t internedStringsAddress() {
  using Info = InternedStrings::SymbolInfo;
  const Symbol sym = Symbol::fromQualString("alias::a");
  const std::string shortString("x");
  const uint64_t sso = reinterpret_cast<uint64_t>(shortString.data()) - reinterpret_cast<uint64_t>(&shortString);
  const uint64_t info = reinterpret_cast<uint64_t>(sym.toQualString()) - sso - offsetof(Info, qual_name);
  struct Query { uint64_t begin; std::vector<uint64_t> hits; } q{info - static_cast<uint64_t>(static_cast<unique_t>(sym)) * sizeof(Info), {}};
  dl_iterate_phdr([](dl_phdr_info* lib, size_t, void* data) {
    auto* q = static_cast<Query*>(data);
    if (!lib->dlpi_name || !std::strstr(lib->dlpi_name, "libtorch_cpu")) return 0;
    for (int i = 0; i < lib->dlpi_phnum; ++i) {
      const auto& ph = lib->dlpi_phdr[i];
      if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_W)) continue;
      const uint64_t start = (lib->dlpi_addr + ph.p_vaddr + 7) & ~uint64_t{7}, end = lib->dlpi_addr + ph.p_vaddr + ph.p_memsz;
      for (uint64_t a = start; a + 8 <= end; a += 8)
        if (*reinterpret_cast<const uint64_t*>(a) == q->begin) q->hits.push_back(a - offsetof(InternedStrings, sym_to_info_));
    }
    return 1;
  }, &q);
  if (q.hits.size() != 1 || reinterpret_cast<InternedStrings*>(q.hits[0])->sym_to_info_.at(sym).unqual_name != "a") {
    std::fprintf(stderr, "dscope-profile: cannot find c10's interned strings (%zu candidates)\n", q.hits.size());
    std::exit(1);
  }
  return q.hits[0];
}

void printSchemaLayout(uint64_t real_singleton) {
  entry("AnnotatedSchema_schema", offsetof(impl::AnnotatedSchema, schema));
  entry("AnnotatedKernel_inferred_function_schema", offsetof(impl::AnnotatedKernel, inferred_function_schema));
  {
    std::vector<int> v(3);
    v.reserve(8);  // end and end of storage differ
    entry("StdVector_begin", wordAt(&v, sizeof v, reinterpret_cast<uint64_t>(v.data()), "a vector's begin"));
    entry("StdVector_end", wordAt(&v, sizeof v, reinterpret_cast<uint64_t>(v.data() + v.size()), "a vector's end"));
  }
  {
    auto unique = std::make_unique<int>(1);
    auto shared = std::make_shared<int>(1);
    entry("UniquePtr_pointer", wordAt(&unique, sizeof unique, reinterpret_cast<uint64_t>(unique.get()), "a unique_ptr"));
    entry("SharedPtr_pointer", wordAt(&shared, sizeof shared, reinterpret_cast<uint64_t>(shared.get()), "a shared_ptr"));
  }
  entry("FunctionSchema_name", offsetof(FunctionSchema, name_));
  entry("FunctionSchema_arguments", offsetof(FunctionSchema, arguments_));
  entry("FunctionSchema_returns", offsetof(FunctionSchema, returns_));
  entry("FunctionSchema_is_vararg", offsetof(FunctionSchema, is_vararg_));
  entry("FunctionSchema_is_varret", offsetof(FunctionSchema, is_varret_));
  entry("FunctionSchema_alias_kind", offsetof(FunctionSchema, alias_kind_));
  optionalLayout("AliasKind", AliasAnalysisKind::FROM_SCHEMA);
  entry("AliasAnalysisKind_unset", static_cast<int>(FunctionSchema("", "", {}, {}).aliasAnalysis()));
  for (int k = 0; k <= static_cast<int>(AliasAnalysisKind::PURE_FUNCTION); ++k)
    std::printf("name AliasAnalysisKind %d %s\n", k, toString(static_cast<AliasAnalysisKind>(k)));

  entry("sizeof_Argument", sizeof(Argument));
  entry("Argument_name", offsetof(Argument, name_));
  entry("Argument_real_type", offsetof(Argument, real_type_));
  entry("Argument_N", offsetof(Argument, N_));
  optionalLayout("Int32", int32_t{7});
  entry("Argument_default_value", offsetof(Argument, default_value_));
  optionalLayout("IValue", IValue(int64_t{7}));
  entry("Argument_alias_info", offsetof(Argument, alias_info_));
  entry("Argument_kwarg_only", offsetof(Argument, kwarg_only_));

  // AliasInfo: its sets are std::unordered_set<Symbol>, printed in their node order.
  entry("sizeof_AliasInfo", sizeof(AliasInfo));
  entry("AliasInfo_before", offsetof(AliasInfo, beforeSets_));
  entry("AliasInfo_after", offsetof(AliasInfo, afterSets_));
  entry("AliasInfo_contained", offsetof(AliasInfo, containedTypes_));
  entry("AliasInfo_is_write", offsetof(AliasInfo, isWrite_));
  {
    const Symbol sym = Symbol::fromQualString("alias::a");
    std::unordered_set<Symbol> set{sym};
    auto it = set.begin();
    entry("SymbolSet_first", wordAt(&set, sizeof set, reinterpret_cast<uint64_t>(it._M_cur), "a hash set's first node"));
    entry("SymbolSetNode_next", offsetof(std::__detail::_Hash_node_base, _M_nxt));
    entry("SymbolSetNode_symbol", reinterpret_cast<const char*>(&*it) - reinterpret_cast<const char*>(it._M_cur));
  }
  entry("InternedStrings_from_realSingleton", internedStringsAddress() - real_singleton);
  entry("InternedStrings_sym_to_info", offsetof(InternedStrings, sym_to_info_));
  entry("sizeof_SymbolInfo", sizeof(InternedStrings::SymbolInfo));
  entry("SymbolInfo_unqual_name", offsetof(InternedStrings::SymbolInfo, unqual_name));

  // Types: a TypePtr holds the Type* in the same word whether it shares or not.
  {
    TypePtr shared = ListType::ofInts();
    TypePtr singleton = IntType::get();
    const size_t word = wordAt(&shared, sizeof shared, reinterpret_cast<uint64_t>(shared.get()), "a shared TypePtr");
    if (word != wordAt(&singleton, sizeof singleton, reinterpret_cast<uint64_t>(singleton.get()), "a singleton TypePtr")) {
      std::fprintf(stderr, "dscope-profile: a TypePtr keeps its pointer in two places\n");
      std::exit(1);
    }
    entry("sizeof_TypePtr", sizeof(TypePtr));
    entry("TypePtr_pointer", word);
  }
  entry("Type_kind", offsetof(Type, kind_));
  entry("ListType_element", offsetof(ListType, elem));
  entry("FutureType_element", offsetof(FutureType, elem));
  entry("RRefType_element", offsetof(RRefType, elem));
  entry("OptionalType_element", offsetof(OptionalType, contained_));
  entry("DictType_types", offsetof(DictType, types));
  entry("TupleType_elements", offsetof(TupleType, elements_));
  entry("TupleType_schema", offsetof(TupleType, schema_));
  entry("NamedType_name", offsetof(ClassType, name_));
  optionalLayout("QualifiedName", QualifiedName("a.b"));
  entry("QualifiedName_qualified", offsetof(QualifiedName, qualifiedName_));
  entry("VarType_name", offsetof(VarType, name_));
#define DSCOPE_TYPE_KIND(T) std::printf("name TypeKind %d %s\n", static_cast<int>(TypeKind::T), typeKindToString(TypeKind::T));
  C10_FORALL_TYPES(DSCOPE_TYPE_KIND)
#undef DSCOPE_TYPE_KIND
#define DSCOPE_TYPE_STR(T) singletonTypeStr<T>();
  C10_FORALL_TYPES(DSCOPE_TYPE_STR)
#undef DSCOPE_TYPE_STR

  // IValues: a tag and an 8-byte payload (int64, double, bool, or an intrusive_ptr target).
  entry("sizeof_IValue", sizeof(IValue));
  entry("IValue_payload", offsetof(IValue, payload));
  entry("IValue_tag", offsetof(IValue, tag));
  entry("ConstantString_str", offsetof(ivalue::ConstantString, str_));
  entry("ListImpl_list", offsetof(c10::detail::ListImpl, list));
  // Tag names as IValue::tagKind() spells them, up to the first value it calls invalid.
  IValue v;
  for (int t = 0;; ++t) {
    v.tag = static_cast<IValue::Tag>(t);
    const std::string name = v.tagKind();
    v.tag = IValue::Tag::None;
    if (name.rfind("InvalidTag", 0) == 0) break;
    std::printf("name IValueTag %d %s\n", t, name.c_str());
  }
}

// ---------------------------------------------------------------------------------------------
// The thread-local Python dispatch state that puts keys into a thread's TLS sets (keyset --tls says
// why they are there): the TorchDispatchMode stack, the Python dispatcher, grad and inference mode
// (c10), functorch's dynamic layer stack (libtorch_cpu). None of these thread_locals is exported:
// each is found in its module's TLS block as the address its exported accessor returns (or, for the
// Python dispatcher, which has none, as the one word of the block that set_state changes) minus the
// block of this thread (dl_iterate_phdr's dlpi_tls_data, what dlinfo RTLD_DI_TLS_DATA gives). A
// reader adds the offset to the block of the thread it reads. What a build lacks (1.13's mode TLS
// has no infra modes) is left out: the readers take each group as optional.

struct TlsBlock {
  uint64_t base = 0, size = 0;
};

// The calling thread's TLS block of the loaded object whose file name contains `part`.
TlsBlock tlsBlockOf(const char* part) {
  struct Query { const char* part; TlsBlock block; } q{part, {}};
  dl_iterate_phdr([](dl_phdr_info* info, size_t, void* data) {
    auto* q = static_cast<Query*>(data);
    if (!info->dlpi_name || !std::strstr(info->dlpi_name, q->part)) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i)
      if (info->dlpi_phdr[i].p_type == PT_TLS) q->block = {reinterpret_cast<uint64_t>(info->dlpi_tls_data), info->dlpi_phdr[i].p_memsz};
    return 1;
  }, &q);
  if (!q.block.base || !q.block.size) {
    std::fprintf(stderr, "dscope-profile: %s has no TLS block in this thread\n", part);
    std::exit(1);
  }
  return q.block;
}

// The offset of a thread_local in its module's block, checked to lie inside it.
uint64_t offsetInBlock(const TlsBlock& block, const void* variable, size_t size, const char* what) {
  const uint64_t at = reinterpret_cast<uint64_t>(variable);
  if (at < block.base || at + size > block.base + block.size) {
    std::fprintf(stderr, "dscope-profile: %s does not lie in its module's TLS block\n", what);
    std::exit(1);
  }
  return at - block.base;
}

// The one bit of `object` (size bytes) that `flip` changes, as its byte offset and bit number;
// `flip` is called twice, so that the object is as it was.
template <class Flip>
std::pair<size_t, int> flagBit(void* object, size_t size, Flip flip, const char* what) {
  std::vector<unsigned char> before(size), after(size);
  std::memcpy(before.data(), object, size);
  flip();
  std::memcpy(after.data(), object, size);
  flip();
  size_t byte = SIZE_MAX, hits = 0;
  int bit = -1;
  for (size_t i = 0; i < size; ++i)
    for (int b = 0; b < 8; ++b)
      if (((before[i] ^ after[i]) >> b) & 1) byte = i, bit = b, ++hits;
  if (hits != 1 || std::memcmp(before.data(), object, size) != 0) {
    std::fprintf(stderr, "dscope-profile: cannot measure %s (%zu bits change)\n", what, hits);
    std::exit(1);
  }
  return {byte, bit};
}

template <class T, class = void>
struct HasInfraModes : std::false_type {};
template <class T>
struct HasInfraModes<T, std::void_t<decltype(&T::infra_modes_)>> : std::true_type {};

// TorchDispatchModeTLS (2.x): stack_, a vector of shared_ptr<SafePyObjectT>, and infra_modes_, an
// array of optional<shared_ptr<...>> by TorchDispatchModeKey (FAKE, PROXY, FUNCTIONAL); a mode's
// Python object is its SafePyObject's data_. The logical stack (get_stack_at) is the engaged infra
// modes in key order, then stack_. The keys' names are Python's (dscope-profile): c10's to_string
// names only two of them.
template <class T>
void printDispatchModes(const TlsBlock& c10) {
  if constexpr (HasInfraModes<T>::value) {
    using Ptr = typename decltype(T::stack_)::value_type;
    using Mode = typename Ptr::element_type;
    const T& state = T::get_state();
    entry("Libc10Tls_torchDispatchModeState", offsetInBlock(c10, &state, sizeof(T), "TorchDispatchModeTLS"));
    entry("sizeof_TorchDispatchModeTLS", sizeof(T));
    entry("TorchDispatchModeTLS_stack", offsetof(T, stack_));
    entry("TorchDispatchModeTLS_infra_modes", offsetof(T, infra_modes_));
    const size_t infra = std::tuple_size<decltype(T::infra_modes_)>::value;
    entry("count_infra_modes", infra);
    entry("sizeof_SharedPtr", sizeof(Ptr));
    entry("sizeof_OptionalModePtr", sizeof(typename decltype(T::infra_modes_)::value_type));
    alignas(Mode) unsigned char storage[sizeof(Mode)] = {};  // never constructed: only its address is used
    optionalLayout("ModePtr", Ptr(reinterpret_cast<Mode*>(storage), [](Mode*) {}));
    Mode* mode = reinterpret_cast<Mode*>(storage);
    entry("SafePyObject_data", reinterpret_cast<const char*>(&static_cast<SafePyObject*>(mode)->data_) - reinterpret_cast<const char*>(mode));
  }
}

void printPythonDispatchState() {
  const TlsBlock c10 = tlsBlockOf("libc10.so");
  const void* key_sets = dlsym(RTLD_DEFAULT, "_ZN3c104impl26raw_local_dispatch_key_setE");
  offsetInBlock(c10, key_sets, sizeof(impl::PODLocalDispatchKeySet), "raw_local_dispatch_key_set");  // the method holds
  printDispatchModes<impl::TorchDispatchModeTLS>(c10);

  // PythonDispatcherTLS: a thread_local PyInterpreter*, non-null while the Python dispatcher is on.
  {
    auto* const was = impl::PythonDispatcherTLS::get_state();
    std::vector<uint64_t> hits;
    for (const uint64_t marker : {uint64_t{0x5eed0000d15c0000}, uint64_t{0x5eed0000d15c0008}}) {
      impl::PythonDispatcherTLS::set_state(reinterpret_cast<impl::PyInterpreter*>(marker));
      for (uint64_t a = (c10.base + 7) & ~uint64_t{7}; a + 8 <= c10.base + c10.size; a += 8)
        if (*reinterpret_cast<const uint64_t*>(a) == marker) hits.push_back(a - c10.base);
    }
    impl::PythonDispatcherTLS::set_state(was);
    if (hits.size() != 2 || hits[0] != hits[1]) {
      std::fprintf(stderr, "dscope-profile: cannot find the Python dispatcher's TLS (%zu candidates)\n", hits.size());
      std::exit(1);
    }
    entry("Libc10Tls_pythonDispatcherState", hits[0]);
  }

  // AutogradState: grad mode and inference mode are bits of a bit-field.
  {
    AutogradState& state = AutogradState::get_tls_state();
    entry("Libc10Tls_autogradState", offsetInBlock(c10, &state, sizeof state, "AutogradState"));
    entry("sizeof_AutogradState", sizeof state);
    const auto grad = flagBit(&state, sizeof state, [&] { state.set_grad_mode(!state.get_grad_mode()); }, "grad mode");
    const auto inference =
        flagBit(&state, sizeof state, [&] { state.set_inference_mode(!state.get_inference_mode()); }, "inference mode");
    entry("AutogradState_grad_mode", grad.first);
    entry("AutogradState_grad_mode_bit", grad.second);
    entry("AutogradState_inference_mode", inference.first);
    entry("AutogradState_inference_mode_bit", inference.second);
  }

  // functorch: libtorch_cpu's thread_local unique_ptr<FuncTorchTLSBase> leads to the heap
  // FuncTorchTLS, which holds the vector of DynamicLayers (one per transform the thread is inside;
  // their size is measured in the interpreter, where layers can be pushed: dscope-profile).
  {
    const TlsBlock cpu = tlsBlockOf("libtorch_cpu.so");
    auto& tls = at::functorch::functorchTLSAccessor();
    entry("LibtorchCpuTls_functorchTLS", offsetInBlock(cpu, &tls, sizeof tls, "the functorch TLS"));
    const auto& stack = at::functorch::getDynamicLayerStack();  // makes the thread's FuncTorchTLS
    entry("FuncTorchTLS_dynamicLayerStack", reinterpret_cast<const char*>(&stack) - reinterpret_cast<const char*>(tls.get()));
  }
}

}  // namespace

int main() {
  auto& dispatcher = Dispatcher::realSingleton();
  void* real_singleton = dlsym(RTLD_DEFAULT, "_ZN3c1010Dispatcher13realSingletonEv");
  if (!real_singleton) { std::fprintf(stderr, "dscope-profile: realSingleton is not exported\n"); return 1; }

  std::printf("dscope-profile 1\nruntime c10\n");
  std::printf("version %d.%d.%d\n", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH);
  std::printf("build-id libtorch_cpu %s\n", buildIdOf("libtorch_cpu").c_str());
  std::printf("build-id libc10 %s\n", buildIdOf("libc10").c_str());

  // The Dispatcher object is a function-local static of realSingleton(), which is exported; the
  // object is not. Both live in libtorch_cpu, so their distance is fixed for this build.
  std::printf("symbol realSingleton _ZN3c1010Dispatcher13realSingletonEv\n");
  if (!dlsym(RTLD_DEFAULT, "_ZN3c104impl26raw_local_dispatch_key_setE")) {
    std::fprintf(stderr, "dscope-profile: libc10 does not export raw_local_dispatch_key_set\n");
    return 1;
  }
  std::printf("symbol tls_dispatch_key_set _ZN3c104impl26raw_local_dispatch_key_setE\n");
  std::printf("symbol fallthrough_kernel %s\n", exportedName(reinterpret_cast<void*>(&fallthrough_kernel)).c_str());
  // Where kernels are registered (dispatch-break places its kernel breakpoints again after them).
  // A non-virtual member function pointer's first word is the function (Itanium C++ ABI).
  auto memberFunction = [](auto pmf) {
    void* fn = nullptr;
    std::memcpy(&fn, &pmf, sizeof fn);
    return exportedName(fn);
  };
  std::printf("symbol registerImpl %s\n", memberFunction(&Dispatcher::registerImpl).c_str());
  std::printf("symbol registerFallback %s\n", memberFunction(&Dispatcher::registerFallback).c_str());
  entry("Dispatcher_from_realSingleton", reinterpret_cast<uint64_t>(&dispatcher) - reinterpret_cast<uint64_t>(real_singleton));

  using OE = impl::OperatorEntry;
  using OD = Dispatcher::OperatorDef;
  entry("sizeof_StdString", sizeof(std::string));
  entry("StdList_size", sizeof(void*) * 2);
  entry("StdListNode_data", sizeof(std::__detail::_List_node_base));
  entry("Dispatcher_operators", offsetof(Dispatcher, operators_));
  entry("Dispatcher_backendFallbackKernels", offsetof(Dispatcher, backendFallbackKernels_));
  entry("OperatorDef_op", offsetof(OD, op));
  entry("OperatorHandle_operatorDef", offsetof(OperatorHandle, operatorDef_));  // what a boxed kernel is given
  entry("OperatorEntry_name", offsetof(OE, name_));
  entry("OperatorName_name", offsetof(OperatorName, name));
  entry("OperatorName_overload_name", offsetof(OperatorName, overload_name));
  entry("OperatorEntry_schema", offsetof(OE, schema_));
  optionalLayout("Schema", impl::AnnotatedSchema(FunctionSchema("probe", "", {}, {}), "probe"));
  entry("AnnotatedSchema_debug", offsetof(impl::AnnotatedSchema, debug));
  entry("OperatorEntry_dispatchTable", offsetof(OE, dispatchTable_));
  entry("OperatorEntry_kernels", offsetof(OE, kernels_));
  // What a dispatch masks out (fallthrough kernels): DispatchKeyExtractor, inside the entry.
  entry("OperatorEntry_dispatchKeyExtractor", offsetof(OE, dispatchKeyExtractor_));
  entry("DispatchKeyExtractor_nonFallthroughKeys", offsetof(DispatchKeyExtractor, nonFallthroughKeys_));
  entry("DispatchKeyExtractor_nonFallthroughKeysPerBackend", offsetof(DispatchKeyExtractor, nonFallthroughKeysPerBackend_));
  entry("DispatchKeyExtractor_requiresBitsetPerBackend", offsetof(DispatchKeyExtractor, requiresBitsetPerBackend_));
  entry("sizeof_KernelFunction", sizeof(KernelFunction));
  entry("KernelFunction_functor", offsetof(KernelFunction, boxed_kernel_func_) + offsetof(BoxedKernel, functor_));
  entry("KernelFunction_boxed", offsetof(KernelFunction, boxed_kernel_func_) + offsetof(BoxedKernel, boxed_kernel_func_));
  entry("KernelFunction_unboxed", offsetof(KernelFunction, unboxed_kernel_func_));
  // A SymInt kernel's function (the unboxed one is null): what an unboxed call of it runs.
  entry("KernelFunction_sym_unboxed", offsetof(KernelFunction, sym_unboxed_kernel_func_));
  entry("sizeof_AnnotatedKernel", sizeof(impl::AnnotatedKernel));
  entry("AnnotatedKernel_kernel", offsetof(impl::AnnotatedKernel, kernel));
  entry("AnnotatedKernel_debug", offsetof(impl::AnnotatedKernel, debug));
  entry("KernelMap_entries", KM::entries);
  entry("KernelMap_num_slots_minus_one", KM::num_slots_minus_one);
  entry("KernelMap_max_lookups", KM::max_lookups);
  entry("KernelMap_num_elements", KM::num_elements);
  entry("sizeof_KernelMapEntry", sizeof(KE));
  entry("KernelMapEntry_key", offsetof(KE, value) + offsetof(std::remove_reference_t<decltype(std::declval<KE&>().value)>, first));
  entry("KernelMapEntry_list", offsetof(KE, value) + offsetof(std::remove_reference_t<decltype(std::declval<KE&>().value)>, second));
  entry("sizeof_DispatchKey", sizeof(DispatchKey));
  entry("TensorImpl_key_set", offsetof(TensorImpl, key_set_));
  // A `Tensor?` argument is passed as a reference to an optional<Tensor>.
  optionalLayout("Tensor", at::Tensor());
  // A runtime functor (a kernel made from a function pointer at run time) keeps the pointer here.
  using RuntimeFunctor = impl::WrapFunctionIntoRuntimeFunctor<at::Tensor (*)(const at::Tensor&)>;
  entry("RuntimeFunctor_kernel_func", offsetof(RuntimeFunctor, kernel_func_));
  // A Python kernel (torch/csrc/utils/python_dispatch.cpp, not in the headers) is a
  // PythonKernelHolder : OperatorKernel whose first member is the SafePyObject of the Python
  // function, whose first member is its PyObject*: right after the OperatorKernel base.
  entry("PythonKernelHolder_func", sizeof(OperatorKernel));
  // The message of the error c10 throws (an uncaught "Could not run ..." names operator and key in it).
  c10::Error error(c10::SourceLocation{"probe", "probe.cpp", 1}, "probe");
  entry("Error_msg", reinterpret_cast<const char*>(&(error.*get(ErrorMsg{}))) - reinterpret_cast<const char*>(&error));
  entry("PODLocalDispatchKeySet_included", offsetof(impl::PODLocalDispatchKeySet, included_));
  entry("PODLocalDispatchKeySet_excluded", offsetof(impl::PODLocalDispatchKeySet, excluded_));
  std::string keys;
  appendKeyTable(keys);
  std::fputs(keys.c_str(), stdout);
  printSchemaLayout(reinterpret_cast<uint64_t>(real_singleton));
  printPythonDispatchState();
  return 0;
}
