#!/usr/bin/env python3
"""Compressed halos' accuracy, paired by seed against fp32 (issue 31's accuracy target).

Every setup runs once per seed at each precision (fp32, bf16, int8) with everything else equal
(same seed, ranks, threads, recipe; `--guard off`, so the precision guard cannot switch a lossy
run back to fp32 and hide what compression costs). For each lossy precision the paired
difference d_s = acc(precision, seed s) - acc(fp32, seed s) of test accuracy (at the recipe's
best epoch) is summarised as its mean and a 95 % t-interval. Bars: mean d >= -0.003 (bf16) and
>= -0.005 (int8), i.e. at most 0.3 / 0.5 points lost on average.

Setups (suite "full"): Cora GCN and GAT, 20 seeds, K = 2 and 4; Cora GCNII-64, 5 seeds, K = 2
(400 epochs, evaluated every 5); the harder generated task (`strata generate --preset hard`,
20 000 vertices) GCN and SAGE, 3 seeds, K = 2. Suite "smoke" (CI): Cora GCN, K = 2, 2 seeds,
40 epochs, loose bars (only that it runs and compression is not broken).

  bench/precision_accuracy.py --strata build/release/apps/strata --json out.json
  bench/precision_accuracy.py --suite smoke --strata build/dev/apps/strata

`--rounding stochastic` runs bf16 and int8 with `--halo-rounding stochastic` (a `--cache` then
belongs to one rounding: its records do not say which).

Exit status 1 when a mean difference misses its bar.
"""
import argparse
import concurrent.futures as futures
import json
import math
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from accuracy import run_one, select  # noqa: E402  (one way to run strata train and read its accuracy)

PRECISIONS = ["fp32", "bf16", "int8"]
BARS = {"bf16": -0.003, "int8": -0.005}
SMOKE_BARS = {"bf16": -0.03, "int8": -0.05}
CORA = "data/cora.h5"
HARD = "hard"  # the generated graph, made on first use (see hard_graph)
GCN = ["--model", "gcn", "--row-normalize-features"]
GENERATED = ["--no-row-normalize-features", "--epochs", "100", "--eval-every", "10"]
# name: (graph, ranks, seeds, strata train arguments)
FULL = {
    "cora gcn K=2": (CORA, 2, 20, GCN),
    "cora gcn K=4": (CORA, 4, 20, GCN),
    "cora gat K=2": (CORA, 2, 20, ["--model", "gat"]),
    "cora gat K=4": (CORA, 4, 20, ["--model", "gat"]),
    "cora gcnii-64 K=2": (CORA, 2, 5, ["--model", "gcnii", "--layers", "64", "--epochs", "400",
                                       "--patience", "0", "--eval-every", "5"]),
    "hard gcn K=2": (HARD, 2, 3, ["--model", "gcn"] + GENERATED),
    "hard sage K=2": (HARD, 2, 3, ["--model", "sage"] + GENERATED),
}
SMOKE = {"cora gcn K=2": (CORA, 2, 2, GCN + ["--epochs", "40"])}
SUITES = {"full": FULL, "smoke": SMOKE}


def hard_graph(strata, root):
    """The harder task's graph (docs/datasets.md, Presets), generated once under out/bench/."""
    path = os.path.join(root, "out/bench/hard20k.h5")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        subprocess.run([strata, "generate", "--nodes", "20000", "--avg-degree", "25", "--features",
                        "100", "--classes", "47", "--seed", "1", "--preset", "hard", "--out",
                        path], check=True, capture_output=True)
    return path


def t95(n):
    """Two-sided 95 % quantile of Student's t with n - 1 degrees of freedom."""
    try:
        from scipy import stats
        return float(stats.t.ppf(0.975, n - 1))
    except ImportError:  # the normal quantile: a narrower interval, said in the output
        return 1.96


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--strata", default=os.path.join(root, "build/release/apps/strata"))
    parser.add_argument("--suite", choices=sorted(SUITES), default="full")
    parser.add_argument("--only", default="", help="comma-separated setup names of the suite")
    parser.add_argument("--seeds", type=int, default=None, help="override every setup's seeds")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", default="")
    parser.add_argument("--cache", default="",
                        help="JSONL of finished runs: read to skip them, appended as runs end")
    parser.add_argument("--rounding", choices=["nearest", "stochastic"], default="nearest",
                        help="--halo-rounding of the bf16 and int8 runs (fp32 is the same)")
    o = parser.parse_args()
    suite = select(SUITES, o.suite, o.only, "precision_accuracy.py")
    bars = SMOKE_BARS if o.suite == "smoke" else BARS
    start = time.time()
    jobs = {}
    results = {}
    done = set()
    if o.cache and os.path.exists(o.cache):
        for line in open(o.cache):
            r = json.loads(line)
            if r["setup"] in suite:
                results.setdefault(r["setup"], {}).setdefault(r["precision"], {})[r["seed"]] = \
                    r["result"]
                done.add((r["setup"], r["precision"], r["seed"]))
    cache = open(o.cache, "a") if o.cache else None
    with futures.ThreadPoolExecutor(max_workers=o.jobs) as pool:
        for name, (graph, ranks, seeds, args) in suite.items():
            data = hard_graph(o.strata, root) if graph == HARD else os.path.join(root, graph)
            mpirun = ["mpirun", "-np", str(ranks), "--oversubscribe"] if ranks > 1 else None
            for seed in range(o.seeds or seeds):
                for precision in PRECISIONS:
                    if (name, precision, seed) in done:
                        continue
                    full = args + ["--halo-precision", precision, "--guard", "off"]
                    if precision != "fp32" and o.rounding != "nearest":
                        full += ["--halo-rounding", o.rounding]
                    job = pool.submit(run_one, o.strata, data, full, seed, o.threads, mpirun)
                    jobs[job] = (name, precision, seed)
        for job in futures.as_completed(jobs):
            name, precision, seed = jobs[job]
            results.setdefault(name, {}).setdefault(precision, {})[seed] = job.result()
            if cache:
                cache.write(json.dumps({"setup": name, "precision": precision, "seed": seed,
                                        "result": job.result()}) + "\n")
                cache.flush()

    failures = []
    table = []
    print(f"{'setup':<20} {'prec':<5} {'seeds':>5} {'fp32 mean':>9} {'mean':>7} "
          f"{'mean diff':>9} {'95% interval':>19} {'worst':>7} {'bar':>7}")
    for name, (_, _, seeds, args) in suite.items():
        runs = results[name]
        fp32 = runs["fp32"]
        for precision in PRECISIONS[1:]:
            seeds_run = sorted(s for s in runs[precision] if s in fp32)
            diffs = [runs[precision][s]["test_acc"] - fp32[s]["test_acc"] for s in seeds_run]
            n = len(diffs)
            mean = statistics.mean(diffs)
            half = t95(n) * statistics.stdev(diffs) / math.sqrt(n) if n > 1 else float("nan")
            row = {"setup": name, "precision": precision, "seeds": n, "args": args,
                   "fp32_mean": statistics.mean(fp32[s]["test_acc"] for s in seeds_run),
                   "mean": statistics.mean(runs[precision][s]["test_acc"] for s in seeds_run),
                   "mean_diff": mean, "ci95": [mean - half, mean + half], "worst_diff": min(diffs),
                   "bar": bars[precision],
                   "runs": {p: [runs[p][s] for s in seeds_run] for p in ("fp32", precision)}}
            table.append(row)
            print(f"{name:<20} {precision:<5} {n:5d} {row['fp32_mean']:9.4f} {row['mean']:7.4f} "
                  f"{mean:+9.4f} [{mean - half:+8.4f},{mean + half:+8.4f}] {min(diffs):+7.4f} "
                  f"{bars[precision]:+7.3f}")
            if mean < bars[precision]:
                failures.append(f"{name} {precision}: mean difference {mean:+.4f} < "
                                f"{bars[precision]:+.3f}")
    print(f"sweep: {time.time() - start:.0f} s, {len(jobs)} runs, {o.jobs} at a time, "
          f"{o.threads} thread(s) per rank")
    if o.json:
        with open(o.json, "w") as out:
            json.dump({"suite": o.suite, "strata": o.strata, "rows": table,
                       "seconds": time.time() - start}, out, indent=1)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
