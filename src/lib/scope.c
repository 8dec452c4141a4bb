/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The systemd step of placement.
 *
 * Where systemd is PID 1 it owns the cgroup tree, and a program may write
 * only inside a unit that delegates its subtree (Delegate=yes). So a process
 * that needs job cgroups and has no delegated subtree asks its service
 * manager (systemd.c: the user manager for an ordinary user, the system
 * manager for root) for a transient scope leash-NAME-PID.scope in
 * leash.slice, holding itself. Once the start job is done the process is in
 * the scope's cgroup; it then moves into a leaf of its own, "supervisor"
 * (cgroup v2 lets a cgroup with processes have no domain-controlled children:
 * "no internal processes"), and job cgroups are made beside that leaf, so the
 * scope's subtree_control can hand them every delegated controller.
 *
 * Once per process: the scope belongs to the process (its lifetime ends when
 * its last process leaves it, and systemd then removes the whole subtree), so
 * every later job of the same process (Python's leash.limit, a libleash
 * program) reuses it: the path is kept behind a mutex, and reused only while
 * /proc/self/cgroup still says the process is in that leaf (a fork()ed child
 * is too, and may use it; a process something moved elsewhere asks again).
 */
#include "scope.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/macro.h"
#include "host.h"
#include "systemd.h"

#define SCOPE_LEAF "supervisor"

static pthread_mutex_t scope_lock = PTHREAD_MUTEX_INITIALIZER;
static char scope_path[4096]; /* relative to the cgroup2 root: "/leash.slice/leash-run-42.scope" */
static char scope_name[256];

/* NAME of the unit: the process's comm, "run" for leash itself, reduced to
 * the characters a unit name keeps unescaped. */
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

/* Whether the process is still in the leaf of the scope it has. */
static bool still_in_leaf(void) {
        char own[4096], want[4200];
        if (!scope_path[0] || host_own_cgroup(own, sizeof own) < 0)
                return false;
        snprintf(want, sizeof want, "%s/" SCOPE_LEAF, scope_path);
        return strcmp(own, want) == 0;
}

/* After the start job: the process is in the scope; into its leaf. */
static int enter_leaf(const char *mount, const char *unit, struct leash_error *err) {
        char own[4096], dir[8300];
        const char *base;
        int fd, r;

        r = host_own_cgroup(own, sizeof own);
        if (r < 0)
                return leash_error_set(err, "read /proc/self/cgroup", "", r);
        base = strrchr(own, '/');
        if (!base || strcmp(base + 1, unit) != 0)
                return leash_error_set(err, "find this process in its systemd scope (it is elsewhere)", own, -ESRCH);
        snprintf(dir, sizeof dir, "%s%s", mount, own);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return leash_error_set(err, "open the systemd scope", dir, negative_errno());
        if (mkdirat(fd, SCOPE_LEAF, 0755) < 0 && errno != EEXIST) {
                r = leash_error_set(err, "create the supervisor leaf in the systemd scope", dir, negative_errno());
                close(fd);
                return r;
        }
        r = write_string_at(fd, SCOPE_LEAF "/cgroup.procs", "0");
        close(fd);
        if (r < 0)
                return leash_error_set(err, "move into the supervisor leaf of the systemd scope", dir, r);
        snprintf(scope_path, sizeof scope_path, "%s", own);
        snprintf(scope_name, sizeof scope_name, "%s", unit);
        return 0;
}

static int scope_ask(const char *mount, struct leash_error *err) {
        char unit[300], what[200], detail[600];
        int r;

        unit_name(unit, sizeof unit);
        r = systemd_start_scope(unit, "leash.slice", getpid(), what, sizeof what);
        if (r < 0) {
                snprintf(detail, sizeof detail, "%s%s%s", unit, what[0] ? ": " : "", what);
                return leash_error_set(err,
                                       geteuid() == 0 ? "ask the system manager for a delegated scope"
                                                      : "ask the user manager for a delegated scope",
                                       detail, r);
        }
        return enter_leaf(mount, unit, err);
}

int scope_parent(char *ret, size_t ml, size_t size, bool create, struct leash_error *err) {
        char mount[4096];
        int r = 0;

        if (ml >= sizeof mount)
                return leash_error_set(err, "use the cgroup2 mount", ret, -ENAMETOOLONG);
        memcpy(mount, ret, ml);
        mount[ml] = '\0';
        pthread_mutex_lock(&scope_lock);
        if (!still_in_leaf()) {
                scope_path[0] = scope_name[0] = '\0';
                r = create ? scope_ask(mount, err) : -ENOENT;
        }
        if (r >= 0 && ml + strlen(scope_path) >= size)
                r = leash_error_set(err, "use the systemd scope", scope_path, -ENAMETOOLONG);
        if (r >= 0)
                strcpy(ret + ml, scope_path);
        pthread_mutex_unlock(&scope_lock);
        return r;
}

void scope_unit(char *ret, size_t size) {
        pthread_mutex_lock(&scope_lock);
        snprintf(ret, size, "%s", still_in_leaf() ? scope_name : "");
        pthread_mutex_unlock(&scope_lock);
}
