/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-children N CPU_MS: a subreaper running N children one after another,
 * each burning ~CPU_MS of CPU time; prints the ground truths
 * children_cpu_s=X (getrusage(RUSAGE_CHILDREN) user+system) and
 * tree_cpu_s=Y (the same plus its own RUSAGE_SELF: the whole job). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
        int n = argc > 1 ? atoi(argv[1]) : 10;
        long ms = argc > 2 ? strtol(argv[2], NULL, 10) : 4;
        struct rusage ru, self;

        prctl(PR_SET_CHILD_SUBREAPER, 1);
        for (int i = 0; i < n; i++) {
                pid_t pid = fork();
                if (pid == 0) {
                        struct timespec ts;
                        volatile unsigned long x = 0;
                        double end;
                        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
                        end = (double) ts.tv_sec + (double) ts.tv_nsec / 1e9 + (double) ms / 1000.0;
                        do {
                                for (int j = 0; j < 10000; j++)
                                        x += (unsigned long) j;
                                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
                        } while ((double) ts.tv_sec + (double) ts.tv_nsec / 1e9 < end);
                        _exit((int) (x & 0));
                }
                if (pid < 0)
                        return 1;
                waitpid(pid, NULL, 0);
        }
        while (wait(NULL) > 0)
                ;
        getrusage(RUSAGE_CHILDREN, &ru);
        getrusage(RUSAGE_SELF, &self);
        double children = (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                          (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
        double own = (double) (self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
                     (double) (self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e6;
        printf("children_cpu_s=%.6f\ntree_cpu_s=%.6f\n", children, children + own);
        return 0;
}
