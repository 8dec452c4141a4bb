/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The context of `leash slurm`'s hooks and commands (slurm-ctx.h): the job,
 * slurm.ini, the errors for the report, and the job's state directory.
 */
#include "slurm-ctx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/kvfile.h"
#include "../basic/log.h"
#include "../basic/parse.h"
#include "../basic/procstat.h"
#include "../basic/trust.h"

void slurm_ctx_error(struct slurm_ctx *x, const char *fmt, ...) {
        char *s = NULL, **l;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        if (!s)
                return;
        log_error("%s", s);
        l = realloc(x->errors, (x->n_errors + 1) * sizeof *l);
        if (!l) {
                free(s);
                return;
        }
        x->errors = l;
        l[x->n_errors++] = s;
}

void slurm_ctx_done(struct slurm_ctx *x) {
        slurm_conf_done(&x->conf);
        for (size_t i = 0; i < x->n_errors; i++)
                free(x->errors[i]);
        free(x->errors);
}

const char *slurm_env(const char *name) {
        const char *v = getenv(name);
        return v ? v : "";
}

static void env_copy(char *buf, size_t size, const char *name) {
        snprintf(buf, size, "%s", slurm_env(name));
}

void slurm_ctx_load_conf(struct slurm_ctx *x) {
        struct leash_profiles *errs = NULL;
        const char *bad = NULL;
        int r;

        if (leash_profile_paths_default(&x->paths, &bad) < 0)
                slurm_ctx_error(x, "LEASH_CONFIG_DIR: '%s': expected an absolute path (the built-in one is read)",
                                bad ? bad : "");
        slurm_conf_init(&x->conf);
        if (leash_profiles_new(x->paths.trust, &errs) < 0) {
                slurm_ctx_error(x, "read slurm.ini: %s", strerror(ENOMEM));
                return;
        }
        r = slurm_conf_load(&x->conf, x->paths.config_dir, x->paths.trust, errs);
        for (size_t i = 0; i < leash_profiles_n_errors(errs); i++)
                slurm_ctx_error(x, "%s", leash_profiles_error(errs, i));
        leash_profiles_free(errs);
        errs = NULL;
        x->conf_ok = r == 0;
        if (r < 0) { /* a broken file counts as absent, its errors in the report */
                slurm_conf_done(&x->conf);
                /* the reader records into an object, never NULL (a broken
                 * slurm.ini crashed every hook and status here) */
                if (leash_profiles_new(x->paths.trust, &errs) == 0)
                        (void) slurm_conf_load_buffer(&x->conf, "(defaults)", "", 0, errs);
                leash_profiles_free(errs);
        }
}

int slurm_ctx_load_job(struct slurm_ctx *x) {
        uint64_t v;
        const char *opt = getenv(SPANK_OPT_ENV);

        if (parse_u64(slurm_env("SLURM_JOB_ID"), &v) < 0 || v == 0 || v > UINT32_MAX) {
                log_error("SLURM_JOB_ID='%s': expected a job id (is this run by slurmd?)", slurm_env("SLURM_JOB_ID"));
                return -EINVAL;
        }
        x->job.id = (uint32_t) v;
        env_copy(x->job.user, sizeof x->job.user, "SLURM_JOB_USER");
        x->job.uid = parse_u64(slurm_env("SLURM_JOB_UID"), &v) == 0 ? (uid_t) v : (uid_t) -1;
        x->job.gid = parse_u64(slurm_env("SLURM_JOB_GID"), &v) == 0 ? (gid_t) v : (gid_t) -1;
        env_copy(x->job.partition, sizeof x->job.partition, "SLURM_JOB_PARTITION");
        env_copy(x->job.account, sizeof x->job.account, "SLURM_JOB_ACCOUNT");
        env_copy(x->job.features, sizeof x->job.features, "SLURM_JOB_CONSTRAINTS");
        env_copy(x->job.node, sizeof x->job.node, "SLURMD_NODENAME");
        env_copy(x->job.cluster, sizeof x->job.cluster, "SLURM_CLUSTER_NAME");
        if (!opt)
                opt = getenv(SPANK_OPT_ENV2);
        x->job.requested_too_long = (size_t) snprintf(x->job.requested_profile, sizeof x->job.requested_profile, "%s",
                                                      opt ? opt : "") >= sizeof x->job.requested_profile;
        if (!x->job.node[0]) {
                if (gethostname(x->job.node, sizeof x->job.node) < 0)
                        snprintf(x->job.node, sizeof x->job.node, "localhost");
        }
        return 0;
}

/* mkdir -p, each new component 0755 */
static int mkdir_p(const char *path) {
        char buf[4096];

        snprintf(buf, sizeof buf, "%s", path);
        for (char *p = buf + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                                return negative_errno();
                        *p = '/';
                }
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

/* A directory root writes into: made when missing, then judged with the trust
 * rules (root's, not writable by others, nor any directory above it). */
int slurm_root_dir_open(const char *path, bool create, char *why, size_t size) {
        int r;

        why[0] = '\0';
        if (create && (r = mkdir_p(path)) < 0) {
                snprintf(why, size, "%s: %s", path, strerror(-r));
                return r;
        }
        r = trust_open(path, true, geteuid() == 0, why, size);
        if (r < 0 && !why[0])
                snprintf(why, size, "%s: %s", path, strerror(-r));
        return r;
}

int slurm_ctx_state_open(struct slurm_ctx *x, bool create, int *ret_fd, char *why, size_t size) {
        _cleanup_close_ int dfd = -1;
        char name[32];
        int fd;

        dfd = slurm_root_dir_open(x->conf.state_dir, create, why, size);
        if (dfd < 0)
                return dfd;
        snprintf(name, sizeof name, "job_%" PRIu32, x->job.id);
        if (create && mkdirat(dfd, name, 0755) < 0 && errno != EEXIST) {
                snprintf(why, size, "%s/%s: %s", x->conf.state_dir, name, strerror(errno));
                return negative_errno();
        }
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                snprintf(why, size, "%s/%s: %s", x->conf.state_dir, name, strerror(errno));
                return negative_errno();
        }
        *ret_fd = fd;
        return 0;
}

void slurm_ctx_state_remove(struct slurm_ctx *x) {
        char path[4200];
        const char *files[] = {"state", "verdict", "sock"};
        _cleanup_close_ int dfd = -1;

        snprintf(path, sizeof path, "%s/job_%" PRIu32, x->conf.state_dir, x->job.id);
        dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                (void) unlinkat(dfd, files[i], 0);
        (void) rmdir(path);
}

/* A state or verdict file, refused (-EBADMSG) unless it is well formed: a
 * line a value forged, or a key given twice, is never read as the first one. */
int slurm_state_read(int state_fd, const char *name, char **ret) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_at_alloc(state_fd, name, &text, NULL);

        if (r < 0)
                return r;
        if (kv_check(text) < 0)
                return -EBADMSG;
        *ret = TAKE_PTR(text);
        return 0;
}
uint64_t slurm_proc_starttime(pid_t pid) {
        struct procstat ps;
        return procstat_read(AT_FDCWD, pid, &ps) < 0 ? 0 : ps.start;
}

static char proc_state(pid_t pid) {
        struct procstat ps;
        return procstat_read(AT_FDCWD, pid, &ps) < 0 ? '?' : ps.state;
}

uint64_t slurm_kv_u64(const char *text, const char *key, uint64_t dflt) {
        char buf[64];
        uint64_t v;
        if (!text || kv_get(text, key, buf, sizeof buf) < 0 || parse_u64(buf, &v) < 0)
                return dflt;
        return v;
}

static int pidfd_open_(pid_t pid) {
        return (int) syscall(SYS_pidfd_open, pid, 0);
}

/* The supervisor's pid, if that process is still the one the Prolog started. */
int slurm_supervisor_pidfd(const char *state) {
        pid_t pid = (pid_t) slurm_kv_u64(state, "supervisor_pid", 0);
        uint64_t start = slurm_kv_u64(state, "supervisor_start", 0);
        int fd;

        if (pid <= 0)
                return -ESRCH;
        fd = pidfd_open_(pid);
        if (fd < 0)
                return negative_errno();
        /* a recycled pid, or a zombie nobody reaped (its fds are gone) */
        if (slurm_proc_starttime(pid) != start || proc_state(pid) == 'Z') {
                close(fd);
                return -ESRCH;
        }
        return fd;
}

bool slurm_supervisor_alive(const char *state) {
        int fd = slurm_supervisor_pidfd(state);
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

int slurm_ctx_for_each_state(struct slurm_ctx *x, int (*fn)(struct slurm_ctx *, uint32_t, bool), bool arg) {
        DIR *d = opendir(x->conf.state_dir);
        struct dirent *de;
        int rc = 0;

        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((de = readdir(d))) {
                uint64_t id;
                if (strncmp(de->d_name, "job_", 4) != 0 || parse_u64(de->d_name + 4, &id) < 0 || id > UINT32_MAX)
                        continue;
                if (fn(x, (uint32_t) id, arg) != 0)
                        rc = 1;
        }
        closedir(d);
        return rc;
}
