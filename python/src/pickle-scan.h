/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* What pickle_scan() found in a pickle. */
enum pickle_kind {
        PICKLE_BAD_MEMO = -2,  /* a memo write past the writes before it: refuse it (the decoder would
                                  allocate twice the index) */
        PICKLE_BAD_FRAME = -1, /* frames the two decoders read differently: refuse it */
        PICKLE_OTHER = 0,      /* it may name a callable, or it ends in an error: decode it the slow, checked way */
        PICKLE_FLAT = 1,       /* plain data, at most one container and no memo read: nothing to walk */
        PICKLE_PLAIN = 2,      /* plain data, containers nested or shared: walk it for depth, cycles and size */
};

/* The kind of the pickle p[0..n), read opcode by opcode as the unpickler
 * reads it up to its STOP: PICKLE_FLAT or PICKLE_PLAIN when every opcode
 * builds plain data (None, bool, int, float, str, bytes, bytearray, tuple,
 * list, dict, set, frozenset), so that no decoder calls find_class or
 * persistent_load on it; a negative kind when no decoder should read it;
 * PICKLE_OTHER otherwise. */
enum pickle_kind pickle_scan(const unsigned char *p, size_t n);
