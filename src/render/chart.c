/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Theory: a chart is a 640x260 viewBox scaled to its container (readable on a
 * phone and in print), the plot area inside fixed margins. The y axis starts
 * at 0 and ends at a nice number above the highest line or level, so a limit
 * is always in view next to what approached it. Long series are thinned to
 * the minimum and maximum of each of 400 columns: a peak is never dropped,
 * and the file stays small. Numbers are printed with one decimal: the same
 * input gives the same bytes.
 */
#include "chart.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "markup.h"

#define W 640
#define H 260
#define X0 70.0
#define X1 624.0
#define Y0 30.0
#define Y1 222.0
#define THIN_ABOVE 1200
#define THIN_COLUMNS 400

static const char style[] = "<style>svg{color:#1f2328;background:#fff}"
                            "@media (prefers-color-scheme:dark){svg{color:#e6edf3;background:#0d1117}}</style>\n";

/* Colours through custom properties, with fallbacks: the HTML page sets them. */
static const char *const line_colour[CHART_MAX_LINES] = {"var(--c0,#1f77b4)", "var(--c1,#2ca02c)", "var(--c2,#9467bd)",
                                                         "var(--c3,#8c564b)"};
static const char *const level_colour[] = {"var(--limit,#d62728)", "var(--soft,#e07b00)", "var(--peak,#7f7f7f)"};
static const char *const mark_colour[] = {"var(--soft,#e07b00)", "var(--limit,#d62728)", "var(--limit,#d62728)"};
static const char *const level_class[] = {"limit", "soft", "peak"};
static const char *const mark_class[] = {"soft", "kill", "oom"};

double chart_nice_step(double max, int ticks, enum history_unit u) {
        double scale = 1, raw, mag, norm;
        if (!(max > 0))
                return 1;
        if (u == HUNIT_BYTES)
                while (max / scale >= 1024)
                        scale *= 1024;
        raw = max / scale / ticks;
        mag = pow(10, floor(log10(raw)));
        norm = raw / mag;
        norm = norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10;
        if (u == HUNIT_COUNT && norm * mag < 1)
                return scale;
        return norm * mag * scale;
}

static void tick_label(double v, enum history_unit u, char *buf, size_t size) {
        if (u == HUNIT_SECONDS)
                snprintf(buf, size, "%g s", v);
        else if (u == HUNIT_PERCENT)
                snprintf(buf, size, "%g %%", v);
        else if (u == HUNIT_CORES || u == HUNIT_COUNT)
                snprintf(buf, size, "%g", v);
        else
                markup_value(v, u, buf, size);
}

struct frame {
        double xmax, ymax;
};

static double px(const struct frame *fr, double x) {
        return X0 + (X1 - X0) * (fr->xmax > 0 ? x / fr->xmax : 0);
}

static double py(const struct frame *fr, double y) {
        return Y1 - (Y1 - Y0) * (fr->ymax > 0 ? y / fr->ymax : 0);
}

static void open_svg(FILE *f, const char *id, const char *title, const char *desc, bool standalone) {
        if (standalone)
                fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
        fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" role=\"img\" class=\"chart\" id=\"",
                W, H);
        markup_html(f, id);
        fputs("\" aria-labelledby=\"", f);
        markup_html(f, id);
        fputs("-t ", f);
        markup_html(f, id);
        fputs("-d\" font-family=\"sans-serif\" font-size=\"12\">\n<title id=\"", f);
        markup_html(f, id);
        fputs("-t\">", f);
        markup_html(f, title);
        fputs("</title>\n<desc id=\"", f);
        markup_html(f, id);
        fputs("-d\">", f);
        markup_html(f, desc);
        fputs("</desc>\n", f);
        if (standalone)
                fputs(style, f);
}

static void axes(FILE *f, const struct frame *fr, double ystep, enum history_unit u) {
        double xstep = chart_nice_step(fr->xmax, 6, HUNIT_SECONDS);
        char buf[64];

        fputs("<g class=\"axes\" fill=\"currentColor\" stroke=\"currentColor\">\n", f);
        for (double y = 0; y <= fr->ymax * (1 + 1e-9); y += ystep) {
                tick_label(y, u, buf, sizeof buf);
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-opacity=\"0.15\"/>"
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" stroke=\"none\">%s</text>\n",
                        X0, py(fr, y), X1, py(fr, y), X0 - 6, py(fr, y) + 4, buf);
        }
        for (double x = 0; x <= fr->xmax * (1 + 1e-9); x += xstep)
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" stroke=\"none\">%g s</text>\n",
                        px(fr, x), Y1, px(fr, x), Y1 + 4, px(fr, x), Y1 + 18, x);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n</g>\n", X0, Y1, X1, Y1);
}

/* The points of one line, thinned to min/max per column when long. */
static size_t polyline_points(FILE *f, const struct frame *fr, const struct chart_line *l) {
        size_t shown = 0;
        if (l->n <= THIN_ABOVE) {
                for (size_t i = 0; i < l->n; i++) {
                        double x = l->x[i * l->xstride], y = l->y[i * l->ystride];
                        if (isnan(x) || isnan(y))
                                continue;
                        fprintf(f, "%s%.1f,%.1f", shown++ ? " " : "", px(fr, x), py(fr, y));
                }
                return shown;
        }
        for (size_t col = 0, i = 0; col < THIN_COLUMNS; col++) {
                double lo = NAN, hi = NAN, xlo = 0, xhi = 0, edge = fr->xmax * (double) (col + 1) / THIN_COLUMNS;
                for (; i < l->n && (l->x[i * l->xstride] <= edge || col == THIN_COLUMNS - 1); i++) {
                        double x = l->x[i * l->xstride], y = l->y[i * l->ystride];
                        if (isnan(x) || isnan(y))
                                continue;
                        if (isnan(lo) || y < lo)
                                lo = y, xlo = x;
                        if (isnan(hi) || y > hi)
                                hi = y, xhi = x;
                }
                if (isnan(lo))
                        continue;
                if (xlo > xhi) {
                        double t = xlo;
                        xlo = xhi, xhi = t, t = lo, lo = hi, hi = t;
                }
                fprintf(f, "%s%.1f,%.1f %.1f,%.1f", shown ? " " : "", px(fr, xlo), py(fr, lo), px(fr, xhi), py(fr, hi));
                shown += 2;
        }
        return shown;
}

static void legend(FILE *f, const struct chart *c) {
        double x = X0;
        fputs("<g class=\"legend\" fill=\"currentColor\">\n", f);
        for (size_t i = 0; i < c->n_lines; i++) {
                fprintf(f, "<rect x=\"%.1f\" y=\"8\" width=\"14\" height=\"4\" fill=\"%s\"/><text x=\"%.1f\" y=\"14\">",
                        x, line_colour[i], x + 18);
                markup_html(f, c->line[i].label);
                fputs("</text>\n", f);
                x += 30 + 7.0 * (double) strlen(c->line[i].label);
        }
        fputs("</g>\n", f);
}

/* The frame: the axes' ends, each rounded up to a nice step past the data,
 * its levels and its marks; the y axis' step. */
static double chart_frame(const struct chart *c, struct frame *ret) {
        struct frame fr = {0, 0};
        double ystep;

        for (size_t i = 0; i < c->n_lines; i++)
                for (size_t k = 0; k < c->line[i].n; k++) {
                        double x = c->line[i].x[k * c->line[i].xstride], y = c->line[i].y[k * c->line[i].ystride];
                        if (!isnan(x) && x > fr.xmax)
                                fr.xmax = x;
                        if (!isnan(y) && y > fr.ymax)
                                fr.ymax = y;
                }
        for (size_t i = 0; i < c->n_levels; i++)
                if (c->level[i].y > fr.ymax)
                        fr.ymax = c->level[i].y;
        for (size_t i = 0; i < c->n_marks; i++)
                if (c->mark[i].x > fr.xmax)
                        fr.xmax = c->mark[i].x;
        if (fr.xmax <= 0)
                fr.xmax = 1;
        if (fr.ymax <= 0)
                fr.ymax = c->unit == HUNIT_BYTES ? 1048576 : 1;
        ystep = chart_nice_step(fr.ymax * 1.05, 4, c->unit);
        fr.ymax = ceil(fr.ymax * 1.05 / ystep) * ystep;
        fr.xmax =
                ceil(fr.xmax / chart_nice_step(fr.xmax, 6, HUNIT_SECONDS)) * chart_nice_step(fr.xmax, 6, HUNIT_SECONDS);
        *ret = fr;
        return ystep;
}

int chart_svg(const struct chart *c, char **ret) {
        struct frame fr;
        char *text = NULL, buf[64];
        size_t len = 0;
        double ystep;
        FILE *f;

        ystep = chart_frame(c, &fr);

        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        open_svg(f, c->id, c->title, c->desc, c->standalone);
        axes(f, &fr, ystep, c->unit);
        for (size_t i = 0; i < c->n_lines; i++) {
                const struct chart_line *l = &c->line[i];
                size_t valid = 0;
                for (size_t k = 0; k < l->n; k++)
                        valid += !isnan(l->x[k * l->xstride]) && !isnan(l->y[k * l->ystride]);
                fputs("<polyline class=\"line\" data-series=\"", f);
                markup_html(f, l->key);
                fprintf(f, "\" data-n=\"%zu\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", valid,
                        line_colour[i]);
                polyline_points(f, &fr, l);
                fputs("\"/>\n", f);
        }
        for (size_t i = 0; i < c->n_levels; i++) {
                const struct chart_level *v = &c->level[i];
                markup_value(v->y, c->unit, buf, sizeof buf);
                fprintf(f, "<g class=\"level %s\" data-level=\"", level_class[v->kind]);
                markup_html(f, v->label);
                fprintf(f,
                        "\" data-value=\"%.17g\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                        "stroke-width=\"1.5\" stroke-dasharray=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                        "fill=\"%s\">",
                        v->y, X0, py(&fr, v->y), X1, py(&fr, v->y), level_colour[v->kind],
                        v->kind == CHART_LEVEL_PEAK ? "2 3" : "6 4", X1 - 2, py(&fr, v->y) - 4 - 12.0 * (double) i,
                        level_colour[v->kind]);
                markup_html(f, v->label);
                fprintf(f, " %s</text></g>\n", buf);
        }
        for (size_t i = 0; i < c->n_marks; i++) {
                const struct chart_mark *m = &c->mark[i];
                fprintf(f, "<g class=\"mark %s\" data-mark=\"", mark_class[m->kind]);
                markup_html(f, m->label);
                fprintf(f,
                        "\" data-at=\"%.17g\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                        "stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"%s\">",
                        m->x, px(&fr, m->x), Y0, px(&fr, m->x), Y1, mark_colour[m->kind], px(&fr, m->x) - 3,
                        Y0 + 10 + 12.0 * (double) i, px(&fr, m->x) > (X0 + X1) / 2 ? "end" : "start",
                        mark_colour[m->kind]);
                markup_html(f, m->label);
                fputs("</text></g>\n", f);
        }
        legend(f, c);
        fputs("</svg>\n", f);
        if (fclose(f) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        return 0;
}

int chart_bars_svg(const struct chart_bars *b, char **ret) {
        double max = 0, step, bw;
        char *text = NULL;
        size_t len = 0;
        struct frame fr;
        FILE *f;

        for (size_t i = 0; i < b->n; i++)
                if (b->counts[i] > max)
                        max = b->counts[i];
        step = chart_nice_step(max > 0 ? max : 1, 4, HUNIT_COUNT);
        fr.ymax = ceil((max > 0 ? max : 1) / step) * step;
        fr.xmax = 1;
        bw = (X1 - X0) / (double) (b->n ? b->n : 1);
        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        open_svg(f, b->id, b->title, b->desc, b->standalone);
        fputs("<g class=\"axes\" fill=\"currentColor\" stroke=\"currentColor\">\n", f);
        for (double y = 0; y <= fr.ymax * (1 + 1e-9); y += step)
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-opacity=\"0.15\"/>"
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" stroke=\"none\">%g</text>\n",
                        X0, py(&fr, y), X1, py(&fr, y), X0 - 6, py(&fr, y) + 4, y);
        fputs("</g>\n<g class=\"bars\">\n", f);
        for (size_t i = 0; i < b->n; i++) {
                bool over = i >= b->over_from;
                fprintf(f,
                        "<g class=\"bar%s\" data-bin=\"%zu\" data-count=\"%g\"><rect x=\"%.1f\" y=\"%.1f\" "
                        "width=\"%.1f\" "
                        "height=\"%.1f\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                        "fill=\"currentColor\">",
                        over ? " over" : "", i, b->counts[i], X0 + bw * (double) i + 1, py(&fr, b->counts[i]), bw - 2,
                        Y1 - py(&fr, b->counts[i]), over ? "var(--limit,#d62728)" : "var(--c0,#1f77b4)",
                        X0 + bw * ((double) i + 0.5), Y1 + 16);
                markup_html(f, b->labels[i]);
                fputs("</text></g>\n", f);
        }
        fprintf(f, "</g>\n<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"currentColor\">", (X0 + X1) / 2,
                H - 4);
        markup_html(f, b->x_label);
        fputs("</text>\n</svg>\n", f);
        if (fclose(f) != 0) {
                free(text);
                return -ENOMEM;
        }
        *ret = text;
        return 0;
}
