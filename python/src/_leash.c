/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash._leash: the job object of libleash (<leash/leash.h>) as a Python
 * type. Thin on purpose: the Python modules decide what a call means; this
 * file only carries settings in, the fork, the pollable fd and the report
 * out, and converts -errno into exceptions.
 *
 * The GIL is held across every libleash call but the blocking wait. The
 * library forks an interpreter that has threads with glibc's fork(), which
 * takes the malloc locks that C code running without the GIL may hold
 * (libcfork.c), and one with a single thread with clone3; the Python
 * runtime's own fork hooks (PyOS_BeforeFork/AfterFork_*) run around the
 * call as os.fork() runs them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <leash/leash.h>

#include "basic/parse.h"
#include "pickle-decode.h"

static PyObject *setup_error_type;    /* leash._errors.SetupError */
static PyObject *result_refused_type; /* leash._errors.ResultRefused */

typedef struct {
        PyObject_HEAD struct leash_job *job;
        int ended;
        int finished;
        pid_t owner;                             /* the process that created the job: a forked child never frees it */
        int sampler_set;                         /* the library calls sample_cb for this job */
        PyObject *sampler;                       /* sampler(figures, step, last), or NULL */
        PyObject *err_type, *err_value, *err_tb; /* raised by the sampler, re-raised by dispatch()/wait() */
} JobObject;

/* A leash_config with the caller's settings applied, for many jobs: a
 * limited function's calls share one, so that each call allocates and sets
 * none (the allocations are copy-on-write faults after the last call's
 * fork). The configuration files are checked by each job (read again when
 * one changed: settings/config.c). */
#define CHILD_KEEP_MAX 64
typedef struct {
        PyObject_HEAD struct leash_config *config;
        int env_paths;            /* the directories follow the environment, checked at each job */
        char *env_dir, *env_user; /* what the environment said last (NULL: not set) */
        /* child_fds (issue 38): the forked function closes every fd above 2
         * but its result pipe and keep[] (sorted) before it runs */
        int close_fds, n_keep;
        int keep[CHILD_KEEP_MAX];
} ConfigObject;

static PyTypeObject ConfigType;
static PyTypeObject JobType;

static int sampler_raise(JobObject *self);
static PyObject *Job_set_sampler(JobObject *self, PyObject *fn);

static PyObject *raise_setup(int r, const struct leash_error *err, const char *what) {
        int e = r < 0 ? -r : (err && err->error ? err->error : EIO);
        const char *step = err && err->step ? err->step : what;
        PyObject *msg, *exc;

        if (err && err->detail[0] && step[0] == '-') /* an option's value, said in full (as leash run says it) */
                msg = PyUnicode_FromFormat("leash: %s: %s", step, err->detail);
        else if (err && err->detail[0])
                msg = PyUnicode_FromFormat("leash: %s: %s: %s", step, err->detail, strerror(e));
        else
                msg = PyUnicode_FromFormat("leash: %s: %s", step, strerror(e));
        if (!msg)
                return NULL;
        exc = PyObject_CallFunction(setup_error_type, "(Nis)", msg, e, step);
        if (!exc)
                return NULL;
        PyErr_SetObject(setup_error_type, exc);
        Py_DECREF(exc);
        return NULL;
}

static int set_one(struct leash_config *config, const char *key, PyObject *value) {
        struct leash_error err = {0};
        const char *v = NULL;
        int r;

        if (value != Py_None) {
                if (!PyUnicode_Check(value)) {
                        PyErr_Format(PyExc_TypeError, "leash: %s: the value must be a string, not %R", key, value);
                        return -1;
                }
                v = PyUnicode_AsUTF8(value);
                if (!v)
                        return -1;
        }
        r = leash_config_set(config, key, v, &err);
        if (r == -ENOENT) {
                PyErr_Format(PyExc_TypeError, "leash: unknown option '%s'", key);
                return -1;
        }
        if (r < 0) {
                if (r == -EINVAL || r == -ERANGE)
                        PyErr_Format(PyExc_ValueError, "leash: %s: %s", key,
                                     err.detail[0] ? err.detail : (v ? v : "invalid"));
                else
                        raise_setup(r, &err, "set an option");
                return -1;
        }
        return 0;
}

static int apply_settings(struct leash_config *config, PyObject *settings, const char *name) {
        PyObject *seq = PySequence_Fast(settings, "settings must be a sequence of (key, value) pairs");
        Py_ssize_t n;

        if (!seq)
                return -1;
        n = PySequence_Fast_GET_SIZE(seq);
        for (Py_ssize_t i = 0; i < n; i++) {
                PyObject *pair = PySequence_Fast_GET_ITEM(seq, i), *k, *v;
                const char *key;

                if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
                        PyErr_SetString(PyExc_TypeError, "settings must be (key, value) pairs");
                        goto fail;
                }
                k = PyTuple_GET_ITEM(pair, 0);
                v = PyTuple_GET_ITEM(pair, 1);
                key = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
                if (!key) {
                        if (!PyErr_Occurred())
                                PyErr_SetString(PyExc_TypeError, "a setting's key must be a string");
                        goto fail;
                }
                if (set_one(config, key, v) < 0)
                        goto fail;
        }
        Py_DECREF(seq);
        if (name) {
                PyObject *nm = PyUnicode_FromString(name);
                int r;

                if (!nm)
                        return -1;
                r = set_one(config, "name", nm);
                Py_DECREF(nm);
                return r;
        }
        return 0;
fail:
        Py_DECREF(seq);
        return -1;
}

/* The configuration directories, as `leash run` finds them: LEASH_CONFIG_DIR
 * when absolute (the library reads no environment: its caller does), and a
 * user's own profiles.d when not root ($XDG_CONFIG_HOME/leash/profiles.d,
 * else $HOME/.config/leash/profiles.d, each only when absolute). Given as
 * arguments (None: not set) or, when both are omitted, read here from the
 * environment, which os.environ's assignments reach through putenv(). */
static int paths_from_env(const char **ret_config, char **ret_user) {
        const char *env = getenv("LEASH_CONFIG_DIR"), *xdg, *home;
        int n = 0;

        *ret_config = env && env[0] == '/' ? env : NULL;
        *ret_user = NULL;
        if (geteuid() == 0)
                return 0;
        /* on the heap: this runs for every job, and a frame of a page more
         * costs a forked caller a fault per call (bench/NOTES.md, row 10) */
        xdg = getenv("XDG_CONFIG_HOME");
        home = getenv("HOME");
        if (xdg && xdg[0] == '/')
                n = asprintf(ret_user, "%s/leash/profiles.d", xdg);
        else if (home && home[0] == '/')
                n = asprintf(ret_user, "%s/.config/leash/profiles.d", home);
        if (n < 0) {
                *ret_user = NULL;
                PyErr_NoMemory();
                return -1;
        }
        return 0;
}

static int set_paths(struct leash_config *config, const char *c, const char *u) {
        int r = leash_config_set_paths(config, c, u);

        if (r < 0) {
                raise_setup(r, NULL, "set the configuration directories");
                return -1;
        }
        return 0;
}

/* the directories given; both omitted: *ret_env set, for the caller to
 * take them from the environment */
static int apply_paths(struct leash_config *config, PyObject *config_dir, PyObject *user_dir, int *ret_env) {
        const char *c = NULL, *u = NULL;

        *ret_env = !config_dir && !user_dir;
        if (config_dir && config_dir != Py_None && !(c = PyUnicode_AsUTF8(config_dir)))
                return -1;
        if (user_dir && user_dir != Py_None && !(u = PyUnicode_AsUTF8(user_dir)))
                return -1;
        return c || u ? set_paths(config, c, u) : 0;
}

/* a fresh leash_config with the directories given and the settings applied,
 * or NULL with an exception set */
static struct leash_config *config_make(PyObject *settings, const char *name, PyObject *config_dir, PyObject *user_dir,
                                        int *ret_env) {
        struct leash_config *config = NULL;
        int r = leash_config_new(&config);

        if (r < 0) {
                raise_setup(r, NULL, "allocate a configuration");
                return NULL;
        }
        if (apply_paths(config, config_dir, user_dir, ret_env) < 0 || apply_settings(config, settings, name) < 0) {
                leash_config_free(config);
                return NULL;
        }
        return config;
}

static int same_path(const char *a, const char *b) {
        return a == b || (a && b && strcmp(a, b) == 0);
}

static int copy_path(char **field, const char *v) {
        char *d = v ? strdup(v) : NULL;

        if (v && !d) {
                PyErr_NoMemory();
                return -1;
        }
        free(*field);
        *field = d;
        return 0;
}

/* A shared config whose directories follow the environment: changed where
 * the environment changed since the last job (as `leash run` would read it
 * now); most jobs find it unchanged and write nothing. */
static int config_follow_env(ConfigObject *cfg) {
        const char *c;
        char *u;
        int r = 0;

        if (!cfg->env_paths)
                return 0;
        if (paths_from_env(&c, &u) < 0)
                return -1;
        if (!same_path(c, cfg->env_dir) || !same_path(u, cfg->env_user))
                if (set_paths(cfg->config, c, u) < 0 || copy_path(&cfg->env_dir, c) < 0 ||
                    copy_path(&cfg->env_user, u) < 0)
                        r = -1;
        free(u);
        return r;
}

/* child_fds: None (the child inherits the caller's fds) or a sequence of
 * fds above 2 to keep, all others closed */
static int child_fds_set(ConfigObject *self, PyObject *fds) {
        PyObject *seq;
        Py_ssize_t n;

        self->close_fds = fds && fds != Py_None;
        self->n_keep = 0;
        if (!self->close_fds)
                return 0;
        seq = PySequence_Fast(fds, "leash: child_fds must be None or a sequence of fds");
        if (!seq)
                return -1;
        n = PySequence_Fast_GET_SIZE(seq);
        for (Py_ssize_t i = 0; i < n; i++) {
                long fd = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
                if (fd < 3 || fd > INT_MAX || self->n_keep >= CHILD_KEEP_MAX) {
                        Py_DECREF(seq);
                        if (!PyErr_Occurred())
                                PyErr_Format(PyExc_ValueError, "leash: child_fds: %ld: expected at most %d fds above 2",
                                             fd, CHILD_KEEP_MAX);
                        return -1;
                }
                int j = self->n_keep++;
                for (; j > 0 && self->keep[j - 1] > (int) fd; j--)
                        self->keep[j] = self->keep[j - 1];
                self->keep[j] = (int) fd;
        }
        Py_DECREF(seq);
        return 0;
}

static int Config_init(ConfigObject *self, PyObject *args, PyObject *kwds) {
        static char *kwlist[] = {(char *) "settings", (char *) "name",      (char *) "config_dir",
                                 (char *) "user_dir", (char *) "child_fds", NULL};
        PyObject *settings, *config_dir = NULL, *user_dir = NULL, *child_fds = NULL;
        const char *name = NULL;

        if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|zOOO", kwlist, &settings, &name, &config_dir, &user_dir,
                                         &child_fds))
                return -1;
        if (self->config) {
                PyErr_SetString(PyExc_RuntimeError, "leash: a Config is initialised once");
                return -1;
        }
        if (child_fds_set(self, child_fds) < 0)
                return -1;
        self->config = config_make(settings, name, config_dir, user_dir, &self->env_paths);
        return self->config ? config_follow_env(self) : -1;
}

static void Config_dealloc(ConfigObject *self) {
        leash_config_free(self->config);
        free(self->env_dir);
        free(self->env_user);
        Py_TYPE(self)->tp_free((PyObject *) self);
}

static PyTypeObject ConfigType = {
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "leash._leash.Config",
        .tp_basicsize = sizeof(ConfigObject),
        .tp_dealloc = (destructor) Config_dealloc,
        .tp_flags = Py_TPFLAGS_DEFAULT,
        .tp_doc = "Config(settings, name=None, config_dir=None, user_dir=None, child_fds=None)\n\n"
                  "Settings checked once for many jobs: Job(config) makes a job from them without setting "
                  "them again. The configuration files are read by each job, so an edited profile is seen by "
                  "the next one; directories omitted follow the environment at each job. child_fds: None, "
                  "the function forked by call() inherits the caller's fds; else a sequence of fds above 2 "
                  "it keeps, every other fd above 2 but its result pipe closed before it runs.",
        .tp_init = (initproc) Config_init,
        .tp_new = PyType_GenericNew,
};

/* the job from a shared Config, or from settings given for this job alone */
static int job_new(JobObject *self, PyObject *settings, const char *name, PyObject *config_dir, PyObject *user_dir,
                   struct leash_error *err) {
        struct leash_config *own = NULL;
        int env, r;

        if (PyObject_TypeCheck(settings, &ConfigType)) {
                ConfigObject *cfg = (ConfigObject *) settings;
                if (name || config_dir || user_dir) {
                        PyErr_SetString(PyExc_TypeError,
                                        "leash: Job(config): the name and directories are the Config's");
                        return -1;
                }
                if (!cfg->config) {
                        PyErr_SetString(PyExc_RuntimeError, "leash: the Config was not initialised");
                        return -1;
                }
                if (config_follow_env(cfg) < 0)
                        return -1;
                return leash_job_new(cfg->config, &self->job, err);
        }
        own = config_make(settings, name, config_dir, user_dir, &env);
        if (!own)
                return -1;
        if (env) {
                char *u = NULL;
                const char *c;

                r = paths_from_env(&c, &u) < 0 || ((c || u) && set_paths(own, c, u) < 0) ? -1 : 0;
                free(u);
                if (r < 0) {
                        leash_config_free(own);
                        return -1;
                }
        }
        r = leash_job_new(own, &self->job, err);
        /* the job keeps what it built from the settings: freed now, before any
         * fork, the settings cost no copy-on-write fault when freed later */
        leash_config_free(own);
        return r;
}

static int Job_init(JobObject *self, PyObject *args, PyObject *kwds) {
        static char *kwlist[] = {(char *) "settings", (char *) "name", (char *) "config_dir", (char *) "user_dir",
                                 NULL};
        PyObject *settings, *config_dir = NULL, *user_dir = NULL;
        const char *name = NULL;
        struct leash_error err = {0};
        int r;

        if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|zOO", kwlist, &settings, &name, &config_dir, &user_dir))
                return -1;
        if (self->job) {
                PyErr_SetString(PyExc_RuntimeError, "leash: a Job is initialised once");
                return -1;
        }
        r = job_new(self, settings, name, config_dir, user_dir, &err);
        if (r == -1 && PyErr_Occurred())
                return -1;
        if (r < 0) {
                self->job = NULL;
                if (r == -EINVAL || r == -ERANGE)
                        PyErr_Format(PyExc_ValueError, "leash: %s: %s", err.step ? err.step : "invalid settings",
                                     err.detail[0] ? err.detail : strerror(-r));
                else
                        raise_setup(r, &err, "create the job");
                return -1;
        }
        self->owner = getpid();
        return 0;
}

static void job_release(JobObject *self) {
        /* a forked child that never exec'd must not kill or remove its own job */
        if (self->job && self->owner == getpid())
                leash_job_free(self->job);
        self->job = NULL;
}

static void Job_dealloc(JobObject *self) {
        job_release(self);
        Py_CLEAR(self->sampler);
        Py_CLEAR(self->err_type);
        Py_CLEAR(self->err_value);
        Py_CLEAR(self->err_tb);
        Py_TYPE(self)->tp_free((PyObject *) self);
}

static int need_job(JobObject *self) {
        if (!self->job) {
                PyErr_SetString(PyExc_ValueError, "leash: the job is closed");
                return -1;
        }
        return 0;
}

/* fork(keep=()): the fds in keep (made by pipe(): private) reach the child,
 * and are closed in the parent; no Python code runs between the two, so no
 * other thread's child gets them. */
static int keep_list(PyObject *keep, int *fds, Py_ssize_t max, Py_ssize_t *ret_n) {
        PyObject *seq = PySequence_Fast(keep, "keep must be a sequence of fds");
        Py_ssize_t n;

        if (!seq)
                return -1;
        n = PySequence_Fast_GET_SIZE(seq);
        if (n > max) {
                Py_DECREF(seq);
                PyErr_SetString(PyExc_ValueError, "leash: fork: too many fds to keep");
                return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
                fds[i] = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
                if (fds[i] < 0) {
                        Py_DECREF(seq);
                        if (!PyErr_Occurred())
                                PyErr_SetString(PyExc_ValueError, "leash: fork: a negative fd");
                        return -1;
                }
        }
        Py_DECREF(seq);
        *ret_n = n;
        return 0;
}

static PyObject *Job_fork(JobObject *self, PyObject *args, PyObject *kwds) {
        static char *kwlist[] = {(char *) "keep", NULL};
        struct leash_error err = {0};
        PyObject *keep = NULL;
        Py_ssize_t n = 0;
        int fds[8];
        pid_t pid;

        if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O", kwlist, &keep) || need_job(self) < 0 ||
            (keep && keep_list(keep, fds, 8, &n) < 0))
                return NULL;
        PyOS_BeforeFork();
        for (Py_ssize_t i = 0; i < n; i++)
                (void) leash_fd_private(fds[i], false);
        pid = leash_job_fork(self->job, &err);
        if (pid == 0) {
                PyOS_AfterFork_Child();
                return PyLong_FromLong(0);
        }
        for (Py_ssize_t i = 0; i < n; i++)
                close(fds[i]);
        PyOS_AfterFork_Parent();
        if (pid < 0) {
                self->ended = leash_job_ended(self->job) > 0;
                return raise_setup(pid, &err, "fork into the job");
        }
        return PyLong_FromLong(pid);
}

static PyObject *Job_start(JobObject *self, PyObject *arg) {
        struct leash_error err = {0};
        PyObject *seq;
        char **argv;
        Py_ssize_t n;
        int r;

        if (need_job(self) < 0)
                return NULL;
        seq = PySequence_Fast(arg, "argv must be a sequence of strings");
        if (!seq)
                return NULL;
        n = PySequence_Fast_GET_SIZE(seq);
        if (n == 0) {
                Py_DECREF(seq);
                PyErr_SetString(PyExc_ValueError, "leash: argv is empty");
                return NULL;
        }
        argv = calloc((size_t) n + 1, sizeof(char *));
        if (!argv) {
                Py_DECREF(seq);
                return PyErr_NoMemory();
        }
        for (Py_ssize_t i = 0; i < n; i++) {
                PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
                argv[i] = PyUnicode_Check(o) ? (char *) PyUnicode_AsUTF8(o) : NULL;
                if (!argv[i]) {
                        if (!PyErr_Occurred())
                                PyErr_Format(PyExc_TypeError, "leash: argv[%zd] is not a string: %R", i, o);
                        free(argv);
                        Py_DECREF(seq);
                        return NULL;
                }
        }
        r = leash_job_start(self->job, argv, &err);
        free(argv);
        Py_DECREF(seq);
        /* A failed exec or setup has ended the job: its report says why. */
        return PyLong_FromLong(r < 0 ? -r : 0);
}

static PyObject *Job_fileno(JobObject *self, PyObject *unused) {
        int fd;

        if (need_job(self) < 0)
                return NULL;
        fd = leash_job_fd(self->job);
        if (fd < 0)
                return raise_setup(fd, NULL, "get the job's fd");
        return PyLong_FromLong(fd);
}

/* leash_job_dispatch() once: 1 ended, 0 runs, -1 with an exception set */
static int dispatch_once(JobObject *self) {
        int r;

        if (self->ended)
                return 1;
        r = leash_job_dispatch(self->job);
        if (r > 0)
                self->ended = 1;
        if (sampler_raise(self) < 0)
                return -1;
        if (r < 0) {
                raise_setup(r, NULL, "supervise the job");
                return -1;
        }
        return r > 0;
}

static PyObject *Job_dispatch(JobObject *self, PyObject *unused) {
        int r;

        if (need_job(self) < 0)
                return NULL;
        r = dispatch_once(self);
        return r < 0 ? NULL : PyBool_FromLong(r);
}

/* ---- supervising a forked call ----------------------------------------------
 * What leash.limit does between the fork and finish(), in one call instead of
 * a Python loop: poll the result pipe and the job's fd (the GIL released),
 * keep what the child writes, dispatch the job's events, until the job has
 * ended. After a fork, every page the caller writes costs it a copy-on-write
 * fault; a Python loop of poll objects, bound methods and chunk lists writes
 * many more pages than this buffer does. */

struct grow_buf {
        char *data;
        size_t len, cap;
        size_t max;      /* the cap: more than this is not kept (max_result) */
        bool too_big;    /* more than max came: the job was killed, data freed */
        PyObject *loads; /* decodes an R frame's payload */
        PyObject *value; /* the R frame decoded (NULL: not, or it failed) */
        PyObject *error; /* the Exception the decoder raised (NULL: none) */
};

enum { READ_EOF, READ_DATA, READ_AGAIN };

/* reads what rfd (non-blocking) has into b: READ_EOF, READ_DATA,
 * READ_AGAIN (nothing there now), -EFBIG (more than b->max), -errno. The
 * buffer grows only when full, never past max + 1: a small result is one
 * 4 KiB allocation, and the read that finds EOF never moves what is
 * already there (it did, 16 pages copied per call, each a copy-on-write
 * fault after the fork). */
static int read_some(int rfd, struct grow_buf *b) {
        ssize_t n;

        if (b->len > b->max)
                return -EFBIG;
        if (b->cap == b->len) {
                size_t cap = b->cap ? b->cap * 2 : 4096;
                char *d;

                if (cap > b->max + 1)
                        cap = b->max + 1;
                d = realloc(b->data, cap);
                if (!d)
                        return -ENOMEM;
                b->data = d;
                b->cap = cap;
        }
        do
                n = read(rfd, b->data + b->len, b->cap - b->len);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno == EAGAIN ? READ_AGAIN : -errno;
        b->len += (size_t) n;
        if (b->len > b->max)
                return -EFBIG;
        return n > 0 ? READ_DATA : READ_EOF;
}

/* The result passed its cap: nothing of it is kept, the job is killed now
 * (supervision goes on until it has ended), the pipe no longer read. */
static void result_too_big(JobObject *self, struct grow_buf *b) {
        free(b->data);
        b->data = NULL;
        b->len = b->cap = 0;
        b->too_big = true;
        (void) leash_job_kill(self->job, LEASH_KILL_NOW);
}

/* poll() with the GIL released: n ready, or -errno */
static int poll_released(struct pollfd *p, nfds_t n, int ms) {
        int r;

        Py_BEGIN_ALLOW_THREADS r = poll(p, n, ms);
        if (r < 0)
                r = -errno;
        Py_END_ALLOW_THREADS return r;
}

/* An R frame's payload decoded into b->value, once, by call_result: after
 * the job has ended and been finished, never inside supervision, so that
 * no decode holds a job's limits open or another thread's supervision
 * (issue 38: a hostile frame kept its function running 15.6 s past its
 * limits when it was decoded at the pipe's EOF). A decoder's Exception
 * goes into b->error, for the caller to report with the job's report (the
 * frame is not decoded again); KeyboardInterrupt and the like propagate
 * (-1). */
static int decode_result(struct grow_buf *b) {
        PyObject *payload, *type, *tb;

        if (!b->loads || b->too_big || b->len < 1 || b->data[0] != 'R')
                return 0;
        payload = PyBytes_FromStringAndSize(b->data + 1, (Py_ssize_t) b->len - 1);
        if (!payload)
                return -1;
        b->value = PyObject_CallFunctionObjArgs(b->loads, payload, NULL); /* 3.8 has no CallOneArg */
        Py_DECREF(payload);
        if (b->value || !PyErr_ExceptionMatches(PyExc_Exception))
                return b->value ? 0 : -1;
        PyErr_Fetch(&type, &b->error, &tb);
        PyErr_NormalizeException(&type, &b->error, &tb);
        Py_XDECREF(type);
        Py_XDECREF(tb);
        return 0;
}

/* Until the job has ended: rfd drained into b while it is open, the job's
 * events dispatched. 0, or -1 with an exception set (b keeps what came). */
static int supervise_into(JobObject *self, int rfd, int wake_ms, struct grow_buf *b) {
        int open_r = rfd >= 0, jfd = leash_job_fd(self->job);

        if (jfd < 0) {
                raise_setup(jfd, NULL, "get the job's fd");
                return -1;
        }
        if (dispatch_once(self) < 0)
                return -1;
        while (!self->ended) {
                struct pollfd p[2] = {{.fd = jfd, .events = POLLIN}, {.fd = rfd, .events = POLLIN}};
                int n = poll_released(p, open_r ? 2 : 1, wake_ms), r;

                if (n < 0 && n != -EINTR) {
                        errno = -n;
                        PyErr_SetFromErrno(PyExc_OSError);
                        return -1;
                }
                /* a signal, or the main thread's periodic wake: its handlers
                 * run here (Ctrl-C becomes KeyboardInterrupt) */
                if (n <= 0) {
                        if (PyErr_CheckSignals() < 0)
                                return -1;
                        continue;
                }
                if (open_r && p[1].revents) {
                        r = read_some(rfd, b);
                        if (r == -EFBIG)
                                result_too_big(self, b);
                        else if (r < 0) {
                                errno = -r;
                                PyErr_SetFromErrno(PyExc_OSError);
                                return -1;
                        }
                        open_r = r > 0;
                }
                if (p[0].revents && dispatch_once(self) < 0)
                        return -1;
        }
        return 0;
}

static PyObject *Job_wait(JobObject *self, PyObject *unused) {
        int r;

        if (need_job(self) < 0)
                return NULL;
        Py_BEGIN_ALLOW_THREADS r = leash_job_wait(self->job);
        Py_END_ALLOW_THREADS if (r < 0) return raise_setup(r, NULL, "wait for the job");
        self->ended = 1;
        if (sampler_raise(self) < 0)
                return NULL;
        Py_RETURN_NONE;
}

static PyObject *Job_kill(JobObject *self, PyObject *args) {
        int now = 0, r;

        if (!PyArg_ParseTuple(args, "|p", &now) || need_job(self) < 0)
                return NULL;
        r = leash_job_kill(self->job, now ? LEASH_KILL_NOW : LEASH_KILL_LADDER);
        if (r < 0)
                return raise_setup(r, NULL, "kill the job");
        Py_RETURN_NONE;
}

static PyObject *Job_interrupt(JobObject *self, PyObject *args) {
        int sig, r;

        if (!PyArg_ParseTuple(args, "i", &sig) || need_job(self) < 0)
                return NULL;
        r = leash_job_interrupt(self->job, sig);
        if (r < 0)
                return raise_setup(r, NULL, "interrupt the job");
        Py_RETURN_NONE;
}

static PyObject *report_text(JobObject *self, enum leash_format f) {
        char *text = NULL;
        PyObject *o;
        int r = leash_job_report(self->job, f, &text);

        if (r < 0)
                return raise_setup(r, NULL, "write the report");
        o = PyUnicode_DecodeUTF8(text, (Py_ssize_t) strlen(text), "surrogateescape");
        free(text);
        return o;
}

static PyObject *Job_finish(JobObject *self, PyObject *args) {
        struct leash_error err = {0};
        int r, report = 1;

        if (!PyArg_ParseTuple(args, "|p", &report) || need_job(self) < 0)
                return NULL;
        if (!self->finished) {
                r = leash_job_finish(self->job, &err);
                if (r < 0)
                        return raise_setup(r, &err, "finish the job");
                self->finished = 1;
                self->ended = 1;
        }
        if (!report)
                Py_RETURN_NONE;
        return report_text(self, LEASH_FORMAT_JSON);
}

/* ---- one forked call ---------------------------------------------------------
 * call(func, args, kwargs, wake_ms, (dumps, protocol, failed, loads)) -> (ok,
 * obj): what leash.limit's fork context does between making the job and
 * deciding the outcome, in one C call: a close-on-exec result pipe (1 MiB
 * when the host allows), sys.stdout and sys.stderr flushed, the fork into
 * the job; in the child, call_child() below, which never returns; in the
 * parent, supervision until the job has ended, finish() (accounted and
 * removed; the report is made only when asked for), the pipe drained to EOF
 * (every writer is dead by then), and a result unpickled. On an exception
 * (KeyboardInterrupt, a failed poll) the job is killed and waited for before
 * it propagates. In C because, after the fork, every page the caller writes
 * costs it a copy-on-write fault (16 us each on the bench machine), and the
 * same steps in Python wrote about a hundred more pages per call
 * (bench/NOTES.md, row 10). */

static int result_pipe(int fds[2]) {
        int e;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        /* marked private: no other job's child inherits it */
        e = leash_fd_private(fds[0], true);
        if (e < 0) {
                close(fds[0]);
                close(fds[1]);
                return e;
        }
        return 0;
}

/* Kill the job at once and wait until it has ended; the pending exception is
 * kept. A failing dispatch stops the wait: the kill was sent, and close()
 * removes what is left. */
static void abort_job(JobObject *self) {
        PyObject *type, *value, *tb;

        PyErr_Fetch(&type, &value, &tb);
        (void) leash_job_kill(self->job, LEASH_KILL_NOW);
        while (!self->ended) {
                struct pollfd p = {.fd = leash_job_fd(self->job), .events = POLLIN};
                int r = leash_job_dispatch(self->job);

                if (r != 0) {
                        self->ended = r > 0;
                        break;
                }
                if (p.fd < 0 || poll_released(&p, 1, 1000) < 0)
                        break;
        }
        PyErr_Restore(type, value, tb);
}

static PyObject *raise_errno(int r) {
        errno = -r;
        return PyErr_SetFromErrno(PyExc_OSError);
}

static int write_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

/* The frame: its tag byte and the payload in one writev, so that the
 * caller wakes for the frame once, not for the tag alone first. */
static int write_frame(int fd, char tag, const char *p, size_t n) {
        struct iovec iov[2] = {{.iov_base = &tag, .iov_len = 1}, {.iov_base = (void *) p, .iov_len = n}};
        ssize_t k;

        do
                k = writev(fd, iov, 2);
        while (k < 0 && errno == EINTR);
        if (k < 0)
                return -errno;
        if (k == 0)
                return -EIO; /* not for a pipe with bytes to take */
        /* the tag went first: the rest of the payload, if the pipe took part */
        return write_all(fd, p + (k - 1), n - (size_t) (k - 1));
}

/* sys.stdout and sys.stderr flushed (the caller's before the fork, the
 * child's before it exits), errors ignored: a closed or broken stream must
 * not change the call's outcome. The method called by an interned name,
 * without a bound method made per stream (3.9+): each object this path makes
 * or touches is a copy-on-write fault after the last call's fork. */
static PyObject *str_flush, *str_report;

static void flush_std(void) {
        static const char *const names[] = {"stdout", "stderr"};

        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
                PyObject *f = PySys_GetObject(names[i]), *r; /* borrowed */
                if (!f || f == Py_None)
                        continue;
#if PY_VERSION_HEX >= 0x03090000
                r = PyObject_CallMethodNoArgs(f, str_flush);
#else
                r = PyObject_CallMethodObjArgs(f, str_flush, NULL);
#endif
                if (r)
                        Py_DECREF(r);
                else
                        PyErr_Clear();
        }
}

/*
 * The child of call(): func(*args, **kwargs), its value pickled with
 * dumps(value, protocol), the frame "R" + pickle written to wfd, the
 * function's output flushed, exit 0 (2 when the frame could not be written).
 * When the function or the pickling raises, failed(wfd, exception) writes the
 * "E" frame and exits. In C, not in Python, because each page the child
 * writes is a copy-on-write fault on its way to the result: the Python
 * version's frames and objects cost about twenty.
 */
/* In the forked child, before the function runs: every fd above 2 closed
 * but the result pipe's write end and keep[] (sorted, above 2), so that a
 * function run as another user, or behind a device allow-list, holds none
 * of the caller's files or device nodes (a CUDA context's /dev/nvidia*, a
 * root-only file). close_range (5.9) over each gap, else one close per fd
 * up to RLIMIT_NOFILE's soft limit; failing, the child exits before it runs
 * anything (the report says exit 125). */
static void close_gap(int lo, int hi, rlim_t max) {
        if (hi < lo)
                return;
        if (syscall(SYS_close_range, (unsigned) lo, (unsigned) hi, 0) == 0)
                return;
        if (errno != ENOSYS)
                _exit(125);
        for (long fd = lo; fd <= hi && fd < (long) max; fd++)
                (void) close((int) fd);
}

static void child_close_fds(int wfd, const int *keep, int n_keep) {
        int all[CHILD_KEEP_MAX + 1], n = 0, j, lo = 3;
        struct rlimit rl;

        for (int i = 0; i < n_keep; i++)
                if (keep[i] != wfd)
                        all[n++] = keep[i];
        for (j = n++; j > 0 && all[j - 1] > wfd; j--) /* wfd in its sorted place */
                all[j] = all[j - 1];
        all[j] = wfd;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                rl.rlim_cur = 65536;
        for (int i = 0; i < n; i++) {
                close_gap(lo, all[i] - 1, rl.rlim_cur);
                if (all[i] + 1 > lo)
                        lo = all[i] + 1;
        }
        close_gap(lo, INT_MAX, rl.rlim_cur);
}

static _Noreturn void call_child(int wfd, PyObject *func, PyObject *args, PyObject *kwargs, PyObject *dumps,
                                 PyObject *protocol, PyObject *failed) {
        PyObject *value, *payload = NULL, *type, *exc, *tb;
        int status = 0;

        PyOS_AfterFork_Child();
        value = PyObject_Call(func, args, kwargs);
        if (value) {
                payload = PyObject_CallFunctionObjArgs(dumps, value, protocol, NULL);
                Py_DECREF(value);
                if (payload && !PyBytes_Check(payload)) {
                        Py_CLEAR(payload);
                        PyErr_SetString(PyExc_TypeError, "leash: the pickler did not return bytes");
                }
        }
        if (!payload) {
                PyErr_Fetch(&type, &exc, &tb);
                PyErr_NormalizeException(&type, &exc, &tb);
                if (exc && tb)
                        PyException_SetTraceback(exc, tb);
                Py_XDECREF(PyObject_CallFunction(failed, "iO", wfd, exc ? exc : Py_None));
                _exit(2); /* failed() exits itself */
        }
        if (write_frame(wfd, 'R', PyBytes_AS_STRING(payload), (size_t) PyBytes_GET_SIZE(payload)) < 0)
                status = 2; /* a broken pipe: the report tells the parent what happened */
        /* closed now, not by the exit: the parent decodes the frame while
         * this process exits (call_collect) */
        close(wfd);
        flush_std();
        _exit(status);
}

/* (True, value) when the job's reason is "ok" and the frame is a result that
 * b->loads unpickles (decode_result); (None, the exception) when it raised
 * one; else (False, all the child wrote), for the caller to decode with the
 * report. Unpickled here because every object the caller touches after the
 * fork costs it a copy-on-write fault. */
static PyObject *call_result(JobObject *self, struct grow_buf *b) {
        PyObject *data, *value;

        if (leash_job_reason(self->job) == LEASH_REASON_OK) {
                if (decode_result(b) < 0)
                        return NULL;
                if (b->value) {
                        value = b->value;
                        b->value = NULL;
                        return Py_BuildValue("(ON)", Py_True, value);
                }
                if (b->error) {
                        value = b->error;
                        b->error = NULL;
                        return Py_BuildValue("(ON)", Py_None, value);
                }
        }
        data = PyBytes_FromStringAndSize(b->data ? b->data : "", (Py_ssize_t) b->len);
        return data ? Py_BuildValue("(ON)", Py_False, data) : NULL;
}

/* after the fork, in the parent: the job supervised to its end, finished,
 * the pipe drained, the result made */
static PyObject *call_collect(JobObject *self, int rfd, int wake_ms, struct grow_buf b, PyObject *loads) {
        struct leash_error err = {0};
        PyObject *ret = NULL;
        int r = READ_EOF;

        b.loads = loads;
        if (supervise_into(self, rfd, wake_ms, &b) < 0) {
                abort_job(self);
                goto out;
        }
        r = leash_job_finish(self->job, &err);
        if (r < 0) {
                raise_setup(r, &err, "finish the job");
                goto out;
        }
        self->finished = self->ended = 1;
        /* What is in the pipe now is all the job wrote: every process of it
         * has ended. A writer that is still there left the job (or was
         * handed the fd): its bytes are not waited for, so it cannot hold
         * the caller (read_some never blocks: rfd is O_NONBLOCK). */
        while (!b.too_big && (r = read_some(rfd, &b)) == READ_DATA)
                ;
        if (!b.too_big && r == -EFBIG)
                result_too_big(self, &b);
        else if (!b.too_big && r < 0) {
                raise_errno(r);
                goto out;
        }
        if (b.too_big)
                ret = Py_BuildValue("(OK)", Py_False, (unsigned long long) b.max);
        else
                ret = call_result(self, &b);
out:
        Py_XDECREF(b.value);
        Py_XDECREF(b.error);
        free(b.data);
        return ret;
}

/* The result's cap: max_result bytes when >= 0, else the job's memory limit
 * (a result the job could hold at all), else DEFAULT_MAX_RESULT. */
#define DEFAULT_MAX_RESULT (1ULL << 30)
static size_t result_cap(JobObject *self, long long max_result) {
        uint64_t m;

        if (max_result >= 0)
                return (size_t) max_result < SIZE_MAX ? (size_t) max_result : SIZE_MAX - 1;
        m = leash_job_limit(self->job, LEASH_LIMIT_MEMORY);
        return m != LEASH_NULL && m < SIZE_MAX ? (size_t) m : DEFAULT_MAX_RESULT;
}

static int set_nonblock(int fd) {
        int fl = fcntl(fd, F_GETFL);

        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
                return -errno;
        return 0;
}

/* After the fork, while the child starts (what a call does before the fork
 * it waits for): the parent's end never blocks (call_collect); the child's
 * does. A big result never blocks the child on a full pipe for long; a
 * lowered pipe-max-size leaves the default size, which works too. */
static int result_pipe_parent(int rfd) {
        int r = set_nonblock(rfd);

        if (r >= 0)
                (void) fcntl(rfd, F_SETPIPE_SZ, 1 << 20);
        return r;
}

/* What job.call and Config.call pass through: the child's half (dumps,
 * protocol, failed) and the parent's (wake_ms, loads, the cap). */
struct call_args {
        PyObject *func, *fargs, *fkwargs, *dumps, *protocol, *failed, *loads;
        int wake_ms;
        long long max_result;
        const ConfigObject *fds; /* NULL: the child inherits the caller's fds (child_fds_set) */
};

/* local.report = job; the reference it held before (NULL: none) in *ret_old */
static int swap_report(PyObject *local, PyObject *job, PyObject **ret_old) {
        PyObject *old = PyObject_GetAttr(local, str_report);

        if (!old) {
                if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                        return -1;
                PyErr_Clear();
        }
        if (PyObject_SetAttr(local, str_report, job) < 0) {
                Py_XDECREF(old);
                return -1;
        }
        *ret_old = old;
        return 0;
}

/* In the parent, right after the fork, while the child starts: what the
 * caller's call needs before it waits and the child does not (each write to
 * this process's memory before the fork is a copy-on-write fault on the way
 * to the child; bench/NOTES.md, row 10). The result pipe's end made
 * non-blocking, and with local (Config.call), the job stored as
 * local.report and the job stored there before it freed. */
static int after_fork(JobObject *self, int rfd, PyObject *local) {
        PyObject *old = NULL;
        int r = result_pipe_parent(rfd);

        if (r < 0) {
                raise_errno(r);
                return -1;
        }
        if (local && swap_report(local, (PyObject *) self, &old) < 0)
                return -1;
        Py_XDECREF(old);
        return 0;
}

/* job.call's work; local: Config.call's (NULL: job.call's, which stores
 * nothing). */
static PyObject *job_call(JobObject *self, const struct call_args *a, PyObject *local) {
        struct leash_error err = {0};
        struct grow_buf b = {0};
        PyObject *ret;
        int fds[2], r;
        pid_t pid;

        b.max = result_cap(self, a->max_result);
        /* the result's first 4 KiB: allocated before the fork, so that after
         * it only the read writes the page */
        b.data = malloc(4096);
        if (!b.data)
                return PyErr_NoMemory();
        b.cap = 4096;
        /* the child would otherwise write the caller's buffered output again;
         * first, as it may let other threads run */
        flush_std();
        PyOS_BeforeFork();
        /* From here to the write end's close, no Python code runs (the
         * at-fork handlers run before and after): no other thread of this
         * interpreter forks while the write end is open, and the read end
         * is marked private before any can, so no concurrent call's child
         * holds either end (the library closes marked fds in its children). */
        r = result_pipe(fds);
        if (r < 0) {
                PyOS_AfterFork_Parent();
                free(b.data);
                return raise_errno(r);
        }
        pid = leash_job_fork(self->job, &err);
        if (pid == 0 && a->fds && a->fds->close_fds)
                child_close_fds(fds[1], a->fds->keep, a->fds->n_keep);
        if (pid == 0)
                call_child(fds[1], a->func, a->fargs, a->fkwargs, a->dumps, a->protocol,
                           a->failed); /* fds[0]: closed */
        close(fds[1]);
        PyOS_AfterFork_Parent();
        if (pid < 0) {
                (void) leash_fd_close(fds[0]);
                free(b.data);
                self->ended = leash_job_ended(self->job) > 0;
                return raise_setup(pid, &err, "fork into the job");
        }
        if (after_fork(self, fds[0], local) < 0) {
                abort_job(self);
                (void) leash_fd_close(fds[0]);
                free(b.data);
                return NULL;
        }
        ret = call_collect(self, fds[0], a->wake_ms, b, a->loads); /* frees b.data */
        (void) leash_fd_close(fds[0]);
        return ret;
}

static PyObject *Job_call(JobObject *self, PyObject *args) {
        struct call_args a = {.max_result = -1};

        if (!PyArg_ParseTuple(args, "OO!O!i(OOOO)|L", &a.func, &PyTuple_Type, &a.fargs, &PyDict_Type, &a.fkwargs,
                              &a.wake_ms, &a.dumps, &a.protocol, &a.failed, &a.loads, &a.max_result) ||
            need_job(self) < 0)
                return NULL;
        return job_call(self, &a, NULL);
}

/* warn(job) when the job enforces a limit weaker than asked (the lines
 * ``leash run`` prints); nothing is made when it enforces all as asked */
static int warn_if_weak(JobObject *job, PyObject *warn) {
        char *text = NULL;
        PyObject *r;
        int weak;

        weak = leash_job_warnings(job->job, &text);
        if (weak < 0) {
                errno = -weak;
                PyErr_SetFromErrno(PyExc_OSError);
                return -1;
        }
        weak = text[0] != '\0';
        free(text);
        if (!weak)
                return 0;
        r = PyObject_CallFunctionObjArgs(warn, (PyObject *) job, NULL);
        Py_XDECREF(r);
        return r ? 0 : -1;
}

/* Job.set_sampler's work: 0, or -1 with an exception set */
static int set_sampler(JobObject *job, PyObject *fn) {
        PyObject *r = Job_set_sampler(job, fn);

        Py_XDECREF(r);
        return r ? 0 : -1;
}

/* the job failed before or in the call: local.report cleared, the job
 * closed, the exception kept */
static void call_failed(PyObject *local, JobObject *job) {
        PyObject *t, *v, *tb;

        PyErr_Fetch(&t, &v, &tb);
        if (PyObject_SetAttr(local, str_report, Py_None) < 0)
                PyErr_Clear();
        job_release(job);
        PyErr_Restore(t, v, tb);
}

/*
 * Config.call: a limited function's call in one C call, from the job's
 * creation to its outcome. The job is made from this Config and forked into
 * like job.call; once the child runs, it is stored as local.report (the
 * thread's last job: its report is made when asked for) and the job it
 * replaces there freed. In C rather than in Python because every Python
 * function the call path enters and leaves before the fork writes pages the
 * last call's fork shared with its child (its function and code objects,
 * the objects it makes): a copy-on-write fault each, on the way to the
 * child (bench/NOTES.md, row 10).
 */
static PyObject *Config_call(ConfigObject *self, PyObject *args) {
        struct call_args a = {0};
        PyObject *local, *sample, *warn, *job, *ret = NULL;

        if (!PyArg_ParseTuple(args, "OO!O!OO(i(OOOO)LO)", &a.func, &PyTuple_Type, &a.fargs, &PyDict_Type, &a.fkwargs,
                              &local, &sample, &a.wake_ms, &a.dumps, &a.protocol, &a.failed, &a.loads, &a.max_result,
                              &warn))
                return NULL;
        job = PyObject_CallFunctionObjArgs((PyObject *) &JobType, (PyObject *) self, NULL);
        if (!job)
                return NULL;
        if (warn_if_weak((JobObject *) job, warn) < 0 ||
            (sample != Py_None && set_sampler((JobObject *) job, sample) < 0))
                goto fail;
        a.fds = self;
        ret = job_call((JobObject *) job, &a, local); /* stored in local after the fork */
        if (!ret)
                call_failed(local, (JobObject *) job);
        Py_DECREF(job);
        return ret;
fail:
        call_failed(local, (JobObject *) job);
        Py_DECREF(job);
        return NULL;
}

static PyMethodDef Config_methods[] = {
        {"call", (PyCFunction) Config_call, METH_VARARGS,
         "call(func, args, kwargs, local, sampler, (wake_ms, (dumps, protocol, failed, loads), max_result, warn)) "
         "-> (ok, obj)\n\nA job made from this Config (warn(job) called first when it enforces a limit weaker "
         "than asked; sampler, when not None, as set_sampler), then job.call(func, args, kwargs, wake_ms, (dumps, "
         "protocol, failed, loads), max_result); the job is stored as local.report after the fork, while the "
         "child starts, and what local.report held before released there. When the call raises, local.report "
         "is None and the job closed."},
        {NULL, NULL, 0, NULL},
};

/* collect(rfd, wake_ms, loads) -> (ok, obj): call()'s parent half for a child
 * started some other way (the spawn context's fresh interpreter), whose
 * write end of rfd the caller has closed. */
static PyObject *Job_collect(JobObject *self, PyObject *args) {
        struct grow_buf b = {0};
        long long max_result = -1;
        PyObject *loads;
        int rfd, wake_ms, r;

        if (!PyArg_ParseTuple(args, "iiO|L", &rfd, &wake_ms, &loads, &max_result) || need_job(self) < 0)
                return NULL;
        r = set_nonblock(rfd);
        if (r < 0)
                return raise_errno(r);
        b.max = result_cap(self, max_result);
        return call_collect(self, rfd, wake_ms, b, loads); /* frees b.data */
}

static PyObject *Job_abort(JobObject *self, PyObject *unused) {
        if (need_job(self) < 0)
                return NULL;
        abort_job(self);
        Py_RETURN_NONE;
}

static PyObject *Job_report(JobObject *self, PyObject *args) {
        const char *fmt = "json";
        enum leash_format f;

        if (!PyArg_ParseTuple(args, "|s", &fmt) || need_job(self) < 0)
                return NULL;
        if (strcmp(fmt, "json") == 0)
                f = LEASH_FORMAT_JSON;
        else if (strcmp(fmt, "kv") == 0)
                f = LEASH_FORMAT_KV;
        else if (strcmp(fmt, "text") == 0)
                f = LEASH_FORMAT_TEXT;
        else {
                PyErr_Format(PyExc_ValueError, "leash: report format '%s': expected json, kv or text", fmt);
                return NULL;
        }
        return report_text(self, f);
}

static PyObject *Job_close(JobObject *self, PyObject *unused) {
        job_release(self);
        Py_RETURN_NONE;
}

static PyObject *Job_get_pid(JobObject *self, void *closure) {
        if (need_job(self) < 0)
                return NULL;
        return PyLong_FromLong(leash_job_pid(self->job));
}

static PyObject *Job_get_cgroup(JobObject *self, void *closure) {
        if (need_job(self) < 0)
                return NULL;
        return PyUnicode_DecodeFSDefault(leash_job_cgroup(self->job));
}

static PyObject *Job_get_reason(JobObject *self, void *closure) {
        const char *name;

        if (need_job(self) < 0)
                return NULL;
        name = leash_job_reason_name(self->job);
        if (!name)
                Py_RETURN_NONE;
        return PyUnicode_FromString(name);
}

static PyObject *Job_get_warnings(JobObject *self, void *closure) {
        char *text = NULL;
        PyObject *s, *lines;
        int r;

        if (need_job(self) < 0)
                return NULL;
        r = leash_job_warnings(self->job, &text);
        if (r < 0) {
                errno = -r;
                return PyErr_SetFromErrno(PyExc_OSError);
        }
        s = PyUnicode_DecodeFSDefault(text);
        free(text);
        if (!s)
                return NULL;
        lines = PyUnicode_Splitlines(s, 0);
        Py_DECREF(s);
        return lines;
}

static PyObject *Job_get_ended(JobObject *self, void *closure) {
        if (need_job(self) < 0)
                return NULL;
        return PyBool_FromLong(leash_job_ended(self->job) > 0);
}

/* ---- sampling ---------------------------------------------------------------
 * The library calls sample_cb from inside leash_job_dispatch() (GIL held) or
 * leash_job_wait() (GIL released): PyGILState_Ensure covers both. The sample
 * is valid only during the call, so the figures are copied into a dict. An
 * exception (the callback's own, or KeyboardInterrupt from a signal handler
 * that ran inside it) cannot cross the library: it is kept, the callbacks
 * stop, and the dispatch() or wait() that took the sample raises it. */

static PyObject *sample_figure(const struct leash_sample *s, enum leash_fig f) {
        const char *unit = leash_fig_unit(f);
        uint64_t v = leash_sample_get(s, f);

        if (v == LEASH_NULL)
                Py_RETURN_NONE;
        if (strcmp(unit, "bytes") == 0 || strcmp(unit, "count") == 0)
                return PyLong_FromUnsignedLongLong(v);
        return PyFloat_FromDouble(leash_sample_value(s, f));
}

static PyObject *sample_dict(const struct leash_sample *s) {
        PyObject *d = PyDict_New();

        if (!d)
                return NULL;
        for (int f = 0; f < _LEASH_FIG_MAX; f++) {
                PyObject *v = sample_figure(s, (enum leash_fig) f);
                int r = v ? PyDict_SetItemString(d, leash_fig_column((enum leash_fig) f), v) : -1;

                Py_XDECREF(v);
                if (r < 0) {
                        Py_DECREF(d);
                        return NULL;
                }
        }
        return d;
}

static void sample_cb(struct leash_job *job, const struct leash_sample *s, void *userdata) {
        JobObject *self = userdata;
        PyGILState_STATE g = PyGILState_Ensure();
        PyObject *fn = self->sampler, *d, *res = NULL;

        if (fn && !self->err_type) {
                Py_INCREF(fn);
                d = sample_dict(s);
                if (d)
                        res = PyObject_CallFunction(fn, "(NKO)", d, (unsigned long long) leash_sample_step(s),
                                                    leash_sample_last(s) ? Py_True : Py_False);
                Py_DECREF(fn);
                if (res)
                        Py_DECREF(res);
                else {
                        PyErr_Fetch(&self->err_type, &self->err_value, &self->err_tb);
                        Py_CLEAR(self->sampler);
                }
        }
        PyGILState_Release(g);
}

static int sampler_raise(JobObject *self) {
        if (!self->err_type)
                return 0;
        PyErr_Restore(self->err_type, self->err_value, self->err_tb);
        self->err_type = self->err_value = self->err_tb = NULL;
        return -1;
}

static PyObject *Job_set_sampler(JobObject *self, PyObject *fn) {
        int r;

        if (need_job(self) < 0)
                return NULL;
        if (fn != Py_None && !PyCallable_Check(fn)) {
                PyErr_Format(PyExc_TypeError, "leash: set_sampler: %R is not callable", fn);
                return NULL;
        }
        if (fn != Py_None && !self->sampler_set) {
                r = leash_job_set_sample_fn(self->job, sample_cb, self);
                if (r == -ENOENT) {
                        PyErr_SetString(PyExc_ValueError,
                                        "leash: set_sampler: the job takes no samples (set \"sample\" to an interval)");
                        return NULL;
                }
                if (r < 0)
                        return raise_setup(r, NULL, "set the sample callback");
                self->sampler_set = 1;
        }
        Py_XINCREF(fn == Py_None ? NULL : fn);
        Py_XSETREF(self->sampler, fn == Py_None ? NULL : fn);
        Py_RETURN_NONE;
}

static PyMethodDef Job_methods[] = {
        {"fork", (PyCFunction) (void (*)(void)) Job_fork, METH_VARARGS | METH_KEYWORDS,
         "fork(keep=()) -> int\n\nFork this process into the job: 0 in the child (inside the job cgroup, "
         "sandbox applied; it must end with os._exit), the child's pid in the parent. The child inherits "
         "no fd libleash holds nor any made by pipe(), but those in keep (at most 8), which are closed in "
         "the parent."},
        {"start", (PyCFunction) Job_start, METH_O,
         "start(argv) -> int\n\nStart a command in the job. 0, or the errno of a failed exec "
         "(the job has then ended; its report says why)."},
        {"fileno", (PyCFunction) Job_fileno, METH_NOARGS,
         "fileno() -> int\n\nAn fd that becomes readable when dispatch() has work."},
        {"dispatch", (PyCFunction) Job_dispatch, METH_NOARGS,
         "dispatch() -> bool\n\nHandle what is due without blocking; True once the job has ended."},
        {"wait", (PyCFunction) Job_wait, METH_NOARGS, "wait()\n\nBlock until the job has ended."},
        {"abort", (PyCFunction) Job_abort, METH_NOARGS,
         "abort()\n\nKill the job at once and wait until it has ended (the caller was interrupted)."},
        {"collect", (PyCFunction) Job_collect, METH_VARARGS,
         "collect(rfd, wake_ms, loads, max_result=-1) -> (ok, obj)\n\nWhat call() does after its fork, for a "
         "main process started otherwise: supervise while draining rfd (made non-blocking), finish, and the "
         "same (ok, obj)."},
        {"call", (PyCFunction) Job_call, METH_VARARGS,
         "call(func, args, kwargs, wake_ms, (dumps, protocol, failed, loads), max_result=-1) -> (ok, obj)\n\nFlush "
         "sys.stdout and sys.stderr, fork into the job; the child runs func(*args, **kwargs) and writes b'R' + "
         "dumps(value, protocol) to a pipe, or calls failed(wfd, exception), which writes the error frame and "
         "exits. Supervise until the job has ended (waking every wake_ms to run signal handlers, -1 never) and "
         "finish it, then decode (never during supervision). (True, loads(payload)) when the job's reason is ok "
         "and the frame a result that decodes; (None, the Exception loads raised) when it did not; "
         "(False, max) when the child wrote more than max_result bytes (-1: the job's memory limit, else 1 GiB): "
         "the job was then killed and nothing kept; else (False, all the child wrote)."},
        {"kill", (PyCFunction) Job_kill, METH_VARARGS,
         "kill(now=False)\n\nEnd the job: the soft signal then SIGKILL after the grace, or SIGKILL now."},
        {"interrupt", (PyCFunction) Job_interrupt, METH_VARARGS,
         "interrupt(sig)\n\nEnd the job as `leash run` does when it receives sig."},
        {"finish", (PyCFunction) Job_finish, METH_VARARGS,
         "finish(report=True) -> str\n\nKill what is left, account, remove the cgroup, close the job's "
         "descriptors; the JSON report (None with report=False: report() makes it later, until close())."},
        {"report", (PyCFunction) Job_report, METH_VARARGS, "report(format='json') -> str"},
        {"close", (PyCFunction) Job_close, METH_NOARGS,
         "close()\n\nKill and finish the job if that was not done, and free it."},
        {"set_sampler", (PyCFunction) Job_set_sampler, METH_O,
         "set_sampler(fn)\n\nCall fn(figures, step, last) in this thread at each sample the job takes "
         "(the settings must ask for sampling: \"sample\" or \"limit\"). figures maps each series "
         "column (\"t_s\", \"memory_bytes\", ...) to its value, None when the host gave none; step "
         "counts from 0; last is True for the sample taken when the main process ended. An exception "
         "fn raises stops the callbacks and is raised by the dispatch() or wait() that took the "
         "sample. Set before the job starts; None stops the callbacks."},
        {NULL, NULL, 0, NULL},
};

static PyGetSetDef Job_getset[] = {
        {"pid", (getter) Job_get_pid, NULL, "the main process's pid", NULL},
        {"cgroup", (getter) Job_get_cgroup, NULL, "the job cgroup's absolute path", NULL},
        {"ended", (getter) Job_get_ended, NULL, "True once the job has ended", NULL},
        {"reason", (getter) Job_get_reason, NULL, "the report's reason (\"ok\", \"memory\"...) once finished", NULL},
        {"warnings", (getter) Job_get_warnings, NULL,
         "one line per limit enforced weaker than asked here (no controller), as `leash run` says them", NULL},
        {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject JobType = {
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "leash._leash.Job",
        .tp_basicsize = sizeof(JobObject),
        .tp_dealloc = (destructor) Job_dealloc,
        .tp_flags = Py_TPFLAGS_DEFAULT,
        .tp_doc = "Job(settings, name=None, config_dir=None, user_dir=None)\n\n"
                  "One libleash job: settings are (key, value) pairs of `leash run`'s option table, or a "
                  "Config (then without name and directories). "
                  "Creating it makes the job cgroup and writes its limits; nothing runs yet. The configuration "
                  "directories (None: not set) are read from the environment as `leash run` reads them "
                  "when both are omitted.",
        .tp_methods = Job_methods,
        .tp_getset = Job_getset,
        .tp_init = (initproc) Job_init,
        .tp_new = PyType_GenericNew,
};

static PyObject *mod_version(PyObject *m, PyObject *unused) {
        return PyUnicode_FromString(leash_version());
}

static PyObject *mod_parse_size(PyObject *m, PyObject *arg) {
        const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
        uint64_t v;

        if (!s) {
                if (!PyErr_Occurred())
                        PyErr_Format(PyExc_TypeError, "leash: a size must be a string, not %R", arg);
                return NULL;
        }
        if (parse_size(s, &v) < 0) {
                PyErr_Format(PyExc_ValueError, "leash: '%s' is not a size (e.g. 512M, 2G)", s);
                return NULL;
        }
        return PyLong_FromUnsignedLongLong(v);
}

/* pipe() -> (r, w): a close-on-exec pipe, both ends private (no child of
 * leash_job_fork inherits them; fork(keep=...) hands one on). */
static PyObject *mod_pipe(PyObject *m, PyObject *unused) {
        int fds[2];

        if (pipe2(fds, O_CLOEXEC) < 0)
                return PyErr_SetFromErrno(PyExc_OSError);
        if (leash_fd_private(fds[0], true) < 0 || leash_fd_private(fds[1], true) < 0) {
                (void) leash_fd_close(fds[0]);
                (void) leash_fd_close(fds[1]);
                return PyErr_NoMemory();
        }
        (void) fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
        return Py_BuildValue("(ii)", fds[0], fds[1]);
}

/* pickle_decode(data, table, stats=None) -> value: pickle-decode.h's
 * decoder over a bytes-like object; stats, a list, gets the decode's
 * [opcodes, work, work bound, memory, memory bound] whatever happened */
static PyObject *mod_pickle_decode(PyObject *m, PyObject *args) {
        PyObject *data, *table, *stats = Py_None, *value, *figures;
        struct pickle_stats st = {0};
        Py_buffer view;

        if (!PyArg_ParseTuple(args, "OO!|O", &data, &PyDict_Type, &table, &stats))
                return NULL;
        if (stats != Py_None && !PyList_Check(stats))
                return PyErr_Format(PyExc_TypeError, "leash: pickle_decode's stats must be a list");
        if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
                return NULL;
        value = pickle_decode((const unsigned char *) view.buf, (size_t) view.len, table, result_refused_type, &st);
        PyBuffer_Release(&view);
        if (stats == Py_None)
                return value;
        figures = Py_BuildValue("[KKKKK]", (unsigned long long) st.opcodes, (unsigned long long) st.work,
                                (unsigned long long) st.work_bound, (unsigned long long) st.memory,
                                (unsigned long long) st.memory_bound);
        if (!figures || PyList_SetSlice(stats, 0, PyList_GET_SIZE(stats), figures) < 0) {
                Py_XDECREF(figures);
                Py_XDECREF(value);
                return NULL;
        }
        Py_DECREF(figures);
        return value;
}

static PyObject *mod_close_fd(PyObject *m, PyObject *arg) {
        long fd = PyLong_AsLong(arg);
        int r;

        if (fd == -1 && PyErr_Occurred())
                return NULL;
        r = leash_fd_close((int) fd);
        if (r < 0)
                return raise_errno(r);
        Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
        {"pipe", mod_pipe, METH_NOARGS,
         "pipe() -> (r, w): a close-on-exec pipe whose ends no child of Job.fork/Job.call inherits; close "
         "them with close_fd()."},
        {"close_fd", mod_close_fd, METH_O, "close_fd(fd): close an fd made by pipe()."},
        {"pickle_decode", mod_pickle_decode, METH_VARARGS,
         "pickle_decode(data, table, stats=None) -> value: leash's own decoder of a result's pickle (plain data "
         "built directly; GLOBAL and STACK_GLOBAL looked up in table, a dict {(module, qualname): object}); "
         "ResultRefused past its bounds (depth, items, memory and work per byte, keys with equal hashes, the "
         "memo out of order, frames, opcodes it does not decode). stats, a list, is set to [opcodes, work, "
         "work bound, memory, memory bound]."},
        {"version", mod_version, METH_NOARGS, "version() -> str: libleash's version"},
        {"parse_size", mod_parse_size, METH_O, "parse_size(text) -> int: bytes, as leash parses a size (\"512M\")"},
        {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
        PyModuleDef_HEAD_INIT, "leash._leash", "libleash's job object (see the leash package).", -1, module_methods,
};

/* PyModule_AddObject steals the reference only when it succeeds */
static int add_type(PyObject *m, const char *name, PyTypeObject *type) {
        Py_INCREF(type);
        if (PyModule_AddObject(m, name, (PyObject *) type) < 0) {
                Py_DECREF(type);
                return -1;
        }
        return 0;
}

PyMODINIT_FUNC PyInit__leash(void);
PyMODINIT_FUNC PyInit__leash(void) {
        PyObject *m, *errors;

        ConfigType.tp_methods = Config_methods;
        if (PyType_Ready(&JobType) < 0 || PyType_Ready(&ConfigType) < 0)
                return NULL;
        str_flush = PyUnicode_InternFromString("flush");
        str_report = PyUnicode_InternFromString("report");
        if (!str_flush || !str_report)
                return NULL;
        errors = PyImport_ImportModule("leash._errors");
        if (!errors)
                return NULL;
        setup_error_type = PyObject_GetAttrString(errors, "SetupError");
        result_refused_type = PyObject_GetAttrString(errors, "ResultRefused");
        Py_DECREF(errors);
        if (!setup_error_type || !result_refused_type)
                return NULL;
        m = PyModule_Create(&module);
        if (!m)
                return NULL;
        if (add_type(m, "Job", &JobType) < 0 || add_type(m, "Config", &ConfigType) < 0) {
                Py_DECREF(m);
                return NULL;
        }
        PyModule_AddIntConstant(m, "sampling", 1);
        return m;
}
