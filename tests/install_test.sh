#!/usr/bin/env bash
# Installs onnxrun from BUILD_DIR into a temporary prefix, then builds every examples/*.c
# against the installed package twice - once with pkg-config, once with CMake's
# find_package(onnxrun) - and runs them on the bundled models; compiles and runs the README's
# C example the same way. Also checks that the shared
# library exports only onnxrun_* symbols.
# Usage: install_test.sh SOURCE_DIR BUILD_DIR WORK_DIR
# The build's tools come from the environment (CTest sets them; defaults for a native build):
# ONNXRUN_CC, ONNXRUN_NM, ONNXRUN_OBJDUMP, ONNXRUN_TOOLCHAIN_FILE (cross builds), ONNXRUN_EMULATOR
# (the command that runs a target binary, e.g. "/usr/bin/qemu-aarch64 -L /"), and
# ONNXRUN_PKG_CONFIG_LIBDIR (where the target's .pc files are).
set -euo pipefail
src=$1 build=$2 work=$3
cc=${ONNXRUN_CC:-cc} nm=${ONNXRUN_NM:-nm} objdump=${ONNXRUN_OBJDUMP:-objdump}
read -r -a emu <<<"${ONNXRUN_EMULATOR:-}"
toolchain=()
[ -n "${ONNXRUN_TOOLCHAIN_FILE:-}" ] && toolchain=(-DCMAKE_TOOLCHAIN_FILE="$ONNXRUN_TOOLCHAIN_FILE")
[ -n "${ONNXRUN_PKG_CONFIG_LIBDIR:-}" ] && export PKG_CONFIG_LIBDIR=$ONNXRUN_PKG_CONFIG_LIBDIR
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libonnxrun.so' | head -1)")
export LD_LIBRARY_PATH=$libdir
export PKG_CONFIG_PATH=$libdir/pkgconfig

bad=$("$nm" -D --defined-only "$libdir/libonnxrun.so" | awk '{print $3}' | grep -v '^onnxrun_' || true)
if [ -n "$bad" ]; then
	echo "FAIL: libonnxrun.so exports non-onnxrun symbols:"; echo "$bad" | head
	exit 1
fi
"$nm" -D --defined-only "$libdir/libonnxrun.so" | grep -q ' onnxrun_session_run$'
soname=$("$objdump" -p "$libdir/libonnxrun.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libonnxrun.so.0" ] || { echo "FAIL: SONAME is '$soname'"; exit 1; }

run_examples() { # dir-with-binaries label
	"${emu[@]}" "$1/embed" "$src/models/upsampler/model.onnx" "$src/models/upsampler/test_data_set_0/input_0.pb" \
		| grep -q "output 'upscaled': float \[1,3,128,128\]" || { echo "FAIL: embed ($2)"; exit 1; }
	"${emu[@]}" "$1/custom_op" "$src/examples/data/leaky_chain" | grep -q "^PASS" || { echo "FAIL: custom_op ($2)"; exit 1; }
}

mkdir -p "$work/pc"
for f in "$src"/examples/*.c; do
	# shellcheck disable=SC2046
	"$cc" -std=c11 -Wall -Wextra -Werror "$f" $(pkg-config --cflags --libs onnxrun) \
		-o "$work/pc/$(basename "$f" .c)"
done
run_examples "$work/pc" pkg-config

# The README's embedding example must compile and run as printed.
awk '/^```c$/ {f = 1; next} /^```$/ {f = 0} f' "$src/README.md" >"$work/readme.c"
[ -s "$work/readme.c" ] || { echo "FAIL: no C example in README.md"; exit 1; }
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Wextra -Werror "$work/readme.c" $(pkg-config --cflags --libs onnxrun) -o "$work/readme"
(cd "$src" && "${emu[@]}" "$work/readme") | grep -q "^upscaled: 49152 values$" || { echo "FAIL: README example"; exit 1; }

cmake -S "$src/examples" -B "$work/cm" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
	"${toolchain[@]}" >/dev/null
cmake --build "$work/cm" >/dev/null
run_examples "$work/cm" find_package
echo "install: 1 passed, 0 failed"
