#include "model/BreakSupport.h"

#include "target/Remote.h"

namespace dscope::inspect {

int checkedBreakKey(const KeyTable& keys, const std::string& name) {
  const KeyInfo& info = keys.named(name);
  if (info.alias) fail(name + " is an alias key; a dispatch always goes to a runtime key (e.g. CPU, AutogradCPU)");
  if (info.slot < 0) fail(name + " has no dispatch-table slot; no dispatch goes to it");
  return info.value;
}

std::optional<DispatchExplanation>& lastBreakStop() {
  static std::optional<DispatchExplanation> stop;
  return stop;
}

}  // namespace dscope::inspect
