// kernels.cu - the attention + residual + LayerNorm kernels and their
// launchers: the unfused chain's own kernels (its GEMMs are cuBLAS's and
// its LayerNorm the LayerNorm module's, see workload.cu), the flash kernel
// and the residual+LayerNorm kernel of flash_then_ln, and the fused kernel.
// Read top to bottom as in llm.c's dev/cuda: simplest first, each saying
// what it changes over the previous one, then the launchers. The flash
// loop itself is in flash.cuh; internal.h says which file holds what.
//
// Napkin math at GPT-2 small (B = 16, H = 12, S = 1024, D = 64, causal,
// bf16): the attention is 4 B H D S(S+1)/2 = 25.8 GFLOP (both GEMMs), the
// minimum bytes 5 B S H D 2 = 126 MB (Q, K, V, x read, y written): 205
// FLOP a byte, on the tensor-core side of an H100's ridge (~300 at bf16
// dense peak over 3.35 TB/s), so a fused kernel near the roof is bound by
// its mma.sync rate. The unfused chain adds the scores matrix, B H S^2 =
// 201 M elements written by the first GEMM, read and rewritten by the
// softmax, read by the second GEMM: 1.6 GB of bf16, 13 times the minimum.
// Measured figures go to bench/RESULTS.md.
#include "config.h"

#include <math.h>
#include <stdint.h>

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "kutil.h"
#include "attn_res_ln/flash.cuh"
#include "attn_res_ln/internal.h"

namespace cg = cooperative_groups;

#define LOG2E 1.4426950408889634f

// ---------------------------------------------------------------------------
// The unfused chain's kernels.
//
// k_softmax: one block a row of scores, in place. A first pass keeps a
// running max and a sum rescaled as the max grows (each thread its own,
// combined across the block), a second rereads the row (from L1/L2: a row
// is at most 64 KB) and writes the probabilities, zeros past the causal
// diagonal so the PV GEMM can multiply the whole square. The scale is
// applied here, in fp32, to the scores the GEMM stored.
#define SMX_THREADS 128

// Merge a (max, sum) pair into another: sums rescaled to the larger max; an
// empty side (max -inf) adds nothing.
__device__ __forceinline__ void smx_merge(float &m, float &l, float m2, float l2)
{
	const float mm = fmaxf(m, m2);

	if (mm == -INFINITY)
		return;
	l = (m == -INFINITY ? 0.f : l * exp2f(m - mm)) +
	    (m2 == -INFINITY ? 0.f : l2 * exp2f(m2 - mm));
	m = mm;
}

template <typename T>
__global__ void __launch_bounds__(SMX_THREADS)
k_softmax(T *__restrict__ P, int S, int causal, float scale_log2)
{
	__shared__ float red[2][SMX_THREADS / 32];
	const long row = blockIdx.x;
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
	const int keep = causal ? (int)(row % S) + 1 : S;
	T *p = P + (size_t)row * S;
	float m = -INFINITY, l = 0.f;

	for (int j = tid; j < keep; j += SMX_THREADS) {
		const float v = to_f(p[j]) * scale_log2;

		if (v > m) {
			l = (m == -INFINITY ? 0.f : l * exp2f(m - v)) + 1.f;
			m = v;
		} else {
			l += exp2f(v - m);
		}
	}
#pragma unroll
	for (int o = 16; o; o >>= 1) {
		const float m2 = __shfl_xor_sync(FP_FULL_MASK, m, o);
		const float l2 = __shfl_xor_sync(FP_FULL_MASK, l, o);

		smx_merge(m, l, m2, l2);
	}
	if (lane == 0) {
		red[0][w] = m;
		red[1][w] = l;
	}
	__syncthreads();
	m = red[0][0];
	l = red[1][0];
	for (int i = 1; i < SMX_THREADS / 32; i++)  // the same order in every thread
		smx_merge(m, l, red[0][i], red[1][i]);
	const float inv = 1.f / l;
	for (int j = tid; j < S; j += SMX_THREADS)
		p[j] = from_f<T>(j < keep ? exp2f(to_f(p[j]) * scale_log2 - m) * inv : 0.f);
}

// k_residual_add: r = x + o, o read from the batched GEMM's [B, H, S, D]
// layout (D contiguous elements a head, so a warp's reads stay in runs of
// D), r written as [B, S, H*D] for the LayerNorm module's row kernel.
template <typename T>
__global__ void k_residual_add(const T *__restrict__ x, const T *__restrict__ o,
			       T *__restrict__ r, long n, int H, int S, int D)
{
	const long N = (long)H * D;

	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (long)gridDim.x * blockDim.x) {
		const long bs = i / N, col = i - bs * N, b = bs / S, s = bs - b * S;
		const long h = col / D, d = col - h * D;

		r[i] = from_f<T>(to_f(x[i]) + to_f(o[((b * H + h) * S + s) * D + d]));
	}
}

// ---------------------------------------------------------------------------
// flash_then_ln.
//
// k_flash: the flash loop (flash.cuh) for one head and 64 query rows a
// block; the scores stay on chip. The output leaves in [B, S, H*D], each
// thread storing its fragment's pairs (rows g and g + 8, dims 8n + 2t): a
// quad writes 8 (bf16: 16 bytes) contiguous elements of a row, and the
// block's 64 rows x 64 dims are written whole, so L2 merges the sectors.
// Blocks take query tiles longest first (the last causal tiles see the most
// keys), so the short ones fill the tail of the grid.
template <typename T> __device__ __forceinline__ void store2(T *p, float a, float b);
template <> __device__ __forceinline__ void store2<float>(float *p, float a, float b)
{
	*(float2 *)p = make_float2(a, b);
}
template <> __device__ __forceinline__ void store2<__nv_bfloat16>(__nv_bfloat16 *p, float a, float b)
{
	*(uint32_t *)p = pack_bf16(a, b);
}

template <typename T, bool CAUSAL>
__global__ void __launch_bounds__(FL_THREADS)
k_flash(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
	T *__restrict__ O, int B, int H, int S, float scale_log2)
{
	extern __shared__ __align__(128) unsigned char smem[];
	const int ntq = (S + ARL_BQ - 1) / ARL_BQ, nbh = B * H;
	const int bh = (int)(blockIdx.x % nbh), q0 = (ntq - 1 - (int)(blockIdx.x / nbh)) * ARL_BQ;
	const int b = bh / H, h = bh % H, lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	const size_t off = (size_t)bh * S * 64;
	float o[FL_NT][4];

	flash_head<T, CAUSAL>(Q + off, K + off, V + off, S, q0, scale_log2, smem, o);
#pragma unroll
	for (int hh = 0; hh < 2; hh++) {
		const int row = q0 + w * 16 + (lane >> 2) + 8 * hh;

		if (row >= S)
			continue;
		T *dst = O + (((size_t)b * S + row) * H + h) * 64 + 2 * (lane & 3);
#pragma unroll
		for (int n = 0; n < FL_NT; n++)
			store2<T>(dst + 8 * n, o[n][2 * hh], o[n][2 * hh + 1]);
	}
}

// k_res_ln: y = LayerNorm(x + o) a row a block, the row in registers (8
// values a thread of 256: rows up to 2048 = ARL_MAX_HEADS * 64 wide), the
// variance two-pass about the mean (rows of mean 1e3 keep their spread),
// both sums reduced in a fixed order: x and o read once, y written once.
#define RL_THREADS 256
#define RL_PER 8

// Sum of v over the block, the same bits in every thread; red holds
// RL_THREADS / 32 floats and is free again when this returns.
__device__ __forceinline__ float block_sum(float v, float *red)
{
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	float s = 0.f;

	v = warp_sum(v);
	if (lane == 0)
		red[w] = v;
	__syncthreads();
	for (int i = 0; i < RL_THREADS / 32; i++)
		s += red[i];
	__syncthreads();
	return s;
}

template <typename T>
__global__ void __launch_bounds__(RL_THREADS)
k_res_ln(const T *__restrict__ x, const T *__restrict__ o, const T *__restrict__ gamma,
	 const T *__restrict__ beta, T *__restrict__ y, int N)
{
	__shared__ float red[RL_THREADS / 32];
	const size_t base = (size_t)blockIdx.x * N;
	float v[RL_PER], sum = 0.f, sq = 0.f, mean, rstd;

#pragma unroll
	for (int i = 0; i < RL_PER; i++) {
		const int c = threadIdx.x + i * RL_THREADS;

		v[i] = c < N ? to_f(x[base + c]) + to_f(o[base + c]) : 0.f;
		sum += v[i];
	}
	mean = block_sum(sum, red) / (float)N;
#pragma unroll
	for (int i = 0; i < RL_PER; i++) {
		const int c = threadIdx.x + i * RL_THREADS;
		const float d = v[i] - mean;

		sq += c < N ? d * d : 0.f;
	}
	rstd = rsqrtf(block_sum(sq, red) / (float)N + (float)ARL_EPS);
#pragma unroll
	for (int i = 0; i < RL_PER; i++) {
		const int c = threadIdx.x + i * RL_THREADS;

		if (c < N)
			y[base + c] = from_f<T>((v[i] - mean) * rstd * to_f(gamma[c]) +
						to_f(beta[c]));
	}
}

// ---------------------------------------------------------------------------
// fused.
//
// k_fused: what flash_then_ln does, in one kernel. A cluster of C CTAs
// owns 64 query rows of one sequence across all heads: CTA `rank` runs the
// flash loop for heads rank, rank + C, ... and keeps each head's
// normalised output in shared memory as fp32 (the accumulators' own type:
// no rounding between the attention and the LayerNorm, and at 4 heads a
// CTA 66 KB, which leaves bf16 two CTAs an SM). Then each CTA adds its
// columns of the residual, and the row statistics are summed across the
// cluster through distributed shared memory in two rounds (the sums, then
// the squares about the mean: the two-pass variance), each rank's
// partials read in rank order, so every CTA gets the same bits. Each CTA
// writes its own columns of y. x is read once, y written once, and the
// attention output never leaves the chip.
// Shared memory: the flash loop's (fl_layout) + 64 rows x (hpc * 64 + 8)
// floats (the + 8 keeps a half-warp's float2 stores on distinct banks).
__host__ __device__ constexpr int fused_ld(int hpc)
{
	return hpc * 64 + 8;
}

template <typename T, bool CAUSAL>
__global__ void __launch_bounds__(FL_THREADS)
k_fused(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
	const T *__restrict__ x, const T *__restrict__ gamma, const T *__restrict__ beta,
	T *__restrict__ y, int B, int H, int S, float scale_log2)
{
	extern __shared__ __align__(128) unsigned char smem[];
	__shared__ float part1[ARL_BQ], part2[ARL_BQ];
	cg::cluster_group cl = cg::this_cluster();
	const int C = (int)cl.num_blocks(), rank = (int)cl.block_rank();
	const int ntq = (S + ARL_BQ - 1) / ARL_BQ, tile = (int)(blockIdx.x / C);
	const int b = tile % B, q0 = (ntq - 1 - tile / B) * ARL_BQ;
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
	const int nh = (H - rank + C - 1) / C, ld = fused_ld((H + C - 1) / C);
	const int N = H * 64, ncols = nh * 64;
	float *os = (float *)(smem + fl_layout<T>::SMEM);
	float o[FL_NT][4];

	for (int hl = 0; hl < nh; hl++) {
		const size_t off = (size_t)(b * H + rank + hl * C) * S * 64;

		flash_head<T, CAUSAL>(Q + off, K + off, V + off, S, q0, scale_log2, smem, o);
#pragma unroll
		for (int hh = 0; hh < 2; hh++) {
			float *dst = os + (w * 16 + g + 8 * hh) * ld + hl * 64 + 2 * t;
#pragma unroll
			for (int n = 0; n < FL_NT; n++)
				*(float2 *)(dst + 8 * n) = make_float2(o[n][2 * hh], o[n][2 * hh + 1]);
		}
	}
	__syncthreads();

	// Each warp its 16 rows: v = o + x in place, and the rows' sums.
	for (int r = w * 16; r < w * 16 + 16; r++) {
		const int s = q0 + r;
		float sum = 0.f;

		if (s < S) {
			const T *xr = x + ((size_t)b * S + s) * N;

			for (int c = lane; c < ncols; c += 32) {
				const float v = os[r * ld + c] +
						to_f(xr[(rank + (c >> 6) * C) * 64 + (c & 63)]);

				os[r * ld + c] = v;
				sum += v;
			}
		}
		sum = warp_sum(sum);
		if (lane == 0)
			part1[r] = sum;
	}
	cl.sync();
	for (int r = w * 16; r < w * 16 + 16; r++) {
		float mean = 0.f, sq = 0.f;

		for (int q = 0; q < C; q++)
			mean += cl.map_shared_rank(part1, q)[r];
		mean /= (float)N;
		for (int c = lane; c < ncols; c += 32) {
			const float d = os[r * ld + c] - mean;

			sq += d * d;
		}
		sq = warp_sum(sq);
		if (lane == 0)
			part2[r] = sq;
	}
	cl.sync();
	for (int r = w * 16; r < w * 16 + 16; r++) {
		const int s = q0 + r;
		float mean = 0.f, var = 0.f;

		if (s >= S)
			continue;
		for (int q = 0; q < C; q++) {
			mean += cl.map_shared_rank(part1, q)[r];
			var += cl.map_shared_rank(part2, q)[r];
		}
		mean /= (float)N;
		const float rstd = rsqrtf(var / (float)N + (float)ARL_EPS);
		T *yr = y + ((size_t)b * S + s) * N;

		for (int c = lane; c < ncols; c += 32) {
			const int col = (rank + (c >> 6) * C) * 64 + (c & 63);

			yr[col] = from_f<T>((os[r * ld + c] - mean) * rstd * to_f(gamma[col]) +
					    to_f(beta[col]));
		}
	}
	cl.sync();  // no CTA leaves while another still reads its partials
}

// ---------------------------------------------------------------------------
// Launchers.

size_t arl_fused_smem(enum fp_dtype dt, int hpc)
{
	return (size_t)(dt == FP_BF16 ? fl_layout<__nv_bfloat16>::SMEM
				       : fl_layout<float>::SMEM) +
	       (size_t)ARL_BQ * fused_ld(hpc) * sizeof(float);
}

template <typename F>
static int smem_attr(F *kernel, size_t bytes)
{
	return CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
					       (int)bytes));
}

int arl_prepare(void)
{
	static int done;
	const size_t fb = arl_fused_smem(FP_BF16, ARL_MAX_HEADS_CTA);
	const size_t ff = arl_fused_smem(FP_F32, ARL_MAX_HEADS_CTA);

	if (done)
		return 0;
	if (smem_attr(k_flash<__nv_bfloat16, false>, fl_layout<__nv_bfloat16>::SMEM) ||
	    smem_attr(k_flash<__nv_bfloat16, true>, fl_layout<__nv_bfloat16>::SMEM) ||
	    smem_attr(k_flash<float, false>, fl_layout<float>::SMEM) ||
	    smem_attr(k_flash<float, true>, fl_layout<float>::SMEM) ||
	    smem_attr(k_fused<__nv_bfloat16, false>, fb) ||
	    smem_attr(k_fused<__nv_bfloat16, true>, fb) ||
	    smem_attr(k_fused<float, false>, ff) || smem_attr(k_fused<float, true>, ff))
		return -1;
	done = 1;
	return 0;
}

static float scale_log2(long D)
{
	return (float)(1.0 / sqrt((double)D)) * LOG2E;
}

int arl_softmax(enum fp_dtype dt, void *P, long rows, int S, int causal,
			   float scale, cudaStream_t st)
{
	if (rows < 1)
		return 0;
	if (dt == FP_BF16)
		k_softmax<__nv_bfloat16><<<(unsigned)rows, SMX_THREADS, 0, st>>>(
			(__nv_bfloat16 *)P, S, causal, scale * LOG2E);
	else
		k_softmax<float><<<(unsigned)rows, SMX_THREADS, 0, st>>>(
			(float *)P, S, causal, scale * LOG2E);
	return CUDA_CHECK_LAUNCH("k_softmax");
}

int arl_residual_add(enum fp_dtype dt, const void *x, const void *o, void *r,
				long B, long H, long S, long D, cudaStream_t st)
{
	const long n = B * S * H * D;
	const long blocks = (n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536;

	if (dt == FP_BF16)
		k_residual_add<<<(unsigned)blocks, 256, 0, st>>>(
			(const __nv_bfloat16 *)x, (const __nv_bfloat16 *)o,
			(__nv_bfloat16 *)r, n, (int)H, (int)S, (int)D);
	else
		k_residual_add<<<(unsigned)blocks, 256, 0, st>>>(
			(const float *)x, (const float *)o, (float *)r, n, (int)H,
			(int)S, (int)D);
	return CUDA_CHECK_LAUNCH("k_residual_add");
}

template <typename T>
static void flash_launch(int causal, const void *Q, const void *K, const void *V,
			 void *O, long B, long H, long S, cudaStream_t st)
{
	const unsigned grid = (unsigned)(B * H * ((S + ARL_BQ - 1) / ARL_BQ));
	const float sl = scale_log2(ARL_FLASH_D);

	if (causal)
		k_flash<T, true><<<grid, FL_THREADS, fl_layout<T>::SMEM, st>>>(
			(const T *)Q, (const T *)K, (const T *)V, (T *)O, (int)B, (int)H,
			(int)S, sl);
	else
		k_flash<T, false><<<grid, FL_THREADS, fl_layout<T>::SMEM, st>>>(
			(const T *)Q, (const T *)K, (const T *)V, (T *)O, (int)B, (int)H,
			(int)S, sl);
}

int arl_flash(enum fp_dtype dt, int causal, const void *Q, const void *K,
			 const void *V, void *O, long B, long H, long S, cudaStream_t st)
{
	if (arl_prepare())
		return -1;
	if (dt == FP_BF16)
		flash_launch<__nv_bfloat16>(causal, Q, K, V, O, B, H, S, st);
	else
		flash_launch<float>(causal, Q, K, V, O, B, H, S, st);
	return CUDA_CHECK_LAUNCH("k_flash");
}

int arl_res_ln(enum fp_dtype dt, const void *x, const void *o,
			  const void *gamma, const void *beta, void *y, long M, long N,
			  cudaStream_t st)
{
	if (N > (long)RL_THREADS * RL_PER)
		return error("attn_res_ln: rows of %ld are wider than the residual+LayerNorm "
			     "kernel's %d", N, RL_THREADS * RL_PER);
	if (dt == FP_BF16)
		k_res_ln<<<(unsigned)M, RL_THREADS, 0, st>>>(
			(const __nv_bfloat16 *)x, (const __nv_bfloat16 *)o,
			(const __nv_bfloat16 *)gamma, (const __nv_bfloat16 *)beta,
			(__nv_bfloat16 *)y, (int)N);
	else
		k_res_ln<<<(unsigned)M, RL_THREADS, 0, st>>>(
			(const float *)x, (const float *)o, (const float *)gamma,
			(const float *)beta, (float *)y, (int)N);
	return CUDA_CHECK_LAUNCH("k_res_ln");
}

template <typename T, bool CAUSAL>
static int fused_launch(const void *Q, const void *K, const void *V, const void *x,
			const void *gamma, const void *beta, void *y, long B, long H,
			long S, int cluster, size_t smem, cudaStream_t st)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute attr;
	const unsigned grid = (unsigned)(B * ((S + ARL_BQ - 1) / ARL_BQ) * cluster);

	cluster_config(&cfg, &attr, (unsigned)cluster, grid, FL_THREADS, smem, st);
	return CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_fused<T, CAUSAL>, (const T *)Q,
					     (const T *)K, (const T *)V, (const T *)x,
					     (const T *)gamma, (const T *)beta, (T *)y,
					     (int)B, (int)H, (int)S,
					     scale_log2(ARL_FLASH_D)));
}

int arl_fused(enum fp_dtype dt, int causal, const void *Q, const void *K,
			 const void *V, const void *x, const void *gamma,
			 const void *beta, void *y, long B, long H, long S, int cluster,
			 cudaStream_t st)
{
	const int hpc = (int)((H + cluster - 1) / cluster);
	const size_t smem = arl_fused_smem(dt, hpc);

	if (cluster < 1 || cluster > ARL_MAX_CLUSTER || hpc > ARL_MAX_HEADS_CTA)
		return error("attn_res_ln: fused: clusters of %d cannot hold H=%ld heads "
			     "(at most %d a CTA, %d CTAs)", cluster, H,
			     ARL_MAX_HEADS_CTA, ARL_MAX_CLUSTER);
	if (arl_prepare())
		return -1;
	if (dt == FP_BF16)
		return causal ? fused_launch<__nv_bfloat16, true>(Q, K, V, x, gamma, beta, y,
								  B, H, S, cluster, smem, st)
			      : fused_launch<__nv_bfloat16, false>(Q, K, V, x, gamma, beta, y,
								   B, H, S, cluster, smem, st);
	return causal ? fused_launch<float, true>(Q, K, V, x, gamma, beta, y, B, H, S,
						  cluster, smem, st)
		      : fused_launch<float, false>(Q, K, V, x, gamma, beta, y, B, H, S,
						   cluster, smem, st);
}
