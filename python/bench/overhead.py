"""The cost of driving a run from Python (issue 32's target: a Python-driven epoch within 2 % of
`strata train`'s, the callback included): the same run — GCN 3 x 256 on a generated graph, 2
threads, 20 epochs — alternately through `strata train` and through strata.Trainer.fit with a
callback, each in a fresh process, R rounds; compares the median epoch time.
    .venv/bin/python python/bench/overhead.py GRAPH.h5 [rounds]
GRAPH.h5: `strata generate --nodes 200000 --avg-degree 25 --features 100 --classes 47 --out g.h5`.
Python's epochs are timed two ways: epoch_s of its metrics file (what `strata train` records), and
the wall time from one callback to the next (everything: the epoch, every hook, the callback)."""
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
                   seed=1, metrics=sys.argv[2])
t.fit(callback=callback)
print(json.dumps([b - a for a, b in zip(times, times[1:])]))
"""


def epoch_times(path):
    with open(path) as f:
        return [json.loads(line)["epoch_s"] for line in f][1:]  # the first epoch warms up


def main():
    graph = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    env = dict(os.environ, OMP_NUM_THREADS="2")
    cli, py_epoch, py_wall = [], [], []
    with tempfile.TemporaryDirectory() as d:
        for r in range(rounds):
            m = os.path.join(d, f"cli{r}.jsonl")
            subprocess.run([strata.cli_path(), "train", "--data", graph, "--model", "gcn",
                            "--layers", "3", "--hidden", "256", "--threads", "2", "--epochs",
                            "20", "--seed", "1", "--metrics", m, "--quiet"], check=True, env=env,
                           stdout=subprocess.DEVNULL)
            cli += epoch_times(m)
            m = os.path.join(d, f"py{r}.jsonl")
            out = subprocess.run([sys.executable, "-c", CHILD, graph, m], check=True, env=env,
                                 capture_output=True, text=True).stdout
            py_epoch += epoch_times(m)
            py_wall += json.loads(out.strip().splitlines()[-1])[1:]
    c, pe, pw = (statistics.median(v) for v in (cli, py_epoch, py_wall))
    print(f"{rounds} rounds x 19 epochs: median epoch strata train {c * 1e3:.1f} ms; "
          f"Python epoch_s {pe * 1e3:.1f} ms ({100 * (pe / c - 1):+.2f} %), Python callback to "
          f"callback {pw * 1e3:.1f} ms ({100 * (pw / c - 1):+.2f} %)")


if __name__ == "__main__":
    main()
