/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash inside Slurm: configuration, profile choice, cgroup layout, state
 * files (see slurm.h for the theory of operation).
 *
 * slurm.ini is read through the profile module (one inih adapter): same line
 * reader, same trust rules, same FILE:LINE errors.
 */
#include "slurm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../engine/cgroup/cgroupfs.h"
#include "../engine/placement/host.h"
#include "../settings/options.h"
#include "../settings/profile.h"
#include "../report/report.h"

enum {
        SEEN_PROFILE = 1 << 0,
        SEEN_USER_PROFILES = 1 << 1,
        SEEN_ON_ERROR = 1 << 2,
        SEEN_STATE_DIR = 1 << 3,
        SEEN_REPORT_DIR = 1 << 4,
        SEEN_KILL_TIMEOUT = 1 << 5,
        SEEN_EPILOG_WAIT = 1 << 6,
        SEEN_MODE = 1 << 7,
};

void slurm_conf_init(struct slurm_conf *c) {
        memset(c, 0, sizeof *c);
        c->on_error = SLURM_ON_ERROR_CONTINUE;
        c->kill_timeout_ns = 10 * NSEC_PER_SEC;
        c->epilog_wait_ns = 600 * NSEC_PER_SEC;
}

void slurm_conf_done(struct slurm_conf *c) {
        free(c->path);
        free(c->profile);
        for (size_t i = 0; i < c->n_maps; i++) {
                free(c->maps[i].key);
                free(c->maps[i].profile);
        }
        free(c->maps);
        for (size_t i = 0; i < c->n_user_profiles; i++)
                free(c->user_profiles[i]);
        free(c->user_profiles);
        free(c->state_dir);
        free(c->report_dir);
        slurm_conf_init(c);
}

const char *slurm_on_error_to_string(enum slurm_on_error e) {
        switch (e) {
        case SLURM_ON_ERROR_FAIL_JOB:
                return "fail-job";
        case SLURM_ON_ERROR_DRAIN:
                return "drain";
        case SLURM_ON_ERROR_CONTINUE:
                break;
        }
        return "continue";
}

static bool profile_value_ok(const char *v) {
        return strcmp(v, SLURM_PROFILE_NONE) == 0 || leash_profile_name_is_valid(v);
}

static int seen_once(struct slurm_conf *c, unsigned bit, const char *key, char *why, size_t size) {
        if (c->seen & bit) {
                snprintf(why, size, "duplicate key '%s'", key);
                return -1;
        }
        c->seen |= bit;
        return 0;
}

static int set_dir(char **dst, const char *key, const char *v, char *why, size_t size) {
        if (v[0] != '/' || strstr(v, "/../") || strlen(v) > 1024) {
                snprintf(why, size, "%s: '%s': expected an absolute path", key, v);
                return -1;
        }
        free(*dst);
        *dst = strdup(v);
        return *dst ? 0 : -1;
}

static int add_user_profiles(struct slurm_conf *c, const char *v, char *why, size_t size) {
        _cleanup_free_ char *copy = strdup(v);
        char *save = NULL;

        if (!copy)
                return -1;
        for (char *t = strtok_r(copy, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
                char **l;
                if (strcmp(t, "*") != 0 && !profile_value_ok(t)) {
                        snprintf(why, size, "user-profiles: '%s': not a profile name (or *)", t);
                        return -1;
                }
                l = realloc(c->user_profiles, (c->n_user_profiles + 1) * sizeof *l);
                if (!l)
                        return -1;
                c->user_profiles = l;
                if (!(l[c->n_user_profiles] = strdup(t)))
                        return -1;
                c->n_user_profiles++;
        }
        return 0;
}

static int add_map(struct slurm_conf *c, const char *key, const char *v, char *why, size_t size) {
        const char *dot = strchr(key, '.');
        struct slurm_conf_map *m;

        if (!dot[1] || strlen(dot + 1) > 127) {
                snprintf(why, size, "'%s': expected %.*s.NAME", key, (int) (dot - key), key);
                return -1;
        }
        if (!profile_value_ok(v)) {
                snprintf(why, size, "%s: '%s': not a profile name (or none)", key, v);
                return -1;
        }
        for (size_t i = 0; i < c->n_maps; i++)
                if (strcmp(c->maps[i].key, key) == 0) {
                        snprintf(why, size, "duplicate key '%s'", key);
                        return -1;
                }
        m = realloc(c->maps, (c->n_maps + 1) * sizeof *m);
        if (!m)
                return -1;
        c->maps = m;
        m = &m[c->n_maps];
        *m = (struct slurm_conf_map){.key = strdup(key), .profile = strdup(v)};
        if (!m->key || !m->profile) {
                free(m->key);
                free(m->profile);
                return -1;
        }
        c->n_maps++;
        return 0;
}

static int conf_handler(void *userdata, const char *section, const char *key, const char *v, char *why, size_t size) {
        struct slurm_conf *c = userdata;

        if (strcmp(section, "slurm") != 0) {
                snprintf(why, size, "unknown section [%s]: slurm.ini has only a [slurm] section", section);
                return -1;
        }
        if (!key)
                return 0;
        if (strcmp(key, "profile") == 0) {
                if (seen_once(c, SEEN_PROFILE, key, why, size) < 0)
                        return -1;
                if (!profile_value_ok(v)) {
                        snprintf(why, size, "profile: '%s': not a profile name (or none)", v);
                        return -1;
                }
                free(c->profile);
                return (c->profile = strdup(v)) ? 0 : -1;
        }
        if (strncmp(key, "partition.", 10) == 0 || strncmp(key, "feature.", 8) == 0 || strncmp(key, "account.", 8) == 0)
                return add_map(c, key, v, why, size);
        if (strcmp(key, "user-profiles") == 0)
                return seen_once(c, SEEN_USER_PROFILES, key, why, size) < 0 ? -1 : add_user_profiles(c, v, why, size);
        if (strcmp(key, "on-error") == 0) {
                if (seen_once(c, SEEN_ON_ERROR, key, why, size) < 0)
                        return -1;
                if (strcmp(v, "continue") == 0)
                        c->on_error = SLURM_ON_ERROR_CONTINUE;
                else if (strcmp(v, "fail-job") == 0)
                        c->on_error = SLURM_ON_ERROR_FAIL_JOB;
                else if (strcmp(v, "drain") == 0)
                        c->on_error = SLURM_ON_ERROR_DRAIN;
                else {
                        snprintf(why, size, "on-error: '%s': expected continue, fail-job or drain", v);
                        return -1;
                }
                return 0;
        }
        if (strcmp(key, "state-dir") == 0)
                return seen_once(c, SEEN_STATE_DIR, key, why, size) < 0 ? -1
                                                                        : set_dir(&c->state_dir, key, v, why, size);
        if (strcmp(key, "report-dir") == 0)
                return seen_once(c, SEEN_REPORT_DIR, key, why, size) < 0 ? -1
                                                                         : set_dir(&c->report_dir, key, v, why, size);
        if (strcmp(key, "kill-timeout") == 0) {
                uint64_t ns;
                if (seen_once(c, SEEN_KILL_TIMEOUT, key, why, size) < 0)
                        return -1;
                if (parse_duration(v, &ns) < 0 || ns == 0 || ns > 3600 * NSEC_PER_SEC) {
                        snprintf(why, size, "kill-timeout: '%s': expected a duration from 1ms to 1h", v);
                        return -1;
                }
                c->kill_timeout_ns = ns;
                return 0;
        }
        if (strcmp(key, "epilog-wait") == 0) {
                uint64_t ns;
                if (seen_once(c, SEEN_EPILOG_WAIT, key, why, size) < 0)
                        return -1;
                if (parse_duration(v, &ns) < 0 || ns == 0 || ns > 7 * 24 * 3600 * NSEC_PER_SEC) {
                        snprintf(why, size, "epilog-wait: '%s': expected a duration from 1ms to 7d", v);
                        return -1;
                }
                c->epilog_wait_ns = ns;
                return 0;
        }
        if (strcmp(key, "mode") == 0) {
                if (seen_once(c, SEEN_MODE, key, why, size) < 0)
                        return -1;
                if (slurm_mode_from_string(v, &c->mode) < 0) {
                        snprintf(why, size, "mode: '%s': expected own or nest", v);
                        return -1;
                }
                return 0;
        }
        snprintf(why, size, "unknown key '%s' (value '%s')", key, v);
        return -1;
}

static int conf_defaults(struct slurm_conf *c) {
        if (!c->profile && !(c->profile = strdup(LEASH_PROFILE_DEFAULT)))
                return -ENOMEM;
        if (!c->state_dir && !(c->state_dir = strdup(SLURM_DEFAULT_STATE_DIR)))
                return -ENOMEM;
        if (!c->report_dir && !(c->report_dir = strdup(SLURM_DEFAULT_REPORT_DIR)))
                return -ENOMEM;
        return 0;
}

int slurm_conf_load(struct slurm_conf *c, const char *config_dir, bool trust, struct leash_profiles *errs) {
        char path[4200];
        int r = 0;

        snprintf(path, sizeof path, "%s/slurm.ini", config_dir);
        if (access(path, F_OK) == 0) {
                if (!(c->path = strdup(path)))
                        return -ENOMEM;
                r = leash_ini_load_other(errs, path, conf_handler, c);
        } else if (errno != ENOENT) {
                /* unreadable for another reason: let the loader say why */
                r = leash_ini_load_other(errs, path, conf_handler, c);
        }
        if (r == -ENOMEM || conf_defaults(c) < 0)
                return -ENOMEM;
        return r;
}

int slurm_conf_load_buffer(struct slurm_conf *c, const char *name, const char *data, size_t size,
                           struct leash_profiles *errs) {
        int r = leash_ini_load_other_buffer(errs, name, data, size, conf_handler, c);
        if (r == -ENOMEM || conf_defaults(c) < 0)
                return -ENOMEM;
        return r;
}

bool slurm_user_profile_allowed(const struct slurm_conf *c, const char *profile) {
        for (size_t i = 0; i < c->n_user_profiles; i++)
                if (strcmp(c->user_profiles[i], "*") == 0 || strcmp(c->user_profiles[i], profile) == 0)
                        return true;
        return false;
}

static const struct slurm_conf_map *map_find(const struct slurm_conf *c, const char *kind, const char *name) {
        char key[160];

        if (!name[0])
                return NULL;
        snprintf(key, sizeof key, "%s.%s", kind, name);
        for (size_t i = 0; i < c->n_maps; i++)
                if (strcmp(c->maps[i].key, key) == 0)
                        return &c->maps[i];
        return NULL;
}

int slurm_choose_profile(const struct slurm_conf *c, const struct slurm_job *j, const char **ret_profile,
                         const char **ret_why, char *why, size_t size) {
        const struct slurm_conf_map *m;
        char features[sizeof j->features], *save = NULL;

        if (j->requested_profile[0]) {
                if (!slurm_user_profile_allowed(c, j->requested_profile)) {
                        snprintf(why, size, "--leash-profile=%s: not allowed on this cluster (user-profiles)",
                                 j->requested_profile);
                        return -EPERM;
                }
                *ret_profile = j->requested_profile;
                *ret_why = "--leash-profile";
                return 0;
        }
        if ((m = map_find(c, "account", j->account)) || (m = map_find(c, "partition", j->partition))) {
                *ret_profile = m->profile;
                *ret_why = m->key;
                return 0;
        }
        /* SLURM_JOB_CONSTRAINTS: "a&b", "a|b", "[a*2&b]": the names in it */
        snprintf(features, sizeof features, "%s", j->features);
        for (char *t = strtok_r(features, "&|,[]()*0123456789 ", &save); t;
             t = strtok_r(NULL, "&|,[]()*0123456789 ", &save))
                if ((m = map_find(c, "feature", t))) {
                        *ret_profile = m->profile;
                        *ret_why = m->key;
                        return 0;
                }
        *ret_profile = c->profile;
        *ret_why = "profile";
        return 0;
}

int slurm_step_name(const char *step_id, char *buf, size_t size) {
        uint64_t v;

        if (!step_id || !step_id[0]) {
                snprintf(buf, size, "batch");
                return 0;
        }
        if (strcmp(step_id, "batch") == 0 || strcmp(step_id, "extern") == 0 || strcmp(step_id, "interactive") == 0) {
                snprintf(buf, size, "%s", step_id);
                return 0;
        }
        if (parse_u64(step_id, &v) < 0 || v > UINT32_MAX)
                return -EINVAL;
        switch (v) {
        case 0xfffffffbu:
                snprintf(buf, size, "batch");
                break;
        case 0xfffffffcu:
                snprintf(buf, size, "extern");
                break;
        case 0xfffffffau:
                snprintf(buf, size, "interactive");
                break;
        default:
                if (v >= 0xfffffff0u)
                        return -EINVAL;
                snprintf(buf, size, "%" PRIu64, v);
        }
        return 0;
}

bool slurm_step_valid(const char *name) {
        char buf[40];
        /* a name slurm_step_name gives: batch, extern, interactive or a step
         * number in its one decimal spelling (no sign, no leading zero) */
        if (!name || !name[0] || strlen(name) >= sizeof buf || (name[0] == '0' && name[1]) ||
            strspn(name, "0123456789") != strlen(name))
                return strcmp(name ? name : "", "batch") == 0 || strcmp(name ? name : "", "extern") == 0 ||
                       strcmp(name ? name : "", "interactive") == 0;
        return slurm_step_name(name, buf, sizeof buf) == 0 && strcmp(buf, name) == 0;
}

static int open_or_make(int dir_fd, const char *name, bool create, int *ret_fd) {
        int fd;

        if (create && mkdirat(dir_fd, name, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}

#define WANT_CTL (CTL_MEMORY | CTL_PIDS | CTL_CPU | CTL_IO)

int slurm_cgroup_root(bool create, char *ret_path, size_t size, int *ret_fd, unsigned *ret_available) {
        _cleanup_close_ int mount_fd = -1, leash_fd = -1, slurm_fd = -1;
        char mount[4096];
        unsigned v1, avail = 0;
        int r;

        r = host_cgroup2_mount(mount, sizeof mount, &v1);
        if (r < 0)
                return r;
        mount_fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (mount_fd < 0)
                return negative_errno();
        r = open_or_make(mount_fd, "leash", create, &leash_fd);
        if (r < 0)
                return r;
        r = open_or_make(leash_fd, "slurm", create, &slurm_fd);
        if (r < 0)
                return r;
        if (create) {
                /* only what the hierarchy offers; an error here is reported by the
                 * plan (limits enforced by "none"), not fatal */
                (void) cgroupfs_enable_controllers(mount_fd, WANT_CTL, &avail);
                (void) cgroupfs_enable_controllers(leash_fd, WANT_CTL, &avail);
                (void) cgroupfs_enable_controllers(slurm_fd, WANT_CTL, &avail);
        } else
                (void) cgroupfs_offered_controllers(slurm_fd, false, WANT_CTL, &avail);
        if (ret_path)
                snprintf(ret_path, size, "%s/leash/slurm", mount);
        if (ret_available)
                *ret_available = avail;
        *ret_fd = TAKE_FD(slurm_fd);
        return 0;
}

static void job_dirname(uint32_t id, char *buf, size_t size) {
        snprintf(buf, size, "job_%" PRIu32, id);
}

int slurm_job_cgroup_open(int root_fd, uint32_t job_id, int *ret_fd) {
        char name[32];

        job_dirname(job_id, name, sizeof name);
        return open_or_make(root_fd, name, false, ret_fd);
}

int slurm_job_cgroup_create(int root_fd, uint32_t job_id, int *ret_fd) {
        _cleanup_close_ int fd = -1;
        unsigned avail;
        char name[32];
        int r;

        job_dirname(job_id, name, sizeof name);
        /* a requeued job runs the Prolog again with the same id: start afresh */
        (void) slurm_job_cgroup_remove(root_fd, job_id);
        if (mkdirat(root_fd, name, 0755) < 0)
                return negative_errno();
        r = open_or_make(root_fd, name, false, &fd);
        if (r < 0) {
                (void) unlinkat(root_fd, name, AT_REMOVEDIR);
                return r;
        }
        /* steps get the controllers too, for their own usage figures */
        (void) cgroupfs_enable_controllers(fd, WANT_CTL, &avail);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int slurm_step_cgroup_open(int job_fd, const char *step, bool create, int *ret_fd) {
        char name[64];

        if (!step[0] || strchr(step, '/') || strlen(step) > 32)
                return -EINVAL;
        snprintf(name, sizeof name, "step_%s", step);
        return open_or_make(job_fd, name, create, ret_fd);
}

int slurm_for_each_step(int job_fd, slurm_step_fn fn, void *userdata) {
        int dfd = openat(job_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct dirent *de;
        DIR *d;
        int n = 0;

        if (dfd < 0)
                return negative_errno();
        d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return negative_errno();
        }
        while ((de = readdir(d))) {
                _cleanup_close_ int sfd = -1;
                if (de->d_type != DT_DIR || strncmp(de->d_name, "step_", 5) != 0)
                        continue;
                sfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sfd < 0)
                        continue;
                fn(userdata, de->d_name, sfd);
                n++;
        }
        closedir(d);
        return n;
}

int slurm_tree_signal(int job_fd, int sig) {
        /* the job cgroup's subtree: its steps and whatever a job made below them */
        int k = cgroupfs_signal_all(job_fd, sig, 0);
        return k > 0 ? k : 0;
}

struct remove_ctx {
        int job_fd;
        int error;
};

static void remove_step(void *userdata, const char *dirname, int step_fd) {
        struct remove_ctx *ctx = userdata;
        int r = cgroupfs_remove(ctx->job_fd, dirname, step_fd);
        if (r < 0 && !ctx->error)
                ctx->error = r;
}

int slurm_job_cgroup_remove(int root_fd, uint32_t job_id) {
        _cleanup_close_ int fd = -1;
        struct remove_ctx ctx = {0};
        char name[32];
        int r;

        job_dirname(job_id, name, sizeof name);
        r = open_or_make(root_fd, name, false, &fd);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        /* cgroup.kill on the job reaches every step below it */
        if (cgroupfs_populated(fd) > 0) {
                (void) cgroupfs_kill(fd);
                (void) cgroupfs_wait_empty(fd, 5000);
        }
        ctx.job_fd = fd;
        (void) slurm_for_each_step(fd, remove_step, &ctx);
        r = cgroupfs_remove(root_fd, name, fd);
        return r < 0 ? r : ctx.error;
}

int slurm_file_replace(int dir_fd, const char *name, const char *text) {
        char tmp[128];
        size_t len = strlen(text);
        int fd, r = 0;

        snprintf(tmp, sizeof tmp, ".%s.%d.tmp", name, (int) getpid());
        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        /* whatever the caller's umask: readable by all, writable by the owner */
        if (fchmod(fd, 0644) < 0)
                r = negative_errno();
        for (size_t off = 0; r == 0 && off < len;) {
                ssize_t k = write(fd, text + off, len - off);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        r = negative_errno();
                        break;
                }
                off += (size_t) k;
        }
        if (close(fd) < 0 && r == 0)
                r = negative_errno();
        if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = negative_errno();
        if (r < 0)
                (void) unlinkat(dir_fd, tmp, 0);
        return r;
}

/*
 * The Epilog's report: the `leash run` schema plus slurm{}, steps[] and
 * errors[] (new keys only: schema 1 stays). Slurm starts the tasks; leash only
 * places them in the job cgroup. The sandbox and isolation keys then say so,
 * with the job's own identity, and not what an empty leash_result would
 * claim (uid 0, no capabilities).
 */
static void sandbox_keys(struct report_json *rj, const struct slurm_job *j, bool nest) {
        char buf[160];

        (void) report_json_object(rj, "sandbox");
        (void) report_json_bool(rj, "sandbox.applied", false);
        (void) report_json_str(rj, "sandbox.started_by", "slurmstepd");
        (void) report_json_int(rj, "sandbox.identity.uid", (int64_t) j->uid);
        (void) report_json_int(rj, "sandbox.identity.gid", (int64_t) j->gid);
        (void) report_json_str(rj, "sandbox.note",
                               nest ? "Slurm's cgroup plugin placed the tasks (mode nest); leash changed no identity, "
                                      "capability or seccomp filter"
                                    : "leash placed Slurm's tasks in the job cgroup; it changed no identity, "
                                      "capability or seccomp filter");
        if (j->uid == 0)
                snprintf(buf, sizeof buf, "none: Slurm runs the tasks as root, who can leave the cgroup or stop leash");
        else
                snprintf(buf, sizeof buf,
                         "identity: Slurm runs the tasks as uid %u, who cannot write leash's cgroups or signal leash",
                         (unsigned) j->uid);
        (void) report_json_str(rj, "isolation", buf);
}

static const char *or_null(const char *s) {
        return s && s[0] ? s : NULL;
}

int slurm_report_format(const struct leash_spec *c, const struct leash_result *r, const struct slurm_report *s,
                        char **ret_text) {
        const struct slurm_job *j = s->job;
        struct report_json *rj;
        int k;

        k = report_json_new(c, r, &rj);
        if (k < 0)
                return k;
        sandbox_keys(rj, j, s->nest);
        if (s->nest) {
                (void) report_json_str(rj, "slurm_mode", "nest");
                /* the figures are Slurm's job cgroup's, and slurmstepd is in it */
                (void) report_json_str(rj, "usage.cpu_time_note",
                                       "cpu.stat of Slurm's job cgroup, which holds slurmstepd (step_*/slurm) beside "
                                       "the tasks: its own CPU time is counted, in steps[] too");
                /* the sampler's figures leave slurmstepd out where they can */
                if (r->sampling.interval_ns)
                        (void) report_json_str(
                                rj, "sampling.note",
                                "slurmstepd's cgroups (step_*/slurm) left out: not walked for processes "
                                "and threads, their memory, swap, pids and CPU time taken out of the job "
                                "cgroup's; the figures of memory.stat, io.stat and the pressure files "
                                "still hold them");
        }
        (void) report_json_object(rj, "slurm");
        (void) report_json_int(rj, "slurm.job_id", j->id);
        (void) report_json_str(rj, "slurm.user", or_null(j->user));
        (void) report_json_int(rj, "slurm.uid", (int64_t) j->uid);
        (void) report_json_int(rj, "slurm.gid", (int64_t) j->gid);
        (void) report_json_str(rj, "slurm.partition", or_null(j->partition));
        (void) report_json_str(rj, "slurm.account", or_null(j->account));
        (void) report_json_str(rj, "slurm.features", or_null(j->features));
        (void) report_json_str(rj, "slurm.node", or_null(j->node));
        (void) report_json_str(rj, "slurm.cluster", or_null(j->cluster));
        (void) report_json_str(rj, "slurm.requested_profile", or_null(j->requested_profile));
        (void) report_json_str(rj, "slurm.profile_chosen_by", s->profile_why);
        (void) report_json_str(rj, "slurm.on_error", s->on_error ? s->on_error : "continue");
        (void) report_json_int(rj, "slurm.tasks_placed", (int64_t) s->tasks_placed);
        (void) report_json_array(rj, "steps");
        for (size_t i = 0; i < s->n_steps; i++)
                (void) report_json_append_usage(rj, "steps", "step", s->steps[i].name, &s->steps[i].usage,
                                                s->steps[i].leftovers_killed);
        (void) report_json_array(rj, "errors");
        for (size_t i = 0; i < s->n_errors; i++)
                (void) report_json_append_str(rj, "errors", s->errors[i]);
        k = report_json_text(rj, ret_text);
        report_json_free(rj);
        return k;
}
