# SPDX-License-Identifier: LGPL-2.1-or-later
"""The truth matrix's Slurm cells (issue 39), run by tests/truth/matrix.py
--tier slurm from inside the slurm tier (tests/slurm/run), which starts the
single-node cluster with leash's Prolog, TaskProlog and Epilog (mode own),
sets SLURM_TRUTH_DIR to its directory (work/, reports/) and maps the
partitions to the profiles these cells need: debug -> cpu-time 2s,
short -> wall-time 3s, both with a 2 s grace, truth -> memory 64M, pids 20.

Each cell: a batch job over the limit and one under it, submitted as root
with sbatch; the report the Epilog writes is checked against the job's own
clocks (date +%s.%N inside the batch script) and a burner's own getrusage
(tests/helpers/lh-children's tree_cpu_s), what a job could allocate and
touch (lh-alloc's exit) and start (its shell's own count)."""

import json
import os
import subprocess
import time

CPU_LIMIT, WALL_LIMIT, GRACE = 2.0, 3.0, 2.0
# the job script's own clock starts after the Prolog and bash's start: the
# report's wall clock (from the Prolog) may run ahead of it by this much
STARTUP_S = 10.0
# the batch script's first line comes this long after the Prolog at most
PROLOG_S = 2.0
# a trap runs once the foreground command (a sleep 0.1 or the burner) ends
TRAP_S = 0.5
# partition truth's profile (truthlim): memory and pids, which need controllers
MEMORY_MIB, PIDS = 64, 20


def script(d, name, body):
    path = os.path.join(d, "work", "truth-{}.sh".format(name))
    with open(path, "w") as f:
        f.write("#!/bin/bash\necho \"start=$(date +%s.%N)\"\n"
                "trap 'echo \"xcpu=$(date +%s.%N)\"' XCPU\n" + body + "echo \"end=$(date +%s.%N)\"\n")
    os.chmod(path, 0o755)
    return path


class Job:
    """One batch job through the hooks: its output's key=value lines and the
    Epilog's report (empty when none came within 60 s)."""

    def __init__(self, d, partition, path):
        self.id, self.rep, self.out = None, {}, {}
        p = subprocess.run(["sbatch", "--parsable", "-p", partition, "-o", os.path.join(d, "work", "out.%j"), path],
                           cwd=os.path.join(d, "work"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.id = p.stdout.decode().strip().split(";")[0] or None
        if not self.id:
            return
        rpath = os.path.join(d, "reports", "{}.leashnode.json".format(self.id))
        for _ in range(600):
            if os.path.exists(rpath) and os.path.getsize(rpath):
                break
            time.sleep(0.1)
        try:
            with open(rpath) as f:
                self.rep = json.load(f)
            with open(os.path.join(d, "work", "out." + self.id)) as f:
                for line in f:
                    k, _, v = line.strip().partition("=")
                    self.out.setdefault(k, v)
        except (OSError, ValueError):
            pass

    def get(self, path):
        v = self.rep
        for k in path.split("."):
            v = v.get(k) if isinstance(v, dict) else None
        return v

    def clock(self, a, b):
        try:
            return float(self.out[b]) - float(self.out[a])
        except (KeyError, ValueError):
            return None

    def signals(self):
        return [(s.get("signal"), s.get("why")) for s in self.get("signals") or []]


def common(cell, j, reason, code):
    cell.check(j.id, "sbatch took the job")
    cell.check(j.rep, "job {} has a report".format(j.id))
    cell.check((j.get("reason"), j.get("exit.code")) == (reason, code),
               "reason {}, exit code {} (report: {}, {})".format(reason, code, j.get("reason"), j.get("exit.code")))
    cell.check(j.get("placement.kind") == "adopted" and str(j.get("slurm.job_id")) == j.id,
               "placement adopted, the report is job {}'s".format(j.id))


def under_wall(cell, j, what):
    own, got = j.clock("start", "end"), j.get("usage.wall_time_s")
    cell.check(own is not None and got is not None and own <= got < own + STARTUP_S,
               "{}: usage.wall_time_s {} >= the job's own clock {} and < it + {} s".format(what, got, own, STARTUP_S))


def wall_time(cell, d):
    over = Job(d, "short", script(d, "wall-over", "for _ in $(seq 300); do sleep 0.1; done\necho not-killed=1\n"))
    common(cell, over, "wall_time", 124)
    cell.check(over.signals() == [("XCPU", "wall_time"), ("KILL", "grace")],
               "over: SIGXCPU (wall_time), then SIGKILL (grace): {}".format(over.signals()))
    at = [s.get("at_s") for s in over.get("signals") or []] + [None, None]
    own = over.clock("start", "xcpu")
    # the report's clock starts at the Prolog, the job's at its first line: a
    # signal sent early shows as the job's own clock below the limit - PROLOG_S
    cell.check(at[0] is not None and at[0] >= WALL_LIMIT and own is not None
               and WALL_LIMIT - PROLOG_S <= own <= at[0] + TRAP_S,
               "over: SIGXCPU at {} s >= {} s; the job's own clock saw it at {} s after its start".format(
                   at[0], WALL_LIMIT, own))
    cell.check(at[1] is not None and at[1] >= WALL_LIMIT + GRACE, "over: SIGKILL at {} s, after the grace".format(at[1]))
    cell.check("not-killed" not in over.out and "end" not in over.out, "over: the job never finished on its own")
    under = Job(d, "short", script(d, "wall-under", "sleep 1\n"))
    common(cell, under, "ok", 0)
    cell.check(under.signals() == [], "under: no signal ({})".format(under.signals()))
    under_wall(cell, under, "under")


def cpu_time(cell, d, helpers):
    burner = os.path.join(helpers, "lh-children")
    over = Job(d, "debug", script(d, "cpu-over", "{} 1 8000\n".format(burner)))
    common(cell, over, "cpu_time", 124)
    cell.check(over.signals()[:1] == [("XCPU", "cpu_time")], "over: SIGXCPU (cpu_time) first: {}".format(over.signals()))
    got, own = over.get("usage.cpu_time_s"), over.clock("start", "xcpu")
    # one burner thread: its CPU time cannot run ahead of the job's own wall clock
    cell.check(got is not None and got >= CPU_LIMIT and own is not None and own >= CPU_LIMIT - 0.3,
               "over: usage.cpu_time_s {} >= {} s; the job's own clock saw SIGXCPU {} s after its start".format(
                   got, CPU_LIMIT, own))
    cell.check("tree_cpu_s" not in over.out, "over: the burner (8 s of CPU) never finished")
    under = Job(d, "debug", script(d, "cpu-under", "{} 1 500\n".format(burner)))
    common(cell, under, "ok", 0)
    cell.check(under.signals() == [], "under: no signal ({})".format(under.signals()))
    try:
        truth = float(under.out.get("tree_cpu_s"))
    except (TypeError, ValueError):
        truth = None
    got = under.get("usage.cpu_time_s")
    # the rest of the job (bash, date) costs a few tenths at most
    cell.check(truth is not None and got is not None and truth <= got < truth + 1.0,
               "under: usage.cpu_time_s {} >= the burner's own {} and < it + 1 s".format(got, truth))


def not_enforced(cell, j, limit, what):
    cell.check(j.get("limits.{}.enforced_by".format(limit)) == "none",
               "{}: limits.{}.enforced_by none ({})".format(what, limit, j.get("limits.{}.enforced_by".format(limit))))
    cell.check(any(w.startswith("--{} ".format(limit)) and "not enforced" in w for w in j.get("warnings") or []),
               "{}: a warning says {} is not enforced ({})".format(what, limit, j.get("warnings")))


def memory(cell, d, helpers):
    """No memory controller on the tier's host, and slurmstepd (not leash)
    starts the tasks, so no RLIMIT_AS either: the limit is not enforced."""
    alloc = os.path.join(helpers, "lh-alloc")
    for what, mib in (("over", 128), ("under", 16)):
        j = Job(d, "truth", script(d, "mem-" + what, "{} {} 300\necho alloc_rc=$?\n".format(alloc, mib)))
        common(cell, j, "ok", 0)
        cell.check(j.out.get("alloc_rc") == "0", "{}: the job touched its {} MiB (limit {} MiB): lh-alloc exit {}".format(
            what, mib, MEMORY_MIB, j.out.get("alloc_rc")))
        peak = j.get("usage.memory_peak_bytes")
        cell.check(peak is None or peak >= mib << 20, "{}: usage.memory_peak_bytes {} null or >= the {} MiB touched".format(
            what, peak, mib))
        not_enforced(cell, j, "memory", what)
    cell.weak = ("not enforced (no memory controller on this host; slurmstepd starts the tasks, so no RLIMIT_AS):"
                 " the report says none, with a warning")


def pids(cell, d):
    for what, n in (("over", 2 * PIDS), ("under", PIDS // 4)):
        body = "for _ in $(seq {}); do sleep 2 & done\necho started=$(jobs -p | wc -l)\nwait\n".format(n)
        j = Job(d, "truth", script(d, "pids-" + what, body))
        common(cell, j, "ok", 0)
        cell.check(j.out.get("started") == str(n), "{}: the job started its {} processes (limit {}): {}".format(
            what, n, PIDS, j.out.get("started")))
        not_enforced(cell, j, "pids", what)
    cell.weak = "not enforced (no pids controller on this host): the report says none, with a warning"


CALLERS = {"own": "Slurm own (sbatch; Prolog, TaskProlog, Epilog)",
           "nest": "Slurm nest (Slurm's cgroup/v2, the SPANK plugin)"}
NEST_WHY = ("the systemd VM's tests/vm/systemd/30-slurm-cgroup-v2.sh proves mode nest (wall time, memory,"
            " figures) outside the matrix; not yet a cell")
CONTROLLER_WHY = ("this tier's hybrid host hands no {} controller down: the Prolog's limit on job_N is proven in the"
                  " VM tier (tests/vm/t/55-slurm-layout.sh), not yet a cell")
LIMITS = [("wall-time (profile)", "wall"), ("cpu-time (profile)", "cpu"), ("memory (profile)", "memory"),
          ("pids (profile)", "pids"), ("cpus (profile)", "cpu")]


def run(cell_class, helpers):
    """The cells: {(limit, caller): Cell}; (None, why) when the tier's cluster is not there."""
    d = os.environ.get("SLURM_TRUTH_DIR")
    if not d or not os.path.isdir(os.path.join(d, "reports")):
        return None, "not run from tests/slurm/run (no SLURM_TRUTH_DIR)"
    cells = {}
    c = cells[("wall-time (profile)", "own")] = cell_class("wall-time / Slurm own")
    wall_time(c, d)
    c = cells[("cpu-time (profile)", "own")] = cell_class("cpu-time / Slurm own")
    cpu_time(c, d, helpers)
    c = cells[("memory (profile)", "own")] = cell_class("memory / Slurm own")
    memory(c, d, helpers)
    c = cells[("pids (profile)", "own")] = cell_class("pids / Slurm own")
    pids(c, d)
    return cells, None


def section(tier, text, cells, why):
    lines = ["<!-- truth:{} begin (generated: do not edit) -->".format(tier), "", "## {}".format(tier), "",
             text + ".", "", "| limit | " + " | ".join(CALLERS.values()) + " |", "| --- |" + " --- |" * len(CALLERS)]
    for limit, ctl in LIMITS:
        row = []
        for caller in CALLERS:
            c = cells.get((limit, caller)) if cells else None
            if c:
                row.append(c.status())
            elif caller == "nest":
                row.append("n/a: " + NEST_WHY)
            elif why:
                row.append("n/a: " + why)
            else:
                row.append("n/a: " + CONTROLLER_WHY.format(ctl))
        lines.append("| {} | {} |".format(limit, " | ".join(t.replace("|", "\\|") for t in row)))
    lines += ["", "<!-- truth:{} end -->".format(tier)]
    return "\n".join(lines) + "\n"
