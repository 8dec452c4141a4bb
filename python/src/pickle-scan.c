/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A pickle's opcodes, read without decoding it: does it only build plain
 * data, and is it safe to hand to a decoder at all?
 *
 * Theory of operation. The bytes come from the function's process, which
 * may be hostile, and the caller decodes them (leash/_result.py). Two
 * questions are answered here, in one walk.
 *
 * Is it plain data? A pickle reaches a callable only through find_class
 * (GLOBAL, STACK_GLOBAL, INST, OBJ, the EXT codes) or persistent_load
 * (PERSID, BINPERSID), and runs one through REDUCE, BUILD or NEWOBJ. The
 * safe decoder gives find_class a table; for a pickle made only of the
 * opcodes a protocol 2-5 pickler writes for None, bool, int, float, str,
 * bytes, bytearray, tuple, list, dict, set and frozenset that table is
 * never consulted, and the plain pickle.loads builds the same value without
 * making a restricted unpickler (the cost of a forked call's result,
 * bench/NOTES.md row 10).
 *
 * Does it make the decoder allocate for nothing? CPython's unpickler keeps
 * its memo in an array indexed by the PUT's argument, grown to twice the
 * index and zeroed: "N r\0\0\0\x40 ." (seven bytes: None, LONG_BINPUT
 * 0x40000000) makes the caller touch 16 GiB, whichever decoder reads it.
 * Every pickler writes the memo in order (the k-th PUT names index k-1, or
 * is a MEMOIZE), so a PUT, BINPUT or LONG_BINPUT whose index is past the
 * PUTs before it, or a PUT whose line is not plain digits, is refused
 * (PICKLE_BAD_MEMO): the memo then grows with the pickle's length, as the
 * stack does. To vouch for every PUT the walk must read the opcodes the
 * decoder reads, so it knows all of protocols 0-5, each argument skipped
 * by its exact length (a text line up to its newline).
 *
 * Where the two decoders read the same bytes differently the walk cannot
 * vouch for either. pickle.loads reads a frame as part of the bytes; the
 * checked decoder reads an io.BytesIO (no peek) and holds one frame at a
 * time: an opcode, argument or line that runs over its frame's end is read
 * from after the frame (the rest of the frame dropped), and a frame inside
 * a frame is read at once. No pickler writes either: PICKLE_BAD_FRAME,
 * refused.
 *
 * An opcode no protocol has, a length or a line past the end (outside a
 * frame), no STOP: both decoders stop there with an error, having run only
 * the opcodes already read; PICKLE_OTHER, and the checked decoder reports
 * it as before. Bytes after STOP are read by neither.
 */
#include "pickle-scan.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum memo_write {
        MEMO_NONE,
        MEMO_BIN,  /* BINPUT, LONG_BINPUT: the index in its size bytes */
        MEMO_TEXT, /* PUT: the index as a decimal line */
        MEMO_NEXT, /* MEMOIZE: the next index */
};

/* What follows an opcode: size bytes, then (len_bytes > 0) a
 * little-endian length of len_bytes bytes and that many bytes, then lines
 * text lines, each up to and with its newline. */
struct opcode {
        bool known; /* an opcode of protocols 0-5 */
        bool plain; /* one a pickler writes for plain data */
        unsigned char size;
        unsigned char len_bytes;
        unsigned char lines;
        bool builds; /* it makes a container */
        bool shares; /* it puts an object already built on the stack again */
        unsigned char memo;
};

#define OP(plain_, size_, len_, lines_, builds_, shares_, memo_) \
        { true, plain_, size_, len_, lines_, builds_, shares_, memo_ }
#define FIXED(n) OP(true, n, 0, 0, false, false, MEMO_NONE)
#define LENGTH(w) OP(true, 0, w, 0, false, false, MEMO_NONE)
#define CONTAINER OP(true, 0, 0, 0, true, false, MEMO_NONE)
#define SHARE(n) OP(true, n, 0, 0, false, true, MEMO_NONE)
#define PUT(n, how) OP(true, n, 0, 0, false, false, how)
/* known, not plain: the checked decoder's */
#define OTHER(n) OP(false, n, 0, 0, false, false, MEMO_NONE)
#define OTHER_LENGTH(w) OP(false, 0, w, 0, false, false, MEMO_NONE)
#define TEXT(lines_) OP(false, 0, 0, lines_, false, false, MEMO_NONE)

static const struct opcode opcodes[256] = {
        ['('] = FIXED(0),           /* MARK */
        ['.'] = FIXED(0),           /* STOP */
        ['0'] = FIXED(0),           /* POP */
        ['1'] = FIXED(0),           /* POP_MARK */
        ['2'] = SHARE(0),           /* DUP */
        ['N'] = FIXED(0),           /* NONE */
        [0x88] = FIXED(0),          /* NEWTRUE */
        [0x89] = FIXED(0),          /* NEWFALSE */
        ['J'] = FIXED(4),           /* BININT */
        ['K'] = FIXED(1),           /* BININT1 */
        ['M'] = FIXED(2),           /* BININT2 */
        ['G'] = FIXED(8),           /* BINFLOAT */
        [0x8a] = LENGTH(1),         /* LONG1 */
        [0x8b] = LENGTH(4),         /* LONG4 */
        ['C'] = LENGTH(1),          /* SHORT_BINBYTES */
        ['B'] = LENGTH(4),          /* BINBYTES */
        [0x8e] = LENGTH(8),         /* BINBYTES8 */
        [0x96] = LENGTH(8),         /* BYTEARRAY8 */
        [0x8c] = LENGTH(1),         /* SHORT_BINUNICODE */
        ['X'] = LENGTH(4),          /* BINUNICODE */
        [0x8d] = LENGTH(8),         /* BINUNICODE8 */
        [']'] = CONTAINER,          /* EMPTY_LIST */
        ['}'] = CONTAINER,          /* EMPTY_DICT */
        [')'] = CONTAINER,          /* EMPTY_TUPLE */
        [0x8f] = CONTAINER,         /* EMPTY_SET */
        ['l'] = CONTAINER,          /* LIST */
        ['d'] = CONTAINER,          /* DICT */
        ['t'] = CONTAINER,          /* TUPLE */
        [0x85] = CONTAINER,         /* TUPLE1 */
        [0x86] = CONTAINER,         /* TUPLE2 */
        [0x87] = CONTAINER,         /* TUPLE3 */
        [0x91] = CONTAINER,         /* FROZENSET */
        ['a'] = FIXED(0),           /* APPEND */
        ['e'] = FIXED(0),           /* APPENDS */
        ['s'] = FIXED(0),           /* SETITEM */
        ['u'] = FIXED(0),           /* SETITEMS */
        [0x90] = FIXED(0),          /* ADDITEMS */
        [0x94] = PUT(0, MEMO_NEXT), /* MEMOIZE */
        ['q'] = PUT(1, MEMO_BIN),   /* BINPUT */
        ['r'] = PUT(4, MEMO_BIN),   /* LONG_BINPUT */
        ['h'] = SHARE(1),           /* BINGET */
        ['j'] = SHARE(4),           /* LONG_BINGET */
        [0x80] = FIXED(1),          /* PROTO */
        [0x95] = FIXED(8),          /* FRAME: its bytes are opcodes like the rest */
        /* the rest of protocols 0-5: a callable's, the text forms, the buffers */
        ['I'] = TEXT(1),                                     /* INT */
        ['L'] = TEXT(1),                                     /* LONG */
        ['F'] = TEXT(1),                                     /* FLOAT */
        ['S'] = TEXT(1),                                     /* STRING */
        ['V'] = TEXT(1),                                     /* UNICODE */
        ['P'] = TEXT(1),                                     /* PERSID */
        ['g'] = TEXT(1),                                     /* GET */
        ['c'] = TEXT(2),                                     /* GLOBAL */
        ['i'] = TEXT(2),                                     /* INST */
        ['p'] = OP(false, 0, 0, 1, false, false, MEMO_TEXT), /* PUT */
        ['T'] = OTHER_LENGTH(4),                             /* BINSTRING */
        ['U'] = OTHER_LENGTH(1),                             /* SHORT_BINSTRING */
        ['Q'] = OTHER(0),                                    /* BINPERSID */
        ['R'] = OTHER(0),                                    /* REDUCE */
        ['b'] = OTHER(0),                                    /* BUILD */
        ['o'] = OTHER(0),                                    /* OBJ */
        [0x81] = OTHER(0),                                   /* NEWOBJ */
        [0x82] = OTHER(1),                                   /* EXT1 */
        [0x83] = OTHER(2),                                   /* EXT2 */
        [0x84] = OTHER(4),                                   /* EXT4 */
        [0x92] = OTHER(0),                                   /* NEWOBJ_EX */
        [0x93] = OTHER(0),                                   /* STACK_GLOBAL */
        [0x97] = OTHER(0),                                   /* NEXT_BUFFER */
        [0x98] = OTHER(0),                                   /* READONLY_BUFFER */
};

#define FRAME 0x95
#define STOP '.'
#define NO_FIT UINT64_MAX

static uint64_t little_endian(const unsigned char *p, unsigned n) {
        uint64_t v = 0;

        for (unsigned i = n; i > 0; i--)
                v = v << 8 | p[i - 1];
        return v;
}

/* the bytes of the argument at p (left: the bytes it may take), or NO_FIT
 * when it does not fit; a length the unpickler reads as negative (LONG4,
 * BINUNICODE, BINBYTES) does not fit either */
static uint64_t arg_size(const struct opcode *o, const unsigned char *p, size_t left) {
        uint64_t head = (uint64_t) o->size + o->len_bytes, n;

        if (head > left)
                return NO_FIT;
        n = little_endian(p + o->size, o->len_bytes);
        if (n > left - head)
                return NO_FIT;
        n += head;
        for (unsigned l = 0; l < o->lines; l++) {
                const unsigned char *nl = memchr(p + n, '\n', left - n);
                if (!nl)
                        return NO_FIT;
                n = (uint64_t) (nl - p) + 1;
        }
        return n;
}

/* the index a PUT's line (its digits and newline) names, or NO_FIT when it
 * is anything but plain digits: int() would read signs, spaces and
 * underscores too, which no pickler writes */
static uint64_t text_index(const unsigned char *p, uint64_t len) {
        uint64_t v = 0;

        if (len < 2 || len > 20)
                return NO_FIT;
        for (uint64_t i = 0; i + 1 < len; i++) {
                if (p[i] < '0' || p[i] > '9')
                        return NO_FIT;
                v = v * 10 + (uint64_t) (p[i] - '0');
        }
        return v;
}

struct walk {
        uint64_t puts; /* memo writes so far */
        size_t frame_end;
        unsigned containers; /* up to 2 */
        bool plain, shared;
        enum pickle_kind end; /* what a step that stops the walk found */
};

/* does the memo write of the opcode at p (its argument arg bytes) stay
 * within the PUTs before it? */
static bool memo_in_order(struct walk *w, const struct opcode *o, const unsigned char *p, uint64_t arg) {
        uint64_t idx;

        switch (o->memo) {
        case MEMO_BIN:
                idx = little_endian(p + 1, o->size);
                break;
        case MEMO_TEXT:
                idx = text_index(p + 1, arg);
                break;
        case MEMO_NEXT:
                idx = w->puts;
                break;
        default:
                return true;
        }
        if (idx > w->puts)
                return false;
        w->puts++;
        return true;
}

static uint64_t end_walk(struct walk *w, enum pickle_kind kind) {
        w->end = kind;
        return 0;
}

/* one opcode at p[i] (not STOP): the bytes it takes with its argument,
 * or 0 with w->end set to the kind the walk ends with */
static uint64_t step(struct walk *w, const unsigned char *p, size_t i, size_t n) {
        const struct opcode *o = &opcodes[p[i]];
        bool in_frame = i < w->frame_end;
        uint64_t arg;

        if (!o->known)
                return end_walk(w, PICKLE_OTHER);
        if (p[i] == FRAME && in_frame)
                return end_walk(w, PICKLE_BAD_FRAME);
        arg = arg_size(o, p + i + 1, (in_frame ? w->frame_end : n) - i - 1);
        if (arg == NO_FIT) /* past the end: both decoders stop here; past a frame's: they part */
                return end_walk(w, in_frame ? PICKLE_BAD_FRAME : PICKLE_OTHER);
        if (!memo_in_order(w, o, p + i, arg))
                return end_walk(w, PICKLE_BAD_MEMO);
        if (p[i] == FRAME) {
                uint64_t len = little_endian(p + i + 1, 8);
                if (len > n - i - 9)
                        return end_walk(w, PICKLE_OTHER);
                w->frame_end = i + 9 + (size_t) len;
        }
        w->plain &= o->plain;
        w->containers += o->builds && w->containers < 2;
        w->shared |= o->shares;
        return 1 + arg;
}

enum pickle_kind pickle_scan(const unsigned char *p, size_t n) {
        struct walk w = {.plain = true, .end = PICKLE_OTHER};
        size_t i = 0;

        while (i < n) {
                uint64_t taken;

                if (p[i] == STOP) {
                        if (!w.plain)
                                return PICKLE_OTHER;
                        return w.containers <= 1 && !w.shared ? PICKLE_FLAT : PICKLE_PLAIN;
                }
                taken = step(&w, p, i, n);
                if (!taken)
                        return w.end;
                i += (size_t) taken;
        }
        return PICKLE_OTHER; /* no STOP */
}
