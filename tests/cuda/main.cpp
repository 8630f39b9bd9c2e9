// One test program for the CUDA backend, run three ways by ctest (one doctest test suite each):
//   cuda_tests --host     what needs no GPU: the allocator's bookkeeping, the launch arguments
//   cuda_tests --gpu      what needs a GPU; without a usable one it prints why and exits 77
//   cuda_tests --no-gpu   the no-GPU path; exits 77 where a GPU is usable
// (ctest: SKIP_RETURN_CODE 77). Further arguments go to doctest.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "dscope/cuda/CUDA.h"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "--host" && mode != "--gpu" && mode != "--no-gpu") {
    std::fprintf(stderr, "usage: %s --host|--gpu|--no-gpu [doctest options]\n", argv[0]);
    return 2;
  }
  if (mode == "--gpu" && !dscope::cuda::is_available()) {
    std::printf("skipped: no usable GPU: %s\n", dscope::cuda::unavailable_reason().c_str());
    return 77;
  }
  if (mode == "--no-gpu" && dscope::cuda::is_available()) {
    std::printf("skipped: a GPU is usable here, so the no-GPU path cannot be checked\n");
    return 77;
  }
  std::vector<char*> args{argv[0]};
  args.insert(args.end(), argv + 2, argv + argc);
  doctest::Context context(static_cast<int>(args.size()), args.data());
  context.setOption("test-suite", mode.substr(2).c_str());  // host, gpu, no-gpu
  return context.run();
}
