// Code addresses named from the module files themselves, with elfutils (libdwfl/libdw): the one
// symbolizer every front end prints through, so GDB, LLDB and a debugger-free tool name a kernel
// identically by construction.
#pragma once

#include <cstdint>
#include <optional>
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

// Whether addr lies in a module's read-only data: a segment of its file that is neither writable
// nor code, or its PT_GNU_RELRO range (written once by the dynamic linker, then read-only: where
// position-independent code keeps vtables and type_info objects). False where no module holds it.
// A pointer that must lead to a vtable or a type name and does not is corrupt memory.
bool isReadOnlyData(const std::vector<ModuleMapping>& modules, uint64_t addr);
// Where the function at code address addr jumps at once, when its first instruction (after an
// endbr64) is a `jmp rel32`: a trampoline that tail-calls the function that really runs (c10's
// boxed wrapper of a functor kernel, make_boxed_function, jumps to the functor's operator()). Read
// from the module file (a core need not hold code pages); nullopt when no module holds addr or
// its code starts otherwise.
std::optional<uint64_t> tailJumpTarget(const std::vector<ModuleMapping>& modules, uint64_t addr);
// Whether addr lies in a module's code (an executable segment of its file): where a function
// pointer must point.
bool isCode(const std::vector<ModuleMapping>& modules, uint64_t addr);

// What runs at a code address, as a stack walk needs it: `names` are the calls inlined there,
// innermost first, then the function they were inlined into (from DWARF; without DWARF that
// function alone, by its ELF symbol), each named as GDB names a frame (demangled, with its
// parameter list); `entry` is where that function is entered (the address a function pointer to it
// holds; the same for both parts of a hot/cold split function where DWARF says so), 0 when unknown.
// With return_address, addr is the instruction before a return address (a caller's frame): then
// `called` is the function its call instruction called, as the DWARF call-site entry says (which
// is what GDB rebuilds tail-call frames from: the callee may have jumped on to another function
// and left no frame of its own), "" when the DWARF says none. Empty when no module holds addr.
struct FramePc {
  std::vector<std::string> names;
  uint64_t entry = 0;
  std::string called;
};
FramePc functionsAt(const std::vector<ModuleMapping>& modules, uint64_t addr, bool return_address);

// A mangled C++ function name as GDB prints a function: demangled, and a template function's
// return type dropped ("dscope::Tensor f<int>(int)" -> "f<int>(int)"). Anything else unchanged.
std::string demangledFunctionName(const char* name);

// A new command begins: a module file may have been rebuilt since the last one, so each is
// checked again (its size and mtime) where it is next used. Within a command each is checked once:
// a kernel's name and a pointer's segment look a module file up thousands of times per op-table.
void recheckModuleFiles();

}  // namespace dscope::inspect
