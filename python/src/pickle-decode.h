/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <stdint.h>

/* The bounds of one decode, stated in README.md ("The result channel"). */
#define PICKLE_MAX_DEPTH 200          /* containers nested deeper are refused */
#define PICKLE_MAX_ITEMS (1ULL << 26) /* items, a shared container counted each time it appears */
#define PICKLE_MEM_PER_BYTE 160ULL    /* caller memory per byte of pickle ... */
#define PICKLE_MEM_BASE (1ULL << 20)  /* ... plus this */
#define PICKLE_WORK_PER_BYTE 32ULL    /* opcodes + hashing and comparing work per byte of pickle ... */
#define PICKLE_WORK_BASE (1ULL << 20) /* ... plus this */
#define PICKLE_MAX_EQUAL_HASHES 16    /* keys with one full hash in one set, frozenset or dict */

/* What a decode did, refused or not: for the tests and the fuzzer. */
struct pickle_stats {
        uint64_t opcodes, work, work_bound, memory, memory_bound;
};

/* The value of the pickle p[0..n), built by leash's own decoder: the plain
 * types from their opcodes, anything else only through table, a dict
 * {(module, qualname): object} that GLOBAL and STACK_GLOBAL are looked up
 * in. Refusals raise refused(message, what); a malformed or truncated
 * pickle raises pickle.UnpicklingError, as pickle.loads does. stats, when
 * not NULL, is filled on every path. */
PyObject *pickle_decode(const unsigned char *p, size_t n, PyObject *table, PyObject *refused,
                        struct pickle_stats *stats);
