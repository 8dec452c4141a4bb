/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The API tests' stand-in for a task its owner places: `sleep SECONDS` moved
 * into the cgroup cg (its cgroup.procs), as slurmstepd places a task. */
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* its pid, or -1 (killed and reaped) when it could not be placed */
static inline pid_t sleeper_in(const char *cg, const char *seconds) {
        char procs[4200], pidtxt[32];
        pid_t pid = fork();
        int fd;

        if (pid == 0) {
                execlp("sleep", "sleep", seconds, (char *) NULL);
                _exit(127);
        }
        if (pid < 0)
                return -1;
        snprintf(procs, sizeof procs, "%s/cgroup.procs", cg);
        snprintf(pidtxt, sizeof pidtxt, "%d", (int) pid);
        fd = open(procs, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, pidtxt, strlen(pidtxt)) <= 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                pid = -1;
        }
        if (fd >= 0)
                close(fd);
        return pid;
}
