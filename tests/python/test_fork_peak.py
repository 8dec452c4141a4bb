# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 39 item 1: a forked call's memory peak is the call's, never its
caller's. fork copies the caller's page tables and RSS high-water mark, so a
forked child's ru_maxrss starts at the caller's resident memory: a caller
holding 400 MB made a call that returns 1 read memory_peak_bytes 429 MB,
basis rusage_maxrss_main. Now, without a memory controller, that figure is
null with memory_peak_note saying why, and a sampled call's memory is its USS
(the pages only its processes map), not its PSS (which holds half of every
page it still shares with the caller)."""

import os

import pytest

import leash
from conftest import controllers

HOLD = 400 << 20


def one():
    return 1


def allocate_and_hold(mb):
    import time

    block = bytearray(mb << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    time.sleep(2)  # held while the sampler looks: any sample in it sees the block
    return len(block)


@pytest.fixture
def big_caller():
    if os.environ.get("LEASH_SAN_CFLAGS"):
        pytest.skip("a sanitizer build's shadow memory blurs the caller's RSS")
    hold = bytearray(HOLD)
    for i in range(0, len(hold), 4096):
        hold[i] = 1
    yield hold
    del hold


def test_control_a_forked_childs_maxrss_is_the_callers(big_caller):
    # the kernel's figure that was reported before: a child that does
    # nothing has the caller's 400 MB as its ru_maxrss
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    _, status, ru = os.wait4(pid, 0)
    assert status == 0
    assert ru.ru_maxrss * 1024 >= HOLD, ru.ru_maxrss


def test_forked_call_does_not_report_the_callers_memory(big_caller):
    lf = leash.limit(one, wall_time=5)
    assert lf() == 1
    u = lf.last_report["usage"]
    if "memory" in controllers():
        assert u["memory_peak_basis"] == "memory.peak", u
        assert u["memory_peak_bytes"] < 100 << 20, u
    else:
        assert u["memory_peak_bytes"] is None, u
        assert u["memory_peak_basis"] is None, u
        assert "counts the caller's memory" in u["memory_peak_note"], u
    assert u["main_process"]["maxrss_bytes"] is None, u


def test_forked_call_sampled_is_its_own_memory(big_caller):
    lf = leash.limit(allocate_and_hold, wall_time=60, sample=0.05)
    assert lf(100) == 100 << 20
    u = lf.last_report["usage"]
    if "memory" in controllers():
        pytest.skip("the memory controller measures the call (memory.peak): no sampled figure")
    assert u["memory_peak_basis"] == "sampled_uss", u
    # its own 100 MB, not the caller's 400 MB nor half of them (PSS)
    assert 90 << 20 <= u["memory_peak_bytes"] < 150 << 20, u
    peaks = lf.last_report["sampling"]["peaks"]
    assert peaks["mem_pss_bytes"]["value"] >= 250 << 20, peaks  # the control: PSS holds half the caller's
