/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The writer every document of render.c and summary.c goes through: it
 * knows its target (HTML, Markdown, text) and escapes every string that
 * came from a report; headings, tables and the SVG files beside a Markdown
 * document in each target's dress.
 */
#include "writer.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../basic/macro.h"
#include "markup.h"

void writer_esc(struct writer *w, const char *s) {
        if (w->fmt == RENDER_HTML)
                markup_html(w->f, s);
        else if (w->fmt == RENDER_MARKDOWN)
                markup_md(w->f, s);
        else
                markup_text(w->f, s);
}

/* A link to a file beside the document: percent-encoded. */
void writer_put_url(struct writer *w, const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                    strchr("._-", *p))
                        fputc(*p, w->f);
                else
                        fprintf(w->f, "%%%02X", *p);
}

void writer_put(struct writer *w, const char *s) {
        fputs(s, w->f);
}

void writer_putf(struct writer *w, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vfprintf(w->f, fmt, ap);
        va_end(ap);
}

void writer_heading(struct writer *w, int level, const char *text) {
        if (w->fmt == RENDER_HTML)
                writer_putf(w, "<h%d>%s</h%d>\n", level, text, level);
        else if (w->fmt == RENDER_MARKDOWN)
                writer_putf(w, "\n%.*s %s\n\n", level, "####", text);
        else
                writer_putf(w, "\n%s\n%.*s\n", text, (int) strlen(text),
                            "------------------------------------------------");
}

void writer_table_open(struct writer *w, const char *caption, const char *const *head, size_t n, bool sortable,
                       const int *width) {
        if (w->fmt == RENDER_HTML) {
                writer_putf(w, "<div class=\"scroll\"><table%s>\n<caption>%s</caption>\n<thead><tr>",
                            sortable ? " class=\"sortable\"" : "", caption);
                for (size_t i = 0; i < n; i++)
                        writer_putf(w, "<th scope=\"col\">%s</th>", head[i]);
                writer_put(w, "</tr></thead>\n<tbody>\n");
        } else if (w->fmt == RENDER_MARKDOWN) {
                writer_putf(w, "%s\n\n|", caption);
                for (size_t i = 0; i < n; i++)
                        writer_putf(w, " %s |", head[i]);
                writer_put(w, "\n|");
                for (size_t i = 0; i < n; i++)
                        writer_put(w, i ? " ---: |" : " --- |");
                writer_put(w, "\n");
        } else {
                writer_putf(w, "%s\n", caption);
                writer_put(w, " ");
                for (size_t i = 0; i < n; i++)
                        writer_putf(w, " %-*s", i + 1 < n ? width[i] : 0, head[i]);
                writer_put(w, "\n");
        }
}

void writer_table_row(struct writer *w, const struct cell *c, size_t n, const int *width) {
        if (w->fmt == RENDER_HTML)
                writer_put(w, "<tr>");
        else if (w->fmt == RENDER_MARKDOWN)
                writer_put(w, "|");
        else
                writer_put(w, " ");
        for (size_t i = 0; i < n; i++) {
                const char *s = c[i].text ? c[i].text : c[i].plain ? c[i].plain : "";
                if (w->fmt == RENDER_HTML) {
                        writer_put(w, i == 0 ? "<th scope=\"row\"" : isnan(c[i].sort) ? "<td class=\"t\"" : "<td");
                        if (!isnan(c[i].sort))
                                writer_putf(w, " data-v=\"%.17g\"", c[i].sort);
                        else {
                                writer_put(w, " data-v=\"");
                                writer_esc(w, s);
                                writer_put(w, "\"");
                        }
                        writer_put(w, ">");
                } else
                        writer_put(w, " ");
                if (c[i].text)
                        writer_esc(w, s);
                else
                        writer_put(w, s);
                if (w->fmt == RENDER_HTML)
                        writer_put(w, i == 0 ? "</th>" : "</td>");
                else if (w->fmt == RENDER_MARKDOWN)
                        writer_put(w, " |");
                else {
                        int pad = width ? width[i] - (int) strlen(s) : 1;
                        writer_putf(w, "%*s", pad > 1 ? pad : 1, "");
                }
        }
        writer_put(w, w->fmt == RENDER_HTML ? "</tr>\n" : "\n");
}

void writer_table_close(struct writer *w) {
        writer_put(w, w->fmt == RENDER_HTML ? "</tbody></table></div>\n" : "\n");
}

/* A Markdown document's chart: the file PREFIX-ID.svg beside it, taking svg;
 * its name, or NULL with w->err. */
const char *writer_attach_svg(struct writer *w, const char *id, char **svg) {
        struct render_file *files = reallocarray(w->out->files, w->out->n_files + 1, sizeof *files);
        char *name = NULL;

        if (files)
                w->out->files = files;
        if (!files || asprintf(&name, "%s-%s.svg", w->prefix ? w->prefix : "chart", id) < 0) {
                w->err = -ENOMEM;
                return NULL;
        }
        files[w->out->n_files++] = (struct render_file){name, TAKE_PTR(*svg)};
        return name;
}
