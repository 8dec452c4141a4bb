/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sentinel: a process of leash's left in the caller's cgroup when the
 * caller is moved out of it (sentinel.c).
 */
#pragma once

/* Leaves a sentinel in this process's current cgroup: it passes a SIGTERM or
 * SIGHUP sent to it (the stop of the unit that cgroup is) on to this process
 * as SIGTERM, unless this process is still in that cgroup or below it (the
 * stop signals it then), and exits with this process. Call it before the
 * move. Returns 0 or -errno (no sentinel left). */
int sentinel_start(void);
