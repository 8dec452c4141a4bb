/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job cgroup's boundary crossed the wrong way (issue 9.4): processes of
 * the job that left it (escapees), and leash pulled into it. See escape.c.
 */
#pragma once

#include <stdbool.h>

struct leash_job;
struct placement_cache;

/* Leash's own cgroup, where it goes back to if the job pulls it in, into
 * j->home: before the job starts. Kept when j->home is already set (the
 * placement decision of this job read it); else cache: a config's (its
 * first job in this process read /proc/self/cgroup), or NULL: read now. */
void escape_home_find(struct leash_job *j, struct placement_cache *cache);
/* Opens it (O_PATH) under the cgroup2 mount, r.cgroup's first mount_len
 * bytes; failing leaves the guard without a home (it goes back to the
 * root). Once; a new job's as it starts, beside its child's setup: a job
 * that renamed or removed it first sends leash back to the root, which it
 * could make happen later as well by removing it. */
void escape_home_open(struct leash_job *j);
/* Before leash freezes, kills or waits for the job cgroup: 0 when leash is
 * outside it (moved back if the job had put it or its watchdog inside, which
 * the report records), -errno when it is inside and cannot leave (j->stuck:
 * the cgroup is then never frozen or killed as a whole). */
int escape_guard(struct leash_job *j);
/* Looks through the job's process tree for processes outside its cgroup,
 * names them in the report and sends sig (0: none) to each through a pidfd.
 * Returns how many live ones were found. */
int escape_scan(struct leash_job *j, int sig);
/* Where the main process ended (its zombie, before it is reaped): outside the
 * job cgroup, it is named as escaped. code and status: waitid's si_code, si_status. */
void escape_check_main(struct leash_job *j, int code, int status);
/* After the job ended: kills every escapee still alive (rounds, until a look
 * finds none), waits for them (bounded) and settles how each ended. True
 * when its first look found nothing to do (none alive, none reaped).
 * *ret_killed: more than 0 when it signalled a live one (a count of finds
 * over its rounds, not of processes: one may be found twice). */
bool escape_finish(struct leash_job *j, unsigned *ret_killed);
/* Closes what escape.c holds. */
void escape_close(struct leash_job *j);
/* A path relative to the cgroup2 root is the job cgroup or below it. */
bool escape_in_job(const struct leash_job *j, const char *rel);
