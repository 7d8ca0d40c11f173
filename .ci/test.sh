#!/usr/bin/env bash
# Quick start 2: builds onnxrun with warnings as errors and runs every test:
#  1. the CTest suite (cmocka unit, op, conformance, API and CLI tests; valgrind memcheck of
#     the CLI; install + examples via pkg-config and find_package);
#  2. the same cmocka suite built with AddressSanitizer + UndefinedBehaviorSanitizer;
#  3. the Python package (python/): built and installed offline with pip from this checkout
#     into build-python/site, then its pytest suite (docs/python.md);
#  4. the tests that use threads under ThreadSanitizer: the API (a model shared by four
#     threads), cancellation, shared pools, onnxrun_op_parallel_for;
#  5. each libFuzzer target (tests/fuzz: model, tensor_pb, npy) for FUZZ_SECONDS (default 60)
#     under ASan + UBSan; any crash, leak, hang or OOM fails (see docs/security.md);
#  6-9. .ci/cross.sh: the CTest suite built with clang, and cross-built for aarch64, s390x
#     (big-endian) and i386 (32-bit) with its tests under qemu-user (docs/platforms.md).
#     CROSS_STAGES="clang aarch64" picks some of them, CROSS_STAGES=none skips them.
#  10. the WebAssembly build and its tests under node (.ci/wasm.sh; docs/platforms.md).
#     WASM_STAGE=none skips it.
#  11. the Windows build (MinGW-w64: DLL, static library, onnxrun.exe) and its tests under
#     wine64 (.ci/windows.sh; docs/platforms.md). WINDOWS_STAGE=none skips it.
#  12. the microcontroller build (Cortex-M4F and Cortex-M55 firmware: tests, example,
#     footprint) under qemu-system-arm (.ci/mcu.sh; README, Microcontrollers).
#     MCU_STAGE=none skips it.
set -euo pipefail
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
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j"$jobs" -E 'valgrind|install')

stage "Python package (pip install ./python offline, pytest)"
# Debian's python3 explicitly: a pyenv python3 may come first on PATH and lacks numpy/onnx.
rm -rf build-python
ONNXRUN_WERROR=1 ONNXRUN_BUILD_JOBS="$jobs" /usr/bin/python3 -m pip install -q --no-build-isolation \
	--no-index --no-deps --disable-pip-version-check --root-user-action=ignore \
	--target build-python/site ./python
PYTHONPATH="$PWD/build-python/site" /usr/bin/python3 -m pytest -q -rs -p no:cacheprovider python/tests

stage "ThreadSanitizer"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONNXRUN_WERROR=ON -DONNXRUN_TSAN=ON >/dev/null
tsan_tests="test_api test_cancel test_shared_pool test_op_parallel"
cmake --build build-tsan -j"$jobs" --target $tsan_tests >/dev/null
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -R "^(${tsan_tests// /|})\$")

stage "Fuzzing (libFuzzer + ASan + UBSan, ${FUZZ_SECONDS:-60} s per target)"
for target in model tensor_pb npy; do
	JOBS=$jobs bash tests/fuzz/run.sh "$target" "${FUZZ_SECONDS:-60}"
done

read -r -a cross <<<"${CROSS_STAGES:-clang aarch64 s390x i386}"
[ "${cross[*]}" = none ] && cross=()
if [ ${#cross[@]} -gt 0 ]; then
	stage "portability builds: ${cross[*]}"
	bash .ci/cross.sh "${cross[@]}"
fi
wasm=0
if [ "${WASM_STAGE:-}" != none ]; then
	stage "WebAssembly (emscripten, tests under node)"
	bash .ci/wasm.sh
	wasm=1
fi

windows=0
if [ "${WINDOWS_STAGE:-}" != none ]; then
	stage "Windows (MinGW-w64, tests under wine64)"
	bash .ci/windows.sh
	windows=1
fi

mcu=0
if [ "${MCU_STAGE:-}" != none ]; then
	stage "microcontrollers (Cortex-M4F, Cortex-M55 under qemu-system-arm)"
	bash .ci/mcu.sh
	mcu=1
fi

# Reaching this line means every stage passed (set -e stops at the first failure).
echo "stages: $((5 + ${#cross[@]} + wasm + windows + mcu)) passed, 0 failed, in ${SECONDS} s"
