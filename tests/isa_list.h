/*
 * isa_list.h - every ISA the kernel layer has, for tests that run a path on each of them
 * (and skip those this CPU cannot run): adding an ISA to src/kernels adds it to them all.
 */
#ifndef ONNXRUN_TESTS_ISA_LIST_H
#define ONNXRUN_TESTS_ISA_LIST_H

#include "kernels/kernels.h"

/* Declares `enum onnxrun__isa name[ONNXRUN__ISA_COUNT]` holding every ISA, best first. */
#define TEST_ALL_ISAS(name)                                                            \
	enum onnxrun__isa name[ONNXRUN__ISA_COUNT];                                    \
	for (int isa_i_ = 0; isa_i_ < ONNXRUN__ISA_COUNT; isa_i_++)                    \
		name[isa_i_] = (enum onnxrun__isa)(ONNXRUN__ISA_COUNT - 1 - isa_i_)

/* The best ISA of this build and CPU, once set: what tests restore after forcing others. */
#define TEST_BEST_ISA ((enum onnxrun__isa)(ONNXRUN__ISA_COUNT - 1))

#endif
