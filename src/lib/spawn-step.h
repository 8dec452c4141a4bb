/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a child failed before it ran the job's code: shared by spawn.c (which
 * makes the child and reports the step) and sandbox.c (whose steps these
 * mostly are), so that neither includes the other's header.
 */
#pragma once

enum spawn_step {
        SPAWN_STEP_NONE,
        SPAWN_STEP_CGROUP, /* fallback: moving itself into the job cgroup */
        SPAWN_STEP_RLIMIT,
        SPAWN_STEP_PDEATHSIG,
        SPAWN_STEP_SESSION, /* setsid: no controlling terminal */
        SPAWN_STEP_ISOLATE, /* isolate.c: namespaces, mounts, the init */
        SPAWN_STEP_EXEC,
        SPAWN_STEP_BOUNDING, /* sandbox.c, in this order */
        SPAWN_STEP_SETGROUPS,
        SPAWN_STEP_SETGID,
        SPAWN_STEP_SETUID,
        SPAWN_STEP_CHDIR,
        SPAWN_STEP_STDIN,
        SPAWN_STEP_FDS,
        SPAWN_STEP_CAPS,
        SPAWN_STEP_NO_NEW_PRIVS,
        SPAWN_STEP_SECCOMP,
};
