/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small macros shared by every layer: cleanup attributes (so that every early
 * return releases what it holds), ownership transfer, array sizes and time
 * units. No external library may be included here.
 */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _warn_unused_ __attribute__((warn_unused_result))
#define _hidden_ __attribute__((visibility("hidden")))
#define _fallthrough_ __attribute__((fallthrough))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define NSEC_PER_USEC UINT64_C(1000)
#define NSEC_PER_MSEC UINT64_C(1000000)
#define NSEC_PER_SEC UINT64_C(1000000000)
#define USEC_PER_SEC UINT64_C(1000000)

static inline void freep(void *p) {
        free(*(void **) p);
}

/* close() that keeps errno: cleanup runs on error paths that still need it. */
static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}

static inline void fclosep(FILE **f) {
        if (*f) {
                int saved = errno;
                fclose(*f);
                errno = saved;
        }
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Hand an fd or pointer over to a new owner, leaving the cleanup a no-op. */
#define TAKE_FD(fd)              \
        ({                       \
                int _fd_ = (fd); \
                (fd) = -1;       \
                _fd_;            \
        })
#define TAKE_PTR(p)                      \
        ({                               \
                __typeof__(p) _p_ = (p); \
                (p) = NULL;              \
                _p_;                     \
        })

/* -errno from a libc call that set errno, never 0 even if errno was left 0. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}
