# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 38.12: the caller's supervising side cannot be ptraced nor have its
memory written by a function of its own uid. The process is undumpable
while any of its calls runs (src/engine/process/undumpable.c) and dumpable again
once the last one has finished; the function itself is dumpable, as the
caller was. The conftest fixture checks that nothing was left behind."""

import ctypes
import errno
import os
import pwd
import subprocess
import sys
import threading
import time

import pytest

import leash

PR_GET_DUMPABLE = 3
PTRACE_SEIZE = 0x4206


def dumpable():
    return ctypes.CDLL(None, use_errno=True).prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)


def wait_for(path, within=60):
    deadline = time.monotonic() + within
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(path)
        time.sleep(0.01)


def held_call(started, go):
    """Says it runs, waits for go, returns whether it is dumpable itself."""
    open(started, "w").close()
    wait_for(go)
    return dumpable()


def test_the_caller_is_undumpable_while_calls_run_and_dumpable_after(tmp_path):
    before = dumpable()
    assert before == 1, "the test process is not dumpable to begin with ({})".format(before)
    results = {}
    lf = leash.limit(held_call, wall_time=120)

    def call(k):
        results[k] = lf(str(tmp_path / (k + ".started")), str(tmp_path / (k + ".go")))

    threads = {k: threading.Thread(target=call, args=(k,)) for k in ("a", "b")}
    for k, t in threads.items():
        t.start()
        wait_for(str(tmp_path / (k + ".started")))
    during_both = dumpable()
    open(str(tmp_path / "a.go"), "w").close()
    threads["a"].join(120)
    during_b = dumpable()
    open(str(tmp_path / "b.go"), "w").close()
    threads["b"].join(120)
    after = dumpable()
    assert (during_both, during_b, after) == (0, 0, 1), "dumpable with two calls, with one, after"
    assert results == {"a": 1, "b": 1}, "the functions themselves were not dumpable"


ATTACK = r"""
import ctypes, errno, os, sys
sys.path[:0] = sys.argv[2].split(":")
import leash

def attack(pid):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    seize = "ok" if libc.ptrace(0x4206, pid, None, None) == 0 else errno.errorcode[ctypes.get_errno()]
    try:
        os.close(os.open("/proc/%d/mem" % pid, os.O_RDWR))
        mem = "ok"
    except OSError as e:
        mem = errno.errorcode[e.errno]
    return "seize=%s mem=%s" % (seize, mem)

target = int(sys.argv[1]) if sys.argv[1] != "caller" else os.getpid()
print(leash.limit(attack, wall_time=60)(target))
"""


def test_a_function_of_the_callers_uid_cannot_ptrace_nor_write_its_caller():
    """The caller and its function run as nobody (as root, the function has
    no CAP_SYS_PTRACE but the caller has every capability, which already
    stops it). The control: the same function, the same uid, on a plain
    process of that uid."""
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("nobody")
        except KeyError:
            pytest.skip("no user 'nobody' on this host")
        as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    else:
        as_user = []
    path = ":".join(p for p in sys.path if "leash" in p or p.endswith("/python"))
    # make check's LEASH_CONFIG_DIR is in the build tree: one nobody may look at
    env = dict(os.environ, LEASH_CONFIG_DIR="/nonexistent/leash-config")
    if as_user and subprocess.run(as_user + [sys.executable, "-c", "import sys; sys.path[:0] = sys.argv[1].split(':'); "
                                             "import leash._leash", path], cwd="/", env=env).returncode != 0:
        pytest.skip("nobody cannot import leash from the build tree (a 0700 directory above it, as in a package build)")

    def attack(target):
        r = subprocess.run(as_user + [sys.executable, "-c", ATTACK, target, path], capture_output=True, text=True,
                           timeout=120, cwd="/", env=env)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    assert attack("caller") == "seize=EPERM mem=EACCES"
    plain = subprocess.Popen(as_user + ["sleep", "1000"])
    try:
        assert attack(str(plain.pid)) == "seize=ok mem=ok", "the control: the attack works on a dumpable process"
    finally:
        plain.kill()
        plain.wait()
