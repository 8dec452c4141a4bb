/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-pidreuse PID SECONDS: makes a process of its own that has pid PID, a pid
 * that was just freed (its process exited and was reaped), by running the
 * pid allocator round: children that exit at once until the last pid handed
 * out is just below PID, then one fork at a time. That child (the caller's "victim",
 * with this helper's uid) sleeps until killed; the helper prints its pid
 * and exits 0. Exit 1 ("miss" on stdout) when another process took PID
 * first or SECONDS passed; 2 on bad arguments.
 * lh-pidreuse --rate: prints how many pids a second the round takes here
 * (2000 children that exit at once, timed). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

/* one child that exits at once, reaped: the pid it had, or -1 */
static __attribute__((noinline)) pid_t one_round(void) {
        pid_t pid = vfork();
        if (pid == 0)
                _exit(0);
        if (pid > 0)
                (void) waitpid(pid, NULL, 0);
        return pid;
}

int main(int argc, char **argv) {
        char *end;
        long target, seconds;
        double deadline;
        pid_t pid;

        if (argc == 2 && strcmp(argv[1], "--rate") == 0) {
                double t = now_s();
                for (int i = 0; i < 2000; i++)
                        (void) one_round();
                printf("%.0f\n", 2000.0 / (now_s() - t));
                return 0;
        }
        if (argc != 3)
                return 2;
        target = strtol(argv[1], &end, 10);
        if (*end || target <= 1)
                return 2;
        seconds = strtol(argv[2], &end, 10);
        if (*end || seconds <= 0)
                return 2;
        deadline = now_s() + (double) seconds;
        /* round to just below target (another process may hold a pid or two
         * right under it) */
        for (unsigned long n = 0;; n++) {
                pid = one_round();
                if (pid < 0) {
                        if (errno == EAGAIN)
                                continue;
                        perror("vfork");
                        return 1;
                }
                if (pid < target && pid >= target - 16)
                        break;
                if ((n & 1023) == 0 && now_s() > deadline) {
                        printf("miss\n");
                        return 1;
                }
        }
        /* then one fork at a time: the child that is target stays */
        for (;;) {
                pid = fork();
                if (pid == 0) {
                        if (getpid() == target) {
                                /* holds none of the caller's pipes open */
                                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                                if (null >= 0) {
                                        (void) dup2(null, 0);
                                        (void) dup2(null, 1);
                                        (void) dup2(null, 2);
                                }
                                for (;;)
                                        pause();
                        }
                        _exit(0);
                }
                if (pid == target)
                        break;
                if (pid > 0)
                        (void) waitpid(pid, NULL, 0);
                if (pid < 0 || pid > target || pid < target - 16) {
                        printf("miss\n"); /* passed it: another process has it */
                        return 1;
                }
        }
        printf("%d\n", (int) pid);
        return 0;
}
