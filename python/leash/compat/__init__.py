# SPDX-License-Identifier: LGPL-2.1-or-later
"""Drop-in APIs of the tools leash replaces: ``leash.compat.pynisher``
(pynisher 1.x and 0.x). resource_monitor's ``monitored`` is
``leash.monitored``."""
