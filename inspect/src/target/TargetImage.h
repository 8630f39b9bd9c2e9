// What the target's memory says about the program it holds: the ELF images mapped in it, read
// with elfutils from their first pages (which every core keeps: the kernel dumps the ELF headers
// of file mappings). Used to tell a core opened with another program from corrupt memory.
#pragma once

#include <string>
#include <vector>

#include "target/Remote.h"
#include "target/Symbolizer.h"

namespace dscope::inspect {

// The build-id (hex) of the program image in the target's memory (the mapped ELF image with a
// PT_INTERP), or "" when the front end gives no mappings or none is readable.
std::string programBuildId(const Remote& mem);

// "" when the target's program is the executable the debugger opened, or when either build-id
// is unknown; else the one line (without "dscope: ") saying they differ.
std::string programMismatch(const Remote& mem);

// "" when the program's shared-library list (DT_DEBUG -> r_debug -> the first link_map) is
// readable, not yet set up, or there is no program image to ask; else the one line (without
// "dscope: ") saying the core lacks it: a truncated core, whose debugger then knows no library.
std::string libraryListLost(const Remote& mem);

// The build-id (hex) of the ELF image mapped from its first byte at `start` (a module's), read from
// the target's memory; "" when it has none or its header pages cannot be read.
std::string imageBuildId(const Remote& mem, uint64_t start);

// The shared libraries the program's link map lists (r_debug's list of link_map entries), each by
// the path the process loaded it by and where its first byte is mapped (its load bias: a library
// is linked at 0); empty when the list cannot be read. What a debugger that did not find a
// library's file may leave out of its own module list.
std::vector<ModuleMapping> linkMapModules(const Remote& mem);

// The build-id (hex) of an ELF file on disk, or "" when it has none or cannot be read.
std::string fileBuildId(const std::string& path);

}  // namespace dscope::inspect
