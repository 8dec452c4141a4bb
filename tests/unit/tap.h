/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal TAP for the unit tests: run by automake's tap-driver.sh. */
#pragma once

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define ok(cond, ...)                                                                 \
        do {                                                                          \
                bool _c = (cond);                                                     \
                tap_n++;                                                              \
                if (!_c)                                                              \
                        tap_failed++;                                                 \
                printf("%sok %d - ", _c ? "" : "not ", tap_n);                        \
                printf(__VA_ARGS__);                                                  \
                printf("\n");                                                         \
                if (!_c)                                                              \
                        printf("# failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
        } while (0)

#define is_u64(got, want, ...)                                                     \
        do {                                                                       \
                uint64_t _g = (got), _w = (want);                                  \
                ok(_g == _w, __VA_ARGS__);                                         \
                if (_g != _w)                                                      \
                        printf("#   got %" PRIu64 ", want %" PRIu64 "\n", _g, _w); \
        } while (0)

#define is_str(got, want, ...)                                                       \
        do {                                                                         \
                const char *_g = (got), *_w = (want);                                \
                bool _e = _g && _w && strcmp(_g, _w) == 0;                           \
                ok(_e, __VA_ARGS__);                                                 \
                if (!_e)                                                             \
                        printf("#   got '%s', want '%s'\n", _g ? _g : "(null)", _w); \
        } while (0)

static inline int tap_done(void) {
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
