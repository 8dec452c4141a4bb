# SPDX-License-Identifier: LGPL-2.1-or-later
"""Many trials at once (issue 42): tasks/s of trivial tasks, side by side.

  leash     leash.Executor(max_workers=2): each task a fresh job (a cgroup
            made, forked into, accounted, removed), one supervisor thread
  floor     concurrent.futures.ProcessPoolExecutor(2, max_tasks_per_child=1),
            forkserver context (the cheapest it allows: with fork it refuses
            max_tasks_per_child): a process per task, the fair floor of "no
            process reused" (no cgroup, no limit, no report)
  fork      the least a process per task costs from Python: two threads,
            each forking a child per task (the child writes the pickled
            result to a pipe and _exits; the thread reads it and reaps it)
  pebble    pebble.ProcessPool(2, max_tasks=1) (a worker per task), where
            pebble is installed (Debian: python3-pebble)

Rounds are interleaved (each round runs TASKS tasks through every
contender, a new pool each time, order rotated); the figures are the median
tasks/s over rounds and the median of the per-round ratios leash/floor
(the target: at least 0.8).

Then, where dask.distributed is installed, a LocalCluster(1 worker, 2
threads, processes=True): DASK_TASKS trivial tasks without a plugin and with
leash.dask.LeashPlugin, in alternating rounds on the same worker
(unregistering the plugin between).

Usage: many-trials.py [ROUNDS] [TASKS] [DASK_TASKS]. Prints "key: value"
lines. BENCH_CGROUP_PARENT: where the jobs go (made and removed here).
"""

import concurrent.futures
import multiprocessing
import os
import statistics
import sys
import time
import warnings


def trivial(x):
    return x + 1


def run_leash(n):
    import leash

    t = time.perf_counter()
    with leash.Executor(max_workers=2) as ex:
        assert list(ex.map(trivial, range(n))) == [x + 1 for x in range(n)]
    return n / (time.perf_counter() - t)


def run_floor(n):
    ctx = multiprocessing.get_context("forkserver")
    t = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx, max_tasks_per_child=1) as ex:
        assert list(ex.map(trivial, range(n))) == [x + 1 for x in range(n)]
    return n / (time.perf_counter() - t)


def fork_one(x):
    import pickle

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, pickle.dumps(trivial(x)))
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        value = pickle.loads(f.read())
    os.waitpid(pid, 0)
    return value


def run_fork(n):
    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        assert list(ex.map(fork_one, range(n))) == [x + 1 for x in range(n)]
    return n / (time.perf_counter() - t)


def run_pebble(n):
    import pebble

    t = time.perf_counter()
    with pebble.ProcessPool(max_workers=2, max_tasks=1) as pool:
        assert list(pool.map(trivial, range(n)).result()) == [x + 1 for x in range(n)]
    return n / (time.perf_counter() - t)


def pools(rounds, tasks):
    contenders = {"leash": run_leash, "floor": run_floor, "fork": run_fork}
    try:
        import pebble  # noqa: F401

        contenders["pebble"] = run_pebble
    except ImportError:
        print("pebble: not installed (Debian: python3-pebble)")
    rates = {k: [] for k in contenders}
    names = list(contenders)
    for r in range(rounds):
        for k in names[r % len(names):] + names[: r % len(names)]:
            rates[k].append(contenders[k](tasks))
    for k, v in rates.items():
        print("{}: {:.0f} tasks/s".format(k, statistics.median(v)))
    ratio = statistics.median(a / b for a, b in zip(rates["leash"], rates["floor"]))
    print("leash_over_floor: {:.3f}".format(ratio))
    print("leash_over_fork: {:.3f}".format(statistics.median(a / b for a, b in zip(rates["leash"], rates["fork"]))))
    if "pebble" in rates:
        ratio = statistics.median(a / b for a, b in zip(rates["leash"], rates["pebble"]))
        print("leash_over_pebble: {:.3f}".format(ratio))


def dask_rounds(rounds, tasks, parent):
    try:
        from distributed import Client, LocalCluster

        import leash.dask
    except ImportError as e:
        print("dask: not measured: {}".format(e))
        return
    rates = {"without": [], "with": []}
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as c, Client(c) as cl:
        def batch():
            t = time.perf_counter()
            res = cl.gather(cl.map(trivial, range(tasks), pure=False))
            assert res == [x + 1 for x in range(tasks)]
            return tasks / (time.perf_counter() - t)

        batch()  # warm: imports on the worker
        for _ in range(rounds):
            rates["without"].append(batch())
            cl.register_worker_plugin(leash.dask.LeashPlugin(cgroup_parent=parent), name="leash")
            rates["with"].append(batch())
            cl.unregister_worker_plugin("leash")
    for k, v in rates.items():
        print("dask_{}: {:.0f} tasks/s".format(k, statistics.median(v)))
    ratio = statistics.median(a / b for a, b in zip(rates["with"], rates["without"]))
    print("dask_with_over_without: {:.3f}".format(ratio))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    tasks = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    dask_tasks = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    warnings.simplefilter("ignore")
    parent = os.environ.get("BENCH_CGROUP_PARENT")
    import leash

    if parent:
        os.makedirs(parent, exist_ok=True)
        leash.configure(cgroup_parent=parent)
    try:
        print("rounds: {} of {} tasks per contender".format(rounds, tasks))
        pools(rounds, tasks)
        if dask_tasks > 0:
            dask_rounds(rounds, dask_tasks, parent)
    finally:
        if parent:
            try:
                os.rmdir(parent)
            except OSError:
                pass


if __name__ == "__main__":
    main()
