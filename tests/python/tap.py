# SPDX-License-Identifier: LGPL-2.1-or-later
"""A pytest plugin that writes TAP to fd 3 (run.sh points it at the automake
TAP driver's stdout): one line per test, a skip with its reason, a test
whose teardown failed (something left behind) as not ok."""

import os

_out = None
_n = 0
_state = {}


def _emit(line):
    global _out
    if _out is None:
        try:
            _out = os.fdopen(os.dup(3), "w", buffering=1)
        except OSError:
            _out = os.fdopen(os.dup(1), "w", buffering=1)
    _out.write(line + "\n")


def _reason(report):
    r = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return r.replace("Skipped: ", "").replace("\n", " ")


def pytest_collection_finish(session):
    _emit("1..{}".format(len(session.items)))


def pytest_runtest_logreport(report):
    st = _state.setdefault(report.nodeid, {"failed": [], "skip": None})
    if report.failed:
        st["failed"].append(report.when)
    elif report.skipped:
        st["skip"] = _reason(report)


def pytest_runtest_logfinish(nodeid, location):
    global _n
    st = _state.pop(nodeid, {"failed": [], "skip": None})
    _n += 1
    name = nodeid.replace("#", "_")
    if st["failed"]:
        _emit("not ok {} - {} (failed in {})".format(_n, name, ", ".join(st["failed"])))
    elif st["skip"] is not None:
        _emit("ok {} - {} # SKIP {}".format(_n, name, st["skip"]))
    else:
        _emit("ok {} - {}".format(_n, name))
