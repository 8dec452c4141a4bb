/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "../../basic/dlsafe.h"
#include "../../basic/macro.h"
#include "../../basic/trust.h"

/* The subset of nvml.h leash uses, with the layouts of the _v2/_v3 calls
 * (driver 510 and later). */
typedef int nvml_ret;
typedef void *nvml_dev;
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_NOT_FOUND 6

struct nvml_process_info { /* nvmlProcessInfo_t of the _v3 calls */
        unsigned int pid;
        unsigned long long used_gpu_memory;
        unsigned int gpu_instance_id, compute_instance_id;
};

struct nvml_util_sample { /* nvmlProcessUtilizationSample_t */
        unsigned int pid;
        unsigned long long time_stamp;
        unsigned int sm_util, mem_util, enc_util, dec_util;
};

struct nvml_pci_info { /* nvmlPciInfo_t of nvmlDeviceGetPciInfo_v3 */
        char bus_id_legacy[16];
        unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
        char bus_id[32]; /* "00000000:3B:00.0" */
};

#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

static struct {
        void *dl;
        const char *path;
        const char *why;
        char why_buf[300];
        int error;
        nvml_ret (*init)(void);
        nvml_ret (*count)(unsigned *);
        nvml_ret (*handle)(unsigned, nvml_dev *);
        nvml_ret (*compute)(nvml_dev, unsigned *, struct nvml_process_info *);
        nvml_ret (*graphics)(nvml_dev, unsigned *, struct nvml_process_info *);
        nvml_ret (*util)(nvml_dev, struct nvml_util_sample *, unsigned *, unsigned long long);
        nvml_ret (*uuid)(nvml_dev, char *, unsigned);
        nvml_ret (*name)(nvml_dev, char *, unsigned);
        nvml_ret (*minor)(nvml_dev, unsigned *);
        nvml_ret (*pci)(nvml_dev, struct nvml_pci_info *);
} nv;
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

/* The override is a test and admin knob (see nvml.h): judged and opened by
 * fd, each directory of its path checked on the way (trust_open_owned), and
 * loaded through that fd: a path swapped after the judgement loads nothing
 * else. 0 with *ret_fd -1 without it, or the fd; -errno with nv.why set. */
static int library_fd(int *ret_fd) {
        const char *p = getenv("LEASH_NVML_LIBRARY");
        char why[200];
        int fd;

        *ret_fd = -1;
        if (!p || !*p)
                return 0;
        if (getauxval(AT_SECURE)) {
                nv.why = "LEASH_NVML_LIBRARY refused: leash runs set-id";
                return -EPERM;
        }
        fd = trust_open_owned(p, getuid(), why, sizeof why);
        if (fd < 0) {
                snprintf(nv.why_buf, sizeof nv.why_buf,
                         "LEASH_NVML_LIBRARY refused (%s: the file and each directory above it must be root's or "
                         "the user's and writable only by their owner): %s",
                         p, why[0] ? why : strerror(-fd));
                nv.why = nv.why_buf;
                return fd;
        }
        *ret_fd = fd;
        return 0;
}

#define SYM(field, name)                                           \
        do {                                                       \
                *(void **) &nv.field = dlsym(nv.dl, name);         \
                if (!nv.field) {                                   \
                        nv.why = "the NVIDIA library lacks " name; \
                        return;                                    \
                }                                                  \
        } while (0)

static void load(void) {
        _cleanup_close_ int fd = -1;
        const char *why = NULL;

        nv.error = -ENOENT;
        nv.path = "libnvidia-ml.so.1";
        if (library_fd(&fd) < 0)
                return;
        if (fd >= 0) {
                nv.path = getenv("LEASH_NVML_LIBRARY");
                nv.dl = dl_open_fd_checked(fd, nv.path, RTLD_NOW | RTLD_LOCAL, nv.why_buf, sizeof nv.why_buf, &why);
        } else
                nv.dl = dl_open_checked(nv.path, RTLD_NOW | RTLD_LOCAL, nv.why_buf, sizeof nv.why_buf, &why);
        if (!nv.dl) {
                /* a static leash that must not load it says so; else the usual absence */
                nv.why = why == nv.why_buf ? nv.why_buf : "no NVIDIA driver (libnvidia-ml.so.1 cannot be opened)";
                return;
        }
        SYM(init, "nvmlInit_v2");
        SYM(count, "nvmlDeviceGetCount_v2");
        SYM(handle, "nvmlDeviceGetHandleByIndex_v2");
        SYM(compute, "nvmlDeviceGetComputeRunningProcesses_v3");
        SYM(uuid, "nvmlDeviceGetUUID");
        SYM(name, "nvmlDeviceGetName");
        /* optional: older drivers or the stand-in may lack them */
        *(void **) &nv.graphics = dlsym(nv.dl, "nvmlDeviceGetGraphicsRunningProcesses_v3");
        *(void **) &nv.util = dlsym(nv.dl, "nvmlDeviceGetProcessUtilization");
        *(void **) &nv.minor = dlsym(nv.dl, "nvmlDeviceGetMinorNumber");
        *(void **) &nv.pci = dlsym(nv.dl, "nvmlDeviceGetPciInfo_v3");
        if (nv.init() != NVML_SUCCESS) {
                nv.why = "nvmlInit_v2 failed (driver not loaded, or no device)";
                nv.error = -ENODEV;
                return;
        }
        nv.error = 0;
}

int nvml_open(const char **ret_why) {
        pthread_once(&nv_once, load);
        if (nv.error < 0 && ret_why)
                *ret_why = nv.why;
        return nv.error;
}

const char *nvml_library(void) {
        return nv.error == 0 ? nv.path : NULL;
}

bool nvml_has_process_utilization(void) {
        return nvml_open(NULL) == 0 && nv.util;
}

int nvml_count(unsigned *ret) {
        if (nvml_open(NULL) < 0)
                return -ENODEV;
        return nv.count(ret) == NVML_SUCCESS ? 0 : -EIO;
}

static int dev(unsigned index, nvml_dev *d) {
        if (nvml_open(NULL) < 0)
                return -ENODEV;
        return nv.handle(index, d) == NVML_SUCCESS ? 0 : -ENODEV;
}

int nvml_describe(unsigned index, char uuid[NVML_UUID_MAX], char name[NVML_NAME_MAX], unsigned *ret_minor) {
        nvml_dev d;
        unsigned minor = (unsigned) -1;
        int r = dev(index, &d);

        if (r < 0)
                return r;
        if (nv.uuid(d, uuid, NVML_UUID_MAX) != NVML_SUCCESS)
                uuid[0] = '\0';
        if (nv.name(d, name, NVML_NAME_MAX) != NVML_SUCCESS)
                name[0] = '\0';
        uuid[NVML_UUID_MAX - 1] = name[NVML_NAME_MAX - 1] = '\0';
        if (nv.minor && nv.minor(d, &minor) != NVML_SUCCESS)
                minor = (unsigned) -1;
        *ret_minor = minor;
        return 0;
}

int nvml_pci_address(unsigned index, char addr[NVML_PCI_MAX]) {
        struct nvml_pci_info p = {0};
        unsigned dom, bus, slot, fn;
        char end;
        nvml_dev d;
        int r = dev(index, &d);

        if (r < 0)
                return r;
        if (!nv.pci)
                return -EOPNOTSUPP;
        if (nv.pci(d, &p) != NVML_SUCCESS)
                return -EIO;
        p.bus_id[sizeof p.bus_id - 1] = '\0';
        /* NVML's "DDDDDDDD:BB:SS.F" (upper case, 8-digit domain) to sysfs's
         * "dddd:bb:ss.f"; anything else is no address */
        if (sscanf(p.bus_id, "%x:%x:%x.%x%c", &dom, &bus, &slot, &fn, &end) != 4 || dom > 0xffff || bus > 0xff ||
            slot > 0x1f || fn > 7)
                return -EIO;
        snprintf(addr, NVML_PCI_MAX, "%04x:%02x:%02x.%x", dom, bus, slot, fn);
        return 0;
}

/* one of the two process lists, grown until it fits (processes come and go
 * between the calls) */
static int list(nvml_ret (*fn)(nvml_dev, unsigned *, struct nvml_process_info *), nvml_dev d,
                struct nvml_process_info **ret, unsigned *ret_n) {
        unsigned cap = 64;

        for (int tries = 0; tries < 8; tries++) {
                struct nvml_process_info *a = calloc(cap, sizeof *a);
                unsigned n = cap;
                nvml_ret r;
                if (!a)
                        return -ENOMEM;
                r = fn(d, &n, a);
                if (r == NVML_SUCCESS) {
                        *ret = a;
                        *ret_n = n <= cap ? n : cap;
                        return 0;
                }
                free(a);
                if (r != NVML_ERROR_INSUFFICIENT_SIZE)
                        return -EIO;
                cap = n > cap ? n + 8 : cap * 2;
        }
        return -EAGAIN;
}

/* Compute entries are taken as listed (under MIG one process may hold
 * contexts in two instances: separate memory). A graphics entry of a process
 * also listed for compute is the same context: merged. */
static void add_procs(struct nvml_proc *out, int *n, const struct nvml_process_info *a, unsigned na, bool merge) {
        int listed = *n;
        for (unsigned i = 0; i < na; i++) {
                uint64_t m = a[i].used_gpu_memory == NVML_VALUE_NOT_AVAILABLE ? UINT64_MAX : a[i].used_gpu_memory;
                int j = *n;
                if (merge)
                        for (j = 0; j < listed && out[j].pid != (pid_t) a[i].pid; j++)
                                ;
                if (j == listed)
                        j = *n;
                if (j == *n) {
                        out[(*n)++] = (struct nvml_proc){(pid_t) a[i].pid, m};
                } else if (m != UINT64_MAX && (out[j].mem_bytes == UINT64_MAX || m > out[j].mem_bytes))
                        out[j].mem_bytes = m; /* one context, listed twice: the larger figure */
        }
}

int nvml_procs(unsigned index, struct nvml_proc **ret) {
        struct nvml_process_info *c = NULL, *g = NULL;
        unsigned nc = 0, ng = 0;
        struct nvml_proc *out;
        nvml_dev d;
        int n = 0, r = dev(index, &d);

        if (r < 0)
                return r;
        if ((r = list(nv.compute, d, &c, &nc)) < 0)
                return r;
        if (nv.graphics && list(nv.graphics, d, &g, &ng) < 0)
                ng = 0;
        out = calloc((size_t) nc + ng + 1, sizeof *out);
        if (out) {
                add_procs(out, &n, c, nc, false);
                add_procs(out, &n, g, ng, true);
        }
        free(c);
        free(g);
        if (!out)
                return -ENOMEM;
        *ret = out;
        return n;
}

int nvml_proc_util(unsigned index, uint64_t since_us, struct nvml_util **ret) {
        struct nvml_util_sample *a;
        struct nvml_util *out;
        unsigned n = 0;
        nvml_dev d;
        int m = 0, r = dev(index, &d);

        if (r < 0)
                return r;
        if (!nv.util)
                return -EOPNOTSUPP;
        r = nv.util(d, NULL, &n, since_us);
        if (r == NVML_ERROR_NOT_FOUND || (r == NVML_SUCCESS && n == 0)) {
                *ret = NULL;
                return 0; /* no process sampled since then */
        }
        if (r != NVML_ERROR_INSUFFICIENT_SIZE && r != NVML_SUCCESS)
                return -EIO;
        n += 8;
        a = calloc(n, sizeof *a);
        out = calloc(n, sizeof *out);
        if (!a || !out || nv.util(d, a, &n, since_us) != NVML_SUCCESS) {
                free(a);
                free(out);
                return a && out ? -EIO : -ENOMEM;
        }
        /* the newest sample per pid */
        for (unsigned i = 0; i < n; i++) {
                unsigned long long newest = 0;
                int j;
                for (j = 0; j < m && out[j].pid != (pid_t) a[i].pid; j++)
                        ;
                for (unsigned k = 0; k < n; k++)
                        if (a[k].pid == a[i].pid && a[k].time_stamp > newest)
                                newest = a[k].time_stamp;
                if (j == m && a[i].time_stamp == newest)
                        out[m++] = (struct nvml_util){(pid_t) a[i].pid, a[i].sm_util};
        }
        free(a);
        *ret = out;
        return m;
}
