/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The event loop: one ppoll over at most three fds, no sleeping and no
 * periodic polling.
 *   pidfd     readable when the main process exits;
 *   signalfd  SIGINT/SIGTERM/SIGHUP sent to leash: the job gets the soft
 *             signal, then SIGKILL after the grace (a second one kills at once);
 *   timerfd   one absolute CLOCK_MONOTONIC timer armed for the earliest of:
 *             the wall deadline, the next CPU-time check, the end of the grace.
 * The CPU-time limit is checked at the earliest moment it could be reached:
 * after (limit - used) / cores, where cores is what the job can run on at
 * once. The checks converge geometrically on the limit and stop 250 us apart
 * at the closest, so an overrun is at most that times the cores used.
 */
#include "supervise.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../basic/macro.h"
#include "../basic/time-util.h"
#include "account.h"
#include "cgroupfs.h"

#define NEVER UINT64_MAX
#define CPU_CHECK_MIN_NS (250 * NSEC_PER_USEC)

struct sv {
        const struct supervise_params *p;
        struct leash_result *r;
        enum leash_reason cause;
        uint64_t wall_deadline, cpu_next, grace_deadline;
        bool soft_sent, killed;
        int timer_fd;
};

static void log_signal(struct sv *s, int sig, uint64_t now, const char *why) {
        struct leash_result *r = s->r;
        if (r->n_signals < LEASH_SIGNALS_MAX) {
                r->signals[r->n_signals].signal = sig;
                r->signals[r->n_signals].at_ns = now - s->p->start_ns;
                r->signals[r->n_signals].why = why;
                r->n_signals++;
        }
}

static void kill_now(struct sv *s, uint64_t now, const char *why) {
        if (s->killed)
                return;
        (void) cgroupfs_kill(s->p->job_fd);
        s->killed = true;
        s->grace_deadline = NEVER;
        log_signal(s, SIGKILL, now, why);
}

/* The grace ladder: soft signal to every process of the job, SIGKILL later. */
static void escalate(struct sv *s, enum leash_reason cause, uint64_t now) {
        if (s->soft_sent)
                return;
        s->soft_sent = true;
        s->cause = cause;
        s->wall_deadline = s->cpu_next = NEVER;
        (void) cgroupfs_signal_all(s->p->job_fd, s->p->config->soft_signal);
        log_signal(s, s->p->config->soft_signal, now,
                   cause == LEASH_REASON_WALL_TIME  ? "wall_time"
                   : cause == LEASH_REASON_CPU_TIME ? "cpu_time"
                                                    : "interrupt");
        if (s->p->config->grace_ns == 0)
                kill_now(s, now, "grace");
        else
                s->grace_deadline = now + s->p->config->grace_ns;
}

static void check_cpu(struct sv *s, uint64_t now) {
        uint64_t used_us, limit = s->p->config->limit[LEASH_LIMIT_CPU_TIME], used, step;

        if (account_cpu_usage_us(s->p->job_fd, &used_us) < 0) {
                s->cpu_next = NEVER; /* no cpu.stat: reported as not enforced */
                return;
        }
        used = used_us * NSEC_PER_USEC;
        if (used >= limit) {
                escalate(s, LEASH_REASON_CPU_TIME, now);
                return;
        }
        step = (uint64_t) ((double) (limit - used) / s->p->cores);
        s->cpu_next = now + (step < CPU_CHECK_MIN_NS ? CPU_CHECK_MIN_NS : step);
}

static int arm_timer(struct sv *s) {
        uint64_t next = s->wall_deadline;
        struct itimerspec its = {0};

        if (s->cpu_next < next)
                next = s->cpu_next;
        if (s->grace_deadline < next)
                next = s->grace_deadline;
        if (next == NEVER && s->timer_fd < 0)
                return 0;
        if (s->timer_fd < 0) {
                s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
                if (s->timer_fd < 0)
                        return negative_errno();
        }
        if (next != NEVER)
                its.it_value = ns_to_timespec(next ? next : 1);
        if (timerfd_settime(s->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
                return negative_errno();
        return 0;
}

static void on_timer(struct sv *s) {
        uint64_t expirations, now = now_ns(CLOCK_MONOTONIC);
        ssize_t n _unused_ = read(s->timer_fd, &expirations, sizeof expirations);

        if (now >= s->grace_deadline)
                kill_now(s, now, "grace");
        if (now >= s->wall_deadline)
                escalate(s, LEASH_REASON_WALL_TIME, now);
        if (now >= s->cpu_next)
                check_cpu(s, now);
}

static void on_signal(struct sv *s) {
        struct signalfd_siginfo si;
        uint64_t now = now_ns(CLOCK_MONOTONIC);

        while (read(s->p->signal_fd, &si, sizeof si) == (ssize_t) sizeof si) {
                if (!s->r->interrupt_signal) {
                        s->r->interrupt_signal = (int) si.ssi_signo;
                        if (!s->soft_sent)
                                escalate(s, LEASH_REASON_INTERRUPTED, now);
                } else
                        kill_now(s, now, "interrupt"); /* asked twice: no more grace */
        }
}

int supervise_job(const struct supervise_params *p, struct leash_result *r, enum leash_reason *ret_cause,
                  struct rusage *ret_rusage) {
        struct sv s = {
                .p = p,
                .r = r,
                .cause = LEASH_REASON_OK,
                .wall_deadline = NEVER,
                .cpu_next = NEVER,
                .grace_deadline = NEVER,
                .timer_fd = -1,
        };
        const struct leash_config *c = p->config;
        siginfo_t si;
        int rc = 0;

        if (c->limit[LEASH_LIMIT_WALL_TIME] != LEASH_UNSET)
                s.wall_deadline = p->start_ns + c->limit[LEASH_LIMIT_WALL_TIME];
        if (c->limit[LEASH_LIMIT_CPU_TIME] != LEASH_UNSET && p->cpu_time_by == LEASH_BY_LEASH)
                check_cpu(&s, p->start_ns);

        for (;;) {
                struct pollfd pfd[3] = {
                        {.fd = p->pidfd, .events = POLLIN},
                        {.fd = p->signal_fd, .events = POLLIN},
                        {.fd = -1, .events = POLLIN},
                };
                rc = arm_timer(&s);
                if (rc < 0)
                        break;
                pfd[2].fd = s.timer_fd;
                if (ppoll(pfd, 3, NULL, NULL) < 0) {
                        if (errno == EINTR)
                                continue;
                        rc = negative_errno();
                        break;
                }
                if (pfd[1].revents & POLLIN)
                        on_signal(&s);
                if (pfd[2].revents & POLLIN)
                        on_timer(&s);
                if (pfd[0].revents & (POLLIN | POLLHUP))
                        break;
        }
        if (rc < 0) /* the loop itself failed: do not leave the job running */
                kill_now(&s, now_ns(CLOCK_MONOTONIC), "leash_error");

        memset(&si, 0, sizeof si);
        memset(ret_rusage, 0, sizeof *ret_rusage);
        /* raw waitid: it is the one wait that takes a pidfd and returns rusage */
        while (syscall(SYS_waitid, P_PIDFD, p->pidfd, &si, WEXITED, ret_rusage) < 0) {
                if (errno != EINTR) {
                        if (s.timer_fd >= 0)
                                close(s.timer_fd);
                        return negative_errno();
                }
        }
        r->usage.wall_ns = now_ns(CLOCK_MONOTONIC) - p->start_ns;
        if (si.si_code == CLD_EXITED) {
                r->status_code = si.si_status;
                r->term_signal = 0;
        } else {
                r->status_code = -1;
                r->term_signal = si.si_status;
        }
        if (s.timer_fd >= 0)
                close(s.timer_fd);
        *ret_cause = s.cause;
        return rc;
}
