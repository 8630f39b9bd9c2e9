// A c10 build's side of dispatch-trace and dispatch-summary: release builds keep no dispatch
// records, so each thread's chain is rebuilt from its native stack.
#pragma once

#include <string>

#include "model/Dispatcher.h"
#include "source/c10/TorchView.h"
#include "stack/DispatchSummary.h"

namespace dscope::inspect {

// Every thread's dispatch state, from the innermost frames of its stack.
ProcessDispatchState torchDispatchState(const TorchView& tv, const Dispatcher& d);
// dispatch-trace's answer (text only), d's stored kernels telling which frames are kernels.
std::string torchDispatchTrace(const TorchView& tv, const Dispatcher& d, const TraceRequest& request);

}  // namespace dscope::inspect
