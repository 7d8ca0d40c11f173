#!/usr/bin/env bash
# bench/case_probe.sh [FILTER] - is what bounds a case the machine, or onnxrun's data flow?
#
# Per suite case, times in alternating processes (PROBE_ROUNDS rounds, default 5): onnxrun
# on the case (bench/onnxrun_bench.c, the checkout as it is), then bench/case_probe.c doing
# only the case's unavoidable work, timed the same way (runs of at least 300 ms after 150 ms
# of warm-up, median per process): "both" = its FLOPs as vector FMAs at the FMA probe's rate
# interleaved with reading X, W and B once and writing Y once; "fma" = the FMAs alone;
# "traffic" = the loads and stores alone. Prints, per case, the median over the rounds of
# each process's median and "onnxrun at" = probe both / onnxrun: near 100%, the case runs at
# what this machine can do for its work; well below, the time goes to work the probe does
# not do (copies, partial sums, per-item set-up): the data flow.
#
# Variables: PROBE_ROUNDS (default 5), PROBE_THREADS (default 1), PROBE_FLOAT64 (default 0;
# 1: the float64 variants too). ConvTranspose cases only (DepthToSpace has no FLOPs: its
# bound is the copy bench/peak.c measures). Needs what bench/ab.sh needs.
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-}
rounds=${PROBE_ROUNDS:-5} threads=${PROBE_THREADS:-1}
work=bench/build/probe
mkdir -p "$work"

cmake -S . -B "$work/lib" -DCMAKE_BUILD_TYPE=Release -DONNXRUN_BUILD_TESTS=OFF >/dev/null
cmake --build "$work/lib" --target onnxrun_static -j"$(nproc)" >/dev/null
cc -O2 -I include bench/onnxrun_bench.c "$work/lib/libonnxrun.a" -lprotobuf-c -lm -lpthread \
	-o "$work/onnxrun_bench"
if grep -q avx512f /proc/cpuinfo; then isa="-mavx512f -mfma"; else isa="-mavx2 -mfma"; fi
# shellcheck disable=SC2086
cc -O2 $isa -pthread bench/case_probe.c -o "$work/case_probe"

models=bench/build/models
args=()
[ -n "$filter" ] && args=(--filter "$filter")
mapfile -t cases < <(/usr/bin/python3 bench/make_models.py ../shared/bench/suite.json -o "$models" \
	"${args[@]}" $([ "${PROBE_FLOAT64:-0}" = 1 ] || echo --no-float64) --print-cases | grep -v '_floor$')

# probe_args CASE: --flops F --read BYTES --write BYTES [--f64] from the case's meta.json
probe_args() { /usr/bin/python3 bench/report.py probe-args "$models/$1/meta.json"; }
time_args=(--threads "$threads" --runs 20 --min-time-ms 300 --warmup-ms 150)
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
ms() { sed -n 's/.*"median_ms":\([0-9.]*\).*/\1/p'; }

echo "# bench/case_probe.sh: $threads thread(s), $rounds alternating rounds, median of process medians (ms)"
for c in "${cases[@]}"; do
	pa=$(probe_args "$c")
	[ -n "$pa" ] || continue
	o=() b=() f=() t=()
	for _ in $(seq "$rounds"); do
		o+=("$("$work/onnxrun_bench" "$models/$c/model.onnx" --input "$models/$c/input.bin" \
			"${time_args[@]}" 2>/dev/null | ms)")
		# shellcheck disable=SC2086
		b+=("$("$work/case_probe" $pa --mode both "${time_args[@]}" | ms)")
		# shellcheck disable=SC2086
		f+=("$("$work/case_probe" $pa --mode fma "${time_args[@]}" | ms)")
		# shellcheck disable=SC2086
		t+=("$("$work/case_probe" $pa --mode traffic "${time_args[@]}" | ms)")
	done
	mo=$(printf '%s\n' "${o[@]}" | median)
	mb=$(printf '%s\n' "${b[@]}" | median)
	mf=$(printf '%s\n' "${f[@]}" | median)
	mt=$(printf '%s\n' "${t[@]}" | median)
	ro=$(printf '%s\n' "${o[@]}" | sort -g | sed -n '1p;$p' | paste -sd-)
	rb=$(printf '%s\n' "${b[@]}" | sort -g | sed -n '1p;$p' | paste -sd-)
	awk -v c="$c" -v o="$mo" -v b="$mb" -v f="$mf" -v t="$mt" -v ro="$ro" -v rb="$rb" \
		'BEGIN { printf "%-36s onnxrun %8.3f  probe both %8.3f (fma %8.3f, traffic %8.3f)  onnxrun at %5.1f%%  (rounds: onnxrun %s, probe %s)\n", c, o, b, f, t, 100 * b / o, ro, rb }'
done
