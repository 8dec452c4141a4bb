/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Escaping for every place a report's strings end up (HTML and SVG, Markdown,
 * a terminal), and figures formatted with their unit. A report's strings may
 * come from a hostile job: control bytes, invalid UTF-8, bidirectional
 * overrides and markup are made visible and inert, never passed through.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include "../report/history.h"

/* HTML and XML (SVG) text and attribute values: & < > " ' escaped; control
 * bytes, invalid UTF-8 and bidi controls shown as \xNN / \u{NNNN}. */
void markup_html(FILE *f, const char *s);
/* Markdown inline text: ASCII punctuation backslash-escaped, < > & as
 * entities, line breaks as spaces, the rest as markup_html. */
void markup_md(FILE *f, const char *s);
/* A terminal: printable text as is, every control byte, invalid UTF-8 and
 * bidi control as \xNN / \u{NNNN}. */
void markup_text(FILE *f, const char *s);
/* A command line for people: arguments with blanks or quotes single-quoted
 * (shell style), then escaped by the given function. */
void markup_command(FILE *f, char *const *argv, size_t n, void (*esc)(FILE *, const char *));

/* "512 MiB", "1.25 s", "3 min 20 s", "12", "1.50 cores", "45 %"; "—" for NAN. */
void markup_value(double v, enum history_unit u, char *buf, size_t size);
