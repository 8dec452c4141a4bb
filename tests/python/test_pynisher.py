# SPDX-License-Identifier: LGPL-2.1-or-later
"""The pynisher drop-in: pynisher 1.x's and 0.x's public APIs as their users
(SMAC3, auto-sklearn) call them, on leash jobs. Written from pynisher's
documented behaviour; no pynisher code or test was copied."""

import errno
import os
import time

import pytest

import leash.compat.pynisher as lp
import pynisher
from conftest import rlimit_as_under_asan, skip_rlimit_as_under_asan


def add(a, b=0):
    return a + b


def fail(kind):
    raise {"value": ValueError, "key": KeyError, "os": OSError}[kind]("from the function")


def fail_errno():
    raise OSError(errno.ENOSPC, "full")


def allocate(mib):
    block = bytearray(mib << 20)
    block[::4096] = b"y" * len(block[::4096])
    return len(block)


def sleep(s):
    time.sleep(s)
    return s


def spin(s):
    end = time.process_time() + s
    while time.process_time() < end:
        pass


def chatty(x):
    print("to stdout", x, flush=True)
    os.write(2, b"to stderr\n")
    return x


def test_the_pynisher_package_is_the_drop_in():
    for name in lp.__all__:
        assert getattr(pynisher, name) is getattr(lp, name), name
    assert pynisher.limit is pynisher.Pynisher
    assert pynisher.contexts == ["fork", "spawn", "forkserver"]


def test_exception_tree():
    assert issubclass(lp.TimeoutException, lp.PynisherException)
    assert issubclass(lp.CpuTimeoutException, lp.TimeoutException)
    assert issubclass(lp.WallTimeoutException, lp.TimeoutException)
    assert issubclass(lp.MemoryLimitException, lp.PynisherException)
    assert issubclass(lp.MemoryLimitException, MemoryError)
    # 0.x names are the 1.x objects where they agree
    assert lp.MemorylimitException is lp.MemoryLimitException
    for c in (lp.SubprocessException, lp.SignalException, lp.AnythingException, lp.PynisherError):
        assert issubclass(c, lp.PynisherException)
    assert lp.Pynisher.WallTimeoutException is lp.WallTimeoutException


def test_supports():
    for feature in ("wall_time", "cpu_time", "memory", "decorator"):
        assert lp.supports(feature) and lp.Pynisher.supports(feature)
    with pytest.raises(ValueError):
        lp.supports("gpu")


def test_units_and_validation():
    p = lp.Pynisher(add, memory=(1, "GB"), cpu_time=(1, "m"), wall_time=(0.5, "h"))
    assert (p.memory, p.cpu_time, p.wall_time) == (1 << 30, 60, 1800)
    assert lp.Pynisher(add, memory=(512, "kb")).memory == 512 << 10
    for bad in (dict(wall_time=0.5), dict(cpu_time=0), dict(memory=0), dict(context="thread"),
                dict(wrap_errors={"disk": []}), dict(memory=(1, "PB"))):
        with pytest.raises(ValueError):
            lp.Pynisher(add, **bad)
    with pytest.raises(ValueError):
        lp.Pynisher(42)


def test_a_call_returns_and_the_context_manager_form():
    assert lp.limit(add)(1, b=2) == 3
    with lp.Pynisher(add, wall_time=10, context="spawn") as restricted_add:
        assert restricted_add(2, 3) == 5
    assert restricted_add.report["reason"] == "ok"


def test_the_functions_error_is_reraised():
    with pytest.raises(ValueError) as e:
        lp.limit(fail)("value")
    assert "from the function" in str(e.value)


def test_raises_false_returns_empty():
    assert lp.limit(fail, raises=False)("value") is lp.EMPTY
    assert lp.limit(sleep, wall_time=1, raises=False)(30) is lp.EMPTY
    assert not lp.EMPTY


def test_wrap_errors():
    with pytest.raises(lp.PynisherException) as e:
        lp.limit(fail, wrap_errors=True)("value")
    assert "Wrapped Exception ValueError" in str(e.value)
    with pytest.raises(lp.PynisherException):
        lp.limit(fail, wrap_errors=["ValueError"])("value")
    with pytest.raises(KeyError):
        lp.limit(fail, wrap_errors=["ValueError"])("key")
    # a class matches exactly, not its subclasses
    with pytest.raises(ValueError):
        lp.limit(fail, wrap_errors=[Exception])("value")
    if not rlimit_as_under_asan():
        with pytest.raises(lp.MemoryLimitException):
            lp.limit(fail, memory=(1, "GB"), wrap_errors={"memory": [KeyError]})("key")
    with pytest.raises(KeyError):  # the limit it names is not set
        lp.limit(fail, wrap_errors={"memory": [KeyError]})("key")


def raise_memory_error():
    raise MemoryError("from the function")


def test_a_memory_error_is_wrapped_as_pynisher_wraps_it():
    """pynisher: a MemoryError under a memory limit becomes a
    MemoryLimitException, which wrap_errors=True then wraps in turn."""
    skip_rlimit_as_under_asan()
    with pytest.raises(lp.MemoryLimitException) as e:
        lp.limit(raise_memory_error, memory=(1, "GB"))()
    assert type(e.value) is lp.MemoryLimitException
    with pytest.raises(lp.PynisherException) as e:
        lp.limit(raise_memory_error, memory=(1, "GB"), wrap_errors=True)()
    assert type(e.value) is lp.PynisherException
    assert "Wrapped Exception MemoryLimitException - MemoryError raised with limit 1073741824B" in str(e.value)
    with pytest.raises(MemoryError) as e:  # no memory limit: the function's own
        lp.limit(raise_memory_error)()
    assert type(e.value) is MemoryError


def test_wall_time():
    with pytest.raises(lp.WallTimeoutException):
        lp.limit(sleep, wall_time=1)(30)



def test_cpu_time():
    with pytest.raises(lp.CpuTimeoutException):
        lp.limit(spin, cpu_time=1)(30)


def test_memory():
    skip_rlimit_as_under_asan()
    with pytest.raises(lp.MemoryLimitException) as e:
        lp.limit(allocate, memory=(100, "MB"))(400)
    assert isinstance(e.value, MemoryError)
    assert lp.limit(allocate, memory=(300, "MB"))(10) == 10 << 20


def test_smac3_style_call():
    """SMAC3's runner: limit(f, memory=(MB, "MB"), wall_time=s,
    wrap_errors=True, terminate_child_processes=True), then except
    WallTimeoutException / MemoryLimitException."""
    skip_rlimit_as_under_asan()
    statuses = []
    for f, args in ((sleep, (30,)), (allocate, (400,)), (add, (1, 2))):
        lf = lp.limit(f, memory=(100, "MB"), wall_time=1, wrap_errors=True, terminate_child_processes=True)
        try:
            lf(*args)
            statuses.append("SUCCESS")
        except lp.WallTimeoutException:
            statuses.append("TIMEOUT")
        except lp.MemoryLimitException:
            statuses.append("MEMORYOUT")
        except lp.PynisherException as e:
            statuses.append("CRASH" if "Wrapped Exception MemoryLimitException" in str(e) else str(e))
    # an OOM kill by the memory controller is MEMORYOUT; where memory is
    # RLIMIT_AS the function's MemoryError is wrapped as pynisher wraps it
    # (wrap_errors=True: a PynisherException, which SMAC3 records as a crash)
    assert statuses in (["TIMEOUT", "MEMORYOUT", "SUCCESS"], ["TIMEOUT", "CRASH", "SUCCESS"])


def test_restricted_decorator():
    @lp.restricted(wall_time=10)
    def triple(x):
        return 3 * x

    assert triple(2) == 6
    with pytest.raises(ValueError):
        lp.restricted(add)
    with pytest.raises(ValueError):
        lp.restricted(context="spawn")


# --- 0.x ---------------------------------------------------------------------------


def test_enforce_limits_success():
    wrapped = lp.enforce_limits(mem_in_mb=None if rlimit_as_under_asan() else 200, wall_time_in_s=10)(add)
    assert wrapped(2, 5) == 7
    assert wrapped.result == 7 and wrapped.exit_status == 0 and wrapped.exitcode == 0
    assert wrapped.wall_clock_time > 0 and wrapped.os_errno is None


def test_enforce_limits_outcomes():
    w = lp.enforce_limits(wall_time_in_s=1)(sleep)
    assert w(30) is None and w.exit_status is lp.TimeoutException
    w = lp.enforce_limits(cpu_time_in_s=1, grace_period_in_s=1)(spin)
    assert w(30) is None and w.exit_status is lp.CpuTimeoutException
    if not rlimit_as_under_asan():
        w = lp.enforce_limits(mem_in_mb=100)(allocate)
        assert w(400) is None and w.exit_status is lp.MemorylimitException
    w = lp.enforce_limits()(fail_errno)
    assert w() is None and w.exit_status is lp.SubprocessException and w.os_errno == errno.ENOSPC
    w = lp.enforce_limits()(fail)
    assert w("value") is None and w.exit_status is lp.AnythingException and w.exitcode == 1


def test_enforce_limits_capture_output():
    w = lp.enforce_limits(capture_output=True)(chatty)
    assert w(5) == 5
    assert w.stdout == "to stdout 5\n" and w.stderr == "to stderr\n"
