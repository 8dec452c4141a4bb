/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An AutoML/HPO-style loop: call a function many times (1,000 by default),
 * each call forked into its own job cgroup under a memory and a CPU-time
 * limit, and print how each call ended. Most trials compute and return; one
 * in a hundred allocates far past the memory limit, one in a hundred spins
 * until the CPU-time limit ends it.
 *
 *   hpo-loop [CGROUP_PARENT [CALLS]]
 *
 * Build: cc hpo-loop.c $(pkg-config --cflags --libs libleash)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <leash/leash.h>

/* The function under test: its return value is the trial's exit status. */
static int trial(unsigned i) {
        volatile unsigned long sum = 0;

        if (i % 100 == 17) { /* far past the memory limit */
                size_t n = (size_t) 256 << 20;
                volatile char *p = malloc(n); /* volatile: the stores must happen, not be elided with the malloc */
                if (!p)
                        return 2;                    /* refused (an rlimit where there is no memory controller) */
                for (size_t k = 0; k < n; k += 4096) /* or OOM-killed by memory.max */
                        p[k] = 1;
                free((void *) p);
                return 0;
        }
        if (i % 100 == 42) /* a runaway */
                for (;;)
                        sum++;
        for (unsigned k = 0; k < 1000 * (i % 7 + 1); k++)
                sum += k * i;
        return (int) (sum % 2);
}

static int set(struct leash_config *c, const char *key, const char *value) {
        struct leash_error err = {0};
        int r = leash_config_set(c, key, value, &err);
        if (r < 0)
                fprintf(stderr, "hpo-loop: %s=%s: %s %s\n", key, value, err.detail, strerror(-r));
        return r;
}

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
        unsigned calls = argc > 2 ? (unsigned) strtoul(argv[2], NULL, 10) : 1000;
        unsigned count[_LEASH_REASON_MAX] = {0}, failed = 0;
        struct leash_config *c = NULL;
        double t0;

        if (leash_config_new(&c) < 0)
                return 1;
        if (set(c, "memory", "64M") < 0 || set(c, "cpu-time", "200ms") < 0 || set(c, "grace", "100ms") < 0 ||
            set(c, "wall-time", "10s") < 0 || set(c, "name", "trial") < 0 ||
            (argc > 1 && argv[1][0] && set(c, "cgroup-parent", argv[1]) < 0))
                return 1;
        t0 = now();
        for (unsigned i = 0; i < calls; i++) {
                struct leash_error err = {0};
                struct leash_job *j = NULL;
                uint64_t cpu, peak;
                pid_t pid;
                int r;

                r = leash_job_new(c, &j, &err);
                if (r < 0) {
                        fprintf(stderr, "hpo-loop: %s: %s: %s\n", err.step, err.detail, strerror(-r));
                        return 1;
                }
                fflush(stdout); /* the child must not write our buffer twice */
                pid = leash_job_fork(j, &err);
                if (pid == 0)
                        _exit(trial(i));
                if (pid < 0 && !leash_job_ended(j)) {
                        fprintf(stderr, "hpo-loop: %s: %s\n", err.step, strerror(-pid));
                        failed++;
                } else if (pid > 0 && leash_job_wait(j) < 0)
                        failed++;
                if (leash_job_finish(j, &err) < 0)
                        failed++;
                cpu = leash_job_usage(j, LEASH_USAGE_CPU_US);
                peak = leash_job_usage(j, LEASH_USAGE_MEMORY_PEAK);
                count[leash_job_reason(j)]++;
                printf("trial %4u: %-9s exit %3d  cpu %.3f s  peak %s%.1f MiB\n", i,
                       leash_reason_to_string(leash_job_reason(j)), leash_job_exit_code(j),
                       cpu == LEASH_NULL ? 0.0 : (double) cpu / 1e6, peak == LEASH_NULL ? "~" : "",
                       peak == LEASH_NULL ? 0.0 : (double) peak / 1048576.0);
                leash_job_free(j);
        }
        printf("calls %u in %.2f s:", calls, now() - t0);
        for (int r = 0; r < _LEASH_REASON_MAX; r++)
                if (count[r])
                        printf(" %s %u", leash_reason_to_string((enum leash_reason) r), count[r]);
        printf("; leash failures %u\n", failed);
        leash_config_free(c);
        return failed ? 1 : 0;
}
