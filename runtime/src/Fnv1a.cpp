// The break filter's name hash, in dscope_common: the runtime hashes operator names with it and
// libdscope_inspect hashes the names a debugger arms.
#include "dscope/DebugInterface.h"

extern "C" __attribute__((visibility("default"))) uint64_t dscope_fnv1a64(const char* s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
  return h;
}
