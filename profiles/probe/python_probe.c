/* The layout of one CPython build, measured against that build's own headers (python3.X-dev ships
 * the internal ones): the values of inspect's PythonLayout (inspect/src/source/python/PythonLayout.h),
 * by the same names, as a layout profile's "NAME VALUE" lines. dscope-python-profile compiles and
 * runs it, and writes the profile of an interpreter that publishes no _Py_DebugOffsets (3.11, 3.12);
 * for 3.13 and later it also prints where _Py_DebugOffsets keeps each value (debug_offset_NAME), which
 * the tests hold against what the tools read from a process of that build. Version branches live
 * here, in the measuring, and nowhere in the reader. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>

#include "internal/pycore_frame.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#if PY_VERSION_HEX >= 0x030e0000
#include "internal/pycore_stackref.h"
#endif

#define VALUE(name, value) printf("%s %zu\n", name, (size_t)(value))
#define DEBUG_OFFSET(name, member) printf("debug_offset_%s %zu\n", name, offsetof(_Py_DebugOffsets, member))

int main(void) {
  printf("dscope-profile 1\nruntime cpython\nversion %s\n", PY_VERSION);
  VALUE("runtime_state_interpreters_head", offsetof(_PyRuntimeState, interpreters.head));
  VALUE("interpreter_state_next", offsetof(PyInterpreterState, next));
  VALUE("interpreter_state_threads_head", offsetof(PyInterpreterState, threads.head));
  VALUE("thread_state_next", offsetof(PyThreadState, next));
  VALUE("thread_state_native_thread_id", offsetof(PyThreadState, native_thread_id));
  VALUE("thread_state_thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX < 0x030c0000
  /* 3.11: the thread's innermost frame is its _PyCFrame's; a frame entered by a new evaluation
   * loop says so itself (is_entry). */
  VALUE("thread_state_current_frame", offsetof(PyThreadState, cframe));
  VALUE("cframe_current_frame", offsetof(_PyCFrame, current_frame));
  VALUE("interpreter_frame_executable", offsetof(_PyInterpreterFrame, f_code));
  VALUE("interpreter_frame_instr_ptr", offsetof(_PyInterpreterFrame, prev_instr));
  VALUE("interpreter_frame_is_entry", offsetof(_PyInterpreterFrame, is_entry));
#else
  /* 3.12 and later: an evaluation loop is entered through a frame owned by the C stack. */
  VALUE("thread_state_current_frame", offsetof(PyThreadState, current_frame));
  VALUE("interpreter_frame_executable", offsetof(_PyInterpreterFrame, f_executable));
  VALUE("interpreter_frame_instr_ptr", offsetof(_PyInterpreterFrame, instr_ptr));
#endif
  /* Frames with an owner from this one on are an evaluation loop's entry (and the like), no
   * Python code's: _PyFrame_IsIncomplete. */
#if PY_VERSION_HEX >= 0x030e0000
  VALUE("frame_owner_hidden_from", FRAME_OWNED_BY_INTERPRETER);
#elif PY_VERSION_HEX >= 0x030c0000
  VALUE("frame_owner_hidden_from", FRAME_OWNED_BY_CSTACK);
#endif
  VALUE("interpreter_frame_previous", offsetof(_PyInterpreterFrame, previous));
  VALUE("interpreter_frame_owner", offsetof(_PyInterpreterFrame, owner));
#if PY_VERSION_HEX >= 0x030e0000
  VALUE("executable_tag_bits", Py_TAG_BITS); /* f_executable is a _PyStackRef */
#else
  VALUE("executable_tag_bits", 0);
#endif
  VALUE("code_object_filename", offsetof(PyCodeObject, co_filename));
  VALUE("code_object_name", offsetof(PyCodeObject, co_name));
  VALUE("code_object_qualname", offsetof(PyCodeObject, co_qualname));
  VALUE("code_object_linetable", offsetof(PyCodeObject, co_linetable));
  VALUE("code_object_firstlineno", offsetof(PyCodeObject, co_firstlineno));
  VALUE("code_object_co_code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
  VALUE("pyobject_ob_type", offsetof(PyObject, ob_type));
  VALUE("type_object_tp_name", offsetof(PyTypeObject, tp_name));
  VALUE("bytes_object_ob_size", offsetof(PyBytesObject, ob_base.ob_size));
  VALUE("bytes_object_ob_sval", offsetof(PyBytesObject, ob_sval));
  VALUE("unicode_object_length", offsetof(PyASCIIObject, length));
  VALUE("unicode_object_state", offsetof(PyASCIIObject, hash) + sizeof(Py_hash_t)); /* a bit field */
  VALUE("sizeof_PyASCIIObject", sizeof(PyASCIIObject));
  VALUE("sizeof_PyCompactUnicodeObject", sizeof(PyCompactUnicodeObject));
  VALUE("function_code", offsetof(PyFunctionObject, func_code));
  VALUE("function_qualname", offsetof(PyFunctionObject, func_qualname));
  VALUE("function_module", offsetof(PyFunctionObject, func_module));
#if PY_VERSION_HEX >= 0x030d0000
  DEBUG_OFFSET("runtime_state_interpreters_head", runtime_state.interpreters_head);
  DEBUG_OFFSET("interpreter_state_next", interpreter_state.next);
  DEBUG_OFFSET("interpreter_state_threads_head", interpreter_state.threads_head);
  DEBUG_OFFSET("thread_state_next", thread_state.next);
  DEBUG_OFFSET("thread_state_native_thread_id", thread_state.native_thread_id);
  DEBUG_OFFSET("thread_state_thread_id", thread_state.thread_id);
  DEBUG_OFFSET("thread_state_current_frame", thread_state.current_frame);
  DEBUG_OFFSET("interpreter_frame_previous", interpreter_frame.previous);
  DEBUG_OFFSET("interpreter_frame_executable", interpreter_frame.executable);
  DEBUG_OFFSET("interpreter_frame_instr_ptr", interpreter_frame.instr_ptr);
  DEBUG_OFFSET("interpreter_frame_owner", interpreter_frame.owner);
  DEBUG_OFFSET("code_object_filename", code_object.filename);
  DEBUG_OFFSET("code_object_name", code_object.name);
  DEBUG_OFFSET("code_object_qualname", code_object.qualname);
  DEBUG_OFFSET("code_object_linetable", code_object.linetable);
  DEBUG_OFFSET("code_object_firstlineno", code_object.firstlineno);
  DEBUG_OFFSET("code_object_co_code_adaptive", code_object.co_code_adaptive);
  DEBUG_OFFSET("pyobject_ob_type", pyobject.ob_type);
  DEBUG_OFFSET("type_object_tp_name", type_object.tp_name);
  DEBUG_OFFSET("bytes_object_ob_size", bytes_object.ob_size);
  DEBUG_OFFSET("bytes_object_ob_sval", bytes_object.ob_sval);
  DEBUG_OFFSET("unicode_object_length", unicode_object.length);
  DEBUG_OFFSET("unicode_object_state", unicode_object.state);
  DEBUG_OFFSET("sizeof_PyASCIIObject", unicode_object.asciiobject_size);
  DEBUG_OFFSET("free_threaded", free_threaded);
#endif
  return 0;
}
