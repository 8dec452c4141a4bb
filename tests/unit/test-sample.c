/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The sampling module's pure parts on literal fixtures (as a 6.1 and a 6.18
 * kernel print them): smaps_rollup, /proc/PID/io and stat, pid lists,
 * memory.stat; the series rows; --limit values; the figure names. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "engine/sample/sample.h"
#include "tap.h"

static const char smaps_rollup[] = "55d4c2a3c000-7ffd3b5f1000 ---p 00000000 00:00 0                  [rollup]\n"
                                   "Rss:              104028 kB\n"
                                   "Pss:              102548 kB\n"
                                   "Pss_Dirty:        102420 kB\n"
                                   "Pss_Anon:         102400 kB\n"
                                   "Pss_File:            148 kB\n"
                                   "Pss_Shmem:             0 kB\n"
                                   "Shared_Clean:       1480 kB\n"
                                   "Shared_Dirty:          0 kB\n"
                                   "Private_Clean:       128 kB\n"
                                   "Private_Dirty:    102420 kB\n"
                                   "Referenced:       104028 kB\n"
                                   "Anonymous:        102400 kB\n"
                                   "Swap:                  0 kB\n"
                                   "SwapPss:               0 kB\n"
                                   "Locked:                0 kB\n";

static const char proc_io[] = "rchar: 1948\nwchar: 52428800\nsyscr: 7\nsyscw: 50\n"
                              "read_bytes: 8192\nwrite_bytes: 52428800\ncancelled_write_bytes: 0\n";

/* a comm with a space and a parenthesis: it ends at the last ')' */
static const char proc_stat[] = "4242 (my (odd) job) S 4241 4242 4000 34816 4242 4194304 120 0 0 0 250 75 0 0 20 0 1 0 "
                                "1234567 4096000 250 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

static const char memory_stat[] = "anon 67108864\nfile 4096\nkernel 552960\nkernel_stack 16384\n"
                                  "sock 8192\nshmem 12288\nfile_thp 0\n";

int main(void) {
        struct leash_sample s;
        struct sample_proc p;
        uint64_t rss, pss, uss, rb, wb, v;
        pid_t *pids = NULL;
        enum leash_fig fig;
        const char *exp;
        char *row = NULL, *hdr = NULL;

        ok(sample_parse_smaps_rollup(smaps_rollup, &rss, &pss, &uss) == 0, "smaps_rollup parses");
        is_u64(rss, 104028ULL * 1024, "Rss in bytes");
        is_u64(pss, 102548ULL * 1024, "Pss in bytes");
        is_u64(uss, (128ULL + 102420ULL) * 1024, "USS = Private_Clean + Private_Dirty");
        ok(sample_parse_smaps_rollup("Rss: 12 kB\n", &rss, &pss, &uss) == -ENOENT, "smaps_rollup without Pss: ENOENT");
        ok(sample_parse_smaps_rollup("Rss: x kB\nPss: 1 kB\n", &rss, &pss, &uss) == -EINVAL, "a bad number: EINVAL");
        ok(sample_parse_smaps_rollup("Rss: 99999999999999999999 kB\nPss: 1 kB\nPrivate_Clean: 0 kB\n"
                                     "Private_Dirty: 0 kB\n",
                                     &rss, &pss, &uss) == -ERANGE,
           "an overflowing number: ERANGE");

        ok(sample_parse_proc_io(proc_io, &rb, &wb) == 0, "/proc/PID/io parses");
        is_u64(rb, 8192, "read_bytes");
        is_u64(wb, 52428800, "write_bytes (not wchar)");
        ok(sample_parse_proc_io("rchar: 1\n", &rb, &wb) == -ENOENT, "io without read_bytes: ENOENT");

        ok(sample_parse_proc_stat(proc_stat, 100, &p) == 0, "/proc/PID/stat parses");
        is_str(p.comm, "my (odd) job", "comm up to the last parenthesis");
        ok(p.state == 'S', "state S");
        is_u64(p.utime_us, 2500000, "utime 250 ticks at 100 Hz = 2.5 s");
        is_u64(p.stime_us, 750000, "stime 75 ticks = 0.75 s");
        ok(sample_parse_proc_stat("4242 (x S 1", 100, &p) == -EINVAL, "a stat without ')': EINVAL");

        ok(sample_parse_pid_list("12\n7\n300\n", &pids) == 3, "cgroup.procs: 3 pids");
        ok(pids && pids[0] == 12 && pids[1] == 7 && pids[2] == 300, "the pids in order");
        free(pids);
        ok(sample_parse_pid_list("", NULL) == 0, "an empty list: 0");
        ok(sample_parse_pid_list("12\nx\n", NULL) == -EINVAL, "a bad line: EINVAL");
        ok(sample_parse_pid_list("0\n", NULL) == -EINVAL, "pid 0: EINVAL");

        sample_init(&s);
        sample_parse_memory_stat(memory_stat, &s);
        is_u64(leash_sample_get(&s, LEASH_FIG_MEM_ANON), 67108864, "memory.stat anon");
        is_u64(leash_sample_get(&s, LEASH_FIG_MEM_FILE), 4096, "memory.stat file");
        is_u64(leash_sample_get(&s, LEASH_FIG_MEM_KERNEL), 552960, "memory.stat kernel (not kernel_stack)");
        is_u64(leash_sample_get(&s, LEASH_FIG_MEM_SOCK), 8192, "memory.stat sock");
        is_u64(leash_sample_get(&s, LEASH_FIG_MEM_SHMEM), 12288, "memory.stat shmem");
        is_u64(leash_sample_get(&s, LEASH_FIG_MEM_CURRENT), LEASH_NULL, "memory.current untouched: null");
        is_str(leash_sample_basis(&s, LEASH_FIG_MEM_ANON), "memory.stat", "basis of anon");
        ok(leash_sample_basis(&s, LEASH_FIG_MEM_CURRENT) == NULL, "no basis for a null figure");

        /* a series row: seconds and cores as decimals, nulls empty (CSV) or null (JSON) */
        s.v[LEASH_FIG_T] = 1500000;
        s.v[LEASH_FIG_CORES] = 1250000;
        s.v[LEASH_FIG_PROCS] = 3;
        s.last = true;
        ok(series_format_header(LEASH_SERIES_CSV, &hdr) == 0 && hdr, "CSV header");
        ok(hdr && strncmp(hdr, "t_s,cpu_user_s,cpu_system_s,cpu_total_s,cores,mem_current_bytes,",
                          strlen("t_s,cpu_user_s,cpu_system_s,cpu_total_s,cores,mem_current_bytes,")) == 0,
           "header starts with the contract's columns");
        ok(hdr && strstr(hdr, ",disk_bytes,disk_files,") && strstr(hdr, ",last\n"), "disk columns, last at the end");
        ok(series_format_row(LEASH_SERIES_CSV, &s, &row) == 0 && row, "CSV row");
        ok(row && strncmp(row, "1.5,,,,1.25,,67108864,", 22) == 0, "CSV cells: 1.5 s, empty, 1.25 cores (%s)",
           row ? row : "");
        ok(row && row[strlen(row) - 2] == '1' && row[strlen(row) - 3] == ',', "last row marked 1");
        free(row);
        row = NULL;
        ok(series_format_row(LEASH_SERIES_JSONL, &s, &row) == 0 && row, "JSON line");
        ok(row && strstr(row, "\"t_s\": 1.5, ") && strstr(row, "\"cpu_user_s\": null, ") &&
                   strstr(row, "\"procs\": 3, ") && strstr(row, "\"last\": 1}\n"),
           "JSON keys are the CSV columns, null for no figure");
        free(row);
        free(hdr);
        ok(isnan(leash_sample_value(&s, LEASH_FIG_CPU_USER)), "value of a null figure: NAN");
        ok(leash_sample_value(&s, LEASH_FIG_CORES) == 1.25, "value in the column's unit: 1.25 cores");

        /* figure names */
        is_str(leash_fig_column(LEASH_FIG_PSI_IO_FULL), "psi_io_full_us", "PSI column in us");
        is_str(leash_fig_unit(LEASH_FIG_CORES), "ucores", "cores unit");
        ok(leash_fig_from_name("disk") == LEASH_FIG_DISK_BYTES, "disk by name");
        ok(leash_fig_from_name("disk_bytes") == LEASH_FIG_DISK_BYTES, "disk by column");
        ok(leash_fig_from_name("nope") == -EINVAL, "unknown figure");
        for (int f = 0; f < _LEASH_FIG_MAX; f++)
                ok(leash_fig_name((enum leash_fig) f) && leash_fig_column((enum leash_fig) f), "figure %d named", f);

        /* --limit */
        ok(sample_limit_parse("disk=10M", &fig, &v, &exp) == 0 && fig == LEASH_FIG_DISK_BYTES && v == 10 << 20,
           "disk=10M");
        ok(sample_limit_parse("cores_avg=0.5", &fig, &v, &exp) == 0 && fig == LEASH_FIG_CORES_AVG && v == 500000,
           "cores_avg=0.5");
        ok(sample_limit_parse("total_processes=100", &fig, &v, &exp) == 0 && v == 100, "total_processes=100");
        ok(sample_limit_parse("files=1k", &fig, &v, &exp) == -EINVAL, "files=1k refused (a count)");
        ok(sample_limit_parse("disk=0", &fig, &v, &exp) == -EINVAL, "disk=0 refused");
        ok(sample_limit_parse("disk=max", &fig, &v, &exp) == -EINVAL, "disk=max refused");
        ok(sample_limit_parse("cpu_user=1", &fig, &v, &exp) == -EINVAL, "a figure that is not limitable");
        ok(sample_limit_parse("disk", &fig, &v, &exp) == -EINVAL, "no '='");
        ok(sample_limit_parse("=5", &fig, &v, &exp) == -EINVAL, "no figure");
        ok(sample_limit_parse("disk=99999999999999999999", &fig, &v, &exp) == -ERANGE, "overflow: ERANGE");
        return tap_done();
}
