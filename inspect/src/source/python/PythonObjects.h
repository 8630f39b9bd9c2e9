// Python objects read out of a target, by the parts of CPython's object ABI that every interpreter
// it reads shares (CPython 3.11 to 3.14 on x86-64): a PyObject's type pointer and a type's name.
// What needs more than that (frames, the interpreter's own layout) is another reader's.
#pragma once

#include <cstdint>
#include <string>

namespace dscope::inspect {

class Remote;

// The name of the Python class of the object at `object`: Py_TYPE(object)->tp_name (ob_type at +8,
// tp_name at +24), the bare class name for a class defined in Python ("FakeTensorMode", "MyMode"),
// the dotted one a C extension type gives itself. InspectError (one line naming the object) when the
// object or its type cannot be read or the name is no printable text.
std::string pythonTypeName(const Remote& mem, uint64_t object);

}  // namespace dscope::inspect
