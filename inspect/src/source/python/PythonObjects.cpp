#include "source/python/PythonObjects.h"

#include <algorithm>

#include "target/Remote.h"

namespace dscope::inspect {

namespace {
// A class name longer than this is no class name (a dotted name of a C type is well under it).
constexpr size_t kMaxTypeName = 256;
}  // namespace

std::string pythonTypeName(const Remote& mem, uint64_t object, uint64_t ob_type, uint64_t tp_name) {
  if (!object || object % 8) fail("no Python object at " + hex(object) + " (a null or misaligned pointer)");
  const uint64_t type = mem.readPointer(object + ob_type, "a Python object");
  if (!type || type % 8) fail("the Python object at " + hex(object) + " has no type (its ob_type is " + hex(type) + ")");
  const uint64_t name = mem.readPointer(type + tp_name, "a Python type");
  if (!name) fail("the Python type at " + hex(type) + " has no name");
  std::string text = mem.readString(name, "a Python type's name");
  // An identifier, maybe dotted: no space or control character (UTF-8 bytes of a non-ASCII name pass).
  const bool printable = std::all_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > ' ' && u != 127;
  });
  if (text.empty() || text.size() > kMaxTypeName || !printable)
    fail("the Python object at " + hex(object) + " has a type whose name is no class name (corrupt memory?)");
  return text;
}

}  // namespace dscope::inspect
