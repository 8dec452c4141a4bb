/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * "leash: what failed: why" on stderr, one line per failure, escaped as
 * utf8_fputs_escaped does: a newline, ESC or other control byte in a value
 * is written as \n, \x1b, never raw. Only the cli layer logs; libleash
 * reports through return codes and its error struct.
 */
#pragma once

#include "macro.h"

enum log_level { LOG_LEVEL_QUIET = 0, LOG_LEVEL_NORMAL = 1, LOG_LEVEL_VERBOSE = 2 };

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
void log_error(const char *fmt, ...) _printf_(1, 2);
void log_notice(const char *fmt, ...) _printf_(1, 2); /* suppressed by -q */
void log_debug(const char *fmt, ...) _printf_(1, 2);  /* only with -v */
