#include "dscope/Introspection.h"

#include "dscope/Dispatcher.h"

namespace dscope {

namespace {
impl::OperatorEntry& entryOrThrow(std::string_view op) {
  auto handle = Dispatcher::singleton().findOp(OperatorName::parse(op));
  DSCOPE_CHECK(handle, "unknown operator: " + std::string(op));
  return handle->entry();
}
}  // namespace

std::string dump(std::string_view op) { return entryOrThrow(op).dumpState(); }
std::string dump_table(std::string_view op) { return entryOrThrow(op).dumpComputedTable(); }
bool has_kernel_for_dispatch_key(std::string_view op, DispatchKey k) { return entryOrThrow(op).hasKernelForDispatchKey(k); }
std::vector<std::string> registrations_for_dispatch_key(std::optional<DispatchKey> k) {
  return Dispatcher::singleton().getRegistrationsForDispatchKey(k);
}
std::vector<std::string> all_op_names() { return Dispatcher::singleton().getAllOpNames(); }

}  // namespace dscope
