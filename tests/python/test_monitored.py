# SPDX-License-Identifier: LGPL-2.1-or-later
"""leash.monitored: ndcctools resource_monitor's Python API (names, units,
callback steps, ResourceExhaustion) on leash jobs."""

import os
import time

import pytest

import leash
from conftest import interrupted, skip_rlimit_as_under_asan


def work(n):
    block = bytearray(n << 20)
    block[::4096] = b"z" * len(block[::4096])
    time.sleep(0.35)
    return n


def sleep(s):
    time.sleep(s)


def test_returns_result_and_resources():
    f = leash.monitored()(work)
    result, res = f(20)
    assert result == 20
    assert res["wall_time"] >= 0.3
    assert res["cpu_time"] >= 0 and "cores_avg" in res
    # the call's own peak, or None with the reason where nothing measured it,
    # or a sample's figure (perhaps taken mid-allocation) that says it is a
    # lower bound
    if res["memory"] is None:
        assert res["memory_note"]
    elif res["report"]["usage"]["memory_peak_basis"].startswith("sampled"):
        assert 0 < res["memory"] and "lower bound" in res["memory_note"], res
    else:
        assert res["memory"] >= 20 and "memory_note" not in res, res
    assert res["report"]["reason"] == "ok"


def test_return_resources_false_and_the_last_callback():
    seen = []
    f = leash.monitored(return_resources=False, callback=lambda *a: seen.append(a), interval=0.1)(work)
    assert f(5) == 5
    ids = {s[0] for s in seen}
    assert len(ids) == 1 and all(s[1] == "work" for s in seen)
    assert seen[-1][2] == -1 and "wall_time" in seen[-1][3]


def grow(steps, mib=8, pause=0.12):
    """Holds steps * mib MiB more, step by step, pausing between steps."""
    blocks = []
    for _ in range(steps):
        b = bytearray(mib << 20)
        b[::4096] = b"g" * len(b[::4096])
        blocks.append(b)
        time.sleep(pause)
    return sum(len(b) for b in blocks) >> 20


def test_callback_at_every_step_sees_memory_grow():
    seen = []
    result, res = leash.monitored(callback=lambda i, n, step, r: seen.append((step, r)), interval=0.05)(grow)(8)
    assert result == 64
    steps = [s for s, _ in seen]
    # one callback per sample, numbered from 1, then the peaks as step -1
    assert steps[-1] == -1 and steps[:-1] == list(range(1, len(steps))), steps
    assert len(steps) >= 10, steps
    # without a memory controller the figure is the processes' PSS: a sample
    # taken while the child exits (its memory already gone) has none, and
    # one taken once it has left the cgroup counts no process and zero
    # bytes (on a loaded machine several such samples come before the end);
    # only the samples at the end may lack it
    regular = seen[:-1]
    while regular and ("memory" not in regular[-1][1] or not regular[-1][1].get("procs")):
        regular = regular[:-1]
    assert all("memory" in r for s, r in regular), [
        (s, r.get("procs"), r.get("memory")) for s, r in seen if "memory" not in r or not r.get("procs")
    ]
    assert len(regular) >= 8, steps
    mem = [r["memory"] for s, r in regular]
    wall = [r["wall_time"] for s, r in seen[:-1]]
    assert wall == sorted(wall) and wall[0] < 0.2, wall
    # 64 MiB touched in 8 steps: the samples see it arrive, not only the end
    # (up to the peak: a sample taken while the child exits sees it free all)
    top = mem.index(max(mem))
    assert mem[top] - mem[0] >= 40, mem
    assert len({round(m) for m in mem[: top + 1]}) >= 4, mem
    assert seen[-1][1]["memory"] >= max(mem)
    assert res["memory"] == seen[-1][1]["memory"]
    # the report counts the same samples the callback saw (and the last)
    assert res["report"]["sampling"]["samples"] == len(steps)


def test_callbacks_in_the_spawn_context():
    seen = []
    result, res = leash.monitored(callback=lambda *a: seen.append(a[2]), interval=0.05, context="spawn")(grow)(4)
    assert result == 32
    assert seen[-1] == -1 and seen[:3] == [1, 2, 3], seen
    assert res["report"]["sampling"]["samples"] == len(seen)


def forks(n, pause=0.15):
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            time.sleep(pause)
            os._exit(0)
        os.waitpid(pid, 0)
    time.sleep(30)  # not reached when the limit works


def test_a_limit_on_a_sampled_figure_raises_resource_exhaustion():
    seen = []
    t = time.monotonic()
    with pytest.raises(leash.ResourceExhaustion) as e:
        leash.monitored(
            limits={"total_processes": 3}, interval=0.05, callback=lambda *a: seen.append(a[2]), grace=0.5
        )(forks)(6)
    assert time.monotonic() - t < 20
    res = e.value.resources
    assert res["limits_exceeded"] == {"total_processes": 3}
    assert res["total_processes"] > 3
    assert res["report"]["reason"] == "total_processes"
    assert res["report"]["sampling"]["limit_reached"]["figure"] == "total_processes"
    assert isinstance(e.value.__cause__, leash.LimitExceeded)
    assert e.value.__cause__.limit == "total_processes"
    assert seen[-1] == -1 and len(seen) > 2


def test_leash_limit_with_a_sampled_limit_raises_limit_exceeded():
    with pytest.raises(leash.LimitExceeded) as e:
        leash.limit(forks, sample="50ms", limit="total_processes=2", grace=0.5)(6)
    assert type(e.value) is leash.LimitExceeded
    assert e.value.limit == "total_processes" and e.value.value == 2
    assert e.value.report["reason"] == "total_processes"


class Stop(Exception):
    pass


def test_an_exception_in_the_callback_ends_the_call():
    def cb(i, n, step, r):
        if step == 3:
            raise Stop(step)

    t = time.monotonic()
    with pytest.raises(Stop):
        leash.monitored(callback=cb, interval=0.05)(sleep)(30)
    assert time.monotonic() - t < 10


@pytest.mark.parametrize("to_thread", [False, True], ids=["main-thread", "other-thread"])
def test_keyboard_interrupt_during_a_monitored_call(to_thread):
    """Callbacks every 10 ms: the SIGINT often arrives while one runs."""
    with interrupted(to_thread=to_thread, within=10):
        leash.monitored(callback=lambda *a: None, interval=0.01)(sleep)(30)


def test_a_limit_raises_resource_exhaustion():
    with pytest.raises(leash.ResourceExhaustion) as e:
        leash.monitored(limits={"wall_time": 0.5})(sleep)(30)
    res = e.value.resources
    assert res["limits_exceeded"] == {"wall_time": 0.5}
    assert res["wall_time"] >= 0.5
    assert e.value.function is sleep and e.value.fn_args == (30,)
    assert "wall_time" in str(e.value)


def test_unknown_limit_is_refused():
    with pytest.raises(ValueError) as e:
        leash.monitored(limits={"gpus_per_day": 1})
    assert "gpus_per_day" in str(e.value)


STANDIN = os.path.join(os.environ.get("HELPERS", ""), "libnvml-standin.so")


@pytest.mark.skipif(not os.path.isfile(STANDIN), reason="no stand-in NVML (make check builds tests/helpers)")
def test_gpu_figures_from_the_stand_in_nvml(tmp_path):
    # NVML is opened once per process: a fresh interpreter with the stand-in
    # (issue 28). The function writes its own pid into the stand-in's
    # script; pid 1's huge figure must never count.
    import subprocess
    import sys

    script = tmp_path / "nvml"
    script.write_text("gpu 0 GPU-py-0 StandIn\nproc 0 1 999999999 99\n")
    code = """
import os, time, json, leash
def f():
    with open(os.environ["LEASH_NVML_STANDIN"], "a") as s:
        s.write("proc 0 %d 209715200 25\\n" % os.getpid())
    time.sleep(0.4)
seen = []
_, res = leash.monitored(interval=0.05, callback=lambda *a: seen.append(a[3]))(f)()
print(json.dumps({"peak": res.get("gpu_memory"), "gpus": max(s.get("gpus", 0) for s in seen),
                  "util": max(s.get("gpu_utilization", 0) for s in seen)}))
try:
    leash.monitored(limits={"gpu_memory": 100}, interval=0.05, grace=0.5)(f)()
    print("no exhaustion")
except leash.ResourceExhaustion as e:
    print("exhausted", e.limit if hasattr(e, "limit") else e)
"""
    env = dict(os.environ, LEASH_NVML_LIBRARY=STANDIN, LEASH_NVML_STANDIN=str(script))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    import json

    got = json.loads(lines[0])
    assert got["peak"] == 200 and got["gpus"] == 1 and got["util"] == 25, got
    assert lines[1].startswith("exhausted") and "gpu_memory" in lines[1], lines


# --- issue 26: every limit raises ResourceExhaustion, every accepted limit holds


def hog(mib):
    block = bytearray(mib << 20)
    block[::4096] = b"h" * len(block[::4096])
    time.sleep(1)
    return len(block)


def spawns(n, pause=3):
    pids = []
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            time.sleep(pause)
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    return n


def test_a_memory_limit_raises_resource_exhaustion_not_memory_error():
    skip_rlimit_as_under_asan()
    with pytest.raises(leash.ResourceExhaustion) as e:
        leash.monitored(limits={"memory": 64}, interval=0.05, grace=0.5)(hog)(400)
    res = e.value.resources
    assert res["limits_exceeded"] == {"memory": 64}
    assert not isinstance(e.value, MemoryError)


def test_max_concurrent_processes_holds_without_a_pids_controller():
    t = time.monotonic()
    with pytest.raises(leash.ResourceExhaustion) as e:
        leash.monitored(limits={"max_concurrent_processes": 2}, interval=0.05, grace=0.5)(spawns)(5)
    assert time.monotonic() - t < 20
    assert e.value.resources["limits_exceeded"] == {"max_concurrent_processes": 2}


def busy_then_idle():
    end = time.monotonic() + 0.3
    while time.monotonic() < end:
        pass
    time.sleep(0.7)


def test_cores_avg_is_the_reports():
    _, res = leash.monitored(interval=0.05)(busy_then_idle)()
    avg = res["report"]["sampling"]["averages"]["cores"]["value"]
    if avg is None:
        pytest.skip("no cpu.stat figure for the report's average on this host")
    assert res["cores_avg"] == avg


def touch(n, hold_s=0.0):
    block = bytearray(n << 20)
    block[::4096] = b"t" * len(block[::4096])
    time.sleep(hold_s)
    return n


def test_a_call_shorter_than_the_interval_has_its_own_memory_or_none():
    # issue 39: without a memory controller a call that touched 32 MiB in a
    # caller holding 200 MiB returned memory 0.0 MB: the only sample, taken
    # after the call had ended, summed no process
    held = bytearray(200 << 20)
    held[::4096] = b"h" * len(held[::4096])
    result, res = leash.monitored(interval=5)(touch)(32)
    assert result == 32
    rep = res["report"]
    if rep["usage"]["memory_peak_basis"] == "memory.peak":
        assert 32 <= res["memory"] < 200
        return
    # control: the one sample saw none of the call's processes (what read 0 MB)
    assert rep["sampling"]["samples"] == 1 and rep["sampling"]["peaks"]["procs"]["value"] == 0
    assert res["memory"] is None and "memory" in res["memory_note"], res["memory"]
    assert res["mem_uss_bytes"] is None and res["memory_bytes"] is None
    assert rep["usage"]["memory_peak_bytes"] is None and rep["usage"]["memory_peak_note"]
    # control: seen by the samples, the same call has its own figure (its
    # USS: never the caller's 200 MiB)
    result, res = leash.monitored(interval=0.1)(touch)(32, 0.6)
    assert result == 32 and res["report"]["sampling"]["peaks"]["procs"]["value"] >= 1
    assert 32 <= res["memory"] < 200, res["memory"]
    assert "lower bound" in res["memory_note"], res["memory_note"]
    del held
