/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The user and group database, without NSS inside leash.
 *
 * The leash binary is linked statically (HACKING.md says why), and a static
 * glibc cannot load NSS modules safely: getpwnam() there dlopen()s the
 * libnss_*.so of whatever glibc is installed, which may not match. So leash
 * asks the database the way an admin does:
 *
 *   1. a numeric id is always taken as it is (the caller does that);
 *   2. /etc/passwd and /etc/group, read with fgetpwent/fgetgrent (plain file
 *      parsers, no NSS);
 *   3. a name not found there is asked of `getent` (/usr/bin/getent, then
 *      /bin/getent), the system's own dynamically linked NSS client: LDAP,
 *      sssd and systemd users resolve exactly as `getent passwd NAME` shows
 *      them. Supplementary groups of such a user come from
 *      `getent initgroups NAME`.
 *
 * getent runs in a child created with exit signal 0 and waited for through a
 * pidfd, so a host program's waitpid(-1) never sees it; it gets an empty
 * environment, /dev/null as stdin and stderr, and its output is capped.
 */
#include "userdb.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../basic/macro.h"
#include "../basic/parse.h"

#define USERDB_PASSWD "/etc/passwd"
#define USERDB_GROUP "/etc/group"
#define GETENT_OUTPUT_MAX 65536

void userdb_user_done(struct userdb_user *u) {
        free(u->name);
        free(u->dir);
        free(u->shell);
        memset(u, 0, sizeof *u);
}

static int user_from_passwd(const struct passwd *pw, bool from_files, struct userdb_user *ret) {
        struct userdb_user u = {.uid = pw->pw_uid, .gid = pw->pw_gid, .from_files = from_files};

        u.name = strdup(pw->pw_name);
        u.dir = strdup(pw->pw_dir ? pw->pw_dir : "/");
        u.shell = strdup(pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh");
        if (!u.name || !u.dir || !u.shell) {
                userdb_user_done(&u);
                return -ENOMEM;
        }
        *ret = u;
        return 0;
}

/* The reentrant parsers (no static buffer: two threads of a host program
 * may resolve users at once), growing the buffer for a long line. */
#define DEFINE_FGETENT(type, fn)                                                    \
        static int next_##type(FILE *f, struct type *e, char **buf, size_t *size) { \
                struct type *res;                                                   \
                int r;                                                              \
                for (;;) {                                                          \
                        if (!*buf && !(*buf = malloc(*size = 4096)))                \
                                return -ENOMEM;                                     \
                        r = fn(f, e, *buf, *size, &res);                            \
                        if (r != ERANGE)                                            \
                                return r == 0 && res ? 1 : 0;                       \
                        if (*size >= 1u << 20)                                      \
                                return -ERANGE;                                     \
                        free(*buf);                                                 \
                        if (!(*buf = malloc(*size *= 2)))                           \
                                return -ENOMEM;                                     \
                }                                                                   \
        }
DEFINE_FGETENT(passwd, fgetpwent_r)
DEFINE_FGETENT(group, fgetgrent_r)

/* The first entry of a passwd-format stream matching name (or uid when name
 * is NULL). -ENOENT when there is none. */
static int passwd_find(FILE *f, const char *name, uid_t uid, bool from_files, struct userdb_user *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        struct passwd pw;
        int r;

        while ((r = next_passwd(f, &pw, &buf, &size)) > 0)
                if (name ? strcmp(pw.pw_name, name) == 0 : pw.pw_uid == uid)
                        return user_from_passwd(&pw, from_files, ret);
        return r < 0 ? r : -ENOENT;
}

static int group_find(FILE *f, const char *name, gid_t *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        struct group gr;
        int r;

        while ((r = next_group(f, &gr, &buf, &size)) > 0)
                if (strcmp(gr.gr_name, name) == 0) {
                        *ret = gr.gr_gid;
                        return 0;
                }
        return r < 0 ? r : -ENOENT;
}

/* Run getent with args, capture its stdout (at most GETENT_OUTPUT_MAX bytes,
 * NUL-terminated). -ENOENT when getent is missing or found nothing. */
static int getent(const char *const *args, char **ret) {
        static const char *const paths[] = {"/usr/bin/getent", "/bin/getent"};
        const char *path = NULL;
        _cleanup_close_ int rfd = -1, wfd = -1, pidfd = -1;
        int pipefd[2], nullfd;
        char *argv[6], *envp[] = {NULL};
        _cleanup_free_ char *buf = NULL;
        size_t n = 0;
        siginfo_t si = {0};
        pid_t pid;

        for (size_t i = 0; i < ELEMENTSOF(paths) && !path; i++)
                if (access(paths[i], X_OK) == 0)
                        path = paths[i];
        if (!path)
                return -ENOENT;
        argv[0] = (char *) "getent";
        for (size_t i = 0; i < 4; i++)
                argv[i + 1] = (char *) args[i];
        argv[5] = NULL;
        buf = malloc(GETENT_OUTPUT_MAX + 1);
        if (!buf)
                return -ENOMEM;
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        rfd = pipefd[0];
        wfd = pipefd[1];
        nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (nullfd < 0)
                return -errno;

        struct clone_args ca = {.flags = CLONE_PIDFD, .pidfd = (uint64_t) (uintptr_t) &pidfd, .exit_signal = 0};
        pid = (pid_t) syscall(SYS_clone3, &ca, sizeof ca);
        if (pid == 0) {
                /* fork-like child: async-signal-safe calls only */
                if (dup2(nullfd, 0) < 0 || dup2(wfd, 1) < 0 || dup2(nullfd, 2) < 0)
                        _exit(127);
                execve(path, argv, envp);
                _exit(127);
        }
        close(nullfd);
        if (pid < 0)
                return -errno;
        close(TAKE_FD(wfd));
        for (;;) {
                ssize_t k = read(rfd, buf + n, GETENT_OUTPUT_MAX - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0 || (n += (size_t) k) == GETENT_OUTPUT_MAX)
                        break;
        }
        close(TAKE_FD(rfd)); /* a getent still writing gets EPIPE */
        while (waitid((idtype_t) P_PIDFD, (id_t) pidfd, &si, WEXITED | __WALL) < 0)
                if (errno != EINTR)
                        return -errno;
        /* getent: 0 found, 2 not found, 1/3 bad arguments or enumeration */
        if (si.si_code != CLD_EXITED || si.si_status != 0 || n == 0)
                return -ENOENT;
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

static int getent_user(const char *name, uid_t uid, struct userdb_user *ret) {
        char key[32];
        const char *args[4] = {"passwd", "--", name, NULL};
        _cleanup_free_ char *out = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        int r;

        if (!name) {
                snprintf(key, sizeof key, "%u", (unsigned) uid);
                args[2] = key;
        }
        r = getent(args, &out);
        if (r < 0)
                return r;
        f = fmemopen(out, strlen(out), "r");
        if (!f)
                return -errno;
        return passwd_find(f, name, uid, false, ret);
}

static int user_lookup(const char *name, uid_t uid, struct userdb_user *ret) {
        _cleanup_fclose_ FILE *f = fopen(USERDB_PASSWD, "re");
        int r = -ENOENT;

        if (f)
                r = passwd_find(f, name, uid, true, ret);
        if (r != -ENOENT)
                return r;
        return getent_user(name, uid, ret);
}

int userdb_user_by_name(const char *name, struct userdb_user *ret) {
        if (!name || !*name)
                return -EINVAL;
        return user_lookup(name, 0, ret);
}

int userdb_user_by_uid(uid_t uid, struct userdb_user *ret) {
        return user_lookup(NULL, uid, ret);
}

int userdb_group_by_name(const char *name, gid_t *ret) {
        const char *args[4] = {"group", "--", name, NULL};
        _cleanup_free_ char *out = NULL;
        int r = -ENOENT;

        if (!name || !*name)
                return -EINVAL;
        {
                _cleanup_fclose_ FILE *f = fopen(USERDB_GROUP, "re");
                if (f)
                        r = group_find(f, name, ret);
        }
        if (r != -ENOENT)
                return r;
        r = getent(args, &out);
        if (r < 0)
                return r;
        _cleanup_fclose_ FILE *m = fmemopen(out, strlen(out), "r");
        if (!m)
                return -errno;
        return group_find(m, name, ret);
}

static int groups_add(gid_t **g, size_t *n, size_t *cap, gid_t gid) {
        for (size_t i = 0; i < *n; i++)
                if ((*g)[i] == gid)
                        return 0;
        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 16;
                gid_t *p = c > 65536 ? NULL : realloc(*g, c * sizeof *p);
                if (!p)
                        return -ENOMEM;
                *g = p;
                *cap = c;
        }
        (*g)[(*n)++] = gid;
        return 0;
}

int userdb_groups(const struct userdb_user *u, gid_t primary, gid_t **ret, size_t *ret_n) {
        const char *user = u->name;
        _cleanup_free_ gid_t *g = NULL;
        size_t n = 0, cap = 0;
        int r;

        r = groups_add(&g, &n, &cap, primary);
        if (r < 0)
                return r;
        if (u->from_files) {
                /* a user of /etc/passwd: every /etc/group entry naming them */
                _cleanup_fclose_ FILE *f = fopen(USERDB_GROUP, "re");
                _cleanup_free_ char *buf = NULL;
                size_t size = 0;
                struct group gr;
                while (f && (r = next_group(f, &gr, &buf, &size)) > 0)
                        for (char **m = gr.gr_mem; m && *m; m++)
                                if (strcmp(*m, user) == 0) {
                                        r = groups_add(&g, &n, &cap, gr.gr_gid);
                                        if (r < 0)
                                                return r;
                                        break;
                                }
                if (r < 0)
                        return r;
        } else {
                /* a directory user: "NAME gid gid ..." from getent initgroups */
                const char *args[4] = {"initgroups", "--", user, NULL};
                _cleanup_free_ char *out = NULL;
                char *save = NULL, *tok;
                r = getent(args, &out);
                if (r < 0)
                        return r;
                tok = strtok_r(out, " \t\n", &save); /* the name */
                while (tok && (tok = strtok_r(NULL, " \t\n", &save))) {
                        uint64_t v;
                        if (parse_u64(tok, &v) < 0 || v >= UINT32_MAX)
                                return -EBADMSG;
                        r = groups_add(&g, &n, &cap, (gid_t) v);
                        if (r < 0)
                                return r;
                }
        }
        *ret = TAKE_PTR(g);
        *ret_n = n;
        return 0;
}
