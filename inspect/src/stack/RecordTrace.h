// Our runtime's side of dispatch-trace and dispatch-summary: what its record blocks (or, for one
// thread, its native stack) say each thread is dispatching.
#pragma once

#include <string>

#include "model/Dispatcher.h"
#include "source/dscope/RuntimeView.h"
#include "stack/DispatchSummary.h"

namespace dscope::inspect {

// Every thread's dispatch state, from the record blocks.
ProcessDispatchState recordsDispatchState(const RuntimeView& rt);
// dispatch-trace's answer: the record chains, or (request.frames) one thread's chain rebuilt from
// its stack, with d's stored kernels telling which kernel each dispatch entered.
std::string recordsDispatchTrace(const RuntimeView& rt, const Dispatcher& d, const TraceRequest& request);

}  // namespace dscope::inspect
