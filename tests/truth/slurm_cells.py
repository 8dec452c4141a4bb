# SPDX-License-Identifier: LGPL-2.1-or-later
"""The truth matrix's Slurm cells (issue 39), run by tests/truth/matrix.py
--tier slurm (mode own) or --tier slurm-nest (mode nest), each from inside
the cluster its tier started:
  - slurm: tests/slurm/run's single-node cluster on the hybrid host, with
    leash's Prolog, TaskProlog and Epilog (mode own); SLURM_TRUTH_DIR is its
    directory (work/, reports/), and its partitions pick the profiles these
    cells need: debug -> truthcpu, short -> walltest, truth -> truthlim;
    jobs submitted as root;
  - slurm-nest: the systemd VM's real Slurm (cgroup/v2, slurmd under
    systemd: tests/vm/systemd/30-slurm-cgroup-v2.sh) with mode = nest;
    SLURM_TRUTH_WORK (the jobs' directory), SLURM_TRUTH_REPORTS (the
    Epilog's), SLURM_TRUTH_NODE and SLURM_TRUTH_USER (who submits);
    --leash-profile picks truthwall, truthcpu or truthlim.
The profiles are the same in both: cpu-time 2s, wall-time 3s (grace 2s),
memory 64M, pids 20, cpus 0.1.

Each cell: a batch job over the limit and one under it, submitted with
sbatch; the report the Epilog writes is checked against the job's own
clocks (date +%s.%N inside the batch script) and a burner's own getrusage
(tests/helpers/lh-children's tree_cpu_s), what a job could allocate and
touch (lh-alloc's exit), start (its shell's own count) and burn per second
of its own clock; in mode nest also against the kernel's files of the
cgroup Slurm put the batch step in, read by the job itself."""

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
# the profile truthlim: memory, pids and cpus, which need controllers
MEMORY_MIB, PIDS, CPUS = 64, 20, 0.1


class Site:
    """Where a tier's jobs go: the directory of their scripts and outputs, the
    Epilog's reports (ID.NODE.json), who submits, and the sbatch options that
    pick each profile (wall, cpu, lim)."""

    def __init__(self, mode, work, reports, node, user, pick):
        self.mode, self.work, self.reports, self.node, self.pick = mode, work, reports, node, pick
        self.submit = ["runuser", "-u", user, "--"] if user else []


def own_site(d):
    return Site("own", os.path.join(d, "work"), os.path.join(d, "reports"), "leashnode", None,
                {"wall": ["-p", "short"], "cpu": ["-p", "debug"], "lim": ["-p", "truth"]})


def nest_site():
    env = [os.environ.get("SLURM_TRUTH_" + k) for k in ("WORK", "REPORTS", "NODE", "USER")]
    if not all(env) or not os.path.isdir(env[1]):
        return None
    return Site("nest", env[0], env[1], env[2], env[3],
                {k: ["--leash-profile=truth" + k] for k in ("wall", "cpu", "lim")})


def script(site, name, body):
    path = os.path.join(site.work, "truth-{}.sh".format(name))
    with open(path, "w") as f:
        f.write("#!/bin/bash\necho \"start=$(date +%s.%N)\"\n"
                "trap 'echo \"xcpu=$(date +%s.%N)\"' XCPU\n" + body + "echo \"end=$(date +%s.%N)\"\n")
    os.chmod(path, 0o755)
    return path


class Job:
    """One batch job through the hooks: its output's key=value lines and the
    Epilog's report (empty when none came within 120 s)."""

    def __init__(self, site, kind, path):
        self.id, self.rep, self.out, self.site = None, {}, {}, site
        p = subprocess.run(site.submit + ["sbatch", "--parsable"] + site.pick[kind]
                           + ["-o", os.path.join(site.work, "out.%j"), path],
                           cwd=site.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.id = p.stdout.decode().strip().split(";")[0] or None
        if not self.id:
            print("# sbatch: {}".format(p.stderr.decode(errors="replace").strip()[:300]))
            return
        rpath = os.path.join(site.reports, "{}.{}.json".format(self.id, site.node))
        for _ in range(1200):
            if os.path.exists(rpath) and os.path.getsize(rpath):
                break
            time.sleep(0.1)
        try:
            with open(rpath) as f:
                self.rep = json.load(f)
            with open(os.path.join(site.work, "out." + self.id)) as f:
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

    def num(self, key):
        try:
            return float(self.out.get(key))
        except (TypeError, ValueError):
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
    if j.site.mode == "nest":
        cell.check(j.get("slurm_mode") == "nest" and (j.get("cgroup") or "").endswith("/job_" + j.id),
                   "slurm_mode nest, the report's cgroup is Slurm's job_{} ({})".format(j.id, j.get("cgroup")))


def under_wall(cell, j, what):
    own, got = j.clock("start", "end"), j.get("usage.wall_time_s")
    cell.check(own is not None and got is not None and own <= got < own + STARTUP_S,
               "{}: usage.wall_time_s {} >= the job's own clock {} and < it + {} s".format(what, got, own, STARTUP_S))


def wall_time(cell, site):
    over = Job(site, "wall", script(site, "wall-over", "for _ in $(seq 300); do sleep 0.1; done\necho not-killed=1\n"))
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
    under = Job(site, "wall", script(site, "wall-under", "sleep 1\n"))
    common(cell, under, "ok", 0)
    cell.check(under.signals() == [], "under: no signal ({})".format(under.signals()))
    under_wall(cell, under, "under")


def cpu_time(cell, site, helpers):
    burner = os.path.join(helpers, "lh-children")
    over = Job(site, "cpu", script(site, "cpu-over", "{} 1 8000\n".format(burner)))
    common(cell, over, "cpu_time", 124)
    cell.check(over.signals()[:1] == [("XCPU", "cpu_time")], "over: SIGXCPU (cpu_time) first: {}".format(over.signals()))
    got, own = over.get("usage.cpu_time_s"), over.clock("start", "xcpu")
    # one burner thread: its CPU time cannot run ahead of the job's own wall clock
    cell.check(got is not None and got >= CPU_LIMIT and own is not None and own >= CPU_LIMIT - 0.3,
               "over: usage.cpu_time_s {} >= {} s; the job's own clock saw SIGXCPU {} s after its start".format(
                   got, CPU_LIMIT, own))
    cell.check("tree_cpu_s" not in over.out, "over: the burner (8 s of CPU) never finished")
    if site.mode == "nest":
        # Slurm's job cgroup holds slurmstepd: the limit and the figure count its CPU, and say so
        note = over.get("limits.cpu_time.note") or ""
        cell.check("slurmstepd" in note and "slurmstepd" in (over.get("usage.cpu_time_note") or ""),
                   "over: the limit's note and usage.cpu_time_note say slurmstepd's CPU counts ({})".format(note))
    under = Job(site, "cpu", script(site, "cpu-under", "{} 1 500\n".format(burner)))
    common(cell, under, "ok", 0)
    cell.check(under.signals() == [], "under: no signal ({})".format(under.signals()))
    truth, got = under.num("tree_cpu_s"), under.get("usage.cpu_time_s")
    # the rest of the job (bash, date; in mode nest slurmstepd, whose leaf is
    # in the step's cgroup) costs a few tenths at most
    cell.check(truth is not None and got is not None and truth <= got < truth + 1.0,
               "under: usage.cpu_time_s {} >= the burner's own {} and < it + 1 s".format(got, truth))


def not_enforced(cell, j, limit, what):
    cell.check(j.get("limits.{}.enforced_by".format(limit)) == "none",
               "{}: limits.{}.enforced_by none ({})".format(what, limit, j.get("limits.{}.enforced_by".format(limit))))
    warned = [w for w in j.get("warnings") or [] if w.startswith("--{} ".format(limit)) and "not enforced" in w]
    cell.check(warned, "{}: a warning says {} is not enforced ({})".format(what, limit, j.get("warnings")))
    if j.site.mode == "nest":
        # Slurm's job cgroup has the controller: leash wrote no limit there
        # (its Prolog's plan in mode nest), and the warning says that
        cell.check(warned and "mode nest" in warned[0] and "no controller" not in warned[0],
                   "{}: the warning says why: mode nest, not a missing controller ({})".format(what, warned))


# the batch step's cgroup, as the job itself reads it (mode nest: Slurm's
# job_N/step_batch, two levels above the task's leaf user/task_0)
STEP_CG = "d=/sys/fs/cgroup$(grep ^0:: /proc/self/cgroup | cut -d: -f3)/../..\n"


def memory(cell, site, helpers):
    """Mode own: no memory controller on the tier's host, and slurmstepd (not
    leash) starts the tasks, so no RLIMIT_AS either. Mode nest: leash writes
    no limit into Slurm's job cgroup. Either way the limit is not enforced."""
    alloc = os.path.join(helpers, "lh-alloc")
    for what, mib in (("over", 128), ("under", 16)):
        body = "{} {} 300\necho alloc_rc=$?\n".format(alloc, mib)
        if site.mode == "nest":
            body += STEP_CG + "echo step_peak=$(cat $d/memory.peak)\n"
        j = Job(site, "lim", script(site, "mem-" + what, body))
        common(cell, j, "ok", 0)
        cell.check(j.out.get("alloc_rc") == "0", "{}: the job touched its {} MiB (limit {} MiB): lh-alloc exit {}".format(
            what, mib, MEMORY_MIB, j.out.get("alloc_rc")))
        peak = j.get("usage.memory_peak_bytes")
        if site.mode == "nest":
            step = [s.get("memory_peak_bytes") for s in j.get("steps") or [] if s.get("step") == "batch"]
            truth = j.num("step_peak")
            cell.check(peak is not None and peak >= mib << 20 and step and truth is not None and step[0] >= truth,
                       "{}: usage.memory_peak_bytes {} >= the {} MiB touched; steps[batch] {} >= the step's"
                       " memory.peak {} read in the job".format(what, peak, mib, step, truth))
        else:
            cell.check(peak is None or peak >= mib << 20,
                       "{}: usage.memory_peak_bytes {} null or >= the {} MiB touched".format(what, peak, mib))
        not_enforced(cell, j, "memory", what)
    cell.weak = ("not enforced (no memory controller on this host; slurmstepd starts the tasks, so no RLIMIT_AS):"
                 " the report says none, with a warning") if site.mode == "own" else (
                 "not enforced by leash, which writes no limit into Slurm's job cgroup (Slurm's --mem is Slurm's,"
                 " by ConstrainRAMSpace): the report says none, with a warning that says why")


def pids(cell, site):
    for what, n in (("over", 2 * PIDS), ("under", PIDS // 4)):
        body = "for _ in $(seq {}); do sleep 2 & done\necho started=$(jobs -p | wc -l)\nwait\n".format(n)
        j = Job(site, "lim", script(site, "pids-" + what, body))
        common(cell, j, "ok", 0)
        cell.check(j.out.get("started") == str(n), "{}: the job started its {} processes (limit {}): {}".format(
            what, n, PIDS, j.out.get("started")))
        not_enforced(cell, j, "pids", what)
    cell.weak = "not enforced (no pids controller on this host): the report says none, with a warning" \
        if site.mode == "own" else ("not enforced by leash, which writes no limit into Slurm's job cgroup: the"
                                    " report says none, with a warning that says why")


def cpus(cell, site, helpers):
    """The job burns 1 s of CPU on one thread: where cpus = 0.1 were enforced
    (cpu.max) that would take 10 s of the job's own clock."""
    burner = os.path.join(helpers, "lh-children")
    for what, body in (("over", "echo bstart=$(date +%s.%N)\n{} 1 1000\necho bend=$(date +%s.%N)\n".format(burner)),
                       ("under", "sleep 1\n")):
        j = Job(site, "lim", script(site, "cpus-" + what, body))
        common(cell, j, "ok", 0)
        if what == "over":
            cpu, wall = j.num("tree_cpu_s"), j.clock("bstart", "bend")
            cell.check(cpu is not None and wall and cpu / wall > CPUS,
                       "over: the burner's own CPU {} s in {} s of the job's clock: more than {} of a core".format(
                           cpu, wall, CPUS))
        not_enforced(cell, j, "cpus", what)
    cell.weak = "not enforced (no cpu controller on this host): the report says none, with a warning" \
        if site.mode == "own" else ("not enforced by leash, which writes no limit into Slurm's job cgroup (Slurm's"
                                    " ConstrainCores is a cpuset of the cores asked, not cpu.max): the report says"
                                    " none, with a warning that says why")


CALLERS = {"own": "Slurm own (sbatch; Prolog, TaskProlog, Epilog)",
           "nest": "Slurm nest (Slurm's cgroup/v2, the SPANK plugin)"}
# each section holds one mode's column; the other's cells are in the other section
OTHER = {"own": "mode own is refused on this node, where Slurm's task/cgroup places the tasks (the report says"
                " setup_error: the same script proves it); its cells are the slurm section's (the slurm tier on the"
                " hybrid host)",
         "nest": "mode nest adopts the cgroups of Slurm's cgroup/v2 plugin, which needs cgroup2 at /sys/fs/cgroup"
                 " (this hybrid host has it at /sys/fs/cgroup/unified, with no controllers): its cells are the"
                 " slurm-nest section's (the systemd VM's real Slurm)"}
LIMITS = [("wall-time (profile)", "wall"), ("cpu-time (profile)", "cpu"), ("memory (profile)", "memory"),
          ("pids (profile)", "pids"), ("cpus (profile)", "cpus")]


def run(cell_class, helpers, tier="slurm"):
    """The cells: {(limit, caller): Cell}; (None, why) when the tier's cluster is not there."""
    if tier == "slurm-nest":
        site = nest_site()
        if not site:
            return None, "not run from tests/vm/systemd/30-slurm-cgroup-v2.sh (no SLURM_TRUTH_WORK and the rest)"
    else:
        d = os.environ.get("SLURM_TRUTH_DIR")
        if not d or not os.path.isdir(os.path.join(d, "reports")):
            return None, "not run from tests/slurm/run (no SLURM_TRUTH_DIR)"
        site = own_site(d)
    rows = {"wall": lambda c: wall_time(c, site), "cpu": lambda c: cpu_time(c, site, helpers),
            "memory": lambda c: memory(c, site, helpers), "pids": lambda c: pids(c, site),
            "cpus": lambda c: cpus(c, site, helpers)}
    cells = {}
    for limit, key in LIMITS:
        c = cells[(limit, site.mode)] = cell_class("{} / Slurm {}".format(limit.split(" ")[0], site.mode))
        rows[key](c)
    return cells, None


def section(tier, text, cells, why):
    mode = "nest" if tier == "slurm-nest" else "own"
    lines = ["<!-- truth:{} begin (generated: do not edit) -->".format(tier), "", "## {}".format(tier), "",
             text + ".", "", "| limit | " + " | ".join(CALLERS.values()) + " |", "| --- |" + " --- |" * len(CALLERS)]
    for limit, _ in LIMITS:
        row = []
        for caller in CALLERS:
            c = cells.get((limit, caller)) if cells else None
            if c:
                row.append(c.status())
            elif caller != mode:
                row.append("n/a: " + OTHER[caller])
            else:
                row.append("n/a: " + why)
        lines.append("| {} | {} |".format(limit, " | ".join(t.replace("|", "\\|") for t in row)))
    lines += ["", "<!-- truth:{} end -->".format(tier)]
    return "\n".join(lines) + "\n"
