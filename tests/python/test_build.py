# SPDX-License-Identifier: LGPL-2.1-or-later
"""The package installs: `make install` into Python's site directory
(DESTDIR honoured) and `pip install --no-build-isolation` from the source
tree, without network; each installed copy then runs a limited call."""

import os
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
