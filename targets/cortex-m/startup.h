/*
 * startup.h - what targets/cortex-m/startup.c offers the firmware: the painted stack's size
 * and its deepest use so far (bytes from the top down to the first overwritten word).
 */
#ifndef ONNXRUN_TARGETS_STARTUP_H
#define ONNXRUN_TARGETS_STARTUP_H

#include <stddef.h>

size_t startup_stack_size(void);
size_t startup_stack_used(void);
/* Paints the stack again below the caller's frame (to measure one phase of a program). */
void startup_stack_repaint(void);

#endif
