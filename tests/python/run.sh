#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Python package's tests (pytest, Debian's python3-pytest) against the
# build tree, as TAP: one line per pytest test (tests/python/tap.py).
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-}
if [ -z "$py" ]; then
        echo "1..0 # SKIP configured without Python (no python3-dev): the leash package is not built"
        exit 0
fi
if ! "$py" -c 'import pytest' 2>/dev/null; then
        [ "${CI:-false}" = true ] && { echo "Bail out! pytest missing for $py (python3-pytest)"; exit 1; }
        echo "1..0 # SKIP pytest is not installed for $py (Debian: python3-pytest)"
        exit 0
fi
export PYTHONPATH="$LEASH_PYTHONPATH:$here${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
# A sanitizer build instruments libleash inside the extension: the
# interpreter needs the sanitizer's runtime loaded first.
case "${LEASH_SAN_CFLAGS:-}" in
*sanitize=address*)
        rt=$(${LEASH_CC:-cc} -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
        [ -f "$rt" ] || rt=$(${LEASH_CC:-cc} -print-file-name=libasan.so 2>/dev/null)
        export LD_PRELOAD="$rt" ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}"
        ;;
*sanitize=undefined*)
        rt=$(${LEASH_CC:-cc} -print-file-name=libclang_rt.ubsan_standalone-x86_64.so 2>/dev/null)
        [ -f "$rt" ] && export LD_PRELOAD="$rt"
        ;;
esac
# 10,000 calls in a row take minutes; under a sanitizer (several times
# slower, and looking for memory errors, not leaks of jobs) 1,000 do.
[ -n "${LEASH_SAN_CFLAGS:-}" ] && export LEASH_PY_CALLS=${LEASH_PY_CALLS:-1000}
# pytest's own report goes to stderr (the log); TAP to fd 3 = stdout.
exec 3>&1
[ $# -gt 0 ] || set -- "$here"
# pytest's tmp_path directories in one of this run's, removed after it
# (pytest's own default keeps three runs' worth in /tmp/pytest-of-USER)
base=$(mktemp -d "${TMPDIR:-/tmp}/leash-pytest.XXXXXX") || exit 1
trap 'rm -rf "$base"' EXIT
# A hung test must not hang the run (a fork from a thread can inherit a lock
# another thread held: issue 42's executor): with Debian's
# python3-pytest-timeout, a test past LEASH_PY_TIMEOUT seconds (default 480:
# five times the slowest test on a loaded 2-core machine) has every thread's
# stack dumped to the log and the run ends, failed; without it, no bound.
# (pytest loads the installed plugin by its entry point; "-p pytest_timeout"
# on top of that is refused as registered twice, so -p only without autoload)
timeout=()
if "$py" -c 'import pytest_timeout' 2>/dev/null; then
        [ -n "${PYTEST_DISABLE_PLUGIN_AUTOLOAD:-}" ] && timeout=(-p pytest_timeout)
        timeout+=(--timeout="${LEASH_PY_TIMEOUT:-480}" --timeout-method=thread)
fi
cd "$here" && "$py" -m pytest -p tap -p no:cacheprovider "${timeout[@]}" --basetemp="$base/t" -q -rs "$@" 1>&2
