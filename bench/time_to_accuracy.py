#!/usr/bin/env python3
"""Time to accuracy: full-graph Strata against mini-batch GraphSAGE (issue 31, item 5).

On the harder generated task (`strata generate --preset hard`, docs/datasets.md), wall time from
a process's start (loading included) to a target validation accuracy:
  1. the mini-batch peer (bench/minibatch_sage.py: PyG NeighborLoader, fan-out 15-10, batch 1024,
     or its uniform stand-in when no sampling backend imports) runs first, evaluating full-neighbour
     validation accuracy every epoch (timed); target = its best validation accuracy - 0.005;
  2. Strata trains SAGE (same layers, hidden, lr, dropout; weight decay 0) full-graph at
     1 rank x T threads and T ranks x 1 thread, and GCN beside it (--models), evaluating every
     epoch; each line of its --metrics file is timestamped as it appears (this script polls the
     file), so Strata's times include start-up and loading the same way the peer's do.
A run stops at its epoch budget or --cap-s (the peer stops training at the cap inside an epoch
and evaluates that partial epoch, whose "epoch" is then fractional); the time to the target is
the first epoch whose validation accuracy reaches it ("not reached" otherwise, with the best
reached). Prints a table, writes JSON and a PNG of the validation curves against wall time.

  bench/time_to_accuracy.py --nodes 200000 --out out/bench/tta200k
  bench/time_to_accuracy.py --nodes 20000 --peer-epochs 3 --epochs 60 --out /tmp/tta   # smoke

The peer's Python: --python (default: out/bench/pyg-sparse-venv, which `bench/pyg-venv` makes:
Debian's torch 1.13 + torch_geometric 2.3.1 + torch-sparse 0.6.17 built from source, so that
NeighborLoader samples; else /usr/bin/python3, where only the stand-in sampler runs). The JSON's
"sampler" says which ran.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def graph(strata, nodes, out_dir):
    path = os.path.join(out_dir, f"hard{nodes}.h5")
    if not os.path.exists(path):
        subprocess.run([strata, "generate", "--nodes", str(nodes), "--avg-degree", "25",
                        "--features", "100", "--classes", "47", "--seed", "1", "--preset", "hard",
                        "--out", path], check=True, capture_output=True)
    return path


def run_peer(o, data, out_dir):
    """The mini-batch peer's curve: run now, or read from --peer (an earlier run's
    peer_tT.jsonl on the same graph and threads)."""
    out = o.peer or os.path.join(out_dir, f"peer_t{o.threads}.jsonl")
    if not o.peer:
        cmd = [o.python, os.path.join(ROOT, "bench/minibatch_sage.py"), "--data", data,
               "--threads", str(o.threads), "--epochs", str(o.peer_epochs),
               "--hidden", str(o.hidden), "--lr", str(o.peer_lr), "--dropout", str(o.dropout),
               "--cap-s", str(o.cap_s), "--fanout", o.fanout, "--batch", "1024", "--out", out]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    curve = [json.loads(line) for line in open(out)]
    return {"name": f"minibatch sage 1x{o.threads}", "sampler": curve[0]["sampler"],
            # a partial last epoch (the cap fell inside it) counts as its trained fraction
            "curve": [{"epoch": round(r["epoch"] - 1 + r.get("epoch_fraction", 1.0), 2),
                       "t": r["t"], "val_acc": r["val_acc"], "test_acc": r["test_acc"]}
                      for r in curve]}


def run_strata(o, data, out_dir, name, model, ranks, threads, target):
    """Runs strata train, timestamping each metrics line as it appears; stops at the target
    (after --after-target more epochs) or the cap."""
    metrics = os.path.join(out_dir, f"{name.replace(' ', '_')}.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    layers = len(o.fanout.split(","))
    cmd = [o.strata, "train", "--data", data, "--model", model, "--layers", str(layers),
           "--hidden", str(o.hidden), "--lr", str(o.lr), "--dropout", str(o.dropout),
           "--weight-decay", "0", "--no-row-normalize-features", "--epochs", str(o.epochs),
           "--patience", "0", "--eval-every", "1", "--threads", str(threads), "--seed", "0",
           "--metrics", metrics, "--quiet"]
    if ranks > 1:
        cmd = ["mpirun", "-np", str(ranks), "--oversubscribe"] + cmd
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    start = time.time()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            text=True)
    curve, seen, reached_at = [], 0, None
    while True:
        done = proc.poll() is not None
        if os.path.exists(metrics):
            with open(metrics) as f:
                lines = f.read().split("\n")
            for line in lines[seen:-1]:  # whole lines only
                r = json.loads(line)
                curve.append({"epoch": r["epoch"], "t": time.time() - start,
                              "val_acc": r.get("val_acc"), "test_acc": r.get("test_acc"),
                              "epoch_s": r["epoch_s"]})
                if reached_at is None and r.get("val_acc") is not None and r["val_acc"] >= target:
                    reached_at = r["epoch"]
            seen = max(seen, len(lines) - 1)
        stop = (reached_at is not None and curve[-1]["epoch"] >= reached_at + o.after_target) or \
            time.time() - start > o.cap_s
        if done or stop:
            break
        time.sleep(0.01)
    if proc.poll() is None:
        proc.terminate()
        proc.wait()
    elif proc.returncode != 0:
        sys.exit(f"time_to_accuracy: {' '.join(cmd)} failed:\n{proc.stderr.read()}")
    return {"name": name, "model": model, "ranks": ranks, "threads": threads, "curve": curve}


def reach(run, target):
    for r in run["curve"]:
        if r["val_acc"] is not None and r["val_acc"] >= target:
            return r
    return None


def plot(runs, target, title, path):
    """Validation accuracy against wall time, one line per run (markers on a run of few
    evaluations: the 2.4M peer evaluates once or twice in its hour)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for run in runs:
        pts = [(r["t"], r["val_acc"]) for r in run["curve"] if r["val_acc"] is not None]
        ax.plot([a for a, _ in pts], [b for _, b in pts], label=run["name"],
                marker="o" if len(pts) < 20 else None)
    ax.axhline(target, color="grey", linestyle="--", label=f"target {target:.3f}")
    ax.set_xlabel("wall seconds from process start (loading included)")
    ax.set_ylabel("validation accuracy (full neighbourhoods)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--strata", default=os.path.join(ROOT, "build/release/apps/strata"))
    venv = os.path.join(ROOT, "out/bench/pyg-sparse-venv/bin/python")
    p.add_argument("--python", default=venv if os.path.exists(venv) else "/usr/bin/python3")
    p.add_argument("--nodes", type=int, default=200000)
    p.add_argument("--threads", type=int, default=2, help="cores: 1 x T and T x 1")
    p.add_argument("--fanout", default="15,10")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.01, help="Strata's (one step an epoch)")
    p.add_argument("--peer-lr", type=float, default=0.003, help="the peer's (many steps an epoch)")
    p.add_argument("--peer-epochs", type=int, default=20)
    p.add_argument("--epochs", type=int, default=500, help="Strata's epoch budget")
    p.add_argument("--after-target", type=int, default=0, help="epochs run past the target")
    p.add_argument("--models", default="sage,gcn", help="Strata's, each at 1 x T and T x 1")
    p.add_argument("--one-layout", action="store_true",
                   help="Strata at 1 rank x T threads only (not also T ranks x 1 thread)")
    p.add_argument("--cap-s", type=float, default=3600.0,
                   help="each run's wall limit (the peer checks it before every batch)")
    p.add_argument("--out", default=os.path.join(ROOT, "out/bench/tta"))
    p.add_argument("--peer", default="",
                   help="reuse this peer curve (peer_tT.jsonl of an earlier run on the same graph "
                        "and threads) instead of running the peer again")
    o = p.parse_args()
    os.makedirs(o.out, exist_ok=True)
    data = graph(o.strata, o.nodes, os.path.dirname(o.out) or ".")
    load = os.getloadavg()[0]
    peer = run_peer(o, data, o.out)
    best = max(r["val_acc"] for r in peer["curve"])
    target = best - 0.005
    runs = [peer]
    t = o.threads
    layouts = [(1, t)] if o.one_layout else [(1, t), (t, 1)]
    for model in o.models.split(","):
        for ranks, threads in layouts:
            name = f"strata {model} {ranks}x{threads}"
            runs.append(run_strata(o, data, o.out, name, model, ranks, threads, target))
    print(f"graph {data}; peer best validation accuracy {best:.4f} ({peer['sampler']}); "
          f"target {target:.4f}; load average at start {load:.2f}, at end "
          f"{os.getloadavg()[0]:.2f}")
    print(f"{'run':<24} {'target at':>10} {'epoch':>6} {'best val':>9} {'epochs run':>10}")
    table = []
    for run in runs:
        hit = reach(run, target)
        best_val = max(r["val_acc"] for r in run["curve"] if r["val_acc"] is not None)
        row = {"run": run["name"], "seconds_to_target": hit["t"] if hit else None,
               "epoch": hit["epoch"] if hit else None, "best_val": best_val,
               "epochs_run": len(run["curve"])}
        table.append(row)
        at = f"{hit['t']:9.1f}s" if hit else "not reached"
        print(f"{run['name']:<24} {at:>10} {row['epoch'] or '-':>6} {best_val:9.4f} "
              f"{row['epochs_run']:10d}")
    with open(os.path.join(o.out, "time_to_accuracy.json"), "w") as f:
        json.dump({"graph": data, "sampler": peer["sampler"], "target": target,
                   "peer_best": best, "table": table,
                   "runs": runs, "load_start": load}, f, indent=1)
    plot(runs, target, f"time to accuracy, {o.nodes} vertices, {t} cores",
         os.path.join(o.out, "time_to_accuracy.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
