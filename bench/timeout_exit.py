#!/usr/bin/python3
"""How soon `onnxrun MODEL --random --timeout S` exits after its run starts.

Usage (from the repo root, after building build/onnxrun):
    /usr/bin/python3 bench/timeout_exit.py [--onnxrun build/onnxrun] [--timeout 0.5]
        [--threads 1,2] [--repeat 3] [--suite ../shared/bench/suite.json] [--no-suite]

Makes (in bench/build/timeout/, not committed) the 1-TFLOP model of issue 30: one
ConvTranspose, X [32,512,64,64] float32 as the graph input, W [512,512,4,4] (16 MB, fixed-seed
random) as an initializer, strides 2, pads 1, opset 17; Y [32,512,128,128] is 1 GiB. With
--suite it also makes every case of the benchmark suite (bench/make_models.py).

For each model and thread count it runs onnxrun with --random --timeout S, measures the
process's wall time, and reads the time spent before the run from the --timeout message
("... (before the run: load X s, inputs Y s, session Z s)"). run-to-exit = wall - before:
the seconds from the run's start to the process's exit (process start-up and teardown
included), which must stay within S + 0.25; "stopped at" is the library's own figure (the
message's "run stopped after T s"). Columns are the maxima over the repeats.
A case that finishes within S (exit 0) is reported as such. A measurement, not a test: it
has no pass/fail of its own beyond printing the worst figure and whether it met S + 0.25.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "bench", "build", "timeout")


def make_big_model(path):
    """The 1-TFLOP ConvTranspose (W generated here at run time: 16 MB, never committed)."""
    if os.path.exists(path):
        return
    rng = np.random.default_rng(30)
    w = (rng.standard_normal((512, 512, 4, 4)) * 0.02).astype(np.float32)
    node = helper.make_node("ConvTranspose", ["X", "W"], ["Y"], name="big", strides=[2, 2], pads=[1, 1, 1, 1])
    graph = helper.make_graph(
        [node], "tflop",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [32, 512, 64, 64])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [32, 512, 128, 128])],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    os.makedirs(os.path.dirname(path), exist_ok=True)
    onnx.save(model, path)


BEFORE = re.compile(r"before the run: load ([0-9.e+-]+) s, inputs ([0-9.e+-]+) s, session ([0-9.e+-]+) s")
STOPPED = re.compile(r"run stopped(?: [a-z ()]+)? after ([0-9.e+-]+) s")


def measure(onnxrun, model, threads, timeout):
    t0 = time.monotonic()
    r = subprocess.run([onnxrun, model, "--random", "--threads", str(threads), "--timeout", str(timeout)],
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    m = BEFORE.search(r.stderr)
    if r.returncode == 0:
        return {"exit": 0, "wall": wall, "before": None, "run_to_exit": None, "msg": ""}
    if not m:
        raise SystemExit(f"{model}: exit {r.returncode} without the --timeout message:\n{r.stderr}")
    before = float(m.group(1)) + float(m.group(2)) + float(m.group(3))
    stop = STOPPED.search(r.stderr)
    return {"exit": r.returncode, "wall": wall, "before": before, "run_to_exit": wall - before,
            "stopped_after": float(stop.group(1)) if stop else None, "msg": r.stderr.strip().splitlines()[-1]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--onnxrun", default=os.path.join(REPO, "build", "onnxrun"))
    ap.add_argument("--timeout", type=float, default=0.5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--suite", default=os.path.join(os.path.dirname(REPO), "shared", "bench", "suite.json"))
    ap.add_argument("--no-suite", action="store_true")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    models = [("tflop_convt_32x512x64x64", os.path.join(OUT, "tflop", "model.onnx"))]
    make_big_model(models[0][1])
    if not args.no_suite:
        suite_dir = os.path.join(OUT, "suite")
        subprocess.run([sys.executable, os.path.join(REPO, "bench", "make_models.py"), args.suite, "-o", suite_dir,
                        "--no-float64"], check=True, stdout=subprocess.DEVNULL)
        cases = json.load(open(args.suite))["cases"]
        models += [(c["name"], os.path.join(suite_dir, c["name"], "model.onnx")) for c in cases]
    limit = args.timeout + 0.25
    rows, worst = [], 0.0
    print(f"--timeout {args.timeout}: seconds from the run's start to exit (limit {limit:.2f}), "
          f"max of {args.repeat} runs; 'done' = finished within the timeout; load average at the start "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'model':40s} {'threads':>7s} {'before run':>10s} {'stopped at':>10s} {'run->exit':>9s}  status")
    for name, path in models:
        for t in [int(x) for x in args.threads.split(",")]:
            res = [measure(args.onnxrun, path, t, args.timeout) for _ in range(args.repeat)]
            stopped = [r for r in res if r["exit"] != 0]
            if not stopped:
                print(f"{name:40s} {t:7d} {'':>10s} {'':>10s} {'':>9s}  done (wall {max(r['wall'] for r in res):.2f} s)")
                rows.append({"model": name, "threads": t, "done": True})
                continue
            rte = max(r["run_to_exit"] for r in stopped)
            before = max(r["before"] for r in stopped)
            at = max((r["stopped_after"] or 0.0) for r in stopped)
            worst = max(worst, rte)
            ok = "ok" if rte <= limit else "OVER"
            print(f"{name:40s} {t:7d} {before:10.3f} {at:10.3f} {rte:9.3f}  {ok} (exit {stopped[0]['exit']})")
            rows.append({"model": name, "threads": t, "before": before, "stopped_after": at, "run_to_exit": rte,
                         "ok": rte <= limit})
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    print(f"worst run->exit: {worst:.3f} s ({'within' if worst <= limit else 'OVER'} {limit:.2f} s)")
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
