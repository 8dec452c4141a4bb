/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Usage errors and --help, shared by every subcommand and main(): in a module
 * of their own, so that the subcommands do not depend on main.c while main.c
 * dispatches to them (no cycle).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../basic/log.h"
#include "../engine/leash.h"
#include "../settings/options.h"
#include "cli.h"

int usage_error(const char *fmt, ...) {
        char line[1024];
        va_list ap;

        va_start(ap, fmt);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        vsnprintf(line, sizeof line, fmt, ap); /* fmt is checked at every call site */
#pragma GCC diagnostic pop
        va_end(ap);
        log_error("%s", line);
        fprintf(stderr, "Try 'leash --help' for more information.\n");
        return EXIT_LEASH_FAILED;
}

void print_help(FILE *f) {
        fprintf(f, "Usage: leash run [OPTIONS] [--] COMMAND [ARG...]\n"
                   "       leash check [--cgroup-parent PATH]\n"
                   "       leash profiles list | show NAME | check [FILE...]\n"
                   "       leash slurm prolog | epilog | task-prolog | status | sweep | check  (leash-slurm(8))\n"
                   "       leash report [--html|--markdown|--text] [-o OUT] REPORT.json|DIR [SERIES]...\n"
                   "       leash suggest [--name NAME|--profile NAME] [--format ini|json|text] REPORTS...\n"
                   "       leash ps [--cgroup-parent PATH] [-o text|json]        (leash-ps(1))\n"
                   "       leash stat [-o text|json] [--processes] JOB|PID|CGROUP\n"
                   "       leash top [--cgroup-parent PATH] [--interval DURATION]\n"
                   "       leash --help | --version\n"
                   "\n"
                   "Run COMMAND in its own cgroup under limits, warn it with the soft signal when a\n"
                   "time limit is reached, kill the whole tree after the grace period, and report\n"
                   "what it used and why it ended.\n"
                   "\n"
                   "Options of 'leash run':\n");
        for (size_t i = 0; i < _LEASH_OPT_MAX; i++) {
                const struct leash_option *o = &leash_options[i];
                char left[64];
                if (o->flags & LEASH_OPT_NO_CLI)
                        continue;
                if (o->short_opt)
                        snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_opt, o->name, o->metavar ? " " : "",
                                 o->metavar ? o->metavar : "");
                else
                        snprintf(left, sizeof left, "    --%s%s%s", o->name, o->metavar ? " " : "",
                                 o->metavar ? o->metavar : "");
                fprintf(f, "  %-26s %s", left, o->help);
                if (o->default_text && o->type != LEASH_OPT_FLAG)
                        fprintf(f, " [%s]", o->default_text);
                fputc('\n', f);
        }
        fprintf(f, "\n"
                   "SIZE: bytes or K, M, G, T (powers of 1024), or max. DURATION: 90, 1.5s, 250ms,\n"
                   "2m, 1h. SIG: a name (XCPU, TERM) or a number.\n"
                   "\n"
                   "Exit status: the command's own; 124 a time limit ended it; 125 leash failed;\n"
                   "126 not executable; 127 not found; 128+N killed by signal N (137: also OOM).\n"
                   "See leash(1) for the report format, leash.ini(5) for profiles.\n");
}
