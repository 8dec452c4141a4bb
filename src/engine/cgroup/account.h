/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the job used, from the kernel's own files, read before the cgroup is
 * removed. Each text format has a pure parser (unit-tested on fixtures and
 * fuzzed); a file this kernel or host lacks leaves its fields LEASH_NULL.
 */
#pragma once

#include <stdint.h>

#include "../leash.h"

/* Each parser sets only what it finds; callers pre-fill with LEASH_NULL. */
int account_parse_cpu_stat(const char *text, struct leash_usage *u);
int account_parse_memory_events(const char *text, struct leash_usage *u);
int account_parse_memory_stat(const char *text, struct leash_usage *u);
int account_parse_pids_events(const char *text, struct leash_usage *u);
int account_parse_io_stat(const char *text, struct leash_usage *u);
/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=123\nfull ... total=45" */
int account_parse_pressure(const char *text, uint64_t *ret_some, uint64_t *ret_full);
/* A "key value" line in flat-keyed text: cpu.stat, memory.events, ... */
int account_flat_get(const char *text, const char *key, uint64_t *ret);

void account_usage_init(struct leash_usage *u);

/* The files a finished job's accounting reads, opened ahead: a job opens
 * them once its main process runs (account_files_open, beside the job's own
 * start), so that only the reads are left between its end and its report.
 * A file that is absent or could not be opened is read by name, as before. */
enum account_file {
        ACCOUNT_CPU_STAT,
        ACCOUNT_MEMORY_PEAK,
        ACCOUNT_SWAP_PEAK,
        ACCOUNT_MEMORY_EVENTS,
        ACCOUNT_MEMORY_STAT,
        ACCOUNT_PIDS_PEAK,
        ACCOUNT_PIDS_EVENTS,
        ACCOUNT_IO_STAT,
        ACCOUNT_CPU_PRESSURE,
        ACCOUNT_MEMORY_PRESSURE,
        ACCOUNT_IO_PRESSURE,
        ACCOUNT_CGROUP_EVENTS, /* not accounting: whether anything still runs in it */
        _ACCOUNT_FILE_MAX,
};
struct account_files {
        int fd[_ACCOUNT_FILE_MAX]; /* -1: read by name */
};
void account_files_init(struct account_files *af);
/* Opens (held fds, heldfd.h) the files of the controllers given. */
void account_files_open(int job_fd, unsigned controllers, struct account_files *af);
void account_files_close(struct account_files *af);
/* Reads every accounting file of the job cgroup into u. */
void account_read(int job_fd, struct leash_usage *u);
/* The same, skipping the files of controllers the job cgroup does not
 * have (controllers: cgroupfs.h's CTL_* bits): on a host without them,
 * seven opens that can only fail. cpu.stat and the pressure files are
 * every cgroup's and always read. */
/* The files of the controllers given (CTL_* bits; cpu.stat and the pressure
 * files always), through the files opened ahead where af has them (af may be
 * NULL: each read by name). */
void account_read_files(int job_fd, unsigned controllers, const struct account_files *af, struct leash_usage *u);
/* cpu.stat usage_usec only: the CPU-time limit's probe. */
int account_cpu_usage_us(int job_fd, uint64_t *ret);
