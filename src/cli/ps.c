/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash ps, stat and top: the running jobs under a cgroup parent, from their
 * cgroups' files and records (src/engine/placement/monitor.c). Nothing here changes a job.
 * "Cores now" is the CPU a job used over an interval: ps and stat take two
 * samples --interval apart (200 ms by default; 0 leaves the figure out), top
 * compares each refresh with the one before. top draws with plain ANSI
 * escapes (no terminfo, so it works over any ssh), reads keys in
 * non-canonical mode and restores the terminal on every way out: its keys
 * and the signals that would end it arrive through one poll (signalfd), so
 * no handler runs with the terminal in raw mode.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../basic/log.h"
#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../basic/time-util.h"
#include "../basic/utf8.h"
#include "../engine/placement/placement.h"
#include "../engine/leash.h"
#include "../engine/placement/monitor.h"
#include "../sandbox/userdb.h"
#include "cli.h"

struct ps_opts {
        const char *parent;
        bool json, processes;
        uint64_t interval_ns;
        uint64_t iterations; /* top: 0 = until q */
};

/* --- names and cells ------------------------------------------------------- */

/* uid -> name, remembered: userdb may ask getent(1) for names not in /etc/passwd */
struct user_cache {
        uid_t uid[64];
        char name[64][33];
        size_t n;
};

static const char *user_name(struct user_cache *c, uid_t uid, char *buf, size_t size) {
        struct userdb_user u;

        for (size_t i = 0; i < c->n; i++)
                if (c->uid[i] == uid)
                        return c->name[i];
        if (userdb_user_by_uid(uid, &u) == 0) {
                snprintf(buf, size, "%s", u.name);
                userdb_user_done(&u);
        } else
                snprintf(buf, size, "%u", (unsigned) uid);
        if (c->n < ELEMENTSOF(c->uid)) {
                c->uid[c->n] = uid;
                snprintf(c->name[c->n], sizeof c->name[0], "%s", buf);
                c->n++;
        }
        return buf;
}

static void cell_age(uint64_t us, char *buf, size_t size) {
        uint64_t s = us / 1000000;
        if (us == LEASH_NULL)
                snprintf(buf, size, "-");
        else if (s < 60)
                snprintf(buf, size, "%.1fs", (double) us / 1e6);
        else if (s < 3600)
                snprintf(buf, size, "%llum%02llus", (unsigned long long) (s / 60), (unsigned long long) (s % 60));
        else if (s < 86400)
                snprintf(buf, size, "%lluh%02llum", (unsigned long long) (s / 3600),
                         (unsigned long long) (s / 60 % 60));
        else
                snprintf(buf, size, "%llud%02lluh", (unsigned long long) (s / 86400),
                         (unsigned long long) (s / 3600 % 24));
}

/* -o of ps and stat; leash __complete offers them */
const char *const ps_output_names[] = {"text", "json", NULL};

/* sizes as people read them (104.0 MiB); -o json keeps bytes */
static void cell_size(uint64_t v, char *buf, size_t size) {
        if (v == LEASH_NULL)
                snprintf(buf, size, "-");
        else
                format_bytes_table(v, buf, size);
}

static void cell_count(uint64_t v, char *buf, size_t size) {
        if (v == LEASH_NULL)
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%llu", (unsigned long long) v);
}

static void cell_pid(pid_t p, char *buf, size_t size) {
        if (p <= 0)
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%d", (int) p);
}

/* --- the table (ps and top) ------------------------------------------------- */

#define PS_HEADER "%-24s %7s %7s %-9s %8s %8s %6s %10s %9s %9s %5s  %s"

/* One row into buf (no newline); *pss set when memory came from the PSS sum. */
static void ps_row(const struct monitor_job *j, struct user_cache *uc, char *buf, size_t size, bool *pss) {
        char lp[16], mp[16], user[40], age[24], cpu[24], cores[16], mem[16], peak[16], gpu[16], procs[16], lim[512];
        const char *u = "-";
        uint64_t m = j->s.v[LEASH_FIG_MEMORY];

        cell_pid(j->leash_pid, lp, sizeof lp);
        if (j->leash_pid > 0 && !j->leash_alive)
                snprintf(lp, sizeof lp, "%d!", (int) j->leash_pid); /* its leash is gone */
        cell_pid(j->main_pid, mp, sizeof mp);
        if (j->has_uid)
                u = user_name(uc, j->uid, user, sizeof user);
        cell_age(j->s.v[LEASH_FIG_T], age, sizeof age);
        if (j->s.v[LEASH_FIG_CPU_TOTAL] == LEASH_NULL)
                snprintf(cpu, sizeof cpu, "-");
        else
                snprintf(cpu, sizeof cpu, "%.2fs", (double) j->s.v[LEASH_FIG_CPU_TOTAL] / 1e6);
        if (j->s.v[LEASH_FIG_CORES] == LEASH_NULL)
                snprintf(cores, sizeof cores, "-");
        else
                snprintf(cores, sizeof cores, "%.2f", (double) j->s.v[LEASH_FIG_CORES] / 1e6);
        cell_size(m, mem, sizeof mem);
        if (m != LEASH_NULL && j->s.basis[LEASH_FIG_MEMORY] &&
            strncmp(j->s.basis[LEASH_FIG_MEMORY], "sampled_pss", 11) == 0) {
                strncat(mem, "*", sizeof mem - strlen(mem) - 1);
                *pss = true;
        }
        cell_size(j->mem_peak, peak, sizeof peak);
        /* the job's memory on all GPUs (gpu.c); "-" where no GPU driver answered */
        cell_size(j->s.v[LEASH_FIG_GPU_MEMORY], gpu, sizeof gpu);
        cell_count(j->s.v[LEASH_FIG_PROCS], procs, sizeof procs);
        monitor_limits_text(j, lim, sizeof lim);
        snprintf(buf, size, PS_HEADER, j->name, lp, mp, u, age, cpu, cores, mem, peak, gpu, procs, lim[0] ? lim : "-");
}

static void ps_header(char *buf, size_t size) {
        snprintf(buf, size, PS_HEADER, "NAME", "LEASH", "MAIN", "USER", "AGE", "CPU", "CORES", "MEM", "PEAK", "GPUMEM",
                 "PROCS", "LIMITS");
}

/* Reads every job twice, interval apart, for the cores figure. */
static int ps_sample(int parent_fd, const char *parent, int proc_fd, uint64_t interval_ns, struct monitor_job **ret,
                     size_t *ret_n) {
        struct monitor_job *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        int r;

        r = monitor_list(parent_fd, parent, proc_fd, &a, &na);
        if (r < 0 || na == 0 || interval_ns == 0) {
                *ret = a;
                *ret_n = na;
                return r;
        }
        (void) clock_nanosleep(CLOCK_MONOTONIC, 0,
                               &(struct timespec){.tv_sec = (time_t) (interval_ns / NSEC_PER_SEC),
                                                  .tv_nsec = (long) (interval_ns % NSEC_PER_SEC)},
                               NULL);
        r = monitor_list(parent_fd, parent, proc_fd, &b, &nb);
        if (r < 0) {
                monitor_jobs_free(a, na);
                return r;
        }
        for (size_t i = 0; i < nb; i++)
                for (size_t k = 0; k < na; k++)
                        if (strcmp(a[k].dirname, b[i].dirname) == 0)
                                monitor_cores(&b[i], &a[k]);
        monitor_jobs_free(a, na);
        *ret = b;
        *ret_n = nb;
        return 0;
}

/* --- options ------------------------------------------------------------------ */

#define PS_HELP_SHOWN (-1) /* parse_opts printed --help: exit 0 */

static int parse_opts(const char *cmd, int argc, char **argv, struct ps_opts *o, const char *usage) {
        static const struct option longopts[] = {
                {"cgroup-parent", required_argument, NULL, 'p'},
                {"output", required_argument, NULL, 'o'},
                {"interval", required_argument, NULL, 'd'},
                {"processes", no_argument, NULL, 'P'},
                {"iterations", required_argument, NULL, 'n'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        bool is_stat = strcmp(cmd, "stat") == 0, is_top = strcmp(cmd, "top") == 0;
        int c;

        opterr = 0;
        optind = 1;
        while ((c = getopt_long(argc, argv, "+ho:d:n:", longopts, NULL)) != -1) {
                switch (c) {
                case 'p':
                        if (!*optarg || path_has_dotdot(optarg))
                                return usage_error("%s: --cgroup-parent: '%s': expected a path without '..'", cmd,
                                                   optarg);
                        path_simplify_slashes(optarg); /* printed as the kernel names it */
                        o->parent = optarg;
                        break;
                case 'o':
                        if (is_top ||
                            (strcmp(optarg, ps_output_names[0]) != 0 && strcmp(optarg, ps_output_names[1]) != 0))
                                return usage_error("%s: -o: '%s': expected %s", cmd, optarg,
                                                   is_top ? "no -o (top draws a terminal)" : "text or json");
                        o->json = strcmp(optarg, "json") == 0;
                        break;
                case 'd':
                        if (parse_duration(optarg, &o->interval_ns) < 0 || o->interval_ns > 3600 * NSEC_PER_SEC ||
                            (is_top && o->interval_ns < 100 * NSEC_PER_MSEC))
                                return usage_error("%s: --interval: '%s': expected a duration %s", cmd, optarg,
                                                   is_top ? "from 100ms to 1h" : "from 0 to 1h");
                        break;
                case 'P':
                        if (!is_stat)
                                return usage_error("%s: unknown option '--processes' (it belongs to leash stat)", cmd);
                        o->processes = true;
                        break;
                case 'n':
                        if (!is_top || parse_u64(optarg, &o->iterations) < 0 || o->iterations == 0 ||
                            o->iterations > 1000000)
                                return usage_error("%s: -n: '%s': expected %s", cmd, optarg,
                                                   is_top ? "a count of refreshes from 1" : "no -n (top only)");
                        break;
                case 'h':
                        printf("%s", usage);
                        return PS_HELP_SHOWN;
                default:
                        if (optopt == 'p' || optopt == 'o' || optopt == 'd' || optopt == 'n')
                                return usage_error("%s: option '%s' needs a value", cmd, argv[optind - 1]);
                        return usage_error("%s: unknown option '%s'", cmd, argv[optind - 1]);
                }
        }
        return 0;
}

/* the placement `leash run` would use here (the CLI's: one per process) */
static struct placement placement;

static int open_parent(const char *cmd, const struct ps_opts *o, int *ret_fd, char *path, size_t size,
                       struct placement *p) {
        struct leash_error err = {0};
        int r = monitor_open_parent(o->parent, ret_fd, p, &err);

        if (r >= 0) {
                snprintf(path, size, "%s", p->parent);
                return 0;
        }
        if (err.step && strcmp(err.step, "--cgroup-parent") == 0)
                return usage_error("%s: --cgroup-parent: %s", cmd, err.detail);
        return usage_error("%s: --cgroup-parent: '%s': %s", cmd, o->parent ? o->parent : err.detail, strerror(-r));
}

/* --- leash ps ------------------------------------------------------------------ */

static const char ps_usage[] = "Usage: leash ps [--cgroup-parent PATH] [--output OUTPUT] [--interval DURATION]\n"
                               "Every leash job under the cgroup parent (leash-ps(1)). OUTPUT: text or json;\n"
                               "DURATION: the interval over which CORES is measured (200ms; 0: none).\n";

int cmd_ps(int argc, char **argv) {
        struct ps_opts o = {.interval_ns = 200 * NSEC_PER_MSEC};
        _cleanup_close_ int parent_fd = -1, proc_fd = -1;
        struct monitor_job *jobs = NULL;
        struct user_cache uc = {0};
        char parent[4096], line[1024];
        bool pss = false;
        size_t n = 0;
        int r;

        r = parse_opts("ps", argc, argv, &o, ps_usage);
        if (r != 0)
                return r == PS_HELP_SHOWN ? 0 : r;
        if (optind < argc)
                return usage_error("ps: unexpected argument '%s'", argv[optind]);
        if (open_parent("ps", &o, &parent_fd, parent, sizeof parent, &placement) != 0)
                return EXIT_LEASH_FAILED;
        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = ps_sample(parent_fd, parent, proc_fd, o.interval_ns, &jobs, &n);
        if (r < 0) {
                log_error("ps: cannot list %s: %s", parent, strerror(-r));
                return EXIT_LEASH_FAILED;
        }
        if (o.json) {
                _cleanup_free_ char *text = NULL;
                r = report_monitor_json(jobs, n, false, &text);
                if (r == 0)
                        printf("%s\n", text);
        } else {
                ps_header(line, sizeof line);
                printf("%s\n", line);
                for (size_t i = 0; i < n; i++) {
                        ps_row(&jobs[i], &uc, line, sizeof line, &pss);
                        utf8_fputs_escaped(line, stdout);
                        fputc('\n', stdout);
                }
                if (pss)
                        printf("* memory: the sum of the processes' PSS (no memory controller for the job)\n");
                printf("placement: %s%s%s (%s)\n", placement_kind_to_string(placement.kind),
                       placement.parent[0] ? " " : "", placement.parent, placement.why);
                if (placement.kind == PLACEMENT_NONE)
                        printf("  jobs started here run without a cgroup and are not listed; remedy: %s\n",
                               placement.remedy);
        }
        monitor_jobs_free(jobs, n);
        if (r < 0) {
                log_error("ps: cannot format the list: %s", strerror(-r));
                return EXIT_LEASH_FAILED;
        }
        return fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
}

/* --- leash stat ---------------------------------------------------------------- */

static const char stat_usage[] =
        "Usage: leash stat [--cgroup-parent PATH] [--output OUTPUT] [--processes] [--interval DURATION] JOB\n"
        "One sample of a job now: JOB is its cgroup's name under the parent, a cgroup path,\n"
        "the pid of one of its processes, or leash ps's NAME or LEASH pid (leash-ps(1)).\n";

static void stat_text(const struct monitor_job *j, struct user_cache *uc) {
        char buf[4096], u[40], cell[64];

        /* a job's name and cgroup are chosen by whoever made the cgroup: escaped
         * like ps and top do, never raw onto the terminal */
        fputs("job:          ", stdout);
        utf8_fputs_escaped(j->name, stdout);
        fputs("\ncgroup:       ", stdout);
        utf8_fputs_escaped(j->cgroup, stdout);
        fputc('\n', stdout);
        printf("record:       %s\n", !j->has_state   ? "none (known by its name only)"
                                     : j->st.trusted ? "trusted.leash"
                                                     : "user.leash");
        cell_pid(j->leash_pid, cell, sizeof cell);
        printf("leash pid:    %s%s\n", cell, j->leash_pid <= 0 ? "" : j->leash_alive ? " (running)" : " (gone)");
        cell_pid(j->main_pid, cell, sizeof cell);
        printf("main pid:     %s\n", cell);
        if (j->has_uid) {
                fputs("user:         ", stdout);
                utf8_fputs_escaped(user_name(uc, j->uid, u, sizeof u), stdout);
                printf(" (uid %u)\n", (unsigned) j->uid);
        }
        if (j->started_ns != LEASH_NULL) {
                format_iso8601(j->started_ns, buf, sizeof buf);
                cell_age(j->s.v[LEASH_FIG_T], cell, sizeof cell);
                printf("started:      %s (%s ago)\n", buf, cell);
        }
        monitor_limits_text(j, buf, sizeof buf);
        printf("limits:       %s\n", buf[0] ? buf : "(none recorded)");
        if (j->has_state && j->st.sample_ns) {
                format_duration(j->st.sample_ns, cell, sizeof cell);
                printf("sampled by leash every %s\n", cell);
        }
        printf("\n%-20s %14s  %s\n", "FIGURE", "VALUE", "BASIS");
        for (int f = 0; f < _LEASH_FIG_MAX; f++) {
                enum leash_fig fig = (enum leash_fig) f;
                if (fig == LEASH_FIG_T || fig == LEASH_FIG_TOTAL_PROCESSES || fig == LEASH_FIG_DISK_BYTES ||
                    fig == LEASH_FIG_DISK_FILES)
                        continue;
                const char *col = leash_fig_column(fig);
                size_t cl = strlen(col);
                if (cl > 6 && strcmp(col + cl - 6, "_bytes") == 0)
                        cell_size(j->s.v[f], cell, sizeof cell); /* a size: as people read it */
                else if (j->s.v[f] == LEASH_NULL)
                        snprintf(cell, sizeof cell, "-");
                else
                        sample_fig_format(fig, j->s.v[f], cell, sizeof cell);
                printf("%-20s %14s  %s\n", col, cell, j->s.basis[f] ? j->s.basis[f] : "not given here");
        }
        cell_size(j->mem_peak, cell, sizeof cell);
        printf("%-20s %14s  %s\n", "mem_peak_bytes", cell,
               j->mem_peak == LEASH_NULL ? "not given here" : "memory.peak");
        if (!j->procs)
                return;
        printf("\n%7s %-9s %1s %9s %9s %10s %10s %10s  %s\n", "PID", "USER", "S", "USER_S", "SYS_S", "RSS", "PSS",
               "USS", "COMMAND");
        for (size_t i = 0; i < j->n_procs; i++) {
                const struct sample_proc *p = &j->procs[i];
                char us[16], ss[16], rss[16], pss[16], uss[16];
                if (p->utime_us == LEASH_NULL)
                        snprintf(us, sizeof us, "-");
                else
                        snprintf(us, sizeof us, "%.2f", (double) p->utime_us / 1e6);
                if (p->stime_us == LEASH_NULL)
                        snprintf(ss, sizeof ss, "-");
                else
                        snprintf(ss, sizeof ss, "%.2f", (double) p->stime_us / 1e6);
                cell_size(p->rss, rss, sizeof rss);
                cell_size(p->pss, pss, sizeof pss);
                cell_size(p->uss, uss, sizeof uss);
                printf("%7d %-9s %c %9s %9s %10s %10s %10s  ", (int) p->pid,
                       p->uid == (uid_t) -1 ? "-" : user_name(uc, p->uid, u, sizeof u), p->state ? p->state : '-', us,
                       ss, rss, pss, uss);
                utf8_fputs_escaped(p->comm, stdout);
                fputc('\n', stdout);
        }
}

/* What `leash ps` shows, as stat's JOB: the NAME column (a job cgroup
 * NAME@PID, when one such job runs) or the LEASH column (NAME@PID by its
 * PID). Fills ret_dir with the one match: 1; 0 for none; 125 after saying
 * that several match. */
static int stat_match(int parent_fd, const char *job, bool by_pid, char *ret_dir, size_t size) {
        _cleanup_close_ int fd = openat(parent_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char many[512] = "";
        size_t len = strlen(job), n_many = 0;
        unsigned found = 0;
        struct dirent *de;
        DIR *d;

        if (fd < 0 || !(d = fdopendir(fd)))
                return 0;
        fd = -1; /* the DIR owns it */
        while ((de = readdir(d))) {
                const char *at = strrchr(de->d_name, '@');
                bool hit = at && (by_pid ? strcmp(at + 1, job) == 0
                                         : (size_t) (at - de->d_name) == len && strncmp(de->d_name, job, len) == 0);
                if (!hit || de->d_type != DT_DIR)
                        continue;
                if (found++ == 0)
                        snprintf(ret_dir, size, "%s", de->d_name);
                if (n_many < sizeof many)
                        n_many += (size_t) snprintf(many + n_many, sizeof many - n_many, "%s%s", found > 1 ? ", " : "",
                                                    de->d_name);
        }
        closedir(d);
        if (found > 1)
                return usage_error("stat: '%s': %u jobs match (%s): name one", job, found, many);
        return found == 1;
}

/* JOB as the user gave it: a pid, a cgroup path, or a name under the parent;
 * and what `leash ps` shows (stat_match) */
static int stat_find(const char *job, int parent_fd, const char *parent, int proc_fd, bool procs,
                     struct monitor_job *ret) {
        char path[4096];
        uint64_t pid;
        int r;

        if (parse_u64(job, &pid) == 0) {
                if (pid == 0 || pid > INT32_MAX)
                        return usage_error("stat: '%s': not a pid", job);
                r = monitor_cgroup_of_pid((pid_t) pid, path, sizeof path);
                if (r < 0)
                        return usage_error("stat: '%s': no such process", job);
                r = monitor_read(parent_fd, parent, path, proc_fd, procs, ret);
                if (r == -EMEDIUMTYPE || r == -ENOTDIR) { /* leash's own pid, as ps's LEASH column shows */
                        int m = stat_match(parent_fd, job, true, path, sizeof path);
                        if (m > 1)
                                return m;
                        if (m == 1)
                                r = monitor_read(parent_fd, parent, path, proc_fd, procs, ret);
                }
                if (r == -EMEDIUMTYPE || r == -ENOTDIR)
                        return usage_error("stat: '%s': process %s is not in a leash job (its cgroup is %s)", job, job,
                                           path);
        } else {
                r = monitor_read(parent_fd, parent, job, proc_fd, procs, ret);
                if (r == -ENOENT && !strchr(job, '/') && !strchr(job, '@')) { /* ps's NAME column */
                        int m = stat_match(parent_fd, job, false, path, sizeof path);
                        if (m > 1)
                                return m;
                        if (m == 1)
                                r = monitor_read(parent_fd, parent, path, proc_fd, procs, ret);
                }
        }
        if (r == -EMEDIUMTYPE)
                return usage_error("stat: '%s': a cgroup, but not a leash job", job);
        if (r == -ENOTDIR)
                return usage_error("stat: '%s': not a cgroup", job);
        if (r < 0)
                return usage_error("stat: '%s': no such job under %s", job, parent);
        return 0;
}

int cmd_stat(int argc, char **argv) {
        struct ps_opts o = {.interval_ns = 200 * NSEC_PER_MSEC};
        _cleanup_close_ int parent_fd = -1, proc_fd = -1;
        struct monitor_job a, b;
        struct user_cache uc = {0};
        char parent[4096];
        int r;

        r = parse_opts("stat", argc, argv, &o, stat_usage);
        if (r != 0)
                return r == PS_HELP_SHOWN ? 0 : r;
        if (optind >= argc)
                return usage_error("stat: no JOB given (a job name, cgroup path or pid; see leash ps)");
        if (optind + 1 < argc)
                return usage_error("stat: unexpected argument '%s'", argv[optind + 1]);
        if (open_parent("stat", &o, &parent_fd, parent, sizeof parent, &placement) != 0)
                return EXIT_LEASH_FAILED;
        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (stat_find(argv[optind], parent_fd, parent, proc_fd, false, &a) != 0)
                return EXIT_LEASH_FAILED;
        b = a;
        if (o.interval_ns || o.processes) {
                if (o.interval_ns)
                        (void) clock_nanosleep(CLOCK_MONOTONIC, 0,
                                               &(struct timespec){.tv_sec = (time_t) (o.interval_ns / NSEC_PER_SEC),
                                                                  .tv_nsec = (long) (o.interval_ns % NSEC_PER_SEC)},
                                               NULL);
                if (monitor_read(parent_fd, parent, a.cgroup, proc_fd, o.processes, &b) < 0) {
                        log_error("stat: '%s': the job ended", argv[optind]);
                        return EXIT_LEASH_FAILED;
                }
                if (o.interval_ns)
                        monitor_cores(&b, &a);
        }
        if (o.json) {
                _cleanup_free_ char *text = NULL;
                r = report_monitor_json(&b, 1, true, &text);
                if (r < 0) {
                        monitor_job_done(&b);
                        log_error("stat: cannot format the job: %s", strerror(-r));
                        return EXIT_LEASH_FAILED;
                }
                printf("%s\n", text);
        } else
                stat_text(&b, &uc);
        monitor_job_done(&b);
        return fflush(stdout) == 0 ? 0 : EXIT_LEASH_FAILED;
}

/* --- leash top ------------------------------------------------------------------ */

static const char top_usage[] =
        "Usage: leash top [--cgroup-parent PATH] [--interval DURATION] [--iterations COUNT]\n"
        "The leash ps table, refreshed every interval (1s) on a terminal.\n"
        "Keys: c cores, t CPU time, m memory, p processes, a age, n name (sort); r reverse; q quit.\n";

enum top_sort { SORT_CORES, SORT_CPU, SORT_MEM, SORT_PROCS, SORT_AGE, SORT_NAME };
static const char *const sort_names[] = {"cores", "CPU time", "memory", "processes", "age", "name"};

struct top {
        enum top_sort sort;
        bool reverse;
        struct monitor_job *jobs;
        size_t n;
        struct termios saved;
        bool raw;
};

static uint64_t sort_value(const struct monitor_job *j, enum top_sort key) {
        switch (key) {
        case SORT_CORES:
                return j->s.v[LEASH_FIG_CORES];
        case SORT_CPU:
                return j->s.v[LEASH_FIG_CPU_TOTAL];
        case SORT_MEM:
                return j->s.v[LEASH_FIG_MEMORY];
        case SORT_PROCS:
                return j->s.v[LEASH_FIG_PROCS];
        case SORT_AGE:
                return j->s.v[LEASH_FIG_T];
        case SORT_NAME:
                break;
        }
        return 0;
}

/* largest first, a missing figure last; ties and names by directory name */
static int cmp_top(const void *a, const void *b, void *key) {
        const struct monitor_job *x = a, *y = b;
        enum top_sort k = *(const enum top_sort *) key;
        uint64_t vx = sort_value(x, k), vy = sort_value(y, k);

        if (k != SORT_NAME && vx != vy) {
                if (vx == LEASH_NULL || vy == LEASH_NULL)
                        return vx == LEASH_NULL ? 1 : -1;
                return vx > vy ? -1 : 1;
        }
        return strcmp(x->dirname, y->dirname);
}

static void top_draw(struct top *t, const char *parent) {
        struct user_cache uc = {0};
        struct winsize ws = {0};
        unsigned cols = 80, rows = 24;
        char line[1024], now[64];
        bool pss = false;
        size_t shown = 0;

        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
                cols = ws.ws_col;
                rows = ws.ws_row;
        }
        if (cols >= sizeof line)
                cols = sizeof line - 1;
        if (t->n > 1)
                qsort_r(t->jobs, t->n, sizeof *t->jobs, cmp_top, &t->sort);
        format_iso8601(now_ns(CLOCK_REALTIME), now, sizeof now);
        /* home, clear to the end: redraws without flicker */
        printf("\033[H");
        snprintf(line, sizeof line, "leash top  %zu job%s  sorted by %s%s  %s  %s", t->n, t->n == 1 ? "" : "s",
                 sort_names[t->sort], t->reverse ? " (reversed)" : "", now, parent);
        printf("%.*s\033[K\r\n", (int) cols, line);
        snprintf(line, sizeof line, "keys: c cores  t CPU  m memory  p processes  a age  n name  r reverse  q quit");
        printf("%.*s\033[K\r\n\033[K\r\n", (int) cols, line);
        ps_header(line, sizeof line);
        printf("\033[7m%-*.*s\033[0m\r\n", (int) cols, (int) cols, line);
        for (size_t k = 0; k < t->n && shown + 5 < rows; k++, shown++) {
                size_t i = t->reverse ? t->n - 1 - k : k;
                ps_row(&t->jobs[i], &uc, line, sizeof line, &pss);
                line[cols] = '\0';
                utf8_fputs_escaped(line, stdout);
                printf("\033[K\r\n");
        }
        if (pss && shown + 5 < rows)
                printf("* memory: the processes' PSS (no memory controller)\033[K\r\n");
        printf("\033[J");
        fflush(stdout);
}

static int top_refresh(struct top *t, int parent_fd, const char *parent, int proc_fd) {
        struct monitor_job *jobs = NULL;
        size_t n = 0;
        int r = monitor_list(parent_fd, parent, proc_fd, &jobs, &n);

        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < t->n; k++)
                        if (strcmp(t->jobs[k].dirname, jobs[i].dirname) == 0)
                                monitor_cores(&jobs[i], &t->jobs[k]);
        monitor_jobs_free(t->jobs, t->n);
        t->jobs = jobs;
        t->n = n;
        return 0;
}

static void top_restore(struct top *t) {
        if (!t->raw)
                return;
        /* the cursor back, the main screen back, the terminal's own modes back */
        printf("\033[?25h\033[?1049l");
        fflush(stdout);
        (void) tcsetattr(STDIN_FILENO, TCSAFLUSH, &t->saved);
        t->raw = false;
}

static int top_raw(struct top *t) {
        struct termios raw;

        if (tcgetattr(STDIN_FILENO, &t->saved) < 0)
                return negative_errno();
        raw = t->saved;
        raw.c_lflag &= ~(tcflag_t) (ICANON | ECHO);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) < 0)
                return negative_errno();
        t->raw = true;
        printf("\033[?1049h\033[?25l\033[H\033[2J");
        return 0;
}

/* A key: true to redraw, and *quit on q. */
static bool top_key(struct top *t, char k, bool *quit) {
        static const char keys[] = "ctmpan";
        const char *p = strchr(keys, k);

        if (k == 'q' || k == 'Q' || k == 4 /* ^D */) {
                *quit = true;
                return false;
        }
        if (k == 'r' || k == 'R') {
                t->reverse = !t->reverse;
                return true;
        }
        if (k && p) {
                t->sort = (enum top_sort)(p - keys);
                return true;
        }
        return false;
}

/* What poll found on the terminal (p[0]) and the signalfd sfd (p[1]): keys,
 * SIGWINCH (*redraw) or a signal to end on (*quit); false when the terminal
 * is gone. */
static bool top_events(struct top *t, const struct pollfd *p, int sfd, bool *redraw, bool *quit) {
        if (p[0].revents & (POLLHUP | POLLERR))
                return false; /* the terminal went away (ssh dropped) */
        if (p[0].revents & POLLIN) {
                char k[32];
                ssize_t got = read(STDIN_FILENO, k, sizeof k);
                if (got <= 0)
                        return false;
                for (ssize_t i = 0; i < got; i++)
                        *redraw |= top_key(t, k[i], quit);
        }
        if (p[1].revents & POLLIN) {
                struct signalfd_siginfo si;
                if (read(sfd, &si, sizeof si) == (ssize_t) sizeof si) {
                        if (si.ssi_signo == SIGWINCH)
                                *redraw = true;
                        else
                                *quit = true;
                }
        }
        return true;
}

/* The jobs listed and drawn every interval, and redrawn on a key or
 * SIGWINCH, until q, a signal, the terminal's end or o->iterations: the exit
 * code. */
static int top_loop(struct top *t, const struct ps_opts *o, int parent_fd, const char *parent, int proc_fd, int sfd) {
        uint64_t next = now_ns(CLOCK_MONOTONIC), count = 0;
        bool quit = false;
        int r;

        while (!quit) {
                struct pollfd p[2] = {{.fd = STDIN_FILENO, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
                uint64_t now = now_ns(CLOCK_MONOTONIC);
                bool redraw = false;

                if (now >= next) {
                        r = top_refresh(t, parent_fd, parent, proc_fd);
                        if (r < 0) {
                                top_restore(t);
                                log_error("top: cannot list %s: %s", parent, strerror(-r));
                                return EXIT_LEASH_FAILED;
                        }
                        top_draw(t, parent);
                        if (o->iterations && ++count >= o->iterations)
                                break;
                        next += o->interval_ns;
                        if (next <= now)
                                next = now + o->interval_ns;
                        continue;
                }
                if (poll(p, 2, (int) ((next - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC)) < 0)
                        continue; /* EINTR: nothing is delivered by handler here */
                if (!top_events(t, p, sfd, &redraw, &quit))
                        break;
                if (redraw && !quit)
                        top_draw(t, parent);
        }
        return 0;
}

/* The signals that end top or redraw it (SIGWINCH) blocked, the mask before
 * in *old, and read from a signalfd: its fd, or -errno. */
static int top_signalfd(sigset_t *old) {
        sigset_t mask;
        int fd;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGWINCH);
        sigaddset(&mask, SIGQUIT);
        if (sigprocmask(SIG_BLOCK, &mask, old) < 0)
                return negative_errno();
        fd = signalfd(-1, &mask, SFD_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

int cmd_top(int argc, char **argv) {
        struct ps_opts o = {.interval_ns = NSEC_PER_SEC};
        _cleanup_close_ int parent_fd = -1, proc_fd = -1, sfd = -1;
        struct top t = {.sort = SORT_CORES};
        char parent[4096];
        sigset_t old;
        int r, rc;

        r = parse_opts("top", argc, argv, &o, top_usage);
        if (r != 0)
                return r == PS_HELP_SHOWN ? 0 : r;
        if (optind < argc)
                return usage_error("top: unexpected argument '%s'", argv[optind]);
        if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
                return usage_error("top: needs a terminal on standard input and output (use 'leash ps' in scripts)");
        if (open_parent("top", &o, &parent_fd, parent, sizeof parent, &placement) != 0)
                return EXIT_LEASH_FAILED;
        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        sfd = top_signalfd(&old);
        if (sfd < 0) {
                log_error("top: cannot set up signals: %s", strerror(-sfd));
                return EXIT_LEASH_FAILED;
        }
        r = top_raw(&t);
        if (r < 0) {
                log_error("top: cannot set the terminal up: %s", strerror(-r));
                (void) sigprocmask(SIG_SETMASK, &old, NULL);
                return EXIT_LEASH_FAILED;
        }
        rc = top_loop(&t, &o, parent_fd, parent, proc_fd, sfd);
        top_restore(&t);
        monitor_jobs_free(t.jobs, t.n);
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
        return rc;
}
