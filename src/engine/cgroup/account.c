/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Accounting. cpu.stat exists on every cgroup2 directory (the base stats),
 * controller or not; memory.*, pids.* and the cpu throttling lines only where
 * the controller is enabled. When memory.peak is missing (no memory
 * controller, or a kernel before 5.19) the best basis left is the main
 * process's ru_maxrss; the report names the basis it used.
 */
#include "account.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../basic/fileio.h"
#include "../../basic/macro.h"
#include "cgroupfs.h"
#include "../heldfd.h"

/* Finds "key <u64>" at the start of a line. */
int account_flat_get(const char *text, const char *key, uint64_t *ret) {
        size_t kl = strlen(key);
        const char *p = text;

        while (p && *p) {
                if (strncmp(p, key, kl) == 0 && p[kl] == ' ') {
                        const char *q = p + kl + 1;
                        uint64_t v = 0;
                        if (*q < '0' || *q > '9')
                                return -EINVAL;
                        for (; *q >= '0' && *q <= '9'; q++) {
                                if (__builtin_mul_overflow(v, 10, &v) ||
                                    __builtin_add_overflow(v, (uint64_t) (*q - '0'), &v))
                                        return -ERANGE;
                        }
                        if (*q && *q != '\n')
                                return -EINVAL;
                        *ret = v;
                        return 0;
                }
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        return -ENOENT;
}

struct flat_field {
        const char *key;
        size_t offset;
};

static int parse_flat(const char *text, const struct flat_field *fields, size_t n, struct leash_usage *u) {
        int found = 0;
        for (size_t i = 0; i < n; i++) {
                uint64_t v;
                int r = account_flat_get(text, fields[i].key, &v);
                if (r == 0) {
                        memcpy((char *) u + fields[i].offset, &v, sizeof v);
                        found++;
                } else if (r != -ENOENT)
                        return r;
        }
        return found;
}

#define F(k, field) \
        { k, offsetof(struct leash_usage, field) }

int account_parse_cpu_stat(const char *text, struct leash_usage *u) {
        static const struct flat_field f[] = {
                F("usage_usec", cpu_usage_us),       F("user_usec", cpu_user_us),
                F("system_usec", cpu_system_us),     F("nr_periods", cpu_nr_periods),
                F("nr_throttled", cpu_nr_throttled), F("throttled_usec", cpu_throttled_us),
        };
        return parse_flat(text, f, ELEMENTSOF(f), u);
}

int account_parse_memory_events(const char *text, struct leash_usage *u) {
        static const struct flat_field f[] = {
                F("low", mem_ev_low), F("high", mem_ev_high),         F("max", mem_ev_max),
                F("oom", mem_ev_oom), F("oom_kill", mem_ev_oom_kill),
        };
        return parse_flat(text, f, ELEMENTSOF(f), u);
}

int account_parse_memory_stat(const char *text, struct leash_usage *u) {
        static const struct flat_field f[] = {
                F("anon", mem_anon),
                F("file", mem_file),
                F("shmem", mem_shmem),
        };
        return parse_flat(text, f, ELEMENTSOF(f), u);
}

int account_parse_pids_events(const char *text, struct leash_usage *u) {
        static const struct flat_field f[] = {F("max", pids_events_max)};
        return parse_flat(text, f, ELEMENTSOF(f), u);
}

/* "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0" per device line. */
int account_parse_io_stat(const char *text, struct leash_usage *u) {
        static const struct {
                const char *key;
                size_t offset;
        } keys[] = {
                {"rbytes=", offsetof(struct leash_usage, io_rbytes)},
                {"wbytes=", offsetof(struct leash_usage, io_wbytes)},
                {"rios=", offsetof(struct leash_usage, io_rios)},
                {"wios=", offsetof(struct leash_usage, io_wios)},
        };
        uint64_t sum[4] = {0};
        const char *p = text;

        while (p && *p) {
                const char *eol = strchr(p, '\n');
                const char *end = eol ? eol : p + strlen(p);
                const char *tok = strchr(p, ' ');

                while (tok && tok < end) {
                        tok++;
                        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                                size_t kl = strlen(keys[i].key);
                                if ((size_t) (end - tok) > kl && strncmp(tok, keys[i].key, kl) == 0) {
                                        const char *q = tok + kl;
                                        uint64_t v = 0;
                                        if (*q < '0' || *q > '9')
                                                return -EINVAL;
                                        for (; q < end && *q >= '0' && *q <= '9'; q++)
                                                if (__builtin_mul_overflow(v, 10, &v) ||
                                                    __builtin_add_overflow(v, (uint64_t) (*q - '0'), &v))
                                                        return -ERANGE;
                                        if (__builtin_add_overflow(sum[i], v, &sum[i]))
                                                return -ERANGE;
                                }
                        }
                        tok = memchr(tok, ' ', (size_t) (end - tok));
                }
                p = eol ? eol + 1 : NULL;
        }
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                memcpy((char *) u + keys[i].offset, &sum[i], sizeof sum[i]);
        return 0;
}

int account_parse_pressure(const char *text, uint64_t *ret_some, uint64_t *ret_full) {
        const char *p = text;
        bool any = false;

        while (p && *p) {
                uint64_t *dst = strncmp(p, "some ", 5) == 0 ? ret_some : strncmp(p, "full ", 5) == 0 ? ret_full : NULL;
                const char *eol = strchr(p, '\n');
                const char *t = strstr(p, "total=");
                if (dst && t && (!eol || t < eol)) {
                        uint64_t v = 0;
                        t += 6;
                        if (*t < '0' || *t > '9')
                                return -EINVAL;
                        for (; *t >= '0' && *t <= '9'; t++)
                                if (__builtin_mul_overflow(v, 10, &v) ||
                                    __builtin_add_overflow(v, (uint64_t) (*t - '0'), &v))
                                        return -ERANGE;
                        *dst = v;
                        any = true;
                }
                p = eol ? eol + 1 : NULL;
        }
        return any ? 0 : -ENOENT;
}

void account_usage_init(struct leash_usage *u) {
        /* every figure starts as null: the struct is u64 fields up to the basis */
        uint64_t *p = (uint64_t *) (void *) u;
        for (size_t i = 0; i < offsetof(struct leash_usage, memory_peak_basis) / sizeof(uint64_t); i++)
                p[i] = LEASH_NULL;
        u->memory_peak_basis = NULL;
        u->memory_peak_note = NULL;
}

int account_cpu_usage_us(int job_fd, uint64_t *ret) {
        char buf[1024];
        int r = read_file_at(job_fd, "cpu.stat", buf, sizeof buf, NULL);
        if (r < 0)
                return r;
        return account_flat_get(buf, "usage_usec", ret);
}

static const struct {
        const char *name;
        unsigned controller; /* 0: every cgroup has it */
} account_file_table[_ACCOUNT_FILE_MAX] = {
        [ACCOUNT_CPU_STAT] = {"cpu.stat", 0},
        [ACCOUNT_MEMORY_PEAK] = {"memory.peak", CTL_MEMORY},
        [ACCOUNT_SWAP_PEAK] = {"memory.swap.peak", CTL_MEMORY},
        [ACCOUNT_MEMORY_EVENTS] = {"memory.events", CTL_MEMORY},
        [ACCOUNT_MEMORY_STAT] = {"memory.stat", CTL_MEMORY},
        [ACCOUNT_PIDS_PEAK] = {"pids.peak", CTL_PIDS},
        [ACCOUNT_PIDS_EVENTS] = {"pids.events", CTL_PIDS},
        [ACCOUNT_IO_STAT] = {"io.stat", CTL_IO},
        [ACCOUNT_CPU_PRESSURE] = {"cpu.pressure", 0},
        [ACCOUNT_MEMORY_PRESSURE] = {"memory.pressure", 0},
        [ACCOUNT_IO_PRESSURE] = {"io.pressure", 0},
        [ACCOUNT_CGROUP_EVENTS] = {"cgroup.events", 0},
};

void account_files_init(struct account_files *af) {
        for (size_t i = 0; i < _ACCOUNT_FILE_MAX; i++)
                af->fd[i] = -1;
}

void account_files_open(int job_fd, unsigned controllers, struct account_files *af) {
        for (size_t i = 0; i < _ACCOUNT_FILE_MAX; i++) {
                unsigned c = account_file_table[i].controller;
                if (af->fd[i] < 0 && (!c || (controllers & c)))
                        af->fd[i] =
                                HELD_FD(openat(job_fd, account_file_table[i].name, O_RDONLY | O_CLOEXEC | O_NOCTTY));
        }
}

void account_files_close(struct account_files *af) {
        for (size_t i = 0; i < _ACCOUNT_FILE_MAX; i++) {
                heldfd_close(af->fd[i]);
                af->fd[i] = -1;
        }
}

/* One accounting file, whole (NUL-terminated), through its fd opened ahead or by name */
static int read_one(int job_fd, const struct account_files *af, enum account_file f, char *buf, size_t size) {
        if (af && af->fd[f] >= 0)
                return read_fd_at0(af->fd[f], buf, size, NULL);
        return read_file_at(job_fd, account_file_table[f].name, buf, size, NULL);
}

static void read_u64_file(int fd, const struct account_files *af, enum account_file f, uint64_t *ret) {
        char buf[64];
        if (read_one(fd, af, f, buf, sizeof buf) == 0) {
                char *end;
                unsigned long long v = strtoull(buf, &end, 10);
                if (end != buf && (*end == '\n' || !*end))
                        *ret = v;
        }
}

void account_read(int fd, struct leash_usage *u) {
        account_read_files(fd, CTL_MEMORY | CTL_PIDS | CTL_IO, NULL, u);
}

static void read_io_stat(int fd, const struct account_files *af, struct leash_usage *u) {
        _cleanup_free_ char *big = NULL;
        int r;

        if (af && af->fd[ACCOUNT_IO_STAT] >= 0)
                r = read_fd_alloc(af->fd[ACCOUNT_IO_STAT], 64u << 20, &big, NULL);
        else
                r = read_file_at_alloc(fd, "io.stat", &big, NULL);
        if (r == 0)
                (void) account_parse_io_stat(big, u);
}

void account_read_files(int fd, unsigned controllers, const struct account_files *af, struct leash_usage *u) {
        char buf[8192];

        if (read_one(fd, af, ACCOUNT_CPU_STAT, buf, sizeof buf) == 0)
                (void) account_parse_cpu_stat(buf, u);
        if (controllers & CTL_MEMORY) {
                read_u64_file(fd, af, ACCOUNT_MEMORY_PEAK, &u->memory_peak);
                if (u->memory_peak != LEASH_NULL)
                        u->memory_peak_basis = "memory.peak";
                read_u64_file(fd, af, ACCOUNT_SWAP_PEAK, &u->swap_peak);
                if (read_one(fd, af, ACCOUNT_MEMORY_EVENTS, buf, sizeof buf) == 0)
                        (void) account_parse_memory_events(buf, u);
                if (read_one(fd, af, ACCOUNT_MEMORY_STAT, buf, sizeof buf) == 0)
                        (void) account_parse_memory_stat(buf, u);
        }
        if (controllers & CTL_PIDS) {
                read_u64_file(fd, af, ACCOUNT_PIDS_PEAK, &u->pids_peak);
                if (read_one(fd, af, ACCOUNT_PIDS_EVENTS, buf, sizeof buf) == 0)
                        (void) account_parse_pids_events(buf, u);
        }
        if (controllers & CTL_IO)
                read_io_stat(fd, af, u);
        if (read_one(fd, af, ACCOUNT_CPU_PRESSURE, buf, sizeof buf) == 0)
                (void) account_parse_pressure(buf, &u->psi_cpu_some, &u->psi_cpu_full);
        if (read_one(fd, af, ACCOUNT_MEMORY_PRESSURE, buf, sizeof buf) == 0)
                (void) account_parse_pressure(buf, &u->psi_mem_some, &u->psi_mem_full);
        if (read_one(fd, af, ACCOUNT_IO_PRESSURE, buf, sizeof buf) == 0)
                (void) account_parse_pressure(buf, &u->psi_io_some, &u->psi_io_full);
}
