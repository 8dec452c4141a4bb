/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Limits enforced weaker than asked. Where the job's cgroup2 parent lacks a
 * controller, --memory becomes a per-process RLIMIT_AS and --pids, --cpus,
 * --swap, --memory-high are not enforced at all (cgroupfs_plan_enforcement).
 * A user must hear that before the job runs, not find it in a report: one
 * line per such limit saying what was asked, what enforces it, what that
 * means for the job, and what would do better on this very host (the
 * sampled whole-tree limits of sample.c need no controller). The CLI prints
 * these lines, Python turns them into leash.WeakLimitWarning, the Slurm
 * Prolog logs them, the report keeps them, and --strict lists them all.
 */
#include <stdio.h>
#include <string.h>

#include "../../basic/parse.h"
#include "../leash.h"

static void limit_value_text(const struct leash_spec *c, enum leash_limit l, char *buf, size_t size) {
        uint64_t v = c->limit[l];

        if (v == LEASH_MAX)
                snprintf(buf, size, "max");
        else if (l == LEASH_LIMIT_CPUS)
                snprintf(buf, size, "%g", (double) v / 1e6);
        else if (l == LEASH_LIMIT_PIDS)
                snprintf(buf, size, "%llu", (unsigned long long) v);
        else
                format_size(v, buf, size);
}

/* What the job may do that the limit was meant to stop, and the better
 * option on this host (a sampled limit over the whole tree: it kills, after
 * up to one interval, where the controller would have refused or throttled). */
static void weak_consequence(enum leash_limit l, enum leash_enforcer by, const char *v, bool profile, char *cons,
                             size_t cons_size, char *better, size_t better_size) {
        /* the sampled limit as an option or as a profile's keys */
        const char *lim = profile ? "limit = " : "--limit ", *smp = profile ? " with sample = " : " --sample ";

        switch (l) {
        case LEASH_LIMIT_MEMORY:
                if (by == LEASH_BY_NONE) /* Slurm's tasks: slurmstepd starts them, with no rlimit of leash's;
                                          * in mode nest Slurm's --mem may hold them (the note says) */
                        snprintf(cons, cons_size, "nothing of leash's holds the job's memory to %s", v);
                else
                        snprintf(cons, cons_size,
                                 "the processes together may use more than %s, and one that reserves address space "
                                 "(Java, Go, many threads) can fail far below it",
                                 v);
                snprintf(better, better_size, "%smemory=%s%s100ms (whole tree, sampled)", lim, v, smp);
                break;
        case LEASH_LIMIT_MEMORY_HIGH:
                snprintf(cons, cons_size, "nothing throttles the job above %s", v);
                snprintf(better, better_size, "%smemory=SIZE%s100ms (kills, does not throttle)", lim, smp);
                break;
        case LEASH_LIMIT_SWAP:
                snprintf(cons, cons_size, "the job may swap");
                snprintf(better, better_size, "a cgroup2 parent with the memory controller (see leash check)");
                break;
        case LEASH_LIMIT_PIDS:
                snprintf(cons, cons_size, "the job may start any number of processes and threads");
                snprintf(better, better_size, "%sthreads=%s%s100ms (kills, does not refuse the fork)", lim, v, smp);
                break;
        case LEASH_LIMIT_CPUS:
                snprintf(cons, cons_size, "the job may use every CPU");
                snprintf(better, better_size, "%scores_avg=%s%s1s (kills, does not throttle)", lim, v, smp);
                break;
        default:
                cons[0] = better[0] = '\0';
                break;
        }
}

/* The caller already asked for the better option here (leash.monitored's
 * max_concurrent_processes adds procs=N): a sampled limit at or below the
 * asked value covers it, and a warning would only point at what is there. */
static bool covered_by_sampling(const struct leash_spec *c, enum leash_limit l) {
        const uint64_t *m = c->sampling.limit;
        uint64_t v = c->limit[l];

        switch (l) {
        case LEASH_LIMIT_MEMORY:
                return m[LEASH_FIG_MEMORY] && m[LEASH_FIG_MEMORY] <= v;
        case LEASH_LIMIT_PIDS:
                return (m[LEASH_FIG_THREADS] && m[LEASH_FIG_THREADS] <= v) ||
                       (m[LEASH_FIG_PROCS] && m[LEASH_FIG_PROCS] <= v);
        case LEASH_LIMIT_CPUS:
                return m[LEASH_FIG_CORES_AVG] && m[LEASH_FIG_CORES_AVG] <= v;
        default:
                return false;
        }
}

/* The limits a controller should enforce: the others (time, rlimits) are
 * enforced as asked everywhere. */
static bool wants_cgroup(enum leash_limit l) {
        return l == LEASH_LIMIT_MEMORY || l == LEASH_LIMIT_MEMORY_HIGH || l == LEASH_LIMIT_SWAP ||
               l == LEASH_LIMIT_PIDS || l == LEASH_LIMIT_CPUS;
}

int leash_limit_weakness(const struct leash_spec *c, const enum leash_enforcer enforced[_LEASH_LIMIT_MAX],
                         const char *const note[_LEASH_LIMIT_MAX], enum leash_limit l, bool strict, char *buf,
                         size_t size) {
        static const char *const option[_LEASH_LIMIT_MAX] = {
                [LEASH_LIMIT_MEMORY] = "memory", [LEASH_LIMIT_MEMORY_HIGH] = "memory-high",
                [LEASH_LIMIT_SWAP] = "swap",     [LEASH_LIMIT_PIDS] = "pids",
                [LEASH_LIMIT_CPUS] = "cpus",
        };
        char v[32], cons[192], better[128];
        const char *by, *why;

        if ((unsigned) l >= _LEASH_LIMIT_MAX || !leash_spec_has(c, l) || !wants_cgroup(l) ||
            enforced[l] == LEASH_BY_CGROUP || (!strict && covered_by_sampling(c, l)))
                return 0;
        limit_value_text(c, l, v, sizeof v);
        weak_consequence(l, enforced[l], v, c->profile_only, cons, sizeof cons, better, sizeof better);
        by = enforced[l] == LEASH_BY_RLIMIT ? "is enforced only per process, by RLIMIT_AS" : "is not enforced";
        why = note[l] ? note[l] : "no controller for it in the job's cgroup2 parent";
        /* the note may carry its own "...: RLIMIT_AS instead" tail: keep its reason only */
        {
                size_t n = strcspn(why, ":(");
                while (n > 0 && why[n - 1] == ' ')
                        n--;
                char reason[224];
                snprintf(reason, sizeof reason, "%.*s", (int) (n < sizeof reason ? n : sizeof reason - 1), why);
                if (strict)
                        snprintf(buf, size,
                                 "--%s %s: cannot be enforced by a cgroup: %s; remedy: a cgroup parent that has the "
                                 "controller (--cgroup-parent; leash check lists them), or drop --strict and use %s",
                                 option[l], v, reason, better);
                else
                        snprintf(buf, size, "--%s %s %s (%s): %s; better here: %s", option[l], v, by, reason, cons,
                                 better);
        }
        return 1;
}
