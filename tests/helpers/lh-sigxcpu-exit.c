/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-sigxcpu-exit: sleeps; on SIGXCPU writes "got XCPU" and exits 3. */
#include <signal.h>
#include <unistd.h>

static void on_xcpu(int sig) {
        (void) sig;
        (void) !write(1, "got XCPU\n", 9);
        _exit(3);
}

int main(void) {
        signal(SIGXCPU, on_xcpu);
        for (;;)
                pause();
}
