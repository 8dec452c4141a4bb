#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Where a user's login-session launch spends its manager call (docs/PERFORMANCE.md's
# systemd paragraph): dlopen of libsystemd, sd_bus_open_user and AttachProcessesToUnit
# into leash-jobs.service's leash-leaf, each timed apart in ten fresh Python processes
# (ctypes over libsystemd, the calls leash makes), then five `leash run -- true`, then
# the sentinel's own cost (src/engine/process/sentinel.c: sentinel_start, timed 20 times
# in one process that is a child subreaper, as `leash run` is; compiled here with the
# build tree's object).  Runs
# in the systemd VM as uid 1000 in a login session: the suite picks that by the name, so
# copy it to a file named user-*.sh and pass that:
#   cp bench/systemd-attach-probe.sh build/user-99-probe.sh
#   flock /tmp/leash-vm.lock tests/vm/run --systemd --builddir $PWD/build --srcdir $PWD \
#     --script $PWD/build/user-99-probe.sh
# The figures are the "# probe" lines of its output.
. "$LEASH_VM_SRCDIR/tests/vm/systemd/lib.sh"
"$LEASH" run -- true
for _ in 1 2 3 4 5 6 7 8 9 10; do
/usr/bin/python3 - <<'PY'
import ctypes, os, subprocess, time
t0 = time.perf_counter()
lib = ctypes.CDLL("libsystemd.so.0")
t1 = time.perf_counter()
bus = ctypes.c_void_p()
r = lib.sd_bus_open_user(ctypes.byref(bus))
t2 = time.perf_counter()
p = subprocess.Popen(["sleep", "30"])
err = (ctypes.c_byte * 64)()
t3 = time.perf_counter()
r2 = lib.sd_bus_call_method(bus, b"org.freedesktop.systemd1", b"/org/freedesktop/systemd1",
    b"org.freedesktop.systemd1.Manager", b"AttachProcessesToUnit", err, None, b"ssau",
    b"leash-jobs.service", b"/leash-leaf", ctypes.c_uint(1), ctypes.c_uint(p.pid))
t4 = time.perf_counter()
cg = open("/proc/%d/cgroup" % p.pid).read().strip()
p.kill(); p.wait()
print("# probe dlopen %.2f ms, sd_bus_open_user %.2f ms (r=%d), AttachProcessesToUnit %.2f ms (r=%d) -> %s" % ((t1-t0)*1e3, (t2-t1)*1e3, r, (t4-t3)*1e3, r2, cg))
PY
done
for _ in 1 2 3 4 5; do t0=$EPOCHREALTIME; "$LEASH" run -- true; echo "# probe leash run -- true: $(awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN{printf "%.1f", (b-a)*1e3}') ms"; done
cat >"$TMP/sentinel-probe.c" <<'C'
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>
int sentinel_start(void);
static double ms(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
int main(void) {
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1);
        for (int i = 0; i < 20; i++) {
                double a = ms();
                int r = sentinel_start();
                printf("# probe sentinel_start %.3f ms (r=%d)\n", ms() - a, r);
        }
        return 0;
}
C
gcc -O2 -o "$TMP/sentinel-probe" "$TMP/sentinel-probe.c" "$LEASH_VM_BUILDDIR/src/engine/process/lib_libleash_a-sentinel.o" &&
	"$TMP/sentinel-probe"
for _ in 1 2 3 4 5; do t0=$EPOCHREALTIME; /bin/true; echo "# probe /bin/true: $(awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN{printf "%.1f", (b-a)*1e3}') ms"; done
echo "ok 1 - probe"
echo "1..1"
