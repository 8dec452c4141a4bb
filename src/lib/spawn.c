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
 * memory, must not allocate or take locks before exec; a global it sets
 * (environ, by the sandbox) is set for leash too, and restored after.
 *
 * Fallback (kernels before 5.7, or LEASH_SPAWN=fork for the tests): fork(), and
 * the child moves itself into the cgroup (writing "0" to cgroup.procs through
 * the inherited dirfd) before it does anything else; the parent opens a pidfd
 * with pidfd_open(). Either way no command runs outside the job cgroup.
 *
 * Errors in the child travel back over a CLOEXEC pipe as {step, errno}: EOF
 * on the pipe means exec succeeded. That is how 125 (setup), 126 (not
 * executable) and 127 (not found) are told apart.
 */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../basic/macro.h"
#include "sandbox.h"

const char *spawn_step_to_string(enum spawn_step s) {
        switch (s) {
        case SPAWN_STEP_CGROUP:
                return "move the job into its cgroup";
        case SPAWN_STEP_RLIMIT:
                return "set an rlimit for the job";
        case SPAWN_STEP_PDEATHSIG:
                return "set the job's parent-death signal";
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

static _Noreturn void child_fail(int errfd, enum spawn_step step, int error) {
        struct spawn_failure f = {.step = step, .error = error};
        ssize_t n _unused_ = write(errfd, &f, sizeof f);
        _exit(127);
}

/* Runs in the child: async-signal-safe calls only, then exec. */
static _Noreturn void child_main(const struct spawn_params *p, int errfd, pid_t parent, bool migrate) {
        if (migrate) {
                int fd = openat(p->cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, "0", 1) != 1)
                        child_fail(errfd, SPAWN_STEP_CGROUP, errno);
                close(fd);
        }
        /* If leash dies, the main process goes with it at once; the rest of the
         * tree is the watchdog's job (see run.c). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                child_fail(errfd, SPAWN_STEP_PDEATHSIG, errno);
        if (getppid() != parent)
                _exit(127);
        for (unsigned i = 0; i < p->n_rlimits; i++) {
                /* soft = hard = value: the job may not raise it back. An unprivileged
                 * leash asking above its own hard limit fails here, loudly. */
                struct rlimit rl = {p->rlimits[i].value, p->rlimits[i].value};
                if (setrlimit(p->rlimits[i].resource, &rl) < 0)
                        child_fail(errfd, SPAWN_STEP_RLIMIT, errno);
        }
        if (p->sigchld_ignored)
                (void) signal(SIGCHLD, SIG_IGN);
        if (p->sandbox) {
                enum spawn_step step = SPAWN_STEP_NONE;
                int r = sandbox_child_setup(p->sandbox, parent, &step);
                if (r < 0)
                        child_fail(errfd, step, -r);
        }
        if (sigprocmask(SIG_SETMASK, &p->child_mask, NULL) < 0)
                child_fail(errfd, SPAWN_STEP_EXEC, errno);
        if (p->sandbox) {
                enum spawn_step step = SPAWN_STEP_NONE;
                int r = sandbox_child_seccomp(p->sandbox, &step);
                if (r < 0)
                        child_fail(errfd, step, -r);
        }
        execvp(p->argv[0], p->argv);
        child_fail(errfd, SPAWN_STEP_EXEC, errno);
}

#if defined(__x86_64__)
/* The vfork form of clone3, as posix_spawn does with clone: CLONE_VM |
 * CLONE_VFORK, so the kernel neither copies leash's page tables nor tears the
 * copy down again at exec, and leash takes no copy-on-write faults after it.
 * The child runs child_main on a stack of its own (a buffer in our frame: we
 * are suspended until it has exec'd or exited) and never returns. glibc has
 * no clone3 wrapper, hence the few lines of assembly: rcx and r11 are what
 * syscall clobbers; fn and arg ride in callee-saved registers, which the
 * child inherits. */
struct child_args {
        const struct spawn_params *p;
        int errfd;
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
#define CHILD_STACK_SIZE (64 * 1024)
#endif

/* Returns the pid in the parent, -1 with errno on failure; the child never
 * returns from here. */
static pid_t do_clone3(const struct spawn_params *p, int errfd, pid_t parent, int *ret_pidfd) {
        struct clone_args args = {
                .flags = CLONE_PIDFD | CLONE_INTO_CGROUP,
                .pidfd = (uint64_t) (uintptr_t) ret_pidfd,
                .exit_signal = SIGCHLD,
                .cgroup = (uint64_t) p->cgroup_fd,
        };
#if defined(__x86_64__)
        char stack[CHILD_STACK_SIZE] __attribute__((aligned(16)));
        struct child_args a = {.p = p, .errfd = errfd, .parent = parent};
        long r;

        char **saved_environ = environ;

        args.flags |= CLONE_VM | CLONE_VFORK;
        args.stack = (uint64_t) (uintptr_t) stack;
        args.stack_size = sizeof stack;
        r = clone3_on_stack(&args, child_trampoline, &a);
        /* The child shares our memory: the sandbox points environ at the job's
         * environment (freed with the plan) before execvp. Ours comes back. */
        environ = saved_environ;
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

int spawn_job(const struct spawn_params *p, pid_t *ret_pid, int *ret_pidfd, struct spawn_failure *ret_failure,
              bool *ret_used_clone3) {
        _cleanup_close_ int rfd = -1, wfd = -1, pidfd = -1;
        int fds[2];
        pid_t parent = getpid(), pid = -1;
        bool used_clone3 = false;
        struct spawn_failure f = {0};
        ssize_t n;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        rfd = fds[0];
        wfd = fds[1];

        if (!p->force_fallback) {
                pid = do_clone3(p, wfd, parent, &pidfd);
                if (pid > 0)
                        used_clone3 = true;
                else if (errno != ENOSYS && errno != E2BIG && errno != EINVAL)
                        return negative_errno(); /* EAGAIN, ENOMEM, EBUSY: a real failure */
        }
        if (!used_clone3) {
                pid = fork();
                if (pid < 0)
                        return negative_errno();
                if (pid == 0)
                        child_main(p, wfd, parent, true);
                pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
                if (pidfd < 0) {
                        int r = negative_errno();
                        (void) kill(pid, SIGKILL);
                        (void) waitpid(pid, NULL, 0);
                        return r;
                }
        }

        close(TAKE_FD(wfd));
        do
                n = read(rfd, &f, sizeof f);
        while (n < 0 && errno == EINTR);
        if (n == (ssize_t) sizeof f) {
                (void) waitpid(pid, NULL, 0);
                *ret_failure = f;
                *ret_pid = pid;
                *ret_pidfd = -1;
        } else {
                ret_failure->step = SPAWN_STEP_NONE;
                ret_failure->error = 0;
                *ret_pid = pid;
                *ret_pidfd = TAKE_FD(pidfd);
        }
        *ret_used_clone3 = used_clone3;
        return 0;
}
