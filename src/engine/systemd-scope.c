/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement's systemd step.
 *
 * Where systemd is PID 1 it owns the cgroup tree, and a program may write
 * only inside a unit that delegates its subtree (Delegate=yes). A process
 * with no delegated subtree (a login session's scope is root's and delegates
 * nothing; so is a system service) asks its manager through systemd.c for a
 * transient scope leash-NAME-PID.scope in leash.slice that holds it. Once the
 * start job is done, the process is in the scope's cgroup; placement.c then
 * treats the scope like any delegated subtree (placement_enter_subtree: the
 * process moves into its leaf, job cgroups go beside it).
 *
 * Once per process: the scope lives as long as a process is in it, and
 * systemd removes its whole subtree when the last one leaves. A later
 * decision of the same process (another config, a forked child) walks up from
 * the leaf to the scope, which systemd marked delegated (the user.delegate /
 * trusted.delegate xattr), and reuses it in placement's step 2 without asking.
 */
#include "systemd-scope.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/macro.h"
#include "host.h"
#include "systemd.h"

/* NAME: the process's comm ("run" for leash itself), reduced to the characters
 * a unit name keeps unescaped. */
static void unit_name(char *ret, size_t size) {
        char comm[32] = "";

        (void) read_file_at(AT_FDCWD, "/proc/self/comm", comm, sizeof comm, NULL);
        comm[strcspn(comm, "\n")] = '\0';
        if (!comm[0] || strcmp(comm, "leash") == 0)
                snprintf(comm, sizeof comm, "run");
        for (char *c = comm; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
                        *c = '_';
        snprintf(ret, size, "leash-%s-%d.scope", comm, (int) getpid());
}

int systemd_scope_acquire(bool user_manager, const char *slice, char **ret_cgroup_path, char *what, size_t what_size) {
        char unit[300], mount[4096], own[4096];
        const char *base;
        int r;

        unit_name(unit, sizeof unit);
        r = systemd_start_scope(user_manager, unit, slice, getpid(), what, what_size);
        if (r < 0)
                return r;
        r = host_cgroup2_mount_fast(mount, sizeof mount);
        if (r < 0)
                return r;
        r = host_own_cgroup(own, sizeof own);
        if (r < 0)
                return r;
        /* the job is done: the process is in the scope, or something moved it since */
        base = strrchr(own, '/');
        if (!base || strcmp(base + 1, unit) != 0) {
                if (what && what_size)
                        snprintf(what, what_size, "the start job is done but this process is in %s", own);
                return -ESRCH;
        }
        if (asprintf(ret_cgroup_path, "%s%s", mount, own) < 0)
                return -ENOMEM;
        return 0;
}

int systemd_scope_plan(bool user_manager, const char *mount, char *ret, size_t size) {
        unsigned uid = (unsigned) geteuid();
        int r = systemd_manager_reachable(user_manager);

        if (r < 0)
                return r;
        /* the manager's own cgroup: leash.slice's controllers follow the units
         * in it at the moment (none, io not yet enabled), the manager's are
         * what a Delegate=yes scope gets */
        if (user_manager)
                r = snprintf(ret, size, "%s/user.slice/user-%u.slice/user@%u.service", mount, uid, uid);
        else
                r = snprintf(ret, size, "%s", mount);
        return r < 0 || (size_t) r >= size ? -ENAMETOOLONG : 0;
}
