/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash inside Slurm: the configuration (slurm.ini), which profile a job gets,
 * the cgroup layout and the state a job leaves between the Prolog, its
 * supervisor and the Epilog. No Slurm library is used: Slurm talks to leash
 * through its Prolog/Epilog/TaskProlog environment and the SPANK plugin
 * (src/slurm/spank_leash.c) through the supervisor's socket.
 *
 * The layout: <cgroup2>/leash/slurm/job_<ID> carries the job's limits (one
 * set for the whole job on this node); its children step_<batch|extern|
 * interactive|N> are leaves that only group processes, so that usage is
 * known per step. `leash run`'s sweep never looks under leash/slurm: its job
 * cgroups are named NAME@PID, these are not.
 *
 * The state of a job lives in <state-dir>/job_<ID>/: `state` (written by the
 * Prolog: who, which profile, the limits as applied, the supervisor's pid),
 * `verdict` (written by the supervisor as things happen: the limit reached,
 * the signals sent, the tasks placed) and `sock` (the supervisor's socket).
 * Both files are "key=value" lines, replaced atomically.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../engine/leash.h"
#include "slurm-node.h"

struct leash_profiles;

enum slurm_on_error {
        SLURM_ON_ERROR_CONTINUE, /* the job runs unconfined; the report says setup_error */
        SLURM_ON_ERROR_FAIL_JOB, /* its tasks are refused; the node stays up */
        SLURM_ON_ERROR_DRAIN,    /* the Prolog/Epilog fails: Slurm drains the node */
};

struct slurm_conf_map {
        char *key; /* "partition.NAME", "feature.NAME", "account.NAME" */
        char *profile;
        unsigned line;
};

#define SLURM_DEFAULT_STATE_DIR "/run/leash/slurm"
#define SLURM_DEFAULT_REPORT_DIR "/var/log/leash/slurm"
#define SLURM_PROFILE_NONE "none"

struct slurm_conf {
        char *path;    /* the slurm.ini read, NULL when there was none */
        char *profile; /* default profile; "none" = no confinement */
        struct slurm_conf_map *maps;
        size_t n_maps;
        char **user_profiles; /* profiles a user may ask for; "*" = any */
        size_t n_user_profiles;
        enum slurm_on_error on_error;
        char *state_dir, *report_dir;
        uint64_t kill_timeout_ns;
        uint64_t epilog_wait_ns; /* the per-job supervisor's wait for a late Epilog */
        enum slurm_mode mode;    /* own (default) or nest: slurm-node.h */
        unsigned seen;           /* keys already set (duplicate check) */
};

void slurm_conf_init(struct slurm_conf *c);
void slurm_conf_done(struct slurm_conf *c);
/* Reads <config_dir>/slurm.ini when it exists (absent: the defaults), with
 * the trust rules when trust; errors are recorded in errs as FILE:LINE. 0,
 * -EINVAL (errors recorded) or -ENOMEM. */
int slurm_conf_load(struct slurm_conf *c, const char *config_dir, bool trust, struct leash_profiles *errs);
int slurm_conf_load_buffer(struct slurm_conf *c, const char *name, const char *data, size_t size,
                           struct leash_profiles *errs);
const char *slurm_on_error_to_string(enum slurm_on_error e);

/* A job as Slurm describes it to the Prolog/Epilog (SLURM_* variables). */
struct slurm_job {
        uint32_t id;
        char user[64];
        uid_t uid;
        gid_t gid;
        char partition[128], account[128], features[512], node[128], cluster[128];
        char requested_profile[64]; /* --leash-profile, "" when not given */
        bool requested_too_long;    /* it did not fit: never a name */
};

/* Which profile the job gets: the user's --leash-profile when user-profiles
 * allows it, else account.NAME, partition.NAME, the first of the job's
 * features with a feature.NAME, else the default. ret_why: "account.x",
 * "default", "--leash-profile". -EPERM (why filled) for a forbidden request. */
int slurm_choose_profile(const struct slurm_conf *c, const struct slurm_job *j, const char **ret_profile,
                         const char **ret_why, char *why, size_t size);
bool slurm_user_profile_allowed(const struct slurm_conf *c, const char *profile);

/* "batch", "extern", "interactive" or the decimal step number, from a step
 * id as Slurm prints it (SLURM_STEP_ID; NULL or "" = batch). -EINVAL. */
int slurm_step_name(const char *step_id, char *buf, size_t size);
/* name is one that slurm_step_name gives (what a step cgroup may be called). */
bool slurm_step_valid(const char *name);

/* <cgroup2>/leash/slurm, made (0755) when create; controllers enabled in
 * leash/ and leash/slurm where the hierarchy offers them. */
int slurm_cgroup_root(bool create, char *ret_path, size_t size, int *ret_fd, unsigned *ret_available);
/* mkdir job_<id> under the root (a stale one from an earlier run of the same
 * id is killed and removed first), enable controllers for its steps. */
int slurm_job_cgroup_create(int root_fd, uint32_t job_id, int *ret_fd);
int slurm_job_cgroup_open(int root_fd, uint32_t job_id, int *ret_fd);
/* step_<name> under the job cgroup, made when create. */
int slurm_step_cgroup_open(int job_fd, const char *step, bool create, int *ret_fd);
/* Calls fn for each step cgroup of the job (name "step_X" and an fd). */
typedef void (*slurm_step_fn)(void *userdata, const char *dirname, int step_fd);
int slurm_for_each_step(int job_fd, slurm_step_fn fn, void *userdata);
/* The signal to every process of the job and its steps; how many got it. */
int slurm_tree_signal(int job_fd, int sig);
/* Removes the steps and the job cgroup (kills what is left first). */
int slurm_job_cgroup_remove(int root_fd, uint32_t job_id);

/* State files: "key=value\n" lines in the format of src/basic/kvfile.h. */
/* Writes text to dir_fd/name atomically (a temporary file, then rename),
 * mode 0644, owned by the caller. */
int slurm_file_replace(int dir_fd, const char *name, const char *text);

/* The Epilog's report: the `leash run` schema plus slurm{}, steps[] and
 * errors[] (written through report.h: json-c stays in report.c). */
struct slurm_step_usage {
        char name[40]; /* "batch", "0", ... */
        struct leash_usage usage;
        unsigned leftovers_killed;
};

struct slurm_report {
        const struct slurm_job *job;
        const char *profile_why; /* "partition.debug", "--leash-profile", ... */
        const char *on_error;
        unsigned tasks_placed;
        bool nest; /* mode nest: Slurm placed the tasks, leash adopted its cgroups */
        const struct slurm_step_usage *steps;
        size_t n_steps;
        char *const *errors;
        size_t n_errors;
};

int slurm_report_format(const struct leash_spec *c, const struct leash_result *r, const struct slurm_report *s,
                        char **ret_text);
