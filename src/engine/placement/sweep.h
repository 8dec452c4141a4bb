/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The stale-cgroup sweep and the mark that lets it tell leash's job cgroups
 * from everything else under the parent (see sweep.c; the mark is written by jobstate.c). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* NAME@PID or NAME@PID.N exactly: true and the PID. */
bool sweep_name_parse(const char *dirname, pid_t *ret_pid);
/* Kills and removes the job cgroups of this parent that leash made and whose
 * leash, in our pid namespace (pidns: from jobstate_own_pidns), has died.
 * Returns how many. */
int sweep_stale(int parent_fd, unsigned long long pidns);
