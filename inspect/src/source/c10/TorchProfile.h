// The layout profiles of real c10 builds (docs/DEBUG-INTERFACE.md §9, "c10 profiles"): files
// profiles/probe/dscope-profile writes from a probe compiled against that build's own headers,
// found by the build-id of its libtorch_cpu, read by the one profile parser (model/Profile) with
// what the torch readers need. A build's key table answers every key-set question in that build's
// own terms (a 1.13 key set prints as PyTorch 1.13 prints it).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "source/c10/C10Layout.h"

namespace dscope::inspect {

// Reads and checks a profile file before anything uses it; InspectError naming the file and what
// is wrong with it. Only a regular file of bounded size is read (never a FIFO or a device); it
// must be a well-formed c10 profile (parseProfile) holding every value, symbol and name the
// readers look up, with offsets inside the structs they index (TorchProfile.cpp, checkLayout), and
// resolves its typed layout.
C10Profile readTorchProfile(const std::string& path);
// The directories searched for "<build-id>.profile", in order: the installed profiles, the
// source tree's (a build used in place), the per-user cache ($XDG_CACHE_HOME/dscope/profiles,
// where dscope-profile writes); or only those of $DSCOPE_PROFILE_PATH (colon-separated) when set.
std::vector<std::string> profileDirectories();
// A profile file's contents (readTorchProfile's checks on what is read: a regular file of bounded
// size, never a FIFO or a device); InspectError naming the file.
std::string readProfileText(const std::string& path);
// The file "<build-id>.profile" of the first profile directory that has one, with its version
// (modification time in ns, size): a parsed profile is kept while its file's version stays.
using ProfileFileVersion = std::pair<int64_t, int64_t>;
struct ProfileFile {
  std::string path;
  ProfileFileVersion version;
};
std::optional<ProfileFile> findProfileFile(const std::string& build_id);
// The profile of a libtorch_cpu build-id, or null when no directory has one. Read once per file
// version and shared: every command looks its profile up again.
std::shared_ptr<const C10Profile> findTorchProfile(const std::string& build_id);

}  // namespace dscope::inspect
