# SPDX-License-Identifier: LGPL-2.1-or-later
"""Many trials at once (issue 42): a limited function pickles and runs in
other pools."""

import concurrent.futures
import multiprocessing
import os
import pickle
import warnings

import pytest

import leash
from conftest import parent

warnings.simplefilter("ignore", leash.WeakLimitWarning)


def square(x):
    return x * x


@leash.limit(wall_time=60)
def limited_square(x):
    return x * x


def lf_keep_fds(fds):
    return leash.limit(square, keep_fds=fds)._child_fds


def pid_and_cgroup(_=None):
    with open("/proc/self/cgroup") as f:
        return os.getpid(), f.read()


def test_limited_pickles_round_trip():
    lf = leash.limit(square, memory="256M", wall_time=30, trust_result=True)
    copy = pickle.loads(pickle.dumps(lf))
    assert copy is not lf and copy.func is square and copy.settings == lf.settings
    assert copy._codec.trusted and copy.context == lf.context
    assert copy(7) == 49
    kept = pickle.loads(pickle.dumps(leash.limit(square, keep_fds=[5, 9])))
    assert kept._child_fds == lf_keep_fds([5, 9])
    # a decorated module-level function travels by its name
    assert pickle.loads(pickle.dumps(limited_square)) is limited_square
    # control: its state pickled the default way (what pickle did before
    # Limited.__reduce__) fails on the thread-local
    with pytest.raises(TypeError, match="_thread._local"):
        pickle.dumps(lf.__dict__)


def test_limited_runs_in_process_pool():
    # fork: spawn and forkserver leave multiprocessing's own helper process
    # (the resource tracker, the fork server) for the rest of this session;
    # the Dask test (test_dask.py) sends it to spawned workers
    lf = leash.limit(pid_and_cgroup, wall_time=60)
    ctx = multiprocessing.get_context("fork")
    pool = concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx, initializer=_configure, initargs=(parent(),))
    with pool:
        out = list(pool.map(lf, range(4)))
        assert pool.submit(limited_square, 6).result() == 36
    for pid, cgroup in out:
        # each call ran in a job cgroup under the test's parent
        assert "/" + os.path.basename(parent()) + "/pid_and_cgroup@" in cgroup, cgroup


def _configure(parent_path):
    leash.configure(cgroup_parent=parent_path)
