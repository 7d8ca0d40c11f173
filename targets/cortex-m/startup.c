/*
 * startup.c - reset to main() on a Cortex-M (ARMv7E-M: M4/M7; ARMv8.1-M: M55/M85) without
 * an operating system: the vector table, the FPU (and on M55 with it Helium, MVE) switched
 * on, .data copied from flash, .bss zeroed, the stack painted so its deepest use can be
 * measured, C library constructors, main(argc, argv) with the command line from
 * semihosting, and its status handed to exit(). Faults print their registers through
 * semihosting and exit with status 3, so a test under qemu fails instead of hanging.
 *
 * The symbols come from the linker script (cortex-m.ld, included by the board's script).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "semihosting.h"
#include "startup.h"

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern uint32_t __stack_limit[], __stack_top[];

int main(int argc, char **argv);
void __libc_init_array(void);
void Reset_Handler(void);
void Fault_Handler(void);
void Default_Handler(void);
/* The firmware may define these (e.g. SysTick_Handler counting timer wraps). */
void SysTick_Handler(void) __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SVC_Handler(void) __attribute__((weak, alias("Default_Handler")));

#define STACK_PAINT 0xa5a5a5a5u

/* System Control Block registers */
#define SCB_CPACR (*(volatile uint32_t *)0xe000ed88u)
#define SCB_CFSR (*(volatile uint32_t *)0xe000ed28u)
#define SCB_HFSR (*(volatile uint32_t *)0xe000ed2cu)
#define SCB_MMFAR (*(volatile uint32_t *)0xe000ed34u)
#define SCB_BFAR (*(volatile uint32_t *)0xe000ed38u)

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
	(void (*)(void))(uintptr_t)__stack_top,
	Reset_Handler,
	Default_Handler, /* NMI */
	Fault_Handler,   /* HardFault */
	Fault_Handler,   /* MemManage */
	Fault_Handler,   /* BusFault */
	Fault_Handler,   /* UsageFault */
	Fault_Handler,   /* SecureFault (ARMv8-M) */
	0, 0, 0,
	SVC_Handler,
	Default_Handler, /* DebugMonitor */
	0,
	PendSV_Handler,
	SysTick_Handler,
};

/* newlib's __libc_init_array and __libc_fini_array call these (crti.o's, which a firmware
 * linked with -nostartfiles does not have); constructors come from .init_array */
void _init(void);
void _fini(void);
void _init(void)
{
}
void _fini(void)
{
}

/* the test firmware's command line holds absolute paths of the checkout's files: room for a
 * deep checkout (semihosting returns nothing when the line does not fit) */
static char cmdline[2048];
static char *argv_buf[16];

static int split_cmdline(void)
{
	int argc = 0;
	char *p = cmdline;
	if (semihosting_cmdline(cmdline, sizeof cmdline))
		cmdline[0] = '\0';
	while (*p && argc < (int)(sizeof argv_buf / sizeof *argv_buf) - 1) {
		while (*p == ' ')
			*p++ = '\0';
		if (!*p)
			break;
		argv_buf[argc++] = p;
		while (*p && *p != ' ')
			p++;
	}
	argv_buf[argc] = NULL;
	/* leading NAME=VALUE words (after the program's name) set the environment, as a shell
	 * would: `qemu-run.sh BOARD fw.elf ONNXRUN_RANDOM_SCALE=0.25 args...` */
	while (argc > 1 && strchr(argv_buf[1], '=') && argv_buf[1][0] != '=') {
		char *eq = strchr(argv_buf[1], '=');
		*eq = '\0';
		setenv(argv_buf[1], eq + 1, 1);
		memmove(argv_buf + 1, argv_buf + 2, (size_t)argc * sizeof *argv_buf); /* the NULL too */
		argc--;
	}
	return argc;
}

/* Runs with the FPU on: copies .data, zeroes .bss, paints the stack below itself. */
__attribute__((noreturn, used)) static void c_start(void)
{
	uint32_t *p;
	int argc;
	memcpy(__data_start, __data_load, (size_t)((char *)__data_end - (char *)__data_start));
	memset(__bss_start, 0, (size_t)((char *)__bss_end - (char *)__bss_start));
	/* paint up to 256 bytes below this frame */
	for (p = __stack_limit; (char *)p < (char *)__builtin_frame_address(0) - 256; p++)
		*p = STACK_PAINT;
	__libc_init_array();
	argc = split_cmdline();
	exit(main(argc, argv_buf));
}

/* The reset vector: no C before the FPU is on (the compiler may use its registers
 * anywhere). CPACR CP10 and CP11 full access enables the FPU and, on ARMv8.1-M, MVE. */
__attribute__((naked, noreturn)) void Reset_Handler(void)
{
	__asm__ volatile("ldr r0, =0xe000ed88\n"
	                 "ldr r1, [r0]\n"
	                 "orr r1, r1, #(0xf << 20)\n"
	                 "str r1, [r0]\n"
	                 "dsb\n"
	                 "isb\n"
	                 "b c_start\n");
}

size_t startup_stack_size(void)
{
	return (size_t)((char *)__stack_top - (char *)__stack_limit);
}

size_t startup_stack_used(void)
{
	const uint32_t *p = __stack_limit;
	while (p < __stack_top && *p == STACK_PAINT)
		p++;
	return (size_t)((char *)__stack_top - (char *)p);
}

void startup_stack_repaint(void)
{
	uint32_t *p;
	for (p = __stack_limit; (char *)p < (char *)__builtin_frame_address(0) - 256; p++)
		*p = STACK_PAINT;
}

static void put_hex(const char *name, uint32_t v)
{
	char buf[32];
	snprintf(buf, sizeof buf, " %s=%08lx", name, (unsigned long)v);
	semihosting_write0(buf);
}

/* The stacked frame of the faulting code: r0-r3, r12, lr, pc, xpsr. */
__attribute__((used)) static void fault_report(const uint32_t *frame)
{
	semihosting_write0("\nFAULT:");
	put_hex("pc", frame[6]);
	put_hex("lr", frame[5]);
	put_hex("CFSR", SCB_CFSR);
	put_hex("HFSR", SCB_HFSR);
	put_hex("MMFAR", SCB_MMFAR);
	put_hex("BFAR", SCB_BFAR);
	semihosting_write0("\n");
	semihosting_exit(3);
}

__attribute__((naked)) void Fault_Handler(void)
{
	__asm__ volatile("tst lr, #4\n"
	                 "ite eq\n"
	                 "mrseq r0, msp\n"
	                 "mrsne r0, psp\n"
	                 "b fault_report\n");
}

void Default_Handler(void)
{
	semihosting_write0("\nunexpected exception\n");
	semihosting_exit(3);
}
