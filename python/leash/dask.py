# SPDX-License-Identifier: LGPL-2.1-or-later
"""leash on dask.distributed workers (Debian: python3-distributed).

Two ways, usable together:

- send a limited function: ``client.submit(leash.limit(f, memory="2G"), x)``
  (a Limited pickles; each call on the worker is a job of its own);
- confine every task of a worker: ``client.register_worker_plugin(
  leash.dask.LeashPlugin(memory="2G", wall_time=600))`` makes the worker's
  default executor a ``leash.Executor`` with those limits (as many at once
  as the worker has threads), so each task runs in a fresh job.

A task past its limit ends with the limit's exception (``leash.
MemoryLimitExceeded``...) on that task alone: its memory was the job's, not
the worker's, so the nanny has nothing to kill and the worker, with the
other tasks it runs, goes on. (Without leash, a task that makes the worker
pass the nanny's memory limit has the whole worker terminated and every
task on it rescheduled.)

The plugin's executor decodes results with ``trust_result=True`` by default:
task results are any object (arrays, frames), and a worker already runs the
client's pickled code and unpickles task results from other workers; pass
``trust_result=False`` (and ``result_types=``) for plain data only. The
job runs the task's function itself; the worker's message about the task
(timings, size, the exception) is made on the worker, so a limit's
exception is seen as the limit's.
"""

import threading
import time

try:
    from distributed import worker as _dw
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError as e:  # pragma: no cover - the module says so when used
    raise ImportError("leash.dask needs dask.distributed (Debian: python3-distributed): {}".format(e)) from e

from ._executor import Executor

__all__ = ["LeashPlugin"]


class LeashPlugin(WorkerPlugin):
    """A worker plugin: every task of the worker in its own job, under
    ``leash.limit``'s keywords (``memory``, ``wall_time``, ``cgroup_parent``,
    any ``leash run`` option). ``max_workers``: jobs at once, default the
    worker's threads. The worker's own executor is put back when the plugin
    is torn down (the worker closing); running jobs are then ended."""

    name = "leash"

    def __init__(self, max_workers=None, **limits):
        limits.setdefault("trust_result", True)
        self.max_workers = max_workers
        self.limits = limits
        self._executor = None
        self._previous = None

    def __getstate__(self):
        return {"max_workers": self.max_workers, "limits": self.limits, "_executor": None, "_previous": None}

    def setup(self, worker):
        nthreads = getattr(getattr(worker, "state", None), "nthreads", None) or getattr(worker, "nthreads", 1)
        self._executor = _WorkerExecutor(max_workers=self.max_workers or nthreads, **self.limits)
        self._previous = worker.executors["default"]
        worker.executors["default"] = self._executor

    def teardown(self, worker):
        if worker.executors.get("default") is self._executor:
            worker.executors["default"] = self._previous
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None



class _WorkerExecutor(Executor):
    """A worker's default executor: the task's function in the job, the
    worker's task message (distributed.worker.apply_function_simple's) made
    here when it has ended."""

    def submit(self, fn, /, *args, **kwargs):
        if fn is not _dw.apply_function_simple or kwargs or len(args) != 4:
            return super().submit(fn, *args, **kwargs)
        function, fargs, fkwargs, delay = args
        start = time.time()

        def message(value, exc):
            if exc is not None:
                msg = _dw.error_message(exc)
                msg["op"] = "task-erred"
                msg["actual-exception"] = exc
            else:
                msg = {"op": "task-finished", "status": "OK", "result": value, "nbytes": _dw.sizeof(value),
                       "type": type(value) if value is not None else None}
            msg["start"], msg["stop"] = start + delay, time.time() + delay
            msg["thread"] = threading.get_ident()
            return msg

        return self._submit(self._spec, function, fargs, fkwargs or {}, message)
