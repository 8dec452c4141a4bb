/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash report's pieces on fixtures: the series readers (CSV and JSON lines
 * agree), the report reader (and what it does with hostile or malformed
 * input), escaping for HTML, Markdown and terminals, the verdict in words,
 * the documents, and the golden SVG of a fixed series
 * (fixtures/report/golden-memory.svg; LEASH_UPDATE_GOLDEN=1 rewrites it).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic/fileio.h"
#include "basic/macro.h"
#include "render/chart.h"
#include "report/history.h"
#include "render/markup.h"
#include "render/render.h"
#include "tap.h"

static char dir[4096];

static char *slurp(const char *name, size_t *len) {
        char path[8192], *text = NULL;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (read_file_at_alloc(AT_FDCWD, path, &text, len) < 0) {
                printf("Bail out! cannot read %s\n", path);
                exit(1);
        }
        return text;
}

static char *escaped(void (*f)(FILE *, const char *), const char *s) {
        char *out = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&out, &len);
        f(m, s);
        fclose(m);
        return out;
}

static void test_series(void) {
        size_t len, line = 0;
        _cleanup_free_ char *csv = slurp("oom.csv", &len);
        _cleanup_free_ char *jsonl = NULL;
        struct history_series *a = NULL, *b = NULL, *bad = NULL;
        bool same = true;

        ok(history_series_parse_csv(csv, len, &a, NULL) == 0, "CSV series parses");
        is_u64(a->n_rows, 11, "11 rows");
        is_u64(a->n_cols, 28, "the 28 columns of the contract");
        ok(history_series_col(a, "mem_current_bytes") == 5, "columns by name");
        ok(isnan(history_series_at(a, 0, history_series_col(a, "disk_bytes"))), "an empty cell is no figure");
        ok(history_series_at(a, 9, 5) == 256.0 * 1048576, "figures are read exactly");
        jsonl = slurp("oom.jsonl", &len);
        ok(report_parse_series_jsonl(jsonl, len, &b) == 0, "JSON lines series parses");
        for (size_t c = 0; a && b && c < a->n_cols; c++) {
                int k = history_series_col(b, a->cols[c]);
                for (size_t r = 0; r < a->n_rows; r++) {
                        double x = history_series_at(a, r, (int) c), y = history_series_at(b, r, k);
                        if (!(x == y || (isnan(x) && isnan(y))))
                                same = false;
                }
        }
        ok(same && b->n_rows == a->n_rows, "CSV and JSON lines give the same figures");
        ok(history_series_parse_csv("t_s,a\n1,2\n3,x\n", 14, &bad, &line) == -EBADMSG && line == 3,
           "a cell that is not a number: EBADMSG at its line");
        ok(history_series_parse_csv("t_s,a\n1,2,3\n", 12, &bad, NULL) == -EBADMSG, "a row wider than the header");
        ok(history_series_parse_csv("t_s,a\n1,inf\n", 12, &bad, NULL) == -EBADMSG, "infinity is not a figure");
        ok(report_parse_series_jsonl("{\"t_s\": \"x\"}\n", 13, &bad) == -EBADMSG, "a string where a figure belongs");
        history_series_free(a);
        history_series_free(b);
}

static void test_parse(void) {
        struct history_job *j = NULL;
        size_t len;
        _cleanup_free_ char *text = slurp("oom.json", &len);
        static const char wrong_types[] =
                "{\"schema\": 1, \"reason\": \"ok\", \"usage\": {\"wall_time_s\": \"evil\", \"cpu_time_s\": [1]},"
                " \"limits\": {\"memory\": {\"value\": {}}}, \"command\": [\"a\", 7], \"signals\": [{\"x\": 1}, 3]}";

        ok(report_parse_job(text, len, &j) == 0, "the fixture report parses");
        is_str(j->reason, "memory", "reason");
        is_str(j->name, "train-<b>", "name from the cgroup, without @pid");
        ok(j->limit[LEASH_LIMIT_MEMORY].set && j->limit[LEASH_LIMIT_MEMORY].value == 268435456, "memory limit");
        is_str(j->limit[LEASH_LIMIT_MEMORY].enforced_by, "cgroup", "enforced_by");
        ok(j->usage[HU_OOM_KILLS] == 1 && j->exit_code == 137, "usage and exit");
        ok(j->n_command == 3 && strstr(j->command[2], "<script>"), "command kept as it came");
        history_job_free(j);
        j = NULL;
        ok(report_parse_job("{\"schema\": 1", 12, &j) == -EBADMSG, "truncated JSON: EBADMSG");
        ok(report_parse_job("{} {}", 5, &j) == -EBADMSG, "trailing garbage: EBADMSG");
        ok(report_parse_job("{\"schema\": 2, \"reason\": \"ok\", \"usage\": {}}", 42, &j) == -EPROTO,
           "another schema: EPROTO");
        ok(report_parse_job("[1]", 3, &j) == -EPROTO, "not an object: EPROTO");
        ok(report_parse_job(wrong_types, strlen(wrong_types), &j) == 0, "values of the wrong type are read");
        ok(isnan(j->usage[HU_WALL]) && isnan(j->usage[HU_CPU]), "... as no figure");
        ok(!j->limit[LEASH_LIMIT_MEMORY].set, "... a limit without a number is not a limit");
        ok(j->n_command == 2 && strcmp(j->command[1], "") == 0 && j->n_signals == 0, "... arrays keep their shape");
        history_job_free(j);
}

static void test_escape(void) {
        _cleanup_free_ char *h = escaped(markup_html, "<script>&\"'");
        _cleanup_free_ char *c = escaped(markup_html, "a\x1b[31mb\r\n\xff\xc0\x80");
        _cleanup_free_ char *bidi = escaped(markup_text, "x\u202ey\u2066z");
        _cleanup_free_ char *t = escaped(markup_text, "ok \x1b]0;title\x07 \xe2\x82\xac \x9b");
        _cleanup_free_ char *md = escaped(markup_md, "a|b *c* [x](javascript:y) <i> `d`\nnext");
        is_str(h, "&lt;script&gt;&amp;&quot;&#39;", "HTML: markup characters");
        is_str(c, "a\\x1b[31mb\\x0d\\x0a\\xff\\xc0\\x80", "HTML: control bytes and invalid UTF-8 made visible");
        is_str(bidi, "x\\u{202e}y\\u{2066}z", "text: bidi controls made visible");
        is_str(t, "ok \\x1b]0;title\\x07 \xe2\x82\xac \\x9b", "text: escapes, BEL and a lone C1 byte; UTF-8 kept");
        is_str(md, "a\\|b \\*c\\* \\[x\\]\\(javascript\\:y\\) &lt;i&gt; \\`d\\` next",
               "Markdown: table pipes, emphasis, links, HTML, code, line breaks");
}

static struct history_job *fixture_job(void) {
        struct history_job *j = NULL;
        size_t len;
        _cleanup_free_ char *text = slurp("oom.json", &len), *csv = slurp("oom.csv", &len);
        if (report_parse_job(text, strlen(text), &j) < 0 ||
            history_series_parse_csv(csv, strlen(csv), &j->series, NULL) < 0) {
                printf("Bail out! fixture\n");
                exit(1);
        }
        return j;
}

static void test_documents(void) {
        struct history_job *j = fixture_job();
        struct render_output o;
        _cleanup_free_ char *v = NULL;

        ok(render_verdict(j, &v) == 0 && strstr(v, "Reached its memory limit (256 MiB, enforced by cgroup)") &&
                   strstr(v, "OOM killer ended it at about 2.5 s") && strstr(v, "exited 137"),
           "verdict in words: which limit, how enforced, when, the exit");
        ok(render_jobs(&j, 1, RENDER_HTML, NULL, &o) == 0, "HTML job page");
        ok(!strstr(o.text, "<script>alert") && strstr(o.text, "&lt;script&gt;alert") && !strstr(o.text, "train-<b>") &&
                   !strstr(o.text, "\x1b"),
           "HTML: the job's strings are escaped");
        ok(strstr(o.text, "<svg") && strstr(o.text, "id=\"memory\"") && strstr(o.text, "data-level=\"memory.max\"") &&
                   strstr(o.text, "data-mark=\"OOM kill\"") && strstr(o.text, "data-level=\"pids.max\"") &&
                   strstr(o.text, "data-level=\"cpu.max\"") && strstr(o.text, "id=\"pressure\""),
           "HTML: the charts with their limits and the OOM mark");
        ok(!strstr(o.text, "http://") || strstr(o.text, "http://www.w3.org/2000/svg"),
           "HTML: no link out but the SVG namespace");
        ok(!strstr(o.text, "<script"), "HTML: a single job page needs no script");
        render_output_free(&o);
        ok(render_jobs(&j, 1, RENDER_TEXT, NULL, &o) == 0 && !strchr(o.text, '\x1b') && strstr(o.text, "\\x1b"),
           "text: no raw escape byte from the report reaches the terminal");
        render_output_free(&o);
        ok(render_jobs(&j, 1, RENDER_MARKDOWN, "job", &o) == 0 && o.n_files == 5 &&
                   strcmp(o.files[1].name, "job-memory.svg") == 0 && strstr(o.text, "](job-memory.svg)") &&
                   strncmp(o.files[1].text, "<?xml", 5) == 0 && strstr(o.files[1].text, "prefers-color-scheme"),
           "Markdown: five SVG files beside it, standalone with their own style");
        render_output_free(&o);
        {
                struct history_job *two[2] = {j, fixture_job()};
                ok(render_jobs(two, 2, RENDER_HTML, NULL, &o) == 0 && strstr(o.text, "class=\"sortable\"") &&
                           strstr(o.text, "<script>") && strstr(o.text, "id=\"near-memory\"") &&
                           strstr(o.text, "data-v=\"268435456\""),
                   "HTML summary: sortable table with sort keys, distributions");
                render_output_free(&o);
                history_job_free(two[1]);
        }
        history_job_free(j);
}

static void test_golden(void) {
        static const double t[] = {0, 0.5, 1, 1.5, 2, 2.5};
        static const double mem[] = {1048576, 50e6, 100e6, 150e6, 200e6, 268435456};
        struct chart c = {.id = "memory",
                          .title = "Memory",
                          .desc = "Memory over time <fixed series>",
                          .unit = HUNIT_BYTES,
                          .standalone = true,
                          .line = {{"current", "mem_current_bytes", t, mem, 6, 1, 1}},
                          .n_lines = 1,
                          .level = {{"memory.max", 268435456, CHART_LEVEL_LIMIT}},
                          .n_levels = 1,
                          .mark = {{"SIGXCPU", 1.25, CHART_MARK_SOFT}, {"OOM kill", 2.5, CHART_MARK_OOM}},
                          .n_marks = 2};
        _cleanup_free_ char *svg = NULL, *golden = NULL;
        char path[8192];
        size_t len;

        ok(chart_svg(&c, &svg) == 0, "chart of a fixed series");
        snprintf(path, sizeof path, "%s/golden-memory.svg", dir);
        if (getenv("LEASH_UPDATE_GOLDEN")) {
                FILE *f = fopen(path, "we");
                fputs(svg, f);
                fclose(f);
        }
        golden = slurp("golden-memory.svg", &len);
        is_str(svg, golden, "the SVG is byte for byte the golden file");
        ok(strstr(svg, "points=\"70.0,") && strstr(svg, "data-n=\"6\""), "six points drawn");
        ok(chart_nice_step(268435456 * 1.05, 4, HUNIT_BYTES) == 100.0 * 1048576, "byte axes step in MiB");
        ok(chart_nice_step(2.5, 6, HUNIT_SECONDS) == 0.5, "time axes step in nice seconds");
}

static void test_thinning(void) {
        enum { N = 20000 };
        static double t[N], y[N];
        struct chart c = {.id = "long", .title = "long", .desc = "long", .unit = HUNIT_COUNT, .n_lines = 1};
        _cleanup_free_ char *svg = NULL;
        size_t points = 0;
        const char *p;

        for (size_t i = 0; i < N; i++) {
                t[i] = (double) i / 100;
                y[i] = i == 12345 ? 1000 : i % 7 == 0 ? NAN : (double) (i % 50);
        }
        c.line[0] = (struct chart_line){"y", "y", t, y, N, 1, 1};
        ok(chart_svg(&c, &svg) == 0, "a chart of 20,000 samples");
        p = strstr(svg, "points=\"");
        for (p = p ? p + 8 : ""; *p && *p != '"'; p++)
                points += *p == ',';
        ok(points > 0 && points <= 800, "thinned to at most two points per column (%zu)", points);
        ok(strstr(svg, "data-n=\"17142\"") != NULL, "data-n counts the samples with a figure");
        ok(strstr(svg, ",94.0") != NULL, "the one spike (1000 on a 0-1500 axis: y 94.0) survives the thinning");
}

int main(void) {
        const char *src = getenv("LEASH_SRCDIR");
        snprintf(dir, sizeof dir, "%s/tests/unit/fixtures/report", src ? src : "..");
        test_series();
        test_parse();
        test_escape();
        test_documents();
        test_golden();
        test_thinning();
        return tap_done();
}
