/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One decoder walks a string as UTF-8 and hands each character to the
 * target's rule: a valid printable character is kept (escaped as the target
 * needs), everything else becomes visible text that cannot be markup or a
 * terminal control. Bidi controls (U+202A..U+202E, U+2066..U+2069) are
 * escaped too: they reorder what a reader sees ("Trojan Source").
 */
#include "markup.h"

#include "../basic/utf8.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum target { T_HTML, T_MD, T_TEXT };

/* Length of the valid UTF-8 sequence at s (1..4) with its code point, or 0. */
static size_t utf8_char(const unsigned char *s, uint32_t *ret) {
        uint32_t c;
        size_t n;
        if (s[0] < 0x80) {
                *ret = s[0];
                return 1;
        }
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                n = 2, c = s[0] & 0x1f;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                n = 3, c = s[0] & 0x0f;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                n = 4, c = s[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                c = (c << 6) | (s[i] & 0x3f);
        }
        if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
                return 0;
        *ret = c;
        return n;
}

static bool unsafe(uint32_t c) {
        return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
               (c >= 0x2066 && c <= 0x2069) || c == 0x200e || c == 0x200f || c == 0x61c;
}

static void escape(FILE *f, const char *str, enum target t) {
        const unsigned char *s = (const unsigned char *) (str ? str : "");
        while (*s) {
                uint32_t c;
                size_t n = utf8_char(s, &c);
                if (n == 0) {
                        fprintf(f, "\\x%02x", *s);
                        s++;
                        continue;
                }
                if (unsafe(c)) {
                        if (t == T_MD && (c == '\n' || c == '\t'))
                                fputc(' ', f);
                        else if (c < 0x80)
                                fprintf(f, t == T_MD ? "\\\\x%02x" : "\\x%02x", (unsigned) c);
                        else
                                fprintf(f, t == T_MD ? "\\\\u{%04x}" : "\\u{%04x}", (unsigned) c);
                } else if (t != T_TEXT && c == '&')
                        fputs("&amp;", f);
                else if (t != T_TEXT && c == '<')
                        fputs("&lt;", f);
                else if (t != T_TEXT && c == '>')
                        fputs("&gt;", f);
                else if (t == T_HTML && c == '"')
                        fputs("&quot;", f);
                else if (t == T_HTML && c == '\'')
                        fputs("&#39;", f);
                else if (t == T_MD && c < 0x80 && strchr("\\`*_{}[]()#+-.!|~\"'=:", (int) c))
                        fprintf(f, "\\%c", (int) c);
                else
                        fwrite(s, 1, n, f);
                s += n;
        }
}

void markup_html(FILE *f, const char *s) {
        escape(f, s, T_HTML);
}

void markup_md(FILE *f, const char *s) {
        escape(f, s, T_MD);
}

void markup_text(FILE *f, const char *s) {
        escape(f, s, T_TEXT);
}

void markup_command(FILE *f, char *const *argv, size_t n, void (*esc)(FILE *, const char *)) {
        utf8_fputs_command(f, argv, n, esc);
}

void markup_value(double v, enum history_unit u, char *buf, size_t size) {
        static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        if (isnan(v)) {
                snprintf(buf, size, "—");
                return;
        }
        switch (u) {
        case HUNIT_BYTES: {
                size_t i = 0;
                double x = v;
                while (fabs(x) >= 1024 && i + 1 < sizeof units / sizeof *units)
                        x /= 1024, i++;
                if (i == 0)
                        snprintf(buf, size, "%.0f B", x);
                else
                        snprintf(buf, size,
                                 fabs(x) < 10    ? "%.2f %s"
                                 : fabs(x) < 100 ? "%.1f %s"
                                                 : "%.0f %s",
                                 x, units[i]);
                return;
        }
        case HUNIT_SECONDS:
                if (fabs(v) < 1 && v != 0)
                        snprintf(buf, size, "%.0f ms", v * 1e3);
                else if (fabs(v) < 120)
                        snprintf(buf, size, "%.3g s", v);
                else if (fabs(v) < 7200)
                        snprintf(buf, size, "%.0f min %.0f s", floor(v / 60), fmod(v, 60));
                else
                        snprintf(buf, size, "%.0f h %.0f min", floor(v / 3600), fmod(v, 3600) / 60);
                return;
        case HUNIT_CORES:
                snprintf(buf, size, "%.2f", v);
                return;
        case HUNIT_PERCENT:
                snprintf(buf, size, "%.0f %%", v);
                return;
        case HUNIT_COUNT:
        default:
                snprintf(buf, size, "%.0f", v);
                return;
        }
}
