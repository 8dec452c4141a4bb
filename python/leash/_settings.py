# SPDX-License-Identifier: LGPL-2.1-or-later
"""Python values -> the key/value strings of leash's option table.

leash parses every setting with one table (the same keys as ``leash run``'s
long options and profile keys), so the Python layer only turns Python values
into those strings: sizes from ints, durations from ints or floats. Strings
are passed through and parsed by the library, which names the bad value.
"""

import decimal
import numbers
import signal as _signal

__all__ = ["build_settings", "size_text", "size_bytes", "duration_text", "keep_fds_value", "isolating"]

# Python keyword -> option-table key, for the named limits of leash.limit().
_NAMED = {
    "memory": "memory",
    "cpu_time": "cpu-time",
    "wall_time": "wall-time",
    "pids": "pids",
    "cpus": "cpus",
    "grace": "grace",
    "signal": "signal",
    "profile": "profile",
}

_SIZE_KEYS = {"memory", "memory-high", "swap", "fsize", "core"}
_DURATION_KEYS = {"cpu-time", "wall-time", "grace"}
_COUNT_KEYS = {"pids", "nofile"}


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _decimal_text(value, what):
    if isinstance(value, numbers.Integral):
        if value < 0:
            raise ValueError("{}: {!r}: must not be negative".format(what, value))
        return str(int(value))
    try:
        d = decimal.Decimal(repr(float(value)))
    except (ValueError, decimal.InvalidOperation):
        raise ValueError("{}: {!r}: not a number".format(what, value)) from None
    if not d.is_finite() or d < 0:
        raise ValueError("{}: {!r}: must be a finite number >= 0".format(what, value))
    return format(d, "f")


def size_text(value, what="memory"):
    """Bytes as an int, or a string leash parses ("512M", "2G", "max")."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return _decimal_text(value, what)
    if _is_number(value) and float(value).is_integer():
        return _decimal_text(int(value), what)
    raise ValueError("{}: {!r}: expected bytes (an int) or a size such as '2G'".format(what, value))


def size_bytes(value, what):
    """Bytes from an int or a size string ("64M"); None: -1 (the default)."""
    if value is None:
        return -1
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (isinstance(value, int) and value < 0):
        raise ValueError("{}: {!r}: expected bytes (an int) or a size such as '64M'".format(what, value))
    if isinstance(value, int):
        return value
    from . import _call

    try:
        return _call.require_extension().parse_size(value)
    except ValueError:
        raise ValueError("{}: {!r}: expected bytes (an int) or a size such as '64M'".format(what, value)) from None


def duration_text(value, what="wall_time"):
    """Seconds as an int or float, or a string leash parses ("90s", "2m")."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if _is_number(value):
        return _decimal_text(value, what) + "s"
    if hasattr(value, "total_seconds"):  # datetime.timedelta
        return _decimal_text(value.total_seconds(), what) + "s"
    raise ValueError("{}: {!r}: expected seconds or a duration such as '90s'".format(what, value))


def keep_fds_value(value, what="keep_fds"):
    """keep_fds=: None or False (the default), True (every fd), or an
    iterable of fds (ints >= 0; 0-2 are always kept) -> None, True or a
    sorted tuple of the fds above 2. Anything else raises ValueError."""
    if value is None or value is False:
        return None
    if value is True:
        return True
    bad = ValueError("{}: {!r}: expected True, False or a list of file descriptors (ints >= 0)".format(what, value))
    if isinstance(value, (str, bytes, numbers.Number)) or not hasattr(value, "__iter__"):
        raise bad
    fds = set()
    for fd in value:
        if not isinstance(fd, numbers.Integral) or isinstance(fd, bool) or fd < 0 or fd > 2**31 - 1:
            raise bad
        fds.add(int(fd))
    out = tuple(sorted(fd for fd in fds if fd > 2))
    if len(out) > 64:
        raise ValueError("{}: {} descriptors: at most 64 can be kept".format(what, len(out)))
    return out


def isolating(sandbox):
    """Whether the options (leash.limit's other keywords) run the function
    behind a boundary its caller's open files would cross: another user,
    or a device allow-list (devices=, gpus=)."""
    return any(sandbox.get(k) not in (None, False, "", (), []) for k in ("user", "devices", "gpus"))


def _value_text(key, value, what):
    if key in _SIZE_KEYS:
        return size_text(value, what)
    if key in _DURATION_KEYS:
        return duration_text(value, what)
    if key == "signal":
        if isinstance(value, _signal.Signals):
            return str(int(value))
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return str(int(value))
        if isinstance(value, str):
            return value
        raise ValueError("signal: {!r}: expected a signal number or name".format(value))
    if key == "cpus":
        if _is_number(value):
            return _decimal_text(value, what)
        if isinstance(value, str):
            return value
        raise ValueError("cpus: {!r}: expected a number of cores".format(value))
    if key in _COUNT_KEYS:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return _decimal_text(value, what)
        if isinstance(value, str):
            return value
        raise ValueError("{}: {!r}: expected a count".format(what, value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if isinstance(value, dict):  # env={"K": "V"}
        return ["{}={}".format(k, v) for k, v in value.items()]
    return str(value)


def build_settings(named, sandbox):
    """A list of (key, value) pairs for the job, in the order given.

    ``named`` holds leash.limit()'s keyword arguments (memory, cpu_time, ...);
    ``sandbox`` any other option-table key, with ``_`` for ``-``
    (``clean_env=True``, ``seccomp="no-network"``, ``env={"K": "V"}``).
    Flags set to False are left out. Raises ValueError naming a value that
    has the wrong Python type; the library checks the rest.
    """
    out = []
    for py, value in named.items():
        if value is None:
            continue
        key = _NAMED[py]
        out.append((key, _value_text(key, value, py)))
    for py, value in sandbox.items():
        if value is None or value is False:
            continue
        key = py.replace("_", "-")
        text = _value_text(key, value, py)
        if isinstance(text, list):
            out.extend((key, t) for t in text)
        else:
            out.append((key, text))
    return out
