/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * "key=value\n" files that root writes and others read (the Slurm hooks'
 * per-job state and verdict). Values come from users (a profile name, a
 * partition, an error naming either), so the format is one that no value
 * can forge: a value is written escaped (backslash as "\\", every byte
 * below 0x20, DEL and every byte from 0x80 as "\xHH"), so a line holds
 * exactly one key; a reader first checks the whole text (kv_check) and
 * refuses a line that is not KEY=VALUE, a raw control byte, a missing final
 * newline or a key given twice, and only then looks keys up.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct kv_buf {
        char *buf;
        size_t size;
        size_t len;    /* what was (or would have been) written */
        bool overflow; /* the text did not fit: never use it */
};

/* Appends "key=<value escaped>\n"; the value from printf-style fmt. */
void kv_add(struct kv_buf *b, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* 0 when text is a well-formed kv file, -EBADMSG when not. */
int kv_check(const char *text);
/* The value of key, unescaped (a checked text only). -ENOENT, -ENAMETOOLONG. */
int kv_get(const char *text, const char *key, char *buf, size_t size);
/* A copy of v escaped as in a file: safe to print on a terminal. */
void kv_escape(const char *v, char *buf, size_t size);
