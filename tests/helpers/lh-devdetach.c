/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lh-devdetach CGROUP-DIR: a hostile job. Tries to take the cgroup device
 * programs off CGROUP-DIR (the job's own cgroup) the way a job that kept
 * the privilege would: BPF_PROG_QUERY for their ids, BPF_PROG_GET_FD_BY_ID,
 * BPF_PROG_DETACH. Prints "detached N" and exits 0, or "STEP: ERRNO-TEXT"
 * and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int bpf(int cmd, union bpf_attr *a) {
        return (int) syscall(__NR_bpf, cmd, a, sizeof *a);
}

int main(int argc, char **argv) {
        uint32_t ids[64];
        union bpf_attr a;
        int cg;

        if (argc != 2) {
                fprintf(stderr, "usage: lh-devdetach CGROUP-DIR\n");
                return 2;
        }
        cg = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cg < 0) {
                printf("open: %s\n", strerror(errno));
                return 1;
        }
        memset(&a, 0, sizeof a);
        a.query.target_fd = (uint32_t) cg;
        a.query.attach_type = BPF_CGROUP_DEVICE;
        a.query.prog_ids = (uint64_t) (uintptr_t) ids;
        a.query.prog_cnt = 64;
        if (bpf(BPF_PROG_QUERY, &a) < 0) {
                printf("query: %s\n", strerror(errno));
                return 1;
        }
        for (uint32_t i = 0, n = a.query.prog_cnt; i < n; i++) {
                union bpf_attr g, d;
                int fd;
                memset(&g, 0, sizeof g);
                g.prog_id = ids[i];
                fd = bpf(BPF_PROG_GET_FD_BY_ID, &g);
                if (fd < 0) {
                        printf("get-fd: %s\n", strerror(errno));
                        return 1;
                }
                memset(&d, 0, sizeof d);
                d.target_fd = (uint32_t) cg;
                d.attach_bpf_fd = (uint32_t) fd;
                d.attach_type = BPF_CGROUP_DEVICE;
                if (bpf(BPF_PROG_DETACH, &d) < 0) {
                        printf("detach: %s\n", strerror(errno));
                        return 1;
                }
                close(fd);
        }
        printf("detached %u\n", a.query.prog_cnt);
        return 0;
}
