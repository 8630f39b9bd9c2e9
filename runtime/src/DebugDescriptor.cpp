// The exported debug descriptor, the break hook and the hook's only caller (docs/DEBUG-INTERFACE.md
// §1, §6), alone in a small translation unit on purpose: GDB reads a compilation unit's whole
// debug info the first time it needs anything in it. A breakpoint on the hook, the descriptor's
// address and the frame of a stop in the hook need this unit, and so does the hook's caller
// (building frame 0, GDB looks for the call site at the return address, in the caller's unit).
// Here that is ~16 KB; DebugInterface.cpp's unit is ~180 KB, and the inlined dispatch that called
// checkBreakFilter sits in a different large unit per operator: each cost 170-300 ms before the
// first dispatch-break stop at it.
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <ctime>

#include "dscope/DebugInterface.h"
#include "dscope/DispatchRecords.h"
#include "dscope/KernelFunction.h"
#include "dscope/debug/Layout.h"

extern "C" {

// Statically initialized (in the library's data, relocated by the dynamic linker): a reader finds
// every constant field, the sentinels' addresses included, before any constructor has run.
__attribute__((visibility("default"))) struct dscope_debug_descriptor_t dscope_debug_descriptor = {
    .magic = {'D', 'S', 'C', 'O', 'P', 'E', 'D', 'D'},
    .version = DSCOPE_DEBUG_INTERFACE_VERSION,
    .pointer_size = sizeof(void*),
    .layout_hash = dscope::debug::Layout::hash(),
    .dispatcher = nullptr,
    .thread_records = nullptr,
    .thread_records_count = 0,
    .records_first = DSCOPE_RECORDS_FIRST,
    .records_ring = DSCOPE_RECORDS_RING,
    .records_enabled = DSCOPE_DISPATCH_RECORDS,
    .trace_enabled = 0,
    .reserved = {0, 0},
    .break_count = 0,
    .break_hits = 0,
    .break_bloom = 0,
    .breaks = {},
    .instance = 0,
    .tls_records_offset = 0,
    .fallthrough_kernel = reinterpret_cast<const void*>(&dscope::detail::fallthroughKernel),
    .missing_kernel = reinterpret_cast<const void*>(&dscope::detail::missingKernel),
    .ambiguous_autograd_other_kernel = reinterpret_cast<const void*>(&dscope::detail::ambiguousAutogradOtherKernel),
    .profile = dscope::debug::Layout::profile(),
};

// Optimized even in -O0 builds (GCC): its arguments then stay in their registers, where every
// debugger reads them at the first instruction (LLDB stops there; GDB after the prologue).
#if defined(__GNUC__) && !defined(__clang__)
#define DSCOPE_HOOK_OPTIMIZED __attribute__((optimize("O2")))
#else
#define DSCOPE_HOOK_OPTIMIZED
#endif
__attribute__((visibility("default"), noinline, used)) DSCOPE_HOOK_OPTIMIZED void dscope_debug_break_hook(
    const void* op, uint64_t keyset, uint16_t key, const struct dscope_break_dispatch* dispatch) {
  // Keep the call and its arguments observable: a debugger breaks here and reads them.
  asm volatile("" : : "r"(op), "r"(keyset), "r"(key), "r"(dispatch) : "memory");
}

}  // extern "C"

namespace dscope::debug {

namespace {

// The descriptor's load-time fields (DebugInterface.h). The pid alone is not enough: a core of an
// earlier run can carry the same pid; the clocks tell two loads apart.
__attribute__((constructor)) void describeThisProcess() {
  timespec real{}, monotonic{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &monotonic);
  const uint64_t instance = Layout::mix({static_cast<uint64_t>(getpid()), static_cast<uint64_t>(real.tv_sec),
                                         static_cast<uint64_t>(real.tv_nsec), static_cast<uint64_t>(monotonic.tv_nsec)});
  dscope_debug_descriptor.instance = instance | 1;  // never 0, which means "not loaded yet"
  dscope_debug_descriptor.tls_records_offset = static_cast<int64_t>(reinterpret_cast<uintptr_t>(&current_thread_records) -
                                                                    reinterpret_cast<uintptr_t>(&impl::raw_local_dispatch_key_set));
}

}  // namespace

void callBreakHook(const void* op, uint64_t keyset, uint16_t key, const dscope_break_dispatch& dispatch) {
  dscope_debug_break_hook(op, keyset, key, &dispatch);
  // Counted after the call, which also keeps it a call rather than a jump: the hook's frame
  // then returns here, into this small unit.
  std::atomic_ref<uint32_t>(dscope_debug_descriptor.break_hits).fetch_add(1, std::memory_order_relaxed);
}

}  // namespace dscope::debug
