// Function names spelled as GDB spells them, for LLDB's side of "function at file:line".
//
// GDB names a C++ function by its demangled linkage name (libiberty's demangler: "T const&",
// "A<B<C> >", no return type for template functions), or, when the DWARF has no linkage name
// (GCC omits it for functions with internal linkage), by a name it builds from the DWARF in that
// same canonical spelling. LLDB 16 demangles with LLVM's demangler ("A<B<C>>") and prints
// DWARF-built names with clang's type printer ("const T &"). The rules below produce GDB's
// spelling from what the SB API gives; checked against GDB on the samples' kernels
// (tests/e2e/lldb_tests.cmake).
#pragma once

#include <string>

#include "lldb/API/LLDB.h"

namespace dscope::lldb_plugin {

// GDB's name of a function with debug info.
std::string gdbFunctionName(lldb::SBFunction function);

// GDB's name of a minimal (ELF) symbol: the demangled name with its return type, as in
// `info symbol`.
std::string gdbSymbolName(lldb::SBSymbol symbol);

// GDB's name of a function DIE with a linkage name: demangled, and a template function's return
// type dropped (DMGL_RET_DROP).
std::string gdbDemangleFunction(const char* mangled);

// Whether GDB's C++ name parser (cp_canonicalize_string) takes a name GDB built from DWARF; it
// gives up on a function type inside template arguments and keeps the name as built.
bool gdbCanonicalizes(const std::string& name);

// clang's (or GCC's DWARF) spelling of a C++ name ("const T &", "T *", "A<B<C>>", "long int") in
// GDB's canonical one ("T const&", "T*", "A<B<C> >", "long").
std::string gdbCanonicalSpelling(const std::string& clang_spelling);

}  // namespace dscope::lldb_plugin
