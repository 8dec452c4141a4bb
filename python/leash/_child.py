# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fresh interpreter of context='spawn': ``python -m leash._child IN OUT``.

Reads (preparation data, function, args, kwargs, codec) pickled from fd IN
(the caller's own bytes: this side trusts them), prepares
itself the way multiprocessing's spawn does (sys.path, the main module under
the name __mp_main__, so functions defined in a script unpickle; a script
that calls again while it is imported so fails with multiprocessing's
message about the ``if __name__ == "__main__":`` idiom), then runs
the call exactly as the fork context's child does and writes the frame to fd
OUT.
"""

import io
import os
import pickle
import sys
import traceback


def _read_all(fd):
    chunks = []
    while True:
        data = os.read(fd, 1 << 20)
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    return b"".join(chunks)


def main():
    infd, outfd = int(sys.argv[1]), int(sys.argv[2])
    os.set_inheritable(outfd, False)
    from leash import _call

    try:
        stream = io.BytesIO(_read_all(infd))
        prep = pickle.load(stream)
        if prep is not None:
            import multiprocessing.process as mp_process
            import multiprocessing.spawn as mp_spawn

            # sys.path, the working directory, and the caller's main module
            # as __mp_main__, so that functions defined there unpickle.
            # Marked as multiprocessing's spawned child marks itself while
            # it imports the main module: a script without a __main__ guard
            # that calls again at import fails with multiprocessing's own
            # message (get_preparation_data's check), not a nested call.
            mp_process.current_process()._inheriting = True
            try:
                mp_spawn.prepare(prep)
            finally:
                del mp_process.current_process()._inheriting
        func, args, kwargs, codec = pickle.load(stream)
    except BaseException as e:
        # the caller's codec is not known yet: the error as plain data
        _call._write_all(outfd, _call._result._SAFE.error_frame(e, traceback.format_exc()))
        os._exit(1)
    _call.child_run(outfd, func, args, kwargs, codec)


if __name__ == "__main__":
    main()
