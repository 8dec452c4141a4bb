/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Documents about past jobs: one job (verdict, limits, usage, charts over
 * time) or many (a sortable summary and distributions), as one
 * self-contained HTML file, Markdown with SVG chart files beside it, or text
 * for a terminal. Pure: the caller reads the reports and writes the files.
 */
#pragma once

#include <stddef.h>

#include "../report/history.h"
#include "writer.h"

/* prefix names the chart files of a Markdown document (its stem); NULL for
 * HTML and text. jobs[] must have at least one entry; one job gets the job
 * page, several the summary. */
int render_jobs(struct history_job *const *jobs, size_t n, enum render_format fmt, const char *prefix,
                struct render_output *ret);
void render_output_free(struct render_output *o);

/* The verdict in words, plain (unescaped) text: "Reached its memory limit
 * (256 MiB, memory.max by cgroup): the kernel OOM-killed it after 1.20 s;
 * exit 137." */
int render_verdict(const struct history_job *j, char **ret);
