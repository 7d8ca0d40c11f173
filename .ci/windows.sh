#!/usr/bin/env bash
# The Windows build and its tests (README, Platforms: Windows). Cross-compiles with Debian's
# MinGW-w64 into build-windows/: onnxrun.exe, libonnxrun.dll with its import library
# libonnxrun.dll.a, the static libonnxrun.a and the cmocka tests as .exe. Then runs, under
# wine64:
#  1. the CLI on the example model, `onnxrun.exe test` over tests/data and models/, the
#     external-data model by a Windows path (drive letter and backslashes), outputs written
#     to a new folder (.pb and .npy) and read back by a run at another thread count, --dot;
#  2. the cmocka suite through CTest (CMAKE_CROSSCOMPILING_EMULATOR): the ops' randomized
#     tests at full scale, kernels on every ISA the CPU has, threads, conformance, loader
#     (external-data paths with drive letters and backslashes), sessions, the platform
#     layer, test_cli, test_cli_test and test_cli_dot (CreateProcess). test_cli_timeout
#     (SIGINT, /proc), valgrind_cli and install_examples report themselves skipped.
# Dependencies: .ci/windows_deps.sh (MinGW-w64, wine64; protobuf-c and cmocka from Debian's
# sources). Takes about 6 minutes on 2 cores from scratch (320-352 s measured).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
jobs=$(nproc)

bash .ci/windows_deps.sh build-windows/deps
prefix=$PWD/build-windows/deps/prefix
wine=/usr/lib/wine/wine64
# A prefix of its own; no prompts to install wine's Mono or Gecko.
export WINEPREFIX=$PWD/build-windows/wine WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="

echo "== windows: build (MinGW-w64, x86_64, -Werror)"
cmake -S . -B build-windows -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/x86_64-w64-mingw32.cmake \
	-DCMAKE_BUILD_TYPE=Release -DONNXRUN_WERROR=ON \
	-DONNXRUN_PROTOBUFC_LIBRARY="$prefix/lib/libprotobuf-c.a" -DONNXRUN_PROTOBUFC_INCLUDE_DIR="$prefix/include" \
	-DONNXRUN_CMOCKA_LIBRARY="$prefix/lib/libcmocka.a" -DONNXRUN_CMOCKA_INCLUDE_DIR="$prefix/include" \
	-DCMAKE_CROSSCOMPILING_EMULATOR="$wine" >/dev/null
cmake --build build-windows -j"$jobs" >/dev/null
for f in onnxrun.exe libonnxrun.dll libonnxrun.dll.a libonnxrun.a; do
	printf '  %-18s %8d bytes\n' "$f" "$(stat -c %s "build-windows/$f")"
done

if [ ! -f "$WINEPREFIX/system.reg" ]; then
	echo "== windows: wine prefix build-windows/wine"
	"$wine" wineboot -i >/dev/null 2>&1
fi

echo "== windows: the CLI under wine"
"$wine" build-windows/onnxrun.exe models/upsampler/model.onnx models/upsampler/test_data_set_0
"$wine" build-windows/onnxrun.exe test tests/data models | tail -1
# wine's drive Z: is the host's root folder
winpath="Z:$(printf '%s' "$PWD/models/external_data" | tr / '\\')"
echo "onnxrun.exe test $winpath"
"$wine" build-windows/onnxrun.exe test "$winpath" | tail -1

# Outputs written to a new nested folder given with backslashes (created like mkdir -p) at
# 1 thread, then read back as the expected outputs of a 2-thread run: bitwise equal.
out=build-windows/cli-out
rm -rf "$out"
"$wine" build-windows/onnxrun.exe --threads 1 -o 'build-windows\cli-out\set' --npy \
	models/upsampler/model.onnx models/upsampler/test_data_set_0 >/dev/null
cp models/upsampler/test_data_set_0/input_0.pb "$out/set/"
"$wine" build-windows/onnxrun.exe --threads 2 --rtol 0 --atol 0 models/upsampler/model.onnx "$out/set"
/usr/bin/python3 -c 'import numpy, sys; a = numpy.load(sys.argv[1]); assert a.shape == (1, 3, 128, 128), a.shape' \
	"$out/set/upscaled.npy"
"$wine" build-windows/onnxrun.exe --dot 'build-windows\cli-out\graph.dot' models/upsampler/model.onnx
grep -q '^digraph' "$out/graph.dot"

echo "== windows: cmocka suite under wine"
(cd build-windows && ctest --output-on-failure -j"$jobs" --timeout 900)
echo "windows: $(($(date +%s) - start)) s"
