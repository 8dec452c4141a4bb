# SPDX-License-Identifier: LGPL-2.1-or-later
"""Many limited calls at once: ``leash.Executor``, a concurrent.futures
executor whose every task is a fresh job in its own cgroup, and
``leash.acall`` for asyncio.

Theory of operation. One supervisor thread serves every task of an
executor: it starts a task's job (forked straight into its cgroup by the
job object, as leash.limit's calls are), then polls, in one poll(), every
running job's fd (deadlines, the child's exit, the ladder's steps: handed
to job.dispatch()) and every result pipe (drained as the child writes, so a
large result never blocks it, and never beyond the cap). When a job has
ended, the pipe holds all the job wrote (its leftovers were killed), so it
is drained without blocking and the job finished; the frame and the report
become the future's outcome by leash.limit's own rules (_call.outcome), so a
task's limit exception is the one leash.limit raises. No process is reused:
nothing a trial leaves (globals, threads, memory) reaches the next one.
Cancelling a running task (``future.cancel()``, ``shutdown(cancel_futures=
True)``, an asyncio task awaiting it) asks the supervisor to end its job by
the ladder (the soft signal, the grace, SIGKILL); the report says "killed".

A study budget (``study={...}``) is one more job, without a process: its
cgroup is placed by the placement rules (nested under the job leash runs in,
if any), its limits are enforced by cgroup controllers or refused (as
``--strict`` does: a figure for the whole study means nothing as a
per-process rlimit), and every task's cgroup is made under it, so the
kernel holds the total whatever each task does. Its report, at shutdown,
is the cgroup's accounting (which counts its tasks) and a summary of its
tasks' reasons.
"""

import collections
import concurrent.futures
import concurrent.futures._base as _base
import json
import os
import select
import sys
import threading
import time

from . import _call, _errors, _settings

__all__ = ["Executor", "Future", "acall"]

_CHUNK = 1 << 20


class Future(concurrent.futures.Future):
    """A task's future. ``report``: the task's report (dict), once its job
    has ended (it waits for that); None when the task never started.
    ``cancel()`` also ends a running task, by the ladder."""

    def __init__(self, executor):
        super().__init__()
        self._executor = executor
        self._ended = threading.Event()
        self._lazy = None
        self._report_lock = threading.Lock()

    @property
    def report(self):
        """The task's report (dict), once its job has ended (waits for
        that); None when the task never started."""
        self._ended.wait()
        with self._report_lock:
            return self._lazy.get() if self._lazy is not None else None

    def cancel(self):
        """Cancel the task: one not started never starts; a running one is
        ended by the ladder (its report says "killed"). False once done."""
        with self._condition:
            if self._state != _base.RUNNING:
                running = False
            else:
                running = True
                self._state = _base.CANCELLED_AND_NOTIFIED
                for waiter in self._waiters:
                    waiter.add_cancelled(self)
                self._condition.notify_all()
        if not running:
            return super().cancel()  # the supervisor skips it when it comes
        self._executor._end(self)
        self._invoke_callbacks()
        return True


class _Task:
    """One running task: its job, result pipe, the bytes read so far."""

    __slots__ = ("future", "job", "lazy", "rfd", "cw", "call", "chunks", "size", "cap", "too_large", "spec", "post")

    def __init__(self, future, job, spec, cap, post=None):
        self.post = post
        self.future = future
        self.job = job
        self.lazy = _call.LazyReport(job=job)
        self.spec = spec
        self.rfd = self.cw = -1
        self.call = b""  # what the spawn context's child still has to read
        self.chunks = []
        self.size = 0
        self.cap = cap
        self.too_large = False


class _Spec:
    """What a task runs under: a Limited's settings, codec, context."""

    __slots__ = ("limited", "cap")

    def __init__(self, limited):
        self.limited = limited
        cap = limited._max_result
        if cap < 0:
            memory = dict(limited.settings).get("memory")
            cap = _settings.size_bytes(memory, "memory") if memory not in (None, "max") else -1
        self.cap = cap if cap >= 0 else _call.DEFAULT_MAX_RESULT

    def check(self):
        """In the caller's thread: the settings checked (a bad value raises
        here, before any task) and leash.WeakLimitWarning for each limit
        this host enforces weaker than asked, from a job made and removed at
        once; the supervisor's jobs say nothing more."""
        _call.new_job(self.limited._job_config(), None).close()

    def new_job(self):
        return _call.require_extension().Job(self.limited._job_config(), None)


class Executor(concurrent.futures.Executor):
    """A pool whose every task runs in a fresh job: ``submit(fn, *args,
    **kwargs)`` returns a ``leash.Future``; at most ``max_workers`` jobs
    run at once (default: the CPUs this process may use).

    Every keyword of ``leash.limit`` applies to each task (``memory``,
    ``cpu_time``, ``wall_time``, ``pids``, ``context``, ``trust_result``,
    any ``leash run`` option...). ``study``: limits for all tasks together
    (``{"memory": "12G", "pids": 4096, "cpus": 6}``): a job whose cgroup
    holds every task's; refused (SetupError, with the reason) where a
    cgroup controller cannot enforce one of them. ``study_report``: its
    report (dict) once shut down.

    A task's outcome is its call's, as ``leash.limit`` has it: the value,
    or the exception (``MemoryLimitExceeded``...); ``future.report`` is the
    task's report. ``future.cancel()`` and ``shutdown(cancel_futures=True)``
    end running tasks too, by the ladder (the soft signal, the grace,
    SIGKILL): their reports say "killed". Usable from asyncio
    (``loop.run_in_executor``), and its futures with ``asyncio.wrap_future``.

    The fork context forks the executor's supervisor thread: as with any
    fork of a threaded process, a lock another thread held (a logging
    handler's) stays held in the child; ``context="spawn"`` avoids that.
    The executors' own supervisors are waited for: a task forks only once
    those of executors shut down before it have ended (a joined thread
    still frees its memory, under malloc's locks, for a moment).
    """

    def __init__(self, max_workers=None, *, study=None, name=None, **limits):
        self._init(max_workers, study, name, limits, True)

    def _init(self, max_workers, study, name, limits, check):
        from . import _defaults, limit

        if max_workers is None:
            max_workers = len(os.sched_getaffinity(0)) or 1
        if not isinstance(max_workers, int) or isinstance(max_workers, bool) or max_workers < 1:
            raise ValueError("leash.Executor: max_workers={!r}: expected an int >= 1".format(max_workers))
        self._spec = _Spec(limit(_nothing, name=name or "task", **limits))
        self._max_workers = max_workers
        self._lock = threading.Lock()
        self._pending = collections.deque()
        self._ends = []
        self._running = {}
        self._shutdown = False
        self._cancel_running = False  # shutdown(cancel_futures=True): a task started since is ended too
        self._thread = None
        self._idle_exit = False
        self._wake_r = self._wake_w = -1
        self.study_report = None
        self._study = None
        self._study_info = None
        self._study_reasons = collections.Counter()
        if study is not None:
            self._study = _new_study(study, _defaults, name)
            memory = dict(study).get("memory")
            self._study_info = {
                "cgroup": self._study.cgroup,
                "memory": _settings.size_bytes(memory, "memory") if memory not in (None, "max") else None,
            }
            self._spec.limited.settings.append(("cgroup-parent", self._study.cgroup))
        try:
            if check:
                self._spec.check()
        except BaseException:
            self._close_study()
            raise

    # --- the caller's side ---------------------------------------------------

    def submit(self, fn, /, *args, **kwargs):
        """Run fn(*args, **kwargs) in a new job once a worker's place is
        free; a ``leash.Future``."""
        return self._submit(self._spec, fn, args, kwargs)

    def _submit(self, spec, fn, args, kwargs, post=None):
        """``post``: called in the supervisor as post(value, exception) when
        the task has ended; what it returns is the future's result (the
        Dask plugin builds the worker's task message with it)."""
        if not callable(fn):
            raise TypeError("leash.Executor.submit: {!r} is not callable".format(fn))
        future = Future(self)
        with self._lock:
            if self._shutdown:
                raise RuntimeError("leash.Executor: cannot submit after shutdown")
            if self._thread is None:
                self._start_supervisor()
            self._pending.append((future, spec, fn, args, kwargs, post))
        self._wake()
        return future

    def shutdown(self, wait=True, *, cancel_futures=False):
        """No more submits; with ``wait``, return once every task has ended
        and the study job (if any) is finished (``study_report``). With
        ``cancel_futures``, tasks not started are cancelled and running ones
        ended by the ladder."""
        with self._lock:
            self._shutdown = True
            thread = self._thread
            if cancel_futures:
                pending, self._pending = list(self._pending), collections.deque()
                running = [t.future for t in self._running.values()]
                # a task the supervisor took from the queue but has not yet
                # registered as running is in neither list: _start ends it
                self._cancel_running = True
            else:
                pending = running = []
        for future, *_ in pending:
            future.cancel()
            future.set_running_or_notify_cancel()  # tells wait() and as_completed()
            future._ended.set()
        for future in running:
            future.cancel()
        if thread is None:
            self._close_study()
            return
        self._wake()
        if wait:
            thread.join()

    def _end(self, future):
        """Ask the supervisor to end a running task's job by the ladder."""
        with self._lock:
            self._ends.append(future)
        self._wake()

    def _wake(self):
        with self._lock:
            if self._wake_w < 0:
                return  # not started, or stopped
            try:
                os.write(self._wake_w, b"x")
            except BlockingIOError:
                pass  # full: a wake is pending anyway

    def _start_supervisor(self):
        """With self._lock held: the wake pipe and the supervisor thread."""
        self._wake_r, self._wake_w = _call._new_pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._thread = threading.Thread(
            target=self._supervise, args=(self._wake_r, self._wake_w), name="leash-executor", daemon=True
        )
        self._thread.start()
        _register_atexit(self)

    def _close_study(self):
        study, self._study = self._study, None
        if study is None:
            return
        try:
            report = json.loads(study.finish())
        finally:
            study.close()
        report["tasks"] = {"count": sum(self._study_reasons.values()), "reasons": dict(self._study_reasons)}
        self.study_report = report

    # --- the supervisor ------------------------------------------------------

    def _supervise(self, wake_r, wake_w):
        poller = select.poll()
        poller.register(wake_r, select.POLLIN)
        fds = {}
        try:
            while self._step(poller, fds, wake_r):
                pass
        except BaseException as e:  # a bug here: no task may hang on it
            self._fail_all(e)
            raise
        finally:
            with self._lock:
                if self._wake_w == wake_w:
                    self._wake_r = self._wake_w = -1
                shutdown = self._shutdown
            _call._close(wake_r)
            _call._close(wake_w)
            if shutdown:
                self._close_study()
                self._spec.limited._config = self._spec.limited._config_gen = None  # its watchdog
            _ending_add()

    def _step(self, poller, fds, wake_r):
        """Start what may start, end what was cancelled, wait for events and
        handle them. False once shut down with nothing left (or idle, for
        the executor of leash.acall, which holds no thread while idle: the
        next submit starts another)."""
        with self._lock:
            ends, self._ends = self._ends, []
            starts = []
            while self._pending and len(self._running) + len(starts) < self._max_workers:
                starts.append(self._pending.popleft())
            if (self._shutdown or self._idle_exit) and not starts and not self._running and not self._pending:
                if not self._shutdown:
                    self._thread, self._wake_r, self._wake_w = None, -1, -1
                return False
        for item in starts:
            self._start(item, poller, fds)
        for future in ends:
            task = next((t for t in self._running.values() if t.future is future), None)
            if task is not None and not task.job.ended:
                task.job.kill()
        for fd, _ in poller.poll():
            if fd == wake_r:
                _drain_wake(fd)
            elif fd in fds:
                self._event(fds[fd], fd, poller, fds)
        return True

    def _start(self, item, poller, fds):
        future, spec, fn, args, kwargs, post = item
        if not future.set_running_or_notify_cancel():
            future._ended.set()
            return
        try:
            job = spec.new_job()
        except BaseException as e:
            future._ended.set()
            future.set_exception(e)
            return
        task = _Task(future, job, spec, spec.cap, post)
        future._lazy = task.lazy
        try:
            _await_ended()
            _launch(task, fn, args, kwargs)
        except BaseException as e:
            if task.rfd >= 0:
                _call._close(task.rfd)
            if task.cw >= 0:
                _call._close(task.cw)
            task.lazy.get()  # finishes and frees the job
            future._ended.set()
            if not future.cancelled():
                future.set_exception(e)
            return
        jfd = job.fileno()
        with self._lock:
            self._running[jfd] = task
            cancel = self._cancel_running
        fds[jfd] = task
        fds[task.rfd] = task
        poller.register(jfd, select.POLLIN)
        poller.register(task.rfd, select.POLLIN)
        if task.cw >= 0:
            fds[task.cw] = task
            poller.register(task.cw, select.POLLOUT)
        if cancel:  # shut down with cancel_futures while it was starting
            future.cancel()

    def _event(self, task, fd, poller, fds):
        if fd == task.cw:
            _feed(task)
            if task.cw < 0:
                poller.unregister(fd)
                del fds[fd]
            return
        if fd == task.rfd:
            if _read(task) or task.too_large:
                poller.unregister(fd)
                del fds[fd]
                if task.too_large:
                    task.job.kill(True)
            return
        if task.job.dispatch():
            self._finish(task, poller, fds)

    def _finish(self, task, poller, fds):
        jfd = task.job.fileno()
        for fd in (jfd, task.rfd, task.cw):
            if fd in fds:
                poller.unregister(fd)
                del fds[fd]
        with self._lock:
            del self._running[jfd]
        try:
            task.job.finish(False)
            if not task.too_large:
                _read(task)  # all the job wrote: its processes have ended
        finally:
            _call._close(task.rfd)
            if task.cw >= 0:
                _call._close(task.cw)
        self._study_reasons[task.lazy.reason()] += 1
        future = task.future
        if future.cancelled():
            future._ended.set()
            return
        out = _outcome(task)
        if self._study is not None and task.lazy.reason() == "memory":
            exc = study_memory_kill(task.lazy.get(), self._study_info)
            if exc is not None:
                out.value, out.exception = None, exc
        if task.post is not None:
            try:
                out.value, out.exception = task.post(out.value, out.exception), None
            except BaseException as e:
                out.exception = e
        future._ended.set()
        try:
            if out.exception is not None:
                future.set_exception(out.exception)
            else:
                future.set_result(out.value)
        except concurrent.futures.InvalidStateError:
            pass  # cancelled meanwhile: its report says how it ended

    def _fail_all(self, exc):
        with self._lock:
            tasks = list(self._running.values())
            self._running.clear()
            pending, self._pending = list(self._pending), collections.deque()
            self._shutdown = True
        for task in tasks:
            task.job.close()
            task.future._ended.set()
            try:
                task.future.set_exception(exc)
            except concurrent.futures.InvalidStateError:
                pass
        for future, *_ in pending:
            future._ended.set()
            if future.set_running_or_notify_cancel():
                future.set_exception(exc)


def _nothing():
    """The function of an executor's template Limited (tasks bring theirs)."""


def _new_study(study, defaults, name):
    if not isinstance(study, dict):
        raise ValueError("leash.Executor: study={!r}: expected a dict of limits".format(study))
    study = dict(study)
    named = {k: study.pop(k) for k in list(study) if k in _settings._NAMED}
    settings = list(defaults) + _settings.build_settings(named, study)
    return _call.new_job(settings + [("strict", "true")], name or "study")


def study_memory_kill(report, study):
    """A task's MemoryLimitExceeded for the study's memory limit, or None.
    The kernel counts an OOM kill in the victim's cgroup (memory.events'
    oom_kill, so the task's reason is "memory"), but the OOM itself (oom:
    a limit reached) in the cgroup whose limit was reached: a task with
    kills and no OOM of its own was killed for its study's limit. Its
    report gains ``study`` (the study's cgroup, reason and limit)."""
    usage = report.get("usage") or {}
    if not usage.get("oom_kills") or usage.get("oom_events") != 0:
        return None
    report["study"] = {"cgroup": study["cgroup"], "reason": "memory", "memory": study["memory"]}
    return _errors.MemoryLimitExceeded(
        "the study's memory limit ({} bytes, {}) reached: the kernel killed this task's process, whose own "
        "limit was not reached".format(study["memory"], study["cgroup"]),
        "memory",
        study["memory"],
        report,
    )


def _launch(task, fn, args, kwargs):
    """Fork the task's child into its job (the spawn context: the child
    execs a fresh interpreter, fed the call through task.cw)."""
    limited = task.spec.limited
    task.rfd, wfd = _call._new_pipe()
    os.set_blocking(task.rfd, False)
    if limited.context == "spawn":
        _launch_spawned(task, limited, fn, args, kwargs, wfd)
        return
    _call._flush_std()
    if task.job.fork(keep=(wfd,)) == 0:
        if limited._child_fds is not None:
            _close_other_fds(wfd, limited._child_fds)
        _call.child_run(wfd, fn, args, kwargs, limited._codec)  # never returns


# Supervisor threads that have returned, by (tid, start time), until their
# task has left /proc/self/task. A thread goes on running after its Python
# code (and after join() returns): CPython frees its thread state without the
# GIL, then glibc frees its tcache and TLS, taking malloc's arena locks. The
# job's fork was clone3, which (unlike fork()) does not take those locks
# first, so a fork at that moment left its child a lock that no thread of
# the child would release: the child's first malloc in that arena waited
# forever (a task without a wall limit never ended). A caller with threads
# is now forked by glibc's fork(), which waits for those locks
# (src/engine/process/libcfork.c): this wait may be redundant, kept until measured. Executors made one
# after another (each test; acall's executor, whose thread ends when idle)
# fork in that window: the previous supervisor was still there at 5 to 13 of
# 300 such forks on a loaded 2-core machine. Each fork waits for those
# tasks to be gone; a thread of the caller's own is the caller's (the class
# docstring says so). The lock is made anew in a forked child, as a thread
# of the parent may have held it (the job's fork runs the at-fork hooks).
_ending = []
_ending_lock = threading.Lock()


def _ending_reset():
    """In a forked child (os.fork, a job's fork): the parent's threads are
    not its own, and the lock may have been held by one of them."""
    global _ending_lock
    _ending_lock = threading.Lock()
    _ending.clear()


os.register_at_fork(after_in_child=_ending_reset)


def _task_start(tid):
    """The start time of this process's task tid (field 22 of its stat), or
    None once it is gone."""
    try:
        with open("/proc/self/task/{}/stat".format(tid), "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2 :].split()[19]


def _ending_add():
    """In a supervisor thread about to return: remember it."""
    tid = threading.get_native_id()
    start = _task_start(tid)
    if start is not None:
        with _ending_lock:
            _ending.append((tid, start))


def _await_ended():
    """Before a fork: wait until every returned supervisor thread has ended
    (its tid gone, or another task's: reused); each takes microseconds."""
    with _ending_lock:
        pending = list(_ending)
    if not pending:
        return
    delay = 0.0001
    while True:
        pending = [(tid, start) for tid, start in pending if _task_start(tid) == start]
        if not pending:
            break
        time.sleep(delay)
        delay = min(delay * 2, 0.01)
    with _ending_lock:
        _ending[:] = [e for e in _ending if _task_start(e[0]) == e[1]]


def _close_other_fds(wfd, keep):
    """In the fork context's child, as Config.call's child does for
    keep_fds= (or user=, devices=, gpus=): every fd above 2 closed but the
    result pipe and those kept."""
    lo = 3
    for fd in sorted(set(keep) | {wfd}):
        if fd >= lo:
            os.closerange(lo, fd)
            lo = fd + 1
    os.closerange(lo, os.sysconf("SC_OPEN_MAX"))


def _launch_spawned(task, limited, fn, args, kwargs, wfd):
    import multiprocessing.spawn as mp_spawn
    import pickle

    try:
        prep = mp_spawn.get_preparation_data("leash-call")
        prep.pop("authkey", None)
        task.call = pickle.dumps(prep, protocol=pickle.HIGHEST_PROTOCOL) + pickle.dumps(
            (fn, args, kwargs, limited._codec), protocol=pickle.HIGHEST_PROTOCOL
        )
        cr, task.cw = _call._new_pipe()
    except BaseException as e:
        _call._close(wfd)
        if isinstance(e, Exception) and not isinstance(e, OSError):
            raise pickle.PicklingError(
                "leash: context='spawn' needs the function and its arguments to pickle: {}: {}".format(
                    type(e).__name__, e)
            ) from e
        raise
    os.set_blocking(task.cw, False)
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([pkg_root] + [p for p in sys.path if p])
    argv = [sys.executable, "-s", "-m", "leash._child", str(cr), str(wfd)]
    if task.job.fork(keep=(cr, wfd)) == 0:
        try:
            for fd in (cr, wfd) + tuple(limited._child_fds or ()):
                os.set_inheritable(fd, True)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    _feed(task)


def _feed(task):
    """Write what the spawned child still has to read, without blocking."""
    while task.call:
        try:
            n = os.write(task.cw, task.call[:_CHUNK])
        except BlockingIOError:
            return
        except BrokenPipeError:
            task.call = b""  # the child died first: the report says how
            break
        task.call = task.call[n:]
    _call._close(task.cw)
    task.cw = -1


def _read(task):
    """Read what is there, never beyond the cap; True at EOF."""
    while True:
        try:
            data = os.read(task.rfd, _CHUNK)
        except BlockingIOError:
            return False
        except InterruptedError:
            continue
        if not data:
            return True
        task.size += len(data)
        if task.size > task.cap:
            task.too_large = True
            task.chunks = []
            return False
        task.chunks.append(data)


def _outcome(task):
    limited = task.spec.limited
    data = task.cap if task.too_large else b"".join(task.chunks)
    task.chunks = []
    tag, obj = _call.decode(data, limited._codec)
    return _call.outcome(None, tag, obj, limited.memory_limited, task.lazy, task.lazy.reason())


def _drain_wake(fd):
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


_live = None


def _register_atexit(executor):
    """At interpreter exit, shut down what is still running (waiting for
    it), as concurrent.futures' own executors do."""
    global _live
    import weakref

    if _live is None:
        _live = weakref.WeakSet()
        register = getattr(threading, "_register_atexit", None)
        if register is not None:
            register(_shutdown_all)
    _live.add(executor)


def _shutdown_all():
    for executor in list(_live):
        executor.shutdown(wait=True)


_shared = None
_shared_lock = threading.Lock()


def _shared_executor():
    global _shared
    with _shared_lock:
        if _shared is None:
            # its own settings are never used (each acall brings its own):
            # not checked, so it holds no Config and no watchdog
            _shared = Executor.__new__(Executor)
            _shared._init(None, None, None, {}, False)
            _shared._idle_exit = True
        return _shared


async def acall(fn, /, *args, **limits):
    """``await leash.acall(f, *args, **limits)``: f(*args) in a new job under
    ``leash.limit``'s keywords (the function's own keyword arguments cannot
    be passed: bind them with functools.partial), run by a shared executor
    (as many at once as this process may use CPUs); the value, or the
    exception ``leash.limit`` raises. Cancelling the awaiting task ends the
    job by the ladder."""
    import asyncio

    from . import limit

    spec = _Spec(limit(fn, **limits))
    spec.check()
    future = _shared_executor()._submit(spec, fn, args, {})
    return await asyncio.wrap_future(future)
