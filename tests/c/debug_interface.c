/* The debug interface is C: a reader written in C includes DebugInterface.h (and the layout
 * profile's header with it) as is. Compiled by ctest (descriptor_header_is_c) as C99. */
#include <stddef.h>

#include "dscope/DebugInterface.h"

/* The profile text's place and size end the descriptor; a reader's typed layout is one uint64_t
 * per name of the list. */
typedef char profile_is_last[offsetof(struct dscope_debug_descriptor_t, profile_size) + sizeof(uint64_t) ==
                                     sizeof(struct dscope_debug_descriptor_t)
                                 ? 1
                                 : -1];
typedef char layout_is_words[sizeof(struct dscope_layout_profile) % sizeof(uint64_t) == 0 ? 1 : -1];

uint64_t dscope_c_reader_bloom_bit(uint64_t name_hash) { return dscope_break_bloom_bit(name_hash); }
