/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-undump MIB [SECONDS]: makes itself undumpable (PR_SET_DUMPABLE 0), as
 * a set-uid program or a careful daemon is, touches MIB MiB and sleeps
 * SECONDS (default 30). Its /proc/PID/smaps_rollup is then refused to its
 * own uid (EACCES: the ptrace check), its statm is not. */
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
        size_t mib;
        volatile char *p; /* volatile: the stores must happen, not be elided with the malloc */

        if (argc < 2 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return 2;
        mib = strtoul(argv[1], NULL, 10);
        p = malloc(mib << 20);
        if (!p)
                return 2;
        for (size_t i = 0; i < mib << 20; i += 4096)
                p[i] = 1;
        sleep(argc > 2 ? (unsigned) atoi(argv[2]) : 30);
        return 0;
}
