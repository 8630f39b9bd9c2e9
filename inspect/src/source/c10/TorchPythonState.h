// A thread's Python dispatch state on a real c10 build (PyTorch 2.x): the thread-locals that put keys
// into its TLS sets, located by the build's layout profile (C10Layout.h's optional groups) in the
// TLS blocks of libc10 and libtorch_cpu, which export none of them.
#pragma once

#include <cstdint>

#include "model/Dispatcher.h"
#include "source/c10/TorchView.h"

namespace dscope::inspect {

// Every part the profile states, read for thread tid (a part whose memory cannot be read carries the
// reason; the others are still read). A thread that has not allocated a module's TLS block yet holds
// its initial state there: no modes, the Python dispatcher off, grad mode on, inference mode off, no
// functorch layer.
PythonDispatchState torchPythonState(const TorchView& tv, int64_t tid);

}  // namespace dscope::inspect
