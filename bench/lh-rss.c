/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-rss CMD...: runs CMD and prints its peak RSS in KiB (wait4 ru_maxrss).
 * lh-rss --noop: does nothing (a job smaller than any real one).
 *
 * Built static and tiny on purpose. The kernel records, at exec, the peak RSS
 * of the address space being replaced, and a forked child starts with a copy
 * of its parent's: a child of a big parent (the harness, python, a shell)
 * reports at least the parent's RSS, whatever it runs. Spawned from this
 * program, CMD's ru_maxrss is its own peak, or that of the children it
 * reaped, and `lh-rss --noop` as the job keeps the job's share negligible.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
        struct rusage ru;
        int status;
        pid_t pid;

        if (argc > 1 && strcmp(argv[1], "--noop") == 0)
                return 0;
        if (argc < 2) {
                fprintf(stderr, "usage: lh-rss CMD... | lh-rss --noop\n");
                return 2;
        }
        pid = fork();
        if (pid == 0) {
                execv(argv[1], argv + 1);
                _exit(127);
        }
        if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
                return perror("lh-rss"), 2;
        printf("maxrss_kb=%ld status=%d\n", ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
        return 0;
}
