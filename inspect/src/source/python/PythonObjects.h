// Python objects read out of a target, by the parts of CPython's object ABI that every interpreter
// it reads shares (CPython 3.11 to 3.14 on x86-64): a PyObject's type pointer and a type's name.
// What needs more than that (frames, the interpreter's own layout) is another reader's.
#pragma once

#include <cstdint>
#include <string>

namespace dscope::inspect {

class Remote;

// PyObject {ob_refcnt, ob_type}; PyTypeObject's PyVarObject head (ob_refcnt, ob_type, ob_size), then
// tp_name: the same words in every CPython 3.11-3.14 on x86-64 (the default build: a free-threaded
// one's object head is longer). PythonView passes its interpreter's own (PythonLayout).
constexpr uint64_t kPyObjectObType = 8;
constexpr uint64_t kPyTypeObjectTpName = 24;

// The name of the Python class of the object at `object`: Py_TYPE(object)->tp_name, the bare class
// name for a class defined in Python ("FakeTensorMode", "MyMode"), the dotted one a C extension type
// gives itself. InspectError (one line naming the object) when the object or its type cannot be read
// or the name is no printable text.
std::string pythonTypeName(const Remote& mem, uint64_t object, uint64_t ob_type = kPyObjectObType,
                           uint64_t tp_name = kPyTypeObjectTpName);

}  // namespace dscope::inspect
