/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-hostile STEP [+ STEP]...: the job of tests/integration/hostile.sh. Each
 * step tries one attack on the terminal, the supervisor or the cgroup tree and
 * prints one line, "NAME: ok" or "NAME: ERRNO-NAME", line-buffered, so the
 * test sees how far the job got. Steps:
 *
 *   tty                  open /dev/tty (the controlling terminal)
 *   tiocsti TEXT         push TEXT into the input of /dev/tty, else of fd 0
 *   tiocsti-hi TEXT      the same with garbage in the upper 32 bits of the
 *                        request (the kernel reads an unsigned int)
 *   write FILE TEXT      write TEXT into FILE (cgroup.procs, cgroup.freeze...)
 *   write-self FILE      write our own pid into FILE (move into a cgroup)
 *   write-pidfile FILE PIDFILE  write the pid held in PIDFILE into FILE
 *   kill-file PIDFILE SIG       kill(the pid held in PIDFILE, SIG)
 *   mkdir DIR            mkdir DIR
 *   kill PID SIG         kill(PID, SIG), SIG a number
 *   pids                 how many processes /proc shows
 *   ppid                 our parent's pid
 *   cgroup               our cgroup2 path (from /proc/self/cgroup)
 *   wait-signal SECONDS  wait for SIGINT/SIGTERM/SIGHUP/SIGXCPU, print
 *                        "signal: NAME" for each, exit 0 after the first
 *   sleep SECONDS        sleep
 *   chain N              a fork-exit chain: fork, the parent exits at once,
 *                        the child goes on, N times; the last link goes on
 *                        with the next step. Prints nothing.
 *   exit N               exit with status N
 *   raise SIG            die of signal SIG (default action)
 *
 * A path argument starting with @CG@ is relative to our own cgroup2
 * directory (@CG@/.. is its parent).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void result(const char *name, long rc, int err) {
        if (rc >= 0)
                printf("%s: ok\n", name);
        else {
                const char *n = strerrorname_np(err);
                printf("%s: %s\n", name, n ? n : "errno");
        }
}

static int tiocsti(const char *text, unsigned long hi) {
        int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
        int err = errno;
        if (fd < 0) {
                fd = 0; /* the terminal we inherited, if any */
                if (!isatty(0)) {
                        errno = err;
                        return -1;
                }
        }
        for (const char *p = text; *p; p++)
                if (syscall(SYS_ioctl, fd, hi | TIOCSTI, p) < 0)
                        return -1;
        if (syscall(SYS_ioctl, fd, hi | TIOCSTI, "\n") < 0)
                return -1;
        return 0;
}

static int write_file(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;
        if (fd < 0)
                return -1;
        n = write(fd, text, strlen(text));
        if (n < 0) {
                int e = errno;
                close(fd);
                errno = e;
                return -1;
        }
        return close(fd);
}

static char path_buf[2][4096];

/* "@CG@/x" -> "<cgroup2 mount><our cgroup>/x" */
static const char *expand(const char *arg, int slot) {
        char line[4096], mnt[1024] = "", cg[2048] = "";
        FILE *f;

        if (strncmp(arg, "@CG@", 4) != 0)
                return arg;
        f = fopen("/proc/self/mountinfo", "re");
        while (f && fgets(line, sizeof line, f)) {
                char a[1024], b[1024];
                if (strstr(line, " - cgroup2 ") && sscanf(line, "%*s %*s %*s %1023s %1023s", b, a) == 2) {
                        snprintf(mnt, sizeof mnt, "%s", a);
                        break;
                }
        }
        if (f)
                fclose(f);
        f = fopen("/proc/self/cgroup", "re");
        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, "0::", 3) == 0) {
                        line[strcspn(line, "\n")] = '\0';
                        snprintf(cg, sizeof cg, "%s", line + 3);
                }
        if (f)
                fclose(f);
        snprintf(path_buf[slot], sizeof path_buf[slot], "%s%s%s", mnt, cg, arg + 4);
        return path_buf[slot];
}

static long pid_from(const char *file) {
        char buf[32] = "";
        FILE *f = fopen(file, "re");
        if (!f || !fgets(buf, sizeof buf, f)) {
                if (f)
                        fclose(f);
                return -1;
        }
        fclose(f);
        return atol(buf);
}

static void on_signal(int sig) {
        (void) sig;
}

static int wait_signal(int seconds) {
        sigset_t set;
        siginfo_t si;
        struct timespec ts = {seconds, 0};
        int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGXCPU};

        sigemptyset(&set);
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
                signal(sigs[i], on_signal);
                sigaddset(&set, sigs[i]);
        }
        sigprocmask(SIG_BLOCK, &set, NULL);
        printf("waiting: ok\n");
        if (getenv("LH_READY")) { /* the test sends its signal once this file exists */
                FILE *f = fopen(getenv("LH_READY"), "we");
                if (f)
                        fclose(f);
        }
        /* the freezer (leash signals a frozen cgroup) interrupts the wait: again */
        while (sigtimedwait(&set, &si, &ts) < 0)
                if (errno != EINTR)
                        return -1;
        printf("signal: %s\n", sigabbrev_np(si.si_signo));
        /* more than one may have been sent at once (the terminal's, then the soft one) */
        ts = (struct timespec){0, 200 * 1000 * 1000};
        for (;;) {
                if (sigtimedwait(&set, &si, &ts) > 0)
                        printf("signal: %s\n", sigabbrev_np(si.si_signo));
                else if (errno != EINTR)
                        break;
        }
        exit(0);
}

static long count_pids(void) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        long n = 0;
        if (!d)
                return -1;
        while ((de = readdir(d)))
                if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
                        n++;
        closedir(d);
        return n;
}

static void print_cgroup(void) {
        char buf[4096];
        FILE *f = fopen("/proc/self/cgroup", "re");
        while (f && fgets(buf, sizeof buf, f))
                if (strncmp(buf, "0::", 3) == 0)
                        printf("cgroup: %s", buf + 3);
        if (f)
                fclose(f);
}

int main(int argc, char **argv) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        for (int i = 1; i < argc; i++) {
                const char *s = argv[i];
                int need = 0;
                long r = 0;

                if (strcmp(s, "+") == 0)
                        continue;
                if (!strcmp(s, "tiocsti") || !strcmp(s, "tiocsti-hi") || !strcmp(s, "wait-signal") ||
                    !strcmp(s, "write-self") || !strcmp(s, "mkdir") || !strcmp(s, "sleep") || !strcmp(s, "exit") ||
                    !strcmp(s, "raise") || !strcmp(s, "chain"))
                        need = 1;
                else if (!strcmp(s, "write") || !strcmp(s, "kill") || !strcmp(s, "write-pidfile") ||
                         !strcmp(s, "kill-file"))
                        need = 2;
                if (i + need >= argc) {
                        fprintf(stderr, "lh-hostile: %s needs %d argument(s)\n", s, need);
                        return 2;
                }
                errno = 0;
                if (!strcmp(s, "tty")) {
                        int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
                        result(s, fd, errno);
                } else if (!strcmp(s, "tiocsti")) {
                        r = tiocsti(argv[i + 1], 0);
                        result(s, r, errno);
                } else if (!strcmp(s, "tiocsti-hi")) {
                        r = tiocsti(argv[i + 1], 0xdead00000000UL);
                        result(s, r, errno);
                } else if (!strcmp(s, "write")) {
                        r = write_file(expand(argv[i + 1], 0), argv[i + 2]);
                        result(s, r, errno);
                } else if (!strcmp(s, "write-self")) {
                        char pid[32];
                        snprintf(pid, sizeof pid, "%d", (int) getpid());
                        r = write_file(expand(argv[i + 1], 0), pid);
                        result(s, r, errno);
                } else if (!strcmp(s, "write-pidfile")) {
                        char pid[32];
                        snprintf(pid, sizeof pid, "%ld", pid_from(argv[i + 2]));
                        r = write_file(expand(argv[i + 1], 0), pid);
                        result(s, r, errno);
                } else if (!strcmp(s, "kill-file")) {
                        long pid = pid_from(argv[i + 1]);
                        r = pid > 0 ? kill((pid_t) pid, atoi(argv[i + 2])) : (errno = EINVAL, -1);
                        result(s, r, errno);
                } else if (!strcmp(s, "mkdir")) {
                        r = mkdir(expand(argv[i + 1], 0), 0755);
                        result(s, r, errno);
                } else if (!strcmp(s, "kill")) {
                        r = kill((pid_t) atol(argv[i + 1]), atoi(argv[i + 2]));
                        result(s, r, errno);
                } else if (!strcmp(s, "pids"))
                        printf("pids: %ld\n", count_pids());
                else if (!strcmp(s, "ppid"))
                        printf("ppid: %d\n", (int) getppid());
                else if (!strcmp(s, "cgroup"))
                        print_cgroup();
                else if (!strcmp(s, "wait-signal")) {
                        r = wait_signal(atoi(argv[i + 1]));
                        result("wait-signal", r, errno);
                } else if (!strcmp(s, "sleep")) {
                        struct timespec ts = {atoi(argv[i + 1]), 0};
                        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                                ;
                } else if (!strcmp(s, "chain")) {
                        long n = atol(argv[i + 1]), fails = 0;
                        fflush(NULL);
                        for (long k = 0; k < n && fails < 10000;) {
                                pid_t p = fork();
                                if (p < 0) {
                                        fails++;
                                        continue;
                                }
                                if (p > 0)
                                        _exit(0);
                                k++;
                        }
                } else if (!strcmp(s, "exit"))
                        return atoi(argv[i + 1]);
                else if (!strcmp(s, "raise")) {
                        int sig = atoi(argv[i + 1]);
                        signal(sig, SIG_DFL);
                        raise(sig);
                        return 120;
                } else {
                        fprintf(stderr, "lh-hostile: unknown step %s\n", s);
                        return 2;
                }
                i += need;
        }
        return 0;
}
