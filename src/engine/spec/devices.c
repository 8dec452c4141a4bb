/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * --gpus and --devices.
 *
 * Semantics. --gpus restricts GPU device nodes only: the NVIDIA nodes
 * (major 195: /dev/nvidiaN, nvidiactl, nvidia-modeset; the nvidia-uvm and
 * nvidia-caps majors), the DRM nodes (major 226: /dev/dri/cardN and
 * renderD(128+N)) and AMD's /dev/kfd; every other device stays as it was.
 * --devices is an allow-list of everything: a node it does not name is
 * refused. Both at once: the GPU nodes are decided by --gpus (an entry of
 * --devices cannot reopen a GPU --gpus left out), the rest by --devices.
 *
 * GPU index N is NVML's index N where NVML is there (nvidia-smi's numbering,
 * PCI bus order), mapped to its /dev/nvidia<minor> by NVML's minor number;
 * without NVML it is /dev/nvidiaN. Its DRM nodes are those sysfs lists
 * under the PCI address NVML reports (/sys/bus/pci/devices/ADDR/drm/card*,
 * renderD*): on a host whose BMC's VGA is card0, cardN is not GPU N; only
 * without NVML (or its PCI call) is it /dev/dri/cardN and renderD(128+N),
 * a guess. A chosen GPU also opens the nodes every CUDA or ROCm
 * process needs (nvidiactl, nvidia-modeset, nvidia-uvm*, nvidia-caps, kfd);
 * --gpus none refuses those too, so no driver call can reach any GPU.
 */
#include "devices.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "../../basic/dirread.h"
#include "../../basic/fileio.h"
#include "../../basic/macro.h"
#include "../hardware/nvml.h"

#define NVIDIA_MAJOR 195
#define NVIDIA_CTL_MINOR 255
#define NVIDIA_MODESET_MINOR 254
#define DRM_MAJOR 226
#define DRM_RENDER_BASE 128

static void set_bad(char *bad, size_t size, const char *s, size_t len) {
        if (bad && size)
                snprintf(bad, size, "%.*s", (int) (len < 120 ? len : 120), s);
}

/* a decimal number of at most max, the whole of [s, s+len) */
static int parse_num(const char *s, size_t len, unsigned long max, unsigned long *ret) {
        unsigned long v = 0;

        if (len == 0 || len > 10)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned long) (s[i] - '0');
        }
        if (v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

/* one item of --gpus: "N" or "N-M" */
static int gpus_item(const char *s, size_t len, uint64_t *mask) {
        const char *dash = memchr(s, '-', len);
        unsigned long a, b;
        int r;

        r = parse_num(s, dash ? (size_t) (dash - s) : len, LEASH_GPUS_MAX - 1, &a);
        if (r < 0)
                return r;
        b = a;
        if (dash) {
                r = parse_num(dash + 1, len - (size_t) (dash - s) - 1, LEASH_GPUS_MAX - 1, &b);
                if (r < 0)
                        return r;
                if (b < a)
                        return -EINVAL;
        }
        for (unsigned long i = a; i <= b; i++)
                *mask |= 1ULL << i;
        return 0;
}

int devices_parse_gpus(const char *s, struct leash_devices *d, char *bad, size_t bad_size) {
        uint64_t mask = 0;

        if (!s || !*s) {
                set_bad(bad, bad_size, "", 0);
                return -EINVAL;
        }
        if (strcmp(s, "none") == 0 || strcmp(s, "all") == 0) {
                d->gpus = s[0] == 'n' ? LEASH_GPUS_NONE : LEASH_GPUS_ALL;
                d->gpu_mask = 0;
                return 0;
        }
        for (const char *p = s;;) {
                size_t len = strcspn(p, ",");
                int r = gpus_item(p, len, &mask);
                if (r < 0) {
                        set_bad(bad, bad_size, p, len);
                        return r;
                }
                if (!p[len])
                        break;
                p += len + 1;
        }
        d->gpus = LEASH_GPUS_LIST;
        d->gpu_mask = mask;
        return 0;
}

static int parse_access(const char *s, size_t len, uint8_t *ret) {
        uint8_t a = 0;

        if (len == 0)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                uint8_t bit = s[i] == 'r'   ? DEVFILTER_READ
                              : s[i] == 'w' ? DEVFILTER_WRITE
                              : s[i] == 'm' ? DEVFILTER_MKNOD
                                            : 0;
                if (!bit || (a & bit))
                        return -EINVAL;
                a |= bit;
        }
        *ret = a;
        return 0;
}

/* "MAJOR:MINOR", each a number or * */
static int parse_majmin(const char *s, size_t len, struct devfilter_rule *rule) {
        const char *colon = memchr(s, ':', len);
        size_t l1, l2;
        unsigned long v;
        int r;

        if (!colon)
                return -EINVAL;
        l1 = (size_t) (colon - s);
        l2 = len - l1 - 1;
        if (l1 == 1 && s[0] == '*')
                rule->major = DEVFILTER_ANY;
        else if ((r = parse_num(s, l1, 4095, &v)) < 0) /* the kernel's majors are 12 bits */
                return r;
        else
                rule->major = (uint32_t) v;
        if (l2 == 1 && colon[1] == '*')
                rule->minor = DEVFILTER_ANY;
        else if ((r = parse_num(colon + 1, l2, 0xfffff, &v)) < 0) /* and minors 20 */
                return r;
        else
                rule->minor = (uint32_t) v;
        return 0;
}

/* "PATH": a device node as it is now */
static int parse_path(const char *s, size_t len, struct devfilter_rule *rule) {
        char path[4096];
        struct stat st;

        if (len >= sizeof path)
                return -ENAMETOOLONG;
        memcpy(path, s, len);
        path[len] = '\0';
        if (stat(path, &st) < 0)
                return negative_errno();
        if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
                return -ENODEV;
        rule->type = S_ISCHR(st.st_mode) ? DEVFILTER_CHAR : DEVFILTER_BLOCK;
        rule->major = major(st.st_rdev);
        rule->minor = minor(st.st_rdev);
        return 0;
}

/* one entry of --devices, its words separated by spaces */
static int devices_entry(const char *s, size_t len, struct devfilter_rule *rule) {
        const char *w[3];
        size_t wl[3], n = 0;
        int r;

        for (size_t i = 0; i < len;) {
                size_t k;
                if (s[i] == ' ' || s[i] == '\t') {
                        i++;
                        continue;
                }
                for (k = i; k < len && s[k] != ' ' && s[k] != '\t'; k++)
                        ;
                if (n == 3)
                        return -EINVAL;
                w[n] = s + i;
                wl[n++] = k - i;
                i = k;
        }
        if (n == 0)
                return -EINVAL;
        *rule = (struct devfilter_rule){.allow = true, .access = DEVFILTER_READ | DEVFILTER_WRITE};
        if (w[0][0] == '/') {
                if (n > 2)
                        return -EINVAL;
                r = parse_path(w[0], wl[0], rule);
                return r < 0 ? r : n == 2 ? parse_access(w[1], wl[1], &rule->access) : 0;
        }
        if (n < 2 || wl[0] != 1 || !strchr("cba", w[0][0]))
                return -EINVAL;
        rule->type = w[0][0] == 'c' ? DEVFILTER_CHAR : w[0][0] == 'b' ? DEVFILTER_BLOCK : DEVFILTER_ANY_TYPE;
        r = parse_majmin(w[1], wl[1], rule);
        return r < 0 ? r : n == 3 ? parse_access(w[2], wl[2], &rule->access) : 0;
}

int devices_parse_list(const char *s, struct leash_devices *d, char *bad, size_t bad_size) {
        struct devfilter_rule rules[LEASH_DEVICE_RULES_MAX];
        unsigned n = 0;

        if (!s || !*s) {
                set_bad(bad, bad_size, "", 0);
                return -EINVAL;
        }
        if (strcmp(s, "none") != 0)
                for (const char *p = s;;) {
                        size_t len = strcspn(p, ",");
                        int r = n == LEASH_DEVICE_RULES_MAX ? -E2BIG : devices_entry(p, len, &rules[n]);
                        if (r < 0) {
                                set_bad(bad, bad_size, p, len);
                                return r;
                        }
                        n++;
                        if (!p[len])
                                break;
                        p += len + 1;
                }
        memcpy(d->rule, rules, n * sizeof *rules);
        d->n_rules = n;
        d->allow_list = true;
        return 0;
}

void devices_format_gpus(const struct leash_devices *d, char *buf, size_t size) {
        size_t len = 0;

        buf[0] = '\0';
        if (d->gpus != LEASH_GPUS_LIST) {
                snprintf(buf, size, "%s",
                         d->gpus == LEASH_GPUS_NONE  ? "none"
                         : d->gpus == LEASH_GPUS_ALL ? "all"
                                                     : "unset");
                return;
        }
        for (unsigned i = 0; i < LEASH_GPUS_MAX && len < size; i++)
                if (d->gpu_mask & (1ULL << i))
                        len += (size_t) snprintf(buf + len, size - len, "%s%u", len ? "," : "", i);
}

static void format_num(uint32_t v, char *buf, size_t size) {
        if (v == DEVFILTER_ANY)
                snprintf(buf, size, "*");
        else
                snprintf(buf, size, "%u", v);
}

void devices_format_list(const struct leash_devices *d, char *buf, size_t size) {
        size_t len = 0;

        if (!d->allow_list || d->n_rules == 0) {
                snprintf(buf, size, "%s", d->allow_list ? "none" : "unset");
                return;
        }
        buf[0] = '\0';
        for (unsigned i = 0; i < d->n_rules && len < size; i++) {
                const struct devfilter_rule *r = &d->rule[i];
                char maj[16], min[16];
                format_num(r->major, maj, sizeof maj);
                format_num(r->minor, min, sizeof min);
                len += (size_t) snprintf(buf + len, size - len, "%s%c %s:%s %s%s%s", i ? "," : "",
                                         r->type == DEVFILTER_CHAR    ? 'c'
                                         : r->type == DEVFILTER_BLOCK ? 'b'
                                                                      : 'a',
                                         maj, min, r->access & DEVFILTER_READ ? "r" : "",
                                         r->access & DEVFILTER_WRITE ? "w" : "",
                                         r->access & DEVFILTER_MKNOD ? "m" : "");
        }
}

bool devices_restrict(const struct leash_devices *d) {
        return d->allow_list || d->gpus == LEASH_GPUS_NONE || d->gpus == LEASH_GPUS_LIST;
}

void devices_host_parse(const char *text, struct devices_host *h) {
        bool chr = false;

        h->uvm_major = h->caps_major = h->kfd_major = 0;
        for (const char *p = text; p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t) (nl - p) : strlen(p);
                unsigned maj;
                char name[64];
                if (len >= 10 && strncmp(p, "Character ", 10) == 0)
                        chr = true;
                else if (len >= 6 && strncmp(p, "Block ", 6) == 0)
                        chr = false;
                else if (chr && sscanf(p, "%u %63s", &maj, name) == 2 && maj > 0 && maj < 4096) {
                        if (strcmp(name, "nvidia-uvm") == 0)
                                h->uvm_major = maj;
                        else if (strcmp(name, "nvidia-caps") == 0)
                                h->caps_major = maj;
                        else if (strcmp(name, "kfd") == 0)
                                h->kfd_major = maj;
                }
                p = nl ? nl + 1 : NULL;
        }
}

/* "0000:3b:00.0": hex digits, two colons and a dot where sysfs has them */
static bool pci_address_ok(const char *a) {
        static const char form[] = "xxxx:xx:xx.x";
        if (strlen(a) != sizeof form - 1)
                return false;
        for (size_t i = 0; form[i]; i++)
                if (form[i] == 'x' ? !strchr("0123456789abcdef", a[i]) || !a[i] : a[i] != form[i])
                        return false;
        return true;
}

/* N of PREFIX<N>, the whole name, at most max; -1 otherwise */
static int node_number(const char *name, const char *prefix, unsigned long max) {
        size_t l = strlen(prefix);
        unsigned long v;
        if (strncmp(name, prefix, l) != 0 || parse_num(name + l, strlen(name + l), max, &v) < 0)
                return -1;
        return (int) v;
}

int devices_drm_nodes(int sysfs_fd, const char *addr, int *ret_card, int *ret_render) {
        _cleanup_close_ int fd = -1;
        struct dirread d;
        const char *name;
        char path[64];

        *ret_card = *ret_render = -1;
        if (!pci_address_ok(addr))
                return -EINVAL;
        snprintf(path, sizeof path, "bus/pci/devices/%s/drm", addr);
        fd = openat(sysfs_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        dirread_init(&d, fd);
        while ((name = dirread_next(&d, NULL))) {
                int c = node_number(name, "card", DRM_RENDER_BASE - 1), r = node_number(name, "renderD", 0xfffff);
                if (c >= 0 && *ret_card < 0)
                        *ret_card = c;
                if (r >= DRM_RENDER_BASE && *ret_render < 0)
                        *ret_render = r;
        }
        return 0;
}

/* each NVML GPU's DRM nodes, by its PCI address; the index guess stays
 * where the driver gives no address */
static void host_drm(struct devices_host *h) {
        _cleanup_close_ int sys = open("/sys", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        for (unsigned i = 0; i < h->nvidia_count; i++) {
                char addr[NVML_PCI_MAX];
                if (nvml_pci_address(i, addr) < 0)
                        continue;
                h->drm_card[i] = h->drm_render[i] = -1; /* none unless sysfs lists them */
                if (sys >= 0)
                        (void) devices_drm_nodes(sys, addr, &h->drm_card[i], &h->drm_render[i]);
        }
}

int devices_host_read(struct devices_host *h) {
        _cleanup_free_ char *text = NULL;
        const char *why;
        unsigned count = 0;
        int r;

        memset(h, 0, sizeof *h);
        for (unsigned i = 0; i < LEASH_GPUS_MAX; i++) {
                h->minor[i] = i;
                h->drm_card[i] = (int) i;
                h->drm_render[i] = DRM_RENDER_BASE + (int) i;
        }
        r = read_file_at_alloc(AT_FDCWD, "/proc/devices", &text, NULL);
        if (r < 0)
                return r;
        devices_host_parse(text, h);
        if (nvml_open(&why) < 0 || nvml_count(&count) < 0)
                return 0; /* no NVML: index N is /dev/nvidiaN */
        h->nvidia_count = count < LEASH_GPUS_MAX ? count : LEASH_GPUS_MAX;
        for (unsigned i = 0; i < h->nvidia_count; i++) {
                char name[NVML_NAME_MAX], uuid[NVML_UUID_MAX];
                unsigned minor;
                if (nvml_describe(i, uuid, name, &minor) < 0)
                        continue;
                if (minor != (unsigned) -1) /* else the index stands for it */
                        h->minor[i] = minor;
                snprintf(h->uuid[i], sizeof h->uuid[i], "%s", uuid);
        }
        host_drm(h);
        return 0;
}

struct rules_out {
        struct devfilter_rule *r;
        size_t n, max;
};

static void push(struct rules_out *o, uint32_t major, uint32_t minor, bool allow) {
        if (o->n < o->max)
                o->r[o->n] = (struct devfilter_rule){.type = DEVFILTER_CHAR,
                                                     .access = DEVFILTER_READ | DEVFILTER_WRITE,
                                                     .allow = allow,
                                                     .major = major,
                                                     .minor = minor};
        o->n++;
}

/* the nodes every GPU process opens, whichever GPU it uses; 0 majors are
 * drivers not loaded now (a driver loaded while the job runs gets no rule:
 * with --devices it is refused like any other node, without it allowed) */
static void gpu_shared_nodes(struct rules_out *o, const struct devices_host *h, bool allow) {
        push(o, NVIDIA_MAJOR, allow ? NVIDIA_CTL_MINOR : DEVFILTER_ANY, allow);
        if (allow)
                push(o, NVIDIA_MAJOR, NVIDIA_MODESET_MINOR, allow);
        if (h->uvm_major)
                push(o, h->uvm_major, DEVFILTER_ANY, allow);
        if (h->caps_major)
                push(o, h->caps_major, DEVFILTER_ANY, allow);
        if (h->kfd_major)
                push(o, h->kfd_major, DEVFILTER_ANY, allow);
}

static int gpu_rules(const struct leash_devices *d, const struct devices_host *h, struct rules_out *o,
                     unsigned *ret_bad_index) {
        if (d->gpus == LEASH_GPUS_ALL) {
                gpu_shared_nodes(o, h, true);
                push(o, NVIDIA_MAJOR, DEVFILTER_ANY, true);
                push(o, DRM_MAJOR, DEVFILTER_ANY, true);
                return 0;
        }
        if (d->gpus == LEASH_GPUS_LIST) {
                for (unsigned i = 0; i < LEASH_GPUS_MAX; i++) {
                        if (!(d->gpu_mask & (1ULL << i)))
                                continue;
                        if (h->nvidia_count && i >= h->nvidia_count) {
                                *ret_bad_index = i;
                                return -ENODEV;
                        }
                        push(o, NVIDIA_MAJOR, h->minor[i], true);
                        if (h->drm_card[i] >= 0)
                                push(o, DRM_MAJOR, (uint32_t) h->drm_card[i], true);
                        if (h->drm_render[i] >= 0)
                                push(o, DRM_MAJOR, (uint32_t) h->drm_render[i], true);
                }
                gpu_shared_nodes(o, h, true);
        }
        /* none, and what a list left out */
        gpu_shared_nodes(o, h, false);
        push(o, DRM_MAJOR, DEVFILTER_ANY, false);
        return 0;
}

int devices_rules(const struct leash_devices *d, const struct devices_host *h, struct devfilter_rule *out, size_t max,
                  size_t *ret_n, bool *ret_default_allow, unsigned *ret_bad_index) {
        struct rules_out o = {out, 0, max};
        int r;

        if (d->gpus != LEASH_GPUS_UNSET && (d->gpus != LEASH_GPUS_ALL || d->allow_list)) {
                r = gpu_rules(d, h, &o, ret_bad_index);
                if (r < 0)
                        return r;
        }
        for (unsigned i = 0; i < d->n_rules; i++) {
                if (o.n < o.max)
                        o.r[o.n] = d->rule[i];
                o.n++;
        }
        if (o.n > o.max)
                return -E2BIG;
        *ret_n = o.n;
        *ret_default_allow = !d->allow_list;
        return 0;
}

int devices_gpu_env(const struct leash_devices *d, const struct devices_host *h, char cuda[], size_t cuda_size,
                    char rocr[], size_t rocr_size) {
        size_t lc = 0, lr = 0;

        if (d->gpus == LEASH_GPUS_UNSET || d->gpus == LEASH_GPUS_ALL)
                return 0;
        /* CUDA's documented way to hide every device: an invalid index first */
        snprintf(cuda, cuda_size, "CUDA_VISIBLE_DEVICES=%s", d->gpus == LEASH_GPUS_NONE ? "-1" : "");
        snprintf(rocr, rocr_size, "ROCR_VISIBLE_DEVICES=%s", d->gpus == LEASH_GPUS_NONE ? "-1" : "");
        if (d->gpus == LEASH_GPUS_NONE)
                return 2;
        lc = strlen(cuda);
        lr = strlen(rocr);
        for (unsigned i = 0, k = 0; i < LEASH_GPUS_MAX; i++) {
                if (!(d->gpu_mask & (1ULL << i)))
                        continue;
                if (lc < cuda_size)
                        lc += (size_t) (h->uuid[i][0]
                                                ? snprintf(cuda + lc, cuda_size - lc, "%s%s", k ? "," : "", h->uuid[i])
                                                : snprintf(cuda + lc, cuda_size - lc, "%s%u", k ? "," : "", i));
                if (lr < rocr_size)
                        lr += (size_t) snprintf(rocr + lr, rocr_size - lr, "%s%u", k ? "," : "", i);
                k++;
        }
        return lc < cuda_size && lr < rocr_size ? 2 : -ENAMETOOLONG;
}

void devices_describe(const struct leash_devices *d, char *buf, size_t size) {
        char g[256] = "", l[1024] = "";

        if (d->gpus != LEASH_GPUS_UNSET)
                devices_format_gpus(d, g, sizeof g);
        if (d->allow_list)
                devices_format_list(d, l, sizeof l);
        snprintf(buf, size, "%s%s%s%s%s%s", g[0] ? "--gpus " : "", g, g[0] && l[0] ? " " : "",
                 l[0] ? "--devices '" : "", l, l[0] ? "'" : "");
}
