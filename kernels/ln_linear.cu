// ln_linear.cu - LayerNorm followed by a Linear layer, forward (ln_linear_fwd) and backward (ln_linear_bwd), fp32 and bf16 (bf16 storage, fp32 accumulation).
//
// Read top to bottom as in llm.c dev/cuda: the double-precision CPU
// references and input profiles, the kernels (simplest first, each saying
// what it changes over the previous one), cuBLASLt plumbing, the launchers,
// then the two workload definitions.
//
// y = LN(x; gamma, beta) * W^T + b, x: M x K, W: N x K, y: M x N (row-major).
//
// Napkin math (es = 4 fp32 / 2 bf16):
//   forward   FLOPs 2*M*N*K (the GEMM) + 8*M*K (LayerNorm) + M*N (bias);
//             min bytes es * (M*K + 2*K + N*K + N + M*N).
//   backward  FLOPs 4*M*N*K (dW and dh GEMMs) + ~18*M*K + M*N;
//             min bytes es * (M*N + M*K + 2*K + N*K)       read dy, x, g, b, W
//                     + es * (M*K + 2*K + N*K + N)         write dx, dg, db, dW, db
// At M = 16384 on an H100 (3.0 TB/s, 770 TFLOP/s bf16 GEMM, 52 TFLOP/s fp32
// SGEMM): K = 768, N = 256 bf16 is 6.4 GFLOP over 34 MB: 8 us of tensor
// work against 11 us of bytes, so the LayerNorm's extra pass over x (25 MB,
// 8 us) is what fusion removes; K = 4096, N = 16384 bf16 is 2.2 TFLOP: about
// 2.9 ms of GEMM, and the LayerNorm (134 MB, 45 us standalone) is at most a
// 1.5 % ceiling on what fusion can gain there.
//
// Numerics shared by every kernel here (the argument the offset profile
// tests): each row is shifted by its first element c = x[0] before any sum,
// x~ = x - c. For rows of mean 1e3 and unit spread x - c is exact in fp32
// (Sterbenz: both within a factor of two) and of the order of the spread, so
// the shifted sums sum(x~) and sum(x~^2) carry no cancellation: mean - c =
// sum(x~)/K, var = sum(x~^2)/K - (mean - c)^2 with both terms O(spread^2).
// An unshifted one-pass variance would subtract two numbers of 1e6 to get 1,
// losing six of fp32's seven digits. The normalised value is formed as
// (x~ - (mean - c)) * rstd, never as x - mean with a rounded mean. The
// unfused backward therefore saves three floats per row (c, mean - c, rstd)
// rather than mean and rstd.
//
// The fused forward and FlashNorm (arXiv 2407.09577). FlashNorm folds the
// LayerNorm's affine part into the Linear once per weight:
//     W' = W o gamma (column k of W scaled by gamma_k, rounded to the dtype)
//     b' = W beta + b,    s = rowsum(W')  (from the rounded W', so that the
//                                          mean term cancels what the GEMM
//                                          really multiplied)
// and then y = rstd * (x W'^T - mean * s) + b'. The GEMM streams the raw x;
// mean and rstd are per-row scalars applied in the epilogue, so the
// normalised tensor exists nowhere. Its weakness is the same cancellation:
// with mean 1e3 every x W'^T entry is ~1e3 * |s| and the answer, after
// subtracting mean * s, is ~1e3 times smaller, so the GEMM's fp32 rounding
// (relative ~1e-7 * sqrt(K)) is amplified 1e3 times: ~6e-3 at K = 4096,
// over the 1e-4 fp32 tolerance. The fused kernel here applies the same
// per-row shift in its load path instead: it multiplies x~ = x - c (exact)
// by W', sums x~ and x~^2 from the very tiles it multiplies (no extra pass
// over x), and finishes with
//     y = rstd * (x~ W'^T - (mean - c) * s) + b'
// where (mean - c) is O(spread): no cancellation, at the price of one
// subtraction per loaded x element, which the prologue route (normalise in
// the load path, needs mean and rstd before the first tile) also pays. In
// bf16, x~ is rounded to bf16 for the tensor cores: a relative error of
// 2^-9 on values of the order of the spread, the same as rounding the
// normalised x, which the unfused form does too.
//
// The weight fold is preparation, done once per weight in create() (and
// again in check(), which uploads new weights), timed there and printed on
// stderr when FUSEPROF_VERBOSE is set; it is not part of a timed launch.
//
// The backward recomputes mean and rstd from x: its inputs are dy, x,
// gamma, beta, W (no saved statistics), the way a recomputing (activation
// checkpointing) training step runs.
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include "error.h"
#include "kutil.h"
#include "ln_linear.h"
#include "util.h"

// ---------------------------------------------------------------------------
// CPU reference (double), input profiles and check sampling

extern "C" void lnl_gen_inputs(enum lnl_profile p, uint64_t seed, long M,
			       long K, long N, double *x, double *gamma,
			       double *beta, double *W, double *b, double *dy)
{
	struct fp_rng g;

	// One stream per input, so skipping one changes none of the others.
	rng_seed(&g, seed);
	for (long i = 0; i < M; i++) {
		double c = p == LNL_CONSTANT ? rng_normal(&g) : 0;

		for (long k = 0; k < K; k++) {
			double z = rng_normal(&g);

			x[i * K + k] = p == LNL_OFFSET ? LNL_OFFSET_MEAN + z
				: p == LNL_CONSTANT ? c + 1e-3 * z : z;
		}
	}
	rng_seed(&g, seed ^ 0x243f6a8885a308d3ull);
	for (long k = 0; k < K; k++) {
		double gv = 1 + 0.1 * rng_normal(&g), bv = 0.1 * rng_normal(&g);

		if (gamma)
			gamma[k] = gv;
		if (beta)
			beta[k] = bv;
	}
	if (W) {
		rng_seed(&g, seed ^ 0x13198a2e03707344ull);
		for (long i = 0; i < N * K; i++)
			W[i] = rng_normal(&g) / sqrt((double)K);
	}
	if (b) {
		rng_seed(&g, seed ^ 0xa4093822299f31d0ull);
		for (long n = 0; n < N; n++)
			b[n] = 0.1 * rng_normal(&g);
	}
	if (dy) {
		rng_seed(&g, seed ^ 0x082efa98ec4e6c89ull);
		for (long i = 0; i < M * N; i++)
			dy[i] = rng_normal(&g);
	}
}

extern "C" void lnl_layernorm_row_ref(const double *x, long K,
				      const double *gamma, const double *beta,
				      double *xhat, double *h, double *mean,
				      double *rstd)
{
	double m = 0, v = 0, r;

	for (long k = 0; k < K; k++)
		m += x[k];
	m /= (double)K;
	for (long k = 0; k < K; k++)
		v += (x[k] - m) * (x[k] - m);
	r = 1 / sqrt(v / (double)K + LNL_EPS);
	for (long k = 0; k < K; k++) {
		double xh = (x[k] - m) * r;

		if (xhat)
			xhat[k] = xh;
		if (h)
			h[k] = xh * gamma[k] + beta[k];
	}
	*mean = m;
	*rstd = r;
}

// One output row: h (K scratch doubles) then y_row = h W^T + b.
static void fwd_ref_row(const double *x, const double *gamma,
			const double *beta, const double *W, const double *b,
			double *y, long K, long N, double *h)
{
	double m, r;

	lnl_layernorm_row_ref(x, K, gamma, beta, NULL, h, &m, &r);
	for (long n = 0; n < N; n++) {
		const double *w = W + n * K;
		double acc = b[n];

		for (long k = 0; k < K; k++)
			acc += h[k] * w[k];
		y[n] = acc;
	}
}

extern "C" void lnl_fwd_ref(const double *x, const double *gamma,
			    const double *beta, const double *W,
			    const double *b, double *y, long M, long K, long N)
{
	double *h = (double *)xmalloc((size_t)K * sizeof *h);

	for (long i = 0; i < M; i++)
		fwd_ref_row(x + i * K, gamma, beta, W, b, y + i * N, K, N, h);
	free(h);
}

extern "C" void lnl_bwd_ref(const double *x, const double *gamma,
			    const double *beta, const double *W,
			    const double *dy, double *dx, double *dgamma,
			    double *dbeta, double *dW, double *db, long M,
			    long K, long N)
{
	double *xh = (double *)xmalloc((size_t)K * sizeof *xh);
	double *h = (double *)xmalloc((size_t)K * sizeof *h);
	double *dh = (double *)xmalloc((size_t)K * sizeof *dh);

	memset(dgamma, 0, (size_t)K * sizeof *dgamma);
	memset(dbeta, 0, (size_t)K * sizeof *dbeta);
	memset(dW, 0, (size_t)(N * K) * sizeof *dW);
	memset(db, 0, (size_t)N * sizeof *db);
	for (long i = 0; i < M; i++) {
		const double *dyr = dy + i * N;
		double m, r, sg = 0, sgx = 0;

		lnl_layernorm_row_ref(x + i * K, K, gamma, beta, xh, h, &m, &r);
		// dh = dy W; dW += dy^T h; db += dy
		for (long k = 0; k < K; k++)
			dh[k] = 0;
		for (long n = 0; n < N; n++) {
			const double *w = W + n * K;
			double *dw = dW + n * K;

			db[n] += dyr[n];
			for (long k = 0; k < K; k++) {
				dh[k] += dyr[n] * w[k];
				dw[k] += dyr[n] * h[k];
			}
		}
		// LayerNorm backward: g = dh * gamma is the gradient at xhat;
		// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
		for (long k = 0; k < K; k++) {
			double gk = dh[k] * gamma[k];

			dgamma[k] += dh[k] * xh[k];
			dbeta[k] += dh[k];
			sg += gk;
			sgx += gk * xh[k];
		}
		sg /= (double)K;
		sgx /= (double)K;
		for (long k = 0; k < K; k++)
			dx[i * K + k] = r * (dh[k] * gamma[k] - sg - xh[k] * sgx);
	}
	free(xh);
	free(h);
	free(dh);
}

extern "C" long lnl_sample(long n, double cost, double budget, long *idx)
{
	long s;

	if ((double)n * cost <= budget) {
		for (long i = 0; idx && i < n; i++)
			idx[i] = i;
		return n;
	}
	s = (long)(budget / (cost > 1 ? cost : 1));
	s = s < 16 ? 16 : s > 64 ? 64 : s;
	if (s > n)
		s = n;
	// i * (n - 1) / (s - 1) is strictly increasing for s <= n.
	for (long i = 0; idx && i < s; i++)
		idx[i] = s == 1 ? 0 : (long)((double)i * (double)(n - 1) / (double)(s - 1) + 0.5);
	return s;
}

// ---------------------------------------------------------------------------
// Kernels

#define WARP 32

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v)
{
	return __float2bfloat16_rn(v);
}

__device__ __forceinline__ float warp_sum(float v)
{
	for (int o = WARP / 2; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

// Row statistics from shifted sums (see the top of the file): returns
// mean - c in *mt and rstd in *rs.
__device__ __forceinline__ void shifted_stats(float s1, float s2, int K,
					      float *mt, float *rs)
{
	float m = s1 / (float)K, var = fmaxf(s2 / (float)K - m * m, 0.f);

	*mt = m;
	*rs = rsqrtf(var + (float)LNL_EPS);
}

// --- forward, naive: one thread per row computes the row's statistics (two
// passes over x) and every output of the row, renormalising x for each of
// the N outputs. W is read by every thread in the same order, so a warp's
// loads broadcast; x rows are read with a stride of K between lanes. The
// teaching version: its roofline point shows what fusing without tiling
// costs. (M = 16384, K = 768, N = 256: 3.2 G multiply-adds on 16384 threads,
// each a dependent chain of 196608 FMAs.)
template <typename T>
__global__ void k_fwd_naive(const T *__restrict__ x, const T *__restrict__ gamma,
			    const T *__restrict__ beta, const T *__restrict__ W,
			    const T *__restrict__ b, T *__restrict__ y, long M,
			    int K, int N)
{
	long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
	const T *xr = x + i * K;
	float c, s1 = 0, s2 = 0, mt, rs;

	if (i >= M)
		return;
	c = to_f(xr[0]);
	for (int k = 0; k < K; k++) {
		float v = to_f(xr[k]) - c;

		s1 += v;
		s2 += v * v;
	}
	shifted_stats(s1, s2, K, &mt, &rs);
	for (int n = 0; n < N; n++) {
		const T *w = W + (long)n * K;
		float acc = 0;

		for (int k = 0; k < K; k++) {
			float h = ((to_f(xr[k]) - c) - mt) * rs * to_f(gamma[k]) +
				  to_f(beta[k]);
			acc = fmaf(h, to_f(w[k]), acc);
		}
		y[i * N + n] = from_f<T>(acc + to_f(b[n]));
	}
}

// --- LayerNorm, one warp per row: shifted sums in one pass, the normalised
// row h = xhat * gamma + beta written in a second pass (the row is re-read
// from L1/L2, not DRAM: 4 rows of at most 16 KB per block). Optionally saves
// (c, mean - c, rstd) per row for the backward. The unfused forward's first
// kernel and the unfused backward's recompute. Scalar loads and stores: at
// 16384 x 4096 bf16 it takes ~165 us of the unfused forward's 232 us against
// a 90 us floor (268 MB); 16-byte accesses are the next step.
#define LN_ROWS 4
template <typename T>
__global__ void k_layernorm(const T *__restrict__ x, const T *__restrict__ gamma,
			    const T *__restrict__ beta, T *__restrict__ h,
			    float *__restrict__ stats, long M, int K)
{
	long i = blockIdx.x * (long)LN_ROWS + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	const T *xr = x + i * K;
	float c, s1 = 0, s2 = 0, mt, rs;

	if (i >= M)
		return;
	c = to_f(xr[0]);
	for (int k = lane; k < K; k += WARP) {
		float v = to_f(xr[k]) - c;

		s1 += v;
		s2 += v * v;
	}
	shifted_stats(warp_sum(s1), warp_sum(s2), K, &mt, &rs);
	if (h) {
		T *hr = h + i * K;

		for (int k = lane; k < K; k += WARP)
			hr[k] = from_f<T>(((to_f(xr[k]) - c) - mt) * rs *
					  to_f(gamma[k]) + to_f(beta[k]));
	}
	if (stats && lane == 0) {
		stats[i] = c;
		stats[M + i] = mt;
		stats[2 * M + i] = rs;
	}
}

// --- FlashNorm weight fold, one warp per output feature n:
// W'[n] = round(W[n] o gamma), s[n] = sum of the rounded W'[n],
// b'[n] = W[n] . beta + b[n]. Preparation (create/check), not timed.
template <typename T>
__global__ void k_fold(const T *__restrict__ W, const T *__restrict__ gamma,
		       const T *__restrict__ beta, const T *__restrict__ b,
		       T *__restrict__ Wf, float *__restrict__ sW,
		       float *__restrict__ bf, int N, int K)
{
	long n = blockIdx.x * (long)(blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	float s = 0, bb = 0;

	if (n >= N)
		return;
	for (int k = lane; k < K; k += WARP) {
		float w = to_f(W[n * K + k]);
		T wf = from_f<T>(w * to_f(gamma[k]));

		Wf[n * K + k] = wf;
		s += to_f(wf);
		bb = fmaf(w, to_f(beta[k]), bb);
	}
	s = warp_sum(s);
	bb = warp_sum(bb);
	if (lane == 0) {
		sW[n] = s;
		bf[n] = bb + to_f(b[n]);
	}
}

// --- forward, fused: one kernel, a 128 x 128 tile of y per block of 256
// threads, K walked in steps of 32. Each step's x and W' tiles go global ->
// registers -> shared memory; on the way every x element is shifted by its
// row's pivot c and its shifted value summed into the row's statistics, so
// the statistics cost no extra pass over x and the normalised x exists only
// as the shifted tile in shared memory. The next step's tiles are loaded into
// registers while the current one is multiplied. bf16 multiplies on tensor
// cores (WMMA 16x16x16, fp32 accumulation; 8 warps as 2 x 4, 64 x 32 each);
// fp32 on the FMA pipes (8 x 8 outputs per thread; plain fp32, no TF32).
// Blocks walk the tiles in groups of 8 row tiles so that a wave's x and W'
// tiles stay in L2 when W' is larger than L2.
// A first version: no cp.async/TMA, no multi-stage pipeline, single-buffered
// shared memory, element-wise shared-memory stores, scalar epilogue stores;
// ~180 registers a thread, so one block (8 warps) per SM.
// Measured (H100, fpbench medians, 2026-11-21; cuBLAS Linear alone and
// eager PyTorch from kernels/ln_linear-torch.py on the same machine):
//   M = 16384        fused     unfused   Linear alone  eager LN+Linear
//   bf16 768->256    121 us    46.0 us   22.6 us       55.4 us
//   bf16 4096->256   559 us    232 us    66.8 us       182.5 us
//   bf16 4096->16384 32.8 ms   2.91 ms   3.23 ms       3.16 ms
//   fp32 768->256    213 us    179 us    138.8 us      193.6 us
//   fp32 4096->256   1074 us   967 us    684.9 us      944.8 us
//   fp32 4096->16384 67.3 ms   42.4 ms   42.1 ms       44.6 ms
// so it is correct (every profile, awkward shapes, compute-sanitizer clean)
// but bf16 runs at ~55-67 TFLOP/s, an order of magnitude under the tensor
// cores, and fp32 at ~33 TFLOP/s against SGEMM's ~52. Its DRAM bytes are
// modelled at min bytes for N = 256 (the two column tiles of a row block run
// together, so x comes from DRAM once; W' stays in L2) but not yet measured
// with counters. Next: a Hopper mainloop (TMA loads of raw x and W' into a
// 3-4 stage shared-memory ring, wgmma with A taken from registers so that
// the per-row shift and the shifted sums are applied to the A fragments
// after ldmatrix, BN = 256 so that a block owns whole rows at N = 256 and
// reads x exactly once); for fp32, a CUTLASS-style SIMT mainloop (cp.async
// double buffering, 128 x 128 x 8 tiles, vectorised shared-memory reads).
#define FB_M 128
#define FB_N 128
#define FB_K 32
#define F_THREADS 256
#define F_GROUP 8
#define F_ALD (FB_K + 8)   // bf16 tile row stride: WMMA wants a multiple of 8
#define F_TLD (FB_M + 4)   // fp32 transposed tile row stride

template <typename T, int V>
__device__ __forceinline__ void load_chunk(const T *__restrict__ src, long rows,
					   int K, long r, int k, float *out)
{
	// With V > 1, K % V == 0 and k % V == 0: a chunk is all in or all out.
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

template <typename T, int V>
__global__ void __launch_bounds__(F_THREADS)
k_fwd_fused(const T *__restrict__ x, const T *__restrict__ Wf,
	    const float *__restrict__ sW, const float *__restrict__ bf,
	    T *__restrict__ y, long M, int K, int N)
{
	constexpr bool BF = sizeof(T) == 2;
	constexpr int TPR = FB_K / V;          // threads per tile row
	constexpr int RPP = F_THREADS / TPR;   // tile rows per pass
	constexpr int NP = FB_M / RPP;         // passes (rows per thread)
	constexpr int SMEM = BF ? 2 * FB_M * F_ALD * 2 + 8 * 256 * 4
				: 2 * FB_K * F_TLD * 4;
	__shared__ __align__(128) unsigned char smem[SMEM];
	__shared__ float st_mt[FB_M], st_rs[FB_M];

	const int t = threadIdx.x, rr = t / TPR, kk = (t % TPR) * V;
	const long tiles_m = (M + FB_M - 1) / FB_M, tiles_n = (N + FB_N - 1) / FB_N;
	const long per_group = F_GROUP * tiles_n, pid = blockIdx.x;
	const long first_m = pid / per_group * F_GROUP;
	const long gsz = tiles_m - first_m < F_GROUP ? tiles_m - first_m : F_GROUP;
	const long m0 = (first_m + pid % per_group % gsz) * FB_M;
	const long n0 = pid % per_group / gsz * FB_N;

	float piv[NP], s1[NP], s2[NP], xa[NP][V], wb[NP][V];

	for (int p = 0; p < NP; p++) {
		long r = m0 + rr + p * RPP;

		piv[p] = r < M ? to_f(x[r * K]) : 0.f;
		s1[p] = s2[p] = 0.f;
	}
	for (int p = 0; p < NP; p++) {
		load_chunk<T, V>(x, M, K, m0 + rr + p * RPP, kk, xa[p]);
		load_chunk<T, V>(Wf, N, K, n0 + rr + p * RPP, kk, wb[p]);
	}

	// bf16: WMMA accumulators; fp32: 8 x 8 per thread.
	using namespace nvcuda;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[BF ? 4 : 1][BF ? 2 : 1];
	float facc[BF ? 1 : 8][BF ? 1 : 8];
	const int warp = t / WARP, lane = t % WARP;
	const int wm = warp / 4, wn = warp % 4;  // bf16 warp tile 64 x 32
	const int ty = t / 16, tx = t % 16;      // fp32 thread tile

	if constexpr (BF) {
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 2; j++)
				wmma::fill_fragment(acc[i][j], 0.f);
	} else {
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < 8; j++)
				facc[i][j] = 0.f;
	}

	for (int k0 = 0; k0 < K; k0 += FB_K) {
		__syncthreads();  // the previous step's multiplies are done
		for (int p = 0; p < NP; p++) {
			int r = rr + p * RPP;
			long gr = m0 + r;

			for (int e = 0; e < V; e++) {
				int k = k0 + kk + e;
				float v = gr < M && k < K ? xa[p][e] - piv[p] : 0.f;

				s1[p] += v;
				s2[p] = fmaf(v, v, s2[p]);
				if constexpr (BF) {
					__nv_bfloat16 *As = (__nv_bfloat16 *)smem;
					__nv_bfloat16 *Bs = As + FB_M * F_ALD;

					As[r * F_ALD + kk + e] = __float2bfloat16_rn(v);
					Bs[r * F_ALD + kk + e] = __float2bfloat16_rn(wb[p][e]);
				} else {
					float *As = (float *)smem, *Bs = As + FB_K * F_TLD;

					As[(kk + e) * F_TLD + r] = v;
					Bs[(kk + e) * F_TLD + r] = wb[p][e];
				}
			}
		}
		__syncthreads();
		if (k0 + FB_K < K) {
			for (int p = 0; p < NP; p++) {
				load_chunk<T, V>(x, M, K, m0 + rr + p * RPP, k0 + FB_K + kk, xa[p]);
				load_chunk<T, V>(Wf, N, K, n0 + rr + p * RPP, k0 + FB_K + kk, wb[p]);
			}
		}
		if constexpr (BF) {
			const __nv_bfloat16 *As = (const __nv_bfloat16 *)smem;
			const __nv_bfloat16 *Bs = As + FB_M * F_ALD;

			for (int ks = 0; ks < FB_K; ks += 16) {
				wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16,
					       wmma::row_major> a[4];
				wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16,
					       wmma::col_major> bfr[2];

				for (int i = 0; i < 4; i++)
					wmma::load_matrix_sync(a[i], As + (wm * 64 + i * 16) * F_ALD + ks, F_ALD);
				for (int j = 0; j < 2; j++)
					wmma::load_matrix_sync(bfr[j], Bs + (wn * 32 + j * 16) * F_ALD + ks, F_ALD);
#pragma unroll
				for (int i = 0; i < 4; i++)
#pragma unroll
					for (int j = 0; j < 2; j++)
						wmma::mma_sync(acc[i][j], a[i], bfr[j], acc[i][j]);
			}
		} else {
			const float *As = (const float *)smem, *Bs = As + FB_K * F_TLD;

#pragma unroll 4
			for (int k = 0; k < FB_K; k++) {
				float av[8], bv[8];

				for (int i = 0; i < 8; i++)
					av[i] = As[k * F_TLD + ty + 16 * i];
				for (int j = 0; j < 8; j++)
					bv[j] = Bs[k * F_TLD + tx + 16 * j];
				for (int i = 0; i < 8; i++)
					for (int j = 0; j < 8; j++)
						facc[i][j] = fmaf(av[i], bv[j], facc[i][j]);
			}
		}
	}

	// Row statistics: the TPR threads of a tile row are adjacent lanes.
	for (int p = 0; p < NP; p++) {
		for (int o = TPR / 2; o > 0; o >>= 1) {
			s1[p] += __shfl_xor_sync(0xffffffffu, s1[p], o);
			s2[p] += __shfl_xor_sync(0xffffffffu, s2[p], o);
		}
		if (t % TPR == 0)
			shifted_stats(s1[p], s2[p], K, &st_mt[rr + p * RPP],
				      &st_rs[rr + p * RPP]);
	}
	__syncthreads();

	// Epilogue: y = rstd * (acc - (mean - c) * s) + b'.
	if constexpr (BF) {
		float *scratch = (float *)(smem + 2 * FB_M * F_ALD * 2) + warp * 256;

#pragma unroll
		for (int i = 0; i < 4; i++) {
#pragma unroll
			for (int j = 0; j < 2; j++) {
				wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
				__syncwarp();
				for (int q = 0; q < 8; q++) {
					int rl = wm * 64 + i * 16 + q * 2 + lane / 16;
					long row = m0 + rl, col = n0 + wn * 32 + j * 16 + lane % 16;
					float v = scratch[(q * 2 + lane / 16) * 16 + lane % 16];

					if (row < M && col < N)
						y[row * N + col] = from_f<T>(st_rs[rl] *
							(v - st_mt[rl] * sW[col]) + bf[col]);
				}
				__syncwarp();
			}
		}
	} else {
		for (int i = 0; i < 8; i++) {
			int rl = ty + 16 * i;
			long row = m0 + rl;

			if (row >= M)
				continue;
			for (int j = 0; j < 8; j++) {
				long col = n0 + tx + 16 * j;

				if (col < N)
					y[row * N + col] = from_f<T>(st_rs[rl] *
						(facc[i][j] - st_mt[rl] * sW[col]) + bf[col]);
			}
		}
	}
}

// --- backward, naive: one thread per row. Statistics as in k_fwd_naive;
// dh = dy_row W recomputed for each k (two passes: sums, then dx); every
// parameter gradient (dgamma, dbeta, dW, db) accumulated with fp32 atomics
// into a zeroed fp32 buffer, converted to the dtype afterwards. Each thread
// starts its k loops at its own row index, so the 32 lanes of a warp add to
// (and read W at) 32 adjacent addresses instead of queueing on one. The
// teaching version:
// M*N*K atomics and recomputation make it slow by design.
template <typename T>
__global__ void k_bwd_naive(const T *__restrict__ x, const T *__restrict__ gamma,
			    const T *__restrict__ beta, const T *__restrict__ W,
			    const T *__restrict__ dy, T *__restrict__ dx,
			    float *__restrict__ acc, long M, int K, int N)
{
	long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
	float *adW = acc, *adg = acc + (long)N * K, *adb = adg + K, *adbias = adb + K;
	const T *xr = x + i * K, *dyr = dy + i * N;
	float c, s1 = 0, s2 = 0, mt, rs, sg = 0, sgx = 0;

	if (i >= M)
		return;
	c = to_f(xr[0]);
	for (int k = 0; k < K; k++) {
		float v = to_f(xr[k]) - c;

		s1 += v;
		s2 += v * v;
	}
	shifted_stats(s1, s2, K, &mt, &rs);
	for (int nn = 0; nn < N; nn++) {
		int n = (int)((nn + i) % N);

		atomicAdd(&adbias[n], to_f(dyr[n]));
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int kk = 0; kk < K; kk++) {
			int k = (int)((kk + i) % K);
			float dh = 0, xh = ((to_f(xr[k]) - c) - mt) * rs, g;

			for (int n = 0; n < N; n++)
				dh = fmaf(to_f(dyr[n]), to_f(W[(long)n * K + k]), dh);
			g = dh * to_f(gamma[k]);
			if (pass == 0) {
				atomicAdd(&adg[k], dh * xh);
				atomicAdd(&adb[k], dh);
				sg += g;
				sgx += g * xh;
			} else {
				dx[i * K + k] = from_f<T>(rs * (g - sg / K - xh * (sgx / K)));
			}
		}
	}
	for (int n = 0; n < N; n++) {
		float d = to_f(dyr[n]);

		for (int kk = 0; kk < K; kk++) {
			int k = (int)((kk + i) % K);
			float h = ((to_f(xr[k]) - c) - mt) * rs * to_f(gamma[k]) +
				  to_f(beta[k]);

			atomicAdd(&adW[(long)n * K + k], d * h);
		}
	}
}

template <typename T>
__global__ void k_f32_to(const float *__restrict__ src, T *__restrict__ dst, long n)
{
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
	     i += (long)gridDim.x * blockDim.x)
		dst[i] = from_f<T>(src[i]);
}

// --- backward, LayerNorm part of the unfused form: one warp per row, given
// dh (fp32, from the dh = dy W GEMM) and the saved (c, mean - c, rstd):
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dh * gamma.
template <typename T>
__global__ void k_ln_bwd_dx(const float *__restrict__ dh, const T *__restrict__ x,
			    const T *__restrict__ gamma,
			    const float *__restrict__ stats, T *__restrict__ dx,
			    long M, int K)
{
	long i = blockIdx.x * (long)LN_ROWS + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	float c, mt, rs, sg = 0, sgx = 0;

	if (i >= M)
		return;
	c = stats[i], mt = stats[M + i], rs = stats[2 * M + i];
	for (int k = lane; k < K; k += WARP) {
		float xh = ((to_f(x[i * K + k]) - c) - mt) * rs;
		float g = dh[i * K + k] * to_f(gamma[k]);

		sg += g;
		sgx += g * xh;
	}
	sg = warp_sum(sg) / K;
	sgx = warp_sum(sgx) / K;
	for (int k = lane; k < K; k += WARP) {
		float xh = ((to_f(x[i * K + k]) - c) - mt) * rs;
		float g = dh[i * K + k] * to_f(gamma[k]);

		dx[i * K + k] = from_f<T>(rs * (g - sg - xh * sgx));
	}
}

// --- column sums over rows, deterministic (no atomics): blocks of 32
// columns x CS_ROWS rows write per-chunk partials, a second kernel adds the
// chunks in order. DB mode sums dy (db); else sums dh * xhat and dh
// (dgamma, dbeta) with xhat recomputed from x and the saved statistics.
#define CS_ROWS 128
template <typename T, bool DB>
__global__ void k_colsum_part(const T *__restrict__ dy, const float *__restrict__ dh,
			      const T *__restrict__ x, const float *__restrict__ stats,
			      float *__restrict__ part, long M, int C)
{
	__shared__ float sa[8][33], sb[8][33];
	int tx = threadIdx.x, ty = threadIdx.y;
	long c = blockIdx.x * 32L + tx, chunk = blockIdx.y;
	long r0 = chunk * CS_ROWS, r1 = r0 + CS_ROWS < M ? r0 + CS_ROWS : M;
	long R = (M + CS_ROWS - 1) / CS_ROWS;
	float a = 0, b = 0;

	if (c < C) {
		for (long r = r0 + ty; r < r1; r += 8) {
			if constexpr (DB) {
				a += to_f(dy[r * C + c]);
			} else {
				float d = dh[r * C + c];
				float xh = ((to_f(x[r * C + c]) - stats[r]) - stats[M + r]) *
					   stats[2 * M + r];

				a = fmaf(d, xh, a);
				b += d;
			}
		}
	}
	sa[ty][tx] = a;
	sb[ty][tx] = b;
	__syncthreads();
	if (ty == 0 && c < C) {
		for (int j = 1; j < 8; j++) {
			a += sa[j][tx];
			b += sb[j][tx];
		}
		part[chunk * C + c] = a;
		if (!DB)
			part[(R + chunk) * C + c] = b;
	}
}

template <typename T>
__global__ void k_colsum_final(const float *__restrict__ part, long R, int C,
			       T *__restrict__ out0, T *__restrict__ out1)
{
	long c = blockIdx.x * (long)blockDim.x + threadIdx.x;
	float a = 0, b = 0;

	if (c >= C)
		return;
	for (long r = 0; r < R; r++) {
		a += part[r * C + c];
		if (out1)
			b += part[(R + r) * C + c];
	}
	out0[c] = from_f<T>(a);
	if (out1)
		out1[c] = from_f<T>(b);
}

// --- backward, fused LayerNorm part: one pass over dh and x per row gives
// dx and the row's dgamma/dbeta contributions, which each warp adds into
// its own rows of shared memory (lane l owns columns l, l + 32, ...: no two
// threads add to one address). At the end the block adds its warps' rows in
// a fixed order and writes one partial per block; k_colsum_final adds the
// blocks in order. Deterministic, no atomics, and dh and x are read once
// (the second pass over a row hits L1) where the unfused form reads them
// twice. Blocks walk rows with a grid stride; the grid is fixed per shape
// (LNB_BLOCKS), so the summation order is too.
// Measured slower than the unfused pair it replaces (whole backward, bf16,
// M = 16384: 290 vs 201 us at 768->256, 2020 vs 905 us at 4096->256): the
// per-warp shared rows take 2*K floats, so at K = 4096 one block of 4 warps
// fills an SM's shared memory and each SM has 4 warps walking rows one after
// another, far too little in flight. Next: split the columns over blocks
// (each block owns a slice of K for many rows, with the row sums of g and
// g*xhat from a small pre-pass or from the dh GEMM's epilogue), keeping the
// fixed-order reduction.
#define LNB_BLOCKS 264      // 2 per H100 SM
#define LNB_SMEM_MAX (196 * 1024)
template <typename T>
__global__ void k_ln_bwd_fused(const float *__restrict__ dh, const T *__restrict__ x,
			       const T *__restrict__ gamma,
			       const float *__restrict__ stats, T *__restrict__ dx,
			       float *__restrict__ part, long M, int K)
{
	extern __shared__ float sp[];  // [warps][2][K]
	const int warps = blockDim.x / WARP, w = threadIdx.x / WARP, lane = threadIdx.x % WARP;
	float *pg = sp + (size_t)w * 2 * K, *pb = pg + K;

	for (int k = lane; k < K; k += WARP)
		pg[k] = pb[k] = 0.f;
	for (long i = blockIdx.x * (long)warps + w; i < M; i += (long)gridDim.x * warps) {
		const float *dr = dh + i * K;
		const T *xr = x + i * K;
		float c = stats[i], mt = stats[M + i], rs = stats[2 * M + i];
		float sg = 0, sgx = 0;

		for (int k = lane; k < K; k += WARP) {
			float d = dr[k], xh = ((to_f(xr[k]) - c) - mt) * rs;
			float g = d * to_f(gamma[k]);

			pg[k] = fmaf(d, xh, pg[k]);
			pb[k] += d;
			sg += g;
			sgx = fmaf(g, xh, sgx);
		}
		sg = warp_sum(sg) / K;
		sgx = warp_sum(sgx) / K;
		for (int k = lane; k < K; k += WARP) {
			float xh = ((to_f(xr[k]) - c) - mt) * rs;

			dx[i * K + k] = from_f<T>(rs * (dr[k] * to_f(gamma[k]) - sg - xh * sgx));
		}
	}
	__syncthreads();
	for (int k = threadIdx.x; k < K; k += blockDim.x) {
		float a = 0, b = 0;

		for (int j = 0; j < warps; j++) {
			a += sp[(size_t)j * 2 * K + k];
			b += sp[(size_t)j * 2 * K + K + k];
		}
		part[(long)blockIdx.x * K + k] = a;
		part[(long)(gridDim.x + blockIdx.x) * K + k] = b;
	}
}

// Warps per block of k_ln_bwd_fused for rows of K (its shared memory is
// warps * 2 * K floats), or 0 when even one warp's rows do not fit: the
// fused backward then takes the unfused LayerNorm path.
static int lnb_warps(long K)
{
	for (int w = 4; w >= 1; w /= 2)
		if ((long)w * 2 * K * 4 <= LNB_SMEM_MAX)
			return w;
	return 0;
}

// Blocks of k_ln_bwd_fused: fixed per shape, so is the summation order.
static long lnb_blocks(long M, long K)
{
	long w = lnb_warps(K), b = w ? (M + w - 1) / w : 1;

	return b < LNB_BLOCKS ? b : LNB_BLOCKS;
}

// Raise k_ln_bwd_fused's dynamic shared memory limit, once per process.
static int lnb_smem_setup(void)
{
	static int done;

	if (done)
		return 0;
	if (CUDA_CHECK(cudaFuncSetAttribute(k_ln_bwd_fused<float>,
			cudaFuncAttributeMaxDynamicSharedMemorySize, LNB_SMEM_MAX)) ||
	    CUDA_CHECK(cudaFuncSetAttribute(k_ln_bwd_fused<__nv_bfloat16>,
			cudaFuncAttributeMaxDynamicSharedMemorySize, LNB_SMEM_MAX)))
		return -1;
	done = 1;
	return 0;
}

// ---------------------------------------------------------------------------
// cuBLASLt: one matmul description per GEMM, its algorithm chosen once in
// create(), run with a workspace allocated in create(), so a timed launch
// allocates nothing. Column-major views of the row-major tensors:
//   y^T (N x M)   = W (as K x N, transposed) . h^T (K x M)   [+ b per row]
//   dW^T (K x N)  = h^T (K x M) . dy (as N x M, transposed)
//   dh^T (K x M)  = W (K x N) . dy^T (N x M)
// fp32 uses CUBLAS_COMPUTE_32F (plain SGEMM arithmetic: no TF32); bf16
// multiplies on tensor cores with fp32 accumulation.

#define LT_WS_BYTES (32u << 20)

struct lt_gemm {
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulAlgo_t algo;
};

static int lt_fail(const char *what, cublasStatus_t s)
{
	return error("cublasLt %s failed: %s", what, cublasGetStatusString(s));
}

#define LT_CHECK(call) do { \
	cublasStatus_t s_ = (call); \
	if (s_ != CUBLAS_STATUS_SUCCESS) \
		return lt_fail(#call, s_); \
} while (0)

static void lt_release(struct lt_gemm *g)
{
	if (g->desc)
		cublasLtMatmulDescDestroy(g->desc);
	if (g->la)
		cublasLtMatrixLayoutDestroy(g->la);
	if (g->lb)
		cublasLtMatrixLayoutDestroy(g->lb);
	if (g->ld)
		cublasLtMatrixLayoutDestroy(g->ld);
	memset(g, 0, sizeof *g);
}

// D (m x n, column-major, ldd) = op(A) op(B) [+ bias per row of D].
static int lt_init(struct lt_gemm *g, cublasLtHandle_t h, cublasOperation_t ta,
		   cublasOperation_t tb, long m, long n, long k,
		   cudaDataType_t ab, long lda, long ldb, cudaDataType_t dt,
		   long ldd, const void *bias)
{
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res;
	size_t ws = LT_WS_BYTES;
	int nres = 0;
	cublasStatus_t s;

	LT_CHECK(cublasLtMatmulDescCreate(&g->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	LT_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	LT_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	if (bias) {
		cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_BIAS;
		int32_t bt = dt;

		LT_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep));
		LT_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
		LT_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt));
	}
	LT_CHECK(cublasLtMatrixLayoutCreate(&g->la, ab, ta == CUBLAS_OP_N ? m : k,
					    ta == CUBLAS_OP_N ? k : m, lda));
	LT_CHECK(cublasLtMatrixLayoutCreate(&g->lb, ab, tb == CUBLAS_OP_N ? k : n,
					    tb == CUBLAS_OP_N ? n : k, ldb));
	LT_CHECK(cublasLtMatrixLayoutCreate(&g->ld, dt, m, n, ldd));
	LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
	s = cublasLtMatmulPreferenceSetAttribute(pref,
			CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulAlgoGetHeuristic(h, g->desc, g->la, g->lb, g->ld,
						   g->ld, pref, 1, &res, &nres);
	cublasLtMatmulPreferenceDestroy(pref);
	if (s != CUBLAS_STATUS_SUCCESS)
		return lt_fail("heuristic", s);
	if (nres < 1)
		return error("cublasLt: no algorithm for a %ld x %ld x %ld GEMM", m, n, k);
	g->algo = res.algo;
	return 0;
}

static int lt_run(const struct lt_gemm *g, cublasLtHandle_t h, const void *A,
		  const void *B, void *D, void *ws, cudaStream_t st)
{
	const float one = 1.f, zero = 0.f;

	LT_CHECK(cublasLtMatmul(h, g->desc, &one, A, g->la, B, g->lb, &zero, D,
				g->ld, D, g->ld, &g->algo, ws, LT_WS_BYTES, st));
	return 0;
}

// ---------------------------------------------------------------------------
// Instances and launchers

static const int FWD_NAIVE = 0, FWD_UNFUSED = 1, FWD_FUSED = 2;
static const int BWD_NAIVE = 0, BWD_UNFUSED = 1, BWD_FUSED = 2;

// An instance (struct fp_op is opaque to the run loop; this is its layout).
struct lnl_op {
	int bwd;
	enum fp_dtype dt;
	int variant;
	long M, K, N;
	int nsets;
	size_t xset, dyset;  // one x / dy tensor, padded to 256 bytes
	char *x, *dy;        // nsets input sets each (dy: backward only)
	void *gamma, *beta, *W, *b;
	void *y;             // forward output
	void *h;             // unfused: the normalised x (M x K, dtype)
	void *Wf;            // fused forward: W' (N x K, dtype)
	float *sW, *bf;      // fused forward: s, b'
	float *stats;        // unfused backward: c, mean - c, rstd (3 x M)
	void *dx, *dW, *dg, *dbeta, *db;  // backward outputs (dtype)
	float *dh;           // unfused backward: M x K fp32
	float *part;         // unfused backward: column-sum partials
	float *acc;          // naive backward: fp32 atomics targets
	cublasLtHandle_t lt;
	void *ws;
	struct lt_gemm g0, g1;
	float fold_us;
};

static size_t pad256(size_t n)
{
	return (n + 255) & ~(size_t)255;
}

static int vec_width(long K, enum fp_dtype dt)
{
	int v = dt == FP_BF16 ? 8 : 4;

	return K % v == 0 ? v : 1;
}

template <typename T>
static int launch_fold(const struct lnl_op *op, cudaStream_t st)
{
	unsigned blocks = (unsigned)((op->N + 7) / 8);

	k_fold<T><<<blocks, 256, 0, st>>>((const T *)op->W, (const T *)op->gamma,
					  (const T *)op->beta, (const T *)op->b,
					  (T *)op->Wf, op->sW, op->bf, (int)op->N,
					  (int)op->K);
	return CUDA_CHECK_LAUNCH("k_fold");
}

template <typename T>
static int launch_fwd(const struct lnl_op *op, const T *x, cudaStream_t st)
{
	const long M = op->M;
	const int K = (int)op->K, N = (int)op->N;

	switch (op->variant) {
	case FWD_NAIVE:
		k_fwd_naive<T><<<(unsigned)((M + 127) / 128), 128, 0, st>>>(
			x, (const T *)op->gamma, (const T *)op->beta,
			(const T *)op->W, (const T *)op->b, (T *)op->y, M, K, N);
		return CUDA_CHECK_LAUNCH("k_fwd_naive");
	case FWD_UNFUSED:
		k_layernorm<T><<<(unsigned)((M + LN_ROWS - 1) / LN_ROWS),
				 LN_ROWS * WARP, 0, st>>>(x, (const T *)op->gamma,
				(const T *)op->beta, (T *)op->h, NULL, M, K);
		if (CUDA_CHECK_LAUNCH("k_layernorm"))
			return -1;
		return lt_run(&op->g0, op->lt, op->W, op->h, op->y, op->ws, st);
	default: {
		long tiles = ((M + FB_M - 1) / FB_M) * ((N + FB_N - 1) / FB_N);
		int v = vec_width(K, op->dt);

		if (v == 1)
			k_fwd_fused<T, 1><<<(unsigned)tiles, F_THREADS, 0, st>>>(
				x, (const T *)op->Wf, op->sW, op->bf, (T *)op->y, M, K, N);
		else if constexpr (sizeof(T) == 2)
			k_fwd_fused<T, 8><<<(unsigned)tiles, F_THREADS, 0, st>>>(
				x, (const T *)op->Wf, op->sW, op->bf, (T *)op->y, M, K, N);
		else
			k_fwd_fused<T, 4><<<(unsigned)tiles, F_THREADS, 0, st>>>(
				x, (const T *)op->Wf, op->sW, op->bf, (T *)op->y, M, K, N);
		return CUDA_CHECK_LAUNCH("k_fwd_fused");
	}
	}
}

template <typename T>
static int launch_bwd(const struct lnl_op *op, const T *x, const T *dy,
		      cudaStream_t st)
{
	const long M = op->M, R = (M + CS_ROWS - 1) / CS_ROWS;
	const int K = (int)op->K, N = (int)op->N;
	const unsigned lnb = (unsigned)((M + LN_ROWS - 1) / LN_ROWS);

	if (op->variant == BWD_NAIVE) {
		size_t nacc = (size_t)N * K + 2 * (size_t)K + (size_t)N;

		if (CUDA_CHECK(cudaMemsetAsync(op->acc, 0, nacc * sizeof(float), st)))
			return -1;
		k_bwd_naive<T><<<(unsigned)((M + 127) / 128), 128, 0, st>>>(
			x, (const T *)op->gamma, (const T *)op->beta,
			(const T *)op->W, dy, (T *)op->dx, op->acc, M, K, N);
		if (CUDA_CHECK_LAUNCH("k_bwd_naive"))
			return -1;
		k_f32_to<T><<<1024, 256, 0, st>>>(op->acc, (T *)op->dW, (long)N * K);
		k_f32_to<T><<<1, 256, 0, st>>>(op->acc + (long)N * K, (T *)op->dg, K);
		k_f32_to<T><<<1, 256, 0, st>>>(op->acc + (long)N * K + K, (T *)op->dbeta, K);
		k_f32_to<T><<<1, 256, 0, st>>>(op->acc + (long)N * K + 2 * K, (T *)op->db, N);
		return CUDA_CHECK_LAUNCH("k_f32_to");
	}
	k_layernorm<T><<<lnb, LN_ROWS * WARP, 0, st>>>(x, (const T *)op->gamma,
		(const T *)op->beta, (T *)op->h, op->stats, M, K);
	if (CUDA_CHECK_LAUNCH("k_layernorm"))
		return -1;
	if (lt_run(&op->g0, op->lt, op->h, dy, op->dW, op->ws, st) ||
	    lt_run(&op->g1, op->lt, op->W, dy, op->dh, op->ws, st))
		return -1;
	if (op->variant == BWD_FUSED && lnb_warps(K)) {
		const int w = lnb_warps(K);
		const long B = lnb_blocks(M, K);

		k_ln_bwd_fused<T><<<(unsigned)B, w * WARP, (size_t)w * 2 * K * 4, st>>>(
			op->dh, x, (const T *)op->gamma, op->stats, (T *)op->dx,
			op->part, M, K);
		if (CUDA_CHECK_LAUNCH("k_ln_bwd_fused"))
			return -1;
		k_colsum_final<T><<<(unsigned)((K + 255) / 256), 256, 0, st>>>(
			op->part, B, K, (T *)op->dg, (T *)op->dbeta);
		if (CUDA_CHECK_LAUNCH("k_colsum_final"))
			return -1;
	} else {
		k_ln_bwd_dx<T><<<lnb, LN_ROWS * WARP, 0, st>>>(op->dh, x,
			(const T *)op->gamma, op->stats, (T *)op->dx, M, K);
		if (CUDA_CHECK_LAUNCH("k_ln_bwd_dx"))
			return -1;
		k_colsum_part<T, false><<<dim3((unsigned)((K + 31) / 32), (unsigned)R),
					  dim3(32, 8), 0, st>>>(NULL, op->dh, x, op->stats,
								op->part, M, K);
		if (CUDA_CHECK_LAUNCH("k_colsum_part"))
			return -1;
		k_colsum_final<T><<<(unsigned)((K + 255) / 256), 256, 0, st>>>(
			op->part, R, K, (T *)op->dg, (T *)op->dbeta);
		if (CUDA_CHECK_LAUNCH("k_colsum_final"))
			return -1;
	}
	// db's partials reuse the buffer: the launches are ordered on st.
	k_colsum_part<T, true><<<dim3((unsigned)((N + 31) / 32), (unsigned)R),
				 dim3(32, 8), 0, st>>>(dy, NULL, NULL, NULL,
						       op->part, M, N);
	if (CUDA_CHECK_LAUNCH("k_colsum_part"))
		return -1;
	k_colsum_final<T><<<(unsigned)((N + 255) / 256), 256, 0, st>>>(
		op->part, R, N, (T *)op->db, (T *)NULL);
	return CUDA_CHECK_LAUNCH("k_colsum_final");
}

static int lnl_launch(struct fp_op *fop, int set, cudaStream_t st)
{
	const struct lnl_op *op = (const struct lnl_op *)fop;
	const void *x = op->x + (size_t)set * op->xset;
	const void *dy = op->dy ? op->dy + (size_t)set * op->dyset : NULL;

	if (set < 0 || set >= op->nsets)
		return error("ln_linear: input set %d out of range [0, %d)", set,
			     op->nsets);
	if (op->bwd)
		return op->dt == FP_BF16
			? launch_bwd<__nv_bfloat16>(op, (const __nv_bfloat16 *)x,
						    (const __nv_bfloat16 *)dy, st)
			: launch_bwd<float>(op, (const float *)x, (const float *)dy, st);
	return op->dt == FP_BF16
		? launch_fwd<__nv_bfloat16>(op, (const __nv_bfloat16 *)x, st)
		: launch_fwd<float>(op, (const float *)x, st);
}

// ---------------------------------------------------------------------------
// The workload contract

#define LNL_MAX_M (1L << 22)   // column-sum chunks: M / 128 <= 65535 grid rows
#define LNL_MAX_KN (1L << 20)  // in-row indices are 32-bit
#define LNL_MAX_ELEMS (1L << 34)
// Relative error bounds (L2 norm of the error over the L2 norm of the
// reference, per output). fp32: GEMM summation order and fp32 statistics
// give ~1e-6; 1e-4 leaves room for K = 4096 sums and rstd up to 316 (the
// constant profile). bf16: the normalised x (or shifted x) and the outputs
// are rounded to bf16 (2^-9 relative each): ~4e-3 at worst.
#define LNL_TOL_FP32 1e-4
#define LNL_TOL_BF16 1e-2

static int lnl_validate(const struct fp_shape *s, enum fp_dtype dt, char *why,
			size_t n)
{
	long M = s->v[0], K = s->v[1], N = s->v[2];

	if (dt != FP_F32 && dt != FP_BF16)
		snprintf(why, n, "dtype %d is not supported (fp32, bf16)", (int)dt);
	else if (M < 1)
		snprintf(why, n, "M=%ld: there must be at least 1 row", M);
	else if (K < 1)
		snprintf(why, n, "K=%ld: rows must have at least 1 feature", K);
	else if (N < 1)
		snprintf(why, n, "N=%ld: there must be at least 1 output feature", N);
	else if (M > LNL_MAX_M)
		snprintf(why, n, "M=%ld: at most %ld rows", M, LNL_MAX_M);
	else if (K > LNL_MAX_KN)
		snprintf(why, n, "K=%ld: at most %ld features (32-bit in-row indexing)",
			 K, LNL_MAX_KN);
	else if (N > LNL_MAX_KN)
		snprintf(why, n, "N=%ld: at most %ld output features (32-bit in-row indexing)",
			 N, LNL_MAX_KN);
	else if ((double)M * K > (double)LNL_MAX_ELEMS || (double)M * N > (double)LNL_MAX_ELEMS)
		snprintf(why, n, "M=%ld: x or y would exceed 2^34 elements", M);
	else
		return 0;
	return -1;
}

// Sizes of everything an instance allocates, shared by create() and
// device_bytes() so the two cannot drift apart.
struct lnl_sizes {
	size_t xset, dyset, vecK, vecN, W, y, h, stats, dx, dh, part, acc, ws;
	size_t total;
};

static void lnl_sizes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
		      int variant, int nsets, struct lnl_sizes *z)
{
	size_t M = (size_t)s->v[0], K = (size_t)s->v[1], N = (size_t)s->v[2];
	size_t es = fp_dtype_size(dt), R = (M + CS_ROWS - 1) / CS_ROWS;

	memset(z, 0, sizeof *z);
	z->xset = pad256(M * K * es);
	z->vecK = pad256(K * es);
	z->vecN = pad256(N * es);
	z->W = pad256(N * K * es);
	if (!bwd) {
		z->y = pad256(M * N * es);
		if (variant == FWD_UNFUSED) {
			z->h = z->xset;
			z->ws = LT_WS_BYTES;
		}
		if (variant == FWD_FUSED)  // W', s, b'
			z->acc = z->W + 2 * pad256(N * sizeof(float));
		z->total = (size_t)nsets * z->xset + 2 * z->vecK + z->W + z->vecN +
			   z->y + z->h + z->ws + z->acc;
		return;
	}
	z->dyset = pad256(M * N * es);
	z->dx = z->xset;
	if (variant == BWD_NAIVE) {
		z->acc = pad256((N * K + 2 * K + N) * sizeof(float));
	} else {
		z->h = z->xset;
		z->stats = pad256(3 * M * sizeof(float));
		z->dh = pad256(M * K * sizeof(float));
		z->part = 2 * R * (K > N ? K : N);
		if (variant == BWD_FUSED && z->part < 2 * (size_t)LNB_BLOCKS * K)
			z->part = 2 * (size_t)LNB_BLOCKS * K;
		z->part = pad256(z->part * sizeof(float));
		z->ws = LT_WS_BYTES;
	}
	// inputs: x, dy sets; gamma, beta, W. outputs: dx, dW, dgamma, dbeta, db.
	z->total = (size_t)nsets * (z->xset + z->dyset) + 2 * z->vecK + z->W +
		   z->dx + z->W + 2 * z->vecK + z->vecN + z->acc + z->h +
		   z->stats + z->dh + z->part + z->ws;
}

static size_t fwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	struct lnl_sizes z;

	lnl_sizes(0, s, dt, variant, nsets, &z);
	return z.total;
}

static size_t bwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	struct lnl_sizes z;

	lnl_sizes(1, s, dt, variant, nsets, &z);
	return z.total;
}

// Extra DRAM reads of a weight of wbytes by a GEMM that walks M rows in
// groups of gm rows (8 tiles of 128 for the fused kernel; cuBLAS's
// rasterisation is similar): none while the weight stays in L2 (counted as
// 16 MB of the H100's 50 MB, leaving room for the streamed operand), else
// one more read per row group.
static double weight_rereads(double M, double wbytes, double gm)
{
	if (wbytes <= 16e6)
		return 0;
	return (ceil(M / gm) - 1) * wbytes;
}

static void fwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], K = (double)s->v[1], N = (double)s->v[2];
	double es = (double)fp_dtype_size(dt), wre = weight_rereads(M, N * K * es, 1024);

	m->flops = 2 * M * N * K + 8 * M * K + M * N;
	m->min_bytes = es * (M * K + 2 * K + N * K + N + M * N);
	switch (variant) {
	case FWD_NAIVE:  // x read three times (mean/var, output loop); W from L2
		m->variant_bytes = m->min_bytes + 2 * M * K * es + wre;
		break;
	case FWD_UNFUSED:  // h written by the LayerNorm and read by the GEMM
		m->variant_bytes = m->min_bytes + 2 * M * K * es + wre;
		break;
	default:  // W' in place of W, s and b' (fp32) in place of gamma, beta, b
		m->variant_bytes = m->min_bytes - 2 * K * es - N * es + 8 * N + wre;
		if (m->variant_bytes < m->min_bytes)
			m->variant_bytes = m->min_bytes;
		break;
	}
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], K = (double)s->v[1], N = (double)s->v[2];
	double es = (double)fp_dtype_size(dt);
	double E = M * K, wre = weight_rereads(M, N * K * es, 1024);

	m->flops = 4 * M * N * K + 18 * M * K + M * N;
	m->min_bytes = es * (M * N + M * K + 2 * K + N * K) +
		       es * (M * K + 2 * K + N * K + N);
	if (variant == BWD_NAIVE)  // x and dy re-read per pass; fp32 accumulators
		m->variant_bytes = m->min_bytes + 3 * E * es + 3 * M * N * es +
				   2 * 4 * (N * K + 2 * K + N);
	else if (variant == BWD_UNFUSED)
		// h (write, read), 2 more dy and x reads, dh fp32 (write, 2
		// reads), 3 floats of statistics per row written, read twice
		m->variant_bytes = m->min_bytes + 2 * E * es + 2 * M * N * es +
				   2 * E * es + 12 * E + 36 * M + 2 * wre;
	else  // as unfused, less one read of x and of dh; block partials
		m->variant_bytes = m->min_bytes + 2 * E * es + 2 * M * N * es +
				   E * es + 8 * E + 24 * M + 2 * wre +
				   (lnb_warps(s->v[1]) ? 2 * 2 * lnb_blocks(s->v[0], s->v[1]) * K * 4
						       : 4 * E);
}

static void lnl_destroy(struct fp_op *fop)
{
	struct lnl_op *op = (struct lnl_op *)fop;

	if (!op)
		return;
	lt_release(&op->g0);
	lt_release(&op->g1);
	if (op->lt)
		cublasLtDestroy(op->lt);
	void *bufs[] = { op->x, op->dy, op->gamma, op->beta, op->W, op->b, op->y,
			 op->h, op->Wf, op->sW, op->bf, op->stats, op->dx, op->dW,
			 op->dg, op->dbeta, op->db, op->dh, op->part, op->acc,
			 op->ws };
	for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
		cudaFree(bufs[i]);
	free(op);
}

static int dev_alloc(void *pp, size_t n)
{
	return n ? CUDA_CHECK(cudaMalloc((void **)pp, n)) : 0;
}

static int run_fold(struct lnl_op *op, cudaStream_t st)
{
	return op->dt == FP_BF16 ? launch_fold<__nv_bfloat16>(op, st)
				 : launch_fold<float>(op, st);
}

// The cuBLASLt plans of the unfused variants.
static int lnl_plan(struct lnl_op *op)
{
	const long M = op->M, K = op->K, N = op->N;
	cudaDataType_t t = op->dt == FP_BF16 ? CUDA_R_16BF : CUDA_R_32F;

	if (cublasLtCreate(&op->lt) != CUBLAS_STATUS_SUCCESS) {
		op->lt = NULL;
		return error("ln_linear: cannot create a cuBLASLt handle");
	}
	if (!op->bwd)
		return lt_init(&op->g0, op->lt, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K,
			       t, K, K, t, N, op->b);
	return lt_init(&op->g0, op->lt, CUBLAS_OP_N, CUBLAS_OP_T, K, N, M,
		       t, K, N, t, K, NULL) ||
	       lt_init(&op->g1, op->lt, CUBLAS_OP_N, CUBLAS_OP_N, K, M, N,
		       t, K, N, CUDA_R_32F, K, NULL);
}

static int lnl_create(int bwd, struct fp_op **out, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed)
{
	struct lnl_op *op = (struct lnl_op *)xcalloc(1, sizeof *op);
	struct lnl_sizes z;
	char why[160];
	const char *name = bwd ? "ln_linear_bwd" : "ln_linear_fwd";

	*out = NULL;
	if (lnl_validate(s, dt, why, sizeof why)) {
		free(op);
		return error("%s: %s", name, why);
	}
	if (nsets < 1 || variant < 0 || variant > (bwd ? BWD_FUSED : FWD_FUSED)) {
		free(op);
		return error("%s: bad instance (variant %d, %d input sets)", name,
			     variant, nsets);
	}
	op->bwd = bwd;
	op->dt = dt;
	op->variant = variant;
	op->M = s->v[0];
	op->K = s->v[1];
	op->N = s->v[2];
	op->nsets = nsets;
	lnl_sizes(bwd, s, dt, variant, nsets, &z);
	op->xset = z.xset;
	op->dyset = z.dyset;
	if (dev_alloc(&op->x, (size_t)nsets * z.xset) ||
	    dev_alloc(&op->dy, (size_t)nsets * z.dyset) ||
	    dev_alloc(&op->gamma, z.vecK) || dev_alloc(&op->beta, z.vecK) ||
	    dev_alloc(&op->W, z.W) || dev_alloc(&op->ws, z.ws) ||
	    dev_alloc(&op->h, z.h))
		goto out_free;
	if (!bwd) {
		if (dev_alloc(&op->b, z.vecN) || dev_alloc(&op->y, z.y))
			goto out_free;
		if (variant == FWD_FUSED &&
		    (dev_alloc(&op->Wf, z.W) ||
		     dev_alloc(&op->sW, pad256((size_t)op->N * sizeof(float))) ||
		     dev_alloc(&op->bf, pad256((size_t)op->N * sizeof(float)))))
			goto out_free;
	} else {
		if (dev_alloc(&op->dx, z.dx) || dev_alloc(&op->dW, z.W) ||
		    dev_alloc(&op->dg, z.vecK) || dev_alloc(&op->dbeta, z.vecK) ||
		    dev_alloc(&op->db, z.vecN) || dev_alloc(&op->acc, z.acc) ||
		    dev_alloc(&op->stats, z.stats) || dev_alloc(&op->dh, z.dh) ||
		    dev_alloc(&op->part, z.part))
			goto out_free;
	}
	if ((bwd ? variant != BWD_NAIVE : variant == FWD_UNFUSED) && lnl_plan(op))
		goto out_free;
	if (bwd && variant == BWD_FUSED && lnb_smem_setup())
		goto out_free;

	// Profile-0 inputs for timing, drawn on the device (see lnl_gen_inputs
	// for the distributions).
	for (int i = 0; i < nsets; i++) {
		uint64_t sd = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);

		if (dev_fill_normal(op->x + (size_t)i * z.xset, dt,
				    (size_t)(op->M * op->K), sd, 0.f, 1.f, 0) ||
		    (bwd && dev_fill_normal(op->dy + (size_t)i * z.dyset, dt,
					    (size_t)(op->M * op->N), sd ^ 0xd1b5u,
					    0.f, 1.f, 0)))
			goto out_free;
	}
	if (dev_fill_normal(op->gamma, dt, (size_t)op->K, seed ^ 1, 1.f, 0.1f, 0) ||
	    dev_fill_normal(op->beta, dt, (size_t)op->K, seed ^ 2, 0.f, 0.1f, 0) ||
	    dev_fill_normal(op->W, dt, (size_t)(op->N * op->K), seed ^ 3, 0.f,
			    (float)(1 / sqrt((double)op->K)), 0) ||
	    (op->b && dev_fill_normal(op->b, dt, (size_t)op->N, seed ^ 4, 0.f, 0.1f, 0)))
		goto out_free;
	if (!bwd && variant == FWD_FUSED) {
		cudaEvent_t e0 = NULL, e1 = NULL;
		int rc = CUDA_CHECK(cudaEventCreate(&e0)) || CUDA_CHECK(cudaEventCreate(&e1)) ||
			 CUDA_CHECK(cudaEventRecord(e0, 0)) || run_fold(op, 0) ||
			 CUDA_CHECK(cudaEventRecord(e1, 0)) ||
			 CUDA_CHECK(cudaEventSynchronize(e1)) ||
			 CUDA_CHECK(cudaEventElapsedTime(&op->fold_us, e0, e1));

		if (e0)
			cudaEventDestroy(e0);
		if (e1)
			cudaEventDestroy(e1);
		if (rc)
			goto out_free;
		op->fold_us *= 1e3f;
		if (getenv("FUSEPROF_VERBOSE"))
			fprintf(stderr, "ln_linear_fwd/fused %s M=%ld,K=%ld,N=%ld: "
				"weight fold (W' = W o gamma, b' = W beta + b, s) %.1f us, "
				"once per weight, not in the timed launch\n",
				fp_dtype_name(dt), op->M, op->K, op->N, op->fold_us);
	}
	if (CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	*out = (struct fp_op *)op;
	return 0;

out_free:
	lnl_destroy((struct fp_op *)op);
	return -1;
}

static int fwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed)
{
	return lnl_create(0, op, s, dt, variant, nsets, seed);
}

static int bwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed)
{
	return lnl_create(1, op, s, dt, variant, nsets, seed);
}

// Compare the sampled entries got[idx[i] * stride + j], j < len, with
// ref[i * len + j].
static void cmp_rows(struct fp_cmp *c, const double *got, const double *ref,
		     const long *idx, long n, long len, long stride)
{
	for (long i = 0; i < n; i++)
		cmp_add(c, got + idx[i] * stride, ref + i * len, (size_t)len);
}

static int fwd_check(struct lnl_op *op, const double *x, const double *gm,
		     const double *bt, const double *W, const double *b,
		     struct fp_check *r)
{
	const long M = op->M, K = op->K, N = op->N;
	long n = lnl_sample(M, (double)N * K, LNL_FULL_CHECK_MACS, NULL);
	long *rows = (long *)xmalloc((size_t)n * sizeof *rows);
	double *got = (double *)xmalloc((size_t)(M * N) * sizeof *got);
	double *ref = (double *)xmalloc((size_t)(n * N) * sizeof *ref);
	double *h = (double *)xmalloc((size_t)K * sizeof *h);
	struct fp_cmp c;
	int rc = -1;

	lnl_sample(M, (double)N * K, LNL_FULL_CHECK_MACS, rows);
	if (dev_download(got, op->y, op->dt, (size_t)(M * N)))
		goto out_free;
	for (long i = 0; i < n; i++)
		fwd_ref_row(x + rows[i] * K, gm, bt, W, b, ref + i * N, K, N, h);
	cmp_init(&c);
	cmp_rows(&c, got, ref, rows, n, N, N);
	check_output(r, "y", &c);
	rc = 0;
out_free:
	free(rows);
	free(got);
	free(ref);
	free(h);
	return rc;
}

// The backward's outputs, each compared in full when its reference is cheap
// and on a sample otherwise: dx rows (N*K each), dW rows (M*K each), dgamma
// and dbeta entries (M*N each: dh's column k over every row), db in full.
static int bwd_check(struct lnl_op *op, const double *x, const double *gm,
		     const double *bt, const double *W, const double *dy,
		     struct fp_check *r)
{
	const long M = op->M, K = op->K, N = op->N;
	const double budget = LNL_FULL_CHECK_MACS / 3;
	long nr = lnl_sample(M, (double)N * K, budget, NULL);
	long nw = lnl_sample(N, (double)M * K, budget, NULL);
	long nk = lnl_sample(K, (double)M * N, budget, NULL);
	long *ir = (long *)xmalloc((size_t)nr * sizeof(long));
	long *iw = (long *)xmalloc((size_t)nw * sizeof(long));
	long *ik = (long *)xmalloc((size_t)nk * sizeof(long));
	double *xh = (double *)xmalloc((size_t)(M * K) * sizeof(double));
	double *hh = (double *)xmalloc((size_t)(M * K) * sizeof(double));
	double *mean = (double *)xmalloc((size_t)M * sizeof(double));
	double *rstd = (double *)xmalloc((size_t)M * sizeof(double));
	double *got = (double *)xmalloc((size_t)(M * (K > N ? K : N) +
						 N * K) * sizeof(double));
	double *ref = (double *)xmalloc((size_t)((nr > nw ? nr : nw) * K + 2 * nk + N) *
					sizeof(double));
	double *dh = (double *)xmalloc((size_t)K * sizeof(double)), *wk = NULL;
	struct fp_cmp c;
	int rc = -1;

	lnl_sample(M, (double)N * K, budget, ir);
	lnl_sample(N, (double)M * K, budget, iw);
	lnl_sample(K, (double)M * N, budget, ik);
	for (long i = 0; i < M; i++)
		lnl_layernorm_row_ref(x + i * K, K, gm, bt, xh + i * K, hh + i * K,
				      &mean[i], &rstd[i]);

	// dx
	if (dev_download(got, op->dx, op->dt, (size_t)(M * K)))
		goto out_free;
	for (long s = 0; s < nr; s++) {
		long i = ir[s];
		double sg = 0, sgx = 0, *out = ref + s * K;

		for (long k = 0; k < K; k++)
			dh[k] = 0;
		for (long n = 0; n < N; n++)
			for (long k = 0; k < K; k++)
				dh[k] += dy[i * N + n] * W[n * K + k];
		for (long k = 0; k < K; k++) {
			sg += dh[k] * gm[k];
			sgx += dh[k] * gm[k] * xh[i * K + k];
		}
		sg /= (double)K;
		sgx /= (double)K;
		for (long k = 0; k < K; k++)
			out[k] = rstd[i] * (dh[k] * gm[k] - sg - xh[i * K + k] * sgx);
	}
	cmp_init(&c);
	cmp_rows(&c, got, ref, ir, nr, K, K);
	check_output(r, "dx", &c);

	// dW
	if (dev_download(got, op->dW, op->dt, (size_t)(N * K)))
		goto out_free;
	for (long s = 0; s < nw; s++) {
		long n = iw[s];
		double *out = ref + s * K;

		for (long k = 0; k < K; k++)
			out[k] = 0;
		for (long i = 0; i < M; i++)
			for (long k = 0; k < K; k++)
				out[k] += dy[i * N + n] * hh[i * K + k];
	}
	cmp_init(&c);
	cmp_rows(&c, got, ref, iw, nw, K, K);
	check_output(r, "dW", &c);

	// dgamma, dbeta: the sampled columns k of dh over every row (column k
	// of W copied out first: a walk down W's column would miss cache on
	// every element)
	wk = (double *)xmalloc((size_t)N * sizeof(double));
	for (long s = 0; s < nk; s++) {
		long k = ik[s];
		double ag = 0, ab = 0;

		for (long n = 0; n < N; n++)
			wk[n] = W[n * K + k];
		for (long i = 0; i < M; i++) {
			double d = 0;

			for (long n = 0; n < N; n++)
				d += dy[i * N + n] * wk[n];
			ag += d * xh[i * K + k];
			ab += d;
		}
		ref[s] = ag;
		ref[nk + s] = ab;
	}
	if (dev_download(got, op->dg, op->dt, (size_t)K))
		goto out_free;
	cmp_init(&c);
	cmp_rows(&c, got, ref, ik, nk, 1, 1);
	check_output(r, "dgamma", &c);
	if (dev_download(got, op->dbeta, op->dt, (size_t)K))
		goto out_free;
	cmp_init(&c);
	cmp_rows(&c, got, ref + nk, ik, nk, 1, 1);
	check_output(r, "dbeta", &c);

	// db
	for (long n = 0; n < N; n++) {
		double a = 0;

		for (long i = 0; i < M; i++)
			a += dy[i * N + n];
		ref[n] = a;
	}
	if (dev_download(got, op->db, op->dt, (size_t)N))
		goto out_free;
	cmp_init(&c);
	cmp_add(&c, got, ref, (size_t)N);
	check_output(r, "db", &c);
	rc = 0;
out_free:
	free(ir);
	free(iw);
	free(ik);
	free(xh);
	free(hh);
	free(mean);
	free(rstd);
	free(got);
	free(ref);
	free(dh);
	free(wk);
	return rc;
}

// Fresh host inputs from profile and seed into set 0 and the weights,
// outputs and intermediates poisoned, one run, outputs compared with the
// double reference computed on the very (rounded) values the GPU saw. Shapes
// whose reference costs more than LNL_FULL_CHECK_MACS compare a sample (see
// lnl_sample): 16 to 64 rows spread over M, first and last included.
static int lnl_check(struct fp_op *fop, int profile, unsigned long long seed,
		     struct fp_check *r)
{
	struct lnl_op *op = (struct lnl_op *)fop;
	const long M = op->M, K = op->K, N = op->N;
	const enum fp_dtype dt = op->dt;
	const size_t es = fp_dtype_size(dt);
	double *x = NULL, *gm = NULL, *bt = NULL, *W = NULL, *b = NULL, *dy = NULL;
	int rc = -1;

	if (profile < 0 || profile >= LNL_NPROFILES)
		return error("ln_linear: no input profile %d", profile);
	x = (double *)xmalloc((size_t)(M * K) * sizeof *x);
	gm = (double *)xmalloc((size_t)K * sizeof *gm);
	bt = (double *)xmalloc((size_t)K * sizeof *bt);
	W = (double *)xmalloc((size_t)(N * K) * sizeof *W);
	b = (double *)xmalloc((size_t)N * sizeof *b);
	if (op->bwd)
		dy = (double *)xmalloc((size_t)(M * N) * sizeof *dy);
	lnl_gen_inputs((enum lnl_profile)profile, seed, M, K, N, x, gm, bt, W, b, dy);
	host_round(x, (size_t)(M * K), dt);
	host_round(gm, (size_t)K, dt);
	host_round(bt, (size_t)K, dt);
	host_round(W, (size_t)(N * K), dt);
	host_round(b, (size_t)N, dt);
	if (dy)
		host_round(dy, (size_t)(M * N), dt);
	if (dev_upload(op->x, dt, x, (size_t)(M * K)) ||
	    dev_upload(op->gamma, dt, gm, (size_t)K) ||
	    dev_upload(op->beta, dt, bt, (size_t)K) ||
	    dev_upload(op->W, dt, W, (size_t)(N * K)) ||
	    (op->b && dev_upload(op->b, dt, b, (size_t)N)) ||
	    (dy && dev_upload(op->dy, dt, dy, (size_t)(M * N))))
		goto out_free;
	if (op->Wf && (dev_poison(op->Wf, (size_t)(N * K) * es) ||
		       dev_poison(op->sW, (size_t)N * 4) ||
		       dev_poison(op->bf, (size_t)N * 4) || run_fold(op, 0)))
		goto out_free;
	if ((op->y && dev_poison(op->y, (size_t)(M * N) * es)) ||
	    (op->h && dev_poison(op->h, (size_t)(M * K) * es)) ||
	    (op->dx && dev_poison(op->dx, (size_t)(M * K) * es)) ||
	    (op->dW && dev_poison(op->dW, (size_t)(N * K) * es)) ||
	    (op->dg && dev_poison(op->dg, (size_t)K * es)) ||
	    (op->dbeta && dev_poison(op->dbeta, (size_t)K * es)) ||
	    (op->db && dev_poison(op->db, (size_t)N * es)) ||
	    (op->stats && dev_poison(op->stats, (size_t)(3 * M) * 4)) ||
	    (op->dh && dev_poison(op->dh, (size_t)(M * K) * 4)) ||
	    lnl_launch(fop, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	check_begin(r, seed, dt == FP_BF16 ? LNL_TOL_BF16 : LNL_TOL_FP32);
	rc = op->bwd ? bwd_check(op, x, gm, bt, W, dy, r)
		     : fwd_check(op, x, gm, bt, W, b, r);
out_free:
	free(x);
	free(gm);
	free(bt);
	free(W);
	free(b);
	free(dy);
	return rc;
}

static const struct fp_param lnl_params[] = {
	{ "M", 16384, 1, LNL_MAX_M, "rows" },
	{ "K", FP_REQUIRED, 1, LNL_MAX_KN, "input features (LayerNorm width)" },
	{ "N", FP_REQUIRED, 1, LNL_MAX_KN, "output features" },
	{ NULL, 0, 0, 0, NULL },
};

// Index i is enum lnl_profile i.
static const char *const lnl_profiles[] = { "normal", "offset", "constant", NULL };

#define LNL_TESTS "M=1,K=1,N=1;M=3,K=1023,N=17;M=16384,K=768,N=256;" \
	"M=512,K=4096,N=16384"
#define LNL_SUITE "M=16384,K=768,N=256;M=16384,K=4096,N=256;" \
	"M=16384,K=4096,N=16384"
#define LNL_QUICK "M=2048,K=768,N=256;M=1024,K=1024,N=1024"

static const struct fp_variant fwd_variants[] = {
	{ "naive", FP_NAIVE,
	  "1 kernel, one thread per row: statistics and all N outputs of the row, no tiling" },
	{ "unfused", FP_UNFUSED,
	  "2 kernels: LayerNorm writes h = LN(x) (dtype), cuBLASLt h W^T with the bias in its epilogue" },
	{ "fused", FP_FUSED,
	  "1 kernel: tiled GEMM on x - c against W' = W o gamma (folded in create), row statistics "
	  "from the same tiles, y = rstd (acc - (mean - c) s) + b' in the epilogue" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_ln_linear_fwd = {
	.name = "ln_linear_fwd",
	.summary = "y = LayerNorm(x; gamma, beta) W^T + b, x: M x K, W: N x K",
	.params = lnl_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = lnl_profiles,
	.suite = LNL_SUITE,
	.quick = LNL_QUICK,
	.tests = LNL_TESTS,
	.validate = lnl_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.launch = lnl_launch,
	.check = lnl_check,
	.destroy = lnl_destroy,
};

static const struct fp_variant bwd_variants[] = {
	{ "naive", FP_NAIVE,
	  "1 kernel + 4 conversions, one thread per row: dx, and dgamma, dbeta, dW, db by fp32 atomics" },
	{ "unfused", FP_UNFUSED,
	  "7 kernels: LayerNorm recompute h, cuBLASLt dW = dy^T h and dh = dy W (fp32), "
	  "LayerNorm backward dx, column sums dgamma/dbeta and db (deterministic)" },
	{ "fused", FP_FUSED,
	  "6 kernels: as unfused, but dx and per-block dgamma/dbeta partials in one pass "
	  "over dh and x (deterministic); h still materialised for cuBLASLt's dW" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_ln_linear_bwd = {
	.name = "ln_linear_bwd",
	.summary = "dx, dgamma, dbeta, dW, db of y = LayerNorm(x) W^T + b, given dy "
		   "(mean and rstd recomputed)",
	.params = lnl_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = lnl_profiles,
	.suite = LNL_SUITE,
	.quick = LNL_QUICK,
	.tests = LNL_TESTS,
	.validate = lnl_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.launch = lnl_launch,
	.check = lnl_check,
	.destroy = lnl_destroy,
};
