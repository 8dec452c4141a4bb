/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the job starts as and may do: identity, capabilities, no_new_privs,
 * syscall filter, environment, working directory, stdin and inherited fds.
 * Everything that can fail for a reason a user can fix (an unknown user, a
 * filter this host cannot build) is resolved in the parent by
 * sandbox_prepare(), before any cgroup exists; the child only makes the
 * system calls, in a fixed order (sandbox_child_setup, then
 * sandbox_child_seccomp right before exec).
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "caps.h"
#include "filter.h"
#include "sandbox-spec.h"

/* Where a child failed before it ran the job's code: mostly the sandbox's
 * own steps, in this order, after those spawn.c adds around them (the
 * adapter is below the spawner: spawn.c includes this, never the reverse). */
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

struct sandbox_plan {
        bool switch_ids;
        uid_t uid;
        gid_t gid;
        gid_t *groups;
        size_t n_groups;
        struct caps_plan caps;
        bool no_new_privs;
        struct filter_program filter; /* len 0: no filter */
        char **envp;                  /* NULL: leash's environment as it is */
        const char *chdir;
        bool no_stdin;
        bool close_fds;
};

/* In the parent: fills plan and the sandbox part of the result. -errno with
 * err filled (step and detail name the option and value). */
int sandbox_prepare(const struct leash_sandbox *in, struct sandbox_plan *ret, struct leash_sandbox_result *res,
                    struct leash_error *err);
void sandbox_plan_done(struct sandbox_plan *p);

/* In the child, after rlimits: bounding set, groups, gid, uid (re-arming the
 * parent-death signal, which a credential change clears), chdir, stdin, fds,
 * capabilities, no_new_privs. On failure *ret_step says which. The
 * environment (plan->envp) is the caller's to use: execvpe's, or environ in a
 * forked child. */
int sandbox_child_setup(const struct sandbox_plan *p, pid_t parent, enum spawn_step *ret_step);
/* In the child, the last step before exec. */
int sandbox_child_seccomp(const struct sandbox_plan *p, enum spawn_step *ret_step);
