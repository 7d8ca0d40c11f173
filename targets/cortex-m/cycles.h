/*
 * cycles.h - a 64-bit count of SysTick ticks on the processor clock: on hardware, CPU
 * cycles; under qemu with `-icount shift=0` (one instruction per virtual nanosecond), the
 * board's clock times the instructions executed, so instructions = ticks x 1e9 / clock
 * (mps2-an386: 25 MHz, one tick per 40 instructions; mps3-an547: 32 MHz, per 31.25).
 * cycles_start() takes SysTick and its interrupt (24-bit wraps are counted).
 */
#ifndef ONNXRUN_TARGETS_CYCLES_H
#define ONNXRUN_TARGETS_CYCLES_H

#include <stdint.h>

void cycles_start(void);
uint64_t cycles_now(void);

#endif
