/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-sigfork DELAY_MS MAX DIR [PACE_US]: a main process that forks for as
 * long as it is not told to stop. It sleeps DELAY_MS, then forks children
 * as fast as it can, or one each PACE_US (at most MAX), until SIGXCPU
 * reaches it. Each child waits up to 60 s
 * for SIGXCPU of its own and, once it has it, creates DIR/got.PID. Once told,
 * the main process writes the number it forked to DIR/forked ("capped" after
 * it when MAX was reached first), waits for its children and exits.
 *
 * A launcher that signals the main process last, after the rest of the job,
 * lets it fork children in between that never get the signal: forked minus
 * the got.* files.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t told;

static void on_xcpu(int sig) {
        (void) sig;
        told = 1;
}

static void child(const char *dir) {
        sigset_t set;
        struct timespec limit = {60, 0};
        char path[4096];
        int fd, sig;

        sigemptyset(&set);
        sigaddset(&set, SIGXCPU);
        do /* blocked since before the fork: a signal sent meanwhile is pending */
                sig = sigtimedwait(&set, NULL, &limit);
        while (sig < 0 && errno == EINTR);
        if (sig != SIGXCPU)
                _exit(1);
        snprintf(path, sizeof path, "%s/got.%d", dir, (int) getpid());
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        _exit(fd < 0);
}

int main(int argc, char **argv) {
        sigset_t xcpu, old;
        struct sigaction sa;
        long delay_ms, max, pace_us, n = 0;
        char path[4096];
        FILE *f;

        if (argc != 4 && argc != 5)
                return fprintf(stderr, "usage: lh-sigfork DELAY_MS MAX DIR [PACE_US]\n"), 2;
        delay_ms = atol(argv[1]);
        max = atol(argv[2]);
        pace_us = argc == 5 ? atol(argv[4]) : 0;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_xcpu;
        sigaction(SIGXCPU, &sa, NULL);
        sigemptyset(&xcpu);
        sigaddset(&xcpu, SIGXCPU);
        {
                struct timespec d = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
                while (nanosleep(&d, &d) < 0 && errno == EINTR && !told)
                        ;
        }
        while (!told && n < max) {
                pid_t pid;

                sigprocmask(SIG_BLOCK, &xcpu, &old);
                pid = fork();
                if (pid == 0)
                        child(argv[3]);
                if (pid > 0)
                        n++;
                sigprocmask(SIG_SETMASK, &old, NULL); /* a pending SIGXCPU is handled here */
                if (pace_us > 0 && !told) {
                        struct timespec p = {pace_us / 1000000, (pace_us % 1000000) * 1000};
                        (void) nanosleep(&p, NULL);
                }
        }
        snprintf(path, sizeof path, "%s/forked", argv[3]);
        f = fopen(path, "we");
        if (!f)
                return 1;
        fprintf(f, "%ld%s\n", n, n >= max ? " capped" : "");
        fclose(f);
        /* each child exits once it has the signal: the job ends then, not
         * at the grace's end (a child the signal missed keeps it waiting) */
        while (wait(NULL) > 0 || errno == EINTR)
                ;
        return 0;
}
