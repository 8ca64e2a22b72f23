/* ln_linear.h - the LayerNorm+Linear workloads' double-precision CPU
 * references, input profiles and check sampling, exposed for tests (the
 * workloads themselves are reached through the registry: ln_linear_fwd,
 * ln_linear_bwd).
 *
 * The operation: y = LayerNorm(x; gamma, beta) * W^T + b, with x: M x K
 * (rows of K features), gamma, beta: K, W: N x K (row-major, as PyTorch's
 * nn.Linear stores it), b: N, y: M x N. LayerNorm uses the biased variance
 * and eps = LNL_EPS inside the square root, as torch.nn.LayerNorm does. */
#ifndef FP_LN_LINEAR_H
#define FP_LN_LINEAR_H

#include <stdint.h>

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LNL_EPS 1e-5

/* Shift of the "offset" profile: rows of mean 1e3 and unit spread. There a
 * one-pass variance (E[x^2] - E[x]^2) loses about six of fp32's seven
 * digits, and a FlashNorm GEMM over the unshifted x about three. */
#define LNL_OFFSET_MEAN 1e3

/* A check compares every element of an output whose double reference costs
 * at most this many multiply-adds, and a sample of it otherwise (see
 * lnl_sample_counts and lnl_pick). About a tenth of a second of one CPU core. */
#define LNL_CHECK_MACS 2.5e8

/* The granule of sampling: a sampled check takes at least one row (and one
 * column) from every block of this many, so every tile of every kernel here
 * (128-row blocks at most, cuBLAS's at least 64) holds a compared element. */
#define LNL_SAMPLE_BLOCK 64

/* Input profiles (index i is enum lnl_profile i):
 *   LNL_NORMAL    x ~ N(0, 1)
 *   LNL_OFFSET    x ~ LNL_OFFSET_MEAN + N(0, 1)
 *   LNL_CONSTANT  row i is c_i + 1e-3 * N(0, 1) with c_i ~ N(0, 1): the
 *                 variance (1e-6) is a tenth of eps, so eps matters, and in
 *                 bf16 the rows round to exact constants (variance 0)
 * and for every profile gamma ~ N(1, 0.1^2), beta ~ N(0, 0.1^2),
 * W ~ N(0, 1/K), b ~ N(0, 0.1^2), dy ~ N(0, 1). */
enum lnl_profile { LNL_NORMAL, LNL_OFFSET, LNL_CONSTANT, LNL_NPROFILES };

/* Draw the inputs of profile p from seed into caller-owned arrays of M*K,
 * K, K, N*K, N and M*N doubles; any pointer but x may be NULL to skip that
 * input (the draws of the others do not change). Not rounded to a dtype:
 * the caller applies host_round(). */
void lnl_gen_inputs(enum lnl_profile p, uint64_t seed, long M, long K, long N,
		    double *x, double *gamma, double *beta, double *W,
		    double *b, double *dy);

/* LayerNorm of one row of K doubles: *mean, *rstd = 1/sqrt(var + eps), and,
 * where not NULL, xhat = (x - mean) * rstd and h = xhat * gamma + beta. */
void lnl_layernorm_row_ref(const double *x, long K, const double *gamma,
			   const double *beta, double *xhat, double *h,
			   double *mean, double *rstd);

/* y = LayerNorm(x) * W^T + b for M rows, in double. y may not alias x. */
void lnl_fwd_ref(const double *x, const double *gamma, const double *beta,
		 const double *W, const double *b, double *y, long M, long K,
		 long N);

/* The gradients of L = sum(dy * y) with respect to x (M x K), gamma (K),
 * beta (K), W (N x K) and b (N), in double; every output is overwritten
 * (not accumulated into). Mean and rstd are recomputed from x. */
void lnl_bwd_ref(const double *x, const double *gamma, const double *beta,
		 const double *W, const double *dy, double *dx, double *dgamma,
		 double *dbeta, double *dW, double *db, long M, long K, long N);

/* How much of an n1 x n2 output a check compares when each entry's
 * reference costs cost multiply-adds and an output may cost budget: every
 * entry when that fits (*w1 = n1, *w2 = n2); else every column and as many
 * rows as the budget affords, never fewer than one per LNL_SAMPLE_BLOCK rows;
 * else one row per block and as many columns as the budget affords, never
 * fewer than one per block. Only when even one row and one column per block
 * would cost over 4 x budget (outputs far larger than the tests') does it
 * drop to max(8, what the budget affords) rows, spread evenly. A row-only
 * output (a row's reference needs the whole row) passes n2 = 1. */
void lnl_sample_counts(long n1, long n2, double cost, double budget,
		       long *w1, long *w2);

/* want indices of 0..n-1 (all of them when want >= n), strictly increasing,
 * 0 and n - 1 always among them. When want covers the blocks of
 * LNL_SAMPLE_BLOCK items, every block gets want / blocks of them or one more,
 * at offsets drawn from g (so successive checks compare different rows of a
 * tile); else want blocks spread evenly, one random offset each. Writes
 * min(want, n) entries to idx and returns that count (0 when n or want is
 * below 1). */
struct fp_rng;
long lnl_pick(long n, long want, struct fp_rng *g, long *idx);

/* n elements of dt (fp32 or bf16, the bytes the device holds) at src into
 * floats at dst, exactly (bf16 is the top half of a float), on every core:
 * how a check widens what it downloads. The bits do not depend on the
 * thread count; dst and src must not overlap. */
void lnl_widen(float *dst, const void *src, enum fp_dtype dt, size_t n);

/* ---- the fused forward's split-K arithmetic (split.c) -------------------
 * Split-K for few rows: where the 64 x 128 tiles of y are fewer than the
 * SMs, each tile's K is cut into slices of at least LNL_SPLIT_MIN_KT
 * k-tiles, one block each, aiming at two blocks an SM; every slice writes
 * its fp32 partial sums of x~ W'^T (M x N) and of the row statistics
 * (M x 2), and a reduction adds them in slice order (deterministic) and
 * applies the epilogue. At most LNL_SPLIT_MAX slices, and no more than
 * keep the partials' bytes to an eighth of W''s per row of x (K es / (8 M)
 * slices), so that they never cost more than half of what reading W'
 * does. */
#define LNL_SPLIT_MAX 16
#define LNL_SPLIT_MIN_KT 2

/* The slices s asked-for slices of kt k-tiles come to as the kernels cut
 * them: ceil(kt / s) k-tiles each, none empty (1 where s < 2; kt where s
 * > kt). */
int lnl_even_slices(int kt, int s);

/* The 128-byte k-tiles of a row of K elements of dt: what the tensor-core
 * kernels step through (64 bf16 or 32 fp32 a tile). */
static inline int lnl_ktiles(long K, enum fp_dtype dt)
{
	return (int)((K * (long)fp_dtype_size(dt) + 127) / 128);
}

/* The row stride, in elements, of a matrix of K-element rows that the
 * forward writes for its own TMA reads (W' from the fold, x~ from the x~
 * kernel's pass): K rounded up to whole 128-byte k-tiles, so that every
 * TMA box row starts on a 128-byte line. Rows of 8200 bf16 (16400 bytes)
 * start 16 bytes further along a line each row, and every box row then
 * spans two lines: the x~ kernel at 24 x 8200 -> 4096 took 1.5x its time
 * at 8192 (bench/RESULTS.md, "W' and x~ in rows of whole 128-byte
 * lines"). */
static inline long lnl_row_ld(long K, enum fp_dtype dt)
{
	return (long)lnl_ktiles(K, dt) * (128 / (long)fp_dtype_size(dt));
}

/* W''s row stride in the library's fold (kernels/api), which must serve
 * every kernel the library's choice may take for K and dt on a device
 * with (hopper = 1) or without the sm_90a kernels: lnl_row_ld for bf16 on
 * Hopper with rows of aligned 16-byte chunks from K = 64, else K
 * (workload.cu). */
long lnl_fold_ld(long K, enum fp_dtype dt, int hopper);

/* Elements of a row's 16-byte chunks when they are aligned (K a multiple
 * of 8 bf16 / 4 fp32 elements), else 1: the element-wise kernels, and
 * whether the tensor-core kernels may run at all. */
static inline int lnl_vec_width(long K, enum fp_dtype dt)
{
	int v = dt == FP_BF16 ? 8 : 4;

	return K % v == 0 ? v : 1;
}

/* The most slices of K the split-K forward takes at this shape (1: none),
 * and the bytes of partials that many need; functions of the shape alone
 * (the workload allocates them before it knows the device). */
int lnl_split_max(long M, long K, enum fp_dtype dt);
size_t lnl_split_bytes(long M, long K, long N, enum fp_dtype dt);
/* The bytes of partials of `splits` slices at M x N (0 below 2 slices):
 * each slice's fp32 M x N sums, then the rows' 2 M statistics a slice. */
size_t lnl_part_bytes(long M, long N, int splits);
/* Whether the fused forward's 128 x 256 tiles of an M x N output fill
 * under half of sms multiprocessors: then the launcher takes the 64 x 128
 * kernel, or its slices of K. */
int lnl_few_big_tiles(long M, long N, int sms);
/* The slices of K the fused forward's launcher takes (split_k=auto, with
 * partials to write into) at M x K -> N of dt on a device of sms
 * multiprocessors: 1 where it does not split (sms < 1, rows without
 * aligned 16-byte chunks, enough 128 x 256 or 64 x 128 tiles for the SMs,
 * too short a K, too many rows for the partials' cap), else 2 to
 * LNL_SPLIT_MAX. The workload's choice and the library's workspace both
 * come from it. */
int lnl_fwd_splits(long M, long K, long N, enum fp_dtype dt, int sms);
/* The warp-specialized kernel where its 128 x 256 tiles fill under half
 * the SMs (bf16 on Hopper, more than LNL_SKINNY_RES_MAX_M rows): its
 * slices of K (*splits) and its tiles' width (*bn).
 *
 * Over x (xt 0): want_splits, at most LNL_WS_SPLIT_MAX with
 * LNL_SPLIT_MIN_KT k-tiles each, none empty, 1 where parts is 0 (no room
 * for partials) or want_splits 0 (auto never slices K over x: over 2 and
 * 4 slices the op took 0.90-3.7x the time of one slice on an H200 at the
 * 12 shapes of 65 to 1024 rows where auto took this kernel, bench/
 * RESULTS.md, "Few tiles from 65 rows"); fp32 partials as the split-K
 * forward's, added by its reduction; the width want_bn, or of 256, 192
 * and 128 the one of least time as a model has it: one block an SM in
 * rounds of sms, a partial round costing a whole one, a k-tile its
 * columns plus LNL_WS_KT_COLS (the A fragments' shift and sums whatever
 * the width; ties to the wider).
 *
 * Over x~ (xt 1): the width (256, 192, 128 or 64) and, where caps is not
 * NULL and want_splits 0, the slices (1 to LNL_WS_DSUM_AUTO, each a
 * cluster's block, their sums added through distributed shared memory:
 * caps[s] clusters of s blocks held at once) of least time as
 * lnl_few_ws_ns has it; want_bn and want_splits fix either (slices with
 * parts 0 and caps NULL: 1). */
#define LNL_WS_SPLIT_MAX 8
#define LNL_WS_KT_COLS 64
#define LNL_WS_DSUM_AUTO 3
void lnl_ws_plan(long M, long K, long Np, int sms, int xt, const int *caps, int want_bn,
		 int want_splits, int parts, int *bn, int *splits);
/* The few-tile class (bf16 on Hopper, more than LNL_SKINNY_RES_MAX_M rows,
 * the 128 x 256 tiles under half the SMs) over x~, in a model fitted on an
 * H200 (bench/RESULTS.md, "Slices of K in a cluster over x~"): modelled
 * times in ns of the GEMM after the x~ pass (the same pass for both).
 *
 * lnl_few_ws_ns: the warp-specialized kernel over x~ in 128 x w tiles
 * over s slices of K (a cluster of s blocks a tile; caps[s] clusters held
 * at once, sms blocks at s = 1): rounds of the clusters held at once, each
 * round its k-tiles of a slice times a k-tile's cost plus LNL_FEW_ROUND_NS
 * (fill, epilogue) and, over slices, the sums' exchange (LNL_FEW_DSUM_NS
 * plus LNL_FEW_DSUM_COL_NS a column). A k-tile costs LNL_FEW_WS_KT_NS a
 * column plus LNL_WS_XT_KT_COLS (the multiply), or where the blocks at
 * once are many, LNL_FEW_L2_NS for each byte-row (128 + w) of each block
 * running (the tiles' share of L2's bandwidth), whichever is more.
 *
 * lnl_few_xt_ns: the x~ kernel in 64-row tiles of x~ and lnl_skinny_xt_tile's
 * rows of W' (else 96): rounds of sms blocks, each its k-tiles plus
 * LNL_FEW_XT_FILL (the ring's fill) times LNL_FEW_XT_KT_NS a row of W'
 * plus LNL_FEW_XT_KT_ROWS, plus LNL_FEW_XT_ROUND_NS.
 *
 * Fitted on 65 shapes of 65 to 1024 rows (K 264-14336, N 100-9216; the
 * x~ kernel and 13 forms of the kernel over x~ timed at each) so that the
 * form of least modelled time is the fastest measured or near it: in
 * sample it took the fastest at 58, within 1.05x of it at 61, at most
 * 1.17x (the previous model, without slices: the fastest at 44, within
 * 1.05x at 48, at most 2.3x). */
#define LNL_WS_XT_KT_COLS 56
#define LNL_FEW_WS_KT_NS 1.91
#define LNL_FEW_L2_NS 0.0104
#define LNL_FEW_ROUND_NS 2100.0
#define LNL_FEW_DSUM_NS 83.0
#define LNL_FEW_DSUM_COL_NS 42.3
#define LNL_FEW_XT_KT_NS 1.90
#define LNL_FEW_XT_KT_ROWS 28
#define LNL_FEW_XT_FILL 7
#define LNL_FEW_XT_ROUND_NS 1773.0
double lnl_few_ws_ns(long M, long K, long Np, int sms, const int *caps, int w, int s);
double lnl_few_xt_ns(long M, long K, long Np, int sms);
/* Whether auto takes the warp-specialized kernel where the 128 x 256 tiles
 * are few (over x~ in lnl_ws_plan's tiles and slices, or over x past
 * LNL_XT_MAX_M rows, where there is no x~) rather than the x~ kernel: the
 * one of less modelled time (above). caps as lnl_ws_plan's. */
int lnl_few_tiles_ws(long M, long K, long Np, int sms, const int *caps);
/* Whether the warp-specialized kernel's blocks may pair up (clusters=auto,
 * where N and K call for it) at M rows: the 128-row tiles even, or 8 and
 * more (an odd count leaves one pair in (tiles + 1) / 2 half idle: at 384
 * x 3072 -> 9216, three row tiles, pairs took 1.55x the time of one block
 * a tile on an H200, bench/RESULTS.md, "Few tiles from 65 rows"). */
int lnl_ws_pairs_pay(long M);
/* The most slices lnl_ws_plan may take at M x K -> N of dt on any Hopper
 * (at most LNL_HOPPER_SMS multiprocessors), 1 where it takes none: what
 * the workload's partials are sized for (lnl_split_bytes). */
#define LNL_HOPPER_SMS 132
int lnl_ws_split_max(long M, long K, long N, enum fp_dtype dt);
/* 1 where the split-K kernel takes 32-row tiles instead of 64 (option
 * split_tile=auto): fp32 up to 32 rows, where 3xTF32 multiplies each
 * tile's padding three times. On an H200 (bench/RESULTS.md, "fp32 split-K
 * in 32-row tiles") the op took 0.65-0.78x the time of 64-row tiles at 30
 * shapes of 9 to 32 rows (K 1024 to 4096, N 2048 to 9216). */
int lnl_fwd_split_rows32(long M, enum fp_dtype dt);

/* ---- the decode forward (split.c) -----------------------------------------
 * For a few rows (M <= LNL_GEMV_MAX_M) the fused forward is bound by
 * reading W' once, and the tensor-core tiles (64 rows) would be mostly
 * padding: k_fwd_gemv (fwd_gemv.cu) streams W' on CUDA cores instead, a
 * warp a chunk of K at a time (32 lanes x LNL_GEMV_E elements: 128, 8
 * bytes a lane in bf16, 16 in fp32) with the rows' x~ over it in
 * registers, `group` rows of W' at a time, `brows` rows a row block (a
 * power-of-two multiple of group, at most LNL_GEMV_SUMS / mp: as many as
 * still leave 8 row blocks an SM), `blocks` row blocks, which a persistent
 * grid takes in turn. Where even row blocks of one group are fewer than
 * the SMs, K is cut into `splits` slices of `cps` chunks, each writing
 * partials as the split-K forward does (lnl_part_bytes, at most
 * lnl_split_max slices) for the same reduction; else each block applies
 * the epilogue itself: one kernel. */
#define LNL_GEMV_MAX_M 8
/* Elements a lane loads at once, of x or of a row of W': 4 in both dtypes
 * (16 bytes of fp32, 8 of bf16), so that bf16 takes no more registers
 * than fp32 (see gemv_load); a chunk of K is 32 x 4 columns. The plan
 * still asks for rows of aligned 16-byte chunks (lnl_vec_width), the
 * condition of the other fused kernels, stricter than bf16's 8 bytes. */
#define LNL_GEMV_E 4
/* Most warps a block (a chunk of its slice each), and the blocks of
 * LNL_GEMV_WARPS warps an SM that k_fwd_gemv's __launch_bounds__ asks for
 * with mp rows of es-byte elements, which set its registers a thread (5
 * blocks: 48, 4: 64, 3: 80, 2: 128). The kernel waits on memory, a row
 * block's chunks one after another in each warp, so its speed follows the
 * warps an SM holds: at 3072 -> 9216 on an H100 (bench/RESULTS.md,
 * session 18) bf16 one row took 25.7 µs at 3 blocks and 23.7 at 5, two
 * rows 39.4 at 2 and 25.1 at 4; fp32 two and four rows 41.5 and 44.2 at 2,
 * 40.6 and 41.4 at 4 and 3. As many as fit without spilling (ptxas of
 * CUDA 13, sm_90): 8 rows' 32 sums and 32 floats of x~ a lane need 2;
 * fp32 one row keeps 3 (4 was 6 % slower). */
#define LNL_GEMV_WARPS 8
#define LNL_GEMV_MIN_BLOCKS(mp, es) \
	((mp) == 1 ? ((es) == 2 ? 5 : 3) : (mp) == 2 ? 4 : (mp) == 4 ? 3 : 2)
/* Rows of W' a warp loads at a time: 32 floats a lane (32 / LNL_GEMV_E
 * rows' chunks), and at most 32 sums (group x mp) to reduce-scatter. */
#define LNL_GEMV_GROUP(mp) (32 / (mp) < 32 / LNL_GEMV_E ? 32 / (mp) : 32 / LNL_GEMV_E)
/* Sums a block keeps (brows x mp): its shared memory, a row a warp. */
#define LNL_GEMV_SUMS 128
struct lnl_gemv {
	int mp;      /* M rounded up to a power of two (1, 2, 4, 8) */
	int group;   /* rows of W' a warp loads at a time: LNL_GEMV_GROUP */
	int brows;   /* rows of W' a row block */
	long blocks; /* row blocks: ceil(Np / brows) */
	int chunks;  /* chunks of K */
	int splits;  /* slices of K (1: no partials, no reduction) */
	int cps;     /* chunks a slice */
	int warps;   /* warps a block */
};
/* Whether the decode forward serves M x K -> N of dt on a device of sms
 * multiprocessors (M <= LNL_GEMV_MAX_M, rows of aligned 16-byte chunks,
 * sms >= 1), and if so its plan in *g: 1 or 0. */
int lnl_fwd_gemv(long M, long K, long N, enum fp_dtype dt, int sms, struct lnl_gemv *g);
/* Whether decode=auto takes the decode forward for M rows of dt where it
 * serves: fp32 up to LNL_GEMV_MAX_M rows, bf16 at LNL_GEMV_AUTO_BF16 rows
 * at most. Measured against our unfused forward (LayerNorm + cuBLASLt)
 * on an H100 (bench/RESULTS.md, session 18) at 2048 -> 2048, 3072 -> 9216
 * and 4096 -> 14336 (and 1000 -> 3000): fp32 0.41-0.92x at 1, 2, 4 and
 * 8 rows; bf16 one row 0.68x, 1.01x, 1.02x (0.61x), two rows 0.67x, 1.05x,
 * 1.04x (0.68x). From four bf16 rows the decode kernel loses at the
 * larger shapes (43.5 and 60.4 µs against the older path's 30.5 and 31.0
 * at 3072 -> 9216, 26.3 unfused). */
#define LNL_GEMV_AUTO_BF16 2
int lnl_fwd_gemv_auto(long M, enum fp_dtype dt);
/* Whether decode=auto leaves bf16 decode rows of K -> N on a device of sms
 * multiprocessors to the skinny kernel (k_fwd_skinny, where that serves:
 * Hopper, few big tiles): where W' (K N bf16) is over LNL_GEMV_BF16_SM_W
 * bytes an SM. The decode kernel streams W' at a lower rate (at one row
 * of 3072 -> 9216 2.5 TB/s against 3.1), the skinny kernel's clusters
 * cost more to start. Measured on an H200 (bench/RESULTS.md, "decode rows:
 * the decode kernel or the skinny kernel"): up to 67 KiB an SM decode=on
 * took 0.73-0.94x the skinny kernel's time, from 95 KiB (12.6 MB) 0.96x
 * at one row and 1.06x at two, from 127 KiB (16.8 MB) 1.02-1.49x. */
#define LNL_GEMV_BF16_SM_W (80L << 10)
int lnl_fwd_gemv_bf16_big(long K, long N, int sms);
/* ---- the skinny forward (split.c) -----------------------------------------
 * bf16, up to LNL_SKINNY_MAX_M rows: k_fwd_skinny (fwd_skinny.cu) takes
 * W' (Nw rows: N, or N rounded up to 32 in the library's fold order) as
 * the MMA's A operand in tiles of LNL_SKINNY_BW rows, and x as its B
 * operand (8 rows a fragment); K is cut into `splits` slices, the blocks
 * of one tile a cluster (portable: at most LNL_SKINNY_MAX_SPLITS), aiming
 * at four blocks an SM with at least LNL_SPLIT_MIN_KT k-tiles a slice; the
 * slices' sums meet in distributed shared memory, in rank order
 * (deterministic), and the kernel writes y itself: no partials, no second
 * kernel. Measured on an H100 (bench/RESULTS.md, session 20): tiles of 64
 * rows beat 128 at 8 and 16 rows of 3072 -> 9216 (25.7 against 26.7 µs,
 * 26.9 against 28.0), four slices there beat two and eight; from 32 rows
 * every slicing tried lost to the 64 x 128 split-K kernel (41-44 against
 * 36.8 µs at 32 rows, 59-94 against 46.9 at 64), hence 16 rows at most.
 * The slices stop where the blocks would pass `slots` (the blocks the
 * device holds at once; 0: not known): at 16 rows of 4096 -> 14336, 3
 * slices of 224 tiles on 660 slots took 68.3 µs, a second wave for 12
 * blocks. 1 and the slices where it serves M x K -> Nw of dt on sms
 * multiprocessors, else 0. */
#define LNL_SKINNY_MAX_M 16
#define LNL_SKINNY_BW 64
#define LNL_SKINNY_MAX_SPLITS 8
int lnl_fwd_skinny(long M, long K, long Nw, enum fp_dtype dt, int sms, long slots,
		   int *splits);

/* ---- the skinny forward with x resident (split.c) ----------------------
 * bf16, LNL_SKINNY_MAX_M + 1 to LNL_SKINNY_RES_MAX_M rows: where the
 * ring of k_fwd_skinny would carry as many bytes of x as of W' (its x tile
 * is as tall as W''s at 64 rows), k_fwd_skinny_res (fwd_skinny.cu) loads
 * its slice of K of x once, shifts and sums it in shared memory, and
 * streams W' alone (TMA) through a ring of LNL_SKINNY_RES_STAGES(mp)
 * stages of LNL_SKINNY_RES_BW rows, one tile after another: K in `slices` slices
 * (one cluster's blocks, one an SM), W''s tiles dealt round to `groups`
 * clusters. The plan: the least (tiles a group) x (k-tiles a slice +
 * LNL_SKINNY_RES_ROUND, a tile's own cost in k-tiles: its pipeline's fill,
 * the slices' sums added, its stores) with the clusters the device runs at
 * once (clusters[c] for c blocks a cluster, c = 1 ..
 * LNL_SKINNY_MAX_SPLITS) and the slice of x fitting
 * beside the ring in smem_max bytes; at least LNL_SPLIT_MIN_KT k-tiles a
 * slice. Measured on an H100 (bench/RESULTS.md, session 21): 0.79x the
 * split-K kernel's time at 64 rows of 3072 -> 9216, 0.56x at 4096 -> 14336,
 * still 1.37x and 1.30x LayerNorm + cuBLASLt there. 1 and the plan where
 * it serves M x K -> Nw of dt, else 0. want: 0, or that many slices
 * only (option res_split). */
#define LNL_SKINNY_RES_MAX_M 64
/* The x~ kernel's rows at most (x~ and the statistics are sized for it up
 * to here): 64 as the skinny kernels', then, where the 128 x 256 tiles are
 * few, in 64-row tiles of x~ (option few_tiles). */
#define LNL_XT_MAX_M 1024
/* x~'s rows as the x~ kernel's pass writes them: M, then zero rows up to
 * the rows its GEMM's TMA boxes take (whole 8-row groups up to 64 rows,
 * whole 128-row tiles past that, as the warp-specialized kernel over x~
 * takes them: ws_a=xt), so that no box reaches past the tensor:
 * boxes past its rows, filled with zeros by the TMA unit, took the GEMM
 * 2.0x the time of whole ones on an H200 (65 rows against 128, the same
 * grid, at K = 8192, N = 2048: bench/RESULTS.md, "Few tiles from 65
 * rows"). */
static inline long lnl_xt_rows(long M)
{
	return M > 64 ? (M + 127) / 128 * 128 : (M + 7) / 8 * 8;
}
/* x~'s bytes at M x K: lnl_xt_rows(M) rows of lnl_row_ld(K) bf16. */
static inline size_t lnl_xt_bytes(long M, long K)
{
	return (size_t)lnl_xt_rows(M) * (size_t)lnl_row_ld(K, FP_BF16) * 2;
}
/* Whether the bf16 x~ kernel (FK_SKINNY_XT) may run at M rows and K
 * (LNL_SKINNY_MAX_M + 1 to LNL_XT_MAX_M rows, 16-byte rows; then the
 * forward needs x~, lnl_xt_rows(M) rows of lnl_row_ld(K) bf16, and 3 M
 * floats of statistics: split.c). */
int lnl_fwd_xt_possible(long M, long K, enum fp_dtype dt);
/* 4: at 17-32 rows on an H200 every value from 2 to 12 picks the fastest of
 * 1-8 slices at 18 shapes, 1 missed it at 6 (up to 1.13x: 8 slices where 2
 * fit; bench/RESULTS.md, "The x-resident kernel's slices"). */
#define LNL_SKINNY_RES_ROUND 4
#define LNL_SKINNY_RES_BW 128
static inline int lnl_skinny_res_mp(long M)
{
	return M <= 8 ? 8 : M <= 16 ? 16 : M <= 32 ? 32 : 64;
}
#define LNL_SKINNY_RES_STAGES(mp) ((mp) > 32 ? 6 : 8)
static inline int lnl_skinny_res_stages(int mp)
{
	return LNL_SKINNY_RES_STAGES(mp);
}
/* Dynamic shared memory: the ring (1024-aligned: 1 KB more), x's slice of
 * kchunk k-tiles, and two buffers of the tile's sums for the slices'
 * exchange. */
static inline size_t lnl_skinny_res_smem(int mp, int kchunk)
{
	return 1024 + (size_t)lnl_skinny_res_stages(mp) * LNL_SKINNY_RES_BW * 128 +
	       (size_t)kchunk * mp * 128 + (size_t)mp * 1024;
}
int lnl_fwd_skinny_res(long M, long K, long Nw, enum fp_dtype dt, const int *clusters,
		       size_t smem_max, int want, int *slices, int *groups);

/* ---- the skinny forward with x streamed (fwd_skinny_wg.cu) -------------
 * bf16, LNL_SKINNY_MAX_M + 1 to LNL_SKINNY_RES_MAX_M rows on Hopper:
 * k_fwd_skinny_st, a block a tile of LNL_SKINNY_ST_BW rows of W' over all of
 * K (or a cluster of blocks a tile over slices of K, lnl_skinny_st_plan),
 * x's k-tiles (MP = lnl_skinny_res_mp(M) rows) beside W''s in a ring of
 * LNL_SKINNY_ST_STAGES(mp) stages, two blocks an SM; over slices of K at
 * up to 32 rows also in a deep ring of LNL_SKINNY_ST_DEEP_STAGES stages,
 * one block an SM with four warpgroups (lnl_skinny_st_plan says which). */
#define LNL_SKINNY_ST_BW 64
#define LNL_SKINNY_ST_STAGES(mp) ((mp) > 32 ? 6 : 8)
#define LNL_SKINNY_ST_DEEP_STAGES 16
/* Its dynamic shared memory: the ring (1024-aligned: 1 KB more) of the
 * deep or the two-an-SM stages. */
static inline size_t lnl_skinny_st_smem(int mp, int deep)
{
	return 1024 + (size_t)(deep ? LNL_SKINNY_ST_DEEP_STAGES : LNL_SKINNY_ST_STAGES(mp)) *
			      (LNL_SKINNY_ST_BW + mp) * 128;
}
/* skinny_x=auto's choice for M rows of x, K columns, W' of Nw rows on sms
 * SMs, as the rows of W' a block of the x-streamed kernels takes: 64
 * (k_fwd_skinny_st)
 * where W' has at least 0.9 such tiles an SM, but at 33 to 64 rows where
 * that would leave some SMs two blocks and most one (more tiles than SMs,
 * fewer than 1.5 an SM) 72 or 96 (k_fwd_skinny_xa: the least of the two
 * that makes no more blocks than SMs); below 0.9 64-row tiles an SM,
 * k_fwd_skinny_xa in narrow tiles (lnl_skinny_xa_narrow); 0 (x resident)
 * elsewhere. Measured on an H100 (bench/RESULTS.md, "the skinny forward
 * with x streamed"): fewer blocks do not pull DRAM's bandwidth (32 at 2048
 * -> 2048: 1.9x the resident kernel's time), and at 64 rows an SM's two
 * blocks finish last (144 tiles of 9216: 1.03x the resident kernel) where
 * 128 or 224 take 0.88x and 0.85x; 128 tiles of 72 rows there take 0.86x
 * ("the x-as-A skinny forward"). */
int lnl_fwd_skinny_x(long M, long K, long Nw, enum fp_dtype dt, int sms);
/* k_fwd_skinny_xa in tiles of 32 rows of W' (48 where 32 would make more
 * blocks than SMs, 0 where 48 would too) for M rows of x, K columns and
 * Nw rows of W' on sms SMs, where its blocks' chains of k-tiles are short
 * enough to beat the resident kernel's slices of K: up to 8 k-tiles at 17
 * to 32 rows, 16 at 33 to 64 and 32 there where W' has 0.9 32-row tiles an
 * SM or more; and its blocks at least 0.45 an SM. Elsewhere 0. Each block
 * shifts and sums every k-tile of x (64 rows) for the few W' rows it
 * multiplies, so its time grows with K more than with the tile: on an
 * H100 (bench/RESULTS.md, "the x-as-A skinny kernel in narrow tiles"), of
 * 48 shapes (24, 48, 64 rows; K 512 to 2048; N 2048 to 5120) the 28 inside
 * the rule took 0.75-0.99x the resident kernel's time, and at the 20
 * outside it the best narrow tile took 1.01-1.51x. */
int lnl_skinny_xa_narrow(long M, long K, long Nw, enum fp_dtype dt, int sms);
/* k_fwd_skinny_xa over slices of K (clusters of up to LNL_SKINNY_MAX_SPLITS
 * blocks a tile, added through DSMEM) for M rows of x, K columns and Nw
 * rows of W', where caps[s] clusters of s blocks fit on the device at once
 * (s = 1 .. LNL_SKINNY_MAX_SPLITS): the tile (32, 48, 64, 72 or 96 rows of
 * W', or bn_only where it is not 0) and slices whose blocks run in one
 * wave with the fewest k-tiles each, a slicing counted as
 * LNL_SKINNY_XA_SPLIT_COST k-tiles more; ties to more blocks, then the
 * wider tile. 1 with *bn and *slices set, or 0 where no tile runs in one
 * wave (or, choosing the tile, at LNL_SKINNY_XA_SPLIT_MIN_M rows or fewer:
 * there the x-resident kernel, whose x~ is 32 rows, not the x-as-A
 * kernel's 64, was faster at every shape of the grid below). Measured on
 * an H100 (bench/RESULTS.md, "the x-as-A kernel over slices of K"): of 30
 * shapes at 48 and 64 rows (K 1024 to 8192, N 1024 to 9216) the rule's
 * pick took 1.00-1.03x the time of the best of 40 tile and slice
 * choices; slicing with no cost counted took 1.09-1.12x at 1024 -> 4096,
 * where 32-row tiles over all of K beat 64-row tiles in 2 slices. Since
 * the kernel stages its s and b' (session 41) a block over all of K got
 * cheaper against the sliced cluster's two barriers and DSMEM sums: on an
 * H200 a slicing counted as 12 took 96-row tiles in 2 slices at 48 x 2048
 * -> 5120 and 44 x 1536 -> 5120 where 48-row tiles over all of K take
 * 0.83x and 0.82x their time; counted as 20 it takes those (0.82-0.95x at
 * 7 of 20 shapes of 33 to 64 rows, 1.03x at 36 x 1536 -> 3072, the rest
 * unchanged), and keeps the slices from K = 3072 on (bench/RESULTS.md,
 * "The x-as-A plan's slicing cost"). */
#define LNL_SKINNY_XA_SPLIT_COST 20
#define LNL_SKINNY_XA_SPLIT_MIN_M 32
int lnl_skinny_xa_plan(long M, long K, long Nw, enum fp_dtype dt, const int *caps, int bn_only,
		       int *bn, int *slices);
/* k_fwd_skinny_st over slices of K (clusters of up to LNL_SKINNY_MAX_SPLITS
 * blocks a 64-row tile of W', added through DSMEM) for M rows of x (17 to
 * 32), K columns and Nw rows of W' on sms SMs, where caps[s] clusters of s
 * blocks fit on the device at once: the slices whose blocks run in one
 * wave with the fewest k-tiles an SM, an SM with two blocks counted as
 * LNL_SKINNY_ST_PAIR_COST / 10 of one block's k-tiles for both (two
 * blocks' rings hide each other's latency); ties to more blocks. Where
 * those slices put one block an SM (no SM holds two), the deep ring
 * instead (LNL_SKINNY_ST_DEEP_STAGES stages, dcaps[s] clusters of s at
 * once, one block an SM; NULL: not considered): its slices of the fewest
 * k-tiles a block in one wave, ties to more blocks. ring: 0 that rule, 1
 * the two-an-SM ring only, 2 the deep one wherever it has a plan. 1 with
 * *slices and *deep set, 0 where it does not serve.
 * skinny_x=auto takes it from
 * LNL_SKINNY_ST_SPLIT_MIN_KT k-tiles of K, and where the x-resident kernel
 * does not serve. Measured on an H200 (bench/RESULTS.md, "the x-streamed
 * kernel over slices of K"): of 60 shapes at 17, 24 and 32 rows (K 1536
 * to 16384, N 1024 to 6144) the pick took 1.00-1.09x (mean 1.007x) the
 * best of slices 2 to 8; from K = 7168 it beat the x-resident kernel
 * (0.66-0.95x) but at N = 1024 and 3072 (1.03-1.06x), at K = 5120 and
 * 6144 the two were within 5 % but for N = 6144 (0.85-0.95x), below 5120
 * the x-resident kernel was faster (0.91-0.99x the pick). The deep ring
 * (bench/RESULTS.md, "the x-streamed kernel's deep ring"), of 54 shapes
 * of 17, 24 and 32 rows, K 6144, 8192 and 14336: where the two-an-SM
 * plan put one block an SM (N = 512 to 1024) it took 0.81-0.99x its time
 * (24 x 14336 -> 1024: 1.01 of unfused against 1.22; 24 x 8192 -> 1024:
 * 1.01-1.02 against 1.12, in 6 slices where the two-an-SM ring had 8);
 * where that plan paired blocks (N = 2048 to 3072) the deep ring with two
 * warpgroups took 1.11-1.34x its time. */
#define LNL_SKINNY_ST_PAIR_COST 16
#define LNL_SKINNY_ST_SPLIT_MIN_KT 96
int lnl_skinny_st_plan(long M, long K, long Nw, enum fp_dtype dt, const int *caps,
		       const int *dcaps, int sms, int ring, int *slices, int *deep);
/* The x~ skinny kernel (k_fwd_skinny_xt: x~ = x - c from a pass, then a
 * GEMM of x~ and W' with stages of several k-tiles) for M rows of x, Nw
 * rows of W' on sms SMs.
 * lnl_skinny_xt_tile: its tile, the fewest rows of W' (a multiple of 8
 * from 32 to 96) that make no more blocks than SMs (0 where 96 would), so
 * that as many SMs as can stream W' do, one block each.
 * lnl_skinny_xt_stage: its ring's k-tiles a stage for a tile of bn rows: 4
 * up to LNL_SKINNY_XT_KS4_MAX_BN rows (4 stages of 48-56 KB), else 2 (4
 * would leave 2-3 stages). On an H200 (bench/RESULTS.md, "the x~ kernel"),
 * 4 took 0.86-1.02x the time of 2 in 32- to 48-row tiles at K = 1024 to
 * 5120 and 0.95-1.02x at K = 8192 and 14336; 2 took 0.97-0.98x the time
 * of 4 in 64- and 72-row tiles (N = 8192, 9216); 1 a stage took 0.98-1.29x
 * the time of 2.
 * lnl_skinny_xt_auto: the tile where skinny_x=auto takes the kernel, else
 * 0: from LNL_SKINNY_MAX_M + 1 to LNL_SKINNY_RES_MAX_M rows, in tiles of
 * up to LNL_SKINNY_XT_AUTO_MAX_BN rows, where x~'s rows (M rounded up to
 * 8), which every block streams beside its tile, are fewer than twice the
 * tile's, or twice (57 to 64 rows in 32-row tiles) from K =
 * LNL_SKINNY_XT_TWICE_MIN_K where its blocks are at least 0.8 an SM, and,
 * up to LNL_SKINNY_XT_FEW_M rows, where its blocks are at least 0.9 an SM
 * (there the x-resident kernel's slices of K fill every SM); and
 * everywhere where its blocks are at least 0.7 an SM, or 0.45 up to K =
 * LNL_SKINNY_XT_SHORT_K (twice that where x~ has up to
 * LNL_SKINNY_XT_NARROW_MP rows): below, a block a tile over all of K left
 * most SMs idle. On an H200, at 33 to 56 rows, K = 4096 to 14336, 32-80
 * blocks, the x-as-A kernel over slices of K (lnl_skinny_xa_plan) took
 * 0.45-0.98x its time at 31 of 32 shapes that the rule gives it (40 x
 * 14336 -> 1024: 0.98 of unfused against 1.91; 56 x 8192 -> 2048: 0.92
 * against 1.19; 33 x 8192 -> 2560: 1.01x), but 1.00-1.19x at 33 and 40
 * rows, K = 4096, 64-80 blocks (33 x 4096 -> 2560: 1.03 against 0.87)
 * and 1.00-1.13x at K = 2048 with 64-80 blocks (40 x 2048 -> 2048: 0.95
 * against 0.85; bench/RESULTS.md, "the x~ kernel over slices of K, and
 * where its tiles leave the SMs idle").
 * On an H200, of 44 shapes of 17 to 64 rows in the rule
 * (bench/RESULTS.md, "the x~ kernel"), it took 0.70-0.97x the time of the
 * kernels before it at 29 (33 x 2048 -> 5120: 1.01 of unfused against
 * 1.29; 33 x 4096 -> 4096: 0.87 against 1.25), 0.98-1.02x at 11 and
 * 1.03-1.05x at 4 (64 x 1536 -> 6144, 64 and 48 x 3072 -> 9216, 48 x 1024
 * -> 4096); outside the rule it lost to them: 64 rows in 32-row tiles
 * (1.05 of unfused against 0.95 at 64 x 1024 -> 4096), 96-row tiles (N =
 * 12288: 1.10-1.30 against 1.02-1.25), 17 and 24 rows in 96 blocks (3072
 * -> 3072: 0.96-0.98 against 0.91-0.92), and up to 16 rows, where the
 * skinny kernel with W' as A won 5 of 8 shapes. Where x~ is twice the
 * tile (57 to 64 rows, N of 3584 to 4224: bench/RESULTS.md, "the x~
 * kernel where x~ is twice its tile"), once its epilogue stored column
 * pairs, it beat the x-as-A kernel at all 6 shapes of K = 1536 (0.96-1.01
 * of unfused against 1.01-1.08) and 23 of 24 of K = 2048 to 8192, and
 * lost at all 8 of K = 1024 (0.95-1.01 against 0.91-0.98). */
#define LNL_SKINNY_XT_KS4_MAX_BN 48
#define LNL_SKINNY_XT_AUTO_MAX_BN 88
#define LNL_SKINNY_XT_FEW_M 32
#define LNL_SKINNY_XT_SHORT_K 2048
#define LNL_SKINNY_XT_NARROW_MP 40
#define LNL_SKINNY_XT_TWICE_MIN_K 1536
int lnl_skinny_xt_tile(long Nw, int sms);
int lnl_skinny_xt_stage(int bn);
int lnl_skinny_xt_auto(long M, long K, long Nw, int sms);
/* The x~ kernel over s slices of K (option xt_split): the k-tiles a slice
 * (*kchunk: K's k-tiles over s, rounded up to a multiple of the ring's ks
 * k-tiles a stage, so that no stage reaches into the next slice) and the
 * slices that makes, none empty (fewer than s where rounding leaves the
 * last ones nothing). */
int lnl_skinny_xt_slices(long K, int ks, int s, int *kchunk);
/* k_fwd_skinny_xa's rows of W' a block for Nw rows on sms SMs: 72 where
 * that makes no more blocks than SMs, else 96. */
int lnl_skinny_xa_rows(long Nw, int sms);

/* The warp-specialized forward's work units for M rows and Np rows of W'
 * (N rounded up to 32) in 128 x bn tiles, pairs of them along M where cl
 * is 2 (over x~ in tiles of up to 128 columns, LNL_WS_PAIR_X, the pairs lie
 * along N instead, sharing the x~ tile). */
#define LNL_WS_PAIR_X(xt, cl, bn) ((xt) && (cl) == 2 && (bn) <= 128)
long lnl_ws_units(long M, long Np, int cl, int bn);
/* Its tile width, 256 or 192, for the units of cl blocks that slots
 * places hold at once: the persistent grid takes ceil(units / slots)
 * rounds of tiles, so 192 where its rounds times 192 come to under 0.85
 * of 256's rounds times 256, else 256. Measured on an H100 (bench/
 * RESULTS.md, "128 x 192 tiles"): 1.45 rounds of 256 at 2000 x 1000 ->
 * 3000 are 2 of 192 (0.75 of the columns a block: 0.90x the time), 3000 x
 * 2048 -> 2048 likewise (0.87x); where the rounds come to the same
 * columns 192 is slower (16384 x 768 -> 3072: 1.18x), its fixed costs a
 * tile more often paid. */
int lnl_ws_bn(long M, long Np, int cl, long slots);

/* The slices of K whose partials the fused forward writes with its
 * default options (decode=auto, split_k=auto; ws_split=auto takes none):
 * the decode forward's where auto takes it, else lnl_fwd_splits; what the
 * library sizes its workspace by. */
int lnl_fwd_part_slices(long M, long K, long N, enum fp_dtype dt, int sms);

#ifdef __cplusplus
}
#endif
#endif
