/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The page about several jobs (summary.c), in the writer's target.
 */
#pragma once

#include <stddef.h>

#include "../report/history.h"
#include "writer.h"

/* The summary of several jobs lists this many, the worst first, and says
 * how many it leaves out (its distributions count every job). */
#define RENDER_WORST 20

void summary_page(struct writer *w, struct history_job *const *jobs, size_t n);
