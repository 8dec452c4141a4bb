/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lh-escape PIDFILE: double fork + setsid; the grandchild ignores every
 * catchable signal, writes its pid to PIDFILE and sleeps. The main process
 * exits 0 once the file is written. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
        int p[2];
        char c;
        pid_t pid;

        if (argc < 2 || pipe(p) < 0)
                return 2;
        pid = fork();
        if (pid == 0) {
                setsid();
                if (fork() == 0) {
                        char tmp[4096];
                        FILE *f;
                        for (int s = 1; s < NSIG; s++)
                                if (s != SIGKILL && s != SIGSTOP)
                                        signal(s, SIG_IGN);
                        snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
                        f = fopen(tmp, "w");
                        if (!f)
                                _exit(2);
                        fprintf(f, "%d\n", (int) getpid());
                        fclose(f);
                        rename(tmp, argv[1]);
                        if (write(p[1], "x", 1) != 1)
                                _exit(2);
                        close(p[0]);
                        close(p[1]);
                        close(0);
                        close(1);
                        close(2);
                        for (;;)
                                pause();
                }
                _exit(0);
        }
        close(p[1]);
        waitpid(pid, NULL, 0);
        if (read(p[0], &c, 1) != 1)
                return 2;
        return 0;
}
