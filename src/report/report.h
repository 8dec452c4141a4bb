/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON report with keys a layer above adds (report.c): the Slurm
 * Epilog's slurm{}, steps[] and errors[], a scheduler's identity for
 * sandbox{}. Paths are dotted ("slurm.job_id"); a missing object on the way
 * is made. The report module writes JSON and knows no scheduler; the
 * scheduler's module knows what to say and includes no JSON library.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "../engine/leash.h"

struct report_json;

/* The `leash run` report of (c, r), to add to. 0 or -ENOMEM. */
int report_json_new(const struct leash_spec *c, const struct leash_result *r, struct report_json **ret);
void report_json_free(struct report_json *rj);
/* A new empty object or array at path, replacing what was there. */
int report_json_object(struct report_json *rj, const char *path);
int report_json_array(struct report_json *rj, const char *path);
/* A value at path (value NULL: null). */
int report_json_str(struct report_json *rj, const char *path, const char *value);
int report_json_int(struct report_json *rj, const char *path, int64_t value);
int report_json_bool(struct report_json *rj, const char *path, bool value);
/* Appends to the array at path: a string; a part's usage as an object
 * {name_key: name, cpu_time_s, ..., leftovers_killed}. -EINVAL: no array. */
int report_json_append_str(struct report_json *rj, const char *path, const char *value);
int report_json_append_usage(struct report_json *rj, const char *path, const char *name_key, const char *name,
                             const struct leash_usage *usage, unsigned leftovers_killed);
/* The report as pretty JSON with a final newline, malloc'd. */
int report_json_text(const struct report_json *rj, char **ret_text);
