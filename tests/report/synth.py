# SPDX-License-Identifier: LGPL-2.1-or-later
"""Synthetic leash reports whose right answer is known, and that answer
computed here, independently of leash, from the model in leash(1) SUGGEST.

  synth.py write DIR SPEC.json   -> DIR/job-N.json (schema 1 reports)
  synth.py expect SPEC.json H Q  -> the expected `leash suggest --format json`
                                    figures for headroom H % and quantile Q
A SPEC is a list of jobs: {"mem": MiB, "cpu": s, "wall": s, "pids": n,
"reason": "ok"|"memory"|..., "exit": code, "limits": {"memory": MiB, ...}}.
"""
import json, math, sys

MIB = 1 << 20
RES = ["memory", "cpu-time", "wall-time", "pids", "cpus"]


def report(j, i):
    lim = {}
    for k, v in j.get("limits", {}).items():
        unit = {"memory": "bytes", "pids": "count", "cpus": "cores"}.get(k, "s")
        lim[k] = {"value": v * MIB if k == "memory" else v, "unit": unit,
                  "enforced_by": "leash" if k.endswith("time") else "cgroup"}
    return {"schema": 1, "leash_version": "synthetic", "command": ["job", str(i)],
            "cgroup": "/sys/fs/cgroup/leash/%s@%d" % (j.get("name", "synth"), 1000 + i),
            "profile": j.get("profile"), "profile_source": None,
            "started": "2026-01-01T00:00:%02d.000000Z" % (i % 60), "pid": 2000 + i,
            "reason": j.get("reason", "ok"),
            "exit": {"code": j.get("exit", 0), "status": 0, "signal": None, "interrupted_by": None},
            "limits": lim, "policy": {"soft_signal": "XCPU", "grace_s": 1, "strict": False},
            "usage": {"wall_time_s": j["wall"], "cpu_time_s": j["cpu"], "memory_peak_bytes": j["mem"] * MIB,
                      "memory_peak_basis": "memory.peak", "pids_peak": j.get("pids"),
                      "oom_kills": 1 if j.get("reason") == "memory" else 0},
            # "tasks": a sampled peak of tasks, where a host has no pids.peak ("pids": None)
            "sampling": {"peaks": {"threads": {"value": j["tasks"], "basis": "cgroup.threads"}}} if "tasks" in j else None,
            "signals": []}


def rnd(r, v):
    if r == "memory":
        return math.ceil(v / MIB - 1e-9) * MIB
    if r in ("cpu-time", "wall-time"):
        return math.ceil(v * 10 - 1e-9) / 10 if v < 10 else math.ceil(v - 1e-9)
    if r == "pids":
        return math.ceil(v - 1e-9)
    return math.ceil(v * 100 - 1e-9) / 100


def observations(spec, r):
    hit = {"memory": "memory", "cpu-time": "cpu_time", "wall-time": "wall_time", "pids": "pids"}
    out = []
    for j in spec:
        need = {"memory": j["mem"] * MIB, "cpu-time": j["cpu"], "wall-time": j["wall"], "pids": j["pids"],
                "cpus": j["cpu"] / j["wall"]}[r]
        weight = j["wall"] if r in ("memory", "pids", "cpus") else 1
        reason = j.get("reason", "ok")
        early = reason in ("memory", "cpu_time", "wall_time", "pids", "interrupted")
        cens = early and r != "cpus"
        if cens and reason == hit.get(r):
            key = {"memory": "memory", "cpu-time": "cpu_time", "wall-time": "wall_time", "pids": "pids"}[r]
            lim = j["limits"][key] * (MIB if r == "memory" else 1)
            need = max(need, lim)
        out.append((need, weight, cens))
    return out


def expect(spec, h, q):
    h = h / 100
    res = {}
    for r in RES:
        obs = observations(spec, r)
        n = len(obs)
        needs = sorted(o[0] for o in obs)
        top = needs[-1]
        retry = rnd(r, top * (1 + h))
        used = sum(o[0] * o[1] for o in obs) / n

        def cost(a):
            c, killed, unknown = 0, 0, 0
            for need, w, cens in obs:
                fits = not cens and need <= a
                if cens and a > need:
                    unknown += 1
                elif not fits:
                    killed += 1
                c += a * w + (0 if fits else retry * w)
            return c / n, killed, unknown

        k = max(1, math.ceil(q * n - 1e-9))
        strategies = {"max-seen": retry, "quantile": rnd(r, needs[k - 1] * (1 + h))}
        if r != "cpus":
            best = retry
            for need, w, cens in obs:
                a = rnd(r, need * (1 + h))
                if cens or a > retry:
                    continue
                if cost(a)[0] < cost(best)[0] - 1e-12 * abs(cost(best)[0]) or (
                        abs(cost(a)[0] - cost(best)[0]) <= 1e-12 * abs(cost(best)[0]) and a > best):
                    best = a
            strategies["min-waste"] = best
        out = {"jobs": n, "censored": sum(o[2] for o in obs), "max": top, "retry": retry, "strategies": {}}
        for s, a in strategies.items():
            c, killed, unknown = cost(a)
            out["strategies"][s] = {"limit": a, "killed": killed, "unknown": unknown, "waste": c - used}
        res[r] = out
    return res


if __name__ == "__main__":
    if sys.argv[1] == "write":
        spec = json.load(open(sys.argv[3]))
        for i, j in enumerate(spec):
            json.dump(report(j, i), open("%s/job-%03d.json" % (sys.argv[2], i), "w"))
    else:
        spec = json.load(open(sys.argv[2]))
        json.dump(expect(spec, float(sys.argv[3]), float(sys.argv[4])), sys.stdout)
