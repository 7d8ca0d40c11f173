#!/usr/bin/env bash
# Installs what the Windows build needs on Debian 12 and builds its two C dependencies for
# x86_64 Windows from Debian's own source packages (nothing third-party is committed):
#   - MinGW-w64 (gcc, binutils, headers; the win32 thread model) and wine64 (runs the tests);
#   - protobuf-c's runtime library (protobuf-c/protobuf-c.c only: the generator, protoc-c, is
#     the host's) and cmocka, each from `apt-get source`, compiled with MinGW-w64 into static
#     libraries under DEPS/prefix (default build-windows/deps/prefix).
# As .ci/wasm_deps.sh does for emscripten (both use .ci/debian_source.sh). Not as root, the
# commands to run are printed and the script fails.
set -euo pipefail
cd "$(dirname "$0")/.."
deps=${1:-build-windows/deps}
prefix=$deps/prefix
tag="windows deps"
root=0
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && root=1
. .ci/debian_source.sh

need=()
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || need+=(gcc-mingw-w64-x86-64-win32 binutils-mingw-w64-x86-64)
[ -f /usr/x86_64-w64-mingw32/include/windows.h ] || need+=(mingw-w64-x86-64-dev)
[ -x /usr/lib/wine/wine64 ] || need+=(wine64)
command -v dpkg-source >/dev/null 2>&1 || need+=(dpkg-dev)
command -v protoc-c >/dev/null 2>&1 || need+=(protobuf-c-compiler)
if [ ${#need[@]} -gt 0 ]; then
	if [ $root = 1 ]; then
		echo "$tag: installing ${need[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	else
		echo "$tag: missing packages; run:" >&2
		echo "  sudo apt-get install -y --no-install-recommends ${need[*]}" >&2
		exit 1
	fi
fi

cc=x86_64-w64-mingw32-gcc
ar=x86_64-w64-mingw32-ar
mkdir -p "$prefix/include" "$prefix/lib"
cflags=(-O2 -D__USE_MINGW_ANSI_STDIO=1)

if [ ! -f "$prefix/lib/libprotobuf-c.a" ]; then
	src=$(debian_source protobuf-c)
	echo "$tag: building protobuf-c runtime from $src"
	mkdir -p "$prefix/include/protobuf-c" "$deps/obj"
	cp "$src/protobuf-c/protobuf-c.h" "$prefix/include/protobuf-c/"
	$cc "${cflags[@]}" -I"$src" -c "$src/protobuf-c/protobuf-c.c" -o "$deps/obj/protobuf-c.o"
	$ar rcs "$prefix/lib/libprotobuf-c.a" "$deps/obj/protobuf-c.o"
fi

if [ ! -f "$prefix/lib/libcmocka.a" ]; then
	src=$(debian_source cmocka)
	echo "$tag: building cmocka from $src"
	# cmocka.c alone, with the config.h its CMake check gives for MinGW-w64 (written here
	# rather than running cmocka's configure step with the cross compiler).
	mkdir -p "$deps/obj/cmocka"
	{
		for h in ASSERT_H INTTYPES_H MALLOC_H MEMORY_H SETJMP_H SIGNAL_H STDARG_H STDDEF_H STDINT_H \
			STDIO_H STDLIB_H STRINGS_H STRING_H SYS_STAT_H SYS_TYPES_H TIME_H UNISTD_H \
			CALLOC FPRINTF SNPRINTF VSNPRINTF FREE MALLOC MEMCPY MEMSET PRINTF SETJMP SIGNAL STRCMP; do
			echo "#define HAVE_$h 1"
		done
		echo "#define WORDS_SIZEOF_VOID_P 8"
	} >"$deps/obj/cmocka/config.h"
	cp "$src/include/cmocka.h" "$prefix/include/"
	$cc "${cflags[@]}" -DHAVE_CONFIG_H -I"$deps/obj/cmocka" -I"$src/include" \
		-c "$src/src/cmocka.c" -o "$deps/obj/cmocka/cmocka.o"
	$ar rcs "$prefix/lib/libcmocka.a" "$deps/obj/cmocka/cmocka.o"
fi
echo "$tag: $prefix"
