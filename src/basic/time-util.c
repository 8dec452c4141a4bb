/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "time-util.h"

#include <stdio.h>

void format_iso8601(uint64_t realtime_ns, char *buf, size_t size) {
        time_t sec = (time_t) (realtime_ns / 1000000000ULL);
        struct tm tm;
        char tmp[32];

        gmtime_r(&sec, &tm);
        strftime(tmp, sizeof tmp, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf, size, "%s.%06uZ", tmp, (unsigned) (realtime_ns % 1000000000ULL / 1000));
}
