#!/usr/bin/env bash
# bench/run.sh - the whole benchmark in one command: onnxrun vs ONNX Runtime (CPU) and oneDNN's
# deconvolution primitive, same run.
#
#   bash bench/run.sh [FILTER]
#
# FILTER: only cases whose name matches this regular expression (default: the whole suite).
# Environment:
#   BENCH_RUNS=20        timed runs per case, tool and thread count (median reported)
#   BENCH_WARMUP=3       warm-up runs before timing, at least
#   BENCH_WARMUP_MS=500  warm-up goes on until it has taken this long (ONNX Runtime ran some
#                        cases 20-40% faster after a few hundred runs than in its first 20)
#   BENCH_THREADS="1 2"  thread counts
#   BENCH_ROUNDS=5       rounds per case and thread count: onnxrun, ORT, oneDNN blocked,
#                        oneDNN NCHW, each a fresh process; each round is a pass over the
#                        suite, so a case's rounds lie minutes apart; the report takes the
#                        median round of each tool
#   BENCH_MIN_TIME_MS=1000  more timed runs than BENCH_RUNS where needed so they span at least
#                        this long (twice this for the scaling measurement): the host's slow
#                        spells last a fraction of a second, so a median over a second or more
#                        is not decided by one of them; 0 turns it off
#   BENCH_BUDGET_S=60    cap on one timed phase: fewer runs (>= 3) if R runs would exceed it
#   BENCH_SUITE=PATH     suite file (default ../shared/bench/suite.json from the repo root)
#   BENCH_KEEP_OUTPUTS=1 keep the raw output tensors under bench/build/out
#   BENCH_SKIP_PEAK=1    reuse bench/build/results/peak.json instead of measuring again
#   BENCH_WAIT_IDLE_S=0  before each measurement, wait up to this many seconds for the other
#                        processes on the machine to use less than BENCH_IDLE_CPUS (0.3) CPUs
#
# Steps: build libonnxrun (Release) into build-bench, make sure Debian's libdnnl-dev is
# installed (apt-get as root, else the command is printed), compile onnxrun_bench, dnnl_bench
# and peak, make sure onnxruntime-node is installed (npm ci --ignore-scripts from the committed
# lock file), generate the models (the suite and its float64 variants), measure the machine's
# limits, then in each round (a pass over the suite) per case and thread count run
# onnxrun_bench, ort_bench.js and dnnl_bench in its two layouts (one fresh process each;
# float64 cases: onnxrun alone, no peer has a float64 ConvTranspose), after a case's first
# round check onnxrun's output against ORT's and oneDNN's, after its last measure the thread
# scaling in one process, and write the table. Results: bench/build/results/latest.{json,md,raw.jsonl}; a run
# over the full suite also copies latest.json and latest.md to bench/results/ and redraws
# bench/results/ratio.svg.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY=/usr/bin/python3
FILTER="${1:-}"
RUNS="${BENCH_RUNS:-20}"
WARMUP="${BENCH_WARMUP:-3}"
WARMUP_MS="${BENCH_WARMUP_MS:-500}"
THREADS="${BENCH_THREADS:-1 2}"
ROUNDS="${BENCH_ROUNDS:-5}"
BUDGET="${BENCH_BUDGET_S:-60}"
MIN_MS="${BENCH_MIN_TIME_MS:-1000}"
SUITE="${BENCH_SUITE:-$ROOT/../shared/bench/suite.json}"
B="$ROOT/bench/build"
MODELS="$B/models"
OUT="$B/out"
RES="$B/results"
RAW="$RES/latest.raw.jsonl"

log() { printf '[bench] %s\n' "$*" >&2; }
loadavg() { cut -d' ' -f1 /proc/loadavg; }
HZ=$(getconf CLK_TCK)
# busy (user+nice+system+irq+softirq) and steal jiffies of the whole machine
stat_busy() { awk '/^cpu /{print $2+$3+$4+$7+$8, $9; exit}' /proc/stat; }
# other_fields B0 B1 S0 S1 W0 W1 JSON: the CPUs other processes kept busy over an interval
# (machine busy time minus the measured process's own "cpu_s", over wall time) and the steal.
other_fields() {
	local cpu
	cpu=$(printf '%s' "$7" | sed -n 's/.*"cpu_s":\([0-9.]*\).*/\1/p')
	awk -v b0="$1" -v b1="$2" -v s0="$3" -v s1="$4" -v w0="$5" -v w1="$6" -v c="${cpu:-0}" -v hz="$HZ" \
		'BEGIN { w = w1 - w0; o = ((b1 - b0) / hz - c) / w; if (o < 0) o = 0;
		         printf "\"other_cpus\":%.2f,\"steal_cpus\":%.2f", o, (s1 - s0) / hz / w }'
}
# wait_idle: with BENCH_WAIT_IDLE_S > 0, sample the machine for 1 s at a time until other
# processes use less than BENCH_IDLE_CPUS CPUs, for at most BENCH_WAIT_IDLE_S seconds.
wait_idle() {
	local limit=${BENCH_WAIT_IDLE_S:-0} max=${BENCH_IDLE_CPUS:-0.3} waited=0 b0 s0 b1 s1 busy
	[ "$limit" -gt 0 ] || return 0
	while :; do
		read -r b0 s0 < <(stat_busy)
		sleep 1
		read -r b1 s1 < <(stat_busy)
		busy=$(awk -v a="$b0" -v b="$b1" -v hz="$HZ" 'BEGIN { printf "%.2f", (b - a) / hz }')
		awk -v x="$busy" -v m="$max" 'BEGIN { exit !(x < m) }' && return 0
		waited=$((waited + 1))
		if [ "$waited" -ge "$limit" ]; then
			log "machine still busy (${busy} CPUs) after ${waited}s: measuring anyway"
			return 0
		fi
	done
}

# ---- 0. oneDNN (Debian's libdnnl-dev: the headers and libdnnl.so for dnnl_bench)
if [ ! -f /usr/include/oneapi/dnnl/dnnl.h ]; then
	if [ "$(id -u)" = 0 ]; then
		log "installing libdnnl-dev (oneDNN) with apt-get"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libdnnl-dev >&2
	else
		log "oneDNN headers missing: run as root: apt-get install -y libdnnl-dev"
		exit 1
	fi
fi

LOAD_START="$(loadavg)"
log "load average (1 min) at start: $LOAD_START"

# ---- 1. library (Release) and bench tools
log "building libonnxrun (Release) in build-bench"
mkdir -p "$B"
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DONNXRUN_BUILD_TESTS=OFF >"$B/build-bench.log" 2>&1 ||
	{ cat "$B/build-bench.log" >&2; exit 1; }
cmake --build build-bench -j"$(nproc)" --target onnxrun_static >>"$B/build-bench.log" 2>&1 ||
	{ tail -50 "$B/build-bench.log" >&2; exit 1; }
mkdir -p "$B" "$OUT" "$RES"
cc -O2 -I include bench/onnxrun_bench.c build-bench/libonnxrun.a -lprotobuf-c -lm -lpthread \
	-o "$B/onnxrun_bench"
if grep -qw avx512f /proc/cpuinfo; then PEAK_FLAGS="-mavx512f -mfma"; else PEAK_FLAGS="-mavx2 -mfma"; fi
# shellcheck disable=SC2086
cc -O2 $PEAK_FLAGS -pthread bench/peak.c -o "$B/peak"
# shellcheck disable=SC2086
cc -O2 $PEAK_FLAGS -pthread bench/case_probe.c -o "$B/case_probe"
# dnnl_bench sets its thread count with omp_set_num_threads: Debian builds libdnnl with the
# OpenMP CPU runtime (libgomp); say which runtime this libdnnl links, for the record
cc -O2 -fopenmp bench/dnnl_bench.c -ldnnl -lm -o "$B/dnnl_bench"
DNNL_LIB="$(ldd "$B/dnnl_bench" | awk '/libdnnl/ {print $3; exit}')"
DNNL_RUNTIME="$(ldd "$DNNL_LIB" | awk '/libgomp|libiomp|libomp\.|libtbb/ {printf "%s%s", sep, $1; sep=","}')"
log "oneDNN: $DNNL_LIB, CPU runtime library: ${DNNL_RUNTIME:-none found}"

# ---- 2. ONNX Runtime (npm package with the CPU library inside; no download at install time)
if ! ls bench/node_modules/onnxruntime-node/bin/napi-v*/linux/x64/libonnxruntime.so* >/dev/null 2>&1; then
	log "installing onnxruntime-node from bench/package-lock.json"
	(cd bench && npm ci --ignore-scripts --no-audit --no-fund >&2)
fi
ls bench/node_modules/onnxruntime-node/bin/napi-v*/linux/x64/libonnxruntime.so* >/dev/null 2>&1 ||
	{ log "onnxruntime-node has no CPU library under bin/napi-v*/linux/x64"; exit 1; }

# ---- 3. models
log "generating models from $SUITE"
mapfile -t CASES < <("$PY" bench/make_models.py "$SUITE" -o "$MODELS" ${FILTER:+--filter "$FILTER"} --print-cases)
[ "${#CASES[@]}" -gt 0 ] || { log "no case matches '$FILTER'"; exit 1; }

# ---- 4. machine limits
if [ "${BENCH_SKIP_PEAK:-0}" = 1 ] && [ -s "$RES/peak.json" ]; then
	log "reusing $RES/peak.json"
else
	log "measuring FMA peak and memcpy bandwidth (bench/peak.c)"
	wait_idle
	read -r b0 s0 < <(stat_busy)
	w0=$(date +%s.%N)
	line=$("$B/peak")
	read -r b1 s1 < <(stat_busy)
	w1=$(date +%s.%N)
	printf '%s\n' "$line" | sed "s/^{/{$(other_fields "$b0" "$b1" "$s0" "$s1" "$w0" "$w1" "$line"),/" >"$RES/peak.json"
fi
cat "$RES/peak.json" >&2

# ---- 5. runs
: >"$RAW"
"$B/onnxrun_bench" --baseline >>"$RAW"
node bench/ort_bench.js --baseline >>"$RAW"
"$B/dnnl_bench" --baseline >>"$RAW"
# per-run fixed overhead of each tool: a one-element DepthToSpace (blocksize 1)
for t in $THREADS; do
	"$B/onnxrun_bench" "$MODELS/_floor/model.onnx" --case _floor --threads "$t" --runs 200 \
		--input "$MODELS/_floor/input.bin" | sed 's/^{/{"floor":"onnxrun",/' >>"$RAW"
	node bench/ort_bench.js "$MODELS/_floor/model.onnx" --case _floor --threads "$t" --runs 200 \
		--input "$MODELS/_floor/input.bin" | sed 's/^{/{"floor":"ort",/' >>"$RAW"
done
fail() { # case threads tool message
	printf '{"failed":true,"case":"%s","threads":%s,"tool":"%s","error":"%s"}\n' "$1" "$2" "$3" \
		"$(printf '%s' "$4" | tr -d '"\\' | tr '\n' ' ' | cut -c1-300)" >>"$RAW"
}
# run_tool NAME CMD...: runs one measurement; tags its JSON line with the tool name, the load
# average, and the CPUs that other processes kept busy meanwhile (machine busy time over the
# interval minus the tool's own cpu_s, divided by wall time) and the hypervisor's steal.
run_tool() {
	local name=$1 line b0 s0 b1 s1 w0 w1 extra
	shift
	wait_idle
	# with PROBE_T set: the FMA rate with that many threads right now (peak --probe, ~0.15 s),
	# recorded with the measurement (on a shared host; it sees the FMA units only)
	PROBE=
	[ -z "${PROBE_T:-}" ] || PROBE=$("$B/peak" --probe "$PROBE_T" | sed -n 's/.*"fma_probe_gflops":\([0-9.]*\).*/\1/p')
	read -r b0 s0 < <(stat_busy)
	w0=$(date +%s.%N)
	if ! line=$("$@" 2>"$OUT/err.txt"); then
		return 1
	fi
	read -r b1 s1 < <(stat_busy)
	w1=$(date +%s.%N)
	extra=$(other_fields "$b0" "$b1" "$s0" "$s1" "$w0" "$w1" "$line")
	[ -z "${PROBE:-}" ] || extra="$extra,\"fma_probe_gflops\":$PROBE"
	printf '%s\n' "$line" | sed "s/^{/{\"tool\":\"$name\",\"load1\":$(loadavg),$extra,/" | tee -a "$RAW" >&2
}
# na TOOL LINE: record that a tool cannot run a case (LINE: its JSON with "na", the reason)
na() { printf '%s\n' "$2" | sed "s/^{/{\"tool\":\"$1\",/" | tee -a "$RAW" >&2; }
T0=$(date +%s)
# What each case runs, decided once: which peers (no peer has a float64 ConvTranspose: ORT is
# asked once, so a version that gains one is timed; oneDNN has no DepthToSpace: dnnl_bench
# --check says) and the case probe's arguments (bench/case_probe.c, the case's unavoidable
# work alone, timed in the same rounds: ConvTranspose only, DepthToSpace's bound is the copy
# peak.c measures).
declare -A RUN_ORT LAYOUTS PROBE_ARGS IS_F64
for c in "${CASES[@]}"; do
	m="$MODELS/$c"
	IS_F64[$c]=0
	grep -q '"dtype": "float64"' "$m/meta.json" && IS_F64[$c]=1
	RUN_ORT[$c]=1
	if [ "${IS_F64[$c]}" = 1 ] && ! node bench/ort_bench.js "$m/model.onnx" --runs 1 --warmup 0 >/dev/null 2>"$OUT/err.txt"; then
		RUN_ORT[$c]=0
		na ort "{\"case\":\"$c\",\"na\":\"$(head -1 "$OUT/err.txt" | tr -d '"\\' | cut -c1-200)\"}"
	fi
	LAYOUTS[$c]=""
	for l in blocked nchw; do
		if ! line=$("$B/dnnl_bench" "$m/model.onnx" --case "$c" --layout "$l" --check 2>"$OUT/err.txt"); then
			log "dnnl_bench --check failed: $(cat "$OUT/err.txt")"
			fail "$c" "${THREADS%% *}" "dnnl_$l" "$(cat "$OUT/err.txt")"
		elif printf '%s' "$line" | grep -q '"na":'; then
			na "dnnl_$l" "$line"
		else
			LAYOUTS[$c]+="$l "
		fi
	done
	PROBE_ARGS[$c]=$("$PY" bench/report.py probe-args "$m/meta.json")
done
first_t=${THREADS%% *}
last_t=${THREADS##* }

# measure CASE T ROUND: one round of every tool on the case at T threads, in a fresh process
# each, alternating so that a slow spell of a shared host (seen: a bare micro-kernel dropping
# by a third for seconds at a time) tends to hit them all; round 1 keeps the outputs for the
# oracle checks
measure() {
	local c=$1 t=$2 round=$3 m="$MODELS/$1" l
	local -a outarg=() ortout=() dout=() layouts
	read -r -a layouts <<<"${LAYOUTS[$c]}"
	PROBE_T=$t
	[ "$round" != 1 ] || outarg=(--output "$OUT/$c.onnxrun.t$t.bin")
	if ! run_tool onnxrun "$B/onnxrun_bench" "$m/model.onnx" --case "$c" --threads "$t" \
		--runs "$RUNS" --warmup "$WARMUP" --warmup-ms "$WARMUP_MS" --budget-s "$BUDGET" --min-time-ms "$MIN_MS" --input "$m/input.bin" "${outarg[@]}"; then
		log "onnxrun failed: $(cat "$OUT/err.txt")"
		fail "$c" "$t" onnxrun "$(cat "$OUT/err.txt")"
	fi
	# shellcheck disable=SC2086
	if [ -n "${PROBE_ARGS[$c]}" ] && ! run_tool case_probe "$B/case_probe" --case "$c" ${PROBE_ARGS[$c]} \
		--threads "$t" --runs "$RUNS" --warmup "$WARMUP" --warmup-ms "$WARMUP_MS" --min-time-ms "$MIN_MS"; then
		log "case_probe failed: $(cat "$OUT/err.txt")"
		fail "$c" "$t" case_probe "$(cat "$OUT/err.txt")"
	fi
	[ "$t" != "$first_t" ] || [ "$round" != 1 ] || ortout=(--output "$OUT/$c.ort.bin")
	if [ "${RUN_ORT[$c]}" = 1 ] && ! run_tool ort node bench/ort_bench.js "$m/model.onnx" --case "$c" --threads "$t" \
		--runs "$RUNS" --warmup "$WARMUP" --warmup-ms "$WARMUP_MS" --budget-s "$BUDGET" --min-time-ms "$MIN_MS" --input "$m/input.bin" "${ortout[@]}"; then
		log "ORT failed: $(cat "$OUT/err.txt")"
		fail "$c" "$t" ort "$(cat "$OUT/err.txt")"
	fi
	for l in "${layouts[@]}"; do
		dout=()
		[ "$t" != "$first_t" ] || [ "$round" != 1 ] || dout=(--output "$OUT/$c.dnnl_$l.bin")
		# OpenMP: dnnl_bench calls omp_set_num_threads(T); the variable says the same
		if ! OMP_NUM_THREADS=$t run_tool "dnnl_$l" "$B/dnnl_bench" "$m/model.onnx" --case "$c" --layout "$l" \
			--threads "$t" --runs "$RUNS" --warmup "$WARMUP" --warmup-ms "$WARMUP_MS" --budget-s "$BUDGET" \
			--min-time-ms "$MIN_MS" --input "$m/input.bin" "${dout[@]}"; then
			log "oneDNN ($l) failed: $(cat "$OUT/err.txt")"
			fail "$c" "$t" "dnnl_$l" "$(cat "$OUT/err.txt")"
		fi
	done
	PROBE_T=
}

# check CASE: onnxrun (first thread count) against ORT, the other thread counts bitwise
# against it; without ORT's output (float64) against a numpy float64 reference; oneDNN's
# outputs against onnxrun's, same input and weights; then the outputs are removed
check() {
	local c=$1 m="$MODELS/$1" t l
	local -a also=() ref layouts
	read -r -a layouts <<<"${LAYOUTS[$c]}"
	for t in $THREADS; do
		[ "$t" = "$first_t" ] || [ ! -s "$OUT/$c.onnxrun.t$t.bin" ] || also+=(--also "$OUT/$c.onnxrun.t$t.bin")
	done
	if [ -s "$OUT/$c.onnxrun.t$first_t.bin" ]; then
		ref=(--numpy-ref "$m")
		[ ! -s "$OUT/$c.ort.bin" ] || ref=(--ref "$OUT/$c.ort.bin")
		"$PY" bench/report.py compare --case "$c" --dtype "$([ "${IS_F64[$c]}" = 1 ] && echo float64 || echo float32)" \
			"${ref[@]}" --got "$OUT/$c.onnxrun.t$first_t.bin" "${also[@]}" | tee -a "$RAW" >&2
	fi
	for l in "${layouts[@]}"; do
		if [ -s "$OUT/$c.dnnl_$l.bin" ] && [ -s "$OUT/$c.onnxrun.t$first_t.bin" ]; then
			"$PY" bench/report.py compare --case "$c" --peer "dnnl_$l" --ref "$OUT/$c.onnxrun.t$first_t.bin" \
				--got "$OUT/$c.dnnl_$l.bin" | tee -a "$RAW" >&2
		fi
	done
	[ "${BENCH_KEEP_OUTPUTS:-0}" = 1 ] || rm -f "$OUT/$c".*.bin
}

# Each round is a pass over the whole suite, so that a case's rounds lie minutes apart: a slow
# spell of the host (they last minutes on some hosts, every case of the pass slowed by 20-40%
# while the FMA probe reads its usual rate) then hits one round of a case, not all of them,
# and the median round is the machine's. The oracle checks follow a case's first round; the
# thread-scaling measurement its last.
for ((round = 1; round <= ROUNDS; round++)); do
	log "round $round of $ROUNDS: a pass over the suite"
	for c in "${CASES[@]}"; do
		for t in $THREADS; do
			log "$c threads=$t round $round (load $(loadavg))"
			measure "$c" "$t" "$round"
		done
		[ "$round" != 1 ] || check "$c"
		# thread scaling with both thread counts in one process, runs interleaved (see
		# onnxrun_bench.c): the rounds above are minutes apart on a host whose speed drifts
		if [ "$round" = "$ROUNDS" ] && [ "$last_t" != "$first_t" ]; then
			log "$c scaling $first_t -> $last_t threads, interleaved"
			if ! run_tool onnxrun_scaling "$B/onnxrun_bench" "$MODELS/$c/model.onnx" --case "$c" --threads "$first_t" \
				--scaling "$last_t" --runs $((4 * RUNS)) --warmup "$WARMUP" --warmup-ms "$WARMUP_MS" --budget-s "$BUDGET" \
				--min-time-ms $((2 * MIN_MS)) --input "$MODELS/$c/input.bin"; then
				log "onnxrun scaling failed: $(cat "$OUT/err.txt")"
				fail "$c" "$last_t" onnxrun_scaling "$(cat "$OUT/err.txt")"
			fi
		fi
	done
done
ELAPSED=$(( $(date +%s) - T0 ))
LOAD_END="$(loadavg)"
log "cases took ${ELAPSED}s; load average (1 min) at end: $LOAD_END"

# ---- 6. report
MODEL_NAME="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
GIT_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if git diff --quiet HEAD -- src include CMakeLists.txt proto 2>/dev/null; then GIT_DIRTY=false; else GIT_DIRTY=true; fi
ORT_VER="$(node -p "require('./bench/node_modules/onnxruntime-node/package.json').version")"
DNNL_VER="$(dpkg-query -W -f='${Version}' libdnnl-dev 2>/dev/null || echo unknown)"
export DNNL_VER DNNL_RUNTIME MODEL_NAME GIT_COMMIT GIT_DIRTY ORT_VER LOAD_START LOAD_END RUNS WARMUP THREADS BUDGET FILTER ELAPSED ROUNDS MIN_MS WARMUP_MS
export NODE_VER="$(node --version)" CC_VER="$(cc --version | head -1)" NPROC="$(nproc)" KERNEL="$(uname -sr)"
"$PY" - "$RES/run_meta.json" <<'EOF'
import json, os, sys, datetime
e = os.environ

json.dump({
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    "machine": {"model_name": e["MODEL_NAME"], "cores": int(e["NPROC"]), "kernel": e["KERNEL"]},
    "git_commit": e["GIT_COMMIT"], "git_dirty": e["GIT_DIRTY"] == "true",
    "config": {"runs": int(e["RUNS"]), "warmup": int(e["WARMUP"]), "warmup_ms": int(e["WARMUP_MS"]), "rounds": int(e["ROUNDS"]), "threads": [int(t) for t in e["THREADS"].split()],
               "budget_s": int(e["BUDGET"]), "min_time_ms": int(e["MIN_MS"]), "filter": e["FILTER"], "elapsed_s": int(e["ELAPSED"]),
               "wait_idle_s": int(e.get("BENCH_WAIT_IDLE_S") or 0), "idle_cpus": float(e.get("BENCH_IDLE_CPUS") or 0.3),
               "rounds_as_passes": True},
    "load": {"start": float(e["LOAD_START"]), "end": float(e["LOAD_END"])},
    "versions": {"onnxruntime_node": e["ORT_VER"], "node": e["NODE_VER"], "cc": e["CC_VER"],
                 "libdnnl_dev": e["DNNL_VER"], "dnnl_cpu_runtime": e["DNNL_RUNTIME"]},
}, open(sys.argv[1], "w"), indent=1)
EOF
"$PY" bench/report.py table --raw "$RAW" --models "$MODELS" --peak "$RES/peak.json" \
	--meta "$RES/run_meta.json" --out "$RES"
if [ -z "$FILTER" ]; then
	mkdir -p bench/results
	cp "$RES/latest.json" "$RES/latest.md" bench/results/
	"$PY" bench/chart.py bench/results/latest.json bench/results/ratio.svg
	log "wrote bench/results/latest.json, latest.md, ratio.svg"
else
	log "filtered run: results in $RES (bench/results/ is only updated by a full-suite run)"
fi
