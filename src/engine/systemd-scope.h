/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement's systemd step (step 3 of placement.c): a scope of this process's
 * own, asked of the service manager through the sd-bus adapter (systemd.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Asks the user manager (user_manager true) or the system manager for
 * leash-NAME-PID.scope in slice with Delegate=yes holding this process, waits
 * for the start job, and returns in *ret_cgroup_path (malloc'd) the scope's
 * cgroup, absolute under the cgroup2 mount, which the process is now in.
 * -ENOENT/-ECONNREFUSED/-EACCES no manager reachable, -ENOPKG no
 * libsystemd, another -errno when the manager refused; what (may be NULL)
 * gets the manager's own words. */
int systemd_scope_acquire(bool user_manager, const char *slice, char **ret_cgroup_path, char *what, size_t what_size);

/* For a decision that makes nothing (check, ps): the manager's own cgroup,
 * whose controllers are what its Delegate=yes scope would get. 0, or -errno
 * when no manager is reachable. */
int systemd_scope_plan(bool user_manager, const char *mount, char *ret, size_t size);
