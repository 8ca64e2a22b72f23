// ln_gelu.cu - the LayerNorm+GELU workloads: y = GELU(LayerNorm(x; gamma, beta))
// (ln_gelu_fwd) and its gradients dx, dgamma, dbeta (ln_gelu_bwd), fused and
// unfused, fp32 and bf16 (bf16 storage, fp32 math).
//
// Read top to bottom as in llm.c's dev/cuda: the CPU reference, the kernels
// (simplest first), the launchers, then the two workload definitions.
//
// Napkin math for one row-major M x N tensor of s-byte elements
// (s = 4 fp32, 2 bf16):
//   forward   min bytes (2 M N + 2 N) s: x read, y written, gamma/beta once.
//             FLOP 17 M N (tanh GELU) or 13 M N (erf): LayerNorm 8 per
//             element (mean add; subtract; square-accumulate FMA; normalize
//             sub+mul; affine FMA), GELU 9 (tanh form) or 5 (erf form),
//             counting an FMA as 2 and a transcendental as 1.
//   backward  min bytes (3 M N + 4 N) s: dy and x read, dx written, gamma
//             and beta read, dgamma and dbeta written.
//             FLOP 35 M N (tanh) or 29 M N (erf): LayerNorm recomputed 8,
//             GELU' 15 (tanh) or 9 (erf) plus dh = dy GELU'(h) 1, the
//             dgamma/dbeta accumulation 3, dxhat and its two row sums 4,
//             dx = rstd (dxhat - a - xhat b) 4.
// At 16384 x 4096 that is 537 MB (fp32) / 268 MB (bf16) forward, 179 us /
// 89 us at the H100's measured 3.0 TB/s copy bandwidth; 1.14 GFLOP is
// nothing next to 51 TFLOP/s, so every kernel here is memory-bound and
// "fast" means "moves few bytes at full bandwidth".
//
// Choices every kernel shares:
// - Statistics in two passes over data already on chip: the mean first,
//   then the sums of d = x - mean and d^2. A naive E[x^2] - E[x]^2 loses
//   everything to cancellation on rows offset by 1e4. Even the mean itself
//   is not representable: near 1e4 an fp32 ulp is 2^-10, so a rounded mean
//   alone would shift every xhat by up to 5e-4 standard deviations. The mean
//   is therefore kept as hi + lo (hi the first-pass mean, lo = sum(d) / N),
//   and xhat = ((x - hi) - lo) rstd, where x - hi is exact (Sterbenz).
// - The backward takes dy, x, gamma and beta and recomputes mean and rstd
//   from x instead of taking saved statistics: the fused kernel holds the
//   row of x in registers anyway, so recomputing costs ALU time only, no
//   DRAM bytes, and the workload stays self-contained (its inputs are the
//   op's inputs, not another kernel's by-products).
// - dgamma and dbeta without float atomics: each block of a persistent grid
//   accumulates its rows' contributions per thread-owned column (in
//   registers for fp32, in shared memory for bf16), sums its row groups in
//   a fixed order into one partial row of a [grid][2N] fp32 buffer; a
//   second kernel sums the partials in a fixed order. Same device, same
//   inputs: bit-identical results.
// - GELU in fp32 is written h * sigmoid(2u), which equals 0.5 h (1 + tanh u)
//   but keeps its accuracy in the negative tail; the erf form uses erfc for
//   the same reason. bf16 outputs round to 2^-9 anyway, so the bf16 kernels
//   use the hardware tanh (tanh.approx) instead.
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "device.cuh"
#include "kutil.h"
#include "ln_gelu.h"
#include "util.h"

/* ------------------------------------------------------------------------ */
/* CPU reference (double)                                                   */
/* ------------------------------------------------------------------------ */

static const double ref_k = 0.79788456080286535588;  // sqrt(2 / pi)
static const double ref_c = 0.044715;

extern "C" double ln_gelu_ref_gelu(double h, int erf)
{
	if (erf)
		return 0.5 * h * ::erfc(-h * M_SQRT1_2);
	// 0.5 h (1 + tanh u) = h / (1 + exp(-2u)); exp overflow gives h / inf = 0.
	return h / (1.0 + exp(-2.0 * ref_k * (h + ref_c * h * h * h)));
}

extern "C" double ln_gelu_ref_gelu_grad(double h, int erf)
{
	if (erf)
		return 0.5 * ::erfc(-h * M_SQRT1_2) +
		       h * exp(-0.5 * h * h) * (0.5 * M_2_SQRTPI * M_SQRT1_2);
	// Deliberately the textbook tanh form, not the GPU's sigmoid form, so the
	// two are independent.
	double t = tanh(ref_k * (h + ref_c * h * h * h));

	return 0.5 * (1.0 + t) +
	       0.5 * h * (1.0 - t * t) * ref_k * (1.0 + 3.0 * ref_c * h * h);
}

// Mean and 1/sqrt(var + eps) of one row, two passes plus the correction term.
static void ref_stats(const double *x, long N, double *mean, double *rstd)
{
	double s = 0, d1 = 0, d2 = 0, m;

	for (long j = 0; j < N; j++)
		s += x[j];
	m = s / (double)N;
	for (long j = 0; j < N; j++) {
		d1 += x[j] - m;
		d2 += (x[j] - m) * (x[j] - m);
	}
	d1 /= (double)N;
	*mean = m + d1;
	d2 = d2 / (double)N - d1 * d1;
	*rstd = 1.0 / sqrt((d2 > 0 ? d2 : 0) + LN_GELU_EPS);
}

extern "C" void ln_gelu_ref_fwd(const double *x, const double *gamma,
				const double *beta, double *y, long M, long N,
				int erf)
{
	for (long i = 0; i < M; i++) {
		const double *xr = x + i * N;
		double mean, rstd;

		ref_stats(xr, N, &mean, &rstd);
		for (long j = 0; j < N; j++)
			y[i * N + j] = ln_gelu_ref_gelu(
				(xr[j] - mean) * rstd * gamma[j] + beta[j], erf);
	}
}

extern "C" void ln_gelu_ref_bwd(const double *dy, const double *x,
				const double *gamma, const double *beta,
				double *dx, double *dgamma, double *dbeta,
				long M, long N, int erf)
{
	for (long i = 0; i < M; i++) {
		const double *xr = x + i * N, *dyr = dy + i * N;
		double mean, rstd, a = 0, b = 0;

		ref_stats(xr, N, &mean, &rstd);
		// First pass: dgamma/dbeta and the two row means of dxhat; the
		// row of dx holds dh until the second pass.
		for (long j = 0; j < N; j++) {
			double xh = (xr[j] - mean) * rstd;
			double dh = dyr[j] * ln_gelu_ref_gelu_grad(xh * gamma[j] + beta[j], erf);

			dgamma[j] += dh * xh;
			dbeta[j] += dh;
			a += dh * gamma[j];
			b += dh * gamma[j] * xh;
			dx[i * N + j] = dh;
		}
		a /= (double)N;
		b /= (double)N;
		for (long j = 0; j < N; j++) {
			double xh = (xr[j] - mean) * rstd;

			dx[i * N + j] = rstd * (dx[i * N + j] * gamma[j] - a - xh * b);
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Device helpers                                                           */
/* ------------------------------------------------------------------------ */

// Elements of a row each thread holds in registers: 32 fp32 values forward
// (8 x 16-byte loads fp32, 4 bf16); backward holds x, dy and the two
// dgamma/dbeta accumulators, so half that.
// Both can be overridden (-DBWD_PER_THREAD=8) to try another balance of
// registers against threads per row.
#ifndef FWD_PER_THREAD
#define FWD_PER_THREAD 32
#endif
#ifndef BWD_PER_THREAD
#define BWD_PER_THREAD 16
#endif
// Per storage type (F32, BF16): keep the backward's dgamma/dbeta
// accumulators in shared memory (1) or in registers (0), see ln_rows_bwd;
// and the blocks per SM its 256-thread instances ask registers for
// (1: no cap, 2 caps them at 128, 3 at 80, 4 at 64). Measured on an H200
// (cudaMemcpy copy 4.25 TB/s), fused backward at 16384 x 4096 with
// kernel 4, bench/fpbench, microseconds:
//                       registers, 2   shared, 3   shared, 4
//   bf16, next row staged   141.6      146.7       157.1
// fp32 (registers, 1): 248.3 unstaged, 263.0 staged. Registers cost
// occupancy (120 of them leave 16 warps per SM), shared accumulators 3
// instructions per element more, and the kernel is short of issue slots.
#ifndef BWD_SMEM_ACC_F32
#define BWD_SMEM_ACC_F32 0
#endif
#ifndef BWD_SMEM_ACC_BF16
#define BWD_SMEM_ACC_BF16 0
#endif
#ifndef BWD_MIN_BLOCKS_F32
#define BWD_MIN_BLOCKS_F32 1
#endif
#ifndef BWD_MIN_BLOCKS_BF16
#define BWD_MIN_BLOCKS_BF16 2
#endif
// Per storage type: the backward copies its next row into shared memory
// while it computes the current one (1) or loads each row when it starts
// it (0); see ln_rows_bwd.
#ifndef BWD_STAGE_F32
#define BWD_STAGE_F32 0
#endif
#ifndef BWD_STAGE_BF16
#define BWD_STAGE_BF16 1
#endif
#ifndef BWD_ACCURATE_EXP
#define BWD_ACCURATE_EXP 0
#endif
#define ROW_BLOCK 256      // threads per block when rows need <= 256 threads
#define WIDE_THREADS 512   // threads per row (and block) of the wide-row kernels
#define GELU_THREADS 256
#define GELU_UNROLL 4
#define MAX_GRID (1L << 24)  // grid-stride loops take the rest
#define MAX_PARTIALS 1024    // most blocks writing dgamma/dbeta partials

enum { FWD_STATS, FWD_NORM, FWD_LN, FWD_FUSED };
// BWD_LNH (the LayerNorm+Linear backward's fused form): BWD_FUSED's
// statistics from x, no GELU (dy is the gradient at the LayerNorm's
// output), and h = LayerNorm(x) written to aux for the dW GEMM: x read once.
enum { BWD_DH, BWD_LN, BWD_FUSED, BWD_LNH };

// One 16-byte access: 4 fp32 or 8 bf16 values, converted to/from fp32.
// STREAM marks data touched once (evict-first), so gamma/beta stay cached.
template <bool STREAM>
__device__ __forceinline__ void ld16(const float *p, float *v)
{
	float4 a = STREAM ? __ldcs((const float4 *)p) : __ldg((const float4 *)p);

	v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
}

template <bool STREAM>
__device__ __forceinline__ void ld16(const __nv_bfloat16 *p, float *v)
{
	uint4 a = STREAM ? __ldcs((const uint4 *)p) : __ldg((const uint4 *)p);
	unsigned w[4] = { a.x, a.y, a.z, a.w };

#pragma unroll
	for (int i = 0; i < 4; i++) {  // bf16 -> fp32 is a shift: exact
		v[2 * i] = __uint_as_float(w[i] << 16);
		v[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
	}
}

template <bool STREAM>
__device__ __forceinline__ void st16(float *p, const float *v)
{
	float4 a = make_float4(v[0], v[1], v[2], v[3]);

	if (STREAM)
		__stcs((float4 *)p, a);
	else
		*(float4 *)p = a;
}

template <bool STREAM>
__device__ __forceinline__ void st16(__nv_bfloat16 *p, const float *v)
{
	uint4 a = make_uint4(pack_bf16(v[0], v[1]), pack_bf16(v[2], v[3]),
			     pack_bf16(v[4], v[5]), pack_bf16(v[6], v[7]));

	if (STREAM)
		__stcs((uint4 *)p, a);
	else
		*(uint4 *)p = a;
}

#define GELU_K 0.7978845608028654f   // sqrt(2 / pi)
#define GELU_C 0.044715f
#define GELU_KC 0.035677408136300125f    // GELU_K GELU_C
#define GELU_KC15 0.05351611220445019f   // 1.5 GELU_K GELU_C
#define RSQRT2 0.7071067811865476f
#define RSQRT2PI 0.3989422804014327f

template <bool FAST>
__device__ __forceinline__ float dev_exp(float z)
{
	return FAST ? __expf(z) : expf(z);
}

// The hardware tanh (one MUFU op, max relative error 2^-10.99): far below
// bf16's 2^-9 rounding, far above fp32's.
__device__ __forceinline__ float tanh_approx(float x)
{
	float y;

	asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

// GELU(h). fp32, tanh form, as h * sigmoid(2u): u is clamped at -40 so
// that 1 + exp(-2u) stays below 2^126, the range of __fdividef (2 ulp
// there); the clamped result is h * 1.8e-35, zero for any purpose. bf16
// (FAST) takes the textbook form with the hardware tanh and u written
// h (K + K C h^2): 5 instructions and a MUFU op instead of about 12 (the
// bf16 kernels run close to the ALU's limit).
template <bool FAST>
__device__ __forceinline__ float gelu(float h, int erf)
{
	if (erf)
		return FAST ? 0.5f * h * (1.0f + erff(h * RSQRT2))
			    : 0.5f * h * erfcf(-h * RSQRT2);
	if (FAST) {
		float hh = 0.5f * h;
		return fmaf(hh, tanh_approx(h * fmaf(GELU_KC, h * h, GELU_K)), hh);
	}
	float u = GELU_K * fmaf(GELU_C * h * h, h, h);
	float e = dev_exp<FAST>(-2.0f * fmaxf(u, -40.0f));

	return __fdividef(h, 1.0f + e);
}

// GELU'(h). fp32: with s = sigmoid(2u), 1 - s = e s (e = exp(-2u)), so
// d/dh [h s] = s (1 + 2 h u' e s): no 1 - s cancellation in either tail.
// e comes from __expf (ex2.approx) of -2u clamped at 80: its error,
// about |2u| 2^-24 relative, stays near 1e-6 where GELU' is not already
// negligible, against a 1e-5 bound (measured worst dx error 3.5e-7).
// BWD_ACCURATE_EXP=1 takes expf: 3.3e-7, and no slower on an H200 (248.8
// against 248.3 us at 16384 x 4096), where fp32 waits on memory more than
// on issue slots.
// bf16: 0.5 (1 + t) + 0.5 h u' (1 - t^2) with the hardware tanh, the
// constants folded so that it takes 7 instructions and a MUFU op (was 11).
template <bool FAST>
__device__ __forceinline__ float gelu_grad(float h, int erf)
{
	if (erf) {
		float cdf = FAST ? 0.5f * (1.0f + erff(h * RSQRT2))
				 : 0.5f * erfcf(-h * RSQRT2);
		return fmaf(h * RSQRT2PI, dev_exp<FAST>(-0.5f * h * h), cdf);
	}
	float h2 = h * h;
	if (FAST) {
		float t = tanh_approx(h * fmaf(GELU_KC, h2, GELU_K));
		float hdu = h * fmaf(GELU_KC15, h2, 0.5f * GELU_K);  // 0.5 h u'

		return fmaf(hdu, fmaf(-t, t, 1.0f), fmaf(0.5f, t, 0.5f));
	}
	float m2u = h * fmaf(-2.0f * GELU_KC, h2, -2.0f * GELU_K);  // -2u
	float e = BWD_ACCURATE_EXP ? expf(fminf(m2u, 80.0f)) : __expf(fminf(m2u, 80.0f));
	float s = __fdividef(1.0f, 1.0f + e);
	float hdu2 = h * fmaf(6.0f * GELU_KC, h2, 2.0f * GELU_K);  // 2 h u'

	return s * fmaf(hdu2, e * s, 1.0f);
}

// Sum NV values over the TPR threads of each row group (TPR a multiple of
// 32; groups are consecutive threads). Every thread of a group gets the same
// bits: each warp sums its lanes by butterfly, lane 0 posts the warp's sum,
// and every warp reads its group's WPR sums into WPR lanes and sums them by
// butterfly again (one shared load and log2 WPR shuffles per value instead
// of WPR loads). sh holds blockDim.x / 32 * NV floats. With TPR > 32, every
// thread of the block must call it (it has barriers). GUARD puts a barrier
// first, so that the previous call's readers of sh are done before this
// call's writers; a kernel that cycles through two or more sh regions
// (each call its own) needs none: the calls in between hold barriers.
template <int TPR, int NV, bool GUARD = true>
__device__ __forceinline__ void row_sum(float (&v)[NV], float *sh)
{
#pragma unroll
	for (int i = 0; i < NV; i++)
		v[i] = warp_sum(v[i]);
	if constexpr (TPR > 32) {
		constexpr int WPR = TPR / 32;
		const int warp = threadIdx.x / 32;
		const int from = threadIdx.x / TPR * WPR + (threadIdx.x & (WPR - 1));

		if constexpr (GUARD)
			__syncthreads();
		if ((threadIdx.x & 31) == 0)
#pragma unroll
			for (int i = 0; i < NV; i++)
				sh[warp * NV + i] = v[i];
		__syncthreads();
#pragma unroll
		for (int i = 0; i < NV; i++) {
			float s = sh[from * NV + i];
#pragma unroll
			for (int o = WPR / 2; o; o >>= 1)
				s += __shfl_xor_sync(0xffffffffu, s, o);
			v[i] = s;
		}
	}
}

// Mean (hi + lo, see the top of the file) and 1/sqrt(var + eps) of one row
// of any width, by a whole block of WIDE_THREADS threads, in two passes
// over global memory; every thread gets the same bits. Every thread of the
// block must call it. sh: WIDE_THREADS / 32 * 2 floats.
template <typename T>
__device__ __forceinline__ void wide_stats(const T *__restrict__ xr, long N,
					   float *sh, float *hi, float *lo,
					   float *rstd)
{
	const float n = (float)N;
	float s[1] = { 0.0f }, p[2] = { 0.0f, 0.0f };

	for (long j = threadIdx.x; j < N; j += WIDE_THREADS)
		s[0] += to_f(xr[j]);
	row_sum<WIDE_THREADS, 1>(s, sh);
	*hi = s[0] / n;
	for (long j = threadIdx.x; j < N; j += WIDE_THREADS) {
		float d = to_f(xr[j]) - *hi;
		p[0] += d;
		p[1] = fmaf(d, d, p[1]);
	}
	row_sum<WIDE_THREADS, 2>(p, sh);
	*lo = p[0] / n;
	*rstd = 1.0f / sqrtf(fmaxf(p[1] / n - *lo * *lo, 0.0f) + (float)LN_GELU_EPS);
}

// Unpack 16 staged bytes (4 fp32 or 8 bf16) to fp32, as ld16 does.
__device__ __forceinline__ void unpack16(uint4 a, float *v, float)
{
	v[0] = __uint_as_float(a.x), v[1] = __uint_as_float(a.y);
	v[2] = __uint_as_float(a.z), v[3] = __uint_as_float(a.w);
}

__device__ __forceinline__ void unpack16(uint4 a, float *v, __nv_bfloat16)
{
	unsigned w[4] = { a.x, a.y, a.z, a.w };

#pragma unroll
	for (int i = 0; i < 4; i++) {
		v[2 * i] = __uint_as_float(w[i] << 16);
		v[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
	}
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

// Kernel 1: GELU alone, elementwise over the M N values of h (the second
// half of unfused2, the third kernel of unfused3).
// Napkin: reads and writes M N s bytes, 9 FLOP per element: at 16384 x 4096
// fp32 537 MB, 179 us at 3.0 TB/s.
// 16-byte accesses, GELU_UNROLL independent loads in flight per thread
// before the first use; the < 16-byte tail of the buffer goes scalar.
// Measured (H100, inside unfused2): about 2.9 TB/s, like the copy.
template <typename T, int ERF>
__global__ void __launch_bounds__(GELU_THREADS)
gelu_kernel(const T *__restrict__ h, T *__restrict__ y, size_t n)
{
	constexpr bool FAST = sizeof(T) == 2;
	constexpr int V = 16 / sizeof(T);
	const size_t nvec = n / V;
	const size_t stride = (size_t)gridDim.x * GELU_THREADS * GELU_UNROLL;

	for (size_t i0 = (size_t)blockIdx.x * GELU_THREADS * GELU_UNROLL + threadIdx.x;
	     i0 < nvec; i0 += stride) {
		float v[GELU_UNROLL][V];

#pragma unroll
		for (int u = 0; u < GELU_UNROLL; u++) {
			size_t i = i0 + (size_t)u * GELU_THREADS;
			if (i < nvec)
				ld16<true>(h + i * V, v[u]);
		}
#pragma unroll
		for (int u = 0; u < GELU_UNROLL; u++) {
			size_t i = i0 + (size_t)u * GELU_THREADS;
			if (i < nvec) {
#pragma unroll
				for (int k = 0; k < V; k++)
					v[u][k] = gelu<FAST>(v[u][k], ERF);
				st16<true>(y + i * V, v[u]);
			}
		}
	}
	size_t tail = nvec * V + (size_t)blockIdx.x * GELU_THREADS + threadIdx.x;
	if (tail < n && blockIdx.x * (size_t)GELU_THREADS + threadIdx.x < (size_t)V)
		y[tail] = from_f<T>(gelu<FAST>(to_f(h[tail]), ERF));
}

// Kernel 2: LayerNorm (and GELU) of rows of any width, one block per row,
// scalar accesses, the row re-read from global memory for each pass:
// pass 1 sum(x) -> hi; pass 2 sum(x - hi), sum((x - hi)^2) -> lo, rstd;
// pass 3 writes the output. MODE picks what it does:
//   FWD_STATS  writes hi, lo, rstd to stats[0..M), [M..2M), [2M..3M)
//   FWD_NORM   reads them instead of computing them, writes h
//   FWD_LN     writes h = xhat gamma + beta
//   FWD_FUSED  writes GELU(h)
// This is the simplest correct row kernel and the fallback for rows the
// register kernel cannot take: N not a multiple of the 16-byte vector (rows
// then are not 16-byte aligned) or wider than 32 K (fp32) elements. Napkin:
// x is read three times, but one row is at most a few hundred KB, and the
// rows of the blocks in flight (132 SMs x 4 blocks) fit the 50 MB L2, so
// DRAM should see x about once. Measured (H100, fused, fp32 16384 x 4097):
// 216 us, 2.48 TB/s counting min bytes, against 185 us for the register
// kernel at 16384 x 4096.
template <typename T, int MODE, int ERF>
__global__ void __launch_bounds__(WIDE_THREADS)
ln_wide_fwd(const T *__restrict__ x, const T *__restrict__ gamma,
	    const T *__restrict__ beta, T *__restrict__ out,
	    float *__restrict__ stats, long M, long N)
{
	constexpr bool FAST = sizeof(T) == 2;
	__shared__ float sh[WIDE_THREADS / 32 * 2];

	for (long row = blockIdx.x; row < M; row += gridDim.x) {
		const T *xr = x + row * N;
		float hi, lo, rstd;

		if constexpr (MODE == FWD_NORM) {
			hi = stats[row];
			lo = stats[M + row];
			rstd = stats[2 * M + row];
		} else {
			wide_stats(xr, N, sh, &hi, &lo, &rstd);
			// FWD_LN saves the statistics too when asked (the
			// LayerNorm+Linear backward's recompute).
			if ((MODE == FWD_STATS || (MODE == FWD_LN && stats)) &&
			    threadIdx.x == 0) {
				stats[row] = hi;
				stats[M + row] = lo;
				stats[2 * M + row] = rstd;
			}
			if constexpr (MODE == FWD_STATS)
				continue;
		}
		if constexpr (MODE != FWD_STATS) {
			T *yr = out + row * N;

			for (long j = threadIdx.x; j < N; j += WIDE_THREADS) {
				float h = fmaf(((to_f(xr[j]) - hi) - lo) * rstd,
					       to_f(gamma[j]), to_f(beta[j]));
				yr[j] = from_f<T>(MODE == FWD_FUSED ? gelu<FAST>(h, ERF) : h);
			}
		}
	}
}

// Kernel 3: the row kept in registers. Changes over kernel 2: each thread
// loads its share of the row with 16-byte coalesced loads, all of them
// before the first use (up to 8 loads in flight per thread), and both
// statistics passes and the output pass run on registers, so x is read
// from DRAM exactly once and y written once. TPR threads per row, the
// fewest that hold it at 32 values each (ln_gelu_plan(): one warp up to
// N = 1024, 128 threads at 4096); with TPR < 256 a block of 256 threads
// takes 256 / TPR rows, and a warp-per-row reduction needs no barrier at
// all. Same MODEs as kernel 2.
// Napkin (FWD_FUSED, 16384 x 4096 fp32): 537 MB, floor 179 us at 3.0 TB/s.
// Measured (H100, copy 3.01 TB/s): fp32 184.5 us (2.91 TB/s, 97% of
// copy), bf16 95.3 us (2.82 TB/s); 16384 x 768: 39.7 / 22.1 us. GELU as
// a template parameter took bf16 from 98.6 to 95.3 us (see fwd_kernel_t).
template <typename T, int TPR, int MODE, int ERF>
__global__ void __launch_bounds__(TPR > ROW_BLOCK ? TPR : ROW_BLOCK)
ln_rows_fwd(const T *__restrict__ x, const T *__restrict__ gamma,
	    const T *__restrict__ beta, T *__restrict__ out,
	    float *__restrict__ stats, long M, long Nl)
{
	constexpr bool FAST = sizeof(T) == 2;
	constexpr int V = 16 / sizeof(T), CH = FWD_PER_THREAD / V;
	constexpr int BLOCK = TPR > ROW_BLOCK ? TPR : ROW_BLOCK, RPB = BLOCK / TPR;
	__shared__ float sh[2][BLOCK / 32 * 2];  // two regions: see row_sum
	const int N = (int)Nl, t = threadIdx.x % TPR, g = threadIdx.x / TPR;
	const float n = (float)N;

	// The loop bound is the same for the whole block: barriers stay matched.
	for (long r0 = (long)blockIdx.x * RPB; r0 < M; r0 += (long)gridDim.x * RPB) {
		const long row = r0 + g;
		const bool live = row < M;
		const T *xr = x + row * N;
		float v[CH][V], hi, lo, rstd;

#pragma unroll
		for (int c = 0; c < CH; c++) {
			const int j = (c * TPR + t) * V;
			if (live && j < N)
				ld16<true>(xr + j, v[c]);
			else
#pragma unroll
				for (int k = 0; k < V; k++)
					v[c][k] = 0.0f;
		}
		if constexpr (MODE == FWD_NORM) {
			hi = live ? stats[row] : 0.0f;
			lo = live ? stats[M + row] : 0.0f;
			rstd = live ? stats[2 * M + row] : 0.0f;
#pragma unroll
			for (int c = 0; c < CH; c++)
#pragma unroll
				for (int k = 0; k < V; k++)
					v[c][k] -= hi;
		} else {
			float s[1] = { 0.0f }, p[2] = { 0.0f, 0.0f };

#pragma unroll
			for (int c = 0; c < CH; c++)
#pragma unroll
				for (int k = 0; k < V; k++)
					s[0] += v[c][k];
			row_sum<TPR, 1, false>(s, sh[0]);
			hi = s[0] / n;
#pragma unroll
			for (int c = 0; c < CH; c++) {
				if ((c * TPR + t) * V < N) {  // padding stays 0
#pragma unroll
					for (int k = 0; k < V; k++) {
						v[c][k] -= hi;
						p[0] += v[c][k];
						p[1] = fmaf(v[c][k], v[c][k], p[1]);
					}
				}
			}
			row_sum<TPR, 2, false>(p, sh[1]);
			lo = p[0] / n;
			rstd = 1.0f / sqrtf(fmaxf(p[1] / n - lo * lo, 0.0f) + (float)LN_GELU_EPS);
			if ((MODE == FWD_STATS || (MODE == FWD_LN && stats)) &&
			    live && t == 0) {
				stats[row] = hi;
				stats[M + row] = lo;
				stats[2 * M + row] = rstd;
			}
			if constexpr (MODE == FWD_STATS)
				continue;
		}
		if constexpr (MODE != FWD_STATS) {
			if (!live)
				continue;  // no barrier follows in this iteration
			T *yr = out + row * N;
#pragma unroll
			for (int c = 0; c < CH; c++) {
				const int j = (c * TPR + t) * V;
				if (j < N) {
					float gm[V], bt[V];

					ld16<false>(gamma + j, gm);
					ld16<false>(beta + j, bt);
#pragma unroll
					for (int k = 0; k < V; k++) {
						float h = fmaf((v[c][k] - lo) * rstd, gm[k], bt[k]);
						v[c][k] = MODE == FWD_FUSED ? gelu<FAST>(h, ERF) : h;
					}
					st16<true>(yr + j, v[c]);
				}
			}
		}
	}
}

// Kernel 4: sums the per-block dgamma/dbeta partials, partial[P][2N] fp32,
// into dgb[0..N) = dgamma and dgb[N..2N) = dbeta. RED_COLS columns per
// block (128-byte coalesced rows); RED_SLICES slices of the P partials,
// each summed in order, then the slice sums added pairwise in a fixed
// order: deterministic.
// Napkin: reads P 2N 4 bytes (17 MB at P = 528, N = 4096, written just
// before by the row kernel and mostly still in L2), writes 2N s. It is
// latency-bound: 32 slices give every SM 2048 threads with a few loads in
// flight each (8 slices took 12 us at P = 528 under ncu, 32 slices take
// 5.8 us at P = 264, with L2 flushed).
#define RED_COLS 32
#define RED_SLICES 32
template <typename T>
__global__ void __launch_bounds__(RED_COLS * RED_SLICES)
reduce_partials(const float *__restrict__ partial, int P, long N,
		T *__restrict__ dgb)
{
	__shared__ float sh[RED_SLICES][RED_COLS + 1];
	const long W = 2 * N, col = (long)blockIdx.x * RED_COLS + threadIdx.x;
	float s = 0.0f;

	if (col < W)
#pragma unroll 4
		for (int p = threadIdx.y; p < P; p += RED_SLICES)
			s += partial[(size_t)p * W + col];
	sh[threadIdx.y][threadIdx.x] = s;
	for (int h = RED_SLICES / 2; h; h >>= 1) {
		__syncthreads();
		if ((int)threadIdx.y < h)
			sh[threadIdx.y][threadIdx.x] += sh[threadIdx.y + h][threadIdx.x];
	}
	if (threadIdx.y == 0 && col < W)
		dgb[col] = from_f<T>(sh[0][threadIdx.x]);
}

// Kernel 5: the backward for rows of any width, one block per row of a
// persistent grid, scalar accesses, passes over global memory (the
// fallback, like kernel 2). MODE:
//   BWD_DH     dh = dy GELU'(h) with h recomputed; writes dh to out and the
//              row statistics (the first kernel of the unfused backward)
//   BWD_LN     reads dh (in dy) and the statistics; LayerNorm backward
//   BWD_FUSED  both in one: dy, x in; dx out
// BWD_LN and BWD_FUSED add dh xhat and dh into this block's partial row
// (each column always owned by the same thread: no race, fixed order),
// then dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)) in one more
// pass. Reads x four times and dy twice, mostly from L2.
template <typename T, int MODE, int ERF>
__global__ void __launch_bounds__(WIDE_THREADS)
ln_wide_bwd(const T *__restrict__ dy, const T *__restrict__ x,
	    const T *__restrict__ gamma, const T *__restrict__ beta,
	    T *__restrict__ out, float *__restrict__ stats,
	    float *__restrict__ partial, long M, long N, T *__restrict__ aux)
{
	constexpr bool FAST = sizeof(T) == 2;
	__shared__ float sh[WIDE_THREADS / 32 * 2];
	const float n = (float)N;
	float *pg = partial + (size_t)blockIdx.x * 2 * N, *pb = pg + N;

	if constexpr (MODE != BWD_DH)
		for (long j = threadIdx.x; j < N; j += WIDE_THREADS)
			pg[j] = pb[j] = 0.0f;
	for (long row = blockIdx.x; row < M; row += gridDim.x) {
		const T *xr = x + row * N, *dyr = dy + row * N;
		T *outr = out + row * N;
		float hi, lo, rstd, p[2] = { 0.0f, 0.0f };

		if constexpr (MODE == BWD_LN) {
			hi = stats[row];
			lo = stats[M + row];
			rstd = stats[2 * M + row];
		} else {
			wide_stats(xr, N, sh, &hi, &lo, &rstd);
			if (MODE == BWD_DH && threadIdx.x == 0) {
				stats[row] = hi;
				stats[M + row] = lo;
				stats[2 * M + row] = rstd;
			}
		}
		for (long j = threadIdx.x; j < N; j += WIDE_THREADS) {
			float xh = ((to_f(xr[j]) - hi) - lo) * rstd, gm = to_f(gamma[j]);
			float dh = to_f(dyr[j]);

			if constexpr (MODE != BWD_LN)
				dh *= gelu_grad<FAST>(fmaf(xh, gm, to_f(beta[j])), ERF);
			if constexpr (MODE == BWD_DH) {
				outr[j] = from_f<T>(dh);
			} else {
				float dxh = __fmul_rn(dh, gm);  // as in the dx pass

				pg[j] = fmaf(dh, xh, pg[j]);
				pb[j] += dh;
				p[0] += dxh;
				p[1] = fmaf(dxh, xh, p[1]);
			}
		}
		if constexpr (MODE != BWD_DH) {
			row_sum<WIDE_THREADS, 2>(p, sh);
			const float a = p[0] / n, b = p[1] / n;

			for (long j = threadIdx.x; j < N; j += WIDE_THREADS) {
				float xh = ((to_f(xr[j]) - hi) - lo) * rstd, gm = to_f(gamma[j]);
				float dh = to_f(dyr[j]);

				if constexpr (MODE != BWD_LN)
					dh *= gelu_grad<FAST>(fmaf(xh, gm, to_f(beta[j])), ERF);
				// __fmul_rn: no FMA contraction, so dxhat is the same
				// rounded value the row sums saw, and a row of N = 1
				// gives exactly 0.
				outr[j] = from_f<T>(rstd * (__fmul_rn(dh, gm) - fmaf(xh, b, a)));
			}
		}
	}
}

// The shape of one instance of kernel 6, shared with its launcher, which
// passes SMEM bytes of dynamic shared memory. SACC: dgamma/dbeta
// accumulators in shared memory, [2][RPB][CAP] fp32 (32 KB at 256 threads),
// each thread touching only its own columns of its own row group, so no
// barrier until the end; in registers they take 32 of the thread's ~110
// and hold the kernel to 2 blocks per SM; at 512 threads they would need
// 64 KB: registers there. A group's CAP accumulators are laid out as
// [CH][V / 4][TPR] 16-byte quads, so that a warp's 16-byte accesses are
// consecutive (column-major per thread, they were 32 bytes apart: 2-way
// bank conflicts on every access). STAGE: the next row of x and dy is
// copied into shared memory (cp.async, [2][RPB][CH][TPR] 16-byte chunks,
// each thread its own) while the current one is computed.
template <typename T, int TPR, int MODE>
struct bwd_shape {
	static constexpr int V = 16 / sizeof(T), CH = BWD_PER_THREAD / V;
	static constexpr int BLOCK = TPR > ROW_BLOCK ? TPR : ROW_BLOCK, RPB = BLOCK / TPR;
	static constexpr int CAP = TPR * CH * V;  // widest row this instance holds
	static constexpr bool SACC = (sizeof(T) == 2 ? BWD_SMEM_ACC_BF16 : BWD_SMEM_ACC_F32) &&
				     MODE != BWD_DH && 2 * RPB * CAP * 4 <= 32768;
	static constexpr bool STAGE = (sizeof(T) == 2 ? BWD_STAGE_BF16 : BWD_STAGE_F32) &&
				      MODE != BWD_DH;
	static constexpr size_t SACC_BYTES = SACC ? (size_t)2 * RPB * CAP * 4 : 0;
	static constexpr size_t SMEM = SACC_BYTES + (STAGE ? (size_t)2 * RPB * CH * TPR * 16 : 0);
};

// Kernel 6: the backward with the row in registers (changes over kernel 5
// as kernel 3 over kernel 2): x and dy loaded once with 16-byte loads,
// statistics, GELU', dxhat and its row sums on registers, dx stored once.
// The grid is persistent and each thread keeps the same columns for every
// row it takes, so its dgamma/dbeta contributions accumulate (registers or
// shared memory, see bwd_shape) across rows; at the end the block's row
// groups are summed in group order and written as the block's partial row.
// Same MODEs as kernel 5 (BWD_DH runs on a plain, non-persistent grid).
// The row's steps are serial (load; mean; variance; GELU' and dxhat; their
// row sums; dx), three of them block-wide sums, so while a block computes
// it would have no loads in flight: with STAGE it copies its next row into
// shared memory meanwhile, and DRAM stays busy with few blocks per SM.
// Napkin (BWD_FUSED, 16384 x 4096 fp32): 805 MB + partials (P 2N 4 bytes
// written, read back by kernel 4, mostly from L2); floor 268 us at 3.0 TB/s.
// bf16: 403 MB, 95 us at an H200's 4.24 TB/s, but about 45 instructions
// per element in SASS (ncu: 99 M warp instructions for 67 M elements;
// GELU' and dxhat 21, statistics 6, loads and conversions 4, dx 5, the
// three row sums and per-row bookkeeping the rest): some 90 us of issue
// at 1.98 GHz on 132 SMs. The arithmetic has to hide under the memory
// time, and on an H200 it barely can.
// Measured with kernel 4 (fuseprof run, sum of the two kernels):
// H200 (cudaMemcpy copy 4.25 TB/s; fuseprof's copy kernel 3.89 TB/s):
// bf16 137.2 us (2.94 TB/s: 69% / 75% of copy), fp32 245.2 us (3.28 TB/s:
// 77% / 84%); before STAGE, the leaner GELU' and row sums, 187.9 and 250.0
// us (fpbench). ncu on the bf16 kernel: 91.7 M warp instructions (43.7
// per element), issue slots 66% busy with 4 warps per scheduler, DRAM 45%
// busy: bound by issue and latency, not bandwidth.
// H100 (copy 3.01 TB/s), before those changes: fp32 300 us (89% of copy),
// bf16 194 us (69%).
template <typename T, int TPR, int MODE, int ERF>
__global__ void __launch_bounds__(TPR > ROW_BLOCK ? TPR : ROW_BLOCK,
				  (TPR > ROW_BLOCK ? 1 : sizeof(T) == 2 ? BWD_MIN_BLOCKS_BF16
									: BWD_MIN_BLOCKS_F32))
ln_rows_bwd(const T *__restrict__ dy, const T *__restrict__ x,
	    const T *__restrict__ gamma, const T *__restrict__ beta,
	    T *__restrict__ out, float *__restrict__ stats,
	    float *__restrict__ partial, long M, long Nl, T *__restrict__ aux)
{
	using S = bwd_shape<T, TPR, MODE>;
	constexpr bool FAST = sizeof(T) == 2, SACC = S::SACC, STAGE = S::STAGE;
	constexpr int V = S::V, CH = S::CH, BLOCK = S::BLOCK, RPB = S::RPB, CAP = S::CAP;
	// One region per row_sum call of an iteration (see row_sum); BWD_LN
	// makes one call only, and guards it.
	__shared__ float sh[3][BLOCK / 32 * 2];
	extern __shared__ __align__(16) unsigned char dsm[];
	const int N = (int)Nl, t = threadIdx.x % TPR, g = threadIdx.x / TPR;
	// Multiplying by 1/N instead of dividing (1 ulp more, a few
	// instructions less per row sum: the row's fixed costs are spread
	// over only BWD_PER_THREAD elements per thread).
	const float inv_n = 1.0f / (float)N;
	const long stride = (long)gridDim.x * RPB;
	float ag[SACC ? 1 : CH][V], ab[SACC ? 1 : CH][V];  // !SACC: in registers
	// This thread's accumulator quad q of chunk c: sg[(c * V / 4 + q) * TPR].
	float4 *const sg = (float4 *)dsm + g * (CAP / 4) + t;
	float4 *const sb = sg + RPB * (CAP / 4);
	// This thread's staged chunk c: stx[c * TPR] (x), sty[c * TPR] (dy).
	uint4 *const stx = (uint4 *)(dsm + S::SACC_BYTES) + g * CH * TPR + t;
	uint4 *const sty = stx + RPB * CH * TPR;
	const uint64_t pol = STAGE ? evict_first_policy() : 0;
	auto stage = [&](long row) {
		if (row < M) {
			const T *xs = x + row * N + t * V, *ds = dy + row * N + t * V;
#pragma unroll
			for (int c = 0; c < CH; c++)
				if ((c * TPR + t) * V < N) {
					cp_async16_hint(smem_u32(stx + c * TPR), xs + c * TPR * V, pol);
					cp_async16_hint(smem_u32(sty + c * TPR), ds + c * TPR * V, pol);
				}
		}
		cp_async_commit();
	};

#pragma unroll
	for (int c = 0; c < CH; c++)
#pragma unroll
		for (int k = 0; k < V; k++) {
			if constexpr (SACC) {
				if (k % 4 == 0) {
					sg[(c * V / 4 + k / 4) * TPR] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
					sb[(c * V / 4 + k / 4) * TPR] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
				}
			} else {
				ag[c][k] = ab[c][k] = 0.0f;
			}
		}
	if constexpr (STAGE) {
		// The slots no copy will ever fill are zeroed once (padding
		// columns; every column of a group whose first row is past M),
		// so the loop reads its staged row without conditions.
		const long first = (long)blockIdx.x * RPB + g;
#pragma unroll
		for (int c = 0; c < CH; c++)
			if (first >= M || (c * TPR + t) * V >= N)
				stx[c * TPR] = sty[c * TPR] = make_uint4(0, 0, 0, 0);
		stage(first);
	}
	for (long r0 = (long)blockIdx.x * RPB; r0 < M; r0 += stride) {
		const long row = r0 + g;
		const bool live = row < M;
		const T *xr = x + row * N, *dyr = dy + row * N;
		float xv[CH][V], gv[CH][V], hi, lo, rstd, p[2] = { 0.0f, 0.0f };

		if constexpr (STAGE) {
			// A group past M reads the previous row again (or zeros);
			// its dy is taken as 0, so that it adds nothing to dgamma
			// and dbeta, and it stores nothing.
			cp_async_wait_all();
#pragma unroll
			for (int c = 0; c < CH; c++) {
				uint4 d = sty[c * TPR];

				unpack16(stx[c * TPR], xv[c], T());
				unpack16(live ? d : make_uint4(0, 0, 0, 0), gv[c], T());
			}
			// Each staged chunk is read and rewritten by its own
			// thread only; the barrier orders this read before the
			// next row's copy.
			__syncwarp();
			stage(row + stride);
		} else {
#pragma unroll
			for (int c = 0; c < CH; c++) {
				const int j = (c * TPR + t) * V;
				if (live && j < N) {
					ld16<true>(xr + j, xv[c]);
					ld16<true>(dyr + j, gv[c]);
				} else {
#pragma unroll
					for (int k = 0; k < V; k++)
						xv[c][k] = gv[c][k] = 0.0f;
				}
			}
		}
		if constexpr (MODE == BWD_LN) {
			hi = live ? stats[row] : 0.0f;
			lo = live ? stats[M + row] : 0.0f;
			rstd = live ? stats[2 * M + row] : 0.0f;
#pragma unroll
			for (int c = 0; c < CH; c++)
#pragma unroll
				for (int k = 0; k < V; k++)
					xv[c][k] -= hi;
		} else {
			float s[1] = { 0.0f };

#pragma unroll
			for (int c = 0; c < CH; c++)
#pragma unroll
				for (int k = 0; k < V; k++)
					s[0] += xv[c][k];
			row_sum<TPR, 1, false>(s, sh[0]);
			hi = s[0] * inv_n;
#pragma unroll
			for (int c = 0; c < CH; c++) {
				if ((c * TPR + t) * V < N) {
#pragma unroll
					for (int k = 0; k < V; k++) {
						xv[c][k] -= hi;
						p[0] += xv[c][k];
						p[1] = fmaf(xv[c][k], xv[c][k], p[1]);
					}
				}
			}
			row_sum<TPR, 2, false>(p, sh[1]);
			lo = p[0] * inv_n;
			rstd = rsqrtf(fmaxf(p[1] * inv_n - lo * lo, 0.0f) + (float)LN_GELU_EPS);
			p[0] = p[1] = 0.0f;
			if (MODE == BWD_DH && live && t == 0) {
				stats[row] = hi;
				stats[M + row] = lo;
				stats[2 * M + row] = rstd;
			}
		}
		const float nlr = -lo * rstd;  // xhat = (x - hi) rstd - lo rstd
		// xv becomes xhat; gv becomes dh (BWD_DH) or dxhat = dh gamma.
#pragma unroll
		for (int c = 0; c < CH; c++) {
			const int j = (c * TPR + t) * V;
			if (j < N) {
				float gm[V], bt[V], dh[V];

				ld16<false>(gamma + j, gm);
				if constexpr (MODE != BWD_LN)
					ld16<false>(beta + j, bt);
#pragma unroll
				for (int k = 0; k < V; k++) {
					const float xh = fmaf(xv[c][k], rstd, nlr);

					dh[k] = gv[c][k];
					if constexpr (MODE == BWD_LNH)
						bt[k] = fmaf(xh, gm[k], bt[k]);  // h, stored below
					else if constexpr (MODE != BWD_LN)
						dh[k] *= gelu_grad<FAST>(fmaf(xh, gm[k], bt[k]), ERF);
					xv[c][k] = xh;
					if constexpr (MODE == BWD_DH) {
						gv[c][k] = dh[k];
					} else {
						const float dxh = __fmul_rn(dh[k], gm[k]);

						if constexpr (!SACC) {
							ag[c][k] = fmaf(dh[k], xh, ag[c][k]);
							ab[c][k] += dh[k];
						}
						gv[c][k] = dxh;
						p[0] += dxh;
						p[1] = fmaf(dxh, xh, p[1]);
					}
				}
				if constexpr (MODE == BWD_LNH)
					if (live)
						st16<false>(aux + row * N + j, bt);
				if constexpr (SACC) {
#pragma unroll
					for (int k = 0; k < V; k += 4) {  // 16-byte RMW
						float4 *qg = sg + (c * V / 4 + k / 4) * TPR;
						float4 *qb = sb + (c * V / 4 + k / 4) * TPR;
						float4 u = *qg, w = *qb;

						u.x = fmaf(dh[k], xv[c][k], u.x);
						u.y = fmaf(dh[k + 1], xv[c][k + 1], u.y);
						u.z = fmaf(dh[k + 2], xv[c][k + 2], u.z);
						u.w = fmaf(dh[k + 3], xv[c][k + 3], u.w);
						w.x += dh[k];
						w.y += dh[k + 1];
						w.z += dh[k + 2];
						w.w += dh[k + 3];
						*qg = u;
						*qb = w;
					}
				}
			}
		}
		if constexpr (MODE == BWD_DH) {
			if (live)
#pragma unroll
				for (int c = 0; c < CH; c++) {
					const int j = (c * TPR + t) * V;
					if (j < N)
						st16<false>(out + row * N + j, gv[c]);
				}
			continue;
		} else {
			row_sum<TPR, 2, MODE == BWD_LN>(p, sh[2]);
			const float a = p[0] * inv_n, b = p[1] * inv_n;

			if (!live)
				continue;
#pragma unroll
			for (int c = 0; c < CH; c++) {
				const int j = (c * TPR + t) * V;
				if (j < N) {
					float d[V];
#pragma unroll
					for (int k = 0; k < V; k++)
						d[k] = rstd * (gv[c][k] - fmaf(xv[c][k], b, a));
					st16<true>(out + row * N + j, d);
				}
			}
		}
	}
	if constexpr (SACC) {
		float *pg = partial + (size_t)blockIdx.x * 2 * N, *pb = pg + N;
		const float *acc = (const float *)dsm;

		__syncthreads();
		for (int j = threadIdx.x; j < N; j += BLOCK) {
			// Column j = (c TPR + t) V + 4 q + e sits at float
			// ((c V / 4 + q) TPR + t) 4 + e of its group.
			const int c = j / (TPR * V), tt = j / V % TPR, w4 = j % V;
			const int at = ((c * V / 4 + w4 / 4) * TPR + tt) * 4 + w4 % 4;
			float u = acc[at], w = acc[RPB * CAP + at];
#pragma unroll
			for (int s = 1; s < RPB; s++) {  // groups in order
				u += acc[s * CAP + at];
				w += acc[(RPB + s) * CAP + at];
			}
			pg[j] = u;
			pb[j] = w;
		}
	} else if constexpr (MODE != BWD_DH) {
		float *pg = partial + (size_t)blockIdx.x * 2 * N, *pb = pg + N;

		if constexpr (RPB == 1) {
#pragma unroll
			for (int c = 0; c < CH; c++) {
				const int j = (c * TPR + t) * V;
				if (j < N)
#pragma unroll
					for (int k = 0; k < V; k += 4) {
						st16<false>(pg + j + k, &ag[c][k]);
						st16<false>(pb + j + k, &ab[c][k]);
					}
			}
		} else {
			__shared__ float acc[2 * CAP];

			for (int s = 0; s < RPB; s++) {
				if (g == s)
#pragma unroll
					for (int c = 0; c < CH; c++)
#pragma unroll
						for (int k = 0; k < V; k++) {
							const int j = (c * TPR + t) * V + k;
							acc[j] = s ? acc[j] + ag[c][k] : ag[c][k];
							acc[CAP + j] = s ? acc[CAP + j] + ab[c][k] : ab[c][k];
						}
				__syncthreads();
			}
			for (int j = threadIdx.x; j < N; j += BLOCK) {
				pg[j] = acc[j];
				pb[j] = acc[CAP + j];
			}
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Launchers                                                                */
/* ------------------------------------------------------------------------ */

extern "C" int ln_gelu_per_thread(int bwd)
{
	return bwd ? BWD_PER_THREAD : FWD_PER_THREAD;
}

extern "C" int ln_gelu_plan(int bwd, long N, enum fp_dtype dt)
{
	const long V = 16 / (long)fp_dtype_size(dt), E = ln_gelu_per_thread(bwd);
	const int most = bwd ? 512 : 1024;  // see bwd_kernel()

	if (N < 1 || N % V)
		return 0;
	for (int tpr = 32; tpr <= most; tpr *= 2)
		if (tpr * E >= N)
			return tpr;
	return 0;
}

// A kernel picked for a row width: its address for cudaLaunchKernel (every
// forward kernel takes x, gamma, beta, out, stats, M, N; every backward
// one dy, x, gamma, beta, out, stats, partial, M, N), its block size,
// how many rows one block takes per iteration and its dynamic shared
// memory (bytes; kcfg_ready() lets the kernel have it).
struct kcfg {
	const void *fn;
	int block, rpb;
	size_t smem;
};

#define FWD_CASE(TPR, T, MODE, ERF)                                           \
	case TPR: return { (const void *)ln_rows_fwd<T, TPR, MODE, ERF>,       \
			   TPR > ROW_BLOCK ? TPR : ROW_BLOCK,                  \
			   TPR > ROW_BLOCK ? 1 : ROW_BLOCK / TPR, 0 }
#define BWD_CASE(TPR, T, MODE, ERF)                                           \
	case TPR: return { (const void *)ln_rows_bwd<T, TPR, MODE, ERF>,       \
			   bwd_shape<T, TPR, MODE>::BLOCK, bwd_shape<T, TPR, MODE>::RPB, \
			   bwd_shape<T, TPR, MODE>::SMEM }

template <typename T, int MODE, int ERF>
static struct kcfg fwd_kernel(int tpr)
{
	switch (tpr) {
	FWD_CASE(32, T, MODE, ERF);
	FWD_CASE(64, T, MODE, ERF);
	FWD_CASE(128, T, MODE, ERF);
	FWD_CASE(256, T, MODE, ERF);
	FWD_CASE(512, T, MODE, ERF);
	FWD_CASE(1024, T, MODE, ERF);
	default: return { (const void *)ln_wide_fwd<T, MODE, ERF>, WIDE_THREADS, 1, 0 };
	}
}

// No 1024-thread backward: at 1024 threads a thread gets 64 registers, and
// x, dy and the two accumulators alone take 64 (it spilled).
template <typename T, int MODE, int ERF>
static struct kcfg bwd_kernel(int tpr)
{
	switch (tpr) {
	BWD_CASE(32, T, MODE, ERF);
	BWD_CASE(64, T, MODE, ERF);
	BWD_CASE(128, T, MODE, ERF);
	BWD_CASE(256, T, MODE, ERF);
	BWD_CASE(512, T, MODE, ERF);
	default:
		if constexpr (MODE == BWD_LNH)  // no wide-row form: fn NULL
			return { NULL, 0, 1, 0 };
		else
			return { (const void *)ln_wide_bwd<T, MODE, ERF>, WIDE_THREADS, 1, 0 };
	}
}

// Let k's kernel have its dynamic shared memory: beyond 48 KB a kernel
// must ask for it. 0 or -1 after error().
static int kcfg_ready(const struct kcfg *k)
{
	if (!k->smem)
		return 0;
	return CUDA_CHECK(cudaFuncSetAttribute(k->fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
					       (int)k->smem));
}

// The GELU form is a template parameter: as a run-time argument the
// compiler if-converted both forms into every element (select between a
// tanh and an erf result), doubling the arithmetic. Modes without GELU
// take the ERF = 0 instance.
template <typename T>
static struct kcfg fwd_kernel_t(int mode, int erf, int tpr)
{
	switch (mode) {
	case FWD_STATS: return fwd_kernel<T, FWD_STATS, 0>(tpr);
	case FWD_NORM: return fwd_kernel<T, FWD_NORM, 0>(tpr);
	case FWD_LN: return fwd_kernel<T, FWD_LN, 0>(tpr);
	default:
		return erf ? fwd_kernel<T, FWD_FUSED, 1>(tpr)
			   : fwd_kernel<T, FWD_FUSED, 0>(tpr);
	}
}

template <typename T>
static struct kcfg bwd_kernel_t(int mode, int erf, int tpr)
{
	switch (mode) {
	case BWD_LNH: return bwd_kernel<T, BWD_LNH, 0>(tpr);
	case BWD_DH:
		return erf ? bwd_kernel<T, BWD_DH, 1>(tpr) : bwd_kernel<T, BWD_DH, 0>(tpr);
	case BWD_LN: return bwd_kernel<T, BWD_LN, 0>(tpr);
	default:
		return erf ? bwd_kernel<T, BWD_FUSED, 1>(tpr)
			   : bwd_kernel<T, BWD_FUSED, 0>(tpr);
	}
}

static struct kcfg pick(int bwd, int mode, int erf, long N, enum fp_dtype dt)
{
	int tpr = ln_gelu_plan(bwd, N, dt);

	if (dt == FP_BF16)
		return bwd ? bwd_kernel_t<__nv_bfloat16>(mode, erf, tpr)
			   : fwd_kernel_t<__nv_bfloat16>(mode, erf, tpr);
	return bwd ? bwd_kernel_t<float>(mode, erf, tpr)
		   : fwd_kernel_t<float>(mode, erf, tpr);
}

enum { V_FWD_UNFUSED3, V_FWD_UNFUSED2, V_FWD_FUSED };
enum { V_BWD_UNFUSED, V_BWD_FUSED };

struct fp_op {
	int bwd, variant, erf, nsets;
	enum fp_dtype dt;
	long M, N;
	size_t es;
	char *x, *gamma, *beta, *dy;  // nsets input sets each
	char *out;                    // y (forward) or dx (backward)
	char *dgb;                    // backward: dgamma then dbeta, 2N
	char *mid;                    // unfused: h (forward) or dh (backward)
	float *stats;                 // hi, lo, rstd per row (3M)
	float *partial;               // backward: [pgrid][2N]
	struct kcfg main;             // the row kernel writing partials (bwd)
	void *aux;                    // BWD_LNH: h = LayerNorm(x) written here
	int pgrid;                    // its persistent grid
};

static unsigned row_grid(const struct kcfg *k, long M)
{
	long groups = (M + k->rpb - 1) / k->rpb;

	return (unsigned)(groups < MAX_GRID ? groups : MAX_GRID);
}

static int launch_fwd_rows(const struct fp_op *op, int mode, const void *x,
			   const void *g, const void *b, void *out,
			   cudaStream_t st)
{
	struct kcfg k = pick(0, mode, op->erf, op->N, op->dt);
	long M = op->M, N = op->N;
	float *stats = op->stats;
	void *args[] = { &x, &g, &b, &out, &stats, &M, &N };

	return CUDA_CHECK(cudaLaunchKernel(k.fn, dim3(row_grid(&k, M)), dim3(k.block),
					   args, k.smem, st));
}

static int launch_gelu(const struct fp_op *op, const void *h, void *y,
		       cudaStream_t st)
{
	size_t n = (size_t)op->M * op->N, per = (size_t)GELU_THREADS * GELU_UNROLL;
	size_t nvec = n / (16 / op->es), blocks = (nvec + per - 1) / per;
	unsigned grid = (unsigned)(blocks < 1 ? 1 : blocks > MAX_GRID ? MAX_GRID : blocks);

	if (op->dt == FP_BF16) {
		if (op->erf)
			gelu_kernel<__nv_bfloat16, 1><<<grid, GELU_THREADS, 0, st>>>(
				(const __nv_bfloat16 *)h, (__nv_bfloat16 *)y, n);
		else
			gelu_kernel<__nv_bfloat16, 0><<<grid, GELU_THREADS, 0, st>>>(
				(const __nv_bfloat16 *)h, (__nv_bfloat16 *)y, n);
	} else {
		if (op->erf)
			gelu_kernel<float, 1><<<grid, GELU_THREADS, 0, st>>>(
				(const float *)h, (float *)y, n);
		else
			gelu_kernel<float, 0><<<grid, GELU_THREADS, 0, st>>>(
				(const float *)h, (float *)y, n);
	}
	return CUDA_CHECK_LAUNCH("gelu_kernel");
}

static int launch_bwd_rows(const struct fp_op *op, const struct kcfg *k,
			   unsigned grid, const void *dy, const void *x,
			   const void *g, const void *b, void *out,
			   cudaStream_t st)
{
	long M = op->M, N = op->N;
	float *stats = op->stats, *partial = op->partial;
	void *aux = op->aux;
	void *args[] = { &dy, &x, &g, &b, &out, &stats, &partial, &M, &N, &aux };

	return CUDA_CHECK(cudaLaunchKernel(k->fn, dim3(grid), dim3(k->block), args,
					   k->smem, st));
}

static int launch_reduce(const struct fp_op *op, cudaStream_t st)
{
	unsigned grid = (unsigned)((2 * op->N + RED_COLS - 1) / RED_COLS);
	dim3 block(RED_COLS, RED_SLICES);

	if (op->dt == FP_BF16)
		reduce_partials<__nv_bfloat16><<<grid, block, 0, st>>>(
			op->partial, op->pgrid, op->N, (__nv_bfloat16 *)op->dgb);
	else
		reduce_partials<float><<<grid, block, 0, st>>>(
			op->partial, op->pgrid, op->N, (float *)op->dgb);
	return CUDA_CHECK_LAUNCH("reduce_partials");
}

static int op_launch(struct fp_op *op, int set, cudaStream_t st)
{
	size_t mn = (size_t)op->M * op->N * op->es, nb = (size_t)op->N * op->es;
	const char *x = op->x + set * mn, *g = op->gamma + set * nb;
	const char *b = op->beta + set * nb;

	if (set < 0 || set >= op->nsets)
		return error("ln_gelu: input set %d out of range [0, %d)", set, op->nsets);
	if (!op->bwd) {
		switch (op->variant) {
		case V_FWD_UNFUSED3:
			return launch_fwd_rows(op, FWD_STATS, x, g, b, NULL, st) ||
			       launch_fwd_rows(op, FWD_NORM, x, g, b, op->mid, st) ||
			       launch_gelu(op, op->mid, op->out, st) ? -1 : 0;
		case V_FWD_UNFUSED2:
			return launch_fwd_rows(op, FWD_LN, x, g, b, op->mid, st) ||
			       launch_gelu(op, op->mid, op->out, st) ? -1 : 0;
		default:
			return launch_fwd_rows(op, FWD_FUSED, x, g, b, op->out, st);
		}
	}
	const char *dy = op->dy + set * mn;

	if (op->variant == V_BWD_UNFUSED) {
		struct kcfg k1 = pick(1, BWD_DH, op->erf, op->N, op->dt);

		return launch_bwd_rows(op, &k1, row_grid(&k1, op->M), dy, x, g, b,
				       op->mid, st) ||
		       launch_bwd_rows(op, &op->main, (unsigned)op->pgrid, op->mid,
				       x, g, b, op->out, st) ||
		       launch_reduce(op, st) ? -1 : 0;
	}
	return launch_bwd_rows(op, &op->main, (unsigned)op->pgrid, dy, x, g, b,
			       op->out, st) ||
	       launch_reduce(op, st) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* LayerNorm alone, for other workloads (ln_gelu.h)                         */
/* ------------------------------------------------------------------------ */

static int persistent_grid(const struct kcfg *k, long M, int *grid);

// A row kernel in mode for another workload.
static int ln_rows_for(int mode, enum fp_dtype dt, const void *x, const void *gamma,
		       const void *beta, void *out, float *stats, long M, long N,
		       cudaStream_t st)
{
	struct fp_op op;

	memset(&op, 0, sizeof op);
	op.dt = dt;
	op.M = M;
	op.N = N;
	op.stats = stats;
	return launch_fwd_rows(&op, mode, x, gamma, beta, out, st);
}

extern "C" int ln_gelu_ln_fwd(enum fp_dtype dt, const void *x, const void *gamma,
			      const void *beta, void *out, float *stats, long M,
			      long N, cudaStream_t st)
{
	return ln_rows_for(FWD_LN, dt, x, gamma, beta, out, stats, M, N, st);
}

extern "C" int ln_gelu_ln_stats(enum fp_dtype dt, const void *x, float *stats,
				long M, long N, cudaStream_t st)
{
	return ln_rows_for(FWD_STATS, dt, x, NULL, NULL, NULL, stats, M, N, st);
}

extern "C" long ln_gelu_ln_bwd_blocks(enum fp_dtype dt, long M, long N,
				      int recompute)
{
	struct kcfg k = pick(1, recompute ? BWD_LNH : BWD_LN, 0, N, dt);
	int grid = 0;

	if (!k.fn)
		return 0;
	if (kcfg_ready(&k) || persistent_grid(&k, M, &grid))
		return -1;
	return grid;
}

// The instance a LayerNorm backward for another workload runs as: BWD_LN
// (statistics given) or BWD_LNH (recomputed, h written to aux).
static void ln_bwd_op(struct fp_op *op, enum fp_dtype dt, int mode, float *partial,
		      long blocks, void *dgb, long M, long N)
{
	memset(op, 0, sizeof *op);
	op->dt = dt;
	op->M = M;
	op->N = N;
	op->partial = partial;
	op->pgrid = (int)blocks;
	op->dgb = (char *)dgb;
	op->main = pick(1, mode, 0, N, dt);
}

extern "C" int ln_gelu_ln_bwd(enum fp_dtype dt, const void *dh, const void *x,
			      const void *gamma, const float *stats, void *dx,
			      void *dgb, float *partial, long blocks, long M,
			      long N, cudaStream_t st)
{
	struct fp_op op;

	ln_bwd_op(&op, dt, BWD_LN, partial, blocks, dgb, M, N);
	op.stats = (float *)stats;
	return launch_bwd_rows(&op, &op.main, (unsigned)blocks, dh, x, gamma, NULL,
			       dx, st) ||
	       launch_reduce(&op, st) ? -1 : 0;
}

extern "C" int ln_gelu_ln_bwd_recompute(enum fp_dtype dt, const void *dh,
					const void *x, const void *gamma,
					const void *beta, void *h, void *dx,
					void *dgb, float *partial, long blocks,
					long M, long N, cudaStream_t st)
{
	struct fp_op op;

	ln_bwd_op(&op, dt, BWD_LNH, partial, blocks, dgb, M, N);
	op.aux = h;
	if (!op.main.fn)
		return error("ln_gelu: no fused LayerNorm backward for rows of %ld", N);
	return launch_bwd_rows(&op, &op.main, (unsigned)blocks, dh, x, gamma, beta,
			       dx, st) ||
	       launch_reduce(&op, st) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* The workloads                                                            */
/* ------------------------------------------------------------------------ */

static const struct fp_param ln_gelu_params[] = {
	{ "M", FP_REQUIRED, 1, 1L << 31, "rows" },
	{ "N", FP_REQUIRED, 1, 1L << 30, "row width (elements)" },
	{ "erf", 0, 0, 1, "GELU form: 0 tanh approximation, 1 exact erf" },
	{ NULL, 0, 0, 0, NULL }
};

static const char *const ln_gelu_profiles[] = {
	"normal",    // x ~ N(0, 1): what timing uses
	"offset",    // x ~ 1e4 + N(0, 1): breaks E[x^2] - E[x]^2
	"constant",  // every even row one repeated value: variance exactly 0
	"spiky",     // N(0, 1) with one +-1000 outlier per row
	NULL
};
enum { P_NORMAL, P_OFFSET, P_CONSTANT, P_SPIKY };

#define LN_GELU_SUITE "M=16384,N=768;M=16384,N=1024;M=16384,N=4096"
#define LN_GELU_QUICK "M=4096,N=768;M=2048,N=4096"
// Awkward widths (1, odd, prime-ish, a vocabulary) take the wide-row
// kernels; the rest hit every register-kernel block shape, a partial last
// block (M=5, N=4096: two rows per block) and many rows per persistent
// block (M=1000, M=16384).
#define LN_GELU_TESTS "M=1,N=1;M=1,N=4097;M=3,N=1023,erf=1;M=16384,N=768;" \
	"M=4,N=50257;M=7,N=64,erf=1;M=5,N=4096;M=3,N=16384,erf=1;" \
	"M=2,N=32768;M=1000,N=1024"

static const struct fp_variant fwd_variants[] = {
	{ "unfused3", FP_UNFUSED,
	  "3 kernels: row mean/rstd; normalize+affine to h; GELU(h)" },
	{ "unfused2", FP_UNFUSED, "2 kernels: LayerNorm to h; GELU(h)" },
	{ "fused", FP_FUSED,
	  "1 kernel: row read once into registers, LayerNorm+GELU, written once" },
	{ NULL, FP_UNFUSED, NULL }
};

static const struct fp_variant bwd_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "3 kernels: dh = dy*GELU'(LN(x)) with stats; LayerNorm backward to dx "
	  "and dgamma/dbeta partials; partial sum" },
	{ "fused", FP_FUSED,
	  "2 kernels: dx and dgamma/dbeta partials in one pass over dy and x; "
	  "partial sum" },
	{ NULL, FP_UNFUSED, NULL }
};

// Largest one-tensor size we accept: beyond any GPU, and far from overflow.
#define MAX_TENSOR_BYTES (1.0 * (1ull << 47))

static int ln_gelu_validate(const struct fp_shape *s, enum fp_dtype dt,
			    char *why, size_t whylen)
{
	long M = s->v[0], N = s->v[1], erf = s->v[2];

	if (dt != FP_F32 && dt != FP_BF16) {
		snprintf(why, whylen, "dtype %s: ln_gelu takes fp32 or bf16",
			 fp_dtype_name(dt));
		return -1;
	}
	if (M < 1 || N < 1) {
		snprintf(why, whylen, "M=%ld,N=%ld: rows and row width must be at least 1",
			 M, N);
		return -1;
	}
	if (erf != 0 && erf != 1) {
		snprintf(why, whylen, "erf=%ld: must be 0 (tanh GELU) or 1 (erf GELU)", erf);
		return -1;
	}
	if ((double)M * (double)N * (double)fp_dtype_size(dt) > MAX_TENSOR_BYTES) {
		snprintf(why, whylen, "M=%ld,N=%ld: one %s tensor would take %.3g TiB, "
			 "more than any GPU holds", M, N, fp_dtype_name(dt),
			 (double)M * (double)N * (double)fp_dtype_size(dt) / 0x1p40);
		return -1;
	}
	return 0;
}

static int uses_stats(int bwd, int variant)
{
	return bwd ? variant == V_BWD_UNFUSED : variant == V_FWD_UNFUSED3;
}

static int uses_mid(int bwd, int variant)
{
	return bwd ? variant == V_BWD_UNFUSED : variant != V_FWD_FUSED;
}

// Partial rows of the backward: the persistent grid, at most one block per
// row group and at most MAX_PARTIALS (create() sizes it from the device).
static long partial_rows_max(const struct fp_shape *s, enum fp_dtype dt, int variant)
{
	struct kcfg k = pick(1, variant == V_BWD_UNFUSED ? BWD_LN : BWD_FUSED,
			     (int)s->v[2], s->v[1], dt);
	long groups = (s->v[0] + k.rpb - 1) / k.rpb;

	return groups < MAX_PARTIALS ? groups : MAX_PARTIALS;
}

static size_t op_bytes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
		       int variant, int nsets)
{
	size_t M = (size_t)s->v[0], N = (size_t)s->v[1], es = fp_dtype_size(dt);
	size_t mn = M * N * es, total;

	total = dev_pad(nsets * mn) + 2 * dev_pad(nsets * N * es) + dev_pad(mn);
	if (bwd)
		total += dev_pad(nsets * mn) + dev_pad(2 * N * es) +
			 dev_pad((size_t)partial_rows_max(s, dt, variant) * 2 * N * 4);
	if (uses_mid(bwd, variant))
		total += dev_pad(mn);
	if (uses_stats(bwd, variant))
		total += dev_pad(3 * M * sizeof(float));
	return total;
}

static size_t fwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	return op_bytes(0, s, dt, variant, nsets);
}

static size_t bwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	return op_bytes(1, s, dt, variant, nsets);
}

static void fwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], N = (double)s->v[1], es = (double)fp_dtype_size(dt);
	double mn = M * N;

	m->flops = (s->v[2] ? 13.0 : 17.0) * mn;
	m->min_bytes = (2 * mn + 2 * N) * es;
	switch (variant) {
	case V_FWD_UNFUSED3:
		// stats: x in, 12 B/row out; normalize: x, stats, gamma, beta
		// in, h out; GELU: h in, y out.
		m->variant_bytes = (5 * mn + 2 * N) * es + 24 * M;
		break;
	case V_FWD_UNFUSED2:
		m->variant_bytes = (4 * mn + 2 * N) * es;
		break;
	default:
		m->variant_bytes = m->min_bytes;
		break;
	}
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], N = (double)s->v[1], es = (double)fp_dtype_size(dt);
	double mn = M * N;

	m->flops = (s->v[2] ? 29.0 : 35.0) * mn;
	m->min_bytes = (3 * mn + 4 * N) * es;
	// The dgamma/dbeta partials (at most 1024 x 2N fp32) are written and
	// read back at once; they are expected to stay in L2 and are not
	// counted.
	if (variant == V_BWD_UNFUSED)
		// dh kernel: dy, x, gamma, beta in, dh and 12 B/row of stats
		// out; LayerNorm backward: dh, x, stats, gamma in, dx out.
		m->variant_bytes = (6 * mn + 5 * N) * es + 24 * M;
	else
		m->variant_bytes = m->min_bytes;
}

static void op_destroy(struct fp_op *op)
{
	if (!op)
		return;
	cudaFree(op->x);
	cudaFree(op->gamma);
	cudaFree(op->beta);
	cudaFree(op->dy);
	cudaFree(op->out);
	cudaFree(op->dgb);
	cudaFree(op->mid);
	cudaFree(op->stats);
	cudaFree(op->partial);
	free(op);
}

// The persistent grid of the kernel writing partials: as many blocks as
// fit on the device at once, at most one per row group, at most
// MAX_PARTIALS.
static int persistent_grid(const struct kcfg *k, long M, int *grid)
{
	int dev, sms, per_sm;
	long g;

	if (CUDA_CHECK(cudaGetDevice(&dev)) ||
	    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) ||
	    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->fn,
								      k->block, k->smem)))
		return -1;
	g = (long)sms * (per_sm > 0 ? per_sm : 1);
	if (g > MAX_PARTIALS)
		g = MAX_PARTIALS;
	if (g > (M + k->rpb - 1) / k->rpb)
		g = (M + k->rpb - 1) / k->rpb;
	*grid = (int)g;
	return 0;
}

static int op_create(int bwd, struct fp_op **out, const struct fp_shape *s,
		     enum fp_dtype dt, int variant, int nsets,
		     unsigned long long seed)
{
	struct fp_op *op;
	size_t mn, nb, elems;

	*out = NULL;
	if (nsets < 1)
		return error("ln_gelu: nsets=%d: need at least one input set", nsets);
	op = (struct fp_op *)xcalloc(1, sizeof *op);
	op->bwd = bwd;
	op->variant = variant;
	op->dt = dt;
	op->M = s->v[0];
	op->N = s->v[1];
	op->erf = (int)s->v[2];
	op->nsets = nsets;
	op->es = fp_dtype_size(dt);
	elems = (size_t)op->M * op->N;
	mn = elems * op->es;
	nb = (size_t)op->N * op->es;

	if (CUDA_CHECK(cudaMalloc((void **)&op->x, nsets * mn)) ||
	    CUDA_CHECK(cudaMalloc((void **)&op->gamma, nsets * nb)) ||
	    CUDA_CHECK(cudaMalloc((void **)&op->beta, nsets * nb)) ||
	    CUDA_CHECK(cudaMalloc((void **)&op->out, mn)))
		goto out_free;
	if (uses_mid(bwd, variant) && CUDA_CHECK(cudaMalloc((void **)&op->mid, mn)))
		goto out_free;
	if (uses_stats(bwd, variant) &&
	    CUDA_CHECK(cudaMalloc((void **)&op->stats, 3 * (size_t)op->M * sizeof(float))))
		goto out_free;
	if (bwd) {
		struct kcfg k1 = pick(1, BWD_DH, op->erf, op->N, dt);

		op->main = pick(1, variant == V_BWD_UNFUSED ? BWD_LN : BWD_FUSED,
				op->erf, op->N, dt);
		if (kcfg_ready(&k1) || kcfg_ready(&op->main) ||
		    persistent_grid(&op->main, op->M, &op->pgrid) ||
		    CUDA_CHECK(cudaMalloc((void **)&op->dy, nsets * mn)) ||
		    CUDA_CHECK(cudaMalloc((void **)&op->dgb, 2 * nb)) ||
		    CUDA_CHECK(cudaMalloc((void **)&op->partial,
					  (size_t)op->pgrid * 2 * op->N * sizeof(float))))
			goto out_free;
	}
	for (int i = 0; i < nsets; i++) {
		uint64_t sd = splitmix64(seed + 0x100 * (uint64_t)i);

		if (dev_fill_normal(op->x + i * mn, dt, elems, sd, 0.0f, 1.0f, 0) ||
		    dev_fill_normal(op->gamma + i * nb, dt, op->N, splitmix64(sd + 1), 1.0f, 0.5f, 0) ||
		    dev_fill_normal(op->beta + i * nb, dt, op->N, splitmix64(sd + 2), 0.0f, 0.5f, 0) ||
		    (bwd && dev_fill_normal(op->dy + i * mn, dt, elems, splitmix64(sd + 3),
					    0.0f, 1.0f, 0)))
			goto out_free;
	}
	if (CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	*out = op;
	return 0;

out_free:
	op_destroy(op);
	return -1;
}

static int fwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed,
			  const struct fp_kopts *ko)
{
	return op_create(0, op, s, dt, variant, nsets, seed);
}

static int bwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed,
			  const struct fp_kopts *ko)
{
	return op_create(1, op, s, dt, variant, nsets, seed);
}

// Draw one row of profile `profile` into v (N values), rounded to dt.
static void draw_row(struct fp_rng *r, int profile, long row, double *v, long N,
		     enum fp_dtype dt)
{
	if (profile == P_CONSTANT && row % 2 == 0) {
		double c = 5.0 * rng_normal(r);
		for (long j = 0; j < N; j++)
			v[j] = c;
	} else {
		double off = profile == P_OFFSET ? 1e4 : 0.0;
		for (long j = 0; j < N; j++)
			v[j] = off + rng_normal(r);
		if (profile == P_SPIKY) {
			long at = (long)(rng_uniform(r) * (double)N);
			v[at < N ? at : N - 1] = rng_uniform(r) < 0.5 ? -1e3 : 1e3;
		}
	}
	host_round(v, (size_t)N, dt);
}

// Rows per host chunk when uploading/comparing: about 1 M elements.
static long chunk_rows(long N)
{
	long r = (1L << 20) / N;

	return r < 1 ? 1 : r;
}

// One part of a chunk of draw_upload: rows r0 + [i0, i1), each from its own
// stream, into buf (row r0 + i at buf + i N) and host.
struct draw_job {
	int profile;
	enum fp_dtype dt;
	uint64_t base;
	long r0, N;
	double *buf;
	float *host;
};

static void draw_rows(void *ctx, int part, long i0, long i1)
{
	const struct draw_job *j = (const struct draw_job *)ctx;
	const long N = j->N;
	struct fp_rng g;

	(void)part;
	for (long i = i0; i < i1; i++) {
		const long row = j->r0 + i;
		double *v = j->buf + i * N;

		rng_seed_item(&g, j->base, row);
		draw_row(&g, j->profile, row, v, N, j->dt);
		for (long k = 0; k < N; k++)
			j->host[row * N + k] = (float)v[k];
	}
}

// Fill M x N host values (as float: exact for both dtypes once rounded) and
// upload them to dev; buf is a chunk_rows(N) * N scratch. The rows' streams
// come from one draw of r, on every core.
static int draw_upload(struct fp_rng *r, int profile, float *host, char *dev,
		       long M, long N, enum fp_dtype dt, double *buf)
{
	const long cr = chunk_rows(N);
	struct draw_job job = { profile, dt, rng_next(r), 0, N, buf, host };

	for (long r0 = 0; r0 < M; r0 += cr) {
		long nr = M - r0 < cr ? M - r0 : cr;

		job.r0 = r0;
		parallel_for(nr, parallel_min_rows(N), 64, draw_rows, &job);
		if (dev_upload(dev + (size_t)r0 * N * fp_dtype_size(dt), dt, buf,
			       (size_t)(nr * N)))
			return -1;
	}
	return 0;
}

static int poison_all(struct fp_op *op)
{
	size_t mn = (size_t)op->M * op->N * op->es;

	return dev_poison(op->out, mn) ||
	       (op->mid && dev_poison(op->mid, mn)) ||
	       (op->stats && dev_poison(op->stats, 3 * (size_t)op->M * sizeof(float))) ||
	       (op->dgb && dev_poison(op->dgb, 2 * (size_t)op->N * op->es)) ||
	       (op->partial && dev_poison(op->partial,
					  (size_t)op->pgrid * 2 * op->N * sizeof(float)))
	       ? -1 : 0;
}

// One part of a check's reference rows (parallel_for): rows r0 + [i0, i1)
// of the host inputs into ref (row r0 + i at ref + i N); scratch holds per
// part: x row, dy row, dgamma and dbeta sums (4 N doubles).
struct ref_job {
	const struct fp_op *op;
	const float *hx, *hdy;
	const double *g, *b;
	double *ref, *scratch;
	long r0;
};

static void ref_rows(void *ctx, int part, long i0, long i1)
{
	const struct ref_job *j = (const struct ref_job *)ctx;
	const long N = j->op->N;
	double *xr = j->scratch + (size_t)part * 4 * N, *dyr = xr + N;
	double *dg = dyr + N, *db = dg + N;

	for (long i = i0; i < i1; i++) {
		const long row = j->r0 + i;

		for (long k = 0; k < N; k++)
			xr[k] = j->hx[row * N + k];
		if (j->op->bwd) {
			for (long k = 0; k < N; k++)
				dyr[k] = j->hdy[row * N + k];
			ln_gelu_ref_bwd(dyr, xr, j->g, j->b, j->ref + i * N, dg, db, 1, N,
					j->op->erf);
		} else {
			ln_gelu_ref_fwd(xr, j->g, j->b, j->ref + i * N, 1, N, j->op->erf);
		}
	}
}

static int op_check(struct fp_op *op, int profile, unsigned long long seed,
		    struct fp_check *res)
{
	const long M = op->M, N = op->N, cr = chunk_rows(N);
	const long min_rows = parallel_min_rows(N);
	const int np = parallel_parts(cr < M ? cr : M, min_rows, 64);
	struct ref_job job;
	const enum fp_dtype dt = op->dt;
	size_t elems = (size_t)M * N;
	float *hx = NULL, *hdy = NULL;
	double *g = NULL, *b = NULL, *buf = NULL, *ref = NULL, *dgr = NULL,
	       *dbr = NULL, *dgb = NULL;
	struct fp_cmp cy, cg, cb;
	struct fp_rng rng;
	int rc = -1;

	memset(&job, 0, sizeof job);
	hx = (float *)malloc(elems * sizeof *hx);
	hdy = op->bwd ? (float *)malloc(elems * sizeof *hdy) : NULL;
	buf = (double *)malloc((size_t)cr * N * sizeof *buf);
	ref = (double *)malloc((size_t)cr * N * sizeof *ref);
	g = (double *)xcalloc((size_t)N, sizeof *g);
	b = (double *)xcalloc((size_t)N, sizeof *b);
	dgr = (double *)xcalloc((size_t)N, sizeof *dgr);
	dbr = (double *)xcalloc((size_t)N, sizeof *dbr);
	dgb = (double *)xcalloc(2 * (size_t)N, sizeof *dgb);
	if (!hx || (op->bwd && !hdy) || !buf || !ref) {
		error("ln_gelu: check of %ld x %ld: out of host memory", M, N);
		goto out_free;
	}

	rng_seed(&rng, seed);
	for (long j = 0; j < N; j++) {
		g[j] = 1.0 + 0.5 * rng_normal(&rng);
		b[j] = 0.5 * rng_normal(&rng);
	}
	host_round(g, (size_t)N, dt);
	host_round(b, (size_t)N, dt);
	if (dev_upload(op->gamma, dt, g, (size_t)N) || dev_upload(op->beta, dt, b, (size_t)N) ||
	    draw_upload(&rng, profile, hx, op->x, M, N, dt, buf) ||
	    (op->bwd && draw_upload(&rng, P_NORMAL, hdy, op->dy, M, N, dt, buf)) ||
	    poison_all(op) || op_launch(op, 0, 0) ||
	    CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;

	// The references on every core: each chunk's rows split into parts,
	// each part with its own row buffers and dgamma/dbeta sums, which are
	// added in part order at the end.
	job.op = op;
	job.hx = hx;
	job.hdy = hdy;
	job.g = g;
	job.b = b;
	job.ref = ref;
	job.scratch = (double *)xcalloc((size_t)np * 4 * N, sizeof *job.scratch);
	cmp_init(&cy);
	for (long r0 = 0; r0 < M; r0 += cr) {
		long nr = M - r0 < cr ? M - r0 : cr;

		if (dev_download(buf, op->out + (size_t)r0 * N * op->es, dt,
				 (size_t)(nr * N)))
			goto out_free;
		job.r0 = r0;
		parallel_for(nr, min_rows, 64, ref_rows, &job);
		cmp_add(&cy, buf, ref, (size_t)(nr * N));
	}
	for (int p = 0; p < np; p++)
		for (long j = 0; j < N; j++) {
			dgr[j] += job.scratch[((size_t)p * 4 + 2) * N + j];
			dbr[j] += job.scratch[((size_t)p * 4 + 3) * N + j];
		}
	check_begin(res, seed, dt == FP_BF16 ? 1e-2 : 1e-5);
	check_output(res, op->bwd ? "dx" : "y", &cy);
	if (op->bwd) {
		if (dev_download(dgb, op->dgb, dt, 2 * (size_t)N))
			goto out_free;
		cmp_init(&cg);
		cmp_init(&cb);
		cmp_add(&cg, dgb, dgr, (size_t)N);
		cmp_add(&cb, dgb + N, dbr, (size_t)N);
		check_output(res, "dgamma", &cg);
		check_output(res, "dbeta", &cb);
	}
	rc = 0;

out_free:
	free(hx);
	free(hdy);
	free(g);
	free(b);
	free(buf);
	free(ref);
	free(dgr);
	free(dbr);
	free(dgb);
	free(job.scratch);
	return rc;
}

extern "C" const struct workload wl_ln_gelu_fwd = {
	.name = "ln_gelu_fwd",
	.summary = "y = GELU(LayerNorm(x; gamma, beta)) over rows of width N",
	.params = ln_gelu_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = ln_gelu_profiles,
	.suite = LN_GELU_SUITE,
	.quick = LN_GELU_QUICK,
	.tests = LN_GELU_TESTS,
	.validate = ln_gelu_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};

extern "C" const struct workload wl_ln_gelu_bwd = {
	.name = "ln_gelu_bwd",
	.summary = "dx, dgamma, dbeta of GELU(LayerNorm(x; gamma, beta)) from dy",
	.params = ln_gelu_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = ln_gelu_profiles,
	.suite = LN_GELU_SUITE,
	.quick = LN_GELU_QUICK,
	.tests = LN_GELU_TESTS,
	.validate = ln_gelu_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};
