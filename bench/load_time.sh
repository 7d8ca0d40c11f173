#!/usr/bin/env bash
# Model loading vs reading the file: builds a ConvTranspose model with ~200 MB of weights
# (W [1024,512,10,10] float32), once inline and once as external data, and times
#   read: reading the file(s) into memory (fread into a malloc'd buffer), and
#   load: `onnxrun --info` (parse, decode, infer, pre-pack weights; runs nothing),
# each the median of 5 runs with the files in the page cache.
# Usage: bash bench/load_time.sh   (needs build-bench/ or build/ with the onnxrun binary)
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/build/load
mkdir -p "$out"
cli=
for c in build-bench/onnxrun build/onnxrun; do [ -x "$c" ] && { cli=$c; break; }; done
[ -n "$cli" ] || { echo "build onnxrun first (cmake -S . -B build && cmake --build build)"; exit 1; }
[ -f "$out/inline.onnx" ] || /usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
d = sys.argv[1]
w = np.random.RandomState(0).randn(1024, 512, 10, 10).astype(np.float32)
g = helper.make_graph([helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], name="up")], "big",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024, 2, 2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.zeros(512, np.float32), "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]); m.ir_version = 7
onnx.save(m, d + "/inline.onnx")
onnx.save(m, d + "/ext.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
          location="ext.bin", size_threshold=1024)
PY
cat >"$out/readf.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		long n;
		char *p;
		if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
			return 1;
		p = malloc(n ? (size_t)n : 1);
		if (!p || fread(p, 1, (size_t)n, f) != (size_t)n)
			return 1;
		fclose(f);
		free(p);
	}
	return 0;
}
C
cc -O2 "$out/readf.c" -o "$out/readf"
median_ms() { # command...
	local t=()
	"$@" >/dev/null
	for _ in 1 2 3 4 5; do
		local a b
		a=$(date +%s%N)
		"$@" >/dev/null
		b=$(date +%s%N)
		t+=($(((b - a) / 1000000)))
	done
	printf '%s\n' "${t[@]}" | sort -n | sed -n 3p
}
for kind in inline ext; do
	files=("$out/$kind.onnx")
	[ "$kind" = ext ] && files+=("$out/ext.bin")
	r=$(median_ms "$out/readf" "${files[@]}")
	l=$(median_ms "$cli" --info "$out/$kind.onnx")
	echo "$kind: read ${r} ms, load ${l} ms, ratio $(awk -v a="$l" -v b="$r" 'BEGIN { printf "%.2f", a / (b ? b : 1) }')"
done
