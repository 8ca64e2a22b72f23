// layernorm.cu - LayerNorm alone on the GPU (layernorm.h): the row
// kernels of rows.cuh in their plain modes, and the sum of the backward's
// dgamma/dbeta partials, launched for the workloads that share them.
//
// Napkin math for M x N of s-byte elements (s = 4 fp32, 2 bf16): the
// forward reads x and writes out, (2 M N + 2 N) s bytes, 8 FLOP per
// element; the statistics pass reads x once and writes 12 bytes a row;
// the backward reads dh and x (and h is written by the recomputing form),
// writes dx, and its 2 N partials per block mostly stay in L2. All of it is
// memory-bound: "fast" means "moves few bytes at full bandwidth".
#include "config.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "kutil.h"
#include "layernorm/layernorm.h"
#include "rows.cuh"

extern "C" int layernorm_per_thread(int bwd)
{
	return bwd ? BWD_PER_THREAD : FWD_PER_THREAD;
}

extern "C" int layernorm_plan(int bwd, long N, enum fp_dtype dt)
{
	const long V = 16 / (long)fp_dtype_size(dt), E = layernorm_per_thread(bwd);
	const int most = bwd ? 512 : 1024;  // see bwd_kernel()
	int tpr;

	if (N < 1 || N % V)
		return 0;
	tpr = row_group_threads(N, (int)E, most);
	return tpr * E >= N ? tpr : 0;  // 0: wider than the register kernels
}

extern "C" int layernorm_bwd_wide(long N, enum fp_dtype dt)
{
	const long V = 16 / (long)fp_dtype_size(dt);

	return N % V == 0 && N > (long)WIDE_THREADS * BWD_PER_THREAD &&
	       N <= (long)WIDE_THREADS * BWD_WIDE_PER_THREAD;
}

extern "C" int layernorm_bwd_threads(long N, enum fp_dtype dt)
{
	return layernorm_bwd_wide(N, dt) ? WIDE_THREADS : layernorm_plan(1, N, dt);
}

// The elements a thread of the register kernel of direction bwd holds in
// rows of N: 3 of its 4 16-byte chunks where rows of dtype `three` and of
// `least` to ROW_BLOCK threads fill no more than that (N in (2, 3] chunks
// x the threads a row), all 4 otherwise; 0 where the row goes to the
// wide-row kernel. The rule of layernorm_fwd_held and layernorm_bwd_held.
static int held(int bwd, long N, enum fp_dtype dt, enum fp_dtype three, int least)
{
	const int tpr = layernorm_plan(bwd, N, dt);
	const long E = layernorm_per_thread(bwd), chunk = E / 4;

	if (bwd && layernorm_bwd_wide(N, dt))
		return BWD_WIDE_PER_THREAD;
	if (!tpr)
		return 0;
	if (dt == three && tpr >= least && tpr <= ROW_BLOCK && N > 2 * chunk * tpr &&
	    N <= 3 * chunk * tpr)
		return (int)(3 * chunk);
	return (int)E;
}

// Whether rows of N take direction bwd's full-row instance, its threads
// holding h values each: rows of exactly tpr h values, up to ROW_BLOCK
// threads a row. The rule of layernorm_fwd_full and layernorm_bwd_full.
static int full_rows(int bwd, long N, enum fp_dtype dt, int h)
{
	const int tpr = layernorm_plan(bwd, N, dt);

	return tpr && tpr <= ROW_BLOCK && N == (long)tpr * h;
}

// The forward's 3-chunk instance drops the fourth chunk's guards, zeroing
// and registers (48 instead of 64 at 32 threads a row: 5 blocks an SM
// instead of 4; 592 instructions instead of 776 by cubin text size).
// Measured (H200, bf16, bench/RESULTS.md, "The bf16 LayerNorm forward's
// rows in 3 chunks"): the fused LayerNorm+GELU forward 0.96x the time at
// 768, 1536 and 3072 (32, 64 and 128 threads a row), the erf form 0.99x,
// unfused2's LayerNorm 0.98-0.99x; fp32 rows hold 8 chunks and are not
// short of issue slots, and keep them.
extern "C" int layernorm_fwd_held(long N, enum fp_dtype dt)
{
	return held(0, N, dt, FP_BF16, 32);
}

// Measured (H200, bench/RESULTS.md, "Full rows: the LayerNorm forward with
// N a constant"): the fused LayerNorm+GELU forward 0.97x the time at 1024
// (bf16 and fp32) and 4096 (bf16), 0.99x at 768 bf16, unfused2's
// LayerNorm 0.98-0.99x; wider rows (512 and 1024 threads, one block a row)
// keep the general instance.
extern "C" int layernorm_fwd_full(long N, enum fp_dtype dt)
{
	return full_rows(0, N, dt, layernorm_fwd_held(N, dt));
}

// The instances this names are FWD_CASE_F's and GBS's in rows.cuh (full,
// bf16, 32 threads a row), which say why.
extern "C" int layernorm_fwd_looped(long N, enum fp_dtype dt)
{
	return dt == FP_BF16 && layernorm_fwd_full(N, dt) && layernorm_plan(0, N, dt) == 32;
}

// The 3-chunk instance needs 80 registers where the 4-chunk one takes 112,
// so 3 blocks of 256 share an SM instead of 2. Measured (H200, fp32,
// bench/RESULTS.md, "The fp32 LayerNorm backward's rows in 3 chunks"): the
// fused LayerNorm+GELU backward 0.86x the time at 3072 (256 threads a
// row), its unfused first kernel 0.92-0.95x at 768-3072; at 32 threads
// a row (320) 1.5 % slower, so rows of 32 threads keep 4 chunks, and rows
// of 512 (one block an SM either way) too. The instance does not stage
// its rows through shared memory as the 4-chunk one does at up to 128
// threads a row: 0.94x the fused backward's time at 768, 1536 unchanged
// ("The saved-mask backwards on a resident grid, the fp32 LayerNorm
// backward's 3-chunk rows unstaged").
extern "C" int layernorm_bwd_held(long N, enum fp_dtype dt)
{
	return held(1, N, dt, FP_F32, 64);
}

// Measured (H200, bench/RESULTS.md, "Full rows in the backward"): the
// fused LayerNorm+GELU backward 0.92x the time at 1024 fp32, 0.94x at
// 2048 fp32, 0.96x at 1024 and 2048 bf16, 0.97-0.98x at 4096; its unfused
// chain 0.88-0.97x at those widths; 0.98-1.0x elsewhere. Rows of 512
// threads a row keep the general instance, as the forward's.
extern "C" int layernorm_bwd_full(long N, enum fp_dtype dt)
{
	return full_rows(1, N, dt, layernorm_bwd_held(N, dt));
}

extern "C" int layernorm_fwd(enum fp_dtype dt, const void *x, const void *gamma,
			     const void *beta, void *out, float *stats, long M,
			     long N, cudaStream_t st)
{
	struct kcfg k = fwd_pick<FWD_LN, 0>(N, dt);

	return launch_fwd(&k, x, gamma, beta, out, stats, M, N, st);
}

extern "C" int layernorm_stats(enum fp_dtype dt, const void *x, float *stats,
			       long M, long N, cudaStream_t st)
{
	struct kcfg k = fwd_pick<FWD_STATS, 0>(N, dt);

	return launch_fwd(&k, x, NULL, NULL, NULL, stats, M, N, st);
}

// The backward's row kernel: BWD_LN (statistics given) or BWD_LNH
// (recomputed, h written to aux).
static struct kcfg bwd_rows(enum fp_dtype dt, long N, int recompute)
{
	return recompute ? bwd_pick<BWD_LNH, 0>(N, dt) : bwd_pick<BWD_LN, 0>(N, dt);
}

extern "C" long layernorm_bwd_blocks(enum fp_dtype dt, long M, long N,
				     int recompute)
{
	struct kcfg k = bwd_rows(dt, N, recompute);
	int grid = 0;

	if (kcfg_ready(&k) || persistent_grid(&k, M, &grid))
		return -1;
	return grid;
}

extern "C" int layernorm_bwd_reduce(enum fp_dtype dt, const float *partial,
				    long blocks, long N, void *dgamma, void *dbeta,
				    cudaStream_t st)
{
	unsigned grid = (unsigned)((2 * N + RED_COLS - 1) / RED_COLS);
	dim3 block(RED_COLS, RED_SLICES);

	if (dt == FP_BF16)
		reduce_partials<__nv_bfloat16><<<grid, block, 0, st>>>(
			partial, (int)blocks, N, (__nv_bfloat16 *)dgamma,
			(__nv_bfloat16 *)dbeta);
	else
		reduce_partials<float><<<grid, block, 0, st>>>(
			partial, (int)blocks, N, (float *)dgamma, (float *)dbeta);
	return CUDA_CHECK_LAUNCH("reduce_partials");
}

extern "C" int layernorm_bwd(enum fp_dtype dt, const void *dh, const void *x,
			     const void *gamma, const float *stats, void *dx,
			     void *dgamma, void *dbeta, float *partial, long blocks, long M,
			     long N, cudaStream_t st)
{
	struct kcfg k = bwd_rows(dt, N, 0);

	return launch_bwd(&k, (unsigned)blocks, dh, x, gamma, NULL, dx,
			  (float *)stats, partial, M, N, NULL, st) ||
	       layernorm_bwd_reduce(dt, partial, blocks, N, dgamma, dbeta, st) ? -1 : 0;
}

extern "C" int layernorm_bwd_recompute(enum fp_dtype dt, const void *dh,
				       const void *x, const void *gamma,
				       const void *beta, void *h, void *dx,
				       void *dgamma, void *dbeta, float *partial, long blocks,
				       long M, long N, cudaStream_t st)
{
	struct kcfg k = bwd_rows(dt, N, 1);

	return launch_bwd(&k, (unsigned)blocks, dh, x, gamma, beta, dx, NULL,
			  partial, M, N, h, st) ||
	       layernorm_bwd_reduce(dt, partial, blocks, N, dgamma, dbeta, st) ? -1 : 0;
}
