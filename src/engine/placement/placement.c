/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placement: where job cgroups go. systemd's rule, which BenchExec and Slurm
 * follow, is the rule here: a program writes only inside a subtree delegated
 * to it. The chain, first match wins:
 *
 *   1 config     --cgroup-parent, or cgroup_parent in leash.ini/a profile: a
 *                directory an admin (or the user) named. A bad one is an error.
 *   2 delegated  a subtree leash already runs in, where it really is ours:
 *                walking up from leash's own cgroup, the first cgroup that is
 *                  - marked by systemd as a Delegate=yes unit (the xattr
 *                    trusted.delegate or user.delegate = "1"): kind delegated;
 *                  - a leash job (the trusted.leash/user.leash mark, or the
 *                    NAME@PID name of one): kind job,
 *                    a job inside a job nests, so the outer limits hold;
 *                as root, only trusted.delegate, trusted.leash and the name,
 *                and only on a cgroup that is root's at every level from the
 *                mount down (issue 38: a user's cgroup, or one below it, is
 *                the user's to mark and to move processes out of);
 *                and the walk stops, with no delegation, at the first cgroup
 *                named like a systemd unit (.scope/.service/.slice) without
 *                that mark: the user manager's app.slice or a login session's
 *                scope is systemd's, not ours (the walk up into app.slice that
 *                enabled cpu there was undone by the next daemon-reload).
 *   3 systemd    systemd is PID 1 and leash is in no cgroup namespace:
 *                where the kernel lets this process move its job there
 *                (may_move_between: root; a user in its manager's tree), the
 *                manager's shared unit leash.slice/leash-jobs.service,
 *                started once if absent; leash stays in its cgroup, the
 *                job's watchdog goes into the unit's leaf (joined: no unit
 *                per launch); a user in a login session has its manager
 *                move leash into that leaf (AttachProcessesToUnit, not
 *                waited for here: the job reads the reply before its
 *                first process, placement_settle), leaving
 *                a sentinel in the session's scope that passes the
 *                session's end on to leash as SIGTERM. Else a
 *                scope of this process's own, leash-NAME-PID.scope in
 *                leash.slice with Delegate=yes, from the user manager for an
 *                ordinary user and from the system manager for root
 *                (systemd-scope.c over the sd-bus adapter systemd.c), entered
 *                as in 2. A decision that makes nothing (check, ps) asks for
 *                no scope: it checks that the manager can be reached and
 *                names where the scope would go.
 *   4 namespace  in a cgroup namespace (a container) whose root the walk
 *                reached: writable, it is used as in 2; read-only (Docker's
 *                default), on to 6.
 *   5 host       root in the initial cgroup namespace: <mount>/leash, made on
 *                first use (a host no manager owns; under systemd as PID 1
 *                this is beside its slices, and why says so).
 *   6 none       no cgroup: the job runs in the cgroup-less mode (tree.c),
 *                --strict refuses with why and the remedy for this machine.
 *
 * Inside the subtree found by 2 or 4, processes live only in leaves: the job
 * cgroups' parent is the first ancestor of leash's own cgroup, up to the
 * subtree's top, that holds no process; if every one does, leash moves the
 * processes of its own cgroup into its child leash-leaf and makes job
 * cgroups beside it (placement_enter_subtree).
 *
 * The decision is made once per process and config (placement_cached), and
 * a new config of the same process reuses the process's last decision while
 * leash is still in the cgroup it was in then: a forked child decides again,
 * since its cgroup may be a job's.
 */
#include "placement.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../basic/fileio.h"
#include "../../basic/macro.h"
#include "../../basic/procstat.h"
#include "../process/sentinel.h"
#include "host.h"
#include "jobstate.h"
#include "sweep.h"
#include "systemd-scope.h"
#include "systemd.h"

/* the inode of the initial cgroup namespace (the kernel's PROC_CGROUP_INIT_INO) */
#define CGROUP_NS_INIT_INO 0xEFFFFFFBU
#define MOVE_ROUNDS 100

static const char *const kind_names[_PLACEMENT_MAX] = {
        [PLACEMENT_NONE] = "none", [PLACEMENT_CONFIG] = "config",   [PLACEMENT_DELEGATED] = "delegated",
        [PLACEMENT_JOB] = "job",   [PLACEMENT_SYSTEMD] = "systemd", [PLACEMENT_NAMESPACE] = "namespace",
        [PLACEMENT_HOST] = "host", [PLACEMENT_ADOPTED] = "adopted",
};

const char *placement_kind_to_string(enum placement_kind k) {
        return (unsigned) k < _PLACEMENT_MAX ? kind_names[k] : NULL;
}

bool placement_is_unit_name(const char *name) {
        static const char *const suffixes[] = {".scope", ".service", ".slice"};
        size_t n = strlen(name);

        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                size_t s = strlen(suffixes[i]);
                if (n > s && strcmp(name + n - s, suffixes[i]) == 0)
                        return true;
        }
        return false;
}

static void why_add(struct placement *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why_add(struct placement *p, const char *fmt, ...) {
        size_t n = strlen(p->why);
        va_list ap;

        if (n + 3 >= sizeof p->why)
                return;
        if (n) {
                strcpy(p->why + n, "; ");
                n += 2;
        }
        va_start(ap, fmt);
        (void) vsnprintf(p->why + n, sizeof p->why - n, fmt, ap);
        va_end(ap);
}

/* What the chain knows once: the mount, leash's cgroup, the namespace. */
struct ctx {
        const char *requested;
        bool apply;
        bool in_ns;       /* not the initial cgroup namespace */
        int systemd;      /* /run/systemd/system is there: -1 not yet looked at */
        char mount[4096]; /* the cgroup2 mount */
        char own[8192];   /* leash's cgroup, absolute */
        char top[8192];   /* the walk's end: a delegated cgroup, a job or the ns root */
        enum placement_kind top_kind;
        char stop_unit[256]; /* the walk stopped at this undelegated unit */
        size_t user_owned;   /* root: own[0..user_owned) is a user's cgroup (0: none) */
};

static bool in_cgroup_namespace(void) {
        unsigned long long ino;
        return proc_self_ns_inode("cgroup", &ino) == 0 && ino != CGROUP_NS_INIT_INO;
}

static bool writable_delegation(const char *dir) {
        char p[8400];
        snprintf(p, sizeof p, "%s/cgroup.procs", dir);
        if (access(p, W_OK) < 0)
                return false;
        snprintf(p, sizeof p, "%s/cgroup.subtree_control", dir);
        return access(p, W_OK) == 0;
}

bool placement_holds_processes(const char *dir) {
        char buf[16];
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return true;
        return read_file_at(fd, "cgroup.procs", buf, sizeof buf, NULL) < 0 || buf[0] != '\0';
}

static bool xattr_is(const char *dir, const char *name, const char *want) {
        char v[32];
        ssize_t n = getxattr(dir, name, v, sizeof v - 1);
        if (n < 0)
                return false;
        v[n] = '\0';
        return !want || strcmp(v, want) == 0;
}

/* systemd marks the cgroup of a unit with Delegate=yes: trusted.delegate
 * (the system manager; only CAP_SYS_ADMIN can write it) or user.delegate
 * (a user manager; anyone who may write the directory can). Root believes
 * only the first. */
static bool delegated_by_systemd(const char *dir, bool as_root) {
        return xattr_is(dir, "trusted.delegate", "1") || (!as_root && xattr_is(dir, "user.delegate", "1"));
}

/* A leash job's cgroup: its mark, or (for a job that cannot read
 * trusted.leash: a root job without CAP_SYS_ADMIN, the default) its name,
 * NAME@PID[.N] as cgroupfs_create_job makes it and the sweep reads it.
 * Root believes trusted.leash, not user.leash (jobstate.h); the name only
 * on a chain root owns (walk_up), where only uid 0 can have made it. */
static bool is_leash_job(const char *dir, bool as_root) {
        const char *base = strrchr(dir, '/');
        pid_t pid;

        if (xattr_is(dir, JOBSTATE_XATTR_TRUSTED, NULL) || (!as_root && xattr_is(dir, JOBSTATE_XATTR_USER, NULL)))
                return true;
        return base && !placement_is_unit_name(base + 1) && sweep_name_parse(base + 1, &pid);
}

/* Issue 38: root's walk believes no mark on a cgroup that a user owns or
 * that lies below one a user owns. Whoever owns a cgroup may set user.*
 * xattrs on it, make NAME@PID children, and move processes between any two
 * cgroups below it (cgroup v2 checks write access to cgroup.procs of the
 * common ancestor, not the moved process's uid): root's job there could be
 * moved out of its limits, frozen or killed by that user. Returns the length
 * of the shortest prefix of own, below the mount, that is not root's (0 when
 * every level is root's). */
static size_t user_owned_prefix(const struct ctx *c) {
        size_t ml = strlen(c->mount);
        char p[8192];

        snprintf(p, sizeof p, "%s", c->own);
        for (size_t i = ml + 1; i <= strlen(c->own); i++) {
                struct stat st;
                char keep = p[i];
                int r;
                if (keep != '/' && keep != '\0')
                        continue;
                p[i] = '\0';
                r = fstatat(AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW);
                p[i] = keep;
                if (r < 0 || st.st_uid != 0)
                        return i;
        }
        return 0;
}

/* Is the process in the cgroup the path names? In a cgroup namespace the
 * mount may be of another cgroup than the namespace's root (a bind mount of
 * the host's tree after unshare -C): then the path means something else. */
static bool own_cgroup_holds_us(const char *own) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = open(own, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char me[32];
        size_t n;

        if (fd < 0 || read_file_at_alloc(fd, "cgroup.procs", &text, NULL) < 0)
                return false;
        n = (size_t) snprintf(me, sizeof me, "%d", (int) getpid());
        for (const char *p = text; (p = strstr(p, me)); p += n)
                if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
                        return true;
        return false;
}

/* The walk up from leash's own cgroup: sets top (and top_kind) or stop_unit. */
static void walk_up(struct ctx *c) {
        bool as_root = geteuid() == 0;
        size_t ml = strlen(c->mount), untrusted = c->user_owned = as_root ? user_owned_prefix(c) : 0;
        char cur[8192];

        snprintf(cur, sizeof cur, "%s", c->own);
        for (;;) {
                bool marks = strlen(cur) > ml && (untrusted == 0 || strlen(cur) < untrusted);
                char *slash;
                if (marks && delegated_by_systemd(cur, as_root)) {
                        c->top_kind = PLACEMENT_DELEGATED;
                        break;
                }
                if (marks && is_leash_job(cur, as_root)) {
                        c->top_kind = PLACEMENT_JOB;
                        break;
                }
                if (strlen(cur) <= ml) {
                        if (!c->in_ns)
                                return;
                        c->top_kind = PLACEMENT_NAMESPACE;
                        break;
                }
                slash = strrchr(cur, '/');
                if (placement_is_unit_name(slash + 1)) {
                        snprintf(c->stop_unit, sizeof c->stop_unit, "%s", cur + ml);
                        return;
                }
                *slash = '\0';
        }
        snprintf(c->top, sizeof c->top, "%s", cur);
}

static int set_parent(struct placement *p, const char *dir) {
        if (strlen(dir) >= sizeof p->parent)
                return -ENAMETOOLONG;
        strcpy(p->parent, dir);
        return 0;
}

/* Every process of own into own/leash-leaf, in rounds (they may fork meanwhile). */
static int move_into_leaf(const char *own) {
        _cleanup_close_ int fd = open(own, O_RDONLY | O_DIRECTORY | O_CLOEXEC), leaf = -1;
        int r;

        if (fd < 0)
                return negative_errno();
        if (mkdirat(fd, PLACEMENT_LEAF, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        leaf = openat(fd, PLACEMENT_LEAF, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (leaf < 0)
                return negative_errno();
        for (int round = 0; round < MOVE_ROUNDS; round++) {
                _cleanup_free_ char *text = NULL;
                bool any = false;
                r = read_file_at_alloc(fd, "cgroup.procs", &text, NULL);
                if (r < 0)
                        return r;
                for (char *p = text; *p;) {
                        char *end;
                        long pid = strtol(p, &end, 10);
                        char v[32];
                        if (end == p)
                                break;
                        snprintf(v, sizeof v, "%ld", pid);
                        r = write_string_at(leaf, "cgroup.procs", v);
                        if (r < 0 && r != -ESRCH)
                                return r;
                        any = true;
                        p = end;
                        while (*p == '\n')
                                p++;
                }
                if (!any)
                        return 0;
        }
        return -EBUSY;
}

int placement_enter_subtree(const char *dir, const char *own, bool apply, struct placement *p) {
        size_t dl = strlen(dir);
        char cand[8192];
        int r;

        if (strncmp(own, dir, dl) != 0 || (own[dl] != '/' && own[dl] != '\0'))
                return -EINVAL;
        snprintf(cand, sizeof cand, "%s", own);
        for (;;) {
                if (writable_delegation(cand) && !placement_holds_processes(cand))
                        return set_parent(p, cand);
                if (strlen(cand) <= dl)
                        break;
                *strrchr(cand, '/') = '\0';
        }
        if (!writable_delegation(own))
                return -EACCES;
        if (apply) {
                r = move_into_leaf(own);
                if (r < 0)
                        return r;
        }
        p->moved = true;
        return set_parent(p, own);
}

static int step_config(struct ctx *c, struct placement *p, struct leash_error *err) {
        const char *q = c->requested;
        size_t ml = strlen(c->mount);
        struct statfs sfs;
        int r;

        if (!q)
                return 0;
        if (strncmp(q, c->mount, ml) == 0 && (q[ml] == '/' || !q[ml]))
                r = snprintf(p->parent, sizeof p->parent, "%s", q);
        else if (q[0] == '/') {
                /* an absolute path elsewhere is a mistake, not a path to re-root */
                if (err) {
                        err->step = "--cgroup-parent";
                        snprintf(err->detail, sizeof err->detail,
                                 "'%s': not under the cgroup2 mount %s (give a path under it, or one relative to it)",
                                 q, c->mount);
                        err->error = EINVAL;
                }
                return -EINVAL;
        } else
                r = snprintf(p->parent, sizeof p->parent, "%s/%s", c->mount, q);
        if (r < 0 || (size_t) r >= sizeof p->parent)
                return leash_error_set(err, "use the cgroup parent", q, -ENAMETOOLONG);
        if (statfs(p->parent, &sfs) < 0)
                return leash_error_set(err, "open the cgroup parent", p->parent, negative_errno());
        if (sfs.f_type != CGROUP2_SUPER_MAGIC)
                return leash_error_set(err, "use the cgroup parent (not on cgroup2)", p->parent, -EINVAL);
        why_add(p, "named by --cgroup-parent or the configuration");
        return 1;
}

/* Steps 2 and 4: the subtree the walk found, where it is ours. */
static int step_subtree(struct ctx *c, struct placement *p, enum placement_kind which) {
        const char *rel;
        int r;

        if (c->top[0] == '\0' || (c->top_kind == PLACEMENT_NAMESPACE) != (which == PLACEMENT_NAMESPACE))
                return 0;
        rel = c->top + strlen(c->mount);
        if (which == PLACEMENT_NAMESPACE && !own_cgroup_holds_us(c->own)) {
                why_add(p, "in a cgroup namespace whose root is not what %s shows (the host's tree mounted in it)",
                        c->mount);
                return 0;
        }
        if (!writable_delegation(c->top)) {
                why_add(p, "%s %s is not writable by uid %u (%s)",
                        which == PLACEMENT_NAMESPACE   ? "the cgroup namespace root"
                        : c->top_kind == PLACEMENT_JOB ? "the leash job"
                                                       : "the delegated unit",
                        rel[0] ? rel : "/", (unsigned) geteuid(), strerror(errno));
                p->error = errno;
                return 0;
        }
        r = placement_enter_subtree(c->top, c->own, c->apply, p);
        if (r < 0) {
                why_add(p, "no leaf for leash's processes in %s (%s)", c->own + strlen(c->mount), strerror(-r));
                p->error = -r;
                return 0;
        }
        p->kind = c->top_kind;
        why_add(p, "%s %s%s",
                c->top_kind == PLACEMENT_JOB         ? "inside the leash job"
                : c->top_kind == PLACEMENT_NAMESPACE ? "the writable root of leash's cgroup namespace"
                                                     : "inside the unit with Delegate=yes",
                rel[0] ? rel : "/", p->moved ? " (leash's processes in " PLACEMENT_LEAF ")" : "");
        return 1;
}

/* looked at once per decision (the systemd step and the host step's why) */
static bool systemd_booted(struct ctx *c) {
        if (c->systemd < 0)
                c->systemd = access("/run/systemd/system", F_OK) == 0;
        return c->systemd;
}

/* The unit the walk stopped at, where the manager says it is ours: the
 * scope this process got, or a user's unit with Delegate=yes (systemd 252's
 * user manager marks neither). Used as in step 2. */
static int step_systemd_unit(struct ctx *c, struct placement *p) {
        bool own;

        if (!c->stop_unit[0] || systemd_scope_delegated(c->stop_unit, &own) <= 0)
                return 0;
        if (snprintf(c->top, sizeof c->top, "%s%s", c->mount, c->stop_unit) >= (int) sizeof c->top)
                return 0;
        c->top_kind = PLACEMENT_DELEGATED;
        p->why[0] = '\0'; /* not "no Delegate=yes": the manager says otherwise */
        if (step_subtree(c, p, PLACEMENT_DELEGATED) <= 0) {
                c->top[0] = '\0';
                return 0;
        }
        if (own) {
                p->kind = PLACEMENT_SYSTEMD;
                p->why[0] = '\0';
                why_add(p, "the scope %s, which this process got from the %s manager (Delegate=yes)", c->stop_unit,
                        geteuid() != 0 ? "user" : "system");
        } else
                why_add(p, "its manager says Delegate=yes (and writes no mark there)");
        return 1;
}

/* a and b (absolute) share the ancestor whose cgroup.procs this process may
 * write: the kernel then lets it move a process from one to the other */
static bool may_move_between(const char *a, const char *b) {
        char anc[8400];
        size_t n = 0, i = 0;

        for (; a[i] && a[i] == b[i]; i++)
                if (a[i] == '/')
                        n = i;
        if ((a[i] == '\0' || a[i] == '/') && (b[i] == '\0' || b[i] == '/'))
                n = i;
        snprintf(anc, sizeof anc, "%.*s/cgroup.procs", (int) n, a);
        return access(anc, W_OK) == 0;
}

/* No unit per launch: the job joins the manager's shared unit (started once
 * if absent). Where the kernel lets this process move its job there (root; a
 * user in its manager's tree) leash stays where it is, so that a stop of the
 * unit that started leash reaches it (joined). A user in a login session
 * (below root's user-UID.slice) has the user manager move leash into the
 * unit's leaf instead (one AttachProcessesToUnit), as the scope of its own
 * did; a session is the system manager's and bound nothing either. Before
 * the move leash leaves a sentinel in the session's scope (sentinel.c):
 * the session's end signals it, and it passes a SIGTERM on to leash. */
static int step_systemd_join(struct ctx *c, struct placement *p) {
        char what[256] = "";
        bool user = geteuid() != 0, started, attach;
        int r;

        r = systemd_scope_shared(user, c->mount, false, p->parent, sizeof p->parent, NULL, 0);
        attach = r >= 0 && !may_move_between(c->own, p->parent);
        if (attach && systemd_scope_shared_refused(what, sizeof what)) {
                why_add(p, "the user manager refused to move leash into %s's " PLACEMENT_LEAF " (%s)",
                        SYSTEMD_SHARED_UNIT, what);
                p->parent[0] = '\0';
                return 0;
        }
        if (r < 0 || (attach && !user)) {
                p->parent[0] = '\0';
                return 0;
        }
        /* a plan that needs the manager (to start the unit, to move leash)
         * needs one to reach */
        if (!c->apply && (r == 0 || attach) && systemd_manager_reachable(user) < 0) {
                p->parent[0] = '\0';
                return 0;
        }
        started = r == 0;
        if (c->apply && r == 0)
                r = systemd_scope_shared(user, c->mount, true, p->parent, sizeof p->parent, what, sizeof what);
        /* its keeper (and the watchdogs of joined jobs) in its leaf: job
         * cgroups go beside it */
        if (r > 0 && c->apply && placement_holds_processes(p->parent))
                r = move_into_leaf(p->parent);
        /* the session's stop still reaches leash through its sentinel */
        if (r >= 0 && c->apply && attach)
                r = sentinel_start();
        if (r >= 0 && c->apply && attach)
                r = systemd_scope_shared_enter(user, "/" PLACEMENT_LEAF, what, sizeof what);
        if (r < 0) {
                why_add(p, "the %s manager's %s is not usable (%s%s%s)", user ? "user" : "system", SYSTEMD_SHARED_UNIT,
                        strerror(-r), what[0] ? ": " : "", what);
                p->parent[0] = '\0';
                return 0;
        }
        p->kind = PLACEMENT_SYSTEMD;
        p->joined = !attach;
        p->moved = attach;
        p->attaching = attach && c->apply;
        why_add(p, "%s the %s manager's %s%s (Delegate=yes, shared by its leash jobs); %s",
                c->apply ? "in" : "a run goes into", user ? "user" : "system", p->parent + strlen(c->mount),
                started ? (c->apply ? ", started now" : ", started by the first run") : "",
                !attach    ? "leash stays in its own cgroup"
                : c->apply ? "leash moved into its " PLACEMENT_LEAF " by the manager (AttachProcessesToUnit, its "
                             "reply awaited before the job's first process starts)"
                           : "a run asks the manager to move leash into its " PLACEMENT_LEAF);
        return 1;
}

/* Step 3: a scope the manager delegates (systemd-scope.c). */
static int step_systemd(struct ctx *c, struct placement *p) {
        _cleanup_free_ char *scope = NULL;
        const char *who = geteuid() != 0 ? "user" : "system";
        char what[256] = "", own[4096];
        int r;

        if (!systemd_booted(c) || c->in_ns || !c->own[0])
                return 0;
        if (step_systemd_unit(c, p) > 0 || step_systemd_join(c, p) > 0)
                return 1;
        if (!c->apply) {
                r = systemd_scope_plan(geteuid() != 0, c->mount, p->parent, sizeof p->parent);
                if (r < 0) {
                        why_add(p, "systemd's %s manager cannot be reached (%s)", who, strerror(-r));
                        p->error = -r;
                        return 0;
                }
                p->kind = PLACEMENT_SYSTEMD;
                why_add(p,
                        "a run asks the %s manager for this scope (NAME-PID: the run's; Delegate=yes, bound to the "
                        "unit it "
                        "was started in)",
                        who);
                return 1;
        }
        r = systemd_scope_acquire(geteuid() != 0, "leash.slice", &scope, what, sizeof what);
        if (r < 0) {
                why_add(p, "systemd's %s manager gave no delegated scope (%s%s%s)", who, strerror(-r),
                        what[0] ? ": " : "", what);
                p->error = -r;
                return 0;
        }
        r = host_own_cgroup(own, sizeof own);
        if (r >= 0)
                snprintf(c->own, sizeof c->own, "%s%s", c->mount, own);
        if (r >= 0)
                r = placement_enter_subtree(scope, c->own, true, p);
        if (r < 0) {
                why_add(p, "no leaf for leash's processes in the scope %s (%s)", scope + strlen(c->mount),
                        strerror(-r));
                p->error = -r;
                return 0;
        }
        p->kind = PLACEMENT_SYSTEMD;
        why_add(p, "the scope %s, which the %s manager delegates", scope + strlen(c->mount), who);
        return 1;
}

static int step_host(struct ctx *c, struct placement *p, struct leash_error *err) {
        if (geteuid() != 0 || c->in_ns)
                return 0;
        if (snprintf(p->parent, sizeof p->parent, "%s/leash", c->mount) >= (int) sizeof p->parent)
                return leash_error_set(err, "use the cgroup parent", c->mount, -ENAMETOOLONG);
        if (c->apply && mkdir(p->parent, 0755) < 0 && errno != EEXIST) {
                why_add(p, "root, but %s cannot be made (%s)", p->parent, strerror(errno));
                p->error = errno;
                return 0;
        }
        why_add(p, systemd_booted(c) ? "root: systemd is PID 1 but no scope was asked of it: beside its slices, in no "
                                       "unit it delegated"
                                     : "root, on a host whose cgroup tree no service manager owns");
        return 1;
}

/* the user manager's private socket is there while it runs */
static bool user_manager_running(unsigned uid) {
        char path[64];
        snprintf(path, sizeof path, "/run/user/%u/systemd/private", uid);
        return access(path, F_OK) == 0;
}

static void remedy(struct ctx *c, struct placement *p) {
        unsigned uid = (unsigned) geteuid();

        if (c->in_ns && c->top_kind == PLACEMENT_NAMESPACE)
                snprintf(p->remedy, sizeof p->remedy,
                         "the container's cgroupfs is read-only: run the container with --cgroupns=private and a "
                         "writable cgroup mount (docker/podman run --cgroupns=private -v "
                         "/sys/fs/cgroup:/sys/fs/cgroup:rw), or give --cgroup-parent a cgroup delegated to uid %u",
                         uid);
        else if (systemd_booted(c) && uid != 0 && !user_manager_running(uid))
                snprintf(p->remedy, sizeof p->remedy,
                         "systemd's user manager is not running for uid %u: loginctl enable-linger (or log in), then "
                         "systemd-run --user --scope -p Delegate=yes leash run ...",
                         uid);
        else if (systemd_booted(c) && uid != 0)
                snprintf(p->remedy, sizeof p->remedy,
                         "ask systemd for a delegated scope: systemd-run --user --scope -p Delegate=yes leash run ...");
        else /* cgroup v2 moves a process only for a writer of the common
              * ancestor's cgroup.procs: the shell goes inside the subtree */
                snprintf(p->remedy, sizeof p->remedy,
                         "as root: mkdir -p %s/u%u/shell; chown %u %s/u%u %s/u%u/cgroup.procs "
                         "%s/u%u/cgroup.subtree_control "
                         "%s/u%u/cgroup.threads; echo %d > %s/u%u/shell/cgroup.procs. Then, in that shell (pid %d), "
                         "as uid %u: leash run --cgroup-parent %s/u%u",
                         c->mount, uid, uid, c->mount, uid, c->mount, uid, c->mount, uid, c->mount, uid,
                         (int) getppid(), c->mount, uid, (int) getppid(), uid, c->mount, uid);
}

static int ctx_init(struct ctx *c, const char *requested, bool apply, struct placement *p, struct leash_error *err) {
        char own[4096];
        int r;

        /* fields, not a memset: the context is 20 KiB, on every launch */
        c->mount[0] = c->own[0] = c->top[0] = c->stop_unit[0] = '\0';
        c->top_kind = PLACEMENT_NONE;
        c->user_owned = 0;
        c->systemd = -1;
        c->requested = requested;
        c->apply = apply;
        c->in_ns = in_cgroup_namespace();
        r = host_cgroup2_mount_fast(c->mount, sizeof c->mount);
        if (r < 0) {
                if (requested)
                        return leash_error_set(err, "find the cgroup2 mount in /proc/self/mountinfo", "", r);
                why_add(p, "no cgroup2 mount");
                p->error = -r;
                return 0;
        }
        p->mount_len = strlen(c->mount);
        if (requested)
                return 1;
        r = host_own_cgroup(own, sizeof own);
        if (r < 0) {
                why_add(p, "leash's own cgroup is unknown (%s)", strerror(-r));
                return 1;
        }
        snprintf(c->own, sizeof c->own, "%s%s", c->mount, strcmp(own, "/") == 0 ? "" : own);
        walk_up(c);
        if (c->user_owned)
                why_add(p, "root believes no mark at or below %.*s, which is not root's",
                        (int) (c->user_owned - p->mount_len), c->own + p->mount_len);
        if (c->stop_unit[0])
                why_add(p, "leash runs in the unit %s, which is systemd's (no Delegate=yes)", c->stop_unit);
        else if (!c->top[0])
                why_add(p, "leash's cgroup %s is in no delegated unit, leash job or cgroup namespace", own);
        return 1;
}

/* The chain's steps, in order: the first that finds a parent decides. */
static int steps(struct ctx *c, struct placement *p, struct leash_error *err) {
        int r = step_config(c, p, err);
        if (r != 0)
                return r < 0 ? r : (p->kind = PLACEMENT_CONFIG, 0);
        if (step_subtree(c, p, PLACEMENT_DELEGATED) > 0)
                return 0;
        if (step_systemd(c, p) > 0)
                return 0;
        if (step_subtree(c, p, PLACEMENT_NAMESPACE) > 0)
                return 0;
        if (c->in_ns && c->top_kind == PLACEMENT_NAMESPACE && p->error == EROFS)
                why_add(p, "the cgroup namespace's cgroupfs is read-only");
        r = step_host(c, p, err);
        if (r != 0)
                return r < 0 ? r : (p->kind = PLACEMENT_HOST, 0);
        remedy(c, p);
        return 0;
}

/* Kept apart from placement_decide so that the big context stays out of the
 * caller's frame. */
static __attribute__((noinline)) int decide(const char *requested, bool apply, struct placement *p,
                                            struct leash_error *err) {
        _cleanup_free_ struct ctx *c = malloc(sizeof *c);
        int r;

        if (!c)
                return leash_error_set(err, "decide the placement", "", -ENOMEM);
        /* a move of this process still in flight ends first: the chain reads
         * where the process is (a refusal: the join step is not tried again) */
        (void) systemd_scope_shared_settle(NULL, 0);
        r = ctx_init(c, requested, apply, p, err);
        if (r <= 0)
                return r;
        r = steps(c, p, err);
        /* what /proc/self/cgroup said, unless leash's processes were moved
         * since (into a leaf) */
        if (r >= 0 && c->own[0] && !p->moved) {
                const char *rel = c->own + strlen(c->mount);
                snprintf(p->own, sizeof p->own, "%s", rel[0] ? rel : "/");
        }
        return r;
}

int placement_decide(const char *requested, bool apply, struct placement *p, struct leash_error *err) {
        int r;

        p->kind = PLACEMENT_NONE;
        p->error = 0;
        p->mount_len = 0;
        p->moved = p->joined = p->attaching = false;
        p->parent[0] = p->why[0] = p->remedy[0] = p->own[0] = '\0';
        r = decide(requested, apply, p, err);
        if (r < 0)
                return r;
        if (p->kind == PLACEMENT_NONE) {
                p->parent[0] = '\0';
                if (!p->remedy[0])
                        snprintf(p->remedy, sizeof p->remedy, "mount cgroup2 (mount -t cgroup2 none /sys/fs/cgroup)");
        }
        return 0;
}

int placement_settle(struct leash_error *err) {
        char what[256] = "";
        int r = systemd_scope_shared_settle(what, sizeof what);
        if (r < 0)
                return leash_error_set(err,
                                       "have the user manager move leash into " SYSTEMD_SHARED_UNIT "'s " PLACEMENT_LEAF
                                       " (AttachProcessesToUnit)",
                                       what[0] ? what : strerror(-r), r);
        return 0;
}

bool placement_attach_refused(void) {
        return systemd_scope_shared_refused(NULL, 0);
}

/* ---- the cache a config holds ---- */

struct placement_cache {
        pthread_mutex_t lock;
        bool valid;
        pid_t pid;
        pid_t swept;   /* the process whose first job swept */
        pid_t own_pid; /* the process own[] was read in */
        char own[4096];
        char *requested;
        struct placement p;
};

int placement_cache_new(struct placement_cache **ret) {
        struct placement_cache *c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        pthread_mutex_init(&c->lock, NULL);
        *ret = c;
        return 0;
}

void placement_cache_free(struct placement_cache *c) {
        if (!c)
                return;
        pthread_mutex_destroy(&c->lock);
        free(c->requested);
        free(c);
}

int placement_cache_own(struct placement_cache *c, char *ret, size_t size) {
        int r = 0;

        pthread_mutex_lock(&c->lock);
        if (c->own_pid != getpid()) {
                r = host_own_cgroup(c->own, sizeof c->own);
                c->own_pid = r < 0 ? 0 : getpid();
        }
        if (r >= 0 && strlen(c->own) >= size)
                r = -ENAMETOOLONG;
        if (r >= 0)
                strcpy(ret, c->own);
        pthread_mutex_unlock(&c->lock);
        return r;
}

bool placement_cache_sweep_due(struct placement_cache *c) {
        bool due;

        pthread_mutex_lock(&c->lock);
        due = c->swept != getpid();
        c->swept = getpid();
        pthread_mutex_unlock(&c->lock);
        return due;
}

static bool same_request(const char *a, const char *b) {
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The chain's last decision in this process (no requested parent): a new
 * config (leash.limit of a new function per call, pynisher's idiom) reuses it
 * while it still holds: the same process and euid, leash still in the cgroup
 * it was in once decided, the parent still there. What the chain reads (the
 * walk from leash's own cgroup, its marks, the manager) is the same then. */
static struct {
        pthread_mutex_t lock;
        bool valid;
        pid_t pid;
        uid_t euid;
        char own[4096]; /* leash's cgroup once decided, relative to the mount */
        struct placement p;
} last = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool last_reuse(struct placement *ret) {
        char own[4096];
        bool hit;

        if (host_own_cgroup(own, sizeof own) < 0)
                return false;
        pthread_mutex_lock(&last.lock);
        hit = last.valid && last.pid == getpid() && last.euid == geteuid() && strcmp(last.own, own) == 0 &&
              !(last.p.attaching && systemd_scope_shared_refused(NULL, 0)) && access(last.p.parent, F_OK) == 0;
        if (hit)
                memcpy(ret, &last.p, sizeof *ret);
        pthread_mutex_unlock(&last.lock);
        return hit;
}

static void last_keep(const struct placement *p) {
        char own[4096];

        if (p->kind == PLACEMENT_NONE)
                return;
        /* a move asked of the manager: where it puts leash (its reply is
         * awaited by the job, placement_settle) */
        if (p->attaching) {
                if (snprintf(own, sizeof own, "%s/" PLACEMENT_LEAF, p->parent + p->mount_len) >= (int) sizeof own)
                        return;
        } else if (host_own_cgroup(own, sizeof own) < 0)
                return;
        pthread_mutex_lock(&last.lock);
        memcpy(&last.p, p, sizeof last.p);
        strcpy(last.own, own);
        last.pid = getpid();
        last.euid = geteuid();
        last.valid = true;
        pthread_mutex_unlock(&last.lock);
}

/* A decision for a config: the process's last one where it holds. */
static int decide_for_config(const char *requested, struct placement *p, struct leash_error *err) {
        int r;

        if (!requested && last_reuse(p))
                return 0;
        r = placement_decide(requested, true, p, err);
        if (r >= 0 && !requested)
                last_keep(p);
        return r;
}

int placement_cached(struct placement_cache *c, const char *requested, struct placement *ret, struct leash_error *err) {
        int r = 0;

        pthread_mutex_lock(&c->lock);
        if (!c->valid || c->pid != getpid() || !same_request(c->requested, requested) ||
            (c->p.attaching && systemd_scope_shared_refused(NULL, 0))) {
                c->valid = false;
                free(c->requested);
                c->requested = requested ? strdup(requested) : NULL;
                r = decide_for_config(requested, &c->p, err);
                if (r >= 0 && (!requested || c->requested)) {
                        c->valid = true;
                        c->pid = getpid();
                }
        }
        if (r >= 0)
                memcpy(ret, &c->p, sizeof *ret);
        pthread_mutex_unlock(&c->lock);
        return r;
}
