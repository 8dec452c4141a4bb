/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>

#include "basic/closest.h"
#include "basic/fileio.h"
#include "basic/macro.h"
#include "basic/parse.h"
#include "basic/procstat.h"
#include "basic/time-util.h"
#include "basic/utf8.h"
#include "tap.h"

/* /proc/PID/stat as the kernel writes it (a comm with ") (" in it) */
static void proc_stat(void) {
        struct procstat ps;
        const char *stat = "4242 (a) (b) S 4200 4242 4242 0 -1 4194560 120 0 0 0 150 30 7 9 20 0 1 0 "
                           "987654 1000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
        char longer[512];

        ok(procstat_parse(stat, &ps) == 0, "stat parses");
        is_str(ps.comm, "a) (b", "comm with parentheses");
        ok(ps.state == 'S' && ps.ppid == 4200 && ps.pgrp == 4242 && ps.session == 4242, "state, ppid, pgrp, session");
        ok(ps.utime == 150 && ps.stime == 30 && ps.cutime == 7 && ps.cstime == 9, "utime stime cutime cstime");
        is_u64(ps.start, 987654, "start time");
        ok(procstat_parse("4242 (x S 1", &ps) == -EINVAL, "truncated: EINVAL");
        ok(procstat_parse("4242 (x) S 1 2 3", &ps) == -EINVAL, "fields missing before the start time: EINVAL");
        snprintf(longer, sizeof longer, "7 (%s) R 1 7 7 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 55 0 0 0\n",
                 "kworker/u8:1-events_unbound_with_a_name_longer_than_sixty_four_bytes_in_all");
        ok(procstat_parse(longer, &ps) == 0 && strlen(ps.comm) == sizeof ps.comm - 1 && ps.start == 55,
           "a comm longer than the field: cut, the fields after it still read");
        ok(procstat_read(AT_FDCWD, getpid(), &ps) == 0 && ps.ppid == getppid() && ps.state == 'R',
           "this process's own: running, its parent");
        ok(procstat_read(AT_FDCWD, 0, &ps) == -ESRCH, "no such process: ESRCH");
}

static void sizes(void) {
        uint64_t v;
        ok(parse_size("0", &v) == 0 && v == 0, "size 0");
        ok(parse_size("1024", &v) == 0 && v == 1024, "size in bytes");
        ok(parse_size("512M", &v) == 0 && v == 512ULL << 20, "512M");
        ok(parse_size("2G", &v) == 0 && v == 2ULL << 30, "2G");
        ok(parse_size("2g", &v) == 0 && v == 2ULL << 30, "2g lower case");
        ok(parse_size("1T", &v) == 0 && v == 1ULL << 40, "1T");
        ok(parse_size("64KiB", &v) == 0 && v == 64 << 10, "64KiB");
        ok(parse_size("64KB", &v) == 0 && v == 64 << 10, "64KB is 1024-based too");
        ok(parse_size("1.5G", &v) == 0 && v == 1610612736ULL, "1.5G exactly");
        ok(parse_size("max", &v) == 0 && v == PARSE_MAX, "max");
        ok(parse_size("", &v) == -EINVAL, "empty");
        ok(parse_size("-1", &v) == -EINVAL, "negative");
        ok(parse_size("+1", &v) == -EINVAL, "plus sign");
        ok(parse_size(" 1", &v) == -EINVAL, "leading blank");
        ok(parse_size("1 ", &v) == -EINVAL, "trailing blank");
        ok(parse_size("1.5", &v) == -EINVAL, "a fraction of a byte");
        ok(parse_size("12Q", &v) == -EINVAL, "unknown unit");
        ok(parse_size("1MM", &v) == -EINVAL, "double unit");
        ok(parse_size("18446744073709551616", &v) == -ERANGE, "2^64 overflows");
        ok(parse_size("17179869184G", &v) == -ERANGE, "2^34 G overflows");
        ok(parse_size("16777216T", &v) == -ERANGE, "2^24 T overflows");
        ok(parse_size("18446744073709551615", &v) == -ERANGE, "UINT64_MAX is reserved for max");
        ok(parse_size("18446744073709551614", &v) == -ERANGE, "UINT64_MAX - 1 (LEASH_UNSET) is refused");
        ok(parse_size("1048576T", &v) == 0 && v == PARSE_SIZE_MAX, "1048576T (2^60) is the largest size");
        ok(parse_size("1152921504606846977", &v) == -ERANGE, "2^60 + 1 is refused");
        ok(parse_size("1.", &v) == -EINVAL, "dangling point");
        ok(parse_size(".5G", &v) == -EINVAL, "no whole part");
        ok(parse_size("1.0000000001G", &v) == -EINVAL, "more than 9 fraction digits");
        /* issue 26: the IEC spellings people type */
        ok(parse_size("2Gi", &v) == 0 && v == 2147483648ULL, "2Gi");
        ok(parse_size("512Mi", &v) == 0 && v == 536870912ULL, "512Mi");
        ok(parse_size("4Ki", &v) == 0 && v == 4096, "4Ki");
        ok(parse_size("2i", &v) == -EINVAL, "i without a unit");
        ok(parse_size("2Gib", &v) == -EINVAL, "Gib (bits) is refused");
}

static void durations(void) {
        uint64_t v;
        ok(parse_duration("90", &v) == 0 && v == 90000000000ULL, "90 is seconds");
        ok(parse_duration("1.5s", &v) == 0 && v == 1500000000ULL, "1.5s");
        ok(parse_duration("250ms", &v) == 0 && v == 250000000ULL, "250ms");
        ok(parse_duration("100us", &v) == 0 && v == 100000ULL, "100us");
        ok(parse_duration("2m", &v) == 0 && v == 120000000000ULL, "2m");
        ok(parse_duration("1h", &v) == 0 && v == 3600000000000ULL, "1h");
        ok(parse_duration("1d", &v) == 0 && v == 86400000000000ULL, "1d");
        ok(parse_duration("0.1s", &v) == 0 && v == 100000000ULL, "0.1s exactly");
        ok(parse_duration("0", &v) == 0 && v == 0, "0");
        /* issue 26: combined units, largest first, and Slurm's clock forms */
        ok(parse_duration("1m30s", &v) == 0 && v == 90000000000ULL, "1m30s");
        ok(parse_duration("1h2m", &v) == 0 && v == 3720000000000ULL, "1h2m");
        ok(parse_duration("2d12h", &v) == 0 && v == 216000000000000ULL, "2d12h");
        ok(parse_duration("1m30.5s", &v) == 0 && v == 90500000000ULL, "1m30.5s: a fraction in the last part");
        ok(parse_duration("1s500ms", &v) == 0 && v == 1500000000ULL, "1s500ms");
        ok(parse_duration("1min30s", &v) == 0 && v == 90000000000ULL, "1min30s");
        ok(parse_duration("1m30", &v) == -EINVAL, "1m30: the seconds need their unit");
        ok(parse_duration("30s1m", &v) == -EINVAL, "units from the largest down");
        ok(parse_duration("1m1m", &v) == -EINVAL, "a unit twice");
        ok(parse_duration("1.5m30s", &v) == -EINVAL, "a fraction only in the last part");
        ok(parse_duration("1ms1m", &v) == -EINVAL, "ms then m is not decreasing");
        ok(parse_duration("00:01:30", &v) == 0 && v == 90000000000ULL, "HH:MM:SS");
        ok(parse_duration("01:30", &v) == 0 && v == 90000000000ULL, "MM:SS");
        ok(parse_duration("1:02:03", &v) == 0 && v == 3723000000000ULL, "H:MM:SS");
        ok(parse_duration("100:00:00", &v) == 0 && v == 360000000000000ULL, "100 hours");
        ok(parse_duration("1-02:03:04", &v) == 0 && v == 93784000000000ULL, "D-HH:MM:SS");
        ok(parse_duration("2-12", &v) == 0 && v == 216000000000000ULL, "D-HH");
        ok(parse_duration("2-12:30", &v) == 0 && v == 217800000000000ULL, "D-HH:MM");
        ok(parse_duration("00:00:01.5", &v) == 0 && v == 1500000000ULL, "seconds with a fraction");
        ok(parse_duration("00:61", &v) == -EINVAL, "61 seconds after a colon");
        ok(parse_duration("00:60:00", &v) == -EINVAL, "60 minutes after a colon");
        ok(parse_duration("1-24:00:00", &v) == -EINVAL, "24 hours after a day");
        ok(parse_duration("1:2:3:4", &v) == -EINVAL, "four fields");
        ok(parse_duration("1.5:00", &v) == -EINVAL, "a fraction before a colon");
        ok(parse_duration(":30", &v) == -EINVAL, "empty field");
        ok(parse_duration("1:", &v) == -EINVAL, "dangling colon");
        ok(parse_duration("-1", &v) == -EINVAL, "dash without days");
        ok(parse_duration("1-", &v) == -EINVAL, "dash without hours");
        ok(parse_duration("3651-00", &v) == -ERANGE, "3651 days in Slurm's form is refused");
        ok(parse_duration("", &v) == -EINVAL, "empty");
        ok(parse_duration("1.5x", &v) == -EINVAL, "unknown unit");
        ok(parse_duration("-1s", &v) == -EINVAL, "negative");
        ok(parse_duration("s", &v) == -EINVAL, "unit only");
        ok(parse_duration("1e3", &v) == -EINVAL, "exponent");
        ok(parse_duration("18446744074s", &v) == -ERANGE, "overflow in ns");
        ok(parse_duration("213504d", &v) == -ERANGE, "213504 days does not fit in u64 ns");
        /* issue 10.1: accepted values stay far from the sentinels and from overflow
         * in now + wall time + grace */
        ok(parse_duration("3650d", &v) == 0 && v == PARSE_DURATION_MAX, "3650d is the largest duration");
        ok(parse_duration("3651d", &v) == -ERANGE, "3651d is refused");
        ok(parse_duration("18446744073s", &v) == -ERANGE, "18446744073s (fits in u64 ns) is refused");
        ok(parse_duration("18446744073709551614ns", &v) == -ERANGE, "UINT64_MAX - 1 ns (LEASH_UNSET) is refused");
        ok(PARSE_DURATION_MAX * 3 + 100ULL * 365 * 86400 * 1000000000ULL > PARSE_DURATION_MAX,
           "three largest durations plus a century of uptime do not wrap");
}

static void cpus(void) {
        uint64_t v;
        ok(parse_cpus("1", &v) == 0 && v == 1000000, "1 core");
        ok(parse_cpus("0.5", &v) == 0 && v == 500000, "0.5 core");
        ok(parse_cpus("2.25", &v) == 0 && v == 2250000, "2.25 cores");
        ok(parse_cpus("0.0000001", &v) == 0 && v == 0, "below a millionth rounds to 0");
        ok(parse_cpus("half", &v) == -EINVAL, "words");
        ok(parse_cpus("1,5", &v) == -EINVAL, "comma");
        ok(parse_cpus("-1", &v) == -EINVAL, "negative");
}

static void counts(void) {
        uint64_t v;
        ok(parse_count("50", &v) == 0 && v == 50, "50");
        ok(parse_count("max", &v) == 0 && v == PARSE_MAX, "max");
        ok(parse_count("5k", &v) == -EINVAL, "no units on counts");
        ok(parse_count("2147483647", &v) == 0 && v == PARSE_COUNT_MAX, "2^31 - 1 is the largest count");
        ok(parse_count("2147483648", &v) == -ERANGE, "2^31 is refused");
        ok(parse_count("18446744073709551614", &v) == -ERANGE, "UINT64_MAX - 1 (LEASH_UNSET) is refused");
        ok(parse_count("18446744073709551615", &v) == -ERANGE, "UINT64_MAX (max's value) is refused as a number");
        ok(parse_u64("007", &v) == 0 && v == 7, "leading zeros");
        ok(parse_u64("1.0", &v) == -EINVAL, "no fraction in u64");
}

static void signals(void) {
        int s;
        ok(parse_signal("RTMAX-1", &s) == 0 && s == SIGRTMAX - 1, "RTMAX-1");
        ok(parse_signal("SIGRTMAX", &s) == 0 && s == SIGRTMAX, "SIGRTMAX");
        ok(parse_signal("rtmin", &s) == 0 && s == SIGRTMIN, "rtmin");
        ok(parse_signal("RTMAX-", &s) == -EINVAL, "RTMAX- without a number");
        ok(parse_signal("RTMAX-+1", &s) == -EINVAL, "RTMAX-+1");
        ok(parse_signal("RTMAX-99", &s) == -EINVAL, "RTMAX-99 is below RTMIN");
        ok(path_has_dotdot("../memory") && path_has_dotdot("a/../b") && path_has_dotdot("/x/..") &&
                   !path_has_dotdot("a..b/..c") && !path_has_dotdot("/sys/fs/cgroup/x"),
           "path_has_dotdot looks at whole components");
        ok(parse_signal("XCPU", &s) == 0 && s == SIGXCPU, "XCPU");
        ok(parse_signal("IO", &s) == 0 && s == SIGIO, "IO (bash and kill(1) say IO; glibc says POLL)");
        ok(parse_signal("SIGIOT", &s) == 0 && s == SIGABRT, "IOT is ABRT");
        ok(parse_signal("CLD", &s) == 0 && s == SIGCHLD, "CLD is CHLD");
        ok(parse_signal("SIGXCPU", &s) == 0 && s == SIGXCPU, "SIGXCPU");
        ok(parse_signal("term", &s) == 0 && s == SIGTERM, "term, any case");
        ok(parse_signal("9", &s) == 0 && s == SIGKILL, "a number");
        ok(parse_signal("RTMIN+2", &s) == 0 && s == SIGRTMIN + 2, "RTMIN+2");
        ok(parse_signal("SIGFOO", &s) == -EINVAL, "unknown name");
        ok(parse_signal("0", &s) == -EINVAL, "0 is not a signal");
        ok(parse_signal("65", &s) == -EINVAL, "65 is beyond SIGRTMAX");
        ok(parse_signal("", &s) == -EINVAL, "empty");
        is_str(signal_name(SIGXCPU), "XCPU", "name of SIGXCPU");
        is_str(signal_name(SIGRTMIN + 3), "RTMIN+3", "name of a realtime signal");
}

static void names(void) {
        ok(job_name_is_valid("trial-17.a_b"), "ordinary name");
        ok(!job_name_is_valid(""), "empty");
        ok(!job_name_is_valid(".."), "dot dot");
        ok(!job_name_is_valid(".hidden"), "leading dot");
        ok(!job_name_is_valid("a/b"), "slash");
        ok(!job_name_is_valid("a@b"), "@ is the pid separator");
        ok(!job_name_is_valid("a b"), "blank");
        ok(job_name_is_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "64 characters");
        ok(!job_name_is_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "65 characters");
}

static void formats(void) {
        char b[64];
        char p1[] = "/sys/fs/cgroup/unified//leash////x/", p2[] = "leash//", p3[] = "/", p4[] = "//";
        path_simplify_slashes(p1);
        is_str(p1, "/sys/fs/cgroup/unified/leash/x", "a cgroup parent's // and trailing / go");
        path_simplify_slashes(p2);
        is_str(p2, "leash", "relative: leash// -> leash");
        path_simplify_slashes(p3);
        is_str(p3, "/", "/ stays /");
        path_simplify_slashes(p4);
        is_str(p4, "/", "// -> /");
        format_size(64ULL << 20, b, sizeof b);
        is_str(b, "64M", "format 64M");
        format_size(1000, b, sizeof b);
        is_str(b, "1000", "format 1000");
        format_duration(1500000000ULL, b, sizeof b);
        is_str(b, "1500ms", "format 1.5s");
        format_duration(2000000000ULL, b, sizeof b);
        is_str(b, "2s", "format 2s");
        /* tables people read (issue 41.2): one decimal, the unit that keeps it >= 1 */
        format_bytes_table(106541ULL * 1024, b, sizeof b);
        is_str(b, "104.0MiB", "ps's MEM 106541K reads 104.0MiB");
        format_bytes_table(111420ULL * 1024, b, sizeof b);
        is_str(b, "108.8MiB", "stat's RSS 111420K reads 108.8MiB");
        format_bytes_table(512, b, sizeof b);
        is_str(b, "512B", "under 1 KiB: bytes");
        format_bytes_table(1536ULL << 20, b, sizeof b);
        is_str(b, "1.5GiB", "1536 MiB reads 1.5GiB");
        format_bytes_table((1ULL << 20) - 1, b, sizeof b);
        is_str(b, "1.0MiB", "1 MiB less a byte: 1.0MiB, not 1024.0KiB");
}

static void utf8(void) {
        char buf[64];
        size_t len = 0;
        FILE *f;
        ok(utf8_is_valid("plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "ASCII, 2, 3 and 4-byte sequences");
        ok(!utf8_is_valid("\xff"), "0xff");
        ok(!utf8_is_valid("\xc0\xaf"), "overlong slash");
        ok(!utf8_is_valid("\xe0\x80\xaf"), "overlong in 3 bytes");
        ok(!utf8_is_valid("\xed\xa0\x80"), "a surrogate");
        ok(!utf8_is_valid("\xf4\x90\x80\x80"), "above U+10FFFF");
        ok(!utf8_is_valid("\xe2\x82"), "truncated");
        {
                char *r = utf8_replace_invalid("a\xff"
                                               "b\xe2\x82");
                is_str(r,
                       "a\xef\xbf\xbd"
                       "b\xef\xbf\xbd\xef\xbf\xbd",
                       "each bad byte becomes U+FFFD");
                free(r);
        }
        f = fmemopen(buf, sizeof buf, "w");
        utf8_fputs_escaped("\x1b[1m\r\n\t\\\x7f\xc2\x9b\xc3\xa9\xff", f);
        len = (size_t) ftell(f);
        fclose(f);
        buf[len < sizeof buf ? len : sizeof buf - 1] = '\0';
        is_str(buf, "\\x1b[1m\\r\\n\\t\\\\\\x7f\\xc2\\x9b\xc3\xa9\\xff",
               "escapes ESC, CR, LF, TAB, \\, DEL, C1, bad bytes");
        f = fmemopen(buf, sizeof buf, "w");
        utf8_fputs_json("a\"b\\c\n\x1b\xc3\xa9\xff", f);
        len = (size_t) ftell(f);
        fclose(f);
        buf[len < sizeof buf ? len : sizeof buf - 1] = '\0';
        is_str(buf, "\"a\\\"b\\\\c\\u000a\\u001b\xc3\xa9\\ufffd\"",
               "JSON string: quote, backslash, controls as \\u, valid UTF-8 kept, bad byte U+FFFD");
}

/* format_iso8601 does its own calendar arithmetic: compare it with gmtime_r
 * on leap days, century and 400-year boundaries and a pseudo-random sweep */
static void iso8601(void) {
        static const uint64_t fixed[] = {0,          951782400,   951868799,   4107542400, 4107628799,
                                         1709164800, 13574563200, 13574649599, 18429292800};
        char buf[64], want[64];
        bool same = true;
        uint64_t x = 88172645463325252ULL;

        format_iso8601(1795724463123456789ULL, buf, sizeof buf);
        is_str(buf, "2026-11-26T20:21:03.123456Z", "ISO 8601 UTC with microseconds");
        for (unsigned i = 0; i < 20000 && same; i++) {
                uint64_t sec;
                if (i < sizeof fixed / sizeof *fixed)
                        sec = fixed[i];
                else {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        sec = x % 18446744073ULL; /* as far as a uint64_t of ns goes: 2554 */
                }
                time_t t = (time_t) sec;
                struct tm tm;
                gmtime_r(&t, &tm);
                snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d.000000Z", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
                format_iso8601(sec * 1000000000ULL, buf, sizeof buf);
                if (strcmp(buf, want) != 0) {
                        printf("# %llu: %s, gmtime_r says %s\n", (unsigned long long) sec, buf, want);
                        same = false;
                }
        }
        ok(same, "format_iso8601 agrees with gmtime_r on 20,000 times from 1970 to 2554");
}

/* "did you mean" (issue 26) */
static void nearest(void) {
        static const char *const opts[] = {"memory", "memory-high", "wall-time", "cpu-time", "pids", "profile"};
        static const char *const cmds[] = {"run", "check", "profiles", "report", "ps", "stat", "top"};
        const char *n;

        ok(closest_distance("memroy", "memory") == 1, "a transposition is one step");
        ok(closest_distance("wall_time", "wall-time") == 0, "_ and - are the same");
        ok(closest_distance("MEMORY", "memory") == 0, "case is ignored");
        n = closest_word("memroy", opts, ELEMENTSOF(opts));
        ok(n && strcmp(n, "memory") == 0, "memroy -> memory");
        n = closest_word("wall_time", opts, ELEMENTSOF(opts));
        ok(n && strcmp(n, "wall-time") == 0, "wall_time -> wall-time");
        n = closest_word("cputime", opts, ELEMENTSOF(opts));
        ok(n && strcmp(n, "cpu-time") == 0, "cputime -> cpu-time");
        n = closest_word("runn", cmds, ELEMENTSOF(cmds));
        ok(n && strcmp(n, "run") == 0, "runn -> run");
        n = closest_word("rpeort", cmds, ELEMENTSOF(cmds));
        ok(n && strcmp(n, "report") == 0, "rpeort -> report");
        ok(closest_word("xyzzy", opts, ELEMENTSOF(opts)) == NULL, "nothing near: no suggestion");
        ok(closest_word("foo", cmds, ELEMENTSOF(cmds)) == NULL, "foo is not top");
        ok(closest_word("", cmds, ELEMENTSOF(cmds)) == NULL, "empty: no suggestion");
}

/* A kernel file listed record by record (a seq_file) hands out at most a
 * page per read and stops short at the record that would not fit: a short
 * read of a page's worth is not its end. /proc/self/maps with 300 mappings
 * of ours (lines of ~80 bytes, so a page never ends on a line's end by
 * chance) read into a large buffer must hold every one of them. Not
 * compared with a second read: the file changes between two (an ASan
 * build maps memory for the allocation in between). Before, read_fd_at0
 * stopped after the first page (the soft signal reached the first 681
 * pids of cgroup.procs): 4070 bytes, most of our mappings missing. */
static void seq_file_whole(void) {
        static char buf[256 * 1024];
        size_t len = 0;
        void *maps[300];
        int n = 0, r, found = 0;

        /* alternate protections, so the kernel cannot merge neighbours */
        for (; n < (int) ELEMENTSOF(maps); n++) {
                maps[n] = mmap(NULL, 4096, n % 2 ? PROT_READ : PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (maps[n] == MAP_FAILED)
                        break;
        }
        r = read_file_at(AT_FDCWD, "/proc/self/maps", buf, sizeof buf, &len);
        for (int i = 0; i < n; i++) {
                char needle[32];
                snprintf(needle, sizeof needle, "\n%lx-", (unsigned long) (uintptr_t) maps[i]);
                found += strstr(buf, needle) != NULL;
        }
        ok(r == 0 && n == (int) ELEMENTSOF(maps) && found == n && len > 3 * 4096,
           "read_file_at reads a seq_file longer than a page whole: %zu bytes, %d of our %d mappings in it", len, found,
           n);
        while (n-- > 0)
                munmap(maps[n], 4096);
}

int main(void) {
        seq_file_whole();
        nearest();
        iso8601();
        utf8();
        sizes();
        proc_stat();
        durations();
        cpus();
        counts();
        signals();
        names();
        formats();
        return tap_done();
}
