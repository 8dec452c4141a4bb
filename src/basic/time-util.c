/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "time-util.h"

#include <stdio.h>

/* The civil (proleptic Gregorian) date of a day count since 1970-01-01, by
 * eras of 400 years (146097 days). Done here rather than by gmtime_r():
 * glibc's gmtime_r initialises the time zone on its first call and reads
 * /etc/localtime (seven system calls) on every `leash run --report`, for a
 * UTC time that needs no zone. */
static void civil_from_days(int64_t z, int64_t *ret_y, unsigned *ret_m, unsigned *ret_d) {
        z += 719468;
        int64_t era = (z >= 0 ? z : z - 146096) / 146097;
        unsigned doe = (unsigned) (z - era * 146097);                         /* [0, 146096] */
        unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
        unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
        unsigned mp = (5 * doy + 2) / 153;                                    /* [0, 11], March first */
        unsigned m = mp < 10 ? mp + 3 : mp - 9;

        *ret_d = doy - (153 * mp + 2) / 5 + 1;
        *ret_m = m;
        *ret_y = (int64_t) yoe + era * 400 + (m <= 2);
}

void format_iso8601(uint64_t realtime_ns, char *buf, size_t size) {
        uint64_t sec = realtime_ns / 1000000000ULL, sod = sec % 86400;
        int64_t y;
        unsigned m, d;

        civil_from_days((int64_t) (sec / 86400), &y, &m, &d);
        snprintf(buf, size, "%04lld-%02u-%02uT%02u:%02u:%02u.%06uZ", (long long) y, m, d, (unsigned) (sod / 3600),
                 (unsigned) (sod / 60 % 60), (unsigned) (sod % 60), (unsigned) (realtime_ns % 1000000000ULL / 1000));
}
