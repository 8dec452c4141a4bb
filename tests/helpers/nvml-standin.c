/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for libnvidia-ml.so.1 (the tests load it through
 * LEASH_NVML_LIBRARY): the NVML calls leash makes, answering from the script
 * file named by LEASH_NVML_STANDIN, re-read at every call so a test can
 * change the figures while a job runs. Lines:
 *   gpu INDEX UUID NAME          a device (NAME without spaces)
 *   proc INDEX PID BYTES SM_PCT  a process using it, BYTES of memory, SM_PCT percent
 *   pci INDEX BUSID              its PCI address as NVML writes it ("00000000:3B:00.0");
 *                                without one, nvmlDeviceGetPciInfo_v3 is not supported
 * A pid listed that is not the job's must not reach leash's figures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>

#define MAXG 16
#define MAXP 4096

struct proc {
        unsigned gpu, pid, pct;
        unsigned long long bytes;
};
static struct {
        unsigned n_gpu;
        char uuid[MAXG][80], name[MAXG][80], pci[MAXG][32];
        unsigned n_proc;
        struct proc p[MAXP];
} s;

/* re-read only when the script changed (a test appends to it while a job
 * runs), so a call costs a stat, as a driver's answer costs an ioctl */
static void load(void) {
        static struct stat seen;
        const char *path = getenv("LEASH_NVML_STANDIN");
        char line[256];
        struct stat st;
        FILE *f;

        if (!path || stat(path, &st) < 0)
                return;
        if (st.st_ino == seen.st_ino && st.st_size == seen.st_size && st.st_mtim.tv_sec == seen.st_mtim.tv_sec &&
            st.st_mtim.tv_nsec == seen.st_mtim.tv_nsec)
                return;
        seen = st;
        f = fopen(path, "re");
        s.n_gpu = s.n_proc = 0;
        memset(s.pci, 0, sizeof s.pci);
        while (f && fgets(line, sizeof line, f)) {
                unsigned i;
                char bus[32];
                if (sscanf(line, "pci %u %31s", &i, bus) == 2 && i < MAXG)
                        snprintf(s.pci[i], sizeof s.pci[i], "%s", bus);
                else if (sscanf(line, "gpu %u %79s %79s", &i, s.uuid[s.n_gpu], s.name[s.n_gpu]) == 3 && s.n_gpu < MAXG)
                        s.n_gpu++;
                else if (s.n_proc < MAXP && sscanf(line, "proc %u %u %llu %u", &s.p[s.n_proc].gpu, &s.p[s.n_proc].pid,
                                                   &s.p[s.n_proc].bytes, &s.p[s.n_proc].pct) == 4)
                        s.n_proc++;
        }
        if (f)
                fclose(f);
}

struct info {
        unsigned int pid;
        unsigned long long used;
        unsigned int gi, ci;
};
struct util {
        unsigned int pid;
        unsigned long long ts;
        unsigned int sm, mem, enc, dec;
};

/* the exported calls (nvml.h's names, leash's layouts) */
int nvmlInit_v2(void);
int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d);
int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned *n, struct info *out);
int nvmlDeviceGetProcessUtilization(void *d, struct util *out, unsigned *n, unsigned long long since);
int nvmlDeviceGetUUID(void *d, char *buf, unsigned len);
int nvmlDeviceGetName(void *d, char *buf, unsigned len);
int nvmlDeviceGetMinorNumber(void *d, unsigned *minor);

int nvmlInit_v2(void) {
        return getenv("LEASH_NVML_STANDIN") ? 0 : 9; /* NVML_ERROR_DRIVER_NOT_LOADED */
}
int nvmlDeviceGetCount_v2(unsigned *n) {
        load();
        *n = s.n_gpu;
        return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d) {
        load();
        if (i >= s.n_gpu)
                return 2;
        *d = (void *) (unsigned long) (i + 1);
        return 0;
}
static unsigned idx(void *d) {
        return (unsigned) (unsigned long) d - 1;
}
int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned *n, struct info *out) {
        unsigned k = 0, cap = *n;
        load();
        for (unsigned i = 0; i < s.n_proc; i++)
                if (s.p[i].gpu == idx(d)) {
                        if (k < cap && out)
                                out[k] = (struct info){s.p[i].pid, s.p[i].bytes, ~0u, ~0u};
                        k++;
                }
        *n = k;
        return k > cap ? 7 : 0; /* NVML_ERROR_INSUFFICIENT_SIZE */
}
int nvmlDeviceGetProcessUtilization(void *d, struct util *out, unsigned *n, unsigned long long since) {
        struct timeval tv;
        unsigned k = 0, cap = *n;
        (void) since;
        load();
        gettimeofday(&tv, NULL);
        for (unsigned i = 0; i < s.n_proc; i++)
                if (s.p[i].gpu == idx(d)) {
                        if (k < cap && out)
                                out[k] =
                                        (struct util){s.p[i].pid, (unsigned long long) tv.tv_sec * 1000000 + tv.tv_usec,
                                                      s.p[i].pct, 0,
                                                      0,          0};
                        k++;
                }
        *n = k;
        if (!out)
                return k ? 7 : 6; /* INSUFFICIENT_SIZE, or NOT_FOUND: no samples */
        return k > cap ? 7 : 0;
}
int nvmlDeviceGetUUID(void *d, char *buf, unsigned len) {
        snprintf(buf, len, "%s", s.uuid[idx(d)]);
        return 0;
}
int nvmlDeviceGetName(void *d, char *buf, unsigned len) {
        snprintf(buf, len, "%s", s.name[idx(d)]);
        return 0;
}
struct pci_info { /* nvmlPciInfo_t */
        char bus_id_legacy[16];
        unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
        char bus_id[32];
};
int nvmlDeviceGetPciInfo_v3(void *d, struct pci_info *p);
int nvmlDeviceGetPciInfo_v3(void *d, struct pci_info *p) {
        load();
        if (!s.pci[idx(d)][0])
                return 3; /* NVML_ERROR_NOT_SUPPORTED */
        memset(p, 0, sizeof *p);
        snprintf(p->bus_id, sizeof p->bus_id, "%s", s.pci[idx(d)]);
        return 0;
}
int nvmlDeviceGetMinorNumber(void *d, unsigned *minor) {
        *minor = idx(d);
        return 0;
}
