/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict user-input parsers. A value is "digits[.digits][unit]"; the fraction
 * is kept as an exact integer (at most 9 digits) and applied with 128-bit
 * arithmetic, so "1.5G" is exactly 1610612736 and "0.1s" exactly 100 ms.
 */
#include "parse.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "macro.h"

#define FRAC_DIGITS_MAX 9

struct fixed {
        uint64_t whole;
        uint64_t frac; /* the digits after the point, as an integer */
        unsigned frac_digits;
        bool has_point;
};

/* Reads "digits[.digits]" from s; *ret_end points after it. */
static int parse_fixed(const char *s, struct fixed *ret, const char **ret_end) {
        struct fixed f = {0};
        const char *p = s;

        if (*p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                if (__builtin_mul_overflow(f.whole, 10, &f.whole) ||
                    __builtin_add_overflow(f.whole, (uint64_t) (*p - '0'), &f.whole))
                        return -ERANGE;
        }
        if (*p == '.') {
                f.has_point = true;
                p++;
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                for (; *p >= '0' && *p <= '9'; p++) {
                        if (f.frac_digits == FRAC_DIGITS_MAX)
                                return -EINVAL;
                        f.frac = f.frac * 10 + (uint64_t) (*p - '0');
                        f.frac_digits++;
                }
        }
        *ret = f;
        *ret_end = p;
        return 0;
}

static uint64_t pow10_u64(unsigned n) {
        uint64_t r = 1;
        while (n--)
                r *= 10;
        return r;
}

/* whole*mult + frac*mult/10^digits, overflow-checked, rounded down. */
static int fixed_scale(const struct fixed *f, uint64_t mult, uint64_t *ret) {
        uint64_t v;
        unsigned __int128 fr;

        if (__builtin_mul_overflow(f->whole, mult, &v))
                return -ERANGE;
        fr = (unsigned __int128) f->frac * mult / pow10_u64(f->frac_digits);
        if (fr > UINT64_MAX - v)
                return -ERANGE;
        *ret = v + (uint64_t) fr;
        return 0;
}

/* The whole string is "digits[.digits]", nothing after. */
static int parse_fixed_all(const char *s, struct fixed *ret) {
        const char *end;
        int r;

        if (!s)
                return -EINVAL;
        r = parse_fixed(s, ret, &end);
        if (r < 0)
                return r;
        return *end ? -EINVAL : 0;
}

int parse_u64(const char *s, uint64_t *ret) {
        struct fixed f;
        int r = parse_fixed_all(s, &f);

        if (r < 0)
                return r;
        if (f.has_point)
                return -EINVAL;
        *ret = f.whole;
        return 0;
}

int parse_count(const char *s, uint64_t *ret) {
        uint64_t v;
        int r;

        if (s && strcmp(s, "max") == 0) {
                *ret = PARSE_MAX;
                return 0;
        }
        r = parse_u64(s, &v);
        if (r < 0)
                return r;
        if (v > PARSE_COUNT_MAX)
                return -ERANGE;
        *ret = v;
        return 0;
}

int parse_size(const char *s, uint64_t *ret) {
        static const struct {
                char c;
                uint64_t mult;
        } units[] = {
                {'K', 1ULL << 10},
                {'M', 1ULL << 20},
                {'G', 1ULL << 30},
                {'T', 1ULL << 40},
        };
        struct fixed f;
        const char *end;
        uint64_t mult = 1, v;
        int r;

        if (!s)
                return -EINVAL;
        if (strcmp(s, "max") == 0) {
                *ret = PARSE_MAX;
                return 0;
        }
        r = parse_fixed(s, &f, &end);
        if (r < 0)
                return r;
        if (*end) {
                size_t i;
                for (i = 0; i < ELEMENTSOF(units); i++)
                        if (*end == units[i].c || *end == (char) (units[i].c + 32))
                                break;
                if (i == ELEMENTSOF(units))
                        return -EINVAL;
                mult = units[i].mult;
                end++;
                /* "M", "MB", "Mi", "MiB" are all the same 1024-based unit. */
                if (strcmp(end, "B") == 0 || strcmp(end, "i") == 0 || strcmp(end, "iB") == 0)
                        end += strlen(end);
                if (*end)
                        return -EINVAL;
        } else if (f.has_point)
                return -EINVAL; /* a fraction of a byte */
        r = fixed_scale(&f, mult, &v);
        if (r < 0)
                return r;
        if (v > PARSE_SIZE_MAX)
                return -ERANGE;
        *ret = v;
        return 0;
}

static const struct duration_unit {
        const char *unit;
        uint64_t ns;
} duration_units[] = {
        /* longest first where one is a prefix of another ("min" before "m", "ms" before "m") */
        {"d", 86400 * NSEC_PER_SEC}, {"h", 3600 * NSEC_PER_SEC}, {"min", 60 * NSEC_PER_SEC}, {"ms", NSEC_PER_MSEC},
        {"m", 60 * NSEC_PER_SEC},    {"s", NSEC_PER_SEC},        {"us", NSEC_PER_USEC},      {"ns", 1},
};

/* The unit at s (one of duration_units), its index, or -1. */
static int duration_unit_at(const char *s, size_t *ret_len) {
        for (size_t i = 0; i < ELEMENTSOF(duration_units); i++) {
                size_t l = strlen(duration_units[i].unit);
                if (strncmp(s, duration_units[i].unit, l) == 0 && !(s[l] >= 'a' && s[l] <= 'z')) {
                        *ret_len = l;
                        return (int) i;
                }
        }
        return -1;
}

static int add_checked(uint64_t *sum, uint64_t v) {
        if (__builtin_add_overflow(*sum, v, sum) || *sum > PARSE_DURATION_MAX)
                return -ERANGE;
        return 0;
}

/* "90", "1.5s", "1m30s", "1h2m", "2d12h": numbers with units from the largest
 * to the smallest, each at most once; a fraction only in the last; a bare
 * number is seconds (and only alone). */
static int parse_duration_units(const char *s, uint64_t *ret_ns) {
        uint64_t sum = 0;
        int last = -1;
        bool first = true;

        while (*s) {
                struct fixed f;
                const char *end;
                uint64_t v;
                size_t len = 0;
                int u, r = parse_fixed(s, &f, &end);

                if (r < 0)
                        return r;
                if (!*end) {
                        if (!first)
                                return -EINVAL; /* "1m30": say 1m30s */
                        u = 5;                  /* "s" */
                } else if ((u = duration_unit_at(end, &len)) < 0)
                        return -EINVAL;
                /* units strictly decreasing: ms (index 3) sorts among the minutes, compare their sizes */
                if (last >= 0 && duration_units[u].ns >= duration_units[last].ns)
                        return -EINVAL;
                if (f.has_point && end[len])
                        return -EINVAL; /* "1.5m30s" */
                r = fixed_scale(&f, duration_units[u].ns, &v);
                if (r < 0)
                        return r;
                r = add_checked(&sum, v);
                if (r < 0)
                        return r;
                last = u;
                first = false;
                s = end + len;
        }
        if (first)
                return -EINVAL;
        *ret_ns = sum;
        return 0;
}

/* Slurm's and sacct's forms: "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM",
 * "D-HH:MM:SS"; the seconds may have a fraction ("00:01:30.5"). Minutes and
 * seconds after a colon are below 60. */
static int parse_duration_clock(const char *s, uint64_t *ret_ns) {
        uint64_t part[3], days = 0, sum = 0, v;
        const char *dash = strchr(s, '-'), *p = s;
        unsigned n = 0;
        struct fixed last = {0};
        int r;

        if (dash) {
                r = parse_fixed(s, &last, &p);
                if (r < 0 || p != dash || last.has_point)
                        return -EINVAL;
                days = last.whole;
                p = dash + 1;
        }
        for (;;) {
                const char *end;
                r = parse_fixed(p, &last, &end);
                if (r < 0)
                        return r;
                if (n == 3 || (last.has_point && *end))
                        return -EINVAL;
                part[n++] = last.whole;
                if (!*end)
                        break;
                if (*end != ':')
                        return -EINVAL;
                p = end + 1;
        }
        if (!dash && n < 2)
                return -EINVAL; /* a plain number is not a clock */
        /* which fields: with a day, HH[:MM[:SS]]; without, MM:SS or HH:MM:SS */
        {
                uint64_t h = 0, m = 0, sec = 0;
                struct fixed fsec = {0};
                if (dash) {
                        h = part[0];
                        m = n > 1 ? part[1] : 0;
                        sec = n > 2 ? part[2] : 0;
                        if (last.has_point && n < 3)
                                return -EINVAL;
                } else if (n == 2) {
                        m = part[0];
                        sec = part[1];
                } else {
                        h = part[0];
                        m = part[1];
                        sec = part[2];
                }
                if ((n > 1 && (dash || n == 3) && m >= 60) || sec >= 60 || (dash && h >= 24))
                        return -EINVAL;
                fsec = last;
                fsec.whole = sec;
                if (!(last.has_point))
                        fsec.frac = fsec.frac_digits = 0;
                if (__builtin_mul_overflow(days, 86400 * NSEC_PER_SEC, &v) || add_checked(&sum, v) < 0)
                        return -ERANGE;
                if (__builtin_mul_overflow(h, 3600 * NSEC_PER_SEC, &v) || add_checked(&sum, v) < 0)
                        return -ERANGE;
                if (__builtin_mul_overflow(m, 60 * NSEC_PER_SEC, &v) || add_checked(&sum, v) < 0)
                        return -ERANGE;
                r = fixed_scale(&fsec, NSEC_PER_SEC, &v);
                if (r < 0 || add_checked(&sum, v) < 0)
                        return -ERANGE;
        }
        *ret_ns = sum;
        return 0;
}

int parse_duration(const char *s, uint64_t *ret_ns) {
        if (!s || !*s)
                return -EINVAL;
        if (strchr(s, ':') || strchr(s, '-'))
                return parse_duration_clock(s, ret_ns);
        return parse_duration_units(s, ret_ns);
}

int parse_cpus(const char *s, uint64_t *ret_ucores) {
        struct fixed f;
        int r = parse_fixed_all(s, &f);

        if (r < 0)
                return r;
        return fixed_scale(&f, 1000000, ret_ucores);
}

const char *signal_name(int sig) {
        static __thread char buf[16];

        if (sig >= SIGRTMIN && sig <= SIGRTMAX) {
                snprintf(buf, sizeof buf, "RTMIN+%d", sig - SIGRTMIN);
                return buf;
        }
        return sigabbrev_np(sig);
}

int parse_signal(const char *s, int *ret) {
        uint64_t n;

        if (!s || !*s)
                return -EINVAL;
        if (s[0] >= '0' && s[0] <= '9') {
                if (parse_u64(s, &n) < 0 || n < 1 || n > (uint64_t) SIGRTMAX)
                        return -EINVAL;
                *ret = (int) n;
                return 0;
        }
        if (strncasecmp(s, "SIG", 3) == 0)
                s += 3;
        /* RTMIN, RTMIN+N, RTMAX, RTMAX-N, as kill(1) spells them */
        if (strcasecmp(s, "RTMIN") == 0 || strcasecmp(s, "RTMAX") == 0) {
                *ret = strcasecmp(s, "RTMIN") == 0 ? SIGRTMIN : SIGRTMAX;
                return 0;
        }
        if (strncasecmp(s, "RTMIN+", 6) == 0 || strncasecmp(s, "RTMAX-", 6) == 0) {
                if (!(s[6] >= '0' && s[6] <= '9') || parse_u64(s + 6, &n) < 0 || n > (uint64_t) (SIGRTMAX - SIGRTMIN))
                        return -EINVAL;
                *ret = (s[3] == 'I' || s[3] == 'i') ? SIGRTMIN + (int) n : SIGRTMAX - (int) n;
                return 0;
        }
        /* the other names kill(1) and bash know: glibc's table has one name a number */
        if (strcasecmp(s, "IO") == 0 || strcasecmp(s, "IOT") == 0 || strcasecmp(s, "CLD") == 0) {
                *ret = s[1] == 'O' || s[1] == 'o' ? (s[2] ? SIGABRT : SIGIO) : SIGCHLD;
                return 0;
        }
        for (int sig = 1; sig < SIGRTMIN; sig++) {
                const char *name = sigabbrev_np(sig);
                if (name && strcasecmp(name, s) == 0) {
                        *ret = sig;
                        return 0;
                }
        }
        return -EINVAL;
}

bool path_has_dotdot(const char *path) {
        for (const char *p = path; *p;) {
                const char *e = strchrnul(p, '/');
                if (e - p == 2 && p[0] == '.' && p[1] == '.')
                        return true;
                p = *e ? e + 1 : e;
        }
        return false;
}

void path_simplify_slashes(char *path) {
        char *w = path;

        for (const char *r = path; *r; r++)
                if (!(*r == '/' && w > path && w[-1] == '/'))
                        *w++ = *r;
        while (w > path + 1 && w[-1] == '/')
                w--;
        *w = '\0';
}

bool job_name_is_valid(const char *s) {
        size_t n = 0;

        if (!s || !*s || s[0] == '.')
                return false;
        for (; s[n]; n++) {
                char c = s[n];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '-' || c == '.'))
                        return false;
                if (n >= 64)
                        return false;
        }
        return true;
}

void format_size(uint64_t v, char *buf, size_t size) {
        static const char units[] = "KMGT";
        int i = -1;

        if (v == PARSE_MAX) {
                snprintf(buf, size, "max");
                return;
        }
        while (i < 3 && v >= 1024 && v % 1024 == 0) {
                v /= 1024;
                i++;
        }
        if (i < 0)
                snprintf(buf, size, "%" PRIu64, v);
        else
                snprintf(buf, size, "%" PRIu64 "%c", v, units[i]);
}

void format_bytes_human(uint64_t v, char *buf, size_t size) {
        static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double x = (double) v;
        int i = -1;

        if (v < 1024) {
                snprintf(buf, size, "%" PRIu64 " B", v);
                return;
        }
        while (i < 4 && x >= 1024.0) {
                x /= 1024.0;
                i++;
        }
        if (x >= 99.95)
                snprintf(buf, size, "%.0f %s", x, units[i]);
        else if (x >= 9.995)
                snprintf(buf, size, "%.1f %s", x, units[i]);
        else
                snprintf(buf, size, "%.2f %s", x, units[i]);
}

void format_bytes_table(uint64_t v, char *buf, size_t size) {
        static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double x = (double) v;
        int i = -1;

        if (v < 1024) {
                snprintf(buf, size, "%" PRIu64 "B", v);
                return;
        }
        /* 1048575 bytes is 1023.999 KiB, which %.1f would print as 1024.0 */
        while (i < 4 && x >= 1024.0 - 0.05) {
                x /= 1024.0;
                i++;
        }
        snprintf(buf, size, "%.1f%s", x, units[i]);
}

void format_duration(uint64_t ns, char *buf, size_t size) {
        if (ns % NSEC_PER_SEC == 0)
                snprintf(buf, size, "%" PRIu64 "s", ns / NSEC_PER_SEC);
        else if (ns % NSEC_PER_MSEC == 0)
                snprintf(buf, size, "%" PRIu64 "ms", ns / NSEC_PER_MSEC);
        else if (ns % NSEC_PER_USEC == 0)
                snprintf(buf, size, "%" PRIu64 "us", ns / NSEC_PER_USEC);
        else
                snprintf(buf, size, "%" PRIu64 "ns", ns);
}
