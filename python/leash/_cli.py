# SPDX-License-Identifier: LGPL-2.1-or-later
"""The ``leash`` command of a pip-installed leash: the wheel carries the
static ``leash`` binary as ``leash/_bin/leash`` and this console script
replaces itself with it (execv: the same process, so signals, the exit status
and the job's own report are the binary's). A ``make install`` installs the
binary in $(bindir) and no console script, so this module is not run there.
"""

import os
import sys


def binary():
    """The path of the ``leash`` binary bundled with this package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "leash")


def main():
    path = binary()
    try:
        os.execv(path, ["leash"] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("leash: cannot run the bundled binary {}: {}\n".format(path, e.strerror))
        return 127
