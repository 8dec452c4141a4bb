/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(clockid_t clock) {
        struct timespec ts;
        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static inline struct timespec ns_to_timespec(uint64_t ns) {
        struct timespec ts = {.tv_sec = (time_t) (ns / 1000000000ULL), .tv_nsec = (long) (ns % 1000000000ULL)};
        return ts;
}

/* "2026-11-21T20:21:03.123456Z" from a CLOCK_REALTIME value. */
void format_iso8601(uint64_t realtime_ns, char *buf, size_t size);
