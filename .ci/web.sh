#!/usr/bin/env bash
# The browser stage (docs/web.md): builds the npm package's four WebAssembly builds with
# Debian's emscripten, checks their sizes, tests the package under node and in headless
# Chromium (tests/web/run.mjs: the conformance tree per build and through the worker proxy,
# bad input, threads bitwise, relaxed SIMD within tolerance, main-thread frame gaps, the
# onnxruntime-web example code with only the import changed, `npm pack` installed offline, the
# demo page against the CLI, tsc --noEmit of the declarations).
#   build-wasm/          onnxrun-simd + the CLI (shared with .ci/wasm.sh)
#   build-wasm-relaxed/  onnxrun-relaxed (relaxed SIMD)
#   build-wasm-threads/  onnxrun-threads (pthreads)
#   build-wasm-relaxed-threads/  onnxrun-relaxed-threads (pthreads + relaxed SIMD)
#   build-web/artifacts/ demo.png, the demo page's screenshot (the CI artifact)
# Dependencies: .ci/wasm_deps.sh and .ci/web_deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
jobs=$(nproc)
[ "$jobs" -gt 2 ] && jobs=2

bash .ci/wasm_deps.sh build-wasm/deps
bash .ci/web_deps.sh
prefix=$PWD/build-wasm/deps/prefix

for b in simd:build-wasm: relaxed:build-wasm-relaxed:-DONNXRUN_WASM_RELAXED_SIMD=ON threads:build-wasm-threads:-DONNXRUN_WASM_THREADS=ON \
	relaxed-threads:build-wasm-relaxed-threads:-DONNXRUN_WASM_THREADS=ON,-DONNXRUN_WASM_RELAXED_SIMD=ON; do
	IFS=: read -r name dir flags <<<"$b"
	IFS=, read -r -a flag <<<"$flags"
	echo "== web: build onnxrun-$name ($dir)"
	emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DONNXRUN_WERROR=ON "${flag[@]}" \
		-DONNXRUN_PROTOBUFC_LIBRARY="$prefix/lib/libprotobuf-c.a" -DONNXRUN_PROTOBUFC_INCLUDE_DIR="$prefix/include" \
		-DONNXRUN_CMOCKA_LIBRARY="$prefix/lib/libcmocka.a" -DONNXRUN_CMOCKA_INCLUDE_DIR="$prefix/include" \
		-DCMAKE_CROSSCOMPILING_EMULATOR="$(command -v node)" >/dev/null
	targets=(onnxrun_web)
	[ "$name" = simd ] && targets+=(onnxrun_cli) # the demo test compares with the CLI
	cmake --build "$dir" -j"$jobs" --target "${targets[@]}" >/dev/null
done

echo "== web: package files and sizes (limit: 150 KB gzip'd per build)"
bash js/tools/dist.sh | tee build-web-sizes.txt
while read -r line; do
	gz=$(sed -n 's/.*(\([0-9]*\) gzip.d)$/\1/p' <<<"$line")
	if [ -n "$gz" ] && [ "$gz" -gt 153600 ]; then
		echo "web: over 150 KB gzip'd: $line" >&2
		exit 1
	fi
done <build-web-sizes.txt
mkdir -p build-web && mv build-web-sizes.txt build-web/sizes.txt

echo "== web: the package under node"
node js/test.mjs

echo "== web: headless Chromium"
node tests/web/run.mjs --artifacts build-web/artifacts
echo "web: screenshot of the demo: build-web/artifacts/demo.png"
