/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF) and the escapes reports use for what is not: command arguments,
 * paths and names come from the user or the job and may be any bytes.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Length (1-4) of the valid UTF-8 sequence at s (n bytes available), or 0. */
size_t utf8_seq_len(const char *s, size_t n);
bool utf8_is_valid(const char *s);
/* A malloc'd copy of s with each byte that is not part of a valid sequence
 * replaced by U+FFFD; NULL on ENOMEM. */
char *utf8_replace_invalid(const char *s);
/* Writes s for a terminal or a line-based file: a valid printable sequence as
 * it is; backslash as "\\"; \n \r \t as such; every other control byte (C0,
 * DEL, C1 as U+0080-U+009F) and every byte outside valid UTF-8 as "\xHH". */
void utf8_fputs_escaped(const char *s, FILE *f);
/* Writes s as a JSON string literal (quotes included): '"', '\\' and every
 * control byte escaped, every byte outside valid UTF-8 as U+FFFD. */
void utf8_fputs_json(const char *s, FILE *f);
/* A command line for people: an argument with blanks, quotes or shell syntax
 * single-quoted ('it'\''s'), an empty one as ''; each piece written through
 * esc (render's markup for HTML/Markdown). With esc NULL, for a terminal and
 * for pasting into a shell: exact, and an argument with a control byte or
 * bytes outside UTF-8 written in bash's $'...' with \xHH, so that none
 * reaches the terminal raw. */
void utf8_fputs_command(FILE *f, char *const *argv, size_t n, void (*esc)(FILE *, const char *));
