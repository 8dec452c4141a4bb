# SPDX-License-Identifier: LGPL-2.1-or-later
"""The function's exception as the caller receives it (issue 38 item 6,
issue 41 item 9): a BaseException that is not an Exception never ends the
caller as itself; a class the caller has loaded comes back as itself
without running code the function chose. Each defence beside its control:
the same attack through the path without it."""

import os
import pickle
import sys
import types

import pytest

import leash
from leash import _result

_MARK = "leash-exception-1"


def raise_it(exc):
    raise exc


class UserExit(BaseException):
    pass


# --- BaseException that is not Exception ----------------------------------------


@pytest.mark.parametrize("exc", [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), UserExit("bye")],
                         ids=lambda e: type(e).__name__)
def test_a_base_exception_that_is_not_an_exception_arrives_as_remote_error(exc):
    try:
        leash.limit(raise_it, result_types=(UserExit,))(exc)
    except Exception as e:  # what a caller's loop catches: it must get here
        assert type(e) is leash.RemoteError and e.qualname == type(exc).__qualname__
    else:
        pytest.fail("no exception")
    # the control: trusted, the function's SystemExit ends the caller past
    # its `except Exception` (pytest.raises catches BaseException)
    with pytest.raises(type(exc)):
        try:
            leash.limit(raise_it, trust_result=True)(exc)
        except Exception:
            pytest.fail("caught as an Exception")


# --- a class the caller has loaded ----------------------------------------------

INITS = []


class LoadedError(Exception):
    def __init__(self, message, code):
        INITS.append(os.getpid())
        super().__init__(message)
        self.code = code
        self.detail = {"k": [1, 2.5, None, ("t", b"b")]}
        self.handle = open  # not plain data: stays behind


class Outer:
    class Inner(ValueError):
        pass


def test_a_loaded_class_comes_back_as_itself_without_its_init():
    before = list(INITS)
    with pytest.raises(LoadedError) as e:
        leash.limit(raise_it)(LoadedError("m", 3))
    assert INITS == before + [os.getpid()]  # the one made here, in the test
    assert type(e.value) is LoadedError and e.value.args == ("m",) and str(e.value) == "m"
    assert e.value.code == 3 and e.value.detail == {"k": [1, 2.5, None, ("t", b"b")]}
    assert not hasattr(e.value, "handle")
    assert "raise_it" in e.value.child_traceback and e.value.report["reason"] == "exit"
    with pytest.raises(Outer.Inner):
        leash.limit(raise_it)(Outer.Inner("nested"))
    # the builtin base's own constructor: an OSError subclass keeps errno
    with pytest.raises(FileNotFoundError) as e:
        leash.limit(os.open)("/nonexistent/x", os.O_RDONLY)
    assert e.value.errno == 2


def a_class_not_loaded_here():
    mod = types.ModuleType("leash_test_only_in_child")
    exec("class OnlyHere(Exception): pass", mod.__dict__)
    sys.modules[mod.__name__] = mod
    raise mod.OnlyHere("x", 1)


def test_a_class_the_caller_has_not_loaded_is_a_remote_error():
    with pytest.raises(leash.RemoteError) as e:
        leash.limit(a_class_not_loaded_here)()
    assert e.value.type_name == "leash_test_only_in_child.OnlyHere" and e.value.remote_args == ("x", 1)
    assert "leash_test_only_in_child" not in sys.modules


# --- hostile frames: what a function may name and send --------------------------


def _pipes():
    out = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + name)
        except OSError:
            continue
        if target.startswith("pipe:"):
            out[int(name)] = target
    return out


def send_error(outside, module, qualname, args, attrs):
    """A hostile function's E frame, written to its result pipe: the pipe
    the caller did not have before the call (``outside``: the caller's)."""
    fd = max(fd for fd, p in _pipes().items() if p not in outside)
    frame = memoryview(b"E" + pickle.dumps((_MARK, module, qualname, args, "text", "tb", attrs)))
    while frame:
        frame = frame[os.write(fd, frame):]
    os._exit(0)


class Trap:
    """What a hostile frame aims at: classes of the caller whose hooks run
    code (here: note that they ran)."""

    ran = []


class NewRuns(Exception):
    def __new__(cls, *args):
        Trap.ran.append("__new__")
        return super().__new__(cls, *args)


class SetattrRuns(Exception):
    def __setattr__(self, name, value):
        Trap.ran.append("__setattr__")
        super().__setattr__(name, value)


class PropertyRuns(Exception):
    @property
    def code(self):
        return None

    @code.setter
    def code(self, value):
        Trap.ran.append("property")


class SubclassHookRuns(Exception):
    def __init_subclass__(cls, **kw):
        Trap.ran.append("__init_subclass__")


class ClassProperty(Exception):
    @property
    def __class__(self):
        Trap.ran.append("__class__")
        return KeyError


class HasDel(Exception):
    def __del__(self):
        Trap.ran.append("__del__")


class _FakeClass:
    @property
    def __class__(self):
        Trap.ran.append("fake __class__")
        return type


NotAClass = _FakeClass()


class _Meta(type):
    def __getattribute__(cls, name):
        Trap.ran.append("metaclass getattribute")
        return type.__getattribute__(cls, name)


class MetaOuter(metaclass=_Meta):
    class Inner(Exception):
        pass


_lazy = types.ModuleType("leash_test_lazy")
_lazy.__getattr__ = lambda name: (Trap.ran.append("module __getattr__"), KeyError)[1]
sys.modules["leash_test_lazy"] = _lazy

_HERE = __name__


def _received(module, qualname, attrs=None, args=("a",), **options):
    del Trap.ran[:]
    with pytest.raises(BaseException) as e:
        leash.limit(send_error, **options)(set(_pipes().values()), module, qualname, args, attrs or {})
    return e.value


@pytest.mark.parametrize("cls", [NewRuns, SetattrRuns, PropertyRuns, SubclassHookRuns])
def test_a_loaded_class_whose_hooks_run_code_is_rebuilt_without_running_them(cls):
    e = _received(_HERE, cls.__qualname__, {"code": 7, "other": [1]})
    assert type(e) is cls and e.args == ("a",) and e.other == [1] and Trap.ran == []
    assert e.code == (None if cls is PropertyRuns else 7)
    # the control: the way a named class (and pickle) rebuilds one, the
    # constructor and setattr, runs the class's hooks
    e = _received(_HERE, cls.__qualname__, {"code": 7}, result_types=(cls,))
    if cls is NewRuns:
        assert Trap.ran == ["__new__"]
    e = cls("a")
    del Trap.ran[:]
    e = pickle.loads(pickle.dumps(e))
    setattr(e, "code", 7)
    assert Trap.ran == {NewRuns: ["__new__"], SetattrRuns: ["__setattr__"], PropertyRuns: ["property"],
                        SubclassHookRuns: []}[cls]


@pytest.mark.parametrize("module,qualname,why", [
    (_HERE, "ClassProperty", "overrides __class__"),
    (_HERE, "HasDel", "has a __del__"),
    (_HERE, "NotAClass", "an object whose __class__ says type"),
    ("os", "system", "a function"),
    ("subprocess", "Popen", "a class that is not an exception"),
    ("leash_test_lazy", "Missing", "a module's __getattr__"),
    ("builtins", "SystemExit", "a BaseException"),
    ("builtins", "__import__", "a builtin function"),
    ("leash_test_nowhere", "Error", "a module not loaded"),
    (_HERE, "LoadedError.__init__", "a method"),
])
def test_a_frame_naming_what_is_not_a_loaded_exception_class_gets_a_remote_error(module, qualname, why):
    e = _received(module, qualname)
    assert type(e) is leash.RemoteError and e.type_name == "{}.{}".format(module, qualname), why
    assert Trap.ran == [] and "leash_test_nowhere" not in sys.modules, why


def test_the_lookup_tricks_run_code_the_plain_way():
    # the controls of the lookups above: getattr and isinstance run them
    del Trap.ran[:]
    getattr(sys.modules["leash_test_lazy"], "Missing")
    isinstance(NotAClass, type)
    getattr(MetaOuter, "Inner")
    assert Trap.ran == ["module __getattr__", "fake __class__", "metaclass getattribute"]


def test_a_nested_class_is_found_through_own_dicts_only():
    inner = MetaOuter.__dict__["Inner"]
    e = _received(_HERE, "MetaOuter.Inner")
    assert Trap.ran == [] and type(e) is inner


def test_attributes_travel_as_plain_data_only():
    attrs = {"__class__": "KeyError", "__dict__": {}, "__cause__": None, "not an identifier": 1, "ok": (1, "x")}
    e = _received(_HERE, "LoadedError", attrs, args=("m", 2))
    assert type(e) is LoadedError and e.ok == (1, "x") and e.args == ("m", 2)
    assert set(vars(e)) == {"ok", "child_traceback", "report"}
    # a named class in an attribute's value is not plain data
    e = _received(_HERE, "LoadedError", {"p": NewRuns("x")}, result_types=(NewRuns,))
    assert type(e) is LoadedError and not hasattr(e, "p")


def test_a_frame_of_an_older_leash_still_decodes():
    frame = (_MARK, "builtins", "KeyError", ("k",), "'k'", "tb")
    exc, tb = _result.SafeCodec().exception(frame)
    assert type(exc) is KeyError and exc.args == ("k",) and tb == "tb"
    with pytest.raises(leash.ResultRefused):
        _result.SafeCodec().exception(frame + ({}, "more"))
