/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash slurm prolog|epilog|task-prolog|status|sweep: leash as Slurm's
 * Prolog, Epilog and TaskProlog (see leash-slurm(8)).
 *
 * Slurm runs these with no arguments and no PATH: the admin points slurm.conf
 * at the wrappers in $(libexecdir)/leash/ (symlinks to leash, dispatched on
 * their name by main.c). Everything comes from SLURM_* variables and
 * slurm.ini.
 *
 * The Prolog never fails the node for leash's own trouble unless on-error =
 * drain: with continue the job runs unconfined and the report says
 * setup_error; with fail-job its tasks are refused (by the TaskProlog or the
 * SPANK plugin, whose failure fails the job without draining).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/kvfile.h"
#include "../basic/log.h"
#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../basic/procstat.h"
#include "../basic/utf8.h"
#include "../basic/time-util.h"
#include "../basic/trust.h"
#include "../engine/cgroup/account.h"
#include "../engine/cgroup/cgroupfs.h"
#include "../settings/options.h"
#include "../settings/profile.h"
#include "cli.h"
#include "slurm-supervise.h"

#define SPANK_OPT_ENV "SPANK__SLURM_SPANK_OPTION_leash_leash_profile"
#define SPANK_OPT_ENV2 "SPANK__SLURM_SPANK_OPTION_leash_leash-profile"
#define STATE_ERRORS_MAX 8
#define STATE_SIZE 32768

static void slurm_help(FILE *f) {
        fprintf(f,
                "Usage: leash slurm prolog        Prolog= (root): job cgroup, limits, per-job supervisor\n"
                "       leash slurm epilog        Epilog= (root): kill leftovers, report, remove the cgroups\n"
                "       leash slurm task-prolog   TaskProlog= (the user): place the task in its step cgroup\n"
                "       leash slurm status [--config-dir DIR] [-o json|text] [JOBID]\n"
                "       leash slurm sweep [--dry-run] [--orphans]  remove what dead supervisors left behind\n"
                "       leash slurm check-profile NAME  may a user ask for NAME (--leash-profile)?\n"
                "       leash slurm check [--slurm-conf=FILE]  which mode the node is in (own or nest)\n"
                "\n"
                "Slurm passes no arguments and no PATH: point slurm.conf at the wrappers\n"
                "  Prolog=%s/leash/slurm-prolog\n"
                "  Epilog=%s/leash/slurm-epilog\n"
                "  TaskProlog=%s/leash/slurm-task-prolog\n"
                "Configuration: slurm.ini in leash's configuration directory, section [slurm].\n"
                "See leash-slurm(8).\n",
                LEASH_LIBEXECDIR, LEASH_LIBEXECDIR, LEASH_LIBEXECDIR);
}

/* --- context ---------------------------------------------------------------- */

struct ctx {
        struct slurm_conf conf;
        struct slurm_job job;
        struct leash_profile_paths paths;
        char **errors; /* for the report */
        size_t n_errors;
        bool conf_ok;
};

static void ctx_error(struct ctx *x, const char *fmt, ...) _printf_(2, 3);
static void ctx_error(struct ctx *x, const char *fmt, ...) {
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

static void ctx_done(struct ctx *x) {
        slurm_conf_done(&x->conf);
        for (size_t i = 0; i < x->n_errors; i++)
                free(x->errors[i]);
        free(x->errors);
}

static const char *env(const char *name) {
        const char *v = getenv(name);
        return v ? v : "";
}

static void env_copy(char *buf, size_t size, const char *name) {
        snprintf(buf, size, "%s", env(name));
}

/* Reads slurm.ini; on errors keeps the defaults and records them. */
static void ctx_load_conf(struct ctx *x) {
        struct leash_profiles *errs = NULL;
        const char *bad = NULL;
        int r;

        if (leash_profile_paths_default(&x->paths, &bad) < 0)
                ctx_error(x, "LEASH_CONFIG_DIR: '%s': expected an absolute path (the built-in one is read)",
                          bad ? bad : "");
        slurm_conf_init(&x->conf);
        if (leash_profiles_new(x->paths.trust, &errs) < 0) {
                ctx_error(x, "read slurm.ini: %s", strerror(ENOMEM));
                return;
        }
        r = slurm_conf_load(&x->conf, x->paths.config_dir, x->paths.trust, errs);
        for (size_t i = 0; i < leash_profiles_n_errors(errs); i++)
                ctx_error(x, "%s", leash_profiles_error(errs, i));
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

static int ctx_load_job(struct ctx *x) {
        uint64_t v;
        const char *opt = getenv(SPANK_OPT_ENV);

        if (parse_u64(env("SLURM_JOB_ID"), &v) < 0 || v == 0 || v > UINT32_MAX) {
                log_error("SLURM_JOB_ID='%s': expected a job id (is this run by slurmd?)", env("SLURM_JOB_ID"));
                return -EINVAL;
        }
        x->job.id = (uint32_t) v;
        env_copy(x->job.user, sizeof x->job.user, "SLURM_JOB_USER");
        x->job.uid = parse_u64(env("SLURM_JOB_UID"), &v) == 0 ? (uid_t) v : (uid_t) -1;
        x->job.gid = parse_u64(env("SLURM_JOB_GID"), &v) == 0 ? (gid_t) v : (gid_t) -1;
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
static int open_root_dir(const char *path, bool create, char *why, size_t size) {
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

static int state_open(struct ctx *x, bool create, int *ret_fd, char *why, size_t size) {
        _cleanup_close_ int dfd = -1;
        char name[32];
        int fd;

        dfd = open_root_dir(x->conf.state_dir, create, why, size);
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

static void state_remove(struct ctx *x) {
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
static int state_read(int state_fd, const char *name, char **ret) {
        _cleanup_free_ char *text = NULL;
        int r = read_file_at_alloc(state_fd, name, &text, NULL);

        if (r < 0)
                return r;
        if (kv_check(text) < 0)
                return -EBADMSG;
        *ret = TAKE_PTR(text);
        return 0;
}

/* --- prolog ------------------------------------------------------------------ */

static uint64_t proc_starttime(pid_t pid) {
        struct procstat ps;
        return procstat_read(AT_FDCWD, pid, &ps) < 0 ? 0 : ps.start;
}

static char proc_state(pid_t pid) {
        struct procstat ps;
        return procstat_read(AT_FDCWD, pid, &ps) < 0 ? '?' : ps.state;
}

static int listen_socket(int state_fd, uid_t uid, int *ret_fd) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        char path[sizeof sa.sun_path];
        _cleanup_close_ int fd = -1;

        (void) unlinkat(state_fd, "sock", 0);
        snprintf(path, sizeof path, "/proc/self/fd/%d/sock", state_fd);
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                return negative_errno();
        /* root and the job's user may connect, no one else (the supervisor
         * also judges each peer by SO_PEERCRED and drops the others unheard) */
        if (fchmodat(state_fd, "sock", 0600, 0) < 0 ||
            (uid != (uid_t) -1 && fchownat(state_fd, "sock", uid, (gid_t) -1, AT_SYMLINK_NOFOLLOW) < 0) ||
            listen(fd, 64) < 0)
                return negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int state_text(struct ctx *x, char *buf, size_t size, const char *profile, const char *why,
                      const struct leash_spec *c, const enum leash_enforcer *plan, const char *cgroup,
                      const char *setup_error, bool refuse, pid_t sv_pid, uint64_t sv_start, uint64_t started) {
        struct kv_buf b = {.buf = buf, .size = size};

        buf[0] = '\0';
        kv_add(&b, "job_id", "%" PRIu32, x->job.id);
        kv_add(&b, "user", "%s", x->job.user);
        kv_add(&b, "uid", "%d", (int) x->job.uid);
        kv_add(&b, "gid", "%d", (int) x->job.gid);
        kv_add(&b, "partition", "%s", x->job.partition);
        kv_add(&b, "account", "%s", x->job.account);
        kv_add(&b, "features", "%s", x->job.features);
        kv_add(&b, "node", "%s", x->job.node);
        kv_add(&b, "cluster", "%s", x->job.cluster);
        kv_add(&b, "requested_profile", "%s", x->job.requested_profile);
        kv_add(&b, "profile", "%s", profile ? profile : "");
        kv_add(&b, "profile_chosen_by", "%s", why ? why : "");
        kv_add(&b, "on_error", "%s", slurm_on_error_to_string(x->conf.on_error));
        kv_add(&b, "mode", "%s", slurm_mode_to_string(x->conf.mode));
        kv_add(&b, "started_realtime_ns", "%" PRIu64, started);
        kv_add(&b, "started_monotonic_ns", "%" PRIu64, now_ns(CLOCK_MONOTONIC) - (now_ns(CLOCK_REALTIME) - started));
        if (c) {
                kv_add(&b, "profile_source", "%s", c->profile_source ? c->profile_source : "");
                kv_add(&b, "grace_ns", "%" PRIu64, c->grace_ns);
                kv_add(&b, "soft_signal", "%d", c->soft_signal);
                for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                        char key[64];
                        if (!leash_spec_has(c, (enum leash_limit) l))
                                continue;
                        snprintf(key, sizeof key, "limit.%s", leash_limit_to_string((enum leash_limit) l));
                        kv_add(&b, key, "%" PRIu64 " %s", c->limit[l], leash_enforcer_to_string(plan[l]));
                }
        }
        if (cgroup)
                kv_add(&b, "cgroup", "%s", cgroup);
        if (setup_error)
                kv_add(&b, "setup_error", "%s", setup_error);
        if (refuse)
                kv_add(&b, "refuse", "1");
        if (sv_pid > 0) {
                kv_add(&b, "supervisor_pid", "%d", (int) sv_pid);
                kv_add(&b, "supervisor_start", "%" PRIu64, sv_start);
        }
        for (size_t i = 0; i < x->n_errors && i < STATE_ERRORS_MAX; i++) {
                char key[32];
                snprintf(key, sizeof key, "error.%zu", i);
                kv_add(&b, key, "%.500s", x->errors[i]);
        }
        return b.overflow ? -E2BIG : 0;
}

/* Writes a state without a supervisor: the setup error, and whether every
 * task is refused. */
static void prolog_state_failed(struct ctx *x, int state_fd, const char *profile, const char *why, const char *msg,
                                bool refuse) {
        char text[STATE_SIZE];

        if (state_fd < 0)
                return;
        if (state_text(x, text, sizeof text, profile, why, NULL, NULL, NULL, msg, refuse, 0, 0,
                       now_ns(CLOCK_REALTIME)) < 0)
                snprintf(text, sizeof text, "setup_error=the state did not fit\n%s", refuse ? "refuse=1\n" : "");
        (void) slurm_file_replace(state_fd, "state", text);
}

/* The Prolog's answer to leash's own trouble, per on-error. */
static int prolog_trouble(struct ctx *x, int state_fd, const char *profile, const char *why, const char *msg) {
        log_error("job %" PRIu32 ": %s (on-error = %s)", x->job.id, msg, slurm_on_error_to_string(x->conf.on_error));
        prolog_state_failed(x, state_fd, profile, why, msg, x->conf.on_error == SLURM_ON_ERROR_FAIL_JOB);
        return x->conf.on_error == SLURM_ON_ERROR_DRAIN ? 1 : 0;
}

/* A job that asked for what cannot be given: its tasks are refused (by the
 * TaskProlog or the plugin, which print msg into the task's stderr). */
static int prolog_refuse_job(struct ctx *x, int state_fd, const char *profile, const char *why, const char *msg) {
        log_error("job %" PRIu32 ": %s: its tasks are refused", x->job.id, msg);
        if (state_fd < 0)
                return 1;
        prolog_state_failed(x, state_fd, profile, why, msg, true);
        return 0;
}

/* The supervisor keeps its three fds, moved to 3, 4, 5, and nothing of
 * slurmd's (or of whoever ran the Prolog). */
static void close_others(struct slurm_supervisor *sv) {
        int *fds[] = {&sv->listen_fd, &sv->job_fd, &sv->state_fd};
        int moved[3];

        for (int i = 0; i < 3; i++)
                moved[i] = fcntl(*fds[i], F_DUPFD_CLOEXEC, 100);
        for (int i = 0; i < 3; i++) {
                if (moved[i] < 0)
                        return; /* keep what we have rather than lose it */
        }
        for (int i = 0; i < 3; i++) {
                if (dup3(moved[i], 3 + i, O_CLOEXEC) < 0)
                        return;
                *fds[i] = 3 + i;
        }
        (void) syscall(SYS_close_range, 6U, ~0U, 0U);
}

/* plugstack.conf: PlugStackConfig=, else slurmd's default beside slurm.conf. */
static void node_plugstack_path(const struct slurm_node *n, const char *conf, char *buf, size_t size) {
        const char *slash = strrchr(conf, '/');
        if (n->plugstack[0])
                snprintf(buf, size, "%s", n->plugstack);
        else
                snprintf(buf, size, "%.*splugstack.conf", slash ? (int) (slash - conf + 1) : 0, conf);
}

/* slurm.conf (path; NULL: $SLURM_CONF, else /etc/slurm/slurm.conf) and its
 * plugstack.conf into n; -errno when slurm.conf cannot be read. */
static int node_read(const char *path, struct slurm_node *n, char *stack_path, size_t size) {
        _cleanup_free_ char *text = NULL, *stack = NULL;
        size_t len;
        int r;

        if (!path)
                path = getenv("SLURM_CONF");
        if (!path || !*path)
                path = "/etc/slurm/slurm.conf";
        r = read_file_at_alloc(AT_FDCWD, path, &text, &len);
        if (r < 0)
                return r;
        (void) slurm_node_parse_conf(text, len, n);
        node_plugstack_path(n, path, stack_path, size);
        if (read_file_at_alloc(AT_FDCWD, stack_path, &stack, &len) == 0)
                slurm_node_parse_plugstack(stack, len, n);
        return 0;
}

/* mode own: <cgroup2>/leash/slurm/job_<ID> with the profile's limits. */
static int prolog_own_cgroup(struct ctx *x, struct leash_spec *c, enum leash_enforcer *plan, char *root,
                             size_t root_size, int *root_fd, int *job_fd, char *msg, size_t msg_size) {
        const char *notes[_LEASH_LIMIT_MAX];
        struct leash_error err = {0};
        unsigned available = 0;
        int r;

        r = slurm_cgroup_root(true, root, root_size, root_fd, &available);
        if (r >= 0)
                r = slurm_job_cgroup_create(*root_fd, x->job.id, job_fd);
        if (r < 0) {
                snprintf(msg, msg_size, "create the job cgroup: %s", strerror(-r));
                return r;
        }
        cgroupfs_plan_enforcement(c, available, plan, notes);
        /* slurmstepd starts the tasks: no RLIMIT_AS of leash's reaches them */
        if (plan[LEASH_LIMIT_MEMORY] == LEASH_BY_RLIMIT)
                plan[LEASH_LIMIT_MEMORY] = LEASH_BY_NONE;
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) { /* in the Prolog's log, as leash run says them */
                char line[512];
                if (leash_limit_weakness(c, plan, notes, (enum leash_limit) l, false, line, sizeof line) > 0)
                        log_notice("job %" PRIu32 ": %s", x->job.id, line);
        }
        r = cgroupfs_apply_limits(*job_fd, c, plan, &err);
        if (r < 0)
                snprintf(msg, msg_size, "%s: %s: %s", err.step ? err.step : "write the limits", err.detail,
                         strerror(-r));
        return r;
}

/* mode nest: Slurm's cgroup plugin holds the job's memory, CPUs and tasks;
 * leash makes no cgroup and writes no limit, and keeps to what it adds: the
 * CPU-time and wall-time ladder (its supervisor), the step figures, the
 * report.  A profile's cgroup limits are not applied, and the log says so. */
static int prolog_nest_plan(struct ctx *x, const struct leash_spec *c, enum leash_enforcer *plan) {
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                plan[l] = l == LEASH_LIMIT_CPU_TIME || l == LEASH_LIMIT_WALL_TIME ? LEASH_BY_LEASH : LEASH_BY_NONE;
                if (plan[l] == LEASH_BY_NONE && leash_spec_has(c, (enum leash_limit) l) && c->limit[l] != LEASH_MAX)
                        log_notice("job %" PRIu32 ": %s: not applied in mode nest (Slurm's cgroup plugin holds the "
                                   "job's cgroup)",
                                   x->job.id, leash_limit_to_string((enum leash_limit) l));
        }
        return 0;
}

/* The node's slurm.conf against slurm.ini's mode (slurm-node.h): -EEXIST
 * when leash and Slurm would both place tasks. No slurm.conf to read (a
 * test cluster's lives elsewhere, $SLURM_CONF unset) judges nothing. */
static int node_judge(struct ctx *x, char *why, size_t size) {
        struct slurm_node n;
        char stack_path[SLURM_NODE_VALUE_MAX + 32];
        int r;

        if (node_read(NULL, &n, stack_path, sizeof stack_path) < 0)
                return 0;
        r = slurm_node_judge(&n, x->conf.mode, why, size);
        return r == -EEXIST || (r < 0 && x->conf.mode == SLURM_MODE_NEST && !n.slurm_places) ? r : 0;
}

static int prolog(void) {
        struct ctx x = {0};
        _cleanup_close_ int state_fd = -1, root_fd = -1, job_fd = -1, listen_fd = -1;
        struct leash_settings cli, s;
        struct leash_profiles *profiles = NULL;
        const char *profile = NULL, *pwhy = NULL;
        enum leash_enforcer plan[_LEASH_LIMIT_MAX];
        char why[4400], root[4096], cgroup[4200], text[STATE_SIZE], msg[4600];
        uint64_t started;
        int ready[2] = {-1, -1}, r, rc;
        pid_t pid;

        if (ctx_load_job(&x) < 0)
                return EXIT_LEASH_FAILED;
        ctx_load_conf(&x);
        r = state_open(&x, true, &state_fd, why, sizeof why);
        if (r < 0) {
                snprintf(msg, sizeof msg, "state directory: %s", why);
                rc = prolog_trouble(&x, -1, NULL, NULL, msg);
                ctx_done(&x);
                return rc;
        }
        (void) unlinkat(state_fd, "verdict", 0);

        r = slurm_choose_profile(&x.conf, &x.job, &profile, &pwhy, why, sizeof why);
        if (r == -EPERM) {
                /* never a way out of confinement: the job gets what it would have had */
                ctx_error(&x, "%s", why);
                x.job.requested_profile[0] = '\0';
                (void) slurm_choose_profile(&x.conf, &x.job, &profile, &pwhy, why, sizeof why);
                snprintf(x.job.requested_profile, sizeof x.job.requested_profile, "%s", env(SPANK_OPT_ENV));
        }
        if (strcmp(profile, SLURM_PROFILE_NONE) == 0) {
                r = state_text(&x, text, sizeof text, profile, pwhy, NULL, NULL, NULL, NULL, false, 0, 0,
                               now_ns(CLOCK_REALTIME));
                if (r >= 0)
                        r = slurm_file_replace(state_fd, "state", text);
                ctx_done(&x);
                return r < 0 && x.conf.on_error == SLURM_ON_ERROR_DRAIN ? 1 : 0;
        }
        r = cli_profile_check(profile, why, sizeof why);
        if (r == 0 && x.job.requested_too_long && strcmp(pwhy, "--leash-profile") == 0) {
                snprintf(why, sizeof why, "'%s...': not a profile name (too long)", profile);
                r = -EINVAL;
        }
        if (r < 0 && strcmp(pwhy, "--leash-profile") == 0) {
                /* the user's own mistake: their tasks are refused, with the
                 * reason in their output and the report, whatever on-error
                 * says (that is for leash's trouble), and the node stays up */
                snprintf(msg, sizeof msg, "--leash-profile=%s", why);
                rc = prolog_refuse_job(&x, state_fd, profile, pwhy, msg);
                ctx_done(&x);
                return rc;
        }
        if (r < 0) {
                snprintf(msg, sizeof msg, "profile %s", why);
                rc = prolog_trouble(&x, state_fd, profile, pwhy, msg);
                ctx_done(&x);
                return rc;
        }

        leash_settings_init(&cli);
        cli.profile_name = strdup(profile);
        rc = cli.profile_name ? cli_settings_build(&cli, NULL, 0, &s, &profiles) : EXIT_LEASH_FAILED;
        leash_settings_done(&cli);
        if (rc != 0) {
                snprintf(msg, sizeof msg, "profile '%s': the configuration cannot be used (see the Prolog's log)",
                         profile);
                rc = prolog_trouble(&x, state_fd, profile, pwhy, msg);
                ctx_done(&x);
                return rc;
        }
        s.config.profile = profile;

        r = node_judge(&x, why, sizeof why);
        if (r < 0) {
                snprintf(msg, sizeof msg, "%s", why);
                goto trouble;
        }
        if (x.conf.mode == SLURM_MODE_NEST) {
                r = prolog_nest_plan(&x, &s.config, plan);
                cgroup[0] = '\0';
        } else
                r = prolog_own_cgroup(&x, &s.config, plan, root, sizeof root, &root_fd, &job_fd, msg, sizeof msg);
        if (r < 0)
                goto trouble;
        if (job_fd >= 0)
                snprintf(cgroup, sizeof cgroup, "%s/job_%" PRIu32, root, x.job.id);
        r = listen_socket(state_fd, x.job.uid, &listen_fd);
        if (r < 0) {
                snprintf(msg, sizeof msg, "the supervisor's socket: %s", strerror(-r));
                goto trouble;
        }
        started = now_ns(CLOCK_REALTIME);
        if (pipe2(ready, O_CLOEXEC) < 0) {
                snprintf(msg, sizeof msg, "pipe: %s", strerror(errno));
                goto trouble;
        }
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                snprintf(msg, sizeof msg, "start the supervisor: %s", strerror(errno));
                goto trouble;
        }
        if (pid == 0) {
                /* slurmd kills the Prolog's process group when it exits: a new
                 * session, stdio on /dev/null, no fd of slurmd's kept */
                struct slurm_supervisor sv = {
                        .config = &s.config,
                        .job_id = x.job.id,
                        .uid = x.job.uid,
                        .listen_fd = listen_fd,
                        .job_fd = job_fd,
                        .nest = x.conf.mode == SLURM_MODE_NEST,
                        .state_fd = state_fd,
                        .cgroup = cgroup,
                        .epilog_wait_ns = x.conf.epilog_wait_ns,
                };
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);
                (void) setsid();
                if (null >= 0) {
                        dup2(null, 0), dup2(null, 1), dup2(null, 2);
                        if (null > 2)
                                close(null);
                }
                (void) !chdir("/");
                close(ready[0]);
                close(ready[1]); /* the parent sees EOF: started */
                close_others(&sv);
                _exit(slurm_supervise(&sv));
        }
        close(ready[1]);
        {
                char c;
                (void) !read(ready[0], &c, 1);
                close(ready[0]);
        }
        r = state_text(&x, text, sizeof text, profile, pwhy, &s.config, plan, cgroup[0] ? cgroup : NULL, NULL, false,
                       pid, proc_starttime(pid), started);
        if (r >= 0)
                r = slurm_file_replace(state_fd, "state", text);
        leash_settings_done(&s);
        leash_profiles_free(profiles);
        if (r < 0) {
                log_error("job %" PRIu32 ": write the state: %s", x.job.id, strerror(-r));
                (void) kill(pid, SIGKILL);
                (void) slurm_job_cgroup_remove(root_fd, x.job.id);
                rc = x.conf.on_error == SLURM_ON_ERROR_DRAIN ? 1 : 0;
        } else
                rc = 0;
        ctx_done(&x);
        return rc;

trouble:
        if (job_fd >= 0)
                (void) slurm_job_cgroup_remove(root_fd, x.job.id);
        (void) unlinkat(state_fd, "sock", 0);
        leash_settings_done(&s);
        leash_profiles_free(profiles);
        rc = prolog_trouble(&x, state_fd, profile, pwhy, msg);
        ctx_done(&x);
        return rc;
}

/* --- epilog ------------------------------------------------------------------ */

static uint64_t kv_u64(const char *text, const char *key, uint64_t dflt) {
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
static int supervisor_pidfd(const char *state) {
        pid_t pid = (pid_t) kv_u64(state, "supervisor_pid", 0);
        uint64_t start = kv_u64(state, "supervisor_start", 0);
        int fd;

        if (pid <= 0)
                return -ESRCH;
        fd = pidfd_open_(pid);
        if (fd < 0)
                return negative_errno();
        /* a recycled pid, or a zombie nobody reaped (its fds are gone) */
        if (proc_starttime(pid) != start || proc_state(pid) == 'Z') {
                close(fd);
                return -ESRCH;
        }
        return fd;
}

/* A supervisor that waited epilog-wait past the job's limits for this
 * Epilog, found the job cgroup empty and ended by itself: its verdict says
 * so, and that is no trouble. */
static bool supervisor_ended(struct ctx *x, int state_fd) {
        _cleanup_free_ char *verdict = NULL;
        char why[256];

        if (state_read(state_fd, "verdict", &verdict) < 0 || kv_get(verdict, "ended", why, sizeof why) < 0)
                return false;
        log_notice("job %" PRIu32 ": the supervisor had ended by itself: %s", x->job.id, why);
        return true;
}

/* The Epilog's stop, through the socket in root's state directory, then a
 * wait for the supervisor's exit (SIGKILL after 2 s). state NULL: the state
 * was refused as malformed and names no pid to trust; the socket still
 * reaches the supervisor, which would otherwise wait for this stop forever
 * (seen: 2.5 h past its job's wall time), and no answer (no supervisor ever
 * started) is no error then. */
static void stop_supervisor(struct ctx *x, int state_fd, const char *state) {
        char reply[256];
        _cleanup_close_ int pfd = state ? supervisor_pidfd(state) : -ESRCH;
        struct pollfd p;
        int r;

        if (state && pfd == -ESRCH && !kv_u64(state, "supervisor_pid", 0))
                return; /* none was started */
        if (pfd < 0 && supervisor_ended(x, state_fd))
                return;
        r = slurm_request(state_fd, "stop", -1, 2000, reply, sizeof reply);
        if (r < 0 && (state || (r != -ENOENT && r != -ECONNREFUSED)))
                ctx_error(x, "job %" PRIu32 ": the supervisor did not answer: %s", x->job.id, strerror(-r));
        if (pfd < 0) {
                if (r < 0 && state)
                        ctx_error(x, "job %" PRIu32 ": the supervisor is gone", x->job.id);
                return;
        }
        p = (struct pollfd){.fd = pfd, .events = POLLIN};
        if (poll(&p, 1, 2000) != 1) {
                ctx_error(x, "job %" PRIu32 ": the supervisor did not stop: killed", x->job.id);
                (void) syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0);
        }
}

struct epilog_steps {
        struct slurm_step_usage *steps;
        size_t n;
        const char *verdict;
};

static void collect_step(void *userdata, const char *dirname, int step_fd) {
        struct epilog_steps *e = userdata;
        struct slurm_step_usage *l = realloc(e->steps, (e->n + 1) * sizeof *l), *st;
        char key[96];
        int n;

        if (!l)
                return;
        e->steps = l;
        st = &l[e->n++];
        memset(st, 0, sizeof *st);
        snprintf(st->name, sizeof st->name, "%s", dirname + 5);
        account_usage_init(&st->usage);
        n = cgroupfs_signal_all(step_fd, 0, 0);
        snprintf(key, sizeof key, "step.%s.leftovers", st->name);
        st->leftovers_killed = (n > 0 ? (unsigned) n : 0) + (unsigned) kv_u64(e->verdict, key, 0);
}

static void read_step(struct slurm_step_usage *st, int job_fd) {
        _cleanup_close_ int fd = -1;
        if (slurm_step_cgroup_open(job_fd, st->name, false, &fd) == 0)
                account_read(fd, &st->usage);
}

static void config_from_state(struct leash_spec *c, const char *state, enum leash_enforcer *enforced) {
        leash_spec_init(c);
        c->grace_ns = kv_u64(state, "grace_ns", c->grace_ns);
        c->soft_signal = (int) kv_u64(state, "soft_signal", (uint64_t) c->soft_signal);
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                char key[64], buf[128], how[32] = "";
                unsigned long long v;
                snprintf(key, sizeof key, "limit.%s", leash_limit_to_string((enum leash_limit) l));
                if (!state || kv_get(state, key, buf, sizeof buf) < 0 || sscanf(buf, "%llu %31s", &v, how) < 1)
                        continue;
                leash_spec_set_limit(c, (enum leash_limit) l, (uint64_t) v);
                enforced[l] = strcmp(how, "cgroup") == 0   ? LEASH_BY_CGROUP
                              : strcmp(how, "rlimit") == 0 ? LEASH_BY_RLIMIT
                              : strcmp(how, "leash") == 0  ? LEASH_BY_LEASH
                                                           : LEASH_BY_NONE;
        }
}

static void signals_from_verdict(struct leash_result *r, const char *verdict) {
        static const char *const whys[] = {"wall_time", "cpu_time", "grace", "leftover", "interrupt"};
        for (unsigned i = 0; i < LEASH_SIGNALS_MAX; i++) {
                char key[32], buf[128], why[32];
                int sig;
                unsigned long long at;
                snprintf(key, sizeof key, "signal.%u", i);
                if (!verdict || kv_get(verdict, key, buf, sizeof buf) < 0 ||
                    sscanf(buf, "%d %llu %31s", &sig, &at, why) != 3)
                        break;
                r->signals[r->n_signals].signal = sig;
                r->signals[r->n_signals].at_ns = (uint64_t) at;
                r->signals[r->n_signals].why = "leftover";
                for (size_t k = 0; k < ELEMENTSOF(whys); k++)
                        if (strcmp(why, whys[k]) == 0)
                                r->signals[r->n_signals].why = whys[k];
                r->n_signals++;
        }
}

/* Writes <report-dir>/<JOBID>.<node>.json: root's, 0644, in a directory only
 * root can write (judged by the trust rules), replaced atomically. */
static int write_report(struct ctx *x, const char *text) {
        _cleanup_close_ int dfd = -1;
        char why[4400], name[256];
        int r;

        dfd = open_root_dir(x->conf.report_dir, true, why, sizeof why);
        if (dfd < 0) {
                ctx_error(x, "report directory: %s", why);
                return dfd;
        }
        snprintf(name, sizeof name, "%" PRIu32 ".%s.json", x->job.id, x->job.node);
        if (strchr(x->job.node, '/') || x->job.node[0] == '.') {
                ctx_error(x, "node name '%s': not usable in a file name", x->job.node);
                return -EINVAL;
        }
        r = slurm_file_replace(dfd, name, text);
        if (r < 0)
                ctx_error(x, "write the report %s/%s: %s", x->conf.report_dir, name, strerror(-r));
        return r;
}

static enum leash_reason decide_reason(const struct leash_result *r, const char *verdict, bool setup_error,
                                       int *ret_exit) {
        char buf[32] = "";
        const struct leash_usage *u = &r->usage;
        bool failed = r->term_signal || r->status_code > 0;

        if (verdict)
                (void) kv_get(verdict, "reason", buf, sizeof buf);
        *ret_exit = r->term_signal ? 128 + r->term_signal : r->status_code > 0 ? r->status_code : 0;
        if (strcmp(buf, "wall_time") == 0 || strcmp(buf, "cpu_time") == 0) {
                *ret_exit = 124;
                return strcmp(buf, "wall_time") == 0 ? LEASH_REASON_WALL_TIME : LEASH_REASON_CPU_TIME;
        }
        if (setup_error)
                return LEASH_REASON_SETUP_ERROR;
        if (u->mem_ev_oom_kill != LEASH_NULL && u->mem_ev_oom_kill > 0)
                return LEASH_REASON_MEMORY;
        if (failed && u->pids_events_max != LEASH_NULL && u->pids_events_max > 0)
                return LEASH_REASON_PIDS;
        if (r->term_signal)
                return LEASH_REASON_SIGNAL;
        return r->status_code > 0 ? LEASH_REASON_EXIT : LEASH_REASON_OK;
}

/* mode nest: Slurm removed its cgroups before the Epilog, so the figures are
 * those the supervisor read at each step's end (sv_nest_step_end): the job's
 * usage is job_<ID>'s own files at the last step end, its OOM kills the
 * steps' sum, and every step that ended is a steps[] entry. */
static void usage_from_verdict(const char *verdict, const char *prefix, struct leash_usage *u) {
        for (size_t i = 0; i < slurm_nest_n_figures; i++) {
                char key[96];
                uint64_t v;
                snprintf(key, sizeof key, "%s.%s", prefix, slurm_nest_figures[i].key);
                v = kv_u64(verdict, key, LEASH_NULL);
                memcpy((char *) u + slurm_nest_figures[i].offset, &v, sizeof v);
        }
        u->memory_peak_basis = u->memory_peak != LEASH_NULL ? "memory.peak" : NULL;
}

/* The report's placement: the job cgroup the Epilog reports on was made by
 * the Prolog (mode own) or by Slurm (mode nest), and adopted. */
static void placement_adopted(struct leash_result *r, const char *why) {
        r->placement = PLACEMENT_ADOPTED;
        snprintf(r->placement_why, sizeof r->placement_why, "%s", why);
}

/* mode own: the job cgroup was adopted, but a task reached it only through a
 * TaskProlog that found the job's state (issue 39.8: a TaskProlog reading
 * another configuration left every task in 0::/ while the report said
 * adopted): with no task placed and no step cgroup, the report and slurmd's
 * log say so. */
static void epilog_own_placement(struct ctx *x, struct leash_result *r, unsigned placed, size_t n_steps) {
        if (placed || n_steps) {
                placement_adopted(r, "adopted: the job cgroup leash's Prolog made (mode own: leash's layout, "
                                     "its limits written there)");
                return;
        }
        placement_adopted(r, "adopted: the job cgroup leash's Prolog made (mode own), but no task of the job was "
                             "placed in it");
        ctx_error(x,
                  "job %" PRIu32 ": no task of the job was placed in its cgroup (none asked the supervisor: a job "
                  "without steps, or a TaskProlog refused or not given the Prolog's --config-dir)",
                  x->job.id);
}

static void epilog_nest(const char *verdict, struct leash_result *r, struct epilog_steps *es) {
        char list[4096] = "", *save = NULL;
        uint64_t wall = r->usage.wall_ns, ooms = 0;

        (void) kv_get(verdict, "nest_cgroup", r->cgroup, sizeof r->cgroup);
        usage_from_verdict(verdict, "job", &r->usage);
        r->usage.wall_ns = wall;
        (void) kv_get(verdict, "steps", list, sizeof list);
        for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                struct slurm_step_usage *l = realloc(es->steps, (es->n + 1) * sizeof *l), *st;
                char key[96], prefix[64];
                if (!l)
                        break;
                es->steps = l;
                st = &l[es->n++];
                memset(st, 0, sizeof *st);
                snprintf(st->name, sizeof st->name, "%s", t);
                account_usage_init(&st->usage);
                snprintf(prefix, sizeof prefix, "step.%s", t);
                usage_from_verdict(verdict, prefix, &st->usage);
                snprintf(key, sizeof key, "step.%s.leftovers", t);
                st->leftovers_killed = (unsigned) kv_u64(verdict, key, 0);
                r->leftovers_killed += st->leftovers_killed;
                if (st->usage.mem_ev_oom_kill != LEASH_NULL)
                        ooms += st->usage.mem_ev_oom_kill;
        }
        if (es->n && (r->usage.mem_ev_oom_kill == LEASH_NULL || r->usage.mem_ev_oom_kill < ooms))
                r->usage.mem_ev_oom_kill = ooms;
}

static int epilog(void) {
        struct ctx x = {0};
        _cleanup_close_ int state_fd = -1, root_fd = -1, job_fd = -1;
        _cleanup_free_ char *state = NULL, *verdict = NULL, *report = NULL;
        struct epilog_steps es = {0};
        struct leash_spec c;
        struct leash_result *r = calloc(1, sizeof *r);
        struct slurm_report sr = {0};
        char why[4400] = "", root[4096], profile[64] = "", pwhy[160] = "", setup[1024] = "", mode[16] = "";
        bool have_job = false, trouble = false;
        unsigned placed = 0, leftovers;
        int n;

        if (!r) {
                log_error("epilog: %s", strerror(ENOMEM));
                return 1;
        }
        if (ctx_load_job(&x) < 0) {
                free(r);
                return EXIT_LEASH_FAILED;
        }
        ctx_load_conf(&x);
        r->status_code = -1;
        account_usage_init(&r->usage);
        config_from_state(&c, NULL, r->enforced);

        if (state_open(&x, false, &state_fd, why, sizeof why) == 0 && (n = state_read(state_fd, "state", &state)) < 0)
                snprintf(why, sizeof why, "%s", n == -EBADMSG ? "malformed: refused" : strerror(-n));
        if (state) {
                config_from_state(&c, state, r->enforced);
                (void) kv_get(state, "profile", profile, sizeof profile);
                (void) kv_get(state, "profile_chosen_by", pwhy, sizeof pwhy);
                (void) kv_get(state, "setup_error", setup, sizeof setup);
                if (!x.job.requested_profile[0])
                        (void) kv_get(state, "requested_profile", x.job.requested_profile,
                                      sizeof x.job.requested_profile);
                for (unsigned i = 0; i < 32; i++) {
                        char key[32], e[1024];
                        snprintf(key, sizeof key, "error.%u", i);
                        if (kv_get(state, key, e, sizeof e) < 0)
                                break;
                        ctx_error(&x, "prolog: %s", e);
                }
                stop_supervisor(&x, state_fd, state);
                if (state_read(state_fd, "verdict", &verdict) == -EBADMSG)
                        ctx_error(&x, "job %" PRIu32 ": the supervisor's verdict is malformed: refused", x.job.id);
        } else {
                ctx_error(&x, "job %" PRIu32 ": no state from the Prolog (%s)", x.job.id, why[0] ? why : "none");
                trouble = true;
                if (state_fd >= 0)
                        stop_supervisor(&x, state_fd, NULL);
        }
        if (setup[0])
                ctx_error(&x, "prolog: %s", setup);
        for (unsigned i = 0; verdict && i < 8; i++) {
                char key[32], e[256];
                snprintf(key, sizeof key, "error.%u", i);
                if (kv_get(verdict, key, e, sizeof e) < 0)
                        break;
                ctx_error(&x, "supervisor: %s", e);
        }
        c.profile = profile[0] ? profile : NULL;
        {
                static char source[4096];
                if (state && kv_get(state, "profile_source", source, sizeof source) == 0 && source[0])
                        c.profile_source = source;
        }
        placed = (unsigned) kv_u64(verdict, "tasks_placed", 0);
        if (kv_u64(verdict, "tasks_refused", 0))
                ctx_error(&x, "job %" PRIu32 ": %" PRIu64 " task(s) could not be placed in the job cgroup: refused",
                          x.job.id, kv_u64(verdict, "tasks_refused", 0));
        r->started_realtime_ns = kv_u64(state, "started_realtime_ns", 0);
        {
                uint64_t mono = kv_u64(state, "started_monotonic_ns", 0), now = now_ns(CLOCK_MONOTONIC);
                r->usage.wall_ns = mono && now > mono ? now - mono : LEASH_NULL;
        }
        /* what Slurm says of the batch script: "exit:signal" */
        if (getenv("SLURM_JOB_EXIT_CODE2")) {
                int e = 0, sg = 0;
                if (sscanf(env("SLURM_JOB_EXIT_CODE2"), "%d:%d", &e, &sg) == 2) {
                        /* 125 is no signal: Slurm's SIG_OOM (253) as WTERMSIG
                         * reads it ("ExitCode=0:125" of an OOM job, seen with
                         * 22.05); the OOM killer's signal is SIGKILL */
                        if (sg == 125)
                                sg = SIGKILL;
                        r->status_code = sg ? -1 : e;
                        r->term_signal = sg;
                }
        }

        if (state && kv_get(state, "mode", mode, sizeof mode) == 0 && strcmp(mode, "nest") == 0) {
                epilog_nest(verdict, r, &es);
                if (r->cgroup[0])
                        placement_adopted(r, "adopted: Slurm's job cgroup (mode nest: Slurm's cgroup plugin placed "
                                             "the tasks and holds memory, CPUs and devices; leash moved none)");
        } else if (slurm_cgroup_root(false, root, sizeof root, &root_fd, NULL) == 0 &&
                   slurm_job_cgroup_open(root_fd, x.job.id, &job_fd) == 0) {
                have_job = true;
                snprintf(r->cgroup, sizeof r->cgroup, "%s/job_%" PRIu32, root, x.job.id);
                es.verdict = verdict;
                (void) slurm_for_each_step(job_fd, collect_step, &es);
                epilog_own_placement(&x, r, placed, es.n);
                /* every process left in the job's subtree (steps and any cgroup a
                 * job made below them), and what the step ends killed before */
                n = cgroupfs_signal_all(job_fd, 0, 0);
                leftovers = n > 0 ? (unsigned) n : 0;
                for (size_t i = 0; i < es.n; i++) {
                        char key[96];
                        snprintf(key, sizeof key, "step.%s.leftovers", es.steps[i].name);
                        leftovers += (unsigned) kv_u64(verdict, key, 0);
                }
                r->leftovers_killed = leftovers;
                if (cgroupfs_populated(job_fd) > 0) {
                        (void) cgroupfs_kill(job_fd);
                        if (cgroupfs_wait_empty(job_fd, (int) (x.conf.kill_timeout_ns / NSEC_PER_MSEC)) < 0 &&
                            cgroupfs_populated(job_fd) > 0) {
                                ctx_error(&x, "job %" PRIu32 ": processes survived SIGKILL for %s", x.job.id,
                                          "kill-timeout");
                                trouble = true;
                        }
                }
                account_read(job_fd, &r->usage);
                for (size_t i = 0; i < es.n; i++) {
                        uint64_t v, *sum = &r->usage.pids_events_max;
                        read_step(&es.steps[i], job_fd);
                        /* before 6.12 a refused fork counts in the forking task's
                         * cgroup (the step), not in the job whose pids.max refused it */
                        v = es.steps[i].usage.pids_events_max;
                        if (v != LEASH_NULL && (*sum == LEASH_NULL || *sum < v))
                                *sum = v;
                }
        } else if (state && kv_get(state, "cgroup", why, sizeof why) == 0) {
                ctx_error(&x, "job %" PRIu32 ": its cgroup %s is gone", x.job.id, why);
        }
        signals_from_verdict(r, verdict);
        if (r->leftovers_killed && r->n_signals < LEASH_SIGNALS_MAX) {
                r->signals[r->n_signals].signal = SIGKILL;
                r->signals[r->n_signals].at_ns = r->usage.wall_ns == LEASH_NULL ? 0 : r->usage.wall_ns;
                r->signals[r->n_signals].why = "leftover";
                r->n_signals++;
        }
        r->reason = decide_reason(r, verdict, setup[0] != '\0', &r->exit_code);
        if (r->reason == LEASH_REASON_SETUP_ERROR)
                r->exit_code = r->term_signal ? 128 + r->term_signal : r->status_code > 0 ? r->status_code : 0;

        sr.job = &x.job;
        sr.profile_why = pwhy[0] ? pwhy : NULL;
        sr.on_error = slurm_on_error_to_string(x.conf.on_error);
        sr.tasks_placed = placed;
        sr.nest = strcmp(mode, "nest") == 0;
        sr.steps = es.steps;
        sr.n_steps = es.n;
        /* the cgroups go before the report is written: the report then says the truth */
        if (have_job) {
                int k;
                close(job_fd);
                job_fd = -1;
                k = slurm_job_cgroup_remove(root_fd, x.job.id);
                if (k < 0) {
                        ctx_error(&x, "job %" PRIu32 ": remove the cgroups: %s", x.job.id, strerror(-k));
                        trouble = true;
                }
        }
        sr.errors = x.errors;
        sr.n_errors = x.n_errors;
        if (slurm_report_format(&c, r, &sr, &report) < 0) {
                log_error("job %" PRIu32 ": format the report: json-c is not available", x.job.id);
                trouble = true;
        } else if (write_report(&x, report) < 0)
                trouble = true;
        state_remove(&x);
        free(es.steps);
        free(r);
        n = trouble && x.conf.on_error == SLURM_ON_ERROR_DRAIN ? 1 : 0;
        ctx_done(&x);
        return n;
}

/* --- task-prolog (as the user) ----------------------------------------------- */

static bool stderr_is_file(void) {
        struct stat st;
        return fstat(STDERR_FILENO, &st) == 0 && (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode));
}

/* Set when the TaskProlog was run without --config-dir and its environment
 * named one (LEASH_CONFIG_DIR, the way of the hooks before issue 22): ignored,
 * and said so where that leaves the task unplaced. */
static bool task_prolog_env_ignored;

/* No state for the job in the state directory: no Prolog of leash's ran for
 * it (0: nothing to do), unless the job cgroup leash's Prolog makes is there,
 * which means it ran with another configuration: the task is refused (1),
 * saying why, never run outside the cgroup meant for it. */
static int task_prolog_no_state(struct ctx *x) {
        _cleanup_close_ int root_fd = -1, job_fd = -1;
        char root[4096];

        if (slurm_cgroup_root(false, root, sizeof root, &root_fd, NULL) < 0 ||
            slurm_job_cgroup_open(root_fd, x->job.id, &job_fd) < 0)
                return 0;
        log_error("job %" PRIu32 ": task refused: leash's Prolog made the job cgroup %s/job_%" PRIu32
                  " but its state is not in %s: the TaskProlog reads the configuration its wrapper names with "
                  "--config-dir=DIR, the Prolog's%s",
                  x->job.id, root, x->job.id, x->conf.state_dir,
                  task_prolog_env_ignored ? " (LEASH_CONFIG_DIR is ignored by the TaskProlog)" : "");
        return 1;
}

static int task_prolog(void) {
        struct ctx x = {0};
        _cleanup_close_ int state_fd = -1;
        _cleanup_free_ char *state = NULL;
        char why[4400], step[40], req[128], reply[512];
        uint64_t pid;
        int r;

        if (ctx_load_job(&x) < 0)
                return 1;
        ctx_load_conf(&x);
        if (slurm_step_name(getenv("SLURM_STEP_ID"), step, sizeof step) < 0 ||
            parse_u64(env("SLURM_TASK_PID"), &pid) < 0 || pid == 0 || pid > INT32_MAX) {
                log_error("job %" PRIu32 ": SLURM_STEP_ID='%s' SLURM_TASK_PID='%s': not a task of a step", x.job.id,
                          env("SLURM_STEP_ID"), env("SLURM_TASK_PID"));
                ctx_done(&x);
                return 1;
        }
        r = state_open(&x, false, &state_fd, why, sizeof why);
        if (r < 0 && r != -ENOENT) { /* fail closed: a 0 here runs the task unconfined */
                log_error("job %" PRIu32 ": task refused: its state: %s", x.job.id, why);
                ctx_done(&x);
                return 1;
        }
        if (r == 0)
                r = state_read(state_fd, "state", &state);
        if (r == -ENOENT) {
                r = task_prolog_no_state(&x);
                ctx_done(&x);
                return r;
        }
        if (r < 0) { /* never run unconfined on a state leash cannot trust */
                log_error("job %" PRIu32 ": task refused: its state: %s", x.job.id,
                          r == -EBADMSG ? "malformed" : strerror(-r));
                ctx_done(&x);
                return 1;
        }
        if (kv_u64(state, "refuse", 0)) {
                char e[1024] = "setup failed";
                (void) kv_get(state, "setup_error", e, sizeof e);
                log_error("job %" PRIu32 ": task refused: %s (on-error = fail-job)", x.job.id, e);
                ctx_done(&x);
                return 1;
        }
        if (!kv_u64(state, "supervisor_pid", 0)) { /* profile none, or continue after trouble */
                ctx_done(&x);
                return 0;
        }
        snprintf(req, sizeof req, "adopt %s %" PRIu64, step, pid);
        /* The TaskProlog's stderr goes along for the verdict only when it is a
         * file or a terminal: a pipe may be slurmstepd's, read to EOF before
         * the task starts, and a copy held by the supervisor would hang it. */
        r = slurm_request(state_fd, req, stderr_is_file() ? STDERR_FILENO : -1, 5000, reply, sizeof reply);
        if (r == 0 && strncmp(reply, "ok", 2) == 0) {
                ctx_done(&x);
                return 0;
        }
        if (r < 0)
                snprintf(reply, sizeof reply, "error the supervisor did not answer: %s", strerror(-r));
        /* fail closed: a task leash was asked to confine and could not place
         * never runs outside the job cgroup, whatever on-error says */
        log_error("job %" PRIu32 ": task refused: place it in step_%s: %s", x.job.id, step,
                  strchr(reply, ' ') ? strchr(reply, ' ') + 1 : reply);
        ctx_done(&x);
        return 1;
}

/* --- status / sweep / check-profile -------------------------------------------- */

static bool supervisor_alive(const char *state) {
        int fd = supervisor_pidfd(state);
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

/* How `leash slurm status` writes: a table and a page for people, or JSON. */
enum status_format { STATUS_TEXT, STATUS_JSON };
static enum status_format status_fmt;
static bool status_first; /* JSON list: no comma before the first object */

/* One "key": value member per line of a checked kv text, values unescaped. */
static void json_kv_members(const char *text) {
        bool first = true;

        for (const char *line = text; *line;) {
                const char *eq = strchr(line, '='), *nl = strchr(line, '\n');
                char key[128], value[4400];
                if (!eq || !nl || eq > nl)
                        break;
                snprintf(key, sizeof key, "%.*s", (int) (eq - line), line);
                if (kv_get(text, key, value, sizeof value) == 0) {
                        fputs(first ? "" : ", ", stdout);
                        utf8_fputs_json(key, stdout);
                        fputs(": ", stdout);
                        utf8_fputs_json(value, stdout);
                        first = false;
                }
                line = nl + 1;
        }
}

static void status_json(uint32_t id, const char *state, const char *verdict, bool alive, int procs, uint64_t cpu_us) {
        printf("%s{\"job_id\": %" PRIu32 ", \"supervisor_alive\": %s, \"processes\": %d, \"cpu_time_s\": %.3f, "
               "\"state\": {",
               status_first ? "" : ",\n", id, alive ? "true" : "false", procs, (double) cpu_us / 1e6);
        json_kv_members(state);
        fputs("}, \"verdict\": ", stdout);
        if (verdict) {
                fputc('{', stdout);
                json_kv_members(verdict);
                fputc('}', stdout);
        } else
                fputs("null", stdout);
        fputc('}', stdout);
        status_first = false;
}

/* "LABEL: value" with the value as the file has it (escaped: safe on a
 * terminal), or nothing where the key is absent or empty. */
static void page_line(const char *text, const char *key, const char *label) {
        char v[4400], e[4400 * 4];
        if (!text || kv_get(text, key, v, sizeof v) < 0 || !v[0])
                return;
        kv_escape(v, e, sizeof e);
        printf("  %-18s %s\n", label, e);
}

/* PREFIX.0, PREFIX.1, ... as page lines, the label on the first. */
static void page_numbered(const char *text, const char *prefix, const char *label) {
        for (int i = 0; i < 64; i++) {
                char key[64];
                snprintf(key, sizeof key, "%s.%d", prefix, i);
                if (kv_get(text ? text : "", key, (char[2]){0}, 1) == -ENOENT)
                        break;
                page_line(text, key, i ? "" : label);
        }
}

/* The verdict's signals: "SIGXCPU at 4s (wall_time)". */
static void page_signals(const char *verdict) {
        for (int i = 0; verdict && i < 64; i++) {
                char key[32], v[256], why[128] = "", at[32], e[sizeof why * 4];
                uint64_t ns;
                int sig;
                snprintf(key, sizeof key, "signal.%d", i);
                if (kv_get(verdict, key, v, sizeof v) < 0)
                        break;
                if (sscanf(v, "%d %" SCNu64 " %127[^\n]", &sig, &ns, why) < 2)
                        continue;
                snprintf(at, sizeof at, "%.3f s", (double) ns / 1e9);
                kv_escape(why, e, sizeof e);
                printf("  %-18s SIG%s at %s%s%s%s\n", i ? "" : "  signals:", signal_name(sig) ?: "?", at,
                       e[0] ? " (" : "", e, e[0] ? ")" : "");
        }
}

/* The job's limits for people: "memory 2.0 GiB (cgroup)". */
static void page_limits(const char *state) {
        bool first = true;

        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                char key[64], v[128], how[64] = "", shown[64];
                uint64_t n;
                snprintf(key, sizeof key, "limit.%s", leash_limit_to_string((enum leash_limit) l));
                if (kv_get(state, key, v, sizeof v) < 0 || sscanf(v, "%" SCNu64 " %63s", &n, how) < 1)
                        continue;
                if (l == LEASH_LIMIT_CPU_TIME || l == LEASH_LIMIT_WALL_TIME)
                        format_duration(n, shown, sizeof shown);
                else if (l == LEASH_LIMIT_CPUS)
                        snprintf(shown, sizeof shown, "%.2f cores", (double) n / 1e6);
                else if (l == LEASH_LIMIT_PIDS || l == LEASH_LIMIT_NOFILE)
                        snprintf(shown, sizeof shown, "%" PRIu64, n);
                else
                        format_bytes_human(n, shown, sizeof shown);
                printf("  %-18s %s %s%s%s\n", first ? "limits:" : "", leash_limit_to_string((enum leash_limit) l),
                       shown, how[0] ? ", enforced by " : "", how);
                first = false;
        }
}

/* The page's plain lines: a key of the state or verdict file and its label. */
struct page_row {
        const char *key, *label;
};
static const struct page_row page_who[] = {
        {"user", "user:"},
        {"node", "node:"},
        {"partition", "partition:"},
        {"account", "account:"},
        {"profile", "profile:"},
        {"profile_chosen_by", "  chosen by:"},
        {"profile_source", "  from:"},
        {NULL, NULL},
};
static const struct page_row page_setup[] = {
        {"on_error", "on error:"},
        {"cgroup", "cgroup:"},
        {"setup_error", "setup error:"},
        {NULL, NULL},
};
static const struct page_row page_verdict[] = {
        {"reason", "verdict:"},
        {"tasks_placed", "  tasks placed:"},
        {"tasks_refused", "  tasks refused:"},
        {NULL, NULL},
};

static void page_lines(const char *text, const struct page_row *rows) {
        for (; rows->key; rows++)
                page_line(text, rows->key, rows->label);
}

static void status_page(uint32_t id, const char *state, const char *verdict, bool alive, int procs, uint64_t cpu_us) {
        char v[64], when[64] = "?";
        uint64_t started = kv_u64(state, "started_realtime_ns", 0);
        time_t t = (time_t) (started / 1000000000ULL);
        struct tm tm;

        printf("job %" PRIu32 "\n", id);
        page_lines(state, page_who);
        if (started && gmtime_r(&t, &tm))
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
        printf("  %-18s %s\n", "started:", when);
        if (kv_get(state, "supervisor_pid", v, sizeof v) == 0)
                printf("  %-18s %s (pid %s)\n", "supervisor:", alive ? "running" : "gone", v);
        else
                printf("  %-18s %s\n", "supervisor:", "none");
        printf("  %-18s %d, %.3f s of CPU so far\n", "processes:", procs, (double) cpu_us / 1e6);
        page_limits(state);
        if (kv_get(state, "grace_ns", v, sizeof v) == 0) {
                char g[32];
                format_duration(kv_u64(state, "grace_ns", 0), g, sizeof g);
                printf("  %-18s %s, then SIGKILL after %s\n",
                       "soft signal:", signal_name((int) kv_u64(state, "soft_signal", 0)) ?: "?", g);
        }
        page_lines(state, page_setup);
        page_numbered(state, "error", "errors:");
        page_lines(verdict, page_verdict);
        page_signals(verdict);
        page_numbered(verdict, "error", "  errors:");
}

static int status_one(struct ctx *x, uint32_t id, bool detail) {
        _cleanup_close_ int state_fd = -1, root_fd = -1, job_fd = -1;
        _cleanup_free_ char *state = NULL, *verdict = NULL;
        char why[4400], profile[64] = "-", user[64] = "-", reason[32] = "-";
        uint64_t cpu_us = 0;
        int procs = 0;
        bool alive;

        x->job.id = id;
        int r = -ENOENT;

        if (state_open(x, false, &state_fd, why, sizeof why) < 0 || (r = state_read(state_fd, "state", &state)) < 0) {
                log_error("job %" PRIu32 ": no state here (%s)", id,
                          why[0]          ? why
                          : r == -EBADMSG ? "malformed: refused"
                                          : "not found");
                return 1;
        }
        (void) state_read(state_fd, "verdict", &verdict);
        (void) kv_get(state, "profile", profile, sizeof profile);
        (void) kv_get(state, "user", user, sizeof user);
        if (verdict)
                (void) kv_get(verdict, "reason", reason, sizeof reason);
        if (slurm_cgroup_root(false, NULL, 0, &root_fd, NULL) == 0 &&
            slurm_job_cgroup_open(root_fd, id, &job_fd) == 0) {
                (void) account_cpu_usage_us(job_fd, &cpu_us);
                procs = slurm_tree_signal(job_fd, 0);
        }
        alive = supervisor_alive(state);
        if (status_fmt == STATUS_JSON)
                status_json(id, state, verdict, alive, procs, cpu_us);
        else if (detail)
                status_page(id, state, verdict, alive, procs, cpu_us);
        else {
                /* a name from a user is printed escaped, never raw onto root's terminal */
                char u[sizeof user * 4], p[sizeof profile * 4];
                kv_escape(user, u, sizeof u);
                kv_escape(profile, p, sizeof p);
                printf("%-10" PRIu32 " %-12s %-16s %-10s %6d %10.3f  %s\n", id, u, p, alive ? "running" : "gone", procs,
                       (double) cpu_us / 1e6, reason);
        }
        return 0;
}

static int for_each_state(struct ctx *x, int (*fn)(struct ctx *, uint32_t, bool), bool arg) {
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

static int status(int argc, char **argv) {
        struct ctx x = {0};
        uint64_t id;
        int rc;

        status_fmt = STATUS_TEXT;
        for (;;) {
                const char *dir = NULL;
                if (argc >= 2 && strncmp(argv[1], "--config-dir=", 13) == 0) {
                        dir = argv[1] + 13;
                        argc--, argv++;
                } else if (argc >= 3 && strcmp(argv[1], "--config-dir") == 0) {
                        dir = argv[2];
                        argc -= 2, argv += 2;
                } else if (argc >= 3 && (strcmp(argv[1], "-o") == 0 || strcmp(argv[1], "--output") == 0)) {
                        if (strcmp(argv[2], "json") == 0)
                                status_fmt = STATUS_JSON;
                        else if (strcmp(argv[2], "text") != 0)
                                return usage_error("slurm status: -o '%s': expected json or text", argv[2]);
                        argc -= 2, argv += 2;
                } else
                        break;
                /* what the hooks' wrappers pass (--config-dir=DIR): status reads the same */
                if (dir && dir[0] != '/')
                        return usage_error("slurm status: --config-dir: '%s': expected an absolute path", dir);
                if (dir && setenv("LEASH_CONFIG_DIR", dir, 1) < 0)
                        return usage_error("slurm status: %s", strerror(errno));
        }
        {
                struct leash_profile_paths paths;
                const char *bad = NULL;
                if (leash_profile_paths_default(&paths, &bad) < 0) {
                        log_error("LEASH_CONFIG_DIR: '%s': expected an absolute path", bad ? bad : "");
                        return EXIT_LEASH_FAILED;
                }
        }
        if (argc > 2)
                return usage_error("slurm status: expected [--config-dir DIR] [-o json|text] [JOBID]");
        if (argc == 2 && (parse_u64(argv[1], &id) < 0 || id == 0 || id > UINT32_MAX))
                return usage_error("slurm status: '%s': expected a job id", argv[1]);
        ctx_load_conf(&x);
        status_first = true;
        if (argc == 2)
                rc = status_one(&x, (uint32_t) id, true);
        else {
                if (status_fmt == STATUS_JSON)
                        fputs("[", stdout);
                else
                        printf("%-10s %-12s %-16s %-10s %6s %10s  %s\n", "JOBID", "USER", "PROFILE", "SUPERVISOR",
                               "PROCS", "CPU_S", "VERDICT");
                rc = for_each_state(&x, status_one, false) < 0 ? EXIT_LEASH_FAILED : 0;
                if (status_fmt == STATUS_JSON)
                        fputs("]", stdout);
        }
        if (status_fmt == STATUS_JSON && rc == 0)
                fputc('\n', stdout);
        ctx_done(&x);
        return rc;
}

/* A job is stale when its state says a supervisor ran and it is gone, or
 * when its cgroup has no state at all (the Epilog never came). */
static bool sweep_orphans;

static int sweep_one(struct ctx *x, uint32_t id, bool dry_run) {
        _cleanup_close_ int state_fd = -1, root_fd = -1;
        _cleanup_free_ char *state = NULL;
        char why[4400];
        bool have_state;

        x->job.id = id;
        have_state =
                state_open(x, false, &state_fd, why, sizeof why) == 0 && state_read(state_fd, "state", &state) == 0;
        if (have_state && (!kv_u64(state, "supervisor_pid", 0) || supervisor_alive(state)))
                return 0;
        /* A job cgroup without a state here may belong to a Prolog with another
         * state-dir (another configuration on the same host): only --orphans
         * removes those. */
        if (!have_state && !sweep_orphans) {
                printf("job %" PRIu32 ": a cgroup without state in %s: left alone (--orphans removes it)\n", id,
                       x->conf.state_dir);
                return 0;
        }
        printf("%s job %" PRIu32 "\n", dry_run ? "would remove" : "removing", id);
        if (dry_run)
                return 0;
        if (slurm_cgroup_root(false, NULL, 0, &root_fd, NULL) == 0 && slurm_job_cgroup_remove(root_fd, id) < 0) {
                log_error("job %" PRIu32 ": could not remove its cgroup", id);
                return 1;
        }
        state_remove(x);
        return 0;
}

static int sweep(int argc, char **argv) {
        struct ctx x = {0};
        _cleanup_close_ int root_fd = -1;
        bool dry_run = false;
        int rc = 0;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--dry-run") == 0)
                        dry_run = true;
                else if (strcmp(argv[i], "--orphans") == 0)
                        sweep_orphans = true;
                else
                        return usage_error("slurm sweep: '%s': expected --dry-run or --orphans", argv[i]);
        }
        ctx_load_conf(&x);
        /* job cgroups first (those without state too), then states without cgroups */
        if (slurm_cgroup_root(false, NULL, 0, &root_fd, NULL) == 0) {
                int dfd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        uint64_t id;
                        if (strncmp(de->d_name, "job_", 4) == 0 && parse_u64(de->d_name + 4, &id) == 0 &&
                            id <= UINT32_MAX && sweep_one(&x, (uint32_t) id, dry_run) != 0)
                                rc = 1;
                }
                if (d)
                        closedir(d);
                else if (dfd >= 0)
                        close(dfd);
        }
        if (for_each_state(&x, sweep_one, dry_run) != 0)
                rc = 1;
        ctx_done(&x);
        return rc;
}

/* For the SPANK plugin's option callback (sbatch/srun, as the user): 0 when
 * the user may ask for NAME, 1 with the reason on stderr when not. */
static int check_profile(int argc, char **argv) {
        struct ctx x = {0};
        char why[1024];
        int rc = 0;

        if (argc != 2)
                return usage_error("slurm check-profile: expected one profile name");
        ctx_load_conf(&x);
        if (!leash_profile_name_is_valid(argv[1])) {
                log_error("--leash-profile='%s': not a profile name", argv[1]); /* escaped by log_error */
                rc = 1;
        } else if (!slurm_user_profile_allowed(&x.conf, argv[1])) {
                log_error("--leash-profile=%s: not allowed on this cluster (allowed: %s%s)", argv[1],
                          x.conf.n_user_profiles ? x.conf.user_profiles[0] : "none",
                          x.conf.n_user_profiles > 1 ? ", ..." : "");
                rc = 1;
        } else if (strcmp(argv[1], SLURM_PROFILE_NONE) != 0 && cli_profile_check(argv[1], why, sizeof why) < 0) {
                /* what the Prolog would refuse, refused at submission */
                log_error("--leash-profile=%s", why);
                rc = 1;
        }
        ctx_done(&x);
        return rc;
}

/* --- check: which mode the node is in --------------------------------------- */

/* slurm.conf (--slurm-conf=FILE, else $SLURM_CONF, else /etc/slurm/slurm.conf)
 * and its plugstack.conf against slurm.ini's mode: 0 when the node is in one
 * mode, 1 (with why) when leash and Slurm would both place tasks or nest
 * lacks what it needs, 125 when slurm.conf cannot be read. */
static int node_check(int argc, char **argv) {
        struct ctx x = {0};
        struct slurm_node n;
        const char *path = getenv("SLURM_CONF");
        char why[1400], stack_path[SLURM_NODE_VALUE_MAX + 32];
        int r;

        if (!path || !*path)
                path = "/etc/slurm/slurm.conf";
        for (int i = 1; i < argc; i++) {
                if (strncmp(argv[i], "--slurm-conf=", 13) == 0 && argv[i][13])
                        path = argv[i] + 13;
                else
                        return usage_error("slurm check: '%s': expected --slurm-conf=FILE", argv[i]);
        }
        r = node_read(path, &n, stack_path, sizeof stack_path);
        if (r < 0) {
                log_error("slurm check: read %s: %s", path, strerror(-r));
                return EXIT_LEASH_FAILED;
        }
        ctx_load_conf(&x);
        printf("slurm.conf: %s: ProctrackType=%s TaskPlugin=%s\n", path, n.proctrack[0] ? n.proctrack : "(default)",
               n.task_plugin[0] ? n.task_plugin : "(default)");
        printf("Slurm places tasks in its cgroups: %s\n", n.slurm_places ? "yes" : "no");
        printf("leash hooks: Prolog %s, TaskProlog %s, spank_leash.so %s (%s)\n", n.leash_prolog ? "yes" : "no",
               n.leash_task_prolog ? "yes" : "no", n.leash_spank ? "yes" : "no", stack_path);
        printf("slurm.ini: mode = %s\n", slurm_mode_to_string(x.conf.mode));
        if (n.includes)
                printf("note: %s has Include lines, which this check does not follow\n", path);
        r = slurm_node_judge(&n, x.conf.mode, why, sizeof why);
        if (r < 0)
                log_error("slurm check: refused: %s", why);
        else
                printf("mode: %s\n", why);
        r = r < 0 || !x.conf_ok ? 1 : 0;
        ctx_done(&x);
        return r;
}

int cmd_slurm(int argc, char **argv) {
        const char *sub = argc > 1 ? argv[1] : NULL;

        if (!sub)
                return usage_error(
                        "slurm: expected prolog, epilog, task-prolog, status, sweep, check or check-profile");
        if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
                slurm_help(stdout);
                return fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
        }
        if (strcmp(sub, "prolog") == 0 || strcmp(sub, "epilog") == 0 || strcmp(sub, "task-prolog") == 0) {
                if (argc > 3 || (argc == 3 && strncmp(argv[2], "--config-dir=/", 14) != 0))
                        return usage_error(
                                "slurm %s: '%s': takes no arguments but --config-dir=DIR (Slurm passes none)", sub,
                                argv[2]);
                /* The TaskProlog runs as the user, in the job's own environment:
                 * nothing of it chooses leash's configuration (a LEASH_CONFIG_DIR
                 * of the job's would name a slurm.ini with another state-dir, and
                 * the task would run outside leash). The admin's wrapper may name
                 * one with --config-dir; else it is the built-in one. slurmd runs
                 * the Prolog and Epilog in its own environment, the admin's. */
                if (strcmp(sub, "task-prolog") == 0) {
                        task_prolog_env_ignored = argc < 3 && getenv("LEASH_CONFIG_DIR");
                        (void) unsetenv("LEASH_CONFIG_DIR");
                }
                if (argc == 3 && setenv("LEASH_CONFIG_DIR", argv[2] + 13, 1) < 0)
                        return usage_error("slurm %s: %s", sub, strerror(errno));
                if (strcmp(sub, "prolog") == 0)
                        return prolog();
                if (strcmp(sub, "epilog") == 0)
                        return epilog();
                return task_prolog();
        }
        if (strcmp(sub, "status") == 0)
                return status(argc - 1, argv + 1);
        if (strcmp(sub, "sweep") == 0)
                return sweep(argc - 1, argv + 1);
        if (strcmp(sub, "check-profile") == 0)
                return check_profile(argc - 1, argv + 1);
        if (strcmp(sub, "check") == 0)
                return node_check(argc - 1, argv + 1);
        return usage_error(
                "slurm: unknown subcommand '%s': expected prolog, epilog, task-prolog, status, sweep, check or "
                "check-profile",
                sub);
}
