/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict parsers for what users type: numbers, sizes, durations, CPU counts,
 * signals and job names. Each accepts exactly one documented syntax, rejects
 * signs, blanks and trailing junk, and checks every multiplication for
 * overflow. They return 0 or -EINVAL / -ERANGE and write ret_* only on success.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value "max" / unlimited for sizes and counts. */
#define PARSE_MAX UINT64_MAX

/* Upper bounds of what the parsers accept (-ERANGE above), so that no accepted
 * value equals a sentinel (PARSE_MAX) and sums of
 * deadlines (now + wall time + grace, CPU time scaled by cores) cannot overflow
 * 64-bit nanoseconds: ten years of 365 days; 2^60 bytes (1048576T); 2^31 - 1
 * for counts (RLIMIT_NOFILE and pids.max are int-sized in the kernel). */
#define PARSE_DURATION_MAX (3650ULL * 86400ULL * 1000000000ULL)
#define PARSE_DURATION_MAX_TEXT "3650d"
#define PARSE_SIZE_MAX (1ULL << 60)
#define PARSE_SIZE_MAX_TEXT "1048576T"
#define PARSE_COUNT_MAX 2147483647ULL
#define PARSE_COUNT_MAX_TEXT "2147483647"

int parse_u64(const char *s, uint64_t *ret);
/* Bytes or K/M/G/T (powers of 1024, optional trailing "B", "i" or "iB"); a fraction
 * needs a unit ("1.5G"); "max" gives PARSE_MAX; at most PARSE_SIZE_MAX. */
int parse_size(const char *s, uint64_t *ret);
/* A count up to PARSE_COUNT_MAX, or "max". */
int parse_count(const char *s, uint64_t *ret);
/* 90, 1.5s, 250ms, 100us, 2m, 1h, 1d, and combined from the largest unit
 * down (1m30s, 1h2m, 2d12h) -> nanoseconds; a bare number is seconds. Also
 * Slurm's clock forms: MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS. At most
 * PARSE_DURATION_MAX. */
int parse_duration(const char *s, uint64_t *ret_ns);
/* "1", "0.5", "2.25" cores -> millionths of a core. */
int parse_cpus(const char *s, uint64_t *ret_ucores);
/* "XCPU", "SIGXCPU", "xcpu", "24", "RTMIN+2", "RTMAX-1" -> signal number. */
int parse_signal(const char *s, int *ret);
/* "XCPU" for SIGXCPU; "RTMIN+2"; a static buffer-free answer or NULL. */
const char *signal_name(int sig);
/* Job names end up in a cgroup directory name: [A-Za-z0-9_.-], 1..64, no
 * leading dot. */
bool job_name_is_valid(const char *s);
/* Some component of the path is "..". */
bool path_has_dotdot(const char *path);
/* In place: runs of '/' as one, no trailing '/' (but "/" itself):
 * "/sys/fs/cgroup/unified//leash///" -> "/sys/fs/cgroup/unified/leash". */
void path_simplify_slashes(char *path);

/* Formatting helpers for messages and reports. */
void format_size(uint64_t v, char *buf, size_t size);
void format_duration(uint64_t ns, char *buf, size_t size);
/* For people: 416808K -> "407 MiB", 3 significant digits, 1024-based. */
void format_bytes_human(uint64_t v, char *buf, size_t size);
/* For tables people read (leash ps, top, stat): one decimal in the largest
 * 1024-based unit that keeps the figure at least 1, no space so that a table
 * still splits on blanks: "104.0MiB", "1.5GiB", "512B". Never rounds up
 * into the next unit's range ("1024.0KiB" is "1.0MiB"). */
void format_bytes_table(uint64_t v, char *buf, size_t size);
