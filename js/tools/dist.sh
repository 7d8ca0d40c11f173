#!/usr/bin/env bash
# Copies the four builds into js/dist/, the folder the package ships and js/onnxrun.mjs loads
# by default: onnxrun-simd (build-wasm), onnxrun-relaxed (build-wasm-relaxed),
# onnxrun-threads (build-wasm-threads) and onnxrun-relaxed-threads
# (build-wasm-relaxed-threads); .ci/web.sh builds them. Prints each build's sizes.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p js/dist
for b in simd:build-wasm relaxed:build-wasm-relaxed threads:build-wasm-threads relaxed-threads:build-wasm-relaxed-threads; do
	name=onnxrun-${b%%:*} dir=${b#*:}/js
	cp "$dir/$name.js" "$dir/$name.mjs" "$dir/$name.wasm" js/dist/
	[ -f "$dir/$name.worker.js" ] && cp "$dir/$name.worker.js" js/dist/
	# what a page loads for this build: the package's JS, the build's module and wasm
	files=(js/onnxrun.mjs "js/dist/$name.mjs" "js/dist/$name.wasm")
	case $name in *threads) files+=("js/dist/$name.js" "js/dist/$name.worker.js") ;; esac
	raw=$(cat "${files[@]}" | wc -c) gz=$(cat "${files[@]}" | gzip -9 | wc -c)
	wasm=$(wc -c <"js/dist/$name.wasm") wasmgz=$(gzip -9 <"js/dist/$name.wasm" | wc -c)
	echo "dist: $name: wasm $wasm bytes ($wasmgz gzip'd); with the JS a page loads $raw bytes ($gz gzip'd)"
done
