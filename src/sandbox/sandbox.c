/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox module: take privileges away from the job, in one place.
 *
 * Parent (sandbox_prepare, before the job cgroup exists): resolve --user and
 * --group in the user database (userdb.c: files, then getent), list the supplementary groups, compute the
 * capability sets (caps.c), build the seccomp program (filter.c) and the
 * environment. A mistake here is exit 125 with nothing created.
 *
 * Child (after clone, after rlimits), in this order:
 *   1. bounding set reduced to the kept capabilities (needs CAP_SETPCAP,
 *      which a root leash still has here), PR_SET_KEEPCAPS if some are kept
 *   2. setgroups, setresgid, setresuid; then PR_SET_PDEATHSIG is armed again,
 *      because the kernel clears it on a credential change
 *   3. chdir (as the job's identity), stdin from /dev/null, every fd above 2
 *      marked close-on-exec
 *   4. effective/permitted/inheritable/ambient capabilities
 *   5. PR_SET_NO_NEW_PRIVS
 *   6. (after the signal mask is restored) the seccomp filter, then exec
 * Each step that fails comes back to the parent over the error pipe under
 * its own name.
 *
 * The job cgroup is never chowned: its limit files and cgroup.procs stay
 * root's, so a job running as another user cannot raise its limits or leave.
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h> /* setgroups */
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../basic/macro.h"
#include "../basic/parse.h"
#include "userdb.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

extern char **environ;

static int fail(struct leash_error *err, const char *step, int r, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int fail(struct leash_error *err, const char *step, int r, const char *fmt, ...) {
        if (err) {
                va_list ap;
                err->step = step;
                err->error = -r;
                va_start(ap, fmt);
                vsnprintf(err->detail, sizeof err->detail, fmt, ap);
                va_end(ap);
        }
        return r;
}

static bool all_digits(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (*s < '0' || *s > '9')
                        return false;
        return true;
}

/* A numeric id: 0..2^32-2 (-1 is "no change" to set*id). */
static int parse_id(const char *s, uint32_t *ret) {
        uint64_t v;
        if (!all_digits(s) || parse_u64(s, &v) < 0 || v >= UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

static void userdb_user_donep(struct userdb_user *u) {
        userdb_user_done(u);
}

/* Names are looked up in /etc/passwd and /etc/group, then through getent(1)
 * (userdb.c: the leash binary is static and loads no NSS module). */
static int resolve_identity(const struct leash_sandbox *in, struct sandbox_plan *p, struct leash_error *err) {
        _cleanup_(userdb_user_donep) struct userdb_user u = {0};
        bool have_user = false;
        uint32_t id;
        int r;

        if (geteuid() != 0)
                return fail(err, in->user ? "--user" : "--group", -EPERM,
                            "leash runs as uid %u, not root: only root can run a job as another user",
                            (unsigned) geteuid());
        p->switch_ids = true;
        p->uid = getuid();
        p->gid = getgid();
        if (in->user) {
                if (parse_id(in->user, &id) == 0) {
                        p->uid = id;
                        r = userdb_user_by_uid(id, &u);
                        if (r < 0 && r != -ENOENT)
                                return fail(err, "--user", r, "'%s': reading the user database", in->user);
                        have_user = r >= 0;
                } else {
                        r = userdb_user_by_name(in->user, &u);
                        if (r < 0)
                                return fail(err, "--user", r == -ENOENT ? -EINVAL : r,
                                            "'%s': expected a user name in the user database or a uid", in->user);
                        have_user = true;
                        p->uid = u.uid;
                }
        }
        if (in->group) {
                if (parse_id(in->group, &id) == 0)
                        p->gid = id;
                else if ((r = userdb_group_by_name(in->group, &p->gid)) < 0)
                        return fail(err, "--group", r == -ENOENT ? -EINVAL : r,
                                    "'%s': expected a group name in the group database or a gid", in->group);
        } else if (in->user) {
                if (!have_user)
                        return fail(err, "--user", -EINVAL, "'%s': uid not in the user database: give --group too",
                                    in->user);
                p->gid = u.gid;
        }
        /* Supplementary groups: the user's, from the group database, unless
         * told not to; none at all when there is no user entry to ask about. */
        if (have_user && !in->no_supplementary_groups) {
                r = userdb_groups(&u, p->gid, &p->groups, &p->n_groups);
                if (r < 0)
                        return fail(err, "list the supplementary groups", r, "%s", u.name);
        }
        return 0;
}

/* Sets each "K=V" of set in out (n entries, room for them all): replaces
 * K's entry or appends one. */
static int env_put_all(char **out, size_t *n, char *const *set, size_t n_set) {
        for (size_t i = 0; i < n_set; i++) {
                const char *eq = strchr(set[i], '=');
                size_t klen = eq ? (size_t) (eq - set[i]) : strlen(set[i]);
                char *copy = strdup(set[i]);
                bool replaced = false;
                if (!copy)
                        return -ENOMEM;
                for (size_t j = 0; j < *n && !replaced; j++)
                        if (strncmp(out[j], set[i], klen) == 0 && out[j][klen] == '=') {
                                free(out[j]);
                                out[j] = copy;
                                replaced = true;
                        }
                if (!replaced)
                        out[(*n)++] = copy;
        }
        out[*n] = NULL;
        return 0;
}

/* Environment: leash's own or the minimal one, then --unsetenv, then the
 * engine's (--gpus), then --env. */
static int build_env(const struct leash_sandbox *in, const struct sandbox_plan *p, char ***ret) {
        size_t cap = 8 + in->n_env_first + in->n_env_set, n = 0;
        char **base = environ, **out;

        if (in->clean_env)
                base = NULL;
        for (char **e = base; e && *e; e++)
                cap++;
        out = calloc(cap + 1, sizeof *out);
        if (!out)
                return -ENOMEM;
#define PUSH(s)                            \
        do {                               \
                if (!(out[n] = strdup(s))) \
                        goto oom;          \
                n++;                       \
        } while (0)
        if (in->clean_env) {
                _cleanup_(userdb_user_donep) struct userdb_user pw = {0};
                bool have = userdb_user_by_uid(p->switch_ids ? p->uid : getuid(), &pw) >= 0;
                char buf[PATH_MAX + 16];
                PUSH("PATH=/usr/local/bin:/usr/bin:/bin");
                if (have) {
                        snprintf(buf, sizeof buf, "HOME=%s", pw.dir);
                        PUSH(buf);
                        snprintf(buf, sizeof buf, "USER=%s", pw.name);
                        PUSH(buf);
                        snprintf(buf, sizeof buf, "LOGNAME=%s", pw.name);
                        PUSH(buf);
                        snprintf(buf, sizeof buf, "SHELL=%s", pw.shell);
                        PUSH(buf);
                }
        } else
                for (char **e = base; e && *e; e++)
                        PUSH(*e);
        for (size_t i = 0; i < in->n_env_unset; i++) {
                size_t klen = strlen(in->env_unset[i]), w = 0;
                for (size_t j = 0; j < n; j++) {
                        if (strncmp(out[j], in->env_unset[i], klen) == 0 && out[j][klen] == '=')
                                free(out[j]);
                        else
                                out[w++] = out[j];
                }
                n = w;
                out[n] = NULL;
        }
        if (env_put_all(out, &n, in->env_first, in->n_env_first) < 0 ||
            env_put_all(out, &n, in->env_set, in->n_env_set) < 0)
                goto oom;
#undef PUSH
        out[n] = NULL;
        *ret = out;
        return 0;
oom:
        for (size_t j = 0; j < n; j++)
                free(out[j]);
        free(out);
        return -ENOMEM;
}

int sandbox_prepare(const struct leash_sandbox *in, struct sandbox_plan *p, struct leash_sandbox_result *res,
                    struct leash_error *err) {
        unsigned missing = 0;
        int r;

        memset(p, 0, sizeof *p);
        memset(res, 0, sizeof *res);

        if (in->user || in->group) {
                r = resolve_identity(in, p, err);
                if (r < 0)
                        goto fail;
                res->uid = p->uid;
                res->gid = p->gid;
                res->n_groups = p->n_groups < LEASH_GROUPS_MAX ? (unsigned) p->n_groups : LEASH_GROUPS_MAX;
                if (res->n_groups > 0) /* no groups: p->groups may be NULL */
                        memcpy(res->groups, p->groups, res->n_groups * sizeof(gid_t));
                res->identity_switched = true;
        } else {
                int n = getgroups(LEASH_GROUPS_MAX, res->groups);
                res->uid = getuid();
                res->gid = getgid();
                res->n_groups = n > 0 ? (unsigned) n : 0;
        }

        r = caps_prepare(in->caps_mode, in->caps_keep, p->switch_ids && p->uid != 0, &p->caps, res, &missing);
        if (r == -EPERM) {
                char name[64];
                caps_name(missing, name, sizeof name);
                r = fail(err, "--caps", r, "%s: leash does not hold it, so it cannot give it to the job", name);
                goto fail;
        }
        if (r < 0) {
                r = fail(err, "read leash's capabilities", r, "%s", "");
                goto fail;
        }

        p->no_new_privs = !in->allow_new_privs;
        res->no_new_privs = p->no_new_privs;
        if (in->seccomp) {
                /* Without no_new_privs the kernel takes a filter only from a
                 * process with CAP_SYS_ADMIN, and the filter is loaded after the
                 * capabilities are dropped. */
                if (!p->no_new_privs && !(res->cap_effective & (UINT64_C(1) << CAP_SYS_ADMIN_NUMBER))) {
                        r = fail(err, "--allow-new-privs", -EINVAL, "%s",
                                 "with --seccomp: without no_new_privs loading a filter needs "
                                 "CAP_SYS_ADMIN, which the job does not keep (add --caps sys_admin or keep)");
                        goto fail;
                }
                r = filter_build(in->seccomp, in->seccomp_action, &p->filter);
                if (r < 0) {
                        r = fail(err, "build the seccomp filter", r, "%s", "");
                        goto fail;
                }
                res->seccomp = in->seccomp;
                res->filter_instructions = p->filter.len;
        }

        if (in->clean_env || in->n_env_first || in->n_env_set || in->n_env_unset) {
                r = build_env(in, p, &p->envp);
                if (r < 0) {
                        r = fail(err, "build the job's environment", r, "%s", "");
                        goto fail;
                }
        }
        p->chdir = in->chdir;
        p->no_stdin = in->no_stdin;
        p->close_fds = !in->keep_fds;
        return 0;
fail:
        sandbox_plan_done(p);
        return r;
}

void sandbox_plan_done(struct sandbox_plan *p) {
        free(p->groups);
        p->groups = NULL;
        caps_plan_done(&p->caps);
        filter_program_done(&p->filter);
        for (char **e = p->envp; e && *e; e++)
                free(*e);
        free(p->envp);
        p->envp = NULL;
}

/* Every fd above 2 close-on-exec (the error pipe already is). */
static int cloexec_fds(void) {
        struct rlimit rl;
        if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
                return 0;
        if (errno != ENOSYS && errno != EINVAL)
                return negative_errno();
        /* before 5.11 */
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return negative_errno();
        for (int fd = 3; fd < (int) (rl.rlim_cur > 65536 ? 65536 : rl.rlim_cur); fd++) {
                int flags = fcntl(fd, F_GETFD);
                if (flags >= 0 && !(flags & FD_CLOEXEC))
                        (void) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
        }
        return 0;
}

#define STEP(s, call)                            \
        do {                                     \
                if ((call) < 0) {                \
                        *ret_step = (s);         \
                        return negative_errno(); \
                }                                \
        } while (0)

int sandbox_child_setup(const struct sandbox_plan *p, pid_t parent, enum spawn_step *ret_step) {
        int r;

        r = caps_child_bounding(&p->caps);
        if (r < 0) {
                *ret_step = SPAWN_STEP_BOUNDING;
                return r;
        }
        if (p->switch_ids) {
                STEP(SPAWN_STEP_SETGROUPS, setgroups(p->n_groups, p->groups));
                STEP(SPAWN_STEP_SETGID, setresgid(p->gid, p->gid, p->gid));
                STEP(SPAWN_STEP_SETUID, setresuid(p->uid, p->uid, p->uid));
                /* a credential change clears the parent-death signal */
                STEP(SPAWN_STEP_PDEATHSIG, prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0));
                if (getppid() != parent) {
                        *ret_step = SPAWN_STEP_PDEATHSIG;
                        return -ESRCH;
                }
        }
        if (p->chdir)
                STEP(SPAWN_STEP_CHDIR, chdir(p->chdir));
        if (p->no_stdin) {
                int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                STEP(SPAWN_STEP_STDIN, fd);
                if (fd != 0) {
                        r = dup2(fd, 0);
                        close(fd);
                        STEP(SPAWN_STEP_STDIN, r);
                } else
                        STEP(SPAWN_STEP_STDIN, fcntl(0, F_SETFD, 0));
        }
        if (p->close_fds) {
                r = cloexec_fds();
                if (r < 0) {
                        *ret_step = SPAWN_STEP_FDS;
                        return r;
                }
        }
        r = caps_child_apply(&p->caps);
        if (r < 0) {
                *ret_step = SPAWN_STEP_CAPS;
                return r;
        }
        if (p->no_new_privs)
                STEP(SPAWN_STEP_NO_NEW_PRIVS, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
        return 0;
}

int sandbox_child_seccomp(const struct sandbox_plan *p, enum spawn_step *ret_step) {
        int r;
        if (!p->filter.len)
                return 0;
        r = filter_load(&p->filter);
        if (r < 0)
                *ret_step = SPAWN_STEP_SECCOMP;
        return r;
}
