# SPDX-License-Identifier: LGPL-2.1-or-later
"""pynisher's public APIs (1.x and 0.x) on leash jobs: a drop-in.

Code written for pynisher runs unchanged when ``import pynisher`` finds the
small ``pynisher`` package leash ships (it re-exports this module), or when
it imports ``leash.compat.pynisher as pynisher``.

1.x: ``Pynisher`` / ``limit`` (the same class), ``restricted``, ``EMPTY``,
``contexts``, ``supports`` and ``supports_*``, and the exception tree
``PynisherException`` > ``TimeoutException`` > {``CpuTimeoutException``,
``WallTimeoutException``}, ``MemoryLimitException(PynisherException,
MemoryError)``.

0.x: ``enforce_limits(...)`` whose wrapper returns the result or None and
keeps ``result``, ``exit_status``, ``exitcode``, ``wall_clock_time``,
``stdout``, ``stderr``, ``os_errno``; its exception classes are the 1.x
ones where the names agree (``TimeoutException``, ``CpuTimeoutException``),
``MemorylimitException`` is ``MemoryLimitException``, and
``SubprocessException``, ``SignalException``, ``AnythingException``,
``PynisherError`` are PynisherExceptions.

Where pynisher guesses, leash knows. pynisher limits one process with
RLIMIT_AS/RLIMIT_CPU and infers the cause of a death from the exit code (a
SIGSEGV under a memory limit "is presumably" memory; an OOM kill is a plain
PynisherException). leash reads the job's cgroup: an OOM kill is a
MemoryLimitException; CPU time is the whole tree's; wall time is measured by
the supervisor; and every process the function started is gone when the
call returns, whatever ``terminate_child_processes`` says (a cgroup leaves
no way to keep them).

The result channel differs from pynisher's: pynisher unpickles whatever the
function's process sends back; leash decodes only plain data and the
classes named in ``result_types`` (``ResultRefused`` otherwise), and
rebuilds a function's exception as itself for a builtin type, a named one
or a class the caller has loaded already (as data: none of its code runs),
``leash.RemoteError`` otherwise (which a ``wrap_errors`` name matches by the
remote type's name), and always for a ``BaseException`` that is not an
``Exception`` (pynisher raised the function's ``SystemExit`` in the
caller). Code that returns
its own objects from a function it trusts passes ``trust_result=True``
(pynisher's behaviour) to ``Pynisher``/``limit``, ``restricted`` and
``enforce_limits``; see ``leash.limit``.
"""

import multiprocessing
import multiprocessing.context
import os
import resource as _resource
import json
import math
import shutil
import signal as _signal
import sys
import tempfile
import threading
import time
import traceback as _traceback
from functools import wraps

import leash as _leash
import leash._call  # noqa: F401  (the probe's job)
from leash import _errors
from leash.compat import pynisher_util as _util
from leash.compat.pynisher_util import callstring, memconvert, timeconvert

__all__ = [
    "Pynisher",
    "EMPTY",
    "limit",
    "restricted",
    "CpuTimeoutException",
    "MemoryLimitException",
    "PynisherException",
    "TimeoutException",
    "WallTimeoutException",
    "contexts",
    "supports",
    "supports_walltime",
    "supports_cputime",
    "supports_memory",
    "supports_limit_decorator",
    # 0.x
    "enforce_limits",
    "MemorylimitException",
    "SubprocessException",
    "SignalException",
    "AnythingException",
    "PynisherError",
]

__version__ = "1.0.10+leash"


# --- exceptions (1.x) ----------------------------------------------------------


class PynisherException(Exception):
    """Base class of pynisher's exceptions."""


class TimeoutException(PynisherException):
    """A time limit (CPU or wall) was reached."""


class CpuTimeoutException(TimeoutException):
    """The CPU-time limit was reached."""


class WallTimeoutException(TimeoutException):
    """The wall-time limit was reached."""


class MemoryLimitException(PynisherException, MemoryError):
    """The memory limit was reached."""


# --- exceptions only 0.x had ---------------------------------------------------

MemorylimitException = MemoryLimitException


class SubprocessException(PynisherException):
    """0.x: the function raised an OSError (its errno is in ``os_errno``)."""


class SignalException(PynisherException):
    """0.x: the function was ended by a signal no limit sent."""


class AnythingException(PynisherException):
    """0.x: the call ended without a result and without a known cause."""


class PynisherError(PynisherException):
    """0.x: an internal error."""


# The drop-in's own exceptions travel back from the function's process (it
# wraps errors there, as pynisher did): the result channel rebuilds them as
# named types, with whatever else the caller names (leash.limit's result_types).
_OWN_TYPES = (
    PynisherException,
    TimeoutException,
    CpuTimeoutException,
    WallTimeoutException,
    MemoryLimitException,
    SubprocessException,
    SignalException,
    AnythingException,
    PynisherError,
)


def _channel(trust_result, result_types):
    """leash.limit's result-channel keywords for the drop-in."""
    if trust_result:
        return {"trust_result": True}
    return {"result_types": tuple(result_types or ()) + _OWN_TYPES}


# --- support -------------------------------------------------------------------

contexts = ["fork", "spawn", "forkserver"]


class _EMPTY:
    """The value a call returns with ``raises=False`` when it failed."""

    def __repr__(self):
        return "EMPTY"

    def __bool__(self):
        return False


EMPTY = _EMPTY()


def supports_walltime():
    """True: wall time is enforced by leash's supervisor."""
    return sys.platform.startswith("linux")


def supports_cputime():
    """True: CPU time (of the whole tree) is enforced by leash's supervisor."""
    return sys.platform.startswith("linux")


def supports_memory():
    """True on Linux: by the memory controller, or RLIMIT_AS without one."""
    return sys.platform.startswith("linux")


def supports_limit_decorator():
    """True on Linux (the fork context)."""
    return sys.platform.startswith("linux")


def supports(limit):
    """Whether ``limit`` ("wall_time", "cpu_time", "memory" or
    "decorator") is supported here; ValueError for anything else."""
    mapping = {
        "wall_time": supports_walltime,
        "cpu_time": supports_cputime,
        "memory": supports_memory,
        "decorator": supports_limit_decorator,
    }
    f = mapping.get(str(limit).lower())
    if f is None:
        raise ValueError("Not a known feature, must be one of {}".format(list(mapping)))
    return f()


# --- units and contexts --------------------------------------------------------


def _memory_bytes(memory):
    if isinstance(memory, tuple):
        x, unit = memory
        try:
            return round(memconvert(x, frm=str(unit)))
        except KeyError:
            raise ValueError("`memory` {}: unit must be one of {}".format(memory, ["B", "KB", "MB", "GB"])) from None
    return memory


def _seconds(t, what):
    if isinstance(t, tuple):
        x, unit = t
        try:
            return round(timeconvert(x, frm=str(unit)))
        except KeyError:
            raise ValueError("`{}` {}: unit must be one of {}".format(what, t, ["s", "m", "h"])) from None
    return t


def _context_name(context):
    """The leash context for pynisher's ``context``: a name, a
    multiprocessing context object, or None (multiprocessing's default,
    which is forkserver from Python 3.14 on). 1.x runs forkserver as
    leash's fork: the library forks straight into the job's cgroup and
    nothing is pickled; 0.x as leash's spawn, a fresh interpreter, as its
    fork server's processes were (see the compatibility table in the
    README)."""
    if context is None:
        context = multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_context().get_start_method()
    elif isinstance(context, multiprocessing.context.BaseContext):
        context = context.get_start_method()
    if context not in contexts:
        raise ValueError("`context` {} must be in {}".format(context, contexts))
    return context


def _start_method_of(context):
    """0.x's ``context`` object as a start method name where it says one:
    a multiprocessing context, or any object whose ``get_start_method()``
    names one (a wrapper of a context); the object itself otherwise."""
    if isinstance(context, (str, multiprocessing.context.BaseContext)):
        return context
    try:
        name = context.get_start_method()
    except Exception:
        return context
    return name if isinstance(name, str) else context


_probe = {}  # leash.configure() generation -> how a memory and a pids limit are enforced


def _probed():
    """How a job's memory and pids limits are enforced here ("cgroup", or
    "rlimit"/"none" without the controller): one job made (not started) and
    closed, once per leash.configure() state. Made without new_job's
    WeakLimitWarning: the probe's limits are none the user asked."""
    gen = _leash._defaults_gen
    if gen not in _probe:
        settings = _leash._defaults + [("memory", str(1 << 30)), ("pids", "4096")]
        job = _leash._call.require_extension().Job(settings, "pynisher-probe")
        try:
            limits = json.loads(job.report("json")).get("limits") or {}
        finally:
            job.close()
        _probe.clear()
        _probe[gen] = {k: (limits.get(k) or {}).get("enforced_by") for k in ("memory", "pids")}
    return _probe[gen]


def _memory_enforced_by():
    """"cgroup" where a job's memory limit is the memory controller's,
    "rlimit" where leash falls back to RLIMIT_AS."""
    return _probed()["memory"]


def _nproc_binds():
    """Whether 0.x's num_processes is the function's own RLIMIT_NPROC here:
    no pids controller, and a caller the kernel does not exempt (uid 0 is)."""
    return _probed()["pids"] != "cgroup" and os.geteuid() != 0


def _nproc_report(report, num_processes):
    """A 0.x call's report where its num_processes was RLIMIT_NPROC in the
    function's process (_nproc_binds; leash was given no pids limit): the
    limit as the report's other limits are, enforced_by rlimit."""
    if num_processes is None or not isinstance(report, dict) or not _nproc_binds():
        return report
    note = (
        "RLIMIT_NPROC in the function's process (pynisher 0.x's num_processes, no pids controller here): it "
        "counts every process of the user, not only the job's"
    )
    pids = {"value": int(num_processes), "unit": "count", "enforced_by": "rlimit", "note": note}
    return dict(report, limits=dict(report.get("limits") or {}, pids=pids))


def _vms():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _job_name(name, func):
    text = name if isinstance(name, str) and name else getattr(func, "__name__", "pynisher")
    safe = "".join(c if c.isalnum() or c in "_.-" else "_" for c in text).lstrip(".")
    return (safe or "pynisher")[:48]


def _callstring(func, args, kwargs):
    text = callstring(func, *args, **kwargs)
    return text if len(text) < 500 else text[:497] + "..."


def _is_err(err, err_type):
    """pynisher's matching: a name compares with the exception's class name,
    a class matches only exactly (not subclasses: library errors often
    derive from builtin ones). A leash.RemoteError (a type the caller did
    not name) matches by the remote type's name."""
    if isinstance(err_type, str):
        if isinstance(err, _errors.RemoteError):
            return err.qualname.rsplit(".", 1)[-1] == err_type
        return type(err).__name__ == err_type
    return isinstance(err_type, type) and type(err) is err_type


# --- 1.x -----------------------------------------------------------------------


def _wrap_error(err, memory, cpu_time, wall_time, wrap_errors):
    """pynisher's wrapping of the function's own exception (``wrap_errors``,
    and a MemoryError under a memory limit), or ``err`` itself. Done in the
    job's process, as pynisher does, so that the caller receives only a
    pynisher exception with a message: the function's modules (sklearn...)
    are never imported into the caller to rebuild its exception."""
    if memory is not None and isinstance(err, MemoryError) and not isinstance(err, MemoryLimitException):
        # first, as pynisher: then wrap_errors=True wraps it in turn
        err = MemoryLimitException("MemoryError raised with limit {}B".format(memory))
    message = "Wrapped Exception {} - {}".format(type(err).__name__, err)
    w = wrap_errors
    if w is False or w is None:
        return err
    if w is True:
        return PynisherException(message)
    mapping = {"pynisher": list(w)} if isinstance(w, (list, set, tuple)) else w
    if cpu_time is not None and any(_is_err(err, t) for t in mapping.get("cpu_time", ())):
        return CpuTimeoutException(message)
    if wall_time is not None and any(_is_err(err, t) for t in mapping.get("wall_time", ())):
        return WallTimeoutException(message)
    if memory is not None:
        for t in mapping.get("memory", ()):
            if isinstance(t, tuple):
                t_type, code = t[0], t[1]
                if _is_err(err, t_type) and getattr(err, "errno", None) == code:
                    if len(t) < 3 or getattr(err, "winerror", None) == t[2]:
                        return MemoryLimitException(message)
            elif _is_err(err, t):
                return MemoryLimitException(message)
    if any(_is_err(err, t) for t in mapping.get("pynisher", ())):
        return PynisherException(message)
    return err


class _Limiter:
    """What runs in the job's process for a 1.x call, as pynisher's own
    limiter did there: the memory warning (to stderr, with ``warnings``),
    RLIMIT_AS set here when the host has no memory controller (after the
    interpreter has started, whatever the context), the function, and its
    exception wrapped before it crosses back. A class, so it pickles for
    spawn."""

    def __init__(self, func, memory, rlimit_memory, warnings, wrap_errors, cpu_time, wall_time, end_children):
        self.func = func
        self.memory, self.rlimit_memory, self.warnings = memory, rlimit_memory, warnings
        self.wrap_errors, self.cpu_time, self.wall_time = wrap_errors, cpu_time, wall_time
        self.end_children = end_children
        self.__name__ = getattr(func, "__name__", "function")

    def __call__(self, *args, **kwargs):
        if self.memory is not None and self.warnings:
            used = _vms()
            if self.memory <= used:
                print(
                    "Current memory usage in new process is {}B but  setting limit to {}B. Likely to fail, try"
                    " increasing the memory limit".format(used, self.memory),
                    file=sys.stderr,
                )
        if self.rlimit_memory:
            _resource.setrlimit(_resource.RLIMIT_AS, (self.memory, self.memory))
        try:
            return self.func(*args, **kwargs)
        except BaseException as e:
            wrapped = _wrap_error(e, self.memory, self.cpu_time, self.wall_time, self.wrap_errors)
            if wrapped is e:
                raise
            raise wrapped from None
        finally:
            if self.end_children:
                try:
                    _end_children()
                except Exception:
                    pass  # under a spent memory limit even /proc cannot be listed: leash ends them


def _end_children():
    """pynisher's terminate_child_processes=True, in the function's
    process: its descendants get SIGTERM (SIGKILL 2 s later) and its own
    children are reaped here, so none is left a zombie for init to reap
    (leash's kill of the job would orphan them first)."""
    if not _util._children(os.getpid()):
        return
    _util.terminate_process_tree(os.getpid(), include_parent=False, timeout=2)
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


class _EndedProcess:
    """``Pynisher._process`` after a call, which pynisher's own tests read:
    the function's process, ended and waited for by leash (psutil's
    answers for a process that is gone)."""

    def __init__(self, pid):
        self.pid = pid

    def is_running(self):
        return False

    def status(self):
        return "dead"

    def children(self, recursive=False):
        try:
            import psutil
        except ImportError:
            return []
        raise psutil.NoSuchProcess(self.pid)


class Pynisher:
    """Restrict a function's resources: each call runs it in a leash job.

    Arguments as pynisher 1.x: ``name`` (the job name), ``memory`` (bytes,
    or ``(value, "B"|"KB"|"MB"|"GB")``, 1024-based), ``cpu_time`` and
    ``wall_time`` (seconds >= 1, or ``(value, "s"|"m"|"h")``), ``context``
    ("fork", "spawn", "forkserver", a multiprocessing context, or None:
    multiprocessing's default), ``raises`` (False: return ``EMPTY`` instead
    of raising), ``warnings`` (print pynisher's warnings to stderr),
    ``wrap_errors`` (True: every error of the function becomes a
    PynisherException; a list of classes or class names: those do; a dict
    with keys "memory", "cpu_time", "wall_time", "pynisher": those errors
    become that kind of exception when that limit is set; wrapped in the
    job's process), ``terminate_child_processes`` and
    ``forceful_keyboard_interrupt`` (accepted; leash always ends the whole
    tree). leash's own: ``trust_result`` (passed to ``leash.limit``: the
    one keyword that lets the result come back by full pickle).
    """

    WallTimeoutException = WallTimeoutException
    CpuTimeoutException = CpuTimeoutException
    MemoryLimitException = MemoryLimitException
    PynisherException = PynisherException
    TimeoutException = TimeoutException

    def __init__(
        self,
        func,
        *,
        name=None,
        memory=None,
        cpu_time=None,
        wall_time=None,
        context=None,
        raises=True,
        warnings=True,
        wrap_errors=False,
        terminate_child_processes=True,
        forceful_keyboard_interrupt=True,
        trust_result=False,
        result_types=(),
    ):
        _cpu = _seconds(cpu_time, "cpu_time")
        _wall = _seconds(wall_time, "wall_time")
        _mem = _memory_bytes(memory)
        if not callable(func):
            raise ValueError("`func` ({}) must be callable".format(func))
        if _cpu is not None and not _cpu >= 1:
            raise ValueError("`cpu_time` {} must be >= 1 seconds".format(cpu_time))
        if _wall is not None and not _wall >= 1:
            raise ValueError("`wall_time` {} must be >= 1 second".format(wall_time))
        if _mem is not None and not _mem >= 1:
            raise ValueError("`memory` {} must be >= 1 Byte".format(memory))
        if isinstance(wrap_errors, dict):
            valid = {"memory", "wall_time", "cpu_time", "pynisher"}
            if not all(k in valid for k in wrap_errors):
                raise ValueError(
                    "`wrap_errors` has unknown key in {}, each must be in {} ".format(list(wrap_errors), valid)
                )
        elif not isinstance(wrap_errors, (bool, list, set, tuple)):
            raise ValueError("Arg `wrap_errors` is ill formatted {}".format(wrap_errors))
        self._context_name = _context_name(context)
        self.func = func
        self.name = name
        self.cpu_time = _cpu
        self.memory = _mem
        self.wall_time = _wall
        self.raises = raises
        self.context = (
            multiprocessing.get_context(context) if isinstance(context, str) or context is None else context
        )
        self.warnings = warnings
        self.wrap_errors = wrap_errors
        self.terminate_child_processes = terminate_child_processes
        self.forceful_keyboard_interrupt = forceful_keyboard_interrupt
        self._limited = None
        self._trust = _channel(trust_result, result_types)

    def _limited_call(self):
        """The leash.limit of the call, made at the first call: where a job's
        memory limit would be RLIMIT_AS, the job's process sets it itself
        (as pynisher did) after its warning, and after a spawned interpreter
        has started."""
        if self._limited is None:
            rlimit_memory = self.memory is not None and _memory_enforced_by() != "cgroup"
            target = _Limiter(
                self.func,
                self.memory,
                rlimit_memory,
                self.warnings,
                self.wrap_errors,
                self.cpu_time,
                self.wall_time,
                self.terminate_child_processes,
            )
            self._limited = _leash.limit(
                target,
                memory=None if rlimit_memory else self.memory,
                cpu_time=self.cpu_time,
                wall_time=self.wall_time,
                grace=1,
                name=_job_name(self.name, self.func),
                context=self._context_name,
                **self._trust
            )
        return self._limited

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    @property
    def report(self):
        """leash's report (a dict) of this thread's last call."""
        return None if self._limited is None else self._limited.last_report

    @property
    def _process(self):
        report = self.report
        return None if not report or report.get("pid") is None else _EndedProcess(report["pid"])

    def run(self, *args, **kwargs):
        """The same as calling."""
        return self(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        try:
            value = self._limited_call()(*args, **kwargs)
        except KeyboardInterrupt:
            raise
        except BaseException as e:
            err = self._translate(e, args, kwargs)
            if not self.raises:
                return EMPTY
            cause = e.__cause__ if isinstance(e.__cause__, _errors.RemoteTraceback) else e
            if err is e:
                raise
            raise err from cause
        return value

    def _translate(self, e, args, kwargs):
        call = _callstring(self.func, args, kwargs)
        if isinstance(e, _errors.MemoryLimitExceeded):
            return MemoryLimitException("Not enough memory to run function ({}B).\n{}\n{}".format(self.memory, call, e))
        if isinstance(e, _errors.CpuTimeLimitExceeded):
            return CpuTimeoutException("Did not finish in cpu time ({}s)\n{}".format(self.cpu_time, call))
        if isinstance(e, _errors.WallTimeLimitExceeded):
            return WallTimeoutException("Did not finish in time ({}s)\n{}".format(self.wall_time, call))
        if isinstance(e, _errors.JobKilled):
            if e.signal == _signal.SIGSEGV and self.memory is not None:
                # as pynisher: a failed allocation in C code often ends as SIGSEGV
                return MemoryLimitException(
                    "The function exited with a segmentation error (SIGSEGV) and a memory limit was set.\n" + call
                )
            if e.signal == _signal.SIGXCPU and self.cpu_time is not None:
                return CpuTimeoutException("Did not finish in cpu time ({}s)\n{}".format(self.cpu_time, call))
            return PynisherException("Unknown reason for exitcode -{}, no result: {}\n{}".format(e.signal, e, call))
        if isinstance(e, _errors.JobExited):
            if e.status == 0:
                return PynisherException(
                    "Function ended properly but no result was recieved. Got exitcode 0 from subprocess that ran:\n"
                    + call
                )
            if self.memory is not None:
                # as pynisher: nothing came back under a memory limit (the
                # result or the error could not be sent)
                return MemoryLimitException(
                    "While returning the result from your function, we could not retrieve the result or any error"
                    " about why.\n{}\n{}".format(call, e)
                )
            return PynisherException("Unknown reason for exitcode {}, no result: {}\n{}".format(e.status, e, call))
        if isinstance(e, (_errors.LimitExceeded, _errors.LeashError)):
            return PynisherException("{}\n{}".format(e, call))
        if isinstance(e, PynisherException):
            return e  # wrapped in the job's process already
        return _wrap_error(e, self.memory, self.cpu_time, self.wall_time, self.wrap_errors)

    @staticmethod
    def supports(limit):
        """See ``supports``."""
        return supports(limit)


limit = Pynisher


def restricted(
    name=None,
    *,
    memory=None,
    cpu_time=None,
    wall_time=None,
    context=None,
    raises=True,
    warnings=True,
    wrap_errors=False,
    terminate_child_processes=True,
    forceful_keyboard_interrupt=True,
    trust_result=False,
    result_types=(),
):
    """pynisher's decorator: ``@restricted(memory=..., wall_time=...)``
    limits every call of the function it decorates."""
    if not supports("decorator") or context == "spawn":
        raise ValueError(
            "`@restricted(...)` cannot use the `spawn` context: the decorated function is"
            " not picklable by reference. Please use the `limit` method of limiting."
        )
    if callable(name):
        raise ValueError("Please pass arguments to decorator `@restricted`")

    def decorator(func):
        limited = Pynisher(
            func,
            name=name,
            memory=memory,
            cpu_time=cpu_time,
            wall_time=wall_time,
            context=context,
            raises=raises,
            warnings=warnings,
            wrap_errors=wrap_errors,
            terminate_child_processes=terminate_child_processes,
            forceful_keyboard_interrupt=forceful_keyboard_interrupt,
            trust_result=trust_result,
            result_types=result_types,
        )

        @wraps(func)
        def wrapper(*args, **kwargs):
            return limited(*args, **kwargs)

        return wrapper

    return decorator


# --- 0.x -----------------------------------------------------------------------

_TAG0 = "leash.compat.pynisher 0.x"
_STATUS0 = {
    "CpuTimeoutException": CpuTimeoutException,
    "TimeoutException": TimeoutException,
    "SignalException": SignalException,
    "MemorylimitException": MemorylimitException,
    "SubprocessException": SubprocessException,
}


_cpu_deadline = [None]  # the job's process: process_time() at its CPU budget
_in_job = [False]  # this process runs a 0.x call's function
_OWN_SIGNALS = {_signal.SIGALRM, _signal.SIGXCPU, _signal.SIGPROF}


def _defer_own_limits():
    """A 0.x call made inside a 0.x call's function (nested): the outer
    call's soft limits (its alarm, its CPU timer) are held while the inner
    call runs and raise in the outer function once it returns. 0.x's inner
    wrapper swallowed them and waited for its child (the outer limit lost);
    interrupting the wait here ended the inner job at once. The outer
    call's hard limits (its wall time and grace period: leash's SIGTERM to
    the whole tree; RLIMIT_CPU) are not held. The old mask, or None."""
    if not _in_job[0] or threading.current_thread() is not threading.main_thread():
        return None
    return _signal.pthread_sigmask(_signal.SIG_BLOCK, _OWN_SIGNALS)


def _raise_for_signal(signum, frame):
    # 0.x's handler in its subprocess: the limit's signal becomes an exception
    if signum == _signal.SIGPROF and _cpu_deadline[0] is not None:
        # the kernel's CPU-time timers fire early on some hosts (here at
        # 0.85-0.92 of the interval by the process's own clock): the timer
        # is armed again for what is left until the clock has the budget
        left = _cpu_deadline[0] - time.process_time()
        if left > 0:
            _signal.setitimer(_signal.ITIMER_PROF, max(0.001, left))
            return
    if signum in (_signal.SIGXCPU, _signal.SIGPROF):
        raise CpuTimeoutException
    if signum == _signal.SIGALRM:
        raise TimeoutException
    raise SignalException


def _capture(out_path, err_path):
    """stdout and stderr (the descriptors, for C code and subprocesses, and
    Python's streams, which the caller may have replaced) to two files."""
    for path, fd, stream in ((out_path, 1, sys.stdout), (err_path, 2, sys.stderr)):
        try:
            stream.flush()
        except Exception:
            pass
        f = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        os.dup2(f, fd)
        os.close(f)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)


class _Enforced:
    """What runs in the job's process for a 0.x call, as 0.x's subprocess
    did: output captured, SIGXCPU/SIGALRM/SIGQUIT turned into
    CpuTimeoutException/TimeoutException/SignalException, RLIMIT_AS (where
    the host has no memory controller), RLIMIT_NPROC (``num_processes``),
    an alarm at the wall time, a CPU-time interval timer at the CPU time
    (SIGPROF: at least the budget by the process's clock, from the call)
    and RLIMIT_CPU at the end of the grace period (SIGKILL). A limit the function catches ends the process
    cleanly (exit 0) with its status, as 0.x's did; the status travels as
    data (a tuple of plain values). A class, so it pickles for spawn."""

    def __init__(self, func, out_path, err_path, rlimit_memory, num_processes, wall_time, cpu_time, grace):
        self.func, self.out_path, self.err_path = func, out_path, err_path
        self.rlimit_memory, self.num_processes = rlimit_memory, num_processes
        self.wall_time, self.cpu_time, self.grace = wall_time, cpu_time, grace
        self.__name__ = getattr(func, "__name__", "function")

    def _limit_self(self):
        _in_job[0] = True
        for sig in (_signal.SIGALRM, _signal.SIGXCPU, _signal.SIGPROF, _signal.SIGQUIT):
            _signal.signal(sig, _raise_for_signal)
        # a nested call's caller deferred its own limits' signals (below)
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, _OWN_SIGNALS)
        if self.rlimit_memory is not None:
            _resource.setrlimit(_resource.RLIMIT_AS, (self.rlimit_memory, self.rlimit_memory))
        if self.num_processes is not None:
            _resource.setrlimit(_resource.RLIMIT_NPROC, (self.num_processes, self.num_processes))
        if self.cpu_time is not None:
            # From now: a spawned interpreter's start-up is not the function's
            # (a forked child's CPU clock starts at 0 at the fork). The soft
            # limit: a CPU-time interval timer (SIGPROF, all threads, as
            # RLIMIT_CPU counts), armed again until time.process_time() has
            # the budget (_raise_for_signal). RLIMIT_CPU, whole seconds, is
            # the hard limit (SIGKILL) at the second nearest to the grace
            # period's end, and no sooner than a quarter over the budget: the
            # kernel's limit fires early too (at 0.90 s of a 1 s limit here),
            # and must not kill before the soft limit said so.
            used = _resource.getrusage(_resource.RUSAGE_SELF)
            used = used.ru_utime + used.ru_stime
            _cpu_deadline[0] = time.process_time() + self.cpu_time
            _signal.setitimer(_signal.ITIMER_PROF, max(0.001, self.cpu_time))
            hard = max(1, round(used + self.cpu_time + max(0, self.grace)), math.ceil(1.25 * (used + self.cpu_time)))
            _resource.setrlimit(_resource.RLIMIT_CPU, (hard, hard))
        if self.wall_time is not None:
            _signal.alarm(max(1, math.ceil(self.wall_time)))

    def __call__(self, *args, **kwargs):
        if self.out_path is not None:
            _capture(self.out_path, self.err_path)
        try:
            self._limit_self()
            return (_TAG0, self.func(*args, **kwargs), 0, None)
        except MemoryError:
            return (_TAG0, None, "MemorylimitException", None)
        except OSError as e:
            return (_TAG0, None, "SubprocessException", e.errno)
        except (CpuTimeoutException, TimeoutException, SignalException) as e:
            return (_TAG0, None, type(e).__name__, None)
        except BaseException:
            # as multiprocessing's Process did for 0.x: the traceback on
            # stderr (captured with capture_output), then the exception
            _traceback.print_exc()
            raise
        finally:
            _signal.alarm(0)
            _signal.setitimer(_signal.ITIMER_PROF, 0)


_OWN_LIMIT = {
    "CpuTimeoutException": ("cpu_time", "its CPU-time timer at cpu_time_in_s (SIGPROF"),
    "TimeoutException": ("wall_time", "its alarm at wall_time_in_s (SIGALRM"),
}


def _own_limit_report(report, status):
    """The report of a 0.x call that the function's process ended itself at
    a limit (its own timer's signal became the exception, and it exited 0
    with the status, as 0.x's did): leash saw a clean exit, reason ok; the
    limit ended it: reason cpu_time or wall_time, and likely_cause says how."""
    if status not in _OWN_LIMIT or not isinstance(report, dict) or report.get("reason") != "ok":
        return report
    reason, how = _OWN_LIMIT[status]
    cause = "the function's process ended itself at the limit: {}, raised as {}), then exited 0".format(how, status)
    return dict(report, reason=reason, likely_cause=cause)


class _NoContext(Exception):
    """A 0.x call whose ``context`` object is no multiprocessing context."""


def _mp_helpers(context_name):
    """What 0.x's Process.start() left running in the caller under spawn
    and forkserver: multiprocessing's resource tracker (one per caller,
    started once), so that the caller's children are 0.x's. It runs none of
    the function's code and starts nothing: the function's process is still
    leash's fresh interpreter in the job. Never the fork server 0.x's
    forkserver also started: it forks whatever connects to its socket,
    outside the job's cgroup (a function could ask it for processes beyond
    every limit)."""
    if context_name in ("spawn", "forkserver"):
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()


class enforce_limits:
    """pynisher 0.x's decorator factory.

    ``@enforce_limits(mem_in_mb=..., cpu_time_in_s=..., wall_time_in_s=...,
    num_processes=..., grace_period_in_s=..., logger=..., capture_output=...,
    context=...)``: the wrapper returns the function's result, or None when
    the call failed; after each call it holds ``result``, ``exit_status``
    (0, or the exception class saying why), ``exitcode`` (the process's: 0
    when the function caught a limit's signal and ended cleanly, as 0.x's
    subprocess did; -15 when the wall time and grace period passed and
    SIGTERM ended it; -9 when RLIMIT_CPU's hard limit or leash's last
    resort did), ``wall_clock_time``, ``stdout``/``stderr`` (with
    ``capture_output``), ``os_errno``, ``resources_function``,
    ``resources_pynisher`` (getrusage of children and of this process) and
    ``report`` (leash's report; where the function's own timer ended it at
    the CPU or wall time and it exited 0, the reason ``cpu_time`` or
    ``wall_time`` and ``likely_cause`` saying so). ``context``: a name, a
    multiprocessing context object or an object whose
    ``get_start_method()`` names one; any other object fails each call as
    0.x's did (``exit_status`` 5, the function not called, the reason
    logged). forkserver runs the function in a fresh interpreter (leash's
    spawn), as the fork server did; spawn and forkserver start
    multiprocessing's resource tracker in the caller, as 0.x's
    Process.start() did, never its fork server (it would fork, outside the
    job, whatever asks it). A call inside a 0.x call's function holds the
    outer call's alarm and CPU timer until it returns; they raise then
    (0.x's inner wrapper swallowed them). ``num_processes``: RLIMIT_NPROC in the job's process,
    as 0.x (it counts the user's processes, and uid 0 is exempt), and
    pids.max of the job where a pids controller exists; without one the
    report's pids limit is that RLIMIT_NPROC (enforced_by rlimit), or, for
    uid 0, leash's none with its warning. leash's own:
    ``trust_result`` (passed to ``leash.limit``).
    """

    def __init__(
        self,
        mem_in_mb=None,
        cpu_time_in_s=None,
        wall_time_in_s=None,
        num_processes=None,
        grace_period_in_s=None,
        logger=None,
        capture_output=False,
        context=None,
        trust_result=False,
        result_types=(),
    ):
        self.context = multiprocessing.get_context() if context is None else context
        self._context_error = None
        try:
            self._context_name = _context_name(_start_method_of(self.context))
        except ValueError as e:
            if isinstance(self.context, str):
                raise
            # 0.x took any object and used its Pipe and Process at the call;
            # one that is no context fails each call as 0.x's did (exit_status 5)
            self._context_name, self._context_error = None, e
        self.mem_in_mb = mem_in_mb
        self.cpu_time_in_s = cpu_time_in_s
        self.num_processes = num_processes
        self.wall_time_in_s = wall_time_in_s
        self.grace_period_in_s = 0 if grace_period_in_s is None else grace_period_in_s
        self.logger = logger if logger is not None else multiprocessing.get_logger()
        self.capture_output = capture_output
        self._trust = _channel(trust_result, result_types)
        if mem_in_mb is not None:
            self.logger.debug("Restricting your function to {} mb memory.".format(mem_in_mb))
        if cpu_time_in_s is not None:
            self.logger.debug("Restricting your function to {} seconds cpu time.".format(cpu_time_in_s))
        if wall_time_in_s is not None:
            self.logger.debug("Restricting your function to {} seconds wall time.".format(wall_time_in_s))
        if num_processes is not None:
            self.logger.debug("Restricting your function to {} threads/processes.".format(num_processes))
        if grace_period_in_s is not None:
            self.logger.debug("Allowing a grace period of {} seconds.".format(grace_period_in_s))

    def _limited(self, func, out_path, err_path):
        """The call's leash.limit: leash's wall time is 0.x's parent's
        deadline (wall time + grace period) with SIGTERM as its signal (0.x's
        terminate()), SIGKILL a second later; leash's CPU time, over the
        whole tree, a backstop at twice RLIMIT_CPU's hard limit and 5 s more
        (30 s for spawn, whose interpreter's start-up it counts too): the
        process's own limit acts first; the backstop bounds a tree.
        forkserver runs as leash's spawn: as under multiprocessing's fork
        server, the function's process is no fork of the caller (its
        threads' locks, its address space under RLIMIT_AS)."""
        fresh = self._context_name in ("spawn", "forkserver")
        memory = None if self.mem_in_mb is None else int(self.mem_in_mb * (1 << 20))
        rlimit_memory = memory if memory is not None and _memory_enforced_by() != "cgroup" else None
        grace = self.grace_period_in_s
        target = _Enforced(
            func, out_path, err_path, rlimit_memory, self.num_processes, self.wall_time_in_s, self.cpu_time_in_s, grace
        )
        return _leash.limit(
            target,
            name=_job_name(None, func),
            memory=None if rlimit_memory is not None else memory,
            cpu_time=None
            if self.cpu_time_in_s is None
            else 2 * (max(1, math.ceil(self.cpu_time_in_s)) + math.ceil(grace)) + (30 if fresh else 5),
            wall_time=None if self.wall_time_in_s is None else self.wall_time_in_s + grace,
            # where RLIMIT_NPROC binds (_nproc_binds), it is the limit: leash's
            # pids would only say, falsely, that nothing bounds the forks
            pids=None if _nproc_binds() else self.num_processes,
            signal="TERM",
            grace=1,
            context="spawn" if fresh else "fork",
            **self._trust
        )

    def __call__(self, func):
        outer = self

        class function_wrapper:
            def __init__(self, func):
                self.func = func
                self._reset_attributes()
                wraps(func)(self)

            def _reset_attributes(self):
                self.result = None
                self.exit_status = None
                self.resources_function = None
                self.resources_pynisher = None
                self.wall_clock_time = None
                self.stdout = None
                self.stderr = None
                self.exitcode = None
                self.os_errno = None
                self.report = None

            def __call__(self, *args, **kwargs):
                mask = _defer_own_limits()
                try:
                    return self._call(*args, **kwargs)
                finally:
                    if mask is not None:  # a held limit raises here
                        _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)

            def _call(self, *args, **kwargs):
                self._reset_attributes()
                tmp = tempfile.mkdtemp(prefix="leash-pynisher-") if outer.capture_output else None
                paths = (None, None) if tmp is None else (os.path.join(tmp, "std.out"), os.path.join(tmp, "std.err"))
                outer.logger.debug("Function called with argument: {}, {}".format(args, kwargs))
                start = time.time()
                try:
                    if outer._context_error is not None:
                        raise _NoContext(outer._context_error)
                    _mp_helpers(outer._context_name)
                    limited = outer._limited(self.func, *paths)
                    value, self.report = limited.call_with_report(*args, **kwargs)
                    self._returned(value)
                except KeyboardInterrupt:
                    raise
                except _NoContext as e:
                    outer.logger.error("pynisher: {}: the function was not called".format(e))
                    outer.logger.debug("Something else went wrong, sorry.")
                    self.exit_status = 5  # 0.x's status when nothing came back
                except BaseException as e:
                    self.report = getattr(e, "report", None)
                    self.exit_status = self._status_of(e)
                    self.result = None
                    if isinstance(e, (_errors.JobKilled, _errors.JobExited)):
                        outer.logger.debug(
                            "Your function call closed the pipe prematurely -> Subprocess probably got an"
                            " uncatchable signal."
                        )
                finally:
                    self.report = _nproc_report(self.report, outer.num_processes)
                    self.resources_function = _resource.getrusage(_resource.RUSAGE_CHILDREN)
                    self.resources_pynisher = _resource.getrusage(_resource.RUSAGE_SELF)
                    self.wall_clock_time = time.time() - start
                    self.exitcode = self._exitcode(self.report)
                    if tmp is not None:
                        self.stdout = self._read(paths[0])
                        self.stderr = self._read(paths[1])
                        shutil.rmtree(tmp, ignore_errors=True)
                return self.result

            def _returned(self, value):
                if not (isinstance(value, tuple) and len(value) == 4 and value[0] == _TAG0):
                    raise PynisherError("the job's process returned no 0.x status")
                _, self.result, status, self.os_errno = value
                self.exit_status = 0 if status == 0 else _STATUS0.get(status, PynisherError)
                self.report = _own_limit_report(self.report, status)

            def _status_of(self, e):
                if isinstance(e, _errors.MemoryLimitExceeded) or isinstance(e, MemoryError):
                    return MemorylimitException
                if isinstance(e, _errors.CpuTimeLimitExceeded):
                    return CpuTimeoutException
                if isinstance(e, _errors.WallTimeLimitExceeded):
                    return TimeoutException
                if isinstance(e, _errors.PidsLimitExceeded):
                    return SubprocessException
                if isinstance(e, _errors.JobKilled):
                    if outer.cpu_time_in_s is not None and e.signal in (_signal.SIGKILL, _signal.SIGXCPU):
                        return CpuTimeoutException  # RLIMIT_CPU's hard limit
                    return AnythingException  # 0.x: the pipe closed without a word
                if isinstance(e, PynisherError):
                    return PynisherError
                if isinstance(e, _errors.LeashError):
                    return AnythingException if (e.report or {}).get("reason") else PynisherError
                return AnythingException

            @staticmethod
            def _exitcode(report):
                ex = (report or {}).get("exit") or {}
                if ex.get("status") is not None:
                    return ex["status"]
                if ex.get("signal"):
                    try:
                        return -int(_signal.Signals["SIG" + ex["signal"]])
                    except KeyError:
                        return None
                return None

            @staticmethod
            def _read(path):
                try:
                    with open(path, "r") as fh:
                        return fh.read()
                except OSError as e:
                    outer.logger.error("Cannot recover the output from {} due to {}".format(path, e))
                    return None

        return function_wrapper(func)
