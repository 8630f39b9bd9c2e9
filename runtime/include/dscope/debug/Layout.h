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

namespace dscope::debug {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"

// A friend of the runtime classes whose private fields tools read.
struct Layout {
  static constexpr uint64_t mix(std::initializer_list<uint64_t> values) {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t v : values)
      for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
    return h;
  }
  static constexpr uint64_t hash() {
    using impl::AnnotatedKernel;
    using impl::OperatorEntry;
    using impl::RegisteredSchema;
    return mix({
        sizeof(struct dscope_debug_descriptor), offsetof(struct dscope_debug_descriptor, dispatcher),
        offsetof(struct dscope_debug_descriptor, thread_records), offsetof(struct dscope_debug_descriptor, break_count),
        offsetof(struct dscope_debug_descriptor, breaks), sizeof(dscope_break_entry),
        sizeof(dscope_thread_records), offsetof(dscope_thread_records, depth), offsetof(dscope_thread_records, first),
        offsetof(dscope_thread_records, ring), sizeof(dscope_dispatch_record), offsetof(dscope_dispatch_record, keyset),
        offsetof(dscope_dispatch_record, kind),
        // Dispatcher: the operator list and the backend fallbacks.
        sizeof(Dispatcher), offsetof(Dispatcher, operators_head_), offsetof(Dispatcher, num_operators_),
        offsetof(Dispatcher, backendFallbackKernels_),
        // OperatorEntry: name, schema, registered kernels, computed table, fallthrough mask.
        sizeof(OperatorEntry), offsetof(OperatorEntry, full_name_), offsetof(OperatorEntry, schema_),
        offsetof(OperatorEntry, kernels_), offsetof(OperatorEntry, num_kernels_),
        offsetof(OperatorEntry, dispatchTable_), offsetof(OperatorEntry, dispatchTableSource_),
        offsetof(OperatorEntry, extractor_), offsetof(OperatorEntry, next_),
        sizeof(impl::DispatchKeyExtractor), offsetof(impl::DispatchKeyExtractor, nonFallthroughKeys_),
        sizeof(RegisteredSchema), offsetof(RegisteredSchema, text), offsetof(RegisteredSchema, debug),
        sizeof(AnnotatedKernel), offsetof(AnnotatedKernel, kernel), offsetof(AnnotatedKernel, debug),
        offsetof(AnnotatedKernel, inferred_schema), offsetof(AnnotatedKernel, key), offsetof(AnnotatedKernel, next),
        sizeof(KernelFunction), offsetof(KernelFunction, functor_), offsetof(KernelFunction, boxed_fn_),
        offsetof(KernelFunction, unboxed_fn_),
        // Tensors and TLS.
        sizeof(TensorImpl), offsetof(TensorImpl, key_set), offsetof(TensorImpl, dtype), offsetof(TensorImpl, device),
        offsetof(TensorImpl, dim), offsetof(TensorImpl, sizes), offsetof(TensorImpl, strides),
        offsetof(TensorImpl, storage), offsetof(TensorImpl, autograd_meta), sizeof(StorageImpl),
        offsetof(StorageImpl, data), sizeof(impl::PODLocalDispatchKeySet),
        DSCOPE_RECORDS_FIRST, DSCOPE_RECORDS_RING, DSCOPE_MAX_BREAKS, num_runtime_entries,
    });
  }
};

#pragma GCC diagnostic pop

}  // namespace dscope::debug
