/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-forkn K HOLD_MS: K children at once, each sleeping HOLD_MS. Exit 0 if
 * all K forks succeeded. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
        int k = argc > 1 ? atoi(argv[1]) : 1, forked = 0;
        long hold = argc > 2 ? strtol(argv[2], NULL, 10) : 500;

        for (int i = 0; i < k; i++) {
                pid_t pid = fork();
                if (pid == 0) {
                        struct timespec ts = {hold / 1000, (hold % 1000) * 1000000L};
                        nanosleep(&ts, NULL);
                        _exit(0);
                }
                if (pid < 0)
                        break;
                forked++;
        }
        while (wait(NULL) > 0)
                ;
        printf("forked=%d\n", forked);
        return forked == k ? 0 : 1;
}
