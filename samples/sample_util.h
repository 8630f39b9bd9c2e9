// What every sample shares: command-line flags, a checkpoint a debugger can break on, and the
// crash handler (so an overflow or an uncaught error prints the dispatch summary and still
// leaves a core file).
#pragma once

#include <cstdio>
#include <string_view>

#include "dscope/CrashHandler.h"

namespace sample {

inline bool hasFlag(int argc, char** argv, std::string_view flag) {
  for (int i = 1; i < argc; ++i)
    if (argv[i] == flag) return true;
  return false;
}

// `break sample_checkpoint` stops a sample at the moment its scenario is visible.
extern "C" [[gnu::noinline]] inline void sample_checkpoint(const char* what) {
  asm volatile("" : : "r"(what) : "memory");
}

inline void start(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // keep stdout in step with the trace on stderr
  if (!hasFlag(argc, argv, "--no-crash-handler")) dscope::install_crash_handler();
}

}  // namespace sample
