# SPDX-License-Identifier: LGPL-2.1-or-later
"""pynisher 1.x's ``pynisher.util`` on leash: see leash.compat.pynisher_util."""
from leash.compat.pynisher_util import *  # noqa: F401,F403
from leash.compat.pynisher_util import __all__  # noqa: F401
