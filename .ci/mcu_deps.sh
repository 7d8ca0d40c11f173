#!/usr/bin/env bash
# Installs what the microcontroller build needs on Debian 12 and builds protobuf-c's runtime
# for each Cortex-M CPU from Debian's own source package (nothing third-party is committed):
#   - gcc-arm-none-eabi with libnewlib-arm-none-eabi (newlib and newlib-nano), and
#     qemu-system-arm (machines mps2-an386, Cortex-M4F, and mps3-an547, Cortex-M55);
#   - protobuf-c/protobuf-c.c from `apt-get source protobuf-c` (protoc-c is the host's),
#     compiled with -Os and one section per function into DEPS/<cpu>/lib/libprotobuf-c.a with
#     its header in DEPS/<cpu>/include (default DEPS: build-mcu/deps; cpu: cortex-m4,
#     cortex-m55), as .ci/windows_deps.sh and .ci/wasm_deps.sh do (.ci/debian_source.sh),
#     with one build setting changed in the copy compiled: the members a message's unpacking
#     scans before it allocates (FIRST_SCANNED_MEMBER_SLAB_SIZE_LOG2, 16 upstream) are 4, so
#     each nesting level of a model (ModelProto > GraphProto > ValueInfoProto > TypeProto >
#     Tensor > TensorShapeProto > Dimension) keeps ~100 bytes of stack instead of ~400 (the
#     stack target, README Microcontrollers); longer messages take their further slabs from
#     the allocator (the arena), as upstream does past 16 (the one place upstream writes the
#     first slab's size as a literal, `i_slab + 4`, is changed to the setting too);
#   - cmocka (for the op tests, run as firmware) from `apt-get source cmocka` the same way.
# Not as root, the commands to run are printed and the script fails.
set -euo pipefail
cd "$(dirname "$0")/.."
deps=${1:-build-mcu/deps}
tag="mcu deps"
root=0
[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && root=1
. .ci/debian_source.sh # enable_deb_src, debian_source

need=()
command -v arm-none-eabi-gcc >/dev/null 2>&1 || need+=(gcc-arm-none-eabi binutils-arm-none-eabi)
[ -f /usr/lib/arm-none-eabi/newlib/thumb/v7e-m+fp/hard/libc_nano.a ] || need+=(libnewlib-arm-none-eabi)
command -v qemu-system-arm >/dev/null 2>&1 || need+=(qemu-system-arm)
command -v dpkg-source >/dev/null 2>&1 || need+=(dpkg-dev)
command -v protoc-c >/dev/null 2>&1 || need+=(protobuf-c-compiler)
[ -f /usr/include/onnx/onnx.proto ] || need+=(libonnx-dev)
# the reduced ONNX schema of bare-metal builds (proto/reduce_onnx_proto.py)
command -v python3 >/dev/null 2>&1 || need+=(python3)
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

for cpu in cortex-m4 cortex-m55; do
	prefix=$deps/$cpu
	# the stamp: built with the 4-member first slab (a cache from before is rebuilt)
	[ -f "$prefix/lib/libprotobuf-c.a" ] && [ -f "$prefix/lib/protobuf-c.slab4" ] && continue
	case $cpu in
	cortex-m4) flags=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16) ;;
	cortex-m55) flags=(-mcpu=cortex-m55 -mthumb -mfloat-abi=hard) ;;
	esac
	src=$(debian_source protobuf-c)
	[ "$(grep -c -e '^#define FIRST_SCANNED_MEMBER_SLAB_SIZE_LOG2 4$' -e '(1UL << (i_slab + 4))' \
		"$src/protobuf-c/protobuf-c.c")" = 2 ] || {
		echo "$tag: $src/protobuf-c/protobuf-c.c: not the first-slab size setting expected" >&2
		exit 1
	}
	echo "$tag: building protobuf-c runtime for $cpu from $src"
	mkdir -p "$prefix/include/protobuf-c" "$prefix/lib" "$deps/obj/$cpu"
	cp "$src/protobuf-c/protobuf-c.h" "$prefix/include/protobuf-c/"
	sed -e 's/^#define FIRST_SCANNED_MEMBER_SLAB_SIZE_LOG2 4$/#define FIRST_SCANNED_MEMBER_SLAB_SIZE_LOG2 2/' \
		-e 's/(1UL << (i_slab + 4))/(1UL << (i_slab + FIRST_SCANNED_MEMBER_SLAB_SIZE_LOG2))/' \
		"$src/protobuf-c/protobuf-c.c" >"$deps/obj/$cpu/protobuf-c.c"
	arm-none-eabi-gcc "${flags[@]}" -Os -ffunction-sections -fdata-sections -I"$src" -I"$src/protobuf-c" \
		-c "$deps/obj/$cpu/protobuf-c.c" -o "$deps/obj/$cpu/protobuf-c.o"
	rm -f "$prefix/lib/libprotobuf-c.a"
	arm-none-eabi-ar rcs "$prefix/lib/libprotobuf-c.a" "$deps/obj/$cpu/protobuf-c.o"
	touch "$prefix/lib/protobuf-c.slab4"
done

# cmocka for the op tests run as firmware: cmocka.c alone with the config.h its CMake check
# gives for newlib (written here rather than running cmocka's configure with the cross
# compiler), as .ci/windows_deps.sh does.
for cpu in cortex-m4 cortex-m55; do
	prefix=$deps/$cpu
	[ -f "$prefix/lib/libcmocka.a" ] && continue
	case $cpu in
	cortex-m4) flags=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16) ;;
	cortex-m55) flags=(-mcpu=cortex-m55 -mthumb -mfloat-abi=hard) ;;
	esac
	src=$(debian_source cmocka)
	echo "$tag: building cmocka for $cpu from $src"
	mkdir -p "$deps/obj/$cpu/cmocka"
	{
		for h in ASSERT_H INTTYPES_H MALLOC_H MEMORY_H SETJMP_H SIGNAL_H STDARG_H STDDEF_H STDINT_H \
			STDIO_H STDLIB_H STRINGS_H STRING_H SYS_TYPES_H TIME_H UNISTD_H \
			CALLOC FPRINTF SNPRINTF VSNPRINTF FREE MALLOC MEMCPY MEMSET PRINTF SETJMP SIGNAL STRCMP; do
			echo "#define HAVE_$h 1"
		done
		echo "#define WORDS_SIZEOF_VOID_P 4"
	} >"$deps/obj/$cpu/cmocka/config.h"
	cp "$src/include/cmocka.h" "$prefix/include/"
	arm-none-eabi-gcc "${flags[@]}" -Os -ffunction-sections -fdata-sections -DHAVE_CONFIG_H \
		-I"$deps/obj/$cpu/cmocka" -I"$src/include" -c "$src/src/cmocka.c" -o "$deps/obj/$cpu/cmocka/cmocka.o"
	arm-none-eabi-ar rcs "$prefix/lib/libcmocka.a" "$deps/obj/$cpu/cmocka/cmocka.o"
done
echo "$tag: $deps/cortex-m4 $deps/cortex-m55"
