#!/usr/bin/python3
"""Every figure of two machine.json files (strata calibrate) side by side, with the relative
difference |b - a| / min(a, b) and, from version 2 on, each figure's spread over rounds.

Usage: bench/compare_machines.py A.json B.json [--limit 0.10]
Exit status 1 when a figure the model uses differs by more than --limit (default 10 %).
"""
import argparse
import json
import sys


def figures(path):
    """name -> (value, spread or None) for every timed figure of the file."""
    m = json.load(open(path))
    out = {}
    for r in m["by_threads"]:
        t = r["threads"]
        spread = r.get("spread", {})
        for key, value in r.items():
            if key in ("threads", "spread"):
                continue
            if isinstance(value, list):
                for p in value:
                    name = f"{key}@{p['x']:g}"
                    out[f"t{t} {name}"] = (p["rate"], spread.get(name))
            else:
                out[f"t{t} {key}"] = (value, spread.get(key))
    # The network figures calibrate measured under mpirun (version 3 says which; version 4 adds
    # the paired link), their spreads.
    for net, measured in (("shared_memory", "mpi_measured"), ("inter_node", "inter_node_measured"),
                          ("inter_node_paired", "inter_node_measured")):
        if m.get(measured) and net in m:
            for key in ("latency_s", "bandwidth_gbs"):
                out[f"{net}.{key}"] = (m[net][key], m.get("network_spread", {}).get(f"{net}.{key}"))
    return m, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--limit", type=float, default=0.10)
    args = parser.parse_args()
    ma, fa = figures(args.a)
    mb, fb = figures(args.b)
    print(f"{args.a}: version {ma['version']}; {args.b}: version {mb['version']}")
    print(f"{'figure':34s} {'a':>12s} {'b':>12s} {'diff':>7s} {'spread a':>9s} {'spread b':>9s}")
    worst = (0.0, "")
    over = 0
    for name in fa:
        if name not in fb:
            continue
        (va, sa), (vb, sb) = fa[name], fb[name]
        low = min(abs(va), abs(vb))
        diff = abs(vb - va) / low if low > 0 else (0.0 if va == vb else float("inf"))
        pct = lambda s: "" if s is None else f"{100 * s:.1f} %"
        flag = " *" if diff > args.limit else ""
        over += diff > args.limit
        if diff > worst[0]:
            worst = (diff, name)
        print(f"{name:34s} {va:12.5g} {vb:12.5g} {100 * diff:6.1f}% {pct(sa):>9s} {pct(sb):>9s}{flag}")
    print(f"{over} of {len([n for n in fa if n in fb])} figures differ by more than "
          f"{100 * args.limit:.0f} %; the largest: {worst[1]} {100 * worst[0]:.1f} %")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
