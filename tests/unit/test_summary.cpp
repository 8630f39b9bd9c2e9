// libdscope_inspect's dscope_value_summary (the debuggers' value printers) in-process, through the
// memcpy target of test_util.h. Every expected text comes from the runtime's own
// in-process API (toString, Tensor::toString, the tensor's sizes, the operator's snapshot, the
// TLS accessors) or from the scenario, never from the library's output.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "dscope/Library.h"
#include "dscope/LocalDispatchKeySet.h"
#include "dscope/aten/Functions.h"
#include "dscope/autograd/Autograd.h"
#include "dscope/debug/Layout.h"
#include "test_util.h"

using namespace dscope;
using K = DispatchKey;
using testing::checkOneLineError;
using testing::JsonChecker;
using testing::run;
using testing::summaryOf;
using testing::TestTarget;

namespace {

constexpr int kSummProbeCpuLine = __LINE__ + 1;  // the library names the kernel with its definition line
Tensor summProbeCpu(const Tensor& x) { return x; }
void summProbeBoxed(const OperatorHandle&, Stack*) {}

// summ::probe: a CPU kernel, a fallthrough at Meta, a boxed kernel at PrivateUse1, a stateful
// functor at CUDA (a lambda with a capture lives on the heap); nothing elsewhere (missing).
void registerSummaryOps() {
  static Library* lib = [] {
    auto* l = new Library(Library::FRAGMENT, "summ", std::nullopt, "test_summary.cpp", 31);
    l->def("probe(Tensor x) -> Tensor");
    l->impl("probe", dispatch(K::CPU, &summProbeCpu));
    l->impl("probe", dispatch(K::Meta, CppFunction::makeFallthrough()));
    l->impl("probe", dispatch(K::PrivateUse1, CppFunction::makeFromBoxedFunction(&summProbeBoxed)));
    int state = 7;
    l->impl("probe", dispatch(K::CUDA, [state](const Tensor& x) { return state ? x : x; }));
    l->def("nokernels(Tensor x) -> Tensor");
    return l;
  }();
  (void)lib;
}

TestTarget& target() {
  registerSummaryOps();
  static TestTarget t;
  return t;
}

uint64_t addr(const void* p) { return reinterpret_cast<uint64_t>(p); }
std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The text and the JSON of one summary; checks that both parse and agree.
struct Both {
  std::string text;  // without the newline
  std::string json;
};
Both summary(TestTarget& t, const std::string& type, uint64_t word) {
  auto text = summaryOf(t, type, word);
  auto json = summaryOf(t, type, word, true);
  INFO(type << " " << hex(word) << " -> " << text.text << " / " << json.text);
  REQUIRE(!text.error);
  REQUIRE(!json.error);
  REQUIRE(text.text.find('\n') == text.text.size() - 1);  // one line
  CHECK(JsonChecker::valid(json.text));
  Both b{text.text.substr(0, text.text.size() - 1), json.text};
  // The JSON's summary is the text (no quote or backslash in these summaries to escape).
  CHECK(json.text.rfind("{\"summary\":\"" + b.text + "\",\"children\":[", 0) == 0);
  return b;
}

std::string typedChild(const std::string& name, const std::string& summary, const std::string& type, uint64_t word) {
  return "{\"name\":\"" + name + "\",\"summary\":\"" + summary + "\",\"type\":\"" + type + "\",\"word\":\"" + hex(word) + "\"}";
}
std::string textChild(const std::string& name, const std::string& summary) {
  return "{\"name\":\"" + name + "\",\"summary\":\"" + summary + "\"}";
}
std::string arrayChild(const std::string& name, IntArrayRef values) {
  std::string list, elements;
  for (size_t i = 0; i < values.size(); ++i) {
    list += (i ? ", " : "") + std::to_string(values[i]);
    elements += (i ? "," : "") + std::to_string(values[i]);
  }
  return "{\"name\":\"" + name + "\",\"summary\":\"[" + list + "]\",\"type\":\"int64[]\",\"elements\":[" + elements + "]}";
}
std::string noChildren(const Both& b) { return b.json.substr(b.json.size() - 4); }

}  // namespace

TEST_SUITE("summary") {
  TEST_CASE("value types: the runtime's own names for keys, backends, key sets, dtypes, devices") {
    auto& t = target();
    for (K k : {K::CPU, K::AutogradCPU, K::BackendSelect, K::AutocastCUDA, K::Undefined, K::CompositeImplicitAutograd})
      CHECK(summary(t, "DispatchKey", static_cast<uint16_t>(k)).text == toString(k));
    for (BackendComponent b : {BackendComponent::CPUBit, BackendComponent::CUDABit, BackendComponent::PrivateUse1Bit})
      CHECK(summary(t, "BackendComponent", static_cast<uint8_t>(b)).text == toString(b));
    for (ScalarType st : {ScalarType::Float, ScalarType::Long, ScalarType::Half, ScalarType::Double, ScalarType::BFloat16})
      CHECK(summary(t, "ScalarType", static_cast<uint8_t>(st)).text == toString(st));
    for (Device d : {Device(DeviceType::CPU), Device(DeviceType::CUDA, 1), Device(DeviceType::Meta),
                     Device(DeviceType::PrivateUse1, 0)}) {
      uint16_t bits = 0;
      static_assert(sizeof bits == sizeof d);
      std::memcpy(&bits, &d, sizeof bits);  // a Device's own two bytes, as a debugger reads them
      CHECK(summary(t, "Device", bits).text == d.str());
    }
    CHECK(summary(t, "ScalarType", 3).text == "unknown (3)");
  }

  TEST_CASE("DispatchKeySet: PyTorch's repr, one DispatchKey child per key, with its value") {
    auto& t = target();
    const DispatchKeySet ks = computeTensorKeySet(DeviceType::CPU);
    auto b = summary(t, "dscope::DispatchKeySet", ks.raw_repr());
    CHECK(b.text == toString(ks));
    std::string children;
    int i = 0;
    for (K k : ks)
      children += (i ? "," : "") + typedChild("[" + std::to_string(i) + "]", toString(k), "dscope::DispatchKey", static_cast<uint16_t>(k)), ++i;
    CHECK(i == 4);
    CHECK(b.json == "{\"summary\":\"" + toString(ks) + "\",\"children\":[" + children + "]}\n");
    CHECK(summary(t, "dscope::DispatchKeySet", 0).json == "{\"summary\":\"DispatchKeySet()\",\"children\":[]}\n");
  }

  TEST_CASE("Tensor and TensorImpl: Tensor::toString, the key set, grad_fn from the node's vtable, children") {
    auto& t = target();
    Tensor x = at::randn({2, 3}, TensorOptions().requires_grad(true));
    Tensor y = at::randn({3, 4});
    Tensor c = at::mm(x, y);
    REQUIRE(c.grad_fn());

    auto bx = summary(t, "Tensor", addr(&x));
    CHECK(bx.text == x.toString() + " keys=" + toString(x.key_set()));
    CHECK(summary(t, "TensorImpl", addr(x.unsafeGetTensorImpl())).json == bx.json);
    uint16_t device_bits = 0;
    const Device device = x.device();
    std::memcpy(&device_bits, &device, sizeof device_bits);
    CHECK(bx.json == "{\"summary\":\"" + bx.text + "\",\"children\":[" + arrayChild("sizes", x.sizes()) + "," +
                         arrayChild("strides", x.strides()) + "," +
                         typedChild("dtype", toString(x.dtype()), "dscope::ScalarType", static_cast<uint8_t>(x.dtype())) + "," +
                         typedChild("device", x.device().str(), "dscope::Device", device_bits) + "," +
                         typedChild("key_set", toString(x.key_set()), "dscope::DispatchKeySet", x.key_set().raw_repr()) + "," +
                         typedChild("requires_grad", "true", "bool", 1) + "," +
                         typedChild("grad_fn", "(none)", "dscope::autograd::Node*", 0) + "]}\n");

    // The node's class comes from the ELF symbol of its vtable pointer ("vtable for
    // dscope::autograd::(anonymous namespace)::MmBackward0 + 16").
    const auto* node = c.grad_fn().get();
    const std::string expected = c.toString() + " keys=" + toString(c.key_set()) + " grad_fn=<" + node->name() + ">";
    auto bc = summary(t, "Tensor", addr(&c));
    CHECK(bc.text == expected);
    CHECK(bc.json.find(typedChild("grad_fn", node->name(), "dscope::autograd::Node*", addr(node))) != std::string::npos);
    CHECK(bc.json.find(arrayChild("sizes", c.sizes())) != std::string::npos);
    // No module files to read symbols from (a front end without module_at): the node is still
    // shown, by address.
    t.t.module_at = nullptr;
    CHECK(summary(t, "Tensor", addr(&c)).text ==
          c.toString() + " keys=" + toString(c.key_set()) + " grad_fn=<autograd node at " + hex(addr(node)) + ">");
    t.t.module_at = &TestTarget::moduleAt;

    Tensor undefined;
    auto bu = summary(t, "Tensor", addr(&undefined));
    CHECK(bu.text == undefined.toString());
    CHECK(noChildren(bu) == "[]}\n");

    // A scalar (no dimensions) and a non-contiguous view: sizes and strides as the tensor has them.
    Tensor s = at::ones({});
    CHECK(summary(t, "Tensor", addr(&s)).text == s.toString() + " keys=" + toString(s.key_set()));
    Tensor v = y.t();
    auto bv = summary(t, "Tensor", addr(&v));
    CHECK(bv.json.find(arrayChild("strides", v.strides())) != std::string::npos);
  }

  TEST_CASE("a corrupt TensorImpl: one line, no read past kMaxDim") {
    auto& t = target();
    TensorImpl corrupt;
    corrupt.dim = 200;
    auto r = summaryOf(t, "TensorImpl", addr(&corrupt));
    checkOneLineError(r);
    CHECK(r.text == "dscope: tensor of 200 dimensions (at most 8; corrupt memory?)\n");
  }

  TEST_CASE("OperatorName, OperatorHandle, OperatorEntry: names, schema, registered kernels newest first") {
    auto& t = target();
    OperatorHandle add = Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor");
    const OperatorName& add_name = add.operator_name();
    CHECK(summary(t, "OperatorName", addr(&add_name)).text == add_name.full());
    // A name past the small-string buffer lives on the heap.
    OperatorName long_name{"a_namespace_longer_than_sso::an_operator", "an_overload_name_too"};
    CHECK(summary(t, "OperatorName", addr(&long_name)).text == long_name.full());

    OperatorHandle mm = Dispatcher::singleton().findSchemaOrThrow("aten::mm", "");
    CHECK(summary(t, "OperatorHandle", addr(&mm)).text ==
          "OperatorHandle(aten::mm, schema: " + mm.entry().snapshot().schema + ")");
    auto typed = mm.typed<Tensor(const Tensor&, const Tensor&)>();
    CHECK(summary(t, "OperatorHandle", addr(&typed)).text == summary(t, "OperatorHandle", addr(&mm)).text);
    OperatorHandle null_handle(nullptr);
    CHECK(summary(t, "OperatorHandle", addr(&null_handle)).text == "OperatorHandle(null)");

    const impl::OperatorEntry& probe = Dispatcher::singleton().findSchemaOrThrow("summ::probe", "").entry();
    const auto snap = probe.snapshot();
    auto b = summary(t, "OperatorEntry", addr(&probe));
    REQUIRE(snap.kernels.size() == 4);
    CHECK(b.text == "OperatorEntry(summ::probe, schema: " + snap.schema + ", 4 registered kernels)");
    std::string children;
    // The children are the kernel list, newest first: registerSummaryOps's order reversed.
    int i = 0;
    for (K key : {K::CUDA, K::PrivateUse1, K::Meta, K::CPU})
      for (const auto& k : snap.kernels)
        if (k.key == toString(key)) {
          children += (i ? "," : "") + textChild("[" + std::to_string(i) + "]", k.key + ": " + k.debug);
          ++i;
        }
    CHECK(b.json == "{\"summary\":\"" + b.text + "\",\"children\":[" + children + "]}\n");
    CHECK(b.json.find("CUDA: registered at test_summary.cpp:31") != std::string::npos);  // the newest: [0]

    const impl::OperatorEntry& bare = Dispatcher::singleton().findSchemaOrThrow("summ::nokernels", "").entry();
    CHECK(summary(t, "OperatorEntry", addr(&bare)).text ==
          "OperatorEntry(summ::nokernels, schema: " + bare.snapshot().schema + ", 0 registered kernels)");
  }

  TEST_CASE("KernelFunction: the user's function by the target's symbols, the sentinels by name") {
    auto& t = target();
    const impl::OperatorEntry& probe = Dispatcher::singleton().findSchemaOrThrow("summ::probe", "").entry();
    auto kernelAt = [&](K k) -> const KernelFunction& { return probe.lookup(DispatchKeySet(k)).kernel; };
    const KernelFunction& cpu = kernelAt(K::CPU);
    CHECK(summary(t, "KernelFunction", addr(&cpu)).text ==
          "(anonymous namespace)::summProbeCpu(dscope::Tensor const&) at " __FILE__ ":" + std::to_string(kSummProbeCpuLine));
    CHECK(kernelAt(K::Meta).isFallthrough());
    CHECK(summary(t, "KernelFunction", addr(&kernelAt(K::Meta))).text == "fallthrough");
    const KernelFunction* missing = nullptr;  // the first key with no kernel at all
    for (K k : DispatchKeySet(DispatchKeySet::FULL))
      if (!missing && kernelAt(k).isMissing()) missing = &kernelAt(k);
    REQUIRE(missing);
    CHECK(summary(t, "KernelFunction", addr(missing)).text == "missing");
    // The Stack parameter as the DWARF spells it: g++ gives this function no linkage name (GDB and
    // the library build "dscope::Stack*"), clang does (the demangled std::vector<...>*).
    const std::string boxed = summary(t, "KernelFunction", addr(&kernelAt(K::PrivateUse1))).text;
    CHECK(boxed.starts_with("boxed (anonymous namespace)::summProbeBoxed(dscope::OperatorHandle const&, "));
    CHECK(boxed.ends_with("*) at " __FILE__ ":" + std::to_string(kSummProbeCpuLine + 1)));
    const KernelFunction& functor = kernelAt(K::CUDA);
    REQUIRE(functor.functionAddress() == nullptr);  // a stateful lambda: owned, on the heap
    CHECK(summary(t, "KernelFunction", addr(&functor)).text.rfind("functor at 0x", 0) == 0);
    KernelFunction invalid;
    CHECK(summary(t, "KernelFunction", addr(&invalid)).text == "invalid (no kernel)");
  }

  TEST_CASE("PODLocalDispatchKeySet: the decoded TLS sets (stored XOR the defaults) as the runtime reads them") {
    auto& t = target();
    const auto* tls = &impl::raw_local_dispatch_key_set;
    auto expect = [&] {
      auto local = impl::tls_local_dispatch_key_set();
      return "included=" + toString(local.included_) + ", excluded=" + toString(local.excluded_);
    };
    CHECK(summary(t, "PODLocalDispatchKeySet", addr(tls)).text == expect());
    impl::ExcludeDispatchKeyGuard no_autograd(K::AutogradCPU);
    auto b = summary(t, "PODLocalDispatchKeySet", addr(tls));
    CHECK(b.text == expect());
    CHECK(b.text.find("AutogradCPU") != std::string::npos);
    auto local = impl::tls_local_dispatch_key_set();
    CHECK(b.json == "{\"summary\":\"" + b.text + "\",\"children\":[" +
                        typedChild("included", toString(local.included_), "dscope::DispatchKeySet", local.included_.raw_repr()) +
                        "," +
                        typedChild("excluded", toString(local.excluded_), "dscope::DispatchKeySet", local.excluded_.raw_repr()) +
                        "]}\n");
  }

  TEST_CASE("dscope_dispatch_record: PyTorch's trace line, an unused slot") {
    auto& t = target();
    const impl::OperatorEntry& probe = Dispatcher::singleton().findSchemaOrThrow("summ::probe", "").entry();
    dscope_dispatch_record record{};
    record.op = &probe;
    // A CPU tensor's keys after the default TLS exclude (autocast): the call enters at AutogradCPU.
    record.keyset = (computeTensorKeySet(DeviceType::CPU) - default_excluded_set).raw_repr();
    record.kind = DSCOPE_RECORD_CALL;
    CHECK(summary(t, "dscope_dispatch_record", addr(&record)).text == "[call] op=[summ::probe], key=[AutogradCPU]");
    record.keyset = DispatchKeySet(K::CPU).raw_repr();
    record.kind = DSCOPE_RECORD_REDISPATCH;
    CHECK(summary(t, "dscope_dispatch_record", addr(&record)).text == "[redispatch] op=[summ::probe], key=[CPU]");
    dscope_dispatch_record empty{};
    CHECK(summary(t, "dscope_dispatch_record", addr(&empty)).text == "(empty record)");
  }

  TEST_CASE("the standard-library layouts the summaries read (Layout.h's named offsets)") {
    auto word = [](const void* object, size_t offset) {
      uint64_t w = 0;
      std::memcpy(&w, static_cast<const char*>(object) + offset, sizeof w);
      return w;
    };
    std::string s = "a string longer than the small-string buffer";
    CHECK(word(&s, debug::Layout::StdString_data) == addr(s.data()));
    CHECK(word(&s, debug::Layout::StdString_length) == s.size());
    auto unique = std::make_unique<AutogradMeta>();
    CHECK(word(&unique, debug::Layout::UniquePtr_pointer) == addr(unique.get()));
    auto shared = std::make_shared<int>(3);
    CHECK(word(&shared, debug::Layout::SharedPtr_pointer) == addr(shared.get()));
    Tensor x = at::ones({1});
    CHECK(word(&x, debug::Layout::Tensor_impl) == addr(x.unsafeGetTensorImpl()));
    OperatorHandle mm = Dispatcher::singleton().findSchemaOrThrow("aten::mm", "");
    CHECK(word(&mm, debug::Layout::OperatorHandle_entry) == addr(&mm.entry()));
  }

  TEST_CASE("the value printers' type table: every row decodes, by its C++ name too") {
    auto& t = target();
    std::vector<std::string> names;
    for (uint64_t i = 0; const dscope_value_type* row = dscope_value_type_at(i); ++i) {
      CAPTURE(row->type_name);
      names.push_back(row->type_name);
      CHECK((row->flags & ~uint32_t{DSCOPE_VALUE_EXPANDS | DSCOPE_VALUE_ELEMENTS}) == 0);
      CHECK((!(row->flags & DSCOPE_VALUE_ELEMENTS) || (row->flags & DSCOPE_VALUE_EXPANDS)));
      CHECK(row->word_size <= 8);
    }
    CHECK(names.size() == 18);  // 14 of our runtime's, 4 of real PyTorch's (c10::, at::)
    // The value types' sizes, from the runtime's own types.
    auto row = [&](const std::string& name) {
      for (uint64_t i = 0; const dscope_value_type* r = dscope_value_type_at(i); ++i)
        if (name == r->type_name) return r;
      FAIL("no row " << name);
      return static_cast<const dscope_value_type*>(nullptr);
    };
    CHECK(row("dscope::DispatchKey")->word_size == sizeof(DispatchKey));
    CHECK(row("dscope::DispatchKeySet")->word_size == sizeof(DispatchKeySet));
    CHECK(row("dscope::Device")->word_size == sizeof(Device));
    CHECK(row("dscope::ScalarType")->word_size == sizeof(ScalarType));
    CHECK(row("dscope::BackendComponent")->word_size == sizeof(BackendComponent));
    CHECK(row("dscope::Tensor")->word_size == 0);
    CHECK(row("dscope::impl::OperatorEntry")->flags == (DSCOPE_VALUE_EXPANDS | DSCOPE_VALUE_ELEMENTS));
    // A C++ name (a template's instance too) decodes as its summary type.
    Tensor x = at::ones({1});
    CHECK(summaryOf(t, "dscope::Tensor", addr(&x)).text == summaryOf(t, "Tensor", addr(&x)).text);
    OperatorHandle mm = Dispatcher::singleton().findSchemaOrThrow("aten::mm", "");
    CHECK(summaryOf(t, "dscope::TypedOperatorHandle<dscope::Tensor (dscope::Tensor const&, dscope::Tensor const&)>",
                    addr(&mm)).text == summaryOf(t, "OperatorHandle", addr(&mm)).text);
    CHECK(summaryOf(t, "dscope::DispatchKey", 1).text == summaryOf(t, "DispatchKey", 1).text);
    checkOneLineError(summaryOf(t, "dscope::TypedOperatorHandle<", 1));  // the row's prefix alone names no type
    // Real PyTorch's types are decoded through a PyTorch process's profile: this one has none.
    CHECK(row("c10::DispatchKeySet")->word_size == 8);
    CHECK(row("at::Tensor")->word_size == 0);
    auto torch = summaryOf(t, "c10::DispatchKeySet", 0x12800004001);
    checkOneLineError(torch);
    CHECK(torch.text == "dscope: no PyTorch in this process (libtorch_cpu is not loaded)\n");
  }

  TEST_CASE("summary: bad input, one line each") {
    auto& t = target();
    auto r = summaryOf(t, "Widget", 1);
    checkOneLineError(r);
    CHECK(r.text.rfind("dscope: unknown type 'Widget' for a summary; types: DispatchKey, BackendComponent, DispatchKeySet, "
                       "ScalarType, Device, OperatorName, OperatorHandle, OperatorEntry, KernelFunction, Tensor, "
                       "TensorImpl, PODLocalDispatchKeySet, dscope_dispatch_record",
                       0) == 0);
    checkOneLineError(r = summaryOf(t, "DispatchKey", 0x10000));
    CHECK(r.text.find("out of range") != std::string::npos);
    checkOneLineError(r = summaryOf(t, "Device", 0x10000));
    checkOneLineError(r = summaryOf(t, "Tensor", 0));
    CHECK(r.text.rfind("dscope: not in memory", 0) == 0);
    checkOneLineError(r = summaryOf(t, "OperatorEntry", 16));
    CHECK(r.text.find("0x10 is no operator: its name is unreadable") != std::string::npos);
    // A handle whose entry points nowhere.
    OperatorHandle dangling(reinterpret_cast<impl::OperatorEntry*>(16));
    checkOneLineError(r = summaryOf(t, "OperatorHandle", addr(&dangling)));
    CHECK(r.text.find("0x10 is no operator: its name is unreadable") != std::string::npos);
    // No process: value types still decode, objects cannot.
    CHECK(summaryOf(nullptr, "DispatchKey", static_cast<uint16_t>(K::CPU)).text == "CPU\n");
    Tensor x = at::ones({1});
    checkOneLineError(r = summaryOf(nullptr, "Tensor", addr(&x)));
    CHECK(r.text.find("no process") != std::string::npos);
    t.reads_fail = true;
    checkOneLineError(r = summaryOf(t, "Tensor", addr(&x)));
    t.reads_fail = false;
  }

  TEST_CASE("summary: corrupt counts and links, bounded, one line") {
    auto& t = target();
    const impl::OperatorEntry& probe = Dispatcher::singleton().findSchemaOrThrow("summ::probe", "").entry();
    // A copy of the entry with an absurd kernel count.
    alignas(impl::OperatorEntry) unsigned char copy[sizeof(impl::OperatorEntry)];
    std::memcpy(copy, static_cast<const void*>(&probe), sizeof copy);
    const uint32_t absurd = 1u << 30;
    std::memcpy(copy + debug::Layout::OperatorEntry_num_kernels, &absurd, sizeof absurd);
    auto r = summaryOf(t, "OperatorEntry", addr(copy));
    checkOneLineError(r);
    CHECK(r.text == "dscope: operator summ::probe claims 1073741824 kernels (corrupt memory?)\n");

    // A kernel list that loops: one kernel whose next is itself, with a count of 4.
    alignas(impl::AnnotatedKernel) unsigned char kernel[sizeof(impl::AnnotatedKernel)];
    uint64_t head = 0;
    std::memcpy(&head, static_cast<const char*>(static_cast<const void*>(&probe)) + debug::Layout::OperatorEntry_kernels,
                sizeof head);
    std::memcpy(kernel, reinterpret_cast<const void*>(head), sizeof kernel);
    const uint64_t self = addr(kernel);
    std::memcpy(kernel + debug::Layout::AnnotatedKernel_next, &self, sizeof self);
    std::memcpy(copy, static_cast<const void*>(&probe), sizeof copy);
    std::memcpy(copy + debug::Layout::OperatorEntry_kernels, &self, sizeof self);
    checkOneLineError(r = summaryOf(t, "OperatorEntry", addr(copy), true));
    CHECK(r.text.find("loops back to " + hex(self)) != std::string::npos);

    // A std::string whose length is garbage.
    OperatorName name{"aten::mm", ""};
    alignas(OperatorName) unsigned char name_copy[sizeof(OperatorName)];
    std::memcpy(name_copy, static_cast<const void*>(&name), sizeof name_copy);
    const uint64_t huge = 1ull << 40;
    std::memcpy(name_copy + debug::Layout::OperatorName_name + debug::Layout::StdString_length, &huge, sizeof huge);
    checkOneLineError(r = summaryOf(t, "OperatorName", addr(name_copy)));
    CHECK(r.text.find("claims 1099511627776 bytes (corrupt memory?)") != std::string::npos);
  }
}
