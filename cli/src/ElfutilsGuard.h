// elfutils does not check every allocation and mmap it makes: under an address-space limit
// (`ulimit -v`) too small for a core and the module files it maps, dwfl_core_file_report
// dereferences what it did not get (a real PyTorch core under 300 000 to 400 000 KiB). Such a call
// runs behind guardElfutils: the SIGSEGV or SIGBUS it takes becomes one line. elfutils' state is
// never used again after one (the target that made the call is refused, and dscope ends).
#pragma once

#include <setjmp.h>
#include <signal.h>
#include <sys/resource.h>

#include <stdexcept>
#include <string>

namespace dscope::cli {

namespace detail {

inline sigjmp_buf* elfutils_escape = nullptr;  // set only while a guarded call runs (one thread)

inline void escapeElfutils(int signal) { siglongjmp(*elfutils_escape, signal); }

}  // namespace detail

// " under the address-space limit of N KiB (ulimit -v): ...; raise it" where a limit is set (what
// elfutils maps, the core and its module files, counts against it), else "".
inline std::string underAddressSpaceLimit(const std::string& what_needs_more) {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return "";
  return " under the address-space limit of " + std::to_string(limit.rlim_cur / 1024) + " KiB (ulimit -v): " +
         what_needs_more + "; raise it";
}

namespace detail {

// The line for a guarded call that crashed: the address-space limit where one is set.
inline std::string elfutilsCrash(const std::string& what) {
  if (std::string limit = underAddressSpaceLimit("the core and the module files it maps do not fit"); !limit.empty())
    return "elfutils ran out of address space " + what + limit;
  return "elfutils crashed " + what + " (SIGSEGV or SIGBUS): the core is damaged in a way it does not check";
}

}  // namespace detail

template <class Call>
void guardElfutils(const std::string& what, Call call) {
  struct Handlers {
    struct sigaction segv {}, bus {};
    Handlers() {
      struct sigaction escape {};
      escape.sa_handler = detail::escapeElfutils;
      sigemptyset(&escape.sa_mask);
      sigaction(SIGSEGV, &escape, &segv);
      sigaction(SIGBUS, &escape, &bus);
    }
    ~Handlers() {
      sigaction(SIGSEGV, &segv, nullptr);
      sigaction(SIGBUS, &bus, nullptr);
      detail::elfutils_escape = nullptr;
    }
  };
  // Made before the call: after a crash the address space may have no room left for a string.
  // Throwing a copy allocates nothing (the text is shared; the exception comes from libstdc++'s
  // emergency pool), and the caller's target, ended while the exception unwinds, gives elfutils'
  // mappings back.
  const std::runtime_error crashed(detail::elfutilsCrash(what));
  sigjmp_buf escape;
  bool crash = false;
  {
    Handlers handlers;
    if (sigsetjmp(escape, 1) != 0) {
      crash = true;
    } else {
      detail::elfutils_escape = &escape;
      call();
    }
  }
  if (crash) throw crashed;
}

}  // namespace dscope::cli
