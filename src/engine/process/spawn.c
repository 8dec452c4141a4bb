/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Starting the job. clone3(CLONE_INTO_CGROUP | CLONE_PIDFD) creates the child
 * already inside the job cgroup, so it never runs one instruction unconfined,
 * and returns a pidfd for the event loop. It is used fork-like (no CLONE_VM),
 * so the child runs on a copy of our stack and may only call async-signal-safe
 * functions until exec. The sandbox steps (sandbox.c) keep to that: all they
 * need (ids, groups, capability sets, the BPF program, the environment) was
 * prepared in the parent; the libcap calls they make are thin wrappers around
 * capset/prctl on memory allocated before the clone.
 *
 * On x86_64 it is the vfork form (CLONE_VM | CLONE_VFORK, see do_clone3):
 * leash sleeps until the child has exec'd, and the child, sharing leash's
 * memory, must not allocate, take locks or set globals before exec: the job's
 * environment goes to execvpe(), never into environ. Its stack is mapped for
 * the spawn with a guard page below it and room for execvpe's ENOEXEC
 * fallback, which copies argv (argc + 2 pointers) onto it. The command is
 * looked up in the job's PATH (exec_path), without allocating.
 *
 * spawn_fork() is the fork form (no CLONE_VM) for leash_job_fork(): the child
 * returns to the caller, set up, inside the cgroup. It runs the caller's
 * code, malloc included: where the caller has threads it is cloned from a
 * copy made by glibc's fork() (libcfork.c).
 *
 * Every child has exit signal 0: no SIGCHLD, and a host's waitpid(-1) cannot
 * reap it (only a wait with __WALL/__WCLONE can); leash waits on its pidfd.
 * Not the child of glibc's fork(), whose exit signal is SIGCHLD.
 *
 * Fallback (kernels before 5.7, or the CLI's LEASH_SPAWN=fork test hook): a
 * fork-like clone with exit signal 0 and CLONE_PIDFD, and the child moves
 * itself into the cgroup (writing "0" to cgroup.procs through the inherited
 * dirfd) before it does anything else. Either way no command runs outside
 * the job cgroup.
 *
 * Errors in the child travel back over a CLOEXEC pipe as {step, errno}: EOF
 * on the pipe means exec succeeded. That is how 125 (setup), 126 (not
 * executable) and 127 (not found) are told apart. The vfork form needs no
 * pipe (four system calls fewer): its child writes the record into leash's
 * memory, which it shares, and leash reads it once the kernel has woken it,
 * which is after the child's exec or exit (as glibc's posix_spawn does).
 */
#include "spawn.h"
#include "holder.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../basic/macro.h"
#include "../heldfd.h"
#include "isolate.h"
#include "libcfork.h"
#include "undumpable.h"
#include "../../sandbox/sandbox.h"

const char *spawn_step_to_string(enum spawn_step s) {
        switch (s) {
        case SPAWN_STEP_CGROUP:
                return "move the job into its cgroup";
        case SPAWN_STEP_RLIMIT:
                return "set an rlimit for the job";
        case SPAWN_STEP_PDEATHSIG:
                return "set the job's parent-death signal";
        case SPAWN_STEP_SESSION:
                return "start a new session for the job";
        case SPAWN_STEP_ISOLATE:
                return "isolate the job (namespaces, read-only cgroup filesystem, init)";
        case SPAWN_STEP_EXEC:
                return "execute the command";
        case SPAWN_STEP_BOUNDING:
                return "drop capabilities from the bounding set";
        case SPAWN_STEP_SETGROUPS:
                return "set the job's supplementary groups";
        case SPAWN_STEP_SETGID:
                return "switch to the job's group (--group)";
        case SPAWN_STEP_SETUID:
                return "switch to the job's user (--user)";
        case SPAWN_STEP_CHDIR:
                return "change to the job's directory (--chdir)";
        case SPAWN_STEP_STDIN:
                return "connect the job's stdin to /dev/null";
        case SPAWN_STEP_FDS:
                return "close inherited file descriptors";
        case SPAWN_STEP_CAPS:
                return "set the job's capabilities";
        case SPAWN_STEP_NO_NEW_PRIVS:
                return "set no_new_privs";
        case SPAWN_STEP_SECCOMP:
                return "load the seccomp filter";
        case SPAWN_STEP_NONE:
                break;
        }
        return "start the job";
}

/* Where a child's failure goes: down the pipe (fd), or, in the vfork form,
 * into the parent's record (shared, in the memory both share). */
struct child_report {
        int fd;
        struct shared_failure *shared;
};

struct shared_failure {
        bool failed;
        struct spawn_failure f;
};

static _Noreturn void child_fail_with(const struct child_report *to, struct spawn_failure f) {
        if (to->shared) {
                to->shared->f = f;
                to->shared->failed = true;
        } else {
                ssize_t n _unused_ = write(to->fd, &f, sizeof f);
        }
        _exit(127);
}

static _Noreturn void child_fail(const struct child_report *to, enum spawn_step step, int error) {
        child_fail_with(to, (struct spawn_failure){.step = step, .error = error});
}

/* In the child: async-signal-safe calls only. Returns when set up. */
static void child_setup(const struct spawn_params *p, const struct child_report *errfd, pid_t parent, bool migrate) {
        if (migrate && p->cgroup_fd >= 0) {
                int fd = openat(p->cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, "0", 1) != 1)
                        child_fail(errfd, SPAWN_STEP_CGROUP, errno);
                close(fd);
        }
        /* If leash dies, the main process goes with it at once; the rest of the
         * tree is the watchdog's job (see watchdog.c). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                child_fail(errfd, SPAWN_STEP_PDEATHSIG, errno);
        if (getppid() != parent)
                _exit(127);
        /* A session of its own: the job has no controlling terminal, so it
         * cannot push input into the shell that started leash (TIOCSTI,
         * bubblewrap's CVE-2017-5226) nor signal that shell's process groups
         * through it. `leash run` passes on what the terminal sends (leash_job_signal). */
        if (setsid() < 0)
                child_fail(errfd, SPAWN_STEP_SESSION, errno);
        for (unsigned i = 0; i < p->n_rlimits; i++) {
                /* soft = hard = value: the job may not raise it back. An unprivileged
                 * leash asking above its own hard limit fails here, loudly. */
                struct rlimit rl = {p->rlimits[i].value, p->rlimits[i].value};
                if (setrlimit(p->rlimits[i].resource, &rl) < 0)
                        child_fail_with(errfd, (struct spawn_failure){SPAWN_STEP_RLIMIT, errno, p->rlimits[i].resource,
                                                                      p->rlimits[i].value});
        }
        if (p->sigchld_ignored)
                (void) signal(SIGCHLD, SIG_IGN);
        if (p->sandbox) {
                enum spawn_step step = SPAWN_STEP_NONE;
                int r = sandbox_child_setup(p->sandbox, parent, &step);
                if (r < 0)
                        child_fail(errfd, step, -r);
        }
        if (p->child_mask && sigprocmask(SIG_SETMASK, p->child_mask, NULL) < 0)
                child_fail(errfd, SPAWN_STEP_EXEC, errno);
        /* a forked child runs the caller's code, not an exec: nothing of the
         * library's (its own job's timer, other jobs' fds) may reach it.
         * Before seccomp, which could refuse close(). */
        if (p->close_held)
                heldfd_child_close_all();
        if (p->sandbox) {
                enum spawn_step step = SPAWN_STEP_NONE;
                int r = sandbox_child_seccomp(p->sandbox, &step);
                if (r < 0)
                        child_fail(errfd, step, -r);
        }
}

/* execve, or the shell for a file without a #! line (as execvp does) */
static void exec_one(const char *path, char *const *argv, char *const *envp) {
        size_t argc = 0;

        execve(path, argv, envp);
        if (errno != ENOEXEC)
                return;
        while (argv[argc])
                argc++;
        {
                /* room for these argc + 2 pointers is in the stack's size; no heap here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wvla"
                const char *sh[argc + 2];
#pragma GCC diagnostic pop
                sh[0] = "/bin/sh";
                sh[1] = path;
                for (size_t i = 1; i <= argc; i++)
                        sh[i + 1] = argv[i];
                execve("/bin/sh", (char *const *) sh, envp);
                errno = ENOEXEC;
        }
}

/* execvpe with the job's PATH (the one in envp, not leash's), with no
 * allocation: the vfork child must not touch the heap. */
static void exec_path(const char *file, char *const *argv, char *const *envp) {
        const char *path = "/usr/local/bin:/usr/bin:/bin";
        bool eacces = false;
        size_t flen = strlen(file);

        if (strchr(file, '/')) {
                exec_one(file, argv, envp);
                return;
        }
        for (char *const *e = envp; *e; e++)
                if (strncmp(*e, "PATH=", 5) == 0) {
                        path = *e + 5;
                        break;
                }
        for (const char *p = path;; p++) {
                const char *end = strchrnul(p, ':');
                size_t dlen = (size_t) (end - p);
                char buf[PATH_MAX];

                if (dlen + 1 + flen < sizeof buf) {
                        memcpy(buf, p, dlen);
                        buf[dlen] = dlen ? '/' : '\0';
                        memcpy(buf + (dlen ? dlen + 1 : 0), file, flen + 1);
                        exec_one(buf, argv, envp);
                        if (errno == EACCES)
                                eacces = true;
                        else if (errno != ENOENT && errno != ENOTDIR && errno != ENAMETOOLONG && errno != ESTALE &&
                                 errno != ENODEV && errno != ETIMEDOUT)
                                return;
                }
                if (!*end)
                        break;
                p = end;
        }
        errno = eacces ? EACCES : ENOENT;
}

/* AddressSanitizer cannot follow a switch to a stack of our own: the vfork
 * child's first noreturn call makes it print "False positive error reports may
 * follow" on the job's stderr. Sanitizer builds take the fork form. */
#if defined(__SANITIZE_ADDRESS__)
#define SPAWN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPAWN_ASAN 1
#endif
#endif
#if defined(__x86_64__) && !defined(SPAWN_ASAN)
#define SPAWN_VFORK 1
#else
#define SPAWN_VFORK 0
#endif

static _Noreturn void child_main(const struct spawn_params *p, const struct child_report *errfd, pid_t parent,
                                 bool migrate) {
        child_setup(p, errfd, parent, migrate);
        exec_path(p->argv[0], p->argv, p->sandbox && p->sandbox->envp ? p->sandbox->envp : environ);
        child_fail(errfd, SPAWN_STEP_EXEC, errno);
}

#if SPAWN_VFORK
/* The vfork form of clone3, as posix_spawn does with clone: CLONE_VM |
 * CLONE_VFORK, so the kernel neither copies leash's page tables nor tears the
 * copy down again at exec, and leash takes no copy-on-write faults after it.
 * The child runs child_main on a stack of its own and never returns. glibc
 * has no clone3 wrapper, hence the few lines of assembly: rcx and r11 are
 * what syscall clobbers; fn and arg ride in callee-saved registers, which the
 * child inherits. */
struct child_args {
        const struct spawn_params *p;
        const struct child_report *errfd;
        pid_t parent;
};

static int child_trampoline(void *arg) {
        const struct child_args *a = arg;
        child_main(a->p, a->errfd, a->parent, false);
}

static long clone3_on_stack(struct clone_args *args, int (*fn)(void *), void *arg) {
        register long rax __asm__("rax") = SYS_clone3;
        register void *r12 __asm__("r12") = (void *) fn;
        register void *r13 __asm__("r13") = arg;

        __asm__ volatile("syscall\n\t"
                         "testq %%rax, %%rax\n\t"
                         "jnz 1f\n\t"
                         "xorl %%ebp, %%ebp\n\t"
                         "movq %%r13, %%rdi\n\t"
                         "callq *%%r12\n\t"
                         "movl %%eax, %%edi\n\t"
                         "movl $60, %%eax\n\t" /* SYS_exit: not reached, child_main does not return */
                         "syscall\n\t"
                         "hlt\n"
                         "1:\n\t"
                         : "+r"(rax)
                         : "D"(args), "S"(sizeof *args), "r"(r12), "r"(r13)
                         : "rcx", "r11", "memory");
        return rax;
}

/* 128 KiB for the sandbox steps and exec, plus exec_path's copies: the
 * candidate path (PATH_MAX) and the ENOEXEC fallback's argv (argc + 2
 * pointers). Below it one PROT_NONE page: an overflow is a SIGSEGV in the
 * child, never a write into leash's memory. */
static size_t child_stack_size(char *const *argv) {
        size_t argc = 0, page = (size_t) sysconf(_SC_PAGESIZE);
        size_t size;

        while (argv[argc])
                argc++;
        size = 128 * 1024 + PATH_MAX + (argc + 2) * sizeof(char *);
        return (size + page - 1) / page * page + page;
}
#endif

/* Returns the pid in the parent, -1 with errno on failure; the child never
 * returns from here. */
static pid_t do_clone3(const struct spawn_params *p, const struct child_report *errfd, pid_t parent, int *ret_pidfd) {
        struct clone_args args = {
                /* no cgroup (placement none): a plain clone, leash's own cgroup */
                .flags = CLONE_PIDFD | (p->cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0),
                .pidfd = (uint64_t) (uintptr_t) ret_pidfd,
                .exit_signal = 0,
                .cgroup = p->cgroup_fd >= 0 ? (uint64_t) p->cgroup_fd : 0,
        };
#if SPAWN_VFORK
        struct child_args a = {.p = p, .errfd = errfd, .parent = parent};
        size_t size = child_stack_size(p->argv), page = (size_t) sysconf(_SC_PAGESIZE);
        void *stack;
        long r;

        stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                return -1;
        if (mprotect(stack, page, PROT_NONE) < 0) {
                int e = errno;
                munmap(stack, size);
                errno = e;
                return -1;
        }
        args.flags |= CLONE_VM | CLONE_VFORK;
        args.stack = (uint64_t) (uintptr_t) stack + page;
        args.stack_size = size - page;
        r = clone3_on_stack(&args, child_trampoline, &a);
        (void) munmap(stack, size); /* the child has exec'd or exited: it no longer uses it */
        if (r < 0) {
                errno = (int) -r;
                return -1;
        }
        return (pid_t) r;
#else
        pid_t pid = (pid_t) syscall(SYS_clone3, &args, sizeof args);
        if (pid == 0)
                child_main(p, errfd, parent, false);
        return pid;
#endif
}

/* The fork-like fallback: exit signal 0 and a pidfd from the clone itself
 * (5.2+); before that, glibc's fork() and pidfd_open(). Returns 0 in the child. */
static pid_t fork_fallback(int *ret_pidfd) {
        pid_t pid;
#if !defined(__s390__) && !defined(__s390x__)
        int pidfd = -1;
        pid = (pid_t) syscall(SYS_clone, CLONE_PIDFD, 0, &pidfd, 0, 0);
        if (pid > 0)
                *ret_pidfd = pidfd;
        if (pid >= 0 || errno != EINVAL)
                return pid;
#endif
        return libcfork(ret_pidfd);
}

/* In the parent: EOF on the pipe = the child is set up (exec'd, or returned
 * to the caller); a record = it failed there and is reaped. */
static void collect(int rfd, pid_t pid, int *pidfd, pid_t *ret_pid, int *ret_pidfd, struct spawn_failure *ret_failure) {
        struct spawn_failure f = {0};
        siginfo_t si;
        ssize_t n;

        do
                n = read(rfd, &f, sizeof f);
        while (n < 0 && errno == EINTR);
        *ret_pid = pid;
        if (n == (ssize_t) sizeof f) {
                (void) waitid(P_PID, (id_t) pid, &si, WEXITED | __WALL);
                *ret_failure = f;
                *ret_pidfd = -1;
        } else {
                ret_failure->step = SPAWN_STEP_NONE;
                ret_failure->error = 0;
                *ret_pidfd = TAKE_FD(*pidfd);
        }
}

/* The vfork form's spawn: no pipe, the child's failure read from the record
 * it shares with leash. 1: done (started or failed, said in the outputs);
 * 0: no clone3 here, another form is to be taken; -errno. */
static int spawn_vfork(const struct spawn_params *p, pid_t parent, pid_t *ret_pid, int *ret_pidfd,
                       struct spawn_failure *ret_failure) {
#if SPAWN_VFORK
        _cleanup_close_ int pidfd = -1;
        struct shared_failure shared = {.failed = false};
        struct child_report to = {.fd = -1, .shared = &shared};
        pid_t pid = do_clone3(p, &to, parent, &pidfd);
        siginfo_t si;

        if (pid < 0)
                return errno == ENOSYS || errno == E2BIG || errno == EINVAL ? 0 : negative_errno();
        *ret_pid = pid;
        /* leash slept until the child's exec or exit: what it wrote is there */
        if (shared.failed) {
                (void) waitid(P_PID, (id_t) pid, &si, WEXITED | __WALL);
                *ret_failure = shared.f;
                *ret_pidfd = -1;
        } else {
                ret_failure->step = SPAWN_STEP_NONE;
                ret_failure->error = 0;
                *ret_pidfd = TAKE_FD(pidfd);
        }
        return 1;
#else
        (void) p, (void) parent, (void) ret_pid, (void) ret_pidfd, (void) ret_failure;
        return 0;
#endif
}

int spawn_job(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd, struct spawn_failure *ret_failure,
              bool *ret_used_clone3) {
        _cleanup_close_ int rfd = -1, wfd = -1, pidfd = -1;
        struct child_report to = {.fd = -1};
        int fds[2];
        pid_t parent = getpid(), pid = -1;
        bool used_clone3 = false;

        if (!p->holder && !p->isolate && !p->force_fallback) {
                int r = spawn_vfork(p, parent, ret_pid, ret_pidfd, ret_failure);
                if (r < 0)
                        return r;
                if (r > 0) {
                        *ret_used_clone3 = true;
                        return 0;
                }
        }
        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        rfd = fds[0];
        wfd = fds[1];
        to.fd = wfd;

        if (p->holder) {
                pid_t holder;
                /* the main process execs without allocating: a raw clone is safe */
                int r = holder_fork(p->holder, false, false, &pid, &pidfd, &holder);
                if (r < 0)
                        return r;
                if (r == 1)
                        child_main(p, &to, holder, false);
        } else if (p->isolate) {
                /* fork-like: the init never execs, a vfork would never return */
                pid = isolate_clone(p->cgroup_fd, &pidfd);
                if (pid < 0)
                        return negative_errno();
                if (pid == 0) {
                        int r = isolate_child(p->isolate, wfd);
                        if (r < 0)
                                child_fail(&to, SPAWN_STEP_ISOLATE, -r);
                        child_main(p, &to, 1, false); /* the job, pid 2, child of the init */
                }
                used_clone3 = true;
        } else if (!p->force_fallback && !SPAWN_VFORK) {
                pid = do_clone3(p, &to, parent, &pidfd);
                if (pid > 0)
                        used_clone3 = true;
                else if (errno != ENOSYS && errno != E2BIG && errno != EINVAL)
                        return negative_errno(); /* EAGAIN, ENOMEM, EBUSY: a real failure */
        }
        if (!used_clone3 && !p->holder) {
                pid = fork_fallback(&pidfd);
                if (pid < 0)
                        return negative_errno();
                if (pid == 0)
                        child_main(p, &to, parent, true);
        }
        close(TAKE_FD(wfd));
        collect(rfd, pid, &pidfd, ret_pid, ret_pidfd, ret_failure);
        *ret_used_clone3 = used_clone3;
        return 0;
}

/* The clone of spawn_fork, the heldfd lock held (its caller's): in the
 * child, returns 0; in the parent, the pid and its pidfd, or -1 and errno.
 * A caller with threads is copied by glibc's fork(), which takes the malloc
 * locks, and that copy clones the job into the cgroup (libcfork.c); where
 * it cannot, the fork's child moves itself in. */
static pid_t fork_clone(const struct spawn_params *p, int *pidfd, pid_t *parent, bool *ret_migrate) {
        bool threaded = !p->raw_fork && libcfork_needed();
        pid_t pid = -1;

        *ret_migrate = false;
        if (p->holder) {
                /* spawn_fork holds the heldfd lock */
                int r = holder_fork(p->holder, true, threaded, &pid, pidfd, parent);
                if (r < 0) {
                        errno = -r;
                        return -1;
                }
                return r == 1 ? 0 : pid; /* 0: the main process, whose parent is the holder */
        }
        if (threaded) {
                if (p->cgroup_fd >= 0 && !p->force_fallback) {
                        pid = libcfork_into(p->cgroup_fd, pidfd);
                        if (pid >= 0 || (errno != EINVAL && errno != ENOSYS && errno != E2BIG))
                                return pid;
                }
                *ret_migrate = p->cgroup_fd >= 0;
                return libcfork(pidfd);
        }
        if (!p->force_fallback) {
                struct clone_args args = {
                        .flags = CLONE_PIDFD | (p->cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0),
                        .pidfd = (uint64_t) (uintptr_t) pidfd,
                        .exit_signal = 0,
                        .cgroup = p->cgroup_fd >= 0 ? (uint64_t) p->cgroup_fd : 0,
                };
                pid = (pid_t) syscall(SYS_clone3, &args, sizeof args);
                if (pid < 0 && errno != ENOSYS && errno != E2BIG && errno != EINVAL)
                        return -1;
        }
        if (pid < 0) {
                *ret_migrate = p->cgroup_fd >= 0;
                pid = fork_fallback(pidfd);
        }
        return pid;
}

int spawn_fork(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd, struct spawn_failure *ret_failure,
               int *ret_setup_fd) {
        _cleanup_close_ int rfd = -1, wfd = -1, pidfd = -1;
        struct spawn_params cp = *p;
        int fds[2], r = 0;
        pid_t parent = getpid(), pid;
        bool migrate = false;

        /* The pipe, the clone and the marking of what the parent keeps under
         * the heldfd lock: the child's copy of the registry is exactly the
         * library's fds it has, and no other thread's fork copies this
         * pipe's ends unmarked. */
        heldfd_lock();
        if (pipe2(fds, O_CLOEXEC) < 0) {
                r = negative_errno();
                heldfd_unlock();
                return r;
        }
        rfd = fds[0];
        wfd = fds[1];
        pid = fork_clone(p, &pidfd, &parent, &migrate);
        if (pid == 0) {
                char done = 1;
                ssize_t n _unused_;

                close(TAKE_FD(rfd));
                /* the caller's dumpability, before the sandbox's uid change
                 * (which makes it undumpable again where the kernel says so);
                 * an exec'd job gets it from exec */
                undumpable_child();
                cp.close_held = true; /* and the lock, a copy held by the parent's thread, made anew */
                child_setup(&cp, &(struct child_report){.fd = wfd}, parent, migrate);
                if (p->sandbox && p->sandbox->envp)
                        environ = p->sandbox->envp;
                /* one byte, then EOF: set up (a parent that did not wait tells
                 * a completed setup from a child killed during it) */
                n = write(wfd, &done, 1);
                close(TAKE_FD(wfd));
                return 1;
        }
        if (pid < 0)
                r = negative_errno();
        close(TAKE_FD(wfd));
        if (pid > 0 && (heldfd_mark_locked(rfd) < 0 || heldfd_mark_locked(pidfd) < 0)) {
                /* not kept unmarked: the child goes (it is in the cgroup, which the caller removes) */
                (void) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
                (void) waitid(P_PIDFD, (id_t) pidfd, &(siginfo_t){0}, WEXITED | __WALL);
                heldfd_forget_locked(rfd);
                heldfd_forget_locked(pidfd);
                r = -ENOMEM;
        }
        heldfd_unlock();
        if (r < 0)
                return r;
        *ret_setup_fd = -1;
        if (!migrate) {
                /* In its cgroup from its first instruction: nothing needs the
                 * setup to be over before the caller goes on, and on 2 cores
                 * the caller's own work and the child's setup overlap (the
                 * wait cost a forked Python call 1.2 ms, median). */
                *ret_pid = pid;
                *ret_pidfd = TAKE_FD(pidfd);
                *ret_setup_fd = TAKE_FD(rfd);
                ret_failure->step = SPAWN_STEP_NONE;
                ret_failure->error = 0;
                return 0;
        }
        collect(rfd, pid, &pidfd, ret_pid, ret_pidfd, ret_failure);
        heldfd_forget(rfd); /* closed on return */
        if (*ret_pidfd < 0)
                heldfd_forget(pidfd);
        return 0;
}

int spawn_setup_result(int fd, struct spawn_failure *ret_failure) {
        struct spawn_failure f = {0};
        ssize_t n;

        do
                n = read(fd, &f, sizeof f);
        while (n < 0 && errno == EINTR);
        heldfd_close(fd);
        ret_failure->step = SPAWN_STEP_NONE;
        ret_failure->error = 0;
        if (n == (ssize_t) sizeof f) {
                *ret_failure = f;
                return 0;
        }
        return n == 1; /* the set-up byte; nothing: killed before it was set up */
}
