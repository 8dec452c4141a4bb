/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sd-bus adapter: asks systemd's service manager for a transient scope
 * with Delegate=yes. The only file that includes <systemd/sd-bus.h>; it knows
 * no job and no cgroup layout.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* Whether systemd is the running service manager (PID 1), as sd_booted(3)
 * tells it: /run/systemd/system exists. */
bool systemd_booted(void);

/* Asks the service manager of this user (the system manager for euid 0, the
 * user manager otherwise) to start the transient scope `unit` (e.g.
 * "leash-run-42.scope") in `slice` with Delegate=yes holding `pid`, and waits
 * until its start job is done. 0 on success; -errno: -ENOPKG libsystemd
 * cannot be loaded, -ENOENT/-ECONNREFUSED/-EACCES no manager to talk to,
 * -EEXIST the unit exists, -ETIMEDOUT the job did not end in time, -EIO the
 * job ended otherwise than "done". what, when given, gets the manager's own
 * words on failure (an empty string when there are none). */
int systemd_start_scope(const char *unit, const char *slice, pid_t pid, char *what, size_t what_size);
