#!/usr/bin/env python3
"""Accuracy of the model zoo on Cora (Planetoid public split), each model with its recipe
(docs/models.md), as a mean and minimum over seeds, against the published bars.

Runs `strata train --quiet` once per (run, seed) — `--jobs` at a time, one thread each — and
reads the printed test accuracy (at the recipe's best epoch). Prints a table and writes JSON.

  bench/accuracy.py --strata build/release/apps/strata                 # the full table (slow)
  bench/accuracy.py --strata ... --suite depth                         # GCNII 8..64 + GCN-64
  bench/accuracy.py --strata ... --suite smoke --json out.json         # CI: few seeds, short
  bench/accuracy.py --strata ... --suite pipeline                      # layer pipeline vs exact
  bench/accuracy.py --strata ... --suite collapse                      # GCN-32's collapse, caught

The collapse suite runs on a graph it generates (GRAPHS below; --data overrides it) where exact
GCN-32 trains and the pipeline without its guard does not (docs/pipeline.md).

Exit status 1 when a run's mean or minimum misses its bar.
"""
import argparse
import concurrent.futures as futures
import json
import os
import re
import statistics
import subprocess
import sys
import time

# name: (strata train arguments, bar on the mean, bar on the minimum or None)
FULL = {
    "gcnii-64": (["--model", "gcnii"], 0.845, None),
    "gat": (["--model", "gat"], 0.820, None),
    "appnp": (["--model", "appnp"], 0.830, None),
    "sage": (["--model", "sage"], 0.795, None),
    "resgcn+-32": (["--model", "resgcn+"], 0.75, None),
    "gcn": (["--model", "gcn", "--row-normalize-features"], 0.810, 0.795),
    "gin": (["--model", "gin"], None, None),  # bar: above mlp (checked below)
    "mlp": (["--model", "mlp"], None, None),
}
# DropEdge's deep-GCN recipe (hidden 128, lr 0.007, wd 1e-5, dropout 0.8, 400 epochs).
GCN64 = ["--model", "gcn", "--layers", "64", "--hidden", "128", "--dropout", "0.8", "--lr",
         "0.007", "--weight-decay", "1e-5", "--decay-all-layers", "--epochs", "400",
         "--row-normalize-features"]
DEPTH = {
    "gcnii-8": (["--model", "gcnii", "--layers", "8"], 0.830, None),
    "gcnii-16": (["--model", "gcnii", "--layers", "16"], 0.830, None),
    "gcnii-32": (["--model", "gcnii", "--layers", "32"], 0.830, None),
    "gcnii-64": (["--model", "gcnii", "--layers", "64"], 0.830, None),
    "gcn-64 (control)": (GCN64, None, None),
}
# CI: every model, short and loose, so that a broken model cannot land.
SMOKE = {
    "gcnii-8": (["--model", "gcnii", "--layers", "8", "--epochs", "150"], 0.75, None),
    "gcnii*-4": (["--model", "gcnii*", "--layers", "4", "--epochs", "150"], 0.70, None),
    "gat": (["--model", "gat", "--epochs", "150"], 0.75, None),
    "appnp": (["--model", "appnp", "--epochs", "150"], 0.75, None),
    "sage": (["--model", "sage", "--epochs", "100"], 0.70, None),
    "resgcn+-4": (["--model", "resgcn+", "--layers", "4", "--epochs", "100"], 0.65, None),
    "gin": (["--model", "gin", "--epochs", "100"], 0.60, None),
    "mlp": (["--model", "mlp", "--epochs", "100"], 0.45, None),
    "gcn": (["--model", "gcn", "--row-normalize-features"], 0.78, None),
}
# The layer pipeline (2 stages, 8 chunks, GNNPipe's three techniques) against exact training,
# GNNPipe as published (--guard off) and with the accuracy guard; 32-layer GCNII (the model the
# pipeline is for) and plain 32-layer GCN (which GNNPipe's staleness collapsed). Exact runs use
# one rank (K ranks give the same result).
GCN32 = [a if a != "64" else "32" for a in GCN64]
PIPE = ["--parallel", "pipeline", "--stages", "2", "--chunks", "8"]
# A fixed budget (the accuracy reached after 400 epochs, evaluated every 5): GCNII's recipe
# would run up to 1500 epochs with patience 100.
FIXED = ["--epochs", "400", "--patience", "0", "--eval-every", "5"]
PIPELINE = {
    "gcnii-32 exact": (["--model", "gcnii", "--layers", "32"] + FIXED, 0.830, None),
    "gcnii-32 pipe": (["--model", "gcnii", "--layers", "32"] + FIXED + PIPE + ["--guard", "off"],
                      None, None),
    "gcnii-32 pipe+guard": (["--model", "gcnii", "--layers", "32"] + FIXED + PIPE, 0.830, None),
    "gcn-32 exact": (GCN32 + ["--eval-every", "5"], None, None),
    "gcn-32 pipe": (GCN32 + ["--eval-every", "5"] + PIPE + ["--guard", "off"], None, None),
    "gcn-32 pipe+guard": (GCN32 + ["--eval-every", "5"] + PIPE, None, None),
}
# Plain GCN-32 where it trains exactly: a homophilous generated graph (4 classes, 98 % of edges
# inside a class, features too noisy for an MLP), no dropout, lr 0.002. Pipelined without the
# guard it collapses to chance (GNNPipe's staleness); the guard must roll it back to exact.
# Bars: exact and the guarded run train (0.95); the unguarded run's collapse is checked in main.
GCN32H = ["--model", "gcn", "--layers", "32", "--hidden", "64", "--dropout", "0", "--lr", "0.002",
          "--epochs", "400", "--patience", "0", "--eval-every", "5"]
COLLAPSE = {
    "gcn-32 exact": (GCN32H, 0.95, None),
    "gcn-32 pipe": (GCN32H + PIPE + ["--guard", "off"], None, None),
    "gcn-32 pipe+guard": (GCN32H + PIPE, 0.95, None),
}
SUITES = {"full": FULL, "depth": DEPTH, "smoke": SMOKE, "pipeline": PIPELINE,
          "collapse": COLLAPSE}
# Suites on a generated graph: `strata generate` arguments (made once, beside --json or in /tmp).
GRAPHS = {"collapse": ["--nodes", "5000", "--avg-degree", "10", "--features", "64", "--classes",
                       "4", "--homophily", "0.98", "--feature-noise", "6", "--seed", "1"]}


def ranks_of(args, default):
    """Pipeline runs take one rank per stage; the others --ranks."""
    if "--stages" in args:
        return int(args[args.index("--stages") + 1])
    return default


def select(suites, name, only, script):
    """Suite `name`'s runs named in `only` (comma-separated; every run when empty); exits with a
    message naming the unknown ones."""
    suite = suites[name]
    if not only:
        return suite
    wanted = only.split(",")
    unknown = [w for w in wanted if w not in suite]
    if unknown:
        sys.exit(f"{script}: --only {','.join(unknown)}: not in suite {name} ({', '.join(suite)})")
    return {k: v for k, v in suite.items() if k in wanted}


def generated(strata, args, directory):
    """The graph `strata generate args` makes, under `directory` (reused when there)."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "generated-" + "_".join(a.lstrip("-") for a in args) + ".h5")
    if not os.path.exists(path):
        subprocess.run([strata, "generate"] + args + ["--out", path], check=True,
                       capture_output=True)
    return path


def run_one(strata, data, args, seed, threads, mpirun):
    cmd = [strata, "train", "--data", data, "--seed", str(seed), "--threads", str(threads),
           "--quiet"] + args
    if mpirun:
        cmd = mpirun + cmd
    start = time.time()
    # As scripts/env.sh: Open MPI as root, and more ranks than cores on a small machine.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    seconds = time.time() - start
    found = re.search(r"test_accuracy=([0-9.]+)", proc.stdout)
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n"
                           f"{proc.stderr}")
    epoch = re.search(r"best epoch ([0-9]+)", proc.stdout)
    return {"seed": seed, "test_acc": float(found.group(1)), "seconds": round(seconds, 2),
            "best_epoch": int(epoch.group(1)) if epoch else None,
            "guard_rollbacks": proc.stdout.count("guard after epoch")}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--strata", default=os.path.join(root, "build/release/apps/strata"))
    parser.add_argument("--data", default="",
                        help="data/cora.h5, or the graph the suite generates (GRAPHS)")
    parser.add_argument("--suite", choices=sorted(SUITES), default="full")
    parser.add_argument("--only", default="", help="comma-separated run names of the suite")
    parser.add_argument("--seeds", type=int, default=None, help="10 (full, depth), 2 (smoke)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ranks", type=int, default=1, help="mpirun -np N for every run")
    parser.add_argument("--json", default="")
    o = parser.parse_args()
    suite = select(SUITES, o.suite, o.only, "accuracy.py")
    seeds = o.seeds or (2 if o.suite == "smoke" else 10)
    if not o.data:
        o.data = (generated(o.strata, GRAPHS[o.suite], os.path.dirname(o.json) or "/tmp")
                  if o.suite in GRAPHS else os.path.join(root, "data/cora.h5"))
    def mpirun(args):
        ranks = ranks_of(args, o.ranks)
        return ["mpirun", "-np", str(ranks), "--oversubscribe"] if ranks > 1 else None

    jobs = {}
    with futures.ThreadPoolExecutor(max_workers=o.jobs) as pool:
        for name, (args, _, _) in suite.items():
            for seed in range(seeds):
                jobs[pool.submit(run_one, o.strata, o.data, args, seed, o.threads,
                                 mpirun(args))] = name
        results = {name: [] for name in suite}
        for job in futures.as_completed(jobs):
            results[jobs[job]].append(job.result())

    failures = []
    table = []
    print(f"{'run':<18} {'mean':>7} {'min':>7} {'max':>7} {'bar':>7}  seeds  s/run  args")
    for name, (args, bar, min_bar) in suite.items():
        accs = [r["test_acc"] for r in sorted(results[name], key=lambda r: r["seed"])]
        mean, low = statistics.mean(accs), min(accs)
        row = {"run": name, "args": args, "mean": mean, "min": low, "max": max(accs),
               "std": statistics.pstdev(accs), "bar": bar, "min_bar": min_bar,
               "seeds": results[name]}
        table.append(row)
        secs = statistics.mean(r["seconds"] for r in results[name])
        rollbacks = sum(r["guard_rollbacks"] for r in results[name])
        print(f"{name:<18} {mean:7.4f} {low:7.4f} {max(accs):7.4f} "
              f"{bar if bar is not None else '-':>7}  {len(accs):5d} {secs:6.1f}  {' '.join(args)}"
              + (f"  ({rollbacks} guard rollbacks)" if rollbacks else ""))
        if bar is not None and mean < bar:
            failures.append(f"{name}: mean {mean:.4f} < {bar}")
        if min_bar is not None and low < min_bar:
            failures.append(f"{name}: min {low:.4f} < {min_bar}")
    by_name = {row["run"]: row for row in table}
    if "gin" in by_name and "mlp" in by_name and by_name["gin"]["mean"] <= by_name["mlp"]["mean"]:
        failures.append(f"gin: mean {by_name['gin']['mean']:.4f} not above mlp's "
                        f"{by_name['mlp']['mean']:.4f}")
    if "gcn-32 pipe" in by_name and "gcn-32 exact" in by_name and o.suite == "collapse" and \
            by_name["gcn-32 pipe"]["mean"] > by_name["gcn-32 exact"]["mean"] - 0.2:
        failures.append(f"gcn-32 pipe: mean {by_name['gcn-32 pipe']['mean']:.4f} did not "
                        f"collapse (exact {by_name['gcn-32 exact']['mean']:.4f}): the suite "
                        "no longer tests the guard")
    if o.json:
        with open(o.json, "w") as out:
            json.dump({"suite": o.suite, "data": o.data, "seeds": seeds, "runs": table}, out,
                      indent=1)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
