/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Job profiles and the system configuration, read from INI files.
 *
 * leash.ini holds one [leash] section of system-wide defaults; profile files
 * hold one section per profile. Keys are the long options of `leash run`
 * (the table in options.c decides which may appear where), values have the
 * command line's syntax, and `inherit = OTHER` takes another profile's values
 * first. Every value is validated when its file is read, so a broken file is
 * found whatever profile is asked for, and every error is kept, each as
 * "FILE:LINE: message", so that `leash profiles check` can list them all.
 *
 * Precedence, lowest first: built-in defaults, leash.ini, the profile's
 * ancestors (the oldest first), the profile itself; the command line is
 * applied by the caller last. A `default` profile always exists: built in and
 * empty, unless a file defines [default] (once).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "options.h"

#define LEASH_PROFILE_DEFAULT "default"

struct leash_profiles;

/* Where the configuration is looked for. */
/* "'NAME': unknown profile: expected one of A, B (did you mean 'A'?);
 * searched DIR/profiles.d and USERDIR; ..." for the CLI and the library alike. */
struct leash_profiles;
void leash_profiles_unknown(const struct leash_profiles *p, const char *name, const char *config_dir,
                            const char *user_dir, char *buf, size_t size);

struct leash_profile_paths {
        char config_dir[4096]; /* holds leash.ini and profiles.d/ */
        char user_dir[4096];   /* the user's profiles.d; "" when not read (root) */
        bool trust;            /* apply the root trust rules (euid 0) */
};

/* This process's paths: $LEASH_CONFIG_DIR when set and the process is not
 * running set-id (secure_getenv), else SYSCONFDIR/leash; for a non-root user
 * also $XDG_CONFIG_HOME/leash/profiles.d (default ~/.config/...). A relative
 * (or empty) LEASH_CONFIG_DIR is -EINVAL, with ret filled as if it were
 * unset and *ret_bad (when not NULL) pointing at its value: before issue 41
 * it was silently ignored, and a user never learnt that it did nothing. */
int leash_profile_paths_default(struct leash_profile_paths *ret, const char **ret_bad);

int leash_profiles_new(bool trust, struct leash_profiles **ret);
void leash_profiles_free(struct leash_profiles *p);
/* Slots of the name index looked at so far: the work lookups cost, for a
 * test that loading and listing n sections stays linear. */
unsigned long long leash_profiles_probes(const struct leash_profiles *p);

enum leash_ini_kind {
        LEASH_INI_SYSTEM,   /* leash.ini: one [leash] section */
        LEASH_INI_PROFILES, /* a profile file: [NAME] sections */
        LEASH_INI_OTHER,    /* another file of leash's (slurm.ini): see leash_ini_load_other */
};

/* Another INI file of leash's read with the same reader, syntax rules, trust
 * rules and FILE:LINE errors as the profiles (one inih adapter): the handler
 * is called once per section header (key and value NULL) and once per key;
 * it returns 0, or -1 with why filled, which is recorded at that line. The
 * errors land in p (leash_profiles_error); 0, -EINVAL or -ENOMEM. */
typedef int (*leash_ini_handler)(void *userdata, const char *section, const char *key, const char *value, char *why,
                                 size_t size);
int leash_ini_load_other(struct leash_profiles *p, const char *path, leash_ini_handler handler, void *userdata);
int leash_ini_load_other_buffer(struct leash_profiles *p, const char *name, const char *data, size_t size,
                                leash_ini_handler handler, void *userdata);

/* Each load returns 0, -EINVAL when it recorded errors, or -ENOMEM. */
/* leash.ini, profiles.d/ *.ini, then the user's *.ini; what is absent is skipped. */
int leash_profiles_load_paths(struct leash_profiles *p, const struct leash_profile_paths *paths);
/* The same from two strings (user_dir "": none). */
int leash_profiles_load_dirs(struct leash_profiles *p, const char *config_dir, const char *user_dir);
/* One file; absent is an error. A file already read (same inode) is skipped. */
int leash_profiles_load_file(struct leash_profiles *p, const char *path, enum leash_ini_kind kind);
/* Text parsed as if read from a file called name, without the trust rules. */
int leash_profiles_load_buffer(struct leash_profiles *p, const char *name, const char *data, size_t size,
                               enum leash_ini_kind kind);
/* After the loads: every inherit names a profile, no cycles. Then the
 * queries below may be used. 0 or -EINVAL (errors recorded). */
int leash_profiles_finish(struct leash_profiles *p);

/* The files read, in order (a file reached by two paths: its first). */
size_t leash_profiles_n_files(const struct leash_profiles *p);
const char *leash_profiles_file(const struct leash_profiles *p, size_t i);

size_t leash_profiles_n_errors(const struct leash_profiles *p);
/* "FILE:LINE: message", or "FILE: message" for a whole file. */
const char *leash_profiles_error(const struct leash_profiles *p, size_t i);
/* Where leash.ini was read from, or NULL. */
const char *leash_profiles_system_file(const struct leash_profiles *p);

/* Profiles by name, the built-in default included unless a file defines it.
 * ret_file is NULL (and ret_line 0) for the built-in default. */
size_t leash_profiles_count(const struct leash_profiles *p);
int leash_profiles_get(const struct leash_profiles *p, size_t i, const char **ret_name, const char **ret_file,
                       unsigned *ret_line);
bool leash_profiles_exists(const struct leash_profiles *p, const char *name);
/* What name inherits from (a profile name) or NULL. */
const char *leash_profiles_parent(const struct leash_profiles *p, const char *name);

/* Applies leash.ini, the ancestors of name (oldest first) and name to s, each
 * value with its origin: "FILE:LINE" or "inherited from X (FILE:LINE)".
 * -ENOENT for an unknown profile. ret_file: the file defining name, or NULL
 * for the built-in default. Must not be used when errors were recorded. */
int leash_profiles_apply(const struct leash_profiles *p, const char *name, struct leash_settings *s,
                         const char **ret_file);
