/* arl.h - the attention + residual + LayerNorm workload (attn_res_ln_fwd):
 * its limits, input profiles and double-precision CPU reference
 * (kernels/attn_res_ln/ref.c), exposed for tests; the workload itself is
 * reached through the registry. C and C++ (nvcc) clean.
 *
 * y = LayerNorm(x + Attention(Q, K, V); gamma, beta), with Q, K, V of shape
 * [B, H, S, D] (row-major), x and y [B, S, H*D], gamma and beta [H*D]:
 * head h of query s of batch b is o[b, s, h*D .. h*D+D) = softmax(scale *
 * q K^T + mask) V with scale = 1/sqrt(D); under the causal mask query s
 * sees keys 0..s (its own included, so no row is ever fully masked). */
#ifndef FP_ARL_H
#define FP_ARL_H

#include <stdint.h>

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LayerNorm's epsilon (PyTorch's default, and the LayerNorm module's). */
#define ARL_EPS 1e-5

/* The flash and fused kernels are built for one head dimension. */
#define ARL_FLASH_D 64
/* Query rows a flash or fused block owns (4 warps of 16 rows), and the keys
 * a K/V tile holds. */
#define ARL_BQ 64
#define ARL_BK 64
/* The fused kernel's on-chip limit: a cluster of at most ARL_MAX_CLUSTER
 * CTAs splits the heads, each CTA holding the outputs of at most
 * ARL_MAX_HEADS_CTA heads for its ARL_BQ query rows in shared memory
 * (ARL_BQ * ARL_MAX_HEADS_CTA * D elements: 32 KB bf16, 64 KB fp32 at D =
 * 64, beside the flash loop's 40 KB or 80 KB of tiles), so H <=
 * ARL_MAX_CLUSTER * ARL_MAX_HEADS_CTA = 32 heads (H*D <= 2048). */
#define ARL_MAX_CLUSTER 8
#define ARL_MAX_HEADS_CTA 4
#define ARL_MAX_HEADS (ARL_MAX_CLUSTER * ARL_MAX_HEADS_CTA)

/* The clusters=heads path of the fused kernel: CTAs with the flash
 * kernel's block and shared memory (beside 512 bytes of row partials, and
 * in bf16 with two or three heads 8 KB of stash), the heads of 64 query
 * rows in one cluster of at most ARL_HEADS_CLUSTER CTAs (a non-portable
 * cluster size, which Hopper allows), so H <= 16 can take a head a CTA
 * and up to ARL_MAX_HEADS = 32 two. */
#define ARL_HEADS_CLUSTER 16

/* The clusters=heads path's shape for H heads (1 <= H <= ARL_MAX_HEADS):
 * heads a CTA into *hpc, and the CTAs a cluster, returned (ceil(H / *hpc)),
 * every CTA with *hpc - 1 or *hpc heads. want 1 (clusters=heads): as few as
 * the cluster allows, ceil(H / ARL_HEADS_CLUSTER): 12 CTAs of one head at
 * H = 12, 13 of two (the last of one) at H = 25; want 2 (heads2): two
 * where H > 1 (6 CTAs at H = 12); want 3 (heads3):
 * three (9 CTAs, the last two of two, at H = 25); want 0: two (auto's
 * choice, arl_heads_auto, without a device). Fewer where H is
 * too small for them. */
int arl_heads_cluster(long H, int want, int *hpc);

/* clusters=auto's cost of the heads kernel with hpc heads a CTA and
 * `resident` clusters held at once by the device, in key-tile times: a CTA
 * costs its heads times its key tiles and a cluster is held until its
 * longest CTA is done, so the kernel takes about the larger of B x (the
 * key tiles over the query tiles) x hpc / resident (the work over the
 * clusters the device holds) and hpc x the longest query tile's key tiles
 * (one CTA, where too few clusters fill the device). */
double arl_heads_cost(long B, long S, int causal, int hpc, int resident);

/* The CTAs a cluster of the fused kernel takes for H heads: ask (0 for
 * auto, or 1, 2, 4, 8), raised to the fewest that hold every head (ceil(H /
 * ARL_MAX_HEADS_CTA)) and capped at H; auto takes the largest divisor of H
 * up to ARL_MAX_CLUSTER that leaves at most ARL_MAX_HEADS_CTA heads a CTA
 * (the most CTAs, evenly loaded), else that fewest. H <= ARL_MAX_HEADS. */
int arl_fused_cluster(long H, int ask);

/* Input profiles (the workload lists them by name, in this order):
 *   ARL_NORMAL   Q, K, V, x ~ N(0, 1)
 *   ARL_LARGE    each query aims at one key it may see (q = 1e3 k_j /
 *                |k_j|^2 + noise, j drawn among its visible keys): that
 *                score is 1e3 (+- 8 * 3), the others spread as N(0, 125^2)
 *                at D = 64, so exp(scale * s) overflows fp32 (e^125) unless
 *                the row's max is taken out first, the softmax is one-hot
 *                beyond what bf16 scores can blur, and a mask applied to the
 *                wrong keys picks the wrong row of V
 *   ARL_OFFSET   x = 1e3 + spread * N(0, 1): LayerNorm of rows whose mean
 *                dwarfs their spread (spread 16 in fp32, where mean^2 / var
 *                = 3900 breaks a one-pass E[x^2] - mean^2 in fp32, and the
 *                fp32 rounding of x + o at 1e3 stays under 3e-6 of the
 *                spread; 400 in bf16, the spread at which bf16 storage of
 *                the residual sum, which the unfused chain writes as eager
 *                PyTorch does, still holds the row to 1e-2)
 *   ARL_UNIFORM  Q = 0: every key a query sees weighs the same, so o is
 *                the mean of the visible rows of V; row 0 under the causal
 *                mask sees one key and gets V[0] exactly
 * gamma = 1 + 0.5 N(0, 1) and beta = 0.5 N(0, 1) in every profile. */
enum arl_profile { ARL_NORMAL, ARL_LARGE, ARL_OFFSET, ARL_UNIFORM, ARL_NPROFILES };

/* The tensors of one case, as generated (arl_gen_*). */
enum arl_tensor { ARL_Q, ARL_K, ARL_V, ARL_X };

/* Keys query s (0-based) of a sequence of S sees: s + 1 under the causal
 * mask, else S. */
long arl_keys(long s, long S, int causal);
/* Sum over the S queries of arl_keys: S (S + 1) / 2 causal, S^2 not. */
double arl_keys_total(long S, int causal);

/* o (D values) = softmax(scale * q . K[j] over j < nkeys) V, in double: one
 * head of one query row. K and V hold nkeys rows of D (row-major); nkeys
 * >= 1. The max is taken out before exp, so any finite scores work. */
void arl_ref_head(const double *q, const double *K, const double *V, long nkeys,
		  long D, double scale, double *o);

/* y = LayerNorm(x + o; gamma, beta) of one row of N values, in double, the
 * variance two-pass (sum of squares about the mean). y may alias x or o. */
void arl_ref_ln_row(const double *x, const double *o, const double *gamma,
		    const double *beta, long N, double *y);

/* The whole forward in double: Q, K, V [B, H, S, D], x and y [B, S, H*D],
 * gamma, beta [H*D]. y may not alias the inputs. */
void arl_ref_fwd(const double *Q, const double *K, const double *V,
		 const double *x, const double *gamma, const double *beta,
		 double *y, long B, long H, long S, long D, int causal);

/* Draw row `row` of a tensor of profile p from seed into v (n values),
 * rounded to dt. Rows of Q, K and V are (b H + h) S + s (n = D), rows of x
 * b S + s (n = H D): each row has its own stream, so rows drawn in any
 * order, on any thread, come out the same. Q under ARL_LARGE aims at a key:
 * kk holds the S rows of K of the same batch and head (already drawn and
 * rounded), and S, causal say which of them query row % S may see; other
 * tensors and profiles ignore kk (which may then be NULL). */
void arl_gen_row(double *v, long n, enum arl_tensor t, long row,
		 enum arl_profile p, enum fp_dtype dt, uint64_t seed,
		 const double *kk, long S, int causal);

/* gamma and beta (n values each) of a case drawn from seed, rounded to dt. */
void arl_gen_params(double *gamma, double *beta, long n, enum fp_dtype dt,
		    uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
