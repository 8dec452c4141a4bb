/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

#include "utf8.h"

static enum log_level current = LOG_LEVEL_NORMAL;

void log_set_level(enum log_level level) {
        current = level;
}

enum log_level log_get_level(void) {
        return current;
}

/* Every line escaped (utf8_fputs_escaped): a value from a user or a job with
 * a newline or ESC in it cannot forge a second line in a log that is read
 * line by line (slurmd's, from the Slurm hooks' stderr) or drive a terminal.
 * One write per line, so that lines of concurrent hooks do not interleave. */
_printf_(1, 0) static void vlog(const char *fmt, va_list ap) {
        char line[1024], out[4 * sizeof line + 16];
        FILE *m;

        vsnprintf(line, sizeof line, fmt, ap);
        out[sizeof out - 1] = '\0'; /* fmemopen ends it with a NUL only where there is room */
        m = fmemopen(out, sizeof out - 1, "w");
        if (!m) {
                fputs("leash: ", stderr);
                utf8_fputs_escaped(line, stderr);
                fputc('\n', stderr);
                return;
        }
        fputs("leash: ", m);
        utf8_fputs_escaped(line, m);
        fputs("\n", m);
        (void) fclose(m);
        fputs(out, stderr);
}

void log_error(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vlog(fmt, ap);
        va_end(ap);
}

void log_notice(const char *fmt, ...) {
        va_list ap;
        if (current < LOG_LEVEL_NORMAL)
                return;
        va_start(ap, fmt);
        vlog(fmt, ap);
        va_end(ap);
}

void log_debug(const char *fmt, ...) {
        va_list ap;
        if (current < LOG_LEVEL_VERBOSE)
                return;
        va_start(ap, fmt);
        vlog(fmt, ap);
        va_end(ap);
}
