/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leash check, the sandbox part: whether seccomp works here and each filter
 * set can be built, what leash can take away (capabilities, bounding set),
 * and whether it can switch identity. Informational: the verdict and exit
 * status of `leash check` stay about limits; `leash run --seccomp` on a host
 * without seccomp fails with 125 by itself.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../sandbox/caps.h"
#include "../sandbox/filter.h"
#include "../engine/process/isolate.h"
#include "../engine/leash.h"
#include "cli.h"

void print_sandbox_check(void) {
        char actions[512];
        int r = filter_available(actions, sizeof actions);

        if (r < 0)
                printf("seccomp:            NOT AVAILABLE (kernel without CONFIG_SECCOMP): --seccomp will fail\n");
        else
                printf("seccomp:            available (actions: %s)\n", actions[0] ? actions : "unknown");
        for (unsigned i = 0; i < LEASH_FILTER_COUNT; i++) {
                struct filter_program p = {0};
                int b = filter_build(1U << i, LEASH_SECCOMP_KILL, &p);
                if (b < 0)
                        printf("  filter %-14s cannot be built here: %s\n", leash_filter_to_string(1U << i),
                               strerror(-b));
                else
                        printf("  filter %-14s %s (%s; %u instructions)\n", leash_filter_to_string(1U << i),
                               r < 0 ? "builds, but cannot be loaded" : "ok", filter_arch_names(), p.len);
                filter_program_done(&p);
        }
        printf("identity switch:    %s\n",
               geteuid() == 0 ? "available (leash runs as root)" : "not available (--user/--group need root)");
        printf("capabilities:       bounding set %s\n",
               caps_have(CAP_SETPCAP_NUMBER)
                       ? "can be dropped (CAP_SETPCAP held)"
                       : "cannot be dropped (no CAP_SETPCAP); the job has no capabilities to drop");
        if (geteuid() != 0)
                printf("isolation:          not available (--isolate needs root)\n");
        else if ((r = isolate_probe()) < 0)
                printf("isolation:          not available (new pid and mount namespaces: %s)\n", strerror(-r));
        else
                printf("isolation:          available (--isolate: own pid and mount namespaces, cgroupfs read-only)\n");
        printf("  a job without --isolate that keeps leash's uid%s can leave its cgroup, stop or freeze leash:\n"
               "  its report says \"isolation\": \"none: ...\"\n",
               geteuid() == 0 ? " (no --user)" : " (always, for an unprivileged leash)");
}
