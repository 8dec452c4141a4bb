/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-truth PARENT HOLD_MIB KIND ARG [KEY=VALUE...]: the truth matrix's libleash
 * caller (tests/truth/matrix.py). It touches HOLD_MIB MiB of its own, forks a C
 * function into a libleash job (public API only, libleash.so.0; PARENT "-"
 * names none) with the settings KEY=VALUE, and prints the job's JSON report on
 * stdout and, last on stderr, its ground truth measured around the call: the
 * wall time (CLOCK_MONOTONIC) and the CPU time of its reaped children
 * (RUSAGE_CHILDREN). KIND: spin (ARG s of CPU), sleep (ARG s), alloc (touch
 * ARG MiB; exit 3 when the allocation is refused), hold (touch MiB and keep it
 * S s: ARG "MiB:S"), write (ARG bytes to ./big in 64 KiB writes), open (open
 * /dev/null up to ARG times), dev (open /dev/null), core (copy the job's "Max
 * core" line of /proc/self/limits to ./limits; ARG 1: then SIGSEGV itself),
 * cpus (spin 1 s of CPU), sh (run /bin/sh -c ARG). What the function found
 * (the count it opened, 0 or errno of the device, the milliseconds 1 s of CPU
 * took, the shell's status) goes to ./value, which the matrix reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <leash/leash.h>

static double now(clockid_t id) {
        struct timespec ts;
        clock_gettime(id, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static double children_cpu(void) {
        struct rusage ru;
        getrusage(RUSAGE_CHILDREN, &ru);
        return (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* what touch() allocated, held to the end: the caller's ballast and the
 * function's block are meant to stay (LeakSanitizer must not count them) */
static volatile char *touched[2];

static int touch(size_t mib) {
        volatile char *p = mib ? malloc(mib << 20) : NULL; /* volatile: the stores must happen */
        if (mib && !p)
                return 3;
        touched[touched[0] != NULL] = p;
        for (size_t i = 0; i < (mib << 20); i += 4096)
                p[i] = 1;
        return 0;
}

static void sleep_s(double s) {
        struct timespec ts = {(time_t) s, (long) ((s - (double) (time_t) s) * 1e9)};
        nanosleep(&ts, NULL);
}

static void spin(double s) {
        for (double t0 = now(CLOCK_PROCESS_CPUTIME_ID); now(CLOCK_PROCESS_CPUTIME_ID) - t0 < s;)
                ;
}

static int value(long v) {
        FILE *f = fopen("value", "we");
        if (!f)
                return 4;
        fprintf(f, "%ld\n", v);
        return fclose(f) == 0 ? 0 : 4;
}

static int write_big(size_t bytes) {
        static const char block[65536];
        int fd = open("big", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return 4;
        for (size_t done = 0; done < bytes; done += sizeof block)
                if (write(fd, block, sizeof block) != (ssize_t) sizeof block)
                        return close(fd), 1; /* EFBIG where SIGXFSZ is ignored */
        return close(fd), value((long) bytes);
}

static int open_many(long n) {
        int fds[4096];
        long opened = 0;
        while (opened < n && opened < 4096 && (fds[opened] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
                opened++;
        for (long i = 0; i < opened; i++) /* closed first: ./value needs one */
                close(fds[i]);
        return value(opened);
}

static int core(int crash) {
        char line[256];
        FILE *in = fopen("/proc/self/limits", "re"), *out = fopen("limits", "we");
        if (!in || !out)
                return 4;
        while (fgets(line, sizeof line, in))
                if (strncmp(line, "Max core", 8) == 0)
                        fputs(line, out);
        fclose(in);
        if (fclose(out) != 0)
                return 4;
        if (!crash)
                return 0;
        /* the default action (core), not a sanitizer's handler, which
         * reports and exits 1 */
        (void) signal(SIGSEGV, SIG_DFL);
        (void) raise(SIGSEGV);
        return 5;
}

static int shell(const char *script) {
        int status;
        pid_t pid = fork();
        if (pid == 0) {
                execl("/bin/sh", "sh", "-c", script, (char *) NULL);
                _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) < 0)
                return 4;
        return value(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

static int function(const char *kind, const char *arg) {
        double a = strtod(arg, NULL), w0;
        int fd;

        if (strcmp(kind, "alloc") == 0)
                return touch((size_t) a);
        if (strcmp(kind, "hold") == 0) {
                int r = touch((size_t) a);
                return r ? r : (sleep_s(strtod(strchr(arg, ':') ? strchr(arg, ':') + 1 : "0", NULL)), 0);
        }
        if (strcmp(kind, "sleep") == 0)
                return sleep_s(a), 0;
        if (strcmp(kind, "write") == 0)
                return write_big((size_t) a);
        if (strcmp(kind, "open") == 0)
                return open_many((long) a);
        if (strcmp(kind, "dev") == 0) {
                fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                return value(fd < 0 ? errno : 0);
        }
        if (strcmp(kind, "core") == 0)
                return core(a != 0);
        if (strcmp(kind, "cpus") == 0) {
                w0 = now(CLOCK_MONOTONIC);
                spin(1.0);
                return value((long) ((now(CLOCK_MONOTONIC) - w0) * 1000));
        }
        if (strcmp(kind, "sh") == 0)
                return shell(arg);
        spin(a);
        return 0;
}

static int configure(struct leash_config *c, int argc, char **argv, struct leash_error *err) {
        if (strcmp(argv[1], "-") != 0 && leash_config_set(c, "cgroup-parent", argv[1], err) < 0)
                return -1;
        for (int i = 5; i < argc; i++) {
                char *eq = strchr(argv[i], '=');
                if (!eq)
                        return -1;
                *eq = '\0';
                if (leash_config_set(c, argv[i], eq + 1, err) < 0)
                        return -1;
        }
        return 0;
}

int main(int argc, char **argv) {
        struct leash_config *c = NULL;
        struct leash_job *j = NULL;
        struct leash_error err = {0};
        double t0, cpu0;
        char *text = NULL;
        pid_t pid;

        if (argc < 5)
                return fprintf(stderr, "usage: lh-truth PARENT HOLD_MIB KIND ARG [KEY=VALUE...]\n"), 2;
        if (touch(strtoul(argv[2], NULL, 10)) != 0 || leash_config_new(&c) < 0 || configure(c, argc, argv, &err) < 0 ||
            leash_job_new(c, &j, &err) < 0) {
                fprintf(stderr, "lh-truth: %s: %s: %s\n", err.step ? err.step : "config", err.detail,
                        strerror(err.error));
                return 1;
        }
        fflush(stdout);
        t0 = now(CLOCK_MONOTONIC);
        cpu0 = children_cpu();
        pid = leash_job_fork(j, &err);
        if (pid == 0)
                _exit(function(argv[3], argv[4]));
        if (pid < 0 || leash_job_wait(j) < 0 || leash_job_finish(j, &err) < 0 ||
            leash_job_report(j, LEASH_FORMAT_JSON, &text) < 0) {
                fprintf(stderr, "lh-truth: %s\n", err.step ? err.step : "the job");
                return 1;
        }
        fputs(text, stdout);
        fprintf(stderr, "truth wall=%.6f cpu=%.6f\n", now(CLOCK_MONOTONIC) - t0, children_cpu() - cpu0);
        free(text);
        leash_job_free(j);
        leash_config_free(c);
        return 0;
}
