/*
 * kernels.h - the kernel layer: every instruction-set-specific routine of onnxrun, behind one
 * table per instruction set (ISA), plus CPU detection and the tuning derived from it.
 *
 * Ops include this header and nothing ISA-specific: they ask for the table of the ISA in use
 * (onnxrun__kernels_current()) and call its entries. Each ISA is a set of files in this folder
 * (scalar_*.c, avx2_*.c, avx512_*.c, simd128_*.c, neon_*.c, mve_*.c) that fills one `struct onnxrun__kernels`; the scalar set
 * is plain C, runs everywhere, and is the template for a new ISA (docs/kernels.md).
 *
 * Every entry of every table computes bit-for-bit what the scalar entry computes where the
 * entry's comment says so (layouts, stores, conversions); the GEMM and convolution entries
 * may round differently (FMA, summation order inside a vector) but each output is always one
 * fixed sequence of operations, so results never depend on the thread count.
 */
#ifndef ONNXRUN_KERNELS_H
#define ONNXRUN_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../runtime/runtime.h"
#include "depthwise.h"

enum onnxrun__isa {
	ONNXRUN__ISA_SCALAR = 0,
	ONNXRUN__ISA_AVX2 = 1,
	ONNXRUN__ISA_AVX512 = 2,
	ONNXRUN__ISA_SIMD128 = 3, /* WebAssembly SIMD128 (emscripten, -msimd128) */
	ONNXRUN__ISA_NEON = 4,    /* AArch64 Advanced SIMD (baseline on every AArch64 CPU) */
	ONNXRUN__ISA_MVE = 5,     /* Arm Helium, the M-profile Vector Extension with float (Cortex-M55, M85) */
	ONNXRUN__ISA_COUNT = 6,
};

/* Helium with floating point (MVE-F): a build for such a CPU has it (no run-time check). */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
#define ONNXRUN__HAVE_MVE 1
#else
#define ONNXRUN__HAVE_MVE 0
#endif

/* 1 when this build has the scalar table alone (a Cortex-M4, CPUs without an ISA here),
 * 0 when it has another (a new ISA must be listed here). The scalar table has none of the
 * optional entries (gemm ind, ind2, rel, rel2, phase pack_halves and store_pair, the d2s
 * rows: all NULL), so the ops then leave out what only those serve (flash): the phase
 * path's in-place, staging and paired-store planning, and on bare metal a float32-only
 * build's DepthToSpace fast path. */
#if defined(__x86_64__) || defined(__wasm_simd128__) || defined(__aarch64__) || ONNXRUN__HAVE_MVE
#define ONNXRUN__KERNELS_SCALAR_ONLY 0
#else
#define ONNXRUN__KERNELS_SCALAR_ONLY 1
#endif

/* ---- float32 GEMM micro-kernels --------------------------------------------------------------
 * A micro-kernel computes one tile C[mr x nr] = A_panel * B_panel over k steps, where
 *   A_panel: k groups of `mr_max` floats (row i of step p at a[p*mr_max + i]), i.e. packed
 *            weights padded to the kernel's full row count;
 *   B_panel: k rows of `nr` contiguous floats (b[p*nr + j]).
 * C is written (not accumulated) at c[i*ldc + j] for i < mr, j < nr. */

/* Largest mr_max and nr of any ISA (for scratch sizing); mr_max sizes the tables below, 4
 * (the scalar table's) in a build with that table alone (flash). */
#if ONNXRUN__KERNELS_SCALAR_ONLY
#define ONNXRUN__GEMM_MR_MAX 4
#else
#define ONNXRUN__GEMM_MR_MAX 12
#endif
#define ONNXRUN__GEMM_NR_MAX 32

typedef void (*onnxrun__gemm_fn)(int64_t k, const float *a, const float *b, float *c, int64_t ldc);
/* The same with B given as k row pointers (row p at brows[p], nr floats each), so rows can
 * be read in place. */
typedef void (*onnxrun__gemm_ind_fn)(int64_t k, const float *a, const float *const *brows, float *c,
                                     int64_t ldc);
/* The same with each B row given as two half-rows of nr/2 floats, each a pointer and a lane
 * mask (lanes off read as zero and never touch memory): row p's half h is at
 * bptr[2p + h] under bmask[2p + h]. So runs of x that fill a half-row with some lanes
 * outside x are read in place too. */
typedef void (*onnxrun__gemm_ind2_fn)(int64_t k, const float *a, const float *const *bptr,
                                      const uint16_t *bmask, float *c, int64_t ldc);
/* A B row's byte offset in the rel tables below: 32-bit on bare metal, where a 32-bit
 * address space bounds it and the table is workspace RAM (one entry per phase, channel and
 * tap), 64-bit elsewhere. */
#ifdef ONNXRUN_BAREMETAL
typedef int32_t onnxrun__krel;
#else
typedef int64_t onnxrun__krel;
#endif
/* The same with B row p at base + rel[p] bytes: one table of offsets serves every panel
 * whose rows keep the same layout relative to each other (a staged copy of x). */
typedef void (*onnxrun__gemm_rel_fn)(int64_t k, const float *a, const char *base, const onnxrun__krel *rel,
                                     float *c, int64_t ldc);
/* The same with each B row in two halves of nr/2 floats from two bases: row p's first half
 * at base0 + rel[p] bytes, its second at base1 + rel[p] (a panel of two grid rows of the
 * staged copy of x). */
typedef void (*onnxrun__gemm_rel2_fn)(int64_t k, const float *a, const char *base0, const char *base1,
                                      const onnxrun__krel *rel, float *c, int64_t ldc);

/* The narrowest tile for several A panels in one call: tile g (g < np <= rem_np) is the A
 * panel at a[g] (all mr_max rows written, the zero rows of a short panel included) times the
 * first nc (<= nr[2]) columns of a packed B panel of nr[2]-float rows, at c + g*mr_max*ldc.
 * Each output is the same chain of operations as fn[2] gives it (one multiply-add per step,
 * in order, from zero), so a remainder of few positions can cover more output channels per
 * B value (the weight panels of several phases or several channel panels: enough independent
 * chains to hide the multiply-add latency without splitting a column's sum) and still give
 * the bits of any other tile. */
typedef void (*onnxrun__gemm_rem_fn)(int64_t k, const float *const *a, int np, int nc, const float *b, float *c,
                                     int64_t ldc);

/* One ISA's micro-kernels: fn[v][mr - 1] computes mr rows of an nr[v]-wide tile (v = 0 wide,
 * v = 1 narrow, for a remainder of at most nr[1] columns, v = 2 narrowest, for at most
 * nr[2]; nr[2] == nr[1] when the ISA has no third width); ind[mr - 1] and ind2[mr - 1] are
 * the wide tile with B as row pointers or masked half-row pointers, rel[mr - 1] with B rows
 * at base + offset, rel2[mr - 1] with B half-rows at two bases + offset (NULL when the ISA
 * has none); rem (optional) the narrowest tile over up to rem_np A panels per call. */
struct onnxrun__gemm_kernels {
	int mr_max;
	int nr[3];
	onnxrun__gemm_fn fn[3][ONNXRUN__GEMM_MR_MAX];
	onnxrun__gemm_ind_fn ind[ONNXRUN__GEMM_MR_MAX];
	onnxrun__gemm_ind2_fn ind2[ONNXRUN__GEMM_MR_MAX];
	onnxrun__gemm_rel_fn rel[ONNXRUN__GEMM_MR_MAX];
	onnxrun__gemm_rel2_fn rel2[ONNXRUN__GEMM_MR_MAX];
	/* optional (NULL, rem_np 0: the phase path runs fn[2] per weight panel) */
	int rem_np;
	onnxrun__gemm_rem_fn rem;
#ifndef ONNXRUN_BAREMETAL /* no bare-metal table has it (flash) */
	/* Optional (NULL: none; used where the tuning's skip_quarters says). fn[0][mr - 1]'s tile
	 * (mr <= mr_max, nr[0] = 32 columns) for a B panel whose columns [8*quarter, 8*quarter + 8)
	 * are zero on the k steps p with bit p % period of mask set (period <= 32): those
	 * columns' multiply-adds of those steps are left out. Each output is fn[0]'s chain of
	 * operations less those terms: fn[0]'s bits where A is finite (a chain from +0 is not
	 * changed by adding a finite value times zero); a weight of inf or NaN, whose product
	 * with those zeros made fn[0]'s sum NaN, is left out with them. */
	void (*skip_quarter)(int64_t k, const float *a, int64_t mr, const float *b, float *c, int64_t ldc,
	                     int quarter, int period, uint32_t mask);
#endif
};

/* ---- B panels and tile stores of a strided-output GEMM -----------------------------------------
 * The float32 phase path (ops/conv_transpose/phase.c) feeds the micro-kernels panels of nr
 * output positions. The positions of a panel are runs of consecutive grid positions along
 * the last axis; for one tap, a run reads x at one offset (struct onnxrun__kcopy). Outputs of
 * a run are `sl` floats apart (the last axis's stride). */

/* A run of panel columns [col, col + len) whose outputs start at element yoff. */
/* Element offsets and counts in the panel and store records: int64_t, or int32_t on bare
 * metal, where a 32-bit address space bounds them (a float tensor has fewer than 2^30
 * elements) and the records are workspace RAM (the phase path keeps nr of each per panel
 * and one copy plan per tap and column). */
#ifdef ONNXRUN_BAREMETAL
typedef int32_t onnxrun__koff;
typedef int16_t onnxrun__kcount; /* counts within one run: at most nr (<= 32) */
#else
typedef int64_t onnxrun__koff;
typedef int32_t onnxrun__kcount;
#endif

struct onnxrun__krun {
	onnxrun__koff col, len, yoff;
};

/* Where one tap's run reads x: element src (for channel 0; -1 when the run lies wholly
 * outside x), after zlo zeros, n floats copied, then zhi zeros. */
struct onnxrun__kcopy {
	onnxrun__koff src;
	onnxrun__kcount zlo, n, zhi;
};

/* The sizes the panel and store routines need: cg input channels in_sp floats apart, output
 * channel planes out_sp floats apart, output stride sl along the last axis; stream: the
 * output is larger than the caches (non-temporal stores where whole lines are written). */
struct onnxrun__kpanel {
	int64_t cg, in_sp, out_sp, sl;
	bool stream;
};

struct onnxrun__phase_kernels {
	/* Packs B: row c*nt + t (c < cg, t < nt) holds, for each run, cp[t*nrun + run]'s floats
	 * of channel c (xg + c*in_sp) with its zeros, at the run's columns. */
	void (*pack)(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
	             const struct onnxrun__krun *runs, int64_t nrun, const struct onnxrun__kcopy *cp, float *bp);
	/* For one run filling the panel: brows[c*nt + t] points into x when tap t's run is all
	 * inside x, at the shared zero row when it is all outside, else at row c*nt + t of bp,
	 * packed with its zeros. Called only with the table's gemm ind[] (NULL where
	 * ONNXRUN__KERNELS_SCALAR_ONLY is 1). */
	void (*pack_rows)(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t nr,
	                  const struct onnxrun__kcopy *cp, float *bp, const float **brows);
	/* Optional (NULL: not used). Packs a 32-wide panel from half-row pointers and lane masks
	 * of channel 0 (two per tap: p0[2t + h], m0[2t + h]); channel c reads p0 + c*in_sp. */
	void (*pack_halves)(const struct onnxrun__kpanel *kp, int64_t nt, const float *const *p0, const uint16_t *m0,
	                    float *bp);
	/* y[i*out_sp + ydelta + run.yoff + e*sl] = tile[i*nr + run.col + e] + bias[i] (0 when bias
	 * is NULL) for i < mr and every run. */
	void (*store)(const struct onnxrun__kpanel *kp, const float *tile, int64_t nr, int64_t mr,
	              const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias);
	/* Optional. Two tiles whose outputs alternate (stride 2, residues 0 and 1, t1's element e
	 * right after t0's): the same values as two store calls, written as whole vectors. */
	void (*store_pair)(const struct onnxrun__kpanel *kp, const float *t0, const float *t1, int64_t nr, int64_t mr,
	                   const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias);
	/* Optional (NULL: gemm tiles and store_pair). The wide tile of gemm->rel2[mr - 1] (B row
	 * p's halves at base0 + rel[p] and base1 + rel[p] bytes; ahead: with its B-row prefetches)
	 * stored with tile t0 (nr[0] floats per row) as store_pair(kp, t0, tile, nr[0], mr, runs,
	 * nrun, y, ydelta, bias) stores them, straight from the registers (the same bits). Only
	 * for runs of whole vectors: one of nr[0] columns, or two of nr[0] / 2 (the caller
	 * checks). Then, unless kp->stream or ypf is NULL, the output lines a later call writes
	 * are fetched for writing: ypf + i*out_sp + run.yoff + [0, 2 * run.len) for i < mr and
	 * every run (a hint: any address, nothing read or written through it). */
	void (*rel2_pair)(const struct onnxrun__kpanel *kp, int64_t k, const float *a, int64_t mr, const char *base0,
	                  const char *base1, const onnxrun__krel *rel, bool ahead, const float *t0,
	                  const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta, const float *bias,
	                  const float *ypf);
#ifndef ONNXRUN_BAREMETAL /* no bare-metal table has them (flash) */
	/* Optional (NULL: not used). Takes any kp->sl of 3 to 16; the phase path calls it only
	 * where bit sl of lines_strides is set (the strides it writes whole vectors at). The
	 * tiles of the sl phases that fill each output line of the last axis (a line: sl
	 * consecutive outputs), tile m (at tiles + m * tstride, nr floats per row) the phase m
	 * outputs after a line's start: the same values as sl store calls,
	 * y[i*out_sp + ydelta + m + run.yoff + e*sl] = tiles[m*tstride + i*nr + run.col + e] +
	 * bias[i], written line after line. */
	void (*store_lines)(const struct onnxrun__kpanel *kp, const float *tiles, int64_t tstride, int64_t nr,
	                    int64_t mr, const struct onnxrun__krun *runs, int64_t nrun, float *y, int64_t ydelta,
	                    const float *bias);
	uint32_t lines_strides;
	/* Optional (NULL: the phase path's own loop). A wide panel of 8 images x 4 positions
	 * along the last axis (phase.c img_pack, with skip_quarter alone): for c < cg, t < nt,
	 * k < 4, b < 8, bp[(c*nt + t)*32 + 8*k + b] = xg[c*in_sp + b*bstride + src[t] + k]
	 * where bit k of valid[t] is set, else 0 (nothing read for a lane not valid). */
	void (*pack_img8)(const struct onnxrun__kpanel *kp, const float *xg, int64_t nt, int64_t bstride,
	                  const int64_t *src, const uint8_t *valid, float *bp);
#endif
	/* Orders the non-temporal stores of store/store_pair/store_lines before the work item ends. */
	void (*store_fence)(void);
};

/* A float row of zeros at least ONNXRUN__GEMM_NR_MAX long, 64-byte aligned: the B row of a
 * tap that lies outside x. */
ONNXRUN__HIDDEN extern const float onnxrun__kzero_row[ONNXRUN__GEMM_NR_MAX];

/* ---- overlap-add of the GEMM + col2im path ----------------------------------------------------
 * One output row of axis 1 from Z (rows per tap): for each residue r of the axis's stride s
 * and grid position q whose output o = q*s + r - pb lies in [o_lo, o_hi):
 * y[o] = bias + sum over the rows zrows[0..nrows) and the residue's taps k (t_k[t_start[r]
 * .. t_start[r + 1]), ascending) of zrow[k*ldz + q - delta - zoff], delta = (k*d - r)/s,
 * for inputs q - delta in [zoff, zend). tmp: scratch of out/s + 2 floats. */
struct onnxrun__kgather {
	int64_t s, d, pb, ldz;
	const int64_t *t_start, *t_k;
};
typedef void (*onnxrun__col2im_gather_fn)(const struct onnxrun__kgather *kg, const float *const *zrows,
                                          int64_t nrows, float *yrow, int64_t o_lo, int64_t o_hi, float bias,
                                          float *tmp, int64_t zoff, int64_t zend);

/* ---- the window GEMM of ConvTranspose (ops/conv_transpose/window.c) ----------------------------
 * Optional per ISA (NULL: the op uses gemm->rel[] and a plain store loop).
 *  tile[mr - 1]: gemm->rel[mr - 1]'s computation (same layouts, the same operations per
 *    output, so the same bits), tuned for B rows that stay in L1 across a panel;
 *  store: y[e*s + r] = tile[r*ldt + e] + bias for r < s, e < n: s tile rows interleaved into
 *    s*n consecutive outputs, the same bits on every ISA. */
typedef void (*onnxrun__win_store_fn)(const float *tile, int64_t ldt, int64_t s, int64_t n, float *y, float bias);

/* Rows to copy while a tile runs: the next work item's staged rows, so that reading x
 * overlaps the tile's arithmetic. An entry is reps (>= 1) rows of n floats, row i from
 * src + i*src_step to dst + i*dst_step (a channel's rows, or a staged row of every channel:
 * one entry, not one per row, for the op to list per item). */
struct onnxrun__win_row {
	const float *src;
	float *dst;
	int64_t n, reps, src_step, dst_step;
};
struct onnxrun__win_copy {
	const struct onnxrun__win_row *row, *end; /* the entries left, row[0] from its row `rep`, */
	int64_t off;                              /* float `off` on */
	int64_t pieces; /* at most this many pieces of 16 floats (fewer at a row's end), one */
	int64_t every;  /* after each `every` k steps (>= 1); on return, pieces not copied */
	int64_t rep;
};
/*  tile_copy[mr - 1] (optional, NULL: none): tile[mr - 1]'s computation (the same bits), and
 *    meanwhile up to cp->pieces pieces of cp's rows copied, in order; cp is advanced past
 *    them. */
typedef void (*onnxrun__win_tile_copy_fn)(int64_t k, const float *a, const char *base, const onnxrun__krel *rel,
                                          float *c, int64_t ldc, struct onnxrun__win_copy *cp);

/*  tile_copy_half[mr - 1] (optional, NULL: none): tile_copy[mr - 1] over the first nr[1]
 *    columns alone (each the same bits), for a band's last panel of at most nr[1] columns. */
#ifndef ONNXRUN_BAREMETAL /* no bare-metal table has it (flash) */
/* A run of a tile's columns whose outputs lie on one output line per group of s rows: tile row
 * g*s + rho, column e is output q = s*e + rho, written to y + yg[g] + d + q (+ bias[g]) where
 * bit g of `groups` and bit q % 16 of mask[q / 16] are set. */
struct onnxrun__win_seg {
	int64_t d;
	uint32_t groups;
	uint16_t mask[6];
};
struct onnxrun__win_out {
	float *y;
	const int64_t *yg; /* per group of s tile rows */
	const float *bias; /* per group */
	const struct onnxrun__win_seg *seg;
	int64_t nseg, s;
};
/*  tile_out (optional, NULL: tile_copy and store): tile_copy[mr - 1]'s computation (or with
 *    half, tile_copy_half[mr - 1]'s), and instead of writing the tile, its values + bias
 *    interleaved straight from the registers to y as out says, each output the same bits as
 *    store gives it: s of 1 to 3, mr a multiple of s. */
typedef void (*onnxrun__win_tile_out_fn)(int64_t k, const float *a, int64_t mr, bool half, const char *base,
                                         const onnxrun__krel *rel, struct onnxrun__win_copy *cp,
                                         const struct onnxrun__win_out *out);
#endif
struct onnxrun__window_kernels {
	onnxrun__gemm_rel_fn tile[ONNXRUN__GEMM_MR_MAX];
	onnxrun__win_store_fn store;
	onnxrun__win_tile_copy_fn tile_copy[ONNXRUN__GEMM_MR_MAX];
	onnxrun__win_tile_copy_fn tile_copy_half[ONNXRUN__GEMM_MR_MAX];
#ifndef ONNXRUN_BAREMETAL
	onnxrun__win_tile_out_fn tile_out;
#endif
};

/* ---- float64 ConvTranspose register tiles --------------------------------------------------------
 * The float64 phase path (ops/conv_transpose/f64.c) runs register tiles of mb output
 * channels x nw consecutive grid positions of the last axis over a row's list of kk
 * (input channel, tap) pairs: x rows of nw values (copied, with zeros, so a tile reads whole
 * vectors; contiguous, or each through a pointer into a packed line of x that several taps
 * share) and packed weights (mb per pair). */

#define ONNXRUN__F64_MB_MAX 8  /* most channels of any tile */
#define ONNXRUN__F64_NW_MAX 64 /* most positions of any tile */

/* tile[m*nw + e] += sum over p < kk, ascending, of wb[p*mb + m] * xb[p*nw + e], for m < mb,
 * e < nw (x rows of the tile's width, weights in groups of mb: both contiguous, as f64.c
 * packs them): each product added to the running value in turn, so that a list run in
 * chunks, one call per chunk in order, gives the same bits as one call over the whole list. */
typedef void (*onnxrun__f64_tile_fn)(int64_t kk, const double *xb, const double *wb, double *tile);
/* The same with x row p at xrows[p] (nw contiguous doubles each) instead of xb + p*nw, so that
 * several taps' rows can point into one packed line of x at their shifts, or at a shared zero
 * row (f64.c, pack_lines): the same products added in the same order, so the same bits. */
typedef void (*onnxrun__f64_tile_ind_fn)(int64_t kk, const double *const *xrows, const double *wb, double *tile);
/* y0[m*plane + e*sl] = tile[m*nw + e] + bias[m] (bias NULL: + 0) for m < mc, e < uc; the same
 * bits on every ISA. */
typedef void (*onnxrun__f64_store_fn)(const double *tile, int64_t nw, int64_t mc, int64_t uc, double *y0,
                                      int64_t plane, int64_t sl, const double *bias);

/* A group of sg phases interleaved along the last axis (f64.c, f64_groupable), stored as whole
 * output lines: y0[m*plane + e*sg + jj] = tile[jj*accn + m*nw + e] + bias[m] (bias NULL: + 0)
 * for m < mc, e < uc, jj < sg; the same bits as the plain loop on every ISA. */
typedef void (*onnxrun__f64_store_group_fn)(const double *tile, int64_t accn, int64_t nw, int64_t mc, int64_t uc,
                                            double *y0, int64_t plane, int64_t sg, const double *bias);

struct onnxrun__f64_tile {
	int mb, nw;
	onnxrun__f64_tile_fn fn;
	onnxrun__f64_tile_ind_fn ind; /* the tile with x rows as pointers (NULL: none) */
};

/* One ISA's tiles (every shape it has, in no particular order) and its store. */
struct onnxrun__f64_kernels {
	const struct onnxrun__f64_tile *tiles;
	int ntiles;
	onnxrun__f64_store_fn store;
	/* NULL: f64.c stores the groups with plain C */
	onnxrun__f64_store_group_fn store_group;
	/* Optional (NULL: none), for outputs too large to stay in cache: store and store_group with
	 * non-temporal stores for the whole vectors that are whole aligned cache lines (no read
	 * for ownership, no eviction of x and the weights), the same bits; stream_fence orders
	 * them before the work item ends. */
	onnxrun__f64_store_fn store_stream;
	onnxrun__f64_store_group_fn store_group_stream;
	void (*stream_fence)(void);
};

/* ---- float16 / bfloat16 <-> float32 ---------------------------------------------------------------
 * dst[i] = src[i] converted, i < n, bf16 choosing bfloat16 over float16: bit for bit what
 * the runtime's onnxrun__f16_to_f32 / _bf16_to_f32 / f32_to_f16 / f32_to_bf16 give for every
 * input (round to nearest even, NaNs kept, signalling ones included), on every ISA. */
typedef void (*onnxrun__widen_fn)(bool bf16, const uint16_t *src, float *dst, int64_t n);
typedef void (*onnxrun__narrow_fn)(bool bf16, const float *src, uint16_t *dst, int64_t n);

/* ---- DepthToSpace row interleaves ----------------------------------------------------------------
 * One output row of DepthToSpace with block size b, 4-byte elements: dst[w*b + j] =
 * src[j][w] for j < b, w < width. A pure copy: the same bits on every ISA. */
typedef void (*onnxrun__d2s_row_fn)(uint32_t *dst, const uint32_t *const *src, int64_t width);

struct onnxrun__d2s_kernels {
	/* b = 2 and b = 4 (NULL: the ISA has none; the op copies with plain C) */
	onnxrun__d2s_row_fn row2, row4;
	/* The same with non-temporal stores (no read for ownership, no eviction of the input),
	 * for a 64-byte-aligned dst; NULL: the ISA has none. */
	onnxrun__d2s_row_fn row2_stream, row4_stream;
	/* Orders the non-temporal stores before the work item ends (set with the stream rows). */
	void (*stream_fence)(void);
};

/* ---- one table per ISA -------------------------------------------------------------------------- */

struct onnxrun__kernels {
	enum onnxrun__isa isa;
	const char *name; /* as in ONNXRUN_KERNEL */
	const struct onnxrun__gemm_kernels *gemm;
	struct onnxrun__phase_kernels phase;
	onnxrun__col2im_gather_fn col2im_gather;
	const struct onnxrun__window_kernels *window; /* optional (NULL: none) */
	onnxrun__dw_rows_fn dw_rows; /* depthwise ConvTranspose rows (depthwise.h) */
	const struct onnxrun__f64_kernels *f64;
	onnxrun__widen_fn widen;
	onnxrun__narrow_fn narrow;
	struct onnxrun__d2s_kernels d2s;
};

/* ---- tuning ------------------------------------------------------------------------------------
 * Sizes the ops plan their work with, in one place, each saying what it bounds. The cache
 * sizes are detected; the byte limits are fixed values measured on two machines (cpu.c says
 * why they are not scaled with the detected L2). */
struct onnxrun__tuning {
	size_t l1d, l2; /* detected data cache sizes (bytes; 48 KiB and 2 MiB when unknown) */
	/* phase path: a tile of output rows holds its outputs and inputs in this many bytes,
	 * leaving room in L2 for the weights and the B panels of a work item */
	size_t phase_tile_bytes;
	/* phase path: weights of one phase class above this would stream from L3 for every B
	 * panel, so each weight panel runs over several B panels at a time ... */
	size_t phase_weights_l2;
	/* ... that together take at most this */
	size_t phase_bpanels_bytes;
	/* outputs from this size are written with non-temporal stores where whole lines are */
	size_t stream_output_bytes;
	/* phase path: the staged copy of x a thread makes for one tile stays below this, so it
	 * is still in L2 when the tile's panels read it */
	size_t stage_bytes;
	/* phase path: how B panels are given to the micro-kernels, by how many 8-row kernel
	 * calls read each panel: read in place as masked half-rows up to half_rows_calls, as row
	 * pointers up to in_place_calls, packed above; the staged copy of x pays off from
	 * stage_calls. (Reading in place saves the copy but reads rows that may share L1 sets;
	 * a packed panel is one contiguous block that many calls reuse.) */
	int64_t half_rows_calls, in_place_calls, stage_calls;
#ifndef ONNXRUN_BAREMETAL
	/* phase path: a wide B panel one of whose quarters reads padding on some taps runs the
	 * gemm's skip_quarter tile (when the table has one), which leaves those multiply-adds
	 * out for some shuffles and loads more per step: on the CPUs where that was measured
	 * faster (cpu.c) */
	bool skip_quarters;
#endif
};

/* The tuning for this machine (detected once). */
ONNXRUN__HIDDEN const struct onnxrun__tuning *onnxrun__tuning(void);

/* ---- choosing the ISA --------------------------------------------------------------------------- */

/* The ISA in use: ONNXRUN_KERNEL (scalar, avx2, avx512, simd128, neon, mve) if set and supported by this CPU,
 * else the best the CPU has. Read once; onnxrun__isa_set overrides it (tests). */
ONNXRUN__HIDDEN enum onnxrun__isa onnxrun__isa_current(void);
/* Forces an ISA (clamped to the best supported one not above it); returns the ISA now in use. */
ONNXRUN__HIDDEN enum onnxrun__isa onnxrun__isa_set(enum onnxrun__isa isa);
/* True when this build has the ISA's kernels and this CPU can run them. */
ONNXRUN__HIDDEN bool onnxrun__isa_supported(enum onnxrun__isa isa);
/* The table of an ISA (clamped like onnxrun__isa_set), and of the ISA in use. */
ONNXRUN__HIDDEN const struct onnxrun__kernels *onnxrun__kernels_for(enum onnxrun__isa isa);
ONNXRUN__HIDDEN const struct onnxrun__kernels *onnxrun__kernels_current(void);

#endif
