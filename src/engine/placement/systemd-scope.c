/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement's systemd step.
 *
 * No unit per launch, where the kernel allows it (placement.c decides):
 * every job of a manager's leash may go into its shared unit
 * leash.slice/leash-jobs.service, a transient service with Delegate=yes
 * that the first run to find it absent starts (systemd_scope_shared). An
 * exited service's cgroup is removed, RemainAfterExit=yes or not (seen in
 * systemd 252), so its one process, /bin/sleep infinity, keeps it; leash
 * moves that process into the unit's leaf. A user in a login session, who
 * may not move a process there (the common ancestor user-UID.slice is
 * root's), asks the user manager to move leash into that leaf
 * (systemd_scope_shared_enter: AttachProcessesToUnit, which systemd 252's
 * user manager passes to the system manager when it may not move the
 * process itself). The call is sent and its reply read later
 * (systemd_scope_shared_settle, before the job's first process): the
 * manager moves leash while leash makes the job's cgroup, which needs no
 * leash in the leaf. Otherwise (the manager refused):
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
 * The scope is bound (BindsTo=) to the unit leash was started in, where that
 * unit is the same manager's (a system service for root, a user service for
 * a user; a user's login session is the system manager's and cannot be
 * named): leash leaves that unit's cgroup, so without the binding
 * `systemctl stop` of a service whose shell runs leash would no longer reach
 * leash or its job. Stopping the unit (or its end) stops the scope: SIGTERM
 * to leash, which ends its jobs through the ladder and reports interrupted.
 *
 * Once per process: the scope lives as long as a process is in it, and
 * systemd removes its whole subtree when the last one leaves. A later
 * decision of the same process (another config) walks up from the leaf to
 * the scope and finds it here, remembered; a forked child, or a unit the
 * user made (systemd-run --user --scope -p Delegate=yes), is asked of the
 * manager (the unit's Delegate property): systemd 252's user manager writes
 * no user.delegate mark, and asking again for the same name gets UnitExists.
 */
#include "systemd-scope.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../basic/fileio.h"
#include "../../basic/macro.h"
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

static int shared_cgroup(bool user_manager, char *ret, size_t size);

/* The scope this process got: its cgroup, relative to the mount. */
static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t got_pid;
static char got_cgroup[4096];

static const char *user_manager_prefix(unsigned uid, char *buf, size_t size) {
        snprintf(buf, size, "/user.slice/user-%u.slice/user@%u.service/", uid, uid);
        return buf;
}

int systemd_scope_bind_unit(const char *own, bool user_manager, unsigned uid, char *ret, size_t size) {
        char prefix[128];
        const char *p = own, *best = NULL;
        size_t best_len = 0;

        if (user_manager) {
                user_manager_prefix(uid, prefix, sizeof prefix);
                if (strncmp(own, prefix, strlen(prefix)) != 0)
                        return 0; /* a login session's scope: the system manager's */
                p = own + strlen(prefix) - 1;
        }
        while (*p == '/') {
                const char *c = p + 1;
                size_t n = strcspn(c, "/");
                char name[256];

                if (n == 0 || n >= sizeof name)
                        return 0;
                memcpy(name, c, n);
                name[n] = '\0';
                /* a user manager below the system's: its units are not ours to name */
                if (!user_manager && strncmp(name, "user@", 5) == 0)
                        return 0;
                if (n > 6 &&
                    (strcmp(name + n - 6, ".scope") == 0 || (n > 8 && strcmp(name + n - 8, ".service") == 0))) {
                        best = c;
                        best_len = n;
                }
                p = c + n;
        }
        if (!best)
                return 0;
        if (best_len >= size)
                return -ENAMETOOLONG;
        memcpy(ret, best, best_len);
        ret[best_len] = '\0';
        return 1;
}

int systemd_scope_acquire(bool user_manager, const char *slice, char **ret_cgroup_path, char *what, size_t what_size) {
        char unit[300], mount[4096], own[4096], bind[256];
        struct systemd_scope_request q = {.unit = unit, .slice = slice};
        const char *base;
        int r;

        unit_name(unit, sizeof unit);
        if (host_own_cgroup(own, sizeof own) >= 0 &&
            systemd_scope_bind_unit(own, user_manager, (unsigned) geteuid(), bind, sizeof bind) > 0)
                q.bind_to = bind;
        r = systemd_start_scope(user_manager, &q, getpid(), what, what_size);
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
        pthread_mutex_lock(&got_lock);
        got_pid = getpid();
        snprintf(got_cgroup, sizeof got_cgroup, "%s", own);
        pthread_mutex_unlock(&got_lock);
        return 0;
}

/* This process's move into the shared unit's leaf, asked and not yet
 * answered (call), or its outcome once it was (error: 0 or -errno, and the
 * manager's words); per process: a forked child has none. */
static struct {
        pthread_mutex_t lock;
        pid_t pid;
        struct systemd_call *call;
        bool user_manager;
        char leaf[64];
        int error;
        char what[256];
} attach = {.lock = PTHREAD_MUTEX_INITIALIZER};

int systemd_scope_shared_enter(bool user_manager, const char *leaf, char *what, size_t what_size) {
        struct systemd_call *call = NULL;
        int r;

        if (strlen(leaf) >= sizeof attach.leaf)
                return -ENAMETOOLONG;
        r = systemd_attach_send(user_manager, SYSTEMD_SHARED_UNIT, leaf, getpid(), &call, what, what_size);
        if (r < 0)
                return r;
        pthread_mutex_lock(&attach.lock);
        if (attach.pid == getpid())
                systemd_call_free(attach.call);
        attach.pid = getpid();
        attach.call = call;
        attach.user_manager = user_manager;
        strcpy(attach.leaf, leaf);
        attach.error = 0;
        attach.what[0] = '\0';
        pthread_mutex_unlock(&attach.lock);
        return 0;
}

/* The reply came and said yes: is this process where it was to go? */
static int shared_entered(bool user_manager, const char *leaf, char *what, size_t what_size) {
        char own[4096], rel[512];
        size_t n;
        int r = shared_cgroup(user_manager, rel, sizeof rel);

        if (r >= 0)
                r = host_own_cgroup(own, sizeof own);
        if (r < 0)
                return r;
        n = strlen(rel);
        if (strncmp(own, rel, n) != 0 || strcmp(own + n, leaf) != 0) {
                snprintf(what, what_size, "attached, but this process is in %s", own);
                return -ESRCH;
        }
        return 0;
}

int systemd_scope_shared_settle(char *what, size_t what_size) {
        int r;

        pthread_mutex_lock(&attach.lock);
        if (attach.pid != getpid()) {
                pthread_mutex_unlock(&attach.lock);
                return 0;
        }
        if (attach.call) {
                r = systemd_call_wait(attach.call, attach.what, sizeof attach.what);
                systemd_call_free(attach.call);
                attach.call = NULL;
                if (r >= 0)
                        r = shared_entered(attach.user_manager, attach.leaf, attach.what, sizeof attach.what);
                attach.error = r;
        }
        r = attach.error;
        if (r < 0 && what && what_size)
                snprintf(what, what_size, "%s", attach.what);
        pthread_mutex_unlock(&attach.lock);
        return r;
}

bool systemd_scope_shared_refused(char *what, size_t what_size) {
        bool refused;

        pthread_mutex_lock(&attach.lock);
        refused = attach.pid == getpid() && !attach.call && attach.error < 0;
        if (refused && what && what_size)
                snprintf(what, what_size, "%s%s%s", strerror(-attach.error), attach.what[0] ? ": " : "", attach.what);
        pthread_mutex_unlock(&attach.lock);
        return refused;
}

int systemd_scope_delegated(const char *unit_cgroup, bool *ret_own) {
        const char *base = strrchr(unit_cgroup, '/');
        char prefix[128], shared[512];
        bool own;
        int r;

        pthread_mutex_lock(&got_lock);
        own = got_pid == getpid() && strcmp(got_cgroup, unit_cgroup) == 0;
        pthread_mutex_unlock(&got_lock);
        *ret_own = own;
        if (own)
                return 1;
        /* root's manager writes trusted.delegate, which placement reads; an
         * ordinary user's writes no mark: ask it, about its own units only */
        if (geteuid() == 0 || !base)
                return 0;
        /* the shared unit, which leash started (systemd_scope_shared) */
        if (shared_cgroup(true, shared, sizeof shared) >= 0 && strcmp(unit_cgroup, shared) == 0)
                return 1;
        user_manager_prefix((unsigned) geteuid(), prefix, sizeof prefix);
        if (strncmp(unit_cgroup, prefix, strlen(prefix)) != 0)
                return 0;
        r = systemd_unit_delegates(true, base + 1);
        return r < 0 ? 0 : r;
}

int systemd_scope_plan(bool user_manager, const char *mount, char *ret, size_t size) {
        unsigned uid = (unsigned) geteuid();
        int r = systemd_manager_reachable(user_manager);

        if (r < 0)
                return r;
        /* the scope a run would get (PID: the run's own); hostprobe reads the
         * controllers of its nearest existing ancestor, the manager's cgroup */
        if (user_manager)
                r = snprintf(ret, size, "%s/user.slice/user-%u.slice/user@%u.service/leash.slice/leash-run-PID.scope",
                             mount, uid, uid);
        else
                r = snprintf(ret, size, "%s/leash.slice/leash-run-PID.scope", mount);
        return r < 0 || (size_t) r >= size ? -ENAMETOOLONG : 0;
}

/* The shared unit's cgroup for this euid's manager, relative to the mount. */
static int shared_cgroup(bool user_manager, char *ret, size_t size) {
        unsigned uid = (unsigned) geteuid();
        int r = user_manager ? snprintf(ret, size, "/user.slice/user-%u.slice/user@%u.service/leash.slice/%s", uid, uid,
                                        SYSTEMD_SHARED_UNIT)
                             : snprintf(ret, size, "/leash.slice/%s", SYSTEMD_SHARED_UNIT);
        return r < 0 || (size_t) r >= size ? -ENAMETOOLONG : 0;
}

/* The manager's mark of a unit with Delegate=yes: trusted.delegate (the
 * system manager); a user manager writes none, and every cgroup below it
 * is the user's: the directory's owner. */
static bool shared_delegated(const char *dir, bool user_manager) {
        char v[4];
        struct stat st;

        if (user_manager)
                return stat(dir, &st) == 0 && st.st_uid == geteuid();
        return getxattr(dir, "trusted.delegate", v, sizeof v) == 1 && v[0] == '1';
}

int systemd_scope_shared(bool user_manager, const char *mount, bool start, char *ret, size_t size, char *what,
                         size_t what_size) {
        struct systemd_scope_request q = {.unit = SYSTEMD_SHARED_UNIT, .slice = "leash.slice", .keeper = "/bin/sleep"};
        char rel[512];
        int r = shared_cgroup(user_manager, rel, sizeof rel);

        if (r < 0)
                return r;
        if ((size_t) snprintf(ret, size, "%s%s", mount, rel) >= size)
                return -ENAMETOOLONG;
        if (shared_delegated(ret, user_manager))
                return 1;
        if (!start)
                return 0;
        r = systemd_start_scope(user_manager, &q, 0, what, what_size);
        /* UnitExists: another leash started it meanwhile (its cgroup is made
         * when the start job begins) */
        if (r < 0 && r != -EEXIST)
                return r;
        return shared_delegated(ret, user_manager) ? 1 : -ENOENT;
}
