/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The writer of render's documents (writer.c): the target formats, the
 * document and its files, and what writes into them with every string
 * from a report escaped for the target.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../basic/macro.h"

enum render_format { RENDER_HTML, RENDER_MARKDOWN, RENDER_TEXT };

struct render_file {
        char *name; /* relative to the document: "<prefix>-memory.svg" */
        char *text;
};

struct render_output {
        char *text; /* the document */
        struct render_file *files;
        size_t n_files;
};

struct writer {
        FILE *f;
        enum render_format fmt;
        const char *prefix;
        struct render_output *out;
        int err;
};

/* A string from a report, escaped for the target; a file name beside the
 * document, percent-encoded; our own text as it is. */
void writer_esc(struct writer *w, const char *s);
void writer_put_url(struct writer *w, const char *s);
void writer_put(struct writer *w, const char *s);
_printf_(2, 3) void writer_putf(struct writer *w, const char *fmt, ...);
void writer_heading(struct writer *w, int level, const char *text);

/* Tables: a header row, then rows of cells with an optional sort key
 * (HTML's data-v; sortable: the summary's script sorts by it); width: the
 * text target's columns. */
struct cell {
        const char *text;  /* from a report: escaped */
        const char *plain; /* ours: written as is */
        double sort;       /* NAN: sort by text */
};

void writer_table_open(struct writer *w, const char *caption, const char *const *head, size_t n, bool sortable,
                       const int *width);
void writer_table_row(struct writer *w, const struct cell *c, size_t n, const int *width);
void writer_table_close(struct writer *w);

/* A Markdown document's chart: the file PREFIX-ID.svg beside it, taking
 * *svg; its name, or NULL with w->err. */
const char *writer_attach_svg(struct writer *w, const char *id, char **svg);
