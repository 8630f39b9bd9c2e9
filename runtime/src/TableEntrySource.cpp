// The labels of computed dispatch-table entries, in dscope_common: the runtime prints them in
// _dispatch_dump_table and libdscope_inspect prints them from a remote table's source bytes.
#include "dscope/OperatorEntry.h"

namespace dscope::impl {

const char* toString(TableEntrySource s) {
  switch (s) {
    case TableEntrySource::Missing: return "missing";
    case TableEntrySource::Kernel: return "kernel";
    case TableEntrySource::DefaultBackendKernel: return "default backend kernel";
    case TableEntrySource::NestedKernel: return "nested kernel";
    case TableEntrySource::AmbiguousAutogradOther: return "ambiguous autogradother";
    case TableEntrySource::MathKernel: return "math kernel";
    case TableEntrySource::AutogradKernel: return "autograd kernel";
    case TableEntrySource::BatchedKernel: return "batched kernel";
    case TableEntrySource::BackendFallback: return "backend fallback";
  }
  return "?";
}

}  // namespace dscope::impl
