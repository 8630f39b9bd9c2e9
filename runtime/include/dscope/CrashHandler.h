// The crash path: on SIGSEGV, SIGBUS or SIGABRT, print what the dispatch records say (the
// repeating dispatch, the first records) and a symbolized stack, then let the default action
// run so the core file is still written. Runs on an alternate signal stack, so it works for a
// stack overflow. Also enabled by DSCOPE_CRASH_HANDLER=1 when the runtime loads.
//
// Signal stacks are per thread: the installing thread gets one at once, every other thread
// when it first dispatches. Install before starting threads that may crash.
#pragma once

namespace dscope {

void install_crash_handler();

namespace detail {
// Called by the record registry when a thread first dispatches.
void onThreadRegistered();
}  // namespace detail

}  // namespace dscope
