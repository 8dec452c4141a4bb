# SPDX-License-Identifier: LGPL-2.1-or-later
"""The package installs: `make install` into Python's site directory
(DESTDIR honoured), `pip install --no-build-isolation` from the source
tree, and `pip wheel` from a copy of it installed into a fresh venv, without
network; each installed copy then runs a limited call, and the wheel's
`leash` command runs a job."""

import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

import conftest

SRC = os.environ.get("LEASH_SRCDIR")
BUILD = os.environ.get("LEASH_BUILDDIR")

CHECK = """
import leash, sys
leash.configure(cgroup_parent=sys.argv[1])
assert leash.__file__.startswith(sys.argv[2]), leash.__file__
print(leash.limit(pow, wall_time=10)(2, 10))
"""


def _run_installed(path, env_extra=None):
    env = dict(os.environ, PYTHONPATH=path)
    env.update(env_extra or {})
    out = subprocess.run(
        [sys.executable, "-c", CHECK, conftest.parent(), path], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1024"


def _no_sanitizer():
    if os.environ.get("LEASH_SAN_CFLAGS"):
        pytest.skip("a sanitizer build: installing instrumented code is not what users get")


def test_make_install_into_destdir(tmp_path):
    _no_sanitizer()
    if not BUILD:
        pytest.skip("LEASH_BUILDDIR not set (run through make check)")
    dest = tmp_path / "dest"
    env = dict(os.environ, MAKEFLAGS="", MFLAGS="", MAKELEVEL="")
    r = subprocess.run(
        ["make", "-C", BUILD, "--quiet", "install-python", "install-python-compat", "DESTDIR=" + str(dest)],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert r.returncode == 0, r.stderr
    pythondir = subprocess.run(
        ["make", "-C", BUILD, "--no-print-directory", "-s", "print-pythondir"], capture_output=True, text=True, env=env
    ).stdout.strip()
    assert pythondir.startswith("/"), pythondir
    site = str(dest) + pythondir
    assert os.path.exists(os.path.join(site, "leash", "_leash" + sysconfig.get_config_var("EXT_SUFFIX")))
    _run_installed(site)
    compat = [os.path.join(d, "python-compat") for d, _, f in os.walk(dest) if "python-compat" in os.listdir(d)]
    assert compat, "the pynisher drop-in was not installed"
    env = dict(os.environ, PYTHONPATH=site + ":" + compat[0])
    out = subprocess.run(
        [sys.executable, "-c", "import pynisher; print(pynisher.limit.__module__, pynisher.MemorylimitException)"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("leash.compat.pynisher")


def test_pip_install_from_the_source_tree(tmp_path):
    _no_sanitizer()
    if not SRC or not os.path.exists(os.path.join(SRC, "setup.py")):
        pytest.skip("no source tree with setup.py")
    r = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    if r.returncode != 0:
        pytest.skip("pip is not installed for {} (Debian: python3-pip)".format(sys.executable))
    if not os.access(SRC, os.W_OK):
        pytest.skip("the source tree is read-only (make distcheck): pip builds in it")
    target = tmp_path / "site"
    r = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
         "--disable-pip-version-check", "--target", str(target), SRC],
        capture_output=True, text=True, timeout=900, env=dict(os.environ, PIP_NO_INPUT="1"),
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    _run_installed(str(target))


# What a source tree holds besides the sources: a developer's build and
# pip's, git's and autoconf's caches (a tree configured in place keeps its
# Makefile: setup.py builds from its `make distdir` then).
_NOT_SOURCE = shutil.ignore_patterns(".git", ".pybuild", "build", "autom4te.cache", "__pycache__", "*.o", "*.a",
                                     "*.so", "*.whl")


def _probe_wheel_tools():
    r = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    if r.returncode != 0:
        pytest.skip("pip is not installed for {} (Debian: python3-pip)".format(sys.executable))
    r = subprocess.run([sys.executable, "-c", "import setuptools, wheel"], capture_output=True)
    if r.returncode != 0:
        pytest.skip("setuptools or wheel missing for {} (Debian: python3-setuptools python3-wheel)".format(
            sys.executable))


def test_wheel_in_a_fresh_venv(tmp_path):
    """`pip wheel .` of a copy of the tree, installed into a venv that has no
    leash but the wheel's: `import leash`, a limited call and the `leash`
    command (the bundled static binary, through the console script) work
    with the build tree out of sight (no PYTHONPATH, no LEASH_*)."""
    _no_sanitizer()
    if not SRC or not os.path.exists(os.path.join(SRC, "setup.py")):
        pytest.skip("no source tree with setup.py")
    if not conftest.parent():
        pytest.skip(conftest.WHY_NOT)
    _probe_wheel_tools()
    venv = tmp_path / "venv"
    r = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.skip("cannot make a venv with pip in it (Debian: python3-venv): " + r.stderr.strip()[-300:])
    src = tmp_path / "src"
    shutil.copytree(SRC, str(src), ignore=_NOT_SOURCE, symlinks=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith(("LEASH_", "MAKE", "MFLAGS"))}
    env["PIP_NO_INPUT"] = "1"
    pip = ["-m", "pip", "--disable-pip-version-check", "--no-cache-dir"]
    r = subprocess.run(
        [sys.executable] + pip + ["wheel", "--no-build-isolation", "--no-index", "--no-deps", "-w",
                                  str(tmp_path / "dist"), str(src)],
        capture_output=True, text=True, timeout=900, env=env,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheels = list((tmp_path / "dist").glob("leash-*.whl"))
    assert len(wheels) == 1, wheels
    py = str(venv / "bin" / "python")
    r = subprocess.run([py] + pip + ["install", "--no-index", "--no-deps", str(wheels[0])],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    shutil.rmtree(str(src))  # nothing of the tree the wheel came from is left to use
    leash_cmd = str(venv / "bin" / "leash")

    out = subprocess.run([leash_cmd, "--version"], capture_output=True, text=True, timeout=60, env=env, cwd="/")
    assert out.returncode == 0 and out.stdout.startswith("leash "), out.stdout + out.stderr
    out = subprocess.run([leash_cmd, "run", "--cgroup-parent", conftest.parent(), "-w", "1s", "--", "sleep", "5"],
                         capture_output=True, text=True, timeout=60, env=env, cwd="/")
    assert out.returncode == 124, out.stderr
    assert "wall_time" in out.stderr, out.stderr
    check = CHECK + """
import time
try:
    leash.limit(time.sleep, wall_time=1)(5)
except leash.WallTimeLimitExceeded:
    print("ended by wall_time")
"""
    out = subprocess.run([py, "-c", check, conftest.parent(), str(venv)], capture_output=True, text=True,
                         timeout=120, env=env, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1024", "ended", "by", "wall_time"], out.stdout
