/*
 * semihosting.h - Arm semihosting (the debugger's or qemu's file and console services, called
 * with `bkpt 0xab` on M-profile), what the firmware of onnxrun's tests and examples writes its
 * output and reads its test files through. qemu-system-arm serves it with
 * `-semihosting-config enable=on,target=native`; on a board with a debug probe, the
 * debugger does (OpenOCD: `arm semihosting enable`). Without either, `bkpt` stops the CPU:
 * a product firmware keeps none of this.
 */
#ifndef ONNXRUN_TARGETS_SEMIHOSTING_H
#define ONNXRUN_TARGETS_SEMIHOSTING_H

#include <stddef.h>
#include <stdint.h>

/* Opens a host file: mode as fopen's ("rb", "wb", ...); a handle >= 0 or -1. ":tt" is the
 * console. */
int semihosting_open(const char *path, const char *mode);
int semihosting_close(int handle);
/* Bytes written or read (0 at the end of a file), -1 on failure. */
long semihosting_write(int handle, const void *buf, size_t n);
long semihosting_read(int handle, void *buf, size_t n);
/* Moves to an absolute offset; 0 or -1. */
int semihosting_seek(int handle, long offset);
/* The file's length, -1 on failure. */
long semihosting_flen(int handle);
/* Writes a NUL-terminated string to the console. */
void semihosting_write0(const char *s);
/* The command line qemu was given (-kernel FILE -append "ARGS": "FILE ARGS"); 0 or -1. */
int semihosting_cmdline(char *buf, size_t size);
/* Centiseconds since the program started, -1 when unknown. */
long semihosting_clock(void);
/* Ends the program (qemu exits with status). */
_Noreturn void semihosting_exit(int status);

#endif
