#!/bin/sh
# qemu-run.sh MACHINE FIRMWARE.elf [ARGS...] - runs a firmware of targets/cortex-m on one of
# qemu-system-arm's Arm boards (mps2-an386: Cortex-M4F, mps3-an547: Cortex-M55) with
# semihosting: its console is this terminal, its files are this machine's, ARGS are its
# argv[1...] (through -append), and its exit status is this script's. QEMU_EXTRA adds
# options (e.g. "-icount shift=0" or a TCG plugin). The toolchain files make it CTest's
# emulator.
set -eu
machine=$1
elf=$2
shift 2
# shellcheck disable=SC2086
exec qemu-system-arm -machine "$machine" -nographic -monitor none -serial none \
	-semihosting-config enable=on,target=native ${QEMU_EXTRA:-} -kernel "$elf" -append "$*"
