#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, own build folder) and runs one for a
# bounded time over its committed seed corpus.
# Usage: tests/fuzz/run.sh TARGET SECONDS     TARGET: model | tensor_pb | npy | all
# Environment: BUILD_DIR (default build-fz), JOBS (build parallelism, default 2), FUZZ_ARGS
# (more libFuzzer flags, e.g. FUZZ_ARGS=-timeout=60; later flags win).
# New inputs go to $BUILD_DIR/work/TARGET (the committed corpus is only read); a crash,
# leak, timeout (-timeout=10) or RSS above 2 GiB writes $BUILD_DIR/artifacts/TARGET/... and
# makes the script fail. Each run appends its final stats to $BUILD_DIR/tally.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:?usage: run.sh TARGET SECONDS}
seconds=${2:?usage: run.sh TARGET SECONDS}
build=${BUILD_DIR:-build-fz}
jobs=${JOBS:-2}

if [ "$target" = all ]; then
	for t in model tensor_pb npy; do
		"$0" "$t" "$seconds"
	done
	exit 0
fi
dict=()
case $target in
model) max_len=16384 dict=(-dict=tests/fuzz/model.dict) ;;
tensor_pb | npy) max_len=4096 ;;
*) echo "run.sh: unknown target '$target' (model, tensor_pb, npy, all)" >&2; exit 2 ;;
esac

cc=${CC:-clang}
command -v "$cc" >/dev/null || cc=clang-14
CC=$cc cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONNXRUN_FUZZ=ON \
	-DONNXRUN_BUILD_TESTS=OFF -DONNXRUN_WERROR=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target "fuzz_$target" >/dev/null

work="$build/work/$target" artifacts="$build/artifacts/$target"
mkdir -p "$work" "$artifacts"
log="$build/fuzz_$target.log"
set +e
start=$SECONDS
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	"$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
	-max_len="$max_len" "${dict[@]}" -print_final_stats=1 -artifact_prefix="$artifacts/" \
	${FUZZ_ARGS:-} "$work" "tests/fuzz/corpus/$target" >"$log" 2>&1
rc=$?
elapsed=$((SECONDS - start))
set -e
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
echo "$(date -u +%FT%TZ) target=$target seconds=$elapsed execs=${execs:-0} rc=$rc" >>"$build/tally.txt"
echo "fuzz_$target: ${execs:-0} executions in ${elapsed}s, exit $rc"
if [ "$rc" != 0 ]; then
	grep -E 'ERROR|SUMMARY|runtime error|Test unit written|Slowest|timeout' "$log" | head -20 >&2
	echo "fuzz_$target FAILED: see $log and $artifacts/" >&2
	exit 1
fi
