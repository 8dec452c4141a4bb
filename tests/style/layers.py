#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Dependencies point one way (issue 27): the module graph of src/ has no
# circle, and none of the arrows that ran the wrong way comes back.
# A module is a file's stem in its folder (src/engine/job/job.c and
# src/engine/job/job.h are src/engine/job/job). A depends on B when A includes
# B's header (#include "...") or when A's object calls or reads a name B's
# object defines (nm over the built objects: a call through a header declared
# elsewhere, e.g. leash.h, is an arrow too). The folders are the parts (issues 27, 43): every folder of
# src/ with sources is in FOLDERS and has a README.md, and one of the engine
# at most MAX_C C files.
# TAP; LEASH_SRCDIR, and the build found from LEASH.
import os, re, subprocess, sys

src = os.environ.get("LEASH_SRCDIR") or "."
leash = os.environ.get("LEASH", "")
build = os.environ.get("LEASH_BUILDDIR") or (os.path.dirname(os.path.dirname(os.path.dirname(leash))) if leash else "")
# The folders from the bottom up (ARCHITECTURE.md, "Module map"): a module
# may depend on its own folder's and on the folders below it, never above.
# The engine's folders (src/engine/README.md) in the order of its graph:
# leash.h (src/engine) holds hardware's device rule and GPU track; the job
# object's data (process/job-object.h) is read by tree.c, whose pids sample.c
# takes, whose figures spec.c names, which placement uses, which the job uses.
FOLDERS = ["src/basic", "src/sandbox",
           "src/engine/hardware", "src/engine", "src/engine/cgroup", "src/engine/process",
           "src/engine/sample", "src/engine/spec", "src/engine/placement", "src/engine/job",
           "src/settings", "src/report", "src/render", "src/slurm", "src/cli"]
# C files in one folder of the engine (issue 43: "no folder over 15 C
# files"): past that, a folder holds several parts. The engine's only for
# now: src/cli, split by its own work in parallel, is to be counted too.
MAX_C, MAX_C_UNDER = 15, "src/engine"
# module -> modules it must never depend on (the arrows issue 27 cut)
# Arrows still to cut, each a TAP TODO (reported, not failing the suite) and
# each checked to still exist, so this list only shrinks. None today.
TODO = {}
# The folder rule's arrows still to cut: a module that depends on a folder
# above its own. Each a TAP TODO, each checked to still exist, so this list
# only shrinks; an arrow up that is not here fails.
UPWARD_TODO = {}
FORBIDDEN = {
    "src/engine/job/job": ["src/report/report"],  # the engine formats no report
    "src/engine/job/supervise": ["src/engine/job/job"],  # the events are below the job's life
    "src/report/report": ["src/slurm/slurm"],  # the result writer knows no scheduler
    "src/engine/placement/host": ["src/engine/placement/placement"],  # host discovery is below placement (hostprobe.c uses both)
    "src/sandbox/sandbox": ["src/engine/process/spawn", "src/engine/process/spawn-step"],  # an adapter knows no spawner
    # a page is drawn from reports: limit and figure names and units come
    # through src/report (history.h), never from the engine (issue 43). A
    # name ending in "/" is every module in that folder and below it.
    "src/render/": ["src/engine/"],
}
# FORBIDDEN's modules that no longer exist: the entry keeps them from coming
# back. Any other name FORBIDDEN holds must exist (a move renames it).
GONE = {"src/engine/process/spawn-step"}


def folder(mod):
    return os.path.dirname(mod)


def upward(a, b):
    """a depends on b, and b's folder is above a's in FOLDERS."""
    fa, fb = folder(a), folder(b)
    return fa in FOLDERS and fb in FOLDERS and FOLDERS.index(fb) > FOLDERS.index(fa)


def matches(mod, name):
    """mod is the module name, or in the folder name ("src/render/") or below it."""
    return mod.startswith(name) if name.endswith("/") else mod == name


def module(path):
    return os.path.splitext(os.path.normpath(path))[0]


def include_edges():
    edges = {}
    for folder in FOLDERS:
        d = os.path.join(src, folder)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if not f.endswith((".c", ".h")):
                continue
            a = module(os.path.join(folder, f))
            with open(os.path.join(d, f), errors="replace") as fh:
                for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', fh.read(), re.M):
                    target = os.path.normpath(os.path.join(folder, m.group(1)))
                    if os.path.exists(os.path.join(src, target)):
                        b = module(target)
                        if b != a:
                            edges.setdefault(a, {})[b] = "includes " + m.group(1)
    return edges


def symbol_edges(edges):
    """The built objects (libleash.a's and the CLI's): who uses whose names."""
    objs = {}
    for folder in FOLDERS:
        d = os.path.join(build, folder)
        if not build or not os.path.isdir(d):
            continue
        for f in os.listdir(d):
            # lib_libleash_a-job.o (libleash.a's, in a folder other than
            # src/lib), leash-slurm.o, closest.o (libbasic.a's); not the
            # shared library's copies
            if "libleash_so" in f:
                continue
            m = re.match(r"^(?:(?:lib_)?libleash_a-|libbasic_a-|leash-)?(.+)\.o$", f)
            if m:
                objs[os.path.join(folder, m.group(1))] = os.path.join(d, f)
    if not objs:
        return False
    defined, undefined = {}, {}
    for mod, path in objs.items():
        try:
            out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
        except OSError:  # no nm: the include graph only
            return False
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                undefined.setdefault(mod, set()).add(parts[1])
            elif len(parts) == 3 and parts[1] in "TDBR":
                defined.setdefault(parts[2], mod)
    for mod, names in undefined.items():
        for n in sorted(names):
            b = defined.get(n)
            if b and b != mod:
                edges.setdefault(mod, {}).setdefault(b, "uses " + n)
    return True


def cycles(edges):
    """Tarjan: the strongly connected components with more than one module."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(set(edges) | {w for e in edges.values() for w in e}):
        if v not in index:
            visit(v)
    return out


def folder_checks(edges, ok):
    """Every folder of src/ with sources is ordered and has a README.md, and
    one of MAX_C_UNDER at most MAX_C C files; every name of FORBIDDEN is a
    module (or folder) that exists, or is listed in GONE (a move renames
    them, never drops them)."""
    unordered, nodoc, big = [], [], []
    for d, _, names in sorted(os.walk(os.path.join(src, "src"))):
        rel = os.path.relpath(d, src)
        c = [n for n in names if n.endswith(".c")]
        if not c and not any(n.endswith(".h") for n in names):
            continue
        if rel not in FOLDERS:
            unordered.append(rel)
        if "README.md" not in names:
            nodoc.append(rel)
        if len(c) > MAX_C and (rel + "/").startswith(MAX_C_UNDER + "/"):
            big.append("%s: %d C files" % (rel, len(c)))
    ok(not unordered, "every folder of src/ with sources is in FOLDERS", unordered)
    ok(not nodoc, "every folder of src/ with sources has a README.md", nodoc)
    ok(not big, "no folder of %s holds more than %d C files" % (MAX_C_UNDER, MAX_C), big)
    modules = {module(os.path.join(f, n)) for f in FOLDERS if os.path.isdir(os.path.join(src, f))
               for n in os.listdir(os.path.join(src, f)) if n.endswith((".c", ".h"))}

    def named(name):  # a module, or a folder ("src/render/": every module in it and below)
        return os.path.isdir(os.path.join(src, name)) if name.endswith("/") else name in modules

    stale = [a for a in FORBIDDEN if not named(a)]
    stale += ["%s -> %s" % (a, b) for a, bs in FORBIDDEN.items() for b in bs if not named(b) and b not in GONE]
    ok(not stale, "every FORBIDDEN entry names modules that exist (or GONE ones)", stale)


def main():
    edges = include_edges()
    have_objs = symbol_edges(edges)
    t = 0
    failed = 0

    def ok(good, what, detail=()):
        nonlocal t, failed
        t += 1
        print(("ok" if good else "not ok") + " %d - %s" % (t, what))
        for d in detail:
            print("# " + d)
        failed += not good

    if not have_objs:
        print("# no built objects found (LEASH=%s): the include graph only" % leash)
    folder_checks(edges, ok)
    known = {}
    for (a, b), why in TODO.items():
        if b in edges.get(a, {}):
            known[(a, b)] = edges[a].pop(b)
        else:
            ok(False, "%s -> %s is listed in TODO but gone: take it off the list" % (a, b))
    comps = cycles(edges)
    detail = []
    for c in comps:
        detail.append("circle: " + ", ".join(c))
        for a in c:
            for b, why in sorted(edges.get(a, {}).items()):
                if b in c:
                    detail.append("  %s -> %s (%s)" % (a, b, why))
    ok(not comps, "the module graph of src/ has no circle", detail)
    for a, bs in FORBIDDEN.items():
        for b in bs:
            if (a, b) in known:
                continue
            bad = ["%s -> %s (%s)" % (x, y, why) for x in sorted(edges) if matches(x, a)
                   for y, why in sorted(edges[x].items()) if matches(y, b)]
            ok(not bad, "%s does not depend on %s" % (a, b), bad)
    up = [(a, b, why) for a in sorted(edges) for b, why in sorted(edges[a].items()) if upward(a, b)]
    for (a, b) in sorted(UPWARD_TODO):
        if not any(x == a and y == b for x, y, _ in up):
            ok(False, "%s -> %s is listed in UPWARD_TODO but gone: take it off the list" % (a, b))
    ok(all((a, b) in UPWARD_TODO for a, b, _ in up),
       "no module depends on a folder above its own (%s, from the bottom)" % " < ".join(FOLDERS),
       ["%s -> %s (%s)" % (a, b, why) for a, b, why in up if (a, b) not in UPWARD_TODO])
    for a, b, why in up:
        if (a, b) in UPWARD_TODO:
            t += 1
            print("not ok %d - %s does not depend on %s, above it # TODO %s (%s)" % (t, a, b, UPWARD_TODO[(a, b)], why))
    for (a, b), why in sorted(known.items()):
        t += 1
        print("not ok %d - %s does not depend on %s # TODO %s (%s)" % (t, a, b, TODO[(a, b)], why))
    print("1..%d" % t)
    return 1 if failed else 0


sys.exit(main())
