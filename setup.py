# SPDX-License-Identifier: LGPL-2.1-or-later
"""Builds leash._leash with the project's own build system, so that pip and
`make` build the one extension the same way: configure (with this
interpreter as PYTHON) in a private directory, `make python-build`, then the
extension is copied into the wheel, with the `leash` binary (src/cli/leash,
static unless configure found no static archives: HACKING.md, "static
leash") as leash/_bin/leash, which the console script `leash`
(leash._cli) execs. Needs what `make` needs (gcc, autoconf,
automake, pkg-config, the -dev packages: tools/install-deps.sh); no network.
"""

import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

TOP = os.path.dirname(os.path.abspath(__file__))


class MakeBuildExt(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.path.join(self.build_temp, "leash-build"))
        os.makedirs(build, exist_ok=True)
        src = TOP
        if not os.path.exists(os.path.join(TOP, "configure")):
            subprocess.check_call(["./autogen.sh"], cwd=TOP)
        if os.path.exists(os.path.join(TOP, "config.status")):
            # configured in place (an rpm's %configure): configure refuses a
            # second, out-of-tree build of it, so build from the tree `make
            # dist` would ship, made by that configuration
            src = os.path.abspath(os.path.join(self.build_temp, "leash-src"))
            if not os.path.exists(os.path.join(src, "configure")):
                subprocess.check_call(["make", "--quiet", "distdir", "distdir=" + src], cwd=TOP)
        if not os.path.exists(os.path.join(build, "Makefile")):
            subprocess.check_call(
                [os.path.join(src, "configure"), "--quiet", "--with-python", "PYTHON=" + sys.executable], cwd=build
            )
        jobs = str(os.cpu_count() or 1)
        # the binary's sources include a generated header (BUILT_SOURCES, which
        # only `make all` makes first)
        subprocess.check_call(["make", "--quiet", "src/cli/git-revision.h"], cwd=build)
        subprocess.check_call(["make", "-j" + jobs, "--quiet", "python-build", "src/cli/leash"], cwd=build)
        built = os.path.join(build, "python", "leash", "_leash" + sysconfig.get_config_var("EXT_SUFFIX"))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(built, target)
        bindir = os.path.join(os.path.dirname(target), "_bin")
        os.makedirs(bindir, exist_ok=True)
        shutil.copy2(os.path.join(build, "src", "cli", "leash"), os.path.join(bindir, "leash"))


setup(
    ext_modules=[Extension("leash._leash", sources=[])],
    cmdclass={"build_ext": MakeBuildExt},
    # not build/: that is where developers configure the autotools build
    options={"build": {"build_base": ".pybuild"}, "egg_info": {"egg_base": ".pybuild"}},
)
