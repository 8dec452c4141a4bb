/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash slurm status [--config-dir DIR] [-o json|text] [JOBID]: the jobs of
 * the state directory, as a table, one job's page, or JSON (as root).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../basic/kvfile.h"
#include "../basic/log.h"
#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../basic/utf8.h"
#include "../basic/time-util.h"
#include "../engine/cgroup/account.h"
#include "cli.h"
#include "slurm-ctx.h"
#include "slurm-hooks.h"

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
        uint64_t started = slurm_kv_u64(state, "started_realtime_ns", 0);
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
                format_duration(slurm_kv_u64(state, "grace_ns", 0), g, sizeof g);
                printf("  %-18s %s, then SIGKILL after %s\n",
                       "soft signal:", signal_name((int) slurm_kv_u64(state, "soft_signal", 0)) ?: "?", g);
        }
        page_lines(state, page_setup);
        page_numbered(state, "error", "errors:");
        page_lines(verdict, page_verdict);
        page_signals(verdict);
        page_numbered(verdict, "error", "  errors:");
}

static int status_one(struct slurm_ctx *x, uint32_t id, bool detail) {
        _cleanup_close_ int state_fd = -1, root_fd = -1, job_fd = -1;
        _cleanup_free_ char *state = NULL, *verdict = NULL;
        char why[4400], profile[64] = "-", user[64] = "-", reason[32] = "-";
        uint64_t cpu_us = 0;
        int procs = 0;
        bool alive;

        x->job.id = id;
        int r = -ENOENT;

        if (slurm_ctx_state_open(x, false, &state_fd, why, sizeof why) < 0 ||
            (r = slurm_state_read(state_fd, "state", &state)) < 0) {
                log_error("job %" PRIu32 ": no state here (%s)", id,
                          why[0]          ? why
                          : r == -EBADMSG ? "malformed: refused"
                                          : "not found");
                return 1;
        }
        (void) slurm_state_read(state_fd, "verdict", &verdict);
        (void) kv_get(state, "profile", profile, sizeof profile);
        (void) kv_get(state, "user", user, sizeof user);
        if (verdict)
                (void) kv_get(verdict, "reason", reason, sizeof reason);
        if (slurm_cgroup_root(false, NULL, 0, &root_fd, NULL) == 0 &&
            slurm_job_cgroup_open(root_fd, id, &job_fd) == 0) {
                (void) account_cpu_usage_us(job_fd, &cpu_us);
                procs = slurm_tree_signal(job_fd, 0);
        }
        alive = slurm_supervisor_alive(state);
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

int slurm_status(int argc, char **argv) {
        struct slurm_ctx x = {0};
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
        slurm_ctx_load_conf(&x);
        status_first = true;
        if (argc == 2)
                rc = status_one(&x, (uint32_t) id, true);
        else {
                if (status_fmt == STATUS_JSON)
                        fputs("[", stdout);
                else
                        printf("%-10s %-12s %-16s %-10s %6s %10s  %s\n", "JOBID", "USER", "PROFILE", "SUPERVISOR",
                               "PROCS", "CPU_S", "VERDICT");
                rc = slurm_ctx_for_each_state(&x, status_one, false) < 0 ? EXIT_LEASH_FAILED : 0;
                if (status_fmt == STATUS_JSON)
                        fputs("]", stdout);
        }
        if (status_fmt == STATUS_JSON && rc == 0)
                fputc('\n', stdout);
        slurm_ctx_done(&x);
        return rc;
}
