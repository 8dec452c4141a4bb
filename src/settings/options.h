/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one table of `leash run` settings. Each key is defined once here (name,
 * short option, value type, help) and that table drives the command-line
 * parser, --help, INI profiles, `leash profiles show` and the man-page check,
 * so that none of them can drift from the others.
 */
#pragma once

#include "../engine/leash.h"

enum leash_opt_type {
        LEASH_OPT_SIZE,     /* bytes with K/M/G/T, or max */
        LEASH_OPT_COUNT,    /* a positive count, or max */
        LEASH_OPT_CPUS,     /* decimal cores */
        LEASH_OPT_DURATION, /* 1.5s, 250ms, 2m */
        LEASH_OPT_SIGNAL,   /* XCPU, SIGTERM, 9 */
        LEASH_OPT_FORMAT,   /* json|kv|text */
        LEASH_OPT_NAME,     /* job name */
        LEASH_OPT_PATH,     /* a path (report, cgroup parent) */
        LEASH_OPT_FLAG,     /* no value (true/false in INI files) */
        LEASH_OPT_ID,       /* a user or group: name or number */
        LEASH_OPT_CAPS,     /* none|keep|LIST of capability names */
        LEASH_OPT_FILTERS,  /* none or NAME[,NAME...] of seccomp filter sets */
        LEASH_OPT_ACTION,   /* errno|kill|log */
        LEASH_OPT_LIST,     /* may repeat; each value is added (--env K=V, --unsetenv K) */
        LEASH_OPT_PROFILE,  /* a profile name */
        LEASH_OPT_DEVICES,  /* --gpus none|all|LIST, --devices none|ENTRY[,ENTRY...] (devices.c) */
};

/* Where a key may appear (flags of struct leash_option); 0 = everywhere. */
enum {
        LEASH_OPT_NO_CLI = 1 << 0,     /* not a `leash run` option (inherit) */
        LEASH_OPT_NO_PROFILE = 1 << 1, /* not in a profile section */
        LEASH_OPT_NO_SYSTEM = 1 << 2,  /* not in leash.ini's [leash] section */
};
#define LEASH_OPT_CLI_ONLY (LEASH_OPT_NO_PROFILE | LEASH_OPT_NO_SYSTEM)

enum leash_opt_id {
        LEASH_OPT_PROFILE_ID,
        LEASH_OPT_PROFILE_FILE,
        LEASH_OPT_INHERIT,
        LEASH_OPT_MEMORY,
        LEASH_OPT_MEMORY_HIGH,
        LEASH_OPT_SWAP,
        LEASH_OPT_PIDS,
        LEASH_OPT_CPUS_ID,
        LEASH_OPT_CPU_TIME,
        LEASH_OPT_WALL_TIME,
        LEASH_OPT_GRACE,
        LEASH_OPT_SIGNAL_ID,
        LEASH_OPT_NOFILE,
        LEASH_OPT_FSIZE,
        LEASH_OPT_CORE,
        LEASH_OPT_REPORT,
        LEASH_OPT_REPORT_DIR,
        LEASH_OPT_FORMAT_ID,
        LEASH_OPT_NAME_ID,
        LEASH_OPT_CGROUP_PARENT,
        LEASH_OPT_STRICT,
        LEASH_OPT_QUIET,
        LEASH_OPT_VERBOSE,
        LEASH_OPT_USER,
        LEASH_OPT_GROUP,
        LEASH_OPT_NO_SUPPLEMENTARY_GROUPS,
        LEASH_OPT_CAPS_ID,
        LEASH_OPT_ALLOW_NEW_PRIVS,
        LEASH_OPT_SECCOMP,
        LEASH_OPT_SECCOMP_ACTION,
        LEASH_OPT_CLEAN_ENV,
        LEASH_OPT_ENV,
        LEASH_OPT_UNSETENV,
        LEASH_OPT_CHDIR,
        LEASH_OPT_NO_STDIN,
        LEASH_OPT_KEEP_FDS,
        LEASH_OPT_ISOLATE,
        /* sampling (issue 12) */
        LEASH_OPT_SAMPLE,
        LEASH_OPT_SERIES,
        LEASH_OPT_SERIES_FORMAT,
        LEASH_OPT_SAMPLE_DISK,
        LEASH_OPT_LIMIT,
        /* device nodes (issue 28) */
        LEASH_OPT_GPUS,
        LEASH_OPT_DEVICES_ID,
        _LEASH_OPT_MAX,
};

struct leash_option {
        enum leash_opt_id id;
        const char *name; /* long option and INI key */
        char short_opt;   /* 0 when none */
        enum leash_opt_type type;
        int limit;           /* enum leash_limit it sets, or -1 */
        const char *metavar; /* "SIZE", "DURATION", ... */
        const char *help;
        const char *default_text; /* shown in --help and profiles show, or NULL */
        unsigned flags;           /* LEASH_OPT_NO_*: where the key may not appear */
};

extern const struct leash_option leash_options[_LEASH_OPT_MAX];

/* Everything `leash run` can be told, with where each value came from. */
struct leash_settings {
        struct leash_spec config;
        char *report_path;
        enum leash_format format;
        bool quiet, verbose;
        char *name_buf, *parent_buf;
        char *user_buf, *group_buf, *chdir_buf;
        char **env_set, **env_unset; /* LEASH_OPT_LIST values, in order */
        size_t n_env_set, n_env_unset;
        const char *origin[_LEASH_OPT_MAX]; /* NULL = built-in default */
        char *report_dir;
        char *profile_name;   /* --profile, NULL = "default" */
        char **profile_files; /* --profile-file, in order */
        size_t n_profile_files;
        char *series_path;     /* --series */
        char *sample_disk_buf; /* --sample-disk */
        char **limits;         /* --limit FIGURE=VALUE, in order */
        size_t n_limits;
};

void leash_settings_init(struct leash_settings *s);
void leash_settings_done(struct leash_settings *s);

const struct leash_option *leash_option_by_name(const char *name);
const struct leash_option *leash_option_by_short(int c);

/* A profile name: 1 to 48 of [A-Za-z0-9_.-], not starting with a dot. */
bool leash_profile_name_is_valid(const char *s);

/* Parses value (NULL for flags from the command line) and stores it.
 * On failure fills err->detail with "VALUE: expected ..." and returns -EINVAL
 * or -ERANGE. origin is kept by pointer: it must outlive s. */
int leash_option_set(struct leash_settings *s, const struct leash_option *o, const char *value, const char *origin,
                     struct leash_error *err);

/* The fixed words an option takes, from the tables its parser uses (format
 * json kv text, series-format csv jsonl, seccomp-action, the seccomp sets,
 * caps none keep, gpus none all, devices none): at most max into ret, their
 * count returned; 0 where the values are open (sizes, paths, names). For
 * shell completion (leash __complete). */
size_t leash_option_choices(const struct leash_option *o, const char **ret, size_t max);

/* The values of a LEASH_OPT_LIST option, in the order given. */
char *const *leash_option_list(const struct leash_settings *s, const struct leash_option *o, size_t *ret_n);

/* The current value as text, as a user would write it (a list: its values
 * separated by spaces). */
void leash_option_format(const struct leash_settings *s, const struct leash_option *o, char *buf, size_t size);
