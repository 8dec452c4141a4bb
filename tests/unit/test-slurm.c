/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* slurm.ini parsing (errors as FILE:LINE), which profile a job gets, step
 * names, the state files' key=value reader; and conf/slurm.ini, parsed as
 * shipped, must give the built-in defaults (every key commented out); which
 * mode a node is in (slurm.conf and plugstack.conf as a node has them), and
 * where Slurm's cgroup plugin put a task (/proc/PID/cgroup as 22.05 writes it). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "basic/kvfile.h"
#include "settings/profile.h"
#include "slurm/slurm.h"
#include "slurm/slurm-nest.h"
#include "slurm/slurm-node.h"
#include "tap.h"

static int load(const char *text, struct slurm_conf *c, char *first_error, size_t size) {
        struct leash_profiles *p = NULL;
        int r;

        slurm_conf_init(c);
        if (leash_profiles_new(false, &p) < 0)
                return -ENOMEM;
        r = slurm_conf_load_buffer(c, "slurm.ini", text, strlen(text), p);
        snprintf(first_error, size, "%s", leash_profiles_n_errors(p) ? leash_profiles_error(p, 0) : "");
        leash_profiles_free(p);
        return r;
}

static void bad(const char *text, const char *want) {
        struct slurm_conf c;
        char e[512];
        int r = load(text, &c, e, sizeof e);
        ok(r == -EINVAL && strstr(e, want), "refused: %s", want);
        if (!strstr(e, want))
                printf("#   got '%s'\n", e);
        slurm_conf_done(&c);
}

static void node_tests(void) {
        static const char own_conf[] = "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
                                       "Prolog=/usr/libexec/leash/slurm-prolog\n"
                                       "TaskProlog=/usr/libexec/leash/slurm-task-prolog\n";
        static const char cluster[] = "# a node as clusters run it\nproctracktype=proctrack/cgroup # comment\n"
                                      "TaskPlugin=task/affinity,task/cgroup\nPrologFlags=Contain\n"
                                      "Prolog=/usr/libexec/leash/slurm-prolog\n";
        static const char stack[] =
                "# leash\nrequired /usr/lib/x86_64-linux-gnu/leash/spank_leash.so state-dir=/run/x\n";
        struct slurm_node n;
        char why[1400], path[256];
        enum slurm_mode m;

        ok(slurm_node_parse_conf(own_conf, sizeof own_conf - 1, &n) == 0 && !n.slurm_places && n.leash_task_prolog &&
                   n.leash_prolog,
           "own layout: linuxproc + task/none, leash's Prolog and TaskProlog");
        ok(slurm_node_judge(&n, SLURM_MODE_OWN, why, sizeof why) == 0 && strstr(why, "own"), "own: judged own");
        ok(slurm_node_judge(&n, SLURM_MODE_NEST, why, sizeof why) == -ENOENT && strstr(why, "needs Slurm's cgroup"),
           "nest without Slurm's cgroup plugin: refused");
        ok(slurm_node_parse_conf(cluster, sizeof cluster - 1, &n) == 0 && n.slurm_places && !n.leash_task_prolog,
           "keys are case-insensitive, comments cut, task/cgroup found in a list");
        is_str(n.proctrack, "proctrack/cgroup", "ProctrackType read without its comment");
        ok(slurm_node_judge(&n, SLURM_MODE_OWN, why, sizeof why) == 0 && strstr(why, "not placed"),
           "own with no placing hook: said, not refused");
        slurm_node_parse_plugstack(stack, sizeof stack - 1, &n);
        ok(n.leash_spank, "plugstack.conf: spank_leash.so found");
        ok(slurm_node_judge(&n, SLURM_MODE_OWN, why, sizeof why) == -EEXIST && strstr(why, "both would place tasks"),
           "own + spank_leash.so + Slurm's cgroup plugin: refused (both would place tasks)");
        ok(slurm_node_judge(&n, SLURM_MODE_NEST, why, sizeof why) == 0 && strstr(why, "nest"), "nest: judged nest");
        ok(slurm_mode_from_string("nest", &m) == 0 && m == SLURM_MODE_NEST && slurm_mode_from_string("Nest", &m) < 0,
           "mode names are exact");

        ok(slurm_nest_job_path("0::/system.slice/slurmstepd.scope/job_42/step_batch/user/task_0\n", 42, "batch", path,
                               sizeof path) == 0,
           "a batch task in Slurm's layout");
        is_str(path, "/system.slice/slurmstepd.scope/job_42", "its job cgroup");
        ok(slurm_nest_job_path("0::/system.slice/n1_slurmstepd.scope/job_7/step_0/user/task_3", 7, "0", path,
                               sizeof path) == 0 &&
                   strcmp(path, "/system.slice/n1_slurmstepd.scope/job_7") == 0,
           "a multi-slurmd node's scope, step 0, task 3");
        ok(slurm_nest_job_path("0::/system.slice/slurmstepd.scope/job_42/step_batch/slurm\n", 42, "batch", path,
                               sizeof path) == 0,
           "a task not yet moved out of slurmstepd's leaf names the job too");
        {
                static const struct {
                        const char *cgroup, *step, *what;
                } refused[] = {
                        {"0::/system.slice/slurmstepd.scope/job_42/step_01/user/task_0\n", "0",
                         "step_01 is not step_0"},
                        {"0::/system.slice/slurmstepd.scope/job_43/step_batch/user/task_0\n", "batch",
                         "another job's task is refused"},
                        {"0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n", "batch",
                         "another step's task is refused"},
                        {"0::/x/job_42/step_batch/user/job_42/step_batch/user/t\n", "batch",
                         "a job that made job_42/step_batch/user below its own task is refused"},
                };
                for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
                        ok(slurm_nest_job_path(refused[i].cgroup, 42, refused[i].step, path, sizeof path) == -EPERM,
                           "%s", refused[i].what);
        }
        ok(slurm_nest_job_path("12:memory:/x\n", 42, "batch", path, sizeof path) == -ENOENT, "no cgroup2 line");
}

int main(void) {
        struct slurm_conf c;
        struct slurm_job j = {0};
        const char *profile, *why;
        char e[512], buf[64];

        ok(load("[slurm]\n", &c, e, sizeof e) == 0, "an empty [slurm] loads");
        is_str(c.profile, "default", "default profile: default");
        is_str(c.state_dir, SLURM_DEFAULT_STATE_DIR, "default state-dir");
        is_str(c.report_dir, SLURM_DEFAULT_REPORT_DIR, "default report-dir");
        ok(c.on_error == SLURM_ON_ERROR_CONTINUE, "default on-error: continue");
        is_u64(c.kill_timeout_ns, 10000000000ULL, "default kill-timeout: 10s");
        is_u64(c.epilog_wait_ns, 600000000000ULL, "default epilog-wait: 10min");
        slurm_conf_done(&c);

        ok(load("[slurm]\nprofile = batch\npartition.gpu = hpo\nfeature.bigmem = batch\naccount.team = none\n"
                "user-profiles = hpo, judge\non-error = fail-job\nstate-dir = /run/x\nreport-dir = /var/y\n"
                "kill-timeout = 2.5s\nepilog-wait = 1h\n",
                &c, e, sizeof e) == 0,
           "a full slurm.ini loads");
        ok(c.on_error == SLURM_ON_ERROR_FAIL_JOB && c.n_maps == 3 && c.n_user_profiles == 2 &&
                   c.kill_timeout_ns == 2500000000ULL && c.epilog_wait_ns == 3600000000000ULL,
           "its values are kept");
        ok(slurm_user_profile_allowed(&c, "judge") && !slurm_user_profile_allowed(&c, "batch"),
           "user-profiles allows exactly what it lists");

        snprintf(j.partition, sizeof j.partition, "gpu");
        ok(slurm_choose_profile(&c, &j, &profile, &why, e, sizeof e) == 0, "a job in partition gpu");
        is_str(profile, "hpo", "gets partition.gpu's profile");
        is_str(why, "partition.gpu", "and says why");
        snprintf(j.account, sizeof j.account, "team");
        (void) slurm_choose_profile(&c, &j, &profile, &why, e, sizeof e);
        is_str(profile, "none", "account.NAME comes before partition.NAME");
        j.account[0] = j.partition[0] = '\0';
        snprintf(j.features, sizeof j.features, "[fast*2&bigmem]");
        (void) slurm_choose_profile(&c, &j, &profile, &why, e, sizeof e);
        is_str(profile, "batch", "a feature inside a constraint expression matches");
        snprintf(j.requested_profile, sizeof j.requested_profile, "judge");
        (void) slurm_choose_profile(&c, &j, &profile, &why, e, sizeof e);
        is_str(profile, "judge", "an allowed --leash-profile wins");
        snprintf(j.requested_profile, sizeof j.requested_profile, "batch");
        ok(slurm_choose_profile(&c, &j, &profile, &why, e, sizeof e) == -EPERM && strstr(e, "not allowed"),
           "a --leash-profile not in user-profiles is refused");
        slurm_conf_done(&c);

        bad("[slurm]\non-error = reboot\n", "slurm.ini:2: on-error: 'reboot': expected continue, fail-job or drain");
        bad("[slurm]\nprofile = a\nprofile = b\n", "slurm.ini:3: duplicate key 'profile'");
        bad("[slurm]\nfrobnicate = 1\n", "slurm.ini:2: unknown key 'frobnicate'");
        bad("[other]\n", "slurm.ini:1: unknown section [other]");
        bad("[slurm]\nstate-dir = relative\n", "slurm.ini:2: state-dir: 'relative': expected an absolute path");
        bad("[slurm]\nkill-timeout = 0\n", "slurm.ini:2: kill-timeout: '0'");
        bad("[slurm]\nepilog-wait = 8d\n", "slurm.ini:2: epilog-wait: '8d': expected a duration from 1ms to 7d");
        bad("[slurm]\npartition. = x\n", "slurm.ini:2: 'partition.': expected partition.NAME");
        bad("[slurm]\nuser-profiles = ok, ../x\n", "user-profiles: '../x': not a profile name");
        bad("profile = x\n", "slurm.ini:1: key 'profile' (value 'x') is outside a section");

        ok(slurm_step_name(NULL, buf, sizeof buf) == 0 && strcmp(buf, "batch") == 0, "no step id: batch");
        ok(slurm_step_name("4294967291", buf, sizeof buf) == 0 && strcmp(buf, "batch") == 0, "0xfffffffb: batch");
        ok(slurm_step_name("4294967292", buf, sizeof buf) == 0 && strcmp(buf, "extern") == 0, "0xfffffffc: extern");
        ok(slurm_step_name("4294967290", buf, sizeof buf) == 0 && strcmp(buf, "interactive") == 0,
           "0xfffffffa: interactive");
        ok(slurm_step_name("7", buf, sizeof buf) == 0 && strcmp(buf, "7") == 0, "7: 7");
        ok(slurm_step_name("../x", buf, sizeof buf) == -EINVAL, "a path is not a step id");

        ok(kv_get("a=1\nbb=two words\n", "bb", buf, sizeof buf) == 0 && strcmp(buf, "two words") == 0,
           "kv: a value with spaces");
        ok(kv_get("a=1\nab=2\n", "b", buf, sizeof buf) == -ENOENT, "kv: no match inside another key");
        {
                /* issue 22.3: a value a user chose (--leash-profile) cannot add a line */
                char text[1024];
                struct kv_buf b = {.buf = text, .size = sizeof text};
                const char *evil = "x\nsupervisor_pid=1\n\x1b[2J\\x0a";
                kv_add(&b, "requested_profile", "%s", evil);
                kv_add(&b, "supervisor_pid", "%d", 4242);
                ok(!b.overflow && kv_check(text) == 0, "kv: a value with newlines and ESC makes a well-formed file");
                ok(strchr(text, '\x1b') == NULL && strstr(text, "\nsupervisor_pid=1\n") == NULL,
                   "kv: no raw ESC, no injected line");
                ok(kv_get(text, "supervisor_pid", buf, sizeof buf) == 0 && strcmp(buf, "4242") == 0,
                   "kv: the writer's supervisor_pid, not the injected one");
                ok(kv_get(text, "requested_profile", buf, sizeof buf) == 0 && strcmp(buf, evil) == 0,
                   "kv: the value reads back as it was given");
                /* the control: the same value written raw, as before the fix, forges the key */
                snprintf(text, sizeof text, "requested_profile=%s\nsupervisor_pid=4242\n", evil);
                ok(kv_get(text, "supervisor_pid", buf, sizeof buf) == 0 && strcmp(buf, "1") == 0,
                   "kv (control): written raw, the first supervisor_pid is the injected one");
                ok(kv_check(text) == -EBADMSG, "kv: and the reader refuses that file");
                ok(kv_check("a=1\nb=2\na=3\n") == -EBADMSG, "kv: a duplicate key is refused");
                ok(kv_check("a=1\njunk\n") == -EBADMSG, "kv: a line without = is refused");
                ok(kv_check("a=1\nb=2") == -EBADMSG, "kv: a text cut short is refused");
                ok(kv_check("a=1\nb=\t\n") == -EBADMSG, "kv: a raw control byte is refused");
                ok(kv_check("") == 0 && kv_check("a=\nb=c d\n") == 0, "kv: empty file, empty value: fine");
                kv_escape("a\x1b]0;x\x07\xc3\xa9", text, sizeof text);
                ok(strcmp(text, "a\\x1b]0;x\\x07\\xc3\\xa9") == 0, "kv_escape: ESC, BEL and high bytes as \\xHH");
        }

        {
                const char *src = getenv("LEASH_SRCDIR");
                char path[4096];
                struct leash_profiles *p = NULL;
                int r;
                snprintf(path, sizeof path, "%s/conf", src ? src : ".");
                slurm_conf_init(&c);
                (void) leash_profiles_new(false, &p);
                r = slurm_conf_load(&c, path, false, p);
                ok(r == 0 && c.path && strcmp(c.profile, "default") == 0 && c.n_maps == 0 &&
                           c.on_error == SLURM_ON_ERROR_CONTINUE,
                   "conf/slurm.ini loads and keeps the built-in defaults");
                leash_profiles_free(p);
                slurm_conf_done(&c);
        }
        node_tests();
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
