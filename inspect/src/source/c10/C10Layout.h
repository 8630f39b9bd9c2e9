// The typed layout of a real c10 build: every value the torch readers read with, by the names of
// its profile file (docs/DEBUG-INTERFACE.md §9), resolved once when the profile loads. A name here
// is a field: a reader that misspells one does not compile, and a profile that lacks one is
// refused in one line before any command runs (its needs, source/c10/TorchProfile.cpp).
#pragma once

#include <cstdint>

#include "model/Profile.h"
#include "target/Containers.h"

// DSCOPE_C10_LAYOUT(X) calls X(name) once per value.
#define DSCOPE_C10_LAYOUT(X) \
  X(Dispatcher_from_realSingleton) X(sizeof_StdString) X(StdList_size) X(StdListNode_data) \
  X(Dispatcher_operators) X(Dispatcher_backendFallbackKernels) X(OperatorDef_op) \
  X(OperatorHandle_operatorDef) X(OperatorEntry_name) X(OperatorName_name) \
  X(OperatorName_overload_name) X(OperatorEntry_schema) X(OptionalSchema_engaged) \
  X(OptionalSchema_payload) X(AnnotatedSchema_debug) X(OperatorEntry_dispatchTable) \
  X(OperatorEntry_kernels) X(OperatorEntry_dispatchKeyExtractor) \
  X(DispatchKeyExtractor_nonFallthroughKeys) X(DispatchKeyExtractor_nonFallthroughKeysPerBackend) \
  X(DispatchKeyExtractor_requiresBitsetPerBackend) X(sizeof_KernelFunction) \
  X(KernelFunction_functor) X(KernelFunction_boxed) X(KernelFunction_unboxed) \
  X(KernelFunction_sym_unboxed) X(sizeof_AnnotatedKernel) X(AnnotatedKernel_kernel) \
  X(AnnotatedKernel_debug) X(KernelMap_entries) X(KernelMap_num_slots_minus_one) \
  X(KernelMap_max_lookups) X(KernelMap_num_elements) X(sizeof_KernelMapEntry) X(KernelMapEntry_key) \
  X(KernelMapEntry_list) X(sizeof_DispatchKey) X(TensorImpl_key_set) X(OptionalTensor_engaged) \
  X(OptionalTensor_payload) X(RuntimeFunctor_kernel_func) X(PythonKernelHolder_func) X(PODLocalDispatchKeySet_included) \
  X(PODLocalDispatchKeySet_excluded) X(Error_msg) X(count_backends) X(count_functionality_keys) \
  X(count_table_slots) X(count_dispatch_keys) X(set_default_included) X(set_default_excluded) \
  X(set_autogradother_backends) X(set_full_backend_mask) X(AnnotatedSchema_schema) \
  X(AnnotatedKernel_inferred_function_schema) X(StdVector_begin) X(StdVector_end) \
  X(UniquePtr_pointer) X(SharedPtr_pointer) X(FunctionSchema_name) X(FunctionSchema_arguments) \
  X(FunctionSchema_returns) X(FunctionSchema_is_vararg) X(FunctionSchema_is_varret) \
  X(FunctionSchema_alias_kind) X(OptionalAliasKind_engaged) X(OptionalAliasKind_payload) \
  X(AliasAnalysisKind_unset) X(sizeof_Argument) X(Argument_name) X(Argument_real_type) \
  X(Argument_N) X(OptionalInt32_engaged) X(OptionalInt32_payload) X(Argument_default_value) \
  X(OptionalIValue_engaged) X(OptionalIValue_payload) X(Argument_alias_info) X(Argument_kwarg_only) \
  X(sizeof_AliasInfo) X(AliasInfo_before) X(AliasInfo_after) X(AliasInfo_contained) \
  X(AliasInfo_is_write) X(SymbolSet_first) X(SymbolSetNode_next) X(SymbolSetNode_symbol) \
  X(InternedStrings_from_realSingleton) X(InternedStrings_sym_to_info) X(sizeof_SymbolInfo) \
  X(SymbolInfo_unqual_name) X(sizeof_TypePtr) X(TypePtr_pointer) X(Type_kind) X(ListType_element) \
  X(FutureType_element) X(RRefType_element) X(OptionalType_element) X(DictType_types) \
  X(TupleType_elements) X(TupleType_schema) X(NamedType_name) X(OptionalQualifiedName_engaged) \
  X(OptionalQualifiedName_payload) X(QualifiedName_qualified) X(VarType_name) X(sizeof_IValue) \
  X(IValue_payload) X(IValue_tag) X(ConstantString_str) X(ListImpl_list) X(THPVariable_cdata) \
  X(PyObject_ob_type) X(PyTypeObject_tp_name) X(PyTypeObject_tp_base)

// Optional groups: values a build's profile states all of or none of (a profile with some of a
// group is refused), each group one part of a thread's Python dispatch state (keyset --tls says
// what put keys in the TLS sets). 1.13's profile has none of them: its TorchDispatchModeTLS has
// no infra modes. Offsets named Libc10Tls_* / LibtorchCpuTls_* are within that module's TLS block.
//   DSCOPE_C10_OPTIONAL_LAYOUT(G) calls G(group, list) once per group; list(X) calls X(name).
#define DSCOPE_C10_MODES_LAYOUT(X) \
  X(Libc10Tls_torchDispatchModeState) X(sizeof_TorchDispatchModeTLS) X(TorchDispatchModeTLS_stack) \
  X(TorchDispatchModeTLS_infra_modes) X(count_infra_modes) X(sizeof_SharedPtr) X(sizeof_OptionalModePtr) \
  X(OptionalModePtr_engaged) X(OptionalModePtr_payload) X(SafePyObject_data)
#define DSCOPE_C10_PYTHON_DISPATCHER_LAYOUT(X) X(Libc10Tls_pythonDispatcherState)
#define DSCOPE_C10_AUTOGRAD_LAYOUT(X) \
  X(Libc10Tls_autogradState) X(sizeof_AutogradState) X(AutogradState_grad_mode) X(AutogradState_grad_mode_bit) \
  X(AutogradState_inference_mode) X(AutogradState_inference_mode_bit)
#define DSCOPE_C10_FUNCTORCH_LAYOUT(X) \
  X(LibtorchCpuTls_functorchTLS) X(FuncTorchTLS_dynamicLayerStack) X(sizeof_DynamicLayer)
#define DSCOPE_C10_OPTIONAL_LAYOUT(G)                                                            \
  G(dispatch_modes, DSCOPE_C10_MODES_LAYOUT) G(python_dispatcher, DSCOPE_C10_PYTHON_DISPATCHER_LAYOUT) \
  G(autograd_state, DSCOPE_C10_AUTOGRAD_LAYOUT) G(functorch, DSCOPE_C10_FUNCTORCH_LAYOUT)

namespace dscope::inspect {

struct C10Layout {
#define DSCOPE_C10_LAYOUT_FIELD(name) uint64_t name = 0;
  DSCOPE_C10_LAYOUT(DSCOPE_C10_LAYOUT_FIELD)
  // An optional group's values (0 where the group is absent) and whether the profile states it:
  // has_dispatch_modes, has_python_dispatcher, has_autograd_state, has_functorch.
#define DSCOPE_C10_OPTIONAL_GROUP_FIELDS(group, list) list(DSCOPE_C10_LAYOUT_FIELD) bool has_##group = false;
  DSCOPE_C10_OPTIONAL_LAYOUT(DSCOPE_C10_OPTIONAL_GROUP_FIELDS)
#undef DSCOPE_C10_OPTIONAL_GROUP_FIELDS
#undef DSCOPE_C10_LAYOUT_FIELD
};

// The containers' layouts the walkers (target/Containers.h) take, of this build. Where a member
// is libstdc++'s own and the profile names none, it is where libstdc++'s C++11 ABI puts it in
// every build: a std::string's _M_p then _M_string_length (its size, sizeof_StdString, the profile
// gives and checks), a list node's _M_next then _M_prev.
constexpr StdStringLayout kStdStringLayout{.data = 0, .size = 8};
inline StdVectorLayout stdVectorLayout(const C10Layout& l) { return {.begin = l.StdVector_begin, .end = l.StdVector_end}; }
inline StdListLayout stdListLayout(const C10Layout& l) { return {.next = 0, .prev = 8, .size = l.StdList_size, .data = l.StdListNode_data}; }
inline FlatHashMapLayout kernelMapLayout(const C10Layout& l) {
  // sherwood_v3_entry starts with its distance_from_desired.
  return {.entries = l.KernelMap_entries, .num_slots_minus_one = l.KernelMap_num_slots_minus_one,
          .max_lookups = l.KernelMap_max_lookups, .num_elements = l.KernelMap_num_elements,
          .entry_size = l.sizeof_KernelMapEntry, .entry_distance = 0};
}

// A c10 build's profile with its typed layout.
struct C10Profile {
  Profile profile;
  C10Layout layout;
};

}  // namespace dscope::inspect
