/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-steps alloc MIB STEPS STEP_MS: allocate and touch MIB MiB more at each of
 *          STEPS steps STEP_MS apart, then hold one more step and exit 0.
 * lh-steps write FILE MIB STEPS STEP_MS: the same, writing MIB MiB more to
 *          FILE at each step (fsync'd, so the blocks are allocated).
 * A ground truth for the time series: the figure must rise in steps. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void nap(long ms) {
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
        int write_mode = argc > 1 && strcmp(argv[1], "write") == 0;
        int a = write_mode ? 3 : 2, fd = -1;
        size_t mib, steps;
        long step_ms;
        static char block[1 << 20];

        if (argc != a + 3 || (!write_mode && strcmp(argv[1], "alloc") != 0)) {
                fprintf(stderr, "usage: lh-steps alloc MIB STEPS STEP_MS | write FILE MIB STEPS STEP_MS\n");
                return 2;
        }
        mib = strtoul(argv[a], NULL, 10);
        steps = strtoul(argv[a + 1], NULL, 10);
        step_ms = strtol(argv[a + 2], NULL, 10);
        if (write_mode) {
                fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0) {
                        perror("lh-steps: open");
                        return 3;
                }
                memset(block, 'x', sizeof block);
        }
        for (size_t s = 0; s < steps; s++) {
                if (write_mode) {
                        for (size_t i = 0; i < mib; i++)
                                if (write(fd, block, sizeof block) != (ssize_t) sizeof block) {
                                        perror("lh-steps: write");
                                        return 3;
                                }
                        fsync(fd);
                } else {
                        char *p = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                        if (p == MAP_FAILED) {
                                perror("lh-steps: mmap");
                                return 3;
                        }
                        for (size_t i = 0; i < mib << 20; i += 4096)
                                p[i] = 1;
                }
                printf("step %zu\n", s + 1);
                fflush(stdout);
                nap(step_ms);
        }
        nap(step_ms);
        return 0;
}
