/*
 * depthwise.h - the interface of the depthwise ConvTranspose rows kernel (one input and one
 * output channel per group, rank 1 or 2 seen as rank 2): what the op prepares once per run
 * (ops/conv_transpose/depthwise.c) and each ISA's rows routine reads. Included by kernels.h.
 */
#ifndef ONNXRUN_KERNELS_DEPTHWISE_H
#define ONNXRUN_KERNELS_DEPTHWISE_H

#include <stdint.h>

/* Most taps (kernel elements) of one output position. */
#define ONNXRUN__KDW_MAX_TAPS 64

/* One axis: sizes, and its taps by residue r of the stride: k[start[r] .. start[r + 1])
 * ascending, with delta = (k*d - r)/s (input index = q - delta). */
struct onnxrun__kdw_axis {
	int64_t in, out, k, s, d, pb;
	int64_t *start, *kk, *dl;
	int64_t *qlo, *qhi; /* per residue: grid range whose outputs lie in [0, out) */
};

/* One run: x (batch, chans, ax[0].in, ax[1].in), w (chans, ax[0].k, ax[1].k), bias (chans or
 * NULL), y (batch, chans, ax[0].out, ax[1].out); rank 1 has ax[0] of size 1. */
struct onnxrun__kdw {
	const float *x, *w, *bias;
	float *y;
	int64_t chans;
	struct onnxrun__kdw_axis ax[2];
};

/* Output rows [begin, end) (row = (batch*chans + channel)*ax[0].out + o0): y[o1] = bias +
 * sum over the row's taps (k0 ascending, then k1 ascending) of w * x, for every o1. tmp:
 * scratch of ax[1].in + 16 floats. Each row's sums are one fixed sequence of operations, so
 * results do not depend on how the rows are split. */
typedef void (*onnxrun__dw_rows_fn)(const struct onnxrun__kdw *j, int64_t begin, int64_t end, float *tmp);

#endif
