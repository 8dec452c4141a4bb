/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-fn PARENT MODE: fork a C function into a libleash job under PARENT and
 * print the job's JSON report (public API only, libleash.so.0). Modes:
 *   mem    memory=64M; the function touches 200 MiB
 *   pids   pids=20; the function forks 100 sleeping children, exits 1 when
 *          a fork is refused
 *   cpu    cpus=0.5, wall-time=2s; the function spins until killed
 *   true   no limit; the function returns 0
 * The VM tier (tests/vm/t/50-function.sh) checks the reports.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <leash/leash.h>

static int fn_mem(void) {
        size_t n = (size_t) 200 << 20;
        volatile char *p = malloc(n); /* volatile: the stores must happen, not be elided with the malloc */
        if (!p)
                return 2;
        for (size_t i = 0; i < n; i += 4096)
                p[i] = 1;
        return 0;
}

static int fn_pids(void) {
        int refused = 0;
        for (int i = 0; i < 100; i++) {
                pid_t c = fork();
                if (c == 0) {
                        pause();
                        _exit(0);
                }
                if (c < 0)
                        refused++;
        }
        return refused ? 1 : 0;
}

static int fn_cpu(void) {
        volatile unsigned long x = 0;
        for (;;)
                x++;
        return 0;
}

int main(int argc, char **argv) {
        struct leash_config *c = NULL;
        struct leash_job *j = NULL;
        struct leash_error err = {0};
        const char *mode;
        char *text = NULL;
        pid_t pid;
        int r = 0;

        if (argc < 3)
                return fprintf(stderr, "usage: lh-fn PARENT mem|pids|cpu|true\n"), 2;
        mode = argv[2];
        if (leash_config_new(&c) < 0 || leash_config_set(c, "cgroup-parent", argv[1], &err) < 0 ||
            leash_config_set(c, "name", mode, &err) < 0 || leash_config_set(c, "grace", "200ms", &err) < 0)
                return 1;
        if (strcmp(mode, "mem") == 0)
                r = leash_config_set(c, "memory", "64M", &err);
        else if (strcmp(mode, "pids") == 0)
                r = leash_config_set(c, "pids", "20", &err);
        else if (strcmp(mode, "cpu") == 0)
                r = leash_config_set(c, "cpus", "0.5", &err) < 0 ? -1 : leash_config_set(c, "wall-time", "2s", &err);
        if (r < 0 || leash_job_new(c, &j, &err) < 0) {
                fprintf(stderr, "lh-fn: %s: %s: %s\n", err.step ? err.step : "config", err.detail, strerror(err.error));
                return 1;
        }
        fflush(stdout);
        pid = leash_job_fork(j, &err);
        if (pid == 0)
                _exit(strcmp(mode, "mem") == 0    ? fn_mem()
                      : strcmp(mode, "pids") == 0 ? fn_pids()
                      : strcmp(mode, "cpu") == 0  ? fn_cpu()
                                                  : 0);
        if (pid < 0 || leash_job_wait(j) < 0 || leash_job_finish(j, &err) < 0 ||
            leash_job_report(j, LEASH_FORMAT_JSON, &text) < 0) {
                fprintf(stderr, "lh-fn: %s\n", err.step ? err.step : "the job");
                return 1;
        }
        fputs(text, stdout);
        free(text);
        leash_job_free(j);
        leash_config_free(c);
        return 0;
}
