# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run by test_dask.py in a fresh interpreter (a LocalCluster leaves threads
and helper processes in its driver): leash on dask.distributed workers.
argv: the parent cgroup for the jobs, the case (limited, plugin, bomb,
control). Prints one JSON line of what it saw."""

import json
import os
import sys
import time
import warnings

import dask
from distributed import Client, LocalCluster

import leash
import leash.dask

warnings.simplefilter("ignore")
BOMB = 1 << 30  # past memory= below and past the control's nanny limit


def where(x=None):
    with open("/proc/self/cgroup") as f:
        cgroup = [line.split("::", 1)[1].strip() for line in f if line.startswith("0::")][0]
    return x, os.getpid(), cgroup


def grow(total, step=32 << 20, pause=0.02):
    """Allocate and touch total bytes in steps, holding them (the nanny
    samples the worker's memory every 100 ms: it has time to see it)."""
    blocks = []
    while len(blocks) * step < total:
        b = bytearray(step)
        b[::4096] = b"x" * len(b[::4096])
        blocks.append(b)
        time.sleep(pause)
    return len(blocks) * step


def sibling(path):
    """A task beside the bomb: runs until the driver removes path."""
    open(path, "w").close()
    while os.path.exists(path):
        time.sleep(0.02)
    return os.getpid()


def worker_pid(client):
    return list(client.run(os.getpid).values())


def cluster(memory_limit="4GB"):
    return LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None,
                        memory_limit=memory_limit)


def bomb_beside_sibling(client, marker):
    before = worker_pid(client)
    s = client.submit(sibling, marker, pure=False)
    while not os.path.exists(marker):
        time.sleep(0.02)
    b = client.submit(grow, BOMB, pure=False)
    try:
        b.result()
        bomb = "returned"
    except Exception as e:
        bomb = [type(e).__name__, str(e)[:200]]
    if os.path.exists(marker):
        os.unlink(marker)
    try:
        sib = ["ok", s.result() is not None]
    except Exception as e:
        sib = [type(e).__name__]
    return {"bomb": bomb, "sibling": sib, "worker_same": worker_pid(client) == before}


def main(parent, case, marker):
    leash.configure(cgroup_parent=parent)
    out = {}
    if case == "control":
        # without leash: the nanny terminates the worker that passes its limit
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            with cluster(memory_limit="600MB") as c, Client(c) as client:
                out = bomb_beside_sibling(client, marker)
        print(json.dumps(out))
        return
    with cluster() as c, Client(c) as client:
        wpid = worker_pid(client)[0]
        if case == "limited":
            lf = leash.limit(where, wall_time=60, cgroup_parent=parent)
            x, pid, cg = client.submit(lf, 21, pure=False).result()
            out = {"x": x, "pid_is_worker": pid == wpid, "cgroup": cg}
        elif case == "plugin":
            client.register_worker_plugin(leash.dask.LeashPlugin(cgroup_parent=parent, wall_time=60))
            res = client.gather([client.submit(where, i, pure=False) for i in range(6)])
            out = {"xs": [r[0] for r in res], "pids": len({r[1] for r in res}),
                   "worker_pid_used": any(r[1] == wpid for r in res), "cgroups": [r[2] for r in res]}
        elif case == "bomb":
            # RLIMIT_AS here (no memory controller): above the worker's own
            # address space (about 400 MiB), below the bomb
            client.register_worker_plugin(leash.dask.LeashPlugin(cgroup_parent=parent, memory="768M"))
            out = bomb_beside_sibling(client, marker)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
