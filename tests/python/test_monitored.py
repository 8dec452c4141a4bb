# SPDX-License-Identifier: LGPL-2.1-or-later
"""leash.monitored: ndcctools resource_monitor's Python API (names, units,
callback steps, ResourceExhaustion) on leash jobs."""

import time

import pytest

import leash
from leash import _monitor


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
    assert res["memory"] >= 20 or res["report"]["usage"]["memory_peak_basis"] != "memory.peak"
    assert res["report"]["reason"] == "ok"


def test_return_resources_false_and_the_last_callback():
    seen = []
    f = leash.monitored(return_resources=False, callback=lambda *a: seen.append(a), interval=0.1)(work)
    assert f(5) == 5
    ids = {s[0] for s in seen}
    assert len(ids) == 1 and all(s[1] == "work" for s in seen)
    assert seen[-1][2] == -1 and "wall_time" in seen[-1][3]


def test_callback_at_every_step():
    if not _monitor.sampling_available():
        pytest.skip("libleash has no per-sample callback yet (issue 12): only step -1 is reported")
    seen = []
    leash.monitored(callback=lambda i, n, step, r: seen.append((step, r)), interval=0.1)(work)(5)
    steps = [s for s, _ in seen]
    assert steps[-1] == -1 and steps[:3] == [1, 2, 3], steps
    assert all("memory" in r or "cpu_time" in r for _, r in seen)


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
