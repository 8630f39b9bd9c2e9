// torch._C's dispatcher introspection, by operator name ("aten::mm", "aten::add.Tensor").
// Unknown names raise dscope::Error.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dscope/DispatchKey.h"
#include "dscope/LocalDispatchKeySet.h"  // tls_local_include_set / tls_local_exclude_set

namespace dscope {

std::string dump(std::string_view op);        // torch._C._dispatch_dump
std::string dump_table(std::string_view op);  // torch._C._dispatch_dump_table
bool has_kernel_for_dispatch_key(std::string_view op, DispatchKey k);  // registered directly at k
// Operators with a kernel registered at k (any key when k is nullopt).
std::vector<std::string> registrations_for_dispatch_key(std::optional<DispatchKey> k = std::nullopt);
std::vector<std::string> all_op_names();

}  // namespace dscope
