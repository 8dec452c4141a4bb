# SPDX-License-Identifier: LGPL-2.1-or-later
"""leash.limit and leash.run: every outcome of a call (issue 13, "What must
be true"). The conftest fixture checks after each test that no cgroup,
process, zombie or descriptor was left behind."""

import errno
import os
import pickle
import platform
import signal
import subprocess
import sys
import threading
import time

import pytest

import leash
import conftest
from conftest import (
    child_processes,
    controllers,
    interrupted,
    rlimit_as_under_asan,
    skip_rlimit_as_under_asan,
    skip_threads_forking_under_asan,
)

STATE = "as imported"


# --- functions the children run (module level: the spawn context pickles them)


def double(x):
    return 2 * x


def where_am_i():
    with open("/proc/self/cgroup") as f:
        return f.read()


def fail(*args):
    raise ValueError(*args)


class Odd(Exception):
    def __init__(self, a, b):  # pickles, but cannot be rebuilt from args
        super().__init__("{}-{}".format(a, b))


def fail_odd():
    raise Odd(1, 2)


def unpicklable_result():
    return threading.Lock()


def _refuse_to_unpickle():
    raise ValueError("not on this side")


class OnlyThere:
    # pickles in the child; unpickling it in the caller raises
    def __reduce__(self):
        return (_refuse_to_unpickle, ())


def result_that_does_not_unpickle():
    return OnlyThere()


def exit_now(code):
    os._exit(code)


def allocate(mib):
    chunks = []
    for _ in range(mib):
        chunks.append(bytearray(1 << 20))
        chunks[-1][::4096] = b"x" * len(chunks[-1][::4096])
    return len(chunks)


def spin(seconds, ignore_xcpu=False):
    if ignore_xcpu:
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return "spun"


def sleep(seconds):
    time.sleep(seconds)
    return "slept"


def big(mib):
    return b"\x5a" * (mib << 20)


def outlive(path):
    """Forks a grandchild that leaves the session and sleeps, writes its pid,
    and returns at once."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(120)
        os._exit(0)
    os.waitpid(pid, 0)
    time.sleep(0.2)
    pids = [p for p in os.listdir("/proc") if p.isdigit() and p != str(os.getpid())]
    mine = []
    for p in pids:
        try:
            with open("/proc/{}/cgroup".format(p)) as f:
                if f.read() == where_am_i():
                    mine.append(int(p))
        except OSError:
            pass
    with open(path, "w") as f:
        f.write(" ".join(map(str, mine)))
    return mine


def get_state():
    return STATE


def report_of(exc_info):
    return exc_info.value.report


# --- results and exceptions --------------------------------------------------


def test_returns_the_value_and_a_report():
    lf = leash.limit(double, wall_time=30)
    assert lf(21) == 42
    value, report = lf.call_with_report(5)
    assert value == 10
    assert report["reason"] == "ok" and report["schema"] == 1
    assert report["limits"]["wall_time"]["value"] == 30
    assert lf.last_report["reason"] == "ok"


def test_a_profile_is_found_through_leash_config_dir(tmp_path, monkeypatch):
    # read from the environment at every call, as `leash run` reads it
    conf = tmp_path / "conf"
    (conf / "profiles.d").mkdir(parents=True)
    for d in (tmp_path, conf, conf / "profiles.d"):
        os.chmod(d, 0o755)
    if os.geteuid() == 0:
        # root reads only a configuration whose every ancestor is root's and
        # not writable by others (sticky excepted): pytest's base directory
        # is the machine's
        for d in [conf, *conf.parents]:
            st = os.stat(d)
            if st.st_uid != 0 or (st.st_mode & 0o022 and not st.st_mode & 0o1000):
                pytest.skip("{} (uid {}, mode {:o}) is not a directory root trusts".format(d, st.st_uid, st.st_mode))
    (conf / "profiles.d" / "trial.ini").write_text("[trial]\nwall-time = 77s\n")
    lf = leash.limit(double, profile="trial")
    monkeypatch.setenv("LEASH_CONFIG_DIR", str(conf))
    value, report = lf.call_with_report(2)
    assert value == 4 and report["limits"]["wall_time"]["value"] == 77
    # the calls share their settings, not the files: an edited profile is
    # read by the next call
    (conf / "profiles.d" / "trial.ini").write_text("[trial]\nwall-time = 88s\n")
    assert lf.call_with_report(2)[1]["limits"]["wall_time"]["value"] == 88
    monkeypatch.setenv("LEASH_CONFIG_DIR", "relative/" + str(conf))  # not absolute: ignored
    with pytest.raises(Exception, match="trial"):
        lf(2)


def test_configure_reaches_a_limited_function_already_called():
    lf = leash.limit(double, wall_time=30)
    assert "cpu_time" not in lf.call_with_report(1)[1]["limits"]
    leash.configure(cpu_time=40)
    try:
        report = lf.call_with_report(1)[1]
        assert report["limits"]["cpu_time"]["value"] == 40 and report["limits"]["wall_time"]["value"] == 30
    finally:
        leash.configure(cpu_time=None)
    assert "cpu_time" not in lf.call_with_report(1)[1]["limits"]


def test_a_config_makes_many_jobs_and_takes_no_name_of_its_own():
    ext = leash._call.require_extension()
    config = leash._call.new_config(leash._defaults + [("wall-time", "30s")], "shared")
    for _ in range(3):
        job = ext.Job(config)
        assert os.path.basename(job.cgroup).startswith("shared@")
        job.close()
    with pytest.raises(TypeError, match="the Config's"):
        ext.Job(config, "other")
    with pytest.raises(ValueError, match="wall-time"):
        leash._call.new_config([("wall-time", "soon")], None)


def test_decorator_and_context_manager_forms():
    # a memory limit ASan's runtime has no room under is no test of the forms
    memory = None if rlimit_as_under_asan() else "1G"

    @leash.limit(wall_time="10s", memory=memory)
    def triple(x):
        return 3 * x

    assert triple(3) == 9
    if memory:
        assert triple.last_report["limits"]["memory"]["value"] == 1 << 30
    with leash.limit(double, cpu_time=5) as lf:
        assert lf(4) == 8


def test_output_buffered_in_the_caller_is_not_written_twice(tmp_path):
    import subprocess

    code = "import leash, sys; leash.configure(cgroup_parent=sys.argv[1]); print('once'); leash.limit(int)(1)"
    out = subprocess.run([sys.executable, "-c", code, leash._defaults[0][1]], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "once\n"


_HOLDER = """
import os, subprocess, sys, time
import leash
leash.configure(cgroup_parent=sys.argv[1])

def f(out):
    if out:
        g = subprocess.Popen(["sleep", "60"])
        cg = [l[3:] for l in open("/proc/self/cgroup").read().splitlines() if l.startswith("0::")][0]
        with open(out + ".tmp", "w") as fh:
            fh.write("{} {} {}".format(os.getpid(), g.pid, os.path.basename(cg)))
        os.rename(out + ".tmp", out)
        time.sleep(60)
    return 1

lf = leash.limit(f, wall_time=120)
lf(None)
lf(None)
lf(sys.argv[2])
"""


def _holder_mid_call(tmp_path):
    """A process whose third call of one limited function runs (its
    watchdog made by the first, shared): (holder, pids of the function and
    its child, the job cgroup)."""
    import subprocess

    out = str(tmp_path / "held")
    h = subprocess.Popen([sys.executable, "-c", _HOLDER, leash._defaults[0][1], out])
    deadline = time.monotonic() + 30
    while not os.path.exists(out) and time.monotonic() < deadline and h.poll() is None:
        time.sleep(0.05)
    with open(out) as f:
        fn, grandchild, name = f.read().split()
    return h, int(fn), int(grandchild), os.path.join(leash._defaults[0][1], name)


def _alive(pid):
    try:
        with open("/proc/{}/stat".format(pid)) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone(pids, cgroup, within):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids) and not os.path.exists(cgroup):
            return True
        time.sleep(0.05)
    return False


def test_the_callers_death_ends_the_call_and_its_children(tmp_path):
    """The caller SIGKILLed in the middle of a call: the function's process,
    the process it started and the job cgroup are gone within seconds (the
    function's watchdog). Control: with that watchdog SIGKILLed first, the
    function's child outlives the caller."""
    h, fn, grandchild, cgroup = _holder_mid_call(tmp_path)
    h.kill()
    h.wait()
    assert _gone([fn, grandchild], cgroup, 15), (fn, grandchild, cgroup)

    os.unlink(str(tmp_path / "held"))
    h, fn, grandchild, cgroup = _holder_mid_call(tmp_path)
    try:
        watchdogs = [pid for pid in conftest.watchdogs(h.pid) if pid != fn]
        assert len(watchdogs) == 1, watchdogs
        os.kill(watchdogs[0], signal.SIGKILL)
        time.sleep(0.1)
        h.kill()
        h.wait()
        time.sleep(0.5)
        assert _alive(grandchild) and os.path.exists(cgroup), "control: without its watchdog the call outlives the caller"
    finally:
        try:
            with open(os.path.join(cgroup, "cgroup.kill"), "w") as f:
                f.write("1")
        except FileNotFoundError:  # a kernel before 5.14: each process
            for pid in (fn, grandchild):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        assert _gone([fn, grandchild], cgroup + "/none", 10)
        for _ in range(100):
            try:
                os.rmdir(cgroup)
                break
            except OSError:
                time.sleep(0.05)


def test_the_child_runs_inside_the_job_cgroup():
    value, report = leash.limit(where_am_i).call_with_report()
    v2 = [line[3:] for line in value.splitlines() if line.startswith("0::")]
    assert v2 and report["cgroup"].endswith(v2[0]), (value, report["cgroup"])


def test_the_functions_exception_comes_back():
    with pytest.raises(ValueError) as e:
        leash.limit(fail)("bad", 3)
    assert e.value.args == ("bad", 3)
    assert isinstance(e.value.__cause__, leash.RemoteTraceback)
    assert "in fail" in e.value.child_traceback and "ValueError: ('bad', 3)" in e.value.child_traceback
    assert e.value.report["reason"] == "exit"


def test_an_exception_that_does_not_unpickle_comes_back_as_itself_rebuilt_as_data():
    # loaded here: made without its __init__ (which could not take its args)
    with pytest.raises(Odd) as e:
        leash.limit(fail_odd)()
    assert type(e.value) is Odd and e.value.args == ("1-2",) and str(e.value) == "1-2"
    assert "in fail_odd" in str(e.value.__cause__)


def test_an_unpicklable_result_raises_the_pickling_error():
    with pytest.raises((TypeError, pickle.PicklingError)) as e:
        leash.limit(unpicklable_result)()
    assert "lock" in str(e.value)
    assert "pickle" in e.value.child_traceback


def test_a_result_that_does_not_unpickle_here_is_an_exit_without_a_result():
    lf = leash.limit(result_that_does_not_unpickle, trust_result=True)
    with pytest.raises(leash.JobExited) as e:
        lf()
    assert "could not be unpickled: ValueError: not on this side" in str(e.value)
    assert e.value.report["reason"] == "ok" and lf.last_report["reason"] == "ok"


def test_a_result_naming_a_callable_is_refused_by_default():
    lf = leash.limit(result_that_does_not_unpickle)
    with pytest.raises(leash.ResultRefused) as e:
        lf()
    assert e.value.what == "test_limit._refuse_to_unpickle" and "trust_result=True" in str(e.value)
    assert e.value.report["reason"] == "ok" and lf.last_report["reason"] == "ok"


def test_os_exit_is_an_exit_without_a_result():
    with pytest.raises(leash.JobExited) as e:
        leash.limit(exit_now)(7)
    assert e.value.status == 7
    assert e.value.report["exit"]["status"] == 7
    with pytest.raises(leash.JobExited) as e:
        leash.limit(exit_now)(0)
    assert e.value.status == 0


def test_a_large_result_does_not_block_on_the_pipe():
    value = leash.limit(big, wall_time=120)(100)
    assert len(value) == 100 << 20 and value[:2] == b"ZZ" and value[-1:] == b"Z"


# --- limits --------------------------------------------------------------------




def test_memory_past_the_limit_is_memory_limit_exceeded():
    skip_rlimit_as_under_asan()
    with pytest.raises(leash.MemoryLimitExceeded) as e:
        leash.limit(allocate, memory="100M", wall_time=60)(400)
    assert isinstance(e.value, MemoryError)
    report = e.value.report
    by = report["limits"]["memory"]["enforced_by"]
    if "memory" in controllers():
        # the cgroup's OOM kill (the VM tier proves this path)
        assert by == "cgroup" and report["reason"] == "memory" and report["usage"]["oom_kills"] >= 1
    else:
        # no memory controller: RLIMIT_AS -> MemoryError in the child
        assert by == "rlimit" and report["reason"] == "exit"
        assert "MemoryError" in str(e.value.__cause__)


def test_memory_within_the_limit_is_fine():
    skip_rlimit_as_under_asan()
    assert leash.limit(allocate, memory="300M")(20) == 20


def test_cpu_time_past_the_limit():
    t0 = time.monotonic()
    with pytest.raises(leash.CpuTimeLimitExceeded) as e:
        leash.limit(spin, cpu_time=1, grace=1)(30)
    assert time.monotonic() - t0 < 25
    report = e.value.report
    assert report["reason"] == "cpu_time" and report["usage"]["cpu_time_s"] >= 1.0
    assert [s["signal"] for s in report["signals"]][:1] == ["XCPU"]


def test_cpu_time_ignoring_sigxcpu_is_killed_after_the_grace():
    with pytest.raises(leash.CpuTimeLimitExceeded) as e:
        leash.limit(spin, cpu_time=1, grace=0.5)(30, True)
    sigs = [s["signal"] for s in e.value.report["signals"]]
    assert sigs[0] == "XCPU" and "KILL" in sigs, sigs
    assert e.value.report["exit"]["signal"] == "KILL"


def test_wall_time_past_the_limit():
    t0 = time.monotonic()
    with pytest.raises(leash.WallTimeLimitExceeded) as e:
        leash.limit(sleep, wall_time=0.5, grace=0.5)(60)
    assert time.monotonic() - t0 < 20
    assert e.value.report["reason"] == "wall_time"
    assert e.value.limit == "wall_time" and e.value.value == 0.5


def test_children_that_try_to_outlive_the_call_are_dead(tmp_path):
    path = tmp_path / "pids"
    pids = leash.limit(outlive, wall_time=30)(str(path))
    assert pids, "the grandchild was not seen in the job cgroup"
    deadline = time.monotonic() + 5
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in pids if os.path.exists("/proc/{}".format(p))]
        time.sleep(0.05)
    assert not alive, "processes outlived the call: {}".format(alive)


# --- contexts ------------------------------------------------------------------


def test_spawn_is_a_fresh_interpreter():
    global STATE
    STATE = "changed in the caller"
    try:
        assert leash.limit(get_state)() == "changed in the caller"
        assert leash.limit(get_state, context="spawn")() == "as imported"
    finally:
        STATE = "as imported"


def test_spawn_returns_raises_and_is_limited():
    assert leash.limit(double, context="spawn")(21) == 42
    with pytest.raises(ValueError) as e:
        leash.limit(fail, context="spawn")("x")
    assert e.value.args == ("x",) and "in fail" in e.value.child_traceback
    with pytest.raises(leash.WallTimeLimitExceeded):
        leash.limit(sleep, context="spawn", wall_time=1, grace=0.2)(60)


def test_a_setup_the_child_fails_is_a_setup_error_naming_the_step():
    # with clone3 into the cgroup the caller does not wait for the child's
    # setup: the failure comes from the report once the child has exited,
    # before any of the function ran; a kernel without CLONE_INTO_CGROUP
    # (the child moves itself in, the caller waits) raises it from the fork
    with pytest.raises(leash.SetupError, match=r"--chdir") as e:
        leash.limit(double, chdir="/nonexistent-leash-dir")(1)
    if e.value.report is not None:
        assert e.value.report["reason"] == "setup_error"
        assert e.value.report["exit"]["code"] == 125 and "--chdir" in e.value.report["exit"]["step"]


def test_spawn_refuses_what_does_not_pickle_before_making_a_job():
    with pytest.raises(pickle.PicklingError):
        leash.limit(lambda: 1, context="spawn")()


_UNGUARDED = """
import leash
def f(x):
    return x + 1
print("top level ran", flush=True)
print(leash.limit(f, context="spawn")(1), flush=True)
"""


@pytest.mark.parametrize("guarded", [False, True], ids=["no-main-guard", "control-guarded"])
def test_spawn_without_a_main_guard_fails_with_multiprocessings_message(tmp_path, guarded):
    """Issue 41 item 4: the spawned interpreter imports the caller's script
    as __mp_main__; one without the __main__ guard calls again while it is
    imported. Before: a nested call and two wrapped AttributeErrors ("Can't
    get attribute 'f' on <module 'leash._child'>"); now multiprocessing's
    own RuntimeError about the idiom, raised in the call. The control: the
    same script guarded runs."""
    body = _UNGUARDED
    if guarded:
        body = body.replace('print("top level', 'if __name__ == "__main__":\n    print("top level').replace(
            "\nprint(leash", "\n    print(leash")
    script = tmp_path / "script.py"
    script.write_text(body)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    if guarded:
        assert r.returncode == 0 and r.stdout == "top level ran\n2\n", (r.stdout, r.stderr)
    else:
        assert r.returncode == 1 and "RuntimeError" in r.stderr and "bootstrapping phase" in r.stderr, r.stderr
        assert "AttributeError" not in r.stderr and r.stdout.count("top level ran") == 2, (r.stdout, r.stderr)


# --- the caller's side ------------------------------------------------------------


def test_four_threads_at_once():
    skip_threads_forking_under_asan()
    results, errors = {}, []

    def worker(i):
        try:
            results[i] = leash.limit(double, wall_time=60)(i)
        except BaseException as e:  # noqa: B902 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert results == {i: 2 * i for i in range(4)}


def test_last_report_is_each_threads_own_last_call():
    """One limited function called from two threads: each thread's
    last_report is its own last call's (the job stored after the fork,
    per thread), and a call that fails before its fork leaves None."""
    import warnings

    lf = leash.limit(double, wall_time=60)
    assert lf.last_report is None
    seen, errors = {}, []

    def worker(x):
        try:
            value, report = lf.call_with_report(x)
            assert value == 2 * x and lf.last_report == report
            for _ in range(3):
                assert lf(x) == 2 * x
            seen[x] = (lf.last_report["reason"], lf.last_report["pid"], report["pid"])
        except BaseException as e:  # noqa: B902 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(x,)) for x in (3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert lf.last_report is None  # this thread made no call
    for x in (3, 4):
        reason, last, first = seen[x]
        assert reason == "ok" and last != first  # the last call's job, not the first's
    assert seen[3][1] != seen[4][1]
    weak = leash.limit(double, pids=8)  # not memory: RLIMIT_AS and an ASan build's shadow
    assert weak(1) == 2 and weak.last_report["reason"] == "ok"
    with warnings.catch_warnings():
        warnings.simplefilter("error", leash.WeakLimitWarning)
        try:
            weak(1)
        except leash.WeakLimitWarning:
            assert weak.last_report is None  # refused before its fork
        else:
            assert weak.last_report["reason"] == "ok"  # every limit enforced as asked here


def test_keyboard_interrupt_ends_the_child():
    with interrupted():
        leash.limit(sleep)(60)


def test_keyboard_interrupt_delivered_to_another_thread():
    """The kernel may hand a process-directed SIGINT to any thread; Python
    runs the handler in the main thread only: the call must still end."""
    with interrupted(to_thread=True):
        leash.limit(sleep)(60)


def test_many_calls_leave_nothing_behind():
    """10,000 calls in a row (LEASH_PY_CALLS to change it); the fixture then
    checks that no descriptor, process, zombie or cgroup is left. The first
    call starts the function's watchdog (one process, three descriptors: its
    pidfd, this process's, and the signalfd by which it reads a SIGTERM to
    pass on), which the others share and which ends with
    the function."""
    n = int(os.environ.get("LEASH_PY_CALLS", "10000"))
    lf = leash.limit(double, wall_time=60)
    fds = len(os.listdir("/proc/self/fd"))
    assert lf(0) == 0
    # the watchdog, sleeping (x86_64, and not this process's child; elsewhere
    # each call has its own, gone with it)
    children, shared = child_processes(), conftest.watchdogs()
    assert len(shared) == (1 if platform.machine() == "x86_64" else 0), shared
    assert children == ([] if platform.machine() == "x86_64" else shared)
    assert len(os.listdir("/proc/self/fd")) == fds + 3 * len(shared)
    for i in range(1, n):
        assert lf(i) == 2 * i
    assert len(os.listdir("/proc/self/fd")) == fds + 3 * len(shared)
    assert child_processes() == children and conftest.watchdogs() == shared
    del lf
    assert len(os.listdir("/proc/self/fd")) == fds and not child_processes() and not conftest.watchdogs()


# --- commands and bad values -------------------------------------------------------


def test_run_a_command():
    report = leash.run(["/bin/sh", "-c", "exit 3"], wall_time=10)
    assert report["reason"] == "exit" and report["exit"]["status"] == 3
    report = leash.run(["/bin/sleep", "30"], wall_time=0.3, grace=0.2)
    assert report["reason"] == "wall_time"
    report = leash.run(["/no/such/command"])
    assert report["reason"] == "exec_error" and report["exit"]["code"] == 127
    with pytest.raises(leash.WallTimeLimitExceeded):
        leash.run(["/bin/sleep", "30"], wall_time=0.3, grace=0.2, check=True)


def test_run_is_subprocess_run_with_a_report(tmp_path):
    """Issue 41 item 4: leash.run takes the subprocess.run keywords people
    use and returns a CompletedProcess with the report attached."""
    r = leash.run(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"], capture_output=True, text=True)
    assert isinstance(r, subprocess.CompletedProcess) and isinstance(r, leash.CompletedRun)
    assert (r.returncode, r.stdout, r.stderr) == (3, "out\n", "err\n") and r.report["reason"] == "exit"
    assert r.args == ["/bin/sh", "-c", "echo out; echo err >&2; exit 3"] and r["reason"] == "exit"
    # more than a pipe holds, both ways: fed and drained while the job runs
    r = leash.run(["cat"], input=b"x" * (3 << 20), capture_output=True, wall_time=60)
    assert r.returncode == 0 and r.stdout == b"x" * (3 << 20) and r.stderr == b""
    assert leash.run(["cat"], input="a\r\nb", stdout=subprocess.PIPE, text=True).stdout == "a\nb"
    assert leash.run(["pwd"], cwd=str(tmp_path), stdout=subprocess.PIPE, text=True).stdout == str(tmp_path) + "\n"
    r = leash.run(["/bin/sh", "-c", "echo $FOO:$HOME"], env={"FOO": "bar", "PATH": "/usr/bin:/bin"},
                  capture_output=True, text=True)
    assert r.stdout == "bar:\n"  # the whole environment, as subprocess's env=
    r = leash.run(["/bin/sh", "-c", "echo 1; echo 2 >&2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert r.stdout == b"1\n2\n" and r.stderr is None
    with open(str(tmp_path / "out"), "w") as f:
        leash.run(["echo", "to a file"], stdout=f, stdin=subprocess.DEVNULL)
    assert (tmp_path / "out").read_text() == "to a file\n"
    with pytest.raises(subprocess.TimeoutExpired) as e:
        leash.run(["/bin/sleep", "30"], timeout=0.3, grace=0.2, capture_output=True)
    assert e.value.timeout == 0.3 and e.value.report["reason"] == "wall_time"
    r = leash.run(["/bin/sh", "-c", "kill -TERM $$"])
    assert r.returncode == -signal.SIGTERM
    with pytest.raises(ValueError, match="capture_output"):
        leash.run(["true"], capture_output=True, stdout=subprocess.PIPE)
    with pytest.raises(ValueError, match="timeout"):
        leash.run(["true"], timeout=1, wall_time=2)


@pytest.mark.parametrize("capture", [False, True], ids=["started-by-the-library", "redirected"])
def test_run_names_a_command_it_cannot_run(capture):
    r = leash.run(["leash-no-such-command"], capture_output=capture)
    assert r.returncode == 127
    with pytest.raises(leash.SetupError) as e:
        leash.run(["leash-no-such-command"], check=True, capture_output=capture)
    assert "'leash-no-such-command'" in str(e.value) and "No such file or directory" in str(e.value)
    assert e.value.filename == "leash-no-such-command" and e.value.errno == errno.ENOENT


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(memory="lots"), "lots"),
        (dict(memory=True), "True"),
        (dict(wall_time=-1), "-1"),
        (dict(wall_time="soon"), "soon"),
        (dict(pids=2.5), "2.5"),
        (dict(seccomp="no-such-set"), "no-such-set"),
        (dict(context="thread"), "thread"),
    ],
)
def test_bad_values_are_refused_naming_them(kwargs, word):
    with pytest.raises((ValueError, TypeError)) as e:
        leash.limit(double, **kwargs)(1)
    assert word in str(e.value)


def test_an_unknown_option_is_refused():
    with pytest.raises(TypeError) as e:
        leash.limit(double, no_such_option=1)(1)
    assert "no-such-option" in str(e.value)


# --- a limit enforced weaker than asked: a warning users can filter (issue 26)


def test_weak_limit_warning_names_the_enforcer_and_the_better_option():
    import warnings

    def weak_call():
        # without a memory controller memory="300M" is RLIMIT_AS, which in
        # an ASan build leaves the child no room for ASan's shadow: the call
        # dies when ASan's runtime needs a new mapping, and the warning is
        # still the caller's
        if rlimit_as_under_asan():
            try:
                leash.limit(memory="300M", pids=8)(double)(2)
            except leash.JobExited:
                pass
        else:
            assert leash.limit(memory="300M", pids=8)(double)(2) == 4

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        weak_call()
    weak = [str(w.message) for w in caught if issubclass(w.category, leash.WeakLimitWarning)]
    have = controllers()
    # in Python terms (issue 41 item 4): the keywords that work here, no CLI option
    assert not any("--" in m for m in weak), weak
    if "memory" in have:
        assert not any("memory=" in m for m in weak)
    else:
        assert any(
            m.startswith('memory="300M" is enforced') and "RLIMIT_AS" in m and 'limit="memory=300M", sample="100ms"' in m
            for m in weak
        ), weak
        # the advice works as written: the same limit sampled over the tree, no warning
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert leash.limit(limit="memory=300M", sample="100ms")(double)(2) == 4
        assert not [w for w in caught if issubclass(w.category, leash.WeakLimitWarning)]
    if "pids" in have:
        assert not any("pids=" in m for m in weak)
    else:
        assert any(m.startswith('pids="8" is not enforced') and 'limit="threads=8"' in m for m in weak), weak
    assert "limit=\"memory=300M\", sample=\"100ms\"" in leash.limit.__doc__

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", leash.WeakLimitWarning)
        weak_call()
    assert not [w for w in caught if issubclass(w.category, leash.WeakLimitWarning)]


def test_advice_in_python_terms_for_every_form_leash_writes():
    from leash._call import python_terms

    assert python_terms("--memory 1G is x; better here: --limit memory=1G --sample 100ms (y)") == (
        'memory="1G" is x; better here: limit="memory=1G", sample="100ms" (y)'
    )
    assert python_terms("--memory 1G: z (--cgroup-parent; a), or drop --strict and use --limit memory=1G") == (
        'memory="1G": z (cgroup_parent=...; a), or drop strict=True and use limit="memory=1G"'
    )
    assert python_terms("--memory-high 2G q: --limit memory=SIZE --sample 1s") == (
        'memory_high="2G" q: limit="memory=SIZE", sample="1s"'
    )


def test_weak_limit_warning_names_the_callers_line():
    import warnings

    def weak_of(call):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        return [w for w in caught if issubclass(w.category, leash.WeakLimitWarning)]

    # pids alone: a weak memory limit would be RLIMIT_AS, which leaves an
    # ASan build's child no room for its shadow
    if not weak_of(lambda: leash.limit(pids=8)(double)(2)):
        pytest.skip("pids is enforced by a cgroup controller here: no warning")
    lf = leash.limit(double, pids=8)
    for how, call in (
        ("a call", lambda: lf(2)),
        ("call_with_report", lambda: lf.call_with_report(2)),
        ("the spawn context", lambda: leash.limit(double, pids=8, context="spawn")(2)),
        ("leash.run", lambda: leash.run(["true"], pids=8)),
    ):
        weak = weak_of(call)
        assert weak and all(w.filename == __file__ for w in weak), (how, [(w.filename, w.lineno) for w in weak])


def test_unknown_profile_says_what_the_cli_says(tmp_path, monkeypatch):
    conf = tmp_path / "conf"
    (conf / "profiles.d").mkdir(parents=True)
    os.chmod(str(tmp_path), 0o755)
    os.chmod(str(conf), 0o755)
    os.chmod(str(conf / "profiles.d"), 0o755)
    (conf / "profiles.d" / "p.ini").write_text("[trial]\nwall-time = 3\n")
    monkeypatch.setenv("LEASH_CONFIG_DIR", str(conf))
    with pytest.raises(leash.SetupError) as e:
        leash.limit(profile="trail")(double)(1)
    msg = str(e.value)
    assert "'trail': unknown profile: expected one of default, trial (did you mean 'trial'?)" in msg, msg
    assert "searched {}/profiles.d".format(conf) in msg, msg
    assert "No such file or directory" not in msg, msg
