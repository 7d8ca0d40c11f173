#!/usr/bin/env bash
# Cross-check of onnxrun against ONNX Runtime (outside the default test run):
#   bash tests/crosscheck/run.sh [N] [SEED]      (default 600 cases, seed 1)
# Builds the onnxrun CLI (Release, build-crosscheck/), installs onnxruntime-node if missing
# (npm install --ignore-scripts: the package ships the CPU library, nothing is downloaded at
# run time), generates N random ConvTranspose/DepthToSpace cases with /usr/bin/python3 (Debian's
# python3-onnx + numpy), runs each through `onnxrun MODEL CASE -o OUT` and through ORT
# (ort_run.js), classifies them (classify.py) and writes tests/crosscheck/latest.md.
# Exits 1 when a case is disagree-unexplained.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${1:-600}
seed=${2:-1}
build=${ONNXRUN_CROSSCHECK_BUILD:-$root/build-crosscheck}
work=$build/crosscheck-cases
py=/usr/bin/python3

"$py" -c 'import onnx, numpy' || { echo "needs python3-onnx and python3-numpy (apt-get install python3-onnx)"; exit 2; }
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target onnxrun_cli >/dev/null
[ -d "$here/node_modules/onnxruntime-node" ] || (cd "$here" && npm install --ignore-scripts --no-audit --no-fund)

echo "== generating $n cases (seed $seed) in $work"
rm -rf "$work"
"$py" "$here/crosscheck.py" gen "$n" "$work" "$seed"
echo "== onnxrun"
for d in "$work"/*/; do
	d=${d%/}
	"$build/onnxrun" "$d/model.onnx" "$d" -o "$d/onnxrun_out" >"$d/onnxrun.log" 2>"$d/onnxrun.err" || true
done
echo "== ONNX Runtime"
(cd "$here" && node ort_run.js "$work")
echo "== classification"
cd "$here"
"$py" -c "import sys; from classify import classify_all; sys.exit(1 if classify_all('$work', '$here/latest.md') else 0)"
