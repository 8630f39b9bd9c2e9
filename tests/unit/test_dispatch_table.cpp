// The computed dispatch table and _dispatch_dump formats against real PyTorch 2.11 output.
//
// Each replica test registers, in our runtime, exactly the kernels that PyTorch's
// _dispatch_dump lists for an operator (same keys, same debug strings, same boxed/unboxed
// kinds) plus PyTorch's backend fallbacks, and requires our _dispatch_dump and
// _dispatch_dump_table text to equal PyTorch's byte for byte. The only substitutions: the
// operator namespace (aten::mm is taken by our own library) and, for fallback keys where our
// runtime ships its own default fallback, our debug path.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <set>

#include "dscope/Library.h"
#include "test_util.h"

using namespace dscope;
using dscope::testing::dumpExampleSections;
using dscope::testing::joinLines;
using K = DispatchKey;

namespace {

Tensor binaryKernel(const Tensor& a, const Tensor&) { return a; }
Tensor addKernel(const Tensor& a, const Tensor&, const Scalar&) { return a; }
void boxedKernel(const OperatorHandle&, Stack*) {}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

// A kernel as _dispatch_dump prints it: "CPU (inactive): registered at X :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]"
struct DumpLine {
  DispatchKey key;
  std::string debug, schema, flags;
};

DumpLine parseDumpLine(const std::string& line) {
  auto colon = line.find(": ");
  std::string head = line.substr(0, colon);
  head = head.substr(0, head.find(' '));  // drop " (inactive)"
  if (auto a = head.find("[alias]"); a != std::string::npos) head = head.substr(0, a);
  auto sep = line.find(" :: ", colon);
  auto lb = line.rfind("[ ");
  DumpLine d{parseDispatchKeyOrThrow(head), line.substr(colon + 2, sep - colon - 2), line.substr(sep + 4, lb - sep - 5),
             line.substr(lb + 2, line.size() - lb - 3)};
  return d;
}

CppFunction kernelFor(const DumpLine& d) {
  if (d.flags.find("fallthrough") != std::string::npos) return CppFunction::makeFallthrough();
  if (d.flags.find("unboxed") == std::string::npos) return CppFunction::makeFromBoxedFunction(&boxedKernel);
  if (d.schema == "(Tensor _0, Tensor _1) -> Tensor _0") return CppFunction(&binaryKernel);
  REQUIRE(d.schema == "(Tensor _0, Tensor _1, Scalar _2) -> Tensor _0");
  return CppFunction(&addKernel);
}

// A table line: "Named: fallthrough registered at X [backend fallback]"
struct TableLine {
  DispatchKey key;
  bool fallthrough;
  std::string debug, label;
};

TableLine parseTableLine(const std::string& line) {
  auto colon = line.find(": ");
  auto lb = line.rfind(" [");
  std::string body = line.substr(colon + 2, lb - colon - 2);
  bool ft = body.rfind("fallthrough ", 0) == 0;
  return {parseDispatchKeyOrThrow(line.substr(0, colon)), ft, ft ? body.substr(12) : body,
          line.substr(lb + 2, line.size() - lb - 3)};
}

// All of PyTorch's backend fallbacks that the example tables show.
std::map<DispatchKey, TableLine> pytorchFallbacks() {
  std::map<DispatchKey, TableLine> out;
  for (const auto& [title, lines] : dumpExampleSections()) {
    if (title.rfind("_dispatch_dump_table", 0) != 0) continue;
    for (const auto& l : lines) {
      auto t = parseTableLine(l);
      if (t.label == "backend fallback") out.emplace(t.key, t);
    }
  }
  return out;
}

const impl::AnnotatedKernel* ourFallback(DispatchKey k) {
  return Dispatcher::singleton().backendFallbackKernel(getDispatchTableIndexForDispatchKey(k));
}

class Replica {
 public:
  // Registers PyTorch's op `op` (e.g. "aten::mm") as `ns::<name>` with its real kernels.
  Replica(const std::string& op, const std::string& ns) {
    auto sections = dumpExampleSections();
    const auto& dump = sections.at("_dispatch_dump('" + op + "')");
    REQUIRE(dump.size() >= 4);
    // Header: "schema: aten::mm(...)" and "debug: registered at FILE:LINE".
    std::string schema = dump[1].substr(dump[1].find("::") + 2);
    std::string where = dump[2].substr(std::string("debug: registered at ").size());
    auto colon = where.rfind(':');
    def_ = std::make_unique<Library>(Library::DEF, ns, std::nullopt, where.substr(0, colon).c_str(),
                                     std::stoi(where.substr(colon + 1)));
    def_->def(schema);
    std::string name = schema.substr(0, schema.find('('));
    // Kernels, oldest first so that the newest of a key ends up active.
    impls_ = std::make_unique<Library>(Library::FRAGMENT, ns, std::nullopt, __FILE__, __LINE__);
    std::vector<DumpLine> kernels;
    for (size_t i = 4; i < dump.size(); ++i) kernels.push_back(parseDumpLine(dump[i]));
    for (auto it = kernels.rbegin(); it != kernels.rend(); ++it)
      impls_->impl(name, dispatch(it->key, kernelFor(*it)).debug(it->debug));
    // PyTorch's fallbacks where our runtime has none of its own.
    for (const auto& [key, fb] : pytorchFallbacks()) {
      if (ourFallback(key)) continue;
      auto lib = std::make_unique<Library>(Library::IMPL, "_", key, __FILE__, __LINE__);
      lib->fallback((fb.fallthrough ? CppFunction::makeFallthrough() : CppFunction::makeFromBoxedFunction(&boxedKernel))
                        .debug(fb.debug));
      fallbacks_.push_back(std::move(lib));
    }
  }

 private:
  std::unique_ptr<Library> def_, impls_;
  std::vector<std::unique_ptr<Library>> fallbacks_;
};

// PyTorch's table text with our debug path on fallback lines where our runtime has its own.
std::string expectedTable(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) {
    auto t = parseTableLine(l);
    auto* ours = t.label == "backend fallback" ? ourFallback(t.key) : nullptr;
    if (ours) {
      CHECK_MESSAGE(ours->kernel.isFallthrough() == t.fallthrough, "our default fallback at " << toString(t.key)
                                                                        << " differs from PyTorch's in fallthrough-ness");
      out += std::string(toString(t.key)) + ": " + (t.fallthrough ? "fallthrough " : "") + ours->debug + " [" + t.label + "]\n";
    } else {
      out += l + "\n";
    }
  }
  return out;
}

void checkReplica(const std::string& op, const std::string& ns) {
  Replica replica(op, ns);
  auto sections = dumpExampleSections();
  std::string ours_name = ns + op.substr(op.find("::"));
  auto handle = Dispatcher::singleton().findOp(OperatorName::parse(ours_name));
  REQUIRE(handle);
  std::string want_dump = replace(joinLines(sections.at("_dispatch_dump('" + op + "')")), op.substr(0, op.find("::") + 2), ns + "::");
  CHECK(handle->entry().dumpState() == want_dump);
  CHECK(handle->entry().dumpComputedTable() == expectedTable(sections.at("_dispatch_dump_table('" + op + "')")));
  handle->entry().checkInvariants();
}

}  // namespace

TEST_SUITE("dispatch_table") {
  TEST_CASE("replica of aten::mm: _dispatch_dump and _dispatch_dump_table byte for byte") {
    checkReplica("aten::mm", "torchref");
  }
  TEST_CASE("replica of aten::add.Tensor: _dispatch_dump and _dispatch_dump_table byte for byte") {
    checkReplica("aten::add.Tensor", "torchref");
  }
  TEST_CASE("replica of probe::only_cpu: _dispatch_dump and _dispatch_dump_table byte for byte") {
    checkReplica("probe::only_cpu", "torchref");
  }

  TEST_CASE("replica libraries deregister completely when destroyed") {
    { Replica r("aten::mm", "torchgone"); }
    auto op = Dispatcher::singleton().findOp(OperatorName::parse("torchgone::mm"));
    REQUIRE(op);
    CHECK(!op->hasSchema());
    CHECK(!op->entry().hasAnyKernel());
    CHECK(op->entry().dumpState() == "name: torchgone::mm\nschema: (none)\n");
    // Only our runtime's own default fallbacks remain in its table.
    for (const auto& line : dscope::testing::splitLines(op->entry().dumpComputedTable())) {
      auto t = parseTableLine(line);
      CHECK(t.label == "backend fallback");
      REQUIRE(ourFallback(t.key));
      CHECK(t.debug == ourFallback(t.key)->debug);
    }
    auto names = Dispatcher::singleton().getAllOpNames();
    CHECK(std::find(names.begin(), names.end(), "torchgone::mm") == names.end());
  }

  TEST_CASE("our own aten::mm is laid out like PyTorch's: same keys in the same order, same labels") {
    auto sections = dumpExampleSections();
    auto mm = Dispatcher::singleton().findSchemaOrThrow("aten::mm", "");
    // _dispatch_dump_table: every key we resolve appears in PyTorch's table, in the same order,
    // with the same label and fallthrough-ness. Where PyTorch registers kernels we do not have
    // (autocast for other devices, a CompositeExplicitAutogradNonFunctional fallback for every
    // other backend), we show the runtime default instead, so those keys are listed here.
    const std::set<DispatchKey> ours_differ = {K::AutocastMTIA, K::AutocastMAIA, K::AutocastXPU, K::AutocastMPS, K::AutocastCUDA};
    std::vector<TableLine> theirs;
    for (const auto& l : sections.at("_dispatch_dump_table('aten::mm')")) theirs.push_back(parseTableLine(l));
    size_t pos = 0;
    int compared = 0;
    for (const auto& line : dscope::testing::splitLines(mm.entry().dumpComputedTable())) {
      auto t = parseTableLine(line);
      auto it = std::find_if(theirs.begin() + pos, theirs.end(), [&](const TableLine& x) { return x.key == t.key; });
      REQUIRE_MESSAGE(it != theirs.end(), "key " << toString(t.key) << " is missing from PyTorch's table or out of order");
      pos = it - theirs.begin() + 1;
      if (ours_differ.count(t.key)) continue;
      CHECK_MESSAGE(t.label == it->label, toString(t.key));
      CHECK_MESSAGE(t.fallthrough == it->fallthrough, toString(t.key));
      ++compared;
    }
    // CPU, Meta, BackendSelect, ADInplaceOrView, AutogradOther, the 16 Autograd<backend>,
    // AutogradNestedTensor, AutocastCPU.
    CHECK(compared >= 23);
    // _dispatch_dump: our registrations are a subset of PyTorch's, with the same inferred
    // schema and kinds, in the same key order.
    std::vector<DumpLine> their_kernels;
    const auto& dump = sections.at("_dispatch_dump('aten::mm')");
    for (size_t i = 4; i < dump.size(); ++i) their_kernels.push_back(parseDumpLine(dump[i]));
    auto our_dump = dscope::testing::splitLines(mm.entry().dumpState());
    CHECK(our_dump.at(0) == dump.at(0));  // name: aten::mm
    CHECK(our_dump.at(1) == dump.at(1));  // schema: aten::mm(Tensor self, Tensor mat2) -> Tensor
    CHECK(our_dump.at(3) == dump.at(3));  // alias analysis kind: FROM_SCHEMA
    for (size_t i = 4; i < our_dump.size(); ++i) {
      auto k = parseDumpLine(our_dump[i]);
      bool found = std::any_of(their_kernels.begin(), their_kernels.end(), [&](const DumpLine& x) {
        return x.key == k.key && x.schema == "(Tensor _0, Tensor _1) -> Tensor _0" && k.schema == x.schema && k.flags == x.flags;
      });
      CHECK_MESSAGE(found, our_dump[i]);
    }
    CHECK(our_dump.size() >= 4 + 4);  // CPU, Meta, AutocastCPU, Autograd[alias]
  }
}
