// A c10 build's side of dispatch-trace and dispatch-summary: release builds keep no dispatch
// records, so each thread's chain is rebuilt from its native stack.
#pragma once

#include <string>

#include "model/Dispatcher.h"
#include "source/c10/TorchView.h"
#include "source/python/PythonView.h"
#include "stack/DispatchSummary.h"

namespace dscope::inspect {

// Every thread's dispatch state, from the innermost frames of its stack.
ProcessDispatchState torchDispatchState(const TorchView& tv, const Dispatcher& d, const PythonView* py);
// dispatch-trace's answer (text only), d's stored kernels telling which frames are kernels, each
// evaluation loop's frame followed by the Python frames it runs (py: the process's interpreter, or null).
std::string torchDispatchTrace(const TorchView& tv, const Dispatcher& d, const PythonView* py, const TraceRequest& request);

}  // namespace dscope::inspect
