# SPDX-License-Identifier: LGPL-2.1-or-later
"""The result channel: the one way bytes written by a function's process
become objects in the caller.

Theory of operation. The function's process may be hostile (it runs as
``user=``, under seccomp, on untrusted input): whatever it writes to the
result pipe is the attacker's. ``pickle.loads`` on those bytes runs any
callable the bytes name (``os.system``), so by default the caller decodes
them with ``SafeCodec``: a ``pickle.Unpickler`` whose ``find_class`` (the
only way a pickle reaches a callable: GLOBAL, STACK_GLOBAL, INST, OBJ and
the copyreg extension codes all go through it) admits a fixed table:
``builtins.complex`` (the plain types None, bool, int, float, str, bytes,
bytearray, list, tuple, dict, set and frozenset have opcodes of their own
and need no callable), the classes the caller named in ``result_types``,
and leash's own checked rebuilders (a numpy array from dtype, shape and raw
bytes; never numpy's own reducer). Anything else is refused by name
(``ResultRefused``), before any of it runs. A pickle whose opcodes only
build plain data (read opcode by opcode in C, python/src/pickle-scan.c)
never reaches find_class, so ``pickle.loads`` decodes it, without a
restricted unpickler to make. The containers built are then
walked once for depth, cycles and size (``MAX_DEPTH``, ``MAX_ITEMS``: a
shared container counted each time it appears), so that a hostile nesting
cannot make the caller's repr() or comparison overflow or never end.

The same scan reads every pickle, plain or not, before any decoder does,
and refuses the two it cannot vouch for: a memo written out of order
(CPython's unpickler grows its memo array to twice the index a PUT names,
so seven bytes can make the caller touch 16 GiB; every pickler writes the
memo in order), and frames the checked decoder (reading a file) would read
differently from the scan (an opcode across a frame's end, a frame inside
a frame; no pickler writes either).

An exception travels as data: its type's module and qualified name, its
args when they are plain data, its str() and the traceback text. It is
rebuilt only for a builtin exception type or a type the caller named, by
calling that type with the decoded args; anything else becomes a
``RemoteError`` carrying the name and the text.

``TrustedCodec`` (``trust_result=True``) is plain pickle both ways: for a
function the caller trusts (its own code, no ``user=``, no untrusted input).
"""

import builtins
import io
import itertools
import pickle

from . import _errors

try:
    from ._leash import pickle_decode as _pickle_decode
except ImportError:  # pragma: no cover - the extension is reported missing where it is used
    _pickle_decode = None

TAG_RESULT = b"R"
TAG_ERROR = b"E"
PROTOCOL = pickle.HIGHEST_PROTOCOL

#: The deepest nesting of containers a decoded result may have.
MAX_DEPTH = 200

#: The most items a decoded result may hold, a shared container counted each
#: time it appears (2**26: a repr() of that many takes tens of seconds).
MAX_ITEMS = 1 << 26

_CONTAINERS = frozenset((list, tuple, dict, set, frozenset))
_EXC_MARK = "leash-exception-1"
_PLAIN_GLOBALS = {("builtins", "complex"): complex}


# --- numpy arrays: leash's own encoding, checked where it is decoded ---------


def _ndarray_reduce(a):
    """The child's side: (leash._result._ndarray, (dtype, shape, bytes))."""
    if a.dtype.hasobject:
        raise pickle.PicklingError("leash: a numpy array of objects is not a result the caller decodes")
    dtype = a.dtype.descr if a.dtype.fields else a.dtype.str
    return _ndarray, (dtype, tuple(a.shape), a.tobytes(order="C"))


def _ndarray(dtype, shape, raw):
    """The caller's side: a numpy array from a dtype given as a string (or a
    structured dtype as a list of (name, string) pairs), a shape of
    non-negative ints, and exactly its bytes; a copy, writable."""
    import numpy

    def plain_descr(d):
        return isinstance(d, str) or (
            isinstance(d, list)
            and all(isinstance(f, tuple) and len(f) == 2 and all(isinstance(x, str) for x in f) for f in d)
        )

    if not plain_descr(dtype):
        raise _errors.ResultRefused("leash: a numpy array's dtype must be a type string, not {!r}".format(dtype))
    dt = numpy.dtype(dtype)
    if dt.hasobject:
        raise _errors.ResultRefused("leash: a numpy array of objects is not decoded")
    if not isinstance(shape, tuple) or not all(type(n) is int and n >= 0 for n in shape):
        raise _errors.ResultRefused("leash: a numpy array's shape must be a tuple of sizes, not {!r}".format(shape))
    if type(raw) is not bytes:
        raise _errors.ResultRefused("leash: a numpy array's data must be bytes")
    count = 1
    for n in shape:
        count *= n
    if count * dt.itemsize != len(raw):
        raise _errors.ResultRefused(
            "leash: a numpy array of shape {} and dtype {} needs {} bytes, not {}".format(
                shape, dt, count * dt.itemsize, len(raw)
            )
        )
    return numpy.frombuffer(raw, dtype=dt).reshape(shape).copy()


_ndarray.__module__ = __name__
_ndarray.__qualname__ = "_ndarray"


def _named(cls):
    """(module, qualname) of a class, as a pickle names it."""
    return (cls.__module__, cls.__qualname__)


class _Unpickler(pickle.Unpickler):
    """pickle's VM with find_class limited to a table, ``_allowed``: a class
    attribute of a subclass per codec (no __init__ of its own: a result
    decodes without a Python-level frame more than pickle.loads)."""

    _allowed = _PLAIN_GLOBALS

    def find_class(self, module, name):
        try:
            return self._allowed[(module, name)]
        except (KeyError, TypeError):
            raise _errors.ResultRefused(
                "leash: the function's result refers to {}.{}, which the caller does not decode: name the "
                "type in result_types= or, for a function you trust, pass trust_result=True".format(module, name),
                "{}.{}".format(module, name),
            ) from None

    def persistent_load(self, pid):
        raise _errors.ResultRefused("leash: the function's result holds a persistent id", "persistent id")


def _children(o):
    return itertools.chain(o.keys(), o.values()) if type(o) is dict else o


def _has_container(o):
    return not _CONTAINERS.isdisjoint(map(type, _children(o)))


def _items(o):
    return 2 * len(o) if type(o) is dict else len(o)


def check_depth(root, limit=MAX_DEPTH, max_items=MAX_ITEMS):
    """Refuses (ResultRefused) a result whose containers nest deeper than
    limit or hold themselves, or hold more than max_items items when each
    shared container is counted every time it appears (the size a repr()
    or a comparison walks: 30 lists, each holding the next twice, are 2**30
    items). Each container is visited once (a shared one counts by its
    height and size), a flat one without a Python-level loop."""
    if type(root) not in _CONTAINERS or not _has_container(root):
        return
    done = {}  # id -> (height, size) of a container done (every one lives in the result)
    active = {id(root)}
    stack = [[root, iter(_children(root)), 1, 1 + _items(root)]]  # container, its children, height, size so far
    while stack:
        top = stack[-1]
        for c in top[1]:
            if type(c) not in _CONTAINERS:
                continue
            k = id(c)
            if k in active:
                raise _errors.ResultRefused("leash: the function's result holds itself (a cycle)", "cycle")
            hs = done.get(k)
            if hs is None:
                if _has_container(c):
                    if len(stack) >= limit:
                        raise _too_deep(limit)
                    active.add(k)
                    stack.append([c, iter(_children(c)), 1, 1 + _items(c)])
                    break
                hs = done[k] = (1, 1 + _items(c))
            if len(stack) + hs[0] > limit:
                raise _too_deep(limit)
            top[2] = max(top[2], hs[0] + 1)
            top[3] += hs[1] - 1
        else:
            stack.pop()
            active.discard(id(top[0]))
            if top[3] > max_items:
                raise _too_many(max_items)
            done[id(top[0])] = (top[2], top[3])
            if stack:
                stack[-1][2] = max(stack[-1][2], top[2] + 1)
                stack[-1][3] += top[3] - 1


def _too_many(max_items):
    return _errors.ResultRefused(
        "leash: the function's result holds more than {} items when its shared containers are counted each "
        "time they appear (a repr() or comparison of it would not end)".format(max_items), "size"
    )


def _bad_memo():
    return _errors.ResultRefused(
        "leash: the function's result writes the unpickler's memo out of order (an index past the objects "
        "stored before it), which makes the decoder allocate twice that index for nothing", "memo"
    )


def _bad_frame():
    return _errors.ResultRefused(
        "leash: the function's result has an opcode across a frame's end or a frame inside a frame, which "
        "decoders read differently", "frame"
    )


#: pickle-scan.h's negative kinds: the pickle is refused before any decoder reads it.
_REFUSED_BY_SCAN = {-2: _bad_memo, -1: _bad_frame}


def _too_deep(limit):
    return _errors.ResultRefused("leash: the function's result nests containers deeper than {}".format(limit), "depth")


class SafeCodec:
    """The default codec: plain data, and the types the caller names.

    ``result_types``: classes the caller allows in a result, rebuilt the way
    pickle rebuilds them (their own ``__new__``/``__setstate__``/``__init__``:
    the caller vouches for them); ``numpy.ndarray`` is carried as dtype,
    shape and bytes and rebuilt by leash, checked. Exception classes named
    here are re-raised as themselves."""

    trusted = False

    def __init__(self, result_types=()):
        types = tuple(result_types or ())
        for t in types:
            if not isinstance(t, type):
                raise TypeError("leash: result_types: {!r} is not a class".format(t))
        self.result_types = types
        self._allowed = None
        self._dispatch = None
        self._unpickler = None

    def __reduce__(self):
        return (SafeCodec, (self.result_types,))

    def _tables(self):
        if self._allowed is None:
            allowed = dict(_PLAIN_GLOBALS)
            dispatch = {}
            for t in self.result_types:
                if _named(t) == ("numpy", "ndarray"):
                    allowed[(__name__, "_ndarray")] = _ndarray
                    dispatch[t] = _ndarray_reduce
                else:
                    allowed[_named(t)] = t
            self._dispatch = dispatch
            self._unpickler = type("_Unpickler", (_Unpickler,), {"_allowed": allowed}) if len(allowed) > 1 else _Unpickler
            self._allowed = allowed
        return self._allowed

    # the child's side
    def dumps(self, value, protocol=PROTOCOL):
        self._tables()
        if not self._dispatch:
            return pickle.dumps(value, protocol=protocol)
        f = io.BytesIO()
        p = pickle.Pickler(f, protocol=protocol)
        p.dispatch_table = dict(self._dispatch)
        p.dump(value)
        return f.getvalue()

    def error_frame(self, exc, tb_text):
        """The E frame: the exception as data."""
        t = type(exc)
        try:
            text = str(exc)
        except BaseException:
            text = "<str() failed>"
        args = exc.args if isinstance(getattr(exc, "args", None), tuple) else ()
        try:
            self.loads(self.dumps(args))
        except BaseException:
            args = None  # not plain data: the name and the text travel
        data = (_EXC_MARK, t.__module__, t.__qualname__, args, text, tb_text)
        try:
            return TAG_ERROR + pickle.dumps(data, protocol=PROTOCOL)
        except BaseException:
            return TAG_ERROR + pickle.dumps(data[:3] + (None,) + data[4:], protocol=PROTOCOL)

    # the caller's side
    def loads(self, data):
        """The value of the function's pickle, built by leash's own decoder
        (python/src/pickle-decode.c): plain data from its opcodes, anything
        else only through the table; refused (ResultRefused) before any
        object past its bounds is made: nesting deeper than MAX_DEPTH, more
        than MAX_ITEMS items, more caller memory or decoding work than a
        bound per byte of pickle, colliding keys, the memo out of order,
        frames decoders read differently, an opcode it does not decode."""
        if _pickle_decode is None:
            raise _errors.ResultRefused("leash: leash._leash, which decodes a result, is missing: no result is "
                                        "decoded without it", "no decoder")
        return _pickle_decode(data, self._allowed if self._allowed is not None else self._tables())

    def exception(self, obj):
        """(exception, traceback text) from a decoded E payload."""
        if not (isinstance(obj, tuple) and len(obj) == 6 and obj[0] == _EXC_MARK):
            raise _errors.ResultRefused("leash: the function's error frame is not leash's", "error frame")
        _, module, qualname, args, text, tb_text = obj
        if not all(isinstance(x, str) for x in (module, qualname, text, tb_text)):
            raise _errors.ResultRefused("leash: the function's error frame is not leash's", "error frame")
        cls = self._exception_class(module, qualname)
        if cls is not None and isinstance(args, tuple):
            try:
                exc = cls(*args)
                if isinstance(exc, BaseException):
                    return exc, tb_text
            except Exception:
                pass
        return _errors.RemoteError(module, qualname, args, text), tb_text

    def _exception_class(self, module, qualname):
        if module == "builtins":
            cls = getattr(builtins, qualname, None)
        else:
            cls = self._tables().get((module, qualname))
        return cls if isinstance(cls, type) and issubclass(cls, BaseException) else None


class TrustedCodec:
    """trust_result=True: pickle both ways, as for the caller's own objects."""

    trusted = True
    result_types = ()

    def __reduce__(self):
        return (TrustedCodec, ())

    dumps = staticmethod(pickle.dumps)
    loads = staticmethod(pickle.loads)

    def error_frame(self, exc, tb_text):
        return exception_frame(exc, tb_text)

    def exception(self, obj):
        exc, tb_text = obj
        return exc, tb_text


class _UnpicklableError(Exception):
    """Stands in for an exception raised in the child that pickle could not
    carry back: its type's qualified name, its str() and args' reprs."""


def exception_frame(exc, tb_text):
    """The trusted E frame for exc: the exception itself when it pickles (and
    unpickles: some exceptions pickle but cannot be rebuilt), else a
    stand-in with its type name and message."""
    try:
        payload = pickle.dumps((exc, tb_text), protocol=PROTOCOL)
        pickle.loads(payload)
        return TAG_ERROR + payload
    except BaseException:
        pass
    name = "{}.{}".format(type(exc).__module__, type(exc).__qualname__)
    try:
        text = str(exc)
    except BaseException:
        text = "<str() failed>"
    stand_in = _UnpicklableError("{}: {}".format(name, text))
    stand_in.type_name = name
    return TAG_ERROR + pickle.dumps((stand_in, tb_text), protocol=PROTOCOL)


_SAFE = SafeCodec()
_TRUSTED = TrustedCodec()


def codec(trust_result=False, result_types=()):
    """The codec for a function's options (shared when there is nothing to
    name: most calls make no object for it)."""
    if trust_result:
        if result_types:
            raise ValueError("leash: result_types= names what an untrusted result may hold; with "
                             "trust_result=True everything is unpickled")
        return _TRUSTED
    return SafeCodec(result_types) if result_types else _SAFE
