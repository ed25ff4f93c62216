"""The cost of driving a run from Python (issue 32's target: a Python-driven epoch within 2 % of
`strata train`'s, the callback included): the same run — GCN 3 x 256 on a generated graph, 2
threads, 20 epochs — alternately through `strata train` and through strata.Trainer.fit with a
callback, each in a fresh process pinned to the same cores, R rounds; compares the median epoch
time.
    .venv/bin/python python/bench/overhead.py GRAPH.h5 [rounds] [--profile] [--cli PATH]
GRAPH.h5: `strata generate --nodes 200000 --avg-degree 25 --features 100 --classes 47 --out g.h5`.
Python's epochs are timed two ways: epoch_s of its metrics file (what `strata train` records), and
the wall time from one callback to the next (everything: the epoch, every hook, the callback).
--profile: both runs time the training step's phases (`profile`, docs/training.md) and the
medians of each phase are compared, to find where a difference lies. --cli: another `strata`
program to compare with (default: the one installed beside the module, built with it)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import strata

CHILD = r"""
import json, sys, time
import strata
times = []
def callback(record):
    times.append(time.perf_counter())
t = strata.Trainer(sys.argv[1], model="gcn", layers=3, hidden=256, threads=2, epochs=20,
                   seed=1, metrics=sys.argv[2], profile=sys.argv[3] == "1")
t.fit(callback=callback)
print(json.dumps([b - a for a, b in zip(times, times[1:])]))
"""


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f][1:]  # the first epoch (it holds the config) warms up


def median_ms(values):
    return statistics.median(values) * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("graph")
    parser.add_argument("rounds", type=int, nargs="?", default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--cli", default=strata.cli_path())
    parser.add_argument("--cores", default="0,1", help="taskset -c list for both runs")
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="2")
    pin = ["taskset", "-c", args.cores] if args.cores else []
    cli, py, py_wall = [], [], []
    with tempfile.TemporaryDirectory() as d:
        for r in range(args.rounds):
            m = os.path.join(d, f"cli{r}.jsonl")
            subprocess.run(pin + [args.cli, "train", "--data", args.graph, "--model", "gcn",
                                  "--layers", "3", "--hidden", "256", "--threads", "2",
                                  "--epochs", "20", "--seed", "1", "--metrics", m, "--quiet"]
                           + (["--profile"] if args.profile else []),
                           check=True, env=env, stdout=subprocess.DEVNULL)
            cli += records(m)
            m = os.path.join(d, f"py{r}.jsonl")
            out = subprocess.run(pin + [sys.executable, "-c", CHILD, args.graph, m,
                                        "1" if args.profile else "0"],
                                 check=True, env=env, capture_output=True, text=True).stdout
            py += records(m)
            py_wall += json.loads(out.strip().splitlines()[-1])[1:]
    c = median_ms([x["epoch_s"] for x in cli])
    p = median_ms([x["epoch_s"] for x in py])
    w = median_ms(py_wall)
    print(f"{args.rounds} rounds x 19 epochs, load average {os.getloadavg()[0]:.2f}: median epoch "
          f"strata train {c:.1f} ms; Python epoch_s {p:.1f} ms ({100 * (p / c - 1):+.2f} %), "
          f"Python callback to callback {w:.1f} ms ({100 * (w / c - 1):+.2f} %)")
    if args.profile:
        for key in cli[0]["phases"]:
            a = median_ms([x["phases"][key] for x in cli])
            b = median_ms([x["phases"][key] for x in py])
            print(f"  {key:16s} strata train {a:8.1f} ms  Python {b:8.1f} ms  ({b - a:+7.1f} ms)")
        for key in ("compute_s", "wait_s", "eval_s"):
            a = median_ms([x[key] for x in cli])
            b = median_ms([x[key] for x in py])
            print(f"  {key:16s} strata train {a:8.1f} ms  Python {b:8.1f} ms  ({b - a:+7.1f} ms)")


if __name__ == "__main__":
    main()
