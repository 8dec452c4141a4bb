/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The job record (src/engine/placement/jobstate.c) on literal values: what leash writes
 * round-trips, the sweep's mark alone (an older leash's) still parses, and a
 * malformed or reordered value is refused as a whole. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "engine/placement/jobstate.h"
#include "tap.h"

int main(void) {
        struct leash_spec spec;
        struct jobstate j;
        char buf[JOBSTATE_MAX];
        int n;

        leash_spec_init(&spec);
        leash_spec_set_limit(&spec, LEASH_LIMIT_MEMORY, 536870912);
        leash_spec_set_limit(&spec, LEASH_LIMIT_WALL_TIME, 60000000000ULL);
        leash_spec_set_limit(&spec, LEASH_LIMIT_PIDS, LEASH_MAX);
        spec.sampling.limit[LEASH_FIG_DISK_BYTES] = 10485760;
        spec.sampling.interval_ns = 100000000;
        n = jobstate_format(&spec, "trial-7", 4242, 4026531836ULL, 1000, 1732350000123456789ULL, buf, sizeof buf);
        ok(n > 0, "format: %s", buf);
        is_str(buf,
               "pid=4242 pidns=4026531836 v=1 uid=1000 started_ns=1732350000123456789 name=trial-7 memory=536870912 "
               "pids=18446744073709551615 wall_time=60000000000 limit.disk=10485760 sample_ns=100000000",
               "format: the mark first, then the record, limits in their units");
        ok(jobstate_parse(buf, &j) == 0, "parse: what leash writes");
        is_u64((uint64_t) j.pid, 4242, "parse: pid");
        is_u64(j.pidns, 4026531836ULL, "parse: pidns");
        ok(j.record, "parse: a full record");
        is_u64(j.uid, 1000, "parse: uid");
        is_u64(j.started_ns, 1732350000123456789ULL, "parse: started_ns");
        is_str(j.name, "trial-7", "parse: name");
        is_u64(j.limit[LEASH_LIMIT_MEMORY], 536870912, "parse: memory");
        ok(j.limit_set == (1U << LEASH_LIMIT_MEMORY | 1U << LEASH_LIMIT_WALL_TIME | 1U << LEASH_LIMIT_PIDS),
           "parse: exactly the limits given are set");
        is_u64(j.limit[LEASH_LIMIT_PIDS], LEASH_MAX, "parse: pids=max kept as max");
        is_u64(j.mlimit[LEASH_FIG_DISK_BYTES], 10485760, "parse: limit.disk");
        is_u64(j.sample_ns, 100000000, "parse: sample_ns");

        ok(jobstate_parse("pid=77 pidns=4026531836", &j) == 0 && !j.record && j.pid == 77,
           "parse: the sweep's mark alone (no record)");
        ok(jobstate_parse("pid=77 pidns=1 v=1 uid=0 started_ns=5 name=x colour=blue", &j) == 0 && j.record,
           "parse: an unknown key is ignored");
        ok(jobstate_parse("pid=77 pidns=1 v=2 uid=0 name=x", &j) == 0 && !j.record,
           "parse: another version's fields are not taken as a record");

        static const char *const bad[] = {
                "",
                "pid=77",                            /* no pidns */
                "pidns=1 pid=77",                    /* the mark's order */
                "pid=0 pidns=1",                     /* pid 0 */
                "pid=-1 pidns=1",                    /* sign */
                "pid=2147483648 pidns=1",            /* above pid_t */
                "pid=77 pidns=1 ",                   /* trailing space */
                "pid=77  pidns=1",                   /* empty field */
                "pid=77 pidns=1 v=1 name=../etc",    /* not a job name */
                "pid=77 pidns=1 v=1 name=a@b",       /* '@' */
                "pid=77 pidns=1 v=1 memory=lots",    /* not a number */
                "pid=77 pidns=1 v=1 uid=4294967296", /* above uid_t */
                "pid=77 pidns=1 v=1 =5",             /* no key */
                "pid=77 pidns=1 v=1 memory",         /* no '=' */
                "pid=77 pidns=18446744073709551616", /* overflow */
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                struct jobstate keep = {.pid = 99};
                ok(jobstate_parse(bad[i], &keep) == -EINVAL && keep.pid == 99,
                   "parse refuses '%s' (and writes nothing)", bad[i]);
        }
        n = jobstate_format(&spec, "a@b", 1, 1, 0, 0, buf, sizeof buf);
        ok(n == -EINVAL, "format refuses a name that is not a job name");
        n = jobstate_format(&spec, "x", 1, 1, 0, 0, buf, 40);
        ok(n == -ENAMETOOLONG, "format says when the value does not fit");
        return tap_done();
}
