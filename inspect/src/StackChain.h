// dispatch-trace --frames: the dispatch chain rebuilt from the debugger's native stack (for
// runtimes built with DSCOPE_DISPATCH_RECORDS=OFF, or to cross-check the records). The front end
// only names frames and reads a few of their variables (dscope_target's frame_* callbacks); which
// frames are dispatches, what they dispatched and how the chain folds is decided here, once.
#pragma once

#include <cstdint>
#include <vector>

#include "Commands.h"

namespace dscope::inspect {

// One dispatch found on the stack, as the record the runtime would have pushed for it.
struct StackDispatch {
  dscope_dispatch_record rec{};  // op (OperatorEntry*) and kernel (AnnotatedKernel*): 0 when unreadable
  uint64_t frame = 0;            // the level of the frame that ran it (0 = innermost)
  bool keyset_known = false;     // false: the optimizer dropped ks, and the key could not be recovered
  bool key_recovered = false;    // rec.keyset holds only the key, found from the kernel that ran
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

// Walks at most max_frames stack frames of thread tid outwards from the innermost. Fails (one line)
// when the front end says the thread's process is gone: what was read of it is no chain.
StackChain readStackChain(Session& s, int64_t tid, uint64_t max_frames);

}  // namespace dscope::inspect
