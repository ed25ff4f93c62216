"""The cost of driving a run from Python (issue 32's target: a Python-driven epoch within 2 % of
`strata train`'s, the callback included): the same run — GCN 3 x 256 on a generated graph, 2
threads, 20 epochs — alternately through `strata train` and through strata.Trainer.fit with a
callback, each in a fresh process pinned to the same cores (taskset), R rounds (A B A B ...);
compares the medians over the epochs after the first.
    .venv/bin/python python/bench/overhead.py GRAPH.h5 [rounds] [--profile] [--cli PATH]
GRAPH.h5: `strata generate --nodes 200000 --avg-degree 25 --features 100 --classes 47 --out g.h5`.

Each epoch is timed three ways, the same way for both programs:
- epoch_s of the metrics file (the library's own timer: what `strata train` records);
- wall: the time between two epoch lines as this script reads them (`strata train` prints one per
  epoch; the Python child prints one from its callback): everything, the callback included;
- cpu: the process's CPU time (user + system, every thread; /proc/PID/stat) between two epoch
  lines. On a machine shared with other jobs the wall times move with the load (epochs of the same
  run vary by 2x); the CPU time is the work done, which the load changes far less.
--profile: both runs time the training step's phases (`profile`, docs/training.md) and the
medians of each phase are compared. --cli: another `strata` program to compare with (default:
the one installed beside the module, built in the same build)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import strata

CHILD = r"""
import sys
import strata
t = strata.Trainer(sys.argv[1], model="gcn", layers=3, hidden=256, threads=2, epochs=20,
                   seed=1, metrics=sys.argv[2], profile=sys.argv[3] == "1")
t.fit(callback=lambda record: print("epoch", record["epoch"], flush=True))
"""
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def timed(args, env, started=None):
    """Runs `args` (or waits for `started`, a Popen of it); at each stdout line starting with
    'epoch', the wall clock and the process's CPU time. Returns (wall, cpu) per epoch after the
    first."""
    p = started or subprocess.Popen(args, env=env, stdout=subprocess.PIPE, text=True)
    marks = []
    for line in p.stdout:
        if line.startswith("epoch"):
            marks.append((time.perf_counter(), cpu_seconds(p.pid)))
    if p.wait() != 0:
        raise SystemExit(f"{args[0]} exited {p.returncode}")
    wall = [b[0] - a[0] for a, b in zip(marks, marks[1:])]
    cpu = [b[1] - a[1] for a, b in zip(marks, marks[1:])]
    return wall, cpu


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f][1:]  # the first epoch (it holds the config) warms up


def ms(values):
    return statistics.median(values) * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("graph")
    parser.add_argument("rounds", type=int, nargs="?", default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--cli", default=strata.cli_path())
    parser.add_argument("--cores", default="0,1", help="taskset -c list for both runs")
    parser.add_argument("--together", action="store_true",
                        help="start the two runs of a round at the same time, on the same cores: "
                             "both then share whatever else the machine runs")
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="2")
    pin = ["taskset", "-c", args.cores] if args.cores else []
    runs = {"cli": {"rec": [], "wall": [], "cpu": []}, "py": {"rec": [], "wall": [], "cpu": []}}
    load = []
    def command(kind, m):
        if kind == "cli":
            return pin + ["stdbuf", "-oL", args.cli, "train", "--data", args.graph, "--model",
                          "gcn", "--layers", "3", "--hidden", "256", "--threads", "2",
                          "--epochs", "20", "--seed", "1", "--metrics", m] + \
                (["--profile"] if args.profile else [])
        return pin + [sys.executable, "-c", CHILD, args.graph, m, "1" if args.profile else "0"]

    with tempfile.TemporaryDirectory() as d:
        for r in range(args.rounds):
            paths = {kind: os.path.join(d, f"{kind}{r}.jsonl") for kind in runs}
            load.append(os.getloadavg()[0])
            if args.together:
                import concurrent.futures
                procs = {k: subprocess.Popen(command(k, paths[k]), env=env,
                                             stdout=subprocess.PIPE, text=True) for k in runs}
                with concurrent.futures.ThreadPoolExecutor(2) as pool:
                    done = {k: pool.submit(timed, None, None, procs[k]) for k in runs}
                    times = {k: f.result() for k, f in done.items()}
            else:
                times = {k: timed(command(k, paths[k]), env) for k in runs}
            for kind in runs:
                runs[kind]["rec"] += records(paths[kind])
                runs[kind]["wall"] += times[kind][0]
                runs[kind]["cpu"] += times[kind][1]
    c, p = runs["cli"], runs["py"]
    print(f"{args.rounds} rounds x 19 epochs{' (the two runs together)' if args.together else ''}"
          f", load average {min(load):.2f} to {max(load):.2f} at the rounds' starts; median "
          "epoch, strata train vs Python:")

    def row(name, a, b):
        change = f"({100 * (ms(b) / ms(a) - 1):+6.2f} %)" if ms(a) > 0 else ""
        print(f"  {name:16s} {ms(a):9.1f} ms {ms(b):9.1f} ms  {change}")

    row("epoch_s", [x["epoch_s"] for x in c["rec"]], [x["epoch_s"] for x in p["rec"]])
    row("wall", c["wall"], p["wall"])
    row("cpu", c["cpu"], p["cpu"])
    print(f"  per round (median wall): strata train "
          f"{[round(ms(c['wall'][i * 19:(i + 1) * 19])) for i in range(args.rounds)]}, Python "
          f"{[round(ms(p['wall'][i * 19:(i + 1) * 19])) for i in range(args.rounds)]}")
    if args.profile:
        for key in c["rec"][0]["phases"]:
            row(key, [x["phases"][key] for x in c["rec"]], [x["phases"][key] for x in p["rec"]])


if __name__ == "__main__":
    main()
