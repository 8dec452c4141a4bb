#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The truth matrix (issue 39): for each limit x each placement this host
offers x each caller (the CLI; leash.limit in fork, spawn and forkserver; the
pynisher 1.x and 0.x and resource_monitor drop-ins where their originals have
the limit; libleash through tests/truth/lh-truth), one job that crosses the
limit and one that stays under it, each report checked against a ground
truth measured apart from leash:
  - CPU and wall time: this script's RUSAGE_CHILDREN and monotonic clock
    around the leash run (they hold leash's own share too: a bound the
    report's figure must stay below); for a call, the caller's around it, or
    the private parent's cpu.stat where that holds more (a killed job's
    orphans);
  - memory: what the job itself allocated and touched (lh-alloc), and whether
    its allocation was refused (its own exit status);
  - processes: how many children the job itself could start;
  - file size: the file's size on disk; open files: how many the job (or
    the function, in its own process) could open; RLIMIT_CORE: the job's own
    /proc/self/limits.
Each cell is "yes" (every statement true, enforced as asked), "weaker, and
says so" (enforced another way or not at all, and the report says how),
"n/a" with the reason, or "NO" (a failing check: a statement that did not
happen, or a weakness the report does not state). TAP on stdout, one line per check; --write FILE writes the table
(docs/TRUTH.md). Needs root (a cgroup of its own on this host; uid 65534 for
placement none) and the build tree: LEASH, HELPERS as make check sets them.

  LEASH=build/src/cli/leash HELPERS=build/tests/helpers tests/truth/matrix.py --write docs/TRUTH.md

--tier slurm runs the Slurm cells (tests/truth/slurm_cells.py) on the cluster
tests/slurm/run started (SLURM_TRUTH_DIR), --tier slurm-nest those of mode nest
on the systemd VM's (tests/vm/systemd/30-slurm-cgroup-v2.sh); without its
cluster a section is not compared.
"""
import difflib
import json
import re
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

LEASH = os.environ.get("LEASH", "")
HELPERS = os.environ.get("HELPERS", "")
PYTHONPATH = os.environ.get("LEASH_PYTHONPATH", "")  # the built package (make check sets it)
PY_WHY = "no LEASH_PYTHONPATH (the package is not built)"
_PKG = os.path.join(PYTHONPATH, "leash") if PYTHONPATH else ""
if PYTHONPATH and not (os.path.isdir(_PKG) and any(n.startswith("_leash.") for n in os.listdir(_PKG))):
    PYTHONPATH, PY_WHY = "", "the Python package is not built here"
if PYTHONPATH and os.environ.get("LEASH_SAN_CFLAGS"):
    PYTHONPATH, PY_WHY = "", "a sanitizer build (the interpreter would need its runtime preloaded)"
LH_TRUTH = os.path.join(HELPERS, "..", "truth", "lh-truth") if HELPERS else ""  # the libleash caller
NOBODY = 65534
N = 0
FAILED = 0


def tap(ok, desc, todo=None):
    """One TAP line; a known failure (todo: why, where it is tracked) is a
    TODO line, which does not fail the run."""
    global N, FAILED
    N += 1
    FAILED += not ok and not todo
    print("{} {} - {}{}".format("ok" if ok else "not ok", N, desc, " # TODO " + todo if todo and not ok else ""),
          flush=True)
    return ok


def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[sep + 1] == "cgroup2":
                return fields[4]
    return None


def as_env(placement, work):
    """The environment of a run as uid 65534: LEASH_CONFIG_DIR (make check's
    is in the build tree, which a package build's 0700 directory hides from
    that uid: leash refuses a configuration directory it cannot read) moved
    to a directory of the work tree that is not there; None as root."""
    if placement["uid"] is None:
        return None
    return dict(os.environ, LEASH_CONFIG_DIR=os.path.join(work, "no-such-config"))


class Run:
    """One leash run with its ground truth: wall (monotonic) and CPU
    (RUSAGE_CHILDREN) measured around it by this process."""

    def __init__(self, work, placement, args, argv, env=None, nproc=None):
        self.report_path = os.path.join(work, "r.json")
        if os.path.exists(self.report_path):
            os.unlink(self.report_path)
        cmd = [placement["leash"], "run", "-q", "-o", self.report_path] + placement["args"] + args + ["--"] + argv
        if placement["uid"] is not None:
            cmd = ["setpriv", "--reuid={}".format(NOBODY), "--regid={}".format(NOBODY), "--clear-groups"] + cmd
        r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
        p = subprocess.run(cmd, cwd=work, env=dict(as_env(placement, work) or os.environ, **(env or {})),
                           preexec_fn=(lambda: resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))) if nproc else None,
                           stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=300)
        self.wall = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        self.rc, self.out, self.err = p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        try:
            with open(self.report_path) as f:
                self.rep = json.load(f)
        except (OSError, ValueError):
            self.rep = {}

    def get(self, path):
        v = self.rep
        for k in path.split("."):
            v = v.get(k) if isinstance(v, dict) else None
        return v


class Cell:
    def __init__(self, name):
        self.name, self.checks, self.weak, self.na, self.known = name, [], None, None, None

    def check(self, ok, desc):
        self.checks.append((bool(ok), desc))
        tap(ok, "{}: {}".format(self.name, desc), self.known)

    def status(self):
        if self.na:
            return "n/a: " + self.na
        bad = [d for ok, d in self.checks if not ok]
        if bad and self.known:
            return "NO, a known lie: " + self.known
        if bad:
            return "NO: " + "; ".join(bad)
        return "weaker, and says so: " + self.weak if self.weak else "yes"


# --- the limits: each runs its over and under jobs and checks them ----------


def read_int(path):
    """What the job wrote there (its own count), -1 when it wrote nothing."""
    try:
        with open(path) as f:
            return int(f.read().strip() or -1)
    except (OSError, ValueError):
        return -1
    finally:
        if os.path.exists(path):
            os.unlink(path)


def enforced(run, limit):
    return run.get("limits.{}.enforced_by".format(limit))


def common(cell, run, limit):
    cell.check(run.rep, "a report was written (exit {}, stderr {!r})".format(run.rc, run.err[-200:]))
    cell.check(run.rep.get("exit", {}).get("code") == run.rc, "exit.code {} is leash's exit {}".format(
        run.get("exit.code"), run.rc))
    wall = run.get("usage.wall_time_s")
    cell.check(wall is not None and wall <= run.wall + 0.01, "wall_time_s {} within the measured {:.3f} s".format(
        wall, run.wall))
    cpu = run.get("usage.cpu_time_s")
    cell.check(cpu is not None and cpu <= run.cpu + 0.02,
               "cpu_time_s {} within the CPU measured around leash ({:.3f} s, leash's own share in it)".format(
                   cpu, run.cpu))


def memory(cell, p):
    over = Run(p["work"], p, ["-m", "64M"], [p["helpers"] + "/lh-alloc", "200"])
    common(cell, over, "memory")
    by = enforced(over, "memory")
    if by == "cgroup":
        cell.check(over.get("reason") == "memory" and over.rc == 137, "over: reason memory, exit 137 ({}, {})".format(
            over.get("reason"), over.rc))
    else:
        cell.check(by == "rlimit", "enforced_by rlimit without a memory controller ({})".format(by))
        cell.check(over.rc == 3 and over.get("reason") == "exit",
                   "over: the allocation was refused (the job's own status 3), reason exit ({}, {})".format(
                       over.rc, over.get("reason")))
        cell.check("RLIMIT_AS" in (over.get("likely_cause") or ""), "over: likely_cause names RLIMIT_AS")
        cell.check("RLIMIT_AS" in (over.get("limits.memory.note") or ""), "the limit's note says RLIMIT_AS")
        cell.weak = "RLIMIT_AS per process (address space), not the tree's memory"
    under = Run(p["work"], p, ["-m", "256M"], [p["helpers"] + "/lh-alloc", "32"])
    common(cell, under, "memory")
    cell.check(under.rc == 0 and under.get("reason") == "ok", "under: ok ({}, {})".format(under.rc, under.get("reason")))
    peak = under.get("usage.memory_peak_bytes")
    cell.check(peak is None or peak >= 32 << 20,
               "under: memory_peak_bytes {} ({}) at least the 32 MiB the job touched".format(
                   peak, under.get("usage.memory_peak_basis")))


def pids(cell, p):
    # the job starts 20 sleepers and says how many it could start
    script = 'n=0; for i in $(seq 20); do sleep 30 & [ $? = 0 ] && n=$((n+1)); done; echo $n >started; kill $(jobs -p) 2>/dev/null; exit 0'
    over = Run(p["work"], p, ["--pids", "8"], ["sh", "-c", script])
    common(cell, over, "pids")
    started = read_int(os.path.join(p["work"], "started"))
    by = enforced(over, "pids")
    if by == "cgroup":
        cell.check(started < 20, "over: pids.max refused forks (the job started {} of 20)".format(started))
        cell.check((over.get("usage.pids_max_events") or 0) > 0, "over: pids_max_events counts the refusals")
    else:
        cell.check(by == "none", "enforced_by none without a pids controller ({})".format(by))
        cell.check(started == 20, "over: nothing refused a fork (the job started {} of 20)".format(started))
        cell.check(over.get("limits.pids.note") and over.get("warnings"), "the note and a warning say it is not enforced")
        cell.weak = "not enforced (no pids controller; RLIMIT_NPROC counts the whole user): the report says none"
    under = Run(p["work"], p, ["--pids", "64"], ["sh", "-c", "sleep 0.1 & sleep 0.1 & wait"])
    common(cell, under, "pids")
    cell.check(under.rc == 0 and under.get("reason") == "ok", "under: ok")


def cpu_time(cell, p):
    over = Run(p["work"], p, ["-t", "1s"], [p["helpers"] + "/lh-spin", "30"])
    common(cell, over, "cpu_time")
    cell.check(over.get("reason") == "cpu_time" and over.rc == 124, "over: reason cpu_time, exit 124 ({}, {})".format(
        over.get("reason"), over.rc))
    cell.check(over.cpu >= 1.0, "over: the CPU measured around it reached the limit ({:.3f} s)".format(over.cpu))
    cell.check((over.get("usage.cpu_time_s") or 0) >= 1.0, "over: cpu_time_s {} at the limit".format(
        over.get("usage.cpu_time_s")))
    sig = (over.get("signals") or [{}])[0]
    cell.check(sig.get("why") == "cpu_time", "over: the first signal is leash's, for cpu_time ({})".format(sig))
    under = Run(p["work"], p, ["-t", "30s"], [p["helpers"] + "/lh-spin", "0.2"])
    common(cell, under, "cpu_time")
    cell.check(under.rc == 0 and under.get("reason") == "ok", "under: ok")


def wall_time(cell, p):
    over = Run(p["work"], p, ["-w", "1s"], ["sleep", "30"])
    common(cell, over, "wall_time")
    cell.check(over.get("reason") == "wall_time" and over.rc == 124, "over: reason wall_time, exit 124 ({}, {})".format(
        over.get("reason"), over.rc))
    cell.check(over.wall >= 1.0 and (over.get("usage.wall_time_s") or 0) >= 1.0,
               "over: measured {:.3f} s, reported {} s, both at least the limit".format(
                   over.wall, over.get("usage.wall_time_s")))
    under = Run(p["work"], p, ["-w", "30s"], ["sleep", "0.1"])
    common(cell, under, "wall_time")
    cell.check(under.rc == 0 and under.get("reason") == "ok", "under: ok")


def fsize(cell, p):
    f = os.path.join(p["work"], "big")
    over = Run(p["work"], p, ["--fsize", "1M"], ["dd", "if=/dev/zero", "of=" + f, "bs=64K", "count=64"])
    common(cell, over, "fsize")
    size = os.path.getsize(f) if os.path.exists(f) else -1
    cell.check(size == 1 << 20, "over: the file on disk stopped at the limit ({} bytes)".format(size))
    cell.check(over.get("reason") == "fsize" and over.rc == 153, "over: reason fsize, exit 153 ({}, {})".format(
        over.get("reason"), over.rc))
    under = Run(p["work"], p, ["--fsize", "1M"], ["dd", "if=/dev/zero", "of=" + f, "bs=64K", "count=8"])
    common(cell, under, "fsize")
    size = os.path.getsize(f) if os.path.exists(f) else -1
    cell.check(size == 8 * 65536 and under.get("reason") == "ok", "under: 512 KiB written, ok ({}, {})".format(
        size, under.get("reason")))
    os.unlink(f)


def nofile(cell, p):
    code = ("import os\nfds = []\ntry:\n    while len(fds) < 64:\n        fds.append(os.open('/dev/null', os.O_RDONLY))\n"
            "except OSError:\n    pass\nn = len(fds)\nfor fd in fds:\n    os.close(fd)\n"
            "open('opened', 'w').write(str(n))\nraise SystemExit(0 if n == 64 else 1)")
    over = Run(p["work"], p, ["--nofile", "16"], ["/usr/bin/python3", "-c", code])
    common(cell, over, "nofile")
    opened = read_int(os.path.join(p["work"], "opened"))
    cell.check(opened < 16, "over: the job could open {} more files, fewer than 16".format(opened))
    cell.check(over.get("reason") == "exit" and over.rc == 1 and enforced(over, "nofile") == "rlimit",
               "over: reason exit, the job's own status 1, enforced_by rlimit")
    under = Run(p["work"], p, ["--nofile", "256"], ["/usr/bin/python3", "-c", code])
    common(cell, under, "nofile")
    opened = read_int(os.path.join(p["work"], "opened"))
    cell.check(opened == 64 and under.rc == 0 and under.get("reason") == "ok",
               "under: the job opened all 64 ({}), ok".format(opened))


# --- the Python callers: leash.limit (fork, spawn, forkserver), the pynisher
# drop-in (1.x Pynisher/limit, 0.x enforce_limits), resource_monitor's
# monitored; each call in a Python caller of its own (a file: spawn imports
# the caller's script) -------------------------------------------------------

DRIVER = r"""
import json, os, resource, signal, subprocess, sys, time


def spin(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass


def touch(mib):
    b = bytearray(mib << 20)
    for i in range(0, len(b), 4096):
        b[i] = 1
    return b


def job(kind, arg):
    # what the function found is its return value (a count, an errno, a
    # shell's status), or a file of the working directory (big, limits)
    if kind == "alloc":
        return len(touch(arg))
    if kind == "hold":
        b = touch(arg[0])
        time.sleep(arg[1])
        return len(b)
    if kind == "sleep":
        time.sleep(arg)
        return 0
    if kind == "write":  # SIGXFSZ is ignored in Python: a write past fsize raises EFBIG
        with open("big", "wb") as f:
            for _ in range(arg >> 16):
                f.write(bytes(65536))
        return arg
    if kind == "open":
        fds = []
        try:
            while len(fds) < arg:
                fds.append(os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            pass
        for fd in fds:
            os.close(fd)
        return len(fds)
    if kind == "dev":
        try:
            os.close(os.open("/dev/null", os.O_RDONLY | os.O_CLOEXEC))
            return 0
        except OSError as e:
            return e.errno
    if kind == "core":
        with open("/proc/self/limits") as f, open("limits", "w") as out:
            out.write("".join(line for line in f if line.startswith("Max core")))
        if arg:
            os.kill(os.getpid(), signal.SIGSEGV)
        return 0
    if kind == "cpus":
        w = time.monotonic()
        spin(1)
        return int((time.monotonic() - w) * 1000)
    if kind == "sh":
        return subprocess.run(["sh", "-c", arg]).returncode
    if kind == "system":  # waits for its child through its own alarm's exception (py_nested)
        return os.waitstatus_to_exitcode(os.system(arg))
    spin(arg)
    return 0


def limited(spec, caller, lim):
    import leash
    if caller in leash.contexts:
        lf = leash.limit(job, context=caller, **lim)
        return lf, lambda: lf.last_report
    import pynisher
    if caller == "pynisher":
        pn = pynisher.limit(job, **lim)
        return pn, lambda: pn.report
    names = {"wall_time": "wall_time_in_s", "cpu_time": "cpu_time_in_s", "pids": "num_processes",
             "grace": "grace_period_in_s"}
    w = pynisher.enforce_limits(**{names[k]: v for k, v in lim.items()})(job)
    return w, lambda: w.report


def call(spec, kind, arg):
    import leash
    caller, lim = spec["caller"], spec["limits"]
    if spec["parent"]:
        leash.configure(cgroup_parent=spec["parent"])
    out = {"value": None, "exc": None, "msg": None, "report": None, "resources": None}
    if caller == "monitored":
        try:
            out["value"], out["resources"] = leash.monitored(limits=lim, interval=0.5, **spec["options"])(job)(kind, arg)
        except leash.ResourceExhaustion as e:
            out.update(exc=type(e).__name__, msg=str(e), report=e.report, resources=e.resources)
        except Exception as e:
            out.update(exc=type(e).__name__, msg=str(e))
        return out
    try:
        f, report = limited(spec, caller, dict(lim, **spec["options"]))
    except Exception as e:
        return dict(out, exc=type(e).__name__, msg=str(e))
    try:
        out["value"] = f(kind, arg)
    except Exception as e:
        out.update(exc=type(e).__name__, msg=str(e))
    out["report"] = report()
    if caller == "pynisher0":
        out["exc"] = getattr(f.exit_status, "__name__", None)
    return out


if __name__ == "__main__":
    spec = json.loads(sys.argv[1])
    hold = bytearray(spec["hold_mb"] << 20)
    for i in range(0, len(hold), 4096):
        hold[i] = 1
    with open("/proc/self/status") as f:
        rss = [int(line.split()[1]) << 10 for line in f if line.startswith("VmRSS:")][0]
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    out = call(spec, spec["kind"], spec["arg"])
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps(dict(out, wall=wall, rss=rss, cpu=r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)))
"""

# caller: (column heading, its wall-time and CPU-time exceptions)
CALLERS = {
    "fork": ("Python fork", "WallTimeLimitExceeded", "CpuTimeLimitExceeded"),
    "spawn": ("Python spawn", "WallTimeLimitExceeded", "CpuTimeLimitExceeded"),
    "forkserver": ("Python forkserver", "WallTimeLimitExceeded", "CpuTimeLimitExceeded"),
    "pynisher": ("pynisher 1.x limit", "WallTimeoutException", "CpuTimeoutException"),
    "pynisher0": ("pynisher 0.x enforce_limits", "TimeoutException", "CpuTimeoutException"),
    "monitored": ("leash.monitored", "ResourceExhaustion", "ResourceExhaustion"),
    "libleash": ("libleash (C, leash_job_fork)", None, None),
}


def nproc_limit(nproc):
    """A preexec_fn that sets RLIMIT_NPROC (the fork bomb's bound), or None."""
    return (lambda: resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))) if nproc else None


def cg_usage(p):
    """The CPU seconds of every job ever under the placement's parent (the
    private parent, or leash.slice for the scopes) with the directory's inode
    (a slice made again starts at 0): its cpu.stat, which cgroup2 keeps
    without controllers and into which a removed child's usage is folded;
    None without one."""
    try:
        with open(os.path.join(p["cpu_cg"], "cpu.stat")) as f:
            return int(f.read().split("usage_usec")[1].split()[0]) / 1e6, os.stat(p["cpu_cg"]).st_ino
    except (OSError, IndexError, ValueError, TypeError):
        return None


def job_cpu(p, before, measured):
    """The call's CPU ground truth: the caller's RUSAGE_CHILDREN, or, where
    more, the parent's cpu.stat around the call (it holds the CPU of the job's
    orphans, which are reaped out of the caller's sight when no holder is
    their subreaper; only this matrix's jobs run there)."""
    after = cg_usage(p) if p["cpu_cg"] else None
    if before is None or after is None or before[1] != after[1]:
        return measured
    return max(measured, after[0] - before[0])


class PyRun(Run):
    """One call in a Python caller of its own, its ground truth (wall,
    RUSAGE_CHILDREN, its own resident memory before the call) measured by
    that caller around the call. ``options``: keywords beside the limits
    (``sample_disk``), ``env``: the caller's environment's additions."""

    def __init__(self, p, caller, limits, kind, arg, hold_mb=0, options=None, env=None, nproc=None):
        spec = {"parent": p["parent"], "caller": caller, "limits": limits, "kind": kind, "arg": arg,
                "hold_mb": hold_mb, "options": options or {}}
        cmd = ["/usr/bin/python3", p["driver"], json.dumps(spec)]
        if p["uid"] is not None:
            cmd = ["setpriv", "--reuid={}".format(NOBODY), "--regid={}".format(NOBODY), "--clear-groups"] + cmd
        env = dict(as_env(p, p["work"]) or os.environ, PYTHONPATH=p["pythonpath"], **(env or {}))
        cg0 = cg_usage(p) if p["cpu_cg"] else None
        q = subprocess.run(cmd, cwd=p["work"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                           preexec_fn=nproc_limit(nproc))
        self.rc, self.err = q.returncode, q.stderr.decode(errors="replace")
        try:
            d = json.loads(q.stdout.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            d = {}
        self.rep, self.value, self.exc = d.get("report") or {}, d.get("value"), d.get("exc")
        self.msg, self.res, self.rss = d.get("msg") or "", d.get("resources") or {}, d.get("rss", 0)
        self.wall, self.cpu = d.get("wall", 0.0), job_cpu(p, cg0, d.get("cpu", 0.0))


def lib_setting(key, value):
    """leash.limit's keyword and value -> libleash's KEY=VALUE (seconds as durations)."""
    key = key.replace("_", "-")
    if key in ("wall-time", "cpu-time", "grace") and not isinstance(value, str):
        return "{}={}s".format(key, value)
    return "{}={}".format(key, value)


class LibRun(Run):
    """One C function forked into a libleash job by tests/truth/lh-truth,
    which measures the wall and its children's CPU time around the call;
    what the function found is in ./value (read_int)."""

    def __init__(self, p, limits, kind, arg, hold_mb=0, options=None, env=None, nproc=None):
        sets = [lib_setting(k, v) for k, v in dict(limits, **(options or {})).items()]
        text = "{}:{}".format(*arg) if isinstance(arg, list) else str(arg)
        cmd = [p["lhtruth"], p["parent"] or "-", str(hold_mb), kind, text] + sets
        if p["uid"] is not None:
            cmd = ["setpriv", "--reuid={}".format(NOBODY), "--regid={}".format(NOBODY), "--clear-groups"] + cmd
        env = dict(as_env(p, p["work"]) or os.environ, **(env or {}))
        if p["uid"] is not None:  # uid 65534: libleash.so.0 from the copies beside lh-truth
            env["LD_LIBRARY_PATH"] = os.path.dirname(p["lhtruth"])
        cg0 = cg_usage(p) if p["cpu_cg"] else None
        q = subprocess.run(cmd, cwd=p["work"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=300, preexec_fn=nproc_limit(nproc))
        self.rc, self.err = q.returncode, q.stderr.decode(errors="replace")
        try:
            self.rep = json.loads(q.stdout.decode())
        except ValueError:
            self.rep = {}
        m = re.search(r"^truth wall=([0-9.]+) cpu=([0-9.]+)$", self.err, re.M)
        self.wall, self.cpu = (float(m.group(1)), job_cpu(p, cg0, float(m.group(2)))) if m else (0.0, 0.0)
        self.res, self.exc, self.msg, self.rss = {}, None, self.err, 0
        found = read_int(os.path.join(p["work"], "value"))
        # the function's exit 0 is its return: it touched what it was asked to
        if self.get("exit.status") != 0:
            self.value = None
        elif found >= 0:
            self.value = found
        else:
            self.value = arg << 20 if kind == "alloc" else arg[0] << 20 if kind == "hold" else 0


def call(p, caller, limits, kind, arg, hold_mb=0, **kw):
    if caller == "libleash":
        return LibRun(p, limits, kind, arg, hold_mb, **kw)
    return PyRun(p, caller, limits, kind, arg, hold_mb, **kw)


def py_common(cell, run):
    """The report's times (resource_monitor's resources where the caller
    hands back no report: monitored's returned call) against the truth."""
    if run.rep:
        wall, cpu, what = run.get("usage.wall_time_s"), run.get("usage.cpu_time_s"), "report"
    else:
        wall, cpu, what = run.res.get("wall_time"), run.res.get("cpu_time"), "resources"
    cell.check(run.rep or run.res, "a report or resources (caller exit {}, stderr {!r})".format(run.rc, run.err[-300:]))
    cell.check(wall is not None and wall <= run.wall + 0.01, "{} wall time {} within the call's measured {:.3f} s".format(
        what, wall, run.wall))
    cell.check(cpu is not None and cpu <= run.cpu + 0.02, "{} CPU time {} within the job's measured {:.3f} s".format(
        what, cpu, run.cpu))


def py_memory_figure(cell, got, basis, what, note, sampled_note=False):
    """A call's memory (bytes) against the 32 MiB it touched in a caller
    holding 400 MB: exact (memory.peak) at least 32 MiB; the largest sample
    (no memory controller: taken every interval, perhaps mid-call) a lower
    bound above 0, which the basis says (and, with sampled_note, the note:
    monitored's resources carry no basis); none at all with the reason.
    Never the caller's 400 MB. True where the figure is weaker than exact
    (none, or sampled)."""
    if got is None:
        cell.check(note, "{}: none, and the report says why".format(what))
        return True
    if basis and basis.startswith("sampled"):
        cell.check(0 < got < 400 << 20, "{} {} ({}): a lower bound, the call's and never the 400 MB caller's".format(
            what, got, basis))
        if sampled_note:
            cell.check("lower bound" in (note or ""), "{}: its note says it is a lower bound ({!r})".format(what, note))
        return True
    cell.check(32 << 20 <= got < 400 << 20, "{} {} ({}): the call's, never the 400 MB caller's".format(
        what, got, basis))
    return False


def py_memory(cell, p, caller):
    # the caller holds 400 MB; the call touches 32 MiB: no figure may be the caller's
    under = call(p, caller, {"wall_time": 30}, "alloc", 32, hold_mb=400)
    py_common(cell, under)
    cell.check(under.value == 32 << 20, "the call returned its 32 MiB ({}, {})".format(under.value, under.exc))
    if not under.rep:
        # monitored's resources: 0.0 MB here before issue 39's fix (the one
        # sample, after the call, summed no process)
        mb = under.res.get("memory")
        basis = ((under.res.get("report") or {}).get("usage") or {}).get("memory_peak_basis")
        got = None if mb is None else mb * (1 << 20)
        if py_memory_figure(cell, got, basis, "resources memory", under.res.get("memory_note"), True):
            cell.weak = ("without a memory controller a call's memory is None, or the largest sample's "
                         "(a lower bound), and memory_note says which")
        return
    peak, basis = under.get("usage.memory_peak_bytes"), under.get("usage.memory_peak_basis")
    if py_memory_figure(cell, peak, basis, "memory_peak_bytes", under.get("usage.memory_peak_note")):
        cell.weak = ("without a memory controller a call's peak is null, or the largest sample's "
                     "(a lower bound), and the report says which")
    maxrss = under.get("usage.main_process.maxrss_bytes")
    cell.check(maxrss is None or maxrss < 400 << 20, "main_process.maxrss_bytes is not the caller's")


def py_wall_time(cell, p, caller):
    want = CALLERS[caller][1]
    over = call(p, caller, {"wall_time": 1}, "sleep", 30)
    py_common(cell, over)
    cell.check(over.exc == want and over.get("reason") == "wall_time",
               "over: {}, reason wall_time ({}, {})".format(want, over.exc, over.get("reason")))
    cell.check(over.wall >= 1.0, "over: the call took at least the limit ({:.3f} s)".format(over.wall))
    under = call(p, caller, {"wall_time": 30}, "sleep", 0.1)
    py_common(cell, under)
    cell.check(under.exc is None and under.value == 0, "under: returned ({}, {})".format(under.value, under.exc))
    cell.check(not under.rep or under.get("reason") == "ok", "under: reason ok where there is a report")


def py_cpu_time(cell, p, caller):
    want = CALLERS[caller][2]
    over = call(p, caller, {"cpu_time": 1, "wall_time": 120}, "spin", 30)
    py_common(cell, over)
    cell.check(over.exc == want and over.get("reason") == "cpu_time",
               "over: {}, reason cpu_time ({}, {})".format(want, over.exc, over.get("reason")))
    cell.check(over.cpu >= 1.0 and (over.get("usage.cpu_time_s") or 0) >= 1.0,
               "over: measured {:.3f} s, reported {} s, both at least the limit".format(
                   over.cpu, over.get("usage.cpu_time_s")))
    under = call(p, caller, {"cpu_time": 30}, "spin", 0.2)
    py_common(cell, under)
    cell.check(under.exc is None and under.value == 0, "under: returned ({}, {})".format(under.value, under.exc))
    cell.check(not under.rep or under.get("reason") == "ok", "under: reason ok where there is a report")



def inner_held(cell, over, inner, said):
    """An outer limit over a leash inside the job: the inner leash wrote its
    report (reason interrupted) with its job's own status 7, which the job
    wrote itself (said), and the outer killed nothing."""
    try:
        with open(inner) as f:
            rep = json.load(f)
        os.unlink(inner)
    except (OSError, ValueError):
        rep = {}
    cell.check(rep.get("reason") == "interrupted", "over: the inner leash wrote its report, reason interrupted ({})"
               .format(rep.get("reason")))
    cell.check(read_int(said) == 7 and (rep.get("exit") or {}).get("status") == 7,
               "over: the inner job's own status 7 is in the inner report")
    sigs = [x.get("signal") for x in over.get("signals") or []]
    cell.check("KILL" not in sigs and over.get("usage.leftovers_killed") == 0,
               "over: the outer killed nothing ({}), no leftover".format(sigs))


def nested(cell, p):
    # a leash inside the job: the outer's wall-time limit fires, the inner
    # leash passes the signal on, its job takes a moment of the grace and
    # says so itself (a file), the inner report is written and kept
    inner = os.path.join(p["work"], "inner.json")
    said = os.path.join(p["work"], "said")
    job = "trap 'sleep 0.5; echo 7 >said; exit 7' XCPU; while :; do sleep 0.1; done"
    over = Run(p["work"], p, ["-w", "1s", "-g", "30s"],
               ["sh", "-c", "'{}' run -q -o '{}' -- sh -c \"{}\"".format(p["leash"], inner, job)])
    common(cell, over, "wall_time")
    cell.check(over.get("reason") == "wall_time" and over.rc == 124, "over: outer reason wall_time, exit 124")
    inner_held(cell, over, inner, said)
    under = Run(p["work"], p, ["-w", "30s"], ["sh", "-c", "'{}' run -q -o '{}' -- true".format(p["leash"], inner)])
    common(cell, under, "wall_time")
    cell.check(under.rc == 0 and under.get("reason") == "ok" and os.path.exists(inner), "under: both ok, both reports")
    if os.path.exists(inner):
        os.unlink(inner)


def not_enforced(cell, run, limit, why):
    """A limit the tier cannot enforce: the report says none, with a note and a warning."""
    cell.check(enforced(run, limit) == "none", "enforced_by none ({})".format(enforced(run, limit)))
    cell.check(run.get("limits.{}.note".format(limit)) and any(
        ("--" + limit.replace("_", "-")) in w for w in run.get("warnings") or []),
        "the note and a warning say it is not enforced")
    cell.weak = why


def memory_high(cell, p):
    # memory.high throttles, never kills: the job touches 64 MiB over 32M; throttled, it ends by
    # itself or by the wall limit that bounds this run, never by memory (without swap to reclaim
    # to, the VM tier's throttle took 41 s, the systemd VM's 122 s for 36 MiB)
    over = Run(p["work"], p, ["--memory-high", "32M", "-w", "5s"], [p["helpers"] + "/lh-alloc", "64"])
    common(cell, over, "memory_high")
    cell.check((over.rc, over.get("reason")) in ((0, "ok"), (124, "wall_time")) and not over.get("usage.oom_kills"),
               "over: throttled or not, never killed for memory: ok, or the run's wall limit ({}, {}, oom_kills {})".format(
                   over.rc, over.get("reason"), over.get("usage.oom_kills")))
    if enforced(over, "memory_high") == "cgroup":
        cell.check((over.get("usage.memory_high_events") or 0) > 0, "over: memory_high_events counts the throttling")
    else:
        not_enforced(cell, over, "memory_high", "not enforced (no memory controller): the report says none")
    under = Run(p["work"], p, ["--memory-high", "256M"], [p["helpers"] + "/lh-alloc", "32"])
    common(cell, under, "memory_high")
    cell.check(under.rc == 0 and under.get("reason") == "ok", "under: ok")
    cell.check(not under.get("usage.memory_high_events"), "under: no memory_high_events")


def cpus(cell, p):
    # 1 s of CPU under 0.5 cores takes at least 2 s less one 100 ms period where cpu.max holds it:
    # the job's own clocks (its CPU time, and the wall time it took) are the truth
    code = ("import time\nc, w = time.process_time(), time.monotonic()\nwhile time.process_time() - c < 1:\n    pass\n"
            "open('took', 'w').write(str(int((time.monotonic() - w) * 1000)))")
    over = Run(p["work"], p, ["--cpus", "0.5"], ["/usr/bin/python3", "-c", code])
    common(cell, over, "cpus")
    took = read_int(os.path.join(p["work"], "took"))
    cell.check(over.rc == 0 and over.get("reason") == "ok", "over: the spinner ends ok ({}, {})".format(
        over.rc, over.get("reason")))
    if enforced(over, "cpus") == "cgroup":
        cell.check(took >= 1900, "over: 1 s of the job's CPU took {} ms of its wall time at 0.5 cores".format(took))
        cell.check((over.get("usage.cpu_throttled_periods") or 0) > 0, "over: cpu_throttled_periods counts it")
    else:
        not_enforced(cell, over, "cpus", "not enforced (no cpu controller): the report says none")
    under = Run(p["work"], p, ["--cpus", "2"], [p["helpers"] + "/lh-spin", "0.2"])
    common(cell, under, "cpus")
    cell.check(under.rc == 0 and under.get("reason") == "ok", "under: ok")


def core(cell, p):
    # the job's own RLIMIT_CORE (its /proc/self/limits) is the truth; a crash under 0 claims no core
    script = "grep 'Max core' /proc/self/limits >limits; kill -SEGV $$"
    over = Run(p["work"], p, ["--core", "0"], ["sh", "-c", script])
    common(cell, over, "core")
    with open(os.path.join(p["work"], "limits")) as f:
        lim = f.read().split()
    cell.check(lim[4:6] == ["0", "0"], "over: the job's RLIMIT_CORE is 0 soft and hard ({})".format(lim[4:6]))
    cell.check(over.get("reason") == "signal" and over.get("exit.signal") == "SEGV" and over.rc == 139,
               "over: reason signal, SEGV, exit 139 ({}, {}, {})".format(over.get("reason"), over.get("exit.signal"),
                                                                         over.rc))
    cell.check(enforced(over, "core") == "rlimit", "enforced_by rlimit ({})".format(enforced(over, "core")))
    under = Run(p["work"], p, ["--core", "1M"], ["sh", "-c", "grep 'Max core' /proc/self/limits >limits"])
    common(cell, under, "core")
    with open(os.path.join(p["work"], "limits")) as f:
        lim = f.read().split()
    os.unlink(os.path.join(p["work"], "limits"))
    cell.check(lim[4] == "1048576" and under.get("reason") == "ok", "under: the job's soft RLIMIT_CORE is 1 MiB, ok")


def devices(cell, p):
    # the job's own open(2) of /dev/null is the truth
    script = "cat /dev/null 2>err; echo $? >opened; rm -f err"
    over = Run(p["work"], p, ["--devices", "none"], ["sh", "-c", script])
    opened = read_int(os.path.join(p["work"], "opened"))
    if p["uid"] is not None:
        cell.check(over.rc == 125 and "--devices" in over.err and opened == -1,
                   "refused before the job starts, exit 125, naming --devices ({}, {!r})".format(over.rc, over.err[-120:]))
        cell.weak = "refused: a device program needs a cgroup (exit 125, one line naming --devices)"
        return
    common(cell, over, "devices")
    cell.check(opened == 1, "over: the job could not open /dev/null (cat's status {})".format(opened))
    cell.check(enforced(over, "devices") == "cgroup device program", "enforced_by the cgroup device program")
    under = Run(p["work"], p, ["--devices", "/dev/null rw"], ["sh", "-c", script])
    common(cell, under, "devices")
    cell.check(read_int(os.path.join(p["work"], "opened")) == 0 and under.get("reason") == "ok",
               "under: /dev/null allowed, the job opened it, ok")


def limit_procs(cell, p):
    # the job starts 6 sleepers and says so: more processes than the sampled limit of 3
    # (a line before each sleeper: the sample may end the job before it starts the sixth, as
    # in the systemd VM, so its count is a bound of what it held, its shell with them)
    script = "for i in 1 2 3 4 5 6; do echo >>started; sleep 30 & done; wait"
    over = Run(p["work"], p, ["--limit", "procs=3", "--sample", "100ms"], ["sh", "-c", script])
    common(cell, over, "procs")
    try:
        with open(os.path.join(p["work"], "started")) as f:
            held = 1 + len(f.readlines())
        os.unlink(os.path.join(p["work"], "started"))
    except OSError:
        held = -1
    cell.check(held > 3, "over: the job held more than 3 processes ({}, its own count)".format(held))
    cell.check(over.get("reason") == "procs" and enforced(over, "procs") == "sampling",
               "over: reason procs, enforced_by sampling ({}, {})".format(over.get("reason"), enforced(over, "procs")))
    seen = over.get("sampling.limit_reached.value") or 0
    cell.check(3 < seen <= held, "over: the figure seen ({}) passed 3 and was no more than the job held ({})".format(
        seen, held))
    cell.check(over.get("limits.procs.note"), "the note says it is sampled (up to one interval late)")
    cell.weak = "sampled every 100 ms (the note says up to one interval late), not refused"
    under = Run(p["work"], p, ["--limit", "procs=50", "--sample", "100ms"], ["sh", "-c", "sleep 0.3 & sleep 0.3; wait"])
    common(cell, under, "procs")
    cell.check(under.rc == 0 and under.get("reason") == "ok", "under: ok")


def swap(cell, p):
    # no swap can be forced here: the truth is the kernel's file of the job's own cgroup, read by the job
    script = 'cat "/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup)/memory.swap.max" >swapmax 2>/dev/null; exit 0'
    over = Run(p["work"], p, ["--swap", "0"], ["sh", "-c", script])
    common(cell, over, "swap")
    try:
        with open(os.path.join(p["work"], "swapmax")) as f:
            seen = f.read().strip()
        os.unlink(os.path.join(p["work"], "swapmax"))
    except OSError:
        seen = None
    if enforced(over, "swap") == "cgroup":
        cell.check(seen == "0", "the job's cgroup's memory.swap.max, read by the job, is 0 ({})".format(seen))
    else:
        not_enforced(cell, over, "swap", "not enforced (no memory controller): the report says none")
    cell.check(over.rc == 0 and over.get("reason") == "ok", "the job ends ok")


def limit_memory(cell, p):
    # the job touches 200 MiB and holds it: more than the sampled limit of 64M
    over = Run(p["work"], p, ["--limit", "memory=64M", "--sample", "100ms"], [p["helpers"] + "/lh-alloc", "200", "30000"])
    common(cell, over, "memory")
    cell.check(over.get("reason") == "memory" and enforced(over, "memory") == "sampling",
               "over: reason memory, enforced_by sampling ({}, {})".format(over.get("reason"), enforced(over, "memory")))
    seen = over.get("sampling.limit_reached.value") or 0
    cell.check(64 << 20 < seen <= 210 << 20, "over: the figure seen ({}) passed 64 MiB, at most the 200 MiB touched"
               " and the helper's own pages".format(seen))
    cell.check(over.wall < 25, "over: ended before the 30 s hold ({:.3f} s)".format(over.wall))
    cell.weak = "sampled every 100 ms (the note says up to one interval late), not refused"
    under = Run(p["work"], p, ["--limit", "memory=256M", "--sample", "100ms"], [p["helpers"] + "/lh-alloc", "16", "300"])
    common(cell, under, "memory")
    cell.check(under.rc == 0 and under.get("reason") == "ok", "under: ok")


def limit_disk(cell, p):
    # what the job wrote under the sampled directory, as the file's size on disk
    d = os.path.join(p["work"], "disk")
    os.mkdir(d)
    if p["uid"] is not None:
        os.chown(d, p["uid"], p["uid"])
    try:
        over = Run(p["work"], p, ["--limit", "disk=1M", "--sample", "100ms", "--sample-disk", d],
                   ["sh", "-c", "dd if=/dev/zero of=disk/f bs=1M count=4 2>/dev/null; sleep 30"])
        common(cell, over, "disk")
        size = os.path.getsize(os.path.join(d, "f")) if os.path.exists(os.path.join(d, "f")) else -1
        cell.check(size == 4 << 20, "over: the job wrote 4 MiB ({} bytes on disk)".format(size))
        cell.check(over.get("reason") == "disk" and enforced(over, "disk") == "sampling",
                   "over: reason disk, enforced_by sampling ({}, {})".format(over.get("reason"), enforced(over, "disk")))
        seen = over.get("sampling.limit_reached.value") or 0
        cell.check(1 << 20 < seen <= 5 << 20, "over: the figure seen ({}) passed 1 MiB, near what was written".format(seen))
        cell.weak = "sampled every 100 ms (the note says up to one interval late), not refused"
        under = Run(p["work"], p, ["--limit", "disk=8M", "--sample", "100ms", "--sample-disk", d],
                    ["sh", "-c", "dd if=/dev/zero of=disk/f bs=64K count=4 2>/dev/null"])
        common(cell, under, "disk")
        cell.check(under.rc == 0 and under.get("reason") == "ok", "under: 256 KiB written, ok")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def nvml_standin(cell, p):
    """The stand-in NVML's script (the job appends its pid and bytes), the
    environment that names it and the library, and the job's shell text
    (bytes, seconds held); (None, None, None) and the cell n/a without it."""
    lib = os.path.join(p["helpers"], "libnvml-standin.so")
    if not os.path.exists(lib):
        cell.na = "no stand-in NVML (make check builds tests/helpers/libnvml-standin.so)"
        return None, None, None
    script = os.path.join(p["work"], "nvml")
    env = {"LEASH_NVML_LIBRARY": lib, "LEASH_NVML_STANDIN": script}
    return script, env, 'printf "proc 0 $$ {} 0\\n" >>"$LEASH_NVML_STANDIN"; sleep {}'


def nvml_reset(p, script):
    """The script as before a run: one GPU, and pid 1's 900 MiB (never the job's)."""
    with open(script, "w") as f:
        f.write("gpu 0 GPU-0000aaaa-truth Truth-A\nproc 0 1 {} 0\n".format(900 << 20))
    if p["uid"] is not None:
        os.chown(script, p["uid"], p["uid"])


def gpu_memory(cell, p):
    # the stand-in NVML (tests/helpers/nvml-standin.c) answers from a script the
    # job writes its own pid and bytes into: what the job put there is the truth
    # (pid 1's line, with a larger figure, is not the job's and must never count)
    script, env, job = nvml_standin(cell, p)
    if not script:
        return
    for mib, hold, name in ((200, 30, "over"), (50, 0.5, "under")):
        nvml_reset(p, script)
        run = Run(p["work"], p, ["--limit", "gpu_memory=100M", "--sample", "100ms"],
                  ["sh", "-c", job.format(mib << 20, hold)], env)
        common(cell, run, "gpu_memory")
        seen = run.get("sampling.peaks.gpu_memory_bytes.value")
        cell.check(seen == mib << 20, "{}: the GPU memory peak {} is the {} MiB the job wrote, not pid 1's".format(
            name, seen, mib))
        if name == "over":
            cell.check(run.get("reason") == "gpu_memory" and run.rc == 152 and enforced(run, "gpu_memory") == "sampling",
                       "over: reason gpu_memory, exit 152 (the soft signal XCPU), enforced_by sampling ({}, {}, {})".format(
                           run.get("reason"), run.rc, enforced(run, "gpu_memory")))
            sig = (run.get("signals") or [{}])[0]
            cell.check(sig.get("why") == "gpu_memory", "over: the first signal is leash's, for gpu_memory ({})".format(sig))
            cell.check(run.wall < 25, "over: ended before the 30 s hold ({:.3f} s)".format(run.wall))
            cell.check(run.get("limits.gpu_memory.note"), "the note says it is sampled (up to one interval late)")
        else:
            cell.check(run.rc == 0 and run.get("reason") == "ok", "under: ok ({}, {})".format(run.rc, run.get("reason")))
    os.unlink(script)
    cell.weak = "sampled every 100 ms through NVML (the note says up to one interval late), not refused"


def nobody_quiet():
    """Wait (up to 120 s) until uid 65534 has fewer than 100 processes: a
    bomb's RLIMIT_NPROC of 300 counts every process of the user, a last
    bomb's until they are reaped, and another test's."""
    for _ in range(1200):
        n = sum(1 for d in os.listdir("/proc") if d.isdigit() and _uid_of(d) == NOBODY)
        if n < 100:
            return
        time.sleep(0.1)


def _uid_of(pid):
    try:
        return os.stat("/proc/" + pid).st_uid
    except OSError:
        return None


def fork_bomb(cell, p):
    # issue 39 item 9: a fork bomb beside 3 spinners under -t 1s without a
    # cgroup, as an ordinary user (uid 65534 under RLIMIT_NPROC 300, which
    # bounds the bomb on a shared machine): leash checks the CPU of the
    # process tree; its figure (the live processes' clock ticks and the
    # rusage of those reaped) is a lower bound, never below the limit it says
    # was reached, and nothing of the bomb is left
    if p["uid"] is None:
        cell.na = "an ordinary user's bomb (placement none): RLIMIT_NPROC does not bound root's"
        return
    bomb = os.path.join(p["helpers"], "fb{}".format(os.getpid()))  # a name no other process has
    script = "'{}/lh-spin' 60 3 & sleep 0.3; '{}' >/dev/null; wait".format(p["helpers"], bomb)
    nobody_quiet()
    over = Run(p["work"], p, ["-t", "1s", "-w", "120s", "-g", "1"], ["sh", "-c", script], nproc=300)
    common(cell, over, "cpu_time")
    cell.check(over.get("reason") == "cpu_time" and over.rc == 124, "over: reason cpu_time, exit 124 ({}, {})".format(
        over.get("reason"), over.rc))
    cpu = over.get("usage.cpu_time_s") or 0
    cell.check(1.0 <= cpu <= over.cpu + 0.02, "over: cpu_time_s {} at least the limit, at most the {:.3f} s measured"
               " around leash".format(cpu, over.cpu))
    sig = (over.get("signals") or [{}])[0]
    cell.check(sig.get("why") == "cpu_time", "over: the first signal is leash's, for cpu_time ({})".format(sig))
    cell.check("lower bound" in (over.get("limits.cpu_time.note") or ""), "the note says the figure is a lower bound")
    left = subprocess.run(["pgrep", "-u", str(NOBODY), "-x", os.path.basename(bomb)], stdout=subprocess.PIPE)
    cell.check(not left.stdout.strip(), "over: nothing of the bomb left ({!r})".format(left.stdout.decode()))
    nobody_quiet()
    under = Run(p["work"], p, ["-t", "30s"], [p["helpers"] + "/lh-spin", "0.2", "3"], nproc=300)
    common(cell, under, "cpu_time")
    cell.check(under.rc == 0 and under.get("reason") == "ok", "under: 3 spinners for 0.2 s, ok")
    cell.weak = "no cgroup: checked over the process tree, its CPU a lower bound (the note says so)"



# --- the other limits for the Python callers and libleash: the same jobs as
# the CLI's, run by the function (in its own process where the limit is the
# process's: an rlimit; by a shell it starts where it is the tree's) ---------

# the drop-ins' limits (their originals' contracts) and the keyword each row is
DROPINS = {
    "pynisher": ("pynisher 1.x", "memory, cpu_time, wall_time", {}),
    "pynisher0": ("pynisher 0.x", "mem_in_mb, cpu_time_in_s, wall_time_in_s, num_processes, grace_period_in_s",
                  {"pids (--pids)": "num_processes"}),
    "monitored": ("resource_monitor", "wall_time, cpu_time, memory, swap_memory, disk, bytes_read, bytes_written,"
                  " max_concurrent_processes, total_processes, total_files, cores_avg; leash's gpu_memory",
                  {"pids (--pids)": "max_concurrent_processes", "swap (--swap)": "swap_memory",
                   "--limit disk (sampled)": "disk", "--limit gpu_memory (stand-in NVML)": "gpu_memory"}),
}
# rows that are no limit of their own: a drop-in's cell where it has the limit the row uses
DROPIN_ANY = {"a leash inside the job (-w)": "wall_time", "a fork bomb (-t, uid 65534)": "cpu_time"}


def dropin_na(limit, caller):
    """The reason a drop-in has no cell for the row, or None."""
    if caller == "pynisher0" and limit == "a fork bomb (-t, uid 65534)":
        return ("n/a: pynisher 0.x's cpu_time_in_s limits the function's own process (RLIMIT_CPU and a timer, its"
                " contract), not the tree a bomb grows; leash's limit on the tree is a backstop at 2 x (the limit +"
                " the grace) + 5 s")
    if caller not in DROPINS or limit in ("memory (-m)", "cpu-time (-t)", "wall-time (-w)") or \
            limit in DROPINS[caller][2] or limit in DROPIN_ANY:
        return None
    name, contract, _ = DROPINS[caller]
    why = "n/a: {} has no such limit (its contract: {})".format(name, contract)
    if caller == "monitored" and limit == "--limit memory (sampled)":
        why = "n/a: resource_monitor's memory limit is leash's -m (the memory row), not a sampled one"
    elif caller == "monitored" and limit == "--limit procs (sampled)":
        why = "n/a: resource_monitor's max_concurrent_processes is the pids row (--pids and --limit procs together)"
    return why


def limit_exc(caller, reason):
    """The exception a caller raises for a limit's reason (None: libleash)."""
    if caller == "libleash":
        return None
    if caller == "monitored":
        return "ResourceExhaustion"
    return {"memory": "MemoryLimitExceeded", "pids": "PidsLimitExceeded"}.get(reason, "LimitExceeded")


def pcall(cell, p, caller, limits, kind, arg, **kw):
    run = call(p, caller, limits, kind, arg, **kw)
    py_common(cell, run)
    return run


def ended_ok(cell, run, what="under"):
    cell.check(run.exc is None and (not run.rep or run.get("reason") == "ok"),
               "{}: the call returned, reason ok ({}, {}, {!r})".format(what, run.exc, run.get("reason"), run.msg[-200:]))


def py_pids(cell, p, caller):
    started = os.path.join(p["work"], "started")
    if caller == "monitored":  # sampled too: the sleepers are held until a sample sees them
        lim, script = {"max_concurrent_processes": 8}, "for i in $(seq 20); do echo >>started; sleep 30 & done; wait"
    else:
        lim = {"pids": 8}
        script = ('n=0; for i in $(seq 20); do sleep 30 & [ $? = 0 ] && n=$((n+1)); done; echo $n >started; '
                  'kill $(jobs -p) 2>/dev/null; exit 0')
    over = pcall(cell, p, caller, lim, "sh", script)
    if caller == "monitored":
        with open(started) as f:
            n = len(f.readlines())
        os.unlink(started)
    else:
        n = read_int(started)
    by = enforced(over, "pids")
    if by == "cgroup":
        cell.check(n < 20, "over: pids.max refused forks (the job started {} of 20)".format(n))
    elif caller == "monitored" and not over.rep and n < 20:
        # pids.max kept the tree under the sampled count too: the call returned its resources, no report
        cell.check(over.exc is None, "over: the call returned, pids.max refused a fork (its shell got to {} of 20"
                   " sleepers; {!r})".format(n, over.err[-80:]))
        cell.check(not re.search(r'\bpids="[^"]*" is not enforced', over.err), "no WeakLimitWarning for pids")
    elif caller == "monitored":
        cell.check(by == "none" and over.get("limits.pids.note"), "pids not enforced, and the note says so ({})".format(by))
        cell.check(over.exc == "ResourceExhaustion" and over.get("reason") == "procs" and
                   enforced(over, "procs") == "sampling",
                   "over: the sampled process count ended it: ResourceExhaustion, reason procs ({}, {})".format(
                       over.exc, over.get("reason")))
        cell.check(8 < (over.get("sampling.limit_reached.value") or 0) <= n + 3,
                   "over: the count seen passed 8, at most what the job held ({} sleepers, its shell, the call)".format(n))
        cell.weak = "no pids controller: the sampled process count ends the call (the report says both)"
    elif caller == "pynisher0" and p["uid"] is not None:  # 0.x's RLIMIT_NPROC binds an ordinary user
        cell.check(by == "rlimit" and "RLIMIT_NPROC" in (over.get("limits.pids.note") or ""),
                   "enforced_by rlimit, the note names RLIMIT_NPROC ({})".format(by))
        cell.check(n < 20, "over: RLIMIT_NPROC refused forks (the job started {} of 20; -1: its shell died of it)"
                   .format(n))
        cell.check(not any("--pids" in w for w in over.get("warnings") or []), "no warning that pids is not enforced")
        cell.weak = "num_processes is RLIMIT_NPROC in the function's process (the user's processes): the report says so"
    else:
        cell.check(by == "none", "enforced_by none without a pids controller ({})".format(by))
        cell.check(n == 20, "over: nothing refused a fork (the job started {} of 20)".format(n))
        cell.check(over.get("limits.pids.note") and over.get("warnings"), "the note and a warning say it is not enforced")
        cell.weak = "not enforced (no pids controller; RLIMIT_NPROC counts the whole user): the report says none"
    # 0.x's RLIMIT_NPROC counts the whole user's processes: its under-limit is far above them
    under = pcall(cell, p, caller, {"max_concurrent_processes" if caller == "monitored" else "pids":
                                    1024 if caller == "pynisher0" else 64}, "sh", "sleep 0.1 & sleep 0.1 & wait")
    ended_ok(cell, under)


def py_fsize(cell, p, caller):
    big = os.path.join(p["work"], "big")
    over = pcall(cell, p, caller, {"fsize": "1M"}, "write", 4 << 20)
    size = os.path.getsize(big) if os.path.exists(big) else -1
    cell.check(size == 1 << 20, "over: the file on disk stopped at the limit ({} bytes)".format(size))
    cell.check(enforced(over, "fsize") == "rlimit", "enforced_by rlimit ({})".format(enforced(over, "fsize")))
    if caller == "libleash":  # C keeps SIGXFSZ's default: the kernel's signal ends it
        cell.check(over.get("reason") == "fsize" and over.get("exit.signal") == "XFSZ",
                   "over: reason fsize, SIGXFSZ ({}, {})".format(over.get("reason"), over.get("exit.signal")))
    else:  # Python ignores SIGXFSZ: the write raised EFBIG in the function
        cell.check(over.exc == "OSError" and "File too large" in over.msg, "over: the call raised OSError EFBIG ({}, {!r})"
                   .format(over.exc, over.msg[-120:]))
        cell.check(over.get("reason") == "exit" and "RLIMIT_FSIZE" in (over.get("likely_cause") or ""),
                   "over: reason exit, likely_cause names RLIMIT_FSIZE ({}, {!r})".format(
                       over.get("reason"), over.get("likely_cause")))
    under = pcall(cell, p, caller, {"fsize": "1M"}, "write", 8 << 16)
    size = os.path.getsize(big) if os.path.exists(big) else -1
    ended_ok(cell, under)
    cell.check(size == 8 << 16 and under.value == 8 << 16, "under: 512 KiB written ({} bytes on disk)".format(size))
    if os.path.exists(big):
        os.unlink(big)


def py_nofile(cell, p, caller):
    over = pcall(cell, p, caller, {"nofile": 16}, "open", 64)
    cell.check(over.value is not None and over.value < 16, "over: the function could open {} files, fewer than 16"
               .format(over.value))
    cell.check(enforced(over, "nofile") == "rlimit", "enforced_by rlimit ({})".format(enforced(over, "nofile")))
    ended_ok(cell, over, "over")
    under = pcall(cell, p, caller, {"nofile": 256}, "open", 64)
    ended_ok(cell, under)
    cell.check(under.value == 64, "under: the function opened all 64 ({})".format(under.value))


def core_line(p):
    path = os.path.join(p["work"], "limits")
    try:
        with open(path) as f:
            return f.read().split()
    except OSError:
        return []
    finally:
        if os.path.exists(path):
            os.unlink(path)


def py_core(cell, p, caller):
    over = pcall(cell, p, caller, {"core": 0}, "core", 1)
    lim = core_line(p)
    cell.check(lim[4:6] == ["0", "0"], "over: the function's RLIMIT_CORE is 0 soft and hard ({})".format(lim[4:6]))
    cell.check(over.get("reason") == "signal" and over.get("exit.signal") == "SEGV" and
               over.exc in (None, "JobKilled"), "over: reason signal, SEGV, JobKilled ({}, {}, {})".format(
                   over.get("reason"), over.get("exit.signal"), over.exc))
    cell.check(enforced(over, "core") == "rlimit", "enforced_by rlimit ({})".format(enforced(over, "core")))
    under = pcall(cell, p, caller, {"core": "1M"}, "core", 0)
    lim = core_line(p)
    ended_ok(cell, under)
    cell.check(lim[4:5] == ["1048576"], "under: the function's soft RLIMIT_CORE is 1 MiB ({})".format(lim[4:5]))


def py_not_enforced(cell, run, limit, why):
    """not_enforced for a call; where the caller hands back no report
    (monitored's returned call), the caller's WeakLimitWarning says it."""
    if run.rep:
        not_enforced(cell, run, limit, why)
        return
    cell.check(re.search(r'\b{}="[^"]*" is not enforced'.format(limit), run.err),
               "the caller's WeakLimitWarning says {} is not enforced ({!r})".format(limit, run.err[-200:]))
    cell.weak = why + " (resource_monitor: its WeakLimitWarning)"


def py_memory_high(cell, p, caller):
    over = pcall(cell, p, caller, {"memory_high": "32M", "wall_time": 5}, "alloc", 64)
    cell.check(over.get("reason") in ("ok", "wall_time") and not over.get("usage.oom_kills"),
               "over: throttled or not, never killed for memory ({}, oom_kills {})".format(
                   over.get("reason"), over.get("usage.oom_kills")))
    if enforced(over, "memory_high") == "cgroup":
        cell.check((over.get("usage.memory_high_events") or 0) > 0, "over: memory_high_events counts the throttling")
    else:
        py_not_enforced(cell, over, "memory_high", "not enforced (no memory controller): the report says none")
    under = pcall(cell, p, caller, {"memory_high": "256M"}, "alloc", 32)
    ended_ok(cell, under)
    cell.check(not under.get("usage.memory_high_events"), "under: no memory_high_events")


def py_swap(cell, p, caller):
    script = 'cat "/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup)/memory.swap.max" >swapmax 2>/dev/null; exit 0'
    over = pcall(cell, p, caller, {"swap_memory" if caller == "monitored" else "swap": 0}, "sh", script)
    path = os.path.join(p["work"], "swapmax")
    seen = open(path).read().strip() if os.path.exists(path) else None
    if os.path.exists(path):
        os.unlink(path)
    if enforced(over, "swap") == "cgroup" or (not over.rep and seen == "0"):  # monitored's returned call: no report
        cell.check(seen == "0", "the job's cgroup's memory.swap.max, read by the job, is 0 ({})".format(seen))
        cell.check(not re.search(r'\bswap="[^"]*" is not enforced', over.err), "no WeakLimitWarning for swap")
    else:
        py_not_enforced(cell, over, "swap", "not enforced (no memory controller): the report says none")
    ended_ok(cell, over, "the job")


def py_cpus(cell, p, caller):
    over = pcall(cell, p, caller, {"cpus": 0.5}, "cpus", 0)
    ended_ok(cell, over, "over")
    if enforced(over, "cpus") == "cgroup":
        cell.check((over.value or 0) >= 1900, "over: 1 s of the function's CPU took {} ms of its wall time at 0.5 cores"
                   .format(over.value))
        cell.check((over.get("usage.cpu_throttled_periods") or 0) > 0, "over: cpu_throttled_periods counts it")
    else:
        py_not_enforced(cell, over, "cpus", "not enforced (no cpu controller): the report says none")
    under = pcall(cell, p, caller, {"cpus": 2}, "spin", 0.2)
    ended_ok(cell, under)


def py_devices(cell, p, caller):
    over = call(p, caller, {"devices": "none"}, "dev", 0)
    if p["uid"] is not None:
        said = over.msg if caller != "libleash" else over.err
        cell.check(not over.rep and over.value is None and "devices" in said,
                   "refused before the function runs, naming devices ({}, {!r})".format(over.exc, said[-160:]))
        cell.weak = "refused: a device program needs a cgroup (an error naming devices)"
        return
    py_common(cell, over)
    cell.check(over.value not in (None, 0), "over: the function could not open /dev/null (errno {})".format(over.value))
    cell.check(enforced(over, "devices") == "cgroup device program", "enforced_by the cgroup device program")
    under = pcall(cell, p, caller, {"devices": "/dev/null rw"}, "dev", 0)
    ended_ok(cell, under)
    cell.check(under.value == 0, "under: /dev/null allowed, the function opened it ({})".format(under.value))


def sampled_over(cell, over, caller, reason, low, high):
    """A sampled limit's over call: its reason and exception, by sampling, the
    figure seen between the limit and what the job held."""
    want = limit_exc(caller, reason)
    cell.check(over.exc == want and over.get("reason") == reason and enforced(over, reason) == "sampling",
               "over: {}, reason {}, enforced_by sampling ({}, {}, {})".format(
                   want, reason, over.exc, over.get("reason"), enforced(over, reason)))
    seen = over.get("sampling.limit_reached.value") or 0
    cell.check(low < seen <= high, "over: the figure seen ({}) passed {}, at most what the job held ({})".format(
        seen, low, high))
    cell.check(over.get("limits.{}.note".format(reason)), "the note says it is sampled (up to one interval late)")
    cell.check(over.wall < 25, "over: ended before the 30 s hold ({:.3f} s)".format(over.wall))
    cell.weak = "sampled every 100 ms (the note says up to one interval late), not refused"


def py_limit_procs(cell, p, caller):
    script = "for i in 1 2 3 4 5 6; do echo >>started; sleep 30 & done; wait"
    over = pcall(cell, p, caller, {"limit": "procs=3", "sample": "100ms"}, "sh", script)
    try:
        with open(os.path.join(p["work"], "started")) as f:
            held = 2 + len(f.readlines())  # the function's process, its shell and the sleepers
        os.unlink(os.path.join(p["work"], "started"))
    except OSError:
        held = -1
    sampled_over(cell, over, caller, "procs", 3, held)
    under = pcall(cell, p, caller, {"limit": "procs=50", "sample": "100ms"}, "sh", "sleep 0.3 & sleep 0.3; wait")
    ended_ok(cell, under)


def py_limit_disk(cell, p, caller):
    d = os.path.join(p["work"], "disk")
    os.mkdir(d)
    if p["uid"] is not None:
        os.chown(d, p["uid"], p["uid"])
    lim = (lambda mib: {"disk": mib}) if caller == "monitored" else \
        (lambda mib: {"limit": "disk={}M".format(mib), "sample": "100ms"})
    try:
        over = pcall(cell, p, caller, lim(1), "sh", "dd if=/dev/zero of=disk/f bs=1M count=4 2>/dev/null; sleep 30",
                     options={"sample_disk": d})
        size = os.path.getsize(os.path.join(d, "f")) if os.path.exists(os.path.join(d, "f")) else -1
        # a sample may end dd before its 4 MiB (the systemd VM's emulated CPU): past 1 MiB is the truth
        cell.check(1 << 20 < size <= 4 << 20, "over: the job wrote past 1 MiB ({} bytes on disk)".format(size))
        sampled_over(cell, over, caller, "disk", 1 << 20, 5 << 20)
        under = pcall(cell, p, caller, lim(8), "sh", "dd if=/dev/zero of=disk/f bs=64K count=4 2>/dev/null",
                      options={"sample_disk": d})
        ended_ok(cell, under)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def py_limit_memory(cell, p, caller):
    over = pcall(cell, p, caller, {"limit": "memory=64M", "sample": "100ms"}, "hold", [200, 30])
    # a forked function shares its caller's resident pages: what it held is at most 200 MiB and those
    sampled_over(cell, over, caller, "memory", 64 << 20, (210 << 20) + over.rss)
    under = pcall(cell, p, caller, {"limit": "memory=256M", "sample": "100ms"}, "hold", [16, 0.3])
    ended_ok(cell, under)


def py_gpu_memory(cell, p, caller):
    script, env, job = nvml_standin(cell, p)
    if not script:
        return
    lim = {"gpu_memory": 100} if caller == "monitored" else {"limit": "gpu_memory=100M", "sample": "100ms"}
    for mib, hold, name in ((200, 30, "over"), (50, 0.5, "under")):
        nvml_reset(p, script)
        run = pcall(cell, p, caller, lim, "sh", job.format(mib << 20, hold), env=env)
        seen = run.get("sampling.peaks.gpu_memory_bytes.value") if run.rep else run.res.get("gpu_memory", 0) * (1 << 20)
        cell.check(seen == mib << 20, "{}: the GPU memory peak {} is the {} MiB the job wrote, not pid 1's".format(
            name, seen, mib))
        if name == "over":
            sampled_over(cell, run, caller, "gpu_memory", 100 << 20, 200 << 20)
        else:
            ended_ok(cell, run)
    os.unlink(script)
    cell.weak = "sampled every 100 ms through NVML (the note says up to one interval late), not refused"


def py_nested(cell, p, caller):
    inner = os.path.join(p["work"], "inner.json")
    said = os.path.join(p["work"], "said")
    # the job takes a moment of the grace where the caller lets one be asked
    # (pynisher has no grace: 1.x's is leash's 5 s, 0.x's TERM is followed by KILL 1 s later)
    pause = "" if caller in ("pynisher", "pynisher0") else "sleep 0.5; "
    job = "trap '{}echo 7 >said; exit 7' XCPU TERM; while :; do sleep 0.1; done".format(pause)
    # the caller must reach the inner leash before the limit: under the VM's emulated CPU spawn's fresh
    # interpreter took 0.7-1 s, and a 1 s limit ended it first (no inner leash, no inner report). 3 s for
    # every caller: monitored / none once failed so in a package build, and libleash / none under ASan
    # with 3 s, which was not slowness but leash's race (its tree looked empty while a process moved up
    # to the holder: a leftover's SIGKILL 4 ms after the soft signal), fixed with tree_empty
    wall = 3
    # 0.x's function has its own alarm at the wall time, which its TERM (at the wall time and
    # grace_period_in_s) follows: the exception in subprocess.run's wait SIGKILLs the child, the inner
    # leash, before it can write its report (with a grace period always, without one when the alarm
    # won the race, a CI failure); this function waits for its child through the exception (os.system),
    # and the grace period puts the alarm first
    lim = {"wall_time": wall, "grace": 30}
    if caller in DROPINS:
        lim = {"wall_time": wall, "grace": 1} if caller == "pynisher0" else {"wall_time": wall}
    over = pcall(cell, p, caller, lim, "system" if caller == "pynisher0" else "sh",
                 "'{}' run -q -o '{}' -- sh -c \"{}\"".format(p["leash"], inner, job),
                 options={"grace": 30} if caller == "monitored" else None)
    want = CALLERS[caller][1]
    cell.check(over.exc == want and over.get("reason") == "wall_time",
               "over: {}, reason wall_time ({}, {})".format(want, over.exc, over.get("reason")))
    inner_held(cell, over, inner, said)
    under = pcall(cell, p, caller, {"wall_time": 30}, "sh", "'{}' run -q -o '{}' -- true".format(p["leash"], inner))
    ended_ok(cell, under)
    cell.check(under.value == 0 and os.path.exists(inner), "under: the inner leash ok, its report written")
    if os.path.exists(inner):
        os.unlink(inner)


def py_fork_bomb(cell, p, caller):
    if p["uid"] is None:
        cell.na = "an ordinary user's bomb (placement none): RLIMIT_NPROC does not bound root's"
        return
    bomb = os.path.join(p["helpers"], "fb{}".format(os.getpid()))
    script = "'{}/lh-spin' 60 3 & sleep 0.3; '{}' >/dev/null; wait".format(p["helpers"], bomb)
    lim = {"cpu_time": 1, "wall_time": 120} if caller in DROPINS else {"cpu_time": 1, "wall_time": 120, "grace": 1}
    nobody_quiet()
    over = pcall(cell, p, caller, lim, "sh", script, nproc=300)
    want = CALLERS[caller][2]
    cell.check(over.exc == want and over.get("reason") == "cpu_time", "over: {}, reason cpu_time ({}, {})".format(
        want, over.exc, over.get("reason")))
    cpu = over.get("usage.cpu_time_s") or 0
    cell.check(cpu >= 1.0, "over: cpu_time_s {} at least the limit".format(cpu))
    cell.check("lower bound" in (over.get("limits.cpu_time.note") or ""), "the note says the figure is a lower bound")
    left = subprocess.run(["pgrep", "-u", str(NOBODY), "-x", os.path.basename(bomb)], stdout=subprocess.PIPE)
    cell.check(not left.stdout.strip(), "over: nothing of the bomb left ({!r})".format(left.stdout.decode()))
    nobody_quiet()
    under = pcall(cell, p, caller, {"cpu_time": 30}, "sh", "'{}/lh-spin' 0.2 3".format(p["helpers"]), nproc=300)
    ended_ok(cell, under)
    cell.weak = "no cgroup: checked over the process tree, its CPU a lower bound (the note says so)"


PY_LIMITS = {"memory (-m)": py_memory, "cpu-time (-t)": py_cpu_time, "wall-time (-w)": py_wall_time,
             "pids (--pids)": py_pids, "fsize (--fsize)": py_fsize, "nofile (--nofile)": py_nofile,
             "memory-high (--memory-high)": py_memory_high, "cpus (--cpus)": py_cpus, "core (--core)": py_core,
             "devices (--devices)": py_devices, "--limit procs (sampled)": py_limit_procs,
             "--limit disk (sampled)": py_limit_disk, "swap (--swap)": py_swap,
             "--limit memory (sampled)": py_limit_memory, "a leash inside the job (-w)": py_nested,
             "--limit gpu_memory (stand-in NVML)": py_gpu_memory, "a fork bomb (-t, uid 65534)": py_fork_bomb}


LIMITS = [("memory (-m)", memory), ("pids (--pids)", pids), ("cpu-time (-t)", cpu_time),
          ("wall-time (-w)", wall_time), ("fsize (--fsize)", fsize), ("nofile (--nofile)", nofile),
          ("memory-high (--memory-high)", memory_high), ("cpus (--cpus)", cpus), ("core (--core)", core),
          ("devices (--devices)", devices), ("--limit procs (sampled)", limit_procs),
          ("--limit disk (sampled)", limit_disk), ("swap (--swap)", swap), ("--limit memory (sampled)", limit_memory), ("a leash inside the job (-w)", nested),
          ("--limit gpu_memory (stand-in NVML)", gpu_memory), ("a fork bomb (-t, uid 65534)", fork_bomb)]


# The tiers: each writes and checks its own section of docs/TRUTH.md.
TIERS = {
    "host": "a hybrid host (cgroup2 beside v1, no controllers handed down: this project's development"
            " and CI machines), as root",
    "vm": "the VM tier (tests/vm: pure cgroup v2, memory, pids, cpu and io controllers), as root",
    "systemd-vm": "the systemd VM (tests/vm/systemd: systemd 252 as PID 1), as root from a system service",
    "slurm": "the slurm tier (tests/slurm/run: slurm-wlm 22.05 on this hybrid host, mode own), jobs submitted"
             " as root through leash's Prolog, TaskProlog and Epilog; one table, a column per Slurm mode",
    "slurm-nest": "the systemd VM's real Slurm (tests/vm/systemd/30-slurm-cgroup-v2.sh: slurm-wlm 22.05, slurmd"
                  " under systemd, CgroupPlugin=cgroup/v2, mode nest), jobs submitted as uid 1000; leash adopts"
                  " Slurm's cgroups read-only",
}
PLACES = {
    "cgroup": "a job cgroup of leash's own under a private parent (`--cgroup-parent`, `leash.configure`)",
    "scope": "no parent named: leash asks the system manager for a scope (Delegate=yes) in leash.slice",
    "none": "uid 65534 (setpriv), which no manager delegates a cgroup: the job is its process tree",
}


def controllers(cg):
    try:
        with open(os.path.join(cg, "cgroup.controllers")) as f:
            return f.read().split()
    except OSError:
        return []


def place(name, tmp, leash, helpers, uid, parent, pythonpath):
    work = os.path.join(tmp, name)
    os.mkdir(work)
    if uid is not None:
        os.chown(work, uid, uid)
    mount = cgroup2_mount() or ""
    cpu_cg = parent or (os.path.join(mount, "leash.slice") if name == "scope" and mount else None)
    return {"name": name, "leash": leash, "helpers": helpers, "uid": uid, "parent": parent, "cpu_cg": cpu_cg,
            "args": ["--cgroup-parent", parent] if parent else [], "work": work, "pythonpath": pythonpath,
            "driver": os.path.join(tmp, "bin", "driver.py"),
            "lhtruth": os.path.join(helpers, "lh-truth") if uid is not None else LH_TRUTH}


def nobody_copies(tmp):
    """The binaries and the package where uid 65534 can reach them."""
    bindir = os.path.join(tmp, "bin")
    # lh-truth's libleash.so.0 too: its RUNPATH is the build tree's
    lib = os.path.join(os.path.dirname(os.path.dirname(LEASH)), "lib", "libleash.so.0")
    for b in [LEASH, LH_TRUTH] + [os.path.join(HELPERS, h) for h in ("lh-alloc", "lh-spin", "libnvml-standin.so")
                                   if os.path.exists(os.path.join(HELPERS, h))] + \
            ([lib] if os.path.exists(lib) else []):
        shutil.copy(b, bindir)
        os.chmod(os.path.join(bindir, os.path.basename(b)), 0o755)
    bomb = os.path.join(bindir, "fb{}".format(os.getpid()))  # fork_bomb's, by a name of its own
    shutil.copy(os.path.join(HELPERS, "lh-forkbomb"), bomb)
    os.chmod(bomb, 0o755)
    pylib = ""
    if PYTHONPATH:
        pylib = os.path.join(bindir, "py")
        shutil.copytree(os.path.join(PYTHONPATH, "leash"), os.path.join(pylib, "leash"))
        shutil.copytree(os.path.join(PYTHONPATH, "pynisher"), os.path.join(pylib, "pynisher"))
        for d, dirs, files in os.walk(pylib):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o755)
    return bindir, pylib


def reachable_tmp():
    """A temporary directory uid 65534 can enter (its runs write their
    reports there): under $TMPDIR where it can, else /tmp, /var/tmp or
    /dev/shm (a package build's $TMPDIR is a private 0700 directory)."""
    for base in [os.environ.get("TMPDIR"), "/tmp", "/var/tmp", "/dev/shm"]:
        if not base or not os.path.isdir(base):
            continue
        d = tempfile.mkdtemp(prefix="leash-truth.", dir=base)
        os.chmod(d, 0o755)
        if not shutil.which("setpriv") or subprocess.run(
                ["setpriv", "--reuid={}".format(NOBODY), "--regid={}".format(NOBODY), "--clear-groups", "test", "-x", d]
        ).returncode == 0:
            return d
        os.rmdir(d)
    return tempfile.mkdtemp(prefix="leash-truth.")


def placements(tier, tmp, made):
    """The placements of the tier, the reasons of those it cannot offer, the
    private parent made (to remove), and a problem with the tier's kind
    (None when this machine is of the kind the tier's section describes)."""
    out, why, parent, kind = [], {}, None, None
    bindir = os.path.join(tmp, "bin")
    os.mkdir(bindir)
    with open(os.path.join(bindir, "driver.py"), "w") as f:
        f.write(DRIVER)
    os.chmod(tmp, 0o711)
    os.chmod(bindir, 0o755)
    os.chmod(os.path.join(bindir, "driver.py"), 0o644)
    mount = cgroup2_mount()
    if tier == "systemd-vm":
        if not os.path.isdir("/run/systemd/system"):
            kind = "systemd is not PID 1 here"
        out.append(place("scope", tmp, LEASH, HELPERS, None, None, PYTHONPATH))
    elif mount:
        base = os.environ.get("TRUTH_PARENT") or os.path.join(mount, "leash-test")
        parent = os.path.join(base, "truth-{}".format(os.getpid()))
        os.makedirs(parent, exist_ok=True)
        made.append(parent)  # removed by main() even when what follows raises
        ctl = set(controllers(parent))
        if tier == "host" and ctl & {"memory", "pids"}:
            kind = "this host hands {} down: not the kind of host the section describes".format(
                " and ".join(sorted(ctl & {"memory", "pids"})))
        if tier == "vm" and not {"memory", "pids"} <= ctl:
            kind = "the memory and pids controllers do not reach {} ({})".format(parent, " ".join(sorted(ctl)))
        out.append(place("cgroup", tmp, LEASH, HELPERS, None, parent, PYTHONPATH))
    else:
        why["cgroup"], kind = "no cgroup2 mount", "no cgroup2 mount"
    if shutil.which("setpriv"):
        bindir, pylib = nobody_copies(tmp)
        leash = os.path.join(bindir, "leash")
        check = subprocess.run(["setpriv", "--reuid={}".format(NOBODY), "--regid={}".format(NOBODY), "--clear-groups",
                                leash, "check"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        text = check.stdout.decode(errors="replace")
        if "placement:" not in text:
            why["none"] = "uid {} cannot run leash from {} ({})".format(NOBODY, tmp, text.strip()[:200])
            kind = kind or why["none"]
        elif re.search(r"^placement: *none", text, re.M):
            out.append(place("none", tmp, leash, bindir, NOBODY, None, pylib))
        else:
            why["none"] = "uid {} has a cgroup on this machine".format(NOBODY)
            kind = kind or why["none"]
    else:
        why["none"] = kind = "no setpriv to run leash as uid {}".format(NOBODY)
    if not PYTHONPATH:
        kind = kind or PY_WHY
    return out, why, parent, kind


def cell_text(cells, why_na, limit, pname, caller, tier):
    c = cells.get((limit, pname, caller))
    if c:
        return c.status()
    if pname in why_na:
        return "n/a: " + why_na[pname]
    if dropin_na(limit, caller):
        return dropin_na(limit, caller)
    if caller not in ("CLI", "libleash") and not PYTHONPATH:
        return "n/a: " + PY_WHY
    if not runs(tier, pname, caller, limit):
        return same_as_host(pname, limit)
    return "n/a: not run"


def section(tier, cells, why_na, ran=None, kept=None):
    """The tier's section: only what is the same on every machine of its kind
    (verdicts and reasons; no paths, figures or controller lists). The
    columns of callers this run did not run (ran: those it did) are kept's
    cells (another script's run: parse_section), where it has them."""
    callers = ["CLI"] + list(CALLERS)
    lines = ["<!-- truth:{} begin (generated: do not edit) -->".format(tier), "",
             "## {}".format(tier), "", TIERS[tier] + ".", ""]
    names = ["scope", "none"] if tier == "systemd-vm" else ["cgroup", "none"]
    for pname in names:
        lines += ["### placement {}: {}".format(pname, PLACES[pname]), "",
                  "| limit | " + " | ".join(heading(c) for c in callers) + " |",
                  "| --- |" + " --- |" * len(callers)]
        for limit, _ in LIMITS:
            row = [(kept or {}).get((pname, limit, heading(c))) if ran is not None and c not in ran else None
                   for c in callers]
            row = [t or cell_text(cells, why_na, limit, pname, c, tier) for t, c in zip(row, callers)]
            lines.append("| {} | {} |".format(limit, " | ".join(t.replace("|", "\\|") for t in row)))
        lines.append("")
    lines.append("<!-- truth:{} end -->".format(tier))
    return "\n".join(lines) + "\n"


def heading(caller):
    return "CLI" if caller == "CLI" else CALLERS[caller][0]


def parse_section(path, tier):
    """A file's section of the tier as {(placement, limit, column heading): cell text}; {} without one."""
    try:
        with open(path) as f:
            sec = split(f.read(), tier)[1] or ""
    except OSError:
        return {}
    cells, pname, heads = {}, None, []
    for line in sec.splitlines():
        m = re.match(r"### placement (\w+):", line)
        if m:
            pname = m.group(1)
        elif line.startswith("| ") and pname:
            row = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if row[0] == "limit":
                heads = row[1:]
            elif row[0] != "---":
                cells.update({(pname, row[0], h): t for h, t in zip(heads, row[1:])})
    return cells


def split(text, tier):
    """(before, the tier's section, after) of the file's text; section None when absent."""
    m = re.search(r"<!-- truth:{0} begin.*?<!-- truth:{0} end -->\n".format(re.escape(tier)), text, re.S)
    if not m:
        return text, None, ""
    return text[:m.start()], text[m.start():m.end()], text[m.end():]


def write(path, tier, sec):
    with open(path) as f:
        before, old, after = split(f.read(), tier)
    if old is None:
        before, after = before.rstrip("\n") + "\n\n", ""
    with open(path, "w") as f:
        f.write(before + sec + after)


REWRITE = {"slurm": "tests/slurm/run, copying build/truth-slurm.md's section,",
           "slurm-nest": "tests/vm/run --systemd --script tests/vm/systemd/30-slurm-cgroup-v2.sh, copying"
                         " build/tests/vm/systemd-keep/truth-slurm-nest.md's section,"}


def compare(path, tier, sec, kind):
    """A TAP check: the section generated is the one committed."""
    if kind:
        print("ok {} - # SKIP the {} section not compared: {}".format(N + 1, tier, kind))
        tap_skip()
        return
    with open(path) as f:
        committed = split(f.read(), tier)[1]
    if committed is None:
        tap(False, "{} has a {} section ({} writes it)".format(path, tier, REWRITE.get(tier, "make truth TIER=" + tier)))
        return
    same = tap(committed == sec, "the {} section generated is {}'s (else regenerate with {} and commit)".format(
        tier, os.path.basename(path), REWRITE.get(tier, "make truth")))
    if not same:
        for line in difflib.unified_diff(committed.splitlines(), sec.splitlines(), "committed", "generated",
                                         lineterm=""):
            print("# " + line)


def tap_skip():
    global N
    N += 1


# The rows a cgroup controller (memory, pids, cpu) enforces or measures, and
# where there is none the placement decides how: the VM tier runs them for
# every caller in both placements, and every row in placement cgroup. In
# placement none the other rows run the host tier's code (no cgroup, no
# controller): the VM tier runs them for the CLI, fork and libleash
# (EVERY_ROW) and leaves the other callers' to the host tier (same_as_host),
# their Python interpreters costing seconds of the emulated CPU each (2-11 s
# a cell in the VM).
CONTROLLER_ROWS = ("memory (-m)", "pids (--pids)", "memory-high (--memory-high)", "cpus (--cpus)", "swap (--swap)",
                   "--limit memory (sampled)")
EVERY_ROW = ("CLI", "fork", "libleash")
# the systemd VM, every script on CI's critical path, runs one controller row
# for the other callers: it proves their jobs get the scope's controllers (the
# VM tier's placement cgroup runs their others with the same code)
SCOPE_ROWS = ("memory (-m)",)
# how each other row is enforced in a job cgroup, with controllers or none
NO_CONTROLLER = {
    "cpu-time (-t)": "leash's clock over the job cgroup's cpu.stat, which needs no controller",
    "wall-time (-w)": "leash's own clock",
    "fsize (--fsize)": "RLIMIT_FSIZE in the job's processes",
    "nofile (--nofile)": "RLIMIT_NOFILE in the job's processes",
    "core (--core)": "RLIMIT_CORE in the job's processes",
    "devices (--devices)": "a BPF device program on the job cgroup, which needs no controller",
    "--limit procs (sampled)": "sampled from the job cgroup's cgroup.procs, which needs no controller",
    "--limit disk (sampled)": "sampled from the directory's size",
    "--limit gpu_memory (stand-in NVML)": "sampled through NVML for the job cgroup's processes (no controller)",
    "a leash inside the job (-w)": "leash's own clock, and the inner leash's ladder",
}


def runs(tier, pname, caller, limit):
    """Whether the tier runs the cell (else same_as_host says why not)."""
    if tier == "host" or caller in EVERY_ROW:
        return True
    if tier == "systemd-vm":
        return pname != "none" and limit in SCOPE_ROWS + ("a fork bomb (-t, uid 65534)",)
    return limit in CONTROLLER_ROWS or pname != "none"


def same_as_host(pname, limit):
    """Why a VM tier runs no cell of a caller beyond EVERY_ROW: the code that
    enforces it is a cell's of another tier, which proves it for the caller."""
    if limit in CONTROLLER_ROWS and pname != "none":  # the systemd VM's scope
        return ("n/a: the job cgroup's controller files, which leash writes itself in the unit systemd delegates, as"
                " in the VM tier's placement cgroup, whose cell proves this caller (its memory row here: the job gets"
                " the unit's controllers)")
    if limit in CONTROLLER_ROWS:
        return "n/a: no cgroup, the same code as the VM tier's placement none, whose cell proves this caller"
    if pname == "none":
        return ("n/a: no cgroup and no controller in play, the same code as the host tier's placement none, whose"
                " cell proves this caller")
    return "n/a: {}, as in the host tier's placement cgroup, whose cell proves this caller".format(NO_CONTROLLER[limit])


def tier_callers(opt):
    """The callers a run runs (the CLI among them): every one, or those
    --callers (else TRUTH_CALLERS) names, comma-separated; two VM scripts
    share the vm section's columns this way."""
    env = opt if opt is not None else os.environ.get("TRUTH_CALLERS")
    if env is not None:
        return [c for c in env.split(",") if c == "CLI" or c in CALLERS]
    return ["CLI"] + list(CALLERS)


def run_cells(tier, places, callers):
    """Every cell of the places and callers the tier runs; TRUTH_ROWS (a
    regular expression, for work on the matrix) runs only the rows it matches."""
    cells, rows = {}, re.compile(os.environ.get("TRUTH_ROWS") or "")
    for p in places:
        for limit, fn in LIMITS:
            if "CLI" not in callers or not rows.search(limit):
                continue
            c = cells[(limit, p["name"], "CLI")] = Cell("{} / {} / CLI".format(limit, p["name"]))
            timed(c, fn, p)
        for caller in [c for c in callers if c != "CLI"]:
            if caller != "libleash" and not p["pythonpath"]:
                continue
            for limit, fn in PY_LIMITS.items():
                if dropin_na(limit, caller) or not rows.search(limit) or not runs(tier, p["name"], caller, limit):
                    continue
                c = cells[(limit, p["name"], caller)] = Cell("{} / {} / {}".format(limit, p["name"], caller))
                timed(c, fn, p, caller)
    return cells


def timed(cell, fn, *a):
    """Run one cell and say what it cost (a TAP comment: the VM tiers'
    budget is made of these)."""
    t0 = time.monotonic()
    fn(cell, *a)
    print("# {}: {:.1f} s".format(cell.name, time.monotonic() - t0), flush=True)


def args():
    """--tier NAME (default $TRUTH_TIER or host); --compare FILE: check the
    section against FILE's (default, without --write: the docs/TRUTH.md beside
    this script); --write FILE: then put the section into FILE; --callers
    LIST: run only those columns (CLI, fork, ...), the others kept as FILE has
    them (tier_callers)."""
    a = sys.argv[1:]
    tier = os.environ.get("TRUTH_TIER") or "host"
    opts = {"--compare": None, "--write": None, "--callers": None}
    while a:
        if len(a) < 2 or a[0] not in ("--tier", "--write", "--compare", "--callers"):
            return None
        if a[0] == "--tier":
            tier = a[1]
        else:
            opts[a[0]] = a[1]
        a = a[2:]
    if not opts["--write"] and not opts["--compare"]:
        opts["--compare"] = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "TRUTH.md")
    return (tier, opts["--compare"], opts["--write"], opts["--callers"]) if tier in TIERS else None


def slurm_main(tier, against, out):
    """The slurm tiers' sections: their cells need the cluster tests/slurm/run
    (slurm) or tests/vm/systemd/30-slurm-cgroup-v2.sh (slurm-nest) started."""
    import slurm_cells
    cells, why = slurm_cells.run(Cell, HELPERS, tier)
    if out and why:  # never a section of n/a over the one the tier wrote
        print("matrix.py --tier {} --write: {}; {} writes the section".format(tier, why, REWRITE[tier]),
              file=sys.stderr)
        return 2
    sec = slurm_cells.section(tier, TIERS[tier], cells, why)
    if against:
        compare(against, tier, sec, why)
    if out:
        write(out, tier, sec)
    print("1..{}".format(N))
    return 1 if FAILED else 0


def main():
    parsed = args()
    if not parsed:
        print("usage: matrix.py [--tier {}] [--compare FILE] [--write FILE]".format("|".join(TIERS)), file=sys.stderr)
        return 2
    tier, against, out, only = parsed
    if os.environ.get("TRUTH_SKIP"):  # a tier that runs the suite again on a tree another tier ran it on
        print("1..0 # SKIP TRUTH_SKIP: {}".format(os.environ["TRUTH_SKIP"]))
        return 0
    if not LEASH or not HELPERS:
        print("1..0 # SKIP LEASH and HELPERS must point at the build tree")
        return 0
    if os.geteuid() != 0:
        print("1..0 # SKIP needs root (a private cgroup parent, and uid {} for placement none)".format(NOBODY))
        return 0
    if tier in ("slurm", "slurm-nest"):
        return slurm_main(tier, against, out)
    tmp = reachable_tmp()
    parent, made = None, []
    try:
        places, why_na, parent, kind = placements(tier, tmp, made)
        if kind and tier != "host":
            tap(False, "this machine is of the kind the {} section describes: {}".format(tier, kind))
        ran = tier_callers(only)
        cells = run_cells(tier, places, ran)
        kept = parse_section(against, tier) if against else {}
        if against:
            compare(against, tier, section(tier, cells, why_na, ran, kept), kind)
        if out:  # the columns another run wrote there stay
            write(out, tier, section(tier, cells, why_na, ran, {**kept, **parse_section(out, tier)}))
        left = [e.name for e in os.scandir(parent) if e.is_dir()] if parent and os.path.isdir(parent) else []
        tap(not left, "no cgroup left behind ({})".format(left))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for parent in made:
            try:
                os.rmdir(parent)
                os.rmdir(os.path.dirname(parent))
            except OSError:
                pass
    print("1..{}".format(N))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
