/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vm-hog: the VM tier's own probe, so that the kernel self-check (tests/vm/t/00-kernel.sh)
 * proves the boot, 9p and cgroup machinery without depending on leash or its helpers.
 *
 *   vm-hog alloc MIB      touch MIB MiB page by page; exit 0, 3 if malloc fails
 *   vm-hog fork N         start N sleeping children at once; print forked=K; exit 0 iff K == N
 *   vm-hog spin MS        burn CPU for MS ms of wall time; print cpu_ms=X (own CPU time)
 *   vm-hog children N MS  as a subreaper, run N children one after another, each burning
 *                         MS ms of CPU; print children_cpu_s, self_cpu_s and tree_cpu_s
 *                         (getrusage CHILDREN, SELF, and their sum: the CPU time of the
 *                         whole tree, this process's own fork and reap work included,
 *                         which is what a cgroup's cpu.stat counts)
 *
 * A C program rather than shell: busybox sh exits at the first failed fork, and shell
 * children left behind can hold pipes open.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long parse_long(const char *s) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno != 0 || end == s || *end != '\0' || v < 0) {
                fprintf(stderr, "vm-hog: bad number: %s\n", s);
                exit(2);
        }
        return v;
}

static double now_s(clockid_t clk) {
        struct timespec ts;

        clock_gettime(clk, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int do_alloc(long mib) {
        long page = sysconf(_SC_PAGESIZE);
        size_t len = (size_t) mib << 20;
        char *p = malloc(len);

        if (!p)
                return 3;
        for (size_t i = 0; i < len; i += (size_t) page)
                p[i] = 1;
        printf("touched=%ld\n", mib);
        return 0;
}

static int do_fork(long n) {
        long forked = 0;
        pid_t *pids = calloc((size_t) n + 1, sizeof(pid_t));

        if (!pids)
                return 3;
        for (long i = 0; i < n; i++) {
                pid_t pid = fork();

                if (pid < 0)
                        break;
                if (pid == 0) {
                        sleep(2);
                        _exit(0);
                }
                pids[forked++] = pid;
        }
        for (long i = 0; i < forked; i++) {
                kill(pids[i], SIGKILL);
                waitpid(pids[i], NULL, 0);
        }
        printf("forked=%ld\n", forked);
        free(pids);
        return forked == n ? 0 : 1;
}

static int do_spin(long ms) {
        double end = now_s(CLOCK_MONOTONIC) + (double) ms / 1000.0;
        volatile unsigned long x = 0;

        while (now_s(CLOCK_MONOTONIC) < end)
                for (int i = 0; i < 100000; i++)
                        x += (unsigned long) i;
        printf("cpu_ms=%.0f\n", now_s(CLOCK_PROCESS_CPUTIME_ID) * 1000.0);
        return 0;
}

static double rusage_s(int who) {
        struct rusage ru;

        getrusage(who, &ru);
        return (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int do_children(long n, long ms) {
        double children, self;

        prctl(PR_SET_CHILD_SUBREAPER, 1);
        for (long i = 0; i < n; i++) {
                pid_t pid = fork();

                if (pid < 0)
                        return 1;
                if (pid == 0) {
                        volatile unsigned long x = 0;
                        double end = now_s(CLOCK_THREAD_CPUTIME_ID) + (double) ms / 1000.0;

                        while (now_s(CLOCK_THREAD_CPUTIME_ID) < end)
                                for (int j = 0; j < 10000; j++)
                                        x += (unsigned long) j;
                        _exit(0);
                }
                waitpid(pid, NULL, 0);
        }
        while (wait(NULL) > 0)
                ;
        children = rusage_s(RUSAGE_CHILDREN);
        self = rusage_s(RUSAGE_SELF);
        printf("children_cpu_s=%.6f self_cpu_s=%.6f tree_cpu_s=%.6f\n", children, self, children + self);
        return 0;
}

int main(int argc, char **argv) {
        if (argc == 4 && strcmp(argv[1], "children") == 0)
                return do_children(parse_long(argv[2]), parse_long(argv[3]));
        if (argc != 3) {
                fprintf(stderr, "usage: vm-hog alloc MIB | fork N | spin MS | children N MS\n");
                return 2;
        }
        setvbuf(stdout, NULL, _IONBF, 0);
        if (strcmp(argv[1], "alloc") == 0)
                return do_alloc(parse_long(argv[2]));
        if (strcmp(argv[1], "fork") == 0)
                return do_fork(parse_long(argv[2]));
        if (strcmp(argv[1], "spin") == 0)
                return do_spin(parse_long(argv[2]));
        fprintf(stderr, "vm-hog: unknown mode: %s\n", argv[1]);
        return 2;
}
