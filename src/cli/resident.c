/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash __resident: the resident launcher (resident.h). One process, one
 * poll loop, no threads: it accepts callers on its socket, reads each
 * request without blocking (a caller that sends nothing is dropped after
 * REQUEST_MS, and at most MAX_CONNS wait at once, so no caller can stall
 * another), checks the caller (resident-caller.c), and starts
 * `leash run ...` for it: a child that takes the caller's descriptors,
 * working directory, environment and inherited settings, closes everything
 * of the launcher's, and returns to main() to run `leash run` there (the
 * caller runs this very binary, checked: an exec would only pay the
 * program's start a second time, about 13 ms a launch in the systemd VM,
 * bench/systemd-vm.md). The launcher itself ran nothing of the engine, so
 * the child starts from a fresh program's state. Signals the caller passes on go to that leash; the
 * caller's end (its connection closes: it was killed) kills that leash,
 * whose watchdog kills the job, as when a leash run by the caller itself is
 * killed. The leash's wait status goes back to the caller.
 *
 * It lives in the user manager's shared unit, started by a `leash run` that
 * found none (remote.c), and ends after IDLE_MS with no caller, on SIGTERM
 * (the unit stopped), or when its program was replaced at its path (an
 * upgrade: a caller running the new one is refused; another program's
 * caller only refused).
 */
#include "resident.h"
#include "resident-proto.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../basic/fileio.h"
#include "../basic/macro.h"
#include "cli.h"
#include "resident-caller.h"

#define MAX_CONNS 32
#define REQUEST_MS 5000
#define IDLE_MS (10 * 60 * 1000)

enum conn_state { C_FREE, C_HEAD, C_BLOB, C_RUNNING };

struct conn {
        enum conn_state state;
        int fd;
        int fds[RESIDENT_MAX_FDS]; /* received: the working directory, then the caller's */
        int n_fds;
        struct resident_request head;
        size_t head_got;
        char *blob;
        size_t blob_got;
        uint64_t deadline;
        pid_t child;
        bool gone; /* the caller's end of the connection closed */
};

struct resident {
        int listen_fd, sig_fd;
        const char *accept;
        struct resident_self self;
        char exe_path[4096]; /* this program's path when it started */
        int run_argc;        /* in a child: the caller's `leash run` to run */
        char **run_argv;
        struct conn conns[MAX_CONNS];
        uint64_t idle_since;
        bool quitting;
};

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void conn_close(struct conn *c) {
        for (int i = 0; i < c->n_fds; i++)
                close(c->fds[i]);
        if (c->fd >= 0)
                close(c->fd);
        free(c->blob);
        *c = (struct conn){.fd = -1};
}

static void reply(struct conn *c, int kind, int value, const char *text) {
        struct resident_reply r = {.kind = kind, .value = value};

        snprintf(r.text, sizeof r.text, "%s", text ? text : "");
        (void) send(c->fd, &r, sizeof r, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void refuse(struct conn *c, int err, const char *text) {
        reply(c, RESIDENT_REFUSED, err, text);
        conn_close(c);
}

/* The head, with the descriptors on its first bytes. */
static int read_head(struct conn *c) {
        union {
                char buf[CMSG_SPACE(sizeof(int) * RESIDENT_MAX_FDS)];
                struct cmsghdr align;
        } u;
        struct iovec iov = {.iov_base = (char *) &c->head + c->head_got, .iov_len = sizeof c->head - c->head_got};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
        ssize_t n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
                if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
                        int k = (int) ((h->cmsg_len - CMSG_LEN(0)) / sizeof(int));
                        for (int i = 0; i < k; i++) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
                                if (c->n_fds < RESIDENT_MAX_FDS)
                                        c->fds[c->n_fds++] = fd;
                                else
                                        close(fd);
                        }
                }
        if (n == 0 || (m.msg_flags & MSG_CTRUNC))
                return -EPROTO;
        c->head_got += (size_t) n;
        return c->head_got == sizeof c->head;
}

static int head_valid(const struct conn *c) {
        const struct resident_request *h = &c->head;

        if (h->magic != RESIDENT_MAGIC || h->version != RESIDENT_VERSION || h->blob_len > RESIDENT_MAX_BLOB ||
            h->argc < 2 || h->n_fds > RESIDENT_MAX_FDS - 1 || (int) h->n_fds + 1 != c->n_fds)
                return -EPROTO;
        /* every string takes a byte at least: no count the blob cannot hold
         * (nor a sum that wraps) */
        if ((uint64_t) h->argc + h->envc > h->blob_len)
                return -EPROTO;
        for (uint32_t i = 0; i < h->n_fds; i++)
                if (h->fd_numbers[i] < 0 || h->fd_numbers[i] >= RESIDENT_MAX_FD_NUMBER)
                        return -EPROTO;
        return 0;
}

static int read_blob(struct conn *c) {
        ssize_t n;

        if (!c->blob) {
                c->blob = malloc(c->head.blob_len + 1);
                if (!c->blob)
                        return -ENOMEM;
        }
        if (c->blob_got == c->head.blob_len)
                return 1;
        n = recv(c->fd, c->blob + c->blob_got, c->head.blob_len - c->blob_got, MSG_DONTWAIT);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : -errno;
        if (n == 0)
                return -EPROTO;
        c->blob_got += (size_t) n;
        return c->blob_got == c->head.blob_len;
}

/* argv then envp, NULL-terminated each, pointing into the blob. */
static int split_blob(struct conn *c, char ***ret_argv, char ***ret_envp) {
        uint64_t total = (uint64_t) c->head.argc + c->head.envc; /* at most blob_len: head_valid */
        char **v = calloc((size_t) total + 2, sizeof *v), *p = c->blob, *end = c->blob + c->head.blob_len;

        if (!v)
                return -ENOMEM;
        c->blob[c->head.blob_len] = '\0';
        for (uint64_t i = 0; i < total; i++) {
                char *z = memchr(p, '\0', (size_t) (end - p));
                if (!z) {
                        free(v);
                        return -EPROTO;
                }
                v[i < c->head.argc ? i : i + 1] = p;
                p = z + 1;
        }
        *ret_argv = v;
        *ret_envp = v + c->head.argc + 1;
        return 0;
}

/* In the child: a failed step's errno and name, up the pipe; then exit. */
static _Noreturn void child_fail(int pipe_fd, const char *step) {
        char msg[200];
        int e = errno, n = snprintf(msg, sizeof msg, "%d %s", e, step);

        (void) !write(pipe_fd, msg, (size_t) n);
        _exit(127);
}

/* Above every number the caller's descriptors take: where the received
 * ones wait (close-on-exec, as every descriptor of the launcher's is). */
static int fd_base(const struct conn *c) {
        int base = 3;

        for (uint32_t i = 0; i < c->head.n_fds; i++)
                if (c->head.fd_numbers[i] >= base)
                        base = c->head.fd_numbers[i] + 1;
        return base;
}

/* The caller's descriptors at their numbers (child_setup then closes
 * every other one). */
static void child_fds(const struct conn *c, int base, int pipe_fd) {
        int high[RESIDENT_MAX_FDS];

        for (int i = 0; i < c->n_fds; i++) {
                high[i] = fcntl(c->fds[i], F_DUPFD_CLOEXEC, base);
                if (high[i] < 0)
                        child_fail(pipe_fd, "take the caller's descriptors");
        }
        if (fchdir(high[0]) < 0)
                child_fail(pipe_fd, "enter the caller's working directory");
        for (uint32_t i = 0; i < c->head.n_fds; i++) {
                int n = c->head.fd_numbers[i];
                if (dup2(high[i + 1], n) < 0 || (c->head.fd_cloexec[i] && fcntl(n, F_SETFD, FD_CLOEXEC) < 0))
                        child_fail(pipe_fd, "place the caller's descriptors");
        }
}

/* What the caller set for itself and its job inherits, where it differs
 * from what this child has now (the launcher's own, read here: someone may
 * have changed the launcher's since it started): a handler reset by the
 * exec, ignored signals kept. */
static void child_inherit(const struct resident_caller *k, uint64_t sigmask, int pipe_fd) {
        const struct resident_inherited *want = &k->inh;
        struct resident_inherited own;
        const char *what;
        sigset_t mask;

        umask(k->umask);
        if (resident_inherited_read(0, &own, &what) < 0)
                child_fail(pipe_fd, "read the launcher's own settings");
        for (int r = 0; r < RLIM_NLIMITS; r++)
                if (memcmp(&want->limits[r], &own.limits[r], sizeof want->limits[r]) != 0 &&
                    setrlimit((enum __rlimit_resource) r, &want->limits[r]) < 0)
                        child_fail(pipe_fd, "set the caller's resource limits");
        if (want->nice != own.nice && setpriority(PRIO_PROCESS, 0, want->nice) < 0)
                child_fail(pipe_fd, "set the caller's nice value");
        if (!CPU_EQUAL(&want->cpus, &own.cpus) && sched_setaffinity(0, sizeof want->cpus, &want->cpus) < 0)
                child_fail(pipe_fd, "set the caller's CPUs");
        if (want->oom_score_adj != own.oom_score_adj) {
                char v[16];
                int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
                snprintf(v, sizeof v, "%d", want->oom_score_adj);
                if (fd < 0 || write(fd, v, strlen(v)) < 0)
                        child_fail(pipe_fd, "set the caller's OOM score");
                close(fd);
        }
        if (k->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                child_fail(pipe_fd, "set no_new_privs");
        for (int s = 1; s < 65; s++)
                if ((k->sig_ignored >> (s - 1)) & 1 && s != SIGKILL && s != SIGSTOP)
                        (void) signal(s, SIG_IGN);
        sigemptyset(&mask);
        for (int s = 1; s < 65; s++)
                if ((sigmask >> (s - 1)) & 1)
                        sigaddset(&mask, s);
        if (sigprocmask(SIG_SETMASK, &mask, NULL) < 0)
                child_fail(pipe_fd, "set the caller's signal mask");
}

/* What `ps` shows of the child: its caller's command line, written over the
 * launcher's own (argv, then the environment strings after it, which
 * nothing reads once environ points at the caller's): NUL-separated where it
 * fits in the argument area; else space-separated, over its end, which the
 * kernel then reads as one string up to its NUL (as setproctitle does). */
static void set_title(char **argv) {
        char stat[2048], *p;
        unsigned long v[4];
        size_t area, n = 0, arg_area;
        int r = read_file_at(AT_FDCWD, "/proc/self/stat", stat, sizeof stat, NULL);

        p = r < 0 ? NULL : strrchr(stat, ')');
        for (int field = 2; p && field < 48; field++) /* to arg_start, field 48 */
                p = strchr(p + 1, ' ');
        if (!p || sscanf(p + 1, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4 || v[1] <= v[0])
                return;
        arg_area = v[1] - v[0];
        area = v[2] == v[1] && v[3] > v[2] ? v[3] - v[0] : arg_area;
        p = (char *) v[0];
        memset(p, 0, area);
        for (char **a = argv; *a && n + 1 < area; a++) {
                size_t k = strlen(*a);
                if (n + k + 1 > area - 1)
                        k = area - 1 - n - 1;
                memcpy(p + n, *a, k);
                n += k + 1;
        }
        if (n > arg_area) /* did not fit: one string, spaces between */
                for (size_t i = 0; i + 1 < n; i++)
                        p[i] = p[i] ? p[i] : ' ';
}

static bool is_target(const struct conn *c, int n) {
        for (uint32_t i = 0; i < c->head.n_fds; i++)
                if (c->head.fd_numbers[i] == n)
                        return true;
        return false;
}

/* The child: becomes the caller's `leash run` without an exec (the same
 * binary, checked: an exec would only cost its start again). Every
 * descriptor but the caller's is closed; the pipe last, which tells the
 * launcher the child is set up. rs->run_argv is then set for
 * cmd_resident to run it. */
static void child_setup(struct resident *rs, struct conn *c, const struct resident_caller *k, char **argv, char **envp,
                        int pipe_fd) {
        struct rlimit nofile;
        int base = fd_base(c), hi;

        /* room for the caller's numbers, whatever the launcher's own limit
         * is now (child_inherit then sets the caller's) */
        if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
                nofile.rlim_cur = nofile.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &nofile);
        }
        hi = fcntl(pipe_fd, F_DUPFD_CLOEXEC, base);
        if (hi < 0)
                child_fail(pipe_fd, "move the launcher's descriptors");
        pipe_fd = hi;
        /* the launcher's end ends this leash, whose watchdog ends the job */
        if (setsid() < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() == 1)
                child_fail(pipe_fd, "start a session");
        child_fds(c, base, pipe_fd);
        child_inherit(k, c->head.sigmask, pipe_fd);
        for (int n = 0; n < base; n++)
                if (!is_target(c, n))
                        (void) close(n);
        if ((pipe_fd > base && syscall(SYS_close_range, base, pipe_fd - 1, 0) < 0) ||
            syscall(SYS_close_range, pipe_fd + 1, ~0U, 0) < 0)
                child_fail(pipe_fd, "close the launcher's descriptors");
        environ = envp;
        set_title(argv);
        close(pipe_fd);
        rs->run_argc = (int) c->head.argc;
        rs->run_argv = argv;
}

/* Fork the caller's leash; -errno with why when it did not reach its exec. */
static pid_t start_child(struct resident *rs, struct conn *c, const struct resident_caller *k, char **argv, char **envp,
                         char *why, size_t size) {
        int p[2], e = 0;
        char msg[200] = "";
        ssize_t n;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                e = errno;
                close(p[0]), close(p[1]);
                return -e;
        }
        if (pid == 0) {
                child_setup(rs, c, k, argv, envp, p[1]);
                return 0;
        }
        close(p[1]);
        do
                n = read(p[0], msg, sizeof msg - 1);
        while (n < 0 && errno == EINTR);
        close(p[0]);
        if (n <= 0)
                return pid;
        msg[n] = '\0';
        e = atoi(msg);
        snprintf(why, size, "%s: %s", strchr(msg, ' ') ? strchr(msg, ' ') + 1 : msg, strerror(e));
        (void) waitpid(pid, NULL, 0);
        return -(e ? e : EIO);
}

/* A caller refused for running another binary: is it this launcher's
 * program, replaced at its path since it started (an upgrade)? Another
 * program's caller is only refused. */
static bool upgraded(const struct resident *rs, pid_t pid) {
        char path[64], exe[4096];
        ssize_t n;

        snprintf(path, sizeof path, "/proc/%d/exe", (int) pid);
        n = readlink(path, exe, sizeof exe - 1);
        if (n <= 0 || !rs->exe_path[0])
                return false;
        exe[n] = '\0';
        return strcmp(exe, rs->exe_path) == 0;
}

/* A whole request: check the caller, start its leash, say so. */
static void serve(struct resident *rs, struct conn *c) {
        struct resident_caller k;
        char why[200] = "";
        _cleanup_free_ char **argv = NULL;
        char **envp;
        pid_t pid;
        int r = split_blob(c, &argv, &envp);

        if (r >= 0 && strcmp(argv[1], "run") != 0)
                r = -EPROTO;
        if (r >= 0)
                r = resident_caller_read(c->fd, rs->accept, &rs->self, &k, why, sizeof why);
        if (r == -ESTALE && upgraded(rs, k.pid))
                rs->quitting = true; /* its next run starts a new launcher */
        if (r < 0)
                return refuse(c, -r, why[0] ? why : "bad request");
        pid = start_child(rs, c, &k, argv, envp, why, sizeof why);
        if (pid == 0) {
                argv = NULL; /* this is the child: it runs them (rs->run_argv) */
                return;
        }
        if (pid < 0)
                return refuse(c, (int) -pid, why);
        for (int i = 0; i < c->n_fds; i++)
                close(c->fds[i]);
        c->n_fds = 0;
        free(c->blob);
        c->blob = NULL;
        c->child = pid;
        c->state = C_RUNNING;
        reply(c, RESIDENT_STARTED, (int) pid, NULL);
}

/* The caller passes signals on; its end (the connection closed) kills its
 * leash, whose watchdog kills the job. */
static void relay(struct conn *c) {
        int32_t sig[16];
        ssize_t n = recv(c->fd, sig, sizeof sig, MSG_DONTWAIT);

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                c->gone = true;
                (void) kill(c->child, SIGKILL);
                return;
        }
        for (ssize_t i = 0; i < n / (ssize_t) sizeof *sig; i++)
                if (sig[i] > 0 && sig[i] < 65 && sig[i] != SIGKILL && sig[i] != SIGSTOP)
                        (void) kill(c->child, sig[i]);
}

static void on_readable(struct resident *rs, struct conn *c) {
        int r = 0;

        if (c->state == C_RUNNING)
                return relay(c);
        if (c->state == C_HEAD) {
                r = read_head(c);
                if (r > 0) {
                        r = head_valid(c);
                        c->state = r < 0 ? c->state : C_BLOB;
                }
        }
        if (r >= 0 && c->state == C_BLOB) {
                r = read_blob(c);
                if (r > 0)
                        return serve(rs, c);
        }
        if (r < 0)
                refuse(c, -r, "bad request");
}

/* The leashes that ended: their status to their callers. */
static void reap(struct resident *rs) {
        for (;;) {
                siginfo_t si = {0};
                int status;

                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
                        return;
                status = si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0) : si.si_status & 0x7f;
                for (int i = 0; i < MAX_CONNS; i++) {
                        struct conn *c = &rs->conns[i];
                        if (c->state == C_RUNNING && c->child == si.si_pid) {
                                if (!c->gone)
                                        reply(c, RESIDENT_ENDED, status, NULL);
                                conn_close(c);
                        }
                }
        }
}

static void take_caller(struct resident *rs) {
        int fd = accept4(rs->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0)
                return;
        for (int i = 0; i < MAX_CONNS; i++)
                if (rs->conns[i].state == C_FREE) {
                        rs->conns[i] = (struct conn){.state = C_HEAD, .fd = fd, .deadline = now_ms() + REQUEST_MS};
                        return;
                }
        close(fd); /* too many waiting: this caller runs its job itself */
}

/* Signals to the launcher itself: SIGCHLD, or its end (SIGTERM, SIGINT,
 * SIGHUP): it takes no new caller and ends once its leashes have. */
static void on_signal(struct resident *rs) {
        struct signalfd_siginfo si;

        while (read(rs->sig_fd, &si, sizeof si) == (ssize_t) sizeof si)
                if (si.ssi_signo != SIGCHLD)
                        rs->quitting = true;
        reap(rs);
}

/* One pass: poll, then whatever is ready. false: nothing left to do. */
static bool loop_once(struct resident *rs, const char *sock_path) {
        struct pollfd p[MAX_CONNS + 2];
        struct conn *of[MAX_CONNS + 2] = {NULL};
        uint64_t now = now_ms(), next = rs->idle_since + IDLE_MS;
        int n = 2, busy = 0;

        if (rs->quitting && rs->listen_fd >= 0) {
                (void) unlink(sock_path);
                close(rs->listen_fd);
                rs->listen_fd = -1;
        }
        p[0] = (struct pollfd){.fd = rs->sig_fd, .events = POLLIN};
        p[1] = (struct pollfd){.fd = rs->listen_fd, .events = POLLIN};
        for (int i = 0; i < MAX_CONNS; i++) {
                struct conn *c = &rs->conns[i];
                if (c->state == C_FREE)
                        continue;
                busy++;
                if (c->state != C_RUNNING && c->deadline <= now) {
                        refuse(c, ETIMEDOUT, "no request in time");
                        continue;
                }
                if (c->state != C_RUNNING && c->deadline < next)
                        next = c->deadline;
                of[n] = c;
                p[n++] = (struct pollfd){.fd = c->gone ? -1 : c->fd, .events = POLLIN};
        }
        if (busy)
                next = now + REQUEST_MS < next ? now + REQUEST_MS : next;
        else if (rs->quitting || now >= rs->idle_since + IDLE_MS)
                return false;
        if (poll(p, (nfds_t) n, next > now ? (int) (next - now) : 0) < 0 && errno != EINTR)
                return false;
        if (busy)
                rs->idle_since = now_ms();
        if (p[0].revents)
                on_signal(rs);
        if (rs->listen_fd >= 0 && p[1].revents)
                take_caller(rs);
        for (int j = 2; j < n && !rs->run_argv; j++)
                if (p[j].revents && of[j]->state != C_FREE && of[j]->fd == p[j].fd)
                        on_readable(rs, of[j]);
        return !rs->run_argv;
}

/* The socket's directory: this user's alone (made 0700, or found so), and
 * one launcher at a time (a lock beside the socket, held for life). */
static int claim_dir(const char *sock_path) {
        _cleanup_free_ char *dir = strdup(sock_path);
        char lock[4200];
        struct stat st;
        int fd;

        if (!dir || !strrchr(dir, '/'))
                return -EINVAL;
        *strrchr(dir, '/') = '\0';
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        if (lstat(dir, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
                return -EPERM;
        snprintf(lock, sizeof lock, "%s/resident.lock", dir);
        fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                close(fd);
                return -EALREADY;
        }
        return fd; /* held until the launcher exits */
}

/* Bound under a name of its own, listening, then renamed into place: a
 * caller that finds the socket can connect (between bind and listen it
 * would be refused, and would run its job itself). */
static int listen_on(const char *path) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        int fd, n = snprintf(a.sun_path, sizeof a.sun_path, "%s.%d", path, (int) getpid());

        if (n < 0 || (size_t) n >= sizeof a.sun_path)
                return -ENAMETOOLONG;
        (void) unlink(a.sun_path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* over a dead launcher's socket: the lock says none runs */
        if (bind(fd, (struct sockaddr *) &a, sizeof a) < 0 || listen(fd, MAX_CONNS) < 0 ||
            rename(a.sun_path, path) < 0) {
                int r = -errno;
                (void) unlink(a.sun_path);
                close(fd);
                return r;
        }
        return fd;
}

static int resident_args(int argc, char **argv, char *sock, size_t size, const char **accept) {
        static char pattern[128];

        resident_session_pattern(pattern, sizeof pattern);
        *accept = pattern;
        if (resident_socket_path(sock, size) < 0)
                return usage_error("__resident: no socket path");
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc && argv[i + 1][0] == '/')
                        snprintf(sock, size, "%s", argv[++i]);
                else if (strcmp(argv[i], "--accept-cgroup") == 0 && i + 1 < argc && argv[i + 1][0] == '/')
                        *accept = argv[++i];
                else
                        return usage_error("__resident: unknown argument '%s'", argv[i]);
        }
        return 0;
}

int cmd_resident(int argc, char **argv) {
        struct resident rs = {.listen_fd = -1, .sig_fd = -1, .idle_since = now_ms()};
        char sock[4096];
        sigset_t set;
        int lock, r = resident_args(argc, argv, sock, sizeof sock, &rs.accept);

        if (r != 0)
                return r;
        lock = claim_dir(sock);
        if (lock == -EALREADY)
                return 0; /* another launcher serves */
        if (lock < 0)
                return EXIT_LEASH_FAILED;
        for (int i = 0; i < MAX_CONNS; i++)
                rs.conns[i].fd = -1;
        /* nothing ignored (a child ignores what its caller does) and no
         * handler: the dispositions a child's exec starts from */
        for (int s = 1; s < 65; s++)
                if (s != SIGKILL && s != SIGSTOP)
                        (void) signal(s, SIG_DFL);
        if (resident_self_read(&rs.self) < 0 || readlink("/proc/self/exe", rs.exe_path, sizeof rs.exe_path - 1) <= 0)
                return EXIT_LEASH_FAILED;
        sigemptyset(&set);
        sigaddset(&set, SIGCHLD), sigaddset(&set, SIGTERM), sigaddset(&set, SIGINT), sigaddset(&set, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
            (rs.sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 || (rs.listen_fd = listen_on(sock)) < 0)
                return EXIT_LEASH_FAILED;
        while (loop_once(&rs, sock))
                ;
        if (rs.run_argv) /* a child, set up as its caller's leash */
                return fd_sanitize_stdio() < 0 ? EXIT_LEASH_FAILED : cmd_run(rs.run_argc - 1, rs.run_argv + 1);
        if (rs.listen_fd >= 0)
                (void) unlink(sock);
        close(lock);
        return 0;
}
