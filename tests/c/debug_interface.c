/* The debug interface is C: a reader written in C includes DebugInterface.h (and the layout
 * profile's header with it) as is. Compiled by ctest (descriptor_header_is_c) as C99. */
#include <stddef.h>

#include "dscope/DebugInterface.h"

/* The profile is the descriptor's last field (a longer list moves no other field). */
typedef char profile_is_last[offsetof(struct dscope_debug_descriptor_t, profile) + sizeof(struct dscope_layout_profile) ==
                                     sizeof(struct dscope_debug_descriptor_t)
                                 ? 1
                                 : -1];

uint64_t dscope_c_reader_bloom_bit(uint64_t name_hash) { return dscope_break_bloom_bit(name_hash); }
