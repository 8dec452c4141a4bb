/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-bench: the timing harness behind bench/run. It measures, it does not
 * judge: every mode prints "key=value" lines that bench/run turns into the
 * table of docs/PERFORMANCE.md.
 *
 *   ab RUNS WARMUP :: LABEL CMD... [:: LABEL CMD...]...
 *        Interleaved launch timing. Each round runs every contender once,
 *        the order rotated by one each round (A B C, B C A, ...) so that no
 *        contender always follows the same one. Wall time from just before
 *        posix_spawn to the return of wait4, CLOCK_MONOTONIC; stdout/stderr
 *        to /dev/null; a contender that fails once fails the whole mode.
 *        Prints per contender the median, p99, the median ru_maxrss (which
 *        includes this harness's own RSS, inherited at spawn: see lh-rss.c) and
 *        the median ru_minflt (the page faults of the contender and of the
 *        processes it reaped: a launch's whole tree; counts, not times), and
 *        for every pair A, B (A listed first) the median of the paired
 *        ratios A[i] / B[i] (same round: same machine weather).
 *   tput JOBS BLOCK :: LABEL CMD... [:: ...]
 *        Throughput: JOBS jobs back to back per contender, run in
 *        alternating blocks of BLOCK. Prints jobs per second per contender.
 *   sample REPS ROUNDS PYTHON SCRIPT N...
 *        Sampling cost: for each N, a cgroup holding N sleeping processes
 *        (one tree: a root and N-1 children); one leash accounting read is
 *        libleash's account_read() on the job cgroup's dirfd, linked from
 *        src/engine/cgroup/account.c, timed in CPU time of this process
 *        (CLOCK_PROCESS_CPUTIME_ID) over REPS reads; the psutil walk is
 *        SCRIPT run by PYTHON on the root pid, timed by itself the same way.
 *        The two alternate ROUNDS times; medians of the per-round figures.
 *   (the physical floor of a cgroup launcher is bench/lh-floor.c: a
 *   program of its own, so that it can be linked the least costly way)
 *   fork-job ROUNDS   a function call through libleash vs a bare fork: each
 *                round forks an empty function once with fork() + waitpid()
 *                and once as a job (leash_job_new: cgroup made and limited,
 *                leash_job_fork, leash_job_wait, leash_job_finish: accounted,
 *                removed; leash_job_free), alternating which goes first.
 *                The config (made once) puts jobs under $LH_BENCH_CGROUP
 *                (default placement when unset). Prints both medians, the
 *                median per-round ratio and the median per-round overhead.
 *   stats        reads numbers (one per line) on stdin; prints n, median,
 *                p99, min, max.
 *
 * Job modes (run under leash or a peer):
 *   job-wall OUT     blocks the soft signal, waits for it; appends to OUT
 *                    the seconds from main() to its arrival, and the
 *                    arrival's CLOCK_REALTIME (to set against the report's
 *                    "started", taken by leash just before it spawns).
 *   job-spin N OUT   N spinning processes; each records its own CPU time
 *                    (CLOCK_PROCESS_CPUTIME_ID) when the soft signal comes;
 *                    appends their sum to OUT (CPU consumed when stopped).
 *   job-children N MS   like tests/helpers/lh-children, but the ground
 *                    truth is the whole job: RUSAGE_CHILDREN + RUSAGE_SELF.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../src/engine/cgroup/account.h"
#include "../src/engine/leash.h"
#include "../src/engine/sample/sample.h"

extern char **environ;

#define CONTENDERS_MAX 24

static double now_s(clockid_t clk) {
        struct timespec ts;
        clock_gettime(clk, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

/* nearest-rank percentile of a sorted copy */
static double pct(const double *v, size_t n, double p) {
        double *s = malloc(n * sizeof *s), r;
        size_t k;
        if (!s || n == 0) {
                free(s);
                return 0;
        }
        memcpy(s, v, n * sizeof *s);
        qsort(s, n, sizeof *s, cmp_double);
        if (p == 50 && n % 2 == 0)
                r = (s[n / 2 - 1] + s[n / 2]) / 2;
        else {
                k = (size_t) ((p / 100.0) * (double) n + 0.999999);
                k = k == 0 ? 0 : k - 1;
                r = s[k < n ? k : n - 1];
        }
        free(s);
        return r;
}

static _Noreturn void die(const char *what) {
        fprintf(stderr, "lh-bench: %s: %s\n", what, strerror(errno));
        exit(2);
}

struct contender {
        const char *label;
        char **argv;
};

/* splits "LABEL CMD... :: LABEL CMD..." in place */
static size_t parse_contenders(int argc, char **argv, struct contender *c, size_t max) {
        size_t n = 0;
        for (int i = 0; i < argc; i++) {
                if (strcmp(argv[i], "::") != 0)
                        continue;
                argv[i] = NULL;
                if (i + 2 >= argc || n == max) {
                        fprintf(stderr, "lh-bench: expected ':: LABEL CMD...'\n");
                        exit(2);
                }
                c[n].label = argv[i + 1];
                c[n].argv = &argv[i + 2];
                n++;
        }
        if (n == 0) {
                fprintf(stderr, "lh-bench: no contender given\n");
                exit(2);
        }
        return n;
}

static posix_spawn_file_actions_t quiet_fa;

/* one run: wall seconds; *maxrss_kb and *minflt from wait4 */
static double run_once(const struct contender *c, long *maxrss_kb, long *minflt) {
        struct rusage ru;
        double t0, t1;
        pid_t pid;
        int status, r;

        t0 = now_s(CLOCK_MONOTONIC);
        r = posix_spawn(&pid, c->argv[0], &quiet_fa, NULL, c->argv, environ);
        if (r != 0) {
                errno = r;
                die(c->argv[0]);
        }
        while (wait4(pid, &status, 0, &ru) < 0)
                if (errno != EINTR)
                        die("wait4");
        t1 = now_s(CLOCK_MONOTONIC);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "lh-bench: %s (%s) failed: status 0x%x\n", c->label, c->argv[0], status);
                exit(3);
        }
        if (maxrss_kb)
                *maxrss_kb = ru.ru_maxrss;
        if (minflt)
                *minflt = ru.ru_minflt;
        return t1 - t0;
}

static void quiet_init(void) {
        posix_spawn_file_actions_init(&quiet_fa);
        posix_spawn_file_actions_addopen(&quiet_fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&quiet_fa, 2, "/dev/null", O_WRONLY, 0);
}

static int mode_ab(int argc, char **argv) {
        struct contender c[CONTENDERS_MAX];
        size_t n, runs, warm;
        double *t[CONTENDERS_MAX];
        double *rss[CONTENDERS_MAX];
        double *flt[CONTENDERS_MAX];

        if (argc < 4)
                return fprintf(stderr, "usage: lh-bench ab RUNS WARMUP :: LABEL CMD...\n"), 2;
        runs = strtoul(argv[1], NULL, 10);
        warm = strtoul(argv[2], NULL, 10);
        n = parse_contenders(argc - 3, argv + 3, c, CONTENDERS_MAX);
        quiet_init();
        for (size_t k = 0; k < n; k++) {
                t[k] = calloc(runs, sizeof(double));
                rss[k] = calloc(runs, sizeof(double));
                flt[k] = calloc(runs, sizeof(double));
                if (!t[k] || !rss[k] || !flt[k])
                        die("calloc");
        }
        for (size_t w = 0; w < warm; w++)
                for (size_t k = 0; k < n; k++)
                        (void) run_once(&c[k], NULL, NULL);
        for (size_t i = 0; i < runs; i++)
                for (size_t j = 0; j < n; j++) {
                        size_t k = (i + j) % n;
                        long kb = 0, faults = 0;
                        t[k][i] = run_once(&c[k], &kb, &faults);
                        rss[k][i] = (double) kb;
                        flt[k][i] = (double) faults;
                }
        for (size_t k = 0; k < n; k++)
                printf("%s median_us=%.1f p99_us=%.1f mean_us=%.1f maxrss_kb=%.0f minflt=%.0f runs=%zu\n", c[k].label,
                       pct(t[k], runs, 50) * 1e6, pct(t[k], runs, 99) * 1e6, ({
                                                                                     double s = 0;
                                                                                     for (size_t i = 0; i < runs; i++)
                                                                                             s += t[k][i];
                                                                                     s / (double) runs;
                                                                             }) * 1e6,
                       pct(rss[k], runs, 50), pct(flt[k], runs, 50), runs);
        for (size_t a = 0; a < n; a++)
                for (size_t k = a + 1; k < n; k++) {
                        double *ratio = calloc(runs, sizeof(double));
                        if (!ratio)
                                die("calloc");
                        for (size_t i = 0; i < runs; i++)
                                ratio[i] = t[a][i] / t[k][i];
                        printf("ratio %s/%s median=%.3f p10=%.3f p90=%.3f\n", c[a].label, c[k].label,
                               pct(ratio, runs, 50), pct(ratio, runs, 10), pct(ratio, runs, 90));
                        free(ratio);
                }
        return 0;
}

static int mode_tput(int argc, char **argv) {
        struct contender c[CONTENDERS_MAX];
        size_t n, jobs, block;
        double total[CONTENDERS_MAX] = {0};
        size_t done = 0;

        if (argc < 4)
                return fprintf(stderr, "usage: lh-bench tput JOBS BLOCK :: LABEL CMD...\n"), 2;
        jobs = strtoul(argv[1], NULL, 10);
        block = strtoul(argv[2], NULL, 10);
        if (block == 0)
                block = 1;
        n = parse_contenders(argc - 3, argv + 3, c, CONTENDERS_MAX);
        quiet_init();
        for (size_t k = 0; k < n; k++)
                (void) run_once(&c[k], NULL, NULL);
        while (done < jobs) {
                size_t b = jobs - done < block ? jobs - done : block;
                for (size_t k = 0; k < n; k++) {
                        double t0 = now_s(CLOCK_MONOTONIC);
                        for (size_t i = 0; i < b; i++)
                                (void) run_once(&c[k], NULL, NULL);
                        total[k] += now_s(CLOCK_MONOTONIC) - t0;
                }
                done += b;
        }
        for (size_t k = 0; k < n; k++)
                printf("%s jobs=%zu seconds=%.3f jobs_per_s=%.1f\n", c[k].label, jobs, total[k],
                       (double) jobs / total[k]);
        return 0;
}

static int mode_stats(void) {
        size_t n = 0, cap = 1024;
        double *v = malloc(cap * sizeof *v), x;

        if (!v)
                die("malloc");
        while (scanf("%lf", &x) == 1) {
                if (n == cap) {
                        cap *= 2;
                        v = realloc(v, cap * sizeof *v);
                        if (!v)
                                die("realloc");
                }
                v[n++] = x;
        }
        if (n == 0)
                return fprintf(stderr, "lh-bench stats: no numbers\n"), 2;
        printf("n=%zu median=%.6f p99=%.6f min=%.6f max=%.6f\n", n, pct(v, n, 50), pct(v, n, 99), pct(v, n, 0),
               pct(v, n, 100));
        free(v);
        return 0;
}

static void append(const char *path, double v) {
        FILE *f = fopen(path, "ae");
        if (!f)
                die(path);
        fprintf(f, "%.6f\n", v);
        fclose(f);
}

static int job_wall(int argc, char **argv) {
        double t0 = now_s(CLOCK_MONOTONIC);
        sigset_t set;
        struct timespec limit = {30, 0};

        if (argc < 2)
                return 2;
        sigemptyset(&set);
        sigaddset(&set, SIGXCPU);
        sigprocmask(SIG_BLOCK, &set, NULL);
        /* EINTR: under `leash run --wall-time` the wait returned EINTR before
         * SIGXCPU came (seen on this machine, row 3 failed with "no numbers";
         * no other signal reached the job): wait again for the same signal */
        int sig;
        do
                sig = sigtimedwait(&set, NULL, &limit);
        while (sig < 0 && errno == EINTR);
        if (sig != SIGXCPU)
                return 1;
        {
                double mono = now_s(CLOCK_MONOTONIC), real = now_s(CLOCK_REALTIME);
                FILE *f = fopen(argv[1], "ae");
                if (!f)
                        die(argv[1]);
                fprintf(f, "%.6f %.6f\n", mono - t0, real);
                fclose(f);
        }
        return 0;
}

static volatile double *spin_slots;
static volatile sig_atomic_t spin_index;

static void on_xcpu(int sig) {
        (void) sig;
        spin_slots[spin_index] = now_s(CLOCK_PROCESS_CPUTIME_ID);
        if (spin_index != 0)
                _exit(0);
        spin_slots[63] = 1; /* the root was told */
}

static int job_spin(int argc, char **argv) {
        int n = argc > 1 ? atoi(argv[1]) : 1;
        struct sigaction sa = {.sa_handler = on_xcpu};
        volatile unsigned long x = 0;
        double sum = 0;

        if (argc < 3 || n < 1 || n > 62)
                return 2;
        spin_slots = mmap(NULL, 64 * sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (spin_slots == MAP_FAILED)
                die("mmap");
        sigaction(SIGXCPU, &sa, NULL);
        for (int i = 1; i < n; i++)
                if (fork() == 0) {
                        spin_index = i;
                        break;
                }
        while (!spin_slots[63])
                for (int i = 0; i < 10000; i++)
                        x += (unsigned long) i;
        while (wait(NULL) > 0)
                ;
        for (int i = 0; i < n; i++)
                sum += spin_slots[i];
        append(argv[2], sum);
        return 0;
}

static double tv(struct timeval t) {
        return (double) t.tv_sec + (double) t.tv_usec / 1e6;
}

static int job_children(int argc, char **argv) {
        int n = argc > 1 ? atoi(argv[1]) : 10;
        double ms = argc > 2 ? atof(argv[2]) : 4;
        struct rusage self, kids;

        prctl(PR_SET_CHILD_SUBREAPER, 1);
        for (int i = 0; i < n; i++) {
                pid_t pid = fork();
                if (pid == 0) {
                        volatile unsigned long x = 0;
                        double end = now_s(CLOCK_THREAD_CPUTIME_ID) + ms / 1000.0;
                        do
                                for (int j = 0; j < 10000; j++)
                                        x += (unsigned long) j;
                        while (now_s(CLOCK_THREAD_CPUTIME_ID) < end);
                        _exit(0);
                }
                if (pid < 0)
                        die("fork");
                waitpid(pid, NULL, 0);
        }
        while (wait(NULL) > 0)
                ;
        getrusage(RUSAGE_CHILDREN, &kids);
        getrusage(RUSAGE_SELF, &self);
        printf("children_cpu_s=%.6f self_cpu_s=%.6f\n", tv(kids.ru_utime) + tv(kids.ru_stime),
               tv(self.ru_utime) + tv(self.ru_stime));
        return 0;
}

/* --- sampling cost ------------------------------------------------------ */

static int write_str(const char *path, const char *s) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;
        if (fd < 0)
                return -errno;
        n = write(fd, s, strlen(s));
        close(fd);
        return n == (ssize_t) strlen(s) ? 0 : -EIO;
}

static long count_lines(const char *path) {
        char buf[65536];
        long lines = 0;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;
        if (fd < 0)
                return -1;
        while ((n = read(fd, buf, sizeof buf)) > 0)
                for (ssize_t i = 0; i < n; i++)
                        lines += buf[i] == '\n';
        close(fd);
        return lines;
}

static double median_of(double *v, size_t n) {
        return pct(v, n, 50);
}

static double psutil_walk(const char *python, const char *script, pid_t root, unsigned reps) {
        char pidbuf[32], repbuf[32], out[256];
        int fds[2];
        pid_t pid;
        ssize_t n;
        int status = 0;
        double v = -1;

        snprintf(pidbuf, sizeof pidbuf, "%d", (int) root);
        snprintf(repbuf, sizeof repbuf, "%u", reps);
        if (pipe2(fds, O_CLOEXEC) < 0)
                die("pipe2");
        pid = fork();
        if (pid == 0) {
                dup2(fds[1], 1);
                execl(python, python, script, pidbuf, repbuf, (char *) NULL);
                _exit(127);
        }
        close(fds[1]);
        size_t len = 0;
        while (len < sizeof out - 1 && (n = read(fds[0], out + len, sizeof out - 1 - len)) != 0) {
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        break;
                len += (size_t) n;
        }
        close(fds[0]);
        waitpid(pid, &status, 0);
        out[len] = '\0';
        if (len > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
                v = strtod(out, NULL);
        return v;
}

static int mode_sample(int argc, char **argv) {
        unsigned reps, rounds;
        const char *python, *script, *parent = getenv("LH_BENCH_CGROUP");
        int proc_fd;

        if (argc < 6)
                return fprintf(stderr, "usage: lh-bench sample REPS ROUNDS PYTHON SCRIPT N...\n"), 2;
        reps = (unsigned) strtoul(argv[1], NULL, 10);
        rounds = (unsigned) strtoul(argv[2], NULL, 10);
        python = argv[3];
        script = argv[4];
        if (!parent)
                parent = "/sys/fs/cgroup/unified/leash-bench";
        if (mkdir(parent, 0755) < 0 && errno != EEXIST)
                die(parent);
        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                die("/proc");

        for (int a = 5; a < argc; a++) {
                long n = strtol(argv[a], NULL, 10);
                char cg[512], procs[600];
                double lc[64], pc[64], sc[64], fc[64];
                bool fallback = false;
                int cgfd, gate[2];
                pid_t root;

                snprintf(cg, sizeof cg, "%s/sample-%d-%ld", parent, (int) getpid(), n);
                if (mkdir(cg, 0755) < 0)
                        die(cg);
                cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (cgfd < 0)
                        die(cg);
                snprintf(procs, sizeof procs, "%s/cgroup.procs", cg);
                if (pipe2(gate, O_CLOEXEC) < 0)
                        die("pipe2");
                root = fork();
                if (root == 0) {
                        char b;
                        close(gate[1]);
                        if (write_str(procs, "0") < 0)
                                _exit(1);
                        prctl(PR_SET_PDEATHSIG, SIGKILL);
                        for (long i = 1; i < n; i++) {
                                pid_t p = fork();
                                if (p == 0) {
                                        prctl(PR_SET_PDEATHSIG, SIGKILL);
                                        if (read(gate[0], &b, 1) < 0) /* EOF when the harness is done */
                                                _exit(1);
                                        _exit(0);
                                }
                                if (p < 0)
                                        _exit(1);
                        }
                        if (read(gate[0], &b, 1) < 0)
                                _exit(1);
                        while (wait(NULL) > 0)
                                ;
                        _exit(0);
                }
                close(gate[0]);
                for (int tries = 0; count_lines(procs) < n && tries < 20000; tries++)
                        usleep(1000);
                if (count_lines(procs) != n) {
                        fprintf(stderr, "lh-bench: cgroup holds %ld processes, expected %ld\n", count_lines(procs), n);
                        exit(3);
                }
                if (rounds > 64)
                        rounds = 64;
                for (unsigned r = 0; r < rounds; r++) {
                        struct leash_usage u;
                        double c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
                        for (unsigned i = 0; i < reps; i++) {
                                account_usage_init(&u);
                                account_read(cgfd, &u);
                        }
                        lc[r] = (now_s(CLOCK_PROCESS_CPUTIME_ID) - c0) / reps;
                        /* the sampler's read (issue 12): every cgroup figure, no /proc */
                        c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
                        for (unsigned i = 0; i < reps; i++) {
                                struct leash_sample s;
                                sample_init(&s);
                                (void) sample_read(cgfd, -1, -1, &s, NULL, NULL);
                        }
                        sc[r] = (now_s(CLOCK_PROCESS_CPUTIME_ID) - c0) / reps;
                        /* and with /proc: the per-process fallback (smaps_rollup, io) where
                         * the cgroup gives no memory or io figure; fewer reps, it grows with N */
                        {
                                unsigned freps = reps / 10 ? reps / 10 : 1;
                                c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
                                for (unsigned i = 0; i < freps; i++) {
                                        struct leash_sample s;
                                        sample_init(&s);
                                        (void) sample_read(cgfd, proc_fd, -1, &s, NULL, NULL);
                                        fallback = s.basis[LEASH_FIG_MEMORY] &&
                                                   strcmp(s.basis[LEASH_FIG_MEMORY], "sampled_pss") == 0;
                                }
                                fc[r] = (now_s(CLOCK_PROCESS_CPUTIME_ID) - c0) / freps;
                        }
                        if (u.cpu_usage_us == LEASH_NULL) {
                                fprintf(stderr, "lh-bench: account_read gave no cpu.stat\n");
                                exit(3);
                        }
                        pc[r] = psutil_walk(python, script, root, reps > 20 ? reps / 20 : 1);
                        if (pc[r] < 0) {
                                fprintf(stderr, "lh-bench: the psutil walk failed (%s %s)\n", python, script);
                                exit(3);
                        }
                }
                printf("N=%ld leash_us=%.2f psutil_us=%.1f ratio_psutil_over_leash=%.0f sample_us=%.2f "
                       "sample_proc_us=%.1f fallback=%s\n",
                       n, median_of(lc, rounds) * 1e6, median_of(pc, rounds) * 1e6,
                       median_of(pc, rounds) / median_of(lc, rounds), median_of(sc, rounds) * 1e6,
                       median_of(fc, rounds) * 1e6, fallback ? "yes" : "no");
                fflush(stdout);
                close(gate[1]); /* the tree exits */
                waitpid(root, NULL, 0);
                for (int tries = 0; count_lines(procs) > 0 && tries < 5000; tries++)
                        usleep(1000);
                close(cgfd);
                if (rmdir(cg) < 0)
                        die(cg);
        }
        (void) rmdir(parent); /* may be shared with a concurrent run: best effort */
        return 0;
}

/* --- fork into a job vs a bare fork (issue 11) -------------------------------- */

static double cpu_now(void) {
        struct rusage self, kids;
        getrusage(RUSAGE_SELF, &self);
        getrusage(RUSAGE_CHILDREN, &kids);
        return (double) (self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec + kids.ru_stime.tv_sec) +
               (double) (self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
                         kids.ru_stime.tv_usec) /
                       1e6;
}

static double bare_fork(void) {
        double t0 = now_s(CLOCK_MONOTONIC);
        int st;
        pid_t pid = fork();
        if (pid == 0)
                _exit(0);
        if (pid < 0 || waitpid(pid, &st, 0) != pid)
                die("fork");
        return now_s(CLOCK_MONOTONIC) - t0;
}

static double job_fork(const struct leash_config *c) {
        double t0 = now_s(CLOCK_MONOTONIC);
        struct leash_error err = {0};
        struct leash_job *j = NULL;
        pid_t pid;

        if (leash_job_new(c, &j, &err) < 0)
                die(err.step);
        pid = leash_job_fork(j, &err);
        if (pid == 0)
                _exit(0);
        if (pid < 0 || leash_job_wait(j) < 0 || leash_job_finish(j, &err) < 0 || leash_job_status(j) != 0)
                die("fork into the job");
        leash_job_free(j);
        return now_s(CLOCK_MONOTONIC) - t0;
}

static int mode_fork_job(int argc, char **argv) {
        const char *parent = getenv("LH_BENCH_CGROUP");
        struct leash_config *c = NULL;
        struct leash_error err = {0};
        size_t rounds;
        double *bare, *job, *ratio, *over;

        if (argc < 2)
                return fprintf(stderr, "usage: lh-bench fork-job ROUNDS\n"), 2;
        rounds = strtoul(argv[1], NULL, 10);
        if (rounds == 0 || leash_config_new(&c) < 0 || leash_config_set(c, "name", "forkjob", &err) < 0 ||
            leash_config_set(c, "memory", "1G", &err) < 0 || leash_config_set(c, "cpu-time", "60s", &err) < 0 ||
            (parent && leash_config_set(c, "cgroup-parent", parent, &err) < 0) ||
            leash_config_set_paths(c, "/nonexistent-leash-bench", NULL) < 0)
                die("config");
        bare = calloc(rounds, sizeof *bare);
        job = calloc(rounds, sizeof *job);
        ratio = calloc(rounds, sizeof *ratio);
        over = calloc(rounds, sizeof *over);
        if (!bare || !job || !ratio || !over)
                die("calloc");
        for (size_t i = 0; i < 10; i++) /* warm-up */
                (void) job_fork(c), (void) bare_fork();
        /* CPU time too (this process + its reaped children): on a loaded machine
         * wall time is mostly waiting for a CPU, CPU time is the cost itself */
        double cpu_bare = 0, cpu_job = 0;
        for (size_t i = 0; i < rounds; i++) {
                double c0 = cpu_now();
                bare_fork();
                cpu_bare += cpu_now() - c0;
                c0 = cpu_now();
                job_fork(c);
                cpu_job += cpu_now() - c0;
        }
        for (size_t i = 0; i < rounds; i++) {
                if (i % 2) {
                        job[i] = job_fork(c);
                        bare[i] = bare_fork();
                } else {
                        bare[i] = bare_fork();
                        job[i] = job_fork(c);
                }
                ratio[i] = job[i] / bare[i];
                over[i] = job[i] - bare[i];
        }
        printf("bare-fork median_us=%.1f p99_us=%.1f runs=%zu\n", pct(bare, rounds, 50) * 1e6,
               pct(bare, rounds, 99) * 1e6, rounds);
        printf("fork-job median_us=%.1f p99_us=%.1f runs=%zu\n", pct(job, rounds, 50) * 1e6, pct(job, rounds, 99) * 1e6,
               rounds);
        printf("cpu bare-fork_us=%.1f fork-job_us=%.1f overhead_us=%.1f (mean CPU per call, parent + children)\n",
               cpu_bare / (double) rounds * 1e6, cpu_job / (double) rounds * 1e6,
               (cpu_job - cpu_bare) / (double) rounds * 1e6);
        printf("ratio fork-job/bare-fork median=%.2f overhead_median_us=%.1f overhead_p10_us=%.1f "
               "overhead_p90_us=%.1f\n",
               pct(ratio, rounds, 50), pct(over, rounds, 50) * 1e6, pct(over, rounds, 10) * 1e6,
               pct(over, rounds, 90) * 1e6);
        leash_config_free(c);
        return 0;
}

int main(int argc, char **argv) {
        const char *m = argc > 1 ? argv[1] : "";

        if (strcmp(m, "fork-job") == 0)
                return mode_fork_job(argc - 1, argv + 1);
        if (strcmp(m, "ab") == 0)
                return mode_ab(argc - 1, argv + 1);
        if (strcmp(m, "tput") == 0)
                return mode_tput(argc - 1, argv + 1);
        if (strcmp(m, "sample") == 0)
                return mode_sample(argc - 1, argv + 1);
        if (strcmp(m, "stats") == 0)
                return mode_stats();
        if (strcmp(m, "job-wall") == 0)
                return job_wall(argc - 1, argv + 1);
        if (strcmp(m, "job-spin") == 0)
                return job_spin(argc - 1, argv + 1);
        if (strcmp(m, "job-children") == 0)
                return job_children(argc - 1, argv + 1);
        fprintf(stderr, "usage: lh-bench ab|tput|sample|fork-job|stats|job-wall|job-spin|job-children ...\n");
        return 2;
}
