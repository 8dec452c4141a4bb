/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-steptrace: which code of a program one run executes, every instruction
 * of it, for bench/launch-order (the launch's functions placed together).
 *
 *   lh-steptrace OUT PROGRAM ARGS...
 *
 * Runs PROGRAM under ptrace with address randomisation off, single-steps
 * it and every process or thread it clones while they run its own image,
 * and writes to OUT the offsets (hex, one a line, each once) from the
 * image's start of every instruction they executed in it. A child that
 * executes another program (the job) is let go at its exec. Sampling
 * would miss what runs once, briefly; a launch is made of such code, and
 * each function missed is a page the order leaves where it was.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static uint8_t *seen;
static uint64_t base, size;

static void die(const char *what) {
        perror(what);
        exit(2);
}

/* The first mapping of the traced image (its start) and its whole span. */
static void image_of(pid_t pid) {
        char path[64], exe[PATH_MAX], line[PATH_MAX + 128];
        ssize_t n;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/exe", (int) pid);
        n = readlink(path, exe, sizeof(exe) - 1);
        if (n < 0)
                die("readlink exe");
        exe[n] = 0;
        snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
        f = fopen(path, "re");
        if (!f)
                die("maps");
        while (fgets(line, sizeof(line), f)) {
                unsigned long lo, hi;
                char *name = strchr(line, '/');
                if (!name || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
                        continue;
                name[strcspn(name, "\n")] = 0;
                if (strcmp(name, exe) != 0)
                        continue;
                if (!base)
                        base = lo;
                size = hi - base;
        }
        fclose(f);
        if (!base)
                die("no mapping of the image");
        seen = calloc(size, 1);
        if (!seen)
                die("calloc");
}

static void record(pid_t pid) {
        struct user_regs_struct regs;

        if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
                return;
        if (regs.rip >= base && regs.rip - base < size)
                seen[regs.rip - base] = 1;
}

static void write_out(const char *out) {
        FILE *f = fopen(out, "we");
        uint64_t i, n = 0;

        if (!f)
                die(out);
        for (i = 0; i < size; i++)
                if (seen[i]) {
                        fprintf(f, "%llx\n", (unsigned long long) i);
                        n++;
                }
        if (fclose(f) != 0)
                die(out);
        fprintf(stderr, "lh-steptrace: %llu instructions' offsets\n", (unsigned long long) n);
}

static pid_t start(char **argv) {
        int st;
        pid_t pid = fork();

        if (pid < 0)
                die("fork");
        if (pid == 0) {
                if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0 || personality(ADDR_NO_RANDOMIZE) < 0)
                        _exit(126);
                raise(SIGSTOP);
                execvp(argv[0], argv);
                _exit(127);
        }
        if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
                die("the first stop");
        if (ptrace(PTRACE_SETOPTIONS, pid, 0,
                   PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC |
                           PTRACE_O_EXITKILL) < 0)
                die("PTRACE_SETOPTIONS");
        /* to the exec: from there, every instruction */
        if (ptrace(PTRACE_CONT, pid, 0, 0) < 0 || waitpid(pid, &st, 0) != pid || (st >> 16) != PTRACE_EVENT_EXEC)
                die("the exec");
        image_of(pid);
        return pid;
}

int main(int argc, char **argv) {
        pid_t root, pid;
        int st, status = 0;

        if (argc < 3) {
                fprintf(stderr, "usage: lh-steptrace OUT PROGRAM ARGS...\n");
                return 2;
        }
        root = start(argv + 2);
        record(root);
        ptrace(PTRACE_SINGLESTEP, root, 0, 0);
        while ((pid = waitpid(-1, &st, __WALL)) > 0) {
                int sig, event;
                if (!WIFSTOPPED(st)) {
                        if (pid == root)
                                status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                        continue;
                }
                sig = WSTOPSIG(st), event = st >> 16;
                if (event == PTRACE_EVENT_EXEC) { /* a child runs the job: not the image's code */
                        ptrace(PTRACE_DETACH, pid, 0, 0);
                        continue;
                }
                if (sig == SIGTRAP || (sig == SIGSTOP && pid != root) || event)
                        sig = 0; /* a step, an event, or a new child's first stop */
                record(pid);
                if (ptrace(PTRACE_SINGLESTEP, pid, 0, sig) < 0 && errno != ESRCH)
                        die("PTRACE_SINGLESTEP");
        }
        write_out(argv[1]);
        return status;
}
