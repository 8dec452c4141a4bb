/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --gpus and --devices (devices.c): their values parsed into struct
 * leash_devices, and turned into the device program's rules and the GPU
 * variables of the job's environment when a job is made.
 */
#pragma once

#include <stddef.h>

#include "../leash.h"

/* --gpus: none, all, or indices and ranges "0,2-3". On failure -EINVAL or
 * -ERANGE and the offending part in bad. */
int devices_parse_gpus(const char *s, struct leash_devices *d, char *bad, size_t bad_size);

/* --devices: none, or entries separated by commas, each "TYPE MAJOR:MINOR
 * [ACCESS]" (TYPE c, b or a; MAJOR and MINOR a number or *) or "PATH
 * [ACCESS]" (a device node, read now); ACCESS letters of rwm, rw when
 * left out. Replaces the list. On failure -EINVAL, -ERANGE, -E2BIG, or the
 * path's stat error, and the offending entry in bad. */
int devices_parse_list(const char *s, struct leash_devices *d, char *bad, size_t bad_size);

/* The values as a user would write them ("unset" when not given). */
void devices_format_gpus(const struct leash_devices *d, char *buf, size_t size);
void devices_format_list(const struct leash_devices *d, char *buf, size_t size);

/* "--gpus 0 --devices 'c 1:5 rw'": what was asked, for errors and the report */
void devices_describe(const struct leash_devices *d, char *buf, size_t size);

/* Whether a device program is needed: --devices, or --gpus none or LIST. */
bool devices_restrict(const struct leash_devices *d);

/* Where the GPU device nodes are: the majors the kernel gave the drivers
 * that number theirs dynamically (0: not loaded), and each GPU index's
 * minor number under major 195, its DRM nodes' minors under major 226
 * (-1: it has none) and NVML's UUID ("" without NVML). */
struct devices_host {
        unsigned uvm_major, caps_major, kfd_major;
        unsigned nvidia_count; /* GPUs NVML lists; 0 without NVML */
        unsigned minor[LEASH_GPUS_MAX];
        int drm_card[LEASH_GPUS_MAX], drm_render[LEASH_GPUS_MAX];
        char uuid[LEASH_GPUS_MAX][96];
};

/* Parses /proc/devices (its text) into h's majors. Pure. */
void devices_host_parse(const char *proc_devices, struct devices_host *h);
/* The DRM nodes of the PCI device addr ("0000:3b:00.0"): the minors of the
 * cardN and renderDN under <sysfs>/bus/pci/devices/ADDR/drm/, sysfs_fd an fd
 * of the sysfs root ("/sys"; a unit test's fake tree). -1 for a kind it has
 * none of. -EINVAL for an addr that is not a PCI address, -errno when the
 * directory cannot be read (-ENOENT: a device without DRM nodes). */
int devices_drm_nodes(int sysfs_fd, const char *addr, int *ret_card, int *ret_render);
/* Reads /proc/devices and asks NVML for the GPUs' minors and UUIDs, and for
 * their PCI addresses, whose DRM nodes are found in /sys (a BMC's VGA may
 * be card0: GPU 0 is not cardN by its index). Without NVML, or a driver that
 * gives no address, GPU N stands for cardN and renderD(128+N). */
int devices_host_read(struct devices_host *h);

/* The program's rules for d on host h: --gpus first (the chosen GPUs'
 * nodes and the shared control nodes allowed, every other GPU node
 * refused), then --devices' entries; the default allows unless --devices
 * was given. -E2BIG when out is too small; -ENODEV for a GPU index NVML
 * does not have. */
int devices_rules(const struct leash_devices *d, const struct devices_host *h, struct devfilter_rule *out, size_t max,
                  size_t *ret_n, bool *ret_default_allow, unsigned *ret_bad_index);

/* CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES for --gpus (none: -1;
 * LIST: the UUIDs where NVML gave them, else the indices); 0 entries with
 * --gpus unset or all. */
int devices_gpu_env(const struct leash_devices *d, const struct devices_host *h, char cuda[], size_t cuda_size,
                    char rocr[], size_t rocr_size);
