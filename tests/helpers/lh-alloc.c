/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-alloc MIB [HOLD_MS]: allocate and touch exactly MIB MiB, hold, exit 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

int main(int argc, char **argv) {
        size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
        long hold = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
        size_t len = mib << 20;
        char *p;

        if (len) {
                p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (p == MAP_FAILED) {
                        perror("lh-alloc: mmap");
                        return 3;
                }
                for (size_t i = 0; i < len; i += 4096)
                        p[i] = 1;
        }
        if (hold > 0) {
                struct timespec ts = {hold / 1000, (hold % 1000) * 1000000L};
                nanosleep(&ts, NULL);
        }
        return 0;
}
