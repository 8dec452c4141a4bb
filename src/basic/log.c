/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

static enum log_level current = LOG_LEVEL_NORMAL;

void log_set_level(enum log_level level) {
        current = level;
}

enum log_level log_get_level(void) {
        return current;
}

_printf_(1, 0) static void vlog(const char *fmt, va_list ap) {
        char line[1024];
        vsnprintf(line, sizeof line, fmt, ap);
        fprintf(stderr, "leash: %s\n", line);
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
