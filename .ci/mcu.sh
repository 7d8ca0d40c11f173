#!/usr/bin/env bash
# The microcontroller stage (README, Microcontrollers; docs/platforms.md): builds the
# bare-metal library (src/platform/baremetal.c), its tests as firmware and the example
# firmware (examples/mcu) for two emulated boards with -Werror, and runs them under
# qemu-system-arm with semihosting:
#   - cortex-m4 on mps2-an386 (Cortex-M4F), cortex-m55 on mps3-an547 (Cortex-M55, Helium);
#   - CTest: the startup check (mcu_hello), the conformance tree and bundled models
#     (test_mcu_conformance), the upsampler end to end at every buffer offset, copying and
#     borrowed (test_mcu_upsampler), the arena and zero allocations in a run
#     (test_mcu_arena), the platform's refusals (test_mcu_platform), and the op tests of
#     tests/ at ONNXRUN_RANDOM_SCALE=0.1 (ConvTranspose float32/float16/bfloat16/float64,
#     DepthToSpace of every dtype);
#   - `onnxrun --info` (a host build) on the upsampler: its arena figure for a 32-bit
#     bare-metal build must be an upper bound of test_mcu_arena's measured high-water mark,
#     at most 10% above;
#   - `arm-none-eabi-nm -u libonnxrun.a` names no malloc, calloc, realloc, free or
#     posix_memalign;
#   - examples/mcu built by its documented command and run: it must print PASS;
#   - the footprint (-Os, Cortex-M4): flash of the linked example per component
#     (targets/cortex-m/footprint.py).
# Dependencies: .ci/mcu_deps.sh (gcc-arm-none-eabi, newlib, qemu-system-arm; protobuf-c and
# cmocka for the target from Debian's sources). MCU_BOARDS="cortex-m4" runs one board.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
jobs=$(nproc)
[ "$jobs" -gt 2 ] && jobs=2

bash .ci/mcu_deps.sh build-mcu/deps

echo "== mcu: host CLI (onnxrun --info: the arena a 32-bit bare-metal build needs)"
cmake -S . -B build-mcu/host -DCMAKE_BUILD_TYPE=Release -DONNXRUN_BUILD_TESTS=OFF >/dev/null
cmake --build build-mcu/host -j"$jobs" --target onnxrun_cli >/dev/null
up=models/upsampler
estimate=$(build-mcu/host/onnxrun --info $up/model.onnx |
	sed -n 's/^arena for a 32-bit bare-metal build (load + one session): \([0-9]*\) bytes.*/\1/p')
echo "onnxrun --info $up/model.onnx: $estimate bytes"

for cpu in ${MCU_BOARDS:-cortex-m4 cortex-m55}; do
	case $cpu in
	cortex-m4) board=mps2-an386 ;;
	cortex-m55) board=mps3-an547 ;;
	*) echo "mcu: unknown CPU $cpu" >&2; exit 2 ;;
	esac
	deps=$PWD/build-mcu/deps/$cpu
	build=build-mcu/$cpu
	echo "== mcu: $cpu ($board): build (-Werror)"
	cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchains/$cpu.cmake" \
		-DCMAKE_BUILD_TYPE=Release -DONNXRUN_WERROR=ON \
		-DONNXRUN_PROTOBUFC_LIBRARY="$deps/lib/libprotobuf-c.a" -DONNXRUN_PROTOBUFC_INCLUDE_DIR="$deps/include" \
		-DONNXRUN_CMOCKA_LIBRARY="$deps/lib/libcmocka.a" -DONNXRUN_CMOCKA_INCLUDE_DIR="$deps/include" >/dev/null
	cmake --build "$build" -j"$jobs" >/dev/null

	echo "== mcu: $cpu: no libc heap in libonnxrun.a"
	if arm-none-eabi-nm -u "$build/libonnxrun.a" |
		grep -wE '(_?)(malloc|calloc|realloc|free|posix_memalign|_malloc_r|_calloc_r|_realloc_r|_free_r)'; then
		echo "mcu: libonnxrun.a references the libc heap" >&2
		exit 1
	fi

	echo "== mcu: $cpu: examples/mcu"
	make -s -C examples/mcu CPU="$cpu" BOARD="$board" BUILD="$PWD/$build" DEPS="$deps" >/dev/null
	make -s -C examples/mcu run CPU="$cpu" BOARD="$board" BUILD="$PWD/$build" DEPS="$deps" | tee "$build/example.out"
	grep -qx PASS "$build/example.out"

	echo "== mcu: $cpu: tests under qemu-system-arm -machine $board"
	(cd "$build" && ctest --output-on-failure -j"$jobs" --timeout 600)
	echo "== mcu: $cpu: the --info estimate against the measured arena"
	targets/cortex-m/qemu-run.sh "$board" "$build/tests/mcu/test_mcu_arena.elf" $up/model.onnx \
		$up/test_data_set_0/input_0.pb $up/test_data_set_0/output_0.pb "$estimate" | tee "$build/arena.out"
	grep -qx "arena PASS" "$build/arena.out"
done

if [[ " ${MCU_BOARDS:-cortex-m4} " == *" cortex-m4 "* ]]; then
	echo "== mcu: footprint (-Os, Cortex-M4, the example firmware)"
	deps=$PWD/build-mcu/deps/cortex-m4
	build=build-mcu/cortex-m4-size
	cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchains/cortex-m4.cmake" \
		-DCMAKE_BUILD_TYPE=MinSizeRel -DONNXRUN_WERROR=ON -DONNXRUN_BUILD_TESTS=OFF \
		-DONNXRUN_PROTOBUFC_LIBRARY="$deps/lib/libprotobuf-c.a" -DONNXRUN_PROTOBUFC_INCLUDE_DIR="$deps/include" >/dev/null
	cmake --build "$build" -j"$jobs" --target onnxrun_static >/dev/null
	make -s -C examples/mcu BUILD="$PWD/$build" DEPS="$deps" >/dev/null
	python3 targets/cortex-m/footprint.py "$build/examples/mcu_example.map"
fi
echo "mcu: $(($(date +%s) - start)) s"
