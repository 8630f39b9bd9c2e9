// The layout hash of dscope_debug_descriptor: one number that changes whenever the size or an
// offset of anything the tools read changes. A reader compiled from other headers than the
// runtime it reads sees a different hash and refuses to decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "dscope/DebugInterface.h"
#include "dscope/Dispatcher.h"
#include "dscope/Tensor.h"

// Nonzero only in a test build of the tools that must see every runtime as foreign (a core from
// another build) without changing any struct: changing a size would break the one-definition rule
// with the objects the tools share with the runtime.
#ifndef DSCOPE_LAYOUT_HASH_SALT
#define DSCOPE_LAYOUT_HASH_SALT 0
#endif

namespace dscope::debug {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"

// A friend of the runtime classes whose private fields tools read. The named offsets are what
// libdscope_inspect reads remote objects with; every one of them is part of hash(), so a reader
// and a runtime that disagree on any of them see different hashes.
struct Layout {
  using AnnotatedKernel = impl::AnnotatedKernel;
  using OperatorEntry = impl::OperatorEntry;
  using RegisteredSchema = impl::RegisteredSchema;

  // Dispatcher: the operator list.
  static constexpr size_t Dispatcher_operators_head = offsetof(Dispatcher, operators_head_);
  static constexpr size_t Dispatcher_num_operators = offsetof(Dispatcher, num_operators_);
  static constexpr size_t Dispatcher_backendFallbackKernels = offsetof(Dispatcher, backendFallbackKernels_);
  // OperatorEntry: name, schema, registered kernels, computed table, fallthrough mask, list link.
  static constexpr size_t OperatorEntry_full_name = offsetof(OperatorEntry, full_name_);
  static constexpr size_t OperatorEntry_name_hash = offsetof(OperatorEntry, name_hash_);
  static constexpr size_t OperatorEntry_base_name_hash = offsetof(OperatorEntry, base_name_hash_);
  static constexpr size_t OperatorEntry_schema = offsetof(OperatorEntry, schema_);
  static constexpr size_t OperatorEntry_kernels = offsetof(OperatorEntry, kernels_);
  static constexpr size_t OperatorEntry_num_kernels = offsetof(OperatorEntry, num_kernels_);
  static constexpr size_t OperatorEntry_dispatchTable = offsetof(OperatorEntry, dispatchTable_);
  static constexpr size_t OperatorEntry_dispatchTableSource = offsetof(OperatorEntry, dispatchTableSource_);
  static constexpr size_t OperatorEntry_nonFallthroughKeys =
      offsetof(OperatorEntry, extractor_) + offsetof(impl::DispatchKeyExtractor, nonFallthroughKeys_);
  static constexpr size_t OperatorEntry_requiresBitsetPerBackend =
      offsetof(OperatorEntry, extractor_) + offsetof(impl::DispatchKeyExtractor, requiresBitsetPerBackend_);
  static constexpr size_t OperatorEntry_next = offsetof(OperatorEntry, next_);
  // TensorImpl: the key set (dispatch-trace --frames recovers a [call]'s key from its arguments).
  static constexpr size_t TensorImpl_key_set = offsetof(TensorImpl, key_set);
  // RegisteredSchema: the def's text, debug string and alias analysis kind (_dispatch_dump prints it).
  static constexpr size_t RegisteredSchema_text = offsetof(RegisteredSchema, text);
  static constexpr size_t RegisteredSchema_debug = offsetof(RegisteredSchema, debug);
  static constexpr size_t RegisteredSchema_alias_analysis =
      offsetof(RegisteredSchema, schema) + offsetof(FunctionSchema, alias_analysis);
  // AnnotatedKernel and its KernelFunction.
  static constexpr size_t AnnotatedKernel_functor = offsetof(AnnotatedKernel, kernel) + offsetof(KernelFunction, functor_);
  static constexpr size_t AnnotatedKernel_boxed_fn = offsetof(AnnotatedKernel, kernel) + offsetof(KernelFunction, boxed_fn_);
  static constexpr size_t AnnotatedKernel_unboxed_fn =
      offsetof(AnnotatedKernel, kernel) + offsetof(KernelFunction, unboxed_fn_);
  static constexpr size_t AnnotatedKernel_debug = offsetof(AnnotatedKernel, debug);
  static constexpr size_t AnnotatedKernel_inferred_schema = offsetof(AnnotatedKernel, inferred_schema);
  static constexpr size_t AnnotatedKernel_key = offsetof(AnnotatedKernel, key);
  static constexpr size_t AnnotatedKernel_next = offsetof(AnnotatedKernel, next);
  // The thread's TLS block (dscope_thread_records::tls points at it).
  static constexpr size_t PODLocalDispatchKeySet_included = offsetof(impl::PODLocalDispatchKeySet, included_);
  static constexpr size_t PODLocalDispatchKeySet_excluded = offsetof(impl::PODLocalDispatchKeySet, excluded_);

  // Value printers (inspect's `summary`): the objects a debugger shows by value. A one-pointer
  // handle (Tensor, OperatorHandle) holds its pointer at offset 0 (its only member, private: the
  // sizes are checked below). Standard-library members are read by their pointer: std::unique_ptr
  // (default deleter) and std::shared_ptr hold the object pointer first, and a libstdc++
  // std::string is {char* data, size_t length, ...} (unit tests check all three in-process).
  static constexpr size_t Tensor_impl = 0;
  static constexpr size_t OperatorHandle_entry = 0;
  static constexpr size_t UniquePtr_pointer = 0;
  static constexpr size_t SharedPtr_pointer = 0;
  static constexpr size_t StdString_data = 0;
  static constexpr size_t StdString_length = sizeof(void*);
  static constexpr size_t TensorImpl_dtype = offsetof(TensorImpl, dtype);
  static constexpr size_t TensorImpl_device = offsetof(TensorImpl, device);
  static constexpr size_t TensorImpl_dim = offsetof(TensorImpl, dim);
  static constexpr size_t TensorImpl_sizes = offsetof(TensorImpl, sizes);
  static constexpr size_t TensorImpl_strides = offsetof(TensorImpl, strides);
  static constexpr size_t TensorImpl_autograd_meta = offsetof(TensorImpl, autograd_meta);
  static constexpr size_t AutogradMeta_grad_fn = offsetof(AutogradMeta, grad_fn);
  static constexpr size_t AutogradMeta_requires_grad = offsetof(AutogradMeta, requires_grad);
  static constexpr size_t Device_type = offsetof(Device, type);
  static constexpr size_t Device_index = offsetof(Device, index);
  static constexpr size_t KernelFunction_functor = offsetof(KernelFunction, functor_);
  static constexpr size_t KernelFunction_boxed_fn = offsetof(KernelFunction, boxed_fn_);
  static constexpr size_t KernelFunction_unboxed_fn = offsetof(KernelFunction, unboxed_fn_);
  static constexpr size_t KernelFunction_owned_functor = offsetof(KernelFunction, owned_functor_);
  static constexpr size_t OperatorName_name = offsetof(OperatorName, name);
  static constexpr size_t OperatorName_overload_name = offsetof(OperatorName, overload_name);
  static constexpr size_t DispatchRecord_op = offsetof(dscope_dispatch_record, op);
  static constexpr size_t DispatchRecord_keyset = offsetof(dscope_dispatch_record, keyset);
  static constexpr size_t DispatchRecord_kind = offsetof(dscope_dispatch_record, kind);
  static_assert(sizeof(Tensor) == sizeof(void*) && sizeof(OperatorHandle) == sizeof(void*));
  static_assert(sizeof(std::unique_ptr<AutogradMeta>) == sizeof(void*));
  static_assert(sizeof(Device) == 2 && sizeof(ScalarType) == 1);

  static constexpr uint64_t mix(std::initializer_list<uint64_t> values) {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t v : values)
      for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
    return h;
  }
  static constexpr uint64_t hash() {
    return mix({
        DSCOPE_LAYOUT_HASH_SALT,
        sizeof(struct dscope_debug_descriptor_t), offsetof(struct dscope_debug_descriptor_t, dispatcher),
        offsetof(struct dscope_debug_descriptor_t, thread_records), offsetof(struct dscope_debug_descriptor_t, break_count),
        offsetof(struct dscope_debug_descriptor_t, breaks), sizeof(dscope_break_entry),
        sizeof(dscope_thread_records), offsetof(dscope_thread_records, depth), offsetof(dscope_thread_records, first),
        offsetof(dscope_thread_records, ring), sizeof(dscope_dispatch_record), offsetof(dscope_dispatch_record, keyset),
        offsetof(dscope_dispatch_record, kind),
        // Dispatcher: the operator list and the backend fallbacks.
        sizeof(Dispatcher), Dispatcher_operators_head, Dispatcher_num_operators, Dispatcher_backendFallbackKernels,
        // OperatorEntry: name, schema, registered kernels, computed table, fallthrough mask.
        sizeof(OperatorEntry), OperatorEntry_full_name, OperatorEntry_schema, OperatorEntry_kernels,
        OperatorEntry_num_kernels, OperatorEntry_dispatchTable, OperatorEntry_dispatchTableSource,
        offsetof(OperatorEntry, extractor_), OperatorEntry_next,
        sizeof(impl::DispatchKeyExtractor), offsetof(impl::DispatchKeyExtractor, nonFallthroughKeys_),
        sizeof(RegisteredSchema), RegisteredSchema_text, RegisteredSchema_debug,
        sizeof(AnnotatedKernel), offsetof(AnnotatedKernel, kernel), AnnotatedKernel_debug,
        AnnotatedKernel_inferred_schema, AnnotatedKernel_key, AnnotatedKernel_next,
        sizeof(KernelFunction), offsetof(KernelFunction, functor_), offsetof(KernelFunction, boxed_fn_),
        offsetof(KernelFunction, unboxed_fn_),
        // Tensors and TLS.
        sizeof(TensorImpl), offsetof(TensorImpl, key_set), offsetof(TensorImpl, dtype), offsetof(TensorImpl, device),
        offsetof(TensorImpl, dim), offsetof(TensorImpl, sizes), offsetof(TensorImpl, strides),
        offsetof(TensorImpl, storage), offsetof(TensorImpl, autograd_meta), sizeof(StorageImpl),
        offsetof(StorageImpl, data), sizeof(impl::PODLocalDispatchKeySet),
        DSCOPE_RECORDS_FIRST, DSCOPE_RECORDS_RING, DSCOPE_MAX_BREAKS, num_runtime_entries,
        // Read by libdscope_inspect since the offsets above were named: name hashes (operator
        // lookup), the alias analysis kind, the TLS words, the sizes of the fields it reads.
        OperatorEntry_name_hash, OperatorEntry_base_name_hash, RegisteredSchema_alias_analysis,
        sizeof(AliasAnalysisKind), sizeof(DispatchKey), sizeof(impl::TableEntrySource),
        PODLocalDispatchKeySet_included, PODLocalDispatchKeySet_excluded,
        // dispatch-trace --frames: the extractor's per-backend flag.
        OperatorEntry_requiresBitsetPerBackend, sizeof(bool),
        // Value printers (inspect's summary): tensors, autograd meta, kernels, names, handles.
        sizeof(Tensor), sizeof(OperatorHandle), sizeof(AutogradMeta), AutogradMeta_grad_fn,
        AutogradMeta_requires_grad, sizeof(std::shared_ptr<autograd::Node>), sizeof(Device), Device_type,
        Device_index, sizeof(ScalarType), KernelFunction_owned_functor, sizeof(OperatorName), OperatorName_name,
        OperatorName_overload_name, sizeof(std::string), DispatchRecord_op,
        // The break filter's bloom word (dispatch-break-arm writes it with the entries).
        offsetof(struct dscope_debug_descriptor_t, break_bloom),
        // The load-time fields: the process instance (caches), where a thread's records pointer lies.
        offsetof(struct dscope_debug_descriptor_t, instance), offsetof(struct dscope_debug_descriptor_t, tls_records_offset),
    });
  }
};

#pragma GCC diagnostic pop

}  // namespace dscope::debug
