// c10's OperatorEntry::computeDispatchTableEntryWithDebug, written once: its rules in their order,
// the first that matches wins (../shared/reference/c10-2.11-layout.md, the computed-table rules).
// Two callers answer its questions in their own terms: the runtime in process (OperatorEntry, its
// compiled keys) and the reader of a real c10 build (its key table, read from outside:
// inspect/src/source/c10/TorchView). A rule whose alias key a build lacks never applies: 1.13 has
// no FuncTorchBatchedDecomposition, so its tables have no [batched kernel] rows.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <utility>

#include "dscope/OperatorEntry.h"

namespace dscope::impl {

// The alias keys the rules name, by c10's names (their values differ between builds).
enum class TableAlias : uint8_t {
  CompositeExplicitAutogradNonFunctional,
  CompositeExplicitAutograd,
  CompositeImplicitAutogradNestedTensor,
  CompositeImplicitAutograd,
  Autograd,
  FuncTorchBatchedDecomposition,
};
constexpr TableAlias kTableAliases[] = {
    TableAlias::CompositeExplicitAutogradNonFunctional, TableAlias::CompositeExplicitAutograd,
    TableAlias::CompositeImplicitAutogradNestedTensor,  TableAlias::CompositeImplicitAutograd,
    TableAlias::Autograd,                               TableAlias::FuncTorchBatchedDecomposition};
constexpr const char* toString(TableAlias a) {
  switch (a) {
    case TableAlias::CompositeExplicitAutogradNonFunctional: return "CompositeExplicitAutogradNonFunctional";
    case TableAlias::CompositeExplicitAutograd: return "CompositeExplicitAutograd";
    case TableAlias::CompositeImplicitAutogradNestedTensor: return "CompositeImplicitAutogradNestedTensor";
    case TableAlias::CompositeImplicitAutograd: return "CompositeImplicitAutograd";
    case TableAlias::Autograd: return "Autograd";
    case TableAlias::FuncTorchBatchedDecomposition: return "FuncTorchBatchedDecomposition";
  }
  return "";
}

// The entry the rules choose: a kernel (null: missing), why, and the alias key it was
// registered at when an alias rule chose it.
template <class Kernel>
struct TableChoice {
  const Kernel* kernel = nullptr;
  TableEntrySource source = TableEntrySource::Missing;
  std::optional<TableAlias> alias;
};

// What the rules ask of a caller about runtime key k of one operator (`q`):
//   bool undefined()              k is Undefined (slot 0): every alias covers it
//   const Kernel* direct()        the newest kernel registered at k itself
//   bool covers(TableAlias)       isIncludedInAlias(k, alias); false when the build lacks the alias
//   const Kernel* at(TableAlias)  the newest kernel registered at the alias key (null: none, or no such key)
//   bool backendKernel()          a kernel registered at a key of getBackendKeySetFromAutograd(k)
//   bool ambiguousAutogradOther() k is AutogradOther and a kernel lies in autogradother_backends
//   const Kernel* ambiguous()     the ambiguous-autogradother sentinel
//   const Kernel* fallback()      the backend fallback at k's slot (null: none)
template <class Query, class Kernel = std::remove_cv_t<std::remove_pointer_t<decltype(std::declval<const Query&>().direct())>>>
TableChoice<Kernel> chooseTableEntry(const Query& q) {
  using A = TableAlias;
  using S = TableEntrySource;
  auto applies = [&](A a) { return q.undefined() || q.covers(a); };
  // 1. A kernel registered at k itself.
  if (!q.undefined())
    if (const Kernel* k = q.direct()) return {k, S::Kernel, std::nullopt};
  // 2-3. CompositeExplicitAutogradNonFunctional, then CompositeExplicitAutograd.
  for (A a : {A::CompositeExplicitAutogradNonFunctional, A::CompositeExplicitAutograd})
    if (applies(a))
      if (const Kernel* k = q.at(a)) return {k, S::DefaultBackendKernel, a};
  // A backend kernel (or CEA) for k means a CIA kernel must not shadow it at Autograd<X>.
  const bool has_backend_kernel = q.backendKernel() || q.at(A::CompositeExplicitAutograd) != nullptr;
  // 4. CompositeImplicitAutogradNestedTensor.
  if (q.covers(A::CompositeImplicitAutogradNestedTensor))
    if (const Kernel* k = q.at(A::CompositeImplicitAutogradNestedTensor)) return {k, S::NestedKernel, A::CompositeImplicitAutogradNestedTensor};
  // 5. CompositeImplicitAutograd, unless AutogradOther would hide a backend's kernel (ambiguous).
  if (applies(A::CompositeImplicitAutograd))
    if (const Kernel* k = q.at(A::CompositeImplicitAutograd)) {
      if (q.ambiguousAutogradOther()) return {q.ambiguous(), S::AmbiguousAutogradOther, std::nullopt};
      if (!has_backend_kernel) return {k, S::MathKernel, A::CompositeImplicitAutograd};
    }
  // 6-7. Autograd, then FuncTorchBatchedDecomposition.
  for (auto [a, source] : {std::pair{A::Autograd, S::AutogradKernel}, std::pair{A::FuncTorchBatchedDecomposition, S::BatchedKernel}})
    if (q.covers(a))
      if (const Kernel* k = q.at(a)) return {k, source, a};
  // 8. The global backend fallback at k's slot; else 9. missing.
  if (const Kernel* f = q.fallback()) return {f, S::BackendFallback, std::nullopt};
  return {nullptr, S::Missing, std::nullopt};
}

}  // namespace dscope::impl
