# SPDX-License-Identifier: LGPL-2.1-or-later
"""leash on dask.distributed (issue 42), on a LocalCluster(processes=True):
a limited function sent by client.submit; leash.dask.LeashPlugin, every task
of a worker in its own job; a memory bomb ends only its task, where without
leash the nanny terminates the whole worker. Each case runs dask_probe.py in
a fresh interpreter: a cluster leaves threads and helper processes in its
driver, which this session's checks would count."""

import json
import os
import subprocess
import sys
import uuid

import pytest

from conftest import parent, skip_rlimit_as_under_asan

HERE = os.path.dirname(os.path.abspath(__file__))


def _have_distributed():
    r = subprocess.run([sys.executable, "-c", "import distributed"], capture_output=True)
    return r.returncode == 0


pytestmark = pytest.mark.skipif(
    not _have_distributed(), reason="dask.distributed is not installed (Debian: python3-distributed)"
)


def _probe_processes(tag):
    out = []
    for e in os.scandir("/proc"):
        if not e.name.isdigit():
            continue
        try:
            with open("/proc/{}/environ".format(e.name), "rb") as f:
                if tag in f.read():
                    out.append(int(e.name))
        except OSError:
            pass
    return out


def probe(case, tmp_path):
    tag = "leash-dask-probe-" + uuid.uuid4().hex
    env = dict(os.environ, LEASH_DASK_PROBE=tag, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run(
        [sys.executable, os.path.join(HERE, "dask_probe.py"), parent(), case, str(tmp_path / "marker")],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, "the probe failed ({}):\n{}".format(r.returncode, r.stderr[-3000:])
    left = _probe_processes(tag.encode())
    assert not left, "the cluster left processes: {}".format(left)
    return json.loads(r.stdout.strip().splitlines()[-1])


def job_of(cgroup):
    """A job cgroup's path, as /proc/PID/cgroup has it, is under the parent."""
    return "/" + os.path.basename(parent()) + "/" in cgroup


def test_client_submit_of_a_limited_function(tmp_path):
    out = probe("limited", tmp_path)
    assert out["x"] == 21 and not out["pid_is_worker"], out
    assert job_of(out["cgroup"]) and "/where@" in out["cgroup"], out


def test_plugin_runs_every_task_in_its_own_job(tmp_path):
    out = probe("plugin", tmp_path)
    assert out["xs"] == list(range(6)), out
    assert out["pids"] == 6 and not out["worker_pid_used"], out
    assert all(job_of(c) and "/task@" in c for c in out["cgroups"]), out


def test_memory_bomb_ends_only_its_task(tmp_path):
    skip_rlimit_as_under_asan()
    out = probe("bomb", tmp_path)
    assert out["bomb"][0] == "MemoryLimitExceeded", out
    assert out["sibling"] == ["ok", True] and out["worker_same"], out
    # control: without leash the nanny terminates the worker, the bomb and
    # the task beside it end as KilledWorker, and a new worker replaces it
    control = probe("control", tmp_path)
    assert control["bomb"][0] == "KilledWorker" and control["sibling"][0] == "KilledWorker", control
    assert not control["worker_same"], control
