#!/usr/bin/env bash
# Runs the onnxrun CLI under valgrind memcheck over every conformance case, the example
# models and bad inputs (malformed models, missing/wrong files). Each run must exit with the
# expected status and valgrind must report no error and no leak.
# Usage: valgrind_cli.sh ONNXRUN_BINARY SOURCE_DIR TMP_DIR
#        valgrind_cli.sh --skip REASON   (prints the reason, exits 77: CTest's "skipped")
set -u
if [ "${1:-}" = --skip ]; then
	echo "valgrind_cli: skipped: $2"
	exit 77
fi
cli=$1 src=$2 tmp=$3
fail=0 runs=0
vg() { # expected_status args...
	local want=$1
	shift
	runs=$((runs + 1))
	valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
		--error-exitcode=99 "$cli" "$@" >"$tmp/vg.out" 2>"$tmp/vg.err"
	local got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL (status $got, expected $want): onnxrun $*"
		cat "$tmp/vg.err"
		fail=$((fail + 1))
	fi
}
mkdir -p "$tmp"
for d in "$src"/tests/data/*/ "$src"/models/*/; do
	[ -f "$d/model.onnx" ] || continue
	vg 0 "$d/model.onnx" "$d/test_data_set_0"
done
for f in "$src"/tests/bad/*.onnx; do
	vg 2 "$f" --random
done
head -c 100 "$src/models/upsampler/model.onnx" >"$tmp/truncated.onnx"
vg 2 "$tmp/truncated.onnx" --random
vg 2 "$tmp/does-not-exist.onnx"
vg 2 "$src/models/upsampler/model.onnx" "$tmp/no-such-folder"
vg 2 "$src/models/upsampler/model.onnx" --input-that-is-unknown
# an int64 tensor fed where float is declared
mkdir -p "$tmp/wrong_dtype"
cp "$src/models/d2s_dcr_int64/test_data_set_0/input_0.pb" "$tmp/wrong_dtype/input_0.pb"
vg 2 "$src/models/upsampler/model.onnx" "$tmp/wrong_dtype"
# a float input of the wrong shape
mkdir -p "$tmp/wrong_shape"
cp "$src/tests/data/test_convtranspose/test_data_set_0/input_0.pb" "$tmp/wrong_shape/input_0.pb"
vg 2 "$src/models/upsampler/model.onnx" "$tmp/wrong_shape"
# a deliberately wrong expected output: exit 1
mkdir -p "$tmp/mismatch"
cp "$src/tests/data/test_convtranspose/test_data_set_0/input_"*.pb "$tmp/mismatch/"
cp "$src/tests/data/test_convtranspose_pad/test_data_set_0/output_0.pb" "$tmp/mismatch/output_0.pb"
vg 1 "$src/tests/data/test_convtranspose/model.onnx" "$tmp/mismatch"
echo "valgrind: $((runs - fail)) passed, $fail failed"
[ $fail = 0 ]
