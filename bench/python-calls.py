# SPDX-License-Identifier: LGPL-2.1-or-later
"""Per-call cost of running a trivial function in a child, from one
interpreter, side by side (issue 13):

  floor     a bare os.fork() + pipe + waitpid round trip (the child pickles
            the result, writes it, _exits), the least any isolation costs
  leash     leash.limit(f, wall_time=60)(x): a job cgroup made, forked into,
            accounted, removed, and the report parsed
  cgroup_floor  the floor plus a cgroup per call (mkdir, the child moves
            itself in, rmdir); with mkdir_rmdir beside it, what the
            migration costs that leash's clone3 into the cgroup avoids
  pynisher  pynisher 1.0's limit(f, wall_time=60)(x), imported from a source
            tree given by PYNISHER_SRC (never vendored); skipped, with the
            reason, when absent. Measured in rounds of its own against the
            floor (its processes' teardown slows whatever runs beside it)

at two caller sizes: as started, and holding 500 MiB (touched). Rounds are
interleaved (each round runs CALLS calls of every contender, order rotated);
the figures are the median per-call time over rounds and the median of the
per-round ratios to the floor.

Then the sampling cost: a function burning a fixed amount of CPU (~0.4 s here,
several callbacks per call),
run with and without leash.monitored(interval=0.1) callbacks, and as a control
without them while a caller thread wakes as often, in BENCH_PY_PAIRS
interleaved triples (default 30); the median of the paired ratios of its own
wall time, measured inside the child (the goal: at most 1.01), and of its
CPU time; and with callbacks against the control (what the callbacks cost
beyond this host's response to a caller that wakes every 0.1 s).

Usage: python-calls.py [ROUNDS] [CALLS]. Prints "key: value" lines.
"""

import os
import pickle
import statistics
import sys
import threading
import time

import leash


def trivial(x):
    return x + 1


def round_trip(x, in_child=None):
    """fork, the child runs in_child() (if any) then trivial(x) and writes
    the pickled result to a pipe; the parent reads it and reaps the child."""
    r, w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            if in_child is not None:
                in_child()
            os.write(w, pickle.dumps(trivial(x)))
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return pickle.loads(data)


def floor_call(x):
    return round_trip(x)


def cgroup_floor(parent):
    """The floor plus a cgroup per call the way a program without clone3
    does it: mkdir a cgroup under parent, the child moves itself into it
    (writing 0 to its cgroup.procs) before it runs the function, rmdir once
    reaped; no limit written, no accounting read, no supervision, no report.
    leash never migrates (clone3 CLONE_INTO_CGROUP makes the child inside
    the cgroup): set beside mkdir_rmdir(), this shows what the migration
    costs."""
    seq = [0]

    def call(x):
        seq[0] += 1
        cg = os.path.join(parent, "floor-{}-{}".format(os.getpid(), seq[0]))
        os.mkdir(cg)

        def move_in():
            fd = os.open(os.path.join(cg, "cgroup.procs"), os.O_WRONLY)
            os.write(fd, b"0")

        try:
            return round_trip(x, move_in)
        finally:
            os.rmdir(cg)

    return call


def mkdir_rmdir(parent, n=200):
    """The median cost of making and removing one empty cgroup under parent,
    no process in it: a part of any per-call cgroup however the process gets
    in (leash's clone3 CLONE_INTO_CGROUP, or cgroup_floor's write)."""
    times = []
    for i in range(n):
        cg = os.path.join(parent, "mkrm-{}-{}".format(os.getpid(), i))
        t = time.perf_counter()
        os.mkdir(cg)
        os.rmdir(cg)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def load_pynisher():
    src = os.environ.get("PYNISHER_SRC")
    if not src:
        return None, "PYNISHER_SRC not set (a pynisher 1.0 source tree; it is never vendored)"
    sys.path.insert(0, src)
    try:
        import pynisher

        if not hasattr(pynisher, "Pynisher"):
            return None, "{} is not pynisher 1.x".format(src)
        if os.path.dirname(os.path.dirname(os.path.abspath(pynisher.__file__))) != os.path.abspath(src):
            return None, "import pynisher found {} instead of {}".format(pynisher.__file__, src)
        return pynisher, None
    except ImportError as e:
        return None, "pynisher from {} does not import: {}".format(src, e)
    finally:
        sys.path.pop(0)


def measure(contenders, rounds, calls):
    per = {name: [] for name in contenders}
    ratio = {name: [] for name in contenders}
    names = list(contenders)
    for r in range(rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        this = {}
        for name in order:
            f = contenders[name]
            f(0)  # warm
            t = time.perf_counter()
            for i in range(calls):
                assert f(i) == i + 1
            this[name] = (time.perf_counter() - t) / calls
        for name in names:
            per[name].append(this[name])
            ratio[name].append(this[name] / this["floor"])
    return {n: (statistics.median(per[n]) * 1e3, statistics.median(ratio[n])) for n in names}


def timed_work(units):
    """A fixed amount of CPU-bound work; returns its own wall and CPU time,
    measured inside the child (what the caller's sampling could slow down)."""
    t, c = time.perf_counter(), time.thread_time()
    x = 0
    for i in range(units):
        x = (x * 31 + i) % 1000003
    return time.perf_counter() - t, time.thread_time() - c


def _q(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


class _Waker:
    """A caller thread that wakes every interval and does nothing: the
    control for what a caller woken as often as the sampler does to the
    function's time on this host, without leash's sampling."""

    def __init__(self, interval):
        self.interval, self.stop = interval, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stop.wait(self.interval):
            pass

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def sampling_cost(pairs, interval=0.1, units=9_000_000):
    """The same work with and without leash.monitored callbacks every
    interval, and without them but with a caller thread woken as often
    (the control), interleaved (order rotating); the paired ratios of the
    function's own times, sampled / plain and sampled / woken."""
    plain = leash.limit(timed_work)
    steps, cost = [], []

    def on_step(i, name, step, res):
        if step == -1:
            s = res["report"]["sampling"]
            cost.append(s["cost_cpu_s"] / max(1, s["samples"]))
        else:
            steps.append(step)

    sampled = leash.monitored(interval=interval, callback=on_step, return_resources=False)(timed_work)
    plain(units // 10)  # warm
    def woken(n):
        with _Waker(interval):
            return plain(n)

    run = {"plain": plain, "sampled": sampled, "woken": woken}
    order = ("plain", "sampled", "woken")
    wall, cpu, base, vs_woken, woken_plain = [], [], [], [], []
    for r in range(pairs):
        got = {}
        for name in order[r % 3 :] + order[: r % 3]:
            got[name] = run[name](units)
        base.append(got["plain"][0])
        wall.append(got["sampled"][0] / got["plain"][0])
        cpu.append(got["sampled"][1] / got["plain"][1])
        vs_woken.append(got["sampled"][0] / got["woken"][0])
        woken_plain.append(got["woken"][0] / got["plain"][0])
    print("sampling_ratio: {:.4f}".format(statistics.median(wall)))
    print("sampling_vs_woken: {:.4f}".format(statistics.median(vs_woken)))
    return (
        "{} triples of {:.3f} s of work (median, plain): the function's own wall time with callbacks every "
        "{:g} s / without, paired ratio median {:.4f} (p10 {:.4f}, p90 {:.4f}); its CPU time {:.4f} "
        "(p10 {:.4f}, p90 {:.4f}); control, without callbacks but with a caller thread woken as often / "
        "without: {:.4f} (p10 {:.4f}, p90 {:.4f}); with callbacks / that control: {:.4f} (p10 {:.4f}, p90 {:.4f}); "
        "{:.1f} callbacks per call; the caller's sampling CPU {:.1f} us per sample"
    ).format(
        pairs, statistics.median(base), interval, statistics.median(wall), _q(wall, 0.1), _q(wall, 0.9),
        statistics.median(cpu), _q(cpu, 0.1), _q(cpu, 0.9), statistics.median(woken_plain), _q(woken_plain, 0.1),
        _q(woken_plain, 0.9), statistics.median(vs_woken), _q(vs_woken, 0.1), _q(vs_woken, 0.9),
        len(steps) / pairs, statistics.median(cost) * 1e6,
    )


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    parent = os.environ.get("BENCH_CGROUP_PARENT")
    if parent:
        os.makedirs(parent, exist_ok=True)
        leash.configure(cgroup_parent=parent)
    pynisher, why = load_pynisher()
    contenders = {"floor": floor_call, "leash": leash.limit(trivial, wall_time=60)}
    if parent:
        contenders["cgroup_floor"] = cgroup_floor(parent)
    # pynisher in rounds of its own, against a floor of its own: each of its
    # calls starts processes whose teardown slowed the calls beside it (the
    # floor by a quarter), which made every ratio in its rounds smaller
    theirs = {"floor": floor_call}
    if pynisher is not None:
        theirs["pynisher"] = pynisher.limit(trivial, wall_time=60)
    else:
        print("pynisher: skipped: {}".format(why))
    for size in ("fresh", "500MiB"):
        if size == "500MiB":
            ballast = bytearray(500 << 20)
            ballast[::4096] = b"b" * len(ballast[::4096])
        res = measure(contenders, rounds, calls)
        if pynisher is not None:
            res_p = measure(theirs, rounds, calls)
            res["pynisher"] = res_p["pynisher"]
            print("{} pynisher_rounds_floor: {:.2f} ms/call".format(size, res_p["floor"][0]))
        for name, (ms, ratio) in res.items():
            print("{} {}: {:.2f} ms/call, {:.2f}x floor".format(size, name, ms, ratio))
        if parent:
            mr = mkdir_rmdir(parent)
            print("{} mkdir_rmdir: {:.2f} ms, {:.2f}x floor".format(size, mr, mr / res["floor"][0]))
    # measured from the fresh caller: without a memory controller each sample
    # walks the child's smaps_rollup, whose cost grows with its mappings
    ballast = None
    print("sampling: {}".format(sampling_cost(int(os.environ.get("BENCH_PY_PAIRS", "30")))))


if __name__ == "__main__":
    main()
