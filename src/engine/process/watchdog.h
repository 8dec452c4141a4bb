/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The watchdog: if the process holding a job dies (SIGKILL, a crash), the
 * whole job tree dies with it and its cgroup is removed. See watchdog.c.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* One watchdog process for many jobs of one process (a leash_config's) */
struct watchdog_pool;

/* A job's place in a pool: its own pool of one, or a slot of a shared one */
struct watchdog {
        struct watchdog_pool *pool; /* NULL when none watches the job */
        unsigned slot;
};

/* A pool to share (NULL, and 0, where watchdogs cannot be shared); no
 * process runs until a first job uses it. */
int watchdog_pool_new(struct watchdog_pool **ret);
/* Drops a reference; the last one ends its watchdog. */
void watchdog_pool_unref(struct watchdog_pool *p);

/* Watches this job: in a slot of shared (NULL: none) when this process may
 * use it, else with a watchdog of its own. The fds are borrowed: they must
 * stay open until watchdog_stop. */
int watchdog_start(struct watchdog *w, struct watchdog_pool *shared, int parent_fd, int job_fd, const char *name,
                   bool remove);
/* The job runs no more (its cgroup empty, what left it ended): a watchdog of
 * its own is told to end now (SIGKILL through its pidfd, not waited for), so
 * that its exit overlaps the job's last reads and the cgroup's removal, and
 * watchdog_stop's reap finds it gone. A shared one goes on watching. If the
 * holder dies in between, the empty cgroup is left to the next sweep. */
void watchdog_retire(struct watchdog *w);
/* Stops watching the job (the job is left alone); a watchdog of its own ends
 * (SIGKILL through its pidfd, reaped). */
void watchdog_stop(struct watchdog *w);
/* The process watching the job (0: none), which the job's kills skip. */
pid_t watchdog_pid(const struct watchdog *w);
