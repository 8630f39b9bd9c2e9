// Thread-local variables of a target read without libthread_db and without the debugger's help:
// the walk libthread_db makes, done read-only over read_memory. glibc describes the layouts it
// needs in its exported `_thread_db_*` descriptors (libc.so.6 .dynsym), so nothing of glibc is
// hard-coded here beyond the public ABI of r_debug and link_map (<link.h>).
//   thread pointer: the struct pthread whose tid is the thread's, on _rtld_global's thread lists
//                   (_dl_stack_user holds the initial thread and user stacks, _dl_stack_used the rest)
//   DTV:            the thread pointer's dtv (tcbhead_t), indexed by the module's l_tls_modid
//   variable:       the module's TLS block (the DTV entry) + the symbol's value (STT_TLS st_value)
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "Remote.h"

namespace dscope::inspect {

// The address of the TLS symbol `symbol` of the module (its file, mapped at its start) in thread `tid`, or
// nullopt when that thread has not allocated the module's TLS block yet (dynamic TLS is allocated
// on first use: the variable still holds its initial value, zero). InspectError (one line) when
// the walk cannot be made.
std::optional<uint64_t> threadLocalAddress(const Remote& mem, int64_t tid, const ModuleMapping& module,
                                           const std::string& symbol);

// The value (st_value) of a symbol in an ELF file's .dynsym, or nullopt.
std::optional<uint64_t> dynamicSymbolValue(const std::string& path, const std::string& name);

}  // namespace dscope::inspect
