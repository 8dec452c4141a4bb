/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The per-job supervisor, forked by `leash slurm prolog`.
 *
 * slurmd kills the Prolog's process group when the Prolog exits, so the
 * supervisor is started in a new session (setsid) with its stdio on
 * /dev/null. It holds the job cgroup's fd and applies the time limits to the
 * whole job, the way `leash run` does to one command: one ppoll over a
 * timerfd (armed for the earliest of the wall deadline, the next CPU-time
 * check and the end of the grace), a signalfd, the listening socket and one
 * pidfd per placed task. No polling loop, no sleeps.
 *
 * The socket (<state-dir>/job_<ID>/sock, SOCK_SEQPACKET) takes one request
 * per connection:
 *   adopt STEP PID   place a task in step_STEP (from the SPANK plugin, as
 *                    root, or from `leash slurm task-prolog`, as the user);
 *                    the task's stderr may come along (SCM_RIGHTS) so that
 *                    a verdict can be printed into it
 *   step-end STEP    (root) kill what the step left behind
 *   stop             (root) the Epilog: write the verdict and exit
 *   status           the verdict so far
 * The socket file is the job user's, mode 0600 (root connects anyway), and
 * a peer that is neither root nor the job's user (SO_PEERCRED) is dropped
 * unheard. Connections wait for their request in the event loop, never in
 * a blocking read: at most PENDING_MAX at a time, each for at most
 * REQUEST_TIMEOUT_MS, so a client that connects and says nothing holds up
 * neither the limits nor the other clients.
 * A request from a non-root peer is judged by SO_PEERCRED: it must be the
 * job's user, and the pid must be that peer or its parent (the TaskProlog
 * runs as a child of the task), belong to the job's user, be a child of the
 * job's slurmstepd (root, titled "slurmstepd: [JOBID.STEP]") of the step it
 * names, and not sit in another job's cgroup: a user can only put
 * their own task of this job into this job. The pid is opened (pidfd) before
 * its /proc files are read and checked alive after, so what was judged is the
 * process that is moved. Step cgroups are made for valid step names only, at
 * most STEPS_MAX of them.
 *
 * Everything the supervisor learns goes to <state-dir>/job_<ID>/verdict,
 * replaced atomically after each event, so the Epilog finds it even if the
 * supervisor is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/kvfile.h"
#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../basic/seqpacket.h"
#include "../basic/time-util.h"
#include "../lib/account.h"
#include "../lib/cgroupfs.h"
#include "../lib/slurm-nest.h"
#include "slurm.h"

#define TASKS_MAX 256
#define STEPS_MAX 64
#define EVENTS_MAX 16
#define ERRORS_MAX 8
#define PENDING_MAX 16
#define REQUEST_TIMEOUT_MS 500

struct task {
        int pidfd;
        int err_fd; /* the task's stderr, or -1 */
};

struct step_count {
        char name[40];
        unsigned leftovers;
        bool ended;               /* nest: its figures below were read at its end */
        struct leash_usage usage; /* nest: Slurm's step cgroup at the step's end */
};

struct pending {
        int fd;
        uint64_t deadline_ns;
};

struct sv {
        const struct slurm_supervisor *p;
        struct pending pending[PENDING_MAX];
        unsigned n_pending;
        unsigned peers_refused; /* connections from neither root nor the job's user */
        int timer_fd;
        struct task tasks[TASKS_MAX];
        unsigned n_tasks;
        unsigned placed;
        unsigned refused; /* adopt requests refused or failed: those tasks never ran in the job */
        struct step_count steps[STEPS_MAX];
        unsigned n_steps;
        enum leash_reason cause; /* LEASH_REASON_OK until a limit is reached */
        uint64_t grace_end_ns;   /* 0 when no grace runs */
        bool killed;
        struct leash_signal_event events[EVENTS_MAX];
        unsigned n_events;
        char errors[ERRORS_MAX][200];
        unsigned n_errors;
        bool stop;
        int nest_fd;                 /* nest: Slurm's job_<ID>, -1 until the first task */
        char nest_path[1024];        /* nest: its path */
        struct leash_usage nest_job; /* nest: job_<ID>'s own files at the last step end */
        double nest_cores;           /* nest: the CPUs Slurm's job cgroup may use at once */
};

static int pidfd_open_(pid_t pid) {
        return (int) syscall(SYS_pidfd_open, pid, 0);
}

static void sv_error(struct sv *s, const char *fmt, ...) _printf_(2, 3);
static void sv_error(struct sv *s, const char *fmt, ...) {
        va_list ap;
        if (s->n_errors >= ERRORS_MAX)
                return;
        va_start(ap, fmt);
        vsnprintf(s->errors[s->n_errors++], sizeof s->errors[0], fmt, ap);
        va_end(ap);
}

static struct step_count *sv_step(struct sv *s, const char *name);
static void sv_event(struct sv *s, int sig, const char *why);
static void sv_write_verdict(struct sv *s);

/* --- nest mode: Slurm's cgroups, adopted read-only (src/lib/slurm-nest.h) --- */

/* The cgroup the limits watch: leash's job cgroup, or Slurm's once adopted. */
static int sv_job_fd(const struct sv *s) {
        return s->p->nest ? s->nest_fd : s->p->job_fd;
}

static double sv_cores(const struct sv *s) {
        return s->p->nest && s->nest_cores > 0 ? s->nest_cores : s->p->cores;
}

const struct slurm_nest_figure slurm_nest_figures[] = {
        {"cpu_us", offsetof(struct leash_usage, cpu_usage_us)},
        {"cpu_user_us", offsetof(struct leash_usage, cpu_user_us)},
        {"cpu_system_us", offsetof(struct leash_usage, cpu_system_us)},
        {"memory_peak", offsetof(struct leash_usage, memory_peak)},
        {"oom", offsetof(struct leash_usage, mem_ev_oom)},
        {"oom_kill", offsetof(struct leash_usage, mem_ev_oom_kill)},
};
const size_t slurm_nest_n_figures = ELEMENTSOF(slurm_nest_figures);

static void kv_usage(struct kv_buf *b, const char *prefix, const struct leash_usage *u) {
        for (size_t i = 0; i < slurm_nest_n_figures; i++) {
                char key[96];
                uint64_t v;
                snprintf(key, sizeof key, "%s.%s", prefix, slurm_nest_figures[i].key);
                memcpy(&v, (const char *) u + slurm_nest_figures[i].offset, sizeof v);
                kv_add(b, key, "%" PRIu64, v);
        }
}

/* What the Epilog cannot read any more (Slurm removes its cgroups first). */
static void sv_nest_verdict(const struct sv *s, struct kv_buf *b) {
        char list[STEPS_MAX * 41] = "", key[64];
        size_t n = 0;

        if (s->nest_path[0])
                kv_add(b, "nest_cgroup", "%s", s->nest_path);
        kv_usage(b, "job", &s->nest_job);
        for (unsigned i = 0; i < s->n_steps; i++) {
                if (!s->steps[i].ended)
                        continue;
                n += (size_t) snprintf(list + n, sizeof list - n, "%s%s", n ? "," : "", s->steps[i].name);
                snprintf(key, sizeof key, "step.%s", s->steps[i].name);
                kv_usage(b, key, &s->steps[i].usage);
        }
        kv_add(b, "steps", "%s", list);
}

/* adopt in nest mode: the task stays where Slurm put it, which must be this
 * job's step_<step>/user; the first one names Slurm's job cgroup. */
static int sv_nest_adopt(struct sv *s, pid_t pid, const char *step, char *reply, size_t size) {
        char path[sizeof s->nest_path] = "";
        int fd, r;

        r = slurm_nest_open_job(pid, s->p->job_id, step, &fd, path, sizeof path);
        if (r < 0) {
                snprintf(reply, size, "error pid %d is not in Slurm's job_%" PRIu32 "/step_%s/user (%s): %s", (int) pid,
                         s->p->job_id, step, path, strerror(-r));
                return r;
        }
        if (s->nest_fd < 0) {
                s->nest_fd = fd;
                snprintf(s->nest_path, sizeof s->nest_path, "%s", path);
                s->nest_cores = cgroupfs_job_cores(fd); /* the event loop reschedules after each request */
        } else
                close(fd);
        return 0;
}

/* step-end in nest mode (the plugin, once the step's last task exited and
 * before Slurm's proctrack kills the rest): leftovers counted and killed,
 * the step's and the job's figures kept for the Epilog. */
static int sv_nest_step_end(struct sv *s, const char *step) {
        struct slurm_nest_step st;
        struct step_count *sc;

        if (s->nest_fd < 0 || slurm_nest_step_end(s->nest_fd, step, &st) < 0 || !(sc = sv_step(s, step)))
                return 0;
        sc->leftovers += st.leftovers;
        sc->usage = st.usage;
        sc->ended = true;
        account_usage_init(&s->nest_job);
        account_read(s->nest_fd, &s->nest_job);
        if (st.leftovers)
                sv_event(s, SIGKILL, "leftover");
        sv_write_verdict(s);
        return (int) st.leftovers;
}

static void sv_write_verdict(struct sv *s) {
        char buf[16384], key[64];
        struct kv_buf b = {.buf = buf, .size = sizeof buf};

        kv_add(&b, "reason", "%s", leash_reason_to_string(s->cause));
        kv_add(&b, "tasks_placed", "%u", s->placed);
        kv_add(&b, "tasks_refused", "%u", s->refused);
        for (unsigned i = 0; i < s->n_events; i++) {
                snprintf(key, sizeof key, "signal.%u", i);
                kv_add(&b, key, "%d %" PRIu64 " %s", s->events[i].signal, s->events[i].at_ns, s->events[i].why);
        }
        for (unsigned i = 0; i < s->n_steps; i++) {
                snprintf(key, sizeof key, "step.%s.leftovers", s->steps[i].name);
                kv_add(&b, key, "%u", s->steps[i].leftovers);
        }
        if (s->p->nest)
                sv_nest_verdict(s, &b);
        for (unsigned i = 0; i < s->n_errors; i++) {
                snprintf(key, sizeof key, "error.%u", i);
                kv_add(&b, key, "%s", s->errors[i]);
        }
        if (!b.overflow)
                (void) slurm_file_replace(s->p->state_fd, "verdict", buf);
}

static void sv_event(struct sv *s, int sig, const char *why) {
        if (s->n_events >= EVENTS_MAX)
                return;
        s->events[s->n_events].signal = sig;
        s->events[s->n_events].at_ns = now_ns(CLOCK_MONOTONIC) - s->p->start_ns;
        s->events[s->n_events].why = why;
        s->n_events++;
}

/* A line into every placed task's stderr. Never blocks: a pipe is written
 * only when poll says PIPE_BUF bytes fit (the line is shorter), so a job
 * that stops reading its stderr cannot stall its own supervision. */
static void sv_tell(struct sv *s, const char *line) {
        for (unsigned i = 0; i < s->n_tasks; i++) {
                struct pollfd pfd = {.fd = s->tasks[i].err_fd, .events = POLLOUT};
                if (pfd.fd < 0 || poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLOUT))
                        continue;
                (void) !write(pfd.fd, line, strlen(line));
        }
}

static void sv_limit_text(const struct sv *s, char *buf, size_t size) {
        const struct leash_spec *c = s->p->config;
        char lim[32];
        format_duration(c->limit[s->cause == LEASH_REASON_WALL_TIME ? LEASH_LIMIT_WALL_TIME : LEASH_LIMIT_CPU_TIME],
                        lim, sizeof lim);
        snprintf(buf, size, "%s limit %s", leash_reason_to_string(s->cause), lim);
}

static void sv_reach(struct sv *s, enum leash_reason cause) {
        const struct leash_spec *c = s->p->config;
        char line[512], lim[64], grace[32];

        s->cause = cause;
        if (s->p->nest)
                (void) slurm_nest_signal(sv_job_fd(s), c->soft_signal);
        else
                (void) slurm_tree_signal(s->p->job_fd, c->soft_signal);
        sv_event(s, c->soft_signal, leash_reason_to_string(cause));
        {
                uint64_t now = now_ns(CLOCK_MONOTONIC);
                s->grace_end_ns = c->grace_ns > UINT64_MAX - now ? UINT64_MAX : now + c->grace_ns;
        }
        sv_limit_text(s, lim, sizeof lim);
        format_duration(c->grace_ns, grace, sizeof grace);
        snprintf(line, sizeof line, "leash: job %" PRIu32 ": %s reached: sent SIG%s, SIGKILL in %s\n", s->p->job_id,
                 lim, signal_name(c->soft_signal), grace);
        sv_tell(s, line);
        sv_write_verdict(s);
}

static void sv_kill(struct sv *s) {
        const struct leash_spec *c = s->p->config;
        char line[512], lim[64], grace[32];

        s->grace_end_ns = 0;
        s->killed = true;
        if (s->p->nest ? slurm_nest_signal(sv_job_fd(s), 0) <= 0 : cgroupfs_populated(s->p->job_fd) <= 0)
                return; /* the soft signal was enough */
        sv_limit_text(s, lim, sizeof lim);
        format_duration(c->grace_ns, grace, sizeof grace);
        snprintf(line, sizeof line, "leash: job %" PRIu32 ": %s reached: killed by SIGKILL after the %s grace\n",
                 s->p->job_id, lim, grace);
        sv_tell(s, line);
        if (s->p->nest ? slurm_nest_kill(sv_job_fd(s)) < 0 : cgroupfs_kill(s->p->job_fd) < 0)
                sv_error(s, "kill the job at the end of the grace: %s", strerror(errno));
        sv_event(s, SIGKILL, "grace");
        sv_write_verdict(s);
}

/* Arms the timer for the earliest thing to do; checks the limits first. */
static void sv_schedule(struct sv *s) {
        const struct leash_spec *c = s->p->config;
        uint64_t now = now_ns(CLOCK_MONOTONIC), next = 0;
        struct itimerspec its = {0};

        if (s->grace_end_ns) {
                if (now >= s->grace_end_ns) {
                        sv_kill(s);
                        return sv_schedule(s);
                }
                next = s->grace_end_ns;
        } else if (s->cause == LEASH_REASON_OK) {
                uint64_t wall = c->limit[LEASH_LIMIT_WALL_TIME], cpu = c->limit[LEASH_LIMIT_CPU_TIME];
                /* a deadline beyond the clock's range is never */
                if (leash_spec_has(c, LEASH_LIMIT_WALL_TIME) && wall != LEASH_MAX &&
                    wall <= UINT64_MAX - s->p->start_ns) {
                        uint64_t d = s->p->start_ns + wall;
                        if (now >= d) {
                                sv_reach(s, LEASH_REASON_WALL_TIME);
                                return sv_schedule(s);
                        }
                        next = d;
                }
                if (leash_spec_has(c, LEASH_LIMIT_CPU_TIME) && cpu != LEASH_MAX) {
                        uint64_t used_us, used, d;
                        if (account_cpu_usage_us(sv_job_fd(s), &used_us) == 0) {
                                used = used_us * NSEC_PER_USEC;
                                if (used >= cpu) {
                                        sv_reach(s, LEASH_REASON_CPU_TIME);
                                        return sv_schedule(s);
                                }
                                /* the earliest moment the job could reach it */
                                double wait = (double) (cpu - used) / sv_cores(s);
                                d = wait >= (double) (UINT64_MAX - now) ? UINT64_MAX : now + (uint64_t) wait;
                                if (d < now + NSEC_PER_MSEC)
                                        d = now + NSEC_PER_MSEC;
                                if (!next || d < next)
                                        next = d;
                        }
                }
        }
        if (next && next != UINT64_MAX) {
                its.it_value = ns_to_timespec(next);
                (void) timerfd_settime(s->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
        } else
                (void) timerfd_settime(s->timer_fd, 0, &its, NULL);
}

static bool sv_step_known(const struct sv *s, const char *name) {
        for (unsigned i = 0; i < s->n_steps; i++)
                if (strcmp(s->steps[i].name, name) == 0)
                        return true;
        return false;
}

static struct step_count *sv_step(struct sv *s, const char *name) {
        for (unsigned i = 0; i < s->n_steps; i++)
                if (strcmp(s->steps[i].name, name) == 0)
                        return &s->steps[i];
        if (s->n_steps >= STEPS_MAX)
                return NULL;
        snprintf(s->steps[s->n_steps].name, sizeof s->steps[0].name, "%s", name);
        return &s->steps[s->n_steps++];
}

static int proc_read(pid_t pid, const char *file, char *buf, size_t size, size_t *ret_len) {
        char path[64];
        _cleanup_close_ int fd = -1;
        snprintf(path, sizeof path, "/proc/%d/%s", (int) pid, file);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return read_fd_at0(fd, buf, size, ret_len);
}

/* ppid and uid of a process, from /proc/PID/status */
static int proc_ids(pid_t pid, pid_t *ret_ppid, uid_t *ret_uid) {
        char buf[4096], *p;
        int r = proc_read(pid, "status", buf, sizeof buf, NULL);
        if (r < 0)
                return r;
        if (!(p = strstr(buf, "\nPPid:")))
                return -EINVAL;
        *ret_ppid = (pid_t) strtol(p + 6, NULL, 10);
        if (!(p = strstr(buf, "\nUid:")))
                return -EINVAL;
        *ret_uid = (uid_t) strtoul(p + 5, NULL, 10); /* the real uid */
        return 0;
}

/* A non-root request: is pid this job's task, asked for by itself or its
 * TaskProlog child? Fills why when not. */
static bool sv_may_adopt(struct sv *s, const struct ucred *peer, pid_t pid, const char *step, char *why, size_t size) {
        char env[65536], want[96], cg[4096];
        size_t len;
        pid_t ppid = 0, tppid;
        uid_t uid = (uid_t) -1, tuid;
        if (peer->uid != s->p->uid) {
                snprintf(why, size, "uid %u is not the job's user", (unsigned) peer->uid);
                return false;
        }
        if (pid != peer->pid && (proc_ids(peer->pid, &ppid, &uid) < 0 || ppid != pid)) {
                snprintf(why, size, "pid %d is neither the caller nor its parent", (int) pid);
                return false;
        }
        if (proc_ids(pid, &tppid, &tuid) < 0 || tuid != s->p->uid) {
                snprintf(why, size, "pid %d does not belong to the job's user", (int) pid);
                return false;
        }
        /* its parent is this job's slurmstepd: a root process whose title is
         * "slurmstepd: [JOBID.STEP]" (the task's /proc/PID/environ cannot tell:
         * before exec it still shows slurmstepd's own environment) */
        snprintf(want, sizeof want, "slurmstepd: [%" PRIu32 ".%s]", s->p->job_id, step);
        if (proc_ids(tppid, &ppid, &uid) < 0 || uid != 0 || proc_read(tppid, "cmdline", env, sizeof env, &len) < 0 ||
            strncmp(env, want, strlen(want)) != 0) {
                snprintf(why, size,
                         "pid %d is not a task of job %" PRIu32 " step %s (its parent is not that step's slurmstepd)",
                         (int) pid, s->p->job_id, step);
                return false;
        }
        /* never out of another job's cgroup (or any leash job): that would be an escape */
        if (proc_read(pid, "cgroup", cg, sizeof cg, NULL) == 0) {
                char mine[64];
                char *l = strstr(cg, "0::");
                snprintf(mine, sizeof mine, "/leash/slurm/job_%" PRIu32 "/", s->p->job_id);
                if (l && strstr(l, "/leash/") && !strstr(l, mine)) {
                        snprintf(why, size, "pid %d is in another leash cgroup", (int) pid);
                        return false;
                }
        }
        return true;
}

static void sv_adopt(struct sv *s, const struct ucred *peer, const char *args, int err_fd, char *reply, size_t size) {
        char step[40], why[256], num[16];
        long pid;
        _cleanup_close_ int pidfd = -1, step_fd = -1;
        int r;

        if (sscanf(args, "%39s %ld", step, &pid) != 2 || pid <= 0 || pid > INT32_MAX || !slurm_step_valid(step)) {
                snprintf(reply, size, "error bad request");
                return;
        }
        if (s->p->refuse) {
                snprintf(reply, size, "refuse %s", s->p->refuse_why ? s->p->refuse_why : "setup failed");
                return;
        }
        /* the pidfd first: the process judged below is the one it names */
        pidfd = pidfd_open_((pid_t) pid);
        if (pidfd < 0) {
                snprintf(reply, size, "error pid %ld: %s", pid, strerror(errno));
                return;
        }
        if (peer->uid != 0 && !sv_may_adopt(s, peer, (pid_t) pid, step, why, sizeof why)) {
                snprintf(reply, size, "error %s", why);
                return;
        }
        if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
                snprintf(reply, size, "error pid %ld exited while being judged", pid);
                return;
        }
        if (!sv_step_known(s, step) && s->n_steps >= STEPS_MAX) {
                snprintf(reply, size, "error step_%s: the job has %u steps already (at most %u)", step, s->n_steps,
                         STEPS_MAX);
                return;
        }
        if (s->p->nest) {
                if (sv_nest_adopt(s, (pid_t) pid, step, reply, size) < 0)
                        return;
                goto placed;
        }
        r = slurm_step_cgroup_open(s->p->job_fd, step, true, &step_fd);
        if (r < 0) {
                snprintf(reply, size, "error step_%s: %s", step, strerror(-r));
                return;
        }
        (void) sv_step(s, step);
        snprintf(num, sizeof num, "%ld", pid);
        r = write_string_at(step_fd, "cgroup.procs", num);
        if (r < 0) {
                snprintf(reply, size, "error move pid %ld into step_%s: %s", pid, step, strerror(-r));
                return;
        }
placed:
        /* the pid was not recycled between the checks and the move */
        if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
                snprintf(reply, size, "error pid %ld exited while being placed", pid);
                return;
        }
        (void) sv_step(s, step);
        s->placed++;
        if (s->n_tasks < TASKS_MAX) {
                s->tasks[s->n_tasks].pidfd = TAKE_FD(pidfd);
                s->tasks[s->n_tasks].err_fd = err_fd >= 0 ? fcntl(err_fd, F_DUPFD_CLOEXEC, 3) : -1;
                s->n_tasks++;
        }
        snprintf(reply, size, "ok step_%s", step);
        sv_write_verdict(s);
}

static void sv_step_end(struct sv *s, const char *args, char *reply, size_t size) {
        char step[40];
        _cleanup_close_ int step_fd = -1;
        struct step_count *sc;
        int n;

        if (s->p->nest && sscanf(args, "%39s", step) == 1) {
                snprintf(reply, size, "ok %d", sv_nest_step_end(s, step));
                return;
        }
        if (sscanf(args, "%39s", step) != 1 || slurm_step_cgroup_open(s->p->job_fd, step, false, &step_fd) < 0) {
                snprintf(reply, size, "ok 0");
                return;
        }
        n = cgroupfs_signal_all(step_fd, 0, 0);
        if (n > 0) {
                (void) cgroupfs_kill(step_fd);
                (void) cgroupfs_wait_empty(step_fd, 2000);
                if ((sc = sv_step(s, step)))
                        sc->leftovers += (unsigned) n;
                sv_event(s, SIGKILL, "leftover");
                sv_write_verdict(s);
        }
        snprintf(reply, size, "ok %d", n > 0 ? n : 0);
}

/* A pending connection that is readable: its one request, its one reply. */
static void sv_request(struct sv *s, int fd) {
        char buf[512], reply[512] = "error unknown request", cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf - 1};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        struct ucred peer;
        socklen_t plen = sizeof peer;
        _cleanup_close_ int passed = -1;
        ssize_t n;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &plen) < 0)
                return;
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n <= 0)
                return;
        buf[n] = '\0';
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
                        memcpy(&passed, CMSG_DATA(c), sizeof(int));
        if (strncmp(buf, "adopt ", 6) == 0) {
                sv_adopt(s, &peer, buf + 6, passed, reply, sizeof reply);
                if (strncmp(reply, "ok", 2) != 0) {
                        s->refused++;
                        sv_write_verdict(s);
                }
        } else if (strcmp(buf, "status") == 0)
                snprintf(reply, sizeof reply, "ok reason=%s tasks_placed=%u", leash_reason_to_string(s->cause),
                         s->placed);
        else if (peer.uid != 0)
                snprintf(reply, sizeof reply, "error only root may ask that");
        else if (strncmp(buf, "step-end ", 9) == 0)
                sv_step_end(s, buf + 9, reply, sizeof reply);
        else if (strcmp(buf, "stop") == 0) {
                sv_write_verdict(s);
                s->stop = true;
                snprintf(reply, sizeof reply, "ok");
        }
        (void) send(fd, reply, strlen(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void sv_pending_drop(struct sv *s, unsigned i) {
        close(s->pending[i].fd);
        s->pending[i] = s->pending[--s->n_pending];
}

/* A new connection: dropped unheard unless from root or the job's user; it
 * then waits in the loop for its request (the oldest goes when all are taken). */
static void sv_accept(struct sv *s) {
        struct ucred peer;
        socklen_t plen = sizeof peer;
        int c = accept4(s->p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (c < 0)
                return;
        if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &peer, &plen) < 0 || (peer.uid != 0 && peer.uid != s->p->uid)) {
                s->peers_refused++;
                close(c);
                return;
        }
        if (s->n_pending >= PENDING_MAX) {
                unsigned oldest = 0;
                for (unsigned i = 1; i < s->n_pending; i++)
                        if (s->pending[i].deadline_ns < s->pending[oldest].deadline_ns)
                                oldest = i;
                sv_pending_drop(s, oldest);
        }
        s->pending[s->n_pending++] = (struct pending){
                .fd = c,
                .deadline_ns = now_ns(CLOCK_MONOTONIC) + (uint64_t) REQUEST_TIMEOUT_MS * NSEC_PER_MSEC,
        };
}

/* poll's timeout: until the first pending connection's deadline, else none */
static int sv_poll_timeout(const struct sv *s) {
        uint64_t now = now_ns(CLOCK_MONOTONIC), first = UINT64_MAX;

        for (unsigned i = 0; i < s->n_pending; i++)
                if (s->pending[i].deadline_ns < first)
                        first = s->pending[i].deadline_ns;
        if (first == UINT64_MAX)
                return -1;
        return first <= now ? 0 : (int) ((first - now) / NSEC_PER_MSEC) + 1;
}

int slurm_supervise(const struct slurm_supervisor *p) {
        struct sv s = {.p = p, .timer_fd = -1, .nest_fd = -1};
        sigset_t mask;
        _cleanup_close_ int sig_fd = -1;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        s.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
        if (sig_fd < 0 || s.timer_fd < 0) {
                sv_error(&s, "supervisor: %s", strerror(errno));
                sv_write_verdict(&s);
                return 1;
        }
        sv_write_verdict(&s);
        sv_schedule(&s);
        while (!s.stop) {
                struct pollfd pfd[3 + PENDING_MAX + TASKS_MAX];
                unsigned n = 0, np = s.n_pending, nt = s.n_tasks;
                uint64_t now;

                pfd[n++] = (struct pollfd){.fd = p->listen_fd, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = s.timer_fd, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = sig_fd, .events = POLLIN};
                for (unsigned i = 0; i < np; i++)
                        pfd[n++] = (struct pollfd){.fd = s.pending[i].fd, .events = POLLIN};
                for (unsigned i = 0; i < nt; i++)
                        pfd[n++] = (struct pollfd){.fd = s.tasks[i].pidfd, .events = POLLIN};
                if (poll(pfd, n, sv_poll_timeout(&s)) < 0) {
                        if (errno == EINTR)
                                continue;
                        sv_error(&s, "supervisor poll: %s", strerror(errno));
                        break;
                }
                if (pfd[2].revents) {
                        struct signalfd_siginfo si;
                        if (read(sig_fd, &si, sizeof si) == (ssize_t) sizeof si)
                                break;
                }
                if (pfd[1].revents) {
                        uint64_t ticks;
                        (void) !read(s.timer_fd, &ticks, sizeof ticks);
                        sv_schedule(&s);
                }
                /* tasks that ended: their stderr is let go, so that Slurm sees EOF */
                for (unsigned i = nt; i-- > 0;)
                        if (pfd[3 + np + i].revents) {
                                close(s.tasks[i].pidfd);
                                if (s.tasks[i].err_fd >= 0)
                                        close(s.tasks[i].err_fd);
                                s.tasks[i] = s.tasks[--s.n_tasks];
                        }
                /* requests that came, and connections whose time is up */
                now = now_ns(CLOCK_MONOTONIC);
                for (unsigned i = np; i-- > 0;) {
                        if (pfd[3 + i].revents)
                                sv_request(&s, s.pending[i].fd);
                        else if (now < s.pending[i].deadline_ns)
                                continue;
                        sv_pending_drop(&s, i);
                }
                if (pfd[0].revents)
                        sv_accept(&s);
                if (np || pfd[0].revents)
                        sv_schedule(&s);
        }
        while (s.n_pending)
                sv_pending_drop(&s, 0);
        sv_write_verdict(&s);
        if (s.nest_fd >= 0)
                close(s.nest_fd);
        return 0;
}

int slurm_request(int state_fd, const char *request, int fd_to_send, int timeout_ms, char *reply, size_t size) {
        char path[64];

        /* connect through the held directory: no path a job could swap */
        snprintf(path, sizeof path, "/proc/self/fd/%d/sock", state_fd);
        return seqpacket_request(path, request, fd_to_send, timeout_ms, reply, size);
}
