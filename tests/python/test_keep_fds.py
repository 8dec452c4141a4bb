# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 38.7: a function run behind a boundary (user=, devices=, gpus=)
gets none of its caller's open files: every fd above 2 but its result pipe
is closed in the forked child before it runs, unless keep_fds= names it.
Before, a function run as nobody read the caller's fd of a root-only file
(and a CUDA context's /dev/nvidia* fds). The controls: the same call with
keep_fds=[N], and without user=, read it. The conftest fixture checks that
nothing was left behind."""

import errno
import os
import pwd
import subprocess
import sys

import pytest

import leash
from leash import _settings


def read_fd(fd):
    try:
        return os.pread(fd, 64, 0).decode()
    except OSError as e:
        return errno.errorcode[e.errno]


def open_path(path):
    try:
        os.close(os.open(path, os.O_RDONLY))
        return "opened"
    except OSError as e:
        return errno.errorcode[e.errno]


@pytest.fixture
def secret_fd(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("user= needs root")
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user 'nobody' on this host")
    path = tmp_path / "secret"
    path.write_text("root only")
    os.chmod(str(path), 0o600)
    fd = os.open(str(path), os.O_RDONLY)
    try:
        yield fd, str(path)
    finally:
        os.close(fd)


def skip_spawn_nobody_cannot_import(context):
    """A spawned function run as nobody is a fresh interpreter of that uid:
    it imports leash and this module from the build and source trees, which
    a package build's 0700 directory hides from it."""
    if context != "spawn":
        return
    here = os.path.dirname(os.path.abspath(__file__))
    path = ":".join([here] + [p for p in sys.path if "leash" in p or p.endswith("/python")])
    probe = "import sys; sys.path[:0] = sys.argv[1].split(':'); import leash._leash, test_keep_fds"
    if subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", probe,
                       path], cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        pytest.skip("nobody cannot import leash and this test from the trees (a 0700 directory above them, as in a "
                    "package build)")


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_a_function_run_as_another_user_gets_none_of_the_callers_fds(secret_fd, context):
    skip_spawn_nobody_cannot_import(context)
    fd, path = secret_fd
    assert leash.limit(open_path, user="nobody", wall_time=60, context=context)(path) == "EACCES", (
        "nobody can open the file itself: the test proves nothing"
    )
    assert leash.limit(read_fd, user="nobody", wall_time=60, context=context)(fd) == "EBADF"


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_control_keep_fds_hands_the_named_fd_on(secret_fd, context):
    skip_spawn_nobody_cannot_import(context)
    fd, _ = secret_fd
    assert leash.limit(read_fd, user="nobody", wall_time=60, context=context, keep_fds=[fd])(fd) == "root only"
    if context == "fork":  # a fresh interpreter gets what is inheritable, and os.open's fds are not (PEP 446)
        assert leash.limit(read_fd, user="nobody", wall_time=60, context=context, keep_fds=True)(fd) == "root only"


def test_control_without_user_the_forked_function_inherits_the_fd(secret_fd):
    fd, _ = secret_fd
    assert leash.limit(read_fd, wall_time=60)(fd) == "root only"


def test_keep_fds_as_a_list_closes_the_others_without_user_too(secret_fd, tmp_path):
    fd, _ = secret_fd
    other = os.open(str(tmp_path / "secret"), os.O_RDONLY)
    try:
        lf = leash.limit(lambda a, b: (read_fd(a), read_fd(b)), wall_time=60, keep_fds=[fd])
        assert lf(fd, other) == ("root only", "EBADF")
    finally:
        os.close(other)


def test_the_boundary_options_are_what_closes_them():
    assert _settings.isolating({"user": "nobody"})
    assert _settings.isolating({"devices": "/dev/null"})
    assert _settings.isolating({"gpus": "0"})
    assert not _settings.isolating({"user": None, "clean_env": True})


@pytest.mark.parametrize("bad", ["3", 3, [3, -1], [3, "4"], [True], 1.5, [2**40]])
def test_a_bad_keep_fds_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="keep_fds"):
        leash.limit(read_fd, user="nobody", keep_fds=bad)


def test_leash_run_keep_fds_is_true_or_false():
    with pytest.raises(ValueError, match="leash.run: keep_fds=\\[3\\]"):
        leash.run(["true"], keep_fds=[3])
    assert leash.run(["true"], keep_fds=True)["sandbox"]["fds_above_2"] == "inherited"
    assert leash.run(["true"])["sandbox"]["fds_above_2"] == "closed"
