#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every C file of the tree is formatted as .clang-format says.
src=${LEASH_SRCDIR:?}
command -v clang-format >/dev/null || { echo "1..0 # SKIP clang-format is not installed"; exit 77; }
cd "$src" || exit 1
n=0 failed=0
for f in $(find src tests bench -name '*.c' -o -name '*.h' | sort); do
        n=$((n + 1))
        if clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
                echo "ok $n - $f"
        else
                failed=$((failed + 1))
                echo "not ok $n - $f (run: clang-format -i $f)"
        fi
done
echo "1..$n"
[ $failed = 0 ]
