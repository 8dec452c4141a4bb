/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A pickle's opcodes, read without decoding it: does it only build plain
 * data?
 *
 * Theory of operation. A pickle reaches a callable only through find_class
 * (GLOBAL, STACK_GLOBAL, INST, OBJ, the EXT codes) or persistent_load
 * (PERSID, BINPERSID), and runs one through REDUCE, BUILD or NEWOBJ. The
 * caller's safe decoder (leash/_result.py) gives find_class a table; for a
 * pickle with none of those opcodes that table is never consulted, and the
 * plain pickle.loads builds the same value without making a restricted
 * unpickler (the cost of a forked call's result, bench/NOTES.md row 10).
 *
 * The scan walks opcode by opcode, each argument skipped by its exact
 * length, up to STOP, as the unpickler reads it; only the opcodes a
 * protocol 2-5 pickler writes for None, bool, int, float, str, bytes,
 * bytearray, tuple, list, dict, set and frozenset are known. Any other
 * opcode (a callable's, protocol 0's text forms, the out-of-band buffers),
 * a length past the end, no STOP, or frames that the two decoders read
 * differently (a FRAME inside a frame, an opcode over a frame's end):
 * PICKLE_OTHER, and the pickle goes the checked way, which refuses or
 * decodes it as before. Nothing here decides that a pickle is refused; it
 * only picks the faster of two decoders that agree on it.
 */
#include "pickle-scan.h"

#include <stdbool.h>
#include <stdint.h>

/* What follows a known opcode: size bytes, then (len_bytes > 0) a
 * little-endian length of len_bytes bytes and that many bytes. */
struct opcode {
        bool known;
        unsigned char size;
        unsigned char len_bytes;
        bool builds; /* it makes a container */
        bool shares; /* it puts an object already built on the stack again */
};

#define FIXED(n) \
        { true, n, 0, false, false }
#define LENGTH(w) \
        { true, 0, w, false, false }
#define CONTAINER \
        { true, 0, 0, true, false }
#define SHARE(n) \
        { true, n, 0, false, true }

static const struct opcode opcodes[256] = {
        ['('] = FIXED(0),   /* MARK */
        ['.'] = FIXED(0),   /* STOP */
        ['0'] = FIXED(0),   /* POP */
        ['1'] = FIXED(0),   /* POP_MARK */
        ['2'] = SHARE(0),   /* DUP */
        ['N'] = FIXED(0),   /* NONE */
        [0x88] = FIXED(0),  /* NEWTRUE */
        [0x89] = FIXED(0),  /* NEWFALSE */
        ['J'] = FIXED(4),   /* BININT */
        ['K'] = FIXED(1),   /* BININT1 */
        ['M'] = FIXED(2),   /* BININT2 */
        ['G'] = FIXED(8),   /* BINFLOAT */
        [0x8a] = LENGTH(1), /* LONG1 */
        [0x8b] = LENGTH(4), /* LONG4 */
        ['C'] = LENGTH(1),  /* SHORT_BINBYTES */
        ['B'] = LENGTH(4),  /* BINBYTES */
        [0x8e] = LENGTH(8), /* BINBYTES8 */
        [0x96] = LENGTH(8), /* BYTEARRAY8 */
        [0x8c] = LENGTH(1), /* SHORT_BINUNICODE */
        ['X'] = LENGTH(4),  /* BINUNICODE */
        [0x8d] = LENGTH(8), /* BINUNICODE8 */
        [']'] = CONTAINER,  /* EMPTY_LIST */
        ['}'] = CONTAINER,  /* EMPTY_DICT */
        [')'] = CONTAINER,  /* EMPTY_TUPLE */
        [0x8f] = CONTAINER, /* EMPTY_SET */
        ['l'] = CONTAINER,  /* LIST */
        ['d'] = CONTAINER,  /* DICT */
        ['t'] = CONTAINER,  /* TUPLE */
        [0x85] = CONTAINER, /* TUPLE1 */
        [0x86] = CONTAINER, /* TUPLE2 */
        [0x87] = CONTAINER, /* TUPLE3 */
        [0x91] = CONTAINER, /* FROZENSET */
        ['a'] = FIXED(0),   /* APPEND */
        ['e'] = FIXED(0),   /* APPENDS */
        ['s'] = FIXED(0),   /* SETITEM */
        ['u'] = FIXED(0),   /* SETITEMS */
        [0x90] = FIXED(0),  /* ADDITEMS */
        [0x94] = FIXED(0),  /* MEMOIZE */
        ['q'] = FIXED(1),   /* BINPUT */
        ['r'] = FIXED(4),   /* LONG_BINPUT */
        ['h'] = SHARE(1),   /* BINGET */
        ['j'] = SHARE(4),   /* LONG_BINGET */
        [0x80] = FIXED(1),  /* PROTO */
        [0x95] = FIXED(8),  /* FRAME: its bytes are opcodes like the rest */
};

static uint64_t little_endian(const unsigned char *p, unsigned n) {
        uint64_t v = 0;

        for (unsigned i = n; i > 0; i--)
                v = v << 8 | p[i - 1];
        return v;
}

/* the bytes that follow the opcode at p (left: the bytes after it), or
 * UINT64_MAX when its argument does not fit; a length the unpickler reads
 * as negative (LONG4, BINUNICODE, BINBYTES) is past the end either way */
static uint64_t arg_size(const struct opcode *o, const unsigned char *p, size_t left) {
        uint64_t head = (uint64_t) o->size + o->len_bytes, n;

        if (head > left)
                return UINT64_MAX;
        n = little_endian(p + o->size, o->len_bytes);
        return n > left - head ? UINT64_MAX : head + n;
}

enum pickle_kind pickle_scan(const unsigned char *p, size_t n) {
        unsigned containers = 0;
        bool shared = false;
        size_t i = 0, frame_end = 0;

        while (i < n) {
                const struct opcode *o = &opcodes[p[i]];
                uint64_t skip;

                if (!o->known)
                        return PICKLE_OTHER;
                if (p[i] == '.')
                        return containers <= 1 && !shared ? PICKLE_FLAT : PICKLE_PLAIN;
                /* a frame inside a frame: one decoder refuses it, the other does not */
                if (p[i] == 0x95 && i < frame_end)
                        return PICKLE_OTHER;
                skip = arg_size(o, p + i + 1, n - i - 1);
                if (skip == UINT64_MAX)
                        return PICKLE_OTHER;
                /* an opcode that runs over the end of its frame: the same */
                if (i < frame_end && i + 1 + skip > frame_end)
                        return PICKLE_OTHER;
                if (p[i] == 0x95) {
                        uint64_t len = little_endian(p + i + 1, 8);
                        if (len > n - i - 9)
                                return PICKLE_OTHER;
                        frame_end = i + 9 + (size_t) len;
                }
                containers += o->builds && containers < 2;
                shared |= o->shares;
                i += 1 + (size_t) skip;
        }
        return PICKLE_OTHER; /* no STOP */
}
