/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash slurm prolog: Slurm's Prolog= (root). The job's profile, its cgroup
 * and limits (mode own) or its plan (mode nest), the per-job supervisor, and
 * the state in <state-dir>/job_<ID> that the TaskProlog, the Epilog and
 * `leash slurm status` read.
 *
 * The Prolog never fails the node for leash's own trouble unless on-error =
 * drain: with continue the job runs unconfined and the report says
 * setup_error; with fail-job its tasks are refused (by the TaskProlog or the
 * SPANK plugin, whose failure fails the job without draining).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "../basic/kvfile.h"
#include "../basic/log.h"
#include "../basic/macro.h"
#include "../basic/time-util.h"
#include "../engine/cgroup/cgroupfs.h"
#include "../settings/options.h"
#include "../settings/profile.h"
#include "cli.h"
#include "slurm-ctx.h"
#include "slurm-hooks.h"
#include "slurm-supervise.h"

#define STATE_ERRORS_MAX 8
#define STATE_SIZE 32768

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

static int state_text(struct slurm_ctx *x, char *buf, size_t size, const char *profile, const char *why,
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
                /* the profile's measured limits (limit = FIGURE=VALUE, sample =
                 * INTERVAL): the supervisor's job samples them, the Epilog's
                 * report lists them */
                if (c->sampling.interval_ns)
                        kv_add(&b, "sample_ns", "%" PRIu64, c->sampling.interval_ns);
                for (int f = 0; f < _LEASH_FIG_MAX; f++) {
                        char key[64];
                        if (!c->sampling.limit[f])
                                continue;
                        snprintf(key, sizeof key, "limit_sampled.%s", leash_fig_name((enum leash_fig) f));
                        kv_add(&b, key, "%" PRIu64, c->sampling.limit[f]);
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
static void prolog_state_failed(struct slurm_ctx *x, int state_fd, const char *profile, const char *why,
                                const char *msg, bool refuse) {
        char text[STATE_SIZE];

        if (state_fd < 0)
                return;
        if (state_text(x, text, sizeof text, profile, why, NULL, NULL, NULL, msg, refuse, 0, 0,
                       now_ns(CLOCK_REALTIME)) < 0)
                snprintf(text, sizeof text, "setup_error=the state did not fit\n%s", refuse ? "refuse=1\n" : "");
        (void) slurm_file_replace(state_fd, "state", text);
}

/* The Prolog's answer to leash's own trouble, per on-error. */
static int prolog_trouble(struct slurm_ctx *x, int state_fd, const char *profile, const char *why, const char *msg) {
        log_error("job %" PRIu32 ": %s (on-error = %s)", x->job.id, msg, slurm_on_error_to_string(x->conf.on_error));
        prolog_state_failed(x, state_fd, profile, why, msg, x->conf.on_error == SLURM_ON_ERROR_FAIL_JOB);
        return x->conf.on_error == SLURM_ON_ERROR_DRAIN ? 1 : 0;
}

/* A job that asked for what cannot be given: its tasks are refused (by the
 * TaskProlog or the plugin, which print msg into the task's stderr). */
static int prolog_refuse_job(struct slurm_ctx *x, int state_fd, const char *profile, const char *why, const char *msg) {
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

/* mode own: <cgroup2>/leash/slurm/job_<ID> with the profile's limits. */
static int prolog_own_cgroup(struct slurm_ctx *x, struct leash_spec *c, enum leash_enforcer *plan, char *root,
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
static int prolog_nest_plan(struct slurm_ctx *x, const struct leash_spec *c, enum leash_enforcer *plan) {
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
static int node_judge(struct slurm_ctx *x, char *why, size_t size) {
        struct slurm_node n;
        char stack_path[SLURM_NODE_VALUE_MAX + 32];
        int r;

        if (slurm_node_read(NULL, &n, stack_path, sizeof stack_path) < 0)
                return 0;
        r = slurm_node_judge(&n, x->conf.mode, why, size);
        return r == -EEXIST || (r < 0 && x->conf.mode == SLURM_MODE_NEST && !n.slurm_places) ? r : 0;
}

/* Forks the per-job supervisor sv describes and waits until it runs: its
 * pid, or -errno with msg. slurmd kills the Prolog's process group when it
 * exits: the supervisor gets a new session, stdio on /dev/null, and no fd of
 * slurmd's. */
static pid_t prolog_start_supervisor(struct slurm_supervisor *sv, char *msg, size_t msg_size) {
        int ready[2] = {-1, -1};
        pid_t pid;
        char c;

        if (pipe2(ready, O_CLOEXEC) < 0) {
                snprintf(msg, msg_size, "pipe: %s", strerror(errno));
                return negative_errno();
        }
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                snprintf(msg, msg_size, "start the supervisor: %s", strerror(errno));
                close(ready[0]);
                close(ready[1]);
                return negative_errno();
        }
        if (pid == 0) {
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
                close_others(sv);
                _exit(slurm_supervise(sv));
        }
        close(ready[1]);
        (void) !read(ready[0], &c, 1);
        close(ready[0]);
        return pid;
}

/* The job's cgroup (mode own) or plan (mode nest), the supervisor's socket,
 * the supervisor, and the state that names it: the Prolog's exit code. On
 * trouble nothing of it is left but the state that says why. */
static int prolog_confine(struct slurm_ctx *x, int state_fd, struct leash_spec *c, const char *profile,
                          const char *pwhy) {
        _cleanup_close_ int root_fd = -1, job_fd = -1, listen_fd = -1;
        enum leash_enforcer plan[_LEASH_LIMIT_MAX];
        char why[4400], root[4096], cgroup[4200] = "", text[STATE_SIZE], msg[4600];
        uint64_t started;
        pid_t pid;
        int r;

        r = node_judge(x, why, sizeof why);
        if (r < 0) {
                snprintf(msg, sizeof msg, "%s", why);
                goto trouble;
        }
        if (x->conf.mode == SLURM_MODE_NEST)
                r = prolog_nest_plan(x, c, plan);
        else
                r = prolog_own_cgroup(x, c, plan, root, sizeof root, &root_fd, &job_fd, msg, sizeof msg);
        if (r < 0)
                goto trouble;
        if (job_fd >= 0)
                snprintf(cgroup, sizeof cgroup, "%s/job_%" PRIu32, root, x->job.id);
        r = listen_socket(state_fd, x->job.uid, &listen_fd);
        if (r < 0) {
                snprintf(msg, sizeof msg, "the supervisor's socket: %s", strerror(-r));
                goto trouble;
        }
        started = now_ns(CLOCK_REALTIME);
        pid = prolog_start_supervisor(
                &(struct slurm_supervisor){
                        .config = c,
                        .job_id = x->job.id,
                        .uid = x->job.uid,
                        .listen_fd = listen_fd,
                        .job_fd = job_fd,
                        .nest = x->conf.mode == SLURM_MODE_NEST,
                        .state_fd = state_fd,
                        .cgroup = cgroup,
                        .epilog_wait_ns = x->conf.epilog_wait_ns,
                },
                msg, sizeof msg);
        if (pid < 0)
                goto trouble;
        r = state_text(x, text, sizeof text, profile, pwhy, c, plan, cgroup[0] ? cgroup : NULL, NULL, false, pid,
                       slurm_proc_starttime(pid), started);
        if (r >= 0)
                r = slurm_file_replace(state_fd, "state", text);
        if (r < 0) {
                log_error("job %" PRIu32 ": write the state: %s", x->job.id, strerror(-r));
                (void) kill(pid, SIGKILL);
                (void) slurm_job_cgroup_remove(root_fd, x->job.id);
                return x->conf.on_error == SLURM_ON_ERROR_DRAIN ? 1 : 0;
        }
        return 0;

trouble:
        if (job_fd >= 0)
                (void) slurm_job_cgroup_remove(root_fd, x->job.id);
        (void) unlinkat(state_fd, "sock", 0);
        return prolog_trouble(x, state_fd, profile, pwhy, msg);
}

/* The profile the job gets (*ret_profile, chosen by *ret_pwhy): 0 when the job
 * is to be confined by it; else 1 with the Prolog's exit code in *ret_rc, the
 * state written (profile none, a profile refused, leash's trouble). */
static int prolog_choose(struct slurm_ctx *x, int state_fd, const char **ret_profile, const char **ret_pwhy,
                         int *ret_rc) {
        const char *profile = NULL, *pwhy = NULL;
        char why[4400], text[STATE_SIZE], msg[4600];
        int r;

        r = slurm_choose_profile(&x->conf, &x->job, &profile, &pwhy, why, sizeof why);
        if (r == -EPERM) {
                /* never a way out of confinement: the job gets what it would have had */
                slurm_ctx_error(x, "%s", why);
                x->job.requested_profile[0] = '\0';
                (void) slurm_choose_profile(&x->conf, &x->job, &profile, &pwhy, why, sizeof why);
                snprintf(x->job.requested_profile, sizeof x->job.requested_profile, "%s", slurm_env(SPANK_OPT_ENV));
        }
        if (strcmp(profile, SLURM_PROFILE_NONE) == 0) {
                r = state_text(x, text, sizeof text, profile, pwhy, NULL, NULL, NULL, NULL, false, 0, 0,
                               now_ns(CLOCK_REALTIME));
                if (r >= 0)
                        r = slurm_file_replace(state_fd, "state", text);
                *ret_rc = r < 0 && x->conf.on_error == SLURM_ON_ERROR_DRAIN ? 1 : 0;
                return 1;
        }
        r = cli_profile_check(profile, why, sizeof why);
        if (r == 0 && x->job.requested_too_long && strcmp(pwhy, "--leash-profile") == 0) {
                snprintf(why, sizeof why, "'%s...': not a profile name (too long)", profile);
                r = -EINVAL;
        }
        if (r < 0 && strcmp(pwhy, "--leash-profile") == 0) {
                /* the user's own mistake: their tasks are refused, with the
                 * reason in their output and the report, whatever on-error
                 * says (that is for leash's trouble), and the node stays up */
                snprintf(msg, sizeof msg, "--leash-profile=%s", why);
                *ret_rc = prolog_refuse_job(x, state_fd, profile, pwhy, msg);
                return 1;
        }
        if (r < 0) {
                snprintf(msg, sizeof msg, "profile %s", why);
                *ret_rc = prolog_trouble(x, state_fd, profile, pwhy, msg);
                return 1;
        }
        *ret_profile = profile;
        *ret_pwhy = pwhy;
        return 0;
}

/* The job's settings from its profile, then confined by them: the Prolog's
 * exit code. */
static int prolog_with_profile(struct slurm_ctx *x, int state_fd, const char *profile, const char *pwhy) {
        struct leash_settings cli, s;
        struct leash_profiles *profiles = NULL;
        char msg[4600];
        int rc;

        leash_settings_init(&cli);
        cli.profile_name = strdup(profile);
        rc = cli.profile_name ? cli_settings_build(&cli, NULL, 0, &s, &profiles) : EXIT_LEASH_FAILED;
        leash_settings_done(&cli);
        if (rc != 0) {
                snprintf(msg, sizeof msg, "profile '%s': the configuration cannot be used (see the Prolog's log)",
                         profile);
                return prolog_trouble(x, state_fd, profile, pwhy, msg);
        }
        s.config.profile = profile;
        s.config.profile_only = true; /* a weak limit's remedy in the profile's keys */
        rc = prolog_confine(x, state_fd, &s.config, profile, pwhy);
        leash_settings_done(&s);
        leash_profiles_free(profiles);
        return rc;
}

int slurm_prolog(void) {
        struct slurm_ctx x = {0};
        _cleanup_close_ int state_fd = -1;
        const char *profile = NULL, *pwhy = NULL;
        char why[4400], msg[4600];
        int rc;

        if (slurm_ctx_load_job(&x) < 0)
                return EXIT_LEASH_FAILED;
        slurm_ctx_load_conf(&x);
        if (slurm_ctx_state_open(&x, true, &state_fd, why, sizeof why) < 0) {
                snprintf(msg, sizeof msg, "state directory: %s", why);
                rc = prolog_trouble(&x, -1, NULL, NULL, msg);
        } else {
                (void) unlinkat(state_fd, "verdict", 0);
                if (prolog_choose(&x, state_fd, &profile, &pwhy, &rc) == 0)
                        rc = prolog_with_profile(&x, state_fd, profile, pwhy);
        }
        slurm_ctx_done(&x);
        return rc;
}
