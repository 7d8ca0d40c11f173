#!/usr/bin/env bash
# Model loading vs reading the file: builds a ConvTranspose model with ~200 MB of weights
# (W [1024,512,10,10] float32), once inline and once as external data, and times
#   read: reading the file(s) into memory (fread into a malloc'd buffer), and
#   load: `onnxrun --info` (parse, decode, infer, pre-pack weights; runs nothing),
# each the median of 9 alternating runs with the files in the page cache, with the files
# mapped (the default) and read (--no-mmap); and, to explain the ratios, the time to write
# the same number of bytes of fresh memory once (its page faults), timed the same way.
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
#include <string.h>
int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "-t")) { /* -t BYTES: first write of fresh memory */
		size_t n = strtoull(argv[2], NULL, 10);
		char *p = malloc(n ? n : 1);
		if (!p)
			return 1;
		memset(p, 1, n);
		printf("%d\n", p[n / 2]);
		free(p);
		return 0;
	}
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
now_ns() { date +%s%N; }
# Times the reading command and the loading command alternately (one warm-up each, then 9
# pairs) so a burst of other load hits both; prints "read_ms load_ms" (medians).
pair_ms() { # read-command... -- load-command...
	local rd=() ld=() i a b rt=() lt=()
	while [ "$1" != -- ]; do rd+=("$1"); shift; done
	shift
	ld=("$@")
	"${rd[@]}" >/dev/null
	"${ld[@]}" >/dev/null
	for i in 1 2 3 4 5 6 7 8 9; do
		a=$(now_ns); "${rd[@]}" >/dev/null; b=$(now_ns); rt+=($(((b - a) / 1000)))
		a=$(now_ns); "${ld[@]}" >/dev/null; b=$(now_ns); lt+=($(((b - a) / 1000)))
	done
	echo "$(printf '%s\n' "${rt[@]}" | sort -n | sed -n 5p) $(printf '%s\n' "${lt[@]}" | sort -n | sed -n 5p)"
}
echo "model with $(du -m "$out/inline.onnx" | cut -f1) MB of weights; medians of 9, files in the page cache"
printf '%-22s %10s %10s %7s\n' case "read ms" "load ms" ratio
for kind in inline ext; do
	for flag in "" --no-mmap; do
		files=("$out/$kind.onnx")
		[ "$kind" = ext ] && files+=("$out/ext.bin")
		read -r r l < <(pair_ms "$out/readf" "${files[@]}" -- "$cli" --info $flag "$out/$kind.onnx")
		awk -v k="$kind${flag:+ $flag}" -v r="$r" -v l="$l" \
			'BEGIN { printf "%-22s %10.1f %10.1f %7.2f\n", k, r / 1000, l / 1000, l / (r ? r : 1) }'
	done
done
bytes=$(stat -c %s "$out/inline.onnx")
read -r r t < <(pair_ms "$out/readf" "$out/inline.onnx" -- "$out/readf" -t "$bytes")
awk -v r="$r" -v t="$t" -v mb="$((bytes >> 20))" 'BEGIN {
	printf "%-22s %10.1f %10.1f %7.2f\n", "fresh " mb " MB (write)", r / 1000, t / 1000, t / (r ? r : 1)
	print "(the last row: the read vs writing as many bytes of fresh memory once; loading writes"
	print " one such region, the packed panels: inline weights are packed from the mapped file,"
	print " mapped external data likewise; --no-mmap adds the read buffer)"
}'
