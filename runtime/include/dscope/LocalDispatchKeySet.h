// Thread-local include/exclude sets (c10::impl::LocalDispatchKeySet) and their RAII guards.
//
// Stored XOR the defaults, like c10: an all-zero TLS block (every new thread) means
// included = {BackendSelect, ADInplaceOrView}, excluded = all Autocast keys, with no
// initialization code at thread start. A debugger decodes raw ^ default the same way.
#pragma once

#include <cstdint>

#include "dscope/DispatchKeySet.h"

// Thread-locals read on every dispatch: `__thread` (no dynamic initialization, so no TLS
// init-function check on access) in the initial-exec model (one fs-relative load, even from
// another shared object). Only for trivially constructible, zero-initialized types.
#define DSCOPE_HOT_THREAD_LOCAL __thread
#define DSCOPE_TLS_INITIAL_EXEC __attribute__((tls_model("initial-exec")))

namespace dscope {
namespace impl {

// Must stay a POD with no initializers: the compiler then reads it with one fs-relative load
// (no TLS init wrapper), which keeps the dispatch hot path at a few nanoseconds.
struct PODLocalDispatchKeySet {
  uint64_t included_;  // raw: decoded included ^ default_included_set
  uint64_t excluded_;  // raw: decoded excluded ^ default_excluded_set

  DispatchKeySet included() const { return DispatchKeySet(DispatchKeySet::RAW, included_) ^ default_included_set; }
  DispatchKeySet excluded() const { return DispatchKeySet(DispatchKeySet::RAW, excluded_) ^ default_excluded_set; }
  void set_included(DispatchKeySet x) { included_ = (x ^ default_included_set).raw_repr(); }
  void set_excluded(DispatchKeySet x) { excluded_ = (x ^ default_excluded_set).raw_repr(); }
};
static_assert(sizeof(PODLocalDispatchKeySet) == 16);

extern DSCOPE_HOT_THREAD_LOCAL PODLocalDispatchKeySet raw_local_dispatch_key_set DSCOPE_TLS_INITIAL_EXEC;

struct LocalDispatchKeySet {
  DispatchKeySet included_;
  DispatchKeySet excluded_;
};

inline LocalDispatchKeySet tls_local_dispatch_key_set() {
  const auto& raw = raw_local_dispatch_key_set;
  return {raw.included(), raw.excluded()};
}
void _force_tls_local_dispatch_key_set(LocalDispatchKeySet ks);

bool tls_is_dispatch_key_excluded(DispatchKey k);
void tls_set_dispatch_key_excluded(DispatchKey k, bool desired);
bool tls_is_dispatch_key_included(DispatchKey k);
void tls_set_dispatch_key_included(DispatchKey k, bool desired);

// Adds the keys of `include` not already included; removes exactly those on exit. As in c10,
// only functionality bits are removed on exit, so a runtime key's backend bit stays behind.
class IncludeDispatchKeyGuard {
 public:
  explicit IncludeDispatchKeyGuard(DispatchKeySet include);
  explicit IncludeDispatchKeyGuard(DispatchKey k) : IncludeDispatchKeyGuard(DispatchKeySet(k)) {}
  IncludeDispatchKeyGuard(const IncludeDispatchKeyGuard&) = delete;
  IncludeDispatchKeyGuard& operator=(const IncludeDispatchKeyGuard&) = delete;
  ~IncludeDispatchKeyGuard();

 private:
  PODLocalDispatchKeySet* tls_;
  DispatchKeySet delta_;
};

class ExcludeDispatchKeyGuard {
 public:
  explicit ExcludeDispatchKeyGuard(DispatchKeySet exclude);
  explicit ExcludeDispatchKeyGuard(DispatchKey k) : ExcludeDispatchKeyGuard(DispatchKeySet(k)) {}
  ExcludeDispatchKeyGuard(const ExcludeDispatchKeyGuard&) = delete;
  ExcludeDispatchKeyGuard& operator=(const ExcludeDispatchKeyGuard&) = delete;
  ~ExcludeDispatchKeyGuard();

 private:
  PODLocalDispatchKeySet* tls_;
  DispatchKeySet delta_;
};

// Snapshots both sets and restores them on exit.
class ForceDispatchKeyGuard {
 public:
  ForceDispatchKeyGuard() : saved_(tls_local_dispatch_key_set()) {}
  explicit ForceDispatchKeyGuard(LocalDispatchKeySet ks) : ForceDispatchKeyGuard() {
    _force_tls_local_dispatch_key_set(ks);
  }
  ForceDispatchKeyGuard(const ForceDispatchKeyGuard&) = delete;
  ForceDispatchKeyGuard& operator=(const ForceDispatchKeyGuard&) = delete;
  ~ForceDispatchKeyGuard() { _force_tls_local_dispatch_key_set(saved_); }

 private:
  LocalDispatchKeySet saved_;
};

}  // namespace impl

// Run below autograd: every Autograd key is excluded (what inference code and autograd
// kernels use in c10).
struct AutoDispatchBelowAutograd {
  impl::ExcludeDispatchKeyGuard guard{autograd_dispatch_keyset};
};
// Run below autograd and ADInplaceOrView.
struct AutoDispatchBelowADInplaceOrView {
  impl::ExcludeDispatchKeyGuard guard{autograd_dispatch_keyset_with_ADInplaceOrView};
};

// torch._C._dispatch_tls_local_include_set() / _exclude_set(): the decoded sets.
inline DispatchKeySet tls_local_include_set() { return impl::tls_local_dispatch_key_set().included_; }
inline DispatchKeySet tls_local_exclude_set() { return impl::tls_local_dispatch_key_set().excluded_; }

}  // namespace dscope
