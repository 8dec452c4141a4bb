/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash_run: the whole life of one job.
 *
 *   parent  resolve and open the cgroup parent, enable controllers, plan how
 *           each limit is enforced (--strict refuses here, before anything
 *           exists), sweep job cgroups whose leash died
 *   create  mkdir the job cgroup, write its limits
 *   guard   start the watchdog (below)
 *   spawn   clone3 into the cgroup (spawn.c)
 *   watch   the event loop (supervise.c)
 *   reap    kill what the main process left behind, wait for the cgroup to
 *           empty, read the accounting (account.c), rmdir, stop the watchdog
 *
 * Every failure after the cgroup exists kills what runs in it and removes it:
 * nothing is left behind on any path.
 *
 * The watchdog. If leash itself is SIGKILLed, nothing in leash runs, yet the
 * job must not run on. The main process has PR_SET_PDEATHSIG(SIGKILL), but
 * its descendants would survive. So before the spawn leash starts a tiny
 * watchdog: clone(CLONE_VM | CLONE_FILES) on a static stack, so it costs no
 * page-table copy and shares the job cgroup's fds. It sleeps in sigwaitinfo
 * for its parent-death signal; woken with leash gone, it writes cgroup.kill,
 * waits for the cgroup to empty and removes it. On the normal path leash
 * SIGKILLs it after the cgroup is gone. If both die at once (a kill of the
 * whole process group), the next leash run sweeps the cgroup: its name holds
 * the dead leash's pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../basic/time-util.h"
#include "account.h"
#include "cgroupfs.h"
#include "host.h"
#include "leash.h"
#include "sandbox.h"
#include "spawn.h"
#include "supervise.h"

#define WATCHDOG_SIGNAL (SIGRTMIN + 7)

void leash_config_init(struct leash_config *c) {
        memset(c, 0, sizeof *c);
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++)
                c->limit[l] = LEASH_UNSET;
        c->grace_ns = 5 * NSEC_PER_SEC;
        c->soft_signal = SIGXCPU;
}

static int fail(struct leash_error *err, const char *step, const char *detail, int r) {
        if (err) {
                err->step = step;
                snprintf(err->detail, sizeof err->detail, "%s", detail ? detail : "");
                err->error = -r;
        }
        return r;
}

int leash_config_validate(const struct leash_config *c, struct leash_error *err) {
        if (!c->argv || !c->argv[0] || !c->argv[0][0])
                return fail(err, "parse", "no command given", -EINVAL);
        if (c->name && !job_name_is_valid(c->name))
                return fail(err, "parse", c->name, -EINVAL);
        if (c->soft_signal <= 0 || c->soft_signal >= _NSIG || c->soft_signal == SIGKILL || c->soft_signal == SIGSTOP)
                return fail(err, "parse", "soft signal", -EINVAL);
        return 0;
}

/* basename of the command, made safe for a cgroup name */
static void default_name(const char *argv0, char *buf, size_t size) {
        const char *b = strrchr(argv0, '/');
        size_t n = 0;

        b = b ? b + 1 : argv0;
        for (; *b && n + 1 < size && n < 64; b++) {
                bool keep = *b == '_' || *b == '-' || (*b == '.' && n > 0) || (*b >= '0' && *b <= '9') ||
                            (*b >= 'a' && *b <= 'z') || (*b >= 'A' && *b <= 'Z');
                buf[n++] = keep ? *b : '_';
        }
        buf[n] = '\0';
        if (n == 0)
                snprintf(buf, size, "job");
}

struct watchdog {
        pid_t pid;
        pid_t leash;
        int parent_fd;
        int job_fd;
        char name[256];
};

static char watchdog_stack[64 * 1024] __attribute__((aligned(16)));

static int watchdog_main(void *arg) {
        const struct watchdog *w = arg;
        sigset_t set;

        sigemptyset(&set);
        sigaddset(&set, WATCHDOG_SIGNAL);
        if (prctl(PR_SET_PDEATHSIG, WATCHDOG_SIGNAL) < 0)
                _exit(1);
        /* re-check after arming: leash may have died before prctl */
        while (getppid() == w->leash)
                (void) sigwaitinfo(&set, NULL);
        (void) cgroupfs_kill(w->job_fd);
        (void) cgroupfs_wait_empty(w->job_fd, 10000);
        (void) unlinkat(w->parent_fd, w->name, AT_REMOVEDIR);
        _exit(0);
}

static int watchdog_start(struct watchdog *w) {
        w->leash = getpid();
        /* the signal must already be blocked when the watchdog starts waiting */
        w->pid = clone(watchdog_main, watchdog_stack + sizeof watchdog_stack,
                       CLONE_VM | CLONE_FILES | CLONE_FS | SIGCHLD, w);
        return w->pid < 0 ? negative_errno() : 0;
}

static void watchdog_stop(struct watchdog *w) {
        if (w->pid <= 0)
                return;
        (void) kill(w->pid, SIGKILL);
        (void) waitpid(w->pid, NULL, __WALL);
        w->pid = 0;
}

static enum leash_reason decide(const struct leash_result *r, enum leash_reason cause, int *ret_exit) {
        const struct leash_usage *u = &r->usage;
        bool failed = r->term_signal || r->status_code != 0;
        int own = r->term_signal ? 128 + r->term_signal : r->status_code;

        if (cause == LEASH_REASON_WALL_TIME || cause == LEASH_REASON_CPU_TIME) {
                *ret_exit = 124;
                return cause;
        }
        if (cause == LEASH_REASON_INTERRUPTED) {
                *ret_exit = 128 + r->interrupt_signal;
                return cause;
        }
        *ret_exit = own;
        if (u->mem_ev_oom_kill != LEASH_NULL && u->mem_ev_oom_kill > 0)
                return LEASH_REASON_MEMORY;
        if (failed && u->pids_events_max != LEASH_NULL && u->pids_events_max > 0)
                return LEASH_REASON_PIDS;
        if (r->term_signal)
                return LEASH_REASON_SIGNAL;
        return r->status_code ? LEASH_REASON_EXIT : LEASH_REASON_OK;
}

static double job_cores(const struct leash_config *c, const enum leash_enforcer *plan) {
        cpu_set_t set;
        double cores = 1;

        if (sched_getaffinity(0, sizeof set, &set) == 0)
                cores = CPU_COUNT(&set);
        if (plan[LEASH_LIMIT_CPUS] == LEASH_BY_CGROUP && c->limit[LEASH_LIMIT_CPUS] != LEASH_MAX) {
                double q = (double) c->limit[LEASH_LIMIT_CPUS] / 1e6;
                if (q < cores)
                        cores = q;
        }
        return cores > 0 ? cores : 1;
}

static void add_rlimit(struct spawn_params *sp, int resource, uint64_t v) {
        if (v == LEASH_UNSET)
                return;
        sp->rlimits[sp->n_rlimits].resource = resource;
        sp->rlimits[sp->n_rlimits].value = v == LEASH_MAX ? RLIM_INFINITY : (rlim_t) v;
        sp->n_rlimits++;
}

int leash_run(const struct leash_config *c, struct leash_result *r, struct leash_error *err) {
        _cleanup_close_ int parent_fd = -1, job_fd = -1, sig_fd = -1, pidfd = -1;
        char parent[4096], dirname[256], name[80];
        unsigned available = 0;
        sigset_t block, old_mask;
        struct spawn_params sp = {0};
        struct spawn_failure sf;
        struct watchdog wd = {0};
        struct supervise_params svp;
        struct rusage ru;
        enum leash_reason cause = LEASH_REASON_OK;
        bool used_clone3, mask_changed = false, chld_changed = false;
        struct sigaction old_chld;
        const char *spawn_env;
        _cleanup_(sandbox_plan_done) struct sandbox_plan plan = {0};
        int rc;

        memset(r, 0, sizeof *r);
        account_usage_init(&r->usage);
        r->status_code = -1;
        rc = leash_config_validate(c, err);
        if (rc < 0)
                return rc;
        /* identity, capabilities, filter, environment: resolved before anything exists */
        rc = sandbox_prepare(&c->sandbox, &plan, &r->sandbox, err);
        if (rc < 0)
                return rc;

        rc = host_job_parent(c->cgroup_parent, true, parent, sizeof parent, err);
        if (rc < 0)
                return rc;
        parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (parent_fd < 0)
                return fail(err, "open the cgroup parent", parent, negative_errno());
        rc = cgroupfs_enable_controllers(parent_fd, CTL_MEMORY | CTL_PIDS | CTL_CPU | CTL_IO, &available);
        if (rc < 0)
                return fail(err, "read the controllers of the cgroup parent", parent, rc);
        cgroupfs_plan_enforcement(c, available, r->enforced, r->enforce_note);
        if (c->strict)
                for (int l = 0; l < _LEASH_LIMIT_MAX; l++)
                        if (c->limit[l] != LEASH_UNSET &&
                            (l == LEASH_LIMIT_MEMORY || l == LEASH_LIMIT_MEMORY_HIGH || l == LEASH_LIMIT_SWAP ||
                             l == LEASH_LIMIT_PIDS || l == LEASH_LIMIT_CPUS) &&
                            r->enforced[l] != LEASH_BY_CGROUP)
                                return fail(err, "enforce every limit by cgroup (--strict)",
                                            leash_limit_to_string((enum leash_limit) l), -EOPNOTSUPP);
        (void) cgroupfs_sweep_stale(parent_fd);

        if (c->name)
                snprintf(name, sizeof name, "%s", c->name);
        else
                default_name(c->argv[0], name, sizeof name);
        rc = cgroupfs_create_job(parent_fd, name, dirname, sizeof dirname, &job_fd);
        if (rc < 0)
                return fail(err, "create the job cgroup", parent, rc);
        snprintf(r->cgroup, sizeof r->cgroup, "%s/%s", parent, dirname);

        rc = cgroupfs_apply_limits(job_fd, c, r->enforced, err);
        if (rc < 0)
                goto remove;

        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGHUP);
        sigaddset(&block, WATCHDOG_SIGNAL);
        if (sigprocmask(SIG_BLOCK, &block, &old_mask) < 0) {
                rc = fail(err, "block signals", "", negative_errno());
                goto remove;
        }
        mask_changed = true;
        sigdelset(&block, WATCHDOG_SIGNAL);
        sig_fd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sig_fd < 0) {
                rc = fail(err, "create a signalfd", "", negative_errno());
                goto remove;
        }

        /* With SIGCHLD ignored (inherited from whoever started leash) the kernel
         * would reap the job by itself and its exit status would be lost. */
        if (sigaction(SIGCHLD, NULL, &old_chld) == 0 && old_chld.sa_handler == SIG_IGN) {
                struct sigaction dfl = {.sa_handler = SIG_DFL};
                chld_changed = sigaction(SIGCHLD, &dfl, NULL) == 0;
        }

        wd.parent_fd = parent_fd;
        wd.job_fd = job_fd;
        snprintf(wd.name, sizeof wd.name, "%s", dirname);
        rc = watchdog_start(&wd);
        if (rc < 0) {
                fail(err, "start the watchdog", "", rc);
                goto remove;
        }

        sp.argv = c->argv;
        sp.cgroup_fd = job_fd;
        sp.child_mask = old_mask;
        spawn_env = getenv("LEASH_SPAWN");
        sp.force_fallback = spawn_env && strcmp(spawn_env, "fork") == 0;
        sp.sigchld_ignored = chld_changed;
        sp.sandbox = &plan;
        if (r->enforced[LEASH_LIMIT_MEMORY] == LEASH_BY_RLIMIT)
                add_rlimit(&sp, RLIMIT_AS, c->limit[LEASH_LIMIT_MEMORY]);
        add_rlimit(&sp, RLIMIT_NOFILE, c->limit[LEASH_LIMIT_NOFILE]);
        add_rlimit(&sp, RLIMIT_FSIZE, c->limit[LEASH_LIMIT_FSIZE]);
        add_rlimit(&sp, RLIMIT_CORE, c->limit[LEASH_LIMIT_CORE]);

        r->started_realtime_ns = now_ns(CLOCK_REALTIME);
        svp.start_ns = now_ns(CLOCK_MONOTONIC);
        rc = spawn_job(&sp, &r->pid, &pidfd, &sf, &used_clone3);
        if (rc < 0) {
                fail(err, "start the job", "", rc);
                goto remove;
        }
        r->sandbox.applied = sf.step == SPAWN_STEP_NONE;
        if (sf.step != SPAWN_STEP_NONE) {
                r->exec_errno = sf.error;
                r->usage.wall_ns = now_ns(CLOCK_MONOTONIC) - svp.start_ns;
                if (sf.step == SPAWN_STEP_EXEC) {
                        r->reason = LEASH_REASON_EXEC_ERROR;
                        r->exit_code = (sf.error == ENOENT || sf.error == ENOTDIR) ? 127 : 126;
                } else {
                        r->reason = LEASH_REASON_SETUP_ERROR;
                        r->exit_code = 125;
                }
                fail(err, spawn_step_to_string(sf.step), sf.step == SPAWN_STEP_CHDIR ? c->sandbox.chdir : c->argv[0],
                     -sf.error);
                goto account;
        }

        svp.config = c;
        svp.job_fd = job_fd;
        svp.pidfd = pidfd;
        svp.signal_fd = sig_fd;
        svp.cores = job_cores(c, r->enforced);
        svp.cpu_time_by = r->enforced[LEASH_LIMIT_CPU_TIME];
        rc = supervise_job(&svp, r, &cause, &ru);
        if (rc < 0) {
                fail(err, "supervise the job", "", rc);
                goto remove;
        }
        r->usage.main_maxrss_bytes = (uint64_t) ru.ru_maxrss * 1024;
        r->usage.main_utime_us = (uint64_t) ru.ru_utime.tv_sec * USEC_PER_SEC + (uint64_t) ru.ru_utime.tv_usec;
        r->usage.main_stime_us = (uint64_t) ru.ru_stime.tv_sec * USEC_PER_SEC + (uint64_t) ru.ru_stime.tv_usec;
        r->usage.main_minflt = (uint64_t) ru.ru_minflt;
        r->usage.main_majflt = (uint64_t) ru.ru_majflt;
        r->usage.main_nvcsw = (uint64_t) ru.ru_nvcsw;
        r->usage.main_nivcsw = (uint64_t) ru.ru_nivcsw;

        /* Nothing outlives the main process: double forks, setsid, ignored signals.
         * After a group OOM kill (memory.oom.group) the kernel is already taking
         * the rest down: those are not leftovers, only a wait for the cgroup to empty. */
        if (cgroupfs_populated(job_fd) > 0 && !(r->enforced[LEASH_LIMIT_MEMORY] == LEASH_BY_CGROUP &&
                                                r->term_signal == SIGKILL && cgroupfs_oom_killed(job_fd))) {
                int n = cgroupfs_signal_all(job_fd, 0);
                r->leftovers_killed = n > 0 ? (unsigned) n : 0;
                (void) cgroupfs_kill(job_fd);
                if (r->n_signals < LEASH_SIGNALS_MAX) {
                        r->signals[r->n_signals].signal = SIGKILL;
                        r->signals[r->n_signals].at_ns = now_ns(CLOCK_MONOTONIC) - svp.start_ns;
                        r->signals[r->n_signals].why = "leftover";
                        r->n_signals++;
                }
        }
account:
        (void) cgroupfs_wait_empty(job_fd, 10000);
        account_read(job_fd, &r->usage);
        if (r->usage.memory_peak == LEASH_NULL && r->usage.main_maxrss_bytes != LEASH_NULL) {
                r->usage.memory_peak = r->usage.main_maxrss_bytes;
                r->usage.memory_peak_basis = "rusage_maxrss_main";
        }
        if (r->reason != LEASH_REASON_EXEC_ERROR && r->reason != LEASH_REASON_SETUP_ERROR)
                r->reason = decide(r, cause, &r->exit_code);
        /* SIGSYS is what a filter with the kill action delivers */
        if (r->reason == LEASH_REASON_SIGNAL && r->term_signal == SIGSYS && r->sandbox.seccomp &&
            c->sandbox.seccomp_action == LEASH_SECCOMP_KILL)
                r->reason = LEASH_REASON_SECCOMP;
        rc = 0;

remove:
        if (job_fd >= 0) {
                if (rc < 0)
                        (void) cgroupfs_kill(job_fd);
                (void) cgroupfs_remove(parent_fd, dirname, job_fd);
        }
        watchdog_stop(&wd);
        if (chld_changed)
                (void) sigaction(SIGCHLD, &old_chld, NULL);
        if (mask_changed) {
                struct signalfd_siginfo si;
                /* consume what arrived after the loop, so restoring the mask
                 * does not kill leash before its report is written */
                while (sig_fd >= 0 && read(sig_fd, &si, sizeof si) == (ssize_t) sizeof si)
                        if (!r->interrupt_signal)
                                r->interrupt_signal = (int) si.ssi_signo;
                (void) sigprocmask(SIG_SETMASK, &old_mask, NULL);
        }
        return rc;
}

const char *leash_reason_to_string(enum leash_reason r) {
        static const char *const names[_LEASH_REASON_MAX] = {
                [LEASH_REASON_OK] = "ok",
                [LEASH_REASON_EXIT] = "exit",
                [LEASH_REASON_SIGNAL] = "signal",
                [LEASH_REASON_WALL_TIME] = "wall_time",
                [LEASH_REASON_CPU_TIME] = "cpu_time",
                [LEASH_REASON_MEMORY] = "memory",
                [LEASH_REASON_PIDS] = "pids",
                [LEASH_REASON_INTERRUPTED] = "interrupted",
                [LEASH_REASON_SETUP_ERROR] = "setup_error",
                [LEASH_REASON_EXEC_ERROR] = "exec_error",
                [LEASH_REASON_SECCOMP] = "seccomp",
        };
        return r < _LEASH_REASON_MAX ? names[r] : "unknown";
}

const char *leash_limit_to_string(enum leash_limit l) {
        static const char *const names[_LEASH_LIMIT_MAX] = {
                [LEASH_LIMIT_MEMORY] = "memory",       [LEASH_LIMIT_MEMORY_HIGH] = "memory_high",
                [LEASH_LIMIT_SWAP] = "swap",           [LEASH_LIMIT_PIDS] = "pids",
                [LEASH_LIMIT_CPUS] = "cpus",           [LEASH_LIMIT_CPU_TIME] = "cpu_time",
                [LEASH_LIMIT_WALL_TIME] = "wall_time", [LEASH_LIMIT_NOFILE] = "nofile",
                [LEASH_LIMIT_FSIZE] = "fsize",         [LEASH_LIMIT_CORE] = "core",
        };
        return l < _LEASH_LIMIT_MAX ? names[l] : "unknown";
}

const char *leash_enforcer_to_string(enum leash_enforcer e) {
        switch (e) {
        case LEASH_BY_CGROUP:
                return "cgroup";
        case LEASH_BY_RLIMIT:
                return "rlimit";
        case LEASH_BY_LEASH:
                return "leash";
        case LEASH_BY_NONE:
                break;
        }
        return "none";
}

const char *leash_version(void) {
        return PACKAGE_VERSION;
}
