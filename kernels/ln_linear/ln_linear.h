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

#ifdef __cplusplus
}
#endif
#endif
