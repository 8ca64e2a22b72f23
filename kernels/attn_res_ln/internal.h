/* internal.h - what the files of kernels/attn_res_ln/ share and nothing else
 * sees: the launchers of kernels.cu, which workload.cu calls. nvcc only
 * (arl.h is the public, C header).
 *
 * The folder, in reading order:
 *   arl.h        the operation, its limits, profiles and CPU reference
 *   ref.c        the double-precision reference and the input generator
 *   flash.cuh    the flash-attention loop both flash kernels run
 *   kernels.cuh  the unfused chain's own kernels (scaled masked softmax,
 *                residual add), the flash kernel, the residual+LayerNorm
 *                kernel, the two fused kernels
 *   kernels.cu   their launchers
 *   workload.cu  the contract: shapes, models, options, create, check
 *
 * Every launcher enqueues on st, does not synchronize, and returns 0 or -1
 * (reported through error()). Tensors: Q, K, V [B, H, S, D]; x, y [B, S,
 * H*D]; dt is their storage type (math is fp32). */
#ifndef FP_ARL_INTERNAL_H
#define FP_ARL_INTERNAL_H

#include <cuda_runtime_api.h>

#include "attn_res_ln/arl.h"
#include "workload.h"

/* Let the flash and fused kernels have their shared memory (once per
 * process; later calls return at once). 0 or -1 (reported). */
int arl_prepare(void);

/* In place over rows of S scores (rows = B H S, row r is query r mod S):
 * P = softmax(scale * scores) over the keys the row sees (all S, or r mod
 * S + 1 under causal), masked keys written as 0. */
int arl_softmax(enum fp_dtype dt, void *P, long rows, int S, int causal,
		float scale, cudaStream_t st);

/* r = x + o, with o in [B, H, S, D] (the batched GEMM's layout) read
 * across heads into r's [B, S, H*D]. */
int arl_residual_add(enum fp_dtype dt, const void *x, const void *o, void *r,
		     long B, long H, long S, long D, cudaStream_t st);

/* O [B, S, H*64] = Attention(Q, K, V) (D = 64), the flash kernel. */
int arl_flash(enum fp_dtype dt, int causal, const void *Q, const void *K,
	      const void *V, void *O, long B, long H, long S, cudaStream_t st);

/* y = LayerNorm(x + o; gamma, beta) over rows of N <= ARL_MAX_HEADS * 64
 * (M rows; x, o, y [M, N]). */
int arl_res_ln(enum fp_dtype dt, const void *x, const void *o, const void *gamma,
	       const void *beta, void *y, long M, long N, cudaStream_t st);

/* Dynamic shared memory of a fused CTA holding hpc heads' outputs. */
size_t arl_fused_smem(enum fp_dtype dt, int hpc);

/* y = LayerNorm(x + Attention(Q, K, V); gamma, beta) in one kernel, in
 * clusters of `cluster` CTAs (from arl_fused_cluster) splitting the heads. */
int arl_fused(enum fp_dtype dt, int causal, const void *Q, const void *K,
	      const void *V, const void *x, const void *gamma, const void *beta,
	      void *y, long B, long H, long S, int cluster, cudaStream_t st);

/* Dynamic shared memory of a CTA of the clusters=heads path: the flash
 * loop's and the rows' partials. */
size_t arl_fused_heads_smem(enum fp_dtype dt, int hpc);

/* The clusters of the fused kernel's clusters=heads path (heads != 0: that
 * many heads a CTA, `cluster` CTAs a cluster) or of k_fused in clusters of
 * `cluster` (heads == 0) for H heads that the
 * device holds at once (cudaOccupancyMaxActiveClusters) into *resident;
 * 0, or -1 (reported: the cluster's CTAs and their shared memory, and that
 * another clusters value may fit) if it holds none. */
int arl_fused_fits(enum fp_dtype dt, int causal, long H, int heads, int cluster,
		   int *resident);

/* The heads a CTA that clusters=auto takes into *want: 2 or 3, whichever
 * arl_heads_cost finds cheaper with the clusters
 * this device holds at once. 0, or -1 (reported). */
int arl_heads_auto(enum fp_dtype dt, int causal, long B, long H, long S, int *want);

/* y = LayerNorm(x + Attention(Q, K, V); gamma, beta) in one kernel, hpc
 * heads a CTA (1 to 3: arl_heads_cluster) in clusters
 * covering the heads. */
int arl_fused_heads(enum fp_dtype dt, int causal, const void *Q, const void *K,
		    const void *V, const void *x, const void *gamma, const void *beta,
		    void *y, long B, long H, long S, int hpc, cudaStream_t st);

#endif
