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
 * PICKLE_OTHER, and the pickle goes the checked way, which refuses or decodes it as before. Nothing here decides
 * that a pickle is refused; it only picks the faster of two decoders that
 * agree on it.
 */
#include "pickle-scan.h"

#include <stdbool.h>
#include <stdint.h>

/* how an opcode is followed: a fixed number of bytes, or a length of 1, 4
 * or 8 bytes and that many bytes */
enum arg { ARG_UNKNOWN, ARG_FIXED, ARG_LEN1, ARG_LEN4, ARG_LEN8 };

struct opcode {
        enum arg arg;
        unsigned char size;   /* ARG_FIXED: the bytes after the opcode */
        unsigned char builds; /* 1: it makes a container */
        unsigned char shares; /* 1: it puts an object already built on the stack again */
};

#define FIXED(n) \
        { ARG_FIXED, n, 0, 0 }
#define CONTAINER \
        { ARG_FIXED, 0, 1, 0 }
#define SHARE(n) \
        { ARG_FIXED, n, 0, 1 }

static const struct opcode opcodes[256] = {
        ['('] = FIXED(0),    /* MARK */
        ['.'] = FIXED(0),    /* STOP */
        ['0'] = FIXED(0),    /* POP */
        ['1'] = FIXED(0),    /* POP_MARK */
        ['2'] = SHARE(0),    /* DUP */
        ['N'] = FIXED(0),    /* NONE */
        [0x88] = FIXED(0),   /* NEWTRUE */
        [0x89] = FIXED(0),   /* NEWFALSE */
        ['J'] = FIXED(4),    /* BININT */
        ['K'] = FIXED(1),    /* BININT1 */
        ['M'] = FIXED(2),    /* BININT2 */
        ['G'] = FIXED(8),    /* BINFLOAT */
        [0x8a] = {ARG_LEN1}, /* LONG1 */
        [0x8b] = {ARG_LEN4}, /* LONG4 */
        ['C'] = {ARG_LEN1},  /* SHORT_BINBYTES */
        ['B'] = {ARG_LEN4},  /* BINBYTES */
        [0x8e] = {ARG_LEN8}, /* BINBYTES8 */
        [0x96] = {ARG_LEN8}, /* BYTEARRAY8 */
        [0x8c] = {ARG_LEN1}, /* SHORT_BINUNICODE */
        ['X'] = {ARG_LEN4},  /* BINUNICODE */
        [0x8d] = {ARG_LEN8}, /* BINUNICODE8 */
        [']'] = CONTAINER,   /* EMPTY_LIST */
        ['}'] = CONTAINER,   /* EMPTY_DICT */
        [')'] = CONTAINER,   /* EMPTY_TUPLE */
        [0x8f] = CONTAINER,  /* EMPTY_SET */
        ['l'] = CONTAINER,   /* LIST */
        ['d'] = CONTAINER,   /* DICT */
        ['t'] = CONTAINER,   /* TUPLE */
        [0x85] = CONTAINER,  /* TUPLE1 */
        [0x86] = CONTAINER,  /* TUPLE2 */
        [0x87] = CONTAINER,  /* TUPLE3 */
        [0x91] = CONTAINER,  /* FROZENSET */
        ['a'] = FIXED(0),    /* APPEND */
        ['e'] = FIXED(0),    /* APPENDS */
        ['s'] = FIXED(0),    /* SETITEM */
        ['u'] = FIXED(0),    /* SETITEMS */
        [0x90] = FIXED(0),   /* ADDITEMS */
        [0x94] = FIXED(0),   /* MEMOIZE */
        ['q'] = FIXED(1),    /* BINPUT */
        ['r'] = FIXED(4),    /* LONG_BINPUT */
        ['h'] = SHARE(1),    /* BINGET */
        ['j'] = SHARE(4),    /* LONG_BINGET */
        [0x80] = FIXED(1),   /* PROTO */
        [0x95] = FIXED(8),   /* FRAME: its bytes are opcodes like the rest */
};

static uint64_t little_endian(const unsigned char *p, unsigned n) {
        uint64_t v = 0;

        for (unsigned i = n; i > 0; i--)
                v = v << 8 | p[i - 1];
        return v;
}

/* the bytes that follow the opcode at p (left: the bytes after it), or
 * UINT64_MAX when its argument does not fit */
static uint64_t arg_size(const struct opcode *o, const unsigned char *p, size_t left) {
        unsigned len = o->arg == ARG_LEN1 ? 1 : o->arg == ARG_LEN4 ? 4 : o->arg == ARG_LEN8 ? 8 : 0;
        uint64_t n;

        if (o->arg == ARG_FIXED)
                return o->size <= left ? o->size : UINT64_MAX;
        if (len > left)
                return UINT64_MAX;
        n = little_endian(p, len);
        /* LONG4 and BINUNICODE/BINBYTES' 4 bytes: the unpickler refuses a
         * length it reads as negative; past the end either way */
        if (n > left - len)
                return UINT64_MAX;
        return len + n;
}

enum pickle_kind pickle_scan(const unsigned char *p, size_t n) {
        unsigned containers = 0;
        bool shared = false;
        size_t i = 0, frame_end = 0;

        while (i < n) {
                const struct opcode *o = &opcodes[p[i]];
                uint64_t skip;

                if (o->arg == ARG_UNKNOWN)
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
