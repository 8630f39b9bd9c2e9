// DispatchKey / DispatchKeySet against real PyTorch 2.11 data (shared/data/keyset-vectors.json)
// and the layout reference (shared/reference/c10-2.11-layout.md).
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dscope/DispatchKeySet.h"
#include "dscope/Error.h"
#include "test_util.h"

using namespace dscope;

namespace {

struct Vector {
  uint64_t raw;
  std::string repr, highest;
};

// The vector file holds one field per line: "raw": N, "repr": "...", "highest": "...".
std::vector<Vector> loadVectors() {
  std::ifstream in(std::string(DSCOPE_SHARED_DIR) + "/data/keyset-vectors.json");
  REQUIRE_MESSAGE(in, "cannot open shared/data/keyset-vectors.json");
  std::vector<Vector> out;
  std::string line;
  auto value = [](const std::string& l) {
    auto colon = l.find(':');
    auto v = l.substr(colon + 1);
    auto q1 = v.find('"'), q2 = v.rfind('"');
    return q1 == std::string::npos ? v : v.substr(q1 + 1, q2 - q1 - 1);
  };
  while (std::getline(in, line)) {
    if (line.find("\"raw\":") != std::string::npos) out.push_back({std::stoull(value(line)), "", ""});
    else if (line.find("\"repr\":") != std::string::npos) out.back().repr = value(line);
    else if (line.find("\"highest\":") != std::string::npos) out.back().highest = value(line);
  }
  return out;
}

// str(torch._C.DispatchKey) of a key: Python prints "???" for values it does not bind and the
// first-defined enum name otherwise (StartOfDenseBackends, not toString's "Undefined").
std::string pythonName(DispatchKey k) {
  static const std::set<int> unbound = {2, 3, 4, 6, 7, 13, 16, 24, 26, 27, 31, 36, 38, 39, 41, 44, 45, 48};
  int v = static_cast<int>(k);
  if (unbound.count(v)) return "???";
  if (k > DispatchKey::EndOfFunctionalityKeys && k <= DispatchKey::EndOfRuntimeBackendKeys &&
      toBackendComponent(k) == BackendComponent::InvalidBit) {
    return std::string("StartOf") + toString(toFunctionalityKey(k)) + "Backends";
  }
  return toString(k);
}

}  // namespace

TEST_SUITE("keyset") {
  TEST_CASE("every PyTorch 2.11 keyset vector: repr and highest key") {
    auto vectors = loadVectors();
    REQUIRE(vectors.size() == 932);
    int failures = 0;
    for (const auto& v : vectors) {
      auto ks = DispatchKeySet::from_raw_repr(v.raw);
      std::string repr = toString(ks);
      std::string highest = pythonName(ks.highestPriorityTypeId());
      if (repr != v.repr || highest != v.highest) {
        if (++failures < 10) FAIL_CHECK("raw=" << v.raw << " repr=" << repr << " (want " << v.repr << ") highest=" << highest << " (want " << v.highest << ")");
      }
    }
    CHECK(failures == 0);
  }

  TEST_CASE("enum values and names match c10 2.11") {
    CHECK(static_cast<int>(DispatchKey::Dense) == 1);
    CHECK(static_cast<int>(DispatchKey::PythonDispatcher) == 47);
    CHECK(static_cast<int>(DispatchKey::StartOfDenseBackends) == 49);
    CHECK(static_cast<int>(DispatchKey::Meta) == 65);
    CHECK(static_cast<int>(DispatchKey::QuantizedCPU) == 67);
    CHECK(static_cast<int>(DispatchKey::SparseCPU) == 84);
    CHECK(static_cast<int>(DispatchKey::SparseCsrCPU) == 101);
    CHECK(static_cast<int>(DispatchKey::NestedTensorCPU) == 118);
    CHECK(static_cast<int>(DispatchKey::AutogradMAIA) == 146);
    CHECK(static_cast<int>(DispatchKey::AutogradPrivateUse1) == 147);
    CHECK(static_cast<int>(DispatchKey::Autograd) == 151);
    CHECK(static_cast<int>(DispatchKey::CompositeExplicitAutogradNonFunctional) == 156);
    CHECK((DispatchKey::PrivateUse1_PreAutograd == DispatchKey::AutogradPrivateUse1));
    CHECK((DispatchKey::Autocast == DispatchKey::AutocastCUDA));
    CHECK(std::string(toString(DispatchKey::StartOfQuantizedBackends)) == "QuantizedUndefined");
    CHECK(std::string(toString(DispatchKey::StartOfDenseBackends)) == "Undefined");
    CHECK(std::string(toString(DispatchKey::EndOfFunctionalityKeys)) == "UnknownUnknown");
    CHECK(std::string(toString(static_cast<DispatchKey>(200))) == "UnknownUnknown");
    CHECK(std::string(toString(DispatchKey::AutogradMTIA)) == "AutogradMTIA");
    CHECK(std::string(toString(DispatchKey::CompositeImplicitAutogradNestedTensor)) == "CompositeImplicitAutogradNestedTensor");
    CHECK(std::string(toString(BackendComponent::CPUBit)) == "CPUBit");
    CHECK(std::string(toString(BackendComponent::MTIABit)) == "MTIA");
    CHECK(std::string(toString(BackendComponent::MAIABit)) == "MAIA");
    CHECK(std::string(toString(static_cast<BackendComponent>(40))) == "UNKNOWN_BACKEND_BIT");
  }

  TEST_CASE("raw representations of single keys (layout reference 5.1)") {
    CHECK(DispatchKeySet(DispatchKey::CPU).raw_repr() == 0x10001);
    CHECK(DispatchKeySet(DispatchKey::CUDA).raw_repr() == 0x10002);
    CHECK(DispatchKeySet(DispatchKey::MAIA).raw_repr() == 0x10800);
    CHECK(DispatchKeySet(DispatchKey::Meta).raw_repr() == 0x18000);
    CHECK(DispatchKeySet(DispatchKey::QuantizedCPU).raw_repr() == 0x100001);
    CHECK(DispatchKeySet(DispatchKey::NestedTensorCPU).raw_repr() == 0x2000001);
    CHECK(DispatchKeySet(DispatchKey::AutogradCPU).raw_repr() == 0x2000000001);
    CHECK(DispatchKeySet(DispatchKey::AutogradMeta).raw_repr() == 0x2000008000);
    CHECK(DispatchKeySet(DispatchKey::AutogradOther).raw_repr() == 0x1000000000);
    CHECK(DispatchKeySet(DispatchKey::PythonDispatcher).raw_repr() == 0x4000000000000000);
    CHECK(DispatchKeySet(DispatchKey::EndOfFunctionalityKeys).raw_repr() == 0x8000000000000000);
    CHECK(DispatchKeySet(DispatchKey::StartOfAutogradFunctionalityBackends).raw_repr() == 0x2000000000);
    CHECK(DispatchKeySet(DispatchKey::Autograd).raw_repr() == 0);
    CHECK(DispatchKeySet(DispatchKeySet::FULL).raw_repr() == 0x7fffffffffffffff);
    CHECK(DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::CPU).raw_repr() == 0x400000000000ffff);
    CHECK(toString(DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::CPU)) == "DispatchKeySet(PythonDispatcher)");
  }

  TEST_CASE("set operations: minus keeps backend bits, remove clears one functionality") {
    auto cpu_tensor = DispatchKeySet::from_raw_repr(0x12800010001);
    CHECK(toString(cpu_tensor) == "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)");
    auto below = cpu_tensor - autograd_dispatch_keyset;
    CHECK(below.raw_repr() == 0x10800010001);
    CHECK(below.has_backend(BackendComponent::CPUBit));
    CHECK((DispatchKeySet(DispatchKey::AutogradCPU) - DispatchKeySet(DispatchKey::AutogradCPU)).raw_repr() == 0x1);
    auto two = DispatchKeySet{DispatchKey::AutogradCPU, DispatchKey::AutogradCUDA};
    CHECK(two.remove(DispatchKey::AutogradCPU).raw_repr() == 0x3);
    CHECK(DispatchKeySet{DispatchKey::CPU, DispatchKey::AutogradCUDA}.has(DispatchKey::AutogradCPU));
    CHECK(toString(DispatchKeySet{DispatchKey::CPU, DispatchKey::CUDA, DispatchKey::AutogradCUDA}) ==
          "DispatchKeySet(CPU, CUDA, AutogradCPU, AutogradCUDA)");
    CHECK(cpu_tensor.has_any(autograd_dispatch_keyset));
    CHECK(!DispatchKeySet(DispatchKey::CPU).has_any(autograd_dispatch_keyset));
    CHECK((cpu_tensor & after_autograd_keyset).raw_repr() == 0x800010001);
    CHECK(DispatchKeySet(DispatchKey::CPU).add(DispatchKey::Meta).raw_repr() == 0x18001);
    CHECK(DispatchKeySet{BackendComponent::CPUBit, BackendComponent::MetaBit}.raw_repr() == 0x8001);
    CHECK(DispatchKeySet().empty());
    CHECK(toString(DispatchKeySet()) == "DispatchKeySet()");
  }

  TEST_CASE("bit 63 printing quirk (observed on live 2.11)") {
    CHECK(toString(DispatchKeySet::from_raw_repr(0x8000000000010001)) == "DispatchKeySet(CPU, UnknownUnknown)");
    CHECK(toString(DispatchKeySet::from_raw_repr(0x8000000004010001)) == "DispatchKeySet(CPU, BackendSelect, UnknownUnknown)");
    CHECK(toString(DispatchKeySet::from_raw_repr(0x8000012000000003)) ==
          "DispatchKeySet(AutogradCPU, AutogradCUDA, AutocastCPU, UnknownUnknown)");
    CHECK(toString(DispatchKeySet::from_raw_repr(0x8000000004000000)) == "DispatchKeySet(BackendSelect)");
    CHECK(toString(DispatchKeySet::from_raw_repr(0x8000000000000000)) == "DispatchKeySet()");
    CHECK((DispatchKeySet::from_raw_repr(0x8000000000000000).highestPriorityTypeId() == DispatchKey::EndOfFunctionalityKeys));
  }

  TEST_CASE("dispatch table slots: offsets, bijection with FULL order") {
    CHECK(num_runtime_entries == 138);
    CHECK(getDispatchTableIndexForDispatchKey(DispatchKey::Undefined) == 0);
    CHECK(getDispatchTableIndexForDispatchKey(DispatchKey::CPU) == 1);
    CHECK(getDispatchTableIndexForDispatchKey(DispatchKey::Meta) == 16);
    CHECK(getDispatchTableIndexForDispatchKey(DispatchKey::FPGA) == 17);
    CHECK(getDispatchTableIndexForDispatchKey(DispatchKey::BackendSelect) == 86);
    CHECK(getDispatchTableIndexForDispatchKey(DispatchKey::AutogradOther) == 96);
    CHECK(getDispatchTableIndexForDispatchKey(DispatchKey::AutogradCPU) == 97);
    CHECK(getDispatchTableIndexForDispatchKey(DispatchKey::AutogradMeta) == 112);
    CHECK(getDispatchTableIndexForDispatchKey(DispatchKey::AutocastCPU) == 115);
    CHECK(getDispatchTableIndexForDispatchKey(DispatchKey::PythonDispatcher) == 137);
    CHECK(DispatchKeySet(DispatchKey::Dense).getDispatchTableIndexForDispatchKeySet() == 1);  // PB bit alone: CPU slot
    CHECK(DispatchKeySet::from_raw_repr(0x2804010001).getDispatchTableIndexForDispatchKeySet() == 97);
    int expected = 1;
    std::set<int> seen;
    for (DispatchKey k : DispatchKeySet(DispatchKeySet::FULL)) {
      CHECK(getDispatchTableIndexForDispatchKey(k) == expected++);
      seen.insert(getDispatchTableIndexForDispatchKey(k));
    }
    CHECK(seen.size() == 137);
  }

  TEST_CASE("priority queries") {
    auto ks = DispatchKeySet::from_raw_repr(0x2804010001);
    CHECK((ks.highestPriorityTypeId() == DispatchKey::AutogradCPU));
    CHECK((ks.highestFunctionalityKey() == DispatchKey::AutogradFunctionality));
    CHECK((ks.highestBackendKey() == BackendComponent::CPUBit));
    CHECK(ks.getBackendIndex() == 0);
    CHECK((DispatchKeySet(DispatchKey::Meta).getBackendIndex() == 15));
    CHECK((DispatchKeySet::from_raw_repr(0xffff).highestPriorityTypeId() == DispatchKey::Undefined));
    CHECK((DispatchKeySet(DispatchKey::Sparse).highestPriorityTypeId() == DispatchKey::StartOfSparseBackends));
  }

  TEST_CASE("named key sets (layout reference 6)") {
    CHECK(toString(autograd_dispatch_keyset) == "DispatchKeySet(AutogradOther, AutogradNestedTensor)");
    CHECK(autograd_dispatch_keyset_with_ADInplaceOrView.raw_repr() == 0x7800000000);
    CHECK(default_excluded_set.raw_repr() == 0x3ff0000000000);
    CHECK(python_ks.raw_repr() == 0x200000008000000);
    CHECK(backend_functionality_keys.raw_repr() == 0x191ffff);
    CHECK(functorch_transforms_ks.raw_repr() == 0xf4000000000000);
    CHECK(backend_dispatch_keyset.raw_repr() == 0x1ffffff);
    CHECK(getRuntimeDispatchKeySet(DispatchKey::Autograd).raw_repr() == 0x700000ffff);
    CHECK((getBackendKeySetFromAutograd(DispatchKey::AutogradCPU) == DispatchKeySet(DispatchKey::CPU)));
    CHECK((getBackendKeySetFromAutograd(DispatchKey::AutogradPrivateUse2) == DispatchKeySet(DispatchKey::PrivateUse2)));
    CHECK(getBackendKeySetFromAutograd(DispatchKey::AutogradHIP).empty());
    CHECK(getBackendKeySetFromAutograd(DispatchKey::AutogradVE).empty());
    CHECK(getBackendKeySetFromAutograd(DispatchKey::AutogradMTIA).empty());
    CHECK(getBackendKeySetFromAutograd(DispatchKey::AutogradNestedTensor).raw_repr() == 0x200ffff);
    CHECK((getBackendKeySetFromAutograd(DispatchKey::AutogradOther) == autogradother_backends));
    CHECK(isBackendDispatchKey(DispatchKey::CPU));
    CHECK(isBackendDispatchKey(DispatchKey::Meta));
    CHECK(!isBackendDispatchKey(DispatchKey::NestedTensor));
    CHECK(!isBackendDispatchKey(DispatchKey::AutogradCPU));
    CHECK((getAutogradRelatedKeySetFromBackend(BackendComponent::HIPBit) ==
           DispatchKeySet{DispatchKey::ADInplaceOrView, DispatchKey::AutogradOther}));
    CHECK(getAutocastRelatedKeySetFromBackend(BackendComponent::MetaBit).empty());
  }

  TEST_CASE("parseDispatchKey") {
    CHECK((parseDispatchKey("CPU") == DispatchKey::CPU));
    CHECK((parseDispatchKey("AutogradCPU") == DispatchKey::AutogradCPU));
    CHECK((parseDispatchKey("CompositeImplicitAutograd") == DispatchKey::CompositeImplicitAutograd));
    CHECK((parseDispatchKey("AutocastMAIA") == DispatchKey::AutocastMAIA));
    CHECK((parseDispatchKey("Undefined") == DispatchKey::Undefined));
    CHECK(!parseDispatchKey("NotAKey"));
    CHECK(!parseDispatchKey("QuantizedUndefined"));
    CHECK_THROWS_WITH_AS(parseDispatchKeyOrThrow("Bogus"), "could not parse dispatch key: Bogus", Error);
    // Every runtime key round-trips through its name.
    for (DispatchKey k : DispatchKeySet(DispatchKeySet::FULL)) CHECK(parseDispatchKey(toString(k)) == k);
  }
}
