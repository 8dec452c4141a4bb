/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "kvfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool key_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
               c == '-';
}

static bool raw_ok(unsigned char c) {
        return c >= 0x20 && c < 0x7f;
}

void kv_escape(const char *v, char *buf, size_t size) {
        size_t n = 0;

        if (size == 0)
                return;
        for (const unsigned char *p = (const unsigned char *) v; *p; p++) {
                char e[5];
                size_t k;
                if (*p == '\\')
                        memcpy(e, "\\\\", 3), k = 2;
                else if (!raw_ok(*p))
                        k = (size_t) snprintf(e, sizeof e, "\\x%02x", *p);
                else
                        e[0] = (char) *p, e[1] = '\0', k = 1;
                if (n + k >= size)
                        break;
                memcpy(buf + n, e, k);
                n += k;
        }
        buf[n] = '\0';
}

static void put(struct kv_buf *b, const char *s, size_t k) {
        if (!b->overflow && b->len + k < b->size) {
                memcpy(b->buf + b->len, s, k);
                b->buf[b->len + k] = '\0';
        } else
                b->overflow = true;
        b->len += k;
}

void kv_add(struct kv_buf *b, const char *key, const char *fmt, ...) {
        char value[4096], esc[4];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(value, sizeof value, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= sizeof value || !key[0]) {
                b->overflow = true;
                return;
        }
        for (const char *k = key; *k; k++)
                if (!key_char(*k)) {
                        b->overflow = true; /* a key is the program's, never a user's */
                        return;
                }
        put(b, key, strlen(key));
        put(b, "=", 1);
        for (const unsigned char *p = (const unsigned char *) value; *p; p++) {
                if (*p == '\\')
                        put(b, "\\\\", 2);
                else if (!raw_ok(*p)) {
                        snprintf(esc, sizeof esc, "%02x", *p);
                        put(b, "\\x", 2);
                        put(b, esc, 2);
                } else
                        put(b, (const char *) p, 1);
        }
        put(b, "\n", 1);
}

/* The length of the key at line p ("KEY="), 0 when the line is not one. */
static size_t key_len(const char *p) {
        size_t n = 0;
        while (key_char(p[n]))
                n++;
        return p[n] == '=' ? n : 0;
}

int kv_check(const char *text) {
        for (const char *p = text; *p;) {
                size_t n = key_len(p);
                const char *v, *e;
                if (n == 0)
                        return -EBADMSG;
                v = p + n + 1;
                for (e = v; *e && *e != '\n'; e++)
                        if (!raw_ok((unsigned char) *e))
                                return -EBADMSG;
                if (*e != '\n')
                        return -EBADMSG; /* cut short */
                /* the same key on an earlier line */
                for (const char *q = text; q < p; q = strchr(q, '\n') + 1)
                        if (key_len(q) == n && strncmp(q, p, n) == 0)
                                return -EBADMSG;
                p = e + 1;
        }
        return 0;
}

static int hexval(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int kv_get(const char *text, const char *key, char *buf, size_t size) {
        size_t n = strlen(key), o = 0;

        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                if (strncmp(p, key, n) != 0 || p[n] != '=')
                        continue;
                for (const char *v = p + n + 1; *v && *v != '\n'; v++) {
                        char c = *v;
                        if (c == '\\' && v[1] == '\\')
                                v++;
                        else if (c == '\\' && v[1] == 'x' && hexval(v[2]) >= 0 && hexval(v[3]) >= 0) {
                                c = (char) (hexval(v[2]) * 16 + hexval(v[3]));
                                v += 3;
                        }
                        if (o + 1 >= size)
                                return -ENAMETOOLONG;
                        buf[o++] = c;
                }
                if (size == 0)
                        return -ENAMETOOLONG;
                buf[o] = '\0';
                return 0;
        }
        return -ENOENT;
}
