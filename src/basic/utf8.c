/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * UTF-8 validation by the table of RFC 3629, section 4: the second byte's
 * range depends on the first (E0 needs A0-BF against overlongs, ED 80-9F
 * against surrogates, F0 90-BF, F4 80-8F against values above U+10FFFF).
 */
#include "utf8.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t utf8_seq_len(const char *str, size_t n) {
        const unsigned char *s = (const unsigned char *) str;
        unsigned char lo = 0x80, hi = 0xbf;
        size_t len;

        if (n == 0)
                return 0;
        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                len = 2;
        else if (s[0] >= 0xe0 && s[0] <= 0xef) {
                len = 3;
                if (s[0] == 0xe0)
                        lo = 0xa0;
                else if (s[0] == 0xed)
                        hi = 0x9f;
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                len = 4;
                if (s[0] == 0xf0)
                        lo = 0x90;
                else if (s[0] == 0xf4)
                        hi = 0x8f;
        } else
                return 0;
        if (n < len || s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if (s[i] < 0x80 || s[i] > 0xbf)
                        return 0;
        return len;
}

bool utf8_is_valid(const char *s) {
        size_t n = strlen(s);

        while (n) {
                size_t l = utf8_seq_len(s, n);
                if (!l)
                        return false;
                s += l;
                n -= l;
        }
        return true;
}

char *utf8_replace_invalid(const char *s) {
        size_t n = strlen(s), o = 0;
        char *out = malloc(3 * n + 1); /* each bad byte becomes 3 bytes (EF BF BD) */

        if (!out)
                return NULL;
        while (n) {
                size_t l = utf8_seq_len(s, n);
                if (l) {
                        memcpy(out + o, s, l);
                        o += l;
                } else {
                        memcpy(out + o, "\xef\xbf\xbd", 3);
                        o += 3;
                        l = 1;
                }
                s += l;
                n -= l;
        }
        out[o] = '\0';
        return out;
}

void utf8_fputs_escaped(const char *s, FILE *f) {
        size_t n = strlen(s);

        while (n) {
                const unsigned char c = (unsigned char) *s;
                size_t l = utf8_seq_len(s, n);

                if (c == '\\')
                        fputs("\\\\", f);
                else if (c == '\n')
                        fputs("\\n", f);
                else if (c == '\r')
                        fputs("\\r", f);
                else if (c == '\t')
                        fputs("\\t", f);
                else if (l == 0 || c < 0x20 || c == 0x7f || (l == 2 && c == 0xc2 && (unsigned char) s[1] < 0xa0)) {
                        /* a control byte, a C1 control, or a byte outside UTF-8: one
                         * escape per byte (of a C1 control, both bytes) */
                        for (size_t i = 0; i < (l ? l : 1); i++)
                                fprintf(f, "\\x%02x", (unsigned char) s[i]);
                } else
                        fwrite(s, 1, l, f);
                s += l ? l : 1;
                n -= l ? l : 1;
        }
}

void utf8_fputs_json(const char *s, FILE *f) {
        size_t n = strlen(s);

        fputc('"', f);
        while (n) {
                const unsigned char c = (unsigned char) *s;
                size_t l = utf8_seq_len(s, n);

                if (c == '"' || c == '\\')
                        fprintf(f, "\\%c", c);
                else if (l == 0)
                        fputs("\\ufffd", f);
                else if (c < 0x20 || c == 0x7f)
                        fprintf(f, "\\u%04x", c);
                else
                        fwrite(s, 1, l, f);
                s += l ? l : 1;
                n -= l ? l : 1;
        }
        fputc('"', f);
}

/* Whether utf8_fputs_escaped would write s unchanged but for backslashes:
 * valid UTF-8 without a control byte (tab and newline included). */
static bool utf8_plain(const char *s) {
        for (size_t n = strlen(s); n;) {
                const unsigned char c = (unsigned char) *s;
                size_t l = utf8_seq_len(s, n);
                if (l == 0 || c < 0x20 || c == 0x7f || (l == 2 && c == 0xc2 && (unsigned char) s[1] < 0xa0))
                        return false;
                s += l;
                n -= l;
        }
        return true;
}

/* bash's ANSI-C quoting, $'...': exact for any bytes, and no control byte
 * reaches the terminal raw */
static void utf8_fputs_ansi_c(FILE *f, const char *a) {
        fputs("$'", f);
        for (size_t n = strlen(a); n;) {
                const unsigned char c = (unsigned char) *a;
                size_t l = utf8_seq_len(a, n);
                if (c == '\\' || c == '\'')
                        fprintf(f, "\\%c", c);
                else if (l == 0 || c < 0x20 || c == 0x7f || (l == 2 && c == 0xc2 && (unsigned char) a[1] < 0xa0)) {
                        for (size_t i = 0; i < (l ? l : 1); i++)
                                fprintf(f, "\\x%02x", (unsigned char) a[i]);
                } else
                        fwrite(a, 1, l, f);
                a += l ? l : 1;
                n -= l ? l : 1;
        }
        fputc('\'', f);
}

static void utf8_fputs_raw(FILE *f, const char *s) {
        fputs(s, f);
}

void utf8_fputs_command(FILE *f, char *const *argv, size_t n, void (*esc)(FILE *, const char *)) {
        bool shell = !esc;

        if (shell)
                esc = utf8_fputs_raw;
        for (size_t i = 0; i < n; i++) {
                const char *a = argv[i];
                bool quote = !*a || strpbrk(a, " \t\n'\"\\$`;&|<>*?()[]{}~#!") != NULL;
                if (i)
                        fputc(' ', f);
                if (shell && !utf8_plain(a)) {
                        utf8_fputs_ansi_c(f, a);
                        continue;
                }
                if (!quote) {
                        esc(f, a);
                        continue;
                }
                esc(f, "'");
                for (const char *p = a; *p;) {
                        size_t k = strcspn(p, "'");
                        char part[256];
                        while (k > 0) {
                                size_t m = k < sizeof part - 1 ? k : sizeof part - 1;
                                /* never split a UTF-8 sequence between two parts */
                                while (m < k && m > 0 && ((unsigned char) p[m] & 0xc0) == 0x80)
                                        m--;
                                memcpy(part, p, m);
                                part[m] = '\0';
                                esc(f, part);
                                p += m;
                                k -= m;
                        }
                        if (*p == '\'') {
                                esc(f, "'\\''");
                                p++;
                        }
                }
                esc(f, "'");
        }
}
