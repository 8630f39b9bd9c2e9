// Our runtime's layout profile: the text its descriptor carries (profile_text, written at build
// time by runtime/tools/write_profile.cpp in the schema of PyTorch's profile files), read by the
// one profile parser and resolved once into the typed layout RuntimeView reads with. Offsets come
// from the runtime read, never from this library's headers: a reader of one build reads a runtime
// of another build.
#pragma once

#include <memory>
#include <string>

#include "dscope/DebugInterface.h"
#include "model/Profile.h"

namespace dscope::inspect {

struct DscopeProfile {
  Profile profile;
  dscope_layout_profile layout{};  // every name of debug/LayoutProfile.h's list, resolved
  uint64_t table_slots = 0;        // count_table_slots: an operator's dispatch-table length
};

// The profile a runtime's text states, parsed and resolved (shared while the same text is read
// again); InspectError "ORIGIN is unusable: ... REMEDY" when it is not a complete dscope profile.
std::shared_ptr<const DscopeProfile> dscopeProfile(const std::string& text, const std::string& origin,
                                                   const std::string& remedy);

// The profile of the runtime built with this library (its generated ProfileText.h), its digest,
// and its key table: our keys where no runtime is read yet (a raw key set, a pending break, key
// completion). A runtime whose layout hash is this digest has this profile: a reader of the same
// build reads no text (a truncated core may have lost it; the library file has it).
std::shared_ptr<const DscopeProfile> ownProfile();
uint64_t ownProfileDigest();
const KeyTable& dscopeKeyTable();

}  // namespace dscope::inspect
