/*
 * hello.c - the smallest firmware of targets/cortex-m: checks that the startup code brought
 * up what the library's firmware relies on (.data, .bss, the FPU, semihosting console and
 * files, the command line, exit status) and prints "hello PASS". CTest runs it on each
 * board (mcu_hello).
 */
#include <stdio.h>
#include <string.h>

#include "startup.h"

static int initialized = 42;
static int zeroed;
static volatile float fa = 1.5f, fb = 2.25f, fc = 0.125f;

int main(int argc, char **argv)
{
	int fails = 0;
	float f = fa * fb + fc; /* vfma / vmul on the FPU: faults if it is off */
	if (initialized != 42 || zeroed != 0) {
		printf("hello: .data or .bss not set up\n");
		fails++;
	}
	if (f != 3.5f) {
		printf("hello: 1.5 * 2.25 + 0.125 gave %g\n", (double)f);
		fails++;
	}
	if (argc >= 2) { /* a host file, read through semihosting */
		FILE *fp = fopen(argv[1], "rb");
		char buf[16] = { 0 };
		size_t n = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;
		if (!fp || n == 0) {
			printf("hello: cannot read '%s'\n", argv[1]);
			fails++;
		} else {
			printf("hello: read %u bytes of %s\n", (unsigned)n, argv[1]);
		}
		if (fp)
			fclose(fp);
	}
	printf("hello: stack used %u of %u bytes\n", (unsigned)startup_stack_used(), (unsigned)startup_stack_size());
	printf("hello %s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
