/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-ignore: ignores XCPU, TERM, INT and HUP and sleeps until killed.
 * Writes "ready" to stdout once the dispositions are in place. */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
        signal(SIGXCPU, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        printf("ready\n");
        fflush(stdout);
        for (;;)
                pause();
}
