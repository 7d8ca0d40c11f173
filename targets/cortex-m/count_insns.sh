#!/bin/sh
# count_insns.sh [BUILD_M55 [BUILD_M4]] - instructions executed per multiply-add on the bundled
# upsampler (models/upsampler), counted by qemu: the portable (scalar) and Helium (MVE)
# kernels on the Cortex-M55 (mps3-an547), the portable ones on the Cortex-M4F (mps2-an386).
# BUILD_M55 and BUILD_M4 are build folders configured with cmake/toolchains/cortex-m55.cmake
# and cortex-m4.cmake (README, Microcontrollers; default build-m55 and build-m4); a missing
# one is skipped. Builds the firmware tests/mcu/test_mcu_insns.c in each and runs it with
# `-icount shift=0` (1 ns of virtual time per instruction, counted through SysTick: the
# firmware's comment says how). The M55 run fails unless MVE executes >= 3x fewer
# instructions per multiply-add than portable.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
up=$root/models/upsampler
status=0
run() { # run MACHINE BUILD
	if [ ! -f "$2/CMakeCache.txt" ]; then
		echo "count_insns: $2 is not configured: skipped (see docs/platforms.md, Microcontrollers)"
		return 0
	fi
	cmake --build "$2" -j2 --target test_mcu_insns >/dev/null
	echo "== $1 ($2)"
	QEMU_EXTRA="-icount shift=0" "$here/qemu-run.sh" "$1" "$2/tests/mcu/test_mcu_insns.elf" \
		"$up/model.onnx" "$up/test_data_set_0/input_0.pb" "$up/test_data_set_0/output_0.pb" || status=1
}
run mps3-an547 "${1:-build-m55}"
run mps2-an386 "${2:-build-m4}"
exit $status
