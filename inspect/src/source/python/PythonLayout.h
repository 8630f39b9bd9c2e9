// What the CPython reader needs to know of one interpreter build (PythonView.h): one offsets struct,
// one list of its names, filled once per target from one of two places, then checked the same way:
//  * 3.13 and later publish _Py_DebugOffsets at the start of _PyRuntime (cookie "xdebugpy", then
//    PY_VERSION_HEX): the values it holds are read from the target, at the places the contract of
//    that minor version (PythonLayout.cpp) says, and the few values it does not publish come from
//    that contract;
//  * 3.11 (and 3.12) publish none: a layout profile measured against the interpreter's own headers
//    (profiles/probe/python_probe.c, dscope-python-profile) gives them all, found by the build-id
//    of the file that defines _PyRuntime.
// The names are the probe's and the profile's (and _Py_DebugOffsets' where it has them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dscope::inspect {

// The values _Py_DebugOffsets publishes (3.13+), as X(name).
#define DSCOPE_PY_DEBUG_OFFSETS(X)                                                                      \
  X(runtime_state_interpreters_head)                                                                    \
  X(interpreter_state_next)                                                                             \
  X(interpreter_state_threads_head)                                                                     \
  X(thread_state_next)                                                                                  \
  X(thread_state_native_thread_id)                                                                      \
  X(thread_state_thread_id) /* pthread_self() of the thread: its struct pthread, its thread pointer */  \
  X(thread_state_current_frame) /* 3.11: of its _PyCFrame (cframe_current_frame) */                     \
  X(interpreter_frame_previous)                                                                         \
  X(interpreter_frame_executable) /* the code object (f_code, f_executable) */                          \
  X(interpreter_frame_instr_ptr)  /* 3.11: prev_instr; either way lasti = (it - code) / 2 */            \
  X(interpreter_frame_owner)                                                                            \
  X(code_object_filename)                                                                               \
  X(code_object_name)                                                                                   \
  X(code_object_qualname)                                                                               \
  X(code_object_linetable)                                                                              \
  X(code_object_firstlineno)                                                                            \
  X(code_object_co_code_adaptive)                                                                       \
  X(pyobject_ob_type)                                                                                   \
  X(type_object_tp_name)                                                                                \
  X(bytes_object_ob_size)                                                                               \
  X(bytes_object_ob_sval)                                                                               \
  X(unicode_object_length)                                                                              \
  X(unicode_object_state)                                                                               \
  X(sizeof_PyASCIIObject)

// The values it does not publish: a contract's constants, or a profile's. Optional ones are
// kAbsentValue where the build has no such thing.
#define DSCOPE_PY_CONTRACT_VALUES(X)                                                                    \
  X(cframe_current_frame)          /* optional: 3.11's tstate->cframe->current_frame */                 \
  X(interpreter_frame_is_entry)    /* optional: 3.11's entry-frame flag (bool) */                       \
  X(frame_owner_hidden_from)      /* optional: 3.12+: owners from here on are no Python code's frames */\
  X(executable_tag_bits)           /* 3.14: f_executable is a _PyStackRef, these low bits its tag */     \
  X(sizeof_PyCompactUnicodeObject)                                                                      \
  X(function_code)                                                                                      \
  X(function_qualname)                                                                                  \
  X(function_module)

constexpr uint64_t kAbsentValue = ~uint64_t{0};

struct PythonLayout {
#define DSCOPE_PY_FIELD(name) uint64_t name = kAbsentValue;
  DSCOPE_PY_DEBUG_OFFSETS(DSCOPE_PY_FIELD)
  DSCOPE_PY_CONTRACT_VALUES(DSCOPE_PY_FIELD)
#undef DSCOPE_PY_FIELD
  // Every value by name, in the lists' order: what `python-bt --layout` prints.
  std::vector<std::pair<const char*, uint64_t>> values() const;
};

// Which of the lists' values may be absent.
bool optionalPythonValue(const std::string& name);

// Where an interpreter's layout comes from, and what it says of itself.
struct ResolvedPython {
  PythonLayout layout;
  std::string version;  // "3.13.5"
  std::string origin;   // "_Py_DebugOffsets (contract 3.13)" or "the layout profile PATH"
  // From _Py_DebugOffsets: where the contract read each published value, as
  // ("debug_offset_NAME", offsetof(_Py_DebugOffsets, ...)), free_threaded's last (what
  // `python-bt --layout` prints after the values, and python_probe.c measures); none from a profile.
  std::vector<std::pair<std::string, uint64_t>> places;
};

// A 3.11 (or 3.12) interpreter's layout from the text of its profile (runtime cpython, no key
// table, every value of the lists but the optional ones) for the interpreter of build-id build_id;
// InspectError "ORIGIN is unusable: ..." (one line) when the text is no such profile.
ResolvedPython pythonProfileLayout(const std::string& text, const std::string& origin, const std::string& build_id);

class Remote;
// The layout of the interpreter whose _PyRuntime lies at `runtime`, defined by the module file
// `file` (its build-id finds a profile); InspectError (one line) when there is none or it fails
// its checks.
ResolvedPython resolvePythonLayout(const Remote& mem, uint64_t runtime, const std::string& file);

}  // namespace dscope::inspect
