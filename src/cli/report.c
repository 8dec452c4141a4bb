/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash report: past jobs as a document. One report (with its series) gives
 * the job page, several give the summary. The format is --html, --markdown
 * or --text, else taken from -o's extension, else text on standard output.
 * Markdown's charts are SVG files beside it: OUT.md + OUT-memory.svg ...;
 * they are written first and the document last, and removed again if any
 * write fails.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../basic/log.h"
#include "../basic/macro.h"
#include "../report/history.h"
#include "../render/render.h"
#include "cli.h"

static void report_help(void) {
        printf("Usage: leash report [--html|--markdown|--text] [-o OUT] REPORT.json [SERIES.csv|.jsonl] ...\n"
               "       leash report [OPTIONS] DIR...\n"
               "\n"
               "One report: the verdict, the limits and how each was enforced, the usage and, with\n"
               "its time series, charts over time. Several reports or a directory: how the jobs'\n"
               "figures are distributed, how close they came to each limit, and the 20 worst jobs.\n"
               "\n"
               "  --html             one self-contained HTML file (inline SVG)\n"
               "  --markdown         Markdown, with SVG chart files beside OUT\n"
               "  --text             text for a terminal (the default without -o)\n"
               "  -o, --output OUT   write to OUT (the format follows .html, .md, .txt)\n");
}

static int write_markdown(const char *out, const struct render_output *o) {
        _cleanup_free_ char *copy = strdup(out);
        const char *dir = copy ? dirname(copy) : NULL;
        size_t done = 0;
        int r = 0;

        if (!dir)
                return -ENOMEM;
        for (; done < o->n_files && r == 0; done++) {
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s/%s", dir, o->files[done].name) < 0)
                        r = -ENOMEM;
                else
                        r = cli_write_file(p, o->files[done].text);
        }
        if (r == 0)
                r = cli_write_file(out, o->text);
        if (r < 0)
                for (size_t i = 0; i + 1 < done; i++) {
                        _cleanup_free_ char *p = NULL;
                        if (asprintf(&p, "%s/%s", dir, o->files[i].name) >= 0)
                                unlink(p);
                }
        return r;
}

int cmd_report(int argc, char **argv) {
        static const struct option longopts[] = {
                {"html", no_argument, NULL, 'H'}, {"markdown", no_argument, NULL, 'M'},
                {"text", no_argument, NULL, 'T'}, {"output", required_argument, NULL, 'o'},
                {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
        };
        const char *out = NULL;
        int fmt = -1, c, r;
        struct history_job **jobs = NULL;
        size_t n = 0;
        struct render_output o;
        _cleanup_free_ char *prefix = NULL;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+o:h", longopts, NULL)) != -1) {
                switch (c) {
                case 'H':
                        fmt = RENDER_HTML;
                        break;
                case 'M':
                        fmt = RENDER_MARKDOWN;
                        break;
                case 'T':
                        fmt = RENDER_TEXT;
                        break;
                case 'o':
                        out = optarg;
                        break;
                case 'h':
                        report_help();
                        return fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
                default:
                        return usage_error("report: unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind >= argc)
                return usage_error("report: no report given");
        if (out && !*out)
                return usage_error("report: -o needs a file name");
        if (fmt < 0) {
                const char *dot = out ? strrchr(out, '.') : NULL;
                fmt = !dot                                                    ? RENDER_TEXT
                      : strcmp(dot, ".html") == 0 || strcmp(dot, ".htm") == 0 ? RENDER_HTML
                      : strcmp(dot, ".md") == 0                               ? RENDER_MARKDOWN
                                                                              : RENDER_TEXT;
        }
        if (fmt == RENDER_MARKDOWN && !out)
                return usage_error("report: --markdown writes SVG files beside its document: give -o OUT.md");
        if (cli_jobs_load(argv + optind, (size_t) (argc - optind), &jobs, &n) < 0)
                return EXIT_LEASH_FAILED;
        if (fmt == RENDER_MARKDOWN) {
                const char *b = strrchr(out, '/');
                const char *dot;
                b = b ? b + 1 : out;
                dot = strrchr(b, '.');
                prefix = strndup(b, dot && dot != b ? (size_t) (dot - b) : strlen(b));
                if (!prefix) {
                        cli_jobs_free(jobs, n);
                        return EXIT_LEASH_FAILED;
                }
        }
        r = render_jobs(jobs, n, (enum render_format) fmt, prefix, &o);
        cli_jobs_free(jobs, n);
        if (r < 0) {
                log_error("report: cannot render: %s", strerror(-r));
                return EXIT_LEASH_FAILED;
        }
        if (!out) {
                fputs(o.text, stdout);
                r = fflush(stdout) == 0 ? 0 : -EIO;
                if (r < 0)
                        log_error("report: cannot write to standard output");
        } else if (fmt == RENDER_MARKDOWN)
                r = write_markdown(out, &o);
        else
                r = cli_write_file(out, o.text);
        render_output_free(&o);
        return r < 0 ? EXIT_LEASH_FAILED : 0;
}
