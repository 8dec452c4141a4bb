/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The report. JSON is built with json-c (this is the one file that includes
 * it, for reports written and read back); kv flattens the same tree into
 * isolate-style "key:value" lines with dotted keys, so the two can never
 * disagree; the text a person reads (the text report, isolate's meta file,
 * the summary line) is report-text.c's, which knows no JSON.
 * Figures the kernel did not give are null (omitted in kv), never invented.
 * Schema 1 is documented in leash(1), REPORT FORMAT. json-c is linked
 * statically into the leash binary (HACKING.md), so it costs a run nothing
 * until a JSON or kv report is built.
 */
#include <errno.h>
#include <signal.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../basic/time-util.h"
#include "../basic/utf8.h"
#include "../sandbox/caps.h"
#include "../engine/spec/devices.h"
#include "history.h"
#include "../engine/leash.h"
#include "../engine/placement/placement.h"
#include "report.h"
#include "report-text.h"
#include "../engine/placement/monitor.h"
#include "../engine/sample/sample.h"

static void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_object_putp)

/* Seconds with microsecond precision, printed as decimals ("1.002639"),
 * not as the nearest binary double ("1.0026391320000001"). */
static json_object *decimal(double v) {
        char buf[48];
        size_t n = (size_t) snprintf(buf, sizeof buf, "%.6f", v);
        while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
                buf[--n] = '\0';
        return json_object_new_double_s(strtod(buf, NULL), buf);
}

static json_object *u64_or_null(uint64_t v) {
        return v == LEASH_NULL ? NULL : json_object_new_uint64(v);
}

static json_object *seconds(uint64_t v, uint64_t per_second) {
        return v == LEASH_NULL ? NULL : decimal((double) v / (double) per_second);
}

static json_object *limit_value(enum leash_limit l, uint64_t v) {
        if (v == LEASH_MAX)
                return json_object_new_string("max");
        switch (l) {
        case LEASH_LIMIT_CPUS:
                return decimal((double) v / 1e6);
        case LEASH_LIMIT_CPU_TIME:
        case LEASH_LIMIT_WALL_TIME:
                return decimal((double) v / 1e9);
        default:
                return json_object_new_uint64(v);
        }
}

static const char *limit_unit(enum leash_limit l) {
        return history_unit_name(history_limit_unit(l));
}

/* Strings from the user or the job (arguments, paths, names) may be any bytes;
 * a JSON text must be UTF-8. Each byte outside valid UTF-8 becomes U+FFFD (the
 * exact arguments are kept losslessly in command_base64). */
static json_object *jstr_len(const char *s, size_t len) {
        _cleanup_free_ char *copy = s ? strndup(s, len) : NULL, *fixed = NULL;

        if (!copy)
                return NULL;
        if (utf8_is_valid(copy))
                return json_object_new_string(copy);
        fixed = utf8_replace_invalid(copy);
        return fixed ? json_object_new_string(fixed) : NULL;
}

static json_object *jstr(const char *s) {
        return s ? jstr_len(s, strlen(s)) : NULL;
}

static json_object *base64(const char *s) {
        static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        size_t n = strlen(s), o = 0;
        _cleanup_free_ char *out = malloc(4 * (n / 3 + 1) + 1);
        const unsigned char *u = (const unsigned char *) s;

        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i += 3) {
                uint32_t v =
                        (uint32_t) u[i] << 16 | (i + 1 < n ? (uint32_t) u[i + 1] << 8 : 0) | (i + 2 < n ? u[i + 2] : 0);
                out[o++] = b64[v >> 18 & 63];
                out[o++] = b64[v >> 12 & 63];
                out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
                out[o++] = i + 2 < n ? b64[v & 63] : '=';
        }
        out[o] = '\0';
        return json_object_new_string(out);
}

static json_object *signal_json(int sig) {
        const char *n = sig ? signal_name(sig) : NULL;
        return n ? json_object_new_string(n) : NULL;
}

static json_object *cap_set(uint64_t mask) {
        char buf[1024];
        caps_format_mask(mask, buf, sizeof buf);
        return json_object_new_string(buf);
}

/* identity, capabilities, no_new_privs, filter: what the job was given */
/* the names of "K=V" entries: values may be secrets */
static void env_names(json_object *a, char *const *l, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const char *eq = strchr(l[i], '=');
                json_object_array_add(a, jstr_len(l[i], eq ? (size_t) (eq - l[i]) : strlen(l[i])));
        }
}

static json_object *sandbox_json(const struct leash_spec *c, const struct leash_result *r) {
        const struct leash_sandbox_result *x = &r->sandbox;
        const struct leash_sandbox *in = &c->sandbox;
        json_object *o = json_object_new_object(), *id, *a, *caps, *f;

        json_object_object_add(o, "applied", json_object_new_boolean(x->applied));
        id = json_object_new_object();
        json_object_object_add(id, "uid", json_object_new_int64(x->uid));
        json_object_object_add(id, "gid", json_object_new_int64(x->gid));
        a = json_object_new_array();
        for (unsigned i = 0; i < x->n_groups; i++)
                json_object_array_add(a, json_object_new_int64(x->groups[i]));
        json_object_object_add(id, "groups", a);
        json_object_object_add(id, "switched", json_object_new_boolean(x->identity_switched));
        json_object_object_add(o, "identity", id);
        json_object_object_add(o, "no_new_privs", json_object_new_boolean(x->no_new_privs));

        caps = json_object_new_object();
        json_object_object_add(caps, "mode",
                               json_object_new_string(in->caps_mode == LEASH_CAPS_KEEP   ? "keep"
                                                      : in->caps_mode == LEASH_CAPS_LIST ? "list"
                                                                                         : "none"));
        json_object_object_add(caps, "effective", cap_set(x->cap_effective));
        json_object_object_add(caps, "permitted", cap_set(x->cap_permitted));
        json_object_object_add(caps, "inheritable", cap_set(x->cap_inheritable));
        json_object_object_add(caps, "ambient", cap_set(x->cap_ambient));
        json_object_object_add(caps, "bounding", cap_set(x->cap_bounding));
        json_object_object_add(caps, "bounding_dropped", json_object_new_boolean(x->bounding_dropped));
        json_object_object_add(o, "capabilities", caps);

        f = json_object_new_object();
        a = json_object_new_array();
        for (unsigned i = 0; i < LEASH_FILTER_COUNT; i++)
                if (x->seccomp & (1U << i))
                        json_object_array_add(a, json_object_new_string(leash_filter_to_string(1U << i)));
        json_object_object_add(f, "filters", a);
        json_object_object_add(f, "action",
                               x->seccomp ? json_object_new_string(leash_seccomp_action_to_string(in->seccomp_action))
                                          : NULL);
        json_object_object_add(f, "instructions",
                               x->seccomp ? json_object_new_int((int) x->filter_instructions) : NULL);
        json_object_object_add(o, "seccomp", f);

        f = json_object_new_object();
        json_object_object_add(f, "clean", json_object_new_boolean(in->clean_env));
        a = json_object_new_array();
        env_names(a, in->env_first, in->n_env_first); /* --gpus' */
        env_names(a, in->env_set, in->n_env_set);
        json_object_object_add(f, "set", a);
        a = json_object_new_array();
        for (size_t i = 0; i < in->n_env_unset; i++)
                json_object_array_add(a, jstr(in->env_unset[i]));
        json_object_object_add(f, "unset", a);
        json_object_object_add(o, "environment", f);
        json_object_object_add(o, "chdir", jstr(in->chdir));
        json_object_object_add(o, "stdin", json_object_new_string(in->no_stdin ? "null" : "inherited"));
        json_object_object_add(o, "fds_above_2", json_object_new_string(in->keep_fds ? "inherited" : "closed"));
        return o;
}

/* A sampled figure in its column's unit: seconds and cores as decimals. */
static json_object *fig_json(enum leash_fig f, uint64_t v) {
        const char *unit = leash_fig_unit(f);
        if (v == LEASH_NULL)
                return NULL;
        const char *col = leash_fig_column(f);
        size_t len = strlen(col);
        /* "_s" columns are seconds; "_us" ones (pressure stall totals) stay integers */
        if (strcmp(unit, "ucores") == 0 || (strcmp(unit, "us") == 0 && len > 2 && strcmp(col + len - 2, "_s") == 0))
                return decimal((double) v / 1e6);
        return json_object_new_uint64(v);
}

static const char *fig_unit_text(enum leash_fig f) {
        const char *unit = leash_fig_unit(f);
        return strcmp(unit, "ucores") == 0 ? "cores" : strcmp(unit, "us") == 0 ? "s" : unit;
}

/* A --limit figure's key in "limits": its name, or NAME_sampled where a limit
 * of that name is there already (-m 200M --limit memory=100M: both, never one
 * over the other). */
static const char *measured_limit_key(enum leash_fig f, json_object *limits, char *buf, size_t size) {
        const char *name = leash_fig_name(f);

        if (!json_object_object_get_ex(limits, name, NULL))
                return name;
        snprintf(buf, size, "%s_sampled", name);
        return buf;
}

/* --limit FIGURE=VALUE: in "limits", enforced by sampling */
static void measured_limits_json(const struct leash_spec *c, const struct leash_result *r, json_object *o) {
        char iv[32], note[256], key[64];

        format_duration(r->sampling.interval_ns, iv, sizeof iv);
        snprintf(note, sizeof note,
                 "checked at each sample, every %s: the job may pass it for up to one interval and a sample's read "
                 "before it is seen (more where slow reads stretch the interval; sampling.limit_reached says how late)",
                 iv);
        for (int f = 0; f < _LEASH_FIG_MAX; f++) {
                json_object *m;
                if (c->sampling.limit[f] == 0)
                        continue;
                m = json_object_new_object();
                json_object_object_add(m, "value", fig_json((enum leash_fig) f, c->sampling.limit[f]));
                json_object_object_add(m, "unit", json_object_new_string(fig_unit_text((enum leash_fig) f)));
                json_object_object_add(m, "enforced_by", json_object_new_string("sampling"));
                json_object_object_add(m, "note", json_object_new_string(note));
                json_object_object_add(o, measured_limit_key((enum leash_fig) f, o, key, sizeof key), m);
        }
}

/* --gpus/--devices: in "limits" as "devices", with what enforced them */
static void devices_limit_json(const struct leash_spec *c, const struct leash_result *r, json_object *o) {
        char what[1400];
        json_object *m;

        if (!r->devices_by)
                return;
        devices_describe(&c->devices, what, sizeof what);
        m = json_object_new_object();
        json_object_object_add(m, "value", json_object_new_string(what));
        json_object_object_add(m, "enforced_by", json_object_new_string(r->devices_by));
        if (r->devices_insns)
                json_object_object_add(m, "instructions", json_object_new_int((int) r->devices_insns));
        json_object_object_add(m, "note", json_object_new_string(report_text_devices_note(c, r)));
        json_object_object_add(o, "devices", m);
}

/* usage.gpus[]: each GPU a process of the job used, from the samples
 * (gpu.c); usage.gpu_accounting says whether there could be any. */
static void gpus_json(const struct leash_result *r, json_object *u) {
        const struct gpu_track *t = &r->sampling.gpu;
        json_object *a = json_object_new_array(), *acc = json_object_new_object();

        for (unsigned i = 0; i < t->n; i++) {
                const struct gpu_life *l = &t->g[i];
                json_object *g = json_object_new_object();
                json_object_object_add(g, "id", json_object_new_string(l->last.id));
                json_object_object_add(g, "uuid", l->last.uuid[0] ? jstr(l->last.uuid) : NULL);
                json_object_object_add(g, "name", l->last.name[0] ? jstr(l->last.name) : NULL);
                json_object_object_add(g, "source", json_object_new_string(l->last.source));
                json_object_object_add(g, "memory_bytes_at_end", u64_or_null(l->last.mem_bytes));
                json_object_object_add(g, "memory_peak_bytes", json_object_new_uint64(l->mem_peak));
                json_object_object_add(g, "utilization_avg_pct",
                                       l->util_n ? decimal((double) l->util_sum / (double) l->util_n) : NULL);
                json_object_object_add(g, "utilization_samples", json_object_new_uint64(l->util_n));
                json_object_array_add(a, g);
        }
        json_object_object_add(acc, "available", json_object_new_boolean(t->available));
        json_object_object_add(acc, "source", t->sources ? json_object_new_string(t->sources) : NULL);
        json_object_object_add(acc, "why_not",
                               t->available  ? NULL
                               : !t->sampled ? json_object_new_string("not sampled: GPU figures need --sample")
                               : t->why      ? json_object_new_string(t->why)
                                             : NULL);
        json_object_object_add(u, "gpus", t->sampled ? a : (json_object_put(a), NULL));
        json_object_object_add(u, "gpu_accounting", acc);
}

/* What only sampling can tell: peaks between the start and the end, the
 * average use of cores, the limit a sample saw passed. */
static json_object *sampling_json(const struct leash_result *r) {
        static const enum leash_fig peaks[] = {
                LEASH_FIG_CORES,           LEASH_FIG_PROCS,      LEASH_FIG_THREADS,
                LEASH_FIG_PIDS_CURRENT,    LEASH_FIG_MEMORY,     LEASH_FIG_MEM_CURRENT,
                LEASH_FIG_MEM_RSS,         LEASH_FIG_MEM_PSS,    LEASH_FIG_MEM_USS,
                LEASH_FIG_SWAP_CURRENT,    LEASH_FIG_DISK_BYTES, LEASH_FIG_DISK_FILES,
                LEASH_FIG_TOTAL_PROCESSES, LEASH_FIG_GPU_MEMORY, LEASH_FIG_GPU_MEMORY_MAX,
                LEASH_FIG_GPU_UTIL,        LEASH_FIG_GPUS,
        };
        const struct leash_sampling_result *x = &r->sampling;
        const struct leash_usage *u = &r->usage;
        json_object *o = json_object_new_object(), *p = json_object_new_object(), *m;

        json_object_object_add(o, "interval_s", decimal((double) x->interval_ns / 1e9));
        json_object_object_add(o, "samples", json_object_new_uint64(x->samples));
        json_object_object_add(o, "cost_cpu_s", decimal((double) x->cost_ns / 1e9));
        json_object_object_add(o, "read_max_s", decimal((double) x->read_max_ns / 1e9));
        json_object_object_add(o, "gap_max_s", decimal((double) x->gap_max_ns / 1e9));
        json_object_object_add(o, "stretched", json_object_new_uint64(x->stretched));
        for (size_t i = 0; i < ELEMENTSOF(peaks); i++) {
                enum leash_fig f = peaks[i];
                m = json_object_new_object();
                json_object_object_add(m, "value", fig_json(f, x->peak[f]));
                json_object_object_add(
                        m, "basis",
                        x->peak_basis[f] && x->peak[f] != LEASH_NULL ? json_object_new_string(x->peak_basis[f]) : NULL);
                json_object_object_add(p, leash_fig_column(f), m);
        }
        json_object_object_add(o, "peaks", p);
        p = json_object_new_object();
        m = json_object_new_object();
        if (u->cpu_usage_us != LEASH_NULL && u->wall_ns != LEASH_NULL && u->wall_ns > 0) {
                json_object_object_add(m, "value", decimal((double) u->cpu_usage_us * 1e3 / (double) u->wall_ns));
                json_object_object_add(m, "basis", json_object_new_string("cpu.stat usage_usec / wall time"));
        } else {
                json_object_object_add(m, "value", NULL);
                json_object_object_add(m, "basis", NULL);
        }
        json_object_object_add(p, "cores", m);
        json_object_object_add(o, "averages", p);
        if (x->limit_reached >= 0) {
                enum leash_fig f = (enum leash_fig) x->limit_reached;
                m = json_object_new_object();
                json_object_object_add(m, "figure", json_object_new_string(leash_fig_name(f)));
                json_object_object_add(m, "value", fig_json(f, x->limit_value_at));
                json_object_object_add(m, "at_s", decimal((double) x->limit_seen_ns / 1e9));
                json_object_object_add(m, "last_below_at_s", decimal((double) x->limit_below_ns / 1e9));
                json_object_object_add(m, "read_took_s", decimal((double) x->limit_read_ns / 1e9));
                json_object_object_add(m, "late_by_at_most_s",
                                       decimal((double) (x->limit_seen_ns - x->limit_below_ns) / 1e9));
                /* not judged: the job held cgroups deeper than leash walks */
                json_object_object_add(m, "partial", json_object_new_boolean(x->limit_partial != LEASH_JUDGED));
                json_object_object_add(m, "partial_why", jstr(leash_unjudged_to_string(x->limit_partial)));
                json_object_object_add(o, "limit_reached", m);
        } else
                json_object_object_add(o, "limit_reached", NULL);
        return o;
}

/* Where the job cgroup came from: {kind, path (its parent; null without a
 * cgroup), why}. */
static json_object *placement_json(const struct leash_result *r) {
        json_object *o = json_object_new_object();
        const char *slash = strrchr(r->cgroup, '/');
        char parent[4096];

        json_object_object_add(o, "kind", jstr(placement_kind_to_string(r->placement)));
        if (r->placement != PLACEMENT_NONE && slash) {
                snprintf(parent, sizeof parent, "%.*s", (int) (slash - r->cgroup), r->cgroup);
                json_object_object_add(o, "path", jstr(parent));
        } else
                json_object_object_add(o, "path", NULL);
        json_object_object_add(o, "why", jstr(r->placement_why));
        return o;
}

/* The lines leash run printed before the job started: each limit enforced
 * weaker than asked (weak.c). */
static json_object *warnings_json(const struct leash_spec *c, const struct leash_result *r) {
        json_object *a = json_object_new_array();
        char line[512];

        for (int l = 0; l < _LEASH_LIMIT_MAX; l++)
                if (leash_limit_weakness(c, r->enforced, r->enforce_note, (enum leash_limit) l, false, line,
                                         sizeof line) > 0)
                        json_object_array_add(a, json_object_new_string(line));
        return a;
}

/* "likely_cause": why a job that failed by itself may have failed, where a
 * limit leash set is the likely cause and the exit does not say so (an
 * allocation RLIMIT_AS refused, a shell's 153 under --fsize): the line
 * stderr gives, in the report too (kv has it where it has no stderr). */
static json_object *likely_cause_json(const struct leash_spec *c, const struct leash_result *r) {
        char buf[320];

        if (r->reason != LEASH_REASON_EXIT && r->reason != LEASH_REASON_SIGNAL)
                return NULL;
        return report_text_likely_cause(c, r, buf, sizeof buf) ? json_object_new_string(buf) : NULL;
}

/* "command", and "command_base64" only where an argument is not UTF-8:
 * the exact bytes. */
static void command_json(const struct leash_spec *c, json_object *root) {
        json_object *a = json_object_new_array();
        bool raw = false;

        for (char *const *arg = c->argv; arg && *arg; arg++) {
                json_object_array_add(a, jstr(*arg));
                raw = raw || !utf8_is_valid(*arg);
        }
        json_object_object_add(root, "command", a);
        if (raw) {
                a = json_object_new_array();
                for (char *const *arg = c->argv; *arg; arg++)
                        json_object_array_add(a, base64(*arg));
                json_object_object_add(root, "command_base64", a);
        }
}

static json_object *exit_json(const struct leash_result *r) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "code", json_object_new_int(r->exit_code));
        json_object_object_add(o, "status", r->status_code >= 0 ? json_object_new_int(r->status_code) : NULL);
        json_object_object_add(o, "signal", signal_json(r->term_signal));
        json_object_object_add(o, "interrupted_by", signal_json(r->interrupt_signal));
        if (r->reason == LEASH_REASON_EXEC_ERROR || r->reason == LEASH_REASON_SETUP_ERROR) {
                json_object_object_add(o, "errno", json_object_new_int(r->exec_errno));
                json_object_object_add(o, "error", json_object_new_string(strerror(r->exec_errno)));
                json_object_object_add(o, "step", jstr(r->exec_step));
        }
        return o;
}

/* "limits": each limit asked for with its unit and what enforced it, the
 * --limit figures, the devices. */
static json_object *limits_json(const struct leash_spec *c, const struct leash_result *r) {
        json_object *o = json_object_new_object(), *m;

        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                if (!leash_spec_has(c, (enum leash_limit) l))
                        continue;
                m = json_object_new_object();
                json_object_object_add(m, "value", limit_value((enum leash_limit) l, c->limit[l]));
                json_object_object_add(m, "unit", json_object_new_string(limit_unit((enum leash_limit) l)));
                json_object_object_add(m, "enforced_by",
                                       json_object_new_string(leash_enforcer_to_string(r->enforced[l])));
                if (r->enforce_note[l])
                        json_object_object_add(m, "note", jstr(r->enforce_note[l]));
                json_object_object_add(o, leash_limit_to_string((enum leash_limit) l), m);
        }
        measured_limits_json(c, r, o);
        devices_limit_json(c, r, o);
        return o;
}

static json_object *policy_json(const struct leash_spec *c) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "soft_signal", signal_json(c->soft_signal));
        json_object_object_add(o, "grace_s", decimal((double) c->grace_ns / 1e9));
        json_object_object_add(o, "strict", json_object_new_boolean(c->strict));
        return o;
}

/* usage.pressure: the stall totals of the pressure files */
static json_object *pressure_json(const struct leash_usage *x) {
        json_object *p = json_object_new_object();

        json_object_object_add(p, "cpu_some_s", seconds(x->psi_cpu_some, USEC_PER_SEC));
        json_object_object_add(p, "cpu_full_s", seconds(x->psi_cpu_full, USEC_PER_SEC));
        json_object_object_add(p, "memory_some_s", seconds(x->psi_mem_some, USEC_PER_SEC));
        json_object_object_add(p, "memory_full_s", seconds(x->psi_mem_full, USEC_PER_SEC));
        json_object_object_add(p, "io_some_s", seconds(x->psi_io_some, USEC_PER_SEC));
        json_object_object_add(p, "io_full_s", seconds(x->psi_io_full, USEC_PER_SEC));
        return p;
}

/* usage.main_process: wait4's rusage of the main process */
static json_object *main_process_json(const struct leash_usage *x) {
        json_object *m = json_object_new_object();

        json_object_object_add(m, "maxrss_bytes", u64_or_null(x->main_maxrss_bytes));
        json_object_object_add(m, "user_s", seconds(x->main_utime_us, USEC_PER_SEC));
        json_object_object_add(m, "system_s", seconds(x->main_stime_us, USEC_PER_SEC));
        json_object_object_add(m, "minor_faults", u64_or_null(x->main_minflt));
        json_object_object_add(m, "major_faults", u64_or_null(x->main_majflt));
        json_object_object_add(m, "voluntary_switches", u64_or_null(x->main_nvcsw));
        json_object_object_add(m, "involuntary_switches", u64_or_null(x->main_nivcsw));
        return m;
}

static json_object *usage_json(const struct leash_result *r) {
        const struct leash_usage *x = &r->usage;
        json_object *u = json_object_new_object();
        uint64_t cpu_total = LEASH_NULL;

        if (x->cpu_user_us != LEASH_NULL && x->cpu_system_us != LEASH_NULL)
                cpu_total = x->cpu_usage_us != LEASH_NULL ? x->cpu_usage_us : x->cpu_user_us + x->cpu_system_us;
        json_object_object_add(u, "wall_time_s", seconds(x->wall_ns, NSEC_PER_SEC));
        json_object_object_add(u, "cpu_time_s", seconds(cpu_total, USEC_PER_SEC));
        json_object_object_add(u, "cpu_user_s", seconds(x->cpu_user_us, USEC_PER_SEC));
        json_object_object_add(u, "cpu_system_s", seconds(x->cpu_system_us, USEC_PER_SEC));
        json_object_object_add(u, "memory_peak_bytes", u64_or_null(x->memory_peak));
        json_object_object_add(u, "memory_peak_basis",
                               x->memory_peak_basis ? json_object_new_string(x->memory_peak_basis) : NULL);
        if (x->memory_peak_note)
                json_object_object_add(u, "memory_peak_note", json_object_new_string(x->memory_peak_note));
        json_object_object_add(u, "swap_peak_bytes", u64_or_null(x->swap_peak));
        json_object_object_add(u, "pids_peak", u64_or_null(x->pids_peak));
        json_object_object_add(u, "pids_max_events", u64_or_null(x->pids_events_max));
        json_object_object_add(u, "oom_events", u64_or_null(x->mem_ev_oom));
        json_object_object_add(u, "oom_kills", u64_or_null(x->mem_ev_oom_kill));
        json_object_object_add(u, "memory_max_events", u64_or_null(x->mem_ev_max));
        json_object_object_add(u, "memory_high_events", u64_or_null(x->mem_ev_high));
        json_object_object_add(u, "memory_anon_bytes_at_end", u64_or_null(x->mem_anon));
        json_object_object_add(u, "memory_file_bytes_at_end", u64_or_null(x->mem_file));
        json_object_object_add(u, "memory_shmem_bytes_at_end", u64_or_null(x->mem_shmem));
        json_object_object_add(u, "io_read_bytes", u64_or_null(x->io_rbytes));
        json_object_object_add(u, "io_write_bytes", u64_or_null(x->io_wbytes));
        json_object_object_add(u, "io_read_ops", u64_or_null(x->io_rios));
        json_object_object_add(u, "io_write_ops", u64_or_null(x->io_wios));
        json_object_object_add(u, "throttled_s", seconds(x->cpu_throttled_us, USEC_PER_SEC));
        json_object_object_add(u, "cpu_periods", u64_or_null(x->cpu_nr_periods));
        json_object_object_add(u, "cpu_throttled_periods", u64_or_null(x->cpu_nr_throttled));
        json_object_object_add(u, "pressure", pressure_json(x));
        json_object_object_add(u, "main_process", main_process_json(x));
        json_object_object_add(u, "leftovers_killed", json_object_new_int((int) r->leftovers_killed));
        gpus_json(r, u);
        return u;
}

static json_object *signals_json(const struct leash_result *r) {
        json_object *a = json_object_new_array();

        for (unsigned i = 0; i < r->n_signals; i++) {
                json_object *m = json_object_new_object();
                json_object_object_add(m, "signal", signal_json(r->signals[i].signal));
                json_object_object_add(m, "at_s", decimal((double) r->signals[i].at_ns / 1e9));
                json_object_object_add(m, "why", json_object_new_string(r->signals[i].why));
                json_object_array_add(a, m);
        }
        return a;
}

/* issue 9.4: who left the job cgroup; never counted as killed there.
 * escaped_incomplete: the tree walk could not say it found every process
 * (issue 22.10). */
static void escaped_json(const struct leash_result *r, json_object *root) {
        json_object *a = json_object_new_array();

        for (unsigned i = 0; i < r->n_escaped; i++) {
                json_object *m = json_object_new_object();
                json_object_object_add(m, "pid", json_object_new_int((int) r->escaped[i].pid));
                json_object_object_add(m, "comm", jstr(r->escaped[i].comm));
                json_object_object_add(m, "cgroup", jstr(r->escaped[i].cgroup));
                json_object_object_add(m, "end", json_object_new_string(report_text_escape_end(r->escaped[i].end)));
                json_object_array_add(a, m);
        }
        json_object_object_add(root, "escaped", a);
        json_object_object_add(root, "escaped_unnamed", json_object_new_int((int) r->escaped_unnamed));
        json_object_object_add(root, "escaped_incomplete", json_object_new_boolean(r->escaped_incomplete));
}

/* leash (or its watchdog) found inside the job cgroup, and moved back out */
static void moved_json(const struct leash_result *r, json_object *root) {
        json_object *a = json_object_new_array();

        for (unsigned i = 0; i < r->n_moved; i++) {
                const struct leash_moved *v = &r->moved[i];
                json_object *m = json_object_new_object();
                json_object_object_add(m, "who", json_object_new_string(v->watchdog ? "watchdog" : "leash"));
                json_object_object_add(m, "cgroup", jstr(v->cgroup));
                json_object_object_add(m, "at_s", decimal((double) v->at_ns / 1e9));
                json_object_object_add(m, "moved_back_to", v->back_to[0] ? jstr(v->back_to) : NULL);
                json_object_object_add(m, "error", v->error ? json_object_new_string(strerror(v->error)) : NULL);
                json_object_array_add(a, m);
        }
        json_object_object_add(root, "supervisor_moved", a);
        if (r->moved_unnamed)
                json_object_object_add(root, "supervisor_moved_more", json_object_new_int((int) r->moved_unnamed));
}

/* The report's tree, its keys in schema 1's order (leash(1), REPORT FORMAT). */
static json_object *build(const struct leash_spec *c, const struct leash_result *r) {
        json_object *root = json_object_new_object();
        char buf[64];

        json_object_object_add(root, "schema", json_object_new_int(1));
        json_object_object_add(root, "leash_version", json_object_new_string(leash_version()));
        command_json(c, root);
        json_object_object_add(root, "name", jstr(report_text_job_name(c)));
        json_object_object_add(root, "cgroup", jstr(r->cgroup));
        json_object_object_add(root, "placement", placement_json(r));
        json_object_object_add(root, "profile", jstr(c->profile));
        json_object_object_add(root, "profile_source", jstr(c->profile_source));
        format_iso8601(r->started_realtime_ns, buf, sizeof buf);
        json_object_object_add(root, "started", r->started_realtime_ns ? json_object_new_string(buf) : NULL);
        json_object_object_add(root, "pid", r->pid > 0 ? json_object_new_int(r->pid) : NULL);
        json_object_object_add(root, "isolation", jstr(r->isolation));
        json_object_object_add(root, "reason", json_object_new_string(leash_result_reason(r)));
        json_object_object_add(root, "exit", exit_json(r));
        json_object_object_add(root, "likely_cause", likely_cause_json(c, r));
        json_object_object_add(root, "limits", limits_json(c, r));
        json_object_object_add(root, "warnings", warnings_json(c, r));
        json_object_object_add(root, "policy", policy_json(c));
        json_object_object_add(root, "sandbox", sandbox_json(c, r));
        json_object_object_add(root, "usage", usage_json(r));
        json_object_object_add(root, "signals", signals_json(r));
        if (r->sampling.interval_ns)
                json_object_object_add(root, "sampling", sampling_json(r));
        escaped_json(r, root);
        moved_json(r, root);
        return root;
}

/* kv: one "dotted.key:value" line per non-null scalar. */
static int kv_walk(json_object *o, const char *prefix, FILE *f) {
        if (!o)
                return 0;
        if (json_object_is_type(o, json_type_object)) {
                /* json_object_object_foreach, spelled out to call through jc */
                for (struct lh_entry *e = lh_table_head(json_object_get_object(o)); e; e = lh_entry_next(e)) {
                        char k[256];
                        snprintf(k, sizeof k, "%s%s%s", prefix, *prefix ? "." : "", (const char *) lh_entry_k(e));
                        kv_walk((json_object *) lh_entry_v(e), k, f);
                }
        } else if (json_object_is_type(o, json_type_array)) {
                size_t n = json_object_array_length(o);
                for (size_t i = 0; i < n; i++) {
                        char k[256];
                        snprintf(k, sizeof k, "%s.%zu", prefix, i);
                        kv_walk(json_object_array_get_idx(o, i), k, f);
                }
        } else {
                const char *s = json_object_get_string(o);
                /* values are one line of printable text: \\ \n \r \t, and \xHH for
                 * any other control byte (ESC included) */
                fprintf(f, "%s:", prefix);
                utf8_fputs_escaped(s, f);
                fputc('\n', f);
        }
        return 0;
}

/* ---- a report a layer above adds keys to ----
 * A scheduler's hooks (the Slurm Epilog) write the `leash run` report with
 * keys of their own; they know what to say, this module how JSON is written
 * (json-c stays here): the report knows no scheduler. */

struct report_json {
        json_object *root;
};

int report_json_new(const struct leash_spec *c, const struct leash_result *r, struct report_json **ret) {
        struct report_json *rj = calloc(1, sizeof *rj);

        if (!rj)
                return -ENOMEM;
        rj->root = build(c, r);
        if (!rj->root) {
                free(rj);
                return -ENOMEM;
        }
        *ret = rj;
        return 0;
}

void report_json_free(struct report_json *rj) {
        if (!rj)
                return;
        json_object_put(rj->root);
        free(rj);
}

/* The object that holds path's last key (made when missing), and that key. */
static json_object *parent_of(struct report_json *rj, const char *path, char *key, size_t size) {
        json_object *o = rj->root, *next;
        const char *dot;

        while ((dot = strchr(path, '.'))) {
                if ((size_t) (dot - path) >= size)
                        return NULL;
                snprintf(key, size, "%.*s", (int) (dot - path), path);
                if (!json_object_object_get_ex(o, key, &next) || !json_object_is_type(next, json_type_object)) {
                        next = json_object_new_object();
                        json_object_object_add(o, key, next);
                }
                o = next;
                path = dot + 1;
        }
        snprintf(key, size, "%s", path);
        return o;
}

static int put(struct report_json *rj, const char *path, json_object *v) {
        char key[128];
        json_object *o = parent_of(rj, path, key, sizeof key);

        if (!o) {
                json_object_put(v);
                return -EINVAL;
        }
        json_object_object_add(o, key, v);
        return 0;
}

int report_json_object(struct report_json *rj, const char *path) {
        return put(rj, path, json_object_new_object());
}

int report_json_array(struct report_json *rj, const char *path) {
        return put(rj, path, json_object_new_array());
}

int report_json_str(struct report_json *rj, const char *path, const char *value) {
        return put(rj, path, value ? json_object_new_string(value) : NULL);
}

int report_json_int(struct report_json *rj, const char *path, int64_t value) {
        return put(rj, path, json_object_new_int64(value));
}

int report_json_bool(struct report_json *rj, const char *path, bool value) {
        return put(rj, path, json_object_new_boolean(value));
}

static int append(struct report_json *rj, const char *path, json_object *v) {
        char key[128];
        json_object *o = parent_of(rj, path, key, sizeof key), *a;

        if (!o || !json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array)) {
                json_object_put(v);
                return -EINVAL;
        }
        json_object_array_add(a, v);
        return 0;
}

int report_json_append_str(struct report_json *rj, const char *path, const char *value) {
        return append(rj, path, json_object_new_string(value));
}

int report_json_append_usage(struct report_json *rj, const char *path, const char *name_key, const char *name,
                             const struct leash_usage *x, unsigned leftovers_killed) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, name_key, json_object_new_string(name));
        json_object_object_add(o, "cpu_time_s", seconds(x->cpu_usage_us, USEC_PER_SEC));
        json_object_object_add(o, "cpu_user_s", seconds(x->cpu_user_us, USEC_PER_SEC));
        json_object_object_add(o, "cpu_system_s", seconds(x->cpu_system_us, USEC_PER_SEC));
        json_object_object_add(o, "memory_peak_bytes", u64_or_null(x->memory_peak));
        json_object_object_add(o, "pids_peak", u64_or_null(x->pids_peak));
        json_object_object_add(o, "oom_kills", u64_or_null(x->mem_ev_oom_kill));
        json_object_object_add(o, "io_read_bytes", u64_or_null(x->io_rbytes));
        json_object_object_add(o, "io_write_bytes", u64_or_null(x->io_wbytes));
        json_object_object_add(o, "leftovers_killed", json_object_new_int((int) leftovers_killed));
        return append(rj, path, o);
}

int report_json_text(const struct report_json *rj, char **ret_text) {
        const char *text = json_object_to_json_string_ext(rj->root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                            JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text || asprintf(ret_text, "%s\n", text) < 0)
                return -ENOMEM;
        return 0;
}

int leash_report_format(const struct leash_spec *c, const struct leash_result *r, enum leash_format format,
                        char **ret_text) {
        _cleanup_json_ json_object *root = NULL;
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        if (format == LEASH_FORMAT_JSON) {
                const char *s;
                root = build(c, r);
                s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                 JSON_C_TO_STRING_NOSLASHESCAPE);
                if (!s || asprintf(&text, "%s\n", s) < 0)
                        return -ENOMEM;
                *ret_text = text;
                return 0;
        }
        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        if (format == LEASH_FORMAT_KV) {
                root = build(c, r);
                kv_walk(root, "", f);
        } else if (format == LEASH_FORMAT_ISOLATE)
                report_text_isolate(c, r, f);
        else
                report_text_write(c, r, f);
        if (fclose(f) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret_text = text;
        return 0;
}

/* --- Reading reports back (leash report, leash suggest) ----------------------
 * Its own small symbol table, so that this section stays apart from the
 * writer's: with json-c linked instead of dlopen()ed, f is just f. A
 * report may have been shaped by a hostile job: a value of the wrong type is
 * treated as absent, never trusted. */

static void jr_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}

/* One JSON text, whole: trailing garbage is an error. */
static int jr_parse(const char *text, size_t len, json_object **ret) {
        struct json_tokener *tok;
        json_object *o;

        if (len > INT32_MAX)
                return -EFBIG;
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, text, (int) len);
        if (!o || json_tokener_get_error(tok) != json_tokener_success) {
                json_tokener_free(tok);
                jr_putp(&o);
                return -EBADMSG;
        }
        for (size_t i = (size_t) tok->char_offset; i < len; i++)
                if (!strchr(" \t\r\n", text[i])) {
                        json_tokener_free(tok);
                        jr_putp(&o);
                        return -EBADMSG;
                }
        json_tokener_free(tok);
        *ret = o;
        return 0;
}

static json_object *jr_path(json_object *o, const char *path) {
        char key[64];
        while (o && *path) {
                size_t n = strcspn(path, ".");
                if (n >= sizeof key || json_object_get_type(o) != json_type_object)
                        return NULL;
                memcpy(key, path, n);
                key[n] = '\0';
                if (!json_object_object_get_ex(o, key, &o))
                        return NULL;
                path += n + (path[n] == '.');
        }
        return o;
}

static double jr_number(json_object *o, const char *path) {
        o = jr_path(o, path);
        if (!o)
                return NAN;
        switch (json_object_get_type(o)) {
        case json_type_int:
        case json_type_double: {
                double v = json_object_get_double(o);
                return isfinite(v) ? v : NAN;
        }
        default:
                return NAN;
        }
}

static char *jr_string(json_object *o, const char *path) {
        o = jr_path(o, path);
        if (!o || json_object_get_type(o) != json_type_string)
                return NULL;
        return strdup(json_object_get_string(o));
}

/* The --limit FIGURE=VALUE entries: one per figure name at most, so a
 * report cannot make the reader keep more than leash can write. */
static int jr_measured(json_object *root, struct history_job *j) {
        for (int f = 0; f < _LEASH_FIG_MAX; f++) {
                struct history_measured *m = &j->measured[j->n_measured];
                _cleanup_free_ char *by = NULL;
                char p[96];

                char key[64];

                /* NAME_sampled where a limit of that name was there too (-m and --limit memory=) */
                snprintf(key, sizeof key, "%s_sampled", leash_fig_name((enum leash_fig) f));
                snprintf(p, sizeof p, "limits.%s.enforced_by", key);
                by = jr_string(root, p);
                if (!by) {
                        snprintf(key, sizeof key, "%s", leash_fig_name((enum leash_fig) f));
                        snprintf(p, sizeof p, "limits.%s.enforced_by", key);
                        by = jr_string(root, p);
                }
                if (!by || strcmp(by, "sampling") != 0)
                        continue;
                snprintf(p, sizeof p, "limits.%s.value", key);
                m->value = jr_number(root, p);
                if (isnan(m->value))
                        continue;
                m->fig = f;
                snprintf(p, sizeof p, "limits.%s.unit", key);
                m->unit = jr_string(root, p);
                snprintf(p, sizeof p, "limits.%s.note", key);
                m->note = jr_string(root, p);
                snprintf(p, sizeof p, "sampling.peaks.%s.value", leash_fig_column((enum leash_fig) f));
                m->peak = jr_number(root, p);
                j->n_measured++;
        }
        return 0;
}

static int jr_limits(json_object *root, struct history_job *j) {
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++) {
                char p[64];
                json_object *v;
                snprintf(p, sizeof p, "limits.%s", leash_limit_to_string((enum leash_limit) l));
                v = jr_path(root, p);
                if (!v || json_object_get_type(v) != json_type_object)
                        continue;
                j->limit[l].set = true;
                v = jr_path(v, "value");
                if (v && json_object_get_type(v) == json_type_string && strcmp(json_object_get_string(v), "max") == 0)
                        j->limit[l].unlimited = true;
                j->limit[l].value = jr_number(root, strcat(p, ".value"));
                if (isnan(j->limit[l].value) && !j->limit[l].unlimited)
                        j->limit[l].set = false;
                p[strlen(p) - strlen(".value")] = '\0';
                j->limit[l].enforced_by = jr_string(root, strcat(p, ".enforced_by"));
                p[strlen(p) - strlen(".enforced_by")] = '\0';
                if (j->limit[l].enforced_by && strcmp(j->limit[l].enforced_by, "sampling") == 0) {
                        /* --limit memory=: a sampled figure's, read below */
                        free(j->limit[l].enforced_by);
                        j->limit[l] = (struct history_limit){0};
                        continue;
                }
                j->limit[l].note = jr_string(root, strcat(p, ".note"));
        }
        return jr_measured(root, j);
}

static int jr_arrays(json_object *root, struct history_job *j) {
        json_object *a = jr_path(root, "command");
        if (a && json_object_get_type(a) == json_type_array) {
                size_t n = json_object_array_length(a);
                j->command = calloc(n ? n : 1, sizeof *j->command);
                if (!j->command)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(a, i);
                        const char *s =
                                e && json_object_get_type(e) == json_type_string ? json_object_get_string(e) : "";
                        if (!(j->command[j->n_command++] = strdup(s)))
                                return -ENOMEM;
                }
        }
        a = jr_path(root, "signals");
        if (a && json_object_get_type(a) == json_type_array) {
                size_t n = json_object_array_length(a);
                j->signals = calloc(n ? n : 1, sizeof *j->signals);
                if (!j->signals)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        json_object *e = json_object_array_get_idx(a, i);
                        struct history_signal *s = &j->signals[j->n_signals];
                        s->signal = jr_string(e, "signal");
                        s->why = jr_string(e, "why");
                        s->at_s = jr_number(e, "at_s");
                        if (!s->signal || isnan(s->at_s)) {
                                free(s->signal);
                                free(s->why);
                                continue;
                        }
                        j->n_signals++;
                }
        }
        return 0;
}

int report_parse_job(const char *text, size_t len, struct history_job **ret) {
        _cleanup_(jr_putp) json_object *root = NULL;
        struct history_job *j;
        double v;
        int r = jr_parse(text, len, &root);

        if (r < 0)
                return r;
        if (json_object_get_type(root) != json_type_object || jr_number(root, "schema") != 1.0 ||
            !jr_path(root, "reason") || !jr_path(root, "usage"))
                return -EPROTO;
        j = calloc(1, sizeof *j);
        if (!j)
                return -ENOMEM;
        j->cgroup = jr_string(root, "cgroup");
        /* "name" since issue 41; before, only the cgroup's, empty without one */
        j->name = jr_string(root, "name");
        if (!j->name || !*j->name) {
                free(j->name);
                j->name = j->cgroup && *j->cgroup ? history_name_from_cgroup(j->cgroup) : NULL;
        }
        j->profile = jr_string(root, "profile");
        j->started = jr_string(root, "started");
        j->reason = jr_string(root, "reason");
        v = jr_number(root, "exit.code");
        j->exit_code = isnan(v) ? -1 : (int) v;
        v = jr_number(root, "exit.status");
        j->exit_status = isnan(v) ? -1 : (int) v;
        j->exit_signal = jr_string(root, "exit.signal");
        j->interrupted_by = jr_string(root, "exit.interrupted_by");
        j->soft_signal = jr_string(root, "policy.soft_signal");
        j->grace_s = jr_number(root, "policy.grace_s");
        j->memory_peak_basis = jr_string(root, "usage.memory_peak_basis");
        j->samples = jr_number(root, "sampling.samples");
        j->interval_s = jr_number(root, "sampling.interval_s");
        j->tasks_peak_sampled = jr_number(root, "sampling.peaks.threads.value");
        if (isnan(j->tasks_peak_sampled))
                j->tasks_peak_sampled = jr_number(root, "sampling.peaks.procs.value");
        j->reached = jr_string(root, "sampling.limit_reached.figure");
        j->reached_value = jr_number(root, "sampling.limit_reached.value");
        j->reached_at_s = jr_number(root, "sampling.limit_reached.at_s");
        for (int u = 0; u < _HU_MAX; u++)
                j->usage[u] = jr_number(root, history_usage_info[u].path);
        r = jr_limits(root, j);
        if (r >= 0)
                r = jr_arrays(root, j);
        if (r < 0 || !j->reason) {
                history_job_free(j);
                return r < 0 ? r : -EPROTO;
        }
        *ret = j;
        return 0;
}

/* A column first seen after n_rows rows: the rows read so far widened with
 * a NAN cell. *cap, the rows s->v has room for, is at least 1 after. */
static int series_add_column(struct history_series *s, const char *key, size_t *cap) {
        char **c = reallocarray(s->cols, s->n_cols + 1, sizeof *c);
        double *v;

        if (!c)
                return -ENOMEM;
        s->cols = c;
        if (!(c[s->n_cols] = strdup(key)))
                return -ENOMEM;
        v = calloc((*cap ? *cap : 1) * (s->n_cols + 1), sizeof *v);
        if (!v) {
                free(c[s->n_cols]);
                return -ENOMEM;
        }
        for (size_t row = 0; row < s->n_rows; row++) {
                memcpy(v + row * (s->n_cols + 1), s->v + row * s->n_cols, s->n_cols * sizeof *v);
                v[row * (s->n_cols + 1) + s->n_cols] = NAN;
        }
        free(s->v);
        s->v = v;
        s->n_cols++;
        if (!*cap)
                *cap = 1;
        return 0;
}

/* One line's object as the next row: its new keys as columns first, a
 * key it lacks (or a null) as NAN. -EBADMSG: a string where a figure
 * belongs. */
static int series_add_row(struct history_series *s, json_object *o, size_t *cap) {
        int r;

        for (struct lh_entry *e = lh_table_head(json_object_get_object(o)); e; e = lh_entry_next(e))
                if (history_series_col(s, lh_entry_k(e)) < 0 && (r = series_add_column(s, lh_entry_k(e), cap)) < 0)
                        return r;
        if (s->n_rows == *cap) {
                double *v = reallocarray(s->v, *cap * 2 * s->n_cols, sizeof *v);
                if (!v)
                        return -ENOMEM;
                s->v = v;
                *cap *= 2;
        }
        for (size_t c = 0; c < s->n_cols; c++) {
                json_object *x = jr_path(o, s->cols[c]);
                double d = NAN;
                if (x && json_object_get_type(x) != json_type_null) {
                        d = jr_number(o, s->cols[c]);
                        if (isnan(d))
                                return -EBADMSG;
                }
                s->v[s->n_rows * s->n_cols + c] = d;
        }
        s->n_rows++;
        return 0;
}

/* JSON lines: one flat object per line, the keys of the CSV header; the
 * columns are the keys of the first line, in order, plus any later ones. */
int report_parse_series_jsonl(const char *text, size_t len, struct history_series **ret) {
        struct history_series *s = calloc(1, sizeof *s);
        size_t cap = 0;
        int r = 0;

        if (!s)
                return -ENOMEM;
        for (const char *p = text, *end = text + len; p < end && r == 0;) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
                _cleanup_(jr_putp) json_object *o = NULL;
                const char *line = p;

                p += n + 1;
                if (strspn(line, " \t\r") >= n)
                        continue;
                r = jr_parse(line, n, &o);
                if (r == 0)
                        r = json_object_get_type(o) == json_type_object ? series_add_row(s, o, &cap) : -EBADMSG;
        }
        if (r == 0 && s->n_cols == 0)
                r = -EBADMSG;
        if (r < 0) {
                history_series_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

/* --- leash ps / stat -o json ------------------------------------------------ */

static json_object *monitor_proc_json(const struct sample_proc *p) {
        json_object *o = json_object_new_object();
        char st[2] = {p->state, '\0'};

        json_object_object_add(o, "pid", json_object_new_int((int) p->pid));
        json_object_object_add(o, "command", jstr(p->comm));
        json_object_object_add(o, "uid", p->uid == (uid_t) -1 ? NULL : json_object_new_uint64(p->uid));
        json_object_object_add(o, "state", p->state ? json_object_new_string(st) : NULL);
        json_object_object_add(o, "cpu_user_s", seconds(p->utime_us, 1000000));
        json_object_object_add(o, "cpu_system_s", seconds(p->stime_us, 1000000));
        json_object_object_add(o, "rss_bytes", u64_or_null(p->rss));
        json_object_object_add(o, "pss_bytes", u64_or_null(p->pss));
        json_object_object_add(o, "uss_bytes", u64_or_null(p->uss));
        json_object_object_add(o, "io_read_bytes", u64_or_null(p->read_bytes));
        json_object_object_add(o, "io_write_bytes", u64_or_null(p->write_bytes));
        return o;
}

static json_object *monitor_job_json(const struct monitor_job *j, bool single) {
        json_object *o = json_object_new_object(), *figs, *basis, *lim, *a;
        char buf[64];

        json_object_object_add(o, "name", jstr(j->name));
        json_object_object_add(o, "cgroup", jstr(j->cgroup));
        json_object_object_add(o, "record",
                               json_object_new_string(!j->has_state   ? "none"
                                                      : j->st.trusted ? "trusted.leash"
                                                                      : "user.leash"));
        json_object_object_add(o, "leash_pid", j->leash_pid > 0 ? json_object_new_int((int) j->leash_pid) : NULL);
        json_object_object_add(o, "leash_alive", json_object_new_boolean(j->leash_alive));
        json_object_object_add(o, "main_pid", j->main_pid > 0 ? json_object_new_int((int) j->main_pid) : NULL);
        json_object_object_add(o, "uid", j->has_uid ? json_object_new_uint64(j->uid) : NULL);
        json_object_object_add(o, "started_by_uid",
                               j->has_state && j->st.record ? json_object_new_uint64(j->st.uid) : NULL);
        if (j->started_ns != LEASH_NULL) {
                format_iso8601(j->started_ns, buf, sizeof buf);
                json_object_object_add(o, "started", json_object_new_string(buf));
        } else
                json_object_object_add(o, "started", NULL);
        json_object_object_add(o, "age_s", fig_json(LEASH_FIG_T, j->s.v[LEASH_FIG_T]));
        figs = json_object_new_object();
        basis = json_object_new_object();
        for (int f = 0; f < _LEASH_FIG_MAX; f++) {
                enum leash_fig fig = (enum leash_fig) f;
                if (fig == LEASH_FIG_T || fig == LEASH_FIG_TOTAL_PROCESSES || fig == LEASH_FIG_DISK_BYTES ||
                    fig == LEASH_FIG_DISK_FILES)
                        continue; /* the age is above; the others need a series or --sample-disk */
                if (!single && j->s.v[f] == LEASH_NULL)
                        continue;
                json_object_object_add(figs, leash_fig_column(fig), fig_json(fig, j->s.v[f]));
                if (j->s.basis[f])
                        json_object_object_add(basis, leash_fig_column(fig), json_object_new_string(j->s.basis[f]));
        }
        json_object_object_add(figs, "mem_peak_bytes", u64_or_null(j->mem_peak));
        if (j->mem_peak != LEASH_NULL)
                json_object_object_add(basis, "mem_peak_bytes", json_object_new_string("memory.peak"));
        json_object_object_add(o, "figures", figs);
        json_object_object_add(o, "basis", basis);
        lim = json_object_new_object();
        if (j->has_state && j->st.record) {
                for (int l = 0; l < _LEASH_LIMIT_MAX; l++)
                        if (j->st.limit_set & (1U << l))
                                json_object_object_add(lim, leash_limit_to_string((enum leash_limit) l),
                                                       limit_value((enum leash_limit) l, j->st.limit[l]));
                for (int f = 0; f < _LEASH_FIG_MAX; f++)
                        if (j->st.mlimit[f])
                                json_object_object_add(lim, leash_fig_name((enum leash_fig) f),
                                                       fig_json((enum leash_fig) f, j->st.mlimit[f]));
        }
        json_object_object_add(o, "limits", lim);
        json_object_object_add(o, "sample_interval_s",
                               j->has_state && j->st.sample_ns ? seconds(j->st.sample_ns, 1000000000) : NULL);
        if (j->procs) {
                a = json_object_new_array();
                for (size_t i = 0; i < j->n_procs; i++)
                        json_object_array_add(a, monitor_proc_json(&j->procs[i]));
                json_object_object_add(o, "processes", a);
        }
        return o;
}

int report_monitor_json(const struct monitor_job *jobs, size_t n, bool single, char **ret) {
        _cleanup_json_ json_object *root = NULL;
        const char *text;

        if (single && n == 1)
                root = monitor_job_json(&jobs[0], true);
        else {
                json_object *a = json_object_new_array();
                root = json_object_new_object();
                for (size_t i = 0; i < n; i++)
                        json_object_array_add(a, monitor_job_json(&jobs[i], false));
                json_object_object_add(root, "jobs", a);
        }
        text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                            JSON_C_TO_STRING_NOSLASHESCAPE);
        *ret = text ? strdup(text) : NULL;
        return *ret ? 0 : -ENOMEM;
}

/* The report of a job, from above the engine: the job object formats nothing. */
int leash_job_report(const struct leash_job *j, enum leash_format format, char **ret_text) {
        if (!j || !ret_text)
                return -EINVAL;
        return leash_report_format(leash_job_spec(j), leash_job_result(j), format, ret_text);
}

int leash_job_summary(const struct leash_job *j, char **ret_text) {
        if (!j || !ret_text)
                return -EINVAL;
        return leash_report_summary(leash_job_spec(j), leash_job_result(j), ret_text);
}
