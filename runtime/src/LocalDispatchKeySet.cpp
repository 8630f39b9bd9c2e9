#include "dscope/LocalDispatchKeySet.h"

namespace dscope::impl {

// Zero-initialized per thread: decodes to the default included/excluded sets.
DSCOPE_HOT_THREAD_LOCAL PODLocalDispatchKeySet raw_local_dispatch_key_set DSCOPE_TLS_INITIAL_EXEC;

void _force_tls_local_dispatch_key_set(LocalDispatchKeySet ks) {
  raw_local_dispatch_key_set.set_included(ks.included_);
  raw_local_dispatch_key_set.set_excluded(ks.excluded_);
}

bool tls_is_dispatch_key_excluded(DispatchKey k) { return raw_local_dispatch_key_set.excluded().has(k); }
bool tls_is_dispatch_key_included(DispatchKey k) { return raw_local_dispatch_key_set.included().has(k); }

void tls_set_dispatch_key_excluded(DispatchKey k, bool desired) {
  auto& tls = raw_local_dispatch_key_set;
  tls.set_excluded(desired ? tls.excluded().add(k) : tls.excluded().remove(k));
}

void tls_set_dispatch_key_included(DispatchKey k, bool desired) {
  auto& tls = raw_local_dispatch_key_set;
  tls.set_included(desired ? tls.included().add(k) : tls.included().remove(k));
}

IncludeDispatchKeyGuard::IncludeDispatchKeyGuard(DispatchKeySet include)
    : tls_(&raw_local_dispatch_key_set), delta_(include - tls_->included()) {
  if (!delta_.empty()) tls_->set_included(tls_->included() | delta_);
}

IncludeDispatchKeyGuard::~IncludeDispatchKeyGuard() {
  if (!delta_.empty()) tls_->set_included(tls_->included() - delta_);
}

ExcludeDispatchKeyGuard::ExcludeDispatchKeyGuard(DispatchKeySet exclude)
    : tls_(&raw_local_dispatch_key_set), delta_(exclude - tls_->excluded()) {
  if (!delta_.empty()) tls_->set_excluded(tls_->excluded() | delta_);
}

ExcludeDispatchKeyGuard::~ExcludeDispatchKeyGuard() {
  if (!delta_.empty()) tls_->set_excluded(tls_->excluded() - delta_);
}

}  // namespace dscope::impl
