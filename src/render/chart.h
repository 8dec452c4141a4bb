/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SVG charts drawn by leash: pure functions from figures to SVG text, no
 * state, no I/O, so a fixed series always gives the same bytes (the golden
 * test). Accessible: role="img", <title> and <desc> named by aria-labelledby;
 * every line, level and mark carries data-* attributes with its figures, so a
 * test (or a script) can read what was drawn. Colours come from CSS custom
 * properties with fallbacks (the HTML page switches them for dark mode; a
 * standalone SVG carries its own <style>).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "../report/history.h"

#define CHART_MAX_LINES 4
#define CHART_MAX_LEVELS 4
#define CHART_MAX_MARKS 8

struct chart_line {
        const char *label; /* legend */
        const char *key;   /* data-series: the series column */
        const double *x, *y;
        size_t n, xstride, ystride; /* x[i * xstride], y[i * ystride]; NAN points are skipped */
};

enum chart_level_kind { CHART_LEVEL_LIMIT, CHART_LEVEL_SOFT, CHART_LEVEL_PEAK };
struct chart_level {
        const char *label; /* "memory.max" */
        double y;
        enum chart_level_kind kind;
};

enum chart_mark_kind { CHART_MARK_SOFT, CHART_MARK_KILL, CHART_MARK_OOM };
struct chart_mark {
        char label[24]; /* "SIGXCPU" */
        double x;
        enum chart_mark_kind kind;
};

struct chart {
        const char *id, *title, *desc;
        enum history_unit unit;
        bool standalone; /* a file of its own: XML prolog and its own <style> */
        struct chart_line line[CHART_MAX_LINES];
        size_t n_lines;
        struct chart_level level[CHART_MAX_LEVELS];
        size_t n_levels;
        struct chart_mark mark[CHART_MAX_MARKS];
        size_t n_marks;
};

/* A time chart: lines over seconds since the start, limits as horizontal
 * levels, signals and the OOM kill as vertical marks. */
int chart_svg(const struct chart *c, char **ret);

/* A histogram: one bar per bin, bins from `from` on drawn as "over". */
struct chart_bars {
        const char *id, *title, *desc, *x_label;
        bool standalone;
        const char *const *labels;
        const double *counts;
        size_t n, over_from;
};
int chart_bars_svg(const struct chart_bars *b, char **ret);

/* The nice step for an axis from 0 to max with about `ticks` ticks (bytes get
 * steps in powers of 1024 times 1, 2, 2.5 or 5). */
double chart_nice_step(double max, int ticks, enum history_unit u);
