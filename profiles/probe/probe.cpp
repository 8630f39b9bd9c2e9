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
#include <torch/csrc/api/include/torch/version.h>
#undef private
#undef protected

using namespace c10;

namespace {

template <class T>
void entry(const char* name, T value) { std::printf("%s %llu\n", name, static_cast<unsigned long long>(value)); }
void hexEntry(const char* name, uint64_t value) { std::printf("%s 0x%016llx\n", name, static_cast<unsigned long long>(value)); }
uint64_t rawBits(DispatchKeySet ks) { return ks.raw_repr(); }  // raw_repr() is non-const in 1.13

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
  entry("Dispatcher_from_realSingleton", reinterpret_cast<uint64_t>(&dispatcher) - reinterpret_cast<uint64_t>(real_singleton));

  using OE = impl::OperatorEntry;
  using OD = Dispatcher::OperatorDef;
  entry("sizeof_StdString", sizeof(std::string));
  entry("StdList_size", sizeof(void*) * 2);
  entry("StdListNode_data", sizeof(std::__detail::_List_node_base));
  entry("Dispatcher_operators", offsetof(Dispatcher, operators_));
  entry("Dispatcher_backendFallbackKernels", offsetof(Dispatcher, backendFallbackKernels_));
  entry("OperatorDef_op", offsetof(OD, op));
  entry("OperatorEntry_name", offsetof(OE, name_));
  entry("OperatorName_name", offsetof(OperatorName, name));
  entry("OperatorName_overload_name", offsetof(OperatorName, overload_name));
  entry("OperatorEntry_schema", offsetof(OE, schema_));
  entry("OptionalSchema_payload", offsetof(c10::optional<impl::AnnotatedSchema>, storage_.value_));
  entry("AnnotatedSchema_debug", offsetof(impl::AnnotatedSchema, debug));
  entry("OperatorEntry_dispatchTable", offsetof(OE, dispatchTable_));
  entry("OperatorEntry_kernels", offsetof(OE, kernels_));
  entry("sizeof_KernelFunction", sizeof(KernelFunction));
  entry("KernelFunction_functor", offsetof(KernelFunction, boxed_kernel_func_) + offsetof(BoxedKernel, functor_));
  entry("KernelFunction_boxed", offsetof(KernelFunction, boxed_kernel_func_) + offsetof(BoxedKernel, boxed_kernel_func_));
  entry("KernelFunction_unboxed", offsetof(KernelFunction, unboxed_kernel_func_));
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
  entry("PODLocalDispatchKeySet_included", offsetof(impl::PODLocalDispatchKeySet, included_));
  entry("PODLocalDispatchKeySet_excluded", offsetof(impl::PODLocalDispatchKeySet, excluded_));
  entry("count_backends", num_backends);
  entry("count_functionality_keys", num_functionality_keys);
  entry("count_table_slots", num_runtime_entries);
  entry("count_dispatch_keys", static_cast<int>(DispatchKey::EndOfAliasKeys) + 1);

  hexEntry("set_default_included", rawBits(default_included_set));
  hexEntry("set_default_excluded", rawBits(default_excluded_set));
  hexEntry("set_autogradother_backends", rawBits(autogradother_backends));
  hexEntry("set_full_backend_mask", full_backend_mask);

  for (int b = 1; b <= num_backends; ++b)
    std::printf("backend %d %s\n", b - 1, toString(static_cast<BackendComponent>(b)));
  // Every key with its raw bits and slot; alias keys list the runtime keys they cover, and an
  // autograd key the backend keys it stands in front of (computeDispatchTableEntry's rules).
  std::vector<DispatchKey> aliases;
  for (int v = 0; v <= static_cast<int>(DispatchKey::EndOfAliasKeys); ++v)
    if (isAliasDispatchKey(static_cast<DispatchKey>(v))) aliases.push_back(static_cast<DispatchKey>(v));
  std::printf("runtime-keys 0");
  for (DispatchKey k : DispatchKeySet(DispatchKeySet::FULL)) std::printf(" %d", static_cast<int>(k));
  std::printf("\n");
  for (int v = 0; v <= static_cast<int>(DispatchKey::EndOfAliasKeys); ++v) {
    auto k = static_cast<DispatchKey>(v);
    const bool alias = isAliasDispatchKey(k);
    uint64_t bits = 0;
    int slot = -1;
    if (!alias && v != 0 && k != DispatchKey::EndOfFunctionalityKeys) {
      bits = rawBits(DispatchKeySet(k));
      slot = getDispatchTableIndexForDispatchKey(k);
    }
    std::printf("key %d %s bits=0x%llx slot=%d", v, toString(k), static_cast<unsigned long long>(bits), slot);
    if (alias) std::printf(" alias");
    std::string in;
    if (!alias && v != 0)
      for (DispatchKey a : aliases)
        if (isIncludedInAlias(k, a)) in += (in.empty() ? "" : ",") + std::to_string(static_cast<int>(a));
    if (!in.empty()) std::printf(" in=%s", in.c_str());
    const uint64_t backends = alias || v == 0 ? 0 : rawBits(getBackendKeySetFromAutograd(k));
    if (backends) std::printf(" autograd-backends=0x%llx", static_cast<unsigned long long>(backends));
    std::printf("\n");
  }
  return 0;
}
