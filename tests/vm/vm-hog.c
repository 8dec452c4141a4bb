/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vm-hog: the VM tier's own probe, so that the kernel self-check (tests/vm/t/00-kernel.sh)
 * proves the boot, 9p and cgroup machinery without depending on leash or its helpers.
 *
 *   vm-hog alloc MIB      touch MIB MiB page by page; exit 0, 3 if malloc fails
 *   vm-hog fork N         start N sleeping children at once; print forked=K; exit 0 iff K == N
 *   vm-hog spin MS        burn CPU for MS ms of wall time; print cpu_ms=X (own CPU time)
 *
 * A C program rather than shell: busybox sh exits at the first failed fork, and shell
 * children left behind can hold pipes open.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(int argc, char **argv) {
        if (argc != 3) {
                fprintf(stderr, "usage: vm-hog alloc MIB | fork N | spin MS\n");
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
