// op_catalog: an operator registry at real scale — every operator name PyTorch 2.11 registers.
//
// Reads shared/data/torch-2.11-op-names.txt (or the file given as the first argument) and
// registers each name (except the runtime's own aten operators) as "<name>(Tensor self) ->
// Tensor" with kernels in a realistic mix, by position in the list:
//   5 in 10  CPU + Meta + AutogradCPU      (a native op with a derivative)
//   2 in 10  CompositeImplicitAutograd     (a decomposition)
//   1 in 10  CPU + Meta                    (no derivative: the autograd fallback runs)
//   1 in 10  CPU only                      (Meta goes to the Meta fallback)
//   1 in 10  CPU + AutogradCPU
// then waits, so that a debugger can attach or a core can be taken.
//
// What you should see: "op_catalog: N operators registered (K kernels), pid P, ready".
// Flags: --core aborts once ready (a core of the whole registry); --exit returns at once.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "dscope/Library.h"
#include "dscope/aten/Functions.h"
#include "sample_util.h"

using namespace dscope;

namespace {

Tensor catalog_cpu(const Tensor& self) { return self; }
Tensor catalog_meta(const Tensor& self) { return self; }
Tensor catalog_composite(const Tensor& self) { return self; }
// Registered boxed (like a kernel from Python): runs the op below autograd for any operator.
void catalog_autograd(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  AutoDispatchBelowADInplaceOrView guard;
  op.redispatchBoxed(ks & after_autograd_keyset, stack);
}

}  // namespace

int main(int argc, char** argv) {
  sample::start(argc, argv);
  std::string path = argc > 1 && argv[1][0] != '-' ? argv[1] : DSCOPE_SHARED_DIR "/data/torch-2.11-op-names.txt";
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "op_catalog: cannot read %s\n", path.c_str());
    return 2;
  }
  std::map<std::string, std::unique_ptr<Library>> libraries;  // one fragment per namespace
  size_t ops = 0, kernels = 0;
  auto add = [&](Library& lib, const std::string& name, DispatchKey k, CppFunction f) {
    lib.impl(name, dispatch(k, std::move(f)));
    ++kernels;
  };
  for (std::string name; std::getline(in, name);) {
    if (name.empty() || Dispatcher::singleton().findOp(OperatorName::parse(name))) continue;
    std::string ns = name.substr(0, name.find("::"));
    auto& lib = libraries[ns];
    if (!lib) lib = std::make_unique<Library>(Library::FRAGMENT, ns, std::nullopt, __FILE__, __LINE__);
    lib->def(name + "(Tensor self) -> Tensor");
    switch (ops++ % 10) {
      case 0: case 1: case 2: case 3: case 4:
        add(*lib, name, DispatchKey::CPU, &catalog_cpu);
        add(*lib, name, DispatchKey::Meta, &catalog_meta);
        add(*lib, name, DispatchKey::AutogradCPU, CppFunction::makeFromBoxedFunction(&catalog_autograd));
        break;
      case 5: case 6:
        add(*lib, name, DispatchKey::CompositeImplicitAutograd, &catalog_composite);
        break;
      case 7:
        add(*lib, name, DispatchKey::CPU, &catalog_cpu);
        add(*lib, name, DispatchKey::Meta, &catalog_meta);
        break;
      case 8:
        add(*lib, name, DispatchKey::CPU, &catalog_cpu);
        break;
      default:
        add(*lib, name, DispatchKey::CPU, &catalog_cpu);
        add(*lib, name, DispatchKey::AutogradCPU, CppFunction::makeFromBoxedFunction(&catalog_autograd));
    }
  }
  std::printf("op_catalog: %zu operators registered (%zu kernels), pid %d, ready\n", ops, kernels, getpid());
  sample::sample_checkpoint("catalog registered");
  if (sample::hasFlag(argc, argv, "--exit")) return 0;
  if (sample::hasFlag(argc, argv, "--core")) std::abort();
  for (;;) pause();
}
