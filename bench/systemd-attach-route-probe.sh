#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Which manager moves a login-session process into leash-jobs.service's leaf fastest
# (docs/PERFORMANCE.md, systemd section): the user manager over its private socket (what
# leash asks), the system manager over the system bus (unit user@UID.service), and the
# system manager's private socket (refused to a user); ten alternated rounds, ctypes over
# libsystemd.  sd_bus_start returns before the handshake, so "connect" excludes it and the
# call's time includes it.  Runs as uid 1000 in the systemd VM: copy it to a file named
# user-*.sh (the suite picks the user by the name) and pass that to
#   flock /tmp/leash-vm.lock tests/vm/run --systemd --builddir $PWD/build --srcdir $PWD --script FILE
. "$LEASH_VM_SRCDIR/tests/vm/systemd/lib.sh"
"$LEASH" run -q -- true
/usr/bin/python3 - <<'PY'
import ctypes, os, subprocess, time, statistics
lib = ctypes.CDLL("libsystemd.so.0")
uid = os.getuid()
def conn(kind):
    bus = ctypes.c_void_p()
    t = time.perf_counter()
    if kind == "user-private":
        lib.sd_bus_new(ctypes.byref(bus))
        lib.sd_bus_set_address(bus, b"unix:path=/run/user/%d/systemd/private" % uid)
        r = lib.sd_bus_start(bus)
    elif kind == "system-private":
        lib.sd_bus_new(ctypes.byref(bus))
        lib.sd_bus_set_address(bus, b"unix:path=/run/systemd/private")
        r = lib.sd_bus_start(bus)
    else:
        r = lib.sd_bus_open_system(ctypes.byref(bus))
    return bus, r, time.perf_counter() - t
res = {}
for rnd in range(10):
    for kind in ("user-private", "system-bus", "system-private"):
        p = subprocess.Popen(["sleep", "30"])
        bus, r, tc = conn(kind)
        err = (ctypes.c_byte * 64)()
        unit, sub = (b"leash-jobs.service", b"/leash-leaf") if kind == "user-private" else (b"user@%d.service" % uid, b"/leash.slice/leash-jobs.service/leash-leaf")
        t = time.perf_counter()
        r2 = lib.sd_bus_call_method(bus, b"org.freedesktop.systemd1", b"/org/freedesktop/systemd1",
            b"org.freedesktop.systemd1.Manager", b"AttachProcessesToUnit", err, None, b"ssau",
            unit, sub, ctypes.c_uint(1), ctypes.c_uint(p.pid))
        tcall = time.perf_counter() - t
        cg = open("/proc/%d/cgroup" % p.pid).read().strip()
        p.kill(); p.wait()
        lib.sd_bus_flush_close_unref(bus)
        res.setdefault(kind, []).append((tc, tcall))
        if rnd == 0:
            print("# probe %s: connect r=%d, call r=%d -> %s" % (kind, r, r2, cg))
for k, v in res.items():
    print("# probe %s: connect median %.2f ms, call median %.2f ms (calls: %s)" % (k, statistics.median(x[0] for x in v)*1e3, statistics.median(x[1] for x in v)*1e3, " ".join("%.1f" % (x[1]*1e3) for x in v)))
PY
echo "# probe loadavg $(cat /proc/loadavg)"
echo "ok 1 - probe ran"
echo "1..1"
