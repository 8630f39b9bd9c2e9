/* The runtime <-> tools contract (docs/DEBUG-INTERFACE.md): what a debugger, a core-file
 * reader or an in-process crash handler reads, as plain C structs.
 *
 * Entry point: the exported global `dscope_debug_descriptor` (in .dynsym, so it survives
 * `strip --strip-debug` and is in every core). A reader checks `magic`, `version` and
 * `pointer_size` first and decodes nothing on a mismatch; everything else it reads with the
 * offsets of the runtime's own layout profile (`profile_text`).
 *
 * Every dispatching thread owns one `dscope_thread_records` block (the "shadow stack"),
 * linked from the descriptor. Each call/redispatch pushes a record at index `depth` and pops
 * it on return or exception, so the block always describes the live dispatch chain:
 *   ring[d % M]   for the top M depths, d >= depth - M     (the top of the chain: what repeats)
 *   first[d]      for d < DSCOPE_RECORDS_FIRST, valid only while depth > M (where a deep
 *                 chain started: copied from the ring when the chain grows past M)
 * Records of depths >= `depth` are stale leftovers and must be ignored.
 */
#ifndef DSCOPE_DEBUG_INTERFACE_H
#define DSCOPE_DEBUG_INTERFACE_H

#include <stdint.h>

#include "dscope/debug/LayoutProfile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bump DSCOPE_DEBUG_INTERFACE_VERSION whenever the meaning of a field changes or a field is
 * added/removed here, or the meaning of a name of the layout profile's list (debug/LayoutProfile.h)
 * changes. Sizes and offsets of the runtime's C++ classes are not part of it: they are values of
 * the profile each runtime carries. */
#define DSCOPE_DEBUG_INTERFACE_VERSION 6u
#define DSCOPE_DEBUG_MAGIC "DSCOPEDD"
#define DSCOPE_THREAD_RECORDS_MAGIC 0x5344524f43455244ull /* "DRECORDS" little endian */

#define DSCOPE_RECORDS_FIRST 64  /* records kept from the bottom of each chain */
#define DSCOPE_RECORDS_RING 256  /* records kept from the top of each chain (power of two) */
#define DSCOPE_MAX_BREAKS 16     /* break filter entries */
#define DSCOPE_BREAK_ANY_KEY 0xffffu

enum dscope_record_kind {
  DSCOPE_RECORD_CALL = 1,             /* TypedOperatorHandle::call          "[call]"            */
  DSCOPE_RECORD_REDISPATCH = 2,       /* TypedOperatorHandle::redispatch    "[redispatch]"      */
  DSCOPE_RECORD_CALL_BOXED = 3,       /* OperatorHandle::callBoxed          "[callBoxed]"       */
  DSCOPE_RECORD_REDISPATCH_BOXED = 4  /* OperatorHandle::redispatchBoxed    "[redispatchBoxed]" */
};

enum dscope_thread_state { DSCOPE_THREAD_ALIVE = 1, DSCOPE_THREAD_DEAD = 2 };

/* One dispatch: 32 bytes. The chosen key is DispatchKeySet(keyset).highestPriorityTypeId();
 * `slot` is the dispatch-table slot that was read (for the same key set: Undefined = 0, then
 * the runtime keys in FULL order), stored because it costs nothing. */
struct dscope_dispatch_record {
  const void* op;      /* dscope::impl::OperatorEntry* */
  const void* kernel;  /* dscope::impl::AnnotatedKernel* the table slot held (what ran) */
  uint64_t keyset;     /* DispatchKeySet::raw_repr() used for the lookup */
  uint16_t slot;       /* dispatch-table slot, 0..137 */
  uint8_t kind;        /* enum dscope_record_kind */
  uint8_t reserved[5];
};

struct dscope_thread_records {
  uint64_t magic;                      /* DSCOPE_THREAD_RECORDS_MAGIC */
  struct dscope_thread_records* next;  /* registry list, newest block first */
  int32_t tid;                         /* gettid() of the owner (of the last owner when dead) */
  uint32_t state;                      /* enum dscope_thread_state; dead blocks are reused */
  const void* tls;                     /* the owner's dscope::impl::PODLocalDispatchKeySet (XOR-stored) */
  uint64_t depth;                      /* dispatches active now */
  uint64_t depth_limit;                /* DSCOPE_MAX_DISPATCH_DEPTH, or UINT64_MAX */
  uint64_t slow_depth;                 /* min(depth_limit, DSCOPE_RECORDS_RING): pushes at or past
                                          it take the runtime's slow path (internal) */
  struct dscope_dispatch_record first[DSCOPE_RECORDS_FIRST];
  struct dscope_dispatch_record ring[DSCOPE_RECORDS_RING];
};

struct dscope_break_entry {
  uint64_t name_hash; /* FNV-1a 64 of "ns::name.overload" or of the base name "ns::name" */
  uint16_t key;       /* DispatchKey the dispatch must go to, or DSCOPE_BREAK_ANY_KEY */
  uint8_t reserved[6];
};

/* The bit a name hash sets in dscope_debug_descriptor.break_bloom (its top 6 bits pick one of
 * 64). Every operator carries the bits of its full and base name hashes, so a dispatch leaves
 * the inline path only when one of them is armed (or shares a bit with an armed name). */
static inline uint64_t dscope_break_bloom_bit(uint64_t name_hash) { return (uint64_t)1 << (name_hash >> 58); }

/* Named apart from the variable: a C++ class and a global of one name make `&dscope_debug_descriptor`
 * ambiguous to GDB, which then may find the type (it did in clang builds with a .gdb_index). */
struct dscope_debug_descriptor_t {
  char magic[8];        /* DSCOPE_DEBUG_MAGIC, not NUL-terminated */
  uint32_t version;     /* DSCOPE_DEBUG_INTERFACE_VERSION */
  uint32_t pointer_size;
  uint64_t layout_hash; /* the digest of profile_text: FNV-1a 64 of its text before the digest line
                           it ends with (the same number as that line) */
  const void* dispatcher;                        /* dscope::Dispatcher* (set when created) */
  struct dscope_thread_records* thread_records;  /* registry head (lock-free push) */
  uint32_t thread_records_count;                 /* blocks in the registry */
  uint32_t records_first;                        /* DSCOPE_RECORDS_FIRST */
  uint32_t records_ring;                         /* DSCOPE_RECORDS_RING */
  uint8_t records_enabled;                       /* 0 in DSCOPE_DISPATCH_RECORDS=OFF builds */
  uint8_t trace_enabled;                         /* DSCOPE_SHOW_DISPATCH_TRACE=1 */
  uint8_t reserved[2];
  /* Break filter, written by the debugger: the entries, then break_count, then break_bloom (the
   * OR of dscope_break_bloom_bit(name_hash) over the entries in use). The runtime reads
   * break_bloom on every dispatch (0: nothing else is read); only an operator whose name bits
   * meet it goes on to the entries, and a match calls dscope_debug_break_hook. */
  uint32_t break_count;
  uint32_t break_hits;  /* times the hook was called */
  uint64_t break_bloom;
  struct dscope_break_entry breaks[DSCOPE_MAX_BREAKS];
  /* Written once, when the runtime is loaded (0 before): */
  uint64_t instance;          /* differs in every process (pid, clocks): what a tool caches from
                                 one process is never taken for another's, e.g. after a re-run */
  int64_t tls_records_offset; /* where this thread's records pointer lies relative to its key
                                 sets, the same in every thread (one static TLS block): a block's
                                 `tls` is that thread's iff *(tls + offset) is the block */
  /* Constant, set by the static initializer (a reader needs no symbol lookup): */
  const void* fallthrough_kernel; /* &dscope::detail::fallthroughKernel, the boxed_fn_ of a fallthrough */
  const void* missing_kernel;     /* &dscope::detail::missingKernel, the boxed_fn_ of a missing kernel */
  const void* ambiguous_autograd_other_kernel; /* &dscope::detail::ambiguousAutogradOtherKernel */
  /* This build's layout profile (docs/DEBUG-INTERFACE.md §9): the text of the one schema PyTorch's
   * profile files are written in, holding every offset, size and count of debug/LayoutProfile.h's
   * list by name and the key table, ending with its digest line. A reader resolves the names it
   * needs from it, whatever build wrote it. In writable data, so that every core holds it. */
  const char* profile_text;
  uint64_t profile_size; /* bytes, without the terminating NUL */
};

/* The exported, never-stripped entry point for tools. Writable: debuggers arm the break filter. */
extern struct dscope_debug_descriptor_t dscope_debug_descriptor;

/* What the break hook's fourth argument describes: the dispatch it stops for, as the dispatcher
 * saw it, so that a debugger can explain why it went to its kernel. On the dispatching thread's
 * stack for the hook's call. */
#define DSCOPE_BREAK_MAX_ARGUMENTS 8
struct dscope_break_argument {
  uint32_t from_end; /* the argument's position counted from the schema's last argument (0) */
  uint32_t tensors;  /* the tensors it holds: 1 for a Tensor, 0 for a Tensor? that is None, n for a list */
  uint64_t keyset;   /* the union of their key sets (raw) */
};
struct dscope_break_dispatch {
  uint32_t kind;           /* enum dscope_record_kind */
  uint32_t argument_count; /* arguments[] in use: the dispatch-relevant (tensor) arguments, the first 8 */
  struct dscope_break_argument arguments[DSCOPE_BREAK_MAX_ARGUMENTS];
  uint64_t tls_included;    /* the thread's TLS key sets at the dispatch, decoded (raw) */
  uint64_t tls_excluded;
  uint64_t non_fallthrough; /* the operator's mask of keys that do not fall through, for these arguments */
};

/* Called on a dispatch matching the break filter; a debugger puts its breakpoint here.
 * op: dscope::impl::OperatorEntry*, keyset: raw key set, key: the chosen DispatchKey, dispatch: what
 * the dispatcher saw (arguments, TLS, mask). */
void dscope_debug_break_hook(const void* op, uint64_t keyset, uint16_t key, const struct dscope_break_dispatch* dispatch);

/* FNV-1a 64 of a NUL-terminated string (how break entries name operators). */
uint64_t dscope_fnv1a64(const char* s);

#ifdef __cplusplus
}
#endif

#endif /* DSCOPE_DEBUG_INTERFACE_H */
