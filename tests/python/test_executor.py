# SPDX-License-Identifier: LGPL-2.1-or-later
"""Many trials at once (issue 42): leash.Executor runs each task in a fresh job, ends only the
task that broke its limit, cancels by the ladder; the study budget; asyncio."""

import asyncio
import concurrent.futures
import errno
import os
import signal
import sys
import threading
import time
import warnings

import pytest

import leash
from conftest import _cgroup2_mount, controllers, job_cgroups, parent, skip_rlimit_as_under_asan

warnings.simplefilter("ignore", leash.WeakLimitWarning)


def square(x):
    return x * x


def pid_and_cgroup(_=None):
    with open("/proc/self/cgroup") as f:
        return os.getpid(), f.read()


def allocate(n):
    return len(bytearray(n))


def sleep_forever(path=None):
    if path:
        with open(path + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(path + ".tmp", path)
    while True:
        time.sleep(3600)


def ignore_soft_signal_then_sleep(path):
    signal.signal(signal.SIGXCPU, signal.SIG_IGN)
    sleep_forever(path)


def wait_for_file(path, within=60):
    deadline = time.monotonic() + within
    while not os.path.exists(path):
        assert time.monotonic() < deadline, "{} never appeared".format(path)
        time.sleep(0.01)
    with open(path) as f:
        return int(f.read())


def gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


# --- 2. leash.Executor --------------------------------------------------------


@pytest.mark.parametrize("context", leash.contexts)
def test_executor_runs_each_task_in_a_fresh_job(context):
    with leash.Executor(max_workers=2, context=context, wall_time=60) as ex:
        futures = [ex.submit(pid_and_cgroup) for _ in range(6)]
        out = [f.result() for f in futures]
        assert list(ex.map(square, range(10))) == [x * x for x in range(10)]
    pids = {pid for pid, _ in out}
    # (a job cgroup's name is free again once the job has ended)
    assert len(pids) == 6, "a process was reused: {}".format(pids)
    mount = _cgroup2_mount()
    for f, (pid, cg) in zip(futures, out):
        assert f.report["reason"] == "ok" and f.report["pid"] == pid
        assert "0::" + f.report["cgroup"][len(mount):] + "\n" in cg, (cg, f.report["cgroup"])
    assert os.getpid() not in pids


def test_memory_bomb_among_50_ends_only_its_own_future():
    skip_rlimit_as_under_asan()
    bomb = 512 << 20
    with leash.Executor(max_workers=4, memory="256M") as ex:
        futures = [ex.submit(square, i) for i in range(49)]
        futures.insert(17, ex.submit(allocate, bomb))
        done, _ = concurrent.futures.wait(futures)
    for i, f in enumerate(futures):
        if i == 17:
            with pytest.raises(leash.MemoryLimitExceeded) as e:
                f.result()
            # the figure this host enforces: no memory controller here
            # means RLIMIT_AS per process, else memory.max
            how = f.report["limits"]["memory"]["enforced_by"]
            assert how == ("cgroup" if "memory" in controllers() else "rlimit"), how
            assert e.value.report["reason"] in ("memory", "exit")
        else:
            assert f.result() == (i if i < 17 else i - 1) ** 2
    # control: the same bomb without the limit allocates what it asked for
    with leash.Executor(max_workers=1) as ex:
        assert ex.submit(allocate, bomb).result() == bomb


def test_task_limit_exception_is_leash_limits():
    with leash.Executor(max_workers=1, wall_time=0.3, grace=0.2) as ex:
        f = ex.submit(sleep_forever)
        with pytest.raises(leash.WallTimeLimitExceeded) as e:
            f.result()
    with pytest.raises(leash.WallTimeLimitExceeded) as direct:
        leash.limit(sleep_forever, wall_time=0.3, grace=0.2)()
    assert type(e.value) is type(direct.value)
    assert e.value.report["reason"] == direct.value.report["reason"] == "wall_time"
    assert f.report["reason"] == "wall_time"


def test_function_exception_and_result_cap():
    with leash.Executor(max_workers=2, max_result=1000) as ex:
        f = ex.submit(int, "nope")
        g = ex.submit(bytes, 10_000)
        with pytest.raises(ValueError, match="nope"):
            f.result()
        with pytest.raises(leash.ResultTooLarge):
            g.result()
        # control: under the cap the same result comes back
        assert ex.submit(bytes, 100).result() == bytes(100)


def test_cancel_ends_a_running_task_by_the_ladder(tmp_path):
    with leash.Executor(max_workers=2, grace=0.5) as ex:
        soft = ex.submit(sleep_forever, str(tmp_path / "soft"))
        hard = ex.submit(ignore_soft_signal_then_sleep, str(tmp_path / "hard"))
        pids = wait_for_file(str(tmp_path / "soft")), wait_for_file(str(tmp_path / "hard"))
        # control: both are running and would run on
        assert soft.running() and hard.running() and not any(map(gone, pids))
        assert soft.cancel() and hard.cancel()
        assert soft.cancelled() and hard.cancelled()
        with pytest.raises(concurrent.futures.CancelledError):
            soft.result()
        assert soft.report["reason"] == "killed" and soft.report["exit"]["signal"] == "XCPU"
        # the soft signal was ignored: SIGKILL after the grace
        assert hard.report["reason"] == "killed" and hard.report["exit"]["signal"] == "KILL"
        assert all(map(gone, pids))
    # a finished future cannot be cancelled
    with leash.Executor(max_workers=1) as ex:
        f = ex.submit(square, 3)
        assert f.result() == 9 and not f.cancel()


def _blocked_in_join(thread):
    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        if frame.f_code.co_name == "join":
            return True
        frame = frame.f_back
    return False


def test_shutdown_cancel_futures_ends_a_task_being_started(tmp_path, monkeypatch):
    """A task the supervisor has taken from the queue but not yet registered
    as running is in neither of shutdown's lists: shutdown(cancel_futures=True)
    still ends it (before the fix it ran on, and shutdown waited for it
    forever: CI's ASan run hung here in the test below)."""
    from leash import _executor

    launching, go = threading.Event(), threading.Event()
    real = _executor._launch

    def held_launch(*args):
        launching.set()
        assert go.wait(60)
        return real(*args)

    monkeypatch.setattr(_executor, "_launch", held_launch)
    ex = leash.Executor(max_workers=1)
    f = ex.submit(sleep_forever, str(tmp_path / "0"))
    assert launching.wait(60)
    stopper = threading.Thread(target=ex.shutdown, kwargs={"wait": True, "cancel_futures": True})
    stopper.start()
    deadline = time.monotonic() + 60
    while not _blocked_in_join(stopper) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _blocked_in_join(stopper), "shutdown made its lists while the task was being started"
    go.set()
    stopper.join(60)
    assert not stopper.is_alive(), "shutdown(cancel_futures=True) waits for a task it did not end"
    assert f.cancelled() and f.report["reason"] == "killed"
    assert not job_cgroups()


def test_shutdown_cancel_futures_ends_running_and_pending(tmp_path):
    ex = leash.Executor(max_workers=2)
    running = [ex.submit(sleep_forever, str(tmp_path / str(i))) for i in range(2)]
    pending = [ex.submit(sleep_forever) for _ in range(3)]
    pids = [wait_for_file(str(tmp_path / str(i))) for i in range(2)]
    assert job_cgroups(), "control: the running tasks have their cgroups"
    ex.shutdown(wait=True, cancel_futures=True)
    assert all(f.cancelled() for f in running + pending)
    assert [f.report["reason"] for f in running] == ["killed", "killed"]
    assert [f.report for f in pending] == [None, None, None]
    assert all(map(gone, pids)) and not job_cgroups()
    done, not_done = concurrent.futures.wait(running + pending, timeout=0)
    assert not not_done
    with pytest.raises(RuntimeError):
        ex.submit(square, 1)


def read_fds(*fds):
    out = []
    for fd in fds:
        try:
            out.append(os.pread(fd, 64, 0).decode())
        except OSError as e:
            out.append(errno.errorcode[e.errno])
    return out


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_executor_keep_fds_closes_the_others(tmp_path, context):
    path = tmp_path / "secret"
    path.write_text("secret")
    kept, other = os.open(str(path), os.O_RDONLY), os.open(str(path), os.O_RDONLY)
    try:
        if context == "spawn":  # a fresh interpreter gets what is inheritable (PEP 446)
            os.set_inheritable(kept, True)
            os.set_inheritable(other, True)
        with leash.Executor(max_workers=1, context=context, keep_fds=[kept]) as ex:
            assert ex.submit(read_fds, kept, other).result() == ["secret", "EBADF"]
        # control: without keep_fds a forked task inherits both; either way
        # a task gets the fds leash.limit's call gets in the same context
        with leash.Executor(max_workers=1, context=context) as ex:
            got = ex.submit(read_fds, kept, other).result()
        assert got == leash.limit(read_fds, context=context)(kept, other)
        if context == "fork":
            assert got == ["secret", "secret"]
    finally:
        os.close(kept)
        os.close(other)


def task_start(tid):
    """The start time of this process's task tid (its stat's field 22),
    None once gone."""
    try:
        with open("/proc/self/task/{}/stat".format(tid), "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2 :].split()[19]


def test_no_task_forks_while_an_ended_supervisor_thread_ends(monkeypatch):
    # A returned (and joined) thread still runs: CPython frees its thread
    # state without the GIL, glibc its tcache and TLS under malloc's arena
    # locks; a clone3 fork then leaves its child a lock nobody releases.
    # Executors made one after another: at each task's fork (the real one,
    # looked at just before) the previous executor's supervisor is gone.
    # Control: the same look right after shutdown() returned (its join).
    from leash import _executor

    ended, seen = [], {"at the fork": 0, "after shutdown": 0}
    launch = _executor._launch

    def look(where):
        seen[where] += sum(task_start(tid) == start for tid, start in ended)

    def launch_and_look(*args):
        look("at the fork")
        return launch(*args)

    monkeypatch.setattr(_executor, "_launch", launch_and_look)
    n = 300
    for i in range(n):
        with leash.Executor(max_workers=1) as ex:
            assert ex.submit(square, i).result() == i * i
            tid = ex._thread.native_id
            ended[:] = [(tid, task_start(tid))]
        look("after shutdown")
    print("the ended supervisor still there (of {}): {}".format(n, seen))
    assert seen["at the fork"] == 0
    assert seen["after shutdown"] > 0


def executor_in_a_child():
    with leash.Executor(max_workers=1) as ex:
        return ex.submit(square, 3).result()


def test_a_forked_child_makes_its_own_record_of_ended_supervisors():
    # the record's lock, held by a thread of the caller at the fork (as a
    # supervisor holds it for a moment as it returns), is not held in the
    # child: an executor there runs its task (with the parent's copy, the
    # child's first fork would wait for the lock until its wall limit)
    from leash import _executor

    with _executor._ending_lock:
        assert leash.limit(executor_in_a_child, wall_time=30)() == 9


def test_executor_rejects_bad_values():
    with pytest.raises(ValueError, match="max_workers=0"):
        leash.Executor(max_workers=0)
    with pytest.raises(ValueError):
        leash.Executor(memory="lots")
    assert not job_cgroups()


# --- 3. the study budget -----------------------------------------------------


def burn(n):
    s = 0
    for i in range(n):
        s += i
    return s


def test_study_nests_tasks_and_sums_them():
    with leash.Executor(max_workers=2, study={}) as ex:
        study_cgroup = ex._study.cgroup
        futures = [ex.submit(burn, 1_000_000) for _ in range(4)]
        futures.append(ex.submit(int, "x"))
        concurrent.futures.wait(futures)
    for f in futures:
        assert os.path.dirname(f.report["cgroup"]) == study_cgroup
    rep = ex.study_report
    assert rep["cgroup"] == study_cgroup and not os.path.exists(study_cgroup)
    assert rep["tasks"] == {"count": 5, "reasons": {"ok": 4, "exit": 1}}
    assert os.path.dirname(study_cgroup) == parent()
    # the study cgroup's CPU time is its tasks' (cpu.stat counts removed
    # descendants): the sum of theirs, to the microsecond of each figure
    tasks_cpu = sum(f.report["usage"]["cpu_time_s"] for f in futures)
    assert tasks_cpu > 0 and abs(rep["usage"]["cpu_time_s"] - tasks_cpu) <= 1e-5 * len(futures), (
        rep["usage"]["cpu_time_s"], tasks_cpu)


def nested_study():
    leash.configure(cgroup_parent=None)  # placement's own rule: inside the job this runs in
    with leash.Executor(max_workers=1, study={}) as ex:
        return ex._study.cgroup, ex.submit(pid_and_cgroup).result()[1]


def test_study_nests_where_leash_runs_in_a_job():
    lf = leash.limit(nested_study, wall_time=60)
    study_cgroup, task_cgroup = lf()
    outer = lf.last_report["cgroup"]
    # the outer job's cgroup holds the study's, which holds the task's
    assert os.path.dirname(study_cgroup) == outer, (study_cgroup, outer)
    mount = _cgroup2_mount()
    assert "0::" + study_cgroup[len(mount):] + "/" in task_cgroup, (task_cgroup, study_cgroup)
    # control: in this process (no job) the study is placed under the parent
    with leash.Executor(max_workers=1, study={}) as ex:
        assert os.path.dirname(ex._study.cgroup) == parent()


def test_study_budget_refused_without_a_controller():
    if {"memory", "pids"} <= controllers():
        pytest.skip("this host has the memory and pids controllers: the budget is enforced (tests/vm)")
    with pytest.raises(leash.SetupError, match="strict"):
        leash.Executor(max_workers=2, study={"memory": "1G", "pids": 64})
    assert not job_cgroups()
    # control: the same figures per task are accepted, enforced weaker (the
    # warning says how), which for a whole study would be no budget at all
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with leash.Executor(max_workers=1, memory="1G", pids=64) as ex:
            assert ex.submit(square, 2).result() == 4
    assert any(issubclass(x.category, leash.WeakLimitWarning) for x in w)


def test_study_memory_kill_names_the_study():
    # the rule on the figures the kernel gives (the real thing: tests/vm/t/56-study.sh)
    from leash._executor import study_memory_kill

    study = {"cgroup": "/sys/fs/cgroup/s/study@1", "memory": 192 << 20}
    by_study = {"reason": "memory", "usage": {"oom_kills": 1, "oom_events": 0}}
    e = study_memory_kill(by_study, study)
    assert isinstance(e, leash.MemoryLimitExceeded) and e.value == 192 << 20 and "study" in str(e)
    assert by_study["study"] == {"cgroup": study["cgroup"], "reason": "memory", "memory": 192 << 20}
    # control: an OOM of the task's own limit (oom_events counted in its cgroup)
    own = {"reason": "memory", "usage": {"oom_kills": 1, "oom_events": 1}}
    assert study_memory_kill(own, study) is None and "study" not in own
    # no figures (no memory controller): nothing is claimed
    assert study_memory_kill({"reason": "memory", "usage": {"oom_kills": None, "oom_events": None}}, study) is None


# --- 4. asyncio --------------------------------------------------------------


def test_acall_and_run_in_executor():
    async def main():
        values = await asyncio.gather(*(leash.acall(square, i, wall_time=30) for i in range(5)))
        with pytest.raises(leash.WallTimeLimitExceeded):
            await leash.acall(sleep_forever, wall_time=0.2, grace=0.1)
        loop = asyncio.get_running_loop()
        with leash.Executor(max_workers=2) as ex:
            more = await asyncio.gather(*(loop.run_in_executor(ex, square, i) for i in range(3)))
        return values, more

    assert asyncio.run(main()) == ([0, 1, 4, 9, 16], [0, 1, 4])


def test_cancelling_the_awaiting_task_ends_the_job(tmp_path):
    path = str(tmp_path / "pid")

    async def main():
        task = asyncio.ensure_future(leash.acall(sleep_forever, path))
        while not os.path.exists(path):
            await asyncio.sleep(0.01)
        pid = wait_for_file(path)
        assert not gone(pid) and not task.done()  # control: it runs on
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pid

    pid = asyncio.run(main())
    deadline = time.monotonic() + 30
    while not (gone(pid) and not job_cgroups()):
        assert time.monotonic() < deadline, "the job outlived its cancelled task"
        time.sleep(0.01)
    _wait_shared_idle()


def _wait_shared_idle():
    from leash import _executor

    ex = _executor._shared
    deadline = time.monotonic() + 30
    while ex is not None and ex._thread is not None:
        assert time.monotonic() < deadline
        time.sleep(0.01)


@pytest.fixture(autouse=True)
def _shared_idle():
    yield
    _wait_shared_idle()
