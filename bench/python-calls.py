# SPDX-License-Identifier: LGPL-2.1-or-later
"""Per-call cost of running a trivial function in a child, from one
interpreter, side by side (issue 13):

  floor     a bare os.fork() + pipe + waitpid round trip (the child pickles
            the result, writes it, _exits), the least any isolation costs
  leash     leash.limit(f, wall_time=60)(x): a job cgroup made, forked into,
            accounted, removed, and the report parsed
  pynisher  pynisher 1.0's limit(f, wall_time=60)(x), imported from a source
            tree given by PYNISHER_SRC (never vendored); skipped, with the
            reason, when absent

at two caller sizes: as started, and holding 500 MiB (touched). Rounds are
interleaved (each round runs CALLS calls of every contender, order rotated);
the figures are the median per-call time over rounds and the median of the
per-round ratios to the floor.

Then the sampling cost: a function burning a fixed amount of CPU, run with
and without leash.monitored(interval=0.1) callbacks, its own CPU time
compared (the goal: under 1 %).

Usage: python-calls.py [ROUNDS] [CALLS]. Prints "key: value" lines.
"""

import os
import pickle
import statistics
import sys
import time

import leash


def trivial(x):
    return x + 1


def floor_call(x):
    r, w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, pickle.dumps(trivial(x)))
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
    """A fixed amount of work; returns its own wall time, measured inside
    the child (what the caller's sampling could slow down)."""
    t = time.perf_counter()
    x = 0
    for i in range(units):
        x = (x * 31 + i) % 1000003
    return time.perf_counter() - t


def sampling_cost(rounds, units=3_000_000):
    if not leash._monitor.sampling_available():
        return "skipped: libleash has no per-sample callback in this build"
    plain = leash.limit(timed_work)
    steps = []
    sampled = leash.monitored(interval=0.1, callback=lambda *a: steps.append(a[2]), return_resources=False)(
        timed_work
    )
    base, samp = [], []
    for r in range(rounds):
        for name in ("plain", "sampled") if r % 2 == 0 else ("sampled", "plain"):
            if name == "plain":
                base.append(plain(units))
            else:
                samp.append(sampled(units))
    b, s = statistics.median(base), statistics.median(samp)
    return "the function's own run time {:.3f} s plain, {:.3f} s with callbacks every 100 ms ({} callbacks): {:+.2f} %".format(
        b, s, len(steps), (s - b) / b * 100
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
    if pynisher is not None:
        contenders["pynisher"] = pynisher.limit(trivial, wall_time=60)
    else:
        print("pynisher: skipped: {}".format(why))
    for size in ("fresh", "500MiB"):
        if size == "500MiB":
            ballast = bytearray(500 << 20)
            ballast[::4096] = b"b" * len(ballast[::4096])
        res = measure(contenders, rounds, calls)
        for name, (ms, ratio) in res.items():
            print("{} {}: {:.2f} ms/call, {:.2f}x floor".format(size, name, ms, ratio))
    print("sampling: {}".format(sampling_cost(max(3, rounds // 2))))


if __name__ == "__main__":
    main()
