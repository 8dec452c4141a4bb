# SPDX-License-Identifier: LGPL-2.1-or-later
"""The exceptions leash raises, and the mapping from a report's reason to one.

Every exception that ends a limited call carries the full report of the job
(the JSON schema of ``leash run``, as a dict) in its ``report`` attribute.
"""

__all__ = [
    "LeashError",
    "SetupError",
    "LimitExceeded",
    "MemoryLimitExceeded",
    "CpuTimeLimitExceeded",
    "WallTimeLimitExceeded",
    "PidsLimitExceeded",
    "JobKilled",
    "JobExited",
    "ResourceExhaustion",
    "RemoteTraceback",
    "WeakLimitWarning",
    "RemoteError",
    "ResultRefused",
    "ResultTooLarge",
]


class LeashError(Exception):
    """Base class of every exception leash itself raises.

    ``report`` is the job's report (a dict, ``leash run``'s JSON schema) or
    None when no job was started.
    """

    def __init__(self, message, report=None):
        super().__init__(message)
        self.report = report


class SetupError(LeashError, OSError):
    """leash could not start the job (the cgroup could not be created, a
    user does not exist, ...). ``errno`` and ``strerror`` say why; ``step``
    names what failed. Nothing was left behind."""

    def __init__(self, message, errno=None, step=None, report=None):
        LeashError.__init__(self, message, report)
        self.errno = errno
        self.strerror = message
        self.step = step

    def __str__(self):
        return self.strerror

    def __reduce__(self):
        return (type(self), (self.strerror, self.errno, self.step, self.report))


class LimitExceeded(LeashError):
    """A limit ended the call.

    ``limit`` is the name of the limit as the report spells it
    (``"memory"``, ``"cpu_time"``, ``"wall_time"``, ``"pids"``, or a
    measured figure such as ``"disk"``), ``value`` the limit as the report
    gives it, and ``report`` the whole report.
    """

    def __init__(self, message, limit=None, value=None, report=None):
        super().__init__(message, report)
        self.limit = limit
        self.value = value

    def __reduce__(self):
        return (type(self), (self.args[0], self.limit, self.value, self.report))


class MemoryLimitExceeded(LimitExceeded, MemoryError):
    """The job ran out of its memory: an OOM kill in its cgroup, or, where
    memory is enforced by RLIMIT_AS (no memory controller), a MemoryError
    raised in the child. Also a ``MemoryError``."""


class CpuTimeLimitExceeded(LimitExceeded):
    """The whole job tree used its CPU time (user + system)."""


class WallTimeLimitExceeded(LimitExceeded):
    """The call took longer than its wall-time limit."""


class PidsLimitExceeded(LimitExceeded):
    """A fork was refused by pids.max and the job failed."""


class JobKilled(LeashError):
    """The function's process was killed by a signal that no limit sent
    (``signal`` is its number), e.g. a segfault, SIGKILL from outside, or
    SIGSYS from a seccomp filter."""

    def __init__(self, message, signal=None, report=None):
        super().__init__(message, report)
        self.signal = signal

    def __reduce__(self):
        return (type(self), (self.args[0], self.signal, self.report))


class JobExited(LeashError):
    """The function's process exited (``os._exit``, ``sys.exit`` in a
    thread, a crash of the interpreter) without sending a result back.
    ``status`` is its exit status."""

    def __init__(self, message, status=None, report=None):
        super().__init__(message, report)
        self.status = status

    def __reduce__(self):
        return (type(self), (self.args[0], self.status, self.report))


class ResourceExhaustion(LeashError):
    """resource_monitor's exception: a monitored function passed one of its
    limits. ``resources`` holds the figures measured (resource_monitor's
    names and units, plus leash's own), ``resources["limits_exceeded"]`` the
    limits that were passed; ``function``, ``fn_args``, ``fn_kwargs`` the
    call."""

    def __init__(self, resources, function=None, fn_args=None, fn_kwargs=None, report=None):
        exceeded = (resources or {}).get("limits_exceeded") or {}
        names = ",".join("{}: {}".format(k, v) for k, v in sorted(exceeded.items()))
        super().__init__("Limits broken: {}".format(names), report)
        self.args = (resources, function, fn_args, fn_kwargs)
        self.resources = resources
        self.function = function
        self.fn_args = fn_args
        self.fn_kwargs = fn_kwargs
        self.message = "Limits broken: {}".format(names)

    def __str__(self):
        return self.message


class WeakLimitWarning(UserWarning):
    """A limit this host enforces weaker than asked: ``memory`` as a
    per-process RLIMIT_AS, ``pids``, ``cpus`` or ``swap`` not at all, where the
    job's cgroup has no controller for it. The message says what enforces it,
    what that means and the better option here, in leash.limit's keywords
    (``limit="memory=300M", sample="100ms"``: a limit sampled over the whole
    tree; ``leash run`` prints the same line with its options). Filter it
    like any warning::

        warnings.simplefilter("ignore", leash.WeakLimitWarning)
    """


class RemoteTraceback(Exception):
    """The traceback of an exception raised in the child, as text. Set as
    the ``__cause__`` of the re-raised exception, so a traceback printed in
    the caller shows both."""

    def __init__(self, tb):
        super().__init__(tb)
        self.tb = tb

    def __str__(self):
        return self.tb


_BY_REASON = {
    "memory": MemoryLimitExceeded,
    "cpu_time": CpuTimeLimitExceeded,
    "wall_time": WallTimeLimitExceeded,
    "pids": PidsLimitExceeded,
}


def _limit_value(report, name):
    limit = (report.get("limits") or {}).get(name) or {}
    return limit.get("value")


def _describe(report, name):
    limit = (report.get("limits") or {}).get(name) or {}
    if not limit:
        return name
    unit = limit.get("unit")
    value = limit.get("value")
    if unit == "s":
        shown = "{:g}s".format(value) if isinstance(value, (int, float)) else str(value)
    elif unit == "bytes":
        shown = "{} bytes".format(value)
    else:
        shown = str(value)
    by = limit.get("enforced_by")
    return "{} limit ({}{})".format(name, shown, ", by " + by if by else "")


def limit_exception(reason, report):
    """The exception for a report whose reason is a limit, or None."""
    cls = _BY_REASON.get(reason)
    if cls is None and reason in (report.get("limits") or {}):
        cls = LimitExceeded
    if cls is None:
        return None
    return cls("{} reached".format(_describe(report, reason)), reason, _limit_value(report, reason), report)


class ResultRefused(LeashError):
    """The function's result (or its error frame) holds something the
    caller's decoder does not build, refused before it is built: a callable
    or class other than plain data and the types named in ``result_types``
    (``what`` names it: ``"os.system"``), containers nested deeper than
    leash decodes (``"depth"``), a cycle (``"cycle"``), a container added to
    after it was placed in another (``"sealed"``), more items than leash
    decodes when shared containers are counted each time they appear
    (``"size"``: a repr() of it would not end), more of the caller's memory
    (``"memory"``) or decoding, hashing and comparing work (``"work"``) than
    the bound per byte of pickle, more than 16 keys with one hash in one set
    or dict (``"hash"``: a collision attack), a memo written out of order
    (``"memo"``: it would make the decoder allocate for nothing), frames
    decoders read differently (``"frame"``), copyreg's extension codes
    (``"extension code"``), persistent ids, out-of-band buffers, protocol 0's
    text opcodes, an unknown opcode. The result channel is a boundary: see
    ``leash.limit``'s ``trust_result``."""

    def __init__(self, message, what=None, report=None):
        super().__init__(message, report)
        self.what = what

    def __reduce__(self):
        return (type(self), (self.args[0], self.what, self.report))


class ResultTooLarge(LeashError):
    """The function's result was larger than ``max_result`` bytes; the job
    was killed when it got there and nothing of it was kept. ``limit`` is
    the cap in bytes."""

    def __init__(self, message, limit=None, report=None):
        super().__init__(message, report)
        self.limit = limit

    def __reduce__(self):
        return (type(self), (self.args[0], self.limit, self.report))


class RemoteError(LeashError):
    """An exception the function raised whose type the caller does not
    rebuild (neither builtin nor named in ``result_types``): its type's
    name (``type_name``, ``"module.Qualname"``), its ``text`` (str()), its
    ``remote_args`` when they were plain data, and ``child_traceback``."""

    def __init__(self, module, qualname, args=None, text="", report=None):
        self.type_name = "{}.{}".format(module, qualname)
        super().__init__("{}: {}".format(self.type_name, text), report)
        self.module, self.qualname, self.remote_args, self.text = module, qualname, args, text

    def __reduce__(self):
        return (type(self), (self.module, self.qualname, self.remote_args, self.text, self.report))
