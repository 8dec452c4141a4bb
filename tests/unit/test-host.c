/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>

#include "engine/placement/host.h"
#include "engine/placement/placement.h"
#include "engine/process/proctree.h"
#include "engine/placement/systemd-scope.h"
#include "tap.h"

/* this development machine: hybrid */
static const char mountinfo_hybrid[] =
        "24 29 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
        "30 24 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "31 30 0:27 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
        "32 30 0:28 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
        "33 30 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "34 30 0:30 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
        "35 30 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n";

static const char mountinfo_v2[] = "22 1 0:21 / / rw,relatime - ext4 /dev/vda rw\n"
                                   "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 "
                                   "cgroup2 rw,nsdelegate,memory_recursiveprot\n";

static const char mountinfo_escaped[] = "40 1 0:40 / /mnt/my\\040cgroups rw - cgroup2 none rw\n";
static const char mountinfo_v1[] = "33 30 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n";

int main(void) {
        char buf[4096];
        unsigned v1 = 99;

        ok(host_parse_mountinfo(mountinfo_hybrid, buf, sizeof buf, &v1) == 0, "hybrid has a cgroup2 mount");
        is_str(buf, "/sys/fs/cgroup/unified", "hybrid mount point");
        is_u64(v1, 3, "three v1 hierarchies with controllers (name=systemd does not count)");
        ok(host_parse_mountinfo(mountinfo_v2, buf, sizeof buf, &v1) == 0, "v2");
        is_str(buf, "/sys/fs/cgroup", "v2 mount point");
        is_u64(v1, 0, "no v1 hierarchies");
        ok(host_parse_mountinfo(mountinfo_escaped, buf, sizeof buf, NULL) == 0, "escaped mount point");
        is_str(buf, "/mnt/my cgroups", "octal escape undone");
        ok(host_parse_mountinfo(mountinfo_v1, buf, sizeof buf, &v1) == -ENOENT, "v1 only: no cgroup2");
        is_u64(v1, 1, "one v1 hierarchy");
        ok(host_parse_mountinfo("", buf, sizeof buf, NULL) == -ENOENT, "empty mountinfo");
        ok(host_parse_mountinfo(mountinfo_v2, buf, 4, NULL) == -ENAMETOOLONG, "buffer too small");

        ok(host_parse_proc_cgroup("0::/user.slice/session-1.scope\n", buf, sizeof buf) == 0, "v2 /proc/self/cgroup");
        is_str(buf, "/user.slice/session-1.scope", "own cgroup");
        ok(host_parse_proc_cgroup("9:name=systemd:/\n4:memory:/x\n0::/\n", buf, sizeof buf) == 0,
           "hybrid /proc/self/cgroup");
        is_str(buf, "/", "root cgroup");
        ok(host_parse_proc_cgroup("4:memory:/x\n", buf, sizeof buf) == -ENOENT, "v1 only: no 0:: line");
        ok(host_parse_proc_cgroup("0::/a (deleted)\n", buf, sizeof buf) == -ESTALE, "deleted cgroup");
        ok(host_parse_proc_cgroup("0::relative\n", buf, sizeof buf) == -EINVAL, "not absolute");

        is_u64(cgroupfs_parse_controllers("cpuset cpu io memory hugetlb pids rdma misc\n"),
               CTL_MEMORY | CTL_PIDS | CTL_CPU | CTL_IO, "all four controllers");
        is_u64(cgroupfs_parse_controllers("hugetlb\n"), 0, "none of ours");
        is_u64(cgroupfs_parse_controllers("cpuset\n"), 0, "cpuset is not cpu");
        is_u64(cgroupfs_parse_controllers(""), 0, "empty");

        /* placement: where the walk up stops (a unit systemd made) */
        ok(placement_is_unit_name("session-2.scope"), "a login session's scope is a unit");
        ok(placement_is_unit_name("app.slice"), "the user manager's app.slice is a unit");
        ok(placement_is_unit_name("user@1000.service"), "user@1000.service is a unit");
        ok(!placement_is_unit_name("sh@123"), "a leash job is not a unit");
        ok(!placement_is_unit_name(".scope"), "a bare suffix is not a unit");
        ok(!placement_is_unit_name("leash-leaf"), "leash-leaf is not a unit");
        is_str(placement_kind_to_string(PLACEMENT_NONE), "none", "kind none");
        is_str(placement_kind_to_string(PLACEMENT_JOB), "job", "kind job");

        /* the unit a leash scope is bound to: the innermost .service/.scope of
         * the same manager */
        {
                char u[256] = "";
                ok(systemd_scope_bind_unit("/system.slice/judge.service", false, 0, u, sizeof u) == 1 &&
                           strcmp(u, "judge.service") == 0,
                   "root in a system service: bound to it (%s)", u);
                ok(systemd_scope_bind_unit("/user.slice/user-0.slice/session-3.scope", false, 0, u, sizeof u) == 1 &&
                           strcmp(u, "session-3.scope") == 0,
                   "root in a login session: bound to its scope (%s)", u);
                ok(systemd_scope_bind_unit("/user.slice/user-1000.slice/user@1000.service/app.slice/batch.service",
                                           true, 1000, u, sizeof u) == 1 &&
                           strcmp(u, "batch.service") == 0,
                   "a user in a user service: bound to it, not to user@1000.service (%s)", u);
                ok(systemd_scope_bind_unit("/user.slice/user-1000.slice/session-2.scope", true, 1000, u, sizeof u) == 0,
                   "a user in a login session: the system manager's scope, not bound");
                ok(systemd_scope_bind_unit("/user.slice/user-1000.slice/user@1000.service/app.slice/x.service", false,
                                           0, u, sizeof u) == 0,
                   "root in a user manager's unit: not the system manager's to name");
                ok(systemd_scope_bind_unit("/leash/sh@12", false, 0, u, sizeof u) == 0, "no unit at all: not bound");
                ok(systemd_scope_bind_unit("/", false, 0, u, sizeof u) == 0, "the root cgroup: not bound");
        }

        return tap_done();
}
