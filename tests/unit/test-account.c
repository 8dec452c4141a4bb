/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Kernel text formats, as the kernel prints them (fixtures copied from 6.1
 * and 6.18 kernels), through the pure parsers. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cgroup/account.h"
#include "engine/cgroup/cgroupfs.h"
#include "tap.h"

static const char cpu_stat_v2[] = "usage_usec 2035011\n"
                                  "user_usec 1520023\n"
                                  "system_usec 514988\n"
                                  "core_sched.force_idle_usec 0\n"
                                  "nr_periods 41\n"
                                  "nr_throttled 20\n"
                                  "throttled_usec 1004132\n"
                                  "nr_bursts 0\n"
                                  "burst_usec 0\n";

/* no cpu controller: only the base stats */
static const char cpu_stat_base[] = "usage_usec 1200\nuser_usec 800\nsystem_usec 400\n";

static const char memory_events[] = "low 0\nhigh 3\nmax 57\noom 1\noom_kill 1\noom_group_kill 1\n";

static const char memory_stat[] = "anon 67108864\n"
                                  "file 4096\n"
                                  "kernel 552960\n"
                                  "kernel_stack 16384\n"
                                  "pagetables 131072\n"
                                  "sec_pagetables 0\n"
                                  "percpu 0\n"
                                  "sock 0\n"
                                  "vmalloc 0\n"
                                  "shmem 8192\n"
                                  "anon_thp 0\n"
                                  "file_thp 0\n";

static const char io_stat[] = "254:0 rbytes=1048576 wbytes=4096 rios=16 wios=1 dbytes=0 dios=0\n"
                              "8:0 rbytes=512 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n";

static const char pressure[] = "some avg10=0.00 avg60=0.12 avg300=0.03 total=123456\n"
                               "full avg10=0.00 avg60=0.00 avg300=0.00 total=7890\n";

static const char pressure_cpu_old[] = "some avg10=1.00 avg60=0.50 avg300=0.10 total=42\n";

/* a job cgroup's files, as a directory of plain files */
static const struct {
        const char *name, *text;
} job_files[] = {
        {"cpu.stat", cpu_stat_base},
        {"memory.peak", "4096\n"},
        {"memory.events", memory_events},
        {"pids.peak", "7\n"},
        {"io.stat", io_stat},
        {"cpu.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n"},
};

static bool put(int dir, const char *name, const char *text) {
        int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        bool done = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t) strlen(text);

        if (fd >= 0)
                close(fd);
        return done;
}

/* account_read_files reads a controller's files only when the job cgroup
 * has the controller: a directory holding all of them, read with each mask
 * (control: every file read with all the bits) */
static void test_read_enabled(void) {
        const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        char dir[4096];
        struct leash_usage u;
        bool made = true;
        int fd;

        snprintf(dir, sizeof dir, "%s/leash-test-account-XXXXXX", tmp);
        fd = mkdtemp(dir) ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (fd < 0) {
                ok(true, "account_read_files # SKIP no directory could be made in %s", tmp);
                return;
        }
        for (size_t i = 0; i < sizeof job_files / sizeof job_files[0]; i++)
                made = made && put(fd, job_files[i].name, job_files[i].text);
        ok(made, "a job cgroup's files, made in %s", dir);

        account_usage_init(&u);
        account_read_files(fd, 0, NULL, &u);
        ok(u.cpu_usage_us == 1200 && u.psi_cpu_some == 42, "no controllers: cpu.stat and cpu.pressure still read");
        ok(u.memory_peak == LEASH_NULL && u.mem_ev_oom_kill == LEASH_NULL && u.pids_peak == LEASH_NULL &&
                   u.io_rbytes == LEASH_NULL,
           "no controllers: memory, pids and io files not read (they are there)");
        account_usage_init(&u);
        account_read_files(fd, CTL_PIDS, NULL, &u);
        ok(u.pids_peak == 7 && u.memory_peak == LEASH_NULL && u.io_rbytes == LEASH_NULL, "pids only: pids.peak alone");
        account_usage_init(&u);
        account_read(fd, &u);
        ok(u.memory_peak == 4096 && u.mem_ev_oom_kill == 1 && u.pids_peak == 7 && u.io_rbytes == 1049088,
           "control: account_read reads every file");

        /* opened ahead (as a job does once it runs), then read through the
         * fds: a file whose name is gone by the end is still read */
        {
                struct account_files af;
                bool closed = true;

                account_files_init(&af);
                account_files_open(fd, CTL_MEMORY | CTL_PIDS | CTL_IO, &af);
                ok(af.fd[ACCOUNT_CPU_STAT] >= 0 && af.fd[ACCOUNT_PIDS_PEAK] >= 0 && af.fd[ACCOUNT_IO_STAT] >= 0,
                   "account_files_open: the files there are opened");
                ok(af.fd[ACCOUNT_SWAP_PEAK] < 0, "account_files_open: one that is not there stays -1 (read by name)");
                (void) unlinkat(fd, "cpu.stat", 0);
                (void) unlinkat(fd, "io.stat", 0);
                account_usage_init(&u);
                account_read_files(fd, CTL_MEMORY | CTL_PIDS | CTL_IO, &af, &u);
                ok(u.cpu_usage_us == 1200 && u.io_rbytes == 1049088 && u.memory_peak == 4096,
                   "through the fds opened ahead: cpu.stat and io.stat read after their names are gone");
                account_usage_init(&u);
                account_read_files(fd, CTL_MEMORY | CTL_PIDS | CTL_IO, NULL, &u);
                ok(u.cpu_usage_us == LEASH_NULL && u.io_rbytes == LEASH_NULL,
                   "control: by name, the same two are not there");
                account_files_close(&af);
                for (size_t i = 0; i < _ACCOUNT_FILE_MAX; i++)
                        closed = closed && af.fd[i] == -1;
                ok(closed, "account_files_close: every fd -1");
        }
        for (size_t i = 0; i < sizeof job_files / sizeof job_files[0]; i++)
                (void) unlinkat(fd, job_files[i].name, 0);
        close(fd);
        (void) rmdir(dir);
}

int main(void) {
        struct leash_usage u;
        uint64_t some = LEASH_NULL, full = LEASH_NULL, v;

        account_usage_init(&u);
        ok(u.cpu_usage_us == LEASH_NULL && u.main_nivcsw == LEASH_NULL && u.memory_peak_basis == NULL,
           "usage starts all null");

        ok(account_parse_cpu_stat(cpu_stat_v2, &u) == 6, "cpu.stat with the cpu controller: 6 fields");
        is_u64(u.cpu_usage_us, 2035011, "usage_usec");
        is_u64(u.cpu_user_us, 1520023, "user_usec");
        is_u64(u.cpu_system_us, 514988, "system_usec");
        is_u64(u.cpu_nr_throttled, 20, "nr_throttled");
        is_u64(u.cpu_throttled_us, 1004132, "throttled_usec");

        account_usage_init(&u);
        ok(account_parse_cpu_stat(cpu_stat_base, &u) == 3, "cpu.stat without the controller: 3 fields");
        is_u64(u.cpu_throttled_us, LEASH_NULL, "throttled stays null without the controller");

        ok(account_parse_memory_events(memory_events, &u) == 5, "memory.events");
        is_u64(u.mem_ev_oom_kill, 1, "oom_kill, not confused with oom_group_kill");
        is_u64(u.mem_ev_max, 57, "max");
        is_u64(u.mem_ev_high, 3, "high");

        ok(account_parse_memory_stat(memory_stat, &u) == 3, "memory.stat");
        is_u64(u.mem_anon, 67108864, "anon (not anon_thp)");
        is_u64(u.mem_file, 4096, "file (not file_thp)");
        is_u64(u.mem_shmem, 8192, "shmem");

        ok(account_parse_pids_events("max 12\n", &u) == 1, "pids.events");
        is_u64(u.pids_events_max, 12, "pids max events");

        ok(account_parse_io_stat(io_stat, &u) == 0, "io.stat");
        is_u64(u.io_rbytes, 1049088, "read bytes summed over devices");
        is_u64(u.io_wbytes, 4096, "write bytes summed");
        is_u64(u.io_rios, 17, "read ops summed");
        is_u64(u.io_wios, 1, "write ops summed");
        ok(account_parse_io_stat("", &u) == 0 && u.io_rbytes == 0, "empty io.stat is zero io");
        ok(account_parse_io_stat("8:0 rbytes=x\n", &u) == -EINVAL, "garbage in io.stat is an error");

        ok(account_parse_pressure(pressure, &some, &full) == 0, "pressure");
        is_u64(some, 123456, "some total");
        is_u64(full, 7890, "full total");
        some = full = LEASH_NULL;
        ok(account_parse_pressure(pressure_cpu_old, &some, &full) == 0, "cpu.pressure before 5.13 has no full line");
        is_u64(some, 42, "some total");
        is_u64(full, LEASH_NULL, "full stays null");
        ok(account_parse_pressure("", &some, &full) == -ENOENT, "empty pressure");

        ok(account_flat_get("a 1\nab 2\n", "ab", &v) == 0 && v == 2, "flat key is matched whole");
        ok(account_flat_get("a 1\n", "b", &v) == -ENOENT, "missing key");
        ok(account_flat_get("a x\n", "a", &v) == -EINVAL, "non-number");
        ok(account_flat_get("a 18446744073709551616\n", "a", &v) == -ERANGE, "overflow");
        ok(account_flat_get("a 5", "a", &v) == 0 && v == 5, "no final newline");
        test_read_enabled();
        return tap_done();
}
