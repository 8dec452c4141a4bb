#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every C file of the tree is formatted as .clang-format says.
src=${LEASH_SRCDIR:?}
# The tree is formatted by clang-format 14 (Debian 12's); other majors format
# some constructs differently, so another version skips instead of failing.
want=14
CF=$(command -v clang-format-$want || command -v clang-format) || { echo "1..0 # SKIP clang-format is not installed"; exit 0; }
have=$("$CF" --version | sed -n 's/.*clang-format version \([0-9]*\)\..*/\1/p')
[ "$have" = "$want" ] || { echo "1..0 # SKIP $CF is version ${have:-unknown}, the tree is formatted with $want"; exit 0; }
cd "$src" || exit 1
n=0 failed=0
for f in $(find src tests bench python -name '*.c' -o -name '*.h' | sort); do
        n=$((n + 1))
        if "$CF" --dry-run --Werror "$f" >/dev/null 2>&1; then
                echo "ok $n - $f"
        else
                failed=$((failed + 1))
                echo "not ok $n - $f (run: clang-format -i $f)"
        fi
done
echo "1..$n"
[ $failed = 0 ]
