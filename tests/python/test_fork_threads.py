# SPDX-License-Identifier: LGPL-2.1-or-later
"""A limited call from an interpreter whose other threads are inside malloc
(C code that released the GIL: here regcomp through ctypes, as any C
extension does) must not leave its child blocked on a malloc lock one of
those threads held at the fork: libleash copies a caller with threads by
glibc's fork(), which takes the locks (src/engine/process/libcfork.c).

The control is the path it replaced, in the same interpreter and the same
conditions: the binding's fork hooks (PyOS_BeforeFork/AfterFork_*) around
a raw clone3 with no malloc lock taken, as leash_job_fork made every child
before; some of those children hang in their first allocations."""

import os
import subprocess
import sys

import pytest

from conftest import parent, skip_threads_forking_under_asan

SCRIPT = r"""
import ctypes, os, select, sys, threading
import leash

mode, rounds, cgroup_parent = sys.argv[1], int(sys.argv[2]), sys.argv[3]
libc = ctypes.CDLL(None)  # a foreign call releases the GIL
PATTERN = b"(a|b|c|d){1,200}"  # its compilation allocates and frees arrays past the tcache
stop = False


def hammer():
    buf = ctypes.create_string_buffer(256)  # a regex_t
    while not stop:
        if libc.regcomp(buf, PATTERN, 1) == 0:
            libc.regfree(buf)


def f(x):
    blocks = [bytearray(2000 + 5000 * k) for k in range(8)]
    return x + len(blocks)


def raw_call():
    # the GIL held across the clone (PyDLL), the interpreter's fork hooks
    # around it: leash_job_fork's old path in the binding, less the cgroup
    api = ctypes.PyDLL(None)
    api.syscall.restype = ctypes.c_long
    args = (ctypes.c_uint64 * 8)(0, 0, 0, 0, 17, 0, 0, 0)  # clone_args: exit_signal SIGCHLD
    api.PyOS_BeforeFork()
    pid = api.syscall(435, ctypes.byref(args), ctypes.c_size_t(64))  # clone3
    if pid == 0:
        api.PyOS_AfterFork_Child()
        f(1)
        os._exit(0)
    api.PyOS_AfterFork_Parent()
    fd = os.pidfd_open(pid)
    # 30 s for a child that allocates 8 blocks: it is stuck
    hung = not select.select([fd], [], [], 30)[0]
    if hung:
        os.kill(pid, 9)
    os.waitpid(pid, 0)
    os.close(fd)
    return not hung


threads = [threading.Thread(target=hammer) for _ in range(20)]
for t in threads:
    t.start()
ok = hung = 0
lf = leash.limit(f, wall_time=60, cgroup_parent=cgroup_parent)
for i in range(rounds):
    if mode == "raw":
        good = raw_call()
    else:
        try:
            good = lf(1) == 9
        except leash.WallTimeLimitExceeded:
            good = False
    ok += good
    hung += not good
    if mode == "raw" and hung:
        break
stop = True
for t in threads:
    t.join()
print(ok, hung)
"""


def run(mode, rounds):
    p = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(rounds), parent()],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        universal_newlines=True,
        timeout=900,
    )
    assert p.returncode == 0, p.stderr
    ok, hung = map(int, p.stdout.split())
    return ok, hung


def test_a_call_while_threads_allocate_does_not_hang():
    skip_threads_forking_under_asan()
    if not hasattr(os, "pidfd_open"):
        pytest.skip("the control needs os.pidfd_open (Python 3.9)")
    ok, hung = run("raw", 40)
    assert hung == 1, "control: a raw clone3 under 20 allocating threads never hung in {} rounds".format(ok)
    ok, hung = run("leash", 60)
    assert (ok, hung) == (60, 0), "leash.limit under 20 allocating threads: {} ok, {} hung of 60".format(ok, hung)


HOLDER = r"""
import ctypes, os, sys, threading
sys.path[:0] = sys.argv[2].split(":")
import leash


def mem(pid):
    try:
        os.close(os.open("/proc/%d/mem" % pid, os.O_RDONLY))
        return "ok"
    except OSError as e:
        return e.strerror


def f(plain):
    return ctypes.CDLL(None).prctl(3, 0, 0, 0, 0), os.getppid(), mem(os.getppid()), mem(plain)


t = threading.Thread(target=lambda: None)
t.start()
t.join()  # the caller has had a thread: its function is forked by glibc's fork
dumpable, parent, holder_mem, plain_mem = leash.limit(f, wall_time=60)(int(sys.argv[1]))
print(dumpable, "holder" if parent != os.getpid() else "caller", holder_mem, plain_mem, sep="|")
"""


def test_the_holder_of_a_threaded_callers_function_stays_undumpable():
    """Without a cgroup (uid nobody here has none) a function's parent is a
    holder (holder.c) that reaps it and reports its status: made by glibc's
    fork for a caller with threads, it ran undumpable.c's atfork handler,
    which made it dumpable, and the function of the same uid could write its
    memory. It sets itself undumpable again; the function is dumpable, as
    the caller was. The control: the same open on a plain process of that
    uid succeeds."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to run the caller as nobody (no cgroup: a holder)")
    as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    path = ":".join(p for p in sys.path if "leash" in p or p.endswith("/python"))
    env = dict(os.environ, LEASH_CONFIG_DIR="/nonexistent/leash-config")
    if subprocess.run(as_user + [sys.executable, "-c", "import sys; sys.path[:0] = sys.argv[1].split(':'); "
                                 "import leash._leash", path], cwd="/", env=env).returncode != 0:
        pytest.skip("nobody cannot import leash from the build tree (a 0700 directory above it, as in a package build)")
    plain = subprocess.Popen(as_user + ["sleep", "1000"])
    try:
        r = subprocess.run(as_user + [sys.executable, "-c", HOLDER, str(plain.pid), path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=120, cwd="/", env=env)
    finally:
        plain.kill()
        plain.wait()
    assert r.returncode == 0, r.stderr
    dumpable, parent, holder_mem, plain_mem = r.stdout.strip().split("|")
    if parent != "holder":
        pytest.skip("uid nobody's function got a cgroup here: no holder")
    assert plain_mem == "ok", "the control: a plain process of the uid is open to the function"
    assert (dumpable, holder_mem) == ("1", "Permission denied"), r.stdout
