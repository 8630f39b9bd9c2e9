#include "model/Dispatcher.h"

#include <algorithm>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "target/Remote.h"

namespace dscope::inspect {

namespace {

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "aten::add" of "aten::add.Tensor" (the overload name follows the first '.' after the namespace).
std::string_view baseName(std::string_view full) {
  auto ns = full.find("::");
  auto dot = full.find('.', ns == std::string_view::npos ? 0 : ns);
  return dot == std::string_view::npos ? full : full.substr(0, dot);
}

// An index by full name of the list last searched, kept with the list it indexes: a session asks
// for one operator after another in the same list (op-table of every operator).
size_t indexOf(const std::shared_ptr<const std::vector<Operator>>& list, const std::string& name) {
  static std::mutex mutex;
  static std::pair<std::shared_ptr<const std::vector<Operator>>, std::unordered_map<std::string_view, size_t>> indexed;
  std::lock_guard lock(mutex);
  if (indexed.first != list) {
    indexed = {list, {}};
    for (size_t i = 0; i < list->size(); ++i) indexed.second.emplace((*list)[i].name, i);
  }
  auto it = indexed.second.find(name);
  return it == indexed.second.end() ? list->size() : it->second;
}

}  // namespace

std::vector<std::string> closeNames(const std::string& query, const std::vector<Operator>& ops, size_t limit) {
  // Compare with the full name and with the base name, so "aten::ad" finds aten::add.Tensor.
  const size_t max_distance = std::max<size_t>(2, query.size() / 3);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& op : ops) {
    if (query.size() > kMaxStringLength) break;
    size_t d = std::min(editDistance(query, op.name), editDistance(query, baseName(op.name)));
    if (d <= max_distance) scored.emplace_back(d, op.name);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < limit; ++i) out.push_back(scored[i].second);
  return out;
}

Operator Dispatcher::findOperator(const std::string& query) const {
  const auto list = operatorList();
  const auto& ops = *list;
  if (const size_t i = indexOf(list, query); i < ops.size()) return ops[i];
  std::vector<const Operator*> overloads;
  for (const auto& op : ops)
    if (baseName(op.name) == query) overloads.push_back(&op);
  if (overloads.size() == 1) return *overloads.front();
  if (overloads.size() > 1) {
    std::string names;
    for (size_t i = 0; i < overloads.size() && i < 4; ++i) names += (i ? ", " : "") + overloads[i]->name;
    if (overloads.size() > 4) names += ", ...";
    fail("'" + shown(query) + "' names " + std::to_string(overloads.size()) + " overloads (" + names +
         "); give the full name, e.g. " + overloads.front()->name);
  }
  auto close = closeNames(query, ops, 3);
  std::string msg = "unknown operator '" + shown(query) + "'";
  if (!close.empty()) {
    msg += "; did you mean ";
    for (size_t i = 0; i < close.size(); ++i) msg += (i == 0 ? "" : i + 1 == close.size() ? " or " : ", ") + close[i];
    msg += "?";
  }
  // Not found in a list that could not be read whole: it may be in the part that was lost.
  if (std::string note = incompleteListNote(); !note.empty()) msg += " (" + note + ")";
  fail(msg);
}

bool isOperatorName(const std::string& name) {
  auto word = [&](size_t begin, size_t end, bool identifier) {
    if (begin >= end || (identifier && std::isdigit(static_cast<unsigned char>(name[begin])))) return false;
    return std::all_of(name.begin() + begin, name.begin() + end,
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  };
  const size_t colons = name.find("::");
  if (colons == std::string::npos || name.size() > kMaxStringLength) return false;
  const size_t dot = std::min(name.find('.', colons), name.size());
  return word(0, colons, true) && word(colons + 2, dot, true) && (dot == name.size() || word(dot + 1, name.size(), false));
}

void checkOperatorName(const std::string& name) {
  if (!isOperatorName(name))
    fail("'" + shown(name) + "' is not an operator name: use ns::name or ns::name.overload (e.g. aten::mm, aten::add.Tensor)");
}

bool namesOperator(const std::string& full_name, const std::string& name) {
  return full_name == name || full_name.compare(0, name.size() + 1, name + ".") == 0;
}

std::string whyText(impl::TableEntrySource source, const std::string& key, const std::string& reg_key,
                    const std::string& op) {
  using impl::TableEntrySource;
  switch (source) {
    case TableEntrySource::Kernel: return "a kernel is registered at " + key + " itself";
    case TableEntrySource::DefaultBackendKernel:
      return "no kernel at " + key + "; the " + reg_key + " kernel (a default backend kernel) covers it";
    case TableEntrySource::NestedKernel:
      return "no kernel at " + key + "; the CompositeImplicitAutogradNestedTensor kernel covers it";
    case TableEntrySource::AmbiguousAutogradOther:
      return "ambiguous: a CompositeImplicitAutograd kernel and a kernel for a backend behind AutogradOther both "
             "apply; register an AutogradOther kernel (or a CompositeExplicitAutograd one) to resolve it";
    case TableEntrySource::MathKernel:
      return "no kernel at " + key + " and no backend kernel; the CompositeImplicitAutograd kernel (a math kernel) "
             "covers it";
    case TableEntrySource::AutogradKernel: return "no kernel at " + key + "; the Autograd alias kernel covers it";
    case TableEntrySource::BatchedKernel:
      return "no kernel at " + key + "; the FuncTorchBatchedDecomposition kernel covers it";
    case TableEntrySource::BackendFallback:
      return "no kernel for " + op + " at " + key + "; the backend fallback registered for " + key + " runs";
    case TableEntrySource::Missing: break;
  }
  return "no kernel, alias kernel or backend fallback covers " + key + ": a dispatch here fails with \"Could not run '" +
         op + "' with arguments from the '" + key + "' backend\"";
}

std::vector<TlsCause> tlsCauses(const KeyTable& kt, uint64_t included, uint64_t excluded, const PythonDispatchState& s) {
  std::vector<TlsCause> causes;
  // A cause's keys: `in` it puts in the included set, `out` in the excluded one, `gone` it takes out
  // of the included one; each found where it should be or named as missing.
  auto add = [&](std::string cause, std::initializer_list<const char*> in, std::initializer_list<const char*> out,
                 std::initializer_list<const char*> gone) {
    TlsCause c{std::move(cause), {}, {}, {}, {}};
    auto sort = [&](std::initializer_list<const char*> names, uint64_t set, bool held, std::vector<std::string>& found,
                    const char* otherwise) {
      for (const char* name : names)
        if (const KeyInfo* k = kt.byName(name)) {
          if (KeyTable::has(set, *k) == held) found.push_back(k->name);
          else c.missing.push_back(k->name + otherwise);
        }
    };
    sort(in, included, true, c.included, " not included");
    sort(out, excluded, true, c.excluded, " not excluded");
    sort(gone, included, false, c.removed, " still included");
    causes.push_back(std::move(c));
  };
  if (s.modes.value && s.modes.value->count)
    add(std::to_string(s.modes.value->count) + " TorchDispatchMode" + (s.modes.value->count == 1 ? "" : "s"),
        {"Python", "PythonTLSSnapshot"}, {}, {});
  if (s.python_dispatcher.value.value_or(false)) add("Python dispatcher on", {"PythonDispatcher"}, {}, {});
  if (s.functorch_depth.value.value_or(0))
    add("functorch depth " + std::to_string(*s.functorch_depth.value),
        {"FuncTorchDynamicLayerFrontMode", "FuncTorchDynamicLayerBackMode"}, {}, {});
  if (s.inference_mode.value.value_or(false))
    add("inference mode on", {}, {"AutogradOther", "AutogradFunctionality", "AutogradNestedTensor"}, {"ADInplaceOrView"});
  return causes;
}

}  // namespace dscope::inspect
