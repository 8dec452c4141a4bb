/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * struct leash_config: what a program embedding libleash says about its jobs,
 * by key and value, with the names and syntax of `leash run`'s options and of
 * leash.ini(5) (the one table, options.c). Each value is checked when it is
 * set; the caller's values are recorded in order and applied last when a job
 * is made, over leash.ini and the profile, whatever order the calls came in,
 * so `profile` = "hpo-trial" then `memory` = "2G" and the reverse mean the
 * same. The configuration files are read when a job is made (from the paths
 * given, never from the environment), so an edited profile is seen by the
 * next job, and a broken one fails it with FILE:LINE. What a build read is
 * stamped (basic/filestamp.c): while every stamp holds, the next job shares
 * that build instead of reading and parsing the files again (an installed
 * configuration, leash.ini and three profiles, cost a job 0.15 ms).
 */
#include "config.h"
#include "../engine/job/job.h"
#include "../engine/placement/placement.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../basic/filestamp.h"
#include "../basic/macro.h"
#include "options.h"
#include "profile.h"
#include "../engine/process/watchdog.h"

#ifndef LEASH_SYSCONFDIR
#define LEASH_SYSCONFDIR "/etc"
#endif

struct config_arg {
        const struct leash_option *opt;
        char *value; /* NULL for a flag given without one */
};

/* The last build of a config's jobs, while what it read is unchanged. */
struct built_cache {
        pthread_mutex_t lock;
        struct config_built *b; /* NULL: none (the next job builds) */
};

struct leash_config {
        struct leash_settings check; /* every value applied as set: checks it, holds profile and files */
        struct config_arg *args;
        size_t n_args;
        char *config_dir, *user_dir;
        struct watchdog_pool *watch;   /* one watchdog for the jobs made from it (NULL: one each) */
        struct placement_cache *place; /* where they go, decided at the first */
        struct built_cache *built;     /* shared by its jobs while their files are as they were */
};

struct config_built {
        struct leash_settings s;
        struct leash_profiles *profiles; /* holds the origin strings of s */
        unsigned refs;                   /* the jobs sharing it, and the cache */
        bool trust;                      /* built as root: the trust rules applied */
        struct filestamps sources;       /* what it read, and the directories it looked in */
};

static void built_cache_clear(struct built_cache *k) {
        struct config_built *b;

        pthread_mutex_lock(&k->lock);
        b = k->b;
        k->b = NULL;
        pthread_mutex_unlock(&k->lock);
        config_built_free(b);
}

int leash_config_new(struct leash_config **ret) {
        struct leash_config *c;

        if (!ret)
                return -EINVAL;
        c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        leash_settings_init(&c->check);
        if (watchdog_pool_new(&c->watch) < 0) {
                free(c);
                return -ENOMEM;
        }
        c->built = calloc(1, sizeof *c->built);
        if (!c->built || placement_cache_new(&c->place) < 0) {
                free(c->built);
                watchdog_pool_unref(c->watch);
                free(c);
                return -ENOMEM;
        }
        pthread_mutex_init(&c->built->lock, NULL);
        *ret = c;
        return 0;
}

void leash_config_free(struct leash_config *c) {
        if (!c)
                return;
        leash_settings_done(&c->check);
        for (size_t i = 0; i < c->n_args; i++)
                free(c->args[i].value);
        free(c->args);
        free(c->config_dir);
        free(c->user_dir);
        watchdog_pool_unref(c->watch);
        placement_cache_free(c->place);
        built_cache_clear(c->built);
        pthread_mutex_destroy(&c->built->lock);
        free(c->built);
        free(c);
}

struct watchdog_pool *config_watchdog_pool(const struct leash_config *c) {
        return c->watch;
}

struct placement_cache *config_placement_cache(const struct leash_config *c) {
        return c->place;
}

/* Keys of `leash run` that are about the command line, not the job. */
static bool cli_matter(const struct leash_option *o) {
        switch (o->id) {
        case LEASH_OPT_REPORT:
        case LEASH_OPT_REPORT_DIR:
        case LEASH_OPT_FORMAT_ID:
        case LEASH_OPT_QUIET:
        case LEASH_OPT_VERBOSE:
        case LEASH_OPT_INHERIT:
                return true;
        default:
                return false;
        }
}

int leash_config_set(struct leash_config *c, const char *key, const char *value, struct leash_error *err) {
        const struct leash_option *o;
        struct config_arg *a;
        int r;

        if (!c || !key)
                return leash_error_set(err, "set a job setting", "", -EINVAL);
        o = leash_option_by_name(key);
        if (!o)
                return leash_error_set(err, "set a job setting", key, -ENOENT);
        if (cli_matter(o))
                return leash_error_set(err, "set a job setting", key, -EINVAL);
        if (o->type != LEASH_OPT_FLAG && !value)
                return leash_error_set(err, "set a job setting", key, -EINVAL);
        r = leash_option_set(&c->check, o, value, "caller", err);
        if (r < 0)
                return r;
        built_cache_clear(c->built);
        if (o->id == LEASH_OPT_PROFILE_ID || o->id == LEASH_OPT_PROFILE_FILE)
                return 0; /* kept in c->check: read when a job is made */
        a = realloc(c->args, (c->n_args + 1) * sizeof *c->args);
        if (!a)
                return leash_error_set(err, "set a job setting", key, -ENOMEM);
        c->args = a;
        a[c->n_args].opt = o;
        a[c->n_args].value = NULL;
        if (value && !(a[c->n_args].value = strdup(value)))
                return leash_error_set(err, "set a job setting", key, -ENOMEM);
        c->n_args++;
        return 0;
}

static int set_path(char **field, const char *value) {
        char *v = NULL;
        if (value && !(v = strdup(value)))
                return -ENOMEM;
        free(*field);
        *field = v;
        return 0;
}

int leash_config_set_paths(struct leash_config *c, const char *config_dir, const char *user_dir) {
        int r;

        if (!c || (config_dir && config_dir[0] != '/') || (user_dir && user_dir[0] != '/'))
                return -EINVAL;
        built_cache_clear(c->built);
        r = set_path(&c->config_dir, config_dir);
        if (r < 0)
                return r;
        return set_path(&c->user_dir, user_dir);
}

/* trust: the caller is root, the trust rules apply */
static int load(const struct leash_config *c, bool trust, struct leash_profiles **ret, struct leash_error *err) {
        struct leash_profiles *p = NULL;
        int r;

        r = leash_profiles_new(trust, &p);
        if (r < 0)
                return leash_error_set(err, "read the configuration", "", r);
        r = leash_profiles_load_dirs(p, c->config_dir ? c->config_dir : LEASH_SYSCONFDIR "/leash",
                                     c->user_dir ? c->user_dir : "");
        for (size_t i = 0; i < c->check.n_profile_files && r != -ENOMEM; i++) {
                int k = leash_profiles_load_file(p, c->check.profile_files[i], LEASH_INI_PROFILES);
                if (k == -ENOMEM)
                        r = k;
        }
        if (r != -ENOMEM)
                r = leash_profiles_finish(p);
        if (r == -ENOMEM) {
                leash_profiles_free(p);
                return leash_error_set(err, "read the configuration", "", r);
        }
        if (leash_profiles_n_errors(p) > 0) {
                /* the first; leash_profiles_check-style listings are the CLI's */
                leash_error_set(err, "read the configuration", leash_profiles_error(p, 0), -EINVAL);
                leash_profiles_free(p);
                return -EINVAL;
        }
        *ret = p;
        return 0;
}

int config_build(const struct leash_config *c, struct config_built **ret, struct leash_error *err) {
        struct config_built *b;
        const char *name = c->check.profile_name ? c->check.profile_name : LEASH_PROFILE_DEFAULT, *file = NULL;
        int r;

        b = calloc(1, sizeof *b);
        if (!b)
                return leash_error_set(err, "build the job's settings", "", -ENOMEM);
        b->refs = 1;
        b->trust = geteuid() == 0;
        leash_settings_init(&b->s);
        r = load(c, b->trust, &b->profiles, err);
        if (r < 0)
                goto fail;
        r = leash_profiles_apply(b->profiles, name, &b->s, &file);
        if (r < 0) {
                if (r == -ENOENT && err) { /* the CLI's words: what exists, where leash looked */
                        char text[1024];
                        leash_profiles_unknown(b->profiles, name,
                                               c->config_dir ? c->config_dir : LEASH_SYSCONFDIR "/leash",
                                               c->user_dir ? c->user_dir : "", text, sizeof text);
                        leash_error_set(err, "--profile", text, r);
                } else
                        leash_error_set(err, "apply the profile", name, r);
                goto fail;
        }
        for (size_t i = 0; i < c->n_args; i++) {
                r = leash_option_set(&b->s, c->args[i].opt, c->args[i].value, "caller", err);
                if (r < 0)
                        goto fail;
        }
        b->s.config.profile = name;
        b->s.config.profile_source = file;
        if (c->check.profile_name) {
                r = -ENOMEM;
                if (!(b->s.profile_name = strdup(c->check.profile_name))) {
                        leash_error_set(err, "build the job's settings", "", r);
                        goto fail;
                }
                b->s.config.profile = b->s.profile_name;
        }
        *ret = b;
        return 0;
fail:
        config_built_free(b);
        return r;
}

const struct leash_spec *config_built_spec(const struct config_built *b) {
        return &b->s.config;
}

void config_built_free(struct config_built *b) {
        if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) > 0)
                return;
        leash_settings_done(&b->s);
        leash_profiles_free(b->profiles);
        filestamps_done(&b->sources);
        free(b);
}

static void settings_free(void *b) {
        config_built_free(b);
}

/* What b read, stamped: the configuration directory and its profiles.d
 * (their entries: a file added or removed), the user's directory, and
 * every file read. 0, or -ENOMEM. */
static int stamp_sources(const struct leash_config *c, struct config_built *b) {
        const char *dir = c->config_dir ? c->config_dir : LEASH_SYSCONFDIR "/leash";
        _cleanup_free_ char *profiles = NULL;
        int r;

        r = filestamps_add(&b->sources, dir);
        if (r >= 0 && b->sources.v[0].err == 0) {
                if (asprintf(&profiles, "%s/profiles.d", dir) < 0) {
                        profiles = NULL;
                        return -ENOMEM;
                }
                r = filestamps_add(&b->sources, profiles);
        }
        if (r >= 0 && c->user_dir && c->user_dir[0])
                r = filestamps_add(&b->sources, c->user_dir);
        for (size_t i = 0; r >= 0 && i < leash_profiles_n_files(b->profiles); i++)
                r = filestamps_add(&b->sources, leash_profiles_file(b->profiles, i));
        return r;
}

/* The settings of c's next job: the cached build while the caller's euid
 * and every stamp of what it read are as they were; else built now, and
 * cached when what it read had settled before the build began (a file
 * written within FILESTAMP_SETTLE_NS is read again by the next job). */
static int config_get_built(const struct leash_config *c, struct config_built **ret, struct leash_error *err) {
        struct built_cache *k = c->built;
        struct config_built *b;
        struct timespec start;
        int r;

        pthread_mutex_lock(&k->lock);
        b = k->b;
        if (b && b->trust == (geteuid() == 0) && filestamps_unchanged(&b->sources)) {
                __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
                pthread_mutex_unlock(&k->lock);
                *ret = b;
                return 0;
        }
        k->b = NULL;
        pthread_mutex_unlock(&k->lock);
        config_built_free(b);

        (void) clock_gettime(CLOCK_REALTIME, &start);
        r = config_build(c, &b, err);
        if (r < 0)
                return r;
        if (stamp_sources(c, b) >= 0 && filestamps_settled(&b->sources, &start)) {
                pthread_mutex_lock(&k->lock);
                if (!k->b) {
                        __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
                        k->b = b;
                }
                pthread_mutex_unlock(&k->lock);
        }
        *ret = b;
        return 0;
}

/* A job from a public config: the settings are built (files read, profile
 * applied), or shared with the config's last job while its files are
 * unchanged, and held by the job. adopt_cgroup NULL: a new job cgroup. */
static int job_from_config(const struct leash_config *c, const char *adopt_cgroup, unsigned flags,
                           struct leash_job **ret, struct leash_error *err) {
        struct config_built *s;
        int r;

        if (!c || !ret)
                return leash_error_set(err, adopt_cgroup ? "adopt a cgroup" : "create the job", "", -EINVAL);
        r = config_get_built(c, &s, err);
        if (r < 0)
                return r;
        r = job_new_owning(config_built_spec(s), adopt_cgroup, flags, config_watchdog_pool(c),
                           adopt_cgroup ? NULL : config_placement_cache(c), s, settings_free, ret, err);
        if (r < 0)
                config_built_free(s);
        return r;
}

int leash_job_new(const struct leash_config *c, struct leash_job **ret, struct leash_error *err) {
        return job_from_config(c, NULL, 0, ret, err);
}

int leash_job_adopt(const struct leash_config *c, const char *cgroup, unsigned flags, struct leash_job **ret,
                    struct leash_error *err) {
        if (!cgroup)
                return leash_error_set(err, "adopt a cgroup", "", -EINVAL);
        return job_from_config(c, cgroup, flags, ret, err);
}

int leash_config_get(const struct leash_config *c, const char *key, char **ret_value, struct leash_error *err) {
        struct config_built *b = NULL;
        const struct leash_option *o;
        char buf[4096];
        int r;

        if (!c || !key || !ret_value)
                return leash_error_set(err, "get a job setting", "", -EINVAL);
        o = leash_option_by_name(key);
        if (!o)
                return leash_error_set(err, "get a job setting", key, -ENOENT);
        r = config_build(c, &b, err);
        if (r < 0)
                return r;
        leash_option_format(&b->s, o, buf, sizeof buf);
        config_built_free(b);
        *ret_value = strdup(buf);
        return *ret_value ? 0 : leash_error_set(err, "get a job setting", key, -ENOMEM);
}
