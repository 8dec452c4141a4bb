/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The per-job supervisor, forked by `leash slurm prolog`.
 *
 * slurmd kills the Prolog's process group when the Prolog exits, so the
 * supervisor is started in a new session (setsid) with its stdio on
 * /dev/null. The time limits of the whole job are the engine's job object's,
 * as for `leash run`: the job cgroup is adopted as an owned job
 * (LEASH_ADOPT_OWNED: it is empty until the first task and between steps,
 * and the Epilog ends it), whose leash_job_fd() sits in one poll beside a
 * signalfd, the listening socket and one pidfd per placed task; what the
 * job object did (the soft signal, the SIGKILL after the grace) is read from
 * its signal log after each leash_job_dispatch() and told to the tasks. No
 * polling loop, no sleeps. What is Slurm's stays here: the socket, placing
 * tasks in step cgroups, the step ends, the verdict file.
 *
 * An Epilog that never comes (slurmd died) is not waited for forever: once
 * the job's wall limit and grace have passed (without a wall limit, after
 * SUPERVISE_MAX_NS), and epilog-wait more, the supervisor ends by itself as
 * soon as the job cgroup is empty, saying so in the verdict (ended=...).
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
#include <sys/un.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/kvfile.h"
#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../basic/seqpacket.h"
#include "../basic/time-util.h"
#include "../engine/cgroup/account.h"
#include "../engine/cgroup/cgroupfs.h"
#include "../engine/sample/sample.h"
#include "../slurm/slurm-nest.h"
#include "slurm-supervise.h"

#define TASKS_MAX 256
#define STEPS_MAX 64
#define ERRORS_MAX 8
#define PENDING_MAX 16
#define REQUEST_TIMEOUT_MS 500
/* no wall limit: how long a supervisor waits for its Epilog at most */
#define SUPERVISE_MAX_NS (30ULL * 24 * 3600 * NSEC_PER_SEC)
/* after the bound, how often an occupied job cgroup is looked at again
 * (its emptying wakes the loop anyway: the job's fd watches cgroup.events) */
#define RECHECK_NS (60ULL * NSEC_PER_SEC)

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
        struct leash_job *job; /* the job cgroup, adopted (owned): the limits */
        struct pending pending[PENDING_MAX];
        unsigned n_pending;
        unsigned peers_refused; /* connections from neither root nor the job's user */
        struct task tasks[TASKS_MAX];
        unsigned n_tasks;
        unsigned placed;
        unsigned refused; /* adopt requests refused or failed: those tasks never ran in the job */
        struct step_count steps[STEPS_MAX];
        unsigned n_steps;
        unsigned told;     /* signals of the job's log already told to the tasks */
        uint64_t end_ns;   /* no Epilog by then: ends by itself once the cgroup is empty */
        uint64_t check_ns; /* when the loop wakes for that next: end_ns, then RECHECK_NS apart */
        const char *ended; /* why it ended by itself, or NULL */
        char errors[ERRORS_MAX][200];
        unsigned n_errors;
        bool stop;
        int nest_fd;                 /* nest: Slurm's job_<ID>, -1 until the first task */
        char nest_path[1024];        /* nest: its path */
        struct leash_usage nest_job; /* nest: job_<ID>'s own files at the last step end */
        uint64_t nest_memory_max;    /* nest: job_<ID>'s memory.max (Slurm's --mem); 0: none, or max */
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

static enum leash_reason sv_cause(const struct sv *s) {
        return s->job ? leash_job_cause(s->job) : LEASH_REASON_OK;
}

static struct step_count *sv_step(struct sv *s, const char *name);
static void sv_write_verdict(struct sv *s);

/* --- nest mode: Slurm's cgroups, adopted read-only (src/slurm/slurm-nest.h) --- */

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
        if (s->nest_memory_max)
                kv_add(b, "slurm_memory_max", "%" PRIu64, s->nest_memory_max);
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

/* The job object's way to the job's processes in mode nest: the tasks'
 * subtrees (step_<S>/user), never slurmstepd's (leash_job_set_signal_fn). */
static int sv_nest_signal(void *userdata, int sig) {
        const struct sv *s = userdata;
        return sig == SIGKILL ? slurm_nest_kill(s->nest_fd) : slurm_nest_signal(s->nest_fd, sig);
}

/* Slurm's job cgroup as an owned job of the engine's, at its first task:
 * the time limits count from then; no limit file is written there (Slurm's
 * cgroup plugin holds memory, CPUs and devices), the engine reaches the
 * job's processes only through sv_nest_signal, and its sampler leaves
 * slurmstepd's cgroups out of the measured figures. */
static int sv_nest_adopt_job(struct sv *s) {
        struct leash_spec spec = *s->p->config;
        struct leash_error err = {0};
        int r;

        spec.strict = false;
        spec.limit_set &= (1U << LEASH_LIMIT_CPU_TIME) | (1U << LEASH_LIMIT_WALL_TIME);
        spec.sampling.not_the_jobs = SLURM_NEST_STEPD_CGROUPS;
        memset(&spec.devices, 0, sizeof spec.devices);
        r = leash_job_adopt_spec(&spec, s->nest_path, LEASH_ADOPT_OWNED, &s->job, &err);
        if (r < 0) {
                sv_error(s, "supervise Slurm's job cgroup: %s: %s: %s", err.step ? err.step : "adopt", err.detail,
                         strerror(-r));
                return r;
        }
        return leash_job_set_signal_fn(s->job, sv_nest_signal, s);
}

/* Slurm's memory limit on the job (--mem under ConstrainRAMSpace): job_<ID>'s
 * memory.max, read once at the first task; 0 where there is none ("max"). */
static uint64_t sv_nest_memory_max(int job_fd) {
        char buf[32];
        unsigned long long v;

        if (read_file_at(job_fd, "memory.max", buf, sizeof buf, NULL) < 0 || sscanf(buf, "%llu", &v) != 1)
                return 0;
        return (uint64_t) v;
}

/* adopt in nest mode: the task stays where Slurm put it, which must be this
 * job's step_<step> (or below); the first one names Slurm's job cgroup. */
static int sv_nest_adopt(struct sv *s, pid_t pid, const char *step, char *reply, size_t size) {
        char path[sizeof s->nest_path] = "";
        int fd, r;

        r = slurm_nest_open_job(pid, s->p->job_id, step, &fd, path, sizeof path);
        if (r < 0) {
                snprintf(reply, size, "error pid %d is not in Slurm's job_%" PRIu32 "/step_%s (%s): %s", (int) pid,
                         s->p->job_id, step, path, strerror(-r));
                return r;
        }
        if (s->nest_fd >= 0) {
                close(fd);
                return 0;
        }
        s->nest_fd = fd;
        snprintf(s->nest_path, sizeof s->nest_path, "%s", path);
        s->nest_memory_max = sv_nest_memory_max(fd);
        r = sv_nest_adopt_job(s);
        if (r < 0)
                snprintf(reply, size, "error supervise Slurm's job cgroup %s: %s", path, strerror(-r));
        return r;
}

/* Whether the job's ladder has sent its SIGKILL: what a step still holds at
 * its end is dying, not left behind. */
static bool sv_job_killed(const struct sv *s) {
        return s->job && leash_result_ladder_killed(leash_job_result(s->job));
}

/* step-end in nest mode (the plugin, once the step's last task exited and
 * before Slurm's proctrack kills the rest): leftovers counted and killed,
 * the step's and the job's figures kept for the Epilog. */
static int sv_nest_step_end(struct sv *s, const char *step) {
        struct slurm_nest_step st;
        struct step_count *sc;

        if (s->nest_fd < 0 || slurm_nest_step_end(s->nest_fd, step, sv_job_killed(s), &st) < 0 ||
            !(sc = sv_step(s, step)))
                return 0;
        sc->leftovers += st.leftovers;
        sc->usage = st.usage;
        sc->ended = true;
        account_usage_init(&s->nest_job);
        account_read(s->nest_fd, &s->nest_job);
        if (st.leftovers && s->job) { /* in the job's log, told to no task */
                leash_job_log_signal(s->job, SIGKILL, "leftover");
                s->told = leash_job_result(s->job)->n_signals;
        }
        sv_write_verdict(s);
        return (int) st.leftovers;
}

/* The profile's sampling (sample =, limit =), as the job's sampler has it so
 * far: how it went, the peaks with their basis, the GPUs the job used, the
 * measured limit passed. */
static void sv_sampling_verdict(const struct leash_sampling_result *x, struct kv_buf *b) {
        char key[64];

        kv_add(b, "sampling", "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, x->samples, x->cost_ns,
               x->read_max_ns, x->gap_max_ns, x->stretched);
        for (int f = 0; f < _LEASH_FIG_MAX; f++) {
                if (x->peak[f] == LEASH_NULL)
                        continue;
                snprintf(key, sizeof key, "peak.%s", leash_fig_name((enum leash_fig) f));
                kv_add(b, key, "%" PRIu64 " %s", x->peak[f], x->peak_basis[f] ? x->peak_basis[f] : "");
        }
        kv_add(b, "gpu", "%d %d %u %s %s", x->gpu.sampled, x->gpu.available, x->gpu.n,
               x->gpu.sources ? x->gpu.sources : "-", x->gpu.why ? x->gpu.why : "");
        for (unsigned i = 0; i < x->gpu.n; i++) {
                const struct gpu_life *l = &x->gpu.g[i];
                snprintf(key, sizeof key, "gpu.%u", i);
                kv_add(b, key, "%s %s %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %s", l->last.id,
                       l->last.uuid[0] ? l->last.uuid : "-", l->last.source, l->last.mem_bytes, l->mem_peak,
                       l->util_sum, l->util_n, l->last.name);
        }
        if (x->limit_reached >= 0)
                kv_add(b, "limit_reached", "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %d",
                       leash_fig_name((enum leash_fig) x->limit_reached), x->limit_value_at, x->limit_seen_ns,
                       x->limit_below_ns, x->limit_read_ns, (int) x->limit_partial);
}

static void sv_write_verdict(struct sv *s) {
        const struct leash_result *r = s->job ? leash_job_result(s->job) : NULL;
        char buf[16384], key[64];
        struct kv_buf b = {.buf = buf, .size = sizeof buf};

        kv_add(&b, "reason", "%s", leash_reason_to_string(sv_cause(s)));
        kv_add(&b, "tasks_placed", "%u", s->placed);
        kv_add(&b, "tasks_refused", "%u", s->refused);
        for (unsigned i = 0; r && i < r->n_signals; i++) {
                snprintf(key, sizeof key, "signal.%u", i);
                kv_add(&b, key, "%d %" PRIu64 " %s", r->signals[i].signal, r->signals[i].at_ns, r->signals[i].why);
        }
        if (r && r->sampling.interval_ns)
                sv_sampling_verdict(&r->sampling, &b);
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
        if (s->ended)
                kv_add(&b, "ended", "%s", s->ended);
        if (!b.overflow)
                (void) slurm_file_replace(s->p->state_fd, "verdict", buf);
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

/* One signal of the job's log, as the tasks are told it: the soft signal of
 * a time or measured limit, the SIGKILL at the end of its grace; nothing
 * else. why: the soft signal's (the limit's name); seen: a measured limit's
 * value at the sample that saw it, "" for a time limit. */
static void sv_tell_ladder(struct sv *s, const struct leash_signal_event *e, const char *why, const char *lim,
                           const char *seen) {
        const struct leash_spec *c = s->p->config;
        char line[512], grace[32];

        format_duration(c->grace_ns, grace, sizeof grace);
        if (e->signal == SIGKILL && strcmp(e->why, "grace") == 0)
                snprintf(line, sizeof line,
                         "leash: job %" PRIu32 ": %s limit %s reached: killed by SIGKILL after the %s grace\n",
                         s->p->job_id, why, lim, grace);
        else if (e->signal == c->soft_signal && strcmp(e->why, why) == 0)
                snprintf(line, sizeof line,
                         "leash: job %" PRIu32 ": %s limit %s reached%s: sent SIG%s, SIGKILL in %s\n", s->p->job_id,
                         why, lim, seen, signal_name(c->soft_signal), grace);
        else
                return;
        sv_tell(s, line);
}

static void sv_tell_signal(struct sv *s, const struct leash_signal_event *e) {
        const struct leash_spec *c = s->p->config;
        const struct leash_sampling_result *x = &leash_job_result(s->job)->sampling;
        enum leash_reason cause = sv_cause(s);
        char lim[32], v[32], seen[320] = "";

        if (cause == LEASH_REASON_MEASURED && x->limit_reached >= 0) {
                enum leash_fig f = (enum leash_fig) x->limit_reached;
                sample_fig_format(f, c->sampling.limit[f], lim, sizeof lim);
                sample_fig_format(f, x->limit_value_at, v, sizeof v);
                snprintf(seen, sizeof seen, " (%s seen%s%s)", v, x->limit_partial ? ": counted as passed, " : "",
                         x->limit_partial ? leash_unjudged_to_string(x->limit_partial) : "");
                sv_tell_ladder(s, e, leash_fig_name(f), lim, seen);
        } else if (cause == LEASH_REASON_WALL_TIME || cause == LEASH_REASON_CPU_TIME) {
                format_duration(
                        c->limit[cause == LEASH_REASON_WALL_TIME ? LEASH_LIMIT_WALL_TIME : LEASH_LIMIT_CPU_TIME], lim,
                        sizeof lim);
                sv_tell_ladder(s, e, leash_reason_to_string(cause), lim, "");
        }
}

/* What the job object did since last time: told to the tasks, written down. */
static void sv_job_events(struct sv *s) {
        const struct leash_result *r = leash_job_result(s->job);

        if (s->told == r->n_signals)
                return;
        for (; s->told < r->n_signals; s->told++)
                sv_tell_signal(s, &r->signals[s->told]);
        sv_write_verdict(s);
}

/* The Epilog's bound: the job's wall limit and grace (or SUPERVISE_MAX_NS),
 * then epilog-wait, from the adoption. */
static uint64_t sv_end_ns(const struct sv *s) {
        const struct leash_spec *c = s->p->config;
        uint64_t start = now_ns(CLOCK_MONOTONIC), bound = SUPERVISE_MAX_NS;

        if (leash_spec_has(c, LEASH_LIMIT_WALL_TIME) && c->limit[LEASH_LIMIT_WALL_TIME] != LEASH_MAX &&
            c->limit[LEASH_LIMIT_WALL_TIME] < SUPERVISE_MAX_NS && c->grace_ns < SUPERVISE_MAX_NS)
                bound = c->limit[LEASH_LIMIT_WALL_TIME] + c->grace_ns;
        return start + bound + (s->p->epilog_wait_ns < SUPERVISE_MAX_NS ? s->p->epilog_wait_ns : SUPERVISE_MAX_NS);
}

/* Whether a task of the job runs: > 0 yes, 0 no, < 0 cannot tell. */
static int sv_runs(const struct sv *s) {
        if (!s->p->nest)
                return cgroupfs_populated(s->p->job_fd);
        return s->nest_fd < 0 ? 0 : slurm_nest_signal(s->nest_fd, 0);
}

/* No Epilog by the bound: ends once nothing of the job runs (a task placed
 * later finds no supervisor and is refused), else looks again later. */
static void sv_check_end(struct sv *s) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);

        if (now < s->end_ns)
                return;
        /* past the bound: looked at on every wake (a task that ends wakes it) */
        if (sv_runs(s) == 0) {
                s->ended = "no Epilog by the job's limits and epilog-wait, and the job cgroup empty";
                s->stop = true;
                sv_write_verdict(s);
                return;
        }
        if (now >= s->check_ns)
                s->check_ns = now + RECHECK_NS;
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
        if (s->p->nest) { /* the task stays where Slurm put it */
                if (sv_nest_adopt(s, (pid_t) pid, step, reply, size) < 0)
                        return;
                (void) sv_step(s, step);
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
        if (sv_job_killed(s)) /* the job's cgroup.kill: what the step holds is dying */
                (void) cgroupfs_wait_empty(step_fd, 2000);
        n = cgroupfs_signal_all(step_fd, 0, 0);
        if (n > 0) {
                (void) cgroupfs_kill(step_fd);
                (void) cgroupfs_wait_empty(step_fd, 2000);
                if ((sc = sv_step(s, step)))
                        sc->leftovers += (unsigned) n;
                if (s->job) { /* in the job's log, told to no task */
                        leash_job_log_signal(s->job, SIGKILL, "leftover");
                        s->told = leash_job_result(s->job)->n_signals;
                }
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
                snprintf(reply, sizeof reply, "ok reason=%s tasks_placed=%u", leash_reason_to_string(sv_cause(s)),
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

/* poll's timeout: until the first pending connection's deadline or the
 * Epilog's bound, whichever comes first */
static int sv_poll_timeout(const struct sv *s) {
        uint64_t now = now_ns(CLOCK_MONOTONIC), first = s->check_ns;

        for (unsigned i = 0; i < s->n_pending; i++)
                if (s->pending[i].deadline_ns < first)
                        first = s->pending[i].deadline_ns;
        if (first <= now)
                return 0;
        return first - now >= (uint64_t) INT32_MAX * NSEC_PER_MSEC ? INT32_MAX
                                                                   : (int) ((first - now) / NSEC_PER_MSEC) + 1;
}

/* The job cgroup as an owned job of the engine's: its time limits from now. */
static int sv_adopt_job(struct sv *s) {
        struct leash_spec spec = *s->p->config;
        struct leash_error err = {0};
        int r;

        spec.strict = false; /* the Prolog planned the limits and wrote them */
        r = leash_job_adopt_spec(&spec, s->p->cgroup, LEASH_ADOPT_OWNED, &s->job, &err);
        if (r < 0) {
                sv_error(s, "supervise the job cgroup: %s: %s: %s", err.step ? err.step : "adopt", err.detail,
                         strerror(-r));
                return r;
        }
        r = leash_job_fd(s->job);
        if (r < 0)
                sv_error(s, "supervise the job cgroup: its fd: %s", strerror(-r));
        return r;
}

/* The tasks that ended: their stderr is let go, so that Slurm sees EOF. */
static void sv_tasks_ended(struct sv *s, const struct pollfd *pfd, unsigned nt) {
        for (unsigned i = nt; i-- > 0;)
                if (pfd[i].revents) {
                        close(s->tasks[i].pidfd);
                        if (s->tasks[i].err_fd >= 0)
                                close(s->tasks[i].err_fd);
                        s->tasks[i] = s->tasks[--s->n_tasks];
                }
}

/* The requests that came, and the connections whose time is up. */
static void sv_requests(struct sv *s, const struct pollfd *pfd, unsigned np) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);

        for (unsigned i = np; i-- > 0;) {
                if (pfd[i].revents)
                        sv_request(s, s->pending[i].fd);
                else if (now < s->pending[i].deadline_ns)
                        continue;
                sv_pending_drop(s, i);
        }
}

static int sv_signalfd(void) {
        sigset_t mask;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

int slurm_supervise(const struct slurm_supervisor *p) {
        struct sv s = {.p = p, .nest_fd = -1};
        _cleanup_close_ int sig_fd = -1;
        int job_fd = -1;

        sig_fd = sv_signalfd();
        if (sig_fd < 0) {
                sv_error(&s, "supervisor: %s", strerror(errno));
                sv_write_verdict(&s);
                return 1;
        }
        /* mode nest: Slurm's job cgroup is adopted at the first task */
        if (!p->nest && (job_fd = sv_adopt_job(&s)) < 0) {
                sv_write_verdict(&s);
                leash_job_free(s.job);
                return 1;
        }
        s.end_ns = s.check_ns = sv_end_ns(&s);
        sv_write_verdict(&s);
        while (!s.stop) {
                struct pollfd pfd[3 + PENDING_MAX + TASKS_MAX];
                unsigned n = 0, np = s.n_pending, nt = s.n_tasks;

                if (job_fd < 0 && s.job && (job_fd = leash_job_fd(s.job)) < 0)
                        sv_error(&s, "supervise Slurm's job cgroup: its fd: %s", strerror(-job_fd));
                pfd[n++] = (struct pollfd){.fd = p->listen_fd, .events = POLLIN};
                pfd[n++] = (struct pollfd){.fd = job_fd, .events = POLLIN};
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
                        int r = leash_job_dispatch(s.job);
                        if (r < 0)
                                sv_error(&s, "supervise the job cgroup: %s", strerror(-r));
                        sv_job_events(&s);
                }
                sv_tasks_ended(&s, pfd + 3 + np, nt);
                sv_requests(&s, pfd + 3, np);
                if (pfd[0].revents)
                        sv_accept(&s);
                sv_check_end(&s);
        }
        while (s.n_pending)
                sv_pending_drop(&s, 0);
        sv_write_verdict(&s);
        /* owned: no kill, no removal; the Epilog reads and removes the cgroup */
        leash_job_free(s.job);
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
