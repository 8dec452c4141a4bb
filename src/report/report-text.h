/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reports a person reads (report-text.c): the text report, isolate(1)'s
 * meta file and the summary line (leash_report_summary, in leash.h), and
 * the phrases the JSON report (report.c) takes from them.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../engine/leash.h"

/* The text report, and isolate(1)'s meta file, written to f. */
void report_text_write(const struct leash_spec *c, const struct leash_result *r, FILE *f);
void report_text_isolate(const struct leash_spec *c, const struct leash_result *r, FILE *f);
/* Why a job that failed by itself may have failed, where a limit leash set
 * is the likely cause and the exit does not say so: true with the line in
 * buf, false where none is. */
bool report_text_likely_cause(const struct leash_spec *c, const struct leash_result *r, char *buf, size_t size);
/* The job's name: --name, else its command's base name, else "job". */
const char *report_text_job_name(const struct leash_spec *c);
/* "running", "killed" or "ended". */
const char *report_text_escape_end(enum leash_escape_end e);
/* How far the device program holds against the job itself. */
const char *report_text_devices_note(const struct leash_spec *c, const struct leash_result *r);
