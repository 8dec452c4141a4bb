# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fixtures of the Python tests: a private parent cgroup for the session
(as tests/integration/lib.sh makes one), and after every test the proof that
it left nothing behind: no job cgroup, no child process (zombies included),
no new file descriptor."""

import contextlib
import ctypes
import gc
import os
import platform
import signal
import sys
import threading
import time

import pytest

import leash


def _cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[sep + 1] == "cgroup2":
                return fields[4]
    return None


def _make_parent():
    if os.environ.get("LEASH_TEST_PARENT"):
        base = os.environ["LEASH_TEST_PARENT"]
    else:
        if os.geteuid() != 0:
            return None, "needs root, or LEASH_TEST_PARENT set to a delegated cgroup"
        mount = _cgroup2_mount()
        if not mount:
            return None, "no cgroup2 mount on this host"
        base = os.path.join(mount, "leash-test")
    parent = os.path.join(base, "py-{}".format(os.getpid()))
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as e:
        return None, "cannot create {}: {}".format(parent, e)
    # hand the controllers down, so limits are real where the host has them
    for d in (base, parent):
        try:
            with open(os.path.join(d, "cgroup.controllers")) as f:
                ctl = " ".join("+" + c for c in f.read().split())
            if ctl:
                with open(os.path.join(d, "cgroup.subtree_control"), "w") as f:
                    f.write(ctl)
        except OSError:
            pass
    return parent, None


# Made by pytest_configure, in the pytest process only: a spawn-context child
# imports this module too (through the test modules) and must create nothing.
PARENT, WHY_NOT = None, "not configured"


def pytest_configure(config):
    global PARENT, WHY_NOT
    PARENT, WHY_NOT = _make_parent()


def parent():
    return PARENT


def controllers():
    if not PARENT:
        return set()
    try:
        with open(os.path.join(PARENT, "cgroup.controllers")) as f:
            return set(f.read().split())
    except OSError:
        return set()


def job_cgroups():
    if not PARENT:
        return []
    return sorted(e.name for e in os.scandir(PARENT) if e.is_dir())


def pytest_sessionfinish(session, exitstatus):
    if PARENT:
        try:
            os.rmdir(PARENT)
            os.rmdir(os.path.dirname(PARENT))
        except OSError:
            pass


@pytest.fixture(autouse=True)
def _leash_session():
    if not PARENT:
        pytest.skip(WHY_NOT)
    leash.configure(cgroup_parent=PARENT)
    yield


def child_processes(of=None):
    """(pid, state) of each child process of ``of`` (default: this one)."""
    out = []
    me = str(of or os.getpid())
    for e in os.scandir("/proc"):
        if not e.name.isdigit():
            continue
        try:
            with open("/proc/{}/stat".format(e.name)) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[1] == me:
            out.append((int(e.name), fields[0]))
    return out


def watchdogs(of=None):
    """The watchdog processes of ``of`` (default: this one). On x86_64 they
    share its memory (CLONE_VM: kcmp KCMP_VM says so) and are not its
    children (init adopts them); elsewhere they are its children."""
    pid = of or os.getpid()
    if platform.machine() != "x86_64":
        return [p for p, _ in child_processes(pid)]
    libc = ctypes.CDLL(None, use_errno=True)
    out = []
    for e in os.scandir("/proc"):
        if e.name.isdigit() and int(e.name) != pid and libc.syscall(312, pid, int(e.name), 1, 0, 0) == 0:  # kcmp, KCMP_VM
            out.append(int(e.name))
    return out


def _mp_tracker():
    """The pid of multiprocessing's resource tracker in this process, or None."""
    rt = sys.modules.get("multiprocessing.resource_tracker")
    return None if rt is None else rt._resource_tracker._pid


def _fds():
    return set(os.listdir("/proc/self/fd"))


@pytest.fixture(autouse=True)
def nothing_left(_leash_session):
    """Fails the test (in teardown) when it left a job cgroup, a child
    process or zombie, or a descriptor behind. Garbage is collected first:
    a limited function keeps its config's watchdog (a process, three
    descriptors) while it lives, and one the test dropped may still be held
    by a reference cycle (an exception's traceback and the test's frame).
    multiprocessing's resource tracker, which the pynisher drop-in's 0.x
    spawn and forkserver start in the caller as 0.x did (it lives as long as
    its process), is stopped first when the test started it."""
    fds = _fds()
    tracker = _mp_tracker()
    yield
    if tracker is None and _mp_tracker() is not None:
        from multiprocessing import resource_tracker

        resource_tracker._resource_tracker._stop()
    gc.collect()
    deadline = time.monotonic() + 5
    while True:
        left = {"cgroups": job_cgroups(), "children": child_processes(), "fds": sorted(_fds() - fds)}
        if not any(left.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not left["cgroups"], "job cgroups left behind: {}".format(left["cgroups"])
    assert not left["children"], "child processes left behind: {}".format(left["children"])
    # the fd list of /proc/self/fd itself is gone by now
    assert not left["fds"], "descriptors left behind: {}".format(
        [(fd, os.readlink("/proc/self/fd/" + fd)) for fd in left["fds"] if os.path.exists("/proc/self/fd/" + fd)]
    )



def rlimit_as_under_asan():
    """True where a memory limit falls back to RLIMIT_AS (no memory controller)
    in an ASan build: RLIMIT_AS in a forked child of the instrumented extension
    leaves ASan no room for its shadow memory, so the child dies before the
    function runs."""
    return "memory" not in controllers() and "sanitize=address" in os.environ.get("LEASH_SAN_CFLAGS", "")


def skip_rlimit_as_under_asan():
    import pytest

    if rlimit_as_under_asan():
        pytest.skip("no memory controller and an ASan build: RLIMIT_AS leaves ASan no room for its shadow")


def skip_threads_forking_under_asan():
    """Skips a test whose calls fork from several threads at once in an ASan
    build: a child forked while another thread holds one of ASan's own
    allocator locks waits for it forever. Debian 12's runtime
    (libclang_rt.asan-x86_64.so of clang 14) intercepts vfork but not fork
    (nm -D: no __interceptor_fork), so nothing resets those locks in the
    child; seen as one call of four hung in test_limit, one of 60 in
    test_fork_threads and one thread's call in test_fd_reuse (CI of
    45c2422's parent, the pytest timeout after 480 s). The gcc build and
    the VM tiers run these tests."""
    import pytest

    if "sanitize=address" in os.environ.get("LEASH_SAN_CFLAGS", ""):
        pytest.skip("an ASan build: a child forked while another thread holds a lock of ASan's allocator hangs")


@contextlib.contextmanager
def interrupted(after=0.5, to_thread=False, within=20):
    """Sends SIGINT to this process after ``after`` seconds (with
    ``to_thread``, to the timer's own thread, as the kernel may hand a
    process-directed signal to any thread) and expects the block to end in
    KeyboardInterrupt within ``within`` seconds.

    Python installs its KeyboardInterrupt handler only when SIGINT is at
    SIG_DFL at start-up; a test suite started in the background by a
    non-interactive shell (`cmd &`) inherits SIGINT ignored. These tests are
    about an interpreter whose Ctrl-C raises: the block gets that handler."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    if to_thread:
        timer = threading.Timer(after, lambda: signal.pthread_kill(threading.get_ident(), signal.SIGINT))
    else:
        timer = threading.Timer(after, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)
    assert time.monotonic() - t0 < within
