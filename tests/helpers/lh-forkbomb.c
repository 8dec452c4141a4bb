/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-forkbomb: every process forks until a fork fails; the first failure
 * anywhere ends the bomb (children pause until killed). Prints the count of
 * the main process's own forks and exits 1 when a fork was refused. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
        int n = 0;
        for (;;) {
                pid_t pid = fork();
                if (pid < 0) {
                        printf("forks=%d failed: %s\n", n, strerror(errno));
                        fflush(stdout);
                        return 1;
                }
                if (pid == 0) {
                        /* the child keeps bombing, but never returns to print */
                        for (;;) {
                                if (fork() < 0)
                                        pause();
                        }
                }
                n++;
        }
}
