#!/usr/bin/env bash
# Installs what the WebAssembly build needs on Debian 12 and builds its two C dependencies
# for wasm32 from Debian's own source packages (nothing third-party is committed):
#   - emscripten (Debian's package) and node (used to run the build's output);
#   - protobuf-c's runtime library (protobuf-c/protobuf-c.c only: the generator, protoc-c, is
#     the host's) and cmocka, each from `apt-get source`, compiled with emcc into static
#     libraries under DEPS/prefix (default build-wasm/deps/prefix).
# The source packages need a deb-src entry: as root, one is added next to the existing deb
# entries (/etc/apt/sources.list.d/onnxrun-deb-src.sources) when none is configured
# (.ci/debian_source.sh, shared with .ci/windows_deps.sh). Not as
# root, the commands to run are printed and the script fails.
set -euo pipefail
cd "$(dirname "$0")/.."
deps=${1:-build-wasm/deps}
prefix=$deps/prefix
root=0
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && root=1
tag="wasm deps"
. .ci/debian_source.sh # enable_deb_src, debian_source

need=()
command -v emcc >/dev/null 2>&1 || need+=(emscripten)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v dpkg-source >/dev/null 2>&1 || need+=(dpkg-dev)
command -v protoc-c >/dev/null 2>&1 || need+=(protobuf-c-compiler)
if [ ${#need[@]} -gt 0 ]; then
	if [ $root = 1 ]; then
		echo "wasm deps: installing ${need[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	else
		echo "wasm deps: missing packages; run:" >&2
		echo "  sudo apt-get install -y ${need[*]}" >&2
		exit 1
	fi
fi

mkdir -p "$prefix/include" "$prefix/lib"
# Optimised like the library itself; SIMD128 as the library is built.
cflags=(-O2 -msimd128)

if [ ! -f "$prefix/lib/libprotobuf-c.a" ]; then
	src=$(debian_source protobuf-c)
	echo "wasm deps: building protobuf-c runtime from $src"
	mkdir -p "$prefix/include/protobuf-c" "$deps/obj"
	cp "$src/protobuf-c/protobuf-c.h" "$prefix/include/protobuf-c/"
	emcc "${cflags[@]}" -I"$src" -c "$src/protobuf-c/protobuf-c.c" -o "$deps/obj/protobuf-c.o"
	emar rcs "$prefix/lib/libprotobuf-c.a" "$deps/obj/protobuf-c.o"
fi

if [ ! -f "$prefix/lib/libcmocka.a" ]; then
	src=$(debian_source cmocka)
	echo "wasm deps: building cmocka from $src"
	# cmocka.c alone, with the config.h its CMake check gives for emscripten (written here:
	# its configure step runs ~100 emcc probes). cmocka.h defines uintptr_t itself unless
	# told the C library has it (wasm32 is ILP32 with `unsigned long` pointers' integer).
	mkdir -p "$deps/obj/cmocka"
	{
		for h in ASSERT_H INTTYPES_H MALLOC_H MEMORY_H SETJMP_H SIGNAL_H STDARG_H STDDEF_H STDINT_H \
			STDIO_H STDLIB_H STRINGS_H STRING_H SYS_STAT_H SYS_TYPES_H TIME_H UNISTD_H STRUCT_TIMESPEC \
			CALLOC FPRINTF SNPRINTF VSNPRINTF FREE MALLOC MEMCPY MEMSET PRINTF SETJMP SIGNAL STRCMP \
			STRSIGNAL CLOCK_GETTIME CLOCK_REALTIME; do
			echo "#define HAVE_$h 1"
		done
		echo "#define WORDS_SIZEOF_VOID_P 4"
	} >"$deps/obj/cmocka/config.h"
	cp "$src/include/cmocka.h" "$src/include/cmocka_pbc.h" "$prefix/include/" 2>/dev/null ||
		cp "$src/include/cmocka.h" "$prefix/include/"
	emcc "${cflags[@]}" -D_UINTPTR_T_DEFINED -DHAVE_CONFIG_H -I"$deps/obj/cmocka" -I"$src/include" \
		-c "$src/src/cmocka.c" -o "$deps/obj/cmocka/cmocka.o"
	emar rcs "$prefix/lib/libcmocka.a" "$deps/obj/cmocka/cmocka.o"
fi
echo "wasm deps: $prefix"
