# SPDX-License-Identifier: LGPL-2.1-or-later
"""leash.monitored: ndcctools resource_monitor's Python API on leash jobs.

resource_monitor runs the function in a child and polls /proc for its
processes at an interval; leash forks the function into its own cgroup and
reads the cgroup's figures at each sample (constant cost whatever the number
of processes), so nothing the function forks is missed. Names and units are
resource_monitor's: times in seconds, memory, swap, disk and I/O in MB
(2**20 bytes), counts as counts. leash's own figures (the sample's column
names, e.g. ``mem_anon_bytes``, ``psi_cpu_some_us``) are in the same dict.
"""

import functools
import itertools
import json
import os

from . import _errors

__all__ = ["monitored", "RESOURCE_UNITS"]

MB = float(1 << 20)

#: resource_monitor's name -> (unit, leash sample figure, divisor)
RESOURCE_UNITS = {
    "wall_time": ("s", "t_s", 1),
    "cpu_time": ("s", "cpu_total_s", 1),
    "cores": ("cores", "cores", 1),
    "memory": ("MB", "memory_bytes", MB),
    "swap_memory": ("MB", "swap_current_bytes", MB),
    "bytes_read": ("MB", "io_read_bytes", MB),
    "bytes_written": ("MB", "io_write_bytes", MB),
    "disk": ("MB", "disk_bytes", MB),
    "total_files": ("files", "disk_files", 1),
    "max_concurrent_processes": ("procs", "procs", 1),
    "total_processes": ("procs", "total_processes", 1),
    # GPUs (issue 28): the job's processes on the GPUs, attributed by pid
    # (resource_tracker's gpu_vram, gpu_usage, gpu_utilized); absent where
    # no GPU driver answered
    "gpu_memory": ("MB", "gpu_memory_bytes", MB),
    "gpu_utilization": ("%", "gpu_util_pct", 1),
    "gpus": ("gpus", "gpus", 1),
}

# resource_monitor limits that leash enforces with its own limits, and the
# option-table key and value text for each (value in resource_monitor units)
_ENFORCED = {
    "wall_time": ("wall-time", lambda v: "{}s".format(v)),
    "cpu_time": ("cpu-time", lambda v: "{}s".format(v)),
    "memory": ("memory", lambda v: str(int(v * MB))),
    "swap_memory": ("swap", lambda v: str(int(v * MB))),
    "max_concurrent_processes": ("pids", lambda v: str(int(v))),
}
# resource_monitor limits that a cgroup controller enforces where there is
# one, and the sampled figure that checks them where there is none (on such
# a host the pids controller is often missing: max_concurrent_processes then
# still holds, by the procs count of each sample)
_SAMPLED_TOO = {"max_concurrent_processes": ("procs", 1, int)}
# limits on measured figures, checked by the library at each sample (the
# config key "limit", `leash run --limit`): figure name, divisor to leash's
# unit, and how leash spells the value (bytes and counts whole, cores decimal)
_MEASURED = {
    "disk": ("disk", MB, int),
    "total_files": ("files", 1, int),
    "bytes_written": ("io_write_bytes", MB, int),
    "bytes_read": ("io_read_bytes", MB, int),
    "cores_avg": ("cores_avg", 1, float),
    "total_processes": ("total_processes", 1, int),
    "gpu_memory": ("gpu_memory", MB, int),
}
# limits that need the disk walk: of the caller's working directory unless
# the call names another (sample_disk=...)
_DISK = ("disk", "total_files")
# report reason -> resource_monitor name
_REASON_NAMES = {
    "wall_time": "wall_time",
    "cpu_time": "cpu_time",
    "memory": "memory",
    "pids": "max_concurrent_processes",
    "procs": "max_concurrent_processes",
}
for _rm, (_fig, _div, _kind) in _MEASURED.items():
    _REASON_NAMES.setdefault(_fig, _rm)


def _limit_settings(limits):
    out = []
    for name, value in (limits or {}).items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError("leash.monitored: limit {}={!r}: expected a number >= 0".format(name, value))
        if name in _ENFORCED:
            key, text = _ENFORCED[name]
            out.append((key, text(value)))
            if name in _SAMPLED_TOO:
                fig, div, kind = _SAMPLED_TOO[name]
                out.append(("limit", "{}={}".format(fig, max(1, kind(value * div)))))
        elif name in _MEASURED:
            fig, div, kind = _MEASURED[name]
            v = kind(value * div)
            if v <= 0:
                raise ValueError("leash.monitored: limit {}={!r}: too small to enforce".format(name, value))
            out.append(("limit", "{}={}".format(fig, v)))
        else:
            raise ValueError(
                "leash.monitored: unknown limit {!r}: expected one of {}".format(
                    name, ", ".join(sorted(set(_ENFORCED) | set(_MEASURED)))
                )
            )
    return out


def to_resources(sample):
    """resource_monitor's dict for one sample (a dict of leash figures)."""
    res = {}
    for name, (unit, fig, div) in RESOURCE_UNITS.items():
        v = sample.get(fig)
        if v is not None:
            res[name] = v / div if div != 1 else v
    wall, cpu = sample.get("t_s"), sample.get("cpu_total_s")
    if wall and cpu is not None:
        res["cores_avg"] = cpu / wall
    for k, v in sample.items():
        res.setdefault(k, v)
    return res


def _merge_max(peak, res):
    for k, v in res.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            old = peak.get(k)
            peak[k] = v if old is None or v > old else old
        else:
            peak.setdefault(k, v)


def _from_report(report):
    """Figures the report has that sampling may have missed (a call shorter
    than one interval): the whole tree's totals, in resource_monitor's units."""
    u = report.get("usage") or {}
    res = {}
    if u.get("wall_time_s") is not None:
        res["wall_time"] = u["wall_time_s"]
    if u.get("cpu_time_s") is not None:
        res["cpu_time"] = u["cpu_time_s"]
    if u.get("memory_peak_bytes") is not None:
        res["memory"] = u["memory_peak_bytes"] / MB
    if u.get("swap_peak_bytes") is not None:
        res["swap_memory"] = u["swap_peak_bytes"] / MB
    if u.get("pids_peak") is not None:
        res["max_concurrent_processes"] = u["pids_peak"]
    if u.get("io_read_bytes") is not None:
        res["bytes_read"] = u["io_read_bytes"] / MB
    if u.get("io_write_bytes") is not None:
        res["bytes_written"] = u["io_write_bytes"] / MB
    if res.get("wall_time") and res.get("cpu_time") is not None:
        res["cores_avg"] = res["cpu_time"] / res["wall_time"]
    # an average, not a peak: the report's own figure for the whole call
    avg = (((report.get("sampling") or {}).get("averages") or {}).get("cores") or {}).get("value")
    if avg is not None:
        res["cores_avg"] = avg
    return res


# the memory figures summed over the call's processes where no memory
# controller counts them (leash's sample columns)
_PER_PROCESS_MEMORY = ("memory", "memory_bytes", "mem_rss_bytes", "mem_pss_bytes", "mem_uss_bytes")


def _seen(res):
    """A sample's figures for the peaks: one that saw none of the call's
    processes (the last, after a call shorter than the interval) read 0 for
    the per-process memory sums, true of that moment and not of the call."""
    if res.get("procs") == 0 and res.get("mem_current_bytes") is None:
        return {k: (None if k in _PER_PROCESS_MEMORY else v) for k, v in res.items()}
    return res


def _memory_from_report(peak, report):
    """The call's memory is the report's peak (memory.peak, or the largest
    sample that saw the call's processes, at least every sample's figure):
    a sample taken after the call ended reads 0, and a forked call's
    ru_maxrss is its caller's. A sampled peak is a lower bound (the call
    may have used more between two samples), and ``memory_note`` says so.
    None where the report has none, and ``memory_note`` says why (the
    report's memory_peak_note)."""
    u = report.get("usage") or {}
    if u.get("memory_peak_bytes") is not None:
        peak["memory"] = u["memory_peak_bytes"] / MB
        basis = u.get("memory_peak_basis") or ""
        if basis.startswith("sampled"):
            peak["memory_note"] = ("the largest sample ({}), a lower bound: without a memory peak counted by the "
                                   "kernel the call may have used more between two samples".format(basis))
        return
    peak["memory"] = None
    peak["memory_note"] = u.get("memory_peak_note") or "the report has no memory peak for this call"


_ids = itertools.count(1)


def _call_id(args, kwargs):
    try:
        return str(hash(json.dumps({"args": args, "kwargs": kwargs}, sort_keys=True)))
    except (TypeError, ValueError):
        return "call-{}".format(next(_ids))


def monitored(limits=None, callback=None, interval=1, return_resources=True, **leash_options):
    """resource_monitor's ``monitored``: a decorator (or a call on a
    function: ``monitored(limits={...})(f)``) that runs each call of the
    function in its own leash job and measures it.

    ``limits``: resource_monitor's names and units (``wall_time`` and
    ``cpu_time`` in s, ``memory``, ``swap_memory``, ``disk``,
    ``bytes_read``, ``bytes_written`` in MB, ``max_concurrent_processes``,
    ``total_processes``, ``total_files``, ``cores_avg``). The first five are
    enforced by leash's own limits (cgroup, rlimit or supervisor), and
    ``max_concurrent_processes`` also by the sampled process count, so it holds
    where the pids controller is missing; the others by the job's sampling, at
    each sample (so up to one ``interval`` late). Every limit, memory as a
    per-process RLIMIT_AS included, raises ``ResourceExhaustion``; ``cores_avg``
    at the end is the report's average for the whole call.
    ``disk`` and ``total_files`` walk the caller's working directory, or the
    directory given as ``sample_disk=``. Passing a limit ends the call and
    raises ``leash.ResourceExhaustion`` with the resources measured.

    The resources' ``memory`` is the report's memory peak for the call
    (memory.peak, or the largest sample that saw the call's processes: a
    lower bound, and ``memory_note`` says so), or None with ``memory_note``
    saying why (without a memory controller a call
    shorter than one interval is seen by no sample, and a forked call's
    ru_maxrss is its caller's).

    ``callback(id, name, step, resources)`` is called in the caller's thread
    at each sample, every ``interval`` seconds (``step`` 1, 2, ...), and
    last with ``step == -1`` and the peaks of the call; an exception it
    raises ends the call and propagates. ``return_resources``: return
    ``(result, resources)`` instead of the result. Extra keywords are
    ``leash.limit`` options (``context``, ``cgroup_parent``, ``grace``...).
    """
    from . import limit as _limit
    from ._settings import duration_text

    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or interval <= 0:
        raise ValueError("leash.monitored: interval={!r}: expected seconds > 0".format(interval))
    extra = _limit_settings(limits) + [("sample", duration_text(interval, "interval"))]
    if any(k in (limits or {}) for k in _DISK) and leash_options.get("sample_disk") is None:
        extra.append(("sample-disk", os.getcwd()))

    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            fun_id = _call_id(args, kwargs)
            name = getattr(function, "__name__", "function")
            peak = {}

            def on_sample(sample, step, last):
                res = to_resources(sample)
                _merge_max(peak, _seen(res))
                if not last and callback is not None:
                    callback(fun_id, name, step + 1, res)

            lim = _limit(function, **leash_options)
            lim.settings.extend(extra)
            # memory as RLIMIT_AS (no controller): a MemoryError in the function is the limit
            lim.memory_limited = lim.memory_limited or (limits or {}).get("memory") is not None
            lim._sample = on_sample
            exhausted = None
            try:
                value, report = lim.call_with_report(*args, **kwargs)
            except _errors.LimitExceeded as e:
                report, value = e.report, None
                exhausted = e
            for k, v in _from_report(report).items():
                if k == "cores_avg" or k not in peak or (isinstance(v, (int, float)) and v > (peak[k] or 0)):
                    peak[k] = v
            _memory_from_report(peak, report)
            peak["report"] = report
            if exhausted is not None:
                rm_name = _REASON_NAMES.get(exhausted.limit, exhausted.limit)
                given = (limits or {}).get(rm_name, exhausted.value)
                peak["limits_exceeded"] = {rm_name: given}
            if callback is not None:
                callback(fun_id, name, -1, peak)
            if exhausted is not None:
                raise _errors.ResourceExhaustion(peak, function, args, kwargs, report) from exhausted
            if return_resources:
                return value, peak
            return value

        return wrapper

    return decorate
