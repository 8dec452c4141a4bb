/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one adapter of NVIDIA's management library. libnvidia-ml.so.1 is
 * opened with dlopen() at the first call, never linked: a host without the
 * driver has no NVIDIA figures and nvml_open() says why. NVML's own state is
 * process-wide (nvmlInit is reference-counted inside the library), so the
 * handle is too: opened once under pthread_once, never closed.
 *
 * LEASH_NVML_LIBRARY names another library to open instead (the tests'
 * stand-in, an admin's driver in an odd place). It is honoured only when
 * leash is not running set-id (AT_SECURE) and the file is a regular file
 * and it and each directory above it are owned by root or by the real user,
 * writable by no one else: a job that shares leash's environment must not
 * get code into a root supervisor. It is opened once (trust_open_owned, each
 * component through the fd of the one above) and loaded through that fd.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NVML_UUID_MAX 96
#define NVML_NAME_MAX 96
#define NVML_PCI_MAX 32

struct nvml_proc {
        pid_t pid;
        uint64_t mem_bytes; /* UINT64_MAX when the driver does not say */
};

struct nvml_util {
        pid_t pid;
        unsigned sm_pct; /* streaming-multiprocessor utilisation, percent */
};

/* 0 when NVML is usable; -errno otherwise, with *ret_why a static text. */
int nvml_open(const char **ret_why);
/* The library opened ("libnvidia-ml.so.1" or the LEASH_NVML_LIBRARY path). */
const char *nvml_library(void);
/* Whether the driver offers nvmlDeviceGetProcessUtilization. */
bool nvml_has_process_utilization(void);
int nvml_count(unsigned *ret);
int nvml_describe(unsigned index, char uuid[NVML_UUID_MAX], char name[NVML_NAME_MAX], unsigned *ret_minor);
/* Device index's PCI address as sysfs names it ("0000:3b:00.0", from
 * nvmlDeviceGetPciInfo_v3); -EOPNOTSUPP when the driver lacks the call,
 * -EIO when it fails or answers something else than an address. */
int nvml_pci_address(unsigned index, char addr[NVML_PCI_MAX]);
/* Compute and graphics processes of device index (a pid in both is merged).
 * Returns the count, at most max; *ret malloc'd. */
int nvml_procs(unsigned index, struct nvml_proc **ret);
/* Per-process utilisation samples newer than since_us (CPU clock, µs since
 * the epoch), the newest per pid. Returns the count; *ret malloc'd. */
int nvml_proc_util(unsigned index, uint64_t since_us, struct nvml_util **ret);
