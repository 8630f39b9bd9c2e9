// Code addresses named from the module files themselves, with elfutils (libdwfl/libdw): the one
// symbolizer every front end prints through, so GDB, LLDB and a debugger-free tool name a kernel
// identically by construction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dscope::inspect {

// A file mapped into the target: its path and the address its first byte is mapped at.
struct ModuleMapping {
  uint64_t start = 0;
  std::string path;
};

// What is at a code address of a target made of `modules`:
//  * "function at file:line" when the module has DWARF: the function (not an inlined call) whose
//    code holds the address, named by its demangled linkage name (a template function without
//    its return type, as GDB prints it), and the file and line of its own definition
//    (DW_AT_decl_file/decl_line), not the line of the address;
//  * "symbol" or "symbol + offset" from the ELF symbol table otherwise (as GDB's `info symbol`:
//    "vtable for X + 16");
//  * "" when no module holds the address or the module cannot be read.
// Module files are opened once per process of the library and kept (path, size and mtime
// identify them), so repeated commands pay for DWARF only once.
std::string describeCodeAddress(const std::vector<ModuleMapping>& modules, uint64_t addr);

// The same for an address of one file as the file states it (its symbol table's addresses).
std::string describeFileAddress(const std::string& path, uint64_t addr);

// A mangled C++ function name as GDB prints a function: demangled, and a template function's
// return type dropped ("dscope::Tensor f<int>(int)" -> "f<int>(int)"). Anything else unchanged.
std::string demangledFunctionName(const char* name);

}  // namespace dscope::inspect
