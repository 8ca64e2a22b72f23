/* internal.h - what the files of kernels/ln_linear/ share and nothing else
 * sees: the instance (struct lnl_op), the forward's kernel choice, each
 * file's launchers, and the device helpers that more than one kernel family
 * uses. nvcc only (ln_linear.h is the public, C header).
 *
 * The folder, in reading order:
 *   ln_linear.h    the operation, the input profiles, the CPU references
 *   ref.c          the double-precision references and check sampling
 *   split.c        the split-K forward's slices and partial bytes (host C)
 *   fwd_simt.cu    the naive forward, the weight fold, the first fused
 *                  kernel (the path for rows without aligned 16-byte chunks)
 *   fwd_mma.cu     the fused forward on mma.sync (bf16, and fp32 as 3xTF32)
 *   wgmma.cuh      the wgmma primitives and the sm_90a guard of the next two
 *   fwd_wgmma.cu   the fused forward on Hopper: wgmma, then warp-specialized
 *                  with TMA and clusters (built for sm_90a)
 *   skinny.cuh     the skinny forward's shared device pieces and the
 *                  x-resident kernel's body
 *   fwd_skinny.cu  the skinny forward up to 16 rows, the x-resident one on
 *                  mma.sync, their plans and launchers
 *   fwd_skinny_wg.cu  the skinny forward on wgmma: the x-resident body, the
 *                  x-streamed kernels (built for sm_90a)
 *   bwd.cu         the backward's kernels and its launcher
 *   cublaslt.cu    the cuBLASLt plumbing of the unfused variants
 *   check.cu       the checks' host side: the sampled double references
 *                  and what they download
 *   choose.cu      the forward's kernel choice (lnl_fwd_choose)
 *   workload.cu    the forward's launch, the kernel options, sizes,
 *                  models, create/check/destroy: the contract, last
 *   gpu.sh         what to run on a GPU machine after a change here
 *
 * Constants are named for the kernel family they tune: LNL_ (shared, and
 * the workload's limits), SIMT_ (k_fwd_fused), MMA_ (k_fwd_fused_mma), WG_
 * (k_fwd_fused_wgmma), WS_ (k_fwd_fused_ws: "ws" always means warp-
 * specialized here), COLSUM_ (the db column sums), LT_ (cuBLASLt, whose
 * scratch memory is its "workspace").
 *
 * y = LN(x; gamma, beta) * W^T + b, x: M x K, W: N x K, y: M x N (row-major).
 *
 * Napkin math (es = 4 fp32 / 2 bf16):
 *   forward   FLOPs 2*M*N*K (the GEMM) + 8*M*K (LayerNorm) + M*N (bias);
 *             min bytes es * (M*K + 2*K + N*K + N + M*N).
 *   backward  FLOPs 4*M*N*K (dW and dh GEMMs) + ~18*M*K + M*N;
 *             min bytes es * (M*N + M*K + 2*K + N*K)       read dy, x, g, b, W
 *                     + es * (M*K + 2*K + N*K + N)         write dx, dg, db, dW, db
 * At M = 16384, K = 768, N = 256 bf16 the forward is 6.4 GFLOP over 34 MB:
 * on an H100 the tensor work takes less time than the bytes, so the
 * LayerNorm's extra pass over x (25 MB) is what fusion removes. At K = 4096,
 * N = 16384 bf16 it is 2.2 TFLOP, the GEMM's time dwarfs the LayerNorm's
 * 134 MB, and fusion can gain little there (bench/RESULTS.md, "LayerNorm+
 * Linear on an H100", has both sides measured).
 *
 * Numerics shared by every kernel here (the argument the offset profile
 * tests): each row is shifted by its first element c = x[0] before any sum,
 * x~ = x - c. For rows of mean 1e3 and unit spread x - c is exact in fp32
 * (Sterbenz: both within a factor of two) and of the order of the spread, so
 * the shifted sums sum(x~) and sum(x~^2) carry no cancellation: mean - c =
 * sum(x~)/K, var = sum(x~^2)/K - (mean - c)^2 with both terms O(spread^2).
 * An unshifted one-pass variance would subtract two numbers of 1e6 to get 1,
 * losing six of fp32's seven digits. The normalised value is formed as
 * (x~ - (mean - c)) * rstd, never as x - mean with a rounded mean. The
 * backward's LayerNorm kernels (the LayerNorm module's, with the row
 * in registers: c is their first-pass mean) keep three floats per row the
 * same way (c, mean - c, rstd) rather than mean and rstd.
 *
 * The fused forward and FlashNorm (arXiv 2407.09577). FlashNorm folds the
 * LayerNorm's affine part into the Linear once per weight:
 *     W' = W o gamma (column k of W scaled by gamma_k, rounded to the dtype)
 *     b' = W beta + b,    s = rowsum(W')  (from the rounded W', so that the
 *                                          mean term cancels what the GEMM
 *                                          really multiplied)
 * and then y = rstd * (x W'^T - mean * s) + b'. The GEMM streams the raw x;
 * mean and rstd are per-row scalars applied in the epilogue, so the
 * normalised tensor exists nowhere. Its weakness is the same cancellation:
 * with mean 1e3 every x W'^T entry is ~1e3 * |s| and the answer, after
 * subtracting mean * s, is ~1e3 times smaller, so the GEMM's fp32 rounding
 * (relative ~1e-7 * sqrt(K)) is amplified 1e3 times: ~6e-3 at K = 4096,
 * over the 1e-4 fp32 tolerance. The fused kernels here apply the same
 * per-row shift in their load path instead: they multiply x~ = x - c
 * (exact) by W', sum x~ and x~^2 from the very tiles they multiply (no
 * extra pass over x), and finish with
 *     y = rstd * (x~ W'^T - (mean - c) * s) + b'
 * where (mean - c) is O(spread): no cancellation, at the price of one
 * subtraction per loaded x element, which the prologue route (normalise in
 * the load path, needs mean and rstd before the first tile) also pays. In
 * bf16, x~ is rounded to bf16 for the tensor cores: a relative error of
 * 2^-9 on values of the order of the spread, the same as rounding the
 * normalised x, which the unfused form does too. The tensor-core kernels
 * (k_fwd_fused_mma, k_fwd_fused_wgmma, k_fwd_fused_ws) sum the statistics
 * from those rounded x~, so the GEMM and the mean and variance see the
 * same numbers: they normalise the row c + round(x - c) exactly, within
 * 2^-9 of x. Where the warp-specialized kernel takes the statistics from a
 * pass of their own (see WS_PASS_N), that pass (the LayerNorm+GELU
 * workloads' row-statistics kernel, fp32, shifted by its own first-pass
 * mean hi) normalises x itself, and the GEMM's pivot is c = hi rounded to
 * bf16 with mean - c = (hi - c) + (mean - hi), both exact or O(spread): the
 * rows then differ from the GEMM's c + round(x - c) by the same 2^-9
 * rounding of x~ that the unfused form's bf16 normalised x carries. Without
 * the shift the tensor cores would sum x W'^T, whose terms carry the
 * offset: their fp32 sums drop low bits at every k-step relative to |c s|,
 * which at c = 1e3 and a spread near 1 is several hundred times the result,
 * too much for bf16's 1e-2.
 *
 * The weight fold is preparation, done once per weight in create() (and
 * again in check(), which uploads new weights); it is not part of a timed
 * launch.
 *
 * The backward recomputes mean and rstd from x: its inputs are dy, x,
 * gamma, beta, W (no saved statistics), the way a recomputing (activation
 * checkpointing) training step runs. */
#ifndef FP_LN_LINEAR_INTERNAL_H
#define FP_LN_LINEAR_INTERNAL_H

#include <stdint.h>

#include <cublasLt.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "device.cuh"
#include "kutil.h"
#include "ln_linear.h"
#include "lnl-math.cuh"
#include "workload.h"

/* Variant indices, in the order of each workload's variants[]. */
static const int FWD_NAIVE = 0, FWD_UNFUSED = 1, FWD_FUSED = 2;
static const int BWD_NAIVE = 0, BWD_UNFUSED = 1, BWD_FUSED = 2;

/* The kernels a forward instance's launch runs, chosen once in create()
 * (lnl_fwd_choose in choose.cu) from the variant, shape, device and options. */
enum lnl_fwd_kernel {
	FK_NAIVE,      /* k_fwd_naive */
	FK_UNFUSED,    /* LayerNorm rows, then cuBLASLt */
	FK_SIMT,       /* k_fwd_fused: rows without aligned 16-byte chunks */
	FK_MMA_SMALL,  /* k_fwd_fused_mma 64 x 128: too few big tiles */
	FK_MMA_SPLIT,  /* the same over slices of K (split-K), then
	                  k_fwd_split_reduce: too few small tiles */
	FK_MMA,        /* k_fwd_fused_mma 128 x 256 */
	FK_WGMMA,      /* k_fwd_fused_wgmma 128 x 256 (sm_90a) */
	FK_WS,         /* k_fwd_fused_ws, warp-specialized (sm_90a) */
	FK_GEMV,       /* k_fwd_gemv (decode rows), then k_fwd_split_reduce
	                  where it takes slices of K */
	FK_SKINNY,     /* k_fwd_skinny (bf16, up to 16 rows): W' as the MMA's
	                  A operand, slices of K reduced in a cluster */
	FK_SKINNY_RES, /* k_fwd_skinny_res (bf16, 17 to 64 rows): the same
	                  with x's slice resident, W' alone in the ring
	                  (TMA) */
	FK_SKINNY_ST,  /* k_fwd_skinny_st (bf16, 17 to 64 rows, sm_90a): a
	                  block a 64-row tile of W' over all of K, x
	                  streamed beside it */
	FK_SKINNY_XA,  /* k_fwd_skinny_xa (the same with x as the wgmma's
	                  A, W' tiles of op->xbn = 16 to 96 rows), over
	                  op->splits slices of K in a cluster where they
	                  are more than one */
	FK_SKINNY_XT,  /* k_xt_pass (x~ = x - c and the statistics), then
	                  k_fwd_skinny_xt (bf16, 17 to 64 rows, sm_90a): x~
	                  as the wgmma's A, W' tiles of op->xbn rows as its
	                  B, op->xks k-tiles a ring stage, over
	                  op->splits slices of K in a cluster where they
	                  are more than one */
};

/* The forward's kernel options, in the order of its kopts[] (values[0],
 * the default, is "auto" for each). */
enum {
	OPT_GEMM, OPT_CLUSTERS, OPT_STATS_PASS, OPT_SPLIT_K, OPT_DECODE, OPT_SKINNY, OPT_SKINNY_MMA,
	OPT_SKINNY_X, OPT_WS_TILE, OPT_MMA_TILE, OPT_XA_TILE, OPT_XA_SPLIT, OPT_ST_SPLIT,
	OPT_XA_PASS, OPT_RES_SPLIT, OPT_XT_TILE, OPT_XT_STAGE,
	OPT_SPLIT_TILE, OPT_LT_ALGO, OPT_XT_SPLIT, OPT_ST_RING, OPT_WS_SPLIT, OPT_FEW_TILES,
	OPT_WS_A, OPT_WS_REDUCE
};
enum { FEW_AUTO, FEW_XT, FEW_WS, FEW_MMA };
/* ws_a: the warp-specialized kernel's A, x (shifted in registers) or x~ */
enum { WSA_AUTO, WSA_X, WSA_XT };
/* ws_reduce: where the warp-specialized kernel's slices of K are added */
enum { WSR_AUTO, WSR_CLUSTER, WSR_KERNEL };
/* st_ring's values, as lnl_skinny_st_plan's ring argument takes them. */
enum { STR_AUTO, STR_8, STR_16 };
enum { GEMM_AUTO, GEMM_WS, GEMM_WGMMA, GEMM_MMA };
/* lt_algo (the forward's OPT_LT_ALGO, the backward's BOPT_LT_ALGO): the
 * cuBLASLt GEMMs' algorithm, the heuristic's first choice or the fastest
 * it offers (lt_tune). */
enum { LTA_HEURISTIC, LTA_FASTEST };
enum { BOPT_LT_ALGO };
enum { CLUSTERS_AUTO, CLUSTERS_1, CLUSTERS_2 };
enum { PASS_AUTO, PASS_ON, PASS_OFF };
enum { SPLIT_AUTO, SPLIT_OFF };
enum { SPT_AUTO, SPT_64, SPT_32 };
enum { DECODE_AUTO, DECODE_ON, DECODE_OFF };
enum { SKINNY_AUTO, SKINNY_ON, SKINNY_OFF };
enum { SKMMA_AUTO, SKMMA_SYNC, SKMMA_WGMMA };
enum { SKX_AUTO, SKX_RESIDENT, SKX_STREAM, SKX_STREAM_XA, SKX_STREAM_XT };
enum { XTT_AUTO };  // xt_tile: the other values are the tile's rows
enum { XTS_AUTO };  // xt_stage: the other values are k-tiles a stage
enum { WST_AUTO, WST_256, WST_192, WST_128, WST_64 };
enum { XAT_AUTO };  // xa_tile: the other values are the tile's rows
enum { XAS_AUTO };  // xa_split, st_split, res_split: the other values are slices of K

/* The warp-specialized kernel takes over from K = WS_MIN_K (one k-tile):
 * 1.04-1.63x faster than k_fwd_fused_wgmma at every K from 64 to 512 it
 * was timed at (bench/RESULTS.md, "The warp-specialized kernel from one
 * k-tile (H100)"; it had served from K = 512). */
#define WS_MIN_K 64
/* Its blocks pair up in clusters (W' tiles multicast to both) only above
 * K = WS_SOLO_MAX_K: at K <= 512 single blocks were 0.9-1.5 % faster at
 * 16384 rows (N = 4096) and 8.5 % at 2000 x 128 -> 3000, in two sessions;
 * from K = 1000 pairs won up to 1.25x (2000 x 1000 -> 3000) with one loss
 * (4096 x 1024 -> 2048, 3.9 %) (bench/RESULTS.md, "Clusters by K, the
 * mma.sync kernel's 192-column tiles (H100)"). */
#define WS_SOLO_MAX_K 512
/* It takes the rows' statistics from a pass of their own from N = WS_PASS_N
 * (a row meets N / 256 tiles, each of which would sum it again) where
 * K >= WS_PASS_K (the pass was measured at K = 4096 only; same section). */
#define WS_PASS_N 2048
#define WS_PASS_K 2048
/* The x-as-A skinny kernel (k_fwd_skinny_xa) takes them from such a pass
 * (option xa_pass, auto) in tiles of up to LNL_XA_PASS_MAX_BN rows of W',
 * where the statistics each block sums are the largest share of its work:
 * on an H200, 0.89-0.99x the time in 64-row tiles at 33-64 rows, 1.00-1.12x
 * in tiles of 72 and 96 rows, whose pass costs more than it saves
 * (bench/RESULTS.md, "The x-as-A kernel's statistics from a pass"). */
#define LNL_XA_PASS_MAX_BN 64

/* The k-tile of the tensor-core kernels: 64 columns, 128 bytes of bf16. */
#define LNL_KTILE 64
/* Tiles in flight are walked in groups of this many tile rows (group_tile),
 * so that they share rows of x and of W' in L2. */
#define LNL_GROUP 8
/* The db column sums' chunk of rows (bwd.cu): M / COLSUM_ROWS rows of
 * partials. */
#define COLSUM_ROWS 128
/* The LayerNorm backward's partial rows: at most this many blocks (its
 * persistent grid is a few blocks per SM). */
#define LNL_PARTIALS 1024

/* cuBLASLt: one matmul description per GEMM, its algorithm chosen once in
 * create() (cublaslt.cu). */
#define LT_WORKSPACE_BYTES (32u << 20)
struct lt_gemm {
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulAlgo_t algo;
	int rank;     // algo's place in the heuristic's list (0: its first choice)
	int offered;  // algorithms the heuristic offered (lt_tune), else 1
};
/* lt_tune: the most algorithms asked of cuBLASLt's heuristic, and the
 * fewest timed runs of each, back to back, or as many as take about
 * LT_TUNE_SPAN_MS (at most 100). */
#define LT_TUNE_ALGOS 16
#define LT_TUNE_REPS 5
#define LT_TUNE_SPAN_MS 1.0f

/* An instance (struct fp_op is opaque to the run loop; this is its layout). */
struct lnl_op {
	int bwd;
	enum fp_dtype dt;
	int variant;
	long M, K, N;
	int nsets;
	size_t xset, dyset;  // one x / dy tensor, padded by dev_pad
	char *x, *dy;        // nsets input sets each (dy: backward only)
	void *gamma, *beta, *W, *b;
	// What a launch writes (outputs, intermediates, statistics, partials,
	// accumulators, cuBLASLt's workspace), set 0's, carved out of wbuf:
	// set s's lie s * wset bytes further on (lnl_launch hands the
	// launchers a copy of the instance pointing at them). W', s and b' are
	// written by the weight fold, not by a launch: one copy.
	char *wbuf;          // nsets * wset
	size_t wset;
	void *y;             // forward output
	void *h;             // unfused: the normalised x (M x K, dtype); bf16
	                     // fused forward where lnl_fwd_xt_possible: x~
	                     // (FK_SKINNY_XT, FK_WS with ws_xt)
	void *Wf;            // fused forward: W' (Np rows of K, dtype) at a
	                     // row stride of ldw elements: lnl_row_ld where
	                     // op->fk takes it (lnl_fwd_takes_ldw), else K;
	                     // the library's: lnl_fold_ld
	long ldw;
	long Np;             // N rounded up to 32
	float *sW, *bf;      // fused forward: s, b'
	float *stats;        // backward, and the bf16 fused forward where a
	                     // statistics pass may run: c, mean - c, rstd (3 x M)
	void *dx, *dW, *dg, *dbeta, *db;  // backward outputs (dtype); dbeta
	                     // follows dgamma in one allocation (dg)
	void *dh;            // backward: dh = dy W, M x K (dtype)
	float *part;         // backward: dgamma/dbeta and db partials
	long lnb;            // backward: the LayerNorm backward's blocks
	float *acc;          // naive backward: fp32 atomics targets
	cublasLtHandle_t lt;
	void *workspace;     // cuBLASLt's, LT_WORKSPACE_BYTES
	struct lt_gemm g0, g1;
	int sms;             // multiprocessors of the device (tile choice)
	struct fp_kopts ko;  // the kernel options create() was given
	enum lnl_fwd_kernel fk;  // forward: what the launch runs
	int ws_cl;           // FK_WS: blocks a cluster (1, or 2 sharing W' or x~)
	int ws_pairs;        // ws_cl = 2: clusters of two resident at once
	int ws_pass;         // FK_WS: statistics from a pass of their own
	int ws_xt;           // FK_WS: A is x~ from the x~ pass (op->h), not x
	int ws_dsum;         // FK_WS over x~ and slices of K: a cluster of
	                     // `splits` blocks a tile, added through DSMEM
	int ws_bn;           // FK_WS: columns a tile, 256 or 192 (lnl_ws_bn),
	                     // or 128 where the tiles are few (lnl_ws_plan;
	                     // over x~ also 64)
	int mma_bn;          // FK_MMA: columns a tile, 256 or 192 (the same rule)
	int mma_bm;          // FK_MMA_SPLIT: rows a tile, 64 or 32 (split_tile)
	int splits;          // FK_MMA_SPLIT, FK_SKINNY(_RES, _ST, _XA, _XT),
	                     // FK_WS: slices of K
	int sgroups;         // FK_SKINNY_RES: clusters, W''s tiles dealt round
	int swg;             // FK_SKINNY_RES: on wgmma (k_fwd_skinny_wg)
	int xbn;             // FK_SKINNY_XA: rows of W' a block (16 to 96)
	int xa_pass;         // FK_SKINNY_XA: the rows' statistics from a pass
	                     // of their own (layernorm_stats into stats)
	int st_deep;         // FK_SKINNY_ST: the deep ring, one block an SM
	int xks;             // FK_SKINNY_XT: k-tiles a ring stage (1, 2, 4);
	                     // its tile's rows of W' in xbn (32 to 96)
	int wperm;           // FK_MMA_SPLIT: W' in perm32's order (the library's
	                     // fold where the warp-specialized kernel may run)
	float *fpart;        // fused forward: split-K partials (the workload:
	                     // lnl_split_bytes; the library: lnl_part_bytes of
	                     // the slices lnl_fwd_part_slices takes); NULL: no
	                     // split-K
	struct lnl_gemv gv;  // FK_GEMV: the decode forward's plan
};

/* choose.cu: the forward's kernel choice (op->fk and the warp-
 * specialized kernel's settings) from op's shape, dtype, device (sms) and
 * options (ko). ws_every_m (the library, kernels/api, whose one fold must
 * serve every M): where the fold is the warp-specialized kernel's
 * (lnl_fold_perm), take that kernel for few rows too, rather than the
 * small-tile kernel whose fold differs. 0, or -1 (reported). */
int lnl_fwd_choose(struct lnl_op *op, int ws_every_m);
/* choose.cu: the option values lnl_fwd_choose reads as numbers (all but
 * values[0], "auto"), which the forward's option table (workload.cu)
 * lists: xa_tile's, xa_split's (also st_split's, res_split's, xt_split's,
 * ws_split's), xt_stage's and xt_tile's. */
extern const char *const lnl_xa_tile_values[];
extern const char *const lnl_xa_split_values[];
extern const char *const lnl_xt_stage_values[];
extern const char *const lnl_xt_tile_values[];
/* workload.cu: enqueue the kernels op->fk names (lnl_fwd_choose) on st.
 * 0, or -1 (reported). */
int lnl_fwd_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
/* Whether forward kernel fk reads W' at its row stride op->ldw: every
 * fused kernel but k_fwd_fused (FK_SIMT, rows without aligned 16-byte
 * chunks) and k_fwd_fused_wgmma (FK_WGMMA), which read rows of K. */
int lnl_fwd_takes_ldw(enum lnl_fwd_kernel fk);
/* Whether the fused forward's fold at K and dt on a device with (hopper =
 * 1) or without the sm_90a kernels is the warp-specialized kernel's
 * permuted one (whenever that kernel may run: bf16, 16-byte rows, K >=
 * WS_MIN_K). Only there does the library's fold have rows of lnl_row_ld
 * (lnl_fold_ld, ln_linear.h): there neither FK_SIMT nor FK_WGMMA, which
 * read rows of K, runs. */
int lnl_fold_perm(long K, enum fp_dtype dt, int hopper);
/* Whether the bf16 statistics pass may run at K (then the forward needs 3 M
 * floats of statistics). */
int lnl_fwd_pass_possible(long K, enum fp_dtype dt);

/* fwd_simt.cu */
int fold_launch(const struct lnl_op *op, cudaStream_t st);
int fwd_naive_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
int fwd_simt_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
/* fwd_mma.cu: big = 1 for 128 x 256 tiles, 0 for 64 x 128. */
int fwd_mma_setup(void);
int fwd_mma_launch(const struct lnl_op *op, const void *x, int big, cudaStream_t st);
/* fwd_mma.cu: the 64 x 128 kernel over op->splits slices of K into
 * op->fpart, then the reduction and epilogue into op->y. */
int fwd_mma_split_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
/* fwd_gemv.cu: the reduction and epilogue alone (k_fwd_split_reduce,
 * gemv.cuh), over `splits` slices of partials in op->fpart (the split-K
 * forward's layout, lnl_part_bytes); the rows' statistics from their
 * shifted sums there, or where stats is not NULL from stats (mean - c,
 * rstd: the x~ pass's). */
int fwd_split_reduce_launch(const struct lnl_op *op, int splits, const float *stats,
			    cudaStream_t st);
/* fwd_skinny_wg.cu: clusters of a streamed skinny kernel the device holds
 * at once, (*caps)[s] for s = 1 .. LNL_SKINNY_MAX_SPLITS blocks (asked once
 * a process): which 0 for k_fwd_skinny_xa, 1 and 2 for k_fwd_skinny_st of
 * 32 and 64 rows of x, 3 for it at 32 rows in the deep ring (FWD_CAPS_XA,
 * FWD_CAPS_ST(mp), FWD_CAPS_ST_DEEP). 0, or -1 (reported). */
int fwd_skinny_stream_caps(int which, const int **caps);
/* fwd_wgmma.cu: clusters of the warp-specialized kernel over x~ in slices
 * of K (ws_dsum) the device holds at once, (*caps)[s] for s = 1 ..
 * LNL_SKINNY_MAX_SPLITS blocks (asked once a process). 0, or -1 (reported). */
int fwd_ws_dsum_caps(const int **caps);
#define FWD_CAPS_XA 0
#define FWD_CAPS_ST(mp) ((mp) > 32 ? 2 : 1)
#define FWD_CAPS_ST_DEEP 3
/* fwd_gemv.cu: the decode forward of plan op->gv (lnl_fwd_gemv), its
 * reduction after it where the plan takes slices. */
int fwd_gemv_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
/* fwd_skinny.cu: the skinny kernels' shared-memory limits and the
 * device's cluster occupancy (once a process), and the launch of op->fk
 * (FK_SKINNY or FK_SKINNY_RES) in op->splits slices of K. */
int fwd_skinny_setup(void);
/* The blocks of the skinny kernel for M rows the device holds at once. */
int fwd_skinny_slots(long M, int sms, long *slots);
/* lnl_fwd_skinny_res with the device's limits (after fwd_skinny_setup). */
int fwd_skinny_res_plan(long M, long K, long Nw, enum fp_dtype dt, int want, int *slices,
			int *groups);
int fwd_skinny_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
/* fwd_wgmma.cu: a TMA descriptor of a row-major bf16 tensor (rows x cols,
 * ld elements from a row to the next, ld % 8 == 0) copied in boxes of
 * box_rows x 64 with the 128-byte swizzle; reads past its edges give
 * zeros. The driver's encoder is found once through the runtime (nothing
 * links libcuda). */
int lnl_tma_map(CUtensorMap *m, const void *p, long cols, long ld, long rows, int box_rows);
/* fwd_skinny_wg.cu: k_fwd_skinny_wg<mp> (mp = 32, 64; else NULL). */
const void *fwd_skinny_wg_kernel(int mp);
/* fwd_skinny_wg.cu: the x-streamed skinny forwards (FK_SKINNY_ST, FK_SKINNY_XA). */
int fwd_skinny_st_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
int fwd_skinny_xa_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
/* fwd_skinny_xt.cu: FK_SKINNY_XT's pass and GEMM (op->h, op->stats
 * written). */
int fwd_skinny_xt_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
/* fwd_skinny_xt.cu: the x~ pass alone (x~ in op->h, lnl_xt_rows(M) rows at
 * lnl_row_ld(K); stats: mean - c, rstd), the dependent kernel launched
 * programmatically behind it. */
int fwd_xt_pass_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
/* fwd_wgmma.cu. fwd_wgmma_setup sets *have to whether this build has the
 * Hopper kernels for the current device (sm_90a code on a compute
 * capability 9.0 GPU); ws_pairs_resident, how many clusters of two blocks
 * of the warp-specialized kernel fit at once (0: none). */
int fwd_wgmma_setup(int *have);
int fwd_wgmma_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
int fwd_ws_launch(const struct lnl_op *op, const void *x, cudaStream_t st);
int ws_pairs_resident(int sms, int *n);
/* bwd.cu */
int bwd_launch(const struct lnl_op *op, const void *x, const void *dy, cudaStream_t st);
/* cublaslt.cu: D (m x n, column-major, ldd) = op(A) op(B) [+ bias per row
 * of D]; lt_release frees what lt_init made (a zeroed g is a no-op). */
int lt_init(struct lt_gemm *g, cublasLtHandle_t h, cublasOperation_t ta,
	    cublasOperation_t tb, long m, long n, long k, cudaDataType_t ab,
	    long lda, long ldb, cudaDataType_t dt, long ldd, const void *bias);
int lt_run(const struct lt_gemm *g, cublasLtHandle_t h, const void *A,
	   const void *B, void *D, void *workspace, cudaStream_t st);
/* The fastest of the algorithms cuBLASLt's heuristic offers for g's case
 * (up to LT_TUNE_ALGOS; one untimed run each, then timed runs back to
 * back on st, which it synchronizes), run on these operands, into g->algo
 * (g->rank, g->offered say which of how many). 0, or -1 after error(). */
int lt_tune(struct lt_gemm *g, cublasLtHandle_t h, const void *A, const void *B, void *D,
	    void *workspace, cudaStream_t st);
void lt_release(struct lt_gemm *g);
/* check.cu: the outputs of the run just made on set 0 compared, into r
 * (check_begin'd), with double references on the inputs it read (profile
 * and seed drew them), on a sample drawn from seed; the references are
 * kept in the reference cache (checkref.h), so another variant of the case
 * checked on the same profile and seed downloads only its outputs. Returns
 * 0, or -1 (reported) when the check could not run (a wrong output is
 * r->passed = 0, not an error). */
int lnl_check_outputs(struct lnl_op *op, int profile, uint64_t seed, struct fp_check *r);

// ---------------------------------------------------------------------------
// Device helpers of more than one kernel family

// V consecutive elements of row r of a rows x K tensor from column k, as
// floats, zeros outside; one 16-byte load when V > 1 (then K % V == 0 and
// k % V == 0, so a chunk is all in or all out).
template <typename T, int V>
__device__ __forceinline__ void load_chunk(const T *__restrict__ src, long rows,
					   int K, long r, int k, float *out)
{
	if (r < rows && k < K) {
		const T *p = src + r * K + k;

		if constexpr (V == 1) {
			out[0] = to_f(p[0]);
		} else if constexpr (sizeof(T) == 4) {
			float4 q = *(const float4 *)p;

			out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
		} else {
			uint4 q = *(const uint4 *)p;
			const __nv_bfloat16 *e = (const __nv_bfloat16 *)&q;

			for (int j = 0; j < 8; j++)
				out[j] = __bfloat162float(e[j]);
		}
	} else {
		for (int j = 0; j < V; j++)
			out[j] = 0.f;
	}
}

// Row i's statistics as the naive kernels take them, one thread the whole
// row: *c = x[i][0] (the shift), and mean - c and rstd as shifted_stats
// returns them.
template <typename T, int V>
__device__ __forceinline__ void naive_row_stats(const T *__restrict__ x, long M, int K,
						long i, float *c, float *mt, float *rs)
{
	float s1 = 0, s2 = 0;

	*c = to_f(x[i * K]);
	for (int k = 0; k < K; k += V) {
		float xv[V];

		load_chunk<T, V>(x, M, K, i, k, xv);
		for (int j = 0; j < V; j++) {
			float v = xv[j] - *c;

			s1 += v;
			s2 += v * v;
		}
	}
	shifted_stats(s1, s2, K, mt, rs);
}

// Tile q of a grid of bm x bn tiles of y, numbered in groups of `group`
// tile rows, down each group's columns in turn (so the tiles in flight
// share rows of x and of W' in L2): its first row and column.
__device__ __forceinline__ void group_tile(long q, long tiles_m, long tiles_n, int group,
					   int bm, int bn, long *m0, long *n0)
{
	const long per_group = group * tiles_n, first = q / per_group * group;
	const long gsz = tiles_m - first < group ? tiles_m - first : group;

	*m0 = (first + q % per_group % gsz) * bm;
	*n0 = q % per_group / gsz * bn;
}

// Two bf16 in a register, minus two more: each exact difference rounded
// once to bf16.
__device__ __forceinline__ uint32_t bsub2(uint32_t a, uint32_t c)
{
	__nv_bfloat162 r = __hsub2(*(const __nv_bfloat162 *)&a,
				   *(const __nv_bfloat162 *)&c);

	return *(const uint32_t *)&r;
}

// The statistics' sums of two shifted bf16 in a register. A bf16 is the
// high half of its float, so each half widens in one integer operation
// (__bfloat1622float2 left the compiler splitting and re-packing the
// register with byte permutes first, which the wgmma kernels' math warps,
// whose k-tiles this paces, could not afford).
__device__ __forceinline__ void stats2(uint32_t v, float &s1, float &s2)
{
	const float lo = __uint_as_float(v << 16), hi = __uint_as_float(v & 0xffff0000u);

	s1 += lo + hi;
	s2 = fmaf(lo, lo, s2);
	s2 = fmaf(hi, hi, s2);
}

// Four registers of bf16 pairs (a 16-byte chunk of a row of x) shifted by
// the row's pivot (cu: c twice, x~ = x - c) and summed into its
// statistics (a1, a2).
__device__ __forceinline__ void shift_stats4(uint4 &v, uint32_t cu, float &a1, float &a2)
{
	v.x = bsub2(v.x, cu);
	v.y = bsub2(v.y, cu);
	v.z = bsub2(v.z, cu);
	v.w = bsub2(v.w, cu);
	stats2(v.x, a1, a2);
	stats2(v.y, a1, a2);
	stats2(v.z, a1, a2);
	stats2(v.w, a1, a2);
}

// The tensor-core kernels' last step: the output tile staged in shared
// memory (rows of YLD elements) copied to y, 16 bytes a thread where N
// allows, rows and columns past M and N left out.
template <typename T, int BM, int BN, int YLD, int THREADS>
__device__ __forceinline__ void store_tile(T *__restrict__ y, const T *sy,
					   long m0, long n0, long M, long N, int tid)
{
	constexpr int E = 16 / sizeof(T), CPR = BN / E;  // 16-byte chunks per tile row
	const bool vec = N % E == 0;

	for (int q = tid; q < BM * CPR; q += THREADS) {
		const int rl = q / CPR, ce = q % CPR;
		const long row = m0 + rl, col = n0 + ce * E;
		const T *src = sy + rl * YLD + ce * E;

		if (row >= M || col >= N)
			continue;
		if (vec) {
			*(uint4 *)(y + row * N + col) = *(const uint4 *)src;
		} else {
			for (int e = 0; e < E && col + e < N; e++)
				y[row * N + col + e] = src[e];
		}
	}
}

#endif
