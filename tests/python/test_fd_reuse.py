# SPDX-License-Identifier: LGPL-2.1-or-later
"""No descriptor is closed twice (issue 41 item 9): a forked function's
copies of the caller's leash objects (a limited function's config with its
watchdog's pidfds, left in a reference cycle and freed by the child's
garbage collector) name fd numbers the library dropped at the fork; freeing
them must not close the fds the child made since (a nested call's result
pipe: pynisher's nested fork-then-spawn calls failed with EBADF in
run_spawned's close of its pipe). Measured before the fix, the same
function as test_a_freed_copy_closes_none_of_the_childs_fds: 2 of its 6
pipe ends closed under it ([6, 8])."""

import gc
import os
import threading

import leash
from leash import _call

from conftest import skip_threads_forking_under_asan


class _Cycle:
    pass


def one():
    return 1


def garbage_config():
    """A limited function whose config (and watchdog) has run, left in a
    reference cycle: freed by whichever process collects it first."""
    c = _Cycle()
    c.self = c
    c.limited = leash.limit(one)
    c.limited()


def make_pipes_then_collect(n=3):
    """In the child: pipes made as a nested call makes its result pipe
    (marked private), then the collector frees the caller's copies; the
    ends closed under us."""
    fds = [fd for _ in range(n) for fd in _call._new_pipe()]
    gc.collect()
    closed = []
    for fd in fds:
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in fds:
        if fd not in closed:
            _call._close(fd)
    return closed


def test_a_freed_copy_closes_none_of_the_childs_fds():
    was = gc.isenabled()
    gc.disable()
    try:
        garbage_config()
        assert leash.limit(make_pipes_then_collect)() == []
    finally:
        gc.collect()  # the cycle, freed here (its watchdog ended)
        if was:
            gc.enable()


def test_under_threads_no_call_closes_another_threads_fd():
    """Four threads call at once, each child collecting copies of the
    caller's garbage; the caller's own sentinels (a private pipe as
    leash makes one, a plain pipe) survive them all."""
    skip_threads_forking_under_asan()
    was = gc.isenabled()
    gc.disable()
    sentinels = list(_call._new_pipe()) + list(os.pipe())
    before = {fd: os.fstat(fd).st_ino for fd in sentinels}
    found, errors = [], []

    def worker():
        try:
            for _ in range(5):
                garbage_config()
                found.extend(leash.limit(make_pipes_then_collect)())
        except BaseException as e:  # reported below, not lost in the thread
            errors.append(e)

    try:
        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert found == []
        assert {fd: os.fstat(fd).st_ino for fd in sentinels} == before
    finally:
        _call._close(sentinels[0])
        _call._close(sentinels[1])
        os.close(sentinels[2])
        os.close(sentinels[3])
        gc.collect()
        if was:
            gc.enable()
