/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../sandbox/caps.h"
#include "../engine/spec/devices.h"
#include "../sandbox/filter.h"
#include "../engine/sample/sample.h"

const struct leash_option leash_options[_LEASH_OPT_MAX] = {
        {LEASH_OPT_PROFILE_ID, "profile", 0, LEASH_OPT_PROFILE, -1, "NAME",
         "take settings from profile NAME (see leash.ini(5))", "default", LEASH_OPT_CLI_ONLY},
        {LEASH_OPT_PROFILE_FILE, "profile-file", 0, LEASH_OPT_PATH, -1, "PATH",
         "also read profiles from PATH (may be repeated)", "none", LEASH_OPT_CLI_ONLY},
        {LEASH_OPT_INHERIT, "inherit", 0, LEASH_OPT_PROFILE, -1, "NAME",
         "take profile NAME's values first, then override them", "none", LEASH_OPT_NO_CLI | LEASH_OPT_NO_SYSTEM},
        {LEASH_OPT_MEMORY, "memory", 'm', LEASH_OPT_SIZE, LEASH_LIMIT_MEMORY, "SIZE",
         "memory.max of the job; with it, swap defaults to 0", "max"},
        {LEASH_OPT_MEMORY_HIGH, "memory-high", 0, LEASH_OPT_SIZE, LEASH_LIMIT_MEMORY_HIGH, "SIZE",
         "memory.high: throttle and reclaim above this", "max"},
        {LEASH_OPT_SWAP, "swap", 0, LEASH_OPT_SIZE, LEASH_LIMIT_SWAP, "SIZE", "memory.swap.max of the job",
         "max (0 with --memory)"},
        {LEASH_OPT_PIDS, "pids", 'P', LEASH_OPT_COUNT, LEASH_LIMIT_PIDS, "N",
         "pids.max: processes and threads of the whole job", "max"},
        {LEASH_OPT_CPUS_ID, "cpus", 'c', LEASH_OPT_CPUS, LEASH_LIMIT_CPUS, "X",
         "CPU bandwidth in cores, decimals allowed (cpu.max)", "max"},
        {LEASH_OPT_CPU_TIME, "cpu-time", 't', LEASH_OPT_DURATION, LEASH_LIMIT_CPU_TIME, "DURATION",
         "CPU time (user+system) of the whole process tree", "none"},
        {LEASH_OPT_WALL_TIME, "wall-time", 'w', LEASH_OPT_DURATION, LEASH_LIMIT_WALL_TIME, "DURATION",
         "wall-clock time", "none"},
        {LEASH_OPT_GRACE, "grace", 'g', LEASH_OPT_DURATION, -1, "DURATION", "time between the soft signal and SIGKILL",
         "5s"},
        {LEASH_OPT_SIGNAL_ID, "signal", 's', LEASH_OPT_SIGNAL, -1, "SIG",
         "the soft signal sent when a time limit is reached", "XCPU"},
        {LEASH_OPT_NOFILE, "nofile", 0, LEASH_OPT_COUNT, LEASH_LIMIT_NOFILE, "N",
         "RLIMIT_NOFILE: open files per process", "inherited"},
        {LEASH_OPT_FSIZE, "fsize", 0, LEASH_OPT_SIZE, LEASH_LIMIT_FSIZE, "SIZE",
         "RLIMIT_FSIZE: largest file a process may write", "inherited"},
        {LEASH_OPT_CORE, "core", 0, LEASH_OPT_SIZE, LEASH_LIMIT_CORE, "SIZE", "RLIMIT_CORE: largest core dump",
         "inherited"},
        {LEASH_OPT_REPORT, "report", 'o', LEASH_OPT_PATH, -1, "PATH",
         "write the report to PATH, - for stdout, or to descriptor N with fd:N", "none", LEASH_OPT_CLI_ONLY},
        {LEASH_OPT_REPORT_DIR, "report-dir", 0, LEASH_OPT_PATH, -1, "DIR",
         "without --report, write the report to DIR/NAME-PID.FORMAT", "none"},
        {LEASH_OPT_FORMAT_ID, "format", 'f', LEASH_OPT_FORMAT, -1, "FORMAT",
         "report format: json, kv, text or isolate (isolate(1)'s meta file)", "json"},
        {LEASH_OPT_NAME_ID, "name", 'n', LEASH_OPT_NAME, -1, "NAME",
         "job name, used in the cgroup name ([A-Za-z0-9_.-], at most 64)", "the command's name"},
        {LEASH_OPT_CGROUP_PARENT, "cgroup-parent", 0, LEASH_OPT_PATH, -1, "PATH",
         "cgroup under which job cgroups are created",
         "leash at the cgroup2 root (root), the delegated subtree (user)"},
        {LEASH_OPT_STRICT, "strict", 0, LEASH_OPT_FLAG, -1, NULL,
         "refuse to run if a requested limit cannot be enforced by a cgroup controller", "off"},
        {LEASH_OPT_QUIET, "quiet", 'q', LEASH_OPT_FLAG, -1, NULL, "no summary or weak-limit lines on stderr", "off",
         LEASH_OPT_CLI_ONLY},
        {LEASH_OPT_VERBOSE, "verbose", 'v', LEASH_OPT_FLAG, -1, NULL,
         "narrate the run on stderr: placement, limits, signals, leftovers", "off", LEASH_OPT_CLI_ONLY},
        {LEASH_OPT_USER, "user", 0, LEASH_OPT_ID, -1, "USER",
         "run the job as this user (name or uid; leash must be root)", "leash's own"},
        {LEASH_OPT_GROUP, "group", 0, LEASH_OPT_ID, -1, "GROUP",
         "run the job with this group (name or gid; leash must be root)", "the user's primary group"},
        {LEASH_OPT_NO_SUPPLEMENTARY_GROUPS, "no-supplementary-groups", 0, LEASH_OPT_FLAG, -1, NULL,
         "with --user: no supplementary groups instead of the user's", "off"},
        {LEASH_OPT_CAPS_ID, "caps", 0, LEASH_OPT_CAPS, -1, "CAPS",
         "capabilities the job keeps: none, keep (leash's, untouched) or a list (net_bind_service,chown)", "none"},
        {LEASH_OPT_ALLOW_NEW_PRIVS, "allow-new-privs", 0, LEASH_OPT_FLAG, -1, NULL,
         "do not set no_new_privs (lets setuid binaries in the job gain privileges)", "off"},
        {LEASH_OPT_SECCOMP, "seccomp", 0, LEASH_OPT_FILTERS, -1, "SETS",
         "syscall filter sets: no-network, no-ptrace, no-namespaces, no-kernel (comma-separated)", "none"},
        {LEASH_OPT_SECCOMP_ACTION, "seccomp-action", 0, LEASH_OPT_ACTION, -1, "ACTION",
         "what a filtered syscall gets: errno (EPERM), kill (SIGSYS) or log (allowed, logged)", "errno"},
        {LEASH_OPT_CLEAN_ENV, "clean-env", 0, LEASH_OPT_FLAG, -1, NULL,
         "start the job from a minimal environment (PATH, HOME, USER, LOGNAME, SHELL)", "off"},
        {LEASH_OPT_ENV, "env", 0, LEASH_OPT_LIST, -1, "K=V", "set K to V in the job's environment (may repeat)",
         "none"},
        {LEASH_OPT_UNSETENV, "unsetenv", 0, LEASH_OPT_LIST, -1, "K", "remove K from the job's environment (may repeat)",
         "none"},
        {LEASH_OPT_CHDIR, "chdir", 0, LEASH_OPT_PATH, -1, "DIR", "run the job in DIR (entered as the job's user)",
         "leash's working directory"},
        {LEASH_OPT_NO_STDIN, "no-stdin", 0, LEASH_OPT_FLAG, -1, NULL, "the job's stdin is /dev/null", "off"},
        {LEASH_OPT_KEEP_FDS, "keep-fds", 0, LEASH_OPT_FLAG, -1, NULL,
         "let the job inherit file descriptors above 2 (closed by default)", "off"},
        {LEASH_OPT_ISOLATE, "isolate", 0, LEASH_OPT_FLAG, -1, NULL,
         "own pid and mount namespaces under an init, cgroupfs read-only: the job cannot see or touch leash or "
         "the cgroup tree (leash must be root)",
         "off"},
        {LEASH_OPT_SAMPLE, "sample", 0, LEASH_OPT_DURATION, -1, "DURATION",
         "sample every figure of the job at this interval (series, peaks, --limit)", "none"},
        {LEASH_OPT_SERIES, "series", 0, LEASH_OPT_PATH, -1, "PATH", "write one row per sample to PATH (with --sample)",
         "none", LEASH_OPT_CLI_ONLY},
        {LEASH_OPT_SERIES_FORMAT, "series-format", 0, LEASH_OPT_FORMAT, -1, "FORMAT",
         "time series format: csv (a header row) or jsonl", "csv"},
        {LEASH_OPT_SAMPLE_DISK, "sample-disk", 0, LEASH_OPT_PATH, -1, "DIR",
         "also sample the disk use and file count under DIR", "none"},
        {LEASH_OPT_LIMIT, "limit", 0, LEASH_OPT_LIST, -1, "FIGURE=VALUE",
         "kill the job when a sampled figure passes VALUE: disk, files, io_write_bytes, total_processes, "
         "cores_avg, memory... (may repeat)",
         "none"},
        {LEASH_OPT_GPUS, "gpus", 0, LEASH_OPT_DEVICES, -1, "GPUS",
         "the GPUs the job may open: none, all or indices such as 0,2-3 (a cgroup device program, root only); sets "
         "CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES",
         "every GPU"},
        {LEASH_OPT_DEVICES_ID, "devices", 0, LEASH_OPT_DEVICES, -1, "DEVICES",
         "the only device nodes the job may open: none, or 'c 1:3 rw,b 8:* r,/dev/fuse rw' (a cgroup device "
         "program, root only)",
         "every device"},
};

/* The words of the two format options, in their enums' order: the parser
 * takes them from here, and so do --help's completion and profiles show */
static const char *const format_names[] = {"json", "kv", "text", "isolate", NULL}; /* enum leash_format */
static const char *const series_format_names[] = {"csv", "jsonl", NULL};           /* enum leash_series_format */

static int choice_index(const char *const *names, const char *value) {
        for (int i = 0; value && names[i]; i++)
                if (strcmp(names[i], value) == 0)
                        return i;
        return -1;
}

size_t leash_option_choices(const struct leash_option *o, const char **ret, size_t max) {
        const char *tmp[16];
        size_t n = 0;

        switch (o->type) {
        case LEASH_OPT_FORMAT:
                for (const char *const *w = o->id == LEASH_OPT_SERIES_FORMAT ? series_format_names : format_names; *w;
                     w++)
                        tmp[n++] = *w;
                break;
        case LEASH_OPT_ACTION: /* what filter_parse_action takes: the sandbox's names */
                for (int a = LEASH_SECCOMP_ERRNO; a <= LEASH_SECCOMP_LOG; a++)
                        tmp[n++] = leash_seccomp_action_to_string((enum leash_seccomp_action) a);
                break;
        case LEASH_OPT_FILTERS: /* what filter_parse_sets takes */
                tmp[n++] = "none";
                for (unsigned i = 0; i < LEASH_FILTER_COUNT && n < ELEMENTSOF(tmp); i++)
                        tmp[n++] = leash_filter_to_string(1U << i);
                break;
        case LEASH_OPT_CAPS: /* and capability names, too many to offer */
                tmp[n++] = "none";
                tmp[n++] = "keep";
                break;
        case LEASH_OPT_DEVICES: /* and GPU indices or device entries */
                tmp[n++] = "none";
                if (o->id == LEASH_OPT_GPUS)
                        tmp[n++] = "all";
                break;
        default:
                break;
        }
        for (size_t i = 0; i < n && i < max; i++)
                ret[i] = tmp[i];
        return n < max ? n : max;
}

void leash_settings_init(struct leash_settings *s) {
        memset(s, 0, sizeof *s);
        leash_spec_init(&s->config);
        s->format = LEASH_FORMAT_JSON;
}

void leash_settings_done(struct leash_settings *s) {
        free(s->report_path);
        free(s->name_buf);
        free(s->parent_buf);
        s->report_path = s->name_buf = s->parent_buf = NULL;
        free(s->user_buf);
        free(s->group_buf);
        free(s->chdir_buf);
        s->user_buf = s->group_buf = s->chdir_buf = NULL;
        for (size_t i = 0; i < s->n_env_set; i++)
                free(s->env_set[i]);
        for (size_t i = 0; i < s->n_env_unset; i++)
                free(s->env_unset[i]);
        free(s->env_set);
        free(s->env_unset);
        s->env_set = s->env_unset = NULL;
        s->n_env_set = s->n_env_unset = 0;
        free(s->report_dir);
        free(s->profile_name);
        for (size_t i = 0; i < s->n_profile_files; i++)
                free(s->profile_files[i]);
        free(s->profile_files);
        free(s->series_path);
        free(s->sample_disk_buf);
        s->series_path = s->sample_disk_buf = NULL;
        for (size_t i = 0; i < s->n_limits; i++)
                free(s->limits[i]);
        free(s->limits);
        s->limits = NULL;
        s->n_limits = 0;
        s->report_dir = s->profile_name = NULL;
        s->profile_files = NULL;
        s->n_profile_files = 0;
}

static bool *flag_field(struct leash_settings *s, enum leash_opt_id id) {
        struct leash_sandbox *x = &s->config.sandbox;
        switch (id) {
        case LEASH_OPT_STRICT:
                return &s->config.strict;
        case LEASH_OPT_QUIET:
                return &s->quiet;
        case LEASH_OPT_NO_SUPPLEMENTARY_GROUPS:
                return &x->no_supplementary_groups;
        case LEASH_OPT_ALLOW_NEW_PRIVS:
                return &x->allow_new_privs;
        case LEASH_OPT_CLEAN_ENV:
                return &x->clean_env;
        case LEASH_OPT_NO_STDIN:
                return &x->no_stdin;
        case LEASH_OPT_KEEP_FDS:
                return &x->keep_fds;
        case LEASH_OPT_ISOLATE:
                return &x->isolate;
        default:
                return &s->verbose;
        }
}

/* An environment variable name: not empty, no '=' or NUL. */
static bool env_key_valid(const char *k, size_t len) {
        return len > 0 && memchr(k, '=', len) == NULL;
}

static int list_add(char ***list, size_t *n, const char *value) {
        char **l = realloc(*list, (*n + 2) * sizeof *l);
        if (!l)
                return -ENOMEM;
        *list = l;
        if (!(l[*n] = strdup(value)))
                return -ENOMEM;
        (*n)++;
        l[*n] = NULL;
        return 0;
}

char *const *leash_option_list(const struct leash_settings *s, const struct leash_option *o, size_t *ret_n) {
        if (o->id == LEASH_OPT_ENV) {
                *ret_n = s->n_env_set;
                return s->env_set;
        }
        if (o->id == LEASH_OPT_LIMIT) {
                *ret_n = s->n_limits;
                return s->limits;
        }
        if (o->id == LEASH_OPT_UNSETENV) {
                *ret_n = s->n_env_unset;
                return s->env_unset;
        }
        *ret_n = 0;
        return NULL;
}

bool leash_profile_name_is_valid(const char *s) {
        /* a job name, shorter: inih keeps at most 49 bytes of a section name */
        return job_name_is_valid(s) && strlen(s) <= 48;
}

static int append_string(char ***list, size_t *n, const char *value) {
        char **l = realloc(*list, (*n + 1) * sizeof **list);
        if (!l)
                return -ENOMEM;
        *list = l;
        l[*n] = strdup(value);
        if (!l[*n])
                return -ENOMEM;
        (*n)++;
        return 0;
}

const struct leash_option *leash_option_by_name(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(leash_options); i++)
                if (strcmp(leash_options[i].name, name) == 0)
                        return &leash_options[i];
        return NULL;
}

const struct leash_option *leash_option_by_short(int c) {
        for (size_t i = 0; i < ELEMENTSOF(leash_options); i++)
                if (c && leash_options[i].short_opt == c)
                        return &leash_options[i];
        return NULL;
}

static int fail(struct leash_error *err, int r, const char *value, const char *expected) {
        if (err) {
                err->error = -r;
                err->step = "parse";
                snprintf(err->detail, sizeof err->detail, "'%s': expected %s", value ? value : "", expected);
        }
        return r;
}

/* what a bad --gpus or --devices value should have been, naming the part at fault */
static const char *devices_expected(bool gpus, int r, const char *bad, char *buf, size_t size) {
        if (gpus)
                snprintf(buf, size, "none, all, or GPU indices 0 to %d such as 0,2-3 (not UUIDs)%s%s%s",
                         LEASH_GPUS_MAX - 1, *bad ? "; at fault: '" : "", bad, *bad ? "'" : "");
        else
                snprintf(buf, size,
                         "none, or entries 'c|b|a MAJOR:MINOR [rwm]' or 'PATH [rwm]' separated by commas, at most "
                         "%d%s%s%s%s",
                         LEASH_DEVICE_RULES_MAX, *bad ? "; at fault: '" : "", bad, *bad ? "'" : "",
                         r == -ENOENT   ? " (no such file)"
                         : r == -ENODEV ? " (not a device node)"
                                        : "");
        return buf;
}

static int parse_flag(const char *value, bool *ret) {
        if (!value || strcasecmp(value, "true") == 0 || strcasecmp(value, "yes") == 0 || strcmp(value, "1") == 0 ||
            strcasecmp(value, "on") == 0) {
                *ret = true;
                return 0;
        }
        if (strcasecmp(value, "false") == 0 || strcasecmp(value, "no") == 0 || strcmp(value, "0") == 0 ||
            strcasecmp(value, "off") == 0) {
                *ret = false;
                return 0;
        }
        return -EINVAL;
}

static int set_string(char **field, const char *value) {
        char *copy = strdup(value);
        if (!copy)
                return -ENOMEM;
        free(*field);
        *field = copy;
        return 0;
}

static int set_size(struct leash_settings *s, const struct leash_option *o, const char *value,
                    struct leash_error *err) {
        struct leash_spec *c = &s->config;
        uint64_t v;
        int r;

        r = parse_size(value, &v);
        if (r == -ERANGE)
                return fail(err, r, value, "a size of at most " PARSE_SIZE_MAX_TEXT " (or max)");
        if (r < 0)
                return fail(err, r, value, "a size: bytes or K/M/G/T (1024-based), or max");
        if (v == 0 && (o->id == LEASH_OPT_MEMORY || o->id == LEASH_OPT_MEMORY_HIGH))
                return fail(err, -EINVAL, value, "a size above 0");
        leash_spec_set_limit(c, (enum leash_limit) o->limit, v);
        return 0;
}

static int set_count(struct leash_settings *s, const struct leash_option *o, const char *value,
                     struct leash_error *err) {
        struct leash_spec *c = &s->config;
        uint64_t v;
        int r;

        r = parse_count(value, &v);
        if (r == -ERANGE)
                return fail(err, r, value, "a count of at most " PARSE_COUNT_MAX_TEXT " (or max)");
        if (r < 0 || v == 0)
                return fail(err, -EINVAL, value, "a whole number above 0, or max");
        /* pids.max refuses more than the kernel's PID_MAX_LIMIT */
        if (o->id == LEASH_OPT_PIDS && v != PARSE_MAX && v > 4194304)
                return fail(err, -ERANGE, value, "at most 4194304 (the kernel's largest pid count), or max");
        leash_spec_set_limit(c, (enum leash_limit) o->limit, v);
        return 0;
}

static int set_cpus(struct leash_settings *s, const struct leash_option *o, const char *value,
                    struct leash_error *err) {
        struct leash_spec *c = &s->config;
        uint64_t v;
        int r;

        r = parse_cpus(value, &v);
        if (r == -ERANGE)
                return fail(err, r, value, "a number of cores that fits in 64 bits");
        if (r < 0)
                return fail(err, r, value, "a number of cores such as 1, 0.5 or 2.25");
        /* cpu.max refuses a quota below 1 ms per 100 ms period. */
        if (v < 10000)
                return fail(err, -EINVAL, value, "at least 0.01 cores");
        if (v > 100000000000ULL)
                return fail(err, -ERANGE, value, "at most 100000 cores");
        leash_spec_set_limit(c, (enum leash_limit) o->limit, v);
        return 0;
}

static int set_duration(struct leash_settings *s, const struct leash_option *o, const char *value,
                        struct leash_error *err) {
        struct leash_spec *c = &s->config;
        uint64_t v;
        int r;

        r = parse_duration(value, &v);
        if (r == -ERANGE)
                return fail(err, r, value, "a duration of at most " PARSE_DURATION_MAX_TEXT);
        if (r < 0)
                return fail(err, r, value, "a duration such as 90, 1.5s, 250ms, 1m30s, 1h2m or 00:01:30");
        if (o->id == LEASH_OPT_GRACE) {
                c->grace_ns = v;
                return 0;
        }
        if (o->id == LEASH_OPT_SAMPLE) {
                if (v < NSEC_PER_MSEC)
                        return fail(err, -EINVAL, value, "an interval of at least 1ms");
                c->sampling.interval_ns = v;
                return 0;
        }
        if (v == 0)
                return fail(err, -EINVAL, value, "a duration above 0");
        leash_spec_set_limit(c, (enum leash_limit) o->limit, v);
        return 0;
}

static int set_signal(struct leash_settings *s, const struct leash_option *o, const char *value,
                      struct leash_error *err) {
        struct leash_spec *c = &s->config;
        int r, sig;

        r = parse_signal(value, &sig);
        if (r < 0)
                return fail(err, r, value, "a signal name or number such as XCPU, TERM or 24");
        if (sig == SIGKILL || sig == SIGSTOP)
                return fail(err, -EINVAL, value, "a signal the job can catch, not KILL or STOP");
        c->soft_signal = sig;
        return 0;
}

static int set_format(struct leash_settings *s, const struct leash_option *o, const char *value,
                      struct leash_error *err) {
        struct leash_spec *c = &s->config;
        int r;

        if (o->id == LEASH_OPT_SERIES_FORMAT) {
                if ((r = choice_index(series_format_names, value)) < 0)
                        return fail(err, -EINVAL, value, "csv or jsonl");
                c->sampling.series_format = (enum leash_series_format) r;
                return 0;
        }
        if ((r = choice_index(format_names, value)) < 0)
                return fail(err, -EINVAL, value, "json, kv, text or isolate");
        s->format = (enum leash_format) r;
        return 0;
}

static int set_name(struct leash_settings *s, const struct leash_option *o, const char *value,
                    struct leash_error *err) {
        struct leash_spec *c = &s->config;
        int r;

        if (!job_name_is_valid(value))
                return fail(err, -EINVAL, value, "1 to 64 of A-Z a-z 0-9 _ . -, not starting with a dot");
        r = set_string(&s->name_buf, value);
        if (r < 0)
                return r;
        c->name = s->name_buf;
        return 0;
}

static int set_path(struct leash_settings *s, const struct leash_option *o, const char *value,
                    struct leash_error *err) {
        struct leash_spec *c = &s->config;
        int r;

        if (!value || !*value)
                return fail(err, -EINVAL, value, "a path");
        if (o->id == LEASH_OPT_REPORT) {
                r = set_string(&s->report_path, value);
        } else if (o->id == LEASH_OPT_CHDIR) {
                r = set_string(&s->chdir_buf, value);
                c->sandbox.chdir = s->chdir_buf;
        } else if (o->id == LEASH_OPT_REPORT_DIR) {
                r = set_string(&s->report_dir, value);
        } else if (o->id == LEASH_OPT_SERIES) {
                r = set_string(&s->series_path, value);
        } else if (o->id == LEASH_OPT_SAMPLE_DISK) {
                r = set_string(&s->sample_disk_buf, value);
                c->sampling.disk_path = s->sample_disk_buf;
        } else if (o->id == LEASH_OPT_PROFILE_FILE) {
                r = append_string(&s->profile_files, &s->n_profile_files, value);
        } else {
                if (path_has_dotdot(value))
                        return fail(err, -EINVAL, value, "a path without '..'");
                r = set_string(&s->parent_buf, value);
                if (r >= 0) /* printed in reports and by check: as the kernel names it */
                        path_simplify_slashes(s->parent_buf);
                c->cgroup_parent = s->parent_buf;
        }
        if (r < 0)
                return r;
        return 0;
}

static int set_flag(struct leash_settings *s, const struct leash_option *o, const char *value,
                    struct leash_error *err) {
        bool b;

        if (parse_flag(value, &b) < 0)
                return fail(err, -EINVAL, value, "true or false");
        *flag_field(s, o->id) = b;
        return 0;
}

static int set_id(struct leash_settings *s, const struct leash_option *o, const char *value, struct leash_error *err) {
        struct leash_spec *c = &s->config;
        int r;

        /* resolved in the user database when the job starts, before anything is created */
        if (!value || !*value || strpbrk(value, ":/, \t\n") || strlen(value) > 256)
                return fail(err, -EINVAL, value,
                            o->id == LEASH_OPT_USER ? "a user name or uid" : "a group name or gid");
        r = set_string(o->id == LEASH_OPT_USER ? &s->user_buf : &s->group_buf, value);
        if (r < 0)
                return r;
        if (o->id == LEASH_OPT_USER)
                c->sandbox.user = s->user_buf;
        else
                c->sandbox.group = s->group_buf;
        return 0;
}

static int set_caps(struct leash_settings *s, const struct leash_option *o, const char *value,
                    struct leash_error *err) {
        struct leash_spec *c = &s->config;

        char bad[128] = "";
        if (caps_parse(value, &c->sandbox.caps_mode, &c->sandbox.caps_keep, bad, sizeof bad) < 0)
                return fail(err, -EINVAL, value && value[0] ? bad : value,
                            "none, keep, or capability names such as net_bind_service,chown");
        return 0;
}

static int set_filters(struct leash_settings *s, const struct leash_option *o, const char *value,
                       struct leash_error *err) {
        struct leash_spec *c = &s->config;

        char bad[128] = "";
        if (filter_parse_sets(value, &c->sandbox.seccomp, bad, sizeof bad) < 0)
                return fail(err, -EINVAL, bad,
                            "none, or filter sets no-network, no-ptrace, no-namespaces, no-kernel "
                            "separated by commas");
        return 0;
}

static int set_devices(struct leash_settings *s, const struct leash_option *o, const char *value,
                       struct leash_error *err) {
        struct leash_spec *c = &s->config;
        int r;

        char bad[128] = "", expected[320];
        r = o->id == LEASH_OPT_GPUS ? devices_parse_gpus(value, &c->devices, bad, sizeof bad)
                                    : devices_parse_list(value, &c->devices, bad, sizeof bad);
        if (r < 0)
                return fail(err, r == -ENOMEM ? -ENOMEM : -EINVAL, value,
                            devices_expected(o->id == LEASH_OPT_GPUS, r, bad, expected, sizeof expected));
        return 0;
}

static int set_action(struct leash_settings *s, const struct leash_option *o, const char *value,
                      struct leash_error *err) {
        struct leash_spec *c = &s->config;

        if (filter_parse_action(value, &c->sandbox.seccomp_action) < 0)
                return fail(err, -EINVAL, value, "errno, kill or log");
        return 0;
}

static int set_list(struct leash_settings *s, const struct leash_option *o, const char *value,
                    struct leash_error *err) {
        struct leash_spec *c = &s->config;
        int r;

        if (!value)
                return fail(err, -EINVAL, value, "a value");
        if (o->id == LEASH_OPT_LIMIT) {
                enum leash_fig fig;
                const char *expected;
                uint64_t lv;
                r = sample_limit_parse(value, &fig, &lv, &expected);
                if (r == -ERANGE)
                        return fail(err, r, value, "a value that fits in 64 bits");
                if (r < 0)
                        return fail(err, r, value, expected);
                r = list_add(&s->limits, &s->n_limits, value);
                c->sampling.limit[fig] = lv;
        } else if (o->id == LEASH_OPT_ENV) {
                const char *eq = strchr(value, '=');
                if (!eq || !env_key_valid(value, (size_t) (eq - value)))
                        return fail(err, -EINVAL, value, "NAME=VALUE with a non-empty NAME");
                r = list_add(&s->env_set, &s->n_env_set, value);
                c->sandbox.env_set = s->env_set;
                c->sandbox.n_env_set = s->n_env_set;
        } else {
                if (!env_key_valid(value, strlen(value)))
                        return fail(err, -EINVAL, value, "a variable NAME, without '='");
                r = list_add(&s->env_unset, &s->n_env_unset, value);
                c->sandbox.env_unset = s->env_unset;
                c->sandbox.n_env_unset = s->n_env_unset;
        }
        if (r < 0)
                return r;
        return 0;
}

static int set_profile(struct leash_settings *s, const struct leash_option *o, const char *value,
                       struct leash_error *err) {
        int r;

        if (!value || !leash_profile_name_is_valid(value))
                return fail(err, -EINVAL, value,
                            "a profile name: 1 to 48 of A-Z a-z 0-9 _ . -, not starting with a dot");
        if (o->id == LEASH_OPT_PROFILE_ID) {
                r = set_string(&s->profile_name, value);
                if (r < 0)
                        return r;
        }
        /* inherit is resolved by the profile module, which keeps it */
        return 0;
}

/* The option's value checked and stored; one function per value type. */
typedef int option_setter(struct leash_settings *s, const struct leash_option *o, const char *value,
                          struct leash_error *err);

static option_setter *const option_setters[] = {
        [LEASH_OPT_SIZE] = set_size,       [LEASH_OPT_COUNT] = set_count,
        [LEASH_OPT_CPUS] = set_cpus,       [LEASH_OPT_DURATION] = set_duration,
        [LEASH_OPT_SIGNAL] = set_signal,   [LEASH_OPT_FORMAT] = set_format,
        [LEASH_OPT_NAME] = set_name,       [LEASH_OPT_PATH] = set_path,
        [LEASH_OPT_FLAG] = set_flag,       [LEASH_OPT_ID] = set_id,
        [LEASH_OPT_CAPS] = set_caps,       [LEASH_OPT_FILTERS] = set_filters,
        [LEASH_OPT_DEVICES] = set_devices, [LEASH_OPT_ACTION] = set_action,
        [LEASH_OPT_LIST] = set_list,       [LEASH_OPT_PROFILE] = set_profile,
};

int leash_option_set(struct leash_settings *s, const struct leash_option *o, const char *value, const char *origin,
                     struct leash_error *err) {
        int r;

        if ((size_t) o->type >= ELEMENTSOF(option_setters) || !option_setters[o->type])
                return -EINVAL;
        r = option_setters[o->type](s, o, value, err);
        if (r < 0)
                return r;
        s->origin[o->id] = origin;
        return 0;
}

/* A limit's value (a size, count, number of cores or duration), or the
 * option's default text when none is set. */
static void format_limit(const struct leash_settings *s, const struct leash_option *o, char *buf, size_t size) {
        const struct leash_spec *c = &s->config;
        uint64_t v;

        if (o->id == LEASH_OPT_GRACE) {
                format_duration(c->grace_ns, buf, size);
                return;
        }
        if (o->id == LEASH_OPT_SAMPLE) {
                if (c->sampling.interval_ns)
                        format_duration(c->sampling.interval_ns, buf, size);
                else
                        snprintf(buf, size, "%s", o->default_text);
                return;
        }
        if (!leash_spec_has(c, (enum leash_limit) o->limit)) {
                snprintf(buf, size, "%s", o->default_text);
                return;
        }
        v = c->limit[o->limit]; /* grace and sample have no limit slot (o->limit is -1) */
        if (o->type == LEASH_OPT_SIZE)
                format_size(v, buf, size);
        else if (o->type == LEASH_OPT_CPUS)
                snprintf(buf, size, "%g", (double) v / 1e6);
        else if (o->type == LEASH_OPT_DURATION)
                format_duration(v, buf, size);
        else if (v == LEASH_MAX)
                snprintf(buf, size, "max");
        else
                snprintf(buf, size, "%llu", (unsigned long long) v);
}

static const char *path_value(const struct leash_settings *s, const struct leash_option *o) {
        const struct leash_spec *c = &s->config;

        switch (o->id) {
        case LEASH_OPT_REPORT:
                return s->report_path;
        case LEASH_OPT_CHDIR:
                return c->sandbox.chdir;
        case LEASH_OPT_REPORT_DIR:
                return s->report_dir;
        case LEASH_OPT_PROFILE_FILE:
                return s->n_profile_files ? s->profile_files[s->n_profile_files - 1] : NULL;
        case LEASH_OPT_SERIES:
                return s->series_path;
        case LEASH_OPT_SAMPLE_DISK:
                return s->sample_disk_buf;
        default:
                return c->cgroup_parent;
        }
}

/* The sandbox's values: capabilities, seccomp filter sets, devices. */
static void format_sandbox(const struct leash_settings *s, const struct leash_option *o, char *buf, size_t size) {
        const struct leash_spec *c = &s->config;
        size_t len = 0;

        switch (o->type) {
        case LEASH_OPT_CAPS:
                if (c->sandbox.caps_mode == LEASH_CAPS_LIST && c->sandbox.caps_keep)
                        caps_format_mask(c->sandbox.caps_keep, buf, size);
                else
                        snprintf(buf, size, "%s", c->sandbox.caps_mode == LEASH_CAPS_KEEP ? "keep" : "none");
                break;
        case LEASH_OPT_FILTERS:
                buf[0] = '\0';
                for (unsigned i = 0; i < LEASH_FILTER_COUNT; i++)
                        if (c->sandbox.seccomp & (1U << i) && len < size)
                                len += (size_t) snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                                                         leash_filter_to_string(1U << i));
                if (!len)
                        snprintf(buf, size, "none");
                break;
        default: /* LEASH_OPT_DEVICES */
                if (o->id == LEASH_OPT_GPUS && c->devices.gpus == LEASH_GPUS_UNSET)
                        snprintf(buf, size, "%s", o->default_text);
                else if (o->id == LEASH_OPT_GPUS)
                        devices_format_gpus(&c->devices, buf, size);
                else if (!c->devices.allow_list)
                        snprintf(buf, size, "%s", o->default_text);
                else
                        devices_format_list(&c->devices, buf, size);
                break;
        }
}

static void format_list(const struct leash_settings *s, const struct leash_option *o, char *buf, size_t size) {
        size_t n, len = 0;
        char *const *l = leash_option_list(s, o, &n);

        buf[0] = '\0';
        for (size_t i = 0; i < n && len < size; i++)
                len += (size_t) snprintf(buf + len, size - len, "%s%s", i ? " " : "", l[i]);
        if (!n)
                snprintf(buf, size, "%s", o->default_text);
}

void leash_option_format(const struct leash_settings *s, const struct leash_option *o, char *buf, size_t size) {
        const struct leash_spec *c = &s->config;
        const char *v;

        switch (o->type) {
        case LEASH_OPT_SIZE:
        case LEASH_OPT_COUNT:
        case LEASH_OPT_CPUS:
        case LEASH_OPT_DURATION:
                format_limit(s, o, buf, size);
                break;
        case LEASH_OPT_SIGNAL:
                snprintf(buf, size, "%s", signal_name(c->soft_signal));
                break;
        case LEASH_OPT_FORMAT:
                if (o->id == LEASH_OPT_SERIES_FORMAT)
                        snprintf(buf, size, "%s", series_format_names[c->sampling.series_format]);
                else
                        snprintf(buf, size, "%s", format_names[s->format]);
                break;
        case LEASH_OPT_NAME:
                snprintf(buf, size, "%s", c->name ? c->name : o->default_text);
                break;
        case LEASH_OPT_PATH:
                v = path_value(s, o);
                snprintf(buf, size, "%s", v ? v : o->default_text);
                break;
        case LEASH_OPT_FLAG:
                snprintf(buf, size, "%s", *flag_field((struct leash_settings *) s, o->id) ? "true" : "false");
                break;
        case LEASH_OPT_ID:
                v = o->id == LEASH_OPT_USER ? c->sandbox.user : c->sandbox.group;
                snprintf(buf, size, "%s", v ? v : o->default_text);
                break;
        case LEASH_OPT_PROFILE:
                snprintf(buf, size, "%s",
                         o->id == LEASH_OPT_PROFILE_ID && s->profile_name ? s->profile_name : o->default_text);
                break;
        case LEASH_OPT_CAPS:
        case LEASH_OPT_FILTERS:
        case LEASH_OPT_DEVICES:
                format_sandbox(s, o, buf, size);
                break;
        case LEASH_OPT_ACTION:
                snprintf(buf, size, "%s", leash_seccomp_action_to_string(c->sandbox.seccomp_action));
                break;
        case LEASH_OPT_LIST:
                format_list(s, o, buf, size);
                break;
        }
}
