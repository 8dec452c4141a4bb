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
rebuilds a function's exception only for a builtin type or a named one
(``leash.RemoteError`` otherwise, which a ``wrap_errors`` name matches by
the remote type's name; a ``wrap_errors`` class matches only when named in
``result_types``). Code that returns
its own objects from a function it trusts passes ``trust_result=True``
(pynisher's behaviour) to ``Pynisher``/``limit``, ``restricted`` and
``enforce_limits``; see ``leash.limit``.
"""

import multiprocessing
import multiprocessing.context
import os
import resource as _resource
import shutil
import signal as _signal
import sys
import tempfile
import time
from functools import wraps

import leash as _leash
from leash import _errors

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


# --- units ---------------------------------------------------------------------

_MEM_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}
_TIME_UNITS = {"s": 1, "m": 60, "h": 3600}


def _memory_bytes(memory):
    if isinstance(memory, tuple):
        x, unit = memory
        try:
            return round(x * _MEM_UNITS[str(unit).upper()])
        except KeyError:
            raise ValueError("`memory` {}: unit must be one of {}".format(memory, list(_MEM_UNITS))) from None
    return memory


def _seconds(t, what):
    if isinstance(t, tuple):
        x, unit = t
        try:
            return round(x * _TIME_UNITS[str(unit).lower()])
        except KeyError:
            raise ValueError("`{}` {}: unit must be one of {}".format(what, t, list(_TIME_UNITS))) from None
    return t


def _context_name(context):
    if context is None:
        context = multiprocessing.get_start_method(allow_none=True) or "fork"
    if isinstance(context, multiprocessing.context.BaseContext):
        context = context.get_start_method()
    if context not in contexts:
        raise ValueError("`context` {} must be in {}".format(context, contexts))
    # forkserver's point is a clean process that does not inherit the
    # caller's state: leash's fresh interpreter gives that
    return "fork" if context == "fork" else "spawn"


def _job_name(name, func):
    text = name if isinstance(name, str) and name else getattr(func, "__name__", "pynisher")
    safe = "".join(c if c.isalnum() or c in "_.-" else "_" for c in text).lstrip(".")
    return (safe or "pynisher")[:48]


def _callstring(func, args, kwargs):
    parts = [repr(a) for a in args] + ["{}={!r}".format(k, v) for k, v in kwargs.items()]
    text = "{}({})".format(getattr(func, "__name__", repr(func)), ", ".join(parts))
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


class Pynisher:
    """Restrict a function's resources: each call runs it in a leash job.

    Arguments as pynisher 1.x: ``name`` (the job name), ``memory`` (bytes,
    or ``(value, "B"|"KB"|"MB"|"GB")``, 1024-based), ``cpu_time`` and
    ``wall_time`` (seconds >= 1, or ``(value, "s"|"m"|"h")``), ``context``
    ("fork", "spawn", "forkserver" or a multiprocessing context),
    ``raises`` (False: return ``EMPTY`` instead of raising), ``warnings``,
    ``wrap_errors`` (True: every error of the function becomes a
    PynisherException; a list of classes or class names: those do; a dict
    with keys "memory", "cpu_time", "wall_time", "pynisher": those errors
    become that kind of exception when that limit is set),
    ``terminate_child_processes`` and ``forceful_keyboard_interrupt``
    (accepted; leash always ends the whole tree).
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
        self._limited = _leash.limit(
            func,
            memory=_mem,
            cpu_time=_cpu,
            wall_time=_wall,
            grace=1,
            name=_job_name(name, func),
            context=self._context_name,
            trust_result=trust_result,
            result_types=result_types,
        )

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    @property
    def report(self):
        """leash's report (a dict) of this thread's last call."""
        return self._limited.last_report

    def run(self, *args, **kwargs):
        """The same as calling."""
        return self(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        try:
            value = self._limited(*args, **kwargs)
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
            memory_by = (((e.report or {}).get("limits") or {}).get("memory") or {}).get("enforced_by")
            if e.signal == _signal.SIGSEGV and memory_by == "rlimit":
                # RLIMIT_AS: a failed allocation in C code often ends as SIGSEGV
                return MemoryLimitException(
                    "The function exited with SIGSEGV under a memory limit enforced by RLIMIT_AS\n{}".format(call)
                )
            return PynisherException("Unknown reason for exitcode -{}, no result: {}\n{}".format(e.signal, e, call))
        if isinstance(e, _errors.JobExited):
            if e.status == 0:
                return PynisherException(
                    "Function ended properly but no result was recieved. Got exitcode 0 from subprocess that ran:\n"
                    + call
                )
            return PynisherException("Unknown reason for exitcode {}, no result: {}\n{}".format(e.status, e, call))
        if isinstance(e, (_errors.LimitExceeded, _errors.LeashError)):
            return PynisherException("{}\n{}".format(e, call))
        return self._wrap_error(e)

    def _wrap_error(self, err):
        """The function's own exception, wrapped as ``wrap_errors`` says."""
        message = "Wrapped Exception {} - {}".format(type(err).__name__, err)
        if self.memory is not None and isinstance(err, MemoryError):
            return MemoryLimitException("Not enough memory to run function ({}B).\n{}".format(self.memory, message))
        w = self.wrap_errors
        if w is False:
            return err
        if w is True:
            return PynisherException(message)
        mapping = {"pynisher": list(w)} if isinstance(w, (list, set, tuple)) else w
        if self.cpu_time is not None and any(_is_err(err, t) for t in mapping.get("cpu_time", ())):
            return CpuTimeoutException(message)
        if self.wall_time is not None and any(_is_err(err, t) for t in mapping.get("wall_time", ())):
            return WallTimeoutException(message)
        if self.memory is not None:
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


class _Captured:
    """Runs the function with its stdout and stderr sent to two files (0.x
    ``capture_output``). A class, not a closure, so it pickles for spawn."""

    def __init__(self, func, out_path, err_path):
        self.func, self.out_path, self.err_path = func, out_path, err_path
        self.__name__ = getattr(func, "__name__", "function")

    def __call__(self, *args, **kwargs):
        for path, fd, stream in ((self.out_path, 1, sys.stdout), (self.err_path, 2, sys.stderr)):
            try:
                stream.flush()
            except Exception:
                pass
            f = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            os.dup2(f, fd)
            os.close(f)
        # the descriptors (C code, subprocesses) and the Python streams, which
        # the caller may have replaced
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        return self.func(*args, **kwargs)


class _ErrnoCarrier(Exception):
    pass


class enforce_limits:
    """pynisher 0.x's decorator factory.

    ``@enforce_limits(mem_in_mb=..., cpu_time_in_s=..., wall_time_in_s=...,
    num_processes=..., grace_period_in_s=..., logger=..., capture_output=...,
    context=...)``: the wrapper returns the function's result, or None when
    the call failed; after each call it holds ``result``, ``exit_status``
    (0, or the exception class saying why), ``exitcode`` (the process's,
    negative for a signal), ``wall_clock_time``, ``stdout``/``stderr``
    (with ``capture_output``), ``os_errno``, ``resources_function``,
    ``resources_pynisher`` (getrusage of children and of this process) and
    ``report`` (leash's report). ``num_processes`` limits the job's
    processes and threads (pids.max), not the user's as RLIMIT_NPROC did.
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
        self.trust_result = trust_result
        self.result_types = result_types
        self.mem_in_mb = mem_in_mb
        self.cpu_time_in_s = cpu_time_in_s
        self.num_processes = num_processes
        self.wall_time_in_s = wall_time_in_s
        self.grace_period_in_s = 0 if grace_period_in_s is None else grace_period_in_s
        self.logger = logger if logger is not None else multiprocessing.get_logger()
        self.capture_output = capture_output
        if mem_in_mb is not None:
            self.logger.debug("Restricting your function to {} mb memory.".format(mem_in_mb))
        if cpu_time_in_s is not None:
            self.logger.debug("Restricting your function to {} seconds cpu time.".format(cpu_time_in_s))
        if wall_time_in_s is not None:
            self.logger.debug("Restricting your function to {} seconds wall time.".format(wall_time_in_s))
        if num_processes is not None:
            self.logger.debug("Restricting your function to {} threads/processes.".format(num_processes))

    def _options(self):
        return dict(
            memory=None if self.mem_in_mb is None else int(self.mem_in_mb * (1 << 20)),
            cpu_time=self.cpu_time_in_s,
            wall_time=self.wall_time_in_s,
            pids=self.num_processes,
            grace=self.grace_period_in_s,
            context=_context_name(self.context),
            trust_result=self.trust_result,
            result_types=self.result_types,
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
                self._reset_attributes()
                tmp = tempfile.mkdtemp(prefix="leash-pynisher-") if outer.capture_output else None
                target = self.func
                if tmp is not None:
                    target = _Captured(self.func, os.path.join(tmp, "std.out"), os.path.join(tmp, "std.err"))
                limited = _leash.limit(target, name=_job_name(None, self.func), **outer._options())
                outer.logger.debug("Function called with argument: {}, {}".format(args, kwargs))
                start = time.time()
                try:
                    self.result, self.report = limited.call_with_report(*args, **kwargs)
                    self.exit_status = 0
                except KeyboardInterrupt:
                    raise
                except BaseException as e:
                    self.report = getattr(e, "report", None)
                    self.exit_status = self._status_of(e)
                    self.result = None
                finally:
                    self.resources_function = _resource.getrusage(_resource.RUSAGE_CHILDREN)
                    self.resources_pynisher = _resource.getrusage(_resource.RUSAGE_SELF)
                    self.wall_clock_time = time.time() - start
                    self.exitcode = self._exitcode(self.report)
                    if tmp is not None:
                        self.stdout = self._read(os.path.join(tmp, "std.out"))
                        self.stderr = self._read(os.path.join(tmp, "std.err"))
                        shutil.rmtree(tmp, ignore_errors=True)
                return self.result

            def _status_of(self, e):
                if isinstance(e, _errors.MemoryLimitExceeded) or isinstance(e, MemoryError):
                    return MemorylimitException
                if isinstance(e, _errors.CpuTimeLimitExceeded):
                    return CpuTimeoutException
                if isinstance(e, _errors.WallTimeLimitExceeded):
                    return TimeoutException
                if isinstance(e, _errors.JobKilled):
                    return SignalException
                if isinstance(e, OSError) and not isinstance(e, _errors.LeashError):
                    self.os_errno = e.errno
                    return SubprocessException
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
