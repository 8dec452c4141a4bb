/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-zleader PIDFILE [MIB]: a process whose main thread ends (pthread_exit) while
 * a second thread runs on. /proc/PID/stat then says state Z, as for a
 * zombie, though the process runs; its pidfd is not readable until the
 * last thread has gone. The second thread forks a child that sleeps, and
 * writes "PROCESS CHILD" (the two pids) to PIDFILE, then sleeps too; with
 * MIB it first touches that many MiB, which /proc/PID/smaps_rollup then
 * does not show (ESRCH) and /proc/PID/task/TID/smaps_rollup does. A walk
 * of the tree that takes state Z for "ended" neither signals the process
 * nor sees the child. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *pidfile;
static size_t mib;

static void *second(void *arg) {
        char tmp[4096];
        FILE *f;
        pid_t child;

        (void) arg;
        if (mib) {
                volatile char *p = malloc(mib << 20); /* volatile: the stores must happen */
                if (!p)
                        exit(2);
                for (size_t i = 0; i < mib << 20; i += 4096)
                        p[i] = 1;
        }
        child = fork();
        if (child == 0) {
                for (;;)
                        pause();
        }
        if (child < 0)
                exit(2);
        snprintf(tmp, sizeof tmp, "%s.tmp", pidfile);
        f = fopen(tmp, "we");
        if (!f)
                exit(2);
        fprintf(f, "%d %d\n", (int) getpid(), (int) child);
        if (fclose(f) != 0 || rename(tmp, pidfile) < 0)
                exit(2);
        for (;;)
                pause();
        return NULL;
}

int main(int argc, char **argv) {
        pthread_t t;

        if (argc < 2)
                return 2;
        pidfile = argv[1];
        mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
        if (pthread_create(&t, NULL, second, NULL) != 0)
                return 2;
        pthread_exit(NULL);
}
