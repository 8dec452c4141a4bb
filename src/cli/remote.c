/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `leash run` through the resident launcher (resident.h), and the start of
 * one. Only where the launcher saves something: an ordinary user in a login
 * session's scope under systemd, where every launch would otherwise ask the
 * user manager to move leash. A terminal changes nothing: a job is in a
 * session of its own either way (leash's job is started with setsid), and
 * what the terminal sends leash's process group (Ctrl-C, Ctrl-\) reaches
 * this caller, which passes it on as leash would. LEASH_RESIDENT=0 turns
 * it off.
 */
#include "remote.h"
#include "resident-proto.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../basic/log.h"
#include "../basic/macro.h"
#include "../engine/leash.h"
#include "../engine/placement/host.h"
#include "../engine/placement/systemd-scope.h"
#include "cli.h"

static void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

/* remote_run found no launcher (and may start one after the job) */
static bool launcher_absent;

static bool in_session_scope(void) {
        char own[4096], pattern[128];

        resident_session_pattern(pattern, sizeof pattern);
        return host_own_cgroup(own, sizeof own) >= 0 && fnmatch(pattern, own, FNM_PATHNAME) == 0;
}

static bool turned_off(void) {
        const char *off = getenv("LEASH_RESIDENT");

        return off && strcmp(off, "0") == 0;
}

/* Where a launcher would serve this process (LEASH_RESIDENT aside). */
static bool served_here(void) {
        const char *sock = getenv("LEASH_RESIDENT_SOCKET");

        if (sock && sock[0])
                return true;
        /* root's launches ask no manager (checked first: nothing else is read) */
        return geteuid() != 0 && access("/run/systemd/system", F_OK) == 0 && in_session_scope();
}

static bool eligible(void) {
        return !turned_off() && served_here();
}

/* The launcher's socket, in a directory that is this user's alone, with a
 * launcher of this user at the other end. */
static int connect_launcher(void) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        struct ucred cred;
        socklen_t len = sizeof cred;
        char dir[4096];
        struct stat st;
        _cleanup_close_ int fd = -1;
        int r = resident_socket_path(a.sun_path, sizeof a.sun_path);

        if (r < 0)
                return r;
        if (!getenv("LEASH_RESIDENT_SOCKET")) {
                if (resident_dir_path(dir, sizeof dir) < 0 || lstat(dir, &st) < 0)
                        return -ENOENT;
                if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
                        return -EPERM;
        }
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &a, sizeof a) < 0)
                return -errno;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != getuid())
                return -EPERM;
        if (cred.pid == getppid())
                return -ELOOP; /* this leash is the one the launcher started */
        r = fd;
        fd = -1;
        return r;
}

/* The descriptors this process has open, other than skip[]: what the
 * launcher's leash gets at the same numbers. */
static int list_fds(struct resident_request *h, int *fds, const int *skip, size_t n_skip) {
        _cleanup_(closedirp) DIR *d = opendir("/proc/self/fd");
        struct dirent *e;

        if (!d)
                return -errno;
        while ((e = readdir(d))) {
                int fd = atoi(e->d_name), flags;
                bool skipped = e->d_name[0] == '.' || fd == dirfd(d);
                for (size_t i = 0; i < n_skip; i++)
                        skipped = skipped || fd == skip[i];
                if (skipped)
                        continue;
                if (h->n_fds >= RESIDENT_MAX_FDS - 1 || fd >= RESIDENT_MAX_FD_NUMBER)
                        return -E2BIG;
                flags = fcntl(fd, F_GETFD);
                if (flags < 0)
                        return -errno;
                h->fd_numbers[h->n_fds] = fd;
                h->fd_cloexec[h->n_fds] = (flags & FD_CLOEXEC) != 0;
                fds[++h->n_fds] = fd;
        }
        return 0;
}

static int send_all(int sock, const void *buf, size_t n) {
        for (const char *p = buf; n;) {
                ssize_t k = send(sock, p, n, MSG_NOSIGNAL);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EPIPE;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

static int send_head(int sock, struct resident_request *h, const int *fds) {
        union {
                char buf[CMSG_SPACE(sizeof(int) * RESIDENT_MAX_FDS)];
                struct cmsghdr align;
        } u = {0};
        struct iovec iov = {.iov_base = h, .iov_len = sizeof *h};
        struct msghdr m = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = u.buf,
                           .msg_controllen = CMSG_SPACE(sizeof(int) * (h->n_fds + 1))};
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (h->n_fds + 1));
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (h->n_fds + 1));
        for (;;) {
                ssize_t n = sendmsg(sock, &m, MSG_NOSIGNAL);
                if (n == (ssize_t) sizeof *h)
                        return 0;
                if (n < 0 && errno == EINTR)
                        continue;
                return n < 0 ? -errno : -EPIPE;
        }
}

/* The request: head and descriptors, then "leash" and argv, then environ. */
static int send_request(int sock, int sig_fd, const sigset_t *mask, int argc, char **argv) {
        struct resident_request h = {.magic = RESIDENT_MAGIC, .version = RESIDENT_VERSION, .argc = (uint32_t) argc + 1};
        int fds[RESIDENT_MAX_FDS], skip[] = {sock, sig_fd};
        _cleanup_close_ int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *blob = NULL;
        size_t len = 0, pos = 0;
        int r;

        if (cwd < 0)
                return -errno;
        fds[0] = cwd;
        r = list_fds(&h, fds, skip, ELEMENTSOF(skip));
        if (r < 0)
                return r;
        for (int s = 1; s < 65; s++)
                if (sigismember(mask, s) == 1)
                        h.sigmask |= 1ULL << (s - 1);
        len = strlen("leash") + 1;
        for (int i = 0; i < argc; i++)
                len += strlen(argv[i]) + 1;
        for (char **e = environ; *e; e++, h.envc++)
                len += strlen(*e) + 1;
        if (len > RESIDENT_MAX_BLOB || !(blob = malloc(len)))
                return -E2BIG;
        memcpy(blob, "leash", 6), pos = 6;
        for (int i = 0; i < argc; i++)
                pos += (size_t) stpcpy(blob + pos, argv[i]) - (size_t) (blob + pos) + 1;
        for (char **e = environ; *e; e++)
                pos += (size_t) stpcpy(blob + pos, *e) - (size_t) (blob + pos) + 1;
        h.blob_len = len;
        r = send_head(sock, &h, fds);
        if (r < 0)
                return r;
        return send_all(sock, blob, len);
}

static int read_reply(int sock, struct resident_reply *rp) {
        size_t got = 0;

        while (got < sizeof *rp) {
                ssize_t n = recv(sock, (char *) rp + got, sizeof *rp - got, 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EPIPE;
                got += (size_t) n;
        }
        rp->text[sizeof rp->text - 1] = '\0';
        return 0;
}

/* Until the launcher's leash ends: what this process gets is passed on
 * (held until the launcher said it started one). Returns its wait status,
 * or -errno: -ECONNREFUSED when it was refused (the caller runs the job). */
static int follow(int sock, int sig_fd) {
        int32_t pending[32];
        size_t n_pending = 0;
        bool started = false;

        for (;;) {
                struct pollfd p[2] = {{.fd = sock, .events = POLLIN}, {.fd = sig_fd, .events = POLLIN}};
                struct signalfd_siginfo si;
                struct resident_reply rp;

                if (poll(p, 2, -1) < 0 && errno != EINTR)
                        return -errno;
                while (p[1].revents && read(sig_fd, &si, sizeof si) == (ssize_t) sizeof si)
                        if (n_pending < ELEMENTSOF(pending))
                                pending[n_pending++] = (int32_t) si.ssi_signo;
                if (started && n_pending) {
                        (void) send_all(sock, pending, n_pending * sizeof *pending);
                        n_pending = 0;
                }
                if (!p[0].revents)
                        continue;
                if (read_reply(sock, &rp) < 0) {
                        if (!started)
                                return -ECONNREFUSED; /* it ended before it took this caller */
                        log_error("the resident launcher ended before the job's leash did");
                        return -EPIPE;
                }
                if (rp.kind == RESIDENT_REFUSED) {
                        log_debug("the resident launcher refused: %s", rp.text);
                        return -ECONNREFUSED;
                }
                if (rp.kind == RESIDENT_ENDED)
                        return rp.value;
                started = rp.kind == RESIDENT_STARTED;
                log_debug("the resident launcher started leash as pid %d", (int) rp.value);
                if (n_pending)
                        (void) send_all(sock, pending, n_pending * sizeof *pending);
                n_pending = 0;
        }
}

int remote_run(int argc, char **argv) {
        _cleanup_close_ int sock = -1;
        int sig_fd = -1, r;
        sigset_t old;

        if (!eligible())
                return -1;
        sock = connect_launcher();
        if (sock < 0) {
                launcher_absent = sock == -ENOENT || sock == -ECONNREFUSED;
                return -1;
        }
        if (cli_guard_signals(&sig_fd, &old) < 0)
                return -1;
        r = send_request(sock, sig_fd, &old, argc, argv);
        if (r >= 0)
                r = follow(sock, sig_fd);
        if (r == -EPIPE)
                return EXIT_LEASH_FAILED;
        if (r < 0) {
                /* refused or not sent: leash runs the job itself; what came
                 * meanwhile is delivered as it would have been before */
                log_debug("the resident launcher was not used: %s", strerror(-r));
                close(sig_fd);
                (void) sigprocmask(SIG_SETMASK, &old, NULL);
                return -1;
        }
        if (WIFSIGNALED(r))
                cli_reraise(WTERMSIG(r));
        return WIFEXITED(r) ? WEXITSTATUS(r) : 128 + WTERMSIG(r);
}

bool remote_describe(char *buf, size_t size) {
        char sock[108];
        int fd;

        if (!served_here() || resident_socket_path(sock, sizeof sock) < 0)
                return false;
        if (turned_off()) {
                snprintf(buf, size, "off (LEASH_RESIDENT=0): each run asks the user manager to move leash");
                return true;
        }
        fd = connect_launcher();
        if (fd >= 0) {
                close(fd);
                snprintf(buf, size, "running (%s): runs from this session go through it, asking no manager", sock);
        } else
                snprintf(buf, size, "none (%s): this session's next run starts one in %s's leaf", sock,
                         SYSTEMD_SHARED_UNIT);
        return true;
}

/* Only from the shared unit's leaf, where the manager moved this leash. */
static bool in_shared_leaf(void) {
        static const char tail[] = "/leash.slice/" SYSTEMD_SHARED_UNIT "/" PLACEMENT_LEAF;
        char own[4096];
        size_t n;

        if (host_own_cgroup(own, sizeof own) < 0)
                return false;
        n = strlen(own);
        return n > sizeof tail - 1 && strcmp(own + n - (sizeof tail - 1), tail) == 0;
}

void remote_spawn_resident(void) {
        char exe[4096];
        ssize_t n;
        pid_t pid;

        if (!launcher_absent || getenv("LEASH_RESIDENT_SOCKET") || !in_shared_leaf())
                return;
        /* by its path, not /proc/self/exe: its name (comm) is leash, as its
         * children's, the callers' leash */
        n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
                return;
        exe[n] = '\0';
        pid = fork();
        if (pid < 0)
                return;
        if (pid == 0) {
                sigset_t none;
                int null;
                sigemptyset(&none);
                if (setsid() < 0 || fork() != 0)
                        _exit(0);
                (void) close_range(3, ~0U, 0);
                null = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 || chdir("/") < 0)
                        _exit(127);
                (void) sigprocmask(SIG_SETMASK, &none, NULL);
                execl(exe, "leash", "__resident", (char *) NULL);
                _exit(127);
        }
        (void) waitpid(pid, NULL, 0);
        log_debug("started the resident launcher");
}
