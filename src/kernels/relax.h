/*
 * relax.h - the pause of a spin-wait loop: tells the CPU the thread is spinning (x86 pause,
 * AArch64 yield), which saves power and lets a sibling hyper-thread run; nothing elsewhere.
 */
#ifndef ONNXRUN_KERNELS_RELAX_H
#define ONNXRUN_KERNELS_RELAX_H

static inline void onnxrun__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

#endif
