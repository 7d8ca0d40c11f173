/*
 * border.h - the float32 phase path without the taps that read padding (border.c; not on
 * bare metal).
 *
 * A phase computes every one of its taps at every grid position (taps.h), reading zeros
 * where a tap falls outside x. Along the first spatial axis (not the last: its runs stay
 * whole, and with them the B panels, pairs and line stores of phase.c), a phase's grid
 * range splits into an interior, where every tap of the residue reads inside x, and
 * border positions near the ends of x, where only a prefix (near the start: the taps of
 * small offsets) or a suffix (near the end) of the residue's taps read inside. The border
 * positions with the same prefix (suffix) length are one job: the phase path over that
 * range of the first axis, on weights packed for those taps alone (packed with the phase
 * weights, packing.c). K keeps its order (channel-major, taps inner) with the padded terms
 * left out, so each output is the same sum as before less its 0 * w terms (bitwise the
 * same but for the sign of a zero sum, or an infinite weight that made 0 * w a NaN:
 * results the spec's transposed convolution, which has no padded terms, gives too).
 */
#ifndef ONNXRUN_OPS_CONV_TRANSPOSE_BORDER_H
#define ONNXRUN_OPS_CONV_TRANSPOSE_BORDER_H

#include "packing.h"

#ifndef ONNXRUN_BAREMETAL

/* Most taps of a first-axis residue the split takes (k4 s2, k5 s1 ... k8 s2): a border
 * position has a prefix or suffix of 1 .. BORDER_TAPS - 1 of them. */
#define CONVT_BORDER_TAPS 4
/* Jobs: 0 the interior (every tap), 1 + (L - 1) the prefixes of L taps, then the suffixes. */
#define CONVT_BORDER_JOBS (2 * CONVT_BORDER_TAPS - 1)

/* The weights of the border jobs, packed beside the phase weights (pk[0] unused: the
 * interior runs on the phase weights themselves; NULL where no residue needs the job). */
struct onnxrun__convt_border {
	struct onnxrun__convt_packed *pk[CONVT_BORDER_JOBS];
};

/* One run's plan: per job j and first-axis residue r, the grid range [box[2*(j*s0+r)],
 * + box[2*(j*s0+r)+1]) of the first axis (length 0: the residue has none in the job), and
 * the packed weights of each job (NULL: no positions). */
struct onnxrun__convt_border_run {
	int64_t *box;
	const struct onnxrun__convt_packed *pk[CONVT_BORDER_JOBS];
};

/* Packs the border jobs' weights of phase-layout pk (W as given to onnxrun__convt_pack)
 * into pk->border when the split applies to g (border.c: the rule). OK also when it does
 * not (pk->border stays NULL); OUT_OF_MEMORY or CANCELLED (stop) otherwise. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_border_pack(struct onnxrun__convt_packed *pk,
                                                               const struct onnxrun__convt_geom *g, const void *w,
                                                               struct onnxrun_op_context *stop);
/* onnxrun__convt_pack_stoppable, and for the phase layout then onnxrun__convt_border_pack:
 * the weights convt_init prepares. run: the concrete geometry of the one run a model with
 * static shapes makes (X's inferred type), or NULL: when it does not split, no border
 * weights are packed (not packed and then dropped: the load's peak memory). (Weights packed
 * per run, onnxrun__convt_run_packed, have no border jobs: packing.c does not call this
 * file, which calls packing.c.) */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_pack_with_border(const struct onnxrun_env *env,
                                                                   const struct onnxrun__convt_geom *g,
                                                                   const void *w, enum convt_layout layout,
                                                                   const struct onnxrun__convt_geom *run,
                                                                   struct onnxrun_op_context *stop,
                                                                   struct onnxrun__convt_packed **out);
ONNXRUN__HIDDEN void onnxrun__convt_border_free(const struct onnxrun_env *env, struct onnxrun__convt_border *b);
/* 1 when concrete g runs split on pk (its border weights fit g, and the split saves enough):
 * fills *run (the caller frees run->box with onnxrun__free). 0: run the phase path whole;
 * -1: out of memory. */
ONNXRUN__HIDDEN int onnxrun__convt_border_plan(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                                                const struct onnxrun__convt_packed *pk,
                                                struct onnxrun__convt_border_run *run);
/* At load, with X's inferred type (inputs as for onnxrun__convt_geom_make): when it is
 * concrete and its run would not split, frees pk's border weights (memory a model with
 * static shapes would never use). OK or OUT_OF_MEMORY. */
ONNXRUN__HIDDEN enum onnxrun_status onnxrun__convt_border_trim(const struct onnxrun_env *env, const struct onnxrun__node *node,
                                                const struct onnxrun_type *inputs, size_t n_inputs,
                                                struct onnxrun__convt_packed *pk);
/* For tests: the multiply-adds the phase path plans for concrete g on phase-layout pk
 * (positions x taps x input channels of a group x output channels, over every phase and
 * job); *split tells whether the border split applies. -1 when out of memory. */
ONNXRUN__HIDDEN int64_t onnxrun__convt_phase_fmas(const struct onnxrun_env *env, const struct onnxrun__convt_geom *g,
                                                  const struct onnxrun__convt_packed *pk, bool *split);

/* For tests (phase.c): how many of the jobs of concrete g's split on phase-layout pk run
 * with the image innermost (the skip_quarter tile on the last axis's edge column): 0 also
 * when g does not split; -1 when out of memory. */
ONNXRUN__HIDDEN int onnxrun__convt_phase_img_inner_jobs(const struct onnxrun_env *env,
                                                        const struct onnxrun__convt_geom *g,
                                                        const struct onnxrun__convt_packed *pk);

#endif
#endif
