# SPDX-License-Identifier: LGPL-2.1-or-later
"""One limited call: a job object, a child forked straight into its cgroup,
the result back through a pipe, the job supervised from this thread.

Theory of operation. The caller's thread creates the job (cgroup made, limits
written); one C call, job.call, does the rest up to the outcome: a
close-on-exec pipe, the fork through the library (so the child is inside the
job cgroup from its first instruction with the sandbox applied), and in the
child the function, its value pickled and one frame written: a tag byte (R
result, E exception) and the payload its codec made (_result.py: plain
data by default, pickle with trust_result=True; an exception goes through
child_failed() here). The parent polls two fds at once, the pipe and the job's own fd: the
result is drained while the job runs (a 100 MiB result never blocks the child
on a full pipe) and the job's events (deadlines, the child's exit) are
dispatched as they come. EOF alone is not the end: a grandchild may still
hold the pipe; the job's end is. When the job has ended, leftovers have been
killed by the library, so the pipe reaches EOF and the frame is complete or
provably truncated. The report decides what the outcome was; the frame only
carries what the function said. A call that simply returned (reason "ok", an
R frame) comes back decoded by the codec from job.call; anything else is
decoded here with the report. The pipe is read only while the job runs and,
once it has ended, only what is there (non-blocking: a writer that left the
job cannot hold the caller), and never beyond max_result bytes. All of it is in C because after the fork every page this
process writes costs it a copy-on-write fault (bench/NOTES.md, row 10).
"""

import json
import os
import pickle
import sys
import traceback
import warnings

from . import _errors, _result
from ._result import TAG_ERROR, TAG_RESULT, exception_frame  # noqa: F401 (kept names)

try:
    from . import _leash
except ImportError as e:  # pragma: no cover - reported when used
    _leash = None
    _import_error = e

#: The cap of a result when neither max_result nor a memory limit says one.
DEFAULT_MAX_RESULT = 1 << 30


def new_job(settings, name):
    """The job, its configuration directories read from the environment
    by the extension as ``leash run`` reads them. ``settings``: (key, value)
    pairs, or a Config from new_config (then ``name`` is None: the Config's)."""
    job = require_extension().Job(settings, name)
    warn_weak_limits(job)
    return job


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def warn_weak_limits(job):
    """leash.WeakLimitWarning for each limit enforced weaker than asked: the
    lines ``leash run`` prints before the job starts, each naming the first
    line outside this package that led to the job (the caller's call)."""
    lines = job.warnings
    if not lines:
        return
    level, frame = 1, sys._getframe(0)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE + os.sep):
        frame, level = frame.f_back, level + 1
    for line in lines:
        warnings.warn(line, _errors.WeakLimitWarning, stacklevel=level)


def new_config(settings, name, child_fds=None):
    """Settings checked once for many jobs (a limited function's calls): a
    job made from it sets nothing again, and still reads the configuration
    files, so an edited profile is seen by the next call. ``child_fds``:
    None, the forked function inherits the caller's fds; else the fds above
    2 it keeps (all others but its result pipe are closed in it)."""
    return require_extension().Config(settings, name, child_fds=child_fds)


def require_extension():
    if _leash is None:
        raise ImportError("leash: the C extension leash._leash is not built: {}".format(_import_error))
    return _leash


class LazyReport:
    """A report made when first asked for, from a finished job (which holds
    no descriptor and no process any more, only its results). A call that simply returned builds no report at all: after a
    fork, every page the caller writes costs it a copy-on-write fault, and
    the JSON tree and its parse write dozens (bench/NOTES.md, row 10)."""

    __slots__ = ("_job", "_dict")

    def __init__(self, report=None, job=None):
        self._job = job
        self._dict = report

    def reason(self):
        """The job's reason ("ok", "memory"...), without making the report."""
        return self._job.reason if self._job is not None else self._dict.get("reason")

    def get(self):
        if self._dict is None and self._job is not None:
            job, self._job = self._job, None
            try:
                self._dict = json.loads(job.report("json"))
            finally:
                job.close()
        return self._dict


class Outcome:
    """What one call produced: ``report`` (dict), and either ``value`` or
    ``exception`` (None when the function returned); ``lazy``: the report
    as a LazyReport, for keeping without the value."""

    __slots__ = ("lazy", "value", "exception")

    def __init__(self, report, value=None, exception=None, lazy=None):
        self.lazy = lazy if lazy is not None else LazyReport(report=report)
        self.value = value
        self.exception = exception

    @property
    def report(self):
        return self.lazy.get()


# --- the child ---------------------------------------------------------------


def _flush_std():
    for f in (sys.stdout, sys.stderr):
        try:
            if f is not None:
                f.flush()
        except BaseException:
            pass


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except InterruptedError:
            continue
        view = view[n:]


def child_run(fd, func, args, kwargs, codec=_result._SAFE):
    """In the child of the spawn context: call func, write the frame to fd,
    and exit without running the parent's atexit handlers or finalisers
    (os._exit). A raise goes through child_failed, as job.call's child does."""
    try:
        value = func(*args, **kwargs)
        frame = TAG_RESULT + codec.dumps(value, _result.PROTOCOL)
    except BaseException as e:  # the function's own, or pickling the value
        child_failed(fd, e, codec)
    status = 0
    try:
        _write_all(fd, frame)
    except BaseException:
        status = 2
        # MemoryError while writing the frame, or a broken pipe: the report
        # tells the parent what happened; a truncated frame is recognised as
        # such.
    finally:
        _flush_std()
        os._exit(status)


def child_failed(fd, exc, codec=_result._SAFE):
    """In the child of job.call, after the function (or pickling its value)
    raised exc: the codec's E frame, its output flushed, exit 1 (2 when even
    the frame cannot be written)."""
    status = 1
    try:
        tb_text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        _write_all(fd, codec.error_frame(exc, tb_text))
    except BaseException:
        status = 2
    finally:
        exc = None
        _flush_std()
        os._exit(status)


def _trusted_failed(fd, exc):
    child_failed(fd, exc, _result._TRUSTED)


# what job.call's child needs from this side, and the parent's decoder, per
# codec: made once for the shared codecs (each object a call makes is a
# copy-on-write fault after the last call's fork)
_CALL_CHILD = {
    id(_result._SAFE): (pickle.dumps, _result.PROTOCOL, child_failed, _result._SAFE.loads),
    id(_result._TRUSTED): (pickle.dumps, _result.PROTOCOL, _trusted_failed, pickle.loads),
}


def call_child_args(codec):
    """job.call's (dumps, protocol, failed, loads) for codec."""
    t = _CALL_CHILD.get(id(codec))
    if t is None:
        t = (codec.dumps, _result.PROTOCOL, lambda fd, exc: child_failed(fd, exc, codec), codec.loads)
    return t


# --- the parent --------------------------------------------------------------


def _new_pipe():
    """A close-on-exec pipe (1 MiB where the host allows) whose ends no
    child of another call inherits (made and marked private in C, with no
    Python code between: no other thread forks meanwhile)."""
    return require_extension().pipe()


def _close(fd):
    require_extension().close_fd(fd)


# How often supervision wakes to run signal handlers: Python runs them in the
# main thread only, and a SIGINT the kernel delivers to another thread does
# not interrupt the main thread's poll(): it wakes now and then so that Ctrl-C
# still becomes a KeyboardInterrupt. (Other threads wake too, for nothing: a
# check costs less than finding out which thread this is.) For job.call
# and job.collect.
WAKE_MS = 250


def decode(data, codec=_result._SAFE):
    """(tag, object) from a frame (an E frame's object: (exception,
    traceback text)), or (None, reason) when it is missing or truncated, or
    (None, a LeashError) when the codec refused it or it was too large (data
    is then the cap, an int)."""
    if isinstance(data, int):
        return None, _errors.ResultTooLarge(
            "leash: the function's result is larger than max_result ({} bytes): the job was killed "
            "there and nothing of the result was kept".format(data),
            data,
        )
    if not data:
        return None, "no result"
    tag, payload = data[:1], data[1:]
    if tag not in (TAG_RESULT, TAG_ERROR):
        return None, "garbled result"
    try:
        obj = codec.loads(payload)
        return tag, (codec.exception(obj) if tag == TAG_ERROR else obj)
    except _errors.ResultRefused as e:
        return None, e.with_traceback(None)
    except Exception as e:  # truncated by a kill, or a class gone
        return None, "the result could not be unpickled: {}: {}".format(type(e).__name__, e)


def _exit_description(report):
    ex = report.get("exit") or {}
    if ex.get("signal"):
        return "killed by SIG{}".format(ex["signal"])
    if ex.get("status") is not None:
        return "exited with status {}".format(ex["status"])
    return "ended ({})".format(report.get("reason"))


def outcome(report, tag, obj, memory_limited, lazy=None, reason=None):
    """Turns the report and the frame into an Outcome. With ``lazy`` (a
    LazyReport) and report None, the report is made only when the call did
    not simply return (``reason``, the job's, is "ok")."""
    if report is None:
        if tag == TAG_RESULT and reason == "ok":
            return Outcome(None, value=obj, lazy=lazy)
        report = lazy.get()
    reason = report.get("reason")
    if tag is None and isinstance(obj, _errors.LeashError) and (
        isinstance(obj, _errors.ResultTooLarge) or reason in ("ok", "exit")
    ):
        obj.report = report  # refused by the codec, or cut at the cap
        return Outcome(report, exception=obj)
    limit_exc = _errors.limit_exception(reason, report)
    if limit_exc is not None:
        return Outcome(report, exception=limit_exc)
    if reason == "interrupted":
        return Outcome(report, exception=KeyboardInterrupt())
    if reason == "killed":
        return Outcome(report, exception=_errors.JobKilled("the job was killed by its caller", None, report))
    if tag == TAG_RESULT and reason == "ok":
        return Outcome(report, value=obj)
    if tag == TAG_ERROR:
        exc, tb_text = obj
        if memory_limited and isinstance(exc, MemoryError):
            # RLIMIT_AS fallback: the limit shows as a MemoryError in the child
            m = _errors.MemoryLimitExceeded(
                "memory limit ({} bytes, by {}) reached: MemoryError in the function".format(
                    _errors._limit_value(report, "memory"),
                    ((report.get("limits") or {}).get("memory") or {}).get("enforced_by"),
                ),
                "memory",
                _errors._limit_value(report, "memory"),
                report,
            )
            m.__cause__ = _errors.RemoteTraceback(tb_text)
            return Outcome(report, exception=m)
        try:
            exc.__cause__ = _errors.RemoteTraceback(tb_text)
            exc.child_traceback = tb_text
            exc.report = report
        except (AttributeError, TypeError):
            pass
        return Outcome(report, exception=exc)
    ex = report.get("exit") or {}
    if reason in ("signal", "seccomp"):
        import signal as _signal

        signum = None
        name = ex.get("signal")
        if name:
            try:
                signum = int(_signal.Signals["SIG" + name])
            except KeyError:
                signum = None
        return Outcome(
            report,
            exception=_errors.JobKilled("the function's process was {}".format(_exit_description(report)), signum, report),
        )
    if reason in ("setup_error", "exec_error"):
        return Outcome(
            report,
            exception=_errors.SetupError(
                "leash could not start the function: {}".format(
                    ": ".join(x for x in (ex.get("step"), ex.get("error") or reason) if x)
                ),
                ex.get("errno"),
                reason,
                report,
            ),
        )
    status = ex.get("status")
    why = obj if tag is None else "no result"
    return Outcome(
        report,
        exception=_errors.JobExited(
            "the function's process {} without a result ({})".format(_exit_description(report), why), status, report
        ),
    )


def _run_job(settings, name, memory_limited, sample, launch, codec=_result._SAFE, max_result=-1):
    """The spawn context's job, result pipe, supervision and outcome.
    launch(job, rfd, wfd) starts the child through the job; in this process
    it returns, and wfd is closed here. The rest is job.collect, the parent
    half of job.call."""
    job = new_job(settings, name)
    lazy = LazyReport(job=job)
    try:
        if sample is not None:
            job.set_sampler(sample)
        rfd, wfd = _new_pipe()
        try:
            launch(job, rfd, wfd)  # wfd closed by then, whatever happened
            ok, obj = job.collect(rfd, WAKE_MS, codec.loads, max_result)
        finally:
            _close(rfd)
    except BaseException:
        job.close()
        raise
    return collected(lazy, ok, obj, memory_limited, codec)


def collected(lazy, ok, obj, memory_limited, codec=_result._SAFE):
    """The Outcome of what job.call or job.collect returned."""
    if ok:
        return Outcome(None, value=obj, lazy=lazy)
    tag, obj = decode(obj, codec)
    return outcome(None, tag, obj, memory_limited, lazy, lazy.reason())


def report_of(local):
    """The LazyReport of the job ``local.report`` holds (Config.call stores
    the job itself, to make nothing more before the fork), made and kept
    there at the first ask."""
    held = local.report
    if held is None or isinstance(held, LazyReport):
        return held
    lazy = local.report = LazyReport(job=held)
    return lazy


def call_spec(codec=_result._SAFE, max_result=-1):
    """Config.call's last argument, made once per limited function:
    (wake_ms, job.call's (dumps, protocol, failed, loads), max_result, warn)."""
    return (WAKE_MS, call_child_args(codec), max_result, warn_weak_limits)


def run_forked(config, local, func, args, kwargs, memory_limited, sample=None, codec=_result._SAFE, max_result=-1):
    """The fork context: the child is a fork of this interpreter, made,
    supervised, finished and drained by one Config.call (in C: after the fork
    every page this process writes costs a copy-on-write fault), then the
    outcome. ``config``: a Config; the job replaces ``local.report`` (a
    threading.local), and the job it held is freed after the fork.
    ``sample``: a callable for job.set_sampler (settings ask for sampling).
    ``codec``: how the child encodes and this side decodes
    (_result.codec()); ``max_result``: the cap in bytes, -1 for the default
    (the job's memory limit, else DEFAULT_MAX_RESULT)."""
    ok, obj = config.call(func, args, kwargs, local, sample, call_spec(codec, max_result))
    return collected(report_of(local), ok, obj, memory_limited, codec)


def run_spawned(
    settings, name, func, args, kwargs, memory_limited, sample=None, codec=_result._SAFE, max_result=-1, keep=()
):
    """The spawn context: the child is a fresh interpreter (sys.executable
    -m leash._child) that inherits nothing of this one but the function,
    its arguments (pickled) and what multiprocessing's spawn would give it
    (sys.path, the main module), and the fds in ``keep`` (keep_fds=)."""
    import multiprocessing.spawn as mp_spawn

    require_extension()
    prep = mp_spawn.get_preparation_data("leash-call")
    prep.pop("authkey", None)  # the child is no multiprocessing peer
    try:
        call = pickle.dumps(prep, protocol=pickle.HIGHEST_PROTOCOL) + pickle.dumps(
            (func, args, kwargs, codec), protocol=pickle.HIGHEST_PROTOCOL
        )
    except Exception as e:
        raise pickle.PicklingError(
            "leash: context='spawn' needs the function and its arguments to pickle: {}: {}".format(type(e).__name__, e)
        ) from e
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([pkg_root] + [p for p in sys.path if p])

    def launch(job, rfd, wfd):
        try:
            cr, cw = _new_pipe()
        except BaseException:
            _close(wfd)
            raise
        try:
            argv = [sys.executable, "-s", "-m", "leash._child", str(cr), str(wfd)]
            # cr and wfd reach the child and are closed here by the fork;
            # rfd and cw, private, are closed in the child by the library
            if job.fork(keep=(cr, wfd)) == 0:
                try:
                    for fd in (cr, wfd) + tuple(keep):
                        os.set_inheritable(fd, True)
                    os.execve(argv[0], argv, env)
                finally:
                    os._exit(127)
            try:
                _write_all(cw, call)
            except BrokenPipeError:
                pass  # the child died first: the report says how
        finally:
            _close(cw)

    return _run_job(settings, name, memory_limited, sample, launch, codec, max_result)
