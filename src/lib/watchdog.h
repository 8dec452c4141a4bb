/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The watchdog: if the process holding a job dies (SIGKILL, a crash), the
 * whole job tree dies with it and its cgroup is removed. See watchdog.c.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct watchdog {
        pid_t pid;
        int pidfd;      /* the watchdog's, -1 when none runs */
        int owner_fd;   /* pidfd of the process that owns the job */
        int parent_fd;  /* the job cgroup's parent */
        int job_fd;     /* the job cgroup */
        bool remove;    /* rmdir the job cgroup after killing it */
        char name[256]; /* the job cgroup's name in parent_fd */
        void *stack;    /* its own mapping, a guard page below */
        size_t stack_size;
};

/* Starts one for this job (the fds are borrowed: they must stay open until
 * watchdog_stop). */
int watchdog_start(struct watchdog *w, int parent_fd, int job_fd, const char *name, bool remove);
/* Ends it (SIGKILL through its pidfd, reaped); the job is left alone. */
void watchdog_stop(struct watchdog *w);
