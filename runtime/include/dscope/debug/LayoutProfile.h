/* The layout profile's list (docs/DEBUG-INTERFACE.md §9): every offset, size and count the tools
 * read our runtime's memory with, written once.
 *
 * DSCOPE_LAYOUT_PROFILE(X) calls X(name, expression) once per entry:
 *   - the names are the schema, spelled as PyTorch's profile files spell the same facts: the
 *     runtime's profile text (the descriptor's profile_text, written at build time by
 *     runtime/tools/write_profile.cpp) holds one "NAME VALUE" line per entry, and a reader resolves
 *     the names into struct dscope_layout_profile (one uint64_t per name) whatever build wrote the
 *     text, refusing a profile that lacks one;
 *   - the expressions are C++, expanded only inside dscope::debug::Layout (debug/Layout.h, a friend
 *     of the runtime classes whose private members they name). C code and readers see only the
 *     names.
 *
 * Names: `Type_member` is the offset of a member in its own type (a nested member is two entries,
 * which a reader adds: AnnotatedKernel_kernel + KernelFunction_boxed_fn), `sizeof_Type` a size in
 * bytes. The key table's counts (`count_*`) and sets (`set_*`) follow the list in the profile text.
 * Comments here are block comments: the list is one macro, and a line comment would swallow the
 * rest of it.
 *
 * Adding an entry needs nothing else (readers ignore names they do not know); removing or renaming
 * one, or changing what a name means, makes readers that use it refuse the profile: bump
 * DSCOPE_DEBUG_INTERFACE_VERSION for a change of meaning.
 */
#ifndef DSCOPE_DEBUG_LAYOUT_PROFILE_H
#define DSCOPE_DEBUG_LAYOUT_PROFILE_H

#include <stdint.h>

#define DSCOPE_LAYOUT_PROFILE(X)                                                                      \
  /* ---- The debug interface's own C structs (DebugInterface.h) ---- */                             \
  X(sizeof_pointer, sizeof(void*))                                                                    \
  X(sizeof_Descriptor, sizeof(struct dscope_debug_descriptor_t))                                      \
  X(Descriptor_dispatcher, offsetof(struct dscope_debug_descriptor_t, dispatcher))                    \
  X(Descriptor_thread_records, offsetof(struct dscope_debug_descriptor_t, thread_records))            \
  X(Descriptor_thread_records_count, offsetof(struct dscope_debug_descriptor_t, thread_records_count)) \
  X(Descriptor_records_enabled, offsetof(struct dscope_debug_descriptor_t, records_enabled))          \
  X(Descriptor_break_count, offsetof(struct dscope_debug_descriptor_t, break_count))                  \
  X(Descriptor_break_hits, offsetof(struct dscope_debug_descriptor_t, break_hits))                    \
  X(Descriptor_break_bloom, offsetof(struct dscope_debug_descriptor_t, break_bloom))                  \
  X(Descriptor_breaks, offsetof(struct dscope_debug_descriptor_t, breaks))                            \
  X(Descriptor_instance, offsetof(struct dscope_debug_descriptor_t, instance))                        \
  X(Descriptor_tls_records_offset, offsetof(struct dscope_debug_descriptor_t, tls_records_offset))    \
  X(Descriptor_fallthrough_kernel, offsetof(struct dscope_debug_descriptor_t, fallthrough_kernel))    \
  X(Descriptor_missing_kernel, offsetof(struct dscope_debug_descriptor_t, missing_kernel))            \
  X(Descriptor_ambiguous_autograd_other_kernel,                                                       \
    offsetof(struct dscope_debug_descriptor_t, ambiguous_autograd_other_kernel))                      \
  X(Descriptor_profile_text, offsetof(struct dscope_debug_descriptor_t, profile_text))                \
  X(Descriptor_profile_size, offsetof(struct dscope_debug_descriptor_t, profile_size))                \
  X(sizeof_BreakEntry, sizeof(struct dscope_break_entry))                                             \
  X(BreakEntry_name_hash, offsetof(struct dscope_break_entry, name_hash))                             \
  X(BreakEntry_key, offsetof(struct dscope_break_entry, key))                                         \
  X(count_max_breaks, DSCOPE_MAX_BREAKS)                                                              \
  X(sizeof_ThreadRecords, sizeof(struct dscope_thread_records))                                       \
  X(ThreadRecords_magic, offsetof(struct dscope_thread_records, magic))                               \
  X(ThreadRecords_next, offsetof(struct dscope_thread_records, next))                                 \
  X(ThreadRecords_tid, offsetof(struct dscope_thread_records, tid))                                   \
  X(ThreadRecords_state, offsetof(struct dscope_thread_records, state))                               \
  X(ThreadRecords_tls, offsetof(struct dscope_thread_records, tls))                                   \
  X(ThreadRecords_depth, offsetof(struct dscope_thread_records, depth))                               \
  X(ThreadRecords_depth_limit, offsetof(struct dscope_thread_records, depth_limit))                   \
  X(ThreadRecords_first, offsetof(struct dscope_thread_records, first))                               \
  X(ThreadRecords_ring, offsetof(struct dscope_thread_records, ring))                                 \
  X(count_records_first, DSCOPE_RECORDS_FIRST)                                                        \
  X(count_records_ring, DSCOPE_RECORDS_RING)                                                          \
  X(sizeof_DispatchRecord, sizeof(struct dscope_dispatch_record))                                     \
  X(DispatchRecord_op, offsetof(struct dscope_dispatch_record, op))                                   \
  X(DispatchRecord_kernel, offsetof(struct dscope_dispatch_record, kernel))                           \
  X(DispatchRecord_keyset, offsetof(struct dscope_dispatch_record, keyset))                           \
  X(DispatchRecord_slot, offsetof(struct dscope_dispatch_record, slot))                               \
  X(DispatchRecord_kind, offsetof(struct dscope_dispatch_record, kind))                               \
  /* ---- A key's size (the key table itself, with its counts, follows the list in the profile) ---- */ \
  X(sizeof_DispatchKey, sizeof(DispatchKey))                                                          \
  /* ---- The operator registry ---- */                                                              \
  X(sizeof_Dispatcher, sizeof(Dispatcher))                                                            \
  X(Dispatcher_operators_head, offsetof(Dispatcher, operators_head_))                                 \
  X(Dispatcher_num_operators, offsetof(Dispatcher, num_operators_))                                   \
  X(Dispatcher_backendFallbackKernels, offsetof(Dispatcher, backendFallbackKernels_))                 \
  X(sizeof_OperatorEntry, sizeof(OperatorEntry))                                                      \
  X(OperatorEntry_full_name, offsetof(OperatorEntry, full_name_))                                     \
  X(OperatorEntry_name_hash, offsetof(OperatorEntry, name_hash_))                                     \
  X(OperatorEntry_base_name_hash, offsetof(OperatorEntry, base_name_hash_))                           \
  X(OperatorEntry_schema, offsetof(OperatorEntry, schema_))                                           \
  X(OperatorEntry_kernels, offsetof(OperatorEntry, kernels_))                                         \
  X(OperatorEntry_num_kernels, offsetof(OperatorEntry, num_kernels_))                                 \
  X(OperatorEntry_dispatchTable, offsetof(OperatorEntry, dispatchTable_))                             \
  X(OperatorEntry_dispatchTableSource, offsetof(OperatorEntry, dispatchTableSource_))                 \
  X(OperatorEntry_extractor, offsetof(OperatorEntry, extractor_))                                     \
  X(OperatorEntry_next, offsetof(OperatorEntry, next_))                                               \
  X(sizeof_TableEntrySource, sizeof(impl::TableEntrySource))                                          \
  X(sizeof_DispatchKeyExtractor, sizeof(impl::DispatchKeyExtractor))                                  \
  X(DispatchKeyExtractor_nonFallthroughKeys, offsetof(impl::DispatchKeyExtractor, nonFallthroughKeys_)) \
  X(DispatchKeyExtractor_requiresBitsetPerBackend,                                                    \
    offsetof(impl::DispatchKeyExtractor, requiresBitsetPerBackend_))                                  \
  X(sizeof_bool, sizeof(bool))                                                                        \
  X(sizeof_RegisteredSchema, sizeof(RegisteredSchema))                                                \
  X(RegisteredSchema_text, offsetof(RegisteredSchema, text))                                          \
  X(RegisteredSchema_debug, offsetof(RegisteredSchema, debug))                                        \
  X(RegisteredSchema_schema, offsetof(RegisteredSchema, schema))                                      \
  X(FunctionSchema_alias_analysis, offsetof(FunctionSchema, alias_analysis))                          \
  X(sizeof_AliasAnalysisKind, sizeof(AliasAnalysisKind))                                              \
  X(sizeof_AnnotatedKernel, sizeof(AnnotatedKernel))                                                  \
  X(AnnotatedKernel_kernel, offsetof(AnnotatedKernel, kernel))                                        \
  X(AnnotatedKernel_debug, offsetof(AnnotatedKernel, debug))                                          \
  X(AnnotatedKernel_inferred_schema, offsetof(AnnotatedKernel, inferred_schema))                      \
  X(AnnotatedKernel_key, offsetof(AnnotatedKernel, key))                                              \
  X(AnnotatedKernel_next, offsetof(AnnotatedKernel, next))                                            \
  X(sizeof_KernelFunction, sizeof(KernelFunction))                                                    \
  X(KernelFunction_functor, offsetof(KernelFunction, functor_))                                       \
  X(KernelFunction_boxed_fn, offsetof(KernelFunction, boxed_fn_))                                     \
  X(KernelFunction_unboxed_fn, offsetof(KernelFunction, unboxed_fn_))                                 \
  X(KernelFunction_owned_functor, offsetof(KernelFunction, owned_functor_))                           \
  X(sizeof_OperatorHandle, sizeof(OperatorHandle))                                                    \
  X(OperatorHandle_entry, 0)                                                                          \
  X(sizeof_OperatorName, sizeof(OperatorName))                                                        \
  X(OperatorName_name, offsetof(OperatorName, name))                                                  \
  X(OperatorName_overload_name, offsetof(OperatorName, overload_name))                                \
  /* ---- Tensors ---- */                                                                            \
  X(sizeof_Tensor, sizeof(Tensor))                                                                    \
  X(Tensor_impl, 0)                                                                                   \
  X(sizeof_TensorImpl, sizeof(TensorImpl))                                                            \
  X(TensorImpl_key_set, offsetof(TensorImpl, key_set))                                                \
  X(TensorImpl_dtype, offsetof(TensorImpl, dtype))                                                    \
  X(TensorImpl_device, offsetof(TensorImpl, device))                                                  \
  X(TensorImpl_dim, offsetof(TensorImpl, dim))                                                        \
  X(TensorImpl_sizes, offsetof(TensorImpl, sizes))                                                    \
  X(TensorImpl_strides, offsetof(TensorImpl, strides))                                                \
  X(TensorImpl_storage, offsetof(TensorImpl, storage))                                                \
  X(TensorImpl_autograd_meta, offsetof(TensorImpl, autograd_meta))                                    \
  X(sizeof_StorageImpl, sizeof(StorageImpl))                                                          \
  X(StorageImpl_data, offsetof(StorageImpl, data))                                                    \
  X(sizeof_ScalarType, sizeof(ScalarType))                                                            \
  X(sizeof_Device, sizeof(Device))                                                                    \
  X(Device_type, offsetof(Device, type))                                                              \
  X(Device_index, offsetof(Device, index))                                                            \
  X(sizeof_AutogradMeta, sizeof(AutogradMeta))                                                        \
  X(AutogradMeta_grad_fn, offsetof(AutogradMeta, grad_fn))                                            \
  X(AutogradMeta_requires_grad, offsetof(AutogradMeta, requires_grad))                                \
  /* ---- The thread's TLS key sets (dscope_thread_records::tls points at them) ---- */              \
  X(sizeof_PODLocalDispatchKeySet, sizeof(impl::PODLocalDispatchKeySet))                              \
  X(PODLocalDispatchKeySet_included, offsetof(impl::PODLocalDispatchKeySet, included_))              \
  X(PODLocalDispatchKeySet_excluded, offsetof(impl::PODLocalDispatchKeySet, excluded_))              \
  /* ---- libstdc++ members, read by their pointer (Layout.h checks them against the types) ---- */  \
  X(sizeof_StdString, sizeof(std::string))                                                            \
  X(StdString_data, 0)                                                                                \
  X(StdString_length, sizeof(void*))                                                                  \
  X(sizeof_UniquePtr, sizeof(std::unique_ptr<AutogradMeta>))                                          \
  X(UniquePtr_pointer, 0)                                                                             \
  X(sizeof_SharedPtr, sizeof(std::shared_ptr<autograd::Node>))                                        \
  X(SharedPtr_pointer, 0)

/* A reader's typed layout: one uint64_t per entry of DSCOPE_LAYOUT_PROFILE, resolved by name. */
struct dscope_layout_profile {
#define DSCOPE_LAYOUT_PROFILE_MEMBER(name, expression) uint64_t name;
  DSCOPE_LAYOUT_PROFILE(DSCOPE_LAYOUT_PROFILE_MEMBER)
#undef DSCOPE_LAYOUT_PROFILE_MEMBER
};

#endif /* DSCOPE_DEBUG_LAYOUT_PROFILE_H */
