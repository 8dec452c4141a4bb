/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-spin SECONDS [NPROC]: burn CPU for SECONDS of wall time in NPROC
 * processes; "inf" spins until killed. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
        double secs = argc > 1 && strcmp(argv[1], "inf") != 0 ? atof(argv[1]) : 1e18;
        int nproc = argc > 2 ? atoi(argv[2]) : 1;
        double end = now() + secs;
        volatile unsigned long x = 0;

        for (int i = 1; i < nproc; i++)
                if (fork() == 0)
                        break;
        while (now() < end)
                for (int i = 0; i < 100000; i++)
                        x += (unsigned long) i;
        while (wait(NULL) > 0)
                ;
        return (int) (x & 0); /* x is used: the loop is not optimised away */
}
