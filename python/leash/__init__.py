# SPDX-License-Identifier: LGPL-2.1-or-later
"""leash from Python: run a function or a command in its own cgroup, under
limits, and get back its result and a report of what it used.

    import leash

    @leash.limit(memory="512M", wall_time=10)
    def trial(x):
        return x * 2

    trial(21)                      # 42, computed in a child inside its own cgroup

Each call forks a child straight into a new job cgroup (never outside it),
with the limits and the sandbox applied. The result channel is a boundary:
the function's process may be hostile (``user=``, untrusted input), so its
return value is decoded as data only (None, bool, int, float, complex, str,
bytes, bytearray, list, tuple, dict, set, frozenset, nested at most 200
deep, at most 2**26 items with each shared container counted every time it
appears) plus the classes named in ``result_types=`` (numpy arrays are carried
as dtype, shape and bytes and rebuilt checked); nothing the child chose is
ever called here, and anything else raises ``ResultRefused``. leash's own
decoder reads the bytes once the job has ended and been finished, and
refuses before it builds past its bounds: more than 160 bytes of this
process's memory per byte of pickle plus 1 MiB, more than 16 keys with one
hash in a set or dict, more than 32 steps of hashing and comparing per byte
plus 2**20, a memo written out of order, copyreg's extension codes (at
worst about 0.3 s of CPU per MiB of pickle; Ctrl-C interrupts it). An exception
raised by the function travels as data too and is re-raised here as itself
when its type is builtin, named in ``result_types``, or a class this process
has loaded already (found in ``sys.modules`` without importing or running
anything, made without its ``__new__`` or ``__init__``, its args and plain
attributes written as data), else as ``RemoteError`` with its type's name and
text; either way with the child's traceback text (as ``__cause__``). A
``BaseException`` that is not an ``Exception`` (``SystemExit``,
``KeyboardInterrupt``) always arrives as ``RemoteError``. A function the
caller trusts (its own code, no ``user=``, no untrusted input) may pass ``trust_result=True``: then
the result and exceptions are pickled both ways, any type. The result is
capped (``max_result``, default the memory limit, else 1 GiB): beyond it the
job is killed and ``ResultTooLarge`` raised. A limit that ends the
call raises a subclass of ``LimitExceeded`` (``MemoryLimitExceeded``, also a
``MemoryError``; ``CpuTimeLimitExceeded``; ``WallTimeLimitExceeded``;
``PidsLimitExceeded``); a death by a signal no limit sent raises
``JobKilled``; an exit without a result ``JobExited``. Whatever the outcome,
the job's whole process tree is gone when the call returns, its cgroup is
removed, and the report (``leash run``'s JSON schema, as a dict) is in the
exception's ``report`` attribute, or returned by ``call_with_report``.

Many trials at once: ``leash.Executor`` (a concurrent.futures executor,
each task a fresh job, an optional ``study=`` budget over all of them),
``leash.acall`` (asyncio) and ``leash.dask.LeashPlugin`` (every task of a
Dask worker in its own job); a ``Limited`` pickles, so any pool can send it.

See also ``leash.run`` (commands), ``leash.monitored`` (resource_monitor's
API) and ``leash.compat.pynisher`` (pynisher's API).
"""

import functools
import sys
import threading

from . import _call, _result, _run, _settings
from ._run import CompletedRun
from ._errors import (
    CpuTimeLimitExceeded,
    JobExited,
    JobKilled,
    LeashError,
    LimitExceeded,
    MemoryLimitExceeded,
    PidsLimitExceeded,
    RemoteError,
    RemoteTraceback,
    ResourceExhaustion,
    ResultRefused,
    ResultTooLarge,
    SetupError,
    WallTimeLimitExceeded,
    WeakLimitWarning,
)

__all__ = [
    "configure",
    "limit",
    "Limited",
    "run",
    "CompletedRun",
    "monitored",
    "Executor",
    "Future",
    "acall",
    "contexts",
    "version",
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

__version__ = "0.1.0"

#: The contexts a call may run in: ``"fork"`` (a fork of this interpreter,
#: the default: cheap, inherits everything), ``"spawn"`` (a fresh
#: interpreter that inherits nothing but the function and its arguments,
#: which must pickle, and imports the caller's script as multiprocessing's
#: spawn does: without an ``if __name__ == "__main__":`` guard a call fails
#: with multiprocessing's RuntimeError about that idiom) and ``"forkserver"``, the same child as ``"fork"``:
#: leash forks the calling thread straight into the job's cgroup, in C,
#: with nothing pickled, so code that names multiprocessing's start method
#: (and Python 3.14's default, forkserver) gets fork's cost and semantics.
contexts = ("fork", "spawn", "forkserver")

_defaults = []
_defaults_gen = 0  # bumped by configure(): a Limited's Config is made again


def configure(**options):
    """Set options for every later job of this process (``leash.limit``,
    ``leash.run``, ``leash.monitored`` and the pynisher drop-in), under the
    options a call gives itself: ``leash.configure(cgroup_parent=...,
    profile="hpo-trial")``. Same keywords as ``leash.limit``; ``None``
    clears one. Returns the options now in force, as (key, value) pairs."""
    named = {k: options.pop(k) for k in list(options) if k in _settings._NAMED}
    new = _settings.build_settings(named, options)
    keys = {_settings._NAMED.get(k, k.replace("_", "-")) for k in list(named) + list(options)}
    global _defaults_gen
    _defaults[:] = [kv for kv in _defaults if kv[0] not in keys] + new
    _defaults_gen += 1
    return list(_defaults)


def version():
    """The version of libleash this module runs on."""
    return _call.require_extension().version()


class Limited:
    """A function bound to limits; see ``leash.limit``.

    Calling it runs the function once in a new job. ``call_with_report``
    returns ``(value, report)``; ``last_report`` is the report of this
    thread's last call (None before the first). Usable as a context manager
    (``with leash.limit(f, memory="1G") as lf: lf(x)``), which returns itself.

    From its first call (fork context) it holds one watchdog for all its
    calls: a small process, sleeping, that kills the running calls' jobs and
    removes their cgroups if this process dies (even by SIGKILL). It ends
    when the function is freed, or is replaced after ``leash.configure()``.

    It pickles, by its function's reference and its settings (a decorated
    module-level function by its name), so ``multiprocessing``,
    ``concurrent.futures.ProcessPoolExecutor`` and Dask can send it; the copy
    makes its own thread-local state and watchdog where it is unpickled, and
    ``leash.configure()``'s options there apply to it.
    """

    def __init__(
        self, func, settings, name, context, memory_limited, sample=None, codec=None, max_result=-1, child_fds=None
    ):
        if not callable(func):
            raise TypeError("leash.limit: {!r} is not callable".format(func))
        if context not in contexts:
            raise ValueError("leash.limit: context={!r}: expected one of {}".format(context, ", ".join(contexts)))
        self.func = func
        self.settings = list(settings)
        self.name = name
        self._job_name = name or _default_name(func)
        self.context = context
        self.memory_limited = memory_limited
        self._sample = sample
        self._codec = codec if codec is not None else _result.codec()
        self._max_result = max_result
        self._child_fds = child_fds  # None: the function inherits the caller's fds; else those it keeps
        self._local = threading.local()
        self._call_spec = _call.call_spec(self._codec, max_result)
        self._config = None  # made at the first fork call, again after configure()
        self._config_gen = None
        functools.update_wrapper(self, func, updated=())

    def __reduce__(self):
        # By reference and settings; the thread-local state, the Config and
        # its watchdog are made anew where it is unpickled. A decorated
        # module-level function's name is the Limited itself: by that name.
        module = sys.modules.get(getattr(self, "__module__", None) or "")
        found = module
        for part in (getattr(self, "__qualname__", None) or "<>").split("."):
            found = getattr(found, part, None)
        if found is self:
            return self.__qualname__
        return (
            _rebuild_limited,
            (self.func, self.settings, self.name, self.context, self.memory_limited, self._sample,
             self._codec.trusted, self._codec.result_types, self._max_result, self._child_fds),
        )

    def __repr__(self):
        return "<leash.Limited {} {}>".format(getattr(self.func, "__qualname__", self.func), dict(self.settings))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __get__(self, obj, objtype=None):
        # a decorated method: bind like a function does
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    @property
    def last_report(self):
        """The report (dict) of this thread's last call, or None."""
        if getattr(self._local, "report", None) is None:
            return None
        return _call.report_of(self._local).get()

    def _job_config(self):
        """The calls' shared Config: ``settings`` and configure()'s options,
        checked once (again after configure()); the files are read by each
        job."""
        if self._config_gen != _defaults_gen:
            self._config = _call.new_config(_defaults + self.settings, self._job_name, self._child_fds)
            self._config_gen = _defaults_gen
        return self._config

    def _outcome(self, args, kwargs):
        if self.context == "spawn":
            self._local.report = None
            out = _call.run_spawned(
                self._job_config(), None, self.func, args, kwargs, self.memory_limited, self._sample, self._codec,
                self._max_result, self._child_fds or (),
            )
            self._local.report = out.lazy  # parsed when asked for; the value is not kept
            return out
        # stores the job in self._local (its LazyReport, once made) and frees
        # the last call's after this call's fork
        return _call.run_forked(
            self._job_config(), self._local, self.func, args, kwargs, self.memory_limited, self._sample,
            self._codec, self._max_result,
        )

    def call_with_report(self, *args, **kwargs):
        """Like calling, but returns ``(value, report)``."""
        out = self._outcome(args, kwargs)
        if out.exception is not None:
            _raise(out.exception)
        return out.value, out.report

    def __call__(self, *args, **kwargs):
        if self.context == "spawn":
            out = self._outcome(args, kwargs)
            if out.exception is not None:
                _raise(out.exception)
            return out.value
        # The fork context's common case, a call that returned, in one C
        # call and without the Outcome: each Python function or object this
        # path enters or makes before the fork costs a copy-on-write fault
        # (bench/NOTES.md, row 10). The job is kept in self._local.report.
        config = self._config if self._config_gen == _defaults_gen else self._job_config()
        ok, data = config.call(self.func, args, kwargs, self._local, self._sample, self._call_spec)
        if ok:
            return data
        out = _call.collected(_call.report_of(self._local), ok, data, self.memory_limited, self._codec)
        if out.exception is not None:
            _raise(out.exception)
        return out.value


def _rebuild_limited(
    func, settings, name, context, memory_limited, sample, trusted, result_types, max_result, child_fds=None
):
    codec = _result.codec(trusted, result_types)
    return Limited(func, settings, name, context, memory_limited, sample, codec, max_result, child_fds)


def _raise(exc):
    try:
        raise exc
    finally:
        exc = None


def _safe_name(text):
    safe = "".join(c if c.isalnum() or c in "_.-" else "_" for c in text).lstrip(".")
    return (safe or "call")[:48]


def _default_name(func):
    return _safe_name(getattr(func, "__name__", None) or "call")


def limit(
    func=None,
    *,
    memory=None,
    cpu_time=None,
    wall_time=None,
    pids=None,
    cpus=None,
    grace=None,
    signal=None,
    profile=None,
    name=None,
    context="fork",
    trust_result=False,
    result_types=(),
    max_result=None,
    keep_fds=None,
    **sandbox
):
    """Limit a function: every call runs it in a child forked straight into
    its own job cgroup.

    ``memory``: bytes (int) or a size string (``"512M"``, ``"2G"``);
    ``cpu_time``, ``wall_time``, ``grace``: seconds (int or float) or a
    duration string (``"90s"``, ``"1.5s"``, ``"2m"``); ``pids``: processes
    and threads of the whole tree; ``cpus``: cores (cpu.max bandwidth);
    ``signal``: the soft signal sent at a time limit before SIGKILL after
    ``grace`` (default SIGXCPU, 5 s); ``profile``: a leash profile name
    (``"hpo-trial"``), whose settings come first; ``name``: the job name
    (default: the function's name); ``context``: ``"fork"``, ``"spawn"``
    or ``"forkserver"`` (the same as fork, see ``contexts``).

    The result channel (the function's process may be hostile):
    ``result_types``: classes a result (or a re-raised exception) may hold
    besides plain data, e.g. ``(numpy.ndarray, MyRecord)``: a named class is
    rebuilt by pickle's rules through the class itself (the caller vouches
    for it), ``numpy.ndarray`` from dtype, shape and bytes, checked;
    ``trust_result=True``: unpickle whatever the function returns (only for
    a function you trust: a hostile one runs code in this process through
    it); ``max_result``: the result's cap in bytes (an int or a size string,
    ``"64M"``), default the memory limit, else 1 GiB: beyond it the job is
    killed and ``ResultTooLarge`` raised.

    The caller's open files: with ``user=``, ``devices=`` or ``gpus=`` the
    function's process closes every fd above 2 of the caller's (a root-only
    file, a CUDA context's ``/dev/nvidia*``) before it runs, as ``leash run``
    does for a command; ``keep_fds=[3, 7]`` keeps those (and closes the rest
    in any case), ``keep_fds=True`` keeps every one. Without those options
    and without ``keep_fds``, a forked function inherits the caller's fds.
    (Context ``"spawn"`` execs an interpreter, which gets none of them, as a
    command; there ``keep_fds=[...]`` hands on those, ``keep_fds=True`` only
    those made inheritable, ``os.set_inheritable``.) A bad value raises
    ValueError. The keywords decide: a ``user`` or ``devices`` that only a
    profile sets does not close them; pass ``keep_fds=[]`` to.
    Any other keyword is a ``leash run`` option with ``_`` for ``-``:
    ``clean_env=True``, ``seccomp="no-network"``, ``env={"K": "V"}``,
    ``nofile=64``, ``cgroup_parent=...``, ``user=...``, ``no_stdin=True``.

    Where the host has no cgroup controller for ``memory``, ``pids`` or
    ``cpus``, that limit is weaker than asked (``memory`` an RLIMIT_AS per
    process, the others none) and each call warns (``WeakLimitWarning``)
    with the better form here: a limit sampled over the whole tree, which
    kills, e.g. ``limit="memory=300M", sample="100ms"`` for
    ``memory="300M"`` (``limit="threads=8"`` for ``pids=8``).

    Forms::

        lf = leash.limit(f, memory="1G");  lf(x)
        @leash.limit(wall_time=10)
        def f(x): ...
        with leash.limit(f, cpu_time=5) as lf: lf(x)

    The settings are checked once, at the first call (again after
    ``leash.configure()``); the configuration files and the profile are read
    by every call, so an edited profile is seen by the next one.

    A bad value raises ValueError naming it, before anything is created.
    """
    named = dict(
        memory=memory, cpu_time=cpu_time, wall_time=wall_time, pids=pids, cpus=cpus, grace=grace, signal=signal,
        profile=profile,
    )
    keep = _settings.keep_fds_value(keep_fds, "leash.limit: keep_fds")
    child_fds = None if keep is True else keep if keep is not None or not _settings.isolating(sandbox) else ()
    if keep is True:  # as before: every fd, and the report says "inherited"
        sandbox = dict(sandbox, keep_fds=True)
    settings = _settings.build_settings(named, sandbox)
    memory_limited = memory is not None and memory != "max"
    codec = _result.codec(trust_result, result_types)
    cap = _settings.size_bytes(max_result, "max_result")
    if func is None:
        return lambda f: Limited(f, settings, name, context, memory_limited, None, codec, cap, child_fds)
    return Limited(func, settings, name, context, memory_limited, None, codec, cap, child_fds)


def run(
    argv,
    *,
    check=False,
    name=None,
    input=None,
    capture_output=False,
    stdin=None,
    stdout=None,
    stderr=None,
    cwd=None,
    env=None,
    timeout=None,
    text=None,
    encoding=None,
    errors=None,
    universal_newlines=None,
    keep_fds=False,
    **limits
):
    """Run a command (a list of strings) in its own job cgroup under the
    same limits as ``leash.limit`` (and any ``leash run`` option), wait for
    it, and return a ``subprocess.CompletedProcess`` (``leash.CompletedRun``)
    with the job's report as ``.report`` (``report["reason"]``,
    ``report["usage"]``...; the result read as a dict is the report too).

    subprocess.run's keywords work as there: ``stdin``, ``stdout``,
    ``stderr`` (``subprocess.PIPE``, ``DEVNULL``, ``STDOUT`` for stderr, a
    file or an fd; default: the caller's), ``input`` (bytes, or str with
    ``text``), ``capture_output``, ``text``/``universal_newlines``,
    ``encoding``, ``errors``, ``cwd`` (leash's ``chdir``), ``env`` (the
    whole environment), ``timeout`` (the job's wall time: past it the job
    is killed and ``subprocess.TimeoutExpired`` raised, with the report as
    its ``report``). ``returncode`` is the exit status, -N for signal N,
    127 for a command not found. With ``check=True`` a reason other than
    ``ok`` raises what ``leash.limit`` would raise (a limit's exception,
    ``JobExited``), a command that could not be executed ``SetupError``
    naming it. ``keep_fds=True`` lets the command inherit the caller's fds
    above 2 (closed at its exec by default, as ``leash run --keep-fds``).
    """
    if not isinstance(keep_fds, bool):
        raise ValueError(
            "leash.run: keep_fds={!r}: expected True or False (a command inherits every fd above 2 or none; "
            "a list is leash.limit's)".format(keep_fds)
        )
    if keep_fds:
        limits["keep_fds"] = True
    io = dict(input=input, capture_output=capture_output, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd,
              env=env, timeout=timeout, text=text, encoding=encoding, errors=errors,
              universal_newlines=universal_newlines)
    return _run.run(argv, check, name, io, limits, _defaults)


from ._monitor import monitored  # noqa: E402  (needs limit and Limited above)
from ._executor import Executor, Future, acall  # noqa: E402  (same)
