/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-probe PROBE...: a hostile job. Each probe tries one thing a sandboxed
 * job should (or should not) be able to do and prints one line,
 * "PROBE: ok" or "PROBE: ERRNO-NAME" (EPERM, EACCES, ENOSYS...), line-buffered
 * so that the lines before a SIGSYS death are kept. Informational probes
 * (caps, id, fds, stdin, cwd, nnp) print what they see. Probes:
 *
 *   tcp-socket udp6-socket netlink-socket unix-socket
 *   int80-socket int80-socketcall int80-getpid     (x86-64: the i386 ABI)
 *   io-uring ptrace process-vm unshare-user clone-newuser clone3 mount
 *   load-module perf bpf raise-rlimit threads write-cgroup mkdir-cgroup
 *   escape-cgroup caps id nnp fds stdin cwd
 *   exec PATH ARG...   (replaces the probe: for the setuid test)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AF_NETLINK
#define AF_NETLINK 16
#endif

static void result(const char *name, long rc, int err) {
        if (rc >= 0)
                printf("%s: ok\n", name);
        else {
                const char *n = strerrorname_np(err);
                if (n)
                        printf("%s: %s\n", name, n);
                else
                        printf("%s: errno %d\n", name, err);
        }
}

static void try_socket(const char *name, int domain, int type, int proto) {
        int fd = socket(domain, type, proto);
        result(name, fd, errno);
        if (fd >= 0)
                close(fd);
}

#if defined(__x86_64__)
static long int80(long nr, long a, long b, long c) {
        long ret;
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
        return ret;
}
#endif

static void probe_int80(const char *name) {
#if defined(__x86_64__)
        long r;
        if (strcmp(name, "int80-getpid") == 0) {
                r = int80(20 /* i386 getpid */, 0, 0, 0);
                result(name, r == getpid() ? 0 : -1, r < 0 ? (int) -r : EINVAL);
                return;
        }
        if (strcmp(name, "int80-socket") == 0) {
                r = int80(359 /* i386 socket */, AF_INET, SOCK_STREAM, 0);
        } else {
                /* socketcall(SYS_SOCKET, args): the args must sit below 4 GiB */
                uint32_t *args =
                        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
                if (args == MAP_FAILED) {
                        result(name, -1, errno);
                        return;
                }
                args[0] = AF_INET;
                args[1] = SOCK_STREAM;
                args[2] = 0;
                r = int80(102 /* i386 socketcall */, 1 /* SYS_SOCKET */, (long) (uintptr_t) args, 0);
        }
        if (r >= 0)
                close((int) r);
        result(name, r, r < 0 ? (int) -r : 0);
#else
        printf("%s: unsupported\n", name);
#endif
}

static void *thread_main(void *arg) {
        return arg;
}

static pid_t sleeper(void) {
        pid_t pid = fork();
        if (pid == 0) {
                for (;;)
                        pause();
        }
        return pid;
}

static void reap(pid_t pid) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

/* The cgroup2 mount point and the job's own cgroup directory. */
static int cgroup_dirs(char *mnt, char *dir, size_t size) {
        char line[4096], path[4096] = "";
        FILE *f = fopen("/proc/self/mountinfo", "re");
        mnt[0] = '\0';
        while (f && fgets(line, sizeof line, f))
                if (strstr(line, " - cgroup2 ") && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1)
                        break;
        if (f)
                fclose(f);
        f = fopen("/proc/self/cgroup", "re");
        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, "0::", 3) == 0) {
                        line[strcspn(line, "\n")] = '\0';
                        snprintf(path, sizeof path, "%s", line + 3);
                }
        if (f)
                fclose(f);
        if (!mnt[0] || !path[0])
                return -1;
        snprintf(dir, size, "%s%s", mnt, strcmp(path, "/") == 0 ? "" : path);
        return 0;
}

/* Open a cgroup file for writing and write back what it holds: permission
 * is what is tested, nothing changes if it is granted. */
static void write_back(const char *label, const char *dir, const char *file, const char *value) {
        char p[8192], cur[512] = "";
        ssize_t n;
        int fd;

        snprintf(p, sizeof p, "%s/%s", dir, file);
        if (access(p, F_OK) < 0) {
                printf("%s %s: absent\n", label, file);
                return;
        }
        fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                n = read(fd, cur, sizeof cur - 1);
                cur[n > 0 ? n : 0] = '\0';
                close(fd);
        }
        fd = open(p, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
                char l[256];
                snprintf(l, sizeof l, "%s %s", label, file);
                result(l, -1, errno);
                return;
        }
        n = write(fd, value ? value : cur, strlen(value ? value : cur));
        {
                char l[256];
                snprintf(l, sizeof l, "%s %s", label, file);
                result(l, n, errno);
        }
        close(fd);
}

static void print_status(const char *prefixes[]) {
        char line[512];
        FILE *f = fopen("/proc/self/status", "re");
        while (f && fgets(line, sizeof line, f))
                for (const char **p = prefixes; *p; p++)
                        if (strncmp(line, *p, strlen(*p)) == 0)
                                fputs(line, stdout);
        if (f)
                fclose(f);
}

static int probe(const char *name, char **rest) {
        long r;

        if (strcmp(name, "tcp-socket") == 0)
                try_socket(name, AF_INET, SOCK_STREAM, 0);
        else if (strcmp(name, "udp6-socket") == 0)
                try_socket(name, AF_INET6, SOCK_DGRAM, 0);
        else if (strcmp(name, "netlink-socket") == 0)
                try_socket(name, AF_NETLINK, SOCK_RAW, 0);
        else if (strcmp(name, "unix-socket") == 0) {
                int sv[2];
                char c = 0;
                r = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
                if (r == 0) {
                        r = write(sv[0], "x", 1) == 1 && read(sv[1], &c, 1) == 1 && c == 'x' ? 0 : -1;
                        close(sv[0]);
                        close(sv[1]);
                }
                if (r == 0) {
                        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                        r = fd;
                        if (fd >= 0)
                                close(fd);
                }
                result(name, r, errno);
        } else if (strncmp(name, "int80-", 6) == 0)
                probe_int80(name);
        else if (strcmp(name, "io-uring") == 0) {
                char params[120] = {0}; /* struct io_uring_params */
                r = syscall(__NR_io_uring_setup, 1, params);
                result(name, r, errno);
                if (r >= 0)
                        close((int) r);
        } else if (strcmp(name, "ptrace") == 0 || strcmp(name, "process-vm") == 0) {
                static volatile int secret = 42;
                pid_t pid = sleeper();
                if (name[0] == 'p' && name[1] == 't') {
                        r = ptrace(PTRACE_ATTACH, pid, 0, 0);
                        result(name, r, errno);
                } else {
                        int v = 0;
                        struct iovec local = {&v, sizeof v}, remote = {(void *) &secret, sizeof v};
                        r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
                        result(name, r == (long) sizeof v && v == 42 ? 0 : -1, r < 0 ? errno : EIO);
                }
                reap(pid);
        } else if (strcmp(name, "unshare-user") == 0) {
                r = unshare(CLONE_NEWUSER);
                result(name, r, errno);
        } else if (strcmp(name, "clone-newuser") == 0) {
                r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
                if (r == 0)
                        _exit(0);
                if (r > 0)
                        waitpid((pid_t) r, NULL, 0);
                result(name, r, errno);
        } else if (strcmp(name, "clone3") == 0) {
                struct clone_args args = {.exit_signal = SIGCHLD};
                r = syscall(SYS_clone3, &args, sizeof args);
                if (r == 0)
                        _exit(0);
                if (r > 0)
                        waitpid((pid_t) r, NULL, 0);
                result(name, r, errno);
        } else if (strcmp(name, "mount") == 0) {
                /* a target that does not exist: nothing can be mounted */
                r = mount("none", "/nonexistent/leash-probe", "tmpfs", 0, NULL);
                result(name, r, errno);
        } else if (strcmp(name, "load-module") == 0) {
                r = syscall(SYS_finit_module, -1, "", 0); /* EBADF when it reaches the loader */
                result(name, r, errno);
        } else if (strcmp(name, "perf") == 0) {
                r = syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0); /* EFAULT when it reaches perf */
                result(name, r, errno);
        } else if (strcmp(name, "bpf") == 0) {
                r = syscall(SYS_bpf, 0x7fff, NULL, 0);
                result(name, r, errno);
        } else if (strcmp(name, "raise-rlimit") == 0) {
                struct rlimit rl;
                getrlimit(RLIMIT_NOFILE, &rl);
                if (rl.rlim_max != RLIM_INFINITY)
                        rl.rlim_max++;
                r = setrlimit(RLIMIT_NOFILE, &rl);
                result(name, r, errno);
        } else if (strcmp(name, "threads") == 0) {
                pthread_t t[4];
                int n = 0, e = 0;
                for (; n < 4; n++)
                        if ((e = pthread_create(&t[n], NULL, thread_main, NULL)) != 0)
                                break;
                for (int i = 0; i < n; i++)
                        pthread_join(t[i], NULL);
                result(name, n == 4 ? 0 : -1, e);
        } else if (strcmp(name, "write-cgroup") == 0 || strcmp(name, "mkdir-cgroup") == 0 ||
                   strcmp(name, "escape-cgroup") == 0) {
                char mnt[4096], dir[4096], sub[4200];
                if (cgroup_dirs(mnt, dir, sizeof dir) < 0) {
                        printf("%s: no cgroup2\n", name);
                        return 0;
                }
                if (name[0] == 'w') {
                        static const char *files[] = {"memory.max",
                                                      "memory.high",
                                                      "memory.swap.max",
                                                      "pids.max",
                                                      "cpu.max",
                                                      "cgroup.procs",
                                                      "cgroup.max.descendants",
                                                      "cgroup.max.depth",
                                                      "cgroup.subtree_control",
                                                      NULL};
                        for (const char **f = files; *f; f++)
                                write_back(name, dir, *f, strcmp(*f, "cgroup.procs") == 0 ? "0" : NULL);
                } else if (name[0] == 'm') {
                        snprintf(sub, sizeof sub, "%s/leash-probe-sub", dir);
                        r = mkdir(sub, 0755);
                        result(name, r, errno);
                        if (r == 0)
                                rmdir(sub);
                } else
                        /* moving itself to the cgroup2 root: leaving the job cgroup */
                        write_back(name, mnt, "cgroup.procs", "0");
        } else if (strcmp(name, "caps") == 0) {
                const char *p[] = {"Cap", "NoNewPrivs", "Seccomp:", NULL};
                print_status(p);
        } else if (strcmp(name, "id") == 0) {
                gid_t g[64];
                int n = getgroups(64, g);
                printf("id: uid=%u euid=%u gid=%u egid=%u groups=", (unsigned) getuid(), (unsigned) geteuid(),
                       (unsigned) getgid(), (unsigned) getegid());
                for (int i = 0; i < n; i++)
                        printf("%s%u", i ? "," : "", (unsigned) g[i]);
                printf("\n");
        } else if (strcmp(name, "nnp") == 0)
                printf("nnp: %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
        else if (strcmp(name, "fds") == 0) {
                DIR *d = opendir("/proc/self/fd");
                struct dirent *e;
                int n = 0;
                printf("fds:");
                while (d && (e = readdir(d))) {
                        int fd = atoi(e->d_name);
                        if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
                                continue;
                        printf(" %d", fd);
                        n++;
                }
                if (d)
                        closedir(d);
                printf("%s\n", n ? "" : " none");
        } else if (strcmp(name, "stdin") == 0) {
                char t[4096];
                ssize_t n = readlink("/proc/self/fd/0", t, sizeof t - 1);
                t[n > 0 ? n : 0] = '\0';
                printf("stdin: %s\n", n > 0 ? t : "closed");
        } else if (strcmp(name, "cwd") == 0) {
                char t[4096];
                printf("cwd: %s\n", getcwd(t, sizeof t) ? t : "?");
        } else if (strcmp(name, "exec") == 0) {
                if (!rest[0])
                        return 2;
                execv(rest[0], rest);
                result(name, -1, errno);
                return 1;
        } else {
                fprintf(stderr, "lh-probe: unknown probe '%s'\n", name);
                return 2;
        }
        return 0;
}

int main(int argc, char **argv) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc < 2) {
                fprintf(stderr, "usage: lh-probe PROBE...\n");
                return 2;
        }
        for (int i = 1; i < argc; i++) {
                int r = probe(argv[i], argv + i + 1);
                if (r)
                        return r;
                if (strcmp(argv[i], "exec") == 0)
                        break;
        }
        return 0;
}
