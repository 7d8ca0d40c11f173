#!/usr/bin/env bash
# Quick start 2: builds onnxrun with warnings as errors and runs every test (CTest: cmocka
# unit, op, conformance and CLI tests; then valgrind over the CLI on good and bad inputs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh --test
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DONNXRUN_WERROR=ON >/dev/null
cmake --build build-test -j"$(nproc)"
cd build-test
ctest --output-on-failure -j"$(nproc)"
