/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash __complete SUB OPTION: the fixed values OPTION of leash SUB takes,
 * one per line, read from the very tables its parser uses, so that the shell
 * completion (shell-completion/bash/leash) cannot offer a value leash would
 * refuse, nor miss one it takes. Exit 1, printing nothing, where the values
 * are open (a size, a path) or the option is unknown: the completion then
 * goes by the option's metavar. Hidden: not in --help, for the completion.
 */
#include <string.h>

#include "../basic/macro.h"
#include "../render/suggest.h"
#include "../settings/options.h"
#include "cli.h"

static const struct leash_option *run_option(const char *opt) {
        if (strncmp(opt, "--", 2) == 0)
                return leash_option_by_name(opt + 2);
        if (opt[0] == '-' && opt[1] && !opt[2])
                return leash_option_by_short(opt[1]);
        return NULL;
}

int cmd_complete(int argc, char **argv) {
        const char *words[32];
        const char *sub = argc > 1 ? argv[1] : "", *opt = argc > 2 ? argv[2] : "";
        size_t n = 0;

        if (argc != 3)
                return usage_error("__complete: expected SUBCOMMAND OPTION");
        if (strcmp(sub, "run") == 0) {
                const struct leash_option *o = run_option(opt);
                if (o && !(o->flags & LEASH_OPT_NO_CLI))
                        n = leash_option_choices(o, words, ELEMENTSOF(words));
        } else if (strcmp(sub, "suggest") == 0 && strcmp(opt, "--strategy") == 0) {
                for (int s = 0; s < _SUGGEST_STRATEGY_MAX; s++)
                        words[n++] = suggest_strategy_name[s];
        } else if ((strcmp(sub, "ps") == 0 || strcmp(sub, "stat") == 0) &&
                   (strcmp(opt, "--output") == 0 || strcmp(opt, "-o") == 0)) {
                for (const char *const *w = ps_output_names; *w; w++)
                        words[n++] = *w;
        }
        for (size_t i = 0; i < n; i++)
                puts(words[i]);
        return n ? 0 : 1;
}
