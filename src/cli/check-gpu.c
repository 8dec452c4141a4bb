/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash check, GPUs (issue 28): the devices leash can attribute to jobs and
 * which figures it can give for them. Informational: a host without GPUs is
 * not degraded.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../engine/hardware/devfilter.h"
#include "../engine/hardware/gpu.h"
#include "../engine/hardware/nvml.h"
#include "cli.h"

static void print_nvidia(unsigned n) {
        printf("  NVIDIA (NVML, %s): %u device%s; figures per job: gpu_memory yes, gpu_util %s\n", nvml_library(), n,
               n == 1 ? "" : "s", nvml_has_process_utilization() ? "yes" : "no (the driver lacks per-process samples)");
        for (unsigned i = 0; i < n; i++) {
                char uuid[NVML_UUID_MAX], name[NVML_NAME_MAX];
                unsigned minor;
                if (nvml_describe(i, uuid, name, &minor) < 0)
                        continue;
                if (minor != (unsigned) -1)
                        printf("    nvidia%u  %s  %s  /dev/nvidia%u\n", i, name, uuid, minor);
                else
                        printf("    nvidia%u  %s  %s\n", i, name, uuid);
        }
}

/* --gpus/--devices need a cgroup device program: can one be loaded here? */
static void print_devfilter_check(void) {
        int r = devfilter_probe();

        if (r >= 0)
                printf("  device filter (--gpus, --devices): available (a cgroup device program loads here)\n");
        else
                printf("  device filter (--gpus, --devices): not available: %s; jobs asking for it are refused (exit "
                       "125)\n",
                       r == -EPERM ? "loading a cgroup device program needs root (CAP_BPF or CAP_SYS_ADMIN)"
                       : r == -EINVAL || r == -ENOSYS
                               ? "this kernel has no cgroup device programs (BPF_PROG_TYPE_CGROUP_DEVICE)"
                               : strerror(-r));
}

void print_gpu_check(void) {
        unsigned nv, drm;
        const char *why;

        (void) gpu_probe(&nv, &drm, &why);
        printf("GPUs:\n");
        if (nv)
                print_nvidia(nv);
        if (drm) {
                DIR *d = opendir("/dev/dri");
                struct dirent *e;
                printf("  DRM (fdinfo): %u render node%s; figures per job: gpu_memory where the driver gives "
                       "drm-memory/drm-resident keys, gpu_util from drm-engine-* time\n",
                       drm, drm == 1 ? "" : "s");
                while (d && (e = readdir(d)))
                        if (strncmp(e->d_name, "renderD", 7) == 0)
                                printf("    /dev/dri/%s\n", e->d_name);
                if (d)
                        closedir(d);
        }
        if (!nv && !drm)
                printf("  none: %s; jobs get no GPU figures (the report says why)\n", why ? why : "no GPU driver");
        print_devfilter_check();
}
