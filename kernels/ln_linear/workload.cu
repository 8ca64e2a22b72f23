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
// backward's LayerNorm kernels (the LayerNorm+GELU workloads', with the row
// in registers: c is their first-pass mean) keep three floats per row the
// same way (c, mean - c, rstd) rather than mean and rstd.
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
// normalised x, which the unfused form does too. The tensor-core kernels
// (k_fwd_fused_mma, k_fwd_fused_wgmma, k_fwd_fused_ws) sum the statistics
// from those rounded x~, so the GEMM and the mean and variance see the
// same numbers: they normalise the row c + round(x - c) exactly, within
// 2^-9 of x. Where the warp-specialized kernel takes the statistics from a
// pass of their own (N >= LNL_PASS_N: a row meets N / 256 tiles), that pass
// (ln_gelu's, fp32, shifted by its own first-pass mean hi) normalises x
// itself, and the GEMM's pivot is c = hi rounded to bf16 with mean - c =
// (hi - c) + (mean - hi), both exact or O(spread): the rows then differ
// from the GEMM's c + round(x - c) by the same 2^-9 rounding of x~ that
// the unfused form's bf16 normalised x carries. Without the shift the
// tensor cores would sum x W'^T, whose terms carry the offset: their fp32
// sums drop low bits at every k-step relative to |c s|, which at c = 1e3
// and a spread near 1 is several hundred times the result, too much for
// bf16's 1e-2.
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
#include <cuda.h>
#include <cuda_bf16.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <mma.h>

#include "error.h"
#include "device.cuh"
#include "kutil.h"
#include "ln_gelu.h"
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

extern "C" void lnl_sample_counts(long n1, long n2, double cost, double budget,
				  long *w1, long *w2)
{
	const long blk = LNL_SAMPLE_BLOCK;
	const long b1 = (n1 + blk - 1) / blk, b2 = (n2 + blk - 1) / blk;
	const double row = (double)n2 * cost;
	long r, c;

	*w1 = n1, *w2 = n2;
	if ((double)n1 * row <= budget)
		return;
	// Every column, as many rows as fit, at least one per block.
	r = (long)(budget / row);
	r = r < b1 ? b1 : r;
	if ((double)r * row <= budget) {
		*w1 = r;
		return;
	}
	// One row per block, as many columns as fit, at least one per block.
	c = (long)(budget / ((double)b1 * cost));
	c = c < b2 ? b2 : c > n2 ? n2 : c;
	if ((double)b1 * (double)c * cost <= 4 * budget) {
		*w1 = b1, *w2 = c;
		return;
	}
	// Far beyond the test shapes: what the budget affords, rows spread.
	c = b2;
	r = (long)(budget / ((double)c * cost));
	r = r < 8 ? 8 : r > n1 ? n1 : r;
	*w1 = r, *w2 = c;
}

// Sorts the at most LNL_SAMPLE_BLOCK offsets of one block.
static void sort_small(long *v, long n)
{
	for (long i = 1; i < n; i++)
		for (long j = i; j > 0 && v[j - 1] > v[j]; j--) {
			long t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

extern "C" long lnl_pick(long n, long want, struct fp_rng *g, long *idx)
{
	const long blk = LNL_SAMPLE_BLOCK, nb = (n + blk - 1) / blk;
	long cnt = 0, q[2], deficit = 0, *share;

	if (n < 1 || want < 1)
		return 0;
	if (want >= n) {
		for (long i = 0; i < n; i++)
			idx[i] = i;
		return n;
	}
	if (want < nb) {
		// Fewer than the blocks: want blocks spread evenly.
		for (long i = 0; i < want; i++) {
			long b = want == 1 ? 0 : i * (nb - 1) / (want - 1);
			long lo = b * blk, sz = n - lo < blk ? n - lo : blk;

			idx[i] = b == 0 ? 0 : b == nb - 1 ? n - 1
				: lo + (long)(rng_next(g) % (uint64_t)sz);
		}
		return want;
	}
	// Every block its share; only the last block can be short of room,
	// and what it cannot take goes to the first blocks.
	share = (long *)xmalloc((size_t)nb * sizeof *share);
	for (long b = 0; b < nb; b++) {
		long sz = n - b * blk < blk ? n - b * blk : blk;

		share[b] = want / nb + (b < want % nb);
		if (share[b] > sz) {
			deficit += share[b] - sz;
			share[b] = sz;
		}
	}
	for (long b = 0; b < nb && deficit > 0; b++) {
		long sz = n - b * blk < blk ? n - b * blk : blk;
		long room = sz - share[b], add = room < deficit ? room : deficit;

		share[b] += add;
		deficit -= add;
	}
	for (long b = 0; b < nb; b++) {
		long lo = b * blk, sz = n - lo < blk ? n - lo : blk, perm[LNL_SAMPLE_BLOCK];
		long forced = 0;

		for (long i = 0; i < sz; i++)
			perm[i] = i;
		// The first and last items of the whole range come first.
		q[0] = b == 0 ? 0 : -1;
		q[1] = b == nb - 1 ? sz - 1 : -1;
		for (int f = 0; f < 2; f++) {
			if (q[f] < 0 || forced >= share[b] || (f == 1 && q[1] == q[0]))
				continue;
			for (long i = forced; i < sz; i++)
				if (perm[i] == q[f]) {
					perm[i] = perm[forced];
					perm[forced++] = q[f];
					break;
				}
		}
		// Partial Fisher-Yates for the rest of the share.
		for (long i = forced; i < share[b]; i++) {
			long j = i + (long)(rng_next(g) % (uint64_t)(sz - i)), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		sort_small(perm, share[b]);
		for (long i = 0; i < share[b]; i++)
			idx[cnt++] = lo + perm[i];
	}
	free(share);
	return cnt;
}

// ---------------------------------------------------------------------------
// Kernels

#define WARP 32

// Row statistics from shifted sums (see the top of the file): returns
// mean - c in *mt and rstd in *rs.
__device__ __forceinline__ void shifted_stats(float s1, float s2, int K,
					      float *mt, float *rs)
{
	float m = s1 / (float)K, var = fmaxf(s2 / (float)K - m * m, 0.f);

	*mt = m;
	*rs = rsqrtf(var + (float)LNL_EPS);
}

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

// --- forward, naive: one thread per row computes the row's statistics (two
// passes over x) and every output of the row, renormalising x for each of
// the N outputs. W is read by every thread in the same order, so a warp's
// loads broadcast; x rows are read with a stride of K between lanes, V
// elements (16 bytes) at a time where K allows. One warp per block, so that
// small M still spreads over M / 32 multiprocessors. The teaching version:
// its roofline point shows what fusing without tiling costs. (M = 16384,
// K = 768, N = 256: 3.2 G multiply-adds on 16384 threads, each a dependent
// chain of 196608 FMAs.)
template <typename T, int V>
__global__ void k_fwd_naive(const T *__restrict__ x, const T *__restrict__ gamma,
			    const T *__restrict__ beta, const T *__restrict__ W,
			    const T *__restrict__ b, T *__restrict__ y, long M,
			    int K, int N)
{
	long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
	float c, s1 = 0, s2 = 0, mt, rs;

	if (i >= M)
		return;
	c = to_f(x[i * K]);
	for (int k = 0; k < K; k += V) {
		float xv[V];

		load_chunk<T, V>(x, M, K, i, k, xv);
		for (int j = 0; j < V; j++) {
			float v = xv[j] - c;

			s1 += v;
			s2 += v * v;
		}
	}
	shifted_stats(s1, s2, K, &mt, &rs);
	// NB outputs per pass over the row: each normalised chunk serves NB
	// rows of W (rows past N read as zeros and are not stored), and NB
	// independent W streams keep loads in flight.
	constexpr int NB = 4;
	for (int n0 = 0; n0 < N; n0 += NB) {
		float acc[NB];

		for (int q = 0; q < NB; q++)
			acc[q] = 0.f;
#pragma unroll 2
		for (int k = 0; k < K; k += V) {
			float xv[V], gv[V], bv[V], wv[NB][V];

			load_chunk<T, V>(x, M, K, i, k, xv);
			load_chunk<T, V>(gamma, 1, K, 0, k, gv);
			load_chunk<T, V>(beta, 1, K, 0, k, bv);
			for (int q = 0; q < NB; q++)
				load_chunk<T, V>(W, N, K, n0 + q, k, wv[q]);
			for (int j = 0; j < V; j++) {
				float h = ((xv[j] - c) - mt) * rs * gv[j] + bv[j];

				for (int q = 0; q < NB; q++)
					acc[q] = fmaf(h, wv[q][j], acc[q]);
			}
		}
		for (int q = 0; q < NB && n0 + q < N; q++)
			y[i * N + n0 + q] = from_f<T>(acc[q] + to_f(b[n0 + q]));
	}
}

// --- FlashNorm weight fold, one warp per output feature n:
// W'[n] = round(W[n] o gamma), s[n] = sum of the rounded W'[n],
// b'[n] = W[n] . beta + b[n]. Preparation (create/check), not timed.
// The row of W' that holds output column n when W' is stored in the
// warp-specialized kernel's order (see its epilogue): within each group of
// 32, n = 32 b + 8 t + 2 u + e sits at row 32 b + 8 u + 2 t + e. Its own
// inverse.
__host__ __device__ __forceinline__ long perm32(long n)
{
	return (n & ~31L) | (n >> 1 & 3) << 3 | (n >> 3 & 3) << 1 | (n & 1);
}

// perm: W' in perm32's order, over N rounded up to 32 rows (the rows of
// columns past N zero); s and b' stay in column order.
template <typename T>
__global__ void k_fold(const T *__restrict__ W, const T *__restrict__ gamma,
		       const T *__restrict__ beta, const T *__restrict__ b,
		       T *__restrict__ Wf, float *__restrict__ sW,
		       float *__restrict__ bf, int N, int K, int perm)
{
	long n = blockIdx.x * (long)(blockDim.x / WARP) + threadIdx.x / WARP;
	int lane = threadIdx.x % WARP;
	float s = 0, bb = 0;
	T *wr = Wf + (perm ? perm32(n) : n) * K;

	if (n >= (perm ? (N + 31L) / 32 * 32 : N))
		return;
	if (n >= N) {
		for (int k = lane; k < K; k += WARP)
			wr[k] = from_f<T>(0.f);
		return;
	}
	for (int k = lane; k < K; k += WARP) {
		float w = to_f(W[n * K + k]);
		T wf = from_f<T>(w * to_f(gamma[k]));

		wr[k] = wf;
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

// --- forward, fused, the first version; now the path for rows whose
// 16-byte chunks are not aligned (fp32 K % 4 != 0, bf16 K % 8 != 0): one
// kernel, a 128 x 128 tile of y per block of 256 threads, K walked in
// steps of 32. Each step's x and W' tiles go global -> registers ->
// shared memory; on the way every x element is shifted by its row's pivot
// c and its shifted value summed into the row's statistics, so the
// statistics cost no extra pass over x and the normalised x exists only as
// the shifted tile in shared memory. The next step's tiles are loaded into
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
	long m0, n0;

	group_tile(blockIdx.x, tiles_m, tiles_n, F_GROUP, FB_M, FB_N, &m0, &n0);

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

// --- forward, fused, on tensor cores where every 16-byte chunk of a row
// is aligned (bf16 K % 8 == 0, fp32 K % 4 == 0): what k_fwd_fused does,
// rebuilt around the tensor cores' own instructions. Over it:
// * cp.async (16 bytes, zero-filled past M, N and K) into a FX_STAGES-deep
//   shared-memory ring of raw x and W' tiles (BM x 64 and BN x 64 bf16, each
//   row 128 bytes with its 16-byte chunks XOR-swizzled by row, so ldmatrix
//   reads are free of bank conflicts): three tiles are in flight while one
//   is multiplied, and no thread touches the data on its way in.
// * ldmatrix + mma.sync m16n8k16 (bf16 in, fp32 accumulate), 8 warps as 2
//   along M x 4 along N, a warp tile of BM/2 x BN/4.
// * The row shift happens in registers: each A fragment register (two bf16
//   of one row) gets x~ = x - c with one bf16x2 subtraction (the exact
//   difference rounded once to bf16, as k_fwd_fused's fp32 subtraction and
//   bf16 store). The statistics are summed from those same shifted
//   fragments, so the GEMM and the mean/variance see the same x~; each
//   k-step's sums are taken by one of the four warps that share its rows
//   (warp n of a row pair takes k-step n of every 64-column tile), so every
//   element is summed once, and the four partials of a row are added in a
//   fixed order after the loop: deterministic.
// * The epilogue y = rstd (acc - (mean - c) s) + b' goes through shared
//   memory and leaves as 16-byte row-contiguous stores.
// Tiles: 128 x 256 (one block per SM, 192 KB of ring) when there are
// enough of them for half the SMs, else 64 x 128 (two blocks per SM), so
// small M still spreads. At M = 16384, N = 256 a block owns whole rows of y
// and reads its rows of x exactly once; W' (0.4 / 2 MB) comes from L2 for
// every block: 2 bytes of W' per byte of x through L2.
// Measured (H200, fuseprof run, 2026-11-21), M = 16384, bf16: 29.2 us at
// 768 -> 256 and 128.5 us at 4096 -> 256 (cuBLAS Linear alone 18.9 / 52.7
// us): ncu shows the tensor pipe 41 % busy, 1.9 instructions issued a
// cycle, 2 warps per scheduler: issue-bound around the mma.sync stream.
// The bf16 128 x 256 tile now runs as k_fwd_fused_wgmma where sm_90a code
// is there; this kernel keeps the small tiles and other targets.
// fp32 (the same kernel, T = float): a 128-byte tile row is 32 fp32, a
// k-step m16n8k8 TF32, whose fragments occupy the same 32-bit registers as
// m16n8k16 bf16's, so the ring, the swizzle and the ldmatrix addressing
// are unchanged. The shift is an fp32 subtraction (exact where it
// matters, as in k_fwd_fused) and the multiply 3xTF32 (see mma_tf32),
// which k_fwd_fused's FMA loop ran at a third of the rate of: on an H200
// (fuseprof run, 2026-11-22, M = 16384), 768 -> 256 110.9 us, 4096 -> 256
// 551.1 us, 4096 -> 16384 34.8 ms (63 TFLOP/s) against the unfused
// variant's (SGEMM) 159.1 us, 818.2 us and 43.4 ms, relative error 8.5e-7
// against SGEMM's 1.1e-6 at K = 4096 (k_fwd_fused: 211 us, 1079 us, 67.4 ms
// on an H100).
#define FX_BK 64
#define FX_STAGES 4
#define FX_THREADS 256

// Dynamic shared memory of k_fwd_fused_mma<BM, BN>: the ring, which the
// staged output tile (BM x (BN + 8) bf16) reuses.
#define FX_SMEM(BM, BN) (FX_STAGES * ((BM) + (BN)) * FX_BK * 2)

// Two bf16 in a register, minus two more: each exact difference rounded
// once to bf16.
__device__ __forceinline__ uint32_t bsub2(uint32_t a, uint32_t c)
{
	__nv_bfloat162 r = __hsub2(*(const __nv_bfloat162 *)&a,
				   *(const __nv_bfloat162 *)&c);

	return *(const uint32_t *)&r;
}

__device__ __forceinline__ void stats2(uint32_t v, float &s1, float &s2)
{
	float2 f = __bfloat1622float2(*(const __nv_bfloat162 *)&v);

	s1 += f.x + f.y;
	s2 = fmaf(f.x, f.x, s2);
	s2 = fmaf(f.y, f.y, s2);
}

// fp32 tensor-core arithmetic for the fp32 kernel: 3xTF32. TF32 keeps 11
// significant bits of fp32's 24, so a value v splits into hi (its top 11
// bits) and lo (the next 11 of v - hi, which is exact), which together
// hold v to 2^-21 relative; a product a b is then a_lo b_hi + a_hi b_lo +
// a_hi b_hi (the dropped a_lo b_lo is 2^-22 of it): three TF32 multiplies,
// a third of the tensor cores' TF32 rate, still over twice SGEMM's on an
// H100. The tensor cores round their fp32 sums toward zero, so
// accumulating all of K in the MMA's own accumulator biases every step
// the same way: on an H200 the relative error at K = 4096 was 4e-5
// against SGEMM's 1.1e-6.
// Each 8-deep k-step's three products therefore go to a fresh partial
// whose truncation is relative to itself, and plain fp32 adds (round to
// nearest) take the partials into the accumulator.
// The split: the tensor cores read a TF32 operand's top 19 bits and ignore
// the low 13, so v itself serves as hi (truncated there) and lo is v minus
// that truncation (exact), in turn truncated when read: v = hi + lo to
// 2^-21 relative, two instructions instead of two roundings and a
// subtraction.
__device__ __forceinline__ uint32_t tf32_lo(uint32_t v)
{
	return __float_as_uint(__uint_as_float(v) - __uint_as_float(v & 0xffffe000u));
}

// d += a b, m16n8k8 TF32, a row-major (4 registers), b column-major (2).
__device__ __forceinline__ void mma_tf32(float *d, const uint32_t *a, const uint32_t *b)
{
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
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

// cp.async of one k-tile of ROWS rows of a row-major tensor (rows r0..,
// each K long) into the swizzled tile at dst: the eight 16-byte chunks from
// column k0 of each row, zero-filled past row lim and column K.
template <typename T, int ROWS>
__device__ __forceinline__ void copy_tile(uint32_t dst, const T *__restrict__ src,
					  long r0, long lim, int K, int k0, int tid)
{
	constexpr int E = 16 / sizeof(T);

#pragma unroll
	for (int j = 0; j < ROWS * 8 / FX_THREADS; j++) {
		const int q = tid + j * FX_THREADS, r = q >> 3, ch = q & 7, k = k0 + ch * E;
		const long gr = r0 + r;
		const bool ok = gr < lim && k < K;

		cp_async16(dst + r * 128 + ((ch ^ (r & 7)) << 4),
			   ok ? src + gr * K + k : src, ok ? 16 : 0);
	}
}

template <typename T, int BM, int BN>
__global__ void __launch_bounds__(FX_THREADS, BM >= 128 ? 1 : 2)
k_fwd_fused_mma(const T *__restrict__ x, const T *__restrict__ Wf,
		const float *__restrict__ sW, const float *__restrict__ bf,
		T *__restrict__ y, long M, int K, int N)
{
	constexpr bool BF = sizeof(T) == 2;
	constexpr int E = 16 / sizeof(T);      // elements per 16-byte chunk
	constexpr int KTILE = 8 * E;           // a tile row: 8 chunks, 128 bytes
	constexpr int WN = 4, TM = BM / 2, TN = BN / WN, MI = TM / 16, NI = TN / 8;
	constexpr int A_BYTES = BM * 128, STAGE = (BM + BN) * 128;
	constexpr int YLD = BN + 8;  // staged output row: conflict-free
	static_assert(4 == WN, "one k-step of statistics per warp column");
	static_assert(BM * 8 % FX_THREADS == 0 && BN * 8 % FX_THREADS == 0, "tile loads");
	static_assert(BM * YLD * sizeof(T) <= FX_SMEM(BM, BN), "output tile fits the ring");
	extern __shared__ __align__(128) unsigned char smem[];
	__shared__ float st1[WN][BM], st2[WN][BM], st_mt[BM], st_rs[BM];

	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int wm = warp / WN, wn = warp % WN, g = lane >> 2, t = lane & 3;
	const long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
	long m0, n0;

	group_tile(blockIdx.x, tiles_m, tiles_n, F_GROUP, BM, BN, &m0, &n0);
	const int KT = (K + KTILE - 1) / KTILE;
	const uint32_t sbase = smem_u32(smem);

	// The shift c of rows wm*TM + i*16 + g + 8h: (c, c) as bf16x2, or c's
	// fp32 bits.
	uint32_t piv[MI][2];
	float s1[MI][2], s2[MI][2], acc[MI][NI][4];

	auto load_tile = [&](int stage, int kt) {
		const uint32_t sa = sbase + stage * STAGE;

		copy_tile<T, BM>(sa, x, m0, M, K, kt * KTILE, tid);
		copy_tile<T, BN>(sa + A_BYTES, Wf, n0, N, K, kt * KTILE, tid);
	};

#pragma unroll
	for (int s = 0; s < FX_STAGES - 1; s++) {
		if (s < KT)
			load_tile(s, s);
		cp_async_commit();
	}
#pragma unroll
	for (int i = 0; i < MI; i++) {
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const long r = m0 + wm * TM + i * 16 + g + 8 * h;

			if constexpr (BF) {
				__nv_bfloat16 c = r < M ? x[r * K] : __float2bfloat16_rn(0.f);
				__nv_bfloat162 cc = __halves2bfloat162(c, c);

				piv[i][h] = *(const uint32_t *)&cc;
			} else {
				piv[i][h] = __float_as_uint(r < M ? x[r * K] : 0.f);
			}
			s1[i][h] = s2[i][h] = 0.f;
		}
#pragma unroll
		for (int j = 0; j < NI; j++)
			acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;
	}

	for (int kt = 0; kt < KT; kt++) {
		cp_async_wait<FX_STAGES - 2>();
		__syncthreads();  // tile kt landed for all; stage kt - 1 is free
		if (kt + FX_STAGES - 1 < KT)
			load_tile((kt + FX_STAGES - 1) % FX_STAGES, kt + FX_STAGES - 1);
		cp_async_commit();

		const uint32_t sa = sbase + (kt % FX_STAGES) * STAGE, sb = sa + A_BYTES;
		const int kleft = K - kt * KTILE;  // under KTILE in a last, partial tile

		// A k-step is two chunks of every tile row: an m16n8k16 (bf16) or
		// m16n8k8 (TF32) multiply. The fragments' register layouts are the
		// same in 32-bit words, so the ldmatrix addressing is too.
#pragma unroll
		for (int ks = 0; ks < 4; ks++) {
			uint32_t a[MI][4], b[NI][2];

#pragma unroll
			for (int i = 0; i < MI; i++) {
				const int r = wm * TM + i * 16 + (lane & 15), ch = ks * 2 + (lane >> 4);

				ldsm_x4(sa + r * 128 + ((ch ^ (r & 7)) << 4),
					a[i][0], a[i][1], a[i][2], a[i][3]);
			}
#pragma unroll
			for (int j = 0; j < NI / 2; j++) {
				const int r = wn * TN + j * 16 + (lane & 7) + ((lane >> 4) << 3);
				const int ch = ks * 2 + ((lane >> 3) & 1);

				ldsm_x4(sb + r * 128 + ((ch ^ (r & 7)) << 4),
					b[2 * j][0], b[2 * j][1], b[2 * j + 1][0], b[2 * j + 1][1]);
			}
#pragma unroll
			for (int i = 0; i < MI; i++) {
#pragma unroll
				for (int q = 0; q < 4; q++) {
					if constexpr (BF)
						a[i][q] = bsub2(a[i][q], piv[i][q & 1]);
					else
						a[i][q] = __float_as_uint(__uint_as_float(a[i][q]) -
									  __uint_as_float(piv[i][q & 1]));
				}
			}
			if (ks == wn) {
				// Registers 0/1 hold column kc (bf16: kc, kc + 1) of
				// rows g/g+8; registers 2/3 the same E columns on.
				// Past K the tile is zero, so x~ = -c: masked.
				const int kc = ks * 2 * E + t * (E / 4);
				const bool lo = kc < kleft, hi = kc + E < kleft;

#pragma unroll
				for (int i = 0; i < MI; i++) {
#pragma unroll
					for (int q = 0; q < 4; q++) {
						if (!(q < 2 ? lo : hi))
							continue;
						if constexpr (BF) {
							stats2(a[i][q], s1[i][q & 1], s2[i][q & 1]);
						} else {
							const float v = __uint_as_float(a[i][q]);

							s1[i][q & 1] += v;
							s2[i][q & 1] = fmaf(v, v, s2[i][q & 1]);
						}
					}
				}
			}
			if constexpr (BF) {
#pragma unroll
				for (int i = 0; i < MI; i++)
#pragma unroll
					for (int j = 0; j < NI; j++)
						mma_bf16(acc[i][j], a[i], b[j]);
			} else {
				uint32_t bl[NI][2];

#pragma unroll
				for (int j = 0; j < NI; j++) {
					bl[j][0] = tf32_lo(b[j][0]);
					bl[j][1] = tf32_lo(b[j][1]);
				}
#pragma unroll
				for (int i = 0; i < MI; i++) {
					uint32_t al[4];

#pragma unroll
					for (int q = 0; q < 4; q++)
						al[q] = tf32_lo(a[i][q]);
#pragma unroll
					for (int j = 0; j < NI; j++) {
						float p[4] = { 0.f, 0.f, 0.f, 0.f };

						mma_tf32(p, al, b[j]);
						mma_tf32(p, a[i], bl[j]);
						mma_tf32(p, a[i], b[j]);
#pragma unroll
						for (int q = 0; q < 4; q++)
							acc[i][j][q] += p[q];
					}
				}
			}
		}
	}
	cp_async_wait<0>();

	// Row statistics: a row's sums are spread over the 4 lanes t of a
	// quad and the WN warps of its warp row.
#pragma unroll
	for (int i = 0; i < MI; i++) {
#pragma unroll
		for (int h = 0; h < 2; h++) {
			float a1 = s1[i][h], a2 = s2[i][h];

			a1 += __shfl_xor_sync(0xffffffffu, a1, 1);
			a2 += __shfl_xor_sync(0xffffffffu, a2, 1);
			a1 += __shfl_xor_sync(0xffffffffu, a1, 2);
			a2 += __shfl_xor_sync(0xffffffffu, a2, 2);
			if (t == 0) {
				const int r = wm * TM + i * 16 + g + 8 * h;

				st1[wn][r] = a1;
				st2[wn][r] = a2;
			}
		}
	}
	__syncthreads();  // also: every warp is done with the ring
	for (int r = tid; r < BM; r += FX_THREADS) {
		float a1 = st1[0][r], a2 = st2[0][r];

		for (int w = 1; w < WN; w++) {
			a1 += st1[w][r];
			a2 += st2[w][r];
		}
		shifted_stats(a1, a2, K, &st_mt[r], &st_rs[r]);
	}
	__syncthreads();

	// Epilogue: y = rstd * (acc - (mean - c) * s) + b', staged in the
	// dtype. acc[i][j][2h + e] is row wm*TM + i*16 + g + 8h, column
	// wn*TN + j*8 + 2t + e.
	T *sy = (T *)smem;

#pragma unroll
	for (int j = 0; j < NI; j++) {
		const int cl = wn * TN + j * 8 + 2 * t;
		const long col = n0 + cl;
		const float sc0 = col < N ? sW[col] : 0.f, sc1 = col + 1 < N ? sW[col + 1] : 0.f;
		const float bc0 = col < N ? bf[col] : 0.f, bc1 = col + 1 < N ? bf[col + 1] : 0.f;

#pragma unroll
		for (int i = 0; i < MI; i++) {
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int rl = wm * TM + i * 16 + g + 8 * h;
				const float mt = st_mt[rl], rs = st_rs[rl];
				const float v0 = rs * (acc[i][j][2 * h] - mt * sc0) + bc0;
				const float v1 = rs * (acc[i][j][2 * h + 1] - mt * sc1) + bc1;

				if constexpr (BF)
					*(__nv_bfloat162 *)&sy[rl * YLD + cl] = __floats2bfloat162_rn(v0, v1);
				else
					*(float2 *)&sy[rl * YLD + cl] = make_float2(v0, v1);
			}
		}
	}
	__syncthreads();
	store_tile<T, BM, BN, YLD, FX_THREADS>(y, sy, m0, n0, M, N, tid);
}

// --- forward, fused, bf16 on Hopper (sm_90a): k_fwd_fused_mma's data path
// with the multiply moved to wgmma, which that kernel's measurements called
// for: on an H200 (2026-11-21) its mma.sync mainloop kept the tensor pipe
// 41 % busy at 1.9 instructions a cycle (K = 4096: 128.5 us against
// cuBLAS's 52.7 us for the Linear alone). Here each warpgroup (4 warps, 64
// rows) issues per 16-wide k-step one wgmma m64n256k16: A from registers,
// B (the W' tile, 256 rows) straight from shared memory through a
// descriptor, so B costs no ldmatrix and no registers. The row shift still
// happens in registers: A is ldmatrix'd from the swizzled tile, shifted
// with bf16x2 subtractions and summed into the statistics, then handed to
// wgmma (its register layout for A is mma.sync's m16n8k16 one, a warp per
// 16 rows). Each warp owns all K of its 16 rows, so the statistics need no
// reduction across warps. Shared-memory tiles are laid out as wgmma's
// 128-byte swizzle wants them (8-row atoms of 1024 bytes, 16-byte chunk c
// of row r at c ^ (r % 8)): the same XOR as k_fwd_fused_mma, on a
// 1024-byte-aligned base. cp.async fills a 4-stage ring two tiles ahead;
// wgmma keeps one k-tile in flight (wait_group 1) while the next tile's A
// fragments are prepared, in a second register set. Block tile 128 x 256,
// two warpgroups, one block per SM.
// Measured (H200, `fuseprof run --no-counters`, 2026-11-21; cuBLAS Linear
// alone and eager PyTorch from kernels/ln_linear-torch.py in the same
// session), M = 16384, bf16:
//   K -> N           fused     unfused   Linear alone  eager LN+Linear
//   768 -> 256       20.1 us   36.0 us   18.7 us       54.6 us
//   4096 -> 256      77.0 us   182.2 us  54.0 us       157.1 us
//   4096 -> 16384    5113 us   3372 us   3242 us       3368 us
// so 1.07 x the Linear alone at K = 768, 1.43 x at K = 4096 (mma.sync
// kernel: 32.1 / 131.3 us). At K = 4096 ncu reads the SM 45 % busy, DRAM
// 35 % (1.7 TB/s), 1.5 instructions a cycle and 5.3 cycles between a
// warp's instructions: waits, not issue, now bound it (cutting the copy
// address arithmetic took it from 86 to 77 us). Next: TMA loads completing
// on per-stage mbarriers instead of cp.async + one __syncthreads a tile
// (the warpgroups now move in lockstep, both preparing A while the tensor
// cores drain), x prefetched deeper than W', and 2-CTA clusters sharing
// each W' tile by multicast (W' is 2/3 of the bytes through L2).
// Tried on an H200 (2026-11-22, bench/RESULTS.md): at 4096 -> 16384 this
// kernel keeps the tensor pipe 48 % busy; a TMA producer warp with
// mbarriers and two math warpgroups (288 threads, so at most 168
// registers) ran 4732 us against this kernel's 4702, and the same in
// two-block clusters multicasting W' 6379 us. From K = LNL_WS_K on,
// k_fwd_fused_ws (below: three warpgroups, setmaxnreg, persistent) now
// takes its place.
#define FW_THREADS 256
#define FW_STAGES 4
#define FW_AHEAD 2
#define FW_SMEM (FW_STAGES * (128 + 256) * FX_BK * 2 + 1024)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define LNL_WGMMA 1
#endif

// wgmma's descriptor of a K-major tile with 128-byte swizzle: start
// address, stride of 1024 bytes between 8-row atoms, swizzle mode 1 (the
// leading offset is unused for this layout).
__device__ __forceinline__ uint64_t wg_desc(uint32_t addr)
{
	return (uint64_t)((addr & 0x3ffff) >> 4) | (uint64_t)(1024 >> 4) << 32 |
	       (uint64_t)1 << 62;
}

__device__ __forceinline__ void wg_fence_operand(float &r)
{
	asm volatile("" : "+f"(r) :: "memory");
}

// d (this warpgroup's 64 x 256, 128 floats a thread) += a (64 x 16, 4
// registers a thread) b (16 x 256 from the descriptor).
__device__ __forceinline__ void wgmma_m64n256k16(float *d, const uint32_t *a, uint64_t desc)
{
#ifdef LNL_WGMMA
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
		     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
		     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
		     "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
		     "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
		     "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
		     "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
		     "{%128, %129, %130, %131}, %132, p, 1, 1, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		       "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		       "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		       "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		       "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		       "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		       "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		       "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		       "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
		       "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
		       "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
		       "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
#endif
}

__device__ __forceinline__ void wg_arrive(void)
{
#ifdef LNL_WGMMA
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wg_commit(void)
{
#ifdef LNL_WGMMA
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void wg_wait(void)
{
#ifdef LNL_WGMMA
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
#endif
}

// cp.async wrote through the generic proxy; wgmma reads through the async
// one.
__device__ __forceinline__ void fence_proxy_async(void)
{
#ifdef LNL_WGMMA
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// One k-tile of a wgmma kernel's math warp: its A fragments (rows row0..
// row0 + 15 of the swizzled x tile at sa) loaded, shifted by the rows'
// pivots and, with SUMS, summed into their statistics (s1, s2: rows
// row0 + g and row0 + g + 8; columns from kleft on are past K), then its
// warpgroup's four wgmmas against the W' tile at sb queued. Returns once
// the previous k-tile's wgmmas are done: their A registers and ring stage
// are free.
template <bool SUMS>
__device__ __forceinline__ void wg_ktile(uint32_t sa, uint32_t sb, int row0, int lane,
					 int kleft, const uint32_t *piv,
					 uint32_t (&a)[FX_BK / 16][4], float *s1, float *s2,
					 float *acc)
{
	const int t = lane & 3;

#pragma unroll
	for (int ks = 0; ks < FX_BK / 16; ks++) {
		const int r = row0 + (lane & 15), ch = ks * 2 + (lane >> 4);
		const int kc = ks * 16 + 2 * t;

		ldsm_x4(sa + r * 128 + ((ch ^ (r & 7)) << 4),
			a[ks][0], a[ks][1], a[ks][2], a[ks][3]);
		a[ks][0] = bsub2(a[ks][0], piv[0]);
		a[ks][1] = bsub2(a[ks][1], piv[1]);
		a[ks][2] = bsub2(a[ks][2], piv[0]);
		a[ks][3] = bsub2(a[ks][3], piv[1]);
		// Past K the tile is zero, so x~ = -c there: masked.
		if (SUMS && kc < kleft) {
			stats2(a[ks][0], s1[0], s2[0]);
			stats2(a[ks][1], s1[1], s2[1]);
		}
		if (SUMS && kc + 8 < kleft) {
			stats2(a[ks][2], s1[0], s2[0]);
			stats2(a[ks][3], s1[1], s2[1]);
		}
	}
#pragma unroll
	for (int i = 0; i < 128; i++)
		wg_fence_operand(acc[i]);
	wg_arrive();
#pragma unroll
	for (int ks = 0; ks < FX_BK / 16; ks++)
		wgmma_m64n256k16(acc, a[ks], wg_desc(sb + ks * 32));
	wg_commit();
	wg_wait<1>();
#pragma unroll
	for (int i = 0; i < 128; i++)
		wg_fence_operand(acc[i]);
}

// A wgmma kernel's k loop: the accumulators zeroed, step(kt, a) for every
// k-tile with the A registers alternating between a0 and a1 (a k-tile's
// wgmmas still read its set while the next one's is prepared), then every
// wgmma drained.
template <typename Step>
__device__ __forceinline__ void wg_kloop(int KT, Step &step, uint32_t (&a0)[FX_BK / 16][4],
					 uint32_t (&a1)[FX_BK / 16][4], float *acc)
{
	int kt = 0;

#pragma unroll
	for (int i = 0; i < 128; i++)
		acc[i] = 0.f;
	for (; kt + 1 < KT; kt += 2) {
		step(kt, a0);
		step(kt + 1, a1);
	}
	if (kt < KT)
		step(kt, a0);
	wg_wait<0>();
#pragma unroll
	for (int i = 0; i < 128; i++)
		wg_fence_operand(acc[i]);
}

// Rows r and r + 8 of x: their pivots (first elements, twice each), 0
// past M.
__device__ __forceinline__ void wg_pivots(const __nv_bfloat16 *__restrict__ x, long r,
					  long M, int K, uint32_t *piv)
{
#pragma unroll
	for (int h = 0; h < 2; h++, r += 8) {
		__nv_bfloat16 c = r < M ? x[r * K] : __float2bfloat16_rn(0.f);
		__nv_bfloat162 cc = __halves2bfloat162(c, c);

		piv[h] = *(const uint32_t *)&cc;
	}
}

// A row's mean - c and rstd from sums spread over the 4 lanes of a quad;
// every lane of the quad gets them.
__device__ __forceinline__ void quad_stats(float s1, float s2, int K, float *mt, float *rs)
{
	s1 += __shfl_xor_sync(0xffffffffu, s1, 1);
	s2 += __shfl_xor_sync(0xffffffffu, s2, 1);
	s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
	s2 += __shfl_xor_sync(0xffffffffu, s2, 2);
	shifted_stats(s1, s2, K, mt, rs);
}

// 1 where this build has the wgmma kernel for the device it runs on.
__global__ void k_wgmma_probe(int *out)
{
#ifdef LNL_WGMMA
	*out = 1;
#else
	*out = 0;
#endif
}

__global__ void __launch_bounds__(FW_THREADS, 1)
k_fwd_fused_wgmma(const __nv_bfloat16 *__restrict__ x,
		  const __nv_bfloat16 *__restrict__ Wf, const float *__restrict__ sW,
		  const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y,
		  long M, int K, int N)
{
#ifdef LNL_WGMMA
	constexpr int BM = 128, BN = 256, YLD = BN + 8;
	constexpr int A_BYTES = BM * FX_BK * 2, STAGE = (BM + BN) * FX_BK * 2;
	static_assert(BM * YLD * 2 <= FW_STAGES * STAGE, "output tile fits the ring");
	extern __shared__ __align__(1024) unsigned char smem_raw[];
	__shared__ float st_mt[BM], st_rs[BM];
	__shared__ __align__(8) float st_s[BN], st_b[BN];

	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int g = lane >> 2, t = lane & 3, row0 = warp * 16;
	const long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
	long m0, n0;

	group_tile(blockIdx.x, tiles_m, tiles_n, F_GROUP, BM, BN, &m0, &n0);
	const int KT = (K + FX_BK - 1) / FX_BK;
	const uint32_t sbase = (smem_u32(smem_raw) + 1023) & ~1023u;
	unsigned char *smem = smem_raw + (sbase - smem_u32(smem_raw));

	uint32_t piv[2], a0[FX_BK / 16][4], a1[FX_BK / 16][4];
	float s1[2] = { 0.f, 0.f }, s2[2] = { 0.f, 0.f }, acc[128];

	// This thread copies the 16-byte chunk ch of tile rows lr + 32 j
	// (A: j < 4, B: j < 8); their swizzled places are soff + 4096 j. The
	// addresses are set up once: a tile's copies then cost a pointer add
	// each (the first version recomputed them with 64-bit multiplies,
	// ~20 instructions a copy, most of the warps' issue slots).
	const int lr = tid >> 3, ch = tid & 7;
	const uint32_t soff = lr * 128 + ((ch ^ (lr & 7)) << 4);
	const long rstep = 32L * K;
	const __nv_bfloat16 *xg = x + (m0 + lr) * K + ch * 8;
	const __nv_bfloat16 *wg = Wf + (n0 + lr) * K + ch * 8;
	uint32_t rows_ok = 0;

#pragma unroll
	for (int j = 0; j < BM / 32; j++)
		rows_ok |= (uint32_t)(m0 + lr + 32 * j < M) << j;
#pragma unroll
	for (int j = 0; j < BN / 32; j++)
		rows_ok |= (uint32_t)(n0 + lr + 32 * j < N) << (BM / 32 + j);

	auto load_tile = [&](int stage, int kt) {
		const int k0 = kt * FX_BK;
		const uint32_t sa = sbase + stage * STAGE + soff, sb = sa + A_BYTES;
		const uint32_t ok = k0 + ch * 8 < K ? rows_ok : 0;
		const __nv_bfloat16 *p = xg + k0;

#pragma unroll
		for (int j = 0; j < BM / 32; j++, p += rstep)
			cp_async16(sa + j * 4096, ok >> j & 1 ? p : x, ok >> j & 1 ? 16 : 0);
		p = wg + k0;
#pragma unroll
		for (int j = 0; j < BN / 32; j++, p += rstep)
			cp_async16(sb + j * 4096, ok >> (BM / 32 + j) & 1 ? p : Wf,
				   ok >> (BM / 32 + j) & 1 ? 16 : 0);
	};

	// One k-tile: wait for it, start the load FW_AHEAD tiles on, shift
	// and sum this warp's A fragments, queue the four wgmmas, and wait
	// for the previous tile's (whose ring stage the next load reuses and
	// whose A registers the next call rewrites).
	auto step = [&](int kt, uint32_t (&a)[FX_BK / 16][4]) {
		cp_async_wait<FW_AHEAD - 1>();
		fence_proxy_async();
		__syncthreads();
		if (kt + FW_AHEAD < KT)
			load_tile((kt + FW_AHEAD) % FW_STAGES, kt + FW_AHEAD);
		cp_async_commit();

		const uint32_t sa = sbase + (kt % FW_STAGES) * STAGE, sb = sa + A_BYTES;
		const int kleft = K - kt * FX_BK;

		wg_ktile<true>(sa, sb, row0, lane, kleft, piv, a, s1, s2, acc);
	};

#pragma unroll
	for (int s = 0; s < FW_AHEAD; s++) {
		if (s < KT)
			load_tile(s, s);
		cp_async_commit();
	}
	wg_pivots(x, m0 + row0 + g, M, K, piv);
	// The tile's s and b' for the epilogue, a column a thread (the k
	// loop's barriers order these stores before the epilogue's reads).
	static_assert(BN == FW_THREADS, "one column a thread");
	st_s[tid] = n0 + tid < N ? sW[n0 + tid] : 0.f;
	st_b[tid] = n0 + tid < N ? bf[n0 + tid] : 0.f;
	wg_kloop(KT, step, a0, a1, acc);
	cp_async_wait<0>();

#pragma unroll
	for (int h = 0; h < 2; h++) {
		float mt, rs;

		quad_stats(s1[h], s2[h], K, &mt, &rs);
		if (t == 0)
			st_mt[row0 + g + 8 * h] = mt, st_rs[row0 + g + 8 * h] = rs;
	}
	__syncthreads();  // also: every warp is done with the ring

	// Epilogue: y = rstd * (acc - (mean - c) * s) + b', staged as bf16.
	// acc[4j + 2h + e] is row row0 + g + 8h, column 8j + 2t + e.
	__nv_bfloat16 *sy = (__nv_bfloat16 *)smem;

#pragma unroll
	for (int j = 0; j < BN / 8; j++) {
		const int cl = j * 8 + 2 * t;
		const float2 sc = *(const float2 *)&st_s[cl], bc = *(const float2 *)&st_b[cl];

#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int rl = row0 + g + 8 * h;
			const float mt = st_mt[rl], rs = st_rs[rl];

			*(__nv_bfloat162 *)&sy[rl * YLD + cl] = __floats2bfloat162_rn(
				rs * (acc[4 * j + 2 * h] - mt * sc.x) + bc.x,
				rs * (acc[4 * j + 2 * h + 1] - mt * sc.y) + bc.y);
		}
	}
	__syncthreads();
	store_tile<__nv_bfloat16, BM, BN, YLD, FW_THREADS>(y, sy, m0, n0, M, N, tid);
#endif
}

// --- forward, fused, bf16 on Hopper, warp-specialized and persistent:
// k_fwd_fused_wgmma's arithmetic (A from registers, shifted by the row's
// pivot and summed into its statistics on the way; B from shared memory)
// with the data path taken off the math warps. Three warpgroups, one block
// per SM: the first only feeds the ring (one thread has the Tensor Memory
// Accelerator copy each x and W' tile in the 128-byte-swizzled layout the
// ldmatrix addressing and the wgmma descriptor use; rows and columns past
// M, N and K arrive as zeros) and gives its registers to the other two
// with setmaxnreg (40 a thread there, 232 in the math warpgroups: a
// 64 x 256 accumulator is 128 of them, two sets of A fragments 32 more).
// Every ring stage has a "full" mbarrier the copies complete and an
// "empty" one each math warp arrives on when its wgmmas are done with it.
// The grid is persistent: each block walks tiles blockIdx.x, + gridDim.x,
// ..., so the next tile's copies start while the math warps finish the
// last one's epilogue, which stores straight from the accumulators.
// Tiles are ordered in groups of FS_GROUP along M (the 132 tiles in
// flight then touch about 16 x 128 rows of x and 8 x 256 of W').
// First version (H200, 2026-11-22, bench/RESULTS.md), M = 16384, bf16:
// 4096 -> 16384 in 4025-4261 us against k_fwd_fused_wgmma's 4705 and
// cuBLAS's Linear alone 2798; 4096 -> 256 70.7 against 79.8 us. Tried
// beside it, correct, slower: clusters of two blocks multicasting the W'
// tile (5125-5574 us), and the shift done in shared memory so that wgmma
// reads A from there too, by the math warps themselves (4541 us) or by the
// first warpgroup (6266 us). A plain GEMM on the same pipeline (A from
// shared memory, no shift, no sums; timing only) ran 3410-3457 us.
// Then ncu's per-instruction samples showed where the rest went: the
// statistics (with N >= LNL_PASS_N every row is summed again by each of
// its N / 256 tiles; a pass of their own reads x once: 4178 -> 3421 us),
// and an epilogue that took 27 % of the math warps' time, waiting on s
// and b' loaded one column pair at a time (now one column a thread a tile,
// through shared memory: tensor pipe 73 -> 84 % busy) and on 4-byte
// stores (now 16: W' rows are stored in perm32's order so that a thread's
// accumulators are 8 adjacent columns; 84 -> 90 %). At 4096 -> 16384:
// 3014-3117 us, 1.03-1.06 x cuBLAS's kernel in the same run (H200, H100).
// Then clusters of two again (CL = 2), now with remote
// arrivals that carry no cluster-scope release (that had put a memory
// barrier before each and made the first cluster versions slow): 4096 ->
// 16384 2896-2970 us against 3117-3136 in one block a cluster, 4096 ->
// 4096 764 against 791-807, the same at N = 1024 and no better at 256
// (H100): pairs from N = 512 on (fwd_ws_cluster). The launcher takes the
// kernel from K = LNL_WS_K on.
#define FS_THREADS 384
#define FS_STAGES 4
#define FS_GROUP 16
#define FS_SMEM (FS_STAGES * (128 + 256) * 128 + 1024)

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
#ifdef LNL_WGMMA
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
#endif
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
#ifdef LNL_WGMMA
	asm volatile("{\n.reg .pred p;\nWAIT:\n"
		     "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
		     "@!p bra WAIT;\n}\n" :: "r"(bar), "r"(parity) : "memory");
#endif
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
#ifdef LNL_WGMMA
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
#endif
}

__device__ __forceinline__ void mbar_expect(uint32_t bar, uint32_t bytes)
{
#ifdef LNL_WGMMA
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
		     :: "r"(bar), "r"(bytes) : "memory");
#endif
}

// The box at (column c, row r) of a 2-D tensor map into shared memory at
// dst, completing on bar.
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap *map,
					 int c, int r, uint32_t bar)
{
#ifdef LNL_WGMMA
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3}], [%4];\n"
		     :: "r"(dst), "l"((uint64_t)map), "r"(c), "r"(r), "r"(bar) : "memory");
#endif
}

// The same box into shared memory at dst in every block of the cluster
// that mask names, completing on the barrier at bar's offset in each.
__device__ __forceinline__ void tma_load_mc(uint32_t dst, const CUtensorMap *map,
					    int c, int r, uint32_t bar, uint16_t mask)
{
#ifdef LNL_WGMMA
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
		     ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n"
		     :: "r"(dst), "l"((uint64_t)map), "r"(c), "r"(r), "r"(bar), "h"(mask)
		     : "memory");
#endif
}

// Arrive on the barrier at bar's offset in block rank of the cluster. No
// .release.cluster: what the arrival publishes is that this block's reads
// of a stage are done, and release at cluster scope put a memory barrier
// (ERRBAR) before every arrival, which cost the math warps 28 % of their
// time (ncu, 4096 -> 256).
__device__ __forceinline__ void mbar_arrive_remote(uint32_t bar, uint32_t rank)
{
#ifdef LNL_WGMMA
	asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
		     "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n"
		     :: "r"(bar), "r"(rank) : "memory");
#endif
}

// Every thread of the cluster's blocks, with release/acquire order.
__device__ __forceinline__ void cluster_sync(void)
{
#ifdef LNL_WGMMA
	asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n"
		     ::: "memory");
#endif
}

__device__ __forceinline__ uint32_t cluster_rank(void)
{
	uint32_t r = 0;
#ifdef LNL_WGMMA
	asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
	return r;
}

// Barrier id among the first count threads to reach it (count a multiple
// of 32); id 0 is __syncthreads's.
__device__ __forceinline__ void bar_sync(int id, int count)
{
	asm volatile("bar.sync %0, %1;\n" :: "r"(id), "r"(count) : "memory");
}

template <int REGS>
__device__ __forceinline__ void regs_dec(void)
{
#ifdef LNL_WGMMA
	asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(REGS));
#endif
}

template <int REGS>
__device__ __forceinline__ void regs_inc(void)
{
#ifdef LNL_WGMMA
	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(REGS));
#endif
}

// PASS: the rows' statistics come from a LayerNorm statistics pass run
// before (stats: hi, lo, rstd, as ln_gelu_ln_stats writes them) instead of
// being summed from the tiles; the pivot is then hi rounded to bf16. W' is
// in perm32's order (k_fold with perm), s and b' in column order.
//
// CL = 2: launched in clusters of two blocks (consecutive in x) that walk
// the same tiles of W' side by side, on x's row tiles 2p and 2p + 1: each
// block's producer loads half of each W' tile and multicasts it to both, so
// that W' crosses from L2 to the SMs once a pair (tw's box is then 128
// rows). A stage is free once both blocks' math warps released it (the
// empty barriers count 16 arrivals, half of them from the other block),
// and neither block leaves before the other is done with its barriers.
template <bool PASS, int CL>
__global__ void __launch_bounds__(FS_THREADS, 1)
k_fwd_fused_ws(const __grid_constant__ CUtensorMap tx,
	       const __grid_constant__ CUtensorMap tw,
	       const __nv_bfloat16 *__restrict__ x, const float *__restrict__ stats,
	       const float *__restrict__ sW, const float *__restrict__ bf,
	       __nv_bfloat16 *__restrict__ y, long M, int K, int N)
{
#ifdef LNL_WGMMA
	constexpr int BM = 128, BN = 256, A_BYTES = BM * 128, STAGE = (BM + BN) * 128;
	extern __shared__ __align__(1024) unsigned char smem_raw[];
	__shared__ __align__(8) uint64_t full[FS_STAGES], empty[FS_STAGES];
	__shared__ __align__(16) float ep_s[2][BN], ep_b[2][BN];  // s, b' of a tile

	const int tid = threadIdx.x;
	const long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
	// Work units: tiles, or with CL = 2 pairs of tiles on one W' tile.
	const long units_m = (tiles_m + CL - 1) / CL, units = units_m * tiles_n;
	const long unit0 = blockIdx.x / CL, nunits = gridDim.x / CL;
	const uint32_t rank = CL == 2 ? cluster_rank() : 0;
	const int KT = (K + FX_BK - 1) / FX_BK;
	const uint32_t sbase = (smem_u32(smem_raw) + 1023) & ~1023u;
	const uint32_t fb = smem_u32(full), eb = smem_u32(empty);
	// This block's tile of unit q.
	auto tile_of = [&](long q, long *m0, long *n0) {
		group_tile(q, units_m, tiles_n, FS_GROUP / CL, CL * BM, BN, m0, n0);
		*m0 += rank * BM;
	};

	if (tid == 0) {
		for (int s = 0; s < FS_STAGES; s++) {
			mbar_init(fb + 8 * s, 1);
			mbar_init(eb + 8 * s, 8 * CL);  // the math warps
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	if constexpr (CL == 2)
		cluster_sync();  // the other block's barriers are ready too
	else
		__syncthreads();

	if (tid < 128) {  // the producer warpgroup
		regs_dec<40>();
		if (tid == 0) {
			int it = 0;

			for (long q = unit0; q < units; q += nunits) {
				long m0, n0;

				tile_of(q, &m0, &n0);
				for (int kt = 0; kt < KT; kt++, it++) {
					const int s = it % FS_STAGES;
					const uint32_t sa = sbase + s * STAGE;

					// Fresh barriers count as done with
					// the phase before: no wait at first.
					mbar_wait(eb + 8 * s, (it / FS_STAGES & 1) ^ 1);
					mbar_expect(fb + 8 * s, STAGE);
					tma_load(sa, &tx, kt * FX_BK, (int)m0, fb + 8 * s);
					if constexpr (CL == 2)
						tma_load_mc(sa + A_BYTES + rank * (BN / 2) * 128,
							    &tw, kt * FX_BK,
							    (int)(n0 + rank * (BN / 2)),
							    fb + 8 * s, 3);
					else
						tma_load(sa + A_BYTES, &tw, kt * FX_BK,
							 (int)n0, fb + 8 * s);
				}
			}
		}
		if constexpr (CL == 2)
			cluster_sync();
		return;
	}

	regs_inc<232>();
	const int lane = tid & 31, cw = (tid >> 5) - 4, g = lane >> 2, t = lane & 3;
	const int row0 = cw * 16;  // warp cw of the math warps: rows row0..+15
	const int mi = tid - 128;  // 0..255 among the math threads
	const bool vec8 = (N & 7) == 0;  // rows of y 16-byte aligned
	int nt = 0;                // tiles this block has done
	uint32_t a0[FX_BK / 16][4], a1[FX_BK / 16][4], piv[2];
	float s1[2], s2[2], acc[128];
	int it = 0;

	auto release = [&](int i) {
		if (lane == 0) {
			mbar_arrive(eb + 8 * (i % FS_STAGES));
			if constexpr (CL == 2)
				mbar_arrive_remote(eb + 8 * (i % FS_STAGES), rank ^ 1);
		}
	};

	// One k-tile: wait for it, shift and sum this warp's A fragments,
	// queue the four wgmmas, wait for the previous k-tile's (whose A
	// registers the next call rewrites) and free its stage.
	auto step = [&](int kt, uint32_t (&a)[FX_BK / 16][4]) {
		const int s = it % FS_STAGES;
		const uint32_t sa = sbase + s * STAGE, sb = sa + A_BYTES;
		const int kleft = K - kt * FX_BK;

		mbar_wait(fb + 8 * s, it / FS_STAGES & 1);
		wg_ktile<!PASS>(sa, sb, row0, lane, kleft, piv, a, s1, s2, acc);
		if (kt > 0)
			release(it - 1);
		it++;
	};

	for (long q = unit0; q < units; q += nunits) {
		long m0, n0;

		float mt[2], rs[2];

		tile_of(q, &m0, &n0);
		// The tile's s and b', one column a math thread: loaded now,
		// kept in registers through the k loop, shared for the epilogue.
		const long mc = n0 + mi;
		const float my_s = mc < N ? sW[mc] : 0.f, my_b = mc < N ? bf[mc] : 0.f;
		const int buf = nt++ & 1;

		if constexpr (PASS) {
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const long r = m0 + row0 + g + 8 * h;
				const float hi = r < M ? stats[r] : 0.f;
				const __nv_bfloat16 c = __float2bfloat16_rn(hi);
				const __nv_bfloat162 cc = __halves2bfloat162(c, c);

				piv[h] = *(const uint32_t *)&cc;
				// hi - c is exact: c is hi rounded.
				mt[h] = r < M ? hi - __bfloat162float(c) + stats[M + r] : 0.f;
				rs[h] = r < M ? stats[2 * M + r] : 0.f;
			}
		} else {
			wg_pivots(x, m0 + row0 + g, M, K, piv);
			s1[0] = s1[1] = s2[0] = s2[1] = 0.f;
		}
		wg_kloop(KT, step, a0, a1, acc);
		release(it - 1);
		if constexpr (!PASS) {
#pragma unroll
			for (int h = 0; h < 2; h++)
				quad_stats(s1[h], s2[h], K, &mt[h], &rs[h]);
		}

		// Two buffers: a warpgroup writes this tile's while the other
		// may still read the last one's; the one before that is free,
		// since both passed the barrier below since.
		ep_s[buf][mi] = my_s;
		ep_b[buf][mi] = my_b;
		bar_sync(1, 256);

		// Epilogue, from the accumulators: y = rstd * (acc - (mean -
		// c) * s) + b'. acc[4j + 2h + e] is row row0 + g + 8h, tile
		// position 8j + 2t + e, which W' (perm32's order) made column
		// 32b + 8t + 2u + e for j = 4b + u: a thread holds 8 adjacent
		// columns of each group of 32 and stores them as 16 bytes.
		// Whole tiles (the common case) store unchecked.
		const long r0 = m0 + row0 + g;
		__nv_bfloat16 *yr = y + r0 * N + n0 + 8 * t;

		if (vec8 && m0 + BM <= M && n0 + BN <= N) {
#pragma unroll
			for (int b = 0; b < BN / 32; b++) {
				const float4 *sp = (const float4 *)&ep_s[buf][32 * b + 8 * t];
				const float4 *bp = (const float4 *)&ep_b[buf][32 * b + 8 * t];
				const float4 s0 = sp[0], s1 = sp[1], b0 = bp[0], b1 = bp[1];
				const float sc[8] = { s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w };
				const float bc[8] = { b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w };

#pragma unroll
				for (int h = 0; h < 2; h++) {
					uint32_t v[4];

#pragma unroll
					for (int u = 0; u < 4; u++) {
						const float *a = &acc[4 * (4 * b + u) + 2 * h];
						__nv_bfloat162 pr = __floats2bfloat162_rn(
							rs[h] * (a[0] - mt[h] * sc[2 * u]) + bc[2 * u],
							rs[h] * (a[1] - mt[h] * sc[2 * u + 1]) + bc[2 * u + 1]);

						v[u] = *(const uint32_t *)&pr;
					}
					*(uint4 *)(yr + 8L * h * N + 32 * b) =
						make_uint4(v[0], v[1], v[2], v[3]);
				}
			}
			continue;
		}
#pragma unroll
		for (int j = 0; j < BN / 8; j++) {
			const int cl = 32 * (j / 4) + 8 * t + 2 * (j % 4);  // in the tile
			const float2 sc = *(const float2 *)&ep_s[buf][cl];
			const float2 bc = *(const float2 *)&ep_b[buf][cl];

#pragma unroll
			for (int h = 0; h < 2; h++) {
				const float v0 = rs[h] * (acc[4 * j + 2 * h] - mt[h] * sc.x) + bc.x;
				const float v1 = rs[h] * (acc[4 * j + 2 * h + 1] - mt[h] * sc.y) + bc.y;
				__nv_bfloat16 *p = y + (r0 + 8 * h) * N + n0 + cl;

				if (r0 + 8 * h >= M || n0 + cl >= N)
					continue;
				p[0] = __float2bfloat16_rn(v0);
				if (n0 + cl + 1 < N)
					p[1] = __float2bfloat16_rn(v1);
			}
		}
	}
	if constexpr (CL == 2)
		cluster_sync();  // the other block may still arrive on ours
#endif
}

// --- backward, naive: one thread per row. Statistics as in k_fwd_naive;
// dh = dy_row W recomputed for each chunk of V columns (two passes: sums,
// then dx); every parameter gradient (dgamma, dbeta, dW, db) accumulated
// with fp32 atomics into a zeroed fp32 buffer, converted to the dtype
// afterwards. Each thread starts its k loops at its own row index, so the
// 32 lanes of a warp read W at adjacent chunks and add to adjacent
// addresses of dW instead of queueing on one; dy is read V entries at a time
// where N allows, and the loops over N are unrolled so that several loads
// are in flight (at M = 512 there is one warp per SM; at 512 x 4096 ->
// 16384 on an H200 one launch took 12.3 s fp32 / 5.3 s bf16 loading one
// chunk of dy at a time, 7.7 / 6.3 s with the dW loads batched). The
// teaching version: M*N*K atomics and recomputation make it slow by design.
template <typename T, int V>
__global__ void k_bwd_naive(const T *__restrict__ x, const T *__restrict__ gamma,
			    const T *__restrict__ beta, const T *__restrict__ W,
			    const T *__restrict__ dy, T *__restrict__ dx,
			    float *__restrict__ acc, long M, int K, int N)
{
	long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
	float *adW = acc, *adg = acc + (long)N * K, *adb = adg + K, *adbias = adb + K;
	const T *xr = x + i * K, *dyr = dy + i * N;
	const int KC = K / V, NV = N % V == 0 ? V : 1;
	float c, s1 = 0, s2 = 0, mt, rs, sg = 0, sgx = 0;

	if (i >= M)
		return;
	c = to_f(xr[0]);
	for (int k = 0; k < K; k += V) {
		float xv[V];

		load_chunk<T, V>(x, M, K, i, k, xv);
		for (int j = 0; j < V; j++) {
			float v = xv[j] - c;

			s1 += v;
			s2 += v * v;
		}
	}
	shifted_stats(s1, s2, K, &mt, &rs);
	for (int nn = 0; nn < N; nn++) {
		int n = (int)((nn + i) % N);

		atomicAdd(&adbias[n], to_f(dyr[n]));
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int kc = 0; kc < KC; kc++) {
			int k = (int)((kc + i) % KC) * V;
			float dh[V], xv[V], gv[V];

			for (int j = 0; j < V; j++)
				dh[j] = 0.f;
#pragma unroll 8
			for (int n = 0; n < N; n += NV) {
				float dv[V], wv[V];

				if (NV == V)
					load_chunk<T, V>(dy, M, N, i, n, dv);
				else
					dv[0] = to_f(dyr[n]);
#pragma unroll
				for (int jn = 0; jn < V; jn++) {
					if (jn >= NV)
						break;
					load_chunk<T, V>(W, N, K, n + jn, k, wv);
					for (int j = 0; j < V; j++)
						dh[j] = fmaf(dv[jn], wv[j], dh[j]);
				}
			}
			load_chunk<T, V>(x, M, K, i, k, xv);
			load_chunk<T, V>(gamma, 1, K, 0, k, gv);
			for (int j = 0; j < V; j++) {
				float xh = ((xv[j] - c) - mt) * rs, g = dh[j] * gv[j];

				if (pass == 0) {
					atomicAdd(&adg[k + j], dh[j] * xh);
					atomicAdd(&adb[k + j], dh[j]);
					sg += g;
					sgx += g * xh;
				} else {
					dx[i * K + k + j] = from_f<T>(rs * (g - sg / K - xh * (sgx / K)));
				}
			}
		}
	}
	// dW: NB chunks of dy are loaded before their atomics are issued, so
	// NB loads are in flight (the compiler does not move loads above
	// atomics, and one load at a time, each behind the previous chunk's
	// atomics, took ~0.7 us a chunk).
	constexpr int NB = 8;
	for (int kk = 0; kk < K; kk++) {
		int k = (int)((kk + i) % K);
		float h = ((to_f(xr[k]) - c) - mt) * rs * to_f(gamma[k]) +
			  to_f(beta[k]);

		for (int n0 = 0; n0 < N; n0 += NB * NV) {
			float dv[NB][V];

#pragma unroll
			for (int u = 0; u < NB; u++) {
				const int n = n0 + u * NV;

				if (NV == V)
					load_chunk<T, V>(dy, M, N, i, n, dv[u]);
				else
					dv[u][0] = n < N ? to_f(dyr[n]) : 0.f;
			}
#pragma unroll
			for (int u = 0; u < NB; u++) {
#pragma unroll
				for (int jn = 0; jn < V; jn++) {
					const int n = n0 + u * NV + jn;

					if (jn < NV && n < N)
						atomicAdd(&adW[(long)n * K + k], dv[u][jn] * h);
				}
			}
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

// --- db: column sums of dy over rows, deterministic (no atomics): blocks
// of 32 columns x CS_ROWS rows write per-chunk partials, k_colsum_final
// adds the chunks in order.
#define CS_ROWS 128
template <typename T, int V>
__global__ void k_colsum_db(const T *__restrict__ dy, float *__restrict__ part,
			    long M, long C)
{
	__shared__ float sa[8][32 * V + 1];
	int tx = threadIdx.x, ty = threadIdx.y;
	long c0 = (blockIdx.x * 32L + tx) * V, chunk = blockIdx.y;
	long r0 = chunk * CS_ROWS, r1 = r0 + CS_ROWS < M ? r0 + CS_ROWS : M;
	float a[V];

#pragma unroll
	for (int e = 0; e < V; e++)
		a[e] = 0;
	if (c0 < C) {  // V > 1 only when C % V == 0: all V columns are in
		for (long r = r0 + ty; r < r1; r += 8) {
			if constexpr (V > 1) {
				T v[V];
				uint4 q = __ldcs(reinterpret_cast<const uint4 *>(dy + r * C + c0));

				memcpy(v, &q, sizeof q);
#pragma unroll
				for (int e = 0; e < V; e++)
					a[e] += to_f(v[e]);
			} else {
				a[0] += to_f(dy[r * C + c0]);
			}
		}
	}
#pragma unroll
	for (int e = 0; e < V; e++)
		sa[ty][tx * V + e] = a[e];
	__syncthreads();
	if (ty == 0 && c0 < C) {
#pragma unroll
		for (int e = 0; e < V; e++) {
			for (int j = 1; j < 8; j++)
				a[e] += sa[j][tx * V + e];
			part[chunk * C + c0 + e] = a[e];
		}
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

// The LayerNorm backward's partial rows: at most this many blocks (its
// persistent grid is a few blocks per SM).
#define LNB_PARTIALS 1024

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
	void *Wf;            // fused forward: W' (Np x K, dtype)
	long Np;             // N rounded up to 32
	int use_ws;          // fused bf16 forward: the warp-specialized kernel
	                     // serves, W' in perm32's order
	float *sW, *bf;      // fused forward: s, b'
	float *stats;        // backward, and the bf16 fused forward when it
	                     // runs a statistics pass: c, mean - c, rstd (3 x M)
	void *dx, *dW, *dg, *dbeta, *db;  // backward outputs (dtype); dbeta
	                     // follows dgamma in one allocation (dg)
	void *dh;            // backward: dh = dy W, M x K (dtype)
	float *part;         // backward: dgamma/dbeta and db partials
	long lnb;            // backward: the LayerNorm backward's blocks
	int lnh;             // fused backward: the LayerNorm backward recomputes
	                     // h itself (rows the register kernels hold)
	float *acc;          // naive backward: fp32 atomics targets
	cublasLtHandle_t lt;
	void *ws;
	struct lt_gemm g0, g1;
	float fold_us;
	int sms;             // multiprocessors of the device (tile choice)
	int wgmma;           // fused bf16 forward: the wgmma kernel is there
	int ws_cl;           // use_ws: blocks a cluster (1, or 2 sharing W')
	int ws_clusters;     // ws_cl = 2: clusters resident at once
};

static int vec_width(long K, enum fp_dtype dt)
{
	int v = dt == FP_BF16 ? 8 : 4;

	return K % v == 0 ? v : 1;
}

template <typename T>
static int launch_fold(const struct lnl_op *op, cudaStream_t st)
{
	unsigned blocks = (unsigned)(((op->use_ws ? op->Np : op->N) + 7) / 8);

	k_fold<T><<<blocks, 256, 0, st>>>((const T *)op->W, (const T *)op->gamma,
					  (const T *)op->beta, (const T *)op->b,
					  (T *)op->Wf, op->sW, op->bf, (int)op->N,
					  (int)op->K, op->use_ws);
	return CUDA_CHECK_LAUNCH("k_fold");
}

// Raise the fused forward's dynamic shared memory limits and learn whether
// this build has the wgmma kernel for the device (sm_90a code for a
// compute capability 9.0 GPU), once per process. Returns 0 with *wgmma set.
static int fx_setup(int *wgmma)
{
	static int done, have;
	int *d = NULL;

	if (!done) {
		if (CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_mma<__nv_bfloat16, 128, 256>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, FX_SMEM(128, 256))) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_mma<__nv_bfloat16, 64, 128>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, FX_SMEM(64, 128))) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_mma<float, 128, 256>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, FX_SMEM(128, 256))) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_mma<float, 64, 128>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, FX_SMEM(64, 128))) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_wgmma,
				cudaFuncAttributeMaxDynamicSharedMemorySize, FW_SMEM)) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_ws<false, 1>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, FS_SMEM)) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_ws<true, 1>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, FS_SMEM)) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_ws<false, 2>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, FS_SMEM)) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_ws<true, 2>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, FS_SMEM)) ||
		    CUDA_CHECK(cudaMalloc((void **)&d, sizeof *d)))
			return -1;
		k_wgmma_probe<<<1, 1>>>(d);
		if (CUDA_CHECK_LAUNCH("k_wgmma_probe") ||
		    CUDA_CHECK(cudaMemcpy(&have, d, sizeof have, cudaMemcpyDeviceToHost))) {
			cudaFree(d);
			return -1;
		}
		cudaFree(d);
		done = 1;
	}
	*wgmma = have;
	return 0;
}

// A TMA descriptor of a row-major bf16 tensor (rows x cols, cols % 8 == 0)
// copied in boxes of box_rows x 64 with the 128-byte swizzle; reads past
// its edges give zeros. The driver's encoder is found once through the
// runtime (nothing links libcuda).
static int tma_map(CUtensorMap *m, const void *p, long cols, long rows, int box_rows)
{
	static PFN_cuTensorMapEncodeTiled_v12000 encode;
	cuuint64_t dim[2] = { (cuuint64_t)cols, (cuuint64_t)rows };
	cuuint64_t stride[1] = { (cuuint64_t)cols * 2 };
	cuuint32_t box[2] = { FX_BK, (cuuint32_t)box_rows }, step[2] = { 1, 1 };
	CUresult r;

	if (!encode) {
		cudaDriverEntryPointQueryResult q;

		if (CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled",
				(void **)&encode, 12000, cudaEnableDefault, &q)))
			return -1;
		if (q != cudaDriverEntryPointSuccess || !encode)
			return error("the CUDA driver has no cuTensorMapEncodeTiled");
	}
	r = encode(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)p, dim, stride, box,
		   step, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
		   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	return r == CUDA_SUCCESS ? 0 : error("cuTensorMapEncodeTiled failed (error %d)", (int)r);
}

// One launch of k_fwd_fused_ws<PASS, CL> on grid blocks, in clusters of CL.
template <bool PASS, int CL>
static int launch_ws(const struct lnl_op *op, const CUtensorMap &tx, const CUtensorMap &tw,
		     const __nv_bfloat16 *x, unsigned grid, cudaStream_t st)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at;

	cluster_config(&cfg, &at, CL, grid, FS_THREADS, FS_SMEM, st);
	return CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_fwd_fused_ws<PASS, CL>, tx, tw, x,
					     (const float *)(PASS ? op->stats : NULL),
					     (const float *)op->sW, (const float *)op->bf,
					     (__nv_bfloat16 *)op->y, op->M, (int)op->K,
					     (int)op->N));
}

// The warp-specialized kernel: a persistent grid, one block per SM (as many
// two-block clusters as fit at once with ws_cl = 2), at most one a tile (a
// pair of tiles).
static int launch_fused_ws(const struct lnl_op *op, const __nv_bfloat16 *x, cudaStream_t st)
{
	const long M = op->M, tiles_m = (M + 127) / 128, tiles_n = (op->Np + 255) / 256;
	const int K = (int)op->K, cl = op->ws_cl;
	const long units = (tiles_m + cl - 1) / cl * tiles_n;
	const long most = cl == 2 ? op->ws_clusters : op->sms;
	const unsigned grid = (unsigned)(cl * (units < most ? units : most));
	CUtensorMap tx, tw;

	if (tma_map(&tx, x, K, M, 128) || tma_map(&tw, op->Wf, K, op->Np, 256 / cl))
		return -1;
	if (op->stats && ln_gelu_ln_stats(FP_BF16, x, op->stats, M, K, st))
		return -1;
	if (op->stats)
		return cl == 2 ? launch_ws<true, 2>(op, tx, tw, x, grid, st)
			       : launch_ws<true, 1>(op, tx, tw, x, grid, st);
	return cl == 2 ? launch_ws<false, 2>(op, tx, tw, x, grid, st)
		       : launch_ws<false, 1>(op, tx, tw, x, grid, st);
}

// How many blocks a cluster of the warp-specialized kernel has: 2 (W'
// multicast to both) where W' has more than one tile column (N > 256), 1
// where it has one; FUSEPROF_LNL_CLUSTER=1 or 2 says which everywhere.
// Pairs gained 4-7 % at N = 4096 and 16384 (K = 4096) in bench/fpbench,
// nothing at N = 1024, and lost 1-3 % at N = 256 (K = 768 and 4096) in
// fuseprof run beside cuBLAS (H100, bench/RESULTS.md). Sets
// op->ws_clusters, the clusters of two that fit on the device at once.
static int fwd_ws_cluster(struct lnl_op *op)
{
	const char *e = getenv("FUSEPROF_LNL_CLUSTER");
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at;
	int n = 0;

	op->ws_cl = e && *e ? (atoi(e) == 2 ? 2 : 1) : op->N > 256 ? 2 : 1;
	if (op->ws_cl == 2) {
		cluster_config(&cfg, &at, 2, 2u * (unsigned)op->sms, FS_THREADS, FS_SMEM, 0);
		if (CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, k_fwd_fused_ws<false, 2>,
							      &cfg)))
			return -1;
		if (n < 1)
			op->ws_cl = 1;  // no room for a pair: one block a cluster
		op->ws_clusters = n;
	}
	if (getenv("FUSEPROF_VERBOSE"))
		fprintf(stderr, "ln_linear_fwd/fused: warp-specialized kernel, clusters of %d "
			"(%d pairs resident at once)\n", op->ws_cl, op->ws_clusters);
	return 0;
}

#define LNL_WS_K 512  // from 8 k-tiles on (bench/RESULTS.md: faster from K = 256, checked from 512)

// Whether the bf16 fused forward runs k_fwd_fused_ws: on Hopper (the
// build has wgmma for this device), with enough 128 x 256 tiles to fill half
// the SMs, from K = LNL_WS_K on; FUSEPROF_LNL_WS=0 or 1 says never or
// wherever it can (to compare the kernels).
static int fwd_takes_ws(const struct lnl_op *op)
{
	const long big = ((op->M + 127) / 128) * ((op->N + 255) / 256);
	const char *e = getenv("FUSEPROF_LNL_WS");
	const int force = e && *e ? atoi(e) != 0 : -1;

	return !op->bwd && op->variant == FWD_FUSED && op->dt == FP_BF16 &&
	       op->wgmma && vec_width(op->K, op->dt) > 1 && 2 * big >= op->sms &&
	       force != 0 && (force == 1 || op->K >= LNL_WS_K);
}

// The fused forward's tensor-core kernels: 128 x 256 tiles when there are
// enough to fill half the SMs (bf16: wgmma where the build has it, warp-
// specialized from K = LNL_WS_K on, else mma.sync; fp32: 3xTF32 on
// mma.sync), else 64 x 128 on mma.sync.
template <typename T>
static int launch_fused_mma(const struct lnl_op *op, const T *x, cudaStream_t st)
{
	const long M = op->M;
	const int K = (int)op->K, N = (int)op->N;
	const long big = ((M + 127) / 128) * ((N + 255) / 256);
	const long small = ((M + 63) / 64) * ((N + 127) / 128);
	const T *Wf = (const T *)op->Wf;
	T *y = (T *)op->y;

	if (2 * big < op->sms) {
		k_fwd_fused_mma<T, 64, 128><<<(unsigned)small, FX_THREADS, FX_SMEM(64, 128), st>>>(
			x, Wf, op->sW, op->bf, y, M, K, N);
		return CUDA_CHECK_LAUNCH("k_fwd_fused_mma");
	}
	if constexpr (sizeof(T) == 2) {
		if (op->use_ws)
			return launch_fused_ws(op, x, st);
		if (op->wgmma) {
			k_fwd_fused_wgmma<<<(unsigned)big, FW_THREADS, FW_SMEM, st>>>(
				x, Wf, op->sW, op->bf, y, M, K, N);
			return CUDA_CHECK_LAUNCH("k_fwd_fused_wgmma");
		}
	}
	k_fwd_fused_mma<T, 128, 256><<<(unsigned)big, FX_THREADS, FX_SMEM(128, 256), st>>>(
		x, Wf, op->sW, op->bf, y, M, K, N);
	return CUDA_CHECK_LAUNCH("k_fwd_fused_mma");
}

template <typename T>
static int launch_fwd(const struct lnl_op *op, const T *x, cudaStream_t st)
{
	const long M = op->M;
	const int K = (int)op->K, N = (int)op->N;
	const int v = vec_width(K, op->dt);
	const unsigned nb = (unsigned)((M + WARP - 1) / WARP);

	switch (op->variant) {
	case FWD_NAIVE:
		if (v == 1)
			k_fwd_naive<T, 1><<<nb, WARP, 0, st>>>(x, (const T *)op->gamma,
				(const T *)op->beta, (const T *)op->W, (const T *)op->b,
				(T *)op->y, M, K, N);
		else
			k_fwd_naive<T, 16 / sizeof(T)><<<nb, WARP, 0, st>>>(x,
				(const T *)op->gamma, (const T *)op->beta, (const T *)op->W,
				(const T *)op->b, (T *)op->y, M, K, N);
		return CUDA_CHECK_LAUNCH("k_fwd_naive");
	case FWD_UNFUSED:  // the LayerNorm+GELU workloads' LayerNorm kernel
		return ln_gelu_ln_fwd(op->dt, x, op->gamma, op->beta, op->h, NULL,
				      M, K, st) ||
		       lt_run(&op->g0, op->lt, op->W, op->h, op->y, op->ws, st) ? -1 : 0;
	default: {
		long tiles = ((M + FB_M - 1) / FB_M) * ((N + FB_N - 1) / FB_N);

		if (v > 1)
			return launch_fused_mma<T>(op, x, st);
		if (v == 1)
			k_fwd_fused<T, 1><<<(unsigned)tiles, F_THREADS, 0, st>>>(
				x, (const T *)op->Wf, op->sW, op->bf, (T *)op->y, M, K, N);
		else
			k_fwd_fused<T, 16 / sizeof(T)><<<(unsigned)tiles, F_THREADS, 0, st>>>(
				x, (const T *)op->Wf, op->sW, op->bf, (T *)op->y, M, K, N);
		return CUDA_CHECK_LAUNCH("k_fwd_fused");
	}
	}
}


template <typename T>
static int launch_bwd(const struct lnl_op *op, const T *x, const T *dy,
		      cudaStream_t st)
{
	const long M = op->M, K = op->K, N = op->N, R = (M + CS_ROWS - 1) / CS_ROWS;

	if (op->variant == BWD_NAIVE) {
		size_t nacc = (size_t)N * K + 2 * (size_t)K + (size_t)N;

		if (CUDA_CHECK(cudaMemsetAsync(op->acc, 0, nacc * sizeof(float), st)))
			return -1;
		if (vec_width(K, op->dt) == 1)
			k_bwd_naive<T, 1><<<(unsigned)((M + WARP - 1) / WARP), WARP, 0, st>>>(
				x, (const T *)op->gamma, (const T *)op->beta,
				(const T *)op->W, dy, (T *)op->dx, op->acc, M, K, N);
		else
			k_bwd_naive<T, 16 / sizeof(T)><<<(unsigned)((M + WARP - 1) / WARP),
							 WARP, 0, st>>>(
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
	// Unfused: h = LayerNorm(x) recomputed, with its statistics; dW = dy^T
	// h; dh = dy W; the LayerNorm backward (the LayerNorm+GELU workloads'
	// kernel) gives dx, dgamma and dbeta. Fused: dh first, then one pass
	// over x and dh recomputes the statistics, writes h and does the
	// LayerNorm backward (x read once, no statistics in memory); then dW.
	if (op->lnh) {
		if (lt_run(&op->g1, op->lt, op->W, dy, op->dh, op->ws, st) ||
		    ln_gelu_ln_bwd_recompute(op->dt, op->dh, x, op->gamma, op->beta,
					     op->h, op->dx, op->dg, op->part, op->lnb,
					     M, K, st) ||
		    lt_run(&op->g0, op->lt, op->h, dy, op->dW, op->ws, st))
			return -1;
	} else if (ln_gelu_ln_fwd(op->dt, x, op->gamma, op->beta, op->h, op->stats,
				  M, K, st) ||
		   lt_run(&op->g0, op->lt, op->h, dy, op->dW, op->ws, st) ||
		   lt_run(&op->g1, op->lt, op->W, dy, op->dh, op->ws, st) ||
		   ln_gelu_ln_bwd(op->dt, op->dh, x, op->gamma, op->stats, op->dx,
				  op->dg, op->part, op->lnb, M, K, st)) {
		return -1;
	}
	// db: column sums of dy (partials reuse the buffer: ordered on st).
	if (N % (16 / sizeof(T)) == 0)
		k_colsum_db<T, 16 / sizeof(T)><<<dim3((unsigned)((N + 32 * (16 / sizeof(T)) - 1) /
							     (32 * (16 / sizeof(T)))),
						      (unsigned)R), dim3(32, 8), 0, st>>>(
			dy, op->part, M, N);
	else
		k_colsum_db<T, 1><<<dim3((unsigned)((N + 31) / 32), (unsigned)R),
				    dim3(32, 8), 0, st>>>(dy, op->part, M, N);
	if (CUDA_CHECK_LAUNCH("k_colsum_db"))
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
#define LNL_PASS_N 2048        // see fwd_stats_pass()
#define LNL_PASS_K 2048
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

// Whether the bf16 fused forward takes its row statistics from a pass of
// their own (ln_gelu_ln_stats: x read once more, 12 bytes a row written)
// instead of summing them in the GEMM's load path. Only the warp-specialized
// kernel has the choice, and the pass was measured at K = 4096 only: below
// K = LNL_PASS_K the sums stay in the load path.
static int fwd_stats_pass(const struct fp_shape *s, enum fp_dtype dt)
{
	const char *e = getenv("FUSEPROF_LNL_PASS");

	if (dt != FP_BF16 || s->v[1] < LNL_PASS_K)
		return 0;
	if (e && *e)
		return atoi(e) != 0;
	return s->v[2] >= LNL_PASS_N;
}

// Sizes of everything an instance allocates, shared by create() and
// device_bytes() so the two cannot drift apart.
struct lnl_sizes {
	size_t xset, dyset, vecK, vecN, W, Wf, y, h, stats, dx, dh, part, acc, ws;
	size_t total;
};

static void lnl_sizes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
		      int variant, int nsets, struct lnl_sizes *z)
{
	size_t M = (size_t)s->v[0], K = (size_t)s->v[1], N = (size_t)s->v[2];
	size_t es = fp_dtype_size(dt), R = (M + CS_ROWS - 1) / CS_ROWS;

	memset(z, 0, sizeof *z);
	z->xset = dev_pad(M * K * es);
	z->vecK = dev_pad(K * es);
	z->vecN = dev_pad(N * es);
	z->W = dev_pad(N * K * es);
	if (!bwd) {
		z->y = dev_pad(M * N * es);
		if (variant == FWD_UNFUSED) {
			z->h = z->xset;
			z->ws = LT_WS_BYTES;
		}
		if (variant == FWD_FUSED) {  // W', s, b'; the statistics
			z->Wf = dev_pad((N + 31) / 32 * 32 * K * es);
			z->acc = z->Wf + 2 * dev_pad(N * sizeof(float));
			if (fwd_stats_pass(s, dt))
				z->stats = dev_pad(3 * M * sizeof(float));
		}
		z->total = (size_t)nsets * z->xset + 2 * z->vecK + z->W + z->vecN +
			   z->y + z->h + z->ws + z->acc + z->stats;
		return;
	}
	z->dyset = dev_pad(M * N * es);
	z->dx = z->xset;
	if (variant == BWD_NAIVE) {
		z->acc = dev_pad((N * K + 2 * K + N) * sizeof(float));
	} else {
		z->h = z->xset;
		z->stats = dev_pad(3 * M * sizeof(float));
		z->dh = dev_pad(M * K * es);
		// db's column-sum partials, or the LayerNorm backward's (at
		// most LNB_PARTIALS blocks of 2 K)
		z->part = 2 * R * N > 2 * LNB_PARTIALS * K ? 2 * R * N
							   : 2 * LNB_PARTIALS * K;
		z->part = dev_pad(z->part * sizeof(float));
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
	default:  // W' in place of W, s and b' (fp32) in place of gamma, beta,
	          // b; with a statistics pass x read once more, 3 floats a row
	          // written and read
		m->variant_bytes = m->min_bytes - 2 * K * es - N * es + 8 * N + wre;
		if (m->variant_bytes < m->min_bytes)
			m->variant_bytes = m->min_bytes;
		if (fwd_stats_pass(s, dt))
			m->variant_bytes += M * K * es + 24 * M;
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
	else  // h and dh written and read; dy read by both GEMMs and the db
	      // column sums; unfused: x read twice, statistics (3 floats a
	      // row) written and read (fused: x once, statistics in registers;
	      // rows too wide for them take the unfused path)
		m->variant_bytes = m->min_bytes + 4 * E * es + 2 * M * N * es + 2 * wre +
				   (variant == BWD_UNFUSED || ln_gelu_plan(1, s->v[1], dt) == 0 ?
				    E * es + 24 * M : 0);
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
			 op->dg, op->db, op->dh, op->part, op->acc,
			 op->ws };
	for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
		cudaFree(bufs[i]);
	free(op);
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
		       t, K, N, t, K, NULL);
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
	op->Np = (op->N + 31) / 32 * 32;
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
		    (dev_alloc(&op->Wf, z.Wf) || dev_alloc(&op->stats, z.stats) ||
		     dev_alloc(&op->sW, dev_pad((size_t)op->N * sizeof(float))) ||
		     dev_alloc(&op->bf, dev_pad((size_t)op->N * sizeof(float)))))
			goto out_free;
	} else {
		if (dev_alloc(&op->dx, z.dx) || dev_alloc(&op->dW, z.W) ||
		    dev_alloc(&op->dg, 2 * z.vecK) ||
		    dev_alloc(&op->db, z.vecN) || dev_alloc(&op->acc, z.acc) ||
		    dev_alloc(&op->stats, z.stats) || dev_alloc(&op->dh, z.dh) ||
		    dev_alloc(&op->part, z.part))
			goto out_free;
		op->dbeta = (char *)op->dg + (size_t)op->K * fp_dtype_size(dt);
	}
	if ((bwd ? variant != BWD_NAIVE : variant == FWD_UNFUSED) && lnl_plan(op))
		goto out_free;
	if (bwd && variant != BWD_NAIVE) {
		op->lnh = variant == BWD_FUSED &&
			  ln_gelu_ln_bwd_blocks(dt, op->M, op->K, 1) > 0;
		op->lnb = ln_gelu_ln_bwd_blocks(dt, op->M, op->K, op->lnh);
		if (op->lnb < 0 || op->lnb > LNB_PARTIALS) {
			error("ln_linear_bwd: the LayerNorm backward wants %ld blocks "
			      "(at most %d)", op->lnb, LNB_PARTIALS);
			goto out_free;
		}
	}
	if (!bwd && variant == FWD_FUSED && fx_setup(&op->wgmma))
		goto out_free;
	if (getenv("FUSEPROF_LNL_NO_WGMMA"))  // to compare the kernels
		op->wgmma = 0;
	{
		int dev = 0;

		if (CUDA_CHECK(cudaGetDevice(&dev)) ||
		    CUDA_CHECK(cudaDeviceGetAttribute(&op->sms,
				cudaDevAttrMultiProcessorCount, dev)))
			goto out_free;
	}
	op->use_ws = fwd_takes_ws(op);
	if (op->use_ws && fwd_ws_cluster(op))
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
		      unsigned long long seed,
			  const struct fp_kopts *ko)
{
	return lnl_create(0, op, s, dt, variant, nsets, seed);
}

static int bwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed,
			  const struct fp_kopts *ko)
{
	return lnl_create(1, op, s, dt, variant, nsets, seed);
}

// ---------------------------------------------------------------------------
// The check
//
// Inputs are drawn on the device (counter-based, like create()'s, with the
// profile's distribution) and downloaded into floats, which hold every fp32
// and bf16 value exactly: the double reference sees the very values the GPU
// saw, and no check spends seconds drawing 67 M normals on one CPU core.
//
// Why sampling keeps the check strong. Each output is compared in full when
// its reference costs at most LNL_CHECK_MACS multiply-adds; past that, on a
// sample chosen by lnl_sample_counts/lnl_pick: every column (or a sample of
// columns too) of rows taken from every block of LNL_SAMPLE_BLOCK rows, at
// offsets drawn fresh for each check (the seed is printed). Every kernel
// here computes its output in tiles of at least 64 rows (and columns), so
// every tile of every launch - every block's mainloop, pipeline stages,
// tails and epilogue - is compared on at least one of its rows and one of
// its columns, and successive runs hit different rows inside the tiles. A
// wrong element that is alone in its tile is the one kind of bug a sample
// can miss; no kernel here computes an element apart from its tile.
// Parameter gradients (dW, dgamma, dbeta) are reduced over all M rows, so
// each sampled entry checks every row's contribution. The measure is the
// full check's: ||got - ref|| / ||ref|| over the compared entries.

// x (M x K) of profile p (see enum lnl_profile).
template <typename T>
__global__ void k_draw_x(T *__restrict__ x, long M, int K, int p, uint64_t seed)
{
	const long n = M * K;

	for (long e = blockIdx.x * (long)blockDim.x + threadIdx.x; e < n;
	     e += (long)gridDim.x * blockDim.x) {
		float z = draw_normal(seed, (uint64_t)e);

		x[e] = from_f<T>(p == LNL_OFFSET ? (float)LNL_OFFSET_MEAN + z
				 : p == LNL_CONSTANT
				 ? draw_normal(seed ^ 0x5851f42d4c957f2dull, (uint64_t)(e / K)) + 1e-3f * z
				 : z);
	}
}

// Fresh inputs of profile p into set 0 and the weights.
static int draw_inputs(struct lnl_op *op, int p, uint64_t seed)
{
	const enum fp_dtype dt = op->dt;
	const size_t MK = (size_t)(op->M * op->K), NK = (size_t)(op->N * op->K);
	const long nb = (long)((MK + 255) / 256) < 65536 ? (long)((MK + 255) / 256) : 65536;

	if (dt == FP_BF16)
		k_draw_x<__nv_bfloat16><<<(unsigned)nb, 256>>>((__nv_bfloat16 *)op->x,
			op->M, (int)op->K, p, seed);
	else
		k_draw_x<float><<<(unsigned)nb, 256>>>((float *)op->x, op->M,
			(int)op->K, p, seed);
	if (CUDA_CHECK_LAUNCH("k_draw_x") ||
	    dev_fill_normal(op->gamma, dt, (size_t)op->K, seed ^ 0x243f6a8885a308d3ull,
			    1.f, 0.1f, 0) ||
	    dev_fill_normal(op->beta, dt, (size_t)op->K, seed ^ 0x13198a2e03707344ull,
			    0.f, 0.1f, 0) ||
	    dev_fill_normal(op->W, dt, NK, seed ^ 0xa4093822299f31d0ull, 0.f,
			    (float)(1 / sqrt((double)op->K)), 0) ||
	    (op->b && dev_fill_normal(op->b, dt, (size_t)op->N,
				      seed ^ 0x082efa98ec4e6c89ull, 0.f, 0.1f, 0)) ||
	    (op->dy && dev_fill_normal(op->dy, dt, (size_t)(op->M * op->N),
				       seed ^ 0x452821e638d01377ull, 0.f, 1.f, 0)))
		return -1;
	return 0;
}

// n elements of a dtype tensor into floats (exact for fp32 and bf16).
static int download_f(float *dst, const void *src, enum fp_dtype dt, size_t n)
{
	uint16_t *h;
	int rc;

	if (dt == FP_F32)
		return CUDA_CHECK(cudaMemcpy(dst, src, n * 4, cudaMemcpyDeviceToHost));
	h = (uint16_t *)xmalloc(n * 2);
	rc = CUDA_CHECK(cudaMemcpy(h, src, n * 2, cudaMemcpyDeviceToHost));
	for (size_t i = 0; rc == 0 && i < n; i++) {
		uint32_t u = (uint32_t)h[i] << 16;

		memcpy(&dst[i], &u, 4);
	}
	free(h);
	return rc;
}

// Row `row` (len elements) of a row-major dtype tensor into floats.
static int download_row(float *dst, const void *src, enum fp_dtype dt,
			long row, long len)
{
	return download_f(dst, (const char *)src + (size_t)(row * len) * fp_dtype_size(dt),
			  dt, (size_t)len);
}

static double *to_double(const float *v, long n)
{
	double *d = (double *)xmalloc((size_t)(n > 0 ? n : 1) * sizeof *d);

	for (long i = 0; i < n; i++)
		d[i] = v[i];
	return d;
}

// Mean and rstd of a row of floats, in double (two passes, as
// lnl_layernorm_row_ref).
static void row_stats(const float *x, long K, double *mean, double *rstd)
{
	double m = 0, v = 0;

	for (long k = 0; k < K; k++)
		m += x[k];
	m /= (double)K;
	for (long k = 0; k < K; k++)
		v += (x[k] - m) * (x[k] - m);
	*mean = m;
	*rstd = 1 / sqrt(v / (double)K + LNL_EPS);
}

// Four partial sums: four independent add chains.
static double dot_df(const double *a, const float *b, long n)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	long k = 0;

	for (; k + 4 <= n; k += 4) {
		s0 += a[k] * b[k];
		s1 += a[k + 1] * b[k + 1];
		s2 += a[k + 2] * b[k + 2];
		s3 += a[k + 3] * b[k + 3];
	}
	for (; k < n; k++)
		s0 += a[k] * b[k];
	return (s0 + s1) + (s2 + s3);
}

// The sum of the squares of a dot product's terms (cmp_rel's floor).
static double dot_sq_df(const double *a, const float *b, long n)
{
	double s = 0;

	for (long k = 0; k < n; k++)
		s += (a[k] * b[k]) * (a[k] * b[k]);
	return s;
}

// y on a grid of sampled rows x sampled (or all) columns.
static int fwd_check(struct lnl_op *op, struct fp_rng *g, struct fp_check *r)
{
	const long M = op->M, K = op->K, N = op->N;
	const enum fp_dtype dt = op->dt;
	long w1, w2, nr, nc, *rows = NULL, *cols = NULL;
	float *W = NULL, *xr = NULL, *yr = NULL, *v = NULL;
	double *gm = NULL, *bt = NULL, *b = NULL, *h = NULL, *ref = NULL, *got = NULL;
	struct fp_cmp c;
	int rc = -1;

	lnl_sample_counts(M, N, (double)K, LNL_CHECK_MACS, &w1, &w2);
	rows = (long *)xmalloc((size_t)w1 * sizeof *rows);
	cols = (long *)xmalloc((size_t)w2 * sizeof *cols);
	nr = lnl_pick(M, w1, g, rows);
	nc = lnl_pick(N, w2, g, cols);
	W = (float *)xmalloc((size_t)(N * K) * sizeof *W);
	xr = (float *)xmalloc((size_t)K * sizeof *xr);
	yr = (float *)xmalloc((size_t)N * sizeof *yr);
	v = (float *)xmalloc((size_t)(K > N ? K : N) * sizeof *v);
	h = (double *)xmalloc((size_t)(nr * K) * sizeof *h);
	ref = (double *)xmalloc((size_t)(nr * nc) * sizeof *ref);
	got = (double *)xmalloc((size_t)(nr * nc) * sizeof *got);
	if (download_f(W, op->W, dt, (size_t)(N * K)) ||
	    download_f(v, op->gamma, dt, (size_t)K))
		goto out_free;
	gm = to_double(v, K);
	if (download_f(v, op->beta, dt, (size_t)K))
		goto out_free;
	bt = to_double(v, K);
	if (download_f(v, op->b, dt, (size_t)N))
		goto out_free;
	b = to_double(v, N);

	for (long s = 0; s < nr; s++) {
		double m, rs, *hr = h + s * K;

		if (download_row(xr, op->x, dt, rows[s], K))
			goto out_free;
		row_stats(xr, K, &m, &rs);
		for (long k = 0; k < K; k++)
			hr[k] = (xr[k] - m) * rs * gm[k] + bt[k];
	}
	// Column outer: W's row stays in L1 while every sampled row meets it.
	// The floor: with one or a few outputs, b + h W^T can cancel to far
	// below its terms (K = 1: b' against W beta), and then its relative
	// error measures fp32's rounding of the terms, not the kernel.
	cmp_init(&c);
	for (long j = 0; j < nc; j++) {
		const float *w = W + cols[j] * K;

		for (long s = 0; s < nr; s++) {
			ref[s * nc + j] = b[cols[j]] + dot_df(h + s * K, w, K);
			c.sq_floor += b[cols[j]] * b[cols[j]] + dot_sq_df(h + s * K, w, K);
		}
	}
	for (long s = 0; s < nr; s++) {
		if (download_row(yr, op->y, dt, rows[s], N))
			goto out_free;
		for (long j = 0; j < nc; j++)
			got[s * nc + j] = yr[cols[j]];
	}
	cmp_add(&c, got, ref, (size_t)(nr * nc));
	check_output(r, "y", &c);
	rc = 0;
out_free:
	free(rows);
	free(cols);
	free(W);
	free(xr);
	free(yr);
	free(v);
	free(gm);
	free(bt);
	free(b);
	free(h);
	free(ref);
	free(got);
	return rc;
}

// Compares a downloaded vector of n dtype elements on the sampled indices.
static int check_vec(struct fp_check *r, const char *name, const void *dev,
		     enum fp_dtype dt, long n, const long *idx, long cnt,
		     const double *ref)
{
	float *v = (float *)xmalloc((size_t)n * sizeof *v);
	double *got = (double *)xmalloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *got);
	struct fp_cmp c;
	int rc = download_f(v, dev, dt, (size_t)n);

	if (rc == 0) {
		for (long i = 0; i < cnt; i++)
			got[i] = v[idx ? idx[i] : i];
		cmp_init(&c);
		cmp_add(&c, got, ref, (size_t)cnt);
		check_output(r, name, &c);
	}
	free(v);
	free(got);
	return rc;
}

// The backward's outputs: dx on sampled rows (each whole: a row's LayerNorm
// backward needs its whole dh row, N*K multiply-adds), dW on a grid of
// sampled (n, k) entries (M each), dgamma and dbeta on sampled columns k
// (M*N each: dh's column over every row), db in full.
static int bwd_check(struct lnl_op *op, struct fp_rng *g, struct fp_check *r)
{
	const long M = op->M, K = op->K, N = op->N;
	const enum fp_dtype dt = op->dt;
	long w1, w2, nr, nn, nk, *ir = NULL, *in = NULL, *ik = NULL;
	float *x = NULL, *dy = NULL, *W = NULL, *v = NULL, *dWg = NULL;
	double *gm = NULL, *bt = NULL, *mean = NULL, *rstd = NULL, *dh = NULL;
	double *ref = NULL, *got = NULL, *hc = NULL, *wg = NULL, *d8 = NULL;
	struct fp_cmp c;
	int rc = -1;

	x = (float *)xmalloc((size_t)(M * K) * sizeof *x);
	dy = (float *)xmalloc((size_t)(M * N) * sizeof *dy);
	W = (float *)xmalloc((size_t)(N * K) * sizeof *W);
	v = (float *)xmalloc((size_t)(K > N ? K : N) * sizeof *v);
	mean = (double *)xmalloc((size_t)M * sizeof *mean);
	rstd = (double *)xmalloc((size_t)M * sizeof *rstd);
	if (download_f(x, op->x, dt, (size_t)(M * K)) ||
	    download_f(dy, op->dy, dt, (size_t)(M * N)) ||
	    download_f(W, op->W, dt, (size_t)(N * K)) ||
	    download_f(v, op->gamma, dt, (size_t)K))
		goto out_free;
	gm = to_double(v, K);
	if (download_f(v, op->beta, dt, (size_t)K))
		goto out_free;
	bt = to_double(v, K);
	for (long i = 0; i < M; i++)
		row_stats(x + i * K, K, &mean[i], &rstd[i]);

	// dx. dh of the sampled rows with W's row n outer, so W is read once.
	lnl_sample_counts(M, 1, (double)N * K, LNL_CHECK_MACS, &w1, &w2);
	ir = (long *)xmalloc((size_t)w1 * sizeof *ir);
	nr = lnl_pick(M, w1, g, ir);
	dh = (double *)xcalloc((size_t)(nr * K), sizeof *dh);
	ref = (double *)xmalloc((size_t)(nr * K) * sizeof *ref);
	got = (double *)xmalloc((size_t)(nr * K) * sizeof *got);
	for (long n = 0; n < N; n++) {
		const float *w = W + n * K;

		for (long s = 0; s < nr; s++) {
			double d = dy[ir[s] * N + n], *o = dh + s * K;

			for (long k = 0; k < K; k++)
				o[k] += d * w[k];
		}
	}
	for (long s = 0; s < nr; s++) {
		const long i = ir[s];
		const double *dr = dh + s * K;
		double sg = 0, sgx = 0;

		for (long k = 0; k < K; k++) {
			double xh = (x[i * K + k] - mean[i]) * rstd[i], gk = dr[k] * gm[k];

			sg += gk;
			sgx += gk * xh;
		}
		sg /= (double)K;
		sgx /= (double)K;
		for (long k = 0; k < K; k++) {
			double xh = (x[i * K + k] - mean[i]) * rstd[i];

			ref[s * K + k] = rstd[i] * (dr[k] * gm[k] - sg - xh * sgx);
		}
		if (download_row(v, op->dx, dt, i, K))
			goto out_free;
		for (long k = 0; k < K; k++)
			got[s * K + k] = v[k];
	}
	cmp_init(&c);
	cmp_add(&c, got, ref, (size_t)(nr * K));
	check_output(r, "dx", &c);
	free(ref);
	free(got);
	ref = got = NULL;

	// dW[n][k] = sum_i dy[i][n] h[i][k] on the grid; h's sampled columns
	// gathered so the inner loop runs over contiguous memory.
	lnl_sample_counts(N, K, (double)M, LNL_CHECK_MACS, &w1, &w2);
	in = (long *)xmalloc((size_t)w1 * sizeof *in);
	ik = (long *)xmalloc((size_t)w2 * sizeof *ik);
	nn = lnl_pick(N, w1, g, in);
	nk = lnl_pick(K, w2, g, ik);
	hc = (double *)xmalloc((size_t)(M * nk) * sizeof *hc);
	ref = (double *)xcalloc((size_t)(nn * nk), sizeof *ref);
	got = (double *)xmalloc((size_t)(nn * nk) * sizeof *got);
	dWg = (float *)xmalloc((size_t)(N * K) * sizeof *dWg);
	for (long i = 0; i < M; i++)
		for (long j = 0; j < nk; j++) {
			long k = ik[j];

			hc[i * nk + j] = (x[i * K + k] - mean[i]) * rstd[i] * gm[k] + bt[k];
		}
	for (long s = 0; s < nn; s++) {
		double *o = ref + s * nk;

		for (long i = 0; i < M; i++) {
			double d = dy[i * N + in[s]];
			const double *hr = hc + i * nk;

			for (long j = 0; j < nk; j++)
				o[j] += d * hr[j];
		}
	}
	if (download_f(dWg, op->dW, dt, (size_t)(N * K)))
		goto out_free;
	for (long s = 0; s < nn; s++)
		for (long j = 0; j < nk; j++)
			got[s * nk + j] = dWg[in[s] * K + ik[j]];
	cmp_init(&c);
	cmp_add(&c, got, ref, (size_t)(nn * nk));
	check_output(r, "dW", &c);
	free(ref);
	free(got);
	ref = got = NULL;

	// dgamma[k] = sum_i dh[i][k] xhat[i][k], dbeta[k] = sum_i dh[i][k] on
	// sampled k: W's sampled columns gathered, rows taken 8 at a time so
	// the gathered columns are read M/8 times.
	lnl_sample_counts(K, 1, (double)M * N, LNL_CHECK_MACS, &w1, &w2);
	free(ik);
	ik = (long *)xmalloc((size_t)w1 * sizeof *ik);
	nk = lnl_pick(K, w1, g, ik);
	wg = (double *)xmalloc((size_t)(N * nk) * sizeof *wg);
	d8 = (double *)xmalloc((size_t)(8 * nk) * sizeof *d8);
	ref = (double *)xcalloc((size_t)(2 * nk + N), sizeof *ref);
	for (long n = 0; n < N; n++)
		for (long j = 0; j < nk; j++)
			wg[n * nk + j] = W[n * K + ik[j]];
	for (long i0 = 0; i0 < M; i0 += 8) {
		const long rows = M - i0 < 8 ? M - i0 : 8;

		memset(d8, 0, (size_t)(8 * nk) * sizeof *d8);
		for (long n = 0; n < N; n++) {
			const double *w = wg + n * nk;

			for (long q = 0; q < rows; q++) {
				double a = dy[(i0 + q) * N + n], *o = d8 + q * nk;

				for (long j = 0; j < nk; j++)
					o[j] += a * w[j];
			}
		}
		for (long q = 0; q < rows; q++) {
			const long i = i0 + q;

			for (long j = 0; j < nk; j++) {
				double d = d8[q * nk + j];

				ref[j] += d * ((x[i * K + ik[j]] - mean[i]) * rstd[i]);
				ref[nk + j] += d;
			}
		}
	}
	if (check_vec(r, "dgamma", op->dg, dt, K, ik, nk, ref) ||
	    check_vec(r, "dbeta", op->dbeta, dt, K, ik, nk, ref + nk))
		goto out_free;

	// db: every entry.
	for (long i = 0; i < M; i++)
		for (long n = 0; n < N; n++)
			ref[2 * nk + n] += dy[i * N + n];
	if (check_vec(r, "db", op->db, dt, N, NULL, N, ref + 2 * nk))
		goto out_free;
	rc = 0;
out_free:
	free(ir);
	free(in);
	free(ik);
	free(x);
	free(dy);
	free(W);
	free(v);
	free(dWg);
	free(gm);
	free(bt);
	free(mean);
	free(rstd);
	free(dh);
	free(ref);
	free(got);
	free(hc);
	free(wg);
	free(d8);
	return rc;
}

extern "C" const struct workload wl_ln_linear_fwd, wl_ln_linear_bwd;

// Fresh inputs of the profile drawn from seed into set 0 and the weights
// (on the device), the outputs and intermediates poisoned, one run, outputs
// compared with the double reference on the downloaded inputs (see the top
// of this section for what is compared). FUSEPROF_VERBOSE prints where the
// check's time went.
// Outputs and intermediates poisoned, then one run of set 0, finished.
static int poison_run(struct lnl_op *op)
{
	const long M = op->M, K = op->K, N = op->N;
	const size_t es = fp_dtype_size(op->dt);

	if ((op->y && dev_poison(op->y, (size_t)(M * N) * es)) ||
	    (op->h && dev_poison(op->h, (size_t)(M * K) * es)) ||
	    (op->dx && dev_poison(op->dx, (size_t)(M * K) * es)) ||
	    (op->dW && dev_poison(op->dW, (size_t)(N * K) * es)) ||
	    (op->dg && dev_poison(op->dg, (size_t)K * es)) ||
	    (op->dbeta && dev_poison(op->dbeta, (size_t)K * es)) ||
	    (op->db && dev_poison(op->db, (size_t)N * es)) ||
	    (op->stats && dev_poison(op->stats, (size_t)(3 * M) * 4)) ||
	    (op->dh && dev_poison(op->dh, (size_t)(M * K) * es)) ||
	    lnl_launch((struct fp_op *)op, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()))
		return -1;
	return 0;
}

static int lnl_check(struct fp_op *fop, int profile, unsigned long long seed,
		     struct fp_check *r)
{
	struct lnl_op *op = (struct lnl_op *)fop;
	const long M = op->M, K = op->K, N = op->N;
	const size_t es = fp_dtype_size(op->dt);
	struct fp_rng g;
	double t0 = now_seconds(), t1;
	int rc;

	if (profile < 0 || profile >= LNL_NPROFILES)
		return error("ln_linear: no input profile %d", profile);
	if (draw_inputs(op, profile, seed))
		return -1;
	if (op->Wf && (dev_poison(op->Wf, (size_t)(op->Np * K) * es) ||
		       dev_poison(op->sW, (size_t)N * 4) ||
		       dev_poison(op->bf, (size_t)N * 4) || run_fold(op, 0)))
		return -1;
	if (poison_run(op))
		return -1;
	t1 = now_seconds();
	check_begin(r, seed, op->dt == FP_BF16 ? LNL_TOL_BF16 : LNL_TOL_FP32);
	rng_seed(&g, seed ^ 0x6a09e667f3bcc908ull);
	rc = op->bwd ? bwd_check(op, &g, r) : fwd_check(op, &g, r);
	if (getenv("FUSEPROF_VERBOSE"))
		fprintf(stderr, "%s/%s %s M=%ld,K=%ld,N=%ld profile %d: check %.0f ms "
			"(inputs and run %.0f, reference %.0f)\n",
			op->bwd ? "ln_linear_bwd" : "ln_linear_fwd",
			(op->bwd ? &wl_ln_linear_bwd : &wl_ln_linear_fwd)->variants[op->variant].name,
			fp_dtype_name(op->dt), M, K, N, profile,
			(now_seconds() - t0) * 1e3, (t1 - t0) * 1e3,
			(now_seconds() - t1) * 1e3);
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

// The tests' shapes: the issue's four, and two that send the bf16 fused
// forward's tensor-core kernel through its two tile sizes with every tail
// (K past the last 64-column step, partial row and column tiles, N not a
// multiple of 8 for the element-wise epilogue).
#define LNL_TESTS "M=1,K=1,N=1;M=3,K=1023,N=17;M=200,K=264,N=100;" \
	"M=4000,K=200,N=520;M=16384,K=768,N=256;M=512,K=4096,N=16384"
#define LNL_SUITE "M=16384,K=768,N=256;M=16384,K=4096,N=256;" \
	"M=16384,K=4096,N=16384"
#define LNL_QUICK "M=2048,K=768,N=256;M=1024,K=1024,N=1024"

static const struct fp_variant fwd_variants[] = {
	{ "naive", FP_NAIVE,
	  "1 kernel, one thread per row: statistics and all N outputs of the row, no tiling" },
	{ "unfused", FP_UNFUSED,
	  "2 kernels: LayerNorm writes h = LN(x) (dtype), cuBLASLt h W^T with the bias in its epilogue" },
	{ "fused", FP_FUSED,
	  "1 kernel: tiled GEMM on x - c against W' = W o gamma (folded in create; bf16 on "
	  "wgmma or mma.sync, fp32 as 3xTF32 on mma.sync), row statistics from the same tiles "
	  "(bf16 from N, K >= 2048: from a statistics pass first, 2 kernels), "
	  "y = rstd (acc - (mean - c) s) + b' in the epilogue" },
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
	  "7 kernels: LayerNorm recompute h (with row statistics), cuBLASLt dW = dy^T h and "
	  "dh = dy W, LayerNorm backward (dx and dgamma/dbeta partials, reduced in order), "
	  "db by column sums of dy (deterministic)" },
	{ "fused", FP_FUSED,
	  "6 kernels: dh = dy W, then one pass over x and dh recomputes the statistics, writes h "
	  "and does the LayerNorm backward (x read once), dW = dy^T h, db column sums" },
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
