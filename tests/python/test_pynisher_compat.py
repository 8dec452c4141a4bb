# SPDX-License-Identifier: LGPL-2.1-or-later
"""The pynisher drop-in as pynisher's users and its own suites rely on it
(issue 24): ``pynisher.util``; no helper process left as the caller's child
but multiprocessing's resource tracker, as 0.x's spawn and forkserver left it,
and never a fork server a function could escape through (issue 41);
0.x's exit codes and statuses; context objects, forkserver and the default
start method; memory limits set inside a spawned interpreter; wrapped errors
that import nothing into the caller; warnings on stderr; ``trust_result``.
Each behaviour in the contexts fork, spawn and forkserver. Written from
pynisher's documented and observed behaviour; no pynisher code or test was
copied."""

import contextlib
import errno
import inspect
import multiprocessing
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

import conftest
import leash
import leash.compat.pynisher as lp
import pynisher
from conftest import child_processes, skip_rlimit_as_under_asan

CONTEXTS = ["fork", "spawn", "forkserver"]


def add(a, b=0):
    return a + b


def my_ppid():
    return os.getppid()


def memlimit_inside():
    from pynisher.util import Monitor

    return Monitor().memlimit()


def allocate(mib):
    block = bytearray(mib << 20)
    block[::4096] = b"y" * len(block[::4096])
    return len(block)


def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return "spun"


def nothing():
    return None


def spin_with(blocked, seconds):
    """Spins with ``blocked`` signals blocked: a function busy in C code
    never runs Python's handler either."""
    signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    return spin(seconds)


def sleep_with(blocked, seconds, ignore_term=False):
    signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    if ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(seconds)
    return "slept"


def sleep(seconds):
    time.sleep(seconds)
    return seconds


def quit_myself():
    os.kill(os.getpid(), signal.SIGQUIT)
    time.sleep(5)


def start_pool(n):
    pool = multiprocessing.get_context("fork").Pool(n)
    pool.terminate()
    return "started"


def start_sleepers(n):
    return [subprocess.Popen(["sleep", "30"]).pid for _ in range(n)]


def raise_from_module(directory):
    sys.path.insert(0, directory)
    import h24_private_module

    raise h24_private_module.PrivateError("from a module the caller never imported")


@pytest.fixture
def psutil():
    return pytest.importorskip("psutil", reason="psutil (Debian: python3-psutil) checks what pynisher's users check")


def alive(pid):
    """Running: not gone, not a zombie its new parent has yet to reap."""
    try:
        with open("/proc/{}/stat".format(pid)) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def memory_by_rlimit():
    return "memory" not in conftest.controllers()


# --- pynisher.util ----------------------------------------------------------------


def test_pynisher_util_helpers():
    from pynisher.util import Monitor, callstring, memconvert, terminate_process, timeconvert  # noqa: F401

    assert memconvert(2, frm="MB") == 2 << 20 and isinstance(memconvert(1.5, frm="kb"), int)
    assert memconvert(3 << 30, to="GB") == 3.0
    assert timeconvert(90, to="m") == 1.5 and timeconvert(1, frm="h") == 3600
    with pytest.raises(KeyError):
        memconvert(1, frm="PB")
    assert callstring(add, 1, b=2) == "add(1, b=2)"
    m = Monitor()
    assert m.memory("B", kind="rss") <= m.memory("B") and m.memory("MB") == m.memory() / (1 << 20)
    soft, hard = m.memlimit()
    assert soft == (-1 if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY else soft)
    with pytest.raises(ValueError):
        m.memory(kind="swap")


def test_terminate_process_tree_ends_descendants():
    sleeper = subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30"])
    try:
        time.sleep(0.2)
        from pynisher.util import terminate_process

        gone, alive = terminate_process(sleeper.pid, children=True, parent=True, timeout=2)
        assert not alive and len(gone) == 3  # sh and its two sleeps
    finally:
        sleeper.kill()
        sleeper.wait()


# --- the caller's children ----------------------------------------------------------

CHILDREN_AFTER_CALL = """
import ctypes, os, sys, multiprocessing
import leash
leash.configure(cgroup_parent=sys.argv[1])
if sys.argv[2] == "subreaper":
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
lf = leash.limit(pow, wall_time=10)
assert lf(2, 5) == 32
def ppid(pid):
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[1]
    except OSError:
        return None
print(len([e for e in os.listdir("/proc") if e.isdigit() and ppid(e) == str(os.getpid())]))
"""


def mp_tracker():
    """multiprocessing's resource tracker in this process (its pid), or None:
    0.x's spawn starts it, as multiprocessing's Process.start() did."""
    from multiprocessing import resource_tracker

    pid = resource_tracker._resource_tracker._pid
    return pid if pid is not None and alive(pid) else None


@pytest.mark.parametrize("context", CONTEXTS)
def test_no_child_of_the_caller_outlives_a_call(context, psutil):
    for api in (lp.limit(add, wall_time=10, context=context), lp.enforce_limits(wall_time_in_s=10, context=context)(add)):
        assert api(1, 2) == 3
        # the function (and its watchdog) still held: nothing is our child
        # but multiprocessing's resource tracker once a 0.x spawn started it
        helpers = [] if mp_tracker() is None else [mp_tracker()]
        assert [pid for pid, _ in child_processes()] == helpers
        assert [p.pid for p in psutil.Process().children(recursive=True)] == helpers
        assert multiprocessing.active_children() == []
        if helpers:
            assert os.waitpid(-1, os.WNOHANG) == (0, 0)
        else:
            with pytest.raises(ChildProcessError):
                os.wait()


def test_the_watchdog_is_a_child_only_of_a_subreaper():
    """The control of the test above: a caller that is a subreaper adopts
    the watchdog back, and leash keeps it a direct child there; every other
    caller has none."""
    out = {}
    for mode in ("plain", "subreaper"):
        r = subprocess.run(
            [sys.executable, "-c", CHILDREN_AFTER_CALL, conftest.parent(), mode],
            capture_output=True, text=True, timeout=60,
            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
        )
        assert r.returncode == 0, r.stderr
        out[mode] = int(r.stdout)
    assert out == {"plain": 0, "subreaper": 1}


# --- 0.x ----------------------------------------------------------------------------


@pytest.mark.parametrize("context", CONTEXTS)
def test_0x_a_caught_limit_ends_cleanly(context):
    """0.x's subprocess caught the limit's signal and exited 0."""
    mp_context = multiprocessing.get_context(context)  # an object, as auto-sklearn passes
    w = lp.enforce_limits(cpu_time_in_s=1, grace_period_in_s=2, context=mp_context)(spin)
    assert w(30) is None
    assert (w.exit_status, w.exitcode) == (lp.CpuTimeoutException, 0)
    # a grace period that outlasts a spawned interpreter's start-up under emulation
    w = lp.enforce_limits(wall_time_in_s=1, grace_period_in_s=30, context=mp_context)(sleep)
    assert w(30) is None
    assert (w.exit_status, w.exitcode) == (lp.TimeoutException, 0)
    # leash saw the process exit 0: the limit that ended it is the reason
    assert w.report["reason"] == "wall_time" and "SIGALRM" in w.report["likely_cause"], w.report
    w = lp.enforce_limits(context=mp_context)(quit_myself)
    assert w() is None
    assert (w.exit_status, w.exitcode) == (lp.SignalException, 0)


@pytest.mark.parametrize("context", CONTEXTS)
def test_0x_endings_a_function_cannot_catch(context):
    """-15: the wall time and grace period passed and SIGTERM ended a
    function that never ran the alarm's handler; -9: RLIMIT_CPU's hard
    limit (the grace period past the CPU time)."""
    w = lp.enforce_limits(wall_time_in_s=1, grace_period_in_s=1, context=context)(sleep_with)
    assert w({signal.SIGALRM}, 30) is None
    assert (w.exit_status, w.exitcode) == (lp.TimeoutException, -signal.SIGTERM)
    w = lp.enforce_limits(cpu_time_in_s=1, grace_period_in_s=1, context=context)(spin_with)
    assert w({signal.SIGXCPU, signal.SIGPROF}, 30) is None  # the soft limit's signal is SIGPROF's timer
    assert (w.exit_status, w.exitcode) == (lp.CpuTimeoutException, -signal.SIGKILL)


@pytest.mark.parametrize("grace", [0, 1])
@pytest.mark.parametrize("context", CONTEXTS)
def test_0x_a_call_gets_its_cpu_time_not_less_not_a_second_more(context, grace):
    """Issue 41 item 9: RLIMIT_CPU was ceil(CPU used) + cpu_time, and a
    forked child has used a few ms at the call: ceil made it a whole second
    more (1.92-1.97 s of CPU for cpu_time_in_s=1). Then the kernel's
    interval timer alone ended it early (0.90-0.95 s: the kernel's CPU-time
    timers fire at 0.85-0.92 of their interval by the process's clock on
    this project's hosts) and with grace 0 RLIMIT_CPU's SIGKILL came first
    (reason signal). Now: at least the budget by the CPU measured around
    the call, less than half a second more, CpuTimeoutException, exit 0 and
    the report's reason cpu_time, saying how."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w = lp.enforce_limits(cpu_time_in_s=1, grace_period_in_s=grace, context=context)(spin)
    assert w(30) is None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert (w.exit_status, w.exitcode) == (lp.CpuTimeoutException, 0)
    cpu = w.report["usage"]["cpu_time_s"]
    # the job's process is this process's child under fork; a spawned one
    # counts its interpreter's start-up too: that of a call of nothing in the
    # same context, measured here (2 s of CPU and more under an emulated CPU)
    if context == "fork":
        measured = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        assert 1.0 <= measured < 1.5, measured
        start_up = 0.0
    else:
        idle = lp.enforce_limits(context=context)(nothing)
        assert idle() is None and idle.exit_status == 0
        start_up = idle.report["usage"]["cpu_time_s"]
    assert 1.0 <= cpu < 1.5 + 2 * start_up, (start_up, w.report["usage"])
    assert w.report["reason"] == "cpu_time" and "SIGPROF" in w.report["likely_cause"], w.report


def test_0x_a_function_that_ignores_sigterm_is_killed():
    """A deliberate difference: 0.x would wait for it forever; leash sends
    SIGKILL a second after SIGTERM."""
    w = lp.enforce_limits(wall_time_in_s=1, grace_period_in_s=1)(sleep_with)
    assert w({signal.SIGALRM}, 30, True) is None
    assert (w.exit_status, w.exitcode) == (lp.TimeoutException, -signal.SIGKILL)


@pytest.mark.parametrize("context", CONTEXTS)
def test_0x_num_processes(context):
    if os.geteuid() == 0 and "pids" not in conftest.controllers():
        pytest.skip("uid 0 without a pids controller: RLIMIT_NPROC exempts root, as it did for pynisher 0.x")
    w = lp.enforce_limits(num_processes=1, context=context)(start_pool)
    assert w(4) is None
    assert (w.exit_status, w.exitcode, w.os_errno) == (lp.SubprocessException, 0, errno.EAGAIN)
    # the report says what refused the forks (before issue 39's matrix: "none" where RLIMIT_NPROC did)
    assert w.report["limits"]["pids"]["enforced_by"] in ("cgroup", "rlimit"), w.report["limits"]


@pytest.mark.parametrize("context", CONTEXTS)
def test_0x_memory(context):
    skip_rlimit_as_under_asan()
    w = lp.enforce_limits(mem_in_mb=200, context=context)(allocate)
    assert w(600) is None and w.exit_status is lp.MemorylimitException
    assert w.exitcode == (0 if memory_by_rlimit() else -signal.SIGKILL)
    assert w(10) == 10 << 20 and (w.exit_status, w.exitcode) == (0, 0)


def nested_call(inner_wall):
    inner = lp.enforce_limits(wall_time_in_s=inner_wall, grace_period_in_s=30)(sleep)
    inner(60)
    return "the outer limit was lost"


@pytest.mark.parametrize("context", CONTEXTS)
def test_0x_a_nested_call_holds_the_outer_limit_until_it_returns(context):
    """An outer 0.x call's alarm that comes while its function waits for an
    inner 0.x call is held until the inner call returns (to its own limit),
    then raised in the outer function: TimeoutException for the outer call.
    Before: the inner wrapper caught the outer's TimeoutException as its own
    failure, ended its job at once, and the outer function returned as if
    no limit had come ("the outer limit was lost", exit_status 0); 0.x's
    inner wrapper swallowed it too and waited for its child."""
    w = lp.enforce_limits(wall_time_in_s=1, grace_period_in_s=60, context=context)(nested_call)
    start = time.monotonic()
    assert w(3) is None
    took = time.monotonic() - start
    assert (w.exit_status, w.exitcode) == (lp.TimeoutException, 0), w.result
    assert took >= 3.0, took  # the inner call ran to its own wall time


class RecordingLogger:
    def __init__(self):
        self.errors, self.debugs = [], []

    def error(self, msg, *args):
        self.errors.append(msg % args if args else msg)

    def debug(self, msg, *args):
        self.debugs.append(msg % args if args else msg)


class WrappedContext:
    """A context wrapper, as libraries pass: no multiprocessing context,
    but it says its start method."""

    def __init__(self, method):
        self.method = method

    def get_start_method(self):
        return self.method


def test_0x_a_context_that_is_no_context_fails_the_call_as_0x_did(tmp_path):
    """0.x took any object as ``context`` and used it at the call; one that
    is none failed there (exit_status 5, nothing captured, the output's
    loss logged): not at construction with a ValueError. The function is
    not called; a wrapper that names its start method works; a misspelt
    name (0.x took no names) is still refused at once."""
    marker = tmp_path / "called"
    log = RecordingLogger()
    w = lp.enforce_limits(wall_time_in_s=5, context=object(), logger=log, capture_output=True)(touch)
    assert w(str(marker)) is None
    assert (w.exit_status, w.result, w.stdout, w.stderr) == (5, None, None, None)
    assert not marker.exists()
    assert "not called" in log.errors[0] and "object" in log.errors[0], log.errors
    assert all("Cannot recover the output from" in e for e in log.errors[1:]) and len(log.errors) == 3
    assert lp.enforce_limits(context=WrappedContext("spawn"))(add)(2, 3) == 5
    with pytest.raises(ValueError, match="spwan"):
        lp.enforce_limits(context="spwan")


def touch(path):
    open(path, "w").close()
    return "touched"


CALLER_CHILDREN = r"""
import multiprocessing, os, sys
import leash.compat.pynisher as lp
def add(a, b):
    return a + b
def children():
    out = []
    for e in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % e) as f:
                stat = f.read()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == str(os.getpid()):
            with open("/proc/%s/cmdline" % e, "rb") as f:
                out.append(f.read().replace(b"\0", b" ").decode())
    return out
if __name__ == "__main__":
    ctx = multiprocessing.get_context(sys.argv[1])
    if sys.argv[2] == "mp":
        p = ctx.Process(target=add, args=(1, 2))
        p.start()
        p.join()
    else:
        assert lp.enforce_limits(wall_time_in_s=60, context=ctx)(add)(1, 2) == 3
    print(sorted("resource_tracker" if "resource_tracker" in c else "forkserver" if "forkserver" in c else c
                 for c in children()))
"""


@pytest.mark.parametrize("context", CONTEXTS)
def test_0x_the_callers_children_after_a_call(context, tmp_path):
    """0.x's Process.start() left multiprocessing's helpers running in the
    caller: the resource tracker under spawn, and the fork server too under
    forkserver. The drop-in starts the tracker under spawn (it runs none of
    the function's code); never a fork server: it forks whatever connects to
    its socket, outside the job's cgroup, so a function could ask it for
    processes beyond every limit. Each caller a fresh interpreter of its own;
    the control: multiprocessing's own Process in the same context."""
    script = tmp_path / "caller.py"
    script.write_text(CALLER_CHILDREN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    seen = {}
    for how in ("mp", "drop-in"):
        r = subprocess.run([sys.executable, str(script), context, how], capture_output=True, text=True,
                           timeout=120, env=env, cwd=str(tmp_path))
        assert r.returncode == 0, r.stderr
        seen[how] = r.stdout.strip()
    want = {"fork": "[]", "spawn": "['resource_tracker']", "forkserver": "['forkserver', 'resource_tracker']"}
    assert seen["mp"] == want[context]
    assert seen["drop-in"] == ("[]" if context == "fork" else "['resource_tracker']")


ESCAPE = r"""
import glob, multiprocessing, os, sys, tempfile, time
from multiprocessing import forkserver
import leash.compat.pynisher as lp
def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
def ask_a_fork_server(search):
    fs = forkserver._forkserver
    if search:  # any fork server's socket in $TMPDIR (a fresh interpreter knows of none)
        fs.ensure_running = lambda: None
        fs._forkserver_alive_fd = os.pipe()[0]
        servers = glob.glob(os.path.join(tempfile.gettempdir(), "pymp-*", "listener-*"))
    for address in servers if search else [None]:
        if address is not None:
            fs._forkserver_address = address
        try:
            p = multiprocessing.get_context("forkserver").Process(target=time.sleep, args=(60,))
            p.start()
            return p.pid
        except Exception:
            pass
    return None
if __name__ == "__main__":
    if sys.argv[2] == "server":  # the control: a caller that runs a fork server
        multiprocessing.set_forkserver_preload([])
        forkserver.ensure_running()
    left = []
    for search in (False, True):
        pid = lp.enforce_limits(wall_time_in_s=60, context=sys.argv[1])(ask_a_fork_server)(search)
        if pid is not None and alive(pid):
            left.append(pid)
            os.kill(pid, 9)
    print(len(left))
"""


@pytest.mark.parametrize("context,caller", [("spawn", "-"), ("forkserver", "-"), ("spawn", "server")])
def test_0x_no_fork_server_for_a_function_to_escape_through(context, caller, tmp_path):
    """Why the drop-in never starts 0.x's fork server in the caller: a
    function that finds a fork server's socket (multiprocessing's, in
    $TMPDIR) and asks it for a process gets one outside the job (cgroup /,
    alive after the call: measured), even from a fresh interpreter. The
    control ("server"): a caller that runs one. Under the drop-in's spawn
    and forkserver only the function's own fork server exists, in its job,
    and what it forks ends with the call."""
    script = tmp_path / "escape.py"
    script.write_text(ESCAPE)
    # the fork server's socket lives in $TMPDIR: a short one of this test's
    # own (a package build's tmp_path is past AF_UNIX's 108 bytes)
    sockets = tempfile.mkdtemp(prefix="leash-fs.", dir="/tmp")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), TMPDIR=sockets)
    try:
        r = subprocess.run([sys.executable, str(script), context, caller], capture_output=True, text=True,
                           timeout=180, env=env, cwd=str(tmp_path))
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ("1" if caller == "server" else "0"), r.stderr


STATE = ["as imported"]


def read_state():
    return STATE[0]


def test_0x_forkserver_is_no_fork_of_the_caller():
    """As under multiprocessing's fork server the function's process is a
    fresh interpreter (leash's spawn), not a fork of the caller: it does
    not see the caller's state, and RLIMIT_AS (no memory controller) limits
    its own address space, not a copy of the caller's. The control: fork,
    where both are the caller's."""
    STATE[0] = "changed by the caller"
    try:
        assert lp.enforce_limits(context="fork")(read_state)() == "changed by the caller"
        assert lp.enforce_limits(context="forkserver")(read_state)() == "as imported"
    finally:
        STATE[0] = "as imported"
    if not memory_by_rlimit():
        return
    skip_rlimit_as_under_asan()
    held = bytearray(600 << 20)
    held[::4096] = b"x" * len(held[::4096])
    # 150 MiB: past glibc's largest mmap threshold (32 MiB) and more than the
    # free heap a fork inherits from this test process holds (40 MiB was
    # taken from it once): it needs new address space
    fork = lp.enforce_limits(mem_in_mb=400, context="fork")(allocate)
    assert fork(150) is None and fork.exit_status is lp.MemorylimitException  # 600 MB mapped already
    fs = lp.enforce_limits(mem_in_mb=400, context="forkserver")(allocate)
    assert fs(150) == 150 << 20 and fs.exit_status == 0
    del held


# --- 1.x ----------------------------------------------------------------------------


@pytest.mark.parametrize("context", CONTEXTS)
def test_memory_limit_is_set_inside_the_started_interpreter(context):
    """Without a memory controller pynisher's RLIMIT_AS is set in the
    function's process once it runs: a spawned interpreter starts first."""
    skip_rlimit_as_under_asan()
    lf = lp.limit(memlimit_inside, memory=(300, "MB"), context=context)
    limits = lf()
    if memory_by_rlimit():
        assert limits == (300 << 20, 300 << 20)
    else:
        assert limits == (-1, -1)  # the cgroup's memory.max does it
    with pytest.raises(lp.MemoryLimitException):
        lp.limit(allocate, memory=(300, "MB"), context=context)(900)


@pytest.mark.parametrize("context", CONTEXTS)
def test_a_context_object_and_forkserver(context):
    assert lp.Pynisher(add, context=multiprocessing.get_context(context))(2, 3) == 5
    assert lp.enforce_limits(context=multiprocessing.get_context(context))(add)(2, 3) == 5


def test_forkserver_and_the_default_start_method_fork_directly(monkeypatch):
    """Python 3.14's default start method is forkserver: the default path is
    leash's fork (the caller's own child, nothing pickled), not a slower one."""
    monkeypatch.setattr(multiprocessing, "get_start_method", lambda allow_none=False: "forkserver")
    local = 7
    assert lp.limit(lambda: local * 6)() == 42  # a closure: nothing pickled
    assert lp.limit(my_ppid)() == os.getpid()
    assert lp.limit(my_ppid, context="forkserver")() == os.getpid()

    @lp.restricted(wall_time=10, context="forkserver")
    def decorated_pid():
        return os.getpid()

    # multiprocessing's forkserver pickles a decorated function by reference
    # (and finds its wrapper under its name); leash's fork pickles nothing
    assert decorated_pid() != os.getpid()


@pytest.mark.parametrize("context", CONTEXTS)
def test_wrapped_errors_import_nothing_into_the_caller(context, tmp_path):
    (tmp_path / "h24_private_module.py").write_text("class PrivateError(Exception):\n    pass\n")
    sys.modules.pop("h24_private_module", None)
    sys.path.append(str(tmp_path))  # importable here too, as a user's own module is
    for wrap in (True, ["PrivateError"], {"pynisher": ["PrivateError"]}):
        with pytest.raises(lp.PynisherException) as e:
            lp.limit(raise_from_module, wrap_errors=wrap, context=context)(str(tmp_path))
        assert "PrivateError" in str(e.value)
        assert "h24_private_module" not in sys.modules
    # the control: unwrapped, from a function the caller trusts, the
    # function's own exception is rebuilt here, which imports its module
    # (untrusted, the result channel rebuilds no class it was not given)
    with pytest.raises(Exception) as e:
        lp.limit(raise_from_module, context=context, trust_result=True)(str(tmp_path))
    assert type(e.value).__name__ == "PrivateError" and "h24_private_module" in sys.modules
    sys.modules.pop("h24_private_module", None)
    sys.path[:] = [p for p in sys.path if p != str(tmp_path)]


def test_the_probe_job_warns_about_no_limit_the_user_did_not_ask(monkeypatch):
    """Issue 41 item 5: the drop-in's internal probe of how memory is
    enforced (a job with memory=1G, made and closed) said "--memory 1G is
    enforced only per process" to a caller who asked for 200 MB."""
    import warnings

    skip_rlimit_as_under_asan()
    monkeypatch.setattr(lp, "_probe", {})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert lp.limit(add, memory=(200, "MB"))(1, 2) == 3
        assert lp.enforce_limits(mem_in_mb=200)(add)(1, 2) == 3
    assert not [str(w.message) for w in seen if "1G" in str(w.message)]
    assert lp._probe  # the probe did run
    if memory_by_rlimit():
        # the control: the same job made the way leash.limit makes its jobs warns here
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            leash._call.new_job(leash._defaults + [("memory", str(1 << 30))], "pynisher-probe").close()
        assert [w for w in seen if "1G" in str(w.message) and w.category is leash.WeakLimitWarning]


@pytest.mark.parametrize("warnings", [True, False])
def test_warnings_go_to_stderr(warnings, capfd, tmp_path):
    """pynisher warns, on stderr (sys.stderr as the caller set it, for
    fork), when the function's process already uses more memory than its
    limit."""
    skip_rlimit_as_under_asan()
    path = tmp_path / "stderr.txt"
    with path.open("w") as f, contextlib.redirect_stderr(f):
        assert lp.limit(add, memory=(5, "MB"), warnings=warnings, raises=False, context="fork")(1) in (1, lp.EMPTY)
    assert ("Current memory usage" in path.read_text()) == warnings
    if memory_by_rlimit():  # a fresh interpreter outgrows 5 MB of memory.max before it prints
        assert lp.limit(add, memory=(5, "MB"), warnings=warnings, raises=False, context="spawn")(1) is not None
        assert ("Current memory usage" in capfd.readouterr().err) == warnings


@pytest.mark.parametrize("context", CONTEXTS)
def test_children_end_with_the_call_whatever_terminate_child_processes_says(context):
    """A deliberate difference (README): leash ends every process of the
    job; terminate_child_processes=False does not keep them."""
    pids = lp.limit(start_sleepers, wall_time=10, terminate_child_processes=False, context=context)(2)
    for pid in pids:
        assert not alive(pid)


def test_trust_result_is_forwarded_only_when_given(monkeypatch):
    seen = []
    real = leash.limit

    def recording(func, **kw):
        seen.append(kw.get("trust_result", "absent"))
        kw.pop("trust_result", None)
        return real(func, **kw)

    monkeypatch.setattr(leash, "limit", recording)
    assert lp.limit(add)(1, 2) == 3
    assert lp.limit(add, trust_result=True)(1, 2) == 3
    assert lp.enforce_limits(trust_result=False)(add)(1, 2) == 3
    # untrusted (the default, and False) asks for the safe decoder: no
    # trust_result passed, the drop-in's own exceptions named as result types
    assert seen == ["absent", True, "absent"]


class Opaque:
    def __init__(self, v):
        self.v = v


def make_opaque():
    return Opaque(7)


def test_a_custom_result_needs_trust_result_or_result_types():
    # the result channel's boundary (issue 22) holds through the drop-in
    with pytest.raises(Exception) as e:
        lp.limit(make_opaque, wrap_errors=False)()
    assert "trust_result" in str(e.value) or "result_types" in str(e.value), e.value
    assert lp.limit(make_opaque, trust_result=True)().v == 7
    assert lp.limit(make_opaque, result_types=(Opaque,))().v == 7


def test_trust_result_reaches_leash_limit():
    if "trust_result" not in inspect.signature(leash.limit).parameters:
        pytest.skip("this leash.limit has no trust_result (issue 22's result channel)")
    assert lp.limit(add, trust_result=True)(1, 2) == 3


# --- sklearn ------------------------------------------------------------------------


def fit_polynomial(n, degree):
    import numpy as np
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 40))
    make_pipeline(PolynomialFeatures(degree), LinearRegression()).fit(X, X[:, 0])
    return True


@pytest.mark.parametrize("context", CONTEXTS)
def test_an_sklearn_fit_over_its_limit(context):
    skip_rlimit_as_under_asan()
    if subprocess.run([sys.executable, "-c", "import sklearn"], capture_output=True).returncode != 0:
        pytest.skip("scikit-learn is not installed (Debian: python3-sklearn)")
    assert "sklearn" not in sys.modules
    # a forked function starts with the caller's address space (pytest's, and
    # whatever earlier tests imported): under RLIMIT_AS the limit must leave
    # room above it for sklearn's imports, or they fail to map ("ImportError")
    # before the fit ever runs
    mb = 400
    if context != "spawn":
        with open("/proc/self/status") as f:
            vm = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
        mb = max(mb, vm // 1024 + 400)
    with pytest.raises(lp.MemoryLimitException):
        lp.limit(fit_polynomial, memory=(mb, "MB"), wall_time=60, context=context)(20000, 3)
    assert "sklearn" not in sys.modules
    assert lp.limit(fit_polynomial, memory=(mb, "MB"), wall_time=60, context=context)(200, 1) is True
