#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Small functions (issue 27: "no function over ~80 lines in the engine";
# CONVENTIONS.md): no C function of src/ or python/src longer than LIMIT lines,
# from the line of its opening brace to its closing one. The functions that
# were longer when the rule came are listed in LONG by file name and function;
# each is checked to still be long (a TODO, reported and not failing), so the
# list only shrinks (a TAP TODO: not ok, an expected failure). None of them is in
# the engine. TAP; LEASH_SRCDIR.
import os, re, sys

LIMIT = 80
src = os.environ.get("LEASH_SRCDIR") or "."
LONG = set()  # (file name, function): none left since issue 43


def functions(path):
    """(name, first line, length) of each top-level function body."""
    txt = open(path, errors="replace").read()
    txt = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), txt, flags=re.S)
    txt = re.sub(r"//[^\n]*", "", txt)
    txt = re.sub(r'"(\\.|[^"\\\n])*"', '""', txt)
    txt = re.sub(r"'(\\.|[^'\\\n])*'", "''", txt)
    lines = txt.split("\n")
    depth, start = 0, None
    for i, line in enumerate(lines):
        for ch in line:
            if ch == "{":
                if depth == 0 and re.search(r"\)\s*\{\s*$", line):
                    start = i
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and start is not None:
                    j = start
                    while j > 0 and "(" not in lines[j]:
                        j -= 1
                    m = re.search(r"(\w+)\s*\(", lines[j])
                    yield (m.group(1) if m else "?"), start + 1, i - start + 1
                    start = None


files = []
for top in ("src", "python/src"):
    for d, _, names in os.walk(os.path.join(src, top)):
        files += [os.path.join(d, n) for n in names if n.endswith(".c")]
n = failed = 0
seen = set()
for path in sorted(files):
    rel = os.path.relpath(path, src)
    long = [(name, line, length) for name, line, length in functions(path) if length > LIMIT]
    for name, line, length in long:
        key = (os.path.basename(path), name)
        n += 1
        if key in LONG:
            seen.add(key)
            # a TAP TODO: "not ok ... # TODO" is an expected failure (automake's
            # XFAIL); "ok ... # TODO" would be an unexpected pass, an error
            print(f"not ok {n} - {rel}:{line} {name}: {length} lines # TODO longer than {LIMIT}, listed to shrink")
        else:
            failed += 1
            print(f"not ok {n} - {rel}:{line} {name}: {length} lines, over {LIMIT}")
    if not long:
        n += 1
        print(f"ok {n} - {rel}: no function over {LIMIT} lines")
for key in sorted(LONG - seen):
    n += 1
    failed += 1
    print(f"not ok {n} - {key[0]} {key[1]} is no longer over {LIMIT} lines (or gone): take it off LONG")
print(f"1..{n}")
sys.exit(1 if failed else 0)
