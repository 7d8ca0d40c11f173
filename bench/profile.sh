#!/usr/bin/env bash
# bench/profile.sh CASE [THREADS] - where one suite case's time goes, by function.
#
# Samples onnxrun_bench running the case's model with perf's cpu-clock event (a timer
# interrupt, so it works in a VM without hardware counters) and prints each function's share
# of the samples, functions under 0.5% left out. Inlined code counts toward its caller (in
# the float64 path, x packing shows as compute_phase), and the model's load is sampled too
# (packing initializer weights: a few percent for the largest weights). Shares, not times: a
# busy machine slows every function alike, so they stay comparable where timings do not.
#
# Variables: PROFILE_MS (default 3000: the timed runs span at least this long),
# PROFILE_BENCH (default bench/build/onnxrun_bench; e.g. bench/build/ab/new/onnxrun_bench,
# which bench/ab.sh builds for a revision).
# Needs the models and the tool that `bash bench/run.sh CASE` (or bench/ab.sh) builds, and
# perf (Debian's linux-perf: installed with apt-get when run as root, else the command is
# printed).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bash bench/profile.sh CASE [THREADS]" >&2; exit 2; }
case=$1 threads=${2:-1}
bench=${PROFILE_BENCH:-bench/build/onnxrun_bench}
model=bench/build/models/$case/model.onnx
if ! command -v perf >/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y linux-perf >/dev/null
	else
		echo "perf is missing: run  sudo apt-get install -y linux-perf" >&2
		exit 1
	fi
fi
[ -x "$bench" ] && [ -f "$model" ] ||
	{ echo "no $bench or $model: run  bash bench/run.sh $case  first" >&2; exit 2; }
data=bench/build/profile-$case-t$threads.data
perf record -q -e cpu-clock -F 4000 -o "$data" "$bench" "$model" --threads "$threads" \
	--min-time-ms "${PROFILE_MS:-3000}" >/dev/null
echo "# $case, $threads thread(s): share of cpu-clock samples per function ($bench)"
perf report -i "$data" --stdio --no-children --sort symbol --percent-limit 0.5 2>/dev/null |
	grep '%' | grep -v '^#' | sed 's/ *- *- *$//'
