#!/usr/bin/env bash
# bench/ab.sh OLD NEW [FILTER] - is revision NEW as fast as revision OLD?
#
# Builds onnxrun_bench for two git revisions (any commit-ish; "WORKTREE" means the checkout
# as it is, uncommitted changes included), generates the suite's models once, then times
# every case in alternating processes: OLD, NEW, OLD, NEW... (AB_ROUNDS rounds, a fresh
# process each), so that a slow spell of the host hits both sides. Prints, per case, the
# median over the rounds of each side's median time, NEW/OLD, and the range of each side's
# round medians. Only onnxrun is timed; the
# peers are run.sh's job.
#
# Variables: AB_ROUNDS (default 7), AB_THREADS (default 1), AB_MIN_TIME_MS (default 300: each
# process times runs for at least this long after AB_WARMUP_MS (default 150) of warm-up),
# AB_FLOAT64 (default 0; 1: the suite's float64 variants too, named *_f64), AB_NEIGHBOUR (MiB,
# default none: runs bench/neighbour.c, a memory-streaming process, pinned to the last CPU
# and every timed process pinned to the others, which reproduces the host's slow spells;
# needs taskset and 2 CPUs or more).
# Needs what run.sh needs for onnxrun alone: cmake, a C compiler, libprotobuf-c, and
# /usr/bin/python3 with Debian's python3-onnx and python3-numpy for the models.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bash bench/ab.sh OLD_REV NEW_REV [CASE_FILTER]" >&2; exit 2; }
old=$1 new=$2 filter=${3:-}
rounds=${AB_ROUNDS:-7} threads=${AB_THREADS:-1}
work=bench/build/ab
mkdir -p "$work"

# build REV NAME: bench/build/ab/NAME/onnxrun_bench for revision REV
build() {
	local rev=$1 name=$2 src
	if [ "$rev" = WORKTREE ]; then
		src=$PWD
	else
		src=$PWD/$work/$name-src
		rm -rf "$src"
		git worktree prune
		git worktree add --detach "$src" "$rev" >/dev/null 2>&1
	fi
	# a build directory configured for another source tree (a revision's worktree, or the
	# checkout itself) is started afresh: cmake refuses to switch sources
	if [ -f "$work/$name/CMakeCache.txt" ] &&
		! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$src" "$work/$name/CMakeCache.txt"; then
		rm -rf "${work:?}/$name"
	fi
	cmake -S "$src" -B "$work/$name" -DCMAKE_BUILD_TYPE=Release -DONNXRUN_BUILD_TESTS=OFF >/dev/null
	cmake --build "$work/$name" --target onnxrun_static -j"$(nproc)" >/dev/null
	cc -O2 -I "$src/include" "$src/bench/onnxrun_bench.c" "$work/$name/libonnxrun.a" \
		-lprotobuf-c -lm -lpthread -o "$work/$name/onnxrun_bench"
	if [ "$rev" != WORKTREE ]; then
		git worktree remove --force "$src"
	fi
}
build "$old" old
build "$new" new

models=bench/build/models
args=()
[ -n "$filter" ] && args=(--filter "$filter")
mapfile -t cases < <(/usr/bin/python3 bench/make_models.py ../shared/bench/suite.json -o "$models" \
	"${args[@]}" $([ "${AB_FLOAT64:-0}" = 1 ] || echo --no-float64) --print-cases | grep -v '_floor$')

pin=()
if [ -n "${AB_NEIGHBOUR:-}" ]; then
	last=$(($(nproc) - 1))
	[ "$last" -ge 1 ] || { echo "AB_NEIGHBOUR needs 2 CPUs or more" >&2; exit 2; }
	[ "$last" -ge "$threads" ] || { echo "AB_NEIGHBOUR: $threads thread(s) leave no CPU for it" >&2; exit 2; }
	cc -O2 bench/neighbour.c -o "$work/neighbour"
	taskset -c "$last" "$work/neighbour" "$AB_NEIGHBOUR" &
	neighbour=$!
	trap 'kill "$neighbour" 2>/dev/null' EXIT
	pin=(taskset -c "0-$((last - 1))")
fi

# time SIDE CASE: one process, its median ms
time_one() {
	"${pin[@]}" "$work/$1/onnxrun_bench" "$models/$2/model.onnx" --input "$models/$2/input.bin" \
		--threads "$threads" --runs 20 --min-time-ms "${AB_MIN_TIME_MS:-300}" \
		--warmup-ms "${AB_WARMUP_MS:-150}" 2>/dev/null | sed -n 's/.*"median_ms":\([0-9.]*\).*/\1/p'
}
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "# bench/ab.sh $old $new: $threads thread(s), $rounds alternating rounds, median of round medians (ms)${AB_NEIGHBOUR:+, beside a ${AB_NEIGHBOUR} MiB streaming neighbour}"
for c in "${cases[@]}"; do
	o=() n=()
	for _ in $(seq "$rounds"); do
		o+=("$(time_one old "$c")")
		n+=("$(time_one new "$c")")
	done
	mo=$(printf '%s\n' "${o[@]}" | median)
	mn=$(printf '%s\n' "${n[@]}" | median)
	# the range of each side's round medians: the spread behind the median
	ro=$(printf '%s\n' "${o[@]}" | sort -g | sed -n '1p;$p' | paste -sd-)
	rn=$(printf '%s\n' "${n[@]}" | sort -g | sed -n '1p;$p' | paste -sd-)
	awk -v c="$c" -v o="$mo" -v n="$mn" -v ro="$ro" -v rn="$rn" \
		'BEGIN { printf "%-36s old %8.3f  new %8.3f  new/old %.3f  (rounds: old %s, new %s)\n", c, o, n, n / o, ro, rn }'
done
