/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A job's --gpus and --devices: resolved when the job is made (the GPU
 * nodes of this host, the environment), attached to the job cgroup before
 * anything runs in it. Where no device program can be attached (no
 * cgroup, no privilege, a kernel without them) the job is refused: a
 * device restriction that silently did not happen would be worse than
 * none.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../basic/macro.h"
#include "../spec/devices.h"
#include "job-devices.h"

#define DEVICES_STEP "restrict the job's device nodes"

int job_devices_prepare(struct leash_job *j, struct leash_error *err) {
        const struct leash_devices *d = &j->spec.devices;
        struct devices_host h;
        unsigned bad = 0;
        char what[1400];
        int r, n;

        if (d->gpus == LEASH_GPUS_UNSET && !d->allow_list)
                return 0;
        devices_describe(d, what, sizeof what);
        r = devices_host_read(&h);
        if (r < 0)
                return leash_error_set(err, DEVICES_STEP ": read /proc/devices", what, r);
        if (devices_restrict(d)) {
                r = devices_rules(d, &h, j->dev_rule, ELEMENTSOF(j->dev_rule), &j->n_dev_rule, &j->dev_default_allow,
                                  &bad);
                if (r == -ENODEV) {
                        char detail[sizeof what + 64];
                        snprintf(detail, sizeof detail, "%s: no GPU %u (NVML lists %u)", what, bad, h.nvidia_count);
                        return leash_error_set(err, DEVICES_STEP, detail, r);
                }
                if (r < 0)
                        return leash_error_set(err, DEVICES_STEP ": too many rules", what, r);
        }
        n = devices_gpu_env(d, &h, j->gpu_env[0], sizeof j->gpu_env[0], j->gpu_env[1], sizeof j->gpu_env[1]);
        if (n < 0)
                return leash_error_set(err, DEVICES_STEP ": set CUDA_VISIBLE_DEVICES", what, n);
        for (int i = 0; i < n; i++)
                j->gpu_envp[i] = j->gpu_env[i];
        j->gpu_envp[n] = NULL;
        j->spec.sandbox.env_first = j->gpu_envp;
        j->spec.sandbox.n_env_first = (size_t) n;
        j->r.devices_by = devices_restrict(d) ? NULL : "nothing to enforce (--gpus all)";
        return 0;
}

static const char *attach_why(int r) {
        if (r == -EPERM && geteuid() != 0)
                return "loading a cgroup device program needs root (CAP_BPF and CAP_NET_ADMIN)";
        if (r == -EPERM) /* root: the kernel refuses a program below one attached without BPF_F_ALLOW_MULTI */
                return "refused although root: an ancestor cgroup's device program allows none below it, or "
                       "capabilities are missing";
        if (r == -EINVAL || r == -ENOSYS || r == -EOPNOTSUPP)
                return "this kernel has no cgroup device programs (BPF_PROG_TYPE_CGROUP_DEVICE)";
        return "the cgroup device program was not attached";
}

/* After the limits, before the job starts: the program on the job cgroup. */
int job_devices_attach(struct leash_job *j, struct leash_error *err) {
        struct devfilter f = {j->dev_rule, j->n_dev_rule, j->dev_default_allow};
        char what[1400], detail[1600];
        int r;

        if (!devices_restrict(&j->spec.devices))
                return 0;
        devices_describe(&j->spec.devices, what, sizeof what);
        if (j->no_cgroup) {
                snprintf(detail, sizeof detail, "%s: no cgroup (placement none) to attach a device program to", what);
                return leash_error_set(err, DEVICES_STEP, detail, -EOPNOTSUPP);
        }
        r = devfilter_attach(j->job_fd, &f);
        if (r < 0) {
                snprintf(detail, sizeof detail, "%s: %s", what, attach_why(r));
                return leash_error_set(err, DEVICES_STEP, detail, r);
        }
        j->r.devices_by = "cgroup device program";
        j->r.devices_insns = (unsigned) r;
        return 0;
}
