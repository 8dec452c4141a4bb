/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The stale-cgroup sweep and the mark that lets it tell leash's job cgroups
 * from everything else under the parent (see sweep.c). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* Marks a job cgroup as leash's, right after mkdir: an xattr with our pid and
 * pid namespace (trusted.leash with CAP_SYS_ADMIN, else user.leash). A
 * failure only means the cgroup will never be swept. */
int sweep_mark(int job_fd);
/* NAME@PID or NAME@PID.N exactly: true and the PID. */
bool sweep_name_parse(const char *dirname, pid_t *ret_pid);
/* Kills and removes the job cgroups of this parent that leash made and whose
 * leash, in our pid namespace, has died. Returns how many. */
int sweep_stale(int parent_fd);
