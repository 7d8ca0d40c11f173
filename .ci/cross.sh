#!/usr/bin/env bash
# The portability stages of CI (.ci/test.sh runs them after the native ones); see
# docs/platforms.md. Each builds with warnings as errors (s390x: see below) and runs the whole
# CTest suite:
#   clang    x86-64, clang instead of gcc
#   aarch64  64-bit ARM         cross gcc, tests under qemu-aarch64
#   s390x    64-bit big-endian  cross gcc, tests under qemu-s390x
#   i386     32-bit x86, x87    cross gcc (i686), tests under qemu-i386
# Emulated floating point is slow, so the emulated runs use ONNXRUN_RANDOM_SCALE=0.25 (a
# quarter of the random configs and fixed case lists: tests/test_scale.h); the sanitizer and
# fuzzing stages stay native-only. Usage: bash .ci/cross.sh [STAGE...] (default: all four).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/cross-deps.sh
jobs=$(nproc)
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(clang aarch64 s390x i386)

for stage in "${stages[@]}"; do
	build=build-$stage
	case $stage in
	clang)
		echo "== clang build and test (x86-64, RelWithDebInfo, -Werror)"
		CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONNXRUN_WERROR=ON >/dev/null
		scale=1 ;;
	aarch64 | s390x | i386)
		toolchain=$PWD/cmake/toolchains/$([ "$stage" = i386 ] && echo i686 || echo "$stage")-linux-gnu.cmake
		werror=ON
		echo "== $stage cross build (ONNXRUN_WERROR=$werror), tests under qemu-user"
		cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
			-DONNXRUN_WERROR=$werror >/dev/null
		scale=0.25 ;;
	*)
		echo "cross.sh: unknown stage '$stage' (clang, aarch64, s390x, i386)" >&2
		exit 2 ;;
	esac
	cmake --build "$build" -j"$jobs" >/dev/null
	(cd "$build" && ONNXRUN_RANDOM_SCALE=$scale ctest --output-on-failure -j"$jobs" --timeout 1500)
done
