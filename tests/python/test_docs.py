# SPDX-License-Identifier: LGPL-2.1-or-later
"""`pydoc leash` documents every public name: each function, class and
public method of leash, leash.compat.pynisher and the extension's Job has a
docstring of its own (not one inherited from object or Exception)."""

import inspect

import pytest

import leash
import leash.compat.pynisher as compat_pynisher
from leash import _leash


def _public(module):
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    for name in names:
        obj = getattr(module, name)
        if inspect.isclass(obj) or callable(obj):
            yield "{}.{}".format(module.__name__, name), obj


def _own_doc(obj):
    doc = vars(obj).get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    return (doc or "").strip()


def _members(qualname, cls):
    for name, member in vars(cls).items():
        if name.startswith("_") and name not in ("__init__", "__call__", "__enter__", "__exit__"):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if name.startswith("__") and not (member.__doc__ or "").strip():
            continue  # dunders: documented by the class
        if callable(member) or isinstance(member, property) or inspect.isdatadescriptor(member):
            yield "{}.{}".format(qualname, name), member


NAMES = list(_public(leash)) + list(_public(compat_pynisher)) + [("leash._leash.Job", _leash.Job)]


@pytest.mark.parametrize("qualname,obj", NAMES, ids=[q for q, _ in NAMES])
def test_every_public_name_has_a_docstring(qualname, obj):
    assert _own_doc(obj), "{} has no docstring".format(qualname)
    if inspect.isclass(obj):
        missing = [q for q, m in _members(qualname, obj) if not (getattr(m, "__doc__", None) or "").strip()]
        assert not missing, "no docstring: {}".format(", ".join(missing))
