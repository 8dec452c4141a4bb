/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash run: options -> settings (through the one option table), report
 * destination checked before the job starts, the job, the report, the exit
 * status. If leash was interrupted, it writes the report and then dies of the
 * same signal, so that a shell or scheduler above sees the truth.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../basic/closest.h"
#include "../basic/log.h"
#include "../basic/macro.h"
#include "../basic/parse.h"
#include "../engine/leash.h"
#include "../settings/options.h"
#include "../settings/profile.h"
#include "../engine/placement/placement.h"
#include "cli.h"
#include "report-dest.h"
#include "remote.h"

/* "unknown option '--memroy' (did you mean '--memory'?)" */
static int unknown_long_option(const char *bad) {
        const char *names[_LEASH_OPT_MAX + 1];
        char typed[80];
        const char *near;
        size_t n = 0;

        for (size_t i = 0; i < _LEASH_OPT_MAX; i++)
                if (!(leash_options[i].flags & LEASH_OPT_NO_CLI))
                        names[n++] = leash_options[i].name;
        names[n++] = "help";
        snprintf(typed, sizeof typed, "%s", bad + strspn(bad, "-"));
        typed[strcspn(typed, "=")] = '\0';
        near = closest_word(typed, names, n);
        if (near)
                return usage_error("unknown option '%s' (did you mean '--%s'?)", bad, near);
        return usage_error("unknown option '%s'", bad);
}

static int parse_run_options(int argc, char **argv, struct leash_settings *s, struct cli_arg *args, size_t *n_args,
                             int *ret_optind) {
        struct option longopts[_LEASH_OPT_MAX + 2];
        char shortopts[3 * _LEASH_OPT_MAX + 4] = "+h";
        size_t n = 0;
        int c;

        for (size_t i = 0; i < _LEASH_OPT_MAX; i++) {
                const struct leash_option *o = &leash_options[i];
                if (o->flags & LEASH_OPT_NO_CLI)
                        continue;
                /* a flag takes an optional value: --strict=false undoes a profile's strict = true */
                longopts[n++] =
                        (struct option){o->name, o->type == LEASH_OPT_FLAG ? optional_argument : required_argument,
                                        NULL, 256 + (int) i};
                if (o->short_opt) {
                        size_t l = strlen(shortopts);
                        shortopts[l] = o->short_opt;
                        shortopts[l + 1] = o->type == LEASH_OPT_FLAG ? '\0' : ':';
                        shortopts[l + 2] = '\0';
                }
        }
        longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
        longopts[n] = (struct option){0};

        opterr = 0;
        optind = 1;
        while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
                const struct leash_option *o;
                struct leash_error err = {0};

                if (c == 'h') {
                        print_help(stdout);
                        *ret_optind = -1;
                        return 0;
                }
                if (c == '?' || c == ':') {
                        const char *bad = argv[optind - 1];
                        if (optopt && leash_option_by_short(optopt))
                                return usage_error("option '-%c' needs a value", optopt);
                        if (optopt >= 256 && optopt < 256 + _LEASH_OPT_MAX)
                                return usage_error("option '--%s' needs a value (%s)", leash_options[optopt - 256].name,
                                                   leash_options[optopt - 256].metavar);
                        if (optopt)
                                return usage_error("unknown option '-%c'", optopt);
                        return unknown_long_option(bad);
                }
                o = c >= 256 ? &leash_options[c - 256] : leash_option_by_short(c);
                if (!o)
                        return usage_error("unknown option");
                if (leash_option_set(s, o, optarg, "command line", &err) < 0)
                        return usage_error("--%s: %s", o->name, err.detail[0] ? err.detail : strerror(err.error));
                args[(*n_args)++] = (struct cli_arg){o, optarg};
        }
        *ret_optind = optind;
        return 0;
}

/* --report-dir DIR without --report: DIR/NAME-PID.EXT, PID being leash's own
 * (the job cgroup is NAME@PID), NAME the job name made safe for a file name. */
static int report_dir_path(struct leash_settings *s) {
        static const char *const ext[] = {"json", "kv", "txt", "meta"}; /* enum leash_format */
        const char *b = s->config.name;
        char name[65];
        size_t n = 0;

        if (!b) {
                b = strrchr(s->config.argv[0], '/');
                b = b ? b + 1 : s->config.argv[0];
        }
        for (; *b && n < 64; b++, n++)
                name[n] = (*b == '_' || *b == '-' || (*b == '.' && n > 0) || (*b >= '0' && *b <= '9') ||
                           (*b >= 'a' && *b <= 'z') || (*b >= 'A' && *b <= 'Z'))
                                  ? *b
                                  : '_';
        name[n] = '\0';
        if (asprintf(&s->report_path, "%s/%s-%d.%s", s->report_dir, n ? name : "job", (int) getpid(), ext[s->format]) <
            0) {
                s->report_path = NULL;
                return -ENOMEM;
        }
        return 0;
}

static bool ends_with(const char *s, const char *suffix) {
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* --series x.jsonl writes JSON lines, x.csv CSV: the name chooses, unless
 * --series-format on the command line says otherwise (then they must agree:
 * `leash report` reads a series by its name). */
static int series_format_from_name(struct leash_settings *s, const struct cli_arg *args, size_t n_args) {
        bool jsonl = ends_with(s->series_path, ".jsonl"), csv = ends_with(s->series_path, ".csv");
        bool given = false;

        for (size_t i = 0; i < n_args; i++)
                given = given || args[i].opt->id == LEASH_OPT_SERIES_FORMAT;
        if (!jsonl && !csv)
                return 0;
        if (given && jsonl != (s->config.sampling.series_format == LEASH_SERIES_JSONL))
                return usage_error("--series: '%s' ends in %s but --series-format is %s", s->series_path,
                                   jsonl ? ".jsonl" : ".csv", jsonl ? "csv" : "jsonl");
        s->config.sampling.series_format = jsonl ? LEASH_SERIES_JSONL : LEASH_SERIES_CSV;
        return 0;
}

/* What arrived after the job ended is consumed: the job is over, the
 * report says how it ended, and restoring the mask must not kill leash
 * before it exits with the job's status. */
static void unguard_signals(int fd, const sigset_t *old) {
        struct signalfd_siginfo si;

        if (fd < 0)
                return;
        while (read(fd, &si, sizeof si) == (ssize_t) sizeof si)
                ;
        close(fd);
        (void) sigprocmask(SIG_SETMASK, old, NULL);
}

/* Before the job starts, one line per limit enforced weaker than asked
 * (quiet with -q): a user must not learn it from a failure. */
static void say_weak_limits(const struct leash_job *job) {
        const struct leash_result *r = leash_job_result(job);
        const struct leash_spec *c = leash_job_spec(job);
        char line[512];

        for (int l = 0; l < _LEASH_LIMIT_MAX; l++)
                if (leash_limit_weakness(c, r->enforced, r->enforce_note, (enum leash_limit) l, false, line,
                                         sizeof line) > 0)
                        log_notice("%s", line);
}

/* --strict refused: every limit a cgroup cannot enforce here, why and the
 * remedy, from the host's plan (leash check's); the library named them. */
static void say_strict_refusal(const struct leash_spec *c, const struct leash_error *err) {
        _cleanup_free_ struct leash_host *h = calloc(1, sizeof *h);
        char line[512];
        int n = 0;

        if (h && leash_host_probe(c->cgroup_parent, h, NULL) >= 0)
                for (int l = 0; l < _LEASH_LIMIT_MAX; l++)
                        if (leash_limit_weakness(c, h->enforced, h->enforce_note, (enum leash_limit) l, true, line,
                                                 sizeof line) > 0) {
                                log_error("--strict: %s", line);
                                n++;
                        }
        if (!n)
                log_error("--strict: cannot enforce by a cgroup here: %s", err->detail);
}

/* -v: what leash did, step by step (the start is told by run_job). */
static void narrate_start(const struct leash_job *job) {
        const struct leash_result *r = leash_job_result(job);
        const struct leash_spec *c = leash_job_spec(job);

        if (log_get_level() < LOG_LEVEL_VERBOSE)
                return;
        log_debug("placement: job cgroup %s", r->cgroup);
        for (int l = 0; l < _LEASH_LIMIT_MAX; l++)
                if (leash_spec_has(c, (enum leash_limit) l))
                        log_debug("limit %s: enforced by %s%s%s", leash_limit_to_string((enum leash_limit) l),
                                  leash_enforcer_to_string(r->enforced[l]), r->enforce_note[l] ? " (" : "",
                                  r->enforce_note[l] ? r->enforce_note[l] : "");
        for (int f = 0; f < _LEASH_FIG_MAX; f++)
                if (c->sampling.limit[f])
                        log_debug("limit %s: checked at each sample", leash_fig_name((enum leash_fig) f));
}

static void narrate_end(const struct leash_result *r) {
        if (log_get_level() < LOG_LEVEL_VERBOSE)
                return;
        for (unsigned i = 0; i < r->n_signals; i++)
                log_debug("sent SIG%s at %.3f s (%s)", signal_name(r->signals[i].signal),
                          (double) r->signals[i].at_ns / 1e9, r->signals[i].why);
        if (r->term_signal)
                log_debug("the main process died of SIG%s", signal_name(r->term_signal));
        else if (r->status_code >= 0)
                log_debug("the main process exited with status %d", r->status_code);
        log_debug("leftover processes killed: %u; escaped the cgroup: %u", r->leftovers_killed, r->n_escaped);
        log_debug("removed the job cgroup %s; exit %d (%s)", r->cgroup, r->exit_code, leash_result_reason(r));
}

/* A job that died of a signal leash passes on, before leash got one: a stop
 * of leash's scope signals every process in it, the job's maybe first.
 * leash's own signal follows within systemd's one walk of the scope; it is
 * waited for, bounded (LATE_INTERRUPT_MS), and only in this case. */
#define LATE_INTERRUPT_MS 100
static void late_interrupt(struct leash_job *job, int sig_fd) {
        const struct leash_result *res = leash_job_result(job);
        struct pollfd pfd = {.fd = sig_fd, .events = POLLIN};
        struct signalfd_siginfo si;

        if (res->interrupt_signal ||
            (res->term_signal != SIGTERM && res->term_signal != SIGINT && res->term_signal != SIGHUP))
                return;
        if (poll(&pfd, 1, LATE_INTERRUPT_MS) <= 0)
                return;
        while (read(sig_fd, &si, sizeof si) == (ssize_t) sizeof si)
                (void) leash_job_interrupt(job, (int) si.ssi_signo);
}

/* The job, through the library's job object: create, start, then one loop
 * over the job's pollable fd and the signalfd, finish. */
static int run_job(struct leash_spec *spec, struct leash_job **ret_job, struct leash_error *err, int *sig_fd,
                   sigset_t *old_mask) {
        const char *spawn = getenv("LEASH_SPAWN"); /* a test hook: the fork fallback */
        struct leash_job *job = NULL;
        int r, jfd;

        r = cli_guard_signals(sig_fd, old_mask);
        if (r < 0) {
                err->step = "block signals";
                err->error = -r;
                return r;
        }
        spec->child_sigmask = old_mask;
        /* With SIGCHLD ignored (inherited from whoever started leash) the kernel
         * would reap the job by itself and its status would be lost: leash takes
         * the default, the job gets the ignored SIGCHLD back. */
        {
                struct sigaction old_chld, dfl = {.sa_handler = SIG_DFL};
                if (sigaction(SIGCHLD, NULL, &old_chld) == 0 && old_chld.sa_handler == SIG_IGN)
                        spec->child_sigchld_ignore = sigaction(SIGCHLD, &dfl, NULL) == 0;
        }
        spec->spawn_fallback = spawn && strcmp(spawn, "fork") == 0;
        /* A subreaper: every orphan of the job is reparented to leash, not to
         * init, so a process that left the job cgroup is still found below
         * leash (src/engine/job/escape.c). leash has no other children. */
        spec->reaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
        spec->exit_after = true; /* one job, then leash exits: its descriptors go with the exit */
        r = leash_job_new_spec(spec, &job, err);
        if (r < 0)
                return r;
        *ret_job = job;
        say_weak_limits(job);
        narrate_start(job);
        r = leash_job_start(job, spec->argv, err);
        if (r >= 0)
                log_debug("started %s as pid %d", spec->argv[0], (int) leash_job_result(job)->pid);
        if (r < 0 && !leash_job_ended(job))
                return r;
        jfd = leash_job_fd(job);
        if (jfd < 0) {
                err->step = "watch the job";
                err->error = -jfd;
                return jfd;
        }
        for (;;) {
                struct pollfd pfd[2] = {{.fd = jfd, .events = POLLIN}, {.fd = *sig_fd, .events = POLLIN}};
                struct signalfd_siginfo si;
                bool sig_ready = true; /* a job that ended as it started (an exec error): looked at once */

                /* nothing is due before an event (the job's end, its timer, a
                 * signal): the first pass waits too, no dispatch finds nothing */
                if (!leash_job_ended(job)) {
                        int n = poll(pfd, 2, -1);
                        if (n < 0 && errno != EINTR) {
                                r = negative_errno();
                                break;
                        }
                        sig_ready = n < 0 || pfd[1].revents != 0;
                }
                /* from the terminal (Ctrl-C, hangup), a scheduler or systemd: the job,
                 * in a session of its own, gets it from leash, then the grace, then
                 * SIGKILL. Read before the job's end is: `systemctl stop` of leash's
                 * unit signals leash and the job at once, and the report says
                 * interrupted whichever of the two the kernel woke first */
                while (sig_ready && read(*sig_fd, &si, sizeof si) == (ssize_t) sizeof si)
                        (void) leash_job_interrupt(job, (int) si.ssi_signo);
                r = leash_job_dispatch(job);
                if (r != 0)
                        break;
        }
        if (r < 0) {
                err->step = "supervise the job";
                err->error = -r;
                return r;
        }
        late_interrupt(job, *sig_fd);
        r = leash_job_finish(job, err);
        if (r < 0) /* the job ran and is accounted: its report still says so */
                log_error("%s: %s: %s", err->step, err->detail, strerror(err->error));
        return 0;
}

/* --strict refused to run without a cgroup: what would give one here. */
static void log_strict_remedy(const char *cgroup_parent) {
        _cleanup_free_ struct placement *p = malloc(sizeof *p);

        if (p && placement_decide(cgroup_parent, false, p, NULL) >= 0 && p->remedy[0])
                log_error("remedy: %s", p->remedy);
}

/* The settings of this run in precedence order, the command line applied
 * last (it is read first, to learn --profile), validated before any file or
 * cgroup is made. *ret_go: true with s and *ret_profiles to free; else the
 * exit code is returned (--help, a usage error), nothing to free. */
static int run_settings(int argc, char **argv, struct leash_settings *s, struct leash_profiles **ret_profiles,
                        bool *ret_go) {
        _cleanup_free_ struct cli_arg *args = calloc((size_t) argc + 1, sizeof *args);
        struct leash_settings cli;
        struct leash_error verr = {0};
        size_t n_args = 0;
        int r, first;

        *ret_go = false;
        if (!args)
                return usage_error("out of memory");
        leash_settings_init(&cli);
        r = parse_run_options(argc, argv, &cli, args, &n_args, &first);
        if (r != 0 || first < 0) {
                leash_settings_done(&cli);
                return r;
        }
        if (first >= argc) {
                leash_settings_done(&cli);
                return usage_error("no command given: expected leash run [OPTIONS] [--] COMMAND [ARG...]");
        }
        r = cli_settings_build(&cli, args, n_args, s, ret_profiles);
        leash_settings_done(&cli);
        if (r != 0)
                return r;
        s->config.argv = argv + first;
        if (leash_spec_validate(&s->config, &verr) < 0)
                r = usage_error("%s: %s", verr.step, verr.detail[0] ? verr.detail : strerror(verr.error));
        else if (!s->report_path && s->report_dir && report_dir_path(s) < 0)
                r = usage_error("out of memory");
        else {
                log_set_level(s->quiet ? LOG_LEVEL_QUIET : s->verbose ? LOG_LEVEL_VERBOSE : LOG_LEVEL_NORMAL);
                if (s->series_path)
                        r = series_format_from_name(s, args, n_args);
        }
        if (r != 0) {
                leash_settings_done(s);
                leash_profiles_free(*ret_profiles);
                return r;
        }
        *ret_go = true;
        return 0;
}

/* The series (--series) and the report (--report) opened before the job
 * starts, by the report's opener and rules: 0, or the exit code with both
 * closed and nothing left behind. */
static int run_outputs(struct leash_settings *s, struct report_dest *dest, struct report_dest *series) {
        int r;

        if (s->series_path) {
                /* the report's opener and rules, but written row by row under its final name */
                r = s->config.sampling.interval_ns ? report_prepare("--series", s->series_path, true, series)
                                                   : usage_error("--series: needs --sample INTERVAL");
                if (r != 0) {
                        report_close(series);
                        return r;
                }
                s->config.sampling.series_fd = series->fd;
        }
        if (s->report_path) {
                r = report_prepare("--report", s->report_path, false, dest);
                if (r != 0) {
                        report_discard(series);
                        report_close(series);
                        report_close(dest);
                        return r;
                }
        }
        return 0;
}

/* Why the job did not run, in one line, and what would give --strict a
 * cgroup. */
static void say_run_failed(const struct leash_spec *c, const struct leash_error *err) {
        if (err->error == EOPNOTSUPP && c->strict && err->step && strstr(err->step, "(--strict)"))
                say_strict_refusal(c, err);
        else if (err->step && strncmp(err->step, "--", 2) == 0)
                log_error("%s: %s", err->step, err->detail); /* an option's value, said in full */
        else if (err->detail[0])
                log_error("%s: %s: %s", err->step, err->detail, strerror(err->error));
        else
                log_error("%s: %s", err->step ? err->step : "run the job", strerror(err->error));
        if (err->step && strcmp(err->step, PLACEMENT_STRICT_STEP) == 0)
                log_strict_remedy(c->cgroup_parent);
}

/* The report of a job that ran: into --report's file, or on stderr for -f
 * text without one; then the one-line summary and the leftovers. -errno
 * when the report could not be written. */
static int run_report(const struct leash_settings *s, const struct leash_job *job, const struct leash_result *res,
                      struct report_dest *dest) {
        _cleanup_free_ char *text = NULL, *summary = NULL;
        int r = 0;

        if (s->report_path) {
                r = leash_job_report(job, s->format, &text);
                if (r >= 0)
                        r = report_commit(dest, text);
                if (r < 0) {
                        errno = -r;
                        log_error("write the report to %s: %m", s->report_path);
                }
                report_close(dest);
        } else if (s->format == LEASH_FORMAT_TEXT && !s->quiet && leash_job_report(job, s->format, &text) >= 0) {
                /* -f text without -o: the report is for the person watching, on stderr */
                fflush(stdout);
                fputs(text, stderr);
        }
        /* the one line, with or without -o (not twice: the text report on stderr says it) */
        if (!s->quiet && (s->report_path || s->format != LEASH_FORMAT_TEXT) && leash_job_summary(job, &summary) >= 0 &&
            summary)
                log_notice("%s", summary);
        if (res->leftovers_killed && !s->quiet)
                log_notice("killed %u process%s the job left running when its main process ended",
                           res->leftovers_killed, res->leftovers_killed == 1 ? "" : "es");
        return r < 0 ? r : 0;
}

int cmd_run(int argc, char **argv) {
        struct leash_settings s;
        struct leash_profiles *profiles = NULL;
        struct report_dest dest = {.fd = -1}, series = {.fd = -1, .dirfd = -1};
        const struct leash_result *res;
        struct leash_job *job = NULL;
        struct leash_error err = {0};
        int sig_fd = -1, interrupt, r, code;
        sigset_t old_mask;
        bool go;

        /* from a login session: through the resident launcher, if one serves
         * (remote.c); the leash it starts reads the options and says what is
         * wrong with them */
        r = remote_run(argc, argv);
        if (r >= 0)
                return r;
        r = run_settings(argc, argv, &s, &profiles, &go);
        if (!go)
                return r;
        r = run_outputs(&s, &dest, &series);
        if (r != 0) {
                leash_settings_done(&s);
                leash_profiles_free(profiles);
                return r;
        }
        r = run_job(&s.config, &job, &err, &sig_fd, &old_mask);
        if (r < 0) {
                say_run_failed(&s.config, &err);
                leash_job_free(job);
                unguard_signals(sig_fd, &old_mask);
                report_close(&dest);
                report_discard(&series); /* nothing left behind by a run that did not start */
                report_close(&series);
                leash_settings_done(&s);
                leash_profiles_free(profiles);
                return EXIT_LEASH_FAILED;
        }
        res = leash_job_result(job);
        if (res->reason == LEASH_REASON_EXEC_ERROR || res->reason == LEASH_REASON_SETUP_ERROR) {
                const struct leash_error *se = leash_job_start_error(job);
                log_error("%s: %s: %s", se->step, se->detail, strerror(se->error));
        }
        code = res->exit_code;
        interrupt = res->interrupt_signal;
        narrate_end(res);
        if (run_report(&s, job, res, &dest) < 0)
                code = EXIT_LEASH_FAILED;
        leash_job_free(job);
        report_close(&series);
        leash_settings_done(&s);
        leash_profiles_free(profiles);
        /* the signals stay blocked and the signalfd open until the exit that
         * follows: nothing that arrives now can kill leash before it exits
         * with the job's status, and nothing needs reading or closing */
        if (interrupt)
                cli_reraise(interrupt);
        remote_spawn_resident();
        return code;
}
