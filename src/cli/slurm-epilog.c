/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash slurm epilog: Slurm's Epilog= (root). The supervisor stopped, what
 * is left of the job killed, its figures read, its cgroups removed, and the
 * report written to <report-dir>/<JOBID>.<node>.json.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../basic/kvfile.h"
#include "../basic/log.h"
#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../basic/time-util.h"
#include "../engine/cgroup/account.h"
#include "../engine/cgroup/cgroupfs.h"
#include "cli.h"
#include "slurm-ctx.h"
#include "slurm-hooks.h"
#include "slurm-supervise.h"

/* A supervisor that waited epilog-wait past the job's limits for this
 * Epilog, found the job cgroup empty and ended by itself: its verdict says
 * so, and that is no trouble. */
static bool supervisor_ended(struct slurm_ctx *x, int state_fd) {
        _cleanup_free_ char *verdict = NULL;
        char why[256];

        if (slurm_state_read(state_fd, "verdict", &verdict) < 0 || kv_get(verdict, "ended", why, sizeof why) < 0)
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
static void stop_supervisor(struct slurm_ctx *x, int state_fd, const char *state) {
        char reply[256];
        _cleanup_close_ int pfd = state ? slurm_supervisor_pidfd(state) : -ESRCH;
        struct pollfd p;
        int r;

        if (state && pfd == -ESRCH && !slurm_kv_u64(state, "supervisor_pid", 0))
                return; /* none was started */
        if (pfd < 0 && supervisor_ended(x, state_fd))
                return;
        r = slurm_request(state_fd, "stop", -1, 2000, reply, sizeof reply);
        if (r < 0 && (state || (r != -ENOENT && r != -ECONNREFUSED)))
                slurm_ctx_error(x, "job %" PRIu32 ": the supervisor did not answer: %s", x->job.id, strerror(-r));
        if (pfd < 0) {
                if (r < 0 && state)
                        slurm_ctx_error(x, "job %" PRIu32 ": the supervisor is gone", x->job.id);
                return;
        }
        p = (struct pollfd){.fd = pfd, .events = POLLIN};
        if (poll(&p, 1, 2000) != 1) {
                slurm_ctx_error(x, "job %" PRIu32 ": the supervisor did not stop: killed", x->job.id);
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
        st->leftovers_killed = (n > 0 ? (unsigned) n : 0) + (unsigned) slurm_kv_u64(e->verdict, key, 0);
}

static void read_step(struct slurm_step_usage *st, int job_fd) {
        _cleanup_close_ int fd = -1;
        if (slurm_step_cgroup_open(job_fd, st->name, false, &fd) == 0)
                account_read(fd, &st->usage);
}

static void config_from_state(struct leash_spec *c, const char *state, enum leash_enforcer *enforced) {
        leash_spec_init(c);
        c->profile_only = true; /* the report's remedies in the profile's keys */
        c->grace_ns = slurm_kv_u64(state, "grace_ns", c->grace_ns);
        c->soft_signal = (int) slurm_kv_u64(state, "soft_signal", (uint64_t) c->soft_signal);
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
        c->sampling.interval_ns = state ? slurm_kv_u64(state, "sample_ns", 0) : 0;
        for (int f = 0; state && f < _LEASH_FIG_MAX; f++) {
                char key[64];
                snprintf(key, sizeof key, "limit_sampled.%s", leash_fig_name((enum leash_fig) f));
                c->sampling.limit[f] = slurm_kv_u64(state, key, 0);
        }
}

/* A source's name as the report's static text ("nvml", "drm_fdinfo", both). */
static const char *gpu_source(const char *name) {
        static const char *const known[] = {"nvml", "drm_fdinfo", "nvml+drm_fdinfo"};
        for (size_t i = 0; i < ELEMENTSOF(known); i++)
                if (strcmp(name, known[i]) == 0)
                        return known[i];
        return NULL;
}

/* The GPUs the supervisor's job saw used (sv_sampling_verdict): "gpu"
 * (sampled, available, how many, sources, why not) and "gpu.N" each. */
static void gpu_from_verdict(struct gpu_track *t, const char *verdict) {
        static char why[256]; /* this one job's report's */
        char buf[512], sources[32], id[40], uuid[64], source[32];
        unsigned long long mem, peak, usum, un;
        int sampled, available, at;
        unsigned n;

        if (kv_get(verdict, "gpu", buf, sizeof buf) < 0 ||
            sscanf(buf, "%d %d %u %31s %n", &sampled, &available, &n, sources, &at) != 4)
                return;
        t->sampled = sampled;
        t->available = available;
        t->sources = gpu_source(sources);
        snprintf(why, sizeof why, "%s", buf + at);
        t->why = why[0] ? why : NULL;
        for (unsigned i = 0; i < n && t->n < GPU_MAX; i++) {
                struct gpu_life *l = &t->g[t->n];
                char key[32];
                snprintf(key, sizeof key, "gpu.%u", i);
                if (kv_get(verdict, key, buf, sizeof buf) < 0 ||
                    sscanf(buf, "%39s %63s %31s %llu %llu %llu %llu %n", id, uuid, source, &mem, &peak, &usum, &un,
                           &at) != 7 ||
                    !gpu_source(source))
                        continue;
                snprintf(l->last.id, sizeof l->last.id, "%s", id);
                snprintf(l->last.uuid, sizeof l->last.uuid, "%s", strcmp(uuid, "-") == 0 ? "" : uuid);
                snprintf(l->last.name, sizeof l->last.name, "%s", buf + at);
                l->last.source = gpu_source(source);
                l->last.mem_bytes = mem;
                l->mem_peak = peak;
                l->util_sum = usum;
                l->util_n = un;
                t->n++;
        }
}

/* The profile's sampling as the supervisor's job had it (sv_sampling_verdict):
 * "sampling" (samples, cost, longest read, longest gap, stretched), a
 * "peak.FIGURE" each (value, basis), and the measured limit passed,
 * "limit_reached" (FIGURE VALUE SEEN_NS BELOW_NS READ_NS PARTIAL). Where the
 * verdict has none, the report has no sampling section, rather than zeros. */
static void sampling_from_verdict(struct leash_result *r, const struct leash_spec *c, const char *verdict) {
        static char basis[_LEASH_FIG_MAX][128]; /* this one job's report's */
        struct leash_sampling_result *x = &r->sampling;
        char buf[256], fig[32];
        unsigned long long v, seen, below, took, cost, read_max, gap_max, stretched;
        int partial, f, at;

        memset(x, 0, sizeof *x);
        x->limit_reached = -1;
        for (f = 0; f < _LEASH_FIG_MAX; f++)
                x->peak[f] = LEASH_NULL;
        /* no sampling line: the supervisor sampled nothing (none asked, or gone) */
        if (!c->sampling.interval_ns || !verdict || kv_get(verdict, "sampling", buf, sizeof buf) < 0 ||
            sscanf(buf, "%llu %llu %llu %llu %llu", &v, &cost, &read_max, &gap_max, &stretched) != 5)
                return;
        x->interval_ns = c->sampling.interval_ns;
        x->samples = v;
        x->cost_ns = cost;
        x->read_max_ns = read_max;
        x->gap_max_ns = gap_max;
        x->stretched = stretched;
        for (f = 0; f < _LEASH_FIG_MAX; f++) {
                char key[64];
                snprintf(key, sizeof key, "peak.%s", leash_fig_name((enum leash_fig) f));
                if (kv_get(verdict, key, buf, sizeof buf) < 0 || sscanf(buf, "%llu %n", &v, &at) < 1)
                        continue;
                x->peak[f] = v;
                snprintf(basis[f], sizeof basis[f], "%s", buf + at);
                x->peak_basis[f] = basis[f][0] ? basis[f] : NULL;
        }
        gpu_from_verdict(&x->gpu, verdict);
        if (kv_get(verdict, "limit_reached", buf, sizeof buf) < 0 ||
            sscanf(buf, "%31s %llu %llu %llu %llu %d", fig, &v, &seen, &below, &took, &partial) != 6 ||
            (f = leash_fig_from_name(fig)) < 0)
                return;
        x->limit_reached = f;
        x->limit_value_at = v;
        x->limit_seen_ns = seen;
        x->limit_below_ns = below;
        x->limit_read_ns = took;
        x->limit_partial = partial > 0 && partial < _LEASH_UNJUDGED_MAX ? (enum leash_unjudged) partial : LEASH_JUDGED;
}

static void signals_from_verdict(struct leash_result *r, const char *verdict) {
        static const char *const whys[] = {"wall_time", "cpu_time", "grace", "leftover", "interrupt"};
        for (unsigned i = 0; i < LEASH_SIGNALS_MAX; i++) {
                char key[32], buf[128], why[32];
                int sig, fig;
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
                fig = leash_fig_from_name(why);
                if (fig >= 0) /* a measured limit's soft signal */
                        r->signals[r->n_signals].why = leash_fig_name((enum leash_fig) fig);
                r->n_signals++;
        }
}

/* Writes <report-dir>/<JOBID>.<node>.json: root's, 0644, in a directory only
 * root can write (judged by the trust rules), replaced atomically. */
static int write_report(struct slurm_ctx *x, const char *text) {
        _cleanup_close_ int dfd = -1;
        char why[4400], name[256];
        int r;

        dfd = slurm_root_dir_open(x->conf.report_dir, true, why, sizeof why);
        if (dfd < 0) {
                slurm_ctx_error(x, "report directory: %s", why);
                return dfd;
        }
        snprintf(name, sizeof name, "%" PRIu32 ".%s.json", x->job.id, x->job.node);
        if (strchr(x->job.node, '/') || x->job.node[0] == '.') {
                slurm_ctx_error(x, "node name '%s': not usable in a file name", x->job.node);
                return -EINVAL;
        }
        r = slurm_file_replace(dfd, name, text);
        if (r < 0)
                slurm_ctx_error(x, "write the report %s/%s: %s", x->conf.report_dir, name, strerror(-r));
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
        if (strcmp(buf, "measured_limit") == 0 && r->sampling.limit_reached >= 0)
                return LEASH_REASON_MEASURED;
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
                v = slurm_kv_u64(verdict, key, LEASH_NULL);
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
static void epilog_own_placement(struct slurm_ctx *x, struct leash_result *r, unsigned placed, size_t n_steps) {
        if (placed || n_steps) {
                placement_adopted(r, "adopted: the job cgroup leash's Prolog made (mode own: leash's layout, "
                                     "its limits written there)");
                return;
        }
        placement_adopted(r, "adopted: the job cgroup leash's Prolog made (mode own), but no task of the job was "
                             "placed in it");
        slurm_ctx_error(x,
                        "job %" PRIu32
                        ": no task of the job was placed in its cgroup (none asked the supervisor: a job "
                        "without steps, or a TaskProlog refused or not given the Prolog's --config-dir)",
                        x->job.id);
}

/* mode nest: a limit of the profile that leash did not apply (the Prolog's
 * plan: memory, pids, cpus...) is not enforced because leash writes nothing
 * into Slurm's job cgroup, which has the controllers: the report's note (and
 * the warning made of it) says that, not that a controller is missing. */
static const char nest_note[] = "mode nest, where leash writes no limit into Slurm's job cgroup; Slurm enforces its "
                                "own only, such as --mem by ConstrainRAMSpace";

/* mode nest: Slurm's own memory limit (--mem under ConstrainRAMSpace, the
 * memory.max the supervisor read on Slurm's job cgroup) is the job's memory
 * limit where the profile asked for none: the report names it and who
 * enforced it (a job it OOM-killed said reason memory beside no memory
 * limit). A profile's own memory, not applied, keeps its warning, and its
 * note names Slurm's, which held. */
static const char nest_memory_note[] = "Slurm's --mem: the memory.max of Slurm's job cgroup (ConstrainRAMSpace), which "
                                       "leash read and did not write";

static void epilog_nest_memory(const char *verdict, struct leash_spec *c, struct leash_result *r) {
        static char both[512]; /* this one job's report's */
        uint64_t v = verdict ? slurm_kv_u64(verdict, "slurm_memory_max", 0) : 0;
        char slurm[32];

        if (!v)
                return;
        if (leash_spec_has(c, LEASH_LIMIT_MEMORY)) {
                /* the profile's limit stays, not applied; the note names the
                 * one that held (the report hid it behind the profile's) */
                format_size(v, slurm, sizeof slurm);
                /* no ':' nor '(' before its end: a warning keeps the note up to one (weak.c) */
                snprintf(both, sizeof both,
                         "Slurm's job cgroup held the job to memory.max %s, its --mem under ConstrainRAMSpace, read by "
                         "leash; mode nest, where leash writes no limit into Slurm's job cgroup",
                         slurm);
                r->enforce_note[LEASH_LIMIT_MEMORY] = both;
                return;
        }
        leash_spec_set_limit(c, LEASH_LIMIT_MEMORY, v);
        r->enforced[LEASH_LIMIT_MEMORY] = LEASH_BY_CGROUP;
        r->enforce_note[LEASH_LIMIT_MEMORY] = nest_memory_note;
}

static void epilog_nest(const char *verdict, struct leash_result *r, struct epilog_steps *es) {
        char list[4096] = "", *save = NULL;
        uint64_t wall = r->usage.wall_ns, ooms = 0;

        for (int l = 0; l < _LEASH_LIMIT_MAX; l++)
                if (r->enforced[l] == LEASH_BY_NONE)
                        r->enforce_note[l] = nest_note;
        if (r->enforced[LEASH_LIMIT_CPU_TIME] == LEASH_BY_LEASH)
                r->enforce_note[LEASH_LIMIT_CPU_TIME] = "judged on cpu.stat of Slurm's job cgroup, which holds "
                                                        "slurmstepd beside the tasks: its own CPU time counts";

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
                st->leftovers_killed = (unsigned) slurm_kv_u64(verdict, key, 0);
                r->leftovers_killed += st->leftovers_killed;
                if (st->usage.mem_ev_oom_kill != LEASH_NULL)
                        ooms += st->usage.mem_ev_oom_kill;
        }
        if (es->n && (r->usage.mem_ev_oom_kill == LEASH_NULL || r->usage.mem_ev_oom_kill < ooms))
                r->usage.mem_ev_oom_kill = ooms;
}

/* What the Epilog reads, finds and decides, from the Prolog's state to the
 * report. */
struct epilog {
        struct slurm_ctx x;
        struct leash_result *r;
        struct leash_spec c;
        struct epilog_steps es;
        int state_fd, root_fd, job_fd;
        char *state, *verdict; /* NULL when absent or refused */
        char profile[64], pwhy[160], setup[1024], mode[16], source[4096];
        unsigned placed;
        bool have_job, trouble;
};

/* The errors a state or verdict kept (error.0, error.1, ...: at most max,
 * each read into size bytes), into the report's after who: said them. */
static void epilog_kept_errors(struct epilog *e, const char *text, unsigned max, size_t size, const char *who) {
        char key[32], err[1024];

        for (unsigned i = 0; text && i < max; i++) {
                snprintf(key, sizeof key, "error.%u", i);
                if (kv_get(text, key, err, size < sizeof err ? size : sizeof err) < 0)
                        break;
                slurm_ctx_error(&e->x, "%s: %s", who, err);
        }
}

/* The Prolog's setup error and the errors the supervisor kept in its
 * verdict, into the report's. */
static void epilog_errors(struct epilog *e) {
        if (e->setup[0])
                slurm_ctx_error(&e->x, "prolog: %s", e->setup);
        epilog_kept_errors(e, e->verdict, 8, 256, "supervisor");
}

/* The Prolog's state and the supervisor's verdict, the supervisor stopped
 * between the two reads. */
static void epilog_read_state(struct epilog *e) {
        struct slurm_ctx *x = &e->x;
        char why[4400] = "";
        int n;

        if (slurm_ctx_state_open(x, false, &e->state_fd, why, sizeof why) == 0 &&
            (n = slurm_state_read(e->state_fd, "state", &e->state)) < 0)
                snprintf(why, sizeof why, "%s", n == -EBADMSG ? "malformed: refused" : strerror(-n));
        if (!e->state) {
                slurm_ctx_error(x, "job %" PRIu32 ": no state from the Prolog (%s)", x->job.id, why[0] ? why : "none");
                e->trouble = true;
                if (e->state_fd >= 0)
                        stop_supervisor(x, e->state_fd, NULL);
                return;
        }
        config_from_state(&e->c, e->state, e->r->enforced);
        (void) kv_get(e->state, "profile", e->profile, sizeof e->profile);
        (void) kv_get(e->state, "profile_chosen_by", e->pwhy, sizeof e->pwhy);
        (void) kv_get(e->state, "setup_error", e->setup, sizeof e->setup);
        if (!x->job.requested_profile[0])
                (void) kv_get(e->state, "requested_profile", x->job.requested_profile, sizeof x->job.requested_profile);
        epilog_kept_errors(e, e->state, 32, 1024, "prolog");
        stop_supervisor(x, e->state_fd, e->state);
        if (slurm_state_read(e->state_fd, "verdict", &e->verdict) == -EBADMSG)
                slurm_ctx_error(x, "job %" PRIu32 ": the supervisor's verdict is malformed: refused", x->job.id);
}

/* What the state and the verdict say of the job: its profile, its tasks,
 * when it started, and what Slurm says of the batch script. */
static void epilog_job_facts(struct epilog *e) {
        struct leash_result *r = e->r;
        uint64_t mono, now;

        e->c.profile = e->profile[0] ? e->profile : NULL;
        if (e->state && kv_get(e->state, "profile_source", e->source, sizeof e->source) == 0 && e->source[0])
                e->c.profile_source = e->source;
        e->placed = (unsigned) slurm_kv_u64(e->verdict, "tasks_placed", 0);
        if (slurm_kv_u64(e->verdict, "tasks_refused", 0))
                slurm_ctx_error(&e->x,
                                "job %" PRIu32 ": %" PRIu64 " task(s) could not be placed in the job cgroup: refused",
                                e->x.job.id, slurm_kv_u64(e->verdict, "tasks_refused", 0));
        r->started_realtime_ns = slurm_kv_u64(e->state, "started_realtime_ns", 0);
        mono = slurm_kv_u64(e->state, "started_monotonic_ns", 0);
        now = now_ns(CLOCK_MONOTONIC);
        r->usage.wall_ns = mono && now > mono ? now - mono : LEASH_NULL;
        /* what Slurm says of the batch script: "exit:signal" */
        if (getenv("SLURM_JOB_EXIT_CODE2")) {
                int code = 0, sg = 0;
                if (sscanf(slurm_env("SLURM_JOB_EXIT_CODE2"), "%d:%d", &code, &sg) == 2) {
                        /* 125 is no signal: Slurm's SIG_OOM (253) as WTERMSIG
                         * reads it ("ExitCode=0:125" of an OOM job, seen with
                         * 22.05); the OOM killer's signal is SIGKILL */
                        if (sg == 125)
                                sg = SIGKILL;
                        r->status_code = sg ? -1 : code;
                        r->term_signal = sg;
                }
        }
}

/* mode own: the job cgroup leash's Prolog made, root/job_<ID>: its steps,
 * every process left in it killed, its figures read. */
static void epilog_own(struct epilog *e, const char *root) {
        struct slurm_ctx *x = &e->x;
        struct leash_result *r = e->r;
        unsigned leftovers;
        int n;

        e->have_job = true;
        snprintf(r->cgroup, sizeof r->cgroup, "%s/job_%" PRIu32, root, x->job.id);
        e->es.verdict = e->verdict;
        (void) slurm_for_each_step(e->job_fd, collect_step, &e->es);
        epilog_own_placement(x, r, e->placed, e->es.n);
        /* every process left in the job's subtree (steps and any cgroup a
         * job made below them), and what the step ends killed before */
        n = cgroupfs_signal_all(e->job_fd, 0, 0);
        leftovers = n > 0 ? (unsigned) n : 0;
        for (size_t i = 0; i < e->es.n; i++) {
                char key[96];
                snprintf(key, sizeof key, "step.%s.leftovers", e->es.steps[i].name);
                leftovers += (unsigned) slurm_kv_u64(e->verdict, key, 0);
        }
        r->leftovers_killed = leftovers;
        if (cgroupfs_populated(e->job_fd) > 0) {
                (void) cgroupfs_kill(e->job_fd);
                if (cgroupfs_wait_empty(e->job_fd, (int) (x->conf.kill_timeout_ns / NSEC_PER_MSEC)) < 0 &&
                    cgroupfs_populated(e->job_fd) > 0) {
                        slurm_ctx_error(x, "job %" PRIu32 ": processes survived SIGKILL for %s", x->job.id,
                                        "kill-timeout");
                        e->trouble = true;
                }
        }
        account_read(e->job_fd, &r->usage);
        for (size_t i = 0; i < e->es.n; i++) {
                uint64_t v, *sum = &r->usage.pids_events_max;
                read_step(&e->es.steps[i], e->job_fd);
                /* before 6.12 a refused fork counts in the forking task's
                 * cgroup (the step), not in the job whose pids.max refused it */
                v = e->es.steps[i].usage.pids_events_max;
                if (v != LEASH_NULL && (*sum == LEASH_NULL || *sum < v))
                        *sum = v;
        }
}

/* The job's cgroup, by mode: Slurm's (nest, from the verdict), leash's (own),
 * or gone. */
static void epilog_cgroup(struct epilog *e) {
        char root[4096], cgroup[4400];

        if (e->state && kv_get(e->state, "mode", e->mode, sizeof e->mode) == 0 && strcmp(e->mode, "nest") == 0) {
                epilog_nest(e->verdict, e->r, &e->es);
                epilog_nest_memory(e->verdict, &e->c, e->r);
                if (e->r->cgroup[0])
                        placement_adopted(e->r, "adopted: Slurm's job cgroup (mode nest: Slurm's cgroup plugin placed "
                                                "the tasks and holds memory, CPUs and devices; leash moved none)");
        } else if (slurm_cgroup_root(false, root, sizeof root, &e->root_fd, NULL) == 0 &&
                   slurm_job_cgroup_open(e->root_fd, e->x.job.id, &e->job_fd) == 0)
                epilog_own(e, root);
        else if (e->state && kv_get(e->state, "cgroup", cgroup, sizeof cgroup) == 0)
                slurm_ctx_error(&e->x, "job %" PRIu32 ": its cgroup %s is gone", e->x.job.id, cgroup);
}

/* The signals sent, the reason and the exit code. */
static void epilog_verdict(struct epilog *e) {
        struct leash_result *r = e->r;

        signals_from_verdict(r, e->verdict);
        sampling_from_verdict(r, &e->c, e->verdict);
        if (r->leftovers_killed && r->n_signals < LEASH_SIGNALS_MAX) {
                r->signals[r->n_signals].signal = SIGKILL;
                r->signals[r->n_signals].at_ns = r->usage.wall_ns == LEASH_NULL ? 0 : r->usage.wall_ns;
                r->signals[r->n_signals].why = "leftover";
                r->n_signals++;
        }
        r->reason = decide_reason(r, e->verdict, e->setup[0] != '\0', &r->exit_code);
        if (r->reason == LEASH_REASON_SETUP_ERROR)
                r->exit_code = r->term_signal ? 128 + r->term_signal : r->status_code > 0 ? r->status_code : 0;
}

/* The cgroups removed, then the report written: the report says the truth. */
static void epilog_report(struct epilog *e) {
        struct slurm_ctx *x = &e->x;
        struct slurm_report sr = {0};
        _cleanup_free_ char *report = NULL;

        sr.job = &x->job;
        sr.profile_why = e->pwhy[0] ? e->pwhy : NULL;
        sr.on_error = slurm_on_error_to_string(x->conf.on_error);
        sr.tasks_placed = e->placed;
        sr.nest = strcmp(e->mode, "nest") == 0;
        sr.steps = e->es.steps;
        sr.n_steps = e->es.n;
        if (e->have_job) {
                int k;
                close(e->job_fd);
                e->job_fd = -1;
                k = slurm_job_cgroup_remove(e->root_fd, x->job.id);
                if (k < 0) {
                        slurm_ctx_error(x, "job %" PRIu32 ": remove the cgroups: %s", x->job.id, strerror(-k));
                        e->trouble = true;
                }
        }
        sr.errors = x->errors;
        sr.n_errors = x->n_errors;
        if (slurm_report_format(&e->c, e->r, &sr, &report) < 0) {
                log_error("job %" PRIu32 ": format the report: json-c is not available", x->job.id);
                e->trouble = true;
        } else if (write_report(x, report) < 0)
                e->trouble = true;
}

int slurm_epilog(void) {
        struct epilog e = {.state_fd = -1, .root_fd = -1, .job_fd = -1};
        int rc;

        e.r = calloc(1, sizeof *e.r);
        if (!e.r) {
                log_error("epilog: %s", strerror(ENOMEM));
                return 1;
        }
        if (slurm_ctx_load_job(&e.x) < 0) {
                free(e.r);
                return EXIT_LEASH_FAILED;
        }
        slurm_ctx_load_conf(&e.x);
        e.r->status_code = -1;
        account_usage_init(&e.r->usage);
        config_from_state(&e.c, NULL, e.r->enforced);

        epilog_read_state(&e);
        epilog_errors(&e);
        epilog_job_facts(&e);
        epilog_cgroup(&e);
        epilog_verdict(&e);
        epilog_report(&e);
        slurm_ctx_state_remove(&e.x);

        rc = e.trouble && e.x.conf.on_error == SLURM_ON_ERROR_DRAIN ? 1 : 0;
        if (e.job_fd >= 0)
                close(e.job_fd);
        if (e.root_fd >= 0)
                close(e.root_fd);
        if (e.state_fd >= 0)
                close(e.state_fd);
        free(e.state);
        free(e.verdict);
        free(e.es.steps);
        free(e.r);
        slurm_ctx_done(&e.x);
        return rc;
}
