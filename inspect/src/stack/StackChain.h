// dispatch-trace --frames: the dispatch chain rebuilt from the native stack (for runtimes built
// with DSCOPE_DISPATCH_RECORDS=OFF, or to cross-check the records). The front end gives only each
// stack frame's pc and stack pointer (dscope_target's stack_frame): which functions run there
// (the library's symbolizer), which of them are dispatches, which kernel each dispatch entered
// (the registry) and so what it dispatched, and how the chain folds, is decided here, once.
#pragma once

#include <cstdint>
#include <vector>

#include "dscope/DispatchRecords.h"
#include "model/Dispatcher.h"
#include "source/dscope/RuntimeView.h"

namespace dscope::inspect {

// One dispatch found on the stack, as the record the runtime would have pushed for it. The key set
// is not on the stack without DWARF: rec.keyset holds the key alone, that of the kernel it entered.
struct StackDispatch {
  dscope_dispatch_record rec{};  // op (OperatorEntry*) and kernel (AnnotatedKernel*): 0 when unknown
  uint64_t frame = 0;            // the stack frame that ran it (0 = innermost)
  // What the kernel it entered tells: 0 operators when it entered none (yet); else how many
  // operators, and of rec.op how many keys, hold that kernel (1: rec.op, rec.keyset are known).
  uint32_t ops = 0, keys = 0;
  bool keyKnown() const { return ops == 1 && keys == 1; }
};

struct StackChain {
  // Outermost: the thread's first frame (or main); Bound: --max-frames; DebuggerCap: the front
  // end's frame_cap; Unreadable, Corrupt: the debugger's unwinder stopped early (dscope_frames_end).
  enum class End { Outermost, Bound, DebuggerCap, Unreadable, Corrupt };
  int64_t tid = 0;
  uint64_t frames_walked = 0;  // stack frames (inlined calls are part of the frame they are in)
  uint64_t debugger_cap = 0;   // the front end's frame_cap
  End end = End::Outermost;
  std::vector<StackDispatch> dispatches;  // oldest first
};

// Walks at most max_frames stack frames of thread tid outwards from the innermost, d (our runtime
// as the model sees it) telling which kernel each dispatch entered. Fails (one line) when the
// front end says the thread's process is gone: what was read of it is no chain.
StackChain readStackChain(const RuntimeView& rt, const Dispatcher& d, int64_t tid, uint64_t max_frames);

}  // namespace dscope::inspect
