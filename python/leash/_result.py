# SPDX-License-Identifier: LGPL-2.1-or-later
"""The result channel: the one way bytes written by a function's process
become objects in the caller.

Theory of operation. The function's process may be hostile (it runs as
``user=``, under seccomp, on untrusted input): whatever it writes to the
result pipe is the attacker's. ``pickle.loads`` on those bytes runs any
callable the bytes name (``os.system``); and even a pickle of plain data
asks it for unbounded work and memory: a set of ints that all hash 0 is
quadratic to build, a tuple nested 150,000 deep inside a set is hashed by
a recursion without a guard (SIGSEGV), one EMPTY_SET byte is a 216-byte
set (issue 38). So by default the caller decodes the bytes with
``SafeCodec``: leash's own decoder (python/src/pickle-decode.c), which
builds the plain types (None, bool, int, float, str, bytes, bytearray,
list, tuple, dict, set, frozenset) from their opcodes and reaches a
callable only through a fixed table: ``builtins.complex``, the classes
the caller named in ``result_types``, and leash's own checked rebuilders
(a numpy array from dtype, shape and raw bytes; never numpy's own
reducer). Anything else is refused by name (``ResultRefused``), before any
of it runs, and so is, before it is built, whatever passes the decoder's
bounds: nesting deeper than ``MAX_DEPTH`` (tracked per container as it is
built, so a tuple that would be hashed is refused like one in a list), a
cycle, more than ``MAX_ITEMS`` items when each shared container is counted
every time it appears (a repr() or comparison of it would not end), more
caller memory or decoding work than a bound per byte of pickle, more than
a few keys with one hash in one set or dict, a memo written out of order
(seven bytes could make CPython's unpickler touch 16 GiB), frames decoders
read differently, copyreg's extension codes (they read copyreg's cache
without the table) and protocol 0's text opcodes (the child writes
protocol 5). The caller decodes once the job has ended and been finished
(python/src/_leash.c), never while it is supervised.

An exception travels as data: its type's module and qualified name, its
args when they are plain data, its str(), the traceback text, and its plain
attributes (the instance's ``__dict__`` entries whose names are not dunder
and whose values are plain data). Only an ``Exception`` comes back as
itself (a ``BaseException`` that is not one, such as ``SystemExit`` or
``KeyboardInterrupt``, would end the caller past its ``except Exception``:
it becomes a ``RemoteError``): a builtin type or a type the caller named is
called with the decoded args; any other class the caller has loaded already
is found without importing or running anything (``sys.modules``, then the
module's and classes' own dicts, never getattr), made by its builtin base's
``__new__`` (neither its own ``__new__`` nor its ``__init__`` runs), its
args and attributes written as data (into the instance's dict, never
through ``__setattr__``, and never a name the class defines as a data
descriptor); a class that overrides ``__class__`` or has a ``__del__`` is
not. Anything else becomes a ``RemoteError`` carrying the name and the
text.

``TrustedCodec`` (``trust_result=True``) is plain pickle both ways: for a
function the caller trusts (its own code, no ``user=``, no untrusted input).
"""

import builtins
import io
import itertools
import pickle
import sys
import types

from . import _errors

try:
    from ._leash import pickle_decode as _pickle_decode
except ImportError:  # pragma: no cover - the extension is reported missing where it is used
    _pickle_decode = None

TAG_RESULT = b"R"
TAG_ERROR = b"E"
PROTOCOL = pickle.HIGHEST_PROTOCOL

#: The deepest nesting of containers a decoded result may have
#: (pickle-decode.h's PICKLE_MAX_DEPTH).
MAX_DEPTH = 200

#: The most items a decoded result may hold, a shared container counted each
#: time it appears (2**26: a repr() of that many takes tens of seconds;
#: PICKLE_MAX_ITEMS).
MAX_ITEMS = 1 << 26

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
        """The E frame: the exception as data (mark, module, qualname, args,
        text, traceback text, plain attributes; a caller of an older leash
        reads the first six)."""
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
        data = (_EXC_MARK, t.__module__, t.__qualname__, args, text, tb_text, _plain_attrs(exc))
        try:
            return TAG_ERROR + pickle.dumps(data, protocol=PROTOCOL)
        except BaseException:
            return TAG_ERROR + pickle.dumps(data[:3] + (None,) + data[4:6] + ({},), protocol=PROTOCOL)

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
        """(exception, traceback text) from a decoded E payload (see the
        module's docstring for what comes back as itself)."""
        if not (type(obj) is tuple and len(obj) in (6, 7) and obj[0] == _EXC_MARK):
            raise _errors.ResultRefused("leash: the function's error frame is not leash's", "error frame")
        module, qualname, args, text, tb_text = obj[1:6]
        attrs = obj[6] if len(obj) == 7 else {}
        if not all(type(x) is str for x in (module, qualname, text, tb_text)) or type(attrs) is not dict:
            raise _errors.ResultRefused("leash: the function's error frame is not leash's", "error frame")
        exc = None
        if type(args) is tuple:
            exc = self._rebuilt(module, qualname, args)
        if exc is None:
            return _errors.RemoteError(module, qualname, args, text), tb_text
        seen = {}
        for name, value in attrs.items():
            if _plain(value, seen):
                set_data(exc, name, value)
        return exc, tb_text

    def _rebuilt(self, module, qualname, args):
        """The exception of class module.qualname with args, or None: see
        the module's docstring."""
        if module == "builtins":
            cls = builtins.__dict__.get(qualname)
            named = True
        else:
            cls = self._tables().get((module, qualname))
            named = cls is not None
            if not named:
                cls = _loaded_class(module, qualname)
        if not _is_exception_class(cls):
            return None
        if named:
            try:
                exc = cls(*args)
                if issubclass(type(exc), Exception):
                    return exc
            except Exception:
                pass
        return _bare(cls, args)


# --- an exception rebuilt as data ---------------------------------------------

# the real slots, read without any attribute lookup a class could override
_TYPE_DICT = type.__dict__["__dict__"].__get__
_TYPE_MRO = type.__dict__["__mro__"].__get__
_TYPE_FLAGS = type.__dict__["__flags__"].__get__
_MODULE_DICT = types.ModuleType.__dict__["__dict__"].__get__
_EXC_DICT = BaseException.__dict__["__dict__"].__get__
_EXC_ARGS = BaseException.__dict__["args"].__set__
_HEAPTYPE = 1 << 9
_SCALARS = frozenset((type(None), bool, int, float, complex, str, bytes, bytearray))

_CONTAINERS = frozenset((list, tuple, dict, set, frozenset))


def _children(o):
    return itertools.chain(o.keys(), o.values()) if type(o) is dict else o


def _items(o):
    return 2 * len(o) if type(o) is dict else len(o)


#: the most values the plain attributes of one exception hold together
MAX_ATTR_ITEMS = 1 << 20


def _plain(value, seen):
    """True when value is plain data (the scalar types and lists, tuples,
    dicts, sets and frozensets of them, exact types). ``seen``: the ids of
    the containers walked for this exception so far (each walked once) and,
    under the key None, the values counted: past MAX_ATTR_ITEMS, False."""
    todo = [value]
    while todo:
        v = todo.pop()
        t = type(v)
        if t in _SCALARS:
            continue
        if t not in _CONTAINERS:
            return False
        if id(v) in seen:
            continue
        seen[id(v)] = v  # kept alive: no id is reused meanwhile
        seen[None] = seen.get(None, 0) + _items(v)
        if seen[None] > MAX_ATTR_ITEMS:
            return False
        todo.extend(_children(v))
    return True


def _dunder(name):
    return name.startswith("__") and name.endswith("__")


def _plain_attrs(exc):
    """The child's side: the plain attributes of exc (its dict's entries
    with a non-dunder name and a plain value)."""
    try:
        d = _EXC_DICT(exc)
    except Exception:
        return {}
    seen = {}
    return {k: v for k, v in list(d.items()) if type(k) is str and not _dunder(k) and _plain(v, seen)}


def _is_exception_class(cls):
    # issubclass(type(...)): isinstance() would consult a __class__ property
    return issubclass(type(cls), type) and issubclass(cls, Exception)


def _defines(cls, name, skip=()):
    return any(name in _TYPE_DICT(k) for k in _TYPE_MRO(cls) if k not in skip)


def _loaded_class(module, qualname):
    """The class module.qualname when the caller has it already: the
    module in sys.modules (a plain module; __mp_main__ is a spawned
    interpreter's name for __main__), each name in the module's or the
    enclosing class's own dict. Nothing is imported or looked up through
    getattr (a module's __getattr__, a metaclass's __getattribute__)."""
    mod = sys.modules.get(module)
    if mod is None and module == "__mp_main__":
        mod = sys.modules.get("__main__")
    if type(mod) is not types.ModuleType:
        return None
    obj = _MODULE_DICT(mod)
    for i, part in enumerate(qualname.split(".")):
        if i and not issubclass(type(obj), type):
            return None
        obj = (obj if i == 0 else _TYPE_DICT(obj)).get(part)
    return obj


def _bare(cls, args):
    """An instance of the Exception class cls made by its nearest builtin
    base's __new__ (cls's own __new__ and __init__ do not run), args set
    through BaseException's own setter; None for a class that overrides
    __class__ or has a __del__ (code that runs without the caller asking),
    or whose builtin base refuses to make it (a C type's own layout)."""
    if _defines(cls, "__class__", skip=(object,)) or _defines(cls, "__del__"):
        return None
    base = next(k for k in _TYPE_MRO(cls) if not _TYPE_FLAGS(k) & _HEAPTYPE)
    try:
        exc = base.__new__(cls)
        _EXC_ARGS(exc, args)
    except Exception:
        return None
    return exc


def _data_descriptor(cls, name):
    """Whether a class of cls's MRO defines name as a data descriptor (a
    property, a slot): writing the instance's dict would not be data then."""
    for k in _TYPE_MRO(cls):
        d = _TYPE_DICT(k)
        if name in d and any("__set__" in _TYPE_DICT(t) or "__delete__" in _TYPE_DICT(t) for t in _TYPE_MRO(type(d[name]))):
            return True
    return False


def set_data(exc, name, value):
    """Sets exc's attribute name to value as data: into the instance's
    dict, never through __setattr__; not a dunder name nor one its class
    defines as a data descriptor. True when set."""
    if type(name) is not str or not name.isidentifier() or _dunder(name) or _data_descriptor(type(exc), name):
        return False
    try:
        _EXC_DICT(exc)[name] = value
    except Exception:
        return False
    return True


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
