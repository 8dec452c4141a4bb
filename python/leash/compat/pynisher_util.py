# SPDX-License-Identifier: LGPL-2.1-or-later
"""pynisher 1.x's ``pynisher.util``: the helpers its users and tests import.

``memconvert`` and ``timeconvert`` (units; 1024-based memory, bytes
rounded), ``callstring`` (how a call is named in messages),
``terminate_process`` / ``terminate_process_tree`` (SIGTERM, wait, SIGKILL
what is left) and ``Monitor`` (a process's memory use and RLIMIT_AS).

pynisher needs psutil for all of it; here only ``Monitor.process`` and the
``psutil.Process`` arguments and return values of the terminate helpers are
psutil objects, so the rest works where psutil is not installed (the memory
figures come from /proc, the limit from ``resource.prlimit``).
"""

import os
import resource
import signal
import time
from functools import partial

__all__ = ["memconvert", "timeconvert", "callstring", "terminate_process", "terminate_process_tree", "Monitor"]

_MEM_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}
_TIME_UNITS = {"s": 1, "m": 60, "h": 3600}


def memconvert(x, *, frm="B", to="B"):
    """``x`` in unit ``frm`` as unit ``to`` ("B", "KB", "MB", "GB", any
    case, 1024-based). Bytes come back rounded to an int; a KeyError names
    an unknown unit, as pynisher's does."""
    value = x * _MEM_UNITS[frm.upper()] / _MEM_UNITS[to.upper()]
    return round(value) if to.upper() == "B" else value


def timeconvert(x, *, frm="s", to="s"):
    """``x`` in unit ``frm`` as unit ``to`` ("s", "m", "h")."""
    return x * _TIME_UNITS[frm.lower()] / _TIME_UNITS[to.lower()]


def callstring(f, *args, **kwargs):
    """``"name(a, b, k=v)"``: the arguments by str(), the name from a
    partial's function, a ``__qualname__``, or the object's class."""
    text = ", ".join([str(a) for a in args] + ["{}={}".format(k, v) for k, v in kwargs.items()])
    if isinstance(f, partial):
        name = f.func.__name__
    elif hasattr(f, "__qualname__"):
        name = f.__qualname__
    else:
        name = type(f).__name__
    return "{}({})".format(name, text)


def _psutil():
    import psutil

    return psutil


def _children(pid):
    """The pids of every descendant of ``pid`` (from /proc)."""
    parents = {}
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open("/proc/{}/stat".format(e)) as f:
                stat = f.read()
        except OSError:
            continue
        parents.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(e))
    out, todo = [], [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def _alive(pid):
    try:
        with open("/proc/{}/stat".format(pid)) as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _signal_and_wait(pids, sig, timeout):
    """sig to each pid, then SIGKILL to those alive after ``timeout``;
    (gone, alive) pid lists."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + (timeout if timeout is not None else 0)
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.01)
    for pid in pids:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.01)
    alive = [p for p in pids if _alive(p)]
    return [p for p in pids if p not in alive], alive


def _as_processes(pids_pair, like):
    if like is None:
        return pids_pair
    psutil = _psutil()
    out = []
    for pids in pids_pair:
        procs = []
        for p in pids:
            try:
                procs.append(psutil.Process(p))
            except psutil.NoSuchProcess:
                pass
        out.append(procs)
    return tuple(out)


def _pid_of(pid):
    if pid is None:
        return os.getpid(), None
    if isinstance(pid, int):
        return pid, None
    return pid.pid, pid  # a psutil.Process


def terminate_process_tree(pid=None, sig=signal.SIGTERM, timeout=5, include_parent=True, on_terminate=None):
    """``sig`` to every descendant of ``pid`` (default: this process) and,
    with ``include_parent``, to ``pid`` itself; SIGKILL to what is alive
    after ``timeout`` seconds. Returns (gone, alive)."""
    _pid, proc = _pid_of(pid)
    if _pid == os.getpid() and include_parent:
        raise RuntimeError("Can't kill this process ({}) from within itself".format(pid))
    pids = _children(_pid) + ([_pid] if include_parent else [])
    gone, alive = _signal_and_wait(pids, sig, timeout)
    if on_terminate is not None:
        for p in _as_processes((gone, []), True)[0]:
            on_terminate(p)
    return _as_processes((gone, alive), proc)


def terminate_process(pid=None, sig=signal.SIGTERM, timeout=5, children=True, parent=False, on_terminate=None):
    """With ``children``, ``terminate_process_tree(pid, include_parent=parent)``;
    else ``sig`` to ``pid`` alone, then SIGKILL after ``timeout``."""
    if children:
        return terminate_process_tree(pid=pid, sig=sig, timeout=timeout, include_parent=parent)
    _pid, proc = _pid_of(pid)
    if not _alive(_pid):
        return ([], [])
    gone, alive = _signal_and_wait([_pid], sig, timeout)
    if on_terminate is not None:
        for p in _as_processes((gone, []), True)[0]:
            on_terminate(p)
    return _as_processes((gone, alive), proc)


class Monitor:
    """A process's memory (``memory(units, kind="vms"|"rss")``) and its
    RLIMIT_AS (``memlimit(units)``: (soft, hard), -1 for unlimited, as
    psutil gives it). ``process`` is a ``psutil.Process`` where psutil is
    installed, else None."""

    def __init__(self, pid=None):
        self.pid = os.getpid() if pid is None else pid
        try:
            self.process = _psutil().Process(self.pid)
        except ImportError:
            self.process = None

    def memory(self, units="B", *, kind="vms"):
        page = os.sysconf("SC_PAGE_SIZE")
        with open("/proc/{}/statm".format(self.pid)) as f:
            size, resident = (int(x) * page for x in f.read().split()[:2])
        usage = {"vms": size, "rss": resident}
        if kind not in usage:
            raise ValueError("No memory kind {}, use one from {}".format(kind, sorted(usage)))
        return memconvert(usage[kind], frm="B", to=units)

    def memlimit(self, units="B"):
        limits = tuple(-1 if x == resource.RLIM_INFINITY else x for x in resource.prlimit(self.pid, resource.RLIMIT_AS))
        if units != "B":
            limits = tuple(memconvert(x, frm="B", to=units) for x in limits)
        return limits
