// Where the files of a target's modules are. A process in a container (another root or mount
// namespace), and a core written there, name their files by paths of their own root, which on
// this machine hold other files or none: each module is read from the first file, under the
// debugger's sysroot, the live process's root (/proc/PID/root), or the path itself, whose build-id
// is the one the module's image in the target's memory has.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dscope::inspect {

// Where a target's files are looked for besides their own paths.
struct FileRoots {
  std::string sysroot;  // a copy of the root the process ran in ("": none)
  int64_t pid = 0;      // a live process (its root is /proc/PID/root), 0 for a core
};

// A module whose file was not found: `path` as the process named it, `build_id` its image's (hex,
// "" unknown); other_file, when one of the places held a file of another build there, and its id.
struct MissingModuleFile {
  std::string path;
  std::string build_id;
  std::string other_file;
  std::string other_build_id;
};

// The file to read the module mapped from `path` with build-id `build_id` ("": any file there);
// nullopt with *missing filled when no place holds it.
std::optional<std::string> findModuleFile(const std::string& path, const std::string& build_id, const FileRoots& roots,
                                          MissingModuleFile* missing);

// The one line (without "dscope: ") saying a module's file is missing or another build, and how
// to give the front end the process's root: `setting` is the front end's way, DIR standing for the
// directory ("" : none to name).
std::string missingFileLine(const MissingModuleFile& missing, const FileRoots& roots, const std::string& setting);

// The address of the global symbol `name` a module file defines (.dynsym or .symtab), for the file
// mapped from its first byte at `start`; nullopt when it defines none. Each file's symbols are
// read once per process of the library.
std::optional<uint64_t> symbolInFile(const std::string& file, uint64_t start, const std::string& name);

}  // namespace dscope::inspect
