#!/usr/bin/env bash
# Quick start 1: builds onnxrun and runs it on the bundled example model (a learned 2x image
# upsampler: ConvTranspose -> DepthToSpace -> ConvTranspose), comparing with its expected output.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DONNXRUN_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target onnxrun_cli >/dev/null
set -x
./build/onnxrun models/upsampler/model.onnx models/upsampler/test_data_set_0
