# SPDX-License-Identifier: LGPL-2.1-or-later
"""psutil-walk ROOT_PID REPS: the method of psutil-based monitors.

One sample = find the process tree under ROOT_PID (Process.children
recursive) and sum cpu_times() and memory_info().rss over it. Prints the
CPU time of one sample in seconds (time.process_time over REPS samples,
divided by REPS), so interpreter start-up is not counted.
"""
import sys
import time

import psutil


def sample(root):
    procs = [root] + root.children(recursive=True)
    cpu = 0.0
    rss = 0
    for p in procs:
        try:
            t = p.cpu_times()
            cpu += t.user + t.system + t.children_user + t.children_system
            rss += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return len(procs), cpu, rss


def main():
    root = psutil.Process(int(sys.argv[1]))
    reps = int(sys.argv[2])
    sample(root)  # warm the module's caches, as a long-running monitor would
    t0 = time.process_time()
    for _ in range(reps):
        sample(root)
    sys.stdout.write("%.9f\n" % ((time.process_time() - t0) / reps))


main()
