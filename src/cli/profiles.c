/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Profiles on the command line: building the settings of `leash run` in
 * precedence order (built-in < leash.ini < profile < command line), and the
 * `leash profiles list|show|check` subcommands. Every configuration error is
 * printed, one line each, as "leash: FILE:LINE: message".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../basic/log.h"
#include "../basic/macro.h"
#include "../settings/options.h"
#include "../settings/profile.h"
#include "cli.h"

static void print_errors(const struct leash_profiles *p) {
        for (size_t i = 0; i < leash_profiles_n_errors(p); i++)
                log_error("%s", leash_profiles_error(p, i));
}

/* Reads the configuration and the extra files. Returns 0, or an exit code
 * after printing why: 125, or 1 with errors when check is set. */
/* This process's configuration paths; 125 after saying why for a relative
 * LEASH_CONFIG_DIR (it was silently ignored before issue 41). */
static int cli_paths(struct leash_profile_paths *ret) {
        const char *bad = NULL;
        if (leash_profile_paths_default(ret, &bad) < 0) {
                log_error("LEASH_CONFIG_DIR: '%s': expected an absolute path", bad ? bad : "");
                return EXIT_LEASH_FAILED;
        }
        return 0;
}

static int load(char *const *files, size_t n_files, bool check, struct leash_profiles **ret) {
        struct leash_profile_paths paths;
        struct leash_profiles *p = NULL;
        int r;

        r = cli_paths(&paths);
        if (r != 0)
                return r;
        r = leash_profiles_new(paths.trust, &p);
        if (r < 0) {
                log_error("read the configuration: %s", strerror(-r));
                return EXIT_LEASH_FAILED;
        }
        r = leash_profiles_load_paths(p, &paths);
        for (size_t i = 0; i < n_files && r != -ENOMEM; i++) {
                int k = leash_profiles_load_file(p, files[i], LEASH_INI_PROFILES);
                if (k < 0 && (r == 0 || k == -ENOMEM))
                        r = k;
        }
        if (r != -ENOMEM) {
                int k = leash_profiles_finish(p);
                if (k < 0 && (r == 0 || k == -ENOMEM))
                        r = k;
        }
        if (r == -ENOMEM) {
                log_error("read the configuration: %s", strerror(ENOMEM));
                leash_profiles_free(p);
                return EXIT_LEASH_FAILED;
        }
        if (leash_profiles_n_errors(p) > 0) {
                print_errors(p);
                leash_profiles_free(p);
                return check ? 1 : EXIT_LEASH_FAILED;
        }
        *ret = p;
        return 0;
}

static int unknown_profile(const struct leash_profiles *p, const char *opt, const char *name) {
        struct leash_profile_paths paths;
        char text[1024];

        (void) leash_profile_paths_default(&paths, NULL); /* load() said why, had it been wrong */
        leash_profiles_unknown(p, name, paths.config_dir, paths.user_dir, text, sizeof text);
        return usage_error("%s%s", opt, text);
}

int cli_settings_build(const struct leash_settings *cli, const struct cli_arg *args, size_t n_args,
                       struct leash_settings *s, struct leash_profiles **ret_profiles) {
        struct leash_profiles *p = NULL;
        const char *name = cli->profile_name ? cli->profile_name : LEASH_PROFILE_DEFAULT, *file = NULL;
        int r;

        r = load(cli->profile_files, cli->n_profile_files, false, &p);
        if (r != 0)
                return r;
        leash_settings_init(s);
        r = leash_profiles_apply(p, name, s, &file);
        if (r == -ENOENT) {
                r = unknown_profile(p, "--profile: ", name);
                goto fail;
        }
        if (r < 0) {
                log_error("apply profile '%s': %s", name, strerror(-r));
                r = EXIT_LEASH_FAILED;
                goto fail;
        }
        /* the command line last: it was checked once already, this cannot fail
         * but for lack of memory */
        for (size_t i = 0; i < n_args; i++) {
                struct leash_error err = {0};
                if (leash_option_set(s, args[i].opt, args[i].value, "command line", &err) < 0) {
                        log_error("--%s: %s", args[i].opt->name, err.detail[0] ? err.detail : strerror(err.error));
                        r = EXIT_LEASH_FAILED;
                        goto fail;
                }
        }
        s->config.profile = s->profile_name ? s->profile_name : LEASH_PROFILE_DEFAULT;
        s->config.profile_source = file;
        *ret_profiles = p;
        return 0;
fail:
        leash_settings_done(s);
        leash_profiles_free(p);
        return r;
}

int cli_profile_check(const char *name, char *why, size_t size) {
        struct leash_profile_paths paths;
        struct leash_profiles *p = NULL;
        char known[256] = "";
        size_t len = 0;
        int r;

        if (!leash_profile_name_is_valid(name)) {
                snprintf(why, size, "'%.64s': not a profile name", name);
                return -EINVAL;
        }
        /* the system's profiles only: never a user's own directory */
        const char *bad = NULL;
        if (leash_profile_paths_default(&paths, &bad) < 0) {
                snprintf(why, size, "LEASH_CONFIG_DIR: '%s': expected an absolute path", bad ? bad : "");
                return -EINVAL;
        }
        r = leash_profiles_new(paths.trust, &p);
        if (r < 0) {
                snprintf(why, size, "read the configuration: %s", strerror(-r));
                return r;
        }
        r = leash_profiles_load_dirs(p, paths.config_dir, "");
        if (r != -ENOMEM)
                r = leash_profiles_finish(p);
        if (r == -ENOMEM || leash_profiles_n_errors(p) > 0) {
                snprintf(why, size, "the configuration cannot be used: %s",
                         r == -ENOMEM ? strerror(ENOMEM) : leash_profiles_error(p, 0));
                leash_profiles_free(p);
                return r == -ENOMEM ? r : -EINVAL;
        }
        if (leash_profiles_exists(p, name)) {
                leash_profiles_free(p);
                return 0;
        }
        for (size_t i = 0; i < leash_profiles_count(p) && len < sizeof known; i++) {
                const char *n, *f;
                unsigned l;
                if (leash_profiles_get(p, i, &n, &f, &l) == 0)
                        len += (size_t) snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", n);
        }
        snprintf(why, size, "'%s': unknown profile: expected one of %s", name, known);
        leash_profiles_free(p);
        return -ENOENT;
}

/* Keys that a file can set: all but the command-line-only ones. */
static bool file_key(const struct leash_option *o) {
        return (o->flags & LEASH_OPT_CLI_ONLY) != LEASH_OPT_CLI_ONLY;
}

/* where list looked, in the order read: what is absent was skipped */
static void profiles_searched(char *const *files, size_t n_files) {
        struct leash_profile_paths paths;

        (void) leash_profile_paths_default(&paths, NULL); /* load() said why, had it been wrong */
        /* "/" "*": no comment opener in the text, for tests/style's C reader */
        printf("\nsearched: %s/leash.ini, %s/profiles.d/"
               "*.ini",
               paths.config_dir, paths.config_dir);
        if (paths.user_dir[0])
                printf(", %s/"
                       "*.ini",
                       paths.user_dir);
        else if (paths.trust)
                printf(" (as root: no user profiles.d)");
        for (size_t i = 0; i < n_files; i++)
                printf(", %s", files[i]);
        putchar('\n');
}

static int profiles_list(struct leash_profiles *p) {
        int width = 4;

        for (size_t i = 0; i < leash_profiles_count(p); i++) {
                const char *n, *f;
                unsigned l;
                if (leash_profiles_get(p, i, &n, &f, &l) == 0 && (int) strlen(n) > width)
                        width = (int) strlen(n);
        }
        printf("%-*s  %s\n", width, "NAME", "SOURCE");
        for (size_t i = 0; i < leash_profiles_count(p); i++) {
                const char *n, *f;
                unsigned l;
                if (leash_profiles_get(p, i, &n, &f, &l) < 0)
                        continue;
                if (f)
                        printf("%-*s  %s:%u\n", width, n, f, l);
                else
                        printf("%-*s  built-in\n", width, n);
        }
        return 0;
}

static int profiles_show(struct leash_profiles *p, const char *name) {
        struct leash_settings s;
        const char *file = NULL, *sys = leash_profiles_system_file(p);
        int r, width = 5, key_width = 3;

        if (!leash_profile_name_is_valid(name))
                return usage_error("profiles show: '%s': expected a profile name", name);
        leash_settings_init(&s);
        r = leash_profiles_apply(p, name, &s, &file);
        if (r == -ENOENT) {
                leash_settings_done(&s);
                return unknown_profile(p, "profiles show: ", name);
        }
        if (r < 0) {
                leash_settings_done(&s);
                log_error("apply profile '%s': %s", name, strerror(-r));
                return EXIT_LEASH_FAILED;
        }
        printf("profile:     %s\n", name);
        for (size_t i = 0; i < leash_profiles_count(p); i++) {
                const char *n, *f;
                unsigned l;
                if (leash_profiles_get(p, i, &n, &f, &l) == 0 && strcmp(n, name) == 0) {
                        if (f)
                                printf("defined at:  %s:%u\n", f, l);
                        else
                                printf("defined at:  built-in\n");
                }
        }
        printf("inherits:    ");
        {
                const char *parent = leash_profiles_parent(p, name);
                if (!parent)
                        printf("nothing");
                for (int depth = 0; parent && depth < 64; depth++) {
                        printf("%s%s", depth ? " -> " : "", parent);
                        parent = leash_profiles_parent(p, parent);
                }
                printf("\n");
        }
        printf("leash.ini:   %s\n\n", sys ? sys : "none");
        /* the VALUE column as wide as the widest value, within reason */
        for (size_t i = 0; i < _LEASH_OPT_MAX; i++) {
                char value[512];
                if (!file_key(&leash_options[i]) || leash_options[i].id == LEASH_OPT_INHERIT)
                        continue;
                leash_option_format(&s, &leash_options[i], value, sizeof value);
                if ((int) strlen(value) > width && strlen(value) <= 24)
                        width = (int) strlen(value);
                if ((int) strlen(leash_options[i].name) > key_width)
                        key_width = (int) strlen(leash_options[i].name);
        }
        printf("%-*s %-*s  %s\n", key_width, "KEY", width, "VALUE", "FROM");
        for (size_t i = 0; i < _LEASH_OPT_MAX; i++) {
                const struct leash_option *o = &leash_options[i];
                char value[512];
                if (!file_key(o) || o->id == LEASH_OPT_INHERIT)
                        continue;
                leash_option_format(&s, o, value, sizeof value);
                printf("%-*s %-*s  %s\n", key_width, o->name, width, value,
                       s.origin[o->id] ? s.origin[o->id] : "built-in");
        }
        leash_settings_done(&s);
        return 0;
}

static int profiles_check(struct leash_profiles *p) {
        const char *sys = leash_profiles_system_file(p);
        size_t n = leash_profiles_count(p);

        printf("ok: %zu profile%s, leash.ini: %s\n", n, n == 1 ? "" : "s", sys ? sys : "none");
        return 0;
}

static void profiles_usage(FILE *f) {
        fprintf(f, "Usage: leash profiles list [--profile-file PATH]...\n"
                   "       leash profiles show [--profile-file PATH]... NAME\n"
                   "       leash profiles check [FILE...]\n"
                   "\n"
                   "list: every profile and the file and line that define it.\n"
                   "show: every resolved value of profile NAME and where it came from.\n"
                   "check: read the configuration (and each FILE as a profile file); exit 0\n"
                   "when it is valid, 1 after listing every error. See leash.ini(5).\n");
}

int cmd_profiles(int argc, char **argv) {
        static const struct option longopts[] = {
                {"profile-file", required_argument, NULL, 'F'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        _cleanup_free_ char **files = calloc((size_t) argc + 1, sizeof *files);
        struct leash_profiles *p = NULL;
        const char *action;
        size_t n_files = 0;
        int c, r;

        if (!files)
                return usage_error("out of memory");
        if (argc < 2)
                return usage_error("profiles: no action given: expected list, show NAME or check [FILE...]");
        action = argv[1];
        if (strcmp(action, "--help") == 0 || strcmp(action, "-h") == 0) {
                profiles_usage(stdout);
                return fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
        }
        if (strcmp(action, "list") != 0 && strcmp(action, "show") != 0 && strcmp(action, "check") != 0)
                return usage_error("profiles: unknown action '%s': expected list, show NAME or check [FILE...]",
                                   action);
        opterr = 0;
        optind = 1;
        argc--, argv++;
        /* no '+': options may follow the name, as GNU tools accept (show NAME --profile-file P) */
        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
                if (c == 'h') {
                        profiles_usage(stdout);
                        return fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
                }
                if (c == 'F' && strcmp(action, "check") != 0) {
                        files[n_files++] = optarg;
                        continue;
                }
                if (c == '?' && optopt == 'F')
                        return usage_error("profiles %s: option '--profile-file' needs a value (PATH)", action);
                return usage_error("profiles %s: unknown option '%s'", action, argv[optind - 1]);
        }

        if (strcmp(action, "check") == 0) {
                /* the files on the command line are read with the installed
                 * ones, so that their inherit = can name those */
                for (int i = optind; i < argc; i++)
                        files[n_files++] = argv[i];
                r = load(files, n_files, true, &p);
                if (r != 0)
                        return r;
                r = profiles_check(p);
        } else if (strcmp(action, "list") == 0) {
                if (optind < argc)
                        return usage_error("profiles list: unexpected argument '%s'", argv[optind]);
                r = load(files, n_files, false, &p);
                if (r != 0)
                        return r;
                r = profiles_list(p);
                profiles_searched(files, n_files);
        } else {
                if (optind >= argc)
                        return usage_error("profiles show: no profile name given: expected show NAME");
                if (optind + 1 < argc)
                        return usage_error("profiles show: unexpected argument '%s'", argv[optind + 1]);
                r = load(files, n_files, false, &p);
                if (r != 0)
                        return r;
                r = profiles_show(p, argv[optind]);
        }
        leash_profiles_free(p);
        if (fflush(stdout) != 0 && r == 0)
                r = EXIT_LEASH_FAILED;
        return r;
}
