/*
 * mcu_test.h - what the firmware tests of tests/mcu share: host files read through
 * semihosting into the board's large test memory (BIGRAM of the linker script), a bump
 * region of that memory, and checks that print and count failures (no cmocka on the
 * target: each test is its own firmware, ending with "<name> PASS" or "<name> FAIL").
 */
#ifndef ONNXRUN_TESTS_MCU_TEST_H
#define ONNXRUN_TESTS_MCU_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "onnxrun.h"

extern int mcu_failures;

#define CHECK(cond, ...)                                                                                    \
	do {                                                                                                \
		if (!(cond)) {                                                                              \
			printf("%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                     \
			printf(__VA_ARGS__);                                                                \
			printf("\n");                                                                       \
			mcu_failures++;                                                                     \
		}                                                                                           \
	} while (0)

/* size bytes of BIGRAM aligned to align (aborts the test when it runs out). */
void *mcu_big_alloc(size_t size, size_t align);
/* Releases everything mcu_big_alloc gave from `mark` on (mark = mcu_big_mark()). */
size_t mcu_big_mark(void);
void mcu_big_release(size_t mark);
/* Reads a whole host file into BIGRAM (64-byte aligned); NULL when it cannot be read. */
void *mcu_read_file(const char *path, size_t *size);
/* Whether a host file exists. */
int mcu_file_exists(const char *path);
/* Prints "<name> PASS" or "<name> FAIL (n checks)" and returns main's status. */
int mcu_finish(const char *name);

#endif
