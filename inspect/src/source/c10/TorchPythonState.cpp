#include "source/c10/TorchPythonState.h"

#include "source/python/PythonObjects.h"
#include "target/ThreadLocal.h"

namespace dscope::inspect {

namespace {

// More entries than this in a thread's mode stack or functorch stack is no stack a program built:
// the vector's words are damaged (or the profile does not fit).
constexpr uint64_t kMaxStackEntries = 1 << 16;

// Reads one part: its value, or the reason it cannot be read.
template <class T, class Read>
void readPart(StatePart<T>& part, Read read) {
  if (!part.in_profile) return;
  try {
    part.value = read();
  } catch (const InspectError& e) {
    part.error = messageOf(e);
  }
}

// The elements of a std::vector at `vector` of `size`-byte elements: its begin and their number.
std::pair<uint64_t, uint64_t> vectorSpan(const TorchView& tv, uint64_t vector, uint64_t size, const char* what) {
  const C10Layout& l = tv.layout();
  const uint64_t begin = tv.mem().readPointer(vector + l.StdVector_begin, what);
  const uint64_t end = tv.mem().readPointer(vector + l.StdVector_end, what);
  if (end < begin || (end - begin) % size || (end - begin) / size > kMaxStackEntries || (begin == 0) != (end == 0))
    fail(std::string(what) + " at " + hex(vector) + " spans [" + hex(begin) + ", " + hex(end) +
         "), which is no vector of its elements (corrupt memory, or a profile that does not fit)");
  return {begin, (end - begin) / size};
}

// The Python class name of the mode a shared_ptr<SafePyObjectT> at `ptr` holds.
std::string modeName(const TorchView& tv, uint64_t ptr) {
  const C10Layout& l = tv.layout();
  const uint64_t mode = tv.mem().readPointer(ptr + l.SharedPtr_pointer, "a TorchDispatchMode");
  if (!mode) fail("a TorchDispatchMode slot at " + hex(ptr) + " holds a null pointer (corrupt memory?)");
  return pythonTypeName(tv.mem(), tv.mem().readPointer(mode + l.SafePyObject_data, "a TorchDispatchMode"));
}

// The logical stack c10's get_stack_at(i) walks: the engaged infra modes in key order, then stack_.
PythonDispatchState::Modes readModes(const TorchView& tv, const std::optional<uint64_t>& block) {
  PythonDispatchState::Modes out;
  if (!block) return out;
  const C10Layout& l = tv.layout();
  const uint64_t state = *block + l.Libc10Tls_torchDispatchModeState;
  const auto [begin, users] = vectorSpan(tv, state + l.TorchDispatchModeTLS_stack, l.sizeof_SharedPtr, "the TorchDispatchMode stack");
  std::vector<std::pair<uint64_t, std::string>> infra;  // the shared_ptr, its slot's name
  for (uint64_t k = 0; k < l.count_infra_modes; ++k) {
    const uint64_t optional = state + l.TorchDispatchModeTLS_infra_modes + k * l.sizeof_OptionalModePtr;
    const auto engaged = tv.mem().read<uint8_t>(optional + l.OptionalModePtr_engaged, "an infra TorchDispatchMode");
    if (engaged > 1) fail("the infra TorchDispatchMode slot " + std::to_string(k) + " at " + hex(optional) + " is neither set nor empty (corrupt memory?)");
    const std::string* name = tv.profile().nameOf("TorchDispatchModeKey", k);
    if (engaged) infra.emplace_back(optional + l.OptionalModePtr_payload, name ? *name : std::to_string(k));
  }
  out.count = infra.size() + users;
  for (const auto& [ptr, slot] : infra)
    if (out.stack.size() < PythonDispatchState::kMaxDispatchModes) out.stack.push_back({modeName(tv, ptr), slot});
  for (uint64_t i = 0; i < users && out.stack.size() < PythonDispatchState::kMaxDispatchModes; ++i)
    out.stack.push_back({modeName(tv, begin + i * l.sizeof_SharedPtr), ""});
  return out;
}

bool autogradBit(const TorchView& tv, const std::optional<uint64_t>& block, uint64_t byte, uint64_t bit, bool initial) {
  if (!block) return initial;
  return (tv.mem().read<uint8_t>(*block + tv.layout().Libc10Tls_autogradState + byte, "the thread's AutogradState") >> bit) & 1;
}

// functorch's DynamicLayers: libtorch_cpu's unique_ptr<FuncTorchTLSBase> (null until the thread first
// uses functorch) leads to the heap FuncTorchTLS that holds their vector.
uint64_t readFunctorchDepth(const TorchView& tv, int64_t tid) {
  const auto cpu = mappedModule(tv.mem(), "libtorch_cpu.so");
  if (!cpu) fail("libtorch_cpu is not loaded in this process");
  const auto block = threadLocalBlock(tv.mem(), tid, *cpu);
  if (!block) return 0;
  const C10Layout& l = tv.layout();
  const uint64_t tls = tv.mem().readPointer(*block + l.LibtorchCpuTls_functorchTLS + l.UniquePtr_pointer, "the thread's functorch TLS");
  if (!tls) return 0;
  std::string why;
  const std::string type = checkedTypeName(tv.mem(), tls, &why);
  if (type.find("FuncTorchTLS") == std::string::npos)
    fail("the thread's functorch TLS points to " + hex(tls) + ", which holds no FuncTorchTLS (" +
         (type.empty() ? why : "a " + type) + ": corrupt memory, or a profile that does not fit)");
  return vectorSpan(tv, tls + l.FuncTorchTLS_dynamicLayerStack, l.sizeof_DynamicLayer, "functorch's dynamic layer stack").second;
}

}  // namespace

PythonDispatchState torchPythonState(const TorchView& tv, int64_t tid) {
  const C10Layout& l = tv.layout();
  PythonDispatchState s;
  s.modes.in_profile = l.has_dispatch_modes;
  s.python_dispatcher.in_profile = l.has_python_dispatcher;
  s.grad_mode.in_profile = s.inference_mode.in_profile = l.has_autograd_state;
  s.functorch_depth.in_profile = l.has_functorch;
  if (!s.any()) return s;
  // libc10's block (nullopt: not allocated yet); a walk that cannot be made is every c10 part's reason.
  std::optional<uint64_t> c10;
  std::string c10_error;
  try {
    const auto module = mappedModule(tv.mem(), "libc10.so");
    if (!module) fail("libc10 is not loaded in this process");
    c10 = threadLocalBlock(tv.mem(), tid, *module);
  } catch (const InspectError& e) {
    c10_error = messageOf(e);
  }
  auto inC10 = [&](auto read) {
    return [&, read] {
      if (!c10_error.empty()) fail(c10_error);
      return read();
    };
  };
  readPart(s.modes, inC10([&] { return readModes(tv, c10); }));
  readPart(s.python_dispatcher, inC10([&] {
    return c10 && tv.mem().readPointer(*c10 + l.Libc10Tls_pythonDispatcherState, "the thread's Python dispatcher state") != 0;
  }));
  readPart(s.grad_mode, inC10([&] { return autogradBit(tv, c10, l.AutogradState_grad_mode, l.AutogradState_grad_mode_bit, true); }));
  readPart(s.inference_mode, inC10([&] {
    return autogradBit(tv, c10, l.AutogradState_inference_mode, l.AutogradState_inference_mode_bit, false);
  }));
  readPart(s.functorch_depth, [&] { return readFunctorchDepth(tv, tid); });
  return s;
}

}  // namespace dscope::inspect
