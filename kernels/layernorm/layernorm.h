/* layernorm.h - LayerNorm over the rows of an M x N tensor on the GPU: the
 * module the LayerNorm workloads share. Its row kernels (rows.cuh) serve
 * LayerNorm+GELU (kernels/ln_gelu/: its fused kernels are these with GELU
 * on, its unfused variants call layernorm_stats, layernorm_fwd and
 * layernorm_bwd) and LayerNorm+Linear (kernels/ln_linear/: the forward's
 * statistics pass, the backward's LayerNorm). C and C++ (nvcc) clean.
 *
 * Storage is fp32 or bf16 (dtype dt), math fp32. Statistics are fp32, per
 * row hi (a shift: the first-pass mean), lo (the mean of x - hi) and rstd
 * = 1/sqrt(var + LAYERNORM_EPS), laid out as stats[0..M), [M..2M),
 * [2M..3M): 3 M floats. Every function that launches enqueues on st,
 * does not synchronize and returns 0, or -1 with the failure reported
 * through error(). */
#ifndef FP_LAYERNORM_H
#define FP_LAYERNORM_H

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LayerNorm's epsilon, added to the variance (PyTorch's default). */
#define LAYERNORM_EPS 1e-5

/* Threads per row of the register-resident kernels for a row of N elements
 * of dtype dt (bwd = 0: forward, 1: backward): a power of two in [32, 1024]
 * forward, [32, 512] backward, or 0 when the row goes to the wide-row
 * kernels instead (N not a multiple of the 16-byte vector width, or wider
 * than the registers hold). Touches no GPU. */
int layernorm_plan(int bwd, long N, enum fp_dtype dt);

/* Whether the backward's rows of N, too wide for layernorm_plan(1, ...)'s
 * kernels, take LayerNorm's widest register kernel instead of the wide-row
 * one: 512 threads of 32 values (N a multiple of the 16-byte vector
 * width, 8192 < N <= 16384), their dgamma/dbeta sums in shared memory.
 * The LayerNorm and LayerNorm+GELU backwards take it, and RMSNorm's fused
 * backward its own instance of the same shape. Touches no GPU. */
int layernorm_bwd_wide(long N, enum fp_dtype dt);

/* Threads a row of the backward's register kernel for rows of N:
 * layernorm_plan(1, ...), or 512 where layernorm_bwd_wide(); 0 where the
 * row goes to the wide-row kernel. The rule LayerNorm's backward instances
 * are picked by. Touches no GPU. */
int layernorm_bwd_threads(long N, enum fp_dtype dt);

/* Elements of a row each thread keeps in registers (a multiple of the
 * vector width): threads per row * this >= N whenever layernorm_plan() > 0. */
int layernorm_per_thread(int bwd);

/* Elements of a row of N each thread of the backward's register kernel
 * holds: layernorm_per_thread(1), or 12 for fp32 rows of 64 to 256
 * threads that fill no more than 3 of a thread's 4 16-byte chunks (N in
 * (8, 12] x the threads a row: 768, 1536, 3072), which take an instance
 * that keeps fewer registers, or 32 where layernorm_bwd_wide(); 0 where
 * the row goes to the wide-row kernel. Touches no GPU. */
int layernorm_bwd_held(long N, enum fp_dtype dt);

/* Elements of a row of N the forward's register kernel has each thread
 * hold: layernorm_per_thread(0), or 24 for bf16 rows of 32 to 256
 * threads that fill no more than 3 of a thread's 4 16-byte chunks (N in
 * (16, 24] x the threads a row); 0 where layernorm_plan(0, ...) is 0. */
int layernorm_fwd_held(long N, enum fp_dtype dt);

/* Whether rows of N take the forward's full-row instance: rows of exactly
 * the values its threads hold (N = layernorm_plan(0, ...) x
 * layernorm_fwd_held(), up to 256 threads a row), compiled with N a
 * constant. Touches no GPU. */
int layernorm_fwd_full(long N, enum fp_dtype dt);

/* Whether the forward's rows of N run on a grid of a few blocks an SM,
 * each looping over row groups, with gamma and beta staged in shared
 * memory once a block where it normalizes (FWD_LN, FWD_FUSED): full bf16
 * rows of one warp (768, 1024). Touches no GPU. */
int layernorm_fwd_looped(long N, enum fp_dtype dt);

/* The backward's likewise: N = layernorm_plan(1, ...) x
 * layernorm_bwd_held(), up to 256 threads a row. Touches no GPU. */
int layernorm_bwd_full(long N, enum fp_dtype dt);

/* out = LayerNorm(x; gamma, beta), M rows of N (x, out M N values; gamma,
 * beta N); the statistics are written to stats unless it is NULL. */
int layernorm_fwd(enum fp_dtype dt, const void *x, const void *gamma,
		  const void *beta, void *out, float *stats, long M, long N,
		  cudaStream_t st);

/* The statistics alone (x read once, nothing else written). */
int layernorm_stats(enum fp_dtype dt, const void *x, float *stats, long M,
		    long N, cudaStream_t st);

/* The persistent grid of layernorm_bwd (recompute 0) or of
 * layernorm_bwd_recompute (1) for M x N: it needs blocks * 2 N floats of
 * partials. Call once per shape, before launching (it also lets the kernel
 * have its shared memory). Rows the register kernels do not hold
 * (layernorm_plan(1, N, dt) == 0) take the wide-row kernel, one block a
 * row, in either form. -1 on error (reported). */
long layernorm_bwd_blocks(enum fp_dtype dt, long M, long N, int recompute);

/* Given dh, the gradient at the LayerNorm's output, and the statistics of
 * the forward: dx (M N), dgamma and dbeta (N values each),
 * deterministic (block partials summed in a fixed order, no atomics).
 * partial holds blocks * 2 N floats of scratch; blocks comes from
 * layernorm_bwd_blocks(dt, M, N, 0). */
int layernorm_bwd(enum fp_dtype dt, const void *dh, const void *x,
		  const void *gamma, const float *stats, void *dx, void *dgamma,
		  void *dbeta, float *partial, long blocks, long M, long N,
		  cudaStream_t st);

/* The same from x alone (no saved statistics), also writing h =
 * LayerNorm(x; gamma, beta) (M N): x is read from DRAM once for both.
 * blocks comes from layernorm_bwd_blocks(dt, M, N, 1). */
int layernorm_bwd_recompute(enum fp_dtype dt, const void *dh, const void *x,
			    const void *gamma, const void *beta, void *h,
			    void *dx, void *dgamma, void *dbeta, float *partial,
			    long blocks, long M, long N, cudaStream_t st);

/* dgamma and dbeta (N values of dtype dt each) from the blocks
 * partial rows [blocks][2 N] that a persistent backward row kernel wrote:
 * the second half of layernorm_bwd, for a workload that runs a row kernel
 * of its own (the fused LayerNorm+GELU backward). */
int layernorm_bwd_reduce(enum fp_dtype dt, const float *partial, long blocks,
			 long N, void *dgamma, void *dbeta, cudaStream_t st);

#ifdef __cplusplus
}
#endif
#endif
