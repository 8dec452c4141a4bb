/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* --gpus and --devices: the list parsers, their formatting, /proc/devices,
 * the rules for each combination (through devfilter_verdict, the program's
 * walk in C) and the program's shape. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/hardware/devfilter.h"
#include "engine/spec/devices.h"
#include "tap.h"

#define C DEVFILTER_CHAR
#define RW (DEVFILTER_READ | DEVFILTER_WRITE)

static void test_gpus(void) {
        struct leash_devices d = {0};
        char bad[128], buf[256];

        ok(devices_parse_gpus("none", &d, bad, sizeof bad) == 0 && d.gpus == LEASH_GPUS_NONE, "gpus none");
        ok(devices_parse_gpus("all", &d, bad, sizeof bad) == 0 && d.gpus == LEASH_GPUS_ALL, "gpus all");
        ok(devices_parse_gpus("0,2-3,63", &d, bad, sizeof bad) == 0 && d.gpus == LEASH_GPUS_LIST, "gpus 0,2-3,63");
        is_u64(d.gpu_mask, 0x800000000000000dULL, "gpus 0,2-3,63: the mask");
        devices_format_gpus(&d, buf, sizeof buf);
        is_str(buf, "0,2,3,63", "gpus formatted as indices");
        ok(devices_parse_gpus("64", &d, bad, sizeof bad) == -ERANGE, "gpus 64: out of range");
        is_str(bad, "64", "gpus 64: the part at fault");
        ok(devices_parse_gpus("1,GPU-1234", &d, bad, sizeof bad) == -EINVAL, "gpus: a UUID is refused");
        is_str(bad, "GPU-1234", "gpus: the UUID named");
        ok(devices_parse_gpus("3-1", &d, bad, sizeof bad) == -EINVAL, "gpus 3-1: a backwards range");
        ok(devices_parse_gpus("", &d, bad, sizeof bad) == -EINVAL, "gpus empty");
        ok(devices_parse_gpus("0,", &d, bad, sizeof bad) == -EINVAL, "gpus 0,: an empty item");
        ok(devices_parse_gpus("-1", &d, bad, sizeof bad) == -EINVAL, "gpus -1");
        ok(devices_parse_gpus("+1", &d, bad, sizeof bad) == -EINVAL, "gpus +1");
        ok(devices_parse_gpus("99999999999", &d, bad, sizeof bad) < 0, "gpus: a huge number");
}

static void test_list(void) {
        struct leash_devices d = {0};
        char bad[128], buf[512];

        ok(devices_parse_list("c 1:3 rw,b 8:* r, a *:* m , /dev/null", &d, bad, sizeof bad) == 0,
           "devices: four entries");
        is_u64(d.n_rules, 4, "devices: four rules");
        ok(d.allow_list, "devices: an allow-list");
        ok(d.rule[0].type == C && d.rule[0].major == 1 && d.rule[0].minor == 3 && d.rule[0].access == RW &&
                   d.rule[0].allow,
           "devices: c 1:3 rw");
        ok(d.rule[1].type == DEVFILTER_BLOCK && d.rule[1].minor == DEVFILTER_ANY && d.rule[1].access == DEVFILTER_READ,
           "devices: b 8:* r");
        ok(d.rule[2].type == DEVFILTER_ANY_TYPE && d.rule[2].major == DEVFILTER_ANY &&
                   d.rule[2].access == DEVFILTER_MKNOD,
           "devices: a *:* m, spaces around");
        ok(d.rule[3].type == C && d.rule[3].major == 1 && d.rule[3].minor == 3 && d.rule[3].access == RW,
           "devices: /dev/null is c 1:3, rw by default");
        devices_format_list(&d, buf, sizeof buf);
        is_str(buf, "c 1:3 rw,b 8:* r,a *:* m,c 1:3 rw", "devices formatted");
        ok(devices_parse_list("none", &d, bad, sizeof bad) == 0 && d.allow_list && d.n_rules == 0, "devices none");
        devices_format_list(&d, buf, sizeof buf);
        is_str(buf, "none", "devices none formatted");
        ok(devices_parse_list("c 1:3 rwx", &d, bad, sizeof bad) == -EINVAL, "devices: access x");
        is_str(bad, "c 1:3 rwx", "devices: the entry at fault");
        ok(devices_parse_list("c 1:3 rr", &d, bad, sizeof bad) == -EINVAL, "devices: access repeated");
        ok(devices_parse_list("c 1 rw", &d, bad, sizeof bad) == -EINVAL, "devices: no minor");
        ok(devices_parse_list("c 4096:0", &d, bad, sizeof bad) == -ERANGE, "devices: major above 4095");
        ok(devices_parse_list("c 1:1048576", &d, bad, sizeof bad) == -ERANGE, "devices: minor above 2^20-1");
        ok(devices_parse_list("cc 1:3", &d, bad, sizeof bad) == -EINVAL, "devices: type cc");
        ok(devices_parse_list("c 1:3 rw extra", &d, bad, sizeof bad) == -EINVAL, "devices: a fourth word");
        ok(devices_parse_list("c 1:3,", &d, bad, sizeof bad) == -EINVAL, "devices: an empty entry");
        ok(devices_parse_list("/nonexistent/x", &d, bad, sizeof bad) == -ENOENT, "devices: a missing path");
        ok(devices_parse_list("/etc/passwd r", &d, bad, sizeof bad) == -ENODEV, "devices: a file, no device node");
        d.n_rules = 1;
        ok(devices_parse_list("c 1:-3", &d, bad, sizeof bad) < 0 && d.n_rules == 1,
           "devices: a failure leaves the list");
        {
                char many[33 * 10 + 1] = "";
                for (int i = 0; i < 33; i++)
                        strcat(many, i ? ",c 1:3 r" : "c 1:3 r");
                ok(devices_parse_list(many, &d, bad, sizeof bad) == -E2BIG, "devices: 33 entries, one too many");
        }
}

static const char proc_devices[] = "Character devices:\n  1 mem\n  4 /dev/vc/0\n195 nvidia-frontend\n"
                                   "226 drm\n235 nvidia-caps\n509 nvidia-uvm\n510 kfd\n\n"
                                   "Block devices:\n  8 sd\n511 nvidia-uvm\n";

static bool allows(const struct leash_devices *d, const struct devices_host *h, uint32_t maj, uint32_t min) {
        struct devfilter_rule rules[256];
        struct devfilter f = {rules, 0, false};
        unsigned bad;
        if (devices_rules(d, h, rules, 256, &f.n, &f.default_allow, &bad) < 0)
                return false;
        return devfilter_verdict(&f, C, maj, min, DEVFILTER_READ | DEVFILTER_WRITE);
}

static void test_rules(void) {
        struct devices_host h = {0};
        struct leash_devices d = {0};
        char cuda[128], rocr[128];
        unsigned bad = 0;
        size_t n;
        bool def;

        devices_host_parse(proc_devices, &h);
        ok(h.uvm_major == 509 && h.caps_major == 235 && h.kfd_major == 510,
           "/proc/devices: the char majors of nvidia-uvm, nvidia-caps, kfd (not the block one)");
        for (unsigned i = 0; i < LEASH_GPUS_MAX; i++) {
                h.minor[i] = i;
                h.drm_card[i] = (int) i;
                h.drm_render[i] = 128 + (int) i;
        }

        d.gpus = LEASH_GPUS_NONE;
        ok(!allows(&d, &h, 195, 0) && !allows(&d, &h, 195, 255) && !allows(&d, &h, 509, 0) && !allows(&d, &h, 226, 128),
           "gpus none: nvidia0, nvidiactl, nvidia-uvm, renderD128 refused");
        ok(allows(&d, &h, 1, 3) && allows(&d, &h, 136, 0), "gpus none: /dev/null and a pty allowed");
        ok(devices_gpu_env(&d, &h, cuda, sizeof cuda, rocr, sizeof rocr) == 2, "gpus none: two variables");
        is_str(cuda, "CUDA_VISIBLE_DEVICES=-1", "gpus none: CUDA_VISIBLE_DEVICES=-1");

        d.gpus = LEASH_GPUS_LIST;
        d.gpu_mask = 1ULL << 1;
        h.minor[1] = 3; /* NVML's GPU 1 is /dev/nvidia3 */
        ok(allows(&d, &h, 195, 3) && !allows(&d, &h, 195, 1) && !allows(&d, &h, 195, 0), "gpus 1: by NVML's minor");
        ok(allows(&d, &h, 195, 255) && allows(&d, &h, 195, 254) && allows(&d, &h, 509, 1) && allows(&d, &h, 510, 0),
           "gpus 1: the shared control nodes allowed");
        ok(allows(&d, &h, 226, 1) && allows(&d, &h, 226, 129) && !allows(&d, &h, 226, 128),
           "gpus 1: card1, renderD129");
        strcpy(h.uuid[1], "GPU-aaaa");
        ok(devices_gpu_env(&d, &h, cuda, sizeof cuda, rocr, sizeof rocr) == 2, "gpus 1: two variables");
        is_str(cuda, "CUDA_VISIBLE_DEVICES=GPU-aaaa", "gpus 1: CUDA by UUID");
        is_str(rocr, "ROCR_VISIBLE_DEVICES=1", "gpus 1: ROCR by index");
        h.nvidia_count = 1;
        ok(devices_rules(&d, &h, (struct devfilter_rule[256]){0}, 256, &n, &def, &bad) == -ENODEV && bad == 1,
           "gpus 1 where NVML lists 1: ENODEV naming GPU 1");
        h.nvidia_count = 0;

        d.allow_list = true;
        d.n_rules = 1;
        d.rule[0] =
                (struct devfilter_rule){.type = C, .access = RW, .allow = true, .major = 195, .minor = DEVFILTER_ANY};
        ok(!allows(&d, &h, 195, 0), "gpus 1 + devices 'c 195:*': --gpus decides GPU nodes");
        ok(!allows(&d, &h, 1, 3), "gpus 1 + devices: a node not listed is refused");
        d.gpus = LEASH_GPUS_UNSET;
        ok(allows(&d, &h, 195, 0) && !allows(&d, &h, 1, 3), "devices alone: exactly the list");
        d.gpus = LEASH_GPUS_ALL;
        ok(allows(&d, &h, 195, 7) && allows(&d, &h, 226, 130) && !allows(&d, &h, 1, 3),
           "gpus all + devices: every GPU");
        ok(devices_gpu_env(&d, &h, cuda, sizeof cuda, rocr, sizeof rocr) == 0, "gpus all: no variable");
        d.allow_list = false;
        d.n_rules = 0;
        ok(!devices_restrict(&d), "gpus all alone: no program needed");
}

static void test_program(void) {
        struct devfilter_rule r[2] = {
                {.type = C, .access = DEVFILTER_READ, .allow = true, .major = 1, .minor = 3},
                {.type = DEVFILTER_ANY_TYPE,
                 .access = DEVFILTER_ALL,
                 .allow = false,
                 .major = DEVFILTER_ANY,
                 .minor = DEVFILTER_ANY},
        };
        struct devfilter f = {r, 1, false};
        void *insns;
        size_t len;

        ok(devfilter_verdict(&f, C, 1, 3, DEVFILTER_READ), "verdict: read of c 1:3 allowed");
        ok(!devfilter_verdict(&f, C, 1, 3, DEVFILTER_READ | DEVFILTER_WRITE), "verdict: read+write is more than r");
        ok(!devfilter_verdict(&f, DEVFILTER_BLOCK, 1, 3, DEVFILTER_READ), "verdict: b 1:3 is another device");
        ok(devfilter_build(&f, &insns, &len) == 0, "build: one rule");
        is_u64(len, 7 + 3 + 3 + 2 + 2, "build: preamble, three tests, access check, verdict, default");
        free(insns);
        f.n = 2;
        ok(devfilter_build(&f, &insns, &len) == 0, "build: a catch-all rule last");
        is_u64(len, 7 + 8 + 2, "build: the catch-all ends the program (no dead default)");
        free(insns);
        r[0].major = 1U << 29;
        ok(devfilter_build(&f, &insns, &len) == -EINVAL, "build: a major the program cannot compare");
}

/* A fake sysfs tree: a BMC's VGA at 0000:02:00.0 with card0, the GPU at
 * 0000:3b:00.0 with card1 and renderD128 (what a host with a BMC shows) */
static const char *const fake_sysfs[] = {
        "bus",
        "bus/pci",
        "bus/pci/devices",
        "bus/pci/devices/0000:02:00.0",
        "bus/pci/devices/0000:02:00.0/drm",
        "bus/pci/devices/0000:02:00.0/drm/card0",
        "bus/pci/devices/0000:3b:00.0",
        "bus/pci/devices/0000:3b:00.0/drm",
        "bus/pci/devices/0000:3b:00.0/drm/card1",
        "bus/pci/devices/0000:3b:00.0/drm/renderD128",
        "bus/pci/devices/0000:3b:00.0/drm/version", /* not a node */
        "bus/pci/devices/0000:00:01.0",
};

static void test_drm_by_pci(void) {
        char root[] = "/tmp/leash-test-sysfs.XXXXXX";
        struct devices_host h = {0};
        struct leash_devices d = {.gpus = LEASH_GPUS_LIST, .gpu_mask = 1};
        int fd, card, render, n = (int) (sizeof fake_sysfs / sizeof fake_sysfs[0]);

        if (!mkdtemp(root) || (fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                ok(false, "a fake sysfs tree under /tmp");
                return;
        }
        for (int i = 0; i < n; i++)
                (void) mkdirat(fd, fake_sysfs[i], 0755);
        ok(devices_drm_nodes(fd, "0000:3b:00.0", &card, &render) == 0 && card == 1 && render == 128,
           "the GPU at 0000:3b:00.0: card1 and renderD128, from its drm directory");
        ok(devices_drm_nodes(fd, "0000:02:00.0", &card, &render) == 0 && card == 0 && render == -1,
           "the BMC's VGA: card0, no render node");
        ok(devices_drm_nodes(fd, "0000:00:01.0", &card, &render) == -ENOENT && card == -1 && render == -1,
           "a device without drm: -ENOENT, none");
        ok(devices_drm_nodes(fd, "../../../etc", &card, &render) == -EINVAL &&
                   devices_drm_nodes(fd, "0000:3B:00.0", &card, &render) == -EINVAL,
           "not a sysfs PCI address: -EINVAL");

        for (unsigned i = 0; i < LEASH_GPUS_MAX; i++)
                h.minor[i] = i;
        h.drm_card[0] = 0, h.drm_render[0] = 128; /* the index guess of before */
        ok(allows(&d, &h, 226, 0), "control: by its index GPU 0 is card0, the BMC's VGA, allowed");
        (void) devices_drm_nodes(fd, "0000:3b:00.0", &h.drm_card[0], &h.drm_render[0]);
        ok(allows(&d, &h, 226, 1) && allows(&d, &h, 226, 128) && !allows(&d, &h, 226, 0),
           "by its PCI address: --gpus 0 allows card1 and renderD128, refuses the BMC's card0");
        h.drm_card[0] = h.drm_render[0] = -1;
        ok(!allows(&d, &h, 226, 0) && !allows(&d, &h, 226, 128) && allows(&d, &h, 195, 0),
           "a GPU without DRM nodes: no DRM node allowed, its /dev/nvidia0 is");

        for (int i = n - 1; i >= 0; i--)
                (void) unlinkat(fd, fake_sysfs[i], AT_REMOVEDIR);
        close(fd);
        ok(rmdir(root) == 0, "the fake sysfs tree is removed");
}

int main(void) {
        test_gpus();
        test_drm_by_pci();
        test_list();
        test_rules();
        test_program();
        return tap_done();
}
