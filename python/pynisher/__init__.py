# SPDX-License-Identifier: LGPL-2.1-or-later
"""pynisher's API on leash jobs: every name of ``leash.compat.pynisher``.

This package exists so that code written for pynisher (1.x or 0.x) runs
unchanged on leash when it is on the path; see leash.compat.pynisher.
"""
from leash.compat.pynisher import *  # noqa: F401,F403
from leash.compat.pynisher import __all__, __version__  # noqa: F401
