/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash's own decoder of a function's result: a pickle read opcode by
 * opcode, each object built here, every bound checked before the object
 * that would pass it is made.
 *
 * Theory of operation. The bytes come from the function's process, which
 * may be hostile (issue 38). pickle.loads builds whatever plain opcodes ask
 * for: a set of 40,000 ints k*(2**61-1) (they all hash 0) costs it seconds,
 * quadratic; a tuple nested 150,000 deep inside a set is hashed by a
 * recursion without a guard (SIGSEGV); one EMPTY_SET byte is a 216-byte
 * set. So the decoder keeps, for every container it builds, a record shared
 * by the container's stack and memo entries: its height (nesting), its
 * weight (items, a shared container counted each time it appears) and
 * whether it is sealed (placed inside another container: no honest pickler
 * adds to a container after that, except to make a cycle, refused anyway).
 * Depth and weight are checked as each item is placed, so a tuple that
 * would be hashed is refused like one in a list.
 *
 * Memory: every object made is charged an estimate of its bytes (an empty
 * set 240 (216 and its allocator's rounding), a set's item 128, a dict's item 160, a list's 16...), and so
 * are the decoder's own stack, memo and tables; past PICKLE_MEM_PER_BYTE
 * per byte of pickle plus PICKLE_MEM_BASE the pickle is refused.
 *
 * Hash tables: before a key goes into a set, frozenset or dict its hash is
 * computed and the keys with that same full hash already in that container
 * are counted, in a table of the decoder's own keyed by SipHash with a
 * random key per decode (so that it cannot be collided itself). Past
 * PICKLE_MAX_EQUAL_HASHES such keys the pickle is refused (honest data has
 * equal full hashes only by accident: -1 and -2); and the work of hashing
 * and comparing, a key's weight times one plus the equal-hash keys before
 * it, is charged with the opcodes against PICKLE_WORK_PER_BYTE per byte of
 * pickle plus PICKLE_WORK_BASE: a shared tuple used as a key in many sets
 * is charged each time.
 *
 * What a pickler of protocols 2-5 writes for plain data is built directly;
 * GLOBAL and STACK_GLOBAL are looked up in the caller's table (nothing
 * else reaches a callable), and REDUCE, NEWOBJ, NEWOBJ_EX and BUILD run as
 * pickle's unpickler runs them, on the table's objects only. The text
 * opcodes of protocols 0 and 1, persistent ids, the copyreg extension
 * codes (they read copyreg's cache without any table) and out-of-band
 * buffers are refused. So are a memo written out of order (an index past
 * the PUTs before it), a frame inside a frame and an opcode across a
 * frame's end. Signals are checked every few thousand opcodes.
 */
#include "pickle-decode.h"

#include <stdbool.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

enum item_kind {
        ITEM_SCALAR,    /* None, bool, int, float, str, bytes, bytearray */
        ITEM_CONTAINER, /* list, tuple, dict, set, frozenset: a record */
        ITEM_GLOBAL,    /* from the table */
        ITEM_MADE,      /* made by REDUCE, NEWOBJ or NEWOBJ_EX: a record */
};

struct item {
        PyObject *o; /* a reference held */
        uint32_t rec;
        uint8_t kind;
};

struct rec {
        uint64_t weight;
        uint32_t height;
        bool sealed;
};

struct hslot {
        uint64_t hash;
        uint32_t rec;
        uint32_t count; /* 0: empty */
};

struct dec {
        const unsigned char *p;
        size_t n, pos, frame_end;
        struct item *stack, *memo;
        size_t sp, scap, nmemo, mcap;
        size_t *marks;
        size_t nmarks, kcap;
        struct rec *recs;
        size_t nrecs, rcap;
        struct hslot *ht;
        size_t hcap, hused;
        uint64_t key[2];
        int proto;
        PyObject *table, *refused;
        struct pickle_stats st;
};

/* ---- errors ---------------------------------------------------------------- */

static int refuse(struct dec *d, const char *what, const char *fmt, ...) {
        PyObject *msg, *exc;
        va_list ap;

        va_start(ap, fmt);
        msg = PyUnicode_FromFormatV(fmt, ap);
        va_end(ap);
        if (!msg)
                return -1;
        exc = PyObject_CallFunction(d->refused, "Os", msg, what);
        Py_DECREF(msg);
        if (exc) {
                PyErr_SetObject((PyObject *) Py_TYPE(exc), exc);
                Py_DECREF(exc);
        }
        return -1;
}

static int malformed(const char *why) {
        PyObject *pickle = PyImport_ImportModule("pickle"), *type;

        if (!pickle)
                return -1;
        type = PyObject_GetAttrString(pickle, "UnpicklingError");
        Py_DECREF(pickle);
        if (!type)
                return -1;
        PyErr_SetString(type, why);
        Py_DECREF(type);
        return -1;
}

/* ---- the bounds ---------------------------------------------------------------- */

static int charge(struct dec *d, uint64_t bytes) {
        d->st.memory += bytes;
        if (d->st.memory <= d->st.memory_bound)
                return 0;
        return refuse(d, "memory",
                      "leash: the function's result would take more than %llu bytes of the caller's memory (%llu per "
                      "byte of its %zu-byte pickle, plus %llu)",
                      (unsigned long long) d->st.memory_bound, PICKLE_MEM_PER_BYTE, d->n, PICKLE_MEM_BASE);
}

static int work(struct dec *d, uint64_t units) {
        d->st.work += units;
        if (d->st.work <= d->st.work_bound)
                return 0;
        return refuse(d, "work",
                      "leash: the function's result asks for more than %llu steps of decoding, hashing and comparing "
                      "(%llu per byte of its %zu-byte pickle, plus %llu)",
                      (unsigned long long) d->st.work_bound, PICKLE_WORK_PER_BYTE, d->n, PICKLE_WORK_BASE);
}

/* grows *arr (of *cap elements of size each) to hold need, charging the growth */
static int grow(struct dec *d, void **arr, size_t *cap, size_t need, size_t size) {
        size_t c = *cap ? *cap : 16;
        void *a;

        if (need <= *cap)
                return 0;
        while (c < need)
                c *= 2;
        if (charge(d, (uint64_t) (c - *cap) * size) < 0)
                return -1;
        a = PyMem_Realloc(*arr, c * size);
        if (!a) {
                PyErr_NoMemory();
                return -1;
        }
        *arr = a;
        *cap = c;
        return 0;
}

static uint32_t new_rec(struct dec *d, uint64_t weight, uint32_t height) {
        if (d->nrecs >= UINT32_MAX || grow(d, (void **) &d->recs, &d->rcap, d->nrecs + 1, sizeof *d->recs) < 0)
                return 0;
        d->recs[d->nrecs] = (struct rec){.weight = weight, .height = height};
        return (uint32_t) d->nrecs++;
}

static uint64_t weight_of(const struct dec *d, const struct item *it) {
        return it->rec ? d->recs[it->rec].weight : 1;
}

static uint32_t height_of(const struct dec *d, const struct item *it) {
        return it->rec ? d->recs[it->rec].height : 0;
}

static int too_deep(struct dec *d) {
        return refuse(d, "depth", "leash: the function's result nests containers deeper than %d", PICKLE_MAX_DEPTH);
}

static int too_many(struct dec *d) {
        return refuse(d, "size",
                      "leash: the function's result holds more than %llu items when its shared containers are counted "
                      "each time they appear (a repr() or comparison of it would not end)",
                      (unsigned long long) PICKLE_MAX_ITEMS);
}

/* child goes into the container of record r (the object parent): not into
 * itself, not into a sealed one; child is sealed; r's height and weight
 * grow, checked */
static int place(struct dec *d, uint32_t r, PyObject *parent, const struct item *child) {
        struct rec *p = &d->recs[r];
        uint32_t h = height_of(d, child) + 1;

        if (child->o == parent)
                return refuse(d, "cycle", "leash: the function's result holds itself (a cycle)");
        if (p->sealed)
                return refuse(d, "sealed",
                              "leash: the function's result adds to a container after placing it inside another (no "
                              "pickler writes that but for a cycle)");
        if (child->rec)
                d->recs[child->rec].sealed = true;
        if (h > p->height)
                p->height = h;
        p->weight += weight_of(d, child);
        if (p->height > PICKLE_MAX_DEPTH)
                return too_deep(d);
        if (p->weight > PICKLE_MAX_ITEMS)
                return too_many(d);
        return 0;
}

/* ---- keys with equal hashes: SipHash-1-3 over (record, hash) ----------------- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND(v0, v1, v2, v3)   \
        do {                       \
                v0 += v1;          \
                v1 = ROTL(v1, 13); \
                v1 ^= v0;          \
                v0 = ROTL(v0, 32); \
                v2 += v3;          \
                v3 = ROTL(v3, 16); \
                v3 ^= v2;          \
                v0 += v3;          \
                v3 = ROTL(v3, 21); \
                v3 ^= v0;          \
                v2 += v1;          \
                v1 = ROTL(v1, 17); \
                v1 ^= v2;          \
                v2 = ROTL(v2, 32); \
        } while (0)

static uint64_t siphash13(const uint64_t key[2], uint64_t m0, uint64_t m1) {
        uint64_t v0 = key[0] ^ 0x736f6d6570736575ULL, v1 = key[1] ^ 0x646f72616e646f6dULL;
        uint64_t v2 = key[0] ^ 0x6c7967656e657261ULL, v3 = key[1] ^ 0x7465646279746573ULL;
        const uint64_t m[3] = {m0, m1, (uint64_t) 16 << 56};

        for (int i = 0; i < 3; i++) {
                v3 ^= m[i];
                SIPROUND(v0, v1, v2, v3);
                v0 ^= m[i];
        }
        v2 ^= 0xff;
        for (int i = 0; i < 3; i++)
                SIPROUND(v0, v1, v2, v3);
        return v0 ^ v1 ^ v2 ^ v3;
}

/* the slot of (rec, hash), found or empty */
static struct hslot *hslot_of(struct dec *d, uint32_t rec, uint64_t hash) {
        size_t i = (size_t) siphash13(d->key, hash, rec) & (d->hcap - 1);

        while (d->ht[i].count && (d->ht[i].hash != hash || d->ht[i].rec != rec))
                i = (i + 1) & (d->hcap - 1);
        return &d->ht[i];
}

/* the table's key, random per decode, made when the first key comes (a
 * result without a set or dict makes no system call for it) */
static void ht_key(struct dec *d) {
        if (getrandom(d->key, sizeof d->key, GRND_NONBLOCK) != (ssize_t) sizeof d->key) {
                /* no entropy yet: the table is still keyed, by addresses and time */
                struct timespec ts = {0};
                (void) clock_gettime(CLOCK_MONOTONIC, &ts);
                d->key[0] = (uint64_t) (uintptr_t) d ^ (uint64_t) (uintptr_t) d->p;
                d->key[1] = (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
        }
}

static int ht_grow(struct dec *d) {
        struct hslot *old = d->ht;
        size_t ocap = d->hcap, cap = ocap ? ocap * 2 : 64;

        if (!ocap)
                ht_key(d);

        if (charge(d, (uint64_t) cap * sizeof *old) < 0)
                return -1;
        d->ht = PyMem_Calloc(cap, sizeof *old);
        if (!d->ht) {
                d->ht = old;
                PyErr_NoMemory();
                return -1;
        }
        d->hcap = cap;
        for (size_t i = 0; i < ocap; i++)
                if (old[i].count)
                        *hslot_of(d, old[i].rec, old[i].hash) = old[i];
        PyMem_Free(old);
        return 0;
}

/* key (the item it) is about to go into the set, frozenset or dict of
 * record r: its hash counted there, its hashing and comparing charged */
static int account_key(struct dec *d, uint32_t r, const struct item *it) {
        uint64_t w = weight_of(d, it);
        struct hslot *s;
        Py_hash_t h;

        if (work(d, w) < 0)
                return -1;
        h = PyObject_Hash(it->o);
        if (h == -1 && PyErr_Occurred())
                return -1;
        if (2 * (d->hused + 1) > d->hcap && ht_grow(d) < 0)
                return -1;
        s = hslot_of(d, r, (uint64_t) h);
        if (!s->count) {
                *s = (struct hslot){.hash = (uint64_t) h, .rec = r};
                d->hused++;
        }
        if (s->count >= PICKLE_MAX_EQUAL_HASHES)
                return refuse(d, "hash",
                              "leash: the function's result puts more than %d keys with one hash into one set or dict "
                              "(a hash collision attack: their insertion is quadratic)",
                              PICKLE_MAX_EQUAL_HASHES);
        return work(d, w * (1 + s->count++));
}

/* ---- the stack, the marks, the memo ------------------------------------------ */

static int push(struct dec *d, PyObject *o, uint8_t kind, uint32_t rec) {
        if (!o)
                return -1;
        if (grow(d, (void **) &d->stack, &d->scap, d->sp + 1, sizeof *d->stack) < 0) {
                Py_DECREF(o);
                return -1;
        }
        d->stack[d->sp++] = (struct item){.o = o, .rec = rec, .kind = kind};
        return 0;
}

/* a scalar pushed, bytes (its size) charged */
static int push_scalar(struct dec *d, PyObject *o, uint64_t bytes) {
        if (!o)
                return -1;
        if (charge(d, bytes) < 0) {
                Py_DECREF(o);
                return -1;
        }
        return push(d, o, ITEM_SCALAR, 0);
}

static size_t fence(const struct dec *d) {
        return d->nmarks ? d->marks[d->nmarks - 1] : 0;
}

/* at least k items above the last mark */
static int need_items(const struct dec *d, size_t k) {
        return d->sp - fence(d) >= k ? 0 : malformed("unpickling stack underflow");
}

static void pop_to(struct dec *d, size_t to) {
        while (d->sp > to) {
                d->sp--;
                Py_DECREF(d->stack[d->sp].o);
        }
}

static int pop_mark(struct dec *d, size_t *ret_mark) {
        if (!d->nmarks)
                return malformed("could not find MARK");
        *ret_mark = d->marks[--d->nmarks];
        return 0;
}

static int memo_put(struct dec *d, uint64_t idx) {
        struct item *it;

        if (d->sp == 0 || d->sp == fence(d))
                return malformed("stack empty before a memo write");
        if (idx > d->nmemo)
                return refuse(
                        d, "memo",
                        "leash: the function's result writes the unpickler's memo out of order (an index past the "
                        "objects stored before it), which makes the decoder allocate twice that index for "
                        "nothing");
        if (idx == d->nmemo) {
                if (grow(d, (void **) &d->memo, &d->mcap, d->nmemo + 1, sizeof *d->memo) < 0)
                        return -1;
                d->memo[d->nmemo++].o = NULL;
        }
        it = &d->memo[idx];
        Py_XDECREF(it->o);
        *it = d->stack[d->sp - 1];
        Py_INCREF(it->o);
        return 0;
}

static int memo_get(struct dec *d, uint64_t idx) {
        struct item *it;

        if (idx >= d->nmemo || !d->memo[idx].o)
                return malformed("memo value not found");
        it = &d->memo[idx];
        Py_INCREF(it->o);
        return push(d, it->o, it->kind, it->rec);
}

/* ---- reading the bytes ---------------------------------------------------------- */

/* k bytes at d->pos, in the frame when inside one: 0, or -1 raised */
static int need_bytes(struct dec *d, uint64_t k) {
        if (d->pos < d->frame_end) {
                if (k > d->frame_end - d->pos)
                        return refuse(d, "frame",
                                      "leash: the function's result has an opcode across a frame's end, which "
                                      "decoders read differently");
                return 0;
        }
        return k <= d->n - d->pos ? 0 : malformed("pickle data was truncated");
}

static uint64_t le(const unsigned char *p, unsigned n) {
        uint64_t v = 0;

        for (unsigned i = n; i > 0; i--)
                v = v << 8 | p[i - 1];
        return v;
}

/* an argument of k bytes: its start, d->pos moved past it (NULL: raised) */
static const unsigned char *take(struct dec *d, uint64_t k) {
        const unsigned char *a;

        if (need_bytes(d, k) < 0)
                return NULL;
        a = d->p + d->pos;
        d->pos += (size_t) k;
        return a;
}

/* a length of w bytes, then that many bytes (a negative 4-byte length,
 * as pickle reads it, does not fit) */
static const unsigned char *take_counted(struct dec *d, unsigned w, size_t *ret_len) {
        const unsigned char *a = take(d, w);
        uint64_t len;

        if (!a)
                return NULL;
        len = le(a, w);
        if (w == 4 && len > INT32_MAX)
                return malformed("negative byte count"), NULL;
        a = take(d, len);
        if (a)
                *ret_len = (size_t) len;
        return a;
}

static int load_frame(struct dec *d) {
        const unsigned char *a;
        uint64_t len;

        if (d->pos < d->frame_end)
                return refuse(d, "frame",
                              "leash: the function's result has a frame inside a frame, which decoders read "
                              "differently");
        a = take(d, 8);
        if (!a)
                return -1;
        len = le(a, 8);
        if (len > d->n - d->pos)
                return malformed("pickle data was truncated");
        d->frame_end = d->pos + (size_t) len;
        return 0;
}

/* ---- scalars ------------------------------------------------------------------- */

static int load_binint(struct dec *d, unsigned size) {
        const unsigned char *a = take(d, size);
        long long v;

        if (!a)
                return -1;
        v = (long long) le(a, size);
        if (size == 4)
                v = (int32_t) (uint32_t) v;
        return push_scalar(d, PyLong_FromLongLong(v), 32);
}

static int load_long(struct dec *d, unsigned w) {
        uint32_t r;
        size_t n;
        const unsigned char *a = take_counted(d, w, &n);

        if (!a)
                return -1;
        if (charge(d, 32 + 2 * (uint64_t) n) < 0)
                return -1;
        if (n <= 8) {
                uint64_t v = le(a, (unsigned) n);
                if (n > 0 && n < 8 && (a[n - 1] & 0x80))
                        v |= ~(uint64_t) 0 << (8 * n); /* sign-extended */
                return push(d, PyLong_FromLongLong((long long) v), ITEM_SCALAR, 0);
        }
        /* an int's hash is not cached and reads every digit: a big one has
         * a record whose weight is that work, charged each time it is
         * hashed as a key (shared through the memo, it costs 2 bytes) */
        r = new_rec(d, 1 + n / 8, 0);
        if (!r)
                return -1;
        return push(d, _PyLong_FromByteArray(a, n, 1, 1), ITEM_SCALAR, r);
}

static int load_binfloat(struct dec *d) {
        const unsigned char *a = take(d, 8);
        uint64_t bits = 0;
        double v;

        if (!a)
                return -1;
        for (unsigned i = 0; i < 8; i++) /* big-endian on the wire */
                bits = bits << 8 | a[i];
        memcpy(&v, &bits, sizeof v);
        return push_scalar(d, PyFloat_FromDouble(v), 32);
}

static int load_unicode(struct dec *d, unsigned w) {
        size_t n;
        const unsigned char *a = take_counted(d, w, &n);
        PyObject *s;

        if (!a)
                return -1;
        s = PyUnicode_DecodeUTF8((const char *) a, (Py_ssize_t) n, "surrogatepass");
        if (!s)
                return -1;
        return push_scalar(d, s, 80 + (uint64_t) PyUnicode_GET_LENGTH(s) * PyUnicode_KIND(s));
}

static int load_bytes(struct dec *d, unsigned w, bool array) {
        size_t n;
        const unsigned char *a = take_counted(d, w, &n);

        if (!a)
                return -1;
        if (array)
                return push_scalar(d, PyByteArray_FromStringAndSize((const char *) a, (Py_ssize_t) n), 64 + n);
        return push_scalar(d, PyBytes_FromStringAndSize((const char *) a, (Py_ssize_t) n), 40 + n);
}

static int load_const(struct dec *d, PyObject *o) {
        Py_INCREF(o);
        return push(d, o, ITEM_SCALAR, 0);
}

/* ---- containers ------------------------------------------------------------------ */

static int push_empty(struct dec *d, PyObject *o, uint64_t bytes) {
        uint32_t r;

        if (!o)
                return -1;
        r = charge(d, bytes) < 0 ? 0 : new_rec(d, 1, 1);
        if (!r) {
                Py_DECREF(o);
                return -1;
        }
        return push(d, o, ITEM_CONTAINER, r);
}

/* a tuple (list: a list) of the items from stack[from] up, replacing them */
static int load_sequence(struct dec *d, size_t from, bool list) {
        size_t k = d->sp - from;
        PyObject *o;
        uint32_t r;

        if (charge(d, (list ? 88 : 40) + (uint64_t) k * (list ? 16 : 8)) < 0)
                return -1;
        r = new_rec(d, 1, 1);
        if (!r)
                return -1;
        for (size_t i = from; i < d->sp; i++)
                if (place(d, r, NULL, &d->stack[i]) < 0)
                        return -1;
        o = list ? PyList_New((Py_ssize_t) k) : PyTuple_New((Py_ssize_t) k);
        if (!o)
                return -1;
        for (size_t i = 0; i < k; i++) {
                if (list)
                        PyList_SET_ITEM(o, (Py_ssize_t) i, d->stack[from + i].o);
                else
                        PyTuple_SET_ITEM(o, (Py_ssize_t) i, d->stack[from + i].o);
        }
        d->sp = from; /* the references went into o */
        return push(d, o, ITEM_CONTAINER, r);
}

static int load_tuple_n(struct dec *d, size_t k) {
        if (need_items(d, k) < 0)
                return -1;
        return load_sequence(d, d->sp - k, false);
}

static int load_marked(struct dec *d, bool list) {
        size_t m = 0;

        if (pop_mark(d, &m) < 0)
                return -1;
        return load_sequence(d, m, list);
}

/* key and value (value NULL: a set's item) into target, the container of
 * record r: counted, charged, placed, inserted (a made object through its
 * own method, as pickle does) */
static int insert(struct dec *d, const struct item *target, const struct item *key, const struct item *value,
                  bool frozen) {
        uint32_t r = target->rec;
        bool plain = target->kind == ITEM_CONTAINER;

        if (target->kind != ITEM_CONTAINER && target->kind != ITEM_MADE)
                return malformed("an item added to what is not a container");
        if (plain && value && !PyDict_CheckExact(target->o))
                return malformed("SETITEM on what is not a dict");
        if (plain && !value && !(frozen ? PyFrozenSet_CheckExact(target->o) : PySet_CheckExact(target->o)))
                return malformed("ADDITEMS on what is not a set");
        if (charge(d, value ? 160 : 128) < 0 || account_key(d, r, key) < 0 || place(d, r, target->o, key) < 0)
                return -1;
        if (value && place(d, r, target->o, value) < 0)
                return -1;
        if (value)
                return plain ? PyDict_SetItem(target->o, key->o, value->o)
                             : PyObject_SetItem(target->o, key->o, value->o);
        if (plain)
                return PySet_Add(target->o, key->o);
        {
                PyObject *res = PyObject_CallMethod(target->o, "add", "O", key->o);
                Py_XDECREF(res);
                return res ? 0 : -1;
        }
}

/* the pairs (pairs) or items from stack[from] up into stack[from - 1]
 * (frozen: a frozenset being made) */
static int load_items(struct dec *d, size_t from, bool pairs, bool frozen) {
        const struct item *target;

        if (from <= fence(d)) /* the target is above the last mark, as pickle has it */
                return malformed("unpickling stack underflow");
        if (pairs && (d->sp - from) % 2)
                return malformed("odd number of items for SETITEMS");
        target = &d->stack[from - 1];
        for (size_t i = from; i < d->sp; i += pairs ? 2 : 1)
                if (insert(d, target, &d->stack[i], pairs ? &d->stack[i + 1] : NULL, frozen) < 0)
                        return -1;
        pop_to(d, from);
        return 0;
}

static int load_setitems(struct dec *d, bool marked, bool pairs) {
        size_t m = 0;

        if (!marked) {
                if (need_items(d, 2) < 0)
                        return -1;
                return load_items(d, d->sp - 2, true, false);
        }
        if (pop_mark(d, &m) < 0)
                return -1;
        return load_items(d, m, pairs, false);
}

static int load_dict(struct dec *d) {
        size_t m = 0;

        if (pop_mark(d, &m) < 0 || push_empty(d, PyDict_New(), 64) < 0)
                return -1;
        /* the dict goes below its items: rotated into stack[m] */
        {
                struct item dict = d->stack[d->sp - 1];
                memmove(&d->stack[m + 1], &d->stack[m], (d->sp - 1 - m) * sizeof *d->stack);
                d->stack[m] = dict;
        }
        return load_items(d, m + 1, true, false);
}

static int load_frozenset(struct dec *d) {
        size_t m = 0;
        struct item set;

        /* a new frozenset, filled before anything else sees it (PySet_Add
         * allows that), below its items */
        if (pop_mark(d, &m) < 0 || push_empty(d, PyFrozenSet_New(NULL), 240) < 0)
                return -1;
        set = d->stack[d->sp - 1];
        memmove(&d->stack[m + 1], &d->stack[m], (d->sp - 1 - m) * sizeof *d->stack);
        d->stack[m] = set;
        return load_items(d, m + 1, false, true);
}

static int load_append(struct dec *d, size_t from) {
        const struct item *target;

        if (from <= fence(d)) /* the target is above the last mark, as pickle has it */
                return malformed("unpickling stack underflow");
        target = &d->stack[from - 1];
        if (target->kind != ITEM_CONTAINER && target->kind != ITEM_MADE)
                return malformed("APPEND to what is not a list");
        if (target->kind == ITEM_CONTAINER && !PyList_CheckExact(target->o))
                return malformed("APPEND to what is not a list");
        if (charge(d, 16 * (uint64_t) (d->sp - from)) < 0)
                return -1;
        for (size_t i = from; i < d->sp; i++) {
                PyObject *res;

                if (place(d, target->rec, target->o, &d->stack[i]) < 0)
                        return -1;
                if (target->kind == ITEM_CONTAINER) {
                        if (PyList_Append(target->o, d->stack[i].o) < 0)
                                return -1;
                        continue;
                }
                res = PyObject_CallMethod(target->o, "append", "O", d->stack[i].o);
                Py_XDECREF(res);
                if (!res)
                        return -1;
        }
        pop_to(d, from);
        return 0;
}

static int load_appends(struct dec *d, bool marked) {
        size_t m = 0;

        if (!marked) {
                if (need_items(d, 1) < 0)
                        return -1;
                return load_append(d, d->sp - 1);
        }
        if (pop_mark(d, &m) < 0)
                return -1;
        return load_append(d, m);
}

/* ---- the table's objects ---------------------------------------------------------- */

static int push_global(struct dec *d, PyObject *module, PyObject *name) {
        PyObject *key, *o;

        if (!PyUnicode_Check(module) || !PyUnicode_Check(name))
                return malformed("STACK_GLOBAL requires str");
        key = PyTuple_Pack(2, module, name);
        if (!key)
                return -1;
        o = PyDict_GetItemWithError(d->table, key); /* borrowed */
        Py_DECREF(key);
        if (!o && !PyErr_Occurred()) {
                char what[512];
                PyOS_snprintf(what, sizeof what, "%s.%s", PyUnicode_AsUTF8(module) ?: "?",
                              PyUnicode_AsUTF8(name) ?: "?");
                PyErr_Clear();
                return refuse(d, what,
                              "leash: the function's result refers to %U.%U, which the caller does not decode: name "
                              "the type in result_types= or, for a function you trust, pass trust_result=True",
                              module, name);
        }
        if (!o)
                return -1;
        Py_INCREF(o);
        return push(d, o, ITEM_GLOBAL, 0);
}

/* GLOBAL: "module\nname\n", the names protocol 2's pickler writes for
 * builtins read as pickle reads them */
static int load_global(struct dec *d) {
        PyObject *names[2] = {NULL, NULL};
        int r = -1;

        for (int i = 0; i < 2; i++) {
                const unsigned char *a = d->p + d->pos, *nl;
                size_t left = (d->pos < d->frame_end ? d->frame_end : d->n) - d->pos;

                nl = memchr(a, '\n', left);
                if (!nl) {
                        (void) need_bytes(d, left + 1);
                        goto out;
                }
                d->pos += (size_t) (nl - a) + 1;
                names[i] = PyUnicode_DecodeUTF8((const char *) a, nl - a, "strict");
                if (!names[i])
                        goto out;
        }
        if (d->proto < 3 && PyUnicode_CompareWithASCIIString(names[0], "__builtin__") == 0)
                Py_SETREF(names[0], PyUnicode_FromString("builtins"));
        if (names[0])
                r = push_global(d, names[0], names[1]);
out:
        Py_XDECREF(names[0]);
        Py_XDECREF(names[1]);
        return r;
}

static int load_stack_global(struct dec *d) {
        int r;

        if (need_items(d, 2) < 0)
                return -1;
        r = push_global(d, d->stack[d->sp - 2].o, d->stack[d->sp - 1].o);
        if (r < 0)
                return -1;
        /* the new top replaces the two names */
        Py_DECREF(d->stack[d->sp - 3].o);
        Py_DECREF(d->stack[d->sp - 2].o);
        d->stack[d->sp - 3] = d->stack[d->sp - 1];
        d->sp -= 2;
        return 0;
}

/* o, made from the k items on top, replaces them as a made object: its
 * record the height and weight of its arguments (from stack[sp - k + 1]
 * up), its size charged */
static int push_made(struct dec *d, PyObject *o, size_t k) {
        uint64_t size = 64, weight = 1;
        uint32_t height = 1;
        PyObject *s;
        uint32_t r;

        if (!o)
                return -1;
        s = PyObject_CallMethod(o, "__sizeof__", NULL);
        if (s && PyLong_Check(s))
                size = PyLong_AsUnsignedLongLongMask(s);
        Py_XDECREF(s);
        PyErr_Clear();
        for (size_t i = d->sp - k + 1; i < d->sp; i++) {
                const struct item *arg = &d->stack[i];
                weight += weight_of(d, arg);
                if (height_of(d, arg) > height)
                        height = height_of(d, arg);
                if (arg->rec)
                        d->recs[arg->rec].sealed = true;
        }
        r = weight > PICKLE_MAX_ITEMS || charge(d, size) < 0 ? 0 : new_rec(d, weight, height);
        if (!r) {
                Py_DECREF(o);
                return PyErr_Occurred() ? -1 : too_many(d);
        }
        pop_to(d, d->sp - k);
        return push(d, o, ITEM_MADE, r);
}

static int load_reduce(struct dec *d) {
        const struct item *f, *args;

        if (need_items(d, 2) < 0)
                return -1;
        f = &d->stack[d->sp - 2];
        args = &d->stack[d->sp - 1];
        if (f->kind != ITEM_GLOBAL)
                return refuse(d, "reduce", "leash: the function's result calls what is not a class of the caller's");
        if (!PyTuple_CheckExact(args->o))
                return malformed("REDUCE's arguments are not a tuple");
        return push_made(d, PyObject_CallObject(f->o, args->o), 2);
}

/* NEWOBJ (kw: NEWOBJ_EX): cls.__new__(cls, *args, **kwargs) */
static int load_newobj(struct dec *d, bool kw) {
        size_t k = kw ? 3 : 2;
        const struct item *cls, *args, *kwargs;
        PyTypeObject *t;

        if (need_items(d, k) < 0)
                return -1;
        cls = &d->stack[d->sp - k];
        args = &d->stack[d->sp - k + 1];
        kwargs = kw ? &d->stack[d->sp - 1] : NULL;
        if (cls->kind != ITEM_GLOBAL || !PyType_Check(cls->o))
                return refuse(d, "newobj", "leash: the function's result makes what is not a class of the caller's");
        if (!PyTuple_CheckExact(args->o) || (kwargs && !PyDict_CheckExact(kwargs->o)))
                return malformed("NEWOBJ's arguments are not a tuple and a dict");
        t = (PyTypeObject *) cls->o;
        if (!t->tp_new)
                return malformed("NEWOBJ's class has no __new__");
        return push_made(d, t->tp_new(t, args->o, kwargs ? kwargs->o : NULL), k);
}

/* BUILD's state, set as pickle sets it: __setstate__(state), else the
 * state's dict into inst.__dict__ and its slot dict by setattr */
static int build_state(PyObject *inst, PyObject *state) {
        PyObject *setstate, *slots = NULL, *k, *v, *dict, *res;
        Py_ssize_t i = 0;

        setstate = PyObject_GetAttrString(inst, "__setstate__");
        if (!setstate) {
                if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                        return -1;
                PyErr_Clear();
        }
        if (setstate) {
                res = PyObject_CallFunctionObjArgs(setstate, state, NULL); /* 3.8 has no CallOneArg */
                Py_DECREF(setstate);
                Py_XDECREF(res);
                return res ? 0 : -1;
        }
        if (PyTuple_Check(state) && PyTuple_GET_SIZE(state) == 2) {
                slots = PyTuple_GET_ITEM(state, 1);
                state = PyTuple_GET_ITEM(state, 0);
        }
        if (state != Py_None) {
                if (!PyDict_Check(state))
                        return malformed("state is not a dictionary");
                dict = PyObject_GetAttrString(inst, "__dict__");
                if (!dict)
                        return -1;
                while (PyDict_Next(state, &i, &k, &v))
                        if (PyObject_SetItem(dict, k, v) < 0) {
                                Py_DECREF(dict);
                                return -1;
                        }
                Py_DECREF(dict);
        }
        if (!slots || slots == Py_None)
                return 0;
        if (!PyDict_Check(slots))
                return malformed("slot state is not a dictionary");
        for (i = 0; PyDict_Next(slots, &i, &k, &v);)
                if (PyObject_SetAttr(inst, k, v) < 0)
                        return -1;
        return 0;
}

static int load_build(struct dec *d) {
        struct item *inst, *state;

        if (need_items(d, 2) < 0)
                return -1;
        inst = &d->stack[d->sp - 2];
        state = &d->stack[d->sp - 1];
        if (inst->kind != ITEM_MADE)
                return refuse(d, "build", "leash: the function's result sets the state of what no class made");
        if (place(d, inst->rec, inst->o, state) < 0 || build_state(inst->o, state->o) < 0)
                return -1;
        pop_to(d, d->sp - 1);
        return 0;
}

/* ---- the opcodes ------------------------------------------------------------------- */

/* the opcodes refused by name: protocols 0 and 1's text forms, persistent
 * ids, copyreg's extension codes, out-of-band buffers */
static const char *refused_name(unsigned char op) {
        switch (op) {
        case 0x82:
        case 0x83:
        case 0x84:
                return "extension code";
        case 'P':
        case 'Q':
                return "persistent id";
        case 0x97:
        case 0x98:
                return "buffer";
        case 'I':
        case 'L':
        case 'F':
        case 'S':
        case 'V':
        case 'g':
        case 'p':
        case 'i':
        case 'o':
        case 'T':
        case 'U':
                return "protocol 0";
        default:
                return "opcode";
        }
}

static int load_mark(struct dec *d) {
        if (grow(d, (void **) &d->marks, &d->kcap, d->nmarks + 1, sizeof *d->marks) < 0)
                return -1;
        d->marks[d->nmarks++] = d->sp;
        return 0;
}

static int load_pop(struct dec *d, bool to_mark) {
        size_t m = 0;

        if (to_mark) {
                if (pop_mark(d, &m) < 0)
                        return -1;
                pop_to(d, m);
                return 0;
        }
        if (d->sp > fence(d))
                pop_to(d, d->sp - 1);
        else if (d->nmarks)
                d->nmarks--;
        else
                return malformed("unpickling stack underflow");
        return 0;
}

static int load_dup(struct dec *d) {
        struct item *top;

        if (need_items(d, 1) < 0)
                return -1;
        top = &d->stack[d->sp - 1];
        Py_INCREF(top->o);
        return push(d, top->o, top->kind, top->rec);
}

static int load_memo(struct dec *d, unsigned size, bool get) {
        const unsigned char *a = take(d, size);

        if (!a)
                return -1;
        return get ? memo_get(d, le(a, size)) : memo_put(d, le(a, size));
}

static int load_proto(struct dec *d) {
        const unsigned char *a = take(d, 1);

        if (!a)
                return -1;
        if (*a > 5) { /* as pickle says it */
                PyErr_Format(PyExc_ValueError, "unsupported pickle protocol: %d", *a);
                return -1;
        }
        d->proto = *a;
        return 0;
}

/* the opcodes of scalars and of the stack; -2: not one of them */
static int step_data(struct dec *d, unsigned char op) {
        switch (op) {
        case 0x80:
                return load_proto(d);
        case 0x95:
                return load_frame(d);
        case '(':
                return load_mark(d);
        case '0':
                return load_pop(d, false);
        case '1':
                return load_pop(d, true);
        case '2':
                return load_dup(d);
        case 'N':
                return load_const(d, Py_None);
        case 0x88:
                return load_const(d, Py_True);
        case 0x89:
                return load_const(d, Py_False);
        case 'J':
                return load_binint(d, 4);
        case 'K':
                return load_binint(d, 1);
        case 'M':
                return load_binint(d, 2);
        case 0x8a:
                return load_long(d, 1);
        case 0x8b:
                return load_long(d, 4);
        case 'G':
                return load_binfloat(d);
        case 0x8c:
                return load_unicode(d, 1);
        case 'X':
                return load_unicode(d, 4);
        case 0x8d:
                return load_unicode(d, 8);
        case 'C':
                return load_bytes(d, 1, false);
        case 'B':
                return load_bytes(d, 4, false);
        case 0x8e:
                return load_bytes(d, 8, false);
        case 0x96:
                return load_bytes(d, 8, true);
        case 0x94:
                return memo_put(d, d->nmemo);
        case 'q':
                return load_memo(d, 1, false);
        case 'r':
                return load_memo(d, 4, false);
        case 'h':
                return load_memo(d, 1, true);
        case 'j':
                return load_memo(d, 4, true);
        default:
                return -2;
        }
}

/* the opcodes that build; -2: not one of them */
static int step_build(struct dec *d, unsigned char op) {
        switch (op) {
        case ']':
                return push_empty(d, PyList_New(0), 88);
        case '}':
                return push_empty(d, PyDict_New(), 64);
        case 0x8f:
                return push_empty(d, PySet_New(NULL), 240);
        case ')':
                return push_empty(d, PyTuple_New(0), 0);
        case 0x85:
                return load_tuple_n(d, 1);
        case 0x86:
                return load_tuple_n(d, 2);
        case 0x87:
                return load_tuple_n(d, 3);
        case 't':
                return load_marked(d, false);
        case 'l':
                return load_marked(d, true);
        case 'd':
                return load_dict(d);
        case 0x91:
                return load_frozenset(d);
        case 'a':
                return load_appends(d, false);
        case 'e':
                return load_appends(d, true);
        case 's':
                return load_setitems(d, false, true);
        case 'u':
                return load_setitems(d, true, true);
        case 0x90:
                return load_setitems(d, true, false);
        case 'c':
                return load_global(d);
        case 0x93:
                return load_stack_global(d);
        case 'R':
                return load_reduce(d);
        case 0x81:
                return load_newobj(d, false);
        case 0x92:
                return load_newobj(d, true);
        case 'b':
                return load_build(d);
        default:
                return -2;
        }
}

/* the opcodes up to STOP: the value, or NULL raised */
static PyObject *run(struct dec *d) {
        for (;;) {
                unsigned char op;
                int r;

                if ((++d->st.opcodes & 4095) == 0 && PyErr_CheckSignals() < 0)
                        return NULL;
                if (work(d, 1) < 0 || need_bytes(d, 1) < 0)
                        return NULL;
                op = d->p[d->pos++];
                if (op == '.') {
                        if (need_items(d, 1) < 0)
                                return NULL;
                        return d->stack[--d->sp].o;
                }
                r = step_data(d, op);
                if (r == -2)
                        r = step_build(d, op);
                if (r == -2)
                        return refuse(d, refused_name(op),
                                      "leash: the function's result holds opcode 0x%02x (%s), which leash does not "
                                      "decode (it decodes what a pickler of protocols 2-5 writes for data)",
                                      op, strcmp(refused_name(op), "opcode") ? refused_name(op) : "no protocol's"),
                               NULL;
                if (r < 0)
                        return NULL;
        }
}

static void dec_free(struct dec *d) {
        pop_to(d, 0);
        for (size_t i = 0; i < d->nmemo; i++)
                Py_XDECREF(d->memo[i].o);
        PyMem_Free(d->stack);
        PyMem_Free(d->memo);
        PyMem_Free(d->marks);
        PyMem_Free(d->recs);
        PyMem_Free(d->ht);
}

PyObject *pickle_decode(const unsigned char *p, size_t n, PyObject *table, PyObject *refused,
                        struct pickle_stats *stats) {
        struct dec d = {.p = p, .n = n, .table = table, .refused = refused};
        PyObject *value = NULL;

        d.st.memory_bound = PICKLE_MEM_PER_BYTE * n + PICKLE_MEM_BASE;
        d.st.work_bound = PICKLE_WORK_PER_BYTE * n + PICKLE_WORK_BASE;
        /* record 0 is every scalar's: weight 1, height 0 */
        if (grow(&d, (void **) &d.recs, &d.rcap, 1, sizeof *d.recs) == 0) {
                d.recs[d.nrecs++] = (struct rec){.weight = 1};
                value = run(&d);
        }
        dec_free(&d);
        if (stats)
                *stats = d.st;
        return value;
}
