# SPDX-License-Identifier: LGPL-2.1-or-later
"""leash.run: a command in its own job, with subprocess.run's keywords.

Theory of operation. With the caller's own standard streams the command is
started by the library (Job.start: exec errors reported as such). Asked to
redirect one (``stdin``/``stdout``/``stderr``, ``input``,
``capture_output``), the job forks this interpreter into its cgroup
(Job.fork, the sandbox applied, the library's fds dropped), and the child
puts the given fds on 0, 1 and 2 and execs; an exec that fails writes its
errno to a close-on-exec pipe, which the parent reads at EOF (empty: the
exec happened). This thread then supervises the job while it feeds
``input`` and drains the output pipes, all in one select loop, so a command
that writes more than a pipe holds never blocks on a full pipe; once the
job has ended (its processes killed by the library) what is left in the
pipes is read without blocking. ``timeout`` is the job's wall time.
"""

import errno
import json
import locale
import os
import selectors
import shutil
import subprocess

from . import _call, _errors, _settings

_PIPE, _DEVNULL, _STDOUT = subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT


class CompletedRun(subprocess.CompletedProcess):
    """subprocess.CompletedProcess with the job's ``report`` (a dict).
    ``returncode``: the command's exit status, or -N when signal N ended it
    (127/126 when it could not be executed). Reading it as the report
    (``result["reason"]``, ``result.get("usage")``) still works: leash.run
    returned the report itself before it took subprocess.run's keywords."""

    def __init__(self, args, returncode, stdout=None, stderr=None, report=None):
        super().__init__(args, returncode, stdout, stderr)
        self.report = report

    def __getitem__(self, key):
        return self.report[key]

    def get(self, key, default=None):
        """The report's ``key`` (as a dict's get)."""
        return self.report.get(key, default)

    def __contains__(self, key):
        return key in self.report


def _returncode(report):
    ex = report.get("exit") or {}
    if ex.get("signal"):
        import signal

        try:
            return -int(signal.Signals["SIG" + ex["signal"]])
        except KeyError:
            pass
    if ex.get("status") is not None:
        return ex["status"]
    return ex.get("code", 125)


def _exec_path(argv0, env):
    """The file execvp would run, searched with the job's PATH; None when
    there is none."""
    if os.sep in argv0:
        return argv0
    path = (env if env is not None else os.environ).get("PATH", os.defpath)
    return shutil.which(argv0, path=path)


def _env_settings(env):
    """subprocess.run's env= (the whole environment) as leash's options."""
    if env is None:
        return {}
    minimal = ("PATH", "HOME", "USER", "LOGNAME", "SHELL")  # what --clean-env keeps
    out = {"clean_env": True, "env": {os.fsdecode(k): os.fsdecode(v) for k, v in env.items()}}
    gone = [k for k in minimal if k not in out["env"]]
    if gone:
        out["unsetenv"] = gone
    return out


class _Streams:
    """The fds a redirected command gets on 0, 1, 2 and this side's ends
    (made by _call's pipe(): no other call's child inherits them)."""

    def __init__(self, stdin, stdout, stderr):
        self.child = [None, None, None]
        self.mine = {}  # parent's fd -> 0 (feed stdin), 1 or 2 (read)
        self._own = []  # fds this side closes
        try:
            for target, how in enumerate((stdin, stdout, stderr)):
                self._one(target, how)
        except BaseException:
            self.close()
            raise

    def _one(self, target, how):
        if how is None:
            return
        if how == _STDOUT and target == 2:
            self.child[2] = self.child[1] if self.child[1] is not None else self._dup(1)
        elif how == _PIPE:
            r, w = _call._new_pipe()
            mine, child = (w, r) if target == 0 else (r, w)
            self.mine[mine] = target
            self._own.append(mine)
            self.child[target] = child
        elif how == _DEVNULL:
            self.child[target] = os.open(os.devnull, (os.O_RDONLY if target == 0 else os.O_WRONLY) | os.O_CLOEXEC)
        else:
            fd = how if isinstance(how, int) else how.fileno()
            self.child[target] = self._dup(fd)

    @staticmethod
    def _dup(fd):
        return os.dup(fd)  # close-on-exec; handed to the child and closed here by Job.fork

    def keep(self):
        return tuple(sorted({fd for fd in self.child if fd is not None}))

    def close(self):
        for fd in self._own:
            try:
                _call._close(fd)
            except OSError:
                pass
        self._own = []


def _fork_exec(job, argv, path, streams):
    """The redirected start: the errno of a failed exec, else 0."""
    er, ew = _call._new_pipe()
    try:
        pid = job.fork(keep=streams.keep() + (ew,))
        if pid == 0:
            code = errno.ENOENT
            try:
                for target, fd in enumerate(streams.child):
                    if fd is not None:
                        os.dup2(fd, target)
                os.execv(path, argv)
            except OSError as e:
                code = e.errno or errno.EIO
            finally:
                try:
                    os.write(ew, code.to_bytes(4, "little"))
                finally:
                    os._exit(127 if code == errno.ENOENT else 126)
        data = b""
        while True:  # EOF once the child has exec'd or exited: its end is close-on-exec
            chunk = os.read(er, 4)
            if not chunk:
                break
            data += chunk
        return int.from_bytes(data[:4], "little") if len(data) >= 4 else 0
    finally:
        _call._close(er)


def _pump(job, streams, feed):
    """Supervise the job, feeding stdin and draining the output pipes; the
    output read, by target (1, 2)."""
    got = {1: [], 2: []}
    sel = selectors.DefaultSelector()
    try:
        sel.register(job.fileno(), selectors.EVENT_READ, None)
        for fd, target in streams.mine.items():
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_WRITE if target == 0 else selectors.EVENT_READ, target)
        ended = False
        while True:
            if not ended and job.dispatch():
                ended = True
                sel.unregister(job.fileno())
            if ended and not sel.get_map():
                break
            ready = sel.select(0 if ended else None)
            if ended and not ready:
                break  # the job has ended: what was in the pipes is read
            for key, _ in ready:
                if key.data is not None and _io(key.fd, key.data, feed, got):
                    sel.unregister(key.fd)
                    streams.mine.pop(key.fd, None)
                    streams._own.remove(key.fd)
                    _call._close(key.fd)
    finally:
        sel.close()
    return {t: b"".join(v) for t, v in got.items()}


def _io(fd, target, feed, got):
    """One write to stdin or read of an output; True when that pipe is done."""
    try:
        if target == 0:
            if not feed[0]:
                return True
            n = os.write(fd, feed[0][: 1 << 16])
            feed[0] = feed[0][n:]
            return not feed[0]
        data = os.read(fd, 1 << 16)
    except BlockingIOError:
        return False
    except BrokenPipeError:
        return True
    if not data:
        return True
    got[target].append(data)
    return False


def _decode(data, text, encoding, errors):
    if data is None or not text:
        return data
    s = data.decode(encoding or locale.getpreferredencoding(False), errors or "strict")
    return s.replace("\r\n", "\n").replace("\r", "\n")


def run(argv, check, name, io, limits, defaults):
    """leash.run's body (see its docstring): ``io`` holds subprocess.run's
    keywords."""
    if isinstance(argv, (str, bytes)) or not argv:
        raise ValueError("leash.run: argv must be a non-empty list of strings, not {!r}".format(argv))
    argv = [os.fsdecode(a) for a in argv]
    stdin, stdout, stderr, data = io["stdin"], io["stdout"], io["stderr"], io["input"]
    text = bool(io["text"] or io["universal_newlines"] or io["encoding"] or io["errors"])
    if io["capture_output"]:
        if stdout is not None or stderr is not None:
            raise ValueError("leash.run: stdout and stderr arguments may not be used with capture_output")
        stdout = stderr = _PIPE
    if data is not None:
        if stdin is not None:
            raise ValueError("leash.run: stdin and input arguments may not both be used")
        stdin = _PIPE
    feed = [b"" if data is None else data.encode(io["encoding"] or locale.getpreferredencoding(False),
                                                   io["errors"] or "strict") if isinstance(data, str) else bytes(data)]
    if io["timeout"] is not None:
        if limits.get("wall_time") is not None:
            raise ValueError("leash.run: timeout is the wall time: give one of timeout and wall_time")
        limits["wall_time"] = io["timeout"]
    if io["cwd"] is not None:
        limits.setdefault("chdir", os.fsdecode(io["cwd"]))
    limits.update(_env_settings(io["env"]))
    named = {k: limits.pop(k) for k in list(limits) if k in _settings._NAMED}
    settings = defaults + _settings.build_settings(named, limits)
    redirected = stdin is not None or stdout is not None or stderr is not None
    path = _exec_path(argv[0], io["env"]) if redirected else None
    streams = _Streams(stdin, stdout, stderr) if redirected else None
    exec_errno = 0
    try:
        job = _call.new_job(settings, name or _call_name(argv[0]))
        try:
            if not redirected:
                job.start(argv)
            else:  # a command not found: execv's ENOENT names it the same way
                exec_errno = _fork_exec(job, argv, path or argv[0], streams)
            try:
                out = _pump(job, streams or _Streams(None, None, None), feed)
            except BaseException:
                job.abort()
                raise
            report = json.loads(job.finish())
        finally:
            job.close()
    finally:
        if streams is not None:
            streams.close()
    return _completed(argv, report, out, exec_errno, check, io, text, named)


def _call_name(argv0):
    safe = "".join(c if c.isalnum() or c in "_.-" else "_" for c in os.path.basename(argv0)).lstrip(".")
    return (safe or "call")[:48]


def _completed(argv, report, out, exec_errno, check, io, text, named):
    stdout = _decode(out[1], text, io["encoding"], io["errors"]) if io["capture_output"] or io["stdout"] == _PIPE else None
    stderr = _decode(out[2], text, io["encoding"], io["errors"]) if io["capture_output"] or io["stderr"] == _PIPE else None
    reason = report.get("reason")
    exec_error = exec_errno or reason == "exec_error"
    returncode = (127 if exec_errno == errno.ENOENT else 126) if exec_errno else _returncode(report)
    if io["timeout"] is not None and reason == "wall_time":
        e = subprocess.TimeoutExpired(argv, io["timeout"], output=stdout, stderr=stderr)
        e.report = report
        raise e
    if check and (exec_error or reason not in ("ok",)):
        if exec_error:
            ex = report.get("exit") or {}
            code = exec_errno or ex.get("errno") or errno.ENOENT
            e = _errors.SetupError(
                "leash.run: could not run {!r}: {}".format(argv[0], os.strerror(code)), code, "exec", report
            )
            e.filename = argv[0]
            raise e
        o = _call.outcome(report, None, "the command {!r}".format(argv[0]), named.get("memory") is not None)
        if o.exception is not None:
            raise o.exception
    return CompletedRun(argv, returncode, stdout, stderr, report)
