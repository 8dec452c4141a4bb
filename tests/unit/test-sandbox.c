/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sandbox options and adapters without root: filter-set and capability
 * parsing, every set building for every action, the option table's new
 * keys (lists that repeat), and the report's sandbox section. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>

#include "engine/cgroup/account.h"
#include "sandbox/caps.h"
#include "sandbox/filter.h"
#include "engine/leash.h"
#include "settings/options.h"
#include "json-get.h"
#include "tap.h"

static int set(struct leash_settings *s, const char *name, const char *value, struct leash_error *err) {
        memset(err, 0, sizeof *err);
        return leash_option_set(s, leash_option_by_name(name), value, "test", err);
}

int main(void) {
        unsigned sets = 99;
        char bad[64], buf[512];
        enum leash_seccomp_action act;
        enum leash_caps_mode mode;
        uint64_t mask;
        struct leash_settings s;
        struct leash_error err;

        /* filter sets */
        ok(filter_parse_sets("no-network", &sets, bad, sizeof bad) == 0 && sets == LEASH_FILTER_NO_NETWORK, "one set");
        ok(filter_parse_sets("no-network,no-ptrace,no-namespaces,no-kernel", &sets, bad, sizeof bad) == 0 &&
                   sets == (LEASH_FILTER_NO_NETWORK | LEASH_FILTER_NO_PTRACE | LEASH_FILTER_NO_NAMESPACES |
                            LEASH_FILTER_NO_KERNEL),
           "all four sets");
        ok(filter_parse_sets("none", &sets, bad, sizeof bad) == 0 && sets == 0, "none");
        ok(filter_parse_sets("no-network,no-netwrk", &sets, bad, sizeof bad) == -EINVAL &&
                   strcmp(bad, "no-netwrk") == 0,
           "a misspelt set is refused and named");
        ok(filter_parse_sets("no-network,", &sets, bad, sizeof bad) == -EINVAL, "trailing comma refused");
        ok(filter_parse_sets("", &sets, bad, sizeof bad) == -EINVAL, "empty refused");
        ok(filter_parse_sets("none,no-network", &sets, bad, sizeof bad) == -EINVAL, "none only alone");
        ok(filter_parse_action("errno", &act) == 0 && act == LEASH_SECCOMP_ERRNO, "action errno");
        ok(filter_parse_action("kill", &act) == 0 && act == LEASH_SECCOMP_KILL, "action kill");
        ok(filter_parse_action("log", &act) == 0 && act == LEASH_SECCOMP_LOG, "action log");
        ok(filter_parse_action("trap", &act) == -EINVAL, "action trap refused");

        for (unsigned i = 0; i < LEASH_FILTER_COUNT; i++) {
                const struct filter_rule *rules = filter_set_rules(1U << i);
                ok(rules && rules[0].syscall, "set %s lists its syscalls", leash_filter_to_string(1U << i));
                for (int a = LEASH_SECCOMP_ERRNO; a <= LEASH_SECCOMP_LOG; a++) {
                        struct filter_program p = {0};
                        int r = filter_build(1U << i, (enum leash_seccomp_action) a, &p);
                        ok(r == 0 && p.len > 4 && p.insns, "set %s builds with action %s (%u instructions, r=%d)",
                           leash_filter_to_string(1U << i),
                           leash_seccomp_action_to_string((enum leash_seccomp_action) a), p.len, r);
                        filter_program_done(&p);
                }
        }
        {
                const struct filter_rule *r = filter_set_rules(LEASH_FILTER_NO_NETWORK);
                ok(strcmp(r[0].syscall, "socket") == 0 && r[0].when && strstr(r[0].when, "AF_UNIX"),
                   "no-network: socket, when the domain is not AF_UNIX");
        }

        /* capabilities */
        ok(caps_parse("none", &mode, &mask, bad, sizeof bad) == 0 && mode == LEASH_CAPS_NONE && mask == 0, "caps none");
        ok(caps_parse("keep", &mode, &mask, bad, sizeof bad) == 0 && mode == LEASH_CAPS_KEEP, "caps keep");
        ok(caps_parse("net_bind_service,CAP_CHOWN", &mode, &mask, bad, sizeof bad) == 0 && mode == LEASH_CAPS_LIST &&
                   mask == ((1ULL << 10) | (1ULL << 0)),
           "caps list, with and without prefix, any case");
        ok(caps_parse("chown,frob", &mode, &mask, bad, sizeof bad) == -EINVAL && strcmp(bad, "frob") == 0,
           "unknown capability refused and named");
        ok(caps_parse("12", &mode, &mask, bad, sizeof bad) == -EINVAL, "numbers refused");
        ok(caps_parse("chown,", &mode, &mask, bad, sizeof bad) == -EINVAL, "trailing comma refused");
        ok(caps_parse("", &mode, &mask, bad, sizeof bad) == -EINVAL, "empty refused");
        caps_format_mask((1ULL << 10) | (1ULL << 0), buf, sizeof buf);
        is_str(buf, "chown,net_bind_service", "mask formats as names");

        /* the option table */
        leash_settings_init(&s);
        ok(set(&s, "env", "A=1", &err) == 0 && set(&s, "env", "B=x=y", &err) == 0 && s.config.sandbox.n_env_set == 2 &&
                   strcmp(s.config.sandbox.env_set[1], "B=x=y") == 0,
           "--env repeats and keeps '=' in values");
        ok(set(&s, "env", "=x", &err) == -EINVAL && strstr(err.detail, "'=x'"), "--env =x refused: %s", err.detail);
        ok(set(&s, "env", "NOVALUE", &err) == -EINVAL, "--env without = refused");
        ok(set(&s, "unsetenv", "HOME", &err) == 0 && s.config.sandbox.n_env_unset == 1, "--unsetenv");
        ok(set(&s, "unsetenv", "A=1", &err) == -EINVAL, "--unsetenv with = refused");
        leash_option_format(&s, leash_option_by_name("env"), buf, sizeof buf);
        is_str(buf, "A=1 B=x=y", "env formats its values in order");
        ok(set(&s, "user", "nobody", &err) == 0 && strcmp(s.config.sandbox.user, "nobody") == 0, "--user");
        ok(set(&s, "user", "a:b", &err) == -EINVAL, "--user with ':' refused");
        ok(set(&s, "group", "", &err) == -EINVAL, "--group empty refused");
        ok(set(&s, "caps", "chown", &err) == 0 && s.config.sandbox.caps_mode == LEASH_CAPS_LIST, "--caps list");
        leash_option_format(&s, leash_option_by_name("caps"), buf, sizeof buf);
        is_str(buf, "chown", "caps formats");
        ok(set(&s, "caps", "chown,bogus", &err) == -EINVAL && strstr(err.detail, "'bogus'"), "--caps bogus: %s",
           err.detail);
        ok(set(&s, "seccomp", "no-ptrace,no-network", &err) == 0, "--seccomp");
        leash_option_format(&s, leash_option_by_name("seccomp"), buf, sizeof buf);
        is_str(buf, "no-network,no-ptrace", "seccomp formats in table order");
        ok(set(&s, "seccomp-action", "kill", &err) == 0 && s.config.sandbox.seccomp_action == LEASH_SECCOMP_KILL,
           "--seccomp-action kill");
        ok(set(&s, "seccomp-action", "die", &err) == -EINVAL, "--seccomp-action die refused");
        ok(set(&s, "clean-env", "true", &err) == 0 && s.config.sandbox.clean_env, "clean-env flag (INI true)");
        ok(set(&s, "keep-fds", NULL, &err) == 0 && s.config.sandbox.keep_fds, "keep-fds flag");
        ok(set(&s, "no-stdin", "no", &err) == 0 && !s.config.sandbox.no_stdin, "no-stdin false");
        ok(set(&s, "allow-new-privs", NULL, &err) == 0 && s.config.sandbox.allow_new_privs, "allow-new-privs");
        ok(set(&s, "no-supplementary-groups", NULL, &err) == 0 && s.config.sandbox.no_supplementary_groups,
           "no-supplementary-groups");
        ok(set(&s, "chdir", "/tmp", &err) == 0 && strcmp(s.config.sandbox.chdir, "/tmp") == 0, "chdir");
        ok(!s.config.strict && !s.quiet && !s.verbose, "sandbox flags do not touch strict/quiet/verbose");

        /* the report */
        {
                char a0[] = "true";
                char *argv[] = {a0, NULL};
                struct leash_result r;
                json_object *root;
                char *text = NULL;

                s.config.argv = argv;
                memset(&r, 0, sizeof r);
                account_usage_init(&r.usage);
                r.reason = LEASH_REASON_SECCOMP;
                r.exit_code = 159;
                r.term_signal = 31;
                r.status_code = -1;
                r.sandbox.applied = true;
                r.sandbox.uid = 65534;
                r.sandbox.gid = 65534;
                r.sandbox.groups[0] = 65534;
                r.sandbox.n_groups = 1;
                r.sandbox.identity_switched = true;
                r.sandbox.no_new_privs = true;
                r.sandbox.cap_effective = 1ULL << 0;
                r.sandbox.cap_bounding = 1ULL << 0;
                r.sandbox.seccomp = LEASH_FILTER_NO_NETWORK | LEASH_FILTER_NO_PTRACE;
                ok(leash_report_format(&s.config, &r, LEASH_FORMAT_JSON, &text) == 0, "report with a sandbox");
                root = json_tokener_parse(text);
                is_str(json_object_get_string(get(root, "reason")), "seccomp", "reason seccomp");
                ok(json_object_get_int(get(root, "sandbox.identity.uid")) == 65534, "uid in the report");
                ok(json_object_get_boolean(get(root, "sandbox.identity.switched")), "switched in the report");
                is_str(json_object_get_string(get(root, "sandbox.capabilities.effective")), "chown", "effective caps");
                is_str(json_object_get_string(get(root, "sandbox.capabilities.ambient")), "", "ambient caps empty");
                is_str(json_object_get_string(json_object_array_get_idx(get(root, "sandbox.seccomp.filters"), 1)),
                       "no-ptrace", "filters listed");
                is_str(json_object_get_string(get(root, "sandbox.seccomp.action")), "kill", "filter action");
                is_str(json_object_get_string(json_object_array_get_idx(get(root, "sandbox.environment.set"), 1)), "B",
                       "env names only, no values");
                ok(!strstr(text, "x=y"), "env values are not in the report");
                json_object_put(root);
                free(text);
                text = NULL;
                ok(leash_report_summary(&s.config, &r, &text) == 0 && text && strstr(text, "seccomp"),
                   "summary names the filter: %s", text ? text : "(null)");
                free(text);
        }
        leash_settings_done(&s);

        /* leash(1) documents every option and every set's exact list */
        {
                const char *src = getenv("LEASH_SRCDIR");
                char path[4096], *man = NULL;
                size_t len = 0;
                FILE *f;
                snprintf(path, sizeof path, "%s/man/leash.1", src ? src : ".");
                f = fopen(path, "re");
                if (f) {
                        man = calloc(1, 1 << 20);
                        len = man ? fread(man, 1, (1 << 20) - 1, f) : 0;
                        fclose(f);
                }
                ok(man && len > 0, "man page read from %s", path);
                for (size_t i = 0; man && i < _LEASH_OPT_MAX; i++) {
                        char want[128], *w = want;
                        if (leash_options[i].flags & LEASH_OPT_NO_CLI)
                                continue; /* a profile-only key (inherit): leash.ini(5)'s */
                        w += sprintf(w, "\\-\\-");
                        for (const char *c = leash_options[i].name; *c; c++)
                                w += *c == '-' ? sprintf(w, "\\-") : sprintf(w, "%c", *c);
                        ok(strstr(man, want) != NULL, "leash(1) documents --%s", leash_options[i].name);
                }
                for (unsigned i = 0; man && i < LEASH_FILTER_COUNT; i++) {
                        char head[64], *start, *end;
                        const char *n = leash_filter_to_string(1U << i);
                        snprintf(head, sizeof head, ".B no\\-%s\n", n + 3);
                        start = strstr(man, head);
                        end = start ? strstr(start + 1, "\n.TP") : NULL;
                        if (start && (!end || strstr(start + 1, "\n.PP") < end))
                                end = strstr(start + 1, "\n.PP");
                        ok(start && end, "leash(1) has a paragraph for %s", n);
                        if (!start || !end)
                                continue;
                        *end = '\0';
                        for (const struct filter_rule *r = filter_set_rules(1U << i); r->syscall; r++)
                                ok(strstr(start, r->syscall) != NULL, "leash(1) lists %s under %s", r->syscall, n);
                        *end = '\n';
                }
                free(man);
        }
        return tap_done();
}
