/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-floor: the physical floor of a cgroup launcher, for bench/run.
 *
 *   lh-floor CMD...              mkdir a cgroup under $LH_BENCH_CGROUP (default
 *                                <cgroup2 root>/leash), clone3 CMD straight
 *                                into it, wait, read its cpu.stat, rmdir.
 *   lh-floor --no-cgroup CMD...  the same without the cgroup: vfork, exec, wait.
 *
 * Nothing else: no options, no watchdog, no report, no sweep, no signal
 * handling. And linked the least costly way (Makemodule.am): -static-pie
 * with its relocations packed (DT_RELR, as leash),
 * no library but the static libc, so that the loader does no work either.
 * A launcher cannot do less and still put its job in a fresh cgroup and
 * account for it; leash's figures are judged against this.
 */
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what) {
        perror(what);
        _exit(2);
}

int main(int argc, char **argv) {
        const char *parent = getenv("LH_BENCH_CGROUP");
        struct clone_args args = {.flags = CLONE_INTO_CGROUP | CLONE_VFORK, .exit_signal = SIGCHLD};
        char cg[512], buf[1024];
        siginfo_t si;
        pid_t pid;
        int fd, sfd;

        if (argc > 2 && strcmp(argv[1], "--no-cgroup") == 0) {
                pid = vfork();
                if (pid == 0) {
                        execv(argv[2], argv + 2);
                        _exit(127);
                }
                if (pid < 0 || waitid(P_PID, (id_t) pid, &si, WEXITED) < 0)
                        die("vfork");
                return si.si_code == CLD_EXITED ? si.si_status : 1;
        }
        if (argc < 2)
                return fprintf(stderr, "usage: lh-floor [--no-cgroup] CMD...\n"), 2;
        if (!parent)
                parent = "/sys/fs/cgroup/unified/leash";
        snprintf(cg, sizeof cg, "%s/floor@%d", parent, (int) getpid());
        if (mkdir(cg, 0755) < 0)
                die(cg);
        fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                die(cg);
        args.cgroup = (uint64_t) fd;
        /* fork-like (no CLONE_VM: no assembly needed), but CLONE_VFORK: the
         * parent sleeps until the exec instead of racing the child for the CPU */
        pid = (pid_t) syscall(SYS_clone3, &args, sizeof args);
        if (pid == 0) {
                execv(argv[1], argv + 1);
                _exit(127);
        }
        if (pid < 0)
                die("clone3");
        if (waitid(P_PID, (id_t) pid, &si, WEXITED) < 0)
                die("waitid");
        sfd = openat(fd, "cpu.stat", O_RDONLY | O_CLOEXEC);
        if (sfd < 0 || read(sfd, buf, sizeof buf) <= 0)
                die("cpu.stat");
        close(sfd);
        close(fd);
        if (rmdir(cg) < 0)
                die(cg);
        return si.si_code == CLD_EXITED ? si.si_status : 1;
}
