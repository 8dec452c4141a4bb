/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reports a person reads: the text report (`leash run --report-format
 * text`), isolate(1)'s meta file, the one-line summary leash run prints
 * when a limit ended the job, and the phrases the JSON report shares with
 * them (the job's name, an escaped process's end, the devices' note, the
 * likely cause of a failure). No JSON here: report.c writes JSON and kv
 * and calls this file for text; this file calls nothing of report.c.
 */
#include "report-text.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../basic/time-util.h"
#include "../basic/utf8.h"
#include "../engine/spec/devices.h"
#include "../engine/placement/placement.h"
#include "../engine/sample/sample.h"
#include "../sandbox/caps.h"
#include "history.h"

/* The job's name: --name, else its command's base name, as leash run names
 * the cgroup; "job" for neither. A report without a cgroup (placement none)
 * has no other place for it. */
const char *report_text_job_name(const struct leash_spec *c) {
        const char *name = c->name, *slash;
        if ((!name || !*name) && c->argv && c->argv[0]) {
                slash = strrchr(c->argv[0], '/');
                name = slash && slash[1] ? slash + 1 : c->argv[0];
        }
        return name && *name ? name : "job";
}

const char *report_text_escape_end(enum leash_escape_end e) {
        return e == LEASH_ESCAPE_KILLED ? "killed" : e == LEASH_ESCAPE_ENDED ? "ended" : "running";
}

/* How far the device program holds against the job itself (tests/integration/devices.sh). */
const char *report_text_devices_note(const struct leash_spec *c, const struct leash_result *r) {
        const struct leash_sandbox *s = &c->sandbox;
        bool admin = s->caps_mode == LEASH_CAPS_KEEP ||
                     (s->caps_mode == LEASH_CAPS_LIST && (s->caps_keep & (1ULL << 21))); /* CAP_SYS_ADMIN */

        if (!r->devices_insns)
                return "no device program needed: nothing is restricted";
        if (admin)
                return "weakened: the job keeps CAP_SYS_ADMIN and can detach the device program (BPF_PROG_DETACH)";
        if (r->isolation && strncmp(r->isolation, "none", 4) == 0)
                return "weakened: the job shares leash's uid and can move itself out of the job cgroup, leaving the "
                       "device program (--isolate or --user prevents that); its sub-cgroups stay under it";
        return "opening or making any other device node fails with EPERM, in the job's sub-cgroups too";
}

/* A limit's value as a user writes it: 512M, 1.5s, 2 cores, 100. */
static void text_limit_value(enum leash_limit l, uint64_t v, char *buf, size_t size) {
        if (v == LEASH_MAX)
                snprintf(buf, size, "max");
        else if (l == LEASH_LIMIT_CPUS)
                snprintf(buf, size, "%g cores", (double) v / 1e6);
        else if (l == LEASH_LIMIT_CPU_TIME || l == LEASH_LIMIT_WALL_TIME)
                format_duration(v, buf, size);
        else if (history_limit_unit(l) == HUNIT_COUNT)
                snprintf(buf, size, "%llu", (unsigned long long) v);
        else
                format_size(v, buf, size);
}

/* The title every report a person reads has (leash report's pages too). */
static void text_title(const struct leash_spec *c, FILE *f) {
        fputs("leash report: ", f);
        utf8_fputs_escaped(report_text_job_name(c), f);
        fputs("\n", f);
}

/* The title, the command, the ending and where the job ran. */
static void text_head(const struct leash_spec *c, const struct leash_result *r, FILE *f) {
        size_t argc = 0;

        text_title(c, f);
        while (c->argv && c->argv[argc])
                argc++;
        fprintf(f, "command:   ");
        utf8_fputs_command(f, c->argv, argc, NULL); /* pasted into a shell, runs the same */
        fputc('\n', f);
        fprintf(f, "reason:    %s (exit %d", leash_result_reason(r), r->exit_code);
        if (r->term_signal)
                fprintf(f, ", killed by SIG%s", signal_name(r->term_signal));
        fprintf(f, ")\n");
        fprintf(f, "placement: %s", placement_kind_to_string(r->placement));
        if (r->placement == PLACEMENT_NONE) /* the kind only: the JSON report says why */
                fputs(" (no cgroup: the job ran as its process tree)", f);
        fputc('\n', f);
}

static void text_usage(const struct leash_usage *x, FILE *f) {
        fprintf(f, "wall time: %.3f s\n", (double) x->wall_ns / 1e9);
        if (x->cpu_usage_us != LEASH_NULL)
                fprintf(f, "cpu time:  %.3f s (user %.3f s, system %.3f s)\n", (double) x->cpu_usage_us / 1e6,
                        (double) x->cpu_user_us / 1e6, (double) x->cpu_system_us / 1e6);
        if (x->memory_peak != LEASH_NULL)
                fprintf(f, "memory:    peak %.1f MiB (%s)\n", (double) x->memory_peak / 1048576.0,
                        x->memory_peak_basis);
        if (x->pids_peak != LEASH_NULL)
                fprintf(f, "pids:      peak %llu\n", (unsigned long long) x->pids_peak);
}

/* Each limit asked for and what enforced it, the devices, and the
 * warnings leash run printed for the limits enforced weaker than asked. */
static void text_limits(const struct leash_spec *c, const struct leash_result *r, FILE *f) {
        char buf[64];

        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                if (!leash_spec_has(c, (enum leash_limit) l))
                        continue;
                text_limit_value((enum leash_limit) l, c->limit[l], buf, sizeof buf);
                fprintf(f, "limit:     %s %s by %s%s%s\n", leash_limit_to_string((enum leash_limit) l), buf,
                        leash_enforcer_to_string(r->enforced[l]), r->enforce_note[l] ? ": " : "",
                        r->enforce_note[l] ? r->enforce_note[l] : "");
        }
        if (r->devices_by) {
                char what[1400];
                devices_describe(&c->devices, what, sizeof what);
                fprintf(f, "limit:     devices (%s) by %s: %s\n", what, r->devices_by, report_text_devices_note(c, r));
        }
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                char line[512];
                if (leash_limit_weakness(c, r->enforced, r->enforce_note, (enum leash_limit) l, false, line,
                                         sizeof line) > 0)
                        fprintf(f, "warning:   %s\n", line);
        }
}

/* The identity, capabilities and filters the job was given, and what
 * sampling saw. */
static void text_sandbox_sampling(const struct leash_spec *c, const struct leash_result *r, FILE *f) {
        char buf[64];

        if (r->sandbox.applied) {
                char caps[1024];
                caps_format_mask(r->sandbox.cap_effective, caps, sizeof caps);
                fprintf(f, "identity:  uid %u gid %u%s\n", (unsigned) r->sandbox.uid, (unsigned) r->sandbox.gid,
                        r->sandbox.identity_switched ? " (switched)" : "");
                fprintf(f, "caps:      %s%s\n", caps[0] ? caps : "none",
                        r->sandbox.no_new_privs ? ", no_new_privs" : "");
                for (unsigned i = 0; i < LEASH_FILTER_COUNT; i++)
                        if (r->sandbox.seccomp & (1U << i))
                                fprintf(f, "seccomp:   %s (%s)\n", leash_filter_to_string(1U << i),
                                        leash_seccomp_action_to_string(c->sandbox.seccomp_action));
        }
        if (r->sampling.interval_ns) {
                format_duration(r->sampling.interval_ns, buf, sizeof buf);
                fprintf(f, "sampling:  %llu samples every %s", (unsigned long long) r->sampling.samples, buf);
                if (r->sampling.peak[LEASH_FIG_CORES] != LEASH_NULL)
                        fprintf(f, ", peak %.2f cores", (double) r->sampling.peak[LEASH_FIG_CORES] / 1e6);
                if (r->sampling.peak[LEASH_FIG_PROCS] != LEASH_NULL)
                        fprintf(f, ", peak %llu processes", (unsigned long long) r->sampling.peak[LEASH_FIG_PROCS]);
                fputc('\n', f);
        }
}

/* What happened on the way: leash's signals, the processes that left the
 * job cgroup, leash or its watchdog moved into it by the job. */
static void text_events(const struct leash_result *r, FILE *f) {
        for (unsigned i = 0; i < r->n_signals; i++)
                fprintf(f, "signal:    SIG%s at %.3f s (%s)\n", signal_name(r->signals[i].signal),
                        (double) r->signals[i].at_ns / 1e9, r->signals[i].why);
        for (unsigned i = 0; i < r->n_escaped; i++) { /* comm and cgroup are the job's words */
                fprintf(f, "escaped:   pid %d (", (int) r->escaped[i].pid);
                utf8_fputs_escaped(r->escaped[i].comm, f);
                fprintf(f, ") to ");
                utf8_fputs_escaped(r->escaped[i].cgroup, f);
                fprintf(f, ": %s\n", report_text_escape_end(r->escaped[i].end));
        }
        if (r->escaped_unnamed)
                fprintf(f, "escaped:   %u more\n", r->escaped_unnamed);
        if (r->escaped_incomplete)
                fprintf(f, "escaped:   the list may be incomplete: processes that left the job cgroup may still run\n");
        for (unsigned i = 0; i < r->n_moved; i++) {
                fprintf(f, "moved:     %s into ", r->moved[i].watchdog ? "the watchdog" : "leash");
                utf8_fputs_escaped(r->moved[i].cgroup, f);
                fprintf(f, " by the job at %.3f s: ", (double) r->moved[i].at_ns / 1e9);
                if (r->moved[i].back_to[0]) {
                        fprintf(f, "moved back to ");
                        utf8_fputs_escaped(r->moved[i].back_to, f);
                        fputc('\n', f);
                } else
                        fprintf(f, "could not leave (%s)\n", strerror(r->moved[i].error));
        }
}

void report_text_write(const struct leash_spec *c, const struct leash_result *r, FILE *f) {
        text_head(c, r, f);
        text_usage(&r->usage, f);
        text_limits(c, r, f);
        text_sandbox_sampling(c, r, f);
        text_events(r, f);
}

/* How the job ended after leash's signals: which signal did it, or that it
 * exited by itself ("killed by SIGKILL after the 5s grace", "it died of the
 * soft signal SIGXCPU", "it exited with status 3 within the grace"). */
static void summary_ending(const struct leash_spec *c, const struct leash_result *r, char *buf, size_t size) {
        char grace[32];
        bool grace_kill = false;

        format_duration(c->grace_ns, grace, sizeof grace);
        for (unsigned i = 0; i < r->n_signals; i++)
                if (r->signals[i].signal == SIGKILL && r->signals[i].why && strcmp(r->signals[i].why, "grace") == 0)
                        grace_kill = true;
        if (r->term_signal == SIGKILL && grace_kill)
                snprintf(buf, size, "it outlived the %s grace and was killed by SIGKILL", grace);
        else if (r->term_signal == SIGKILL)
                snprintf(buf, size, "killed by SIGKILL");
        else if (r->term_signal)
                snprintf(buf, size, "it died of SIG%s", signal_name(r->term_signal));
        else if (r->status_code >= 0)
                snprintf(buf, size, "it exited with status %d%s", r->status_code,
                         grace_kill ? " (leftover processes killed after the grace)" : "");
        else
                snprintf(buf, size, "it ended");
}

/* A crash or a failure where memory is only a per-process RLIMIT_AS: the
 * refused allocation may be why, and the job's own exit says nothing of it. */
static void summary_rlimit_hint(const struct leash_spec *c, const struct leash_result *r, char *buf, size_t size) {
        char v[32];

        format_bytes_human(c->limit[LEASH_LIMIT_MEMORY], v, sizeof v);
        if (r->term_signal)
                snprintf(buf, size,
                         "the job died of SIG%s; memory is limited per process by RLIMIT_AS (%s) here: an "
                         "allocation it refused may be why",
                         signal_name(r->term_signal), v);
        else
                snprintf(buf, size,
                         "the job exited with status %d; memory is limited per process by RLIMIT_AS (%s) here: an "
                         "allocation it refused may be why",
                         r->status_code, v);
}

/* A failure under --fsize that leash did not see as SIGXFSZ: status 153
 * (128 + SIGXFSZ) is what a shell returns when its command died of it (the
 * shell reaped it); any other failure may be a write the kernel refused with
 * EFBIG to a process that ignores SIGXFSZ (Python does). The reason stays
 * exit; this says only what the status suggests. */
static bool summary_fsize_hint(const struct leash_spec *c, const struct leash_result *r, bool any_status, char *buf,
                               size_t size) {
        char v[32];

        if (r->term_signal || r->status_code == 0 || r->enforced[LEASH_LIMIT_FSIZE] != LEASH_BY_RLIMIT)
                return false;
        format_bytes_human(c->limit[LEASH_LIMIT_FSIZE], v, sizeof v);
        if (r->status_code == 128 + SIGXFSZ)
                snprintf(buf, size,
                         "the job exited with status %d, a shell's status for a command that died of SIGXFSZ: a "
                         "write past the fsize limit %s (RLIMIT_FSIZE) may be why",
                         r->status_code, v);
        else if (any_status)
                snprintf(buf, size,
                         "the job exited with status %d; files are limited to %s by RLIMIT_FSIZE here: a write past "
                         "it fails with EFBIG where SIGXFSZ is ignored (Python ignores it), which may be why",
                         r->status_code, v);
        else
                return false;
        return true;
}

bool report_text_likely_cause(const struct leash_spec *c, const struct leash_result *r, char *buf, size_t size) {
        if (summary_fsize_hint(c, r, false, buf, size))
                return true;
        if (r->enforced[LEASH_LIMIT_MEMORY] == LEASH_BY_RLIMIT && leash_spec_has(c, LEASH_LIMIT_MEMORY)) {
                summary_rlimit_hint(c, r, buf, size);
                return true;
        }
        return summary_fsize_hint(c, r, true, buf, size);
}

int leash_report_summary(const struct leash_spec *c, const struct leash_result *r, char **ret_text) {
        char lim[32] = "", end[128];
        char tail[320] = "";
        int n;

        summary_ending(c, r, end, sizeof end);
        switch (r->reason) {
        case LEASH_REASON_WALL_TIME:
        case LEASH_REASON_CPU_TIME:
                format_duration(
                        c->limit[r->reason == LEASH_REASON_WALL_TIME ? LEASH_LIMIT_WALL_TIME : LEASH_LIMIT_CPU_TIME],
                        lim, sizeof lim);
                snprintf(tail, sizeof tail, "%s limit %s reached: sent SIG%s; %s", leash_reason_to_string(r->reason),
                         lim, signal_name(c->soft_signal), end);
                break;
        case LEASH_REASON_MEMORY:
                snprintf(tail, sizeof tail, "memory limit reached: OOM-killed");
                break;
        case LEASH_REASON_PIDS:
                snprintf(tail, sizeof tail, "pids limit reached: a fork was refused");
                break;
        case LEASH_REASON_INTERRUPTED:
                snprintf(tail, sizeof tail, "interrupted by SIG%s, passed to the job; %s",
                         signal_name(r->interrupt_signal), end);
                break;
        case LEASH_REASON_SECCOMP:
                snprintf(tail, sizeof tail, "a syscall denied by the seccomp filter killed the job (SIGSYS)");
                break;
        case LEASH_REASON_MEASURED: {
                enum leash_fig f = (enum leash_fig) r->sampling.limit_reached;
                bool bytes = strcmp(leash_fig_unit(f), "bytes") == 0;
                char seen[32], iv[32], late[32];
                if (r->sampling.limit_reached < 0)
                        break;
                if (bytes) {
                        format_bytes_human(c->sampling.limit[f], lim, sizeof lim);
                        format_bytes_human(r->sampling.limit_value_at, seen, sizeof seen);
                } else {
                        sample_fig_format(f, c->sampling.limit[f], lim, sizeof lim);
                        sample_fig_format(f, r->sampling.limit_value_at, seen, sizeof seen);
                }
                format_duration(r->sampling.interval_ns, iv, sizeof iv);
                snprintf(late, sizeof late, "%.3f s",
                         (double) (r->sampling.limit_seen_ns - r->sampling.limit_below_ns) / 1e9);
                if (r->sampling.limit_partial)
                        snprintf(tail, sizeof tail, "%s limit %s counted as passed: %s (%s seen): sent SIG%s; %s",
                                 leash_fig_name(f), lim, leash_unjudged_to_string(r->sampling.limit_partial), seen,
                                 signal_name(c->soft_signal), end);
                else
                        snprintf(tail, sizeof tail,
                                 "%s limit %s passed (%s, sampled every %s, seen at most %s after it was): sent SIG%s; "
                                 "%s",
                                 leash_fig_name(f), lim, seen, iv, late, signal_name(c->soft_signal), end);
                break;
        }
        case LEASH_REASON_FSIZE:
                format_bytes_human(c->limit[LEASH_LIMIT_FSIZE], lim, sizeof lim);
                snprintf(tail, sizeof tail,
                         "fsize limit %s reached: a write past it (RLIMIT_FSIZE) was refused with SIGXFSZ; %s", lim,
                         end);
                break;
        case LEASH_REASON_SIGNAL:
        case LEASH_REASON_EXIT:
                if (report_text_likely_cause(c, r, tail, sizeof tail))
                        break;
                *ret_text = NULL;
                return 0;
        default:
                *ret_text = NULL;
                return 0;
        }
        n = asprintf(ret_text, "%s (exit %d, wall %.3f s, cpu %.3f s)", tail, r->exit_code,
                     (double) r->usage.wall_ns / 1e9,
                     r->usage.cpu_usage_us == LEASH_NULL ? 0.0 : (double) r->usage.cpu_usage_us / 1e6);
        return n < 0 ? -ENOMEM : 0;
}

/* ---- isolate(1)'s meta file ----
 * "key:value" lines with isolate's keys and meanings (its META-FILES
 * section), so that a judge that reads isolate's meta reads leash's: time
 * (CPU, user + system, of the whole job), time-wall, max-rss (KiB, the
 * largest process: wait4's ru_maxrss), csw-voluntary, csw-forced, cg-mem
 * (KiB, the cgroup's memory.peak) and cg-oom-killed where the job had a
 * memory controller, exitcode or exitsig as the job ended, status (RE
 * nonzero exit, SG a fatal signal, TO a time limit, XX leash could not run
 * it) with a one-line message, killed:1 when leash ended the job. Where
 * memory is only a per-process RLIMIT_AS (no controller), a crash or a
 * failure may be a refused allocation: the message says so, as it says
 * which sampled limit (--limit) ended a job. */

static void isolate_status(const struct leash_spec *c, const struct leash_result *r, FILE *f) {
        const char *st = NULL;
        char msg[512] = "", hint[320] = "";
        bool rlimit_mem = r->enforced[LEASH_LIMIT_MEMORY] == LEASH_BY_RLIMIT && leash_spec_has(c, LEASH_LIMIT_MEMORY);

        if (r->reason == LEASH_REASON_WALL_TIME || r->reason == LEASH_REASON_CPU_TIME) {
                st = "TO";
                snprintf(msg, sizeof msg, "Time limit exceeded%s",
                         r->reason == LEASH_REASON_WALL_TIME ? " (wall clock)" : "");
        } else if (r->reason == LEASH_REASON_SETUP_ERROR || r->reason == LEASH_REASON_EXEC_ERROR) {
                st = "XX";
                snprintf(msg, sizeof msg, "%s%s%s", r->exec_step ? r->exec_step : "setup", r->exec_errno ? ": " : "",
                         r->exec_errno ? strerror(r->exec_errno) : "");
        } else if (r->term_signal) {
                st = "SG";
                snprintf(msg, sizeof msg, "Caught fatal signal %d", r->term_signal);
        } else if (r->status_code > 0) {
                st = "RE";
                snprintf(msg, sizeof msg, "Exited with error status %d", r->status_code);
        }
        if (r->reason == LEASH_REASON_MEMORY)
                snprintf(hint, sizeof hint, "memory limit reached: OOM-killed");
        else if (r->reason == LEASH_REASON_MEASURED && r->sampling.limit_reached >= 0)
                snprintf(hint, sizeof hint, "the sampled %s limit (--limit) passed: leash ended it",
                         leash_fig_name((enum leash_fig) r->sampling.limit_reached));
        else if (st && strcmp(st, "TO") != 0 && strcmp(st, "XX") != 0 && rlimit_mem)
                summary_rlimit_hint(c, r, hint, sizeof hint);
        if (!st)
                return;
        fprintf(f, "status:%s\nmessage:", st);
        utf8_fputs_escaped(msg, f);
        if (hint[0]) {
                fputs(" (", f);
                utf8_fputs_escaped(hint, f);
                fputc(')', f);
        }
        fputc('\n', f);
}

void report_text_isolate(const struct leash_spec *c, const struct leash_result *r, FILE *f) {
        const struct leash_usage *x = &r->usage;
        uint64_t cpu_ms = x->cpu_usage_us == LEASH_NULL ? 0 : x->cpu_usage_us / 1000, wall_ms = x->wall_ns / 1000000;
        bool ended = r->reason != LEASH_REASON_SETUP_ERROR && r->reason != LEASH_REASON_EXEC_ERROR;

        fprintf(f, "time:%llu.%03llu\ntime-wall:%llu.%03llu\n", (unsigned long long) (cpu_ms / 1000),
                (unsigned long long) (cpu_ms % 1000), (unsigned long long) (wall_ms / 1000),
                (unsigned long long) (wall_ms % 1000));
        if (x->main_maxrss_bytes != LEASH_NULL)
                fprintf(f, "max-rss:%llu\n", (unsigned long long) (x->main_maxrss_bytes / 1024));
        if (x->main_nvcsw != LEASH_NULL && x->main_nivcsw != LEASH_NULL)
                fprintf(f, "csw-voluntary:%llu\ncsw-forced:%llu\n", (unsigned long long) x->main_nvcsw,
                        (unsigned long long) x->main_nivcsw);
        if (x->memory_peak != LEASH_NULL && x->memory_peak_basis && strcmp(x->memory_peak_basis, "memory.peak") == 0)
                fprintf(f, "cg-mem:%llu\n", (unsigned long long) (x->memory_peak / 1024));
        if (r->reason == LEASH_REASON_MEMORY || (x->mem_ev_oom_kill != LEASH_NULL && x->mem_ev_oom_kill > 0))
                fputs("cg-oom-killed:1\n", f);
        /* a job leash ended on a time limit is "killed", with neither (isolate) */
        if (ended && r->reason != LEASH_REASON_WALL_TIME && r->reason != LEASH_REASON_CPU_TIME) {
                if (r->term_signal)
                        fprintf(f, "exitsig:%d\n", r->term_signal);
                else if (r->status_code >= 0)
                        fprintf(f, "exitcode:%d\n", r->status_code);
        }
        isolate_status(c, r, f);
        if (r->reason == LEASH_REASON_WALL_TIME || r->reason == LEASH_REASON_CPU_TIME ||
            r->reason == LEASH_REASON_MEASURED || r->reason == LEASH_REASON_KILLED)
                fputs("killed:1\n", f);
}
