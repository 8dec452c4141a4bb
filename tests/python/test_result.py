# SPDX-License-Identifier: LGPL-2.1-or-later
"""The result channel is a boundary, and nothing of the supervisor reaches
the function (issue 22, items 1, 2, 4, 5, 6). Each attack runs from inside
the function, as a hostile one would; each defence has its control: the
same attack with ``trust_result=True`` (item 1), or the figure that shows
the measurement sees what it looks for (item 5). For items 2, 4 and 6 the
control is the unfixed code: run this file against commit 8148d8f's build
and the fd tests find the timerfd, epoll and pidfds and the spinner runs its
5 s, the threads steal each other's results, and the held pipe freezes the
caller (the commit messages say how that was seen)."""

import array
import ctypes
import fcntl
import json
import os
import pickle
import pwd
import socket
import stat
import subprocess
import shutil
import sys
import tempfile
import threading
import time

import pytest

import leash
from conftest import interrupted, parent, skip_rlimit_as_under_asan

_F_GETPIPE_SZ = 1032


# --- what a hostile function uses ----------------------------------------------


def result_fd():
    """The write end of this call's result pipe, as a hostile function
    finds it: a write-only pipe of 1 MiB (the size leash gives it), else the
    last write-only pipe above stderr. The parent sizes the pipe after the
    fork, while the child starts (bench/NOTES.md, row 10), so the child
    looks again until it sees that size, for up to 10 s: without the wait a
    child that looked first took another write-only pipe of the caller's
    (a test runner's), wrote its frame there and the call saw no result."""
    deadline = time.monotonic() + 10
    while True:
        fd, sized = _result_fd_once()
        if sized or time.monotonic() > deadline:
            return fd
        time.sleep(0.001)


def _result_fd_once():
    found = None
    for fd in range(3, 1024):
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                continue
            if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_WRONLY:
                continue
            if fcntl.fcntl(fd, _F_GETPIPE_SZ) == 1 << 20:
                return fd, True
            found = fd
        except OSError:
            continue
    return found, False


def write_frame_and_exit(frame):
    fd = result_fd()
    view = memoryview(frame)
    while view:
        view = view[os.write(fd, view):]
    os._exit(0)


def fd_kinds():
    """{fd: what it is} for this process's fds above stderr (a pipe's end
    as "pipe-read pipe:[inode]" or "pipe-write pipe:[inode]")."""
    out = {}
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd < 3:
            continue
        try:
            target = os.readlink("/proc/self/fd/" + name)
            acc = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
        except OSError:
            continue  # the listing's own fd
        if target.startswith("pipe:"):
            target = ("pipe-read " if acc == os.O_RDONLY else "pipe-write ") + target
        out[fd] = target
    return out


_libc = ctypes.CDLL(None, use_errno=True)
_SYS_pidfd_send_signal = 424


class _itimerspec(ctypes.Structure):
    _fields_ = [("interval", ctypes.c_long * 2), ("value", ctypes.c_long * 2)]


def attack_held_fds():
    """Every library fd this process can reach, used as an attacker would:
    each timerfd disarmed, each pidfd signalled (signal 0), each epoll set
    emptied of what it watches. Returns what worked."""
    worked = []
    zero = _itimerspec()
    for fd, kind in fd_kinds().items():
        if kind == "anon_inode:[timerfd]" and _libc.timerfd_settime(fd, 0, ctypes.byref(zero), None) == 0:
            worked.append("disarmed a timerfd")
        elif kind == "anon_inode:[pidfd]" and _libc.syscall(_SYS_pidfd_send_signal, fd, 0, None, 0) == 0:
            worked.append("signalled through a pidfd")
        elif kind == "anon_inode:[eventpoll]":
            worked.append("holds an epoll set")
    return worked


def outside_pipes():
    """The pipes this test process holds from outside (make's jobserver,
    the terminal's): not leash's, and not for a function to read."""
    return sorted(k.split(" ", 1)[1] for k in fd_kinds().values() if k.startswith("pipe-"))


def leaked(kinds, outside):
    """What of the library's or another call's a function held: library fds
    by kind, pipe read ends that did not come from outside."""
    return [
        k
        for k in kinds
        if k in ("anon_inode:[timerfd]", "anon_inode:[pidfd]", "anon_inode:[eventpoll]")
        or (k.startswith("pipe-read ") and k.split(" ", 1)[1] not in outside)
    ]


def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


# --- item 1: nothing the child chose runs in the caller --------------------------


def nobody():
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        return None


def hostile_frame(marker):
    # GLOBAL os.system, MARK, STRING, TUPLE, REDUCE, STOP: pickle protocol 0
    return b"R" + b"cos\nsystem\n(S'touch " + marker.encode() + b"'\ntR."


def send_hostile_pickle(marker):
    write_frame_and_exit(hostile_frame(marker))


@pytest.mark.parametrize("trust", [False, True], ids=["defended", "control-trust_result"])
def test_a_hostile_pickle_from_a_function_run_as_nobody_runs_nothing_here(tmp_path, trust):
    if os.geteuid() != 0:
        pytest.skip("user= needs root")
    if nobody() is None:
        pytest.skip("no user 'nobody' on this host")
    os.chmod(str(tmp_path), 0o700)  # nobody cannot make the marker itself
    marker = str(tmp_path / "marker")
    lf = leash.limit(send_hostile_pickle, user="nobody", wall_time=30, trust_result=trust)
    if trust:
        # the control: without the defence, the caller (root) runs the
        # command the child chose
        assert lf(marker) == 0
        assert os.path.exists(marker), "the control did not run the attack: the test proves nothing"
    else:
        with pytest.raises(leash.ResultRefused) as e:
            lf(marker)
        assert e.value.what == "posix.system" or e.value.what == "os.system"
        assert "trust_result=True" in str(e.value) and e.value.report["reason"] == "ok"
        assert not os.path.exists(marker)


def plain_data():
    return {
        "none": None,
        "bools": (True, False),
        "ints": [0, -1, 1 << 200],
        "floats": [1.5, float("inf")],
        "complex": 3 - 4j,
        "text": "é",
        "bytes": b"\x00\xff",
        "bytearray": bytearray(b"ab"),
        "set": {1, 2},
        "frozenset": frozenset({"a"}),
        "nested": [[[(1,)]]],
        "shared": [[1]] * 3,
    }


def test_plain_data_comes_back_as_it_was():
    assert leash.limit(plain_data)() == plain_data()
    assert leash.limit(plain_data, context="spawn")() == plain_data()


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)


def a_point():
    return [Point(1, 2)]


def test_a_class_the_caller_names_comes_back_and_one_it_does_not_is_refused():
    assert leash.limit(a_point, result_types=(Point,))() == [Point(1, 2)]
    with pytest.raises(leash.ResultRefused) as e:
        leash.limit(a_point)()
    assert e.value.what == "test_result.Point"
    assert leash.limit(a_point, trust_result=True)() == [Point(1, 2)]


def an_array():
    import numpy

    return {"a": numpy.arange(12, dtype="<f4").reshape(3, 4), "s": numpy.zeros(2, dtype=[("x", "<i2"), ("y", "u1")])}


def forged_array(n):
    write_frame_and_exit(b"R" + pickle.dumps(_Forged(n), protocol=5))


class _Forged:
    """Pickles as a call of leash's array rebuilder with a shape that does
    not match the bytes."""

    def __init__(self, n):
        self.n = n

    def __reduce__(self):
        from leash import _result

        return (_result._ndarray, ("<f8", (self.n,), b"\0" * 8))


def test_numpy_arrays_come_back_through_leash_checked_rebuilder():
    numpy = pytest.importorskip("numpy")
    out = leash.limit(an_array, result_types=(numpy.ndarray,))()
    assert out["a"].dtype == numpy.dtype("<f4") and out["a"].shape == (3, 4) and out["a"][2, 3] == 11
    assert out["a"].flags.writeable and out["s"].dtype.names == ("x", "y")
    with pytest.raises(leash.ResultRefused) as e:
        leash.limit(an_array)()  # not named: numpy's own reducer is refused by name
    assert "numpy" in e.value.what
    with pytest.raises(leash.ResultRefused) as e:
        leash.limit(forged_array, result_types=(numpy.ndarray,))(1 << 40)
    assert "needs" in str(e.value)


def cyclic():
    x = []
    x.append(x)
    return x


def nested(depth):
    x = 0
    for _ in range(depth):
        x = [x]
    return x


def test_cycles_and_deep_nesting_are_refused():
    with pytest.raises(leash.ResultRefused) as e:
        leash.limit(cyclic)()
    assert e.value.what == "cycle"
    assert leash.limit(nested)(150) == nested(150)
    with pytest.raises(leash.ResultRefused) as e:
        leash.limit(nested)(300)
    assert e.value.what == "depth" and "200" in str(e.value)


def doubling(depth):
    """depth lists, each holding the next twice: a pickle of ~6 bytes per
    level (the memo shares them), 2**(depth + 1) items to a repr()."""
    x = []
    for _ in range(depth):
        x = [x, x]
    return x


def _expanded(x, seen=None):
    """The items x holds with each shared list counted every time (memoized)."""
    seen = {} if seen is None else seen
    if type(x) is not list:
        return 1
    if id(x) not in seen:
        seen[id(x)] = 1 + sum(_expanded(c, seen) for c in x)
    return seen[id(x)]


_REPR_OF_A_RESULT = r"""
import sys
sys.path.insert(0, sys.argv[1])
import leash
from test_result import doubling
leash.configure(cgroup_parent=sys.argv[2])
value = leash.limit(doubling, wall_time=60, trust_result=True)(40)
print("returned", flush=True)
repr(value)
print("repr done", flush=True)
"""


def test_a_result_whose_shared_containers_expand_without_end_is_refused():
    """Forty lists, each holding the next twice, are 254 bytes of pickle
    and 2**41 items to anything that walks them as a tree (repr(), ==,
    json.dumps). The control: returned with trust_result=True, the value
    arrives and its repr() has not ended 3 s later."""
    from leash import _result

    with pytest.raises(leash.ResultRefused) as e:
        leash.limit(doubling, wall_time=60)(40)
    assert e.value.what == "size" and str(1 << 26) in str(e.value)
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.Popen([sys.executable, "-c", _REPR_OF_A_RESULT, here, parent()], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "returned\n"  # the value arrived
        time.sleep(3)
        assert p.poll() is None, "the control's repr() ended: {}".format(p.stdout.read())
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
    # shared containers that stay within the bound come back: 2**21 items, a million references
    assert _expanded(leash.limit(doubling)(20)) == (1 << 21) - 1
    row = list(range(20))
    assert leash.limit(lambda: [row] * 1000000)() == [row] * 1000000
    # the count is exact: 2**26 - 1 items decode, 2**27 - 1 do not
    codec = _result.codec()
    assert _expanded(doubling(25)) == (1 << 26) - 1
    assert _expanded(codec.loads(pickle.dumps(doubling(25), protocol=5))) == (1 << 26) - 1
    with pytest.raises(leash.ResultRefused) as e:
        codec.loads(pickle.dumps(doubling(26), protocol=5))
    assert e.value.what == "size"


# --- leash's decoder (pickle-decode.c): what it builds, what it refuses ---------------

# the opcodes a protocol 2-5 pickler writes for plain data
_DATA_OPCODES = set(b"(.012NJKMGCBX]})ldt\x85\x86\x87aesu\x94qrhj") | {
    0x88, 0x89, 0x8A, 0x8B, 0x8E, 0x96, 0x8C, 0x8D, 0x8F, 0x90, 0x91, 0x80, 0x95
}
# the ones that reach the caller's table (GLOBAL, STACK_GLOBAL) or run its objects
_TABLE_OPCODES = set(b"c\x93R\x81\x92b")


def _codec():
    from leash import _result

    return _result.codec(False, ())


def test_the_decoder_builds_plain_data_and_nothing_that_names_a_callable():
    codec = _codec()
    for key, value in plain_data().items():
        assert codec.loads(pickle.dumps(value, protocol=5)) == value, key
    for value in (Point(1, 2), [Point(1, 2)], os.getpid):
        with pytest.raises(leash.ResultRefused):
            codec.loads(pickle.dumps(value, protocol=5))
    # any contiguous buffer is read
    assert codec.loads(bytearray(pickle.dumps(1))) == 1
    with pytest.raises(leash.ResultRefused) as e:
        codec.loads(memoryview(b"\x80\x05Nq\x05."))
    assert e.value.what == "memo"
    with pytest.raises(TypeError):
        codec.loads("not bytes")


def test_every_opcode_outside_plain_data_is_refused():
    codec = _codec()
    for op in range(256):
        data = b"\x80\x05" + bytes([op]) + b"."
        if op in _DATA_OPCODES:
            continue
        if op in _TABLE_OPCODES:  # an error of its own (a line or the stack missing)
            with pytest.raises(Exception):
                codec.loads(data)
            continue
        with pytest.raises(leash.ResultRefused):
            codec.loads(data)
    # protocol 0's text forms, a callable's opcodes, the out-of-band buffers
    for data in (b"I1\n.", b"S'x'\np0\n.", b"cposix\ngetpid\n)R.", b"\x80\x05\x97.", b"\x80\x05P1\n."):
        with pytest.raises(leash.ResultRefused):
            codec.loads(data)


def test_the_decoder_reads_lengths_as_the_unpickler_does():
    codec = _codec()
    # a string whose bytes spell a GLOBAL and a REDUCE is a string
    text = "cposix\nsystem\n(S'id'\ntR.\x93"
    assert codec.loads(pickle.dumps(text, protocol=5)) == text
    # STACK_GLOBAL after a string: seen, whatever the string held
    hidden = b"\x80\x05\x8c\x05posix\x8c\x06getpid\x93)R."
    assert pickle.loads(hidden) == os.getpid()  # control: plain pickle calls it
    with pytest.raises(leash.ResultRefused):
        codec.loads(hidden)
    # a length past the end, a length that would hide the opcode after it, no STOP
    for data in (b"\x80\x05\x8c\x09posix.", b"\x80\x05X\xff\xff\xff\xff\x93.", b"\x80\x05\x8e" + b"\xff" * 8 + b".",
                 b"\x80\x05K\x01"):
        with pytest.raises(pickle.UnpicklingError):
            codec.loads(data)
        with pytest.raises(Exception):
            pickle.loads(data)  # as pickle.loads fails on them
    # bytes after STOP are not read, as pickle.loads ignores them
    assert codec.loads(b"\x80\x05K\x01.\x93") == 1


def test_a_cycle_made_by_dup_or_the_memo_is_refused():
    codec = _codec()
    for data in (b"\x80\x05]2a.", b"\x80\x05]\x94h\x00a."):
        cycle = pickle.loads(data)  # control: plain pickle builds the list that holds itself
        assert cycle[0] is cycle
        with pytest.raises(leash.ResultRefused) as e:
            codec.loads(data)
        assert e.value.what == "cycle"


def _peak_bytes(decode, data):
    """(outcome, the peak of the memory Python allocated while decode(data)
    ran): tracemalloc sees the unpickler's memo array (PyMem)."""
    import tracemalloc

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        try:
            out = ("value", repr(decode(data))[:60])
        except Exception as e:
            out = ("raises", type(e).__name__)
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


class RestrictedUnpickler(pickle.Unpickler):
    """What leash decoded results with before its own decoder (issue 38):
    pickle's VM with find_class limited to builtins.complex. The control
    of the tests that show what that way let through."""

    def find_class(self, module, name):
        if (module, name) in (("builtins", "complex"), ("__builtin__", "complex")):  # protocol 2's name too
            return complex
        raise leash.ResultRefused("refused {}.{}".format(module, name), "{}.{}".format(module, name))

    def persistent_load(self, pid):
        raise leash.ResultRefused("a persistent id", "persistent id")


def _file_decoder(data):
    """The old checked decoder's way of reading (an io.BytesIO), with a
    find_class that builds nothing."""
    import io

    return RestrictedUnpickler(io.BytesIO(data)).load()


_HUGE_PUT = 1 << 20  # a memo index: the unpickler grows its memo to twice it, 16 MiB


def test_a_memo_written_out_of_order_is_refused_before_any_decoder_allocates():
    """A PUT whose index is past the PUTs before it makes CPython's
    unpickler allocate and zero twice the index in pointers (seven bytes
    with LONG_BINPUT 0x40000000: 16 GiB), plain data or not. The control:
    both of pickle's decoders allocate 16 MiB for a 9-byte pickle; leash's
    refuses it having allocated under 1 MiB."""
    codec = _codec()
    long_put = _memo_write(_HUGE_PUT, 1)
    forms = {
        "LONG_BINPUT, plain data": b"\x80\x05N" + long_put + b".",
        "LONG_BINPUT, checked way": b"\x80\x05\x8c\x08builtins\x8c\x07complex\x93" + long_put + b")R.",
        "text PUT": b"N" + _memo_write(_HUGE_PUT, 2) + b".",
        "BINPUT past the first": b"\x80\x02Nq\x00Nq\x02.",
    }
    for name, data in forms.items():
        huge = name != "BINPUT past the first"
        if huge:
            for decode in (pickle.loads, _file_decoder):  # the control
                if decode is pickle.loads and "checked" in name:
                    continue  # it would call complex(): harmless, but not the point
                _, peak = _peak_bytes(decode, data)
                assert peak > 16 << 20, (name, decode, peak)
        out, peak = _peak_bytes(codec.loads, data)
        assert out == ("raises", "ResultRefused") and peak < 1 << 20, (name, out, peak)
        with pytest.raises(leash.ResultRefused) as e:
            codec.loads(data)
        # protocol 0's text opcodes are not decoded at all (the child writes protocol 5)
        assert e.value.what == ("protocol 0" if name == "text PUT" else "memo"), name
        assert e.value.what in str(e.value)
        # the same pickle with its memo in order decodes
    assert codec.loads(b"\x80\x02Nq\x00Nq\x01.") is None
    # what every pickler writes, every binary protocol, shared objects through the memo
    shared = [[1, "a"]] * 3 + [{"k": (2.5, None)}] * 2
    for proto in range(1, 6):
        for dumps in (pickle.dumps, pickle._dumps):
            data = dumps(shared, protocol=proto)
            assert codec.loads(data) == shared


def _frame(body):
    return b"\x95" + len(body).to_bytes(8, "little") + body


def test_frames_the_two_decoders_read_differently_are_refused():
    """pickle.loads reads a frame as part of the bytes; the checked decoder
    reads a file and holds one frame at a time, so an opcode, a length or a
    line that runs over a frame's end is read from after the frame there.
    The control: the two decoders give different values for the same
    bytes, and one of them hides a LONG_BINPUT that the other runs."""
    codec = _codec()
    forms = {
        "a string across the frame's end": b"\x80\x05" + _frame(b"\x8c\x03ab") + b"c.N.",
        "a line across the frame's end": b"\x80\x05" + _frame(b"I1") + b"2\n.",
        "a frame inside a frame": b"\x80\x05" + _frame(_frame(b"K\x01") + b"K\x02") + b".",
        "a memo write hidden past the frame": b"\x80\x05" + _frame(b"N\x8c\x05abc") + b"de.xx"
        + _memo_write(_HUGE_PUT, 1) + b".",
    }
    differ = 0
    for name, data in forms.items():
        loads, file_ = _peak_bytes(pickle.loads, data), _peak_bytes(_file_decoder, data)
        differ += loads[0] != file_[0]
        if name.startswith("a memo write"):
            assert loads[0] == ("value", "'abcde'") and loads[1] < 1 << 20  # the bytes as one reads them
            assert file_[0] == ("value", "'de.xx'") and file_[1] > 16 << 20  # and the other: 16 MiB
        with pytest.raises(leash.ResultRefused) as e:
            codec.loads(data)
        # INT, a text opcode of protocol 0, is refused as soon as it is read
        assert e.value.what == ("protocol 0" if name == "a line across the frame's end" else "frame"), name
    assert differ >= 3  # the control: the decoders do part on these bytes
    # a line (GLOBAL's) across the frame's end
    with pytest.raises(leash.ResultRefused) as e:
        codec.loads(b"\x80\x02" + _frame(b"cbuiltins\ncomp") + b"lex\n)R.")
    assert e.value.what == "frame"
    # frames as picklers write them: several, and a large bytes object written outside them
    value = [b"x" * 300000, list(range(20000)), "y" * 70000]
    data = pickle.dumps(value, protocol=5)
    assert data.count(b"\x95") >= 2 and codec.loads(data) == value


def _sink(*args, **kwargs):
    return None


class _BuildsNothing(pickle.Unpickler):
    """Runs every opcode a pickle has, as far as it can: each callable it
    names is _sink."""

    def find_class(self, module, name):
        return _sink

    def persistent_load(self, pid):
        return None


def _memo_and_marks(data):
    """The bytes the file decoder's own arrays (its memo and its marks:
    Unpickler.__sizeof__) hold once it has read data as far as it could."""
    import io

    u = _BuildsNothing(io.BytesIO(data))
    try:
        u.load()
    except Exception:
        pass
    return u.__sizeof__()


def _largest_memo_write(data):
    """(the largest index of a memo write in data as pickletools reads it,
    up to where it stops; whether it reads every opcode, each argument
    whole, up to STOP)."""
    import pickletools
    import warnings

    largest = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a mutated STRING's escapes
        try:
            for op, arg, _ in pickletools.genops(data):
                if op.name in ("PUT", "BINPUT", "LONG_BINPUT"):
                    largest = max(largest, arg)
        except Exception:
            return largest, False
    return largest, True


def _unframed(data):
    """data without its frame (pickles of protocol 4 and 5 this small have
    one, right after PROTO; a frame is optional), so that bytes can be
    spliced in at any opcode's place."""
    return data[:2] + data[11:] if data[2:3] == b"\x95" else data


def _memo_write(idx, form):
    """BINPUT (form 0, idx < 256), LONG_BINPUT (1) or PUT (2) of index idx."""
    if form == 0:
        return b"q" + bytes([idx])
    return b"r" + idx.to_bytes(4, "little") if form == 1 else b"p" + str(idx).encode() + b"\n"


def test_no_pickle_makes_the_decoder_allocate_beyond_its_bound():
    """Differential, on memory: 6,000 pickles, each with a memo write
    (BINPUT, LONG_BINPUT or PUT, after a None of its own) spliced in
    between two opcodes, its index in order, a little past it, or 2**18 to
    2**20, and then half of them mutated at random. leash's decoder reads
    each: what it allocates (tracemalloc's peak) stays within its bound,
    160 bytes per byte of pickle and 1 MiB, refused or not, and every
    unmutated one with a large index is refused. The control: those, read
    by pickle's file decoder (every callable it names a no-op, so that
    every opcode runs), make its memo and marks grow past 32 bytes per byte
    of the pickle and 4 KiB (Unpickler.__sizeof__)."""
    import pickletools
    import random

    codec = _codec()
    seeds = [_unframed(pickle.dumps(v, protocol=p)) for v in plain_data().values() for p in (0, 2, 4, 5)]
    seeds += [_unframed(pickle.dumps(v, protocol=5)) for v in (Point(1, 2), [[1]] * 3, nested(5))]
    rng = random.Random(2411)

    def spliced():
        seed = rng.choice(seeds)
        ops = list(pickletools.genops(seed))
        k = rng.randrange(1, len(ops))  # before the k-th opcode (the last is STOP)
        puts = sum(op.name in ("PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE") for op, _, _ in ops[:k])
        how = rng.randrange(3)
        idx = (puts, puts + rng.randint(1, 64), rng.randrange(1 << 18, 1 << 20))[how]
        form = rng.randrange(3) if idx < 256 else rng.randrange(1, 3)
        pos = ops[k][2]
        return seed[:pos] + b"N" + _memo_write(idx, form) + b"0" + seed[pos:], how == 2

    over = decoded = 0
    controls = []
    for _ in range(6000):
        data, large = spliced()
        mutated = rng.randrange(2)
        if mutated:
            data = bytearray(data)
            for _ in range(rng.randint(1, 3)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            data = bytes(data)
        out, peak = _peak_bytes(codec.loads, data)
        over += peak > 160 * len(data) + (1 << 20)
        decoded += out[0] == "value"
        if large and not mutated:
            assert out == ("raises", "ResultRefused"), (data, out)
            controls.append(data)
    assert over == 0 and decoded > 400, (over, decoded)
    refused_over = sum(_memo_and_marks(data) > 32 * len(data) + 4096 for data in controls if _largest_memo_write(data)[1])
    assert len(controls) > 500 and refused_over > 0.9 * len(controls), (len(controls), refused_over)


def _decoded(loads, data):
    try:
        return ("value", repr(loads(data)))
    except Exception as e:
        return ("raises", type(e).__name__)


def test_mutated_pickles_decode_as_the_checked_unpickler_decodes_them():
    """Differential: 20,000 pickles mutated at random (bytes flipped,
    inserted, cut, opcodes of callables spliced in): the codec (leash's decoder, pickle-decode.c) must
    give what the checked unpickler gives: the same value, or an error (of
    any type: leash refuses some bytes pickle builds, a container added to
    after it was placed inside another, and names the errors of others
    its own way)."""
    import io
    import random

    codec = _codec()

    def checked(data):
        return RestrictedUnpickler(io.BytesIO(data)).load()

    seeds = [pickle.dumps(v, protocol=p) for v in plain_data().values() for p in (2, 4, 5)]
    seeds += [pickle.dumps(v, protocol=5) for v in (Point(1, 2), os.getpid, [[1]] * 3, nested(5))]
    rng = random.Random(24)
    passed = 0
    for _ in range(20000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(data) + 1)
            how = rng.randrange(4)
            if how == 0 and i < len(data):
                data[i] = rng.randrange(256)
            elif how == 1:
                data[i:i] = bytes([rng.choice(b"c\x93iobR\x81\x92\x82PQ\x97")])
            elif how == 2:
                del data[i : i + rng.randint(1, 8)]
            else:
                data[i:i] = rng.choice(seeds)[2:12]
        data = bytes(data)
        got = _decoded(codec.loads, data)
        largest, whole = _largest_memo_write(data)
        if not whole or largest > len(data):
            # a length past the end, an opcode no protocol has, a memo index
            # past any PUT before it: leash's decoder refuses it; CPython's
            # unpickler would ask malloc for that length, or twice that
            # index, before it reads (an ASan build aborts there)
            assert got[0] == "raises", (data, got)
            continue
        want = _decoded(checked, data)
        if got[0] == "value" or got[1] != "ResultRefused":
            assert got[0] == want[0] and (got[0] == "raises" or got == want), (data, got, want)
        passed += got[0] == "value"
    assert passed > 500  # many mutations still decode (926 with this seed)


class NamedError(Exception):
    pass


def raise_named():
    raise NamedError("named", 7)


def raise_builtin():
    raise KeyError("k")


def test_exceptions_travel_as_data():
    with pytest.raises(KeyError) as e:
        leash.limit(raise_builtin)()
    assert e.value.args == ("k",) and "in raise_builtin" in e.value.child_traceback
    with pytest.raises(NamedError) as e:  # loaded here: rebuilt as data (test_exceptions.py)
        leash.limit(raise_named)()
    assert e.value.args == ("named", 7) and "in raise_named" in str(e.value.__cause__)
    with pytest.raises(NamedError) as e:
        leash.limit(raise_named, result_types=(NamedError,))()
    assert e.value.args == ("named", 7)
    with pytest.raises(NamedError):
        leash.limit(raise_named, trust_result=True)()


def hostile_error_frame(marker):
    write_frame_and_exit(b"E" + hostile_frame(marker)[1:])


def test_a_hostile_error_frame_runs_nothing_here(tmp_path):
    marker = str(tmp_path / "marker")
    with pytest.raises(leash.ResultRefused):
        leash.limit(hostile_error_frame)(marker)
    assert not os.path.exists(marker)


def test_bad_options_of_the_channel_are_refused():
    with pytest.raises(ValueError, match="max_result"):
        leash.limit(plain_data, max_result="lots")
    with pytest.raises(ValueError, match="result_types"):
        leash.limit(plain_data, trust_result=True, result_types=(Point,))
    with pytest.raises(TypeError, match="not a class"):
        leash.limit(plain_data, result_types=(1,))


# --- item 5: the result's size is capped ----------------------------------------


def big(n):
    return b"x" * n


def test_a_result_past_max_result_is_refused_naming_the_cap():
    with pytest.raises(leash.ResultTooLarge) as e:
        leash.limit(big, max_result="1M")(2 << 20)
    assert e.value.limit == 1 << 20 and "1048576 bytes" in str(e.value)
    assert len(leash.limit(big, max_result="3M")(2 << 20)) == 2 << 20


_RSS_SCRIPT = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import leash
from test_result import endless_stream, finite_stream, send_memo_bomb
leash.configure(cgroup_parent=sys.argv[2])
kind = sys.argv[3]
def peak_kib():
    # VmHWM, the peak RSS of this process's memory: getrusage's ru_maxrss
    # starts from the parent's at fork (a test process's hundreds of MiB)
    with open("/proc/self/status") as f:
        return int([l.split()[1] for l in f if l.startswith("VmHWM:")][0])
before = peak_kib()
try:
    if kind == "endless":
        leash.limit(endless_stream, memory="64M", wall_time=60)()
    elif kind.startswith("memo"):
        leash.limit(send_memo_bomb, wall_time=60, trust_result=kind == "memo-trusted")()
    else:
        leash.limit(finite_stream, max_result="1G", wall_time=60)(200 << 20)
    out = "returned"
except leash.ResultTooLarge as e:
    out = "too large: {}".format(e.limit)
except Exception as e:
    out = "{}: {}".format(type(e).__name__, e)
print(json.dumps({"out": out, "growth_mib": (peak_kib() - before) / 1024}))
"""


def endless_stream():
    fd = result_fd()
    chunk = b"x" * (1 << 20)
    os.write(fd, b"R")
    while True:
        os.write(fd, chunk)


def finite_stream(n):
    fd = result_fd()
    chunk = b"x" * (1 << 20)
    os.write(fd, b"R")
    for _ in range(n >> 20):
        os.write(fd, chunk)
    os._exit(0)


def send_memo_bomb():
    """None, LONG_BINPUT 0x02000000: the unpickler grows its memo to twice
    that, 512 MiB."""
    write_frame_and_exit(b"R\x80\x05Nr\x00\x00\x00\x02.")


def _rss_run(kind):
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, here, parent(), kind], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_an_endless_result_leaves_the_caller_bounded():
    skip_rlimit_as_under_asan()  # the function is limited to 64M
    got = _rss_run("endless")
    # the default cap of a 64M-limited function is its memory limit
    assert got["out"] == "too large: {}".format(64 << 20), got
    assert got["growth_mib"] < 100, got
    # the control: the same measurement sees a caller that does keep 200 MiB
    control = _rss_run("finite")
    assert control["out"].startswith(("JobExited", "ResultRefused")) or control["out"] == "returned" or (
        "unpickled" in control["out"]
    )
    assert control["growth_mib"] > 150, control  # 400 MiB kept: 200 read, 200 copied


def test_a_result_that_makes_the_decoder_grow_its_memo_is_refused_and_costs_nothing():
    """Ten bytes sent back ask the caller's unpickler for a 512 MiB memo.
    The control: with trust_result=True (pickle.loads) the caller's peak
    memory does grow by that much."""
    got = _rss_run("memo")
    assert got["out"].startswith("ResultRefused") and "memo" in got["out"], got
    assert got["growth_mib"] < 64, got
    control = _rss_run("memo-trusted")
    assert control["out"] == "returned", control
    assert control["growth_mib"] > 400, control


# --- item 2: nothing of the library reaches the function ------------------------


def disarm_then_spin(path):
    with open(path, "w") as f:
        json.dump({"kinds": sorted(set(fd_kinds().values())), "worked": attack_held_fds()}, f)
    spin(5)
    return "spun 5 s"


def test_the_function_cannot_reach_its_own_deadline_or_any_library_fd(tmp_path):
    path = str(tmp_path / "seen.json")
    lf = leash.limit(disarm_then_spin, cpu_time=1, wall_time=2, grace=1)
    outside = outside_pipes()
    with pytest.raises(leash.LimitExceeded) as e:
        lf(path)
    with open(path) as f:
        seen = json.load(f)
    assert seen["worked"] == [], seen
    assert leaked(seen["kinds"], outside) == [], seen
    assert e.value.report["usage"]["cpu_time_s"] < 4.5, e.value.report["usage"]


# --- item 4: threads calling at once --------------------------------------------


def snoop(i, start, outside):
    """Reads every pipe read end it inherited (one blocking reader thread
    each, so that it races the caller for another call's result) while the
    other calls end, then returns its own secret and what it stole."""
    stolen = []
    kinds = fd_kinds()
    readers = [fd for fd, k in kinds.items() if k.startswith("pipe-read ") and k.split(" ", 1)[1] not in outside]

    def read(fd):
        try:
            os.set_blocking(fd, True)
            while True:
                data = os.read(fd, 1 << 16)
                if not data:
                    return
                stolen.append(data)
        except OSError:
            return

    for fd in readers:
        threading.Thread(target=read, args=(fd,), daemon=True).start()
    worked = attack_held_fds()
    time.sleep(max(0.0, start + 2.5 - time.time()))
    return {
        "i": i,
        "secret": "api_key-{}".format(i),
        "stolen": b"".join(stolen).count(b"api_key-"),
        "kinds": sorted(set(kinds.values())),
        "worked": worked,
    }


@pytest.mark.parametrize("contexts", [("fork",), ("fork", "spawn")], ids=["fork", "fork-and-spawn"])
def test_eight_threads_calling_at_once_share_nothing(contexts):
    # with spawn beside fork: the forked children must not get the spawn
    # calls' pipes either (the call's data going in, its result coming out)
    lfs = [leash.limit(snoop, wall_time=30, context=c) for c in contexts]
    results, errors = {}, []
    outside = outside_pipes()
    start = time.time()

    def call(i):
        time.sleep(0.1 * i)
        try:
            results[i] = lfs[i % len(lfs)](i, start, outside)
        except Exception as e:  # a stolen result: the call has none
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i in range(8):
        r = results[i]
        assert r["secret"] == "api_key-{}".format(i)
        assert r["stolen"] == 0 and r["worked"] == [] and leaked(r["kinds"], outside) == [], r


# --- item 6: a pipe held from outside the job cannot hold the caller -----------

_HOLDER = r"""
import array, os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(1)
print("ready", flush=True)
c, _ = s.accept()
msg, anc, _, _ = c.recvmsg(1, socket.CMSG_SPACE(4))
time.sleep(float(sys.argv[2]))
"""


def hand_the_pipe_out(path, then_sleep):
    fd = result_fd()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    s.close()
    time.sleep(then_sleep)
    return 42


class _Holder:
    """A process outside the job that keeps what it is sent for a while."""

    def __init__(self, tmp_path, hold):
        # a socket's path holds 107 bytes at most: tmp_path in a package
        # build (deep below a 0700 directory) is longer
        self.dir = tempfile.mkdtemp(prefix="lh-", dir="/tmp")
        self.path = os.path.join(self.dir, "holder.sock")
        self.proc = subprocess.Popen([sys.executable, "-c", _HOLDER, self.path, str(hold)], stdout=subprocess.PIPE)
        assert self.proc.stdout.readline().strip() == b"ready"

    def close(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def test_a_pipe_held_outside_the_job_neither_blocks_nor_freezes_the_caller(tmp_path):
    holder = _Holder(tmp_path, 30)
    ticks = [time.monotonic()]
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        t0 = time.monotonic()
        assert leash.limit(hand_the_pipe_out, wall_time=2, grace=1)(holder.path, 0) == 42
        elapsed = time.monotonic() - t0
    finally:
        stop.set()
        t.join()
        holder.close()
    # the holder keeps the pipe 30 s: the call did not wait for it ...
    assert elapsed < 15, elapsed
    # ... and the other thread ran all along (the old code read with the GIL held)
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert max(gaps) < 10, max(gaps)


def test_ctrl_c_ends_a_call_whose_pipe_is_held_outside(tmp_path):
    holder = _Holder(tmp_path, 30)
    try:
        with interrupted(after=1, within=10):
            leash.limit(hand_the_pipe_out, wall_time=20, grace=1)(holder.path, 60)
    finally:
        holder.close()
