// What the rest of the library reads of the front ends' tables (FrontEnds.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace dscope::inspect {

// The DSCOPE_COMMAND_* flags of the user command `name` (the same in every front end's table); 0
// for a word that is no user command.
uint32_t commandFlags(const std::string& name);

}  // namespace dscope::inspect
