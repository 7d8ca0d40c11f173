/*
 * packing.h - weights packed for the micro-kernels: float32 for the GEMM kernels, shared by
 * the two implementations that run on them (phase.c, col2im.c), and float64 for the float64
 * tiles (f64.c). Built at load when W is an initializer (the op's state), else per run. W
 * can be rebuilt from its packing exactly, so a model need not keep both.
 *
 * Layouts (A panels of the kernel table's gemm, mr_max rows wide, zero rows at the end):
 *  - phase: per group, per phase, weight panels of output channels split evenly over
 *    ceil(mg / mr_max) panels; panel rows are output channels, its K = input channels x the
 *    phase's taps (channel-major);
 *  - col2im: per group, rows R = m*kprod + kernel position, K = input channels;
 *  - window (kernel sizes multiples of the strides, rank 1-2 seen as 2 with a first axis of
 *    one): per group, rows (rho0, m, rho1) = residue on axis 0, output channel, residue on
 *    axis 1 (the rows of one rho0 adjacent: the first and last grid rows, whose other rho0
 *    fall outside y, run those rows alone), K = (input channel, t0, t1), row (rho0, m, rho1)
 *    of entry (c, t0, t1) holding W[c][m][rho0 + s0*t0][rho1 + s1*t1]; panels of mr_max rows;
 *  - f64 (float64, kernel table's f64 tiles): per group, per phase, K = taps x input
 *    channels (taps outer) in chunks of CONVT_F64_KC entries (the last may be shorter); per
 *    chunk, per block of f64_mb output channels (the most channels of any tile, up to mg;
 *    zeros past mg), [entry][f64_mb]. A chunk's weights for every block are contiguous:
 *    f64.c runs every block over one chunk of x before the next.
 */
#ifndef ONNXRUN_OPS_CONV_TRANSPOSE_PACKING_H
#define ONNXRUN_OPS_CONV_TRANSPOSE_PACKING_H

#include "taps.h"
#include "../../kernels/kernels.h"

/* K entries per chunk of the f64 layout. */
#define CONVT_F64_KC 128

enum convt_layout {
	CONVT_LAYOUT_NONE = 0,
	CONVT_LAYOUT_PHASE = 1,
	CONVT_LAYOUT_COL2IM = 2,
	CONVT_LAYOUT_F64 = 3,
	CONVT_LAYOUT_WINDOW = 4,
};

struct onnxrun__convt_packed {
	const struct onnxrun_env *env;
	enum convt_layout layout;
	const struct onnxrun__kernels *kt;        /* the ISA's table the weights were packed for */
	const struct onnxrun__gemm_kernels *kern; /* kt->gemm */
	int64_t cin, mg, group;                   /* W is (cin, mg, kernel...) */
	struct onnxrun__convt_taps taps;
	int64_t mpanels; /* phase layout: weight panels per phase */
	int64_t *a_off;  /* phase and f64 layouts: per phase, element offset of its panels in a group's block */
	int64_t a_group; /* elements of packed weights per group */
	float *a;        /* float32 layouts */
	int64_t f64_mb;  /* f64 layout: output channels per block */
	double *a64;     /* f64 layout */
#ifndef ONNXRUN_BAREMETAL
	struct onnxrun__convt_border *border; /* phase layout: the border jobs' weights (border.h), or NULL */
#endif
};

/* The f64 layout's channels per block for mg output channels per group: the most channels of
 * any of the ISA's float64 tiles, up to mg (at least 1). */
static inline int64_t convt_f64_block(const struct onnxrun__f64_kernels *fk, int64_t mg)
{
	int64_t mb = 1;
	for (int i = 0; i < fk->ntiles; i++)
		if (fk->tiles[i].mb <= mg && fk->tiles[i].mb > mb)
			mb = fk->tiles[i].mb;
	return mb;
}

/* First output channel of weight panel i of n over mg channels: panels split mg evenly
 * (sizes differ by at most one), so no panel is a short remainder that reads B for few rows.
 * Each panel is packed mr_max rows wide (zero rows at its end), panel i at i * mr_max * K. */
static inline int64_t convt_panel_lo(int64_t mg, int64_t n, int64_t i)
{
	return i * mg / n;
}

/* Packs W (float32, or float64 for the f64 layout; shape (cin, mg, kernel...), at any
 * alignment: a pending initializer is read in the model buffer) in `layout` for the ISA in use. Returns OK, UNSUPPORTED (more
 * phases or kernel positions than the decomposition takes) or OUT_OF_MEMORY. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_pack(const struct onnxrun_env *env,
                                                        const struct onnxrun__convt_geom *g, const void *w,
                                                        enum convt_layout layout, struct onnxrun__convt_packed **out);
/* onnxrun__convt_pack that gives up with ONNXRUN_ERROR_CANCELLED once
 * onnxrun_op_should_stop(stop) says so, checked between channels (stop NULL: never). On
 * CANCELLED *out holds the partly packed weights, allocated in full, for the caller to free:
 * a compute that sees the same stop skips its work but still makes its allocations, which
 * is what the session's workspace measuring pass (a run marked stopped) needs. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_pack_stoppable(const struct onnxrun_env *env,
                                                                  const struct onnxrun__convt_geom *g,
                                                                  const void *w, enum convt_layout layout,
                                                                  struct onnxrun_op_context *stop,
                                                                  struct onnxrun__convt_packed **out);
ONNXRUN__HIDDEN void onnxrun__convt_packed_free(struct onnxrun__convt_packed *p);
#ifndef ONNXRUN_BAREMETAL
/* Packs W (as for onnxrun__convt_pack) in the phase layout for the tap lists *taps (a
 * subset of like's: the kernel sizes, strides and dilations of like's, fewer taps per
 * residue), like's ISA, channels and groups; takes *taps over (freed with the result, or
 * here on failure). Returns OK, OUT_OF_MEMORY or CANCELLED (stop; *out allocated in full, as
 * onnxrun__convt_pack_stoppable's). */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_pack_taps(const struct onnxrun__convt_packed *like, const void *w,
                                                             struct onnxrun__convt_taps *taps,
                                                             struct onnxrun_op_context *stop,
                                                             struct onnxrun__convt_packed **out);
#endif
/* True when pk was packed in `layout` for g's W shape and attributes and for table kt. */
ONNXRUN__HIDDEN bool onnxrun__convt_packed_matches(const struct onnxrun__convt_packed *pk,
                                                   const struct onnxrun__convt_geom *g, enum convt_layout layout,
                                                   const struct onnxrun__kernels *kt);
/* Writes W (shape (cin, mg, kernel...); float64 for the f64 layout, else float32) back from
 * the packed weights. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_unpack(const struct onnxrun__convt_packed *pk, void *w);

#endif
