/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A job's events: no sleeping and no periodic polling.
 *   pidfd          readable when the main process exits;
 *   cgroup.events  POLLPRI when an adopted cgroup without a main process
 *                  empties;
 *   timerfd        one absolute CLOCK_MONOTONIC timer armed for the earliest
 *                  of the deadlines of enum job_deadline: the wall deadline,
 *                  the next CPU-time check, the end of the grace.
 * leash_job_wait() ppolls those fds; leash_job_fd() gathers them in one epoll
 * fd for the caller's own loop, and leash_job_dispatch() handles what is due.
 *
 * The CPU-time limit is checked at the earliest moment it could be reached:
 * after (limit - used) / cores, where cores is what the job can really run on
 * at once (the job cgroup's effective cpuset, else the online CPUs, capped by
 * cpu.max): never the supervisor's own affinity, which the job can widen. The
 * checks converge geometrically on the limit and stop 250 us apart at the
 * closest, so an overrun is at most that times the cores used.
 *
 * Deadlines saturate: a limit of 2^64 - 2 ns is "never", not a wrap-around.
 *
 * Signals to the main process go through its pidfd, so they reach it
 * wherever it moved; the soft signal to the rest of the tree is sent with the
 * cgroup frozen, so a pid read from cgroup.procs cannot be recycled before
 * it is signalled. Processes of the job that left its cgroup get every signal
 * through pidfds (escape.c), and leash makes sure it is not inside the job
 * cgroup itself before it freezes or kills it.
 */
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../basic/macro.h"
#include "../../basic/time-util.h"
#include "../cgroup/account.h"
#include "../cgroup/cgroupfs.h"
#include "escape.h"
#include "../heldfd.h"
#include "../sample/sample.h"
#include "../process/tree.h"

#define CPU_CHECK_MIN_NS (250 * NSEC_PER_USEC)

/* "RLIMIT_NOFILE = 5000000 (--nofile)": which rlimit the child could not set */
static void rlimit_detail(const struct spawn_failure *sf, char *buf, size_t size) {
        static const struct {
                int resource;
                const char *name, *option;
        } names[] = {
                {RLIMIT_AS, "RLIMIT_AS", "--memory, without a memory controller"},
                {RLIMIT_NOFILE, "RLIMIT_NOFILE", "--nofile"},
                {RLIMIT_FSIZE, "RLIMIT_FSIZE", "--fsize"},
                {RLIMIT_CORE, "RLIMIT_CORE", "--core"},
        };
        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (names[i].resource == sf->rlimit) {
                        snprintf(buf, size, "%s = %llu (%s)", names[i].name, (unsigned long long) sf->rlimit_to,
                                 names[i].option);
                        return;
                }
        snprintf(buf, size, "resource %d = %llu", sf->rlimit, (unsigned long long) sf->rlimit_to);
}

/* The child failed before it ran anything of the job's: the job has ended. */
int supervise_start_failed(struct leash_job *j, const struct spawn_failure *sf, struct leash_error *err) {
        j->r.exec_errno = sf->error;
        j->r.exec_step = spawn_step_to_string(sf->step);
        j->r.usage.wall_ns = now_ns(CLOCK_MONOTONIC) - j->start_ns;
        if (sf->step == SPAWN_STEP_EXEC) {
                j->r.reason = LEASH_REASON_EXEC_ERROR;
                j->r.exit_code = (sf->error == ENOENT || sf->error == ENOTDIR) ? 127 : 126;
        } else {
                j->r.reason = LEASH_REASON_SETUP_ERROR;
                j->r.exit_code = 125;
        }
        j->state = JOB_ENDED;
        if (sf->step == SPAWN_STEP_RLIMIT) {
                char d[128];
                rlimit_detail(sf, d, sizeof d);
                leash_error_set(&j->start_error, spawn_step_to_string(sf->step), d, -sf->error);
        } else
                leash_error_set(&j->start_error, spawn_step_to_string(sf->step),
                                sf->step == SPAWN_STEP_CHDIR ? j->spec.sandbox.chdir
                                : j->argv                    ? j->argv[0]
                                                             : "",
                                -sf->error);
        if (err)
                *err = j->start_error;
        return -sf->error;
}

/* A forked main process has ended: did its setup complete? (The parent did
 * not wait for it: spawn_fork's setup fd.) A failed setup ends the job as a
 * failed leash_job_start does. */
static void setup_collect(struct leash_job *j) {
        struct spawn_failure sf;
        int fd = j->setup_fd;

        if (fd < 0)
                return;
        j->setup_fd = -1;
        /* killed before it was set up: ended as the kill says, sandbox not applied */
        j->r.sandbox.applied = spawn_setup_result(fd, &sf) > 0;
        if (sf.step != SPAWN_STEP_NONE)
                (void) supervise_start_failed(j, &sf, NULL);
}

static uint64_t sat_add(uint64_t a, uint64_t b) {
        return a >= DEADLINE_NEVER - b ? DEADLINE_NEVER : a + b;
}

void supervise_log_signal(struct leash_job *j, int sig, const char *why) {
        struct leash_result *r = &j->r;
        if (r->n_signals < LEASH_SIGNALS_MAX) {
                r->signals[r->n_signals].signal = sig;
                r->signals[r->n_signals].at_ns = now_ns(CLOCK_MONOTONIC) - j->start_ns;
                r->signals[r->n_signals].why = why;
                r->n_signals++;
        }
}

static void signal_main(struct leash_job *j, int sig) {
        if (j->pidfd >= 0)
                (void) syscall(SYS_pidfd_send_signal, j->pidfd, sig, NULL, 0);
}

/* sig to every process in the job cgroup but the main one (signalled through
 * its pidfd): frozen meanwhile, unless leash itself is stuck in there. */
static int signal_cgroup(struct leash_job *j, int sig) {
        pid_t main_pid = j->pidfd >= 0 ? j->r.pid : 0;

        if (j->no_cgroup)
                return tree_signal(j, sig); /* the main process among them */
        if (j->signal_fn)                   /* an owned job: its owner knows which processes are the job's */
                return j->signal_fn(j->signal_userdata, sig);

        if (escape_guard(j) == 0)
                return cgroupfs_signal_all(j->job_fd, sig, main_pid);
        {
                /* leash is in there: itself and its watchdog spared (getpid asked only here) */
                pid_t skip[3] = {main_pid, getpid(), watchdog_pid(&j->wd)};
                return cgroupfs_signal_each(j->job_fd, sig, skip, ELEMENTSOF(skip));
        }
}

/* Whether anything of the job runs: > 0 yes, 0 no, < 0 cannot tell. */
static int job_runs(struct leash_job *j) {
        return j->signal_fn ? j->signal_fn(j->signal_userdata, 0) : cgroupfs_populated(j->job_fd);
}

void supervise_kill_tree(struct leash_job *j) {
        if (j->no_cgroup) {
                (void) tree_signal(j, SIGKILL);
                return;
        }
        if (j->signal_fn) {
                (void) j->signal_fn(j->signal_userdata, SIGKILL);
                return;
        }
        if (escape_guard(j) == 0)
                (void) cgroupfs_kill(j->job_fd);
        else { /* never cgroup.kill with leash inside: each process, a few rounds */
                pid_t skip[2] = {getpid(), watchdog_pid(&j->wd)};
                for (int round = 0; round < 100; round++)
                        if (cgroupfs_signal_each(j->job_fd, SIGKILL, skip, ELEMENTSOF(skip)) <= 0)
                                break;
        }
}

void supervise_kill_now(struct leash_job *j, const char *why) {
        if (j->killed)
                return;
        supervise_kill_tree(j);
        signal_main(j, SIGKILL); /* wherever it went */
        if (!j->iso.on && !j->no_cgroup)
                (void) escape_scan(j, SIGKILL); /* and whatever of it left the cgroup */
        j->killed = true;
        j->deadline[DEADLINE_GRACE] = DEADLINE_NEVER;
        supervise_log_signal(j, SIGKILL, why);
}

static const char *cause_name(enum leash_reason cause) {
        switch (cause) {
        case LEASH_REASON_WALL_TIME:
                return "wall_time";
        case LEASH_REASON_CPU_TIME:
                return "cpu_time";
        case LEASH_REASON_KILLED:
                return "killed";
        case LEASH_REASON_MEASURED:
                return "measured_limit";
        default:
                return "interrupt";
        }
}

/* The grace ladder: sig (the soft signal, or the interrupt passed on) to
 * every process of the job, SIGKILL later. */
static void escalate_with(struct leash_job *j, enum leash_reason cause, int sig, uint64_t now) {
        if (j->soft_sent || j->killed)
                return;
        j->soft_sent = true;
        j->cause = cause;
        j->deadline[DEADLINE_WALL] = j->deadline[DEADLINE_CPU] = DEADLINE_NEVER;
        if (j->no_cgroup) /* the tree, the main process in it */
                (void) tree_signal(j, sig);
        else {
                /* The main process first, at once: the sweeps below spare it, and
                 * a child it forks once signalled is in the cgroup when it is frozen. */
                signal_main(j, sig);
                if (!j->iso.on) { /* isolated: the init forwards to its whole namespace */
                        (void) signal_cgroup(j, sig);
                        (void) escape_scan(j, sig);
                }
        }
        supervise_log_signal(j, sig,
                             cause == LEASH_REASON_MEASURED && j->r.sampling.limit_reached >= 0
                                     ? leash_fig_name((enum leash_fig) j->r.sampling.limit_reached)
                                     : cause_name(cause));
        if (j->spec.grace_ns == 0)
                supervise_kill_now(j, "grace");
        else
                j->deadline[DEADLINE_GRACE] = sat_add(now, j->spec.grace_ns);
}

static void escalate(struct leash_job *j, enum leash_reason cause, uint64_t now) {
        escalate_with(j, cause, j->spec.soft_signal, now);
}

static void check_cpu(struct leash_job *j, uint64_t now) {
        uint64_t used_us, limit = j->spec.limit[LEASH_LIMIT_CPU_TIME], used, step;
        double d;

        if (j->no_cgroup) {
                uint64_t user, system;
                tree_cpu_us(j, &user, &system);
                used_us = user + system;
                if (used_us > j->tree_seen_user_us + j->tree_seen_system_us) { /* the report's floor */
                        j->tree_seen_user_us = user;
                        j->tree_seen_system_us = system;
                }
        } else if (account_cpu_usage_us(j->job_fd, &used_us) < 0) {
                j->deadline[DEADLINE_CPU] = DEADLINE_NEVER; /* no cpu.stat: reported as not enforced */
                return;
        }
        used = used_us > UINT64_MAX / NSEC_PER_USEC ? UINT64_MAX : used_us * NSEC_PER_USEC;
        if (used >= limit) {
                escalate(j, LEASH_REASON_CPU_TIME, now);
                return;
        }
        d = (double) (limit - used) / j->cores;
        step = d >= 9.0e18 ? DEADLINE_NEVER : (uint64_t) d;
        j->deadline[DEADLINE_CPU] = sat_add(now, step < CPU_CHECK_MIN_NS ? CPU_CHECK_MIN_NS : step);
}

/* What is due at now, in order: the end of the grace, the limits. */
static void supervise_due(struct leash_job *j, uint64_t now) {
        if (now >= j->deadline[DEADLINE_GRACE]) {
                /* an adopted cgroup the soft signal emptied: no kill to report */
                if (!j->has_main && !j->no_cgroup && job_runs(j) == 0)
                        j->deadline[DEADLINE_GRACE] = DEADLINE_NEVER;
                else
                        supervise_kill_now(j, "grace");
        }
        if (now >= j->deadline[DEADLINE_WALL])
                escalate(j, LEASH_REASON_WALL_TIME, now);
        if (now >= j->deadline[DEADLINE_SAMPLE]) {
                int passed = sampler_step(j->sampler, now, false, j);
                j->deadline[DEADLINE_SAMPLE] = sampler_next(j->sampler);
                /* the result so far, for a caller that reads it before the
                 * finish (the Slurm supervisor's verdict of an owned job) */
                sampler_result(j->sampler, &j->r.sampling);
                if (passed >= 0) {
                        /* the grace runs from now, not from before a slow read */
                        escalate(j, LEASH_REASON_MEASURED, now_ns(CLOCK_MONOTONIC));
                }
        }
        if (now >= j->deadline[DEADLINE_CPU])
                check_cpu(j, now);
}

static int arm_timer(struct leash_job *j) {
        uint64_t next = DEADLINE_NEVER;
        struct itimerspec its = {0};

        for (int d = 0; d < _DEADLINE_MAX; d++)
                if (j->deadline[d] < next)
                        next = j->deadline[d];
        if (next != DEADLINE_NEVER)
                its.it_value = ns_to_timespec(next ? next : 1);
        else if (!j->timer_set) /* made disarmed, never armed: nothing to disarm (a run without limits) */
                return 0;
        j->timer_set = true;
        if (timerfd_settime(j->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
                return negative_errno();
        return 0;
}

static int epoll_add(int epfd, int fd, uint32_t events) {
        struct epoll_event ev = {.events = events, .data.fd = fd};
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

int supervise_begin(struct leash_job *j) {
        const struct leash_spec *c = &j->spec;

        for (int d = 0; d < _DEADLINE_MAX; d++)
                j->deadline[d] = DEADLINE_NEVER;
        if (leash_spec_has(c, LEASH_LIMIT_WALL_TIME))
                j->deadline[DEADLINE_WALL] = sat_add(j->start_ns, c->limit[LEASH_LIMIT_WALL_TIME]);
        if (leash_spec_has(c, LEASH_LIMIT_CPU_TIME) && j->r.enforced[LEASH_LIMIT_CPU_TIME] == LEASH_BY_LEASH) {
                /* the pace of the CPU-time checks, read only for them */
                j->cores = cgroupfs_job_cores(j->job_fd);
                check_cpu(j, j->start_ns);
        }
        if (j->sampler) {
                sampler_start(j->sampler, j->job_fd, j->start_ns);
                j->deadline[DEADLINE_SAMPLE] = sampler_next(j->sampler);
        }
        if (j->epoll_fd >= 0 && j->pidfd >= 0) {
                int r = epoll_add(j->epoll_fd, j->pidfd, EPOLLIN);
                if (r < 0)
                        return r;
        }
        return arm_timer(j);
}

/* A main process below a holder (holder.c): the holder reaped it and sends
 * its status. 1 ended, 0 not yet. */
static int reap_held(struct leash_job *j) {
        struct pollfd pfd = {.fd = j->pidfd, .events = POLLIN};
        struct leash_result *r = &j->r;
        int status, got;

        if (poll(&pfd, 1, 0) != 1)
                return 0;
        got = holder_main_status(&j->holder, 2000, &status, &j->ru);
        r->usage.wall_ns = now_ns(CLOCK_MONOTONIC) - j->start_ns;
        r->status_code = got > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r->term_signal = got > 0 && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        setup_collect(j);
        return 1;
}

/* The main process: reaped when it has exited. 1 reaped, 0 not yet. */
static int reap(struct leash_job *j) {
        siginfo_t si;
        struct leash_result *r = &j->r;

        if (j->holder.sock >= 0)
                return reap_held(j);
        memset(&si, 0, sizeof si);
        /* first without reaping: where did it end? */
        if (syscall(SYS_waitid, P_PIDFD, j->pidfd, &si, WEXITED | WNOHANG | WNOWAIT | __WALL, NULL) == 0) {
                /* not exited yet: do not reap now, or one that exits between the two
                 * calls is reaped unlooked-at (its pidfd wakes the loop again) */
                if (si.si_pid == 0)
                        return 0;
                escape_check_main(j, si.si_code, si.si_status); /* its zombie still names its cgroup */
        }
        memset(&si, 0, sizeof si);
        /* raw waitid: the one wait that takes a pidfd and returns rusage; __WALL
         * because the job's exit signal is 0 */
        while (syscall(SYS_waitid, P_PIDFD, j->pidfd, &si, WEXITED | WNOHANG | __WALL, &j->ru) < 0) {
                struct pollfd pfd = {.fd = j->pidfd, .events = POLLIN};
                if (errno == EINTR)
                        continue;
                /* An exec'd main process gets exit signal SIGCHLD back at exec (the
                 * kernel's rule): a host that ignores SIGCHLD, or reaps every child
                 * with waitpid(-1), takes its status. Then it has exited, status unknown. */
                if (errno == ECHILD && poll(&pfd, 1, 0) == 1) {
                        r->usage.wall_ns = now_ns(CLOCK_MONOTONIC) - j->start_ns;
                        r->status_code = -1;
                        r->term_signal = 0;
                        setup_collect(j);
                        return 1;
                }
                return negative_errno();
        }
        if (si.si_pid == 0)
                return 0;
        r->usage.wall_ns = now_ns(CLOCK_MONOTONIC) - j->start_ns;
        if (si.si_code == CLD_EXITED) {
                r->status_code = si.si_status;
                r->term_signal = 0;
        } else {
                r->status_code = -1;
                r->term_signal = si.si_status;
        }
        isolate_collect(&j->iso, r); /* the job's status, not its init's */
        setup_collect(j);            /* a forked main process: did its setup fail? */
        return 1;
}

void supervise_end(struct leash_job *j) {
        j->state = JOB_ENDED;
        for (int d = 0; d < _DEADLINE_MAX; d++)
                j->deadline[d] = DEADLINE_NEVER;
        (void) arm_timer(j);
}

/* The main process ended in the grace, the rest of the job still runs: they
 * got the soft signal with it and the same grace to act on it (an inner
 * leash ends its own job and writes its report; a shell's children save
 * their work), not a leftover's SIGKILL the moment the main process is gone.
 * The job then ends when its cgroup empties or at the grace's SIGKILL.
 * true: draining. Not without a cgroup, in an owned or isolated job, or with
 * leash stuck in the cgroup (it would never empty). */
/* No cgroup: the tree below leash (a subreaper, or the holder) is the job,
 * and nothing tells when it has emptied; it is looked at (tree_empty: the
 * subreaper's own children, or the holder's exit) every TREE_DRAIN_NS until
 * then or until the grace's SIGKILL, the only wake-ups without an event,
 * bounded by the grace. */
#define TREE_DRAIN_NS (20 * NSEC_PER_MSEC)

static bool drain_tree(struct leash_job *j) {
        if ((!j->spec.reaper && j->holder.pid <= 0) || tree_empty(j))
                return false;
        if (j->epoll_fd >= 0) /* a reaped process's pidfd stays readable: it would spin the loop */
                (void) epoll_ctl(j->epoll_fd, EPOLL_CTL_DEL, j->pidfd, NULL);
        j->main_ended = true;
        j->deadline[DEADLINE_DRAIN] = sat_add(now_ns(CLOCK_MONOTONIC), TREE_DRAIN_NS);
        return true;
}

static bool drain_grace(struct leash_job *j) {
        int fd;

        if (!j->soft_sent || j->killed || j->deadline[DEADLINE_GRACE] == DEADLINE_NEVER || j->signal_fn || j->iso.on ||
            j->stuck || j->events_fd >= 0)
                return false;
        if (j->no_cgroup)
                return drain_tree(j);
        if (cgroupfs_populated(j->job_fd) <= 0)
                return false;
        fd = HELD_FD(openat(j->job_fd, "cgroup.events", O_RDONLY | O_CLOEXEC));
        if (fd < 0)
                return false;
        if (j->epoll_fd >= 0) {
                /* a reaped process's pidfd stays readable: it would spin the loop */
                (void) epoll_ctl(j->epoll_fd, EPOLL_CTL_DEL, j->pidfd, NULL);
                if (epoll_add(j->epoll_fd, fd, EPOLLPRI) < 0) {
                        heldfd_close(fd);
                        (void) epoll_add(j->epoll_fd, j->pidfd, EPOLLIN);
                        return false;
                }
        }
        j->events_fd = fd;
        j->main_ended = true;
        /* emptied meanwhile: its POLLPRI may have come before the fd was watched */
        return cgroupfs_events_populated(fd) != 0;
}

int leash_job_dispatch(struct leash_job *j) {
        uint64_t expirations;
        ssize_t n _unused_;
        int r;

        if (!j)
                return -EINVAL;
        if (j->state >= JOB_ENDED)
                return 1;
        if (j->state != JOB_RUNNING)
                return 0;
        if (j->timer_set) /* a timer never armed has nothing to read */
                n = read(j->timer_fd, &expirations, sizeof expirations);
        supervise_due(j, now_ns(CLOCK_MONOTONIC));
        if (j->main_ended && j->no_cgroup) {
                r = tree_empty(j);
                if (!r)
                        j->deadline[DEADLINE_DRAIN] = sat_add(now_ns(CLOCK_MONOTONIC), TREE_DRAIN_NS);
        } else if (j->main_ended) {
                r = cgroupfs_events_populated(j->events_fd);
                if (r < 0)
                        return r;
                r = !r;
        } else if (j->has_main) {
                r = reap(j);
                if (r < 0)
                        return r;
                if (r > 0 && drain_grace(j))
                        r = 0;
        } else {
                /* read each time: it also clears the fd's POLLPRI */
                r = cgroupfs_events_populated(j->events_fd);
                if (r < 0)
                        return r;
                r = !r && !j->owned; /* an owned cgroup empty between its tasks goes on */
                if (r)
                        j->r.usage.wall_ns = now_ns(CLOCK_MONOTONIC) - j->start_ns;
        }
        if (r > 0) {
                /* the last sample: the main process has ended, what it left still runs */
                if (j->sampler && sampler_next(j->sampler) != DEADLINE_NEVER)
                        (void) sampler_step(j->sampler, now_ns(CLOCK_MONOTONIC), true, j);
                supervise_end(j);
                return 1;
        }
        r = arm_timer(j);
        return r < 0 ? r : 0;
}

int leash_job_wait(struct leash_job *j) {
        if (!j)
                return -EINVAL;
        if (j->state == JOB_CREATED || (j->owned && j->state == JOB_RUNNING))
                return -EINVAL; /* nothing runs, or its owner ends it: it would never end */
        for (;;) {
                struct pollfd pfd[2] = {
                        {.fd = j->has_main && !j->main_ended ? j->pidfd : j->events_fd,
                         .events = j->has_main && !j->main_ended ? POLLIN : POLLPRI},
                        {.fd = j->timer_fd, .events = POLLIN},
                };
                int r = leash_job_dispatch(j);
                if (r != 0)
                        return r < 0 ? r : 0;
                if (ppoll(pfd, 2, NULL, NULL) < 0 && errno != EINTR)
                        return negative_errno();
        }
}

int leash_job_fd(struct leash_job *j) {
        int r;

        if (!j)
                return -EINVAL;
        if (j->state == JOB_FINISHED)
                return -EBADF; /* its descriptors are closed */
        if (j->epoll_fd >= 0)
                return j->epoll_fd;
        j->epoll_fd = HELD_FD(epoll_create1(EPOLL_CLOEXEC));
        if (j->epoll_fd < 0)
                return negative_errno();
        r = epoll_add(j->epoll_fd, j->timer_fd, EPOLLIN);
        if (r >= 0 && j->pidfd >= 0 && !j->main_ended)
                r = epoll_add(j->epoll_fd, j->pidfd, EPOLLIN);
        if (r >= 0 && j->events_fd >= 0)
                r = epoll_add(j->epoll_fd, j->events_fd, EPOLLPRI);
        if (r < 0) {
                heldfd_close(j->epoll_fd);
                j->epoll_fd = -1;
                return r;
        }
        return j->epoll_fd;
}

int leash_job_kill(struct leash_job *j, enum leash_kill how) {
        if (!j || (how != LEASH_KILL_LADDER && how != LEASH_KILL_NOW))
                return -EINVAL;
        if (j->state != JOB_RUNNING)
                return 0;
        if (j->cause == LEASH_REASON_OK)
                j->cause = LEASH_REASON_KILLED;
        if (how == LEASH_KILL_LADDER && !j->soft_sent)
                escalate(j, j->cause, now_ns(CLOCK_MONOTONIC));
        else
                supervise_kill_now(j, "killed");
        return arm_timer(j);
}

int leash_job_signal(struct leash_job *j, int sig) {
        int n;
        if (!j || sig < 0 || sig >= _NSIG)
                return -EINVAL;
        if (j->state != JOB_RUNNING)
                return 0;
        if (j->no_cgroup)
                return tree_signal(j, sig); /* the main process among them */
        n = j->iso.on ? 0 : signal_cgroup(j, sig);
        if (!j->iso.on)
                n = n < 0 ? escape_scan(j, sig) : n + escape_scan(j, sig);
        if (j->pidfd >= 0 && syscall(SYS_pidfd_send_signal, j->pidfd, sig, NULL, 0) == 0)
                n = n < 0 ? 1 : n + 1;
        return n;
}

int leash_job_interrupt(struct leash_job *j, int sig) {
        if (!j || sig <= 0 || sig >= _NSIG)
                return -EINVAL;
        if (j->state == JOB_ENDED && !j->r.interrupt_signal && j->cause == LEASH_REASON_OK) {
                /* ended, not yet accounted: the same stop reached the job first
                 * (systemctl stop signals every process of a scope at once) */
                j->r.interrupt_signal = sig;
                j->cause = LEASH_REASON_INTERRUPTED;
                return 0;
        }
        if (j->state != JOB_RUNNING)
                return 0;
        if (!j->r.interrupt_signal) {
                j->r.interrupt_signal = sig;
                /* the job gets what leash got (Ctrl-C: SIGINT, so Python's
                 * KeyboardInterrupt and a checkpoint on it), and the grace to
                 * act on it before SIGKILL; not the soft signal at once */
                if (!j->soft_sent)
                        escalate_with(j, LEASH_REASON_INTERRUPTED, sig, now_ns(CLOCK_MONOTONIC));
                else /* a ladder runs (a time limit): asked to stop, no more grace */
                        supervise_kill_now(j, "interrupt");
        } else
                supervise_kill_now(j, "interrupt"); /* asked twice: no more grace */
        return arm_timer(j);
}
