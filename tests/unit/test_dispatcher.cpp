// Dispatcher behaviour: alias-key resolution, fallthrough, fallbacks, stacking and
// deregistration, boxed/unboxed calls, key set computation, TLS guards, errors, concurrency.
// Every operator here lives in a test namespace and is registered by a Library object that
// the test case owns, so each case starts from the runtime's own state.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "dscope/Introspection.h"
#include "dscope/Library.h"
#include "test_util.h"

using namespace dscope;
using K = DispatchKey;

namespace {

Tensor cpuTensor() { return make_tensor(std::vector<int64_t>{2}, ScalarType::Float, Device(DeviceType::CPU)); }

// Kernels that report which one ran by returning a distinct number.
int64_t ret1(const Tensor&) { return 1; }
int64_t ret2(const Tensor&) { return 2; }
int64_t ret3(const Tensor&) { return 3; }

// A scoped "testops" operator `name(Tensor x) -> int` with a DEF library of its own.
struct TestOp {
  explicit TestOp(const std::string& name, const std::string& ns = "tst")
      : def(Library::FRAGMENT, ns, std::nullopt, "test_dispatcher.cpp", 1),
        impls(Library::FRAGMENT, ns, std::nullopt, "test_dispatcher.cpp", 2),
        full(ns + "::" + name) {
    def.def(name + "(Tensor x) -> int");
  }
  TypedOperatorHandle<int64_t(const Tensor&)> handle() const {
    return Dispatcher::singleton().findSchemaOrThrow(full, "").typed<int64_t(const Tensor&)>();
  }
  impl::OperatorEntry& entry() const { return handle().entry(); }
  // The computed-table line of key k, or "" when its entry is missing.
  std::string line(DispatchKey k) const {
    std::string prefix = std::string(toString(k)) + ": ";
    for (const auto& l : dscope::testing::splitLines(entry().dumpComputedTable()))
      if (l.rfind(prefix, 0) == 0) return l.substr(prefix.size());
    return "";
  }
  std::string label(DispatchKey k) const {
    auto l = line(k);
    return l.empty() ? "" : l.substr(l.rfind('[') + 1, l.size() - l.rfind('[') - 2);
  }
  Library def, impls;
  std::string full;
};

}  // namespace

TEST_SUITE("dispatcher") {
  TEST_CASE("alias resolution: CompositeImplicitAutograd fills every math key and Undefined") {
    TestOp op("cia_only");
    op.impls.impl("cia_only", dispatch(K::CompositeImplicitAutograd, &ret1));
    for (K k : {K::Undefined, K::CPU, K::CUDA, K::Meta, K::SparseCPU, K::NestedTensorCPU, K::AutogradCPU,
                K::AutogradOther, K::AutogradNestedTensor})
      CHECK_MESSAGE(op.label(k) == "math kernel", toString(k));
    CHECK(op.line(K::AutocastCPU).find("math kernel") == std::string::npos);
    CHECK(op.handle().call(cpuTensor()) == 1);
  }

  TEST_CASE("alias resolution: a backend kernel shadows CIA at its Autograd key (has_backend)") {
    TestOp op("cia_cpu");
    op.impls.impl("cia_cpu", dispatch(K::CompositeImplicitAutograd, &ret1));
    op.impls.impl("cia_cpu", dispatch(K::CPU, &ret2));
    CHECK(op.label(K::CPU) == "kernel");
    CHECK(op.label(K::CUDA) == "math kernel");
    CHECK(op.label(K::AutogradCUDA) == "math kernel");
    CHECK(op.label(K::AutogradCPU) != "math kernel");  // the autograd fallback or nothing
  }

  TEST_CASE("alias resolution: CEANF beats CEA - CEA covers XLA and Undefined") {
    TestOp op("composite_explicit");
    op.impls.impl("composite_explicit", dispatch(K::CompositeExplicitAutograd, &ret1));
    op.impls.impl("composite_explicit", dispatch(K::CompositeExplicitAutogradNonFunctional, &ret2));
    CHECK(op.label(K::Undefined) == "default backend kernel");
    CHECK(op.line(K::CPU).find("test_dispatcher.cpp:2") != std::string::npos);
    CHECK(op.label(K::XLA) == "default backend kernel");
    CHECK(op.label(K::SparseCPU) == "default backend kernel");
    auto ks_xla = DispatchKeySet(K::XLA);
    CHECK(op.handle().redispatch(ks_xla, cpuTensor()) == 1);  // XLA is not in the non-functional set
    CHECK(op.handle().redispatch(DispatchKeySet(K::CPU), cpuTensor()) == 2);
    CHECK(op.handle().redispatch(DispatchKeySet(K::SparseCPU), cpuTensor()) == 1);  // Sparse too
    CHECK(op.label(K::NestedTensorCPU) == "");
    CHECK(op.label(K::AutogradCPU) != "default backend kernel");
  }

  TEST_CASE("alias resolution: Autograd alias, nested and batched decompositions") {
    TestOp op("aliases");
    op.impls.impl("aliases", dispatch(K::Autograd, &ret1));
    op.impls.impl("aliases", dispatch(K::CompositeImplicitAutogradNestedTensor, &ret2));
    op.impls.impl("aliases", dispatch(K::FuncTorchBatchedDecomposition, &ret3));
    for (K k : {K::AutogradOther, K::AutogradCPU, K::AutogradHIP, K::AutogradMeta})
      CHECK_MESSAGE(op.label(k) == "autograd kernel", toString(k));
    CHECK(op.label(K::AutogradNestedTensor) == "nested kernel");  // CIANT is resolved before Autograd
    CHECK(op.label(K::NestedTensorCPU) == "nested kernel");
    CHECK(op.label(K::CPU) == "");  // the nested set has no Dense bit
    CHECK(op.label(K::FuncTorchBatched) == "batched kernel");
    CHECK(op.label(K::Undefined) == "");
  }

  TEST_CASE("alias resolution: CIA with an AutogradOther backend kernel is ambiguous") {
    TestOp op("ambiguous");
    op.impls.impl("ambiguous", dispatch(K::CompositeImplicitAutograd, &ret1));
    op.impls.impl("ambiguous", dispatch(K::FPGA, &ret2));  // a backend behind AutogradOther
    CHECK(op.line(K::AutogradOther) == "ambiguous_autogradother [ambiguous autogradother]");
    CHECK_THROWS_WITH_AS(op.handle().redispatch(DispatchKeySet(K::AutogradOther), cpuTensor()),
                         doctest::Contains("has kernels registered to both CompositeImplicitAutograd and a backend mapped to AutogradOther"),
                         Error);
  }

  TEST_CASE("the computed table does not depend on registration order (c10's commute test)") {
    std::vector<K> keys = {K::CompositeImplicitAutograd, K::FPGA, K::CPU, K::Autograd};
    std::sort(keys.begin(), keys.end());
    std::string first;
    int orders = 0;
    do {
      TestOp op("commute");
      for (K k : keys) op.impls.impl("commute", dispatch(k, &ret1).debug(std::string("at ") + toString(k)));
      op.entry().checkInvariants();
      std::string table = op.entry().dumpComputedTable();
      if (first.empty()) first = table;
      CHECK_MESSAGE(table == first, "order starting with " << toString(keys[0]));
      ++orders;
    } while (std::next_permutation(keys.begin(), keys.end()));
    CHECK(orders == 24);
    CHECK(first.find("AutogradOther: ambiguous_autogradother [ambiguous autogradother]\n") != std::string::npos);
    CHECK(first.find("AutogradCPU: at Autograd [autograd kernel]\n") != std::string::npos);
    CHECK(first.find("AutogradCUDA: at CompositeImplicitAutograd [math kernel]\n") != std::string::npos);  // no CUDA kernel: CIA wins
    CHECK(first.find("CUDA: at CompositeImplicitAutograd [math kernel]\n") != std::string::npos);
    CHECK(first.find("Undefined: at CompositeImplicitAutograd [math kernel]\n") == 0);
  }

  TEST_CASE("fallthrough kernel: its key is masked out of the call's key set") {
    TestOp op("ft");
    op.impls.impl("ft", dispatch(K::AutogradCPU, CppFunction::makeFallthrough()));
    op.impls.impl("ft", dispatch(K::CPU, &ret2));
    CHECK(op.line(K::AutogradCPU).rfind("fallthrough ", 0) == 0);
    CHECK(!op.entry().dispatchKeyExtractor().nonFallthroughKeys().has(K::AutogradFunctionality));
    CHECK(op.handle().call(cpuTensor()) == 2);  // AutogradCPU skipped without a call
    // Redispatching straight at the fallthrough key is a bug c10 reports too.
    CHECK_THROWS_WITH_AS(op.handle().redispatch(DispatchKeySet(K::AutogradCPU), cpuTensor()),
                         doctest::Contains("fallthrough_kernel was executed"), Error);
  }

  TEST_CASE("re-registration stacks (inactive) and deregistration restores the older kernel") {
    TestOp op("stacked");
    op.impls.impl("stacked", dispatch(K::CPU, &ret1));
    {
      Library newer(Library::IMPL, "tst", K::CPU, "newer.cpp", 7);
      newer.impl("stacked", &ret2);
      AutoDispatchBelowAutograd below;
      CHECK(op.handle().call(cpuTensor()) == 2);
      auto dump = op.entry().dumpState();
      CHECK(dump.find("CPU: registered at newer.cpp:7 :: (Tensor _0) -> int _0 [ boxed unboxed ]\n"
                      "CPU (inactive): registered at test_dispatcher.cpp:2 :: (Tensor _0) -> int _0 [ boxed unboxed ]\n") !=
            std::string::npos);
      CHECK(op.line(K::CPU) == "registered at newer.cpp:7 [kernel]");
    }
    AutoDispatchBelowAutograd below;
    CHECK(op.handle().call(cpuTensor()) == 1);
    CHECK(op.line(K::CPU) == "registered at test_dispatcher.cpp:2 [kernel]");
  }

  TEST_CASE("backend fallback: applies to existing operators and goes away with its library") {
    TestOp op("fb");
    CHECK(op.line(K::FPGA) == "");
    {
      Library fb(Library::IMPL, "_", K::FPGA, "fallback.cpp", 3);
      fb.fallback(CppFunction::makeFromBoxedFunction([](const OperatorHandle&, Stack* s) {
        s->clear();
        s->emplace_back(int64_t{42});
      }));
      CHECK(op.line(K::FPGA) == "registered at fallback.cpp:3 [backend fallback]");
      CHECK(op.handle().redispatch(DispatchKeySet(K::FPGA), cpuTensor()) == 42);
      TestOp later("fb_later");  // created after the fallback: picks it up
      CHECK(later.line(K::FPGA) == "registered at fallback.cpp:3 [backend fallback]");
      Library dup(Library::IMPL, "_", K::FPGA, "dup.cpp", 4);
      CHECK_THROWS_WITH_AS(dup.fallback(CppFunction::makeFallthrough()),
                           doctest::Contains("Tried to register multiple backend fallbacks for the same dispatch key FPGA"), Error);
    }
    CHECK(op.line(K::FPGA) == "");
  }

  TEST_CASE("fallback for an alias key registers every runtime key it covers") {
    TestOp op("fb_alias");
    Library fb(Library::IMPL, "_", K::FuncTorchBatchedDecomposition, "x.cpp", 1);  // no runtime keys
    fb.fallback(CppFunction::makeFallthrough());
    Library q(Library::IMPL, "_", K::TESTING_ONLY_GenericMode, "q.cpp", 5);
    q.fallback(CppFunction::makeFallthrough());
    CHECK(op.line(K::TESTING_ONLY_GenericMode) == "fallthrough registered at q.cpp:5 [backend fallback]");
  }

  TEST_CASE("a boxed fallback serves every operator, typed or boxed, and redispatches below its key") {
    static std::atomic<int> seen{0};
    Library fb(Library::IMPL, "_", K::TESTING_ONLY_GenericWrapper, "generic.cpp", 9);
    fb.fallback(CppFunction::makeFromBoxedFunction([](const OperatorHandle& op, DispatchKeySet ks, Stack* s) {
      ++seen;
      op.redispatchBoxed(ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, K::TESTING_ONLY_GenericWrapper), s);
    }));
    TestOp a("generic_a"), b("generic_b");
    a.impls.impl("generic_a", dispatch(K::CPU, &ret1));
    b.impls.impl("generic_b", dispatch(K::CPU, &ret2));
    impl::IncludeDispatchKeyGuard inc(K::TESTING_ONLY_GenericWrapper);
    AutoDispatchBelowAutograd below;
    seen = 0;
    CHECK(a.handle().call(cpuTensor()) == 1);
    Stack stack{IValue(cpuTensor())};
    b.handle().callBoxed(&stack);
    REQUIRE(stack.size() == 1);
    CHECK(stack[0].toInt() == 2);
    CHECK(seen == 2);
  }

  TEST_CASE("kernels may take the DispatchKeySet they were dispatched with") {
    TestOp op("keyset_arg");
    static uint64_t got = 0;
    op.impls.impl("keyset_arg", dispatch(K::CPU, [](DispatchKeySet ks, const Tensor&) -> int64_t {
      got = ks.raw_repr();
      return 7;
    }));
    AutoDispatchBelowAutograd below;
    CHECK(op.handle().call(cpuTensor()) == 7);
    // The tensor's keys + TLS default included, minus autograd (excluded) and the fallthrough keys.
    CHECK((DispatchKeySet::from_raw_repr(got).highestPriorityTypeId() == K::CPU));
    CHECK(DispatchKeySet::from_raw_repr(got).has(K::CPU));
    CHECK(op.entry().dumpState().find("CPU: registered at test_dispatcher.cpp:2 :: (Tensor _0) -> int _0 [ boxed unboxed ]") != std::string::npos);
  }

  TEST_CASE("call computes (tensor keys | TLS included) - TLS excluded, masked by fallthrough keys") {
    TestOp op("keys");
    static DispatchKeySet last;
    auto record = [](DispatchKeySet ks, const Tensor&) -> int64_t {
      last = ks;
      return 0;
    };
    op.impls.impl("keys", dispatch(K::CPU, record));
    op.impls.impl("keys", dispatch(K::AutogradCPU, record));
    op.impls.impl("keys", dispatch(K::BackendSelect, CppFunction::makeFallthrough()));
    op.impls.impl("keys", dispatch(K::ADInplaceOrView, CppFunction::makeFallthrough()));
    auto t = cpuTensor();
    CHECK(t.key_set().raw_repr() == 0x12800010001);
    op.handle().call(t);
    CHECK(last.raw_repr() == 0x2000010001);  // {CPU, AutogradCPU}: Autocast excluded, BackendSelect/ADInplaceOrView fall through
    CHECK((last.highestPriorityTypeId() == K::AutogradCPU));
    {
      AutoDispatchBelowAutograd below;
      op.handle().call(t);
      CHECK(last.raw_repr() == 0x10001);
    }
    {
      impl::IncludeDispatchKeyGuard inc(K::Tracer);  // above AutogradCPU, and no kernel here
      CHECK_THROWS_WITH_AS(op.handle().call(t), doctest::Contains("from the 'Tracer' backend"), NotImplementedError);
    }
    CHECK(op.entry().dispatchKeyExtractor().dumpState() ==
          "1000000000000000000000000000000000000000000000000000000000000000 " +
              toString(op.entry().dispatchKeyExtractor().nonFallthroughKeys()) + "\n");
  }

  TEST_CASE("boxed and unboxed calls meet: unboxed call of a boxed kernel, boxed call of an unboxed kernel") {
    Library def(Library::FRAGMENT, "tst", std::nullopt, "b.cpp", 1);
    def.def("boxmix(Tensor a, Tensor b, *, Scalar alpha=1) -> Tensor");
    def.impl("boxmix", dispatch(K::CPU, [](const Tensor& a, const Tensor&, const Scalar& alpha) {
      return alpha.toLong() == 3 ? a : Tensor();
    }));
    Library boxed(Library::FRAGMENT, "tst", std::nullopt, "b.cpp", 2);
    boxed.impl("boxmix", dispatch(K::Meta, CppFunction::makeFromBoxedFunction([](const OperatorHandle&, Stack* s) {
      REQUIRE(s->size() == 3);
      Tensor first = (*s)[0].toTensor();
      CHECK((*s)[2].toInt() == 5);
      s->clear();
      s->emplace_back(first);
    })));
    auto op = Dispatcher::singleton().findSchemaOrThrow("tst::boxmix", "").typed<Tensor(const Tensor&, const Tensor&, const Scalar&)>();
    AutoDispatchBelowAutograd below;
    auto cpu = cpuTensor();
    Stack stack{cpu, cpu, int64_t{3}};
    op.callBoxed(stack);
    REQUIRE(stack.size() == 1);
    CHECK(stack[0].toTensor().is_same(cpu));
    auto meta = make_tensor(std::vector<int64_t>{2}, ScalarType::Float, Device(DeviceType::Meta));
    CHECK(op.call(meta, meta, 5).is_same(meta));
  }

  TEST_CASE("missing kernel: c10's message with the keys that do have kernels") {
    TestOp op("only_cpu");
    op.impls.impl("only_cpu", dispatch(K::CPU, &ret1));
    try {
      op.handle().redispatch(DispatchKeySet(K::CUDA), cpuTensor());
      FAIL("expected NotImplementedError");
    } catch (const NotImplementedError& e) {
      std::string msg = e.what();
      CHECK(msg.rfind("Could not run 'tst::only_cpu' with arguments from the 'CUDA' backend. This could be because the "
                      "operator doesn't exist for this backend, or was omitted during the selective/custom build process "
                      "(if using custom build). If you are a Facebook employee using PyTorch on mobile, please visit "
                      "https://fburl.com/ptmfixes for possible resolutions. 'tst::only_cpu' is only available for these "
                      "backends: [CPU",
                      0) == 0);
      CHECK(msg.find("].\n\nCPU: registered at test_dispatcher.cpp:2 [kernel]\n") != std::string::npos);
    }
  }

  TEST_CASE("missing kernel with no tensor arguments: the Undefined variant") {
    Library lib(Library::FRAGMENT, "tst", std::nullopt, "n.cpp", 1);
    lib.def("no_tensors(int n) -> int");
    lib.impl("no_tensors", dispatch(K::CPU, [](int64_t n) { return n; }));
    auto op = Dispatcher::singleton().findSchemaOrThrow("tst::no_tensors", "").typed<int64_t(int64_t)>();
    impl::ForceDispatchKeyGuard clean(impl::LocalDispatchKeySet{DispatchKeySet(), DispatchKeySet()});
    CHECK_THROWS_WITH_AS(op.call(3),
                         doctest::Contains("There were no tensor arguments to this function (e.g., you passed an empty list "
                                           "of Tensors), but no fallback function is registered for schema tst::no_tensors.  "
                                           "This usually means"),
                         NotImplementedError);
  }

  TEST_CASE("signature checks: typed() with the wrong signature, kernels that disagree, schema arity") {
    TestOp op("sig");
    op.impls.impl("sig", dispatch(K::CPU, &ret1));
    auto handle = Dispatcher::singleton().findSchemaOrThrow("tst::sig", "");
    CHECK_THROWS_WITH_AS(handle.typed<Tensor(const Tensor&)>(), doctest::Contains("wrong signature"), Error);
    CHECK_THROWS_WITH_AS(op.impls.impl("sig", dispatch(K::Meta, [](const Tensor& t) { return t; })),
                         doctest::Contains("Mismatch in kernel C++ signatures"), Error);
    CHECK_THROWS_WITH_AS(op.impls.impl("sig", dispatch(K::Meta, [](const Tensor&, const Tensor&) -> int64_t { return 0; })),
                         doctest::Contains("Inferred operator schema for a C++ kernel function doesn't match the expected "
                                           "function schema"),
                         Error);
    // Rejected kernels leave no trace.
    CHECK(!op.entry().hasKernelForDispatchKey(K::Meta));
  }

  TEST_CASE("library rules: one DEF per namespace, no duplicate def, namespaces must match, bad schemas") {
    Library a(Library::DEF, "tstlib", std::nullopt, "a.cpp", 1);
    CHECK_THROWS_WITH_AS(Library(Library::DEF, "tstlib", std::nullopt, "b.cpp", 2),
                         doctest::Contains("Only a single DSCOPE_LIBRARY can be used to register the namespace tstlib"), Error);
    a.def("f(Tensor x) -> Tensor");
    CHECK_THROWS_WITH_AS(a.def("f(Tensor x) -> Tensor"), doctest::Contains("multiple times"), Error);
    CHECK_THROWS_WITH_AS(a.impl("other::f", &ret1), doctest::Contains("does not match namespace tstlib"), Error);
    CHECK_THROWS_WITH_AS(a.def("g(Tensor x"), doctest::Contains("malformed operator schema"), Error);
    CHECK_THROWS_WITH_AS(Dispatcher::singleton().findSchemaOrThrow("tstlib::nope", ""),
                         "Could not find schema for tstlib::nope", Error);
    auto schema = FunctionSchema::parse("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
    CHECK(schema.op.full() == "aten::add.Tensor");
    CHECK(schema.arguments.size() == 3);
    CHECK(schema.arguments[2].kwarg_only);
    CHECK(schema.arguments[2].default_value == "1");
    auto inplace = FunctionSchema::parse("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", "aten");
    CHECK(inplace.text == "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)");
    CHECK(inplace.arguments[0].type == "Tensor");
    CHECK(inplace.returns.size() == 1);
  }

  TEST_CASE("introspection: has_kernel_for_dispatch_key, registrations_for_dispatch_key, all_op_names") {
    TestOp op("intro");
    op.impls.impl("intro", dispatch(K::CPU, &ret1));
    op.impls.impl("intro", dispatch(K::CompositeExplicitAutograd, &ret2));
    CHECK(op.entry().hasKernelForDispatchKey(K::CPU));
    CHECK(!op.entry().hasKernelForDispatchKey(K::CUDA));
    CHECK(op.entry().hasComputedKernelForDispatchKey(K::CUDA));  // via CEA
    CHECK(op.entry().hasComputedKernelForDispatchKey(K::Undefined));
    auto regs = Dispatcher::singleton().getRegistrationsForDispatchKey(K::CPU);
    CHECK(std::find(regs.begin(), regs.end(), "tst::intro") != regs.end());
    auto cea = Dispatcher::singleton().getRegistrationsForDispatchKey(K::CompositeExplicitAutograd);
    CHECK(std::find(cea.begin(), cea.end(), "tst::intro") != cea.end());
    auto names = Dispatcher::singleton().getAllOpNames();
    CHECK(std::find(names.begin(), names.end(), "tst::intro") != names.end());
    // The torch._C-style functions by name agree.
    CHECK(has_kernel_for_dispatch_key("tst::intro", K::CPU));
    CHECK(dump("tst::intro") == op.entry().dumpState());
    CHECK(dump_table("tst::intro") == op.entry().dumpComputedTable());
    CHECK(all_op_names() == names);
    CHECK(registrations_for_dispatch_key(K::CPU) == regs);
    CHECK_THROWS_WITH_AS(dump("tst::no_such_op"), "unknown operator: tst::no_such_op", Error);
  }
}

TEST_SUITE("tls") {
  TEST_CASE("default TLS decodes to PyTorch's default include/exclude sets") {
    auto sections = dscope::testing::dumpExampleSections();
    const auto& tls = sections.at("default TLS");
    CHECK(tls.at(0) == "include: " + toString(tls_local_include_set()));
    CHECK(tls.at(1) == "exclude: " + toString(tls_local_exclude_set()));
    CHECK(impl::raw_local_dispatch_key_set.included_ == 0);
    CHECK(impl::raw_local_dispatch_key_set.excluded_ == 0);
    // A fresh thread starts from the same state with no initialization code.
    uint64_t other_inc = 1, other_exc = 1;
    std::thread([&] {
      other_inc = impl::raw_local_dispatch_key_set.included_;
      other_exc = impl::raw_local_dispatch_key_set.excluded_;
    }).join();
    CHECK(other_inc == 0);
    CHECK(other_exc == 0);
  }

  TEST_CASE("guards nest, restore in order, and keep c10's backend-bit leak") {
    {
      AutoDispatchBelowAutograd below;
      CHECK(tls_local_exclude_set().raw_repr() == 0x3ff7000000000);
      {
        AutoDispatchBelowADInplaceOrView deeper;
        CHECK(tls_local_exclude_set().raw_repr() == 0x3ff7800000000);
      }
      CHECK(tls_local_exclude_set().raw_repr() == 0x3ff7000000000);
    }
    CHECK(tls_local_exclude_set().raw_repr() == 0x3ff0000000000);
    { impl::ExcludeDispatchKeyGuard g(K::AutogradCPU); }
    CHECK(tls_local_exclude_set().raw_repr() == 0x3ff0000000001);  // [live] in PyTorch 2.11 too
    { impl::IncludeDispatchKeyGuard g(K::CPU); }
    CHECK(tls_local_include_set().raw_repr() == 0x804000001);
    impl::_force_tls_local_dispatch_key_set({default_included_set, default_excluded_set});
    CHECK(impl::raw_local_dispatch_key_set.included_ == 0);
    CHECK(impl::raw_local_dispatch_key_set.excluded_ == 0);
  }

  TEST_CASE("guards restore across exceptions") {
    try {
      AutoDispatchBelowAutograd below;
      impl::IncludeDispatchKeyGuard inc(K::FPGA);
      throw Error("boom");
    } catch (const Error&) {
    }
    CHECK((tls_local_exclude_set() == default_excluded_set));
    CHECK((tls_local_include_set() == default_included_set));
    // Autocast regions flip one excluded bit, exactly like PyTorch's autocast('cpu').
    impl::tls_set_dispatch_key_excluded(K::AutocastCPU, false);
    CHECK(tls_local_exclude_set().raw_repr() == 0x3fe0000000000);
    impl::tls_set_dispatch_key_excluded(K::AutocastCPU, true);
    CHECK((tls_local_exclude_set() == default_excluded_set));
  }
}

TEST_SUITE("concurrency") {
  TEST_CASE("registration and deregistration while other threads dispatch") {
    TestOp op("stress");
    op.impls.impl("stress", dispatch(K::CPU, &ret1));
    std::atomic<bool> stop{false};
    std::atomic<int64_t> calls{0}, bad{0};
    std::vector<std::thread> dispatchers;
    for (int i = 0; i < 3; ++i) {
      dispatchers.emplace_back([&] {
        AutoDispatchBelowAutograd below;
        auto handle = op.handle();
        auto t = cpuTensor();
        while (!stop.load(std::memory_order_relaxed)) {
          int64_t r = handle.call(t);
          if (r != 1 && r != 2) ++bad;
          ++calls;
        }
      });
    }
    // On a loaded machine the threads may not have run yet: registrations must overlap dispatches.
    while (calls.load() == 0) std::this_thread::yield();
    for (int round = 0; round < 200; ++round) {
      Library lib(Library::IMPL, "tst", K::CPU, "stress.cpp", round);
      lib.impl("stress", &ret2);
      Library other(Library::FRAGMENT, "tst", std::nullopt, "other.cpp", round);
      other.def("stress_def_" + std::to_string(round) + "(Tensor x) -> int");
    }
    stop = true;
    for (auto& t : dispatchers) t.join();
    CHECK(bad == 0);
    CHECK(calls > 0);
    AutoDispatchBelowAutograd below;
    CHECK(op.handle().call(cpuTensor()) == 1);
  }
}
