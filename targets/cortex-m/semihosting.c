/*
 * semihosting.c - the semihosting calls (ARM DUI 0471, "Semihosting operations"): r0 holds
 * the operation, r1 a pointer to its argument block; `bkpt 0xab` traps to the host.
 */
#include <string.h>

#include "semihosting.h"

enum {
	SYS_OPEN = 0x01,
	SYS_CLOSE = 0x02,
	SYS_WRITE0 = 0x04,
	SYS_WRITE = 0x05,
	SYS_READ = 0x06,
	SYS_SEEK = 0x0a,
	SYS_FLEN = 0x0c,
	SYS_CLOCK = 0x10,
	SYS_GET_CMDLINE = 0x15,
	SYS_EXIT = 0x18,
	SYS_EXIT_EXTENDED = 0x20,
	ADP_STOPPED_APPLICATION_EXIT = 0x20026,
};

static long call(int op, const void *arg)
{
	register long r0 __asm__("r0") = op;
	register const void *r1 __asm__("r1") = arg;
	__asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
	return r0;
}

int semihosting_open(const char *path, const char *mode)
{
	/* the mode numbers of SYS_OPEN are the indices of fopen's modes in this list */
	static const char *const modes[] = { "r", "rb", "r+", "r+b", "w", "wb", "w+", "w+b", "a", "ab", "a+", "a+b" };
	uintptr_t arg[3];
	int m = 0;
	for (int i = 0; i < 12; i++)
		if (!strcmp(mode, modes[i]))
			m = i;
	arg[0] = (uintptr_t)path;
	arg[1] = (uintptr_t)m;
	arg[2] = strlen(path);
	return (int)call(SYS_OPEN, arg);
}

int semihosting_close(int handle)
{
	uintptr_t arg[1] = { (uintptr_t)handle };
	return (int)call(SYS_CLOSE, arg);
}

long semihosting_write(int handle, const void *buf, size_t n)
{
	uintptr_t arg[3] = { (uintptr_t)handle, (uintptr_t)buf, n };
	long left = call(SYS_WRITE, arg); /* bytes NOT written */
	return left < 0 || (size_t)left > n ? -1 : (long)(n - (size_t)left);
}

long semihosting_read(int handle, void *buf, size_t n)
{
	uintptr_t arg[3] = { (uintptr_t)handle, (uintptr_t)buf, n };
	long left = call(SYS_READ, arg); /* bytes NOT read */
	return left < 0 || (size_t)left > n ? -1 : (long)(n - (size_t)left);
}

int semihosting_seek(int handle, long offset)
{
	uintptr_t arg[2] = { (uintptr_t)handle, (uintptr_t)offset };
	return call(SYS_SEEK, arg) == 0 ? 0 : -1;
}

long semihosting_flen(int handle)
{
	uintptr_t arg[1] = { (uintptr_t)handle };
	return call(SYS_FLEN, arg);
}

void semihosting_write0(const char *s)
{
	call(SYS_WRITE0, s);
}

int semihosting_cmdline(char *buf, size_t size)
{
	uintptr_t arg[2] = { (uintptr_t)buf, size };
	return call(SYS_GET_CMDLINE, arg) == 0 ? 0 : -1;
}

long semihosting_clock(void)
{
	return call(SYS_CLOCK, NULL);
}

_Noreturn void semihosting_exit(int status)
{
	/* SYS_EXIT_EXTENDED passes the status on 32-bit Arm (SYS_EXIT there only says whether
	 * the application ended normally); SYS_EXIT is the fallback for older hosts */
	uintptr_t arg[2] = { ADP_STOPPED_APPLICATION_EXIT, (uintptr_t)status };
	call(SYS_EXIT_EXTENDED, arg);
	call(SYS_EXIT, (const void *)(uintptr_t)(status ? 0x20024 /* ADP_Stopped_RunTimeError */
	                                                : ADP_STOPPED_APPLICATION_EXIT));
	for (;;)
		__asm__ volatile("wfi");
}
