#!/usr/bin/env bash
# The test command (README, Quick start 2). Two forms:
#
#   bash .ci/test.sh          the native stages, what a contributor runs (about 9 minutes
#                             on 2 cores, README): checks, build + CTest, sanitizers, the
#                             Python package, ThreadSanitizer, a short fuzz run;
#   bash .ci/test.sh --full   the same, then the full matrix (cross builds under qemu,
#                             WebAssembly, Windows, ...): what CI runs (.ci/run), about
#                             23 minutes more on a quiet 2-core machine.
#
# Native stages (always):
#  1. the docs cite only files in the repository; the layering of src/;
#  2. the CTest suite (cmocka unit, op, conformance, API and CLI tests; valgrind memcheck of
#     the CLI; install + examples via pkg-config and find_package);
#  3. the same cmocka suite built with AddressSanitizer + UndefinedBehaviorSanitizer (a
#     quarter of the randomized case lists, ONNXRUN_RANDOM_SCALE=0.25; all with --full);
#  4. the Python package (python/): built and installed offline with pip from this checkout
#     into build-python/site, then its pytest suite (docs/python.md);
#  5. the tests that use threads under ThreadSanitizer: the API (a model shared by four
#     threads), cancellation, shared pools, onnxrun_op_parallel_for, the soak test;
#  6. each libFuzzer target (tests/fuzz: model, tensor_pb, npy) for FUZZ_SECONDS under ASan +
#     UBSan (default 10 s each, 60 with --full); any crash, leak, hang or OOM fails
#     (docs/security.md).
# Full-matrix stages (--full only), each one script under .ci/ (see full_matrix below):
#  - .ci/cross.sh: the CTest suite built with clang, and cross-built for aarch64, s390x
#    (big-endian) and i386 (32-bit) with its tests under qemu-user (docs/platforms.md).
#    CROSS_STAGES="clang aarch64" picks some of them, CROSS_STAGES=none skips them.
#  - .ci/wasm.sh: the WebAssembly build and its tests under node. WASM_STAGE=none skips it.
#  - .ci/web.sh: the npm package in headless Chromium (three wasm builds, browser tests, demo
#    screenshot in build-web/artifacts/; docs/web.md). WEB_STAGE=none skips it.
#  - .ci/windows.sh: the Windows build (MinGW-w64: DLL, static library, onnxrun.exe) and its
#    tests under wine64. WINDOWS_STAGE=none skips it.
#  - .ci/mcu.sh: the microcontroller build (Cortex-M4F and Cortex-M55 firmware: tests,
#    example, footprint) under qemu-system-arm (README, Microcontrollers). MCU_STAGE=none
#    skips it.
set -euo pipefail
full=0
for arg in "$@"; do
	case $arg in
	--full) full=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "usage: bash .ci/test.sh [--full]" >&2
		exit 2
		;;
	esac
done
cd "$(dirname "$0")/.."
bash .ci/deps.sh --test
jobs=$(nproc)
# Every stage header says how long the run has taken so far (CI must stay well under an hour).
stage() { echo "== $* (at ${SECONDS} s)"; }

# Design and style rules live in docs/design.md. Older comments cited two files that are not
# in the repository; no tracked file may cite them again. The names are built from two parts
# so that this check does not match itself.
stage "docs cite only what is in the repository"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	stale=$(git ls-files -z | xargs -0 grep -lIF -e "DESIGN"".md" -e "STYLE"".md" -e "DESIGN"" §" -- || true)
	if [ -n "$stale" ]; then
		echo "error: these files cite design/style files that are not in the repository;" \
			"cite a section of docs/design.md instead:" >&2
		echo "$stale" | sed 's/^/  /' >&2
		exit 1
	fi
else
	echo "skipped: not a git checkout"
fi

# The layering: no include or call cycle among the files of src/ops, and instruction-set code
# only in src/kernels (docs/kernels.md).
stage "layering of src/"
python3 tests/lint/check_layers.py

stage "build and test (RelWithDebInfo, -Werror)"
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONNXRUN_WERROR=ON >/dev/null
cmake --build build-test -j"$jobs" >/dev/null
(cd build-test && ctest --output-on-failure -j"$jobs")

stage "AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DONNXRUN_WERROR=ON -DONNXRUN_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
# The default run checks a quarter of the randomized and long case lists under the
# sanitizers (ONNXRUN_RANDOM_SCALE, tests/test_scale.h; the same seeds, so what fails at one
# scale fails at any that runs it): the plain build above ran them all, and test_kernels
# alone takes 5 minutes under ASan on 2 cores. --full runs everything here too.
asan_scale=${ONNXRUN_RANDOM_SCALE:-$([ $full = 1 ] && echo 1 || echo 0.25)}
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ONNXRUN_RANDOM_SCALE=$asan_scale \
	ctest --output-on-failure -j"$jobs" -E 'valgrind|install')

stage "Python package (pip install ./python offline, pytest)"
# Debian's python3 explicitly: a pyenv python3 may come first on PATH and lacks numpy/onnx.
rm -rf build-python
ONNXRUN_WERROR=1 ONNXRUN_BUILD_JOBS="$jobs" /usr/bin/python3 -m pip install -q --no-build-isolation \
	--no-index --no-deps --disable-pip-version-check --root-user-action=ignore \
	--target build-python/site ./python
PYTHONPATH="$PWD/build-python/site" /usr/bin/python3 -m pytest -q -rs -p no:cacheprovider python/tests
# Typing: the package (with its stubs for the C extension) and the ORT-style example script.
(cd python && /usr/bin/python3 -m mypy --strict --cache-dir=/dev/null -p onnxrun &&
	/usr/bin/python3 -m mypy --strict --cache-dir=/dev/null examples/ort_style.py)

stage "ThreadSanitizer"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONNXRUN_WERROR=ON -DONNXRUN_TSAN=ON >/dev/null
tsan_tests="test_api test_cancel test_shared_pool test_op_parallel test_soak"
cmake --build build-tsan -j"$jobs" --target $tsan_tests >/dev/null
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -R "^(${tsan_tests// /|})\$")

fuzz_seconds=${FUZZ_SECONDS:-$([ $full = 1 ] && echo 60 || echo 10)}
stage "Fuzzing (libFuzzer + ASan + UBSan, ${fuzz_seconds} s per target)"
for target in model tensor_pb npy; do
	JOBS=$jobs bash tests/fuzz/run.sh "$target" "$fuzz_seconds"
done
native=5

if [ $full = 0 ]; then
	echo "stages: $native passed, 0 failed, in ${SECONDS} s (the full matrix: bash .ci/test.sh --full)"
	exit 0
fi

# ---- the full matrix (--full) ----
# One line per stage: "<name> <script> [args...]"; a stage is skipped when the variable
# <NAME>_STAGE is "none" (WASM_STAGE=none, WINDOWS_STAGE=none, ...). Platforms that bring
# their own stage script have one line here.
read -r -a cross <<<"${CROSS_STAGES:-clang aarch64 s390x i386}"
[ "${cross[*]}" = none ] && cross=()
full_matrix=(
	"cross .ci/cross.sh ${cross[*]}"
	"wasm .ci/wasm.sh"
	"web .ci/web.sh"
	"windows .ci/windows.sh"
	"mcu .ci/mcu.sh"
)
ran=0
for entry in "${full_matrix[@]}"; do
	read -r -a words <<<"$entry"
	name=${words[0]}
	skip_var="$(echo "$name" | tr '[:lower:]' '[:upper:]')_STAGE"
	if [ "${!skip_var:-}" = none ] || { [ "$name" = cross ] && [ ${#cross[@]} -eq 0 ]; }; then
		echo "== $name: skipped"
		continue
	fi
	stage "full matrix: $name (${words[*]:1})"
	bash "${words[@]:1}"
	if [ "$name" = cross ]; then
		ran=$((ran + ${#cross[@]}))
	else
		ran=$((ran + 1))
	fi
done

# Reaching this line means every stage passed (set -e stops at the first failure).
echo "stages: $((native + ran)) passed, 0 failed, in ${SECONDS} s"
