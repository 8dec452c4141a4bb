/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-truth PARENT HOLD_MIB KIND ARG [KEY=VALUE...]: the truth matrix's libleash
 * caller (tests/truth/matrix.py). It touches HOLD_MIB MiB of its own, forks a C
 * function into a libleash job (public API only, libleash.so.0; PARENT "-"
 * names none) with the settings KEY=VALUE, and prints the job's JSON report on
 * stdout and, last on stderr, its ground truth measured around the call: the
 * wall time (CLOCK_MONOTONIC) and the CPU time of its reaped children
 * (RUSAGE_CHILDREN). KIND: spin (ARG s of CPU), sleep (ARG s), alloc (touch
 * ARG MiB; exit 3 when the allocation is refused).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <leash/leash.h>

static double now(clockid_t id) {
        struct timespec ts;
        clock_gettime(id, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static double children_cpu(void) {
        struct rusage ru;
        getrusage(RUSAGE_CHILDREN, &ru);
        return (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* what touch() allocated, held to the end: the caller's ballast and the
 * function's block are meant to stay (LeakSanitizer must not count them) */
static volatile char *touched[2];

static int touch(size_t mib) {
        volatile char *p = mib ? malloc(mib << 20) : NULL; /* volatile: the stores must happen */
        if (mib && !p)
                return 3;
        touched[touched[0] != NULL] = p;
        for (size_t i = 0; i < (mib << 20); i += 4096)
                p[i] = 1;
        return 0;
}

static int function(const char *kind, double arg) {
        if (strcmp(kind, "alloc") == 0)
                return touch((size_t) arg);
        if (strcmp(kind, "sleep") == 0) {
                struct timespec ts = {(time_t) arg, (long) ((arg - (double) (time_t) arg) * 1e9)};
                nanosleep(&ts, NULL);
                return 0;
        }
        for (double t0 = now(CLOCK_PROCESS_CPUTIME_ID); now(CLOCK_PROCESS_CPUTIME_ID) - t0 < arg;)
                ;
        return 0;
}

static int configure(struct leash_config *c, int argc, char **argv, struct leash_error *err) {
        if (strcmp(argv[1], "-") != 0 && leash_config_set(c, "cgroup-parent", argv[1], err) < 0)
                return -1;
        for (int i = 5; i < argc; i++) {
                char *eq = strchr(argv[i], '=');
                if (!eq)
                        return -1;
                *eq = '\0';
                if (leash_config_set(c, argv[i], eq + 1, err) < 0)
                        return -1;
        }
        return 0;
}

int main(int argc, char **argv) {
        struct leash_config *c = NULL;
        struct leash_job *j = NULL;
        struct leash_error err = {0};
        double t0, cpu0;
        char *text = NULL;
        pid_t pid;

        if (argc < 5)
                return fprintf(stderr, "usage: lh-truth PARENT HOLD_MIB spin|sleep|alloc ARG [KEY=VALUE...]\n"), 2;
        if (touch(strtoul(argv[2], NULL, 10)) != 0 || leash_config_new(&c) < 0 || configure(c, argc, argv, &err) < 0 ||
            leash_job_new(c, &j, &err) < 0) {
                fprintf(stderr, "lh-truth: %s: %s: %s\n", err.step ? err.step : "config", err.detail,
                        strerror(err.error));
                return 1;
        }
        fflush(stdout);
        t0 = now(CLOCK_MONOTONIC);
        cpu0 = children_cpu();
        pid = leash_job_fork(j, &err);
        if (pid == 0)
                _exit(function(argv[3], strtod(argv[4], NULL)));
        if (pid < 0 || leash_job_wait(j) < 0 || leash_job_finish(j, &err) < 0 ||
            leash_job_report(j, LEASH_FORMAT_JSON, &text) < 0) {
                fprintf(stderr, "lh-truth: %s\n", err.step ? err.step : "the job");
                return 1;
        }
        fputs(text, stdout);
        fprintf(stderr, "truth wall=%.6f cpu=%.6f\n", now(CLOCK_MONOTONIC) - t0, children_cpu() - cpu0);
        free(text);
        leash_job_free(j);
        leash_config_free(c);
        return 0;
}
