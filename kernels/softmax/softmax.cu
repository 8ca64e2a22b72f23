// softmax.cu - row softmax workloads: softmax_fwd, softmax_masked_fwd and
// softmax_bwd, fused and unfused, fp32 and bf16 (bf16 storage, fp32 math).
//
// Read top to bottom as in llm.c dev/cuda: the double-precision CPU
// references and input profiles, the kernels (simplest first, each saying
// what it changes over the previous one), the launchers, then the three
// workload definitions.
//
// Napkin math, per element of an M x N input (E = M*N, es = 4 fp32 / 2 bf16):
//   softmax_fwd          5 FLOP (max, subtract, exp, sum, scale by 1/sum),
//                        min bytes 2*E*es (read x, write y)
//   softmax_masked_fwd   6 FLOP per kept element (plus the scale), min bytes
//                        (kept + E)*es: masked inputs need not be read
//   softmax_bwd          4 FLOP (dy*y summed as an FMA, subtract, multiply),
//                        min bytes 3*E*es (read y, dy, write dx)
// exp counts as one FLOP (the hardware does an FMUL by log2(e) and one
// MUFU.EX2, which FLOP counters do not see). At 16384 x 4096 on an H100
// (3.0 TB/s copy bandwidth, ~50 TFLOP/s fp32) softmax_fwd is 335 MFLOP over
// 537 MB fp32 (0.6 FLOP/byte): 179 us of bytes against 7 us of FLOPs, so
// every kernel here is bound by bytes and "fast" means "near 179 us" (fp32),
// 89 us (bf16); softmax_bwd's floor is 268 us (fp32), 134 us (bf16). The
// exps (67 M MUFU.EX2 at 16/clk/SM) take ~18 us of one pipe: hidden.
//
// Conventions every kernel shares:
// - A row is walked in 16-byte slots aligned to memory, not to the row: slot
//   k of a row covers the elements whose addresses fall in the k-th 16-byte
//   chunk at or below the row start. Only the first and last slot of a row
//   can be partial; they are read and written element by element, every other
//   slot with one 16-byte access. So any N (odd widths, N = 1) and any row
//   start (row r starts at r*N elements) run on the same code, and no byte
//   outside the row is touched. All buffers are 16-byte aligned (cudaMalloc
//   plus 256-byte padded input sets), so x, y, dy, dx rows share one layout.
// - exp(v - max) is computed as exp2f((v - max) * log2(e)). The subtraction
//   comes first: with inputs around 1e4 it is exact (both operands within a
//   factor of two), where the fused form fmaf(v, log2e, -max*log2e) would
//   lose ~1e-3 of the exponent to rounding.
// - A row whose entries are all -inf gives zeros (see softmax_fwd_ref).
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "device.cuh"
#include "kutil.h"
#include "softmax.h"
#include "util.h"

// ---------------------------------------------------------------------------
// CPU reference (double) and input profiles

extern "C" long softmax_causal_keep(long r, long N)
{
	return r % N + 1;
}

extern "C" double softmax_causal_kept(long M, long N)
{
	double q = (double)(M / N), rem = (double)(M % N), n = (double)N;

	return q * n * (n + 1) / 2 + rem * (rem + 1) / 2;
}

// One row; keep = how many leading entries take part (N unless masked).
static void fwd_ref_row(const double *x, double *y, long N, long keep,
			double scale)
{
	double m = -INFINITY, s = 0;
	long j;

	for (j = 0; j < keep; j++)
		m = fmax(m, x[j] * scale);
	if (m == -INFINITY) {
		memset(y, 0, (size_t)N * sizeof *y);
		return;
	}
	for (j = 0; j < keep; j++) {
		y[j] = exp(x[j] * scale - m);
		s += y[j];
	}
	for (j = 0; j < keep; j++)
		y[j] /= s;
	for (; j < N; j++)
		y[j] = 0;
}

extern "C" void softmax_fwd_ref(const double *x, double *y, long M, long N,
				double scale, int causal)
{
	for (long r = 0; r < M; r++)
		fwd_ref_row(x + r * N, y + r * N, N,
			    causal ? softmax_causal_keep(r, N) : N, scale);
}

static void bwd_ref_row(const double *y, const double *dy, double *dx, long N)
{
	double s = 0;

	for (long j = 0; j < N; j++)
		s += dy[j] * y[j];
	for (long j = 0; j < N; j++)
		dx[j] = y[j] * (dy[j] - s);
}

extern "C" void softmax_bwd_ref(const double *y, const double *dy, double *dx,
				long M, long N)
{
	for (long r = 0; r < M; r++)
		bwd_ref_row(y + r * N, dy + r * N, dx + r * N, N);
}

// One part of softmax_gen_logits: rows [r0, r1), each from its own stream.
struct gen_job {
	double *x;
	long N;
	enum sm_profile p;
	double std;
	uint64_t seed;
};

static void gen_rows(void *ctx, int part, long r0, long r1)
{
	const struct gen_job *j = (const struct gen_job *)ctx;
	const long N = j->N;
	const double std = j->std;
	struct fp_rng g;

	(void)part;
	for (long r = r0; r < r1; r++) {
		double *xr = j->x + r * N;

		rng_seed_item(&g, j->seed, r);
		for (long k = 0; k < N; k++) {
			switch (j->p) {
			case SM_LARGE:
				xr[k] = r % 3 == 2 ? (2 * rng_uniform(&g) - 1) * 1e4
					: (r % 3 ? -1e4 : 1e4) + std * rng_normal(&g);
				break;
			case SM_NEGINF:
			case SM_DEADROWS:
				xr[k] = rng_uniform(&g) < 0.25 ? -INFINITY
					: std * rng_normal(&g);
				break;
			default:
				xr[k] = std * rng_normal(&g);
			}
		}
		if (j->p == SM_NEGINF || j->p == SM_DEADROWS)
			xr[rng_next(&g) % (uint64_t)N] = std * rng_normal(&g);
		if (j->p == SM_DEADROWS && r % 3 == 1)
			for (long k = 0; k < N; k++)
				xr[k] = -INFINITY;
	}
}

extern "C" void softmax_gen_logits(double *x, long M, long N,
				   enum sm_profile p, double std, uint64_t seed)
{
	struct gen_job job = { x, N, p, std, seed };

	parallel_for(M, parallel_min_rows(N), 64, gen_rows, &job);
}

// ---------------------------------------------------------------------------
// Device helpers: 16-byte slots, dtype packing, reductions

namespace cg = cooperative_groups;

#define LOG2E 1.4426950408889634f
#define FULL_MASK 0xffffffffu

template <typename T> struct vec;

template <> struct vec<float> {
	static constexpr int W = 4;  // elements per 16-byte slot
	__device__ static float to_f(float v) { return v; }
	__device__ static float from_f(float v) { return v; }
	__device__ static void unpack(uint4 r, float *v)
	{
		v[0] = __uint_as_float(r.x);
		v[1] = __uint_as_float(r.y);
		v[2] = __uint_as_float(r.z);
		v[3] = __uint_as_float(r.w);
	}
	__device__ static uint4 pack(const float *v)
	{
		return make_uint4(__float_as_uint(v[0]), __float_as_uint(v[1]),
				  __float_as_uint(v[2]), __float_as_uint(v[3]));
	}
};

template <> struct vec<__nv_bfloat16> {
	static constexpr int W = 8;
	__device__ static float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
	__device__ static __nv_bfloat16 from_f(float v) { return __float2bfloat16_rn(v); }
	// bf16 -> fp32 is a 16-bit shift; element 2i is the low half of word i.
	__device__ static void unpack2(uint32_t u, float *v)
	{
		v[0] = __uint_as_float(u << 16);
		v[1] = __uint_as_float(u & 0xffff0000u);
	}
	__device__ static uint32_t pack2(float a, float b)
	{
		__nv_bfloat162 h = __floats2bfloat162_rn(a, b);
		return *reinterpret_cast<uint32_t *>(&h);
	}
	__device__ static void unpack(uint4 r, float *v)
	{
		unpack2(r.x, v);
		unpack2(r.y, v + 2);
		unpack2(r.z, v + 4);
		unpack2(r.w, v + 6);
	}
	__device__ static uint4 pack(const float *v)
	{
		return make_uint4(pack2(v[0], v[1]), pack2(v[2], v[3]),
				  pack2(v[4], v[5]), pack2(v[6], v[7]));
	}
};

// A slot whose every element is fill.
template <typename T>
__device__ __forceinline__ uint4 fill_raw(float fill)
{
	float v[vec<T>::W];

#pragma unroll
	for (int e = 0; e < vec<T>::W; e++)
		v[e] = fill;
	return vec<T>::pack(v);
}

// Slot k of a row whose aligned base is a (the row starts off elements above
// a); elements of the row at or past n, or before its start, read as fill.
// STREAM marks data read once (evict-first in L1 and L2).
template <typename T, bool STREAM>
__device__ __forceinline__ uint4 load_slot(const T *a, int k, int off, int n,
					   float fill)
{
	constexpr int W = vec<T>::W;
	const int j0 = k * W - off;

	if (j0 >= 0 && j0 + W <= n) {
		const uint4 *p = reinterpret_cast<const uint4 *>(a + (size_t)k * W);
		return STREAM ? __ldcs(p) : *p;
	}
	float v[W];
#pragma unroll
	for (int e = 0; e < W; e++) {
		const int j = j0 + e;
		v[e] = j >= 0 && j < n ? vec<T>::to_f(a[(size_t)k * W + e]) : fill;
	}
	return vec<T>::pack(v);  // exact: every v[e] came from a T or is fill
}

// Write the elements of slot k that lie in [0, n) of the row, streaming
// (evict-first: nothing reads the output back). On an H100 at 16384x4096
// this took the fused fp32 forward from 185.9 to 182.3 us and the backward
// from 274.6 to 267.1 us (fpbench -r 200, e03b4df).
template <typename T>
__device__ __forceinline__ void store_slot(T *a, int k, int off, int n,
					   const float *v)
{
	constexpr int W = vec<T>::W;
	const int j0 = k * W - off;

	if (j0 >= 0 && j0 + W <= n) {
		__stcs(reinterpret_cast<uint4 *>(a + (size_t)k * W), vec<T>::pack(v));
		return;
	}
#pragma unroll
	for (int e = 0; e < W; e++) {
		const int j = j0 + e;
		if (j >= 0 && j < n)
			a[(size_t)k * W + e] = vec<T>::from_f(v[e]);
	}
}

// Slots a row of n elements starting off elements past a 16-byte boundary
// spans.
template <typename T>
__device__ __forceinline__ int row_slots(int off, int n)
{
	return (off + n + vec<T>::W - 1) / vec<T>::W;
}

// Reduce over the NW warps of a block (all threads call it; every thread gets
// the result). red holds NW + 1 floats. The order is fixed: bit-identical
// results run to run.
template <int NW, bool MAX>
__device__ __forceinline__ float block_reduce(float v, float *red)
{
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

	v = warp_reduce<MAX>(v);
	if (NW == 1)
		return v;
	if (lane == 0)
		red[warp] = v;
	__syncthreads();
	if (warp == 0) {
		float u = lane < NW ? red[lane] : MAX ? -INFINITY : 0.f;
		u = warp_reduce<MAX>(u);
		if (lane == 0)
			red[NW] = u;
	}
	__syncthreads();
	return red[NW];
}

// Reduce over the WPR warps that share one row (t: thread index within the
// row's group; red: WPR floats of that row).
template <int WPR, bool MAX>
__device__ __forceinline__ float group_reduce(float v, float *red, int t)
{
	v = warp_reduce<MAX>(v);
	if constexpr (WPR == 1) {
		return v;
	} else {
		if ((t & 31) == 0)
			red[t >> 5] = v;
		__syncthreads();
		float r = red[0];
#pragma unroll
		for (int i = 1; i < WPR; i++)
			r = MAX ? fmaxf(r, red[i]) : r + red[i];
		return r;
	}
}

// Online softmax state: running max m and sum s of exp(v - m). Merging two
// states rescales the smaller max's sum; two empty states (m = -inf) stay
// empty instead of making NaN from -inf - -inf.
__device__ __forceinline__ void ms_merge(float &m, float &s, float m2, float s2)
{
	const float mn = fmaxf(m, m2);

	if (mn == -INFINITY)
		return;
	s = s * exp2f((m - mn) * LOG2E) + s2 * exp2f((m2 - mn) * LOG2E);
	m = mn;
}

// ---------------------------------------------------------------------------
// Kernels, unfused: one block of UF_THREADS per row, grid = M rows. These are
// the textbook expansion, each kernel as good as it can be on its own
// (16-byte slots, 4 loads in flight per thread); what they lose is the
// intermediates' round trips through DRAM.
//
// softmax_fwd/unfused4 at M x N: row_max reads E, exp_sub reads E and writes
// E, row_sum reads E, div reads E and writes E: 6*E*es (+16*M for the row
// vectors), three times the fused kernel's 2*E*es, so expect ~3x its time
// (PyTorch's max/exp/sum/div chain: 839 us at 16384 x 4096 fp32 against
// 229 us for torch.softmax). Measured on an H100 at 16384 x 4096: 554 us
// fp32, 289 us bf16, 2.9 TB/s counting the bytes they move: 3.0x the fused
// kernel, as predicted.

#define UF_THREADS 256
#define UF_WARPS (UF_THREADS / 32)

// max over each row -> mx[row] (fp32).
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_row_max(const T *__restrict__ x, float *__restrict__ mx, int N)
{
	__shared__ float red[UF_WARPS + 1];
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const T *a = x + (size_t)row * N - off;
	float m = -INFINITY;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(a, k, off, N, -INFINITY), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			m = fmaxf(m, v[e]);
	}
	m = block_reduce<UF_WARPS, true>(m, red);
	if (threadIdx.x == 0)
		mx[row] = m;
}

// e = exp(x - mx[row]) in the storage dtype (an all -inf row gives zeros).
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_exp_sub(const T *__restrict__ x, const float *__restrict__ mx,
	  T *__restrict__ ex, int N)
{
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const size_t base = (size_t)row * N - off;
	const float m = mx[row], mz = m == -INFINITY ? 0.f : m;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(x + base, k, off, N, -INFINITY), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			v[e] = exp2f((v[e] - mz) * LOG2E);
		store_slot<T>(ex + base, k, off, N, v);
	}
}

// sum over each row -> sum[row] (fp32).
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_row_sum(const T *__restrict__ x, float *__restrict__ sum, int N)
{
	__shared__ float red[UF_WARPS + 1];
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const T *a = x + (size_t)row * N - off;
	float s = 0;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(a, k, off, N, 0.f), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			s += v[e];
	}
	s = block_reduce<UF_WARPS, false>(s, red);
	if (threadIdx.x == 0)
		sum[row] = s;
}

// y = e / sum[row] (0 where the sum is 0: an all -inf row).
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_div(const T *__restrict__ ex, const float *__restrict__ sum,
      T *__restrict__ y, int N)
{
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const size_t base = (size_t)row * N - off;
	const float s = sum[row], inv = s > 0 ? 1.f / s : 0.f;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(ex + base, k, off, N, 0.f), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			v[e] *= inv;
		store_slot<T>(y + base, k, off, N, v);
	}
}

// softmax_masked_fwd/unfused, kernel 1: t = x * scale where the causal rule
// keeps the column, -inf elsewhere (a masked_fill: it reads all of x).
// Kernel 2 is the fused softmax below, over t. Bytes: 2*E*es + 2*E*es.
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_scale_mask(const T *__restrict__ x, T *__restrict__ t, int N, float scale)
{
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const int keep = (int)(row % N) + 1;
	const size_t base = (size_t)row * N - off;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(x + base, k, off, N, 0.f), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			v[e] = k * W - off + e < keep ? v[e] * scale : -INFINITY;
		store_slot<T>(t + base, k, off, N, v);
	}
}

// softmax_bwd/unfused, kernel 1: s[row] = sum(dy * y). Reads 2*E*es.
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_row_dot(const T *__restrict__ y, const T *__restrict__ dy,
	  float *__restrict__ sdot, int N)
{
	__shared__ float red[UF_WARPS + 1];
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const size_t base = (size_t)row * N - off;
	float s = 0;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float a[W], b[W];
		vec<T>::unpack(load_slot<T, false>(y + base, k, off, N, 0.f), a);
		vec<T>::unpack(load_slot<T, false>(dy + base, k, off, N, 0.f), b);
#pragma unroll
		for (int e = 0; e < W; e++)
			s = fmaf(a[e], b[e], s);
	}
	s = block_reduce<UF_WARPS, false>(s, red);
	if (threadIdx.x == 0)
		sdot[row] = s;
}

// softmax_bwd/unfused, kernel 2: dx = y * (dy - s[row]). Reads 2*E*es,
// writes E*es: 5*E*es in all against the fused kernel's 3*E*es.
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_bwd_elem(const T *__restrict__ y, const T *__restrict__ dy,
	   const float *__restrict__ sdot, T *__restrict__ dx, int N)
{
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const size_t base = (size_t)row * N - off;
	const float s = sdot[row];

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float a[W], b[W];
		vec<T>::unpack(load_slot<T, false>(y + base, k, off, N, 0.f), a);
		vec<T>::unpack(load_slot<T, false>(dy + base, k, off, N, 0.f), b);
#pragma unroll
		for (int e = 0; e < W; e++)
			a[e] = a[e] * (b[e] - s);
		store_slot<T>(dx + base, k, off, N, a);
	}
}

// ---------------------------------------------------------------------------
// Kernels, fused, rows held in registers (N up to 8192 fp32, 16384 bf16).
//
// What changes over the unfused chain: one kernel reads each row once into
// registers (VPT 16-byte slots per thread, all loads issued before the first
// use), reduces the max and the sum there (warp shuffles, and a few floats of
// shared memory when WPR warps share a row), and writes y once: 2*E*es, the
// minimum. WPR warps per row are chosen so that each thread holds at most 4
// slots (16 fp32 or 32 bf16 values as floats; exp(v - max) overwrites them in
// place, so no exp is computed twice); rows narrower than a warp's 4 slots
// pack 128 / (32*WPR) rows per block. MASKED applies the scale and the causal
// rule, reading only the kept columns (masked ones never leave DRAM) and
// writing zeros for the others.
// Expected at 16384 x 4096: 537 MB fp32 -> ~179 us at 3.0 TB/s, 268 MB bf16
// -> ~89 us. Measured on an H100 (copy 2.99 TB/s): 185.5 us fp32 (2.89 TB/s,
// 97% of copy), 95.0 us bf16 (2.83 TB/s); ncu: 268.7 MB read, 246 MB
// written. Shapes tried there (FUSEPROF_SOFTMAX_REG), fp32: 4x8 184.9 us,
// 8x4 185.5 (the pick), 16x2 199, 32x1 251; bf16: 2x8 96.0, 4x4 95.0 (the
// pick), 8x2 95.9, 16x1 112: fewer, fuller threads per row win until a row's
// registers crowd out rows in flight. At N=1024: 49.7 us fp32, 27.0 us bf16.
// The masked form at 16384 x 4096 reads about half the row: 143.7 us fp32.

template <typename T, int WPR, int VPT, bool MASKED>
__global__ void __launch_bounds__(WPR * 32 < 128 ? 128 : WPR * 32)
softmax_fused_reg(const T *__restrict__ x, T *__restrict__ y, long M, int N,
		  float scale)
{
	constexpr int W = vec<T>::W, TPR = WPR * 32;
	constexpr int THREADS = TPR < 128 ? 128 : TPR, ROWS = THREADS / TPR;
	__shared__ float red[2][ROWS][WPR];
	const int rib = threadIdx.x / TPR, t = threadIdx.x % TPR;
	const long row = (long)blockIdx.x * ROWS + rib;
	const bool live = row < M;  // a dead row still joins the barriers
	const size_t start = live ? (size_t)row * N : 0;
	const int off = (int)(start % W), nst = live ? N : 0;
	const int nld = !live ? 0 : MASKED ? (int)(row % N) + 1 : N;
	const size_t base = start - off;
	uint4 raw[VPT];
	float v[VPT][W], m = -INFINITY, s = 0;

#pragma unroll
	for (int i = 0; i < VPT; i++)
		raw[i] = load_slot<T, true>(x + base, i * TPR + t, off, nld, -INFINITY);
#pragma unroll
	for (int i = 0; i < VPT; i++) {
		vec<T>::unpack(raw[i], v[i]);
#pragma unroll
		for (int e = 0; e < W; e++) {
			if (MASKED)
				v[i][e] *= scale;
			m = fmaxf(m, v[i][e]);
		}
	}
	m = group_reduce<WPR, true>(m, red[0][rib], t);
	const float mz = m == -INFINITY ? 0.f : m;
#pragma unroll
	for (int i = 0; i < VPT; i++)
#pragma unroll
		for (int e = 0; e < W; e++) {
			v[i][e] = exp2f((v[i][e] - mz) * LOG2E);
			s += v[i][e];
		}
	s = group_reduce<WPR, false>(s, red[1][rib], t);
	const float inv = s > 0 ? 1.f / s : 0.f;
#pragma unroll
	for (int i = 0; i < VPT; i++) {
#pragma unroll
		for (int e = 0; e < W; e++)
			v[i][e] *= inv;
		store_slot<T>(y + base, i * TPR + t, off, nst, v[i]);
	}
}

// softmax_bwd/fused, rows in registers: y and dy read once, the dot product
// reduced as above, dx written once: 3*E*es. Expected at 16384 x 4096:
// 805 MB fp32 -> ~268 us, 403 MB bf16 -> ~134 us; measured on an H100:
// 274.7 us fp32 (2.93 TB/s), 140.2 us bf16 (2.87 TB/s).
template <typename T, int WPR, int VPT>
__global__ void __launch_bounds__(WPR * 32 < 128 ? 128 : WPR * 32)
softmax_bwd_fused_reg(const T *__restrict__ y, const T *__restrict__ dy,
		      T *__restrict__ dx, long M, int N)
{
	constexpr int W = vec<T>::W, TPR = WPR * 32;
	constexpr int THREADS = TPR < 128 ? 128 : TPR, ROWS = THREADS / TPR;
	__shared__ float red[ROWS][WPR];
	const int rib = threadIdx.x / TPR, t = threadIdx.x % TPR;
	const long row = (long)blockIdx.x * ROWS + rib;
	const bool live = row < M;
	const size_t start = live ? (size_t)row * N : 0;
	const int off = (int)(start % W), n = live ? N : 0;
	const size_t base = start - off;
	uint4 ry[VPT], rd[VPT];
	float a[VPT][W], b[VPT][W], s = 0;

#pragma unroll
	for (int i = 0; i < VPT; i++) {
		ry[i] = load_slot<T, true>(y + base, i * TPR + t, off, n, 0.f);
		rd[i] = load_slot<T, true>(dy + base, i * TPR + t, off, n, 0.f);
	}
#pragma unroll
	for (int i = 0; i < VPT; i++) {
		vec<T>::unpack(ry[i], a[i]);
		vec<T>::unpack(rd[i], b[i]);
#pragma unroll
		for (int e = 0; e < W; e++)
			s = fmaf(a[i][e], b[i][e], s);
	}
	s = group_reduce<WPR, false>(s, red[rib], t);
#pragma unroll
	for (int i = 0; i < VPT; i++) {
#pragma unroll
		for (int e = 0; e < W; e++)
			a[i][e] = a[i][e] * (b[i][e] - s);
		store_slot<T>(dx + base, i * TPR + t, off, n, a[i]);
	}
}

// ---------------------------------------------------------------------------
// Kernels, fused, wide rows (a vocabulary row of 50257 and anything past the
// register kernels' reach).
//
// What changes over the register kernel: the row no longer fits in registers,
// so pass 1 streams it once with an online max and rescaled sum (4 slots in
// flight per thread) and keeps the raw slots in dynamic shared memory; pass 2
// reads them back from there and writes y. Each thread reads back only the
// slots it wrote itself, so the stash needs no barrier. DRAM bytes stay at
// 2*E*es; exps are computed twice (once per pass), which the MUFU pipe
// absorbs.
// First version: one block of 1024 threads per row. Measured on an H100 at
// 2048 x 50257: 547 us fp32 (1.5 TB/s), 234 us bf16, with the right DRAM
// bytes (ncu: 423 MB read for 412 MB of input): a 201 KB stash allows one
// block per SM, so each SM alternated a read-only and a write-only phase with
// nothing to overlap them.
// This version splits the row over a cluster of up to WIDE_CLUSTER blocks
// of 256 threads (Hopper thread block clusters): each block streams and
// stashes its part of the row (25 KB at 50257 fp32, so several rows share an
// SM and their phases overlap), the blocks merge their (max, sum) through
// distributed shared memory in rank order (so every block gets the identical
// result), and each writes its part. Measured on the H100 with 8 blocks per
// row: 337 us fp32 (2.45 TB/s; ncu: 411.8 MB read, exactly the input), but
// bf16 only
// 223 us, its eighths (786 slots, 3 per thread) too short to pay for a
// block's start and two cluster barriers. Cluster sizes compared on an H200
// (FUSEPROF_SOFTMAX_WIDE; copy 4.25 TB/s) at 2048 x 50257, us for 2, 4, 8
// blocks per row: forward fp32 285, 263, 288; bf16 142, 155, 209; backward
// fp32 458, 419, 416; bf16 211, 200, 233. The best keep about 50 KB of stash
// per block (3142 slots forward, 1571 of each input backward), so the cluster
// has the fewest blocks (1, 2, 4 or 8) that leave each at most
// WIDE_BLOCK_STASH bytes of stash. Rows whose part exceeds
// the shared memory a block may have (over ~460k fp32 elements) re-read the
// rest from global memory in pass 2.

#define WIDE_THREADS 256
#define WIDE_WARPS (WIDE_THREADS / 32)
#define WIDE_UNROLL 4
#define WIDE_CLUSTER 8        // most blocks per row (the portable cluster limit)
#define WIDE_BLOCK_STASH 51200 // most stash bytes per block before the cluster grows

template <typename T, bool MASKED>
__global__ void __launch_bounds__(WIDE_THREADS)
softmax_fused_wide(const T *__restrict__ x, T *__restrict__ y, int N,
		   float scale, int chunk, int stash_slots)
{
	extern __shared__ uint4 stash[];
	__shared__ float red_m[WIDE_WARPS], red_s[WIDE_WARPS], fin[2];
	constexpr int W = vec<T>::W, STEP = WIDE_THREADS * WIDE_UNROLL;
	cg::cluster_group cl = cg::this_cluster();
	const int C = (int)cl.num_blocks();
	const long row = blockIdx.x / C;
	const int rank = (int)cl.block_rank();
	const size_t start = (size_t)row * N;
	const int off = (int)(start % W), t = threadIdx.x;
	const int lane = t & 31, warp = t >> 5;
	const int nld = MASKED ? (int)(row % N) + 1 : N;
	const int sld = row_slots<T>(off, nld), sst = row_slots<T>(off, N);
	const int lo = rank * chunk, hld = min(sld, lo + chunk), hst = min(sst, lo + chunk);
	const size_t base = start - off;
	const uint4 ninf = fill_raw<T>(-INFINITY);
	float m = -INFINITY, s = 0;

	for (int k0 = lo + t; k0 < hld; k0 += STEP) {
		uint4 raw[WIDE_UNROLL];
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			raw[u] = k < hld ? load_slot<T, false>(x + base, k, off, nld, -INFINITY)
					 : ninf;
		}
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			float v[W], vm = -INFINITY;

			if (k < hld && k - lo < stash_slots)
				stash[k - lo] = raw[u];
			vec<T>::unpack(raw[u], v);
#pragma unroll
			for (int e = 0; e < W; e++) {
				if (MASKED)
					v[e] *= scale;
				vm = fmaxf(vm, v[e]);
			}
			const float nm = fmaxf(m, vm);
			if (nm != -INFINITY) {
				s *= exp2f((m - nm) * LOG2E);
#pragma unroll
				for (int e = 0; e < W; e++)
					s += exp2f((v[e] - nm) * LOG2E);
				m = nm;
			}
		}
	}
#pragma unroll
	for (int o = 16; o; o >>= 1) {
		const float m2 = __shfl_xor_sync(FULL_MASK, m, o);
		const float s2 = __shfl_xor_sync(FULL_MASK, s, o);
		ms_merge(m, s, m2, s2);
	}
	if (lane == 0) {
		red_m[warp] = m;
		red_s[warp] = s;
	}
	__syncthreads();
	if (warp == 0) {
		m = lane < WIDE_WARPS ? red_m[lane] : -INFINITY;
		s = lane < WIDE_WARPS ? red_s[lane] : 0.f;
#pragma unroll
		for (int o = 16; o; o >>= 1) {
			const float m2 = __shfl_xor_sync(FULL_MASK, m, o);
			const float s2 = __shfl_xor_sync(FULL_MASK, s, o);
			ms_merge(m, s, m2, s2);
		}
		if (lane == 0) {
			fin[0] = m;
			fin[1] = s;
		}
	}
	// Every block of the cluster merges all blocks' partials in rank
	// order; the second barrier keeps each block's fin alive until all
	// have read it.
	cl.sync();
	m = -INFINITY;
	s = 0;
	for (int r = 0; r < C; r++) {
		const float *f = cl.map_shared_rank(fin, r);
		ms_merge(m, s, f[0], f[1]);
	}
	cl.sync();
	const float mz = m == -INFINITY ? 0.f : m, inv = s > 0 ? 1.f / s : 0.f;

	for (int k0 = lo + t; k0 < hst; k0 += STEP) {
		uint4 raw[WIDE_UNROLL];
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			raw[u] = k >= hld ? ninf : k - lo < stash_slots ? stash[k - lo]
				: load_slot<T, false>(x + base, k, off, nld, -INFINITY);
		}
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			float v[W];

			if (k >= hst)
				break;
			vec<T>::unpack(raw[u], v);
#pragma unroll
			for (int e = 0; e < W; e++)
				v[e] = exp2f(((MASKED ? v[e] * scale : v[e]) - mz) * LOG2E) * inv;
			store_slot<T>(y + base, k, off, N, v);
		}
	}
}

// softmax_bwd/fused for wide rows, the same cluster split: pass 1 forms each
// block's part of sum(dy * y) and stashes both rows' slots (half the stash
// each), the cluster adds the parts in rank order, pass 2 writes dx.
template <typename T>
__global__ void __launch_bounds__(WIDE_THREADS)
softmax_bwd_fused_wide(const T *__restrict__ y, const T *__restrict__ dy,
		       T *__restrict__ dx, int N, int chunk, int stash_slots)
{
	extern __shared__ uint4 stash[];  // [0, stash_slots): y, then dy
	__shared__ float red[WIDE_WARPS + 1];
	constexpr int W = vec<T>::W, STEP = WIDE_THREADS * WIDE_UNROLL;
	cg::cluster_group cl = cg::this_cluster();
	const int C = (int)cl.num_blocks();
	const long row = blockIdx.x / C;
	const int rank = (int)cl.block_rank();
	const size_t start = (size_t)row * N;
	const int off = (int)(start % W), t = threadIdx.x;
	const int lo = rank * chunk, hi = min(row_slots<T>(off, N), lo + chunk);
	const size_t base = start - off;
	float s = 0;

	for (int k0 = lo + t; k0 < hi; k0 += STEP) {
		uint4 ry[WIDE_UNROLL], rd[WIDE_UNROLL];
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			ry[u] = k < hi ? load_slot<T, false>(y + base, k, off, N, 0.f) : make_uint4(0, 0, 0, 0);
			rd[u] = k < hi ? load_slot<T, false>(dy + base, k, off, N, 0.f) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			float a[W], b[W];

			if (k < hi && k - lo < stash_slots) {
				stash[k - lo] = ry[u];
				stash[stash_slots + k - lo] = rd[u];
			}
			vec<T>::unpack(ry[u], a);
			vec<T>::unpack(rd[u], b);
#pragma unroll
			for (int e = 0; e < W; e++)
				s = fmaf(a[e], b[e], s);
		}
	}
	block_reduce<WIDE_WARPS, false>(s, red);  // this block's part in red[WIDE_WARPS]
	cl.sync();
	s = 0;
	for (int r = 0; r < C; r++)
		s += *cl.map_shared_rank(&red[WIDE_WARPS], r);
	cl.sync();
	for (int k0 = lo + t; k0 < hi; k0 += STEP) {
		uint4 ry[WIDE_UNROLL], rd[WIDE_UNROLL];
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;

			if (k >= hi) {
				ry[u] = rd[u] = make_uint4(0, 0, 0, 0);
			} else if (k - lo < stash_slots) {
				ry[u] = stash[k - lo];
				rd[u] = stash[stash_slots + k - lo];
			} else {
				ry[u] = load_slot<T, false>(y + base, k, off, N, 0.f);
				rd[u] = load_slot<T, false>(dy + base, k, off, N, 0.f);
			}
		}
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			float a[W], b[W];

			if (k >= hi)
				break;
			vec<T>::unpack(ry[u], a);
			vec<T>::unpack(rd[u], b);
#pragma unroll
			for (int e = 0; e < W; e++)
				a[e] = a[e] * (b[e] - s);
			store_slot<T>(dx + base, k, off, N, a);
		}
	}
}

// ---------------------------------------------------------------------------
// Launchers

enum sm_kind { SM_FWD, SM_MASKED, SM_BWD };

// An instance (struct fp_op is opaque to the run loop; this is its layout).
struct sm_op {
	enum sm_kind kind;
	enum fp_dtype dt;
	int variant;  // 0: unfused*, 1: fused, for every kind
	long M, N;
	int nsets;
	size_t set_bytes;  // one M x N tensor, padded to 256 bytes
	char *in0;         // nsets sets: x (forward) or y (backward)
	char *in1;         // nsets sets: dy (backward), else NULL
	void *out;         // y or dx
	void *tmp;         // e (unfused4) or masked scores t (masked unfused)
	float *rowa, *rowb;  // per-row max / sum (unfused4), sum(dy*y) (bwd)
	int wpr, vpt;      // register kernel shape; wpr == 0: wide kernel
	// Wide kernels, forward (also drawing backward's timing inputs) and
	// backward: blocks per row (a cluster), slots of a row per block, and
	// the slots each block stashes.
	int cluster_fwd, chunk_fwd, stash_fwd;
	int cluster_bwd, chunk_bwd, stash_bwd;
};

// Most 16-byte slots one row of N elements can span (a row starting mid-slot
// spans one more than an aligned one).
static long max_row_slots(long N, int W)
{
	long g = W, b = N;  // row starts fall on multiples of gcd(N, W)

	while (b) {
		long t = g % b;
		g = b;
		b = t;
	}
	return (N + (W - g) + W - 1) / W;
}

// Register kernel shape for rows of N: fewest warps per row (1..16) such that
// each thread holds at most 4 slots. -1 when the row needs the wide kernel.
static int pick_reg(long N, enum fp_dtype dt, int *wpr, int *vpt)
{
	long S = max_row_slots(N, dt == FP_BF16 ? 8 : 4);

	for (int w = 1; w <= 16; w *= 2) {
		if (S <= (long)w * 32 * 4) {
			*wpr = w;
			*vpt = w > 1 || S > 64 ? 4 : S > 32 ? 2 : 1;
			return 0;
		}
	}
	return -1;
}

// Register kernel shapes compiled, as (warps per row, slots per thread):
// pick_reg's choices plus the alternatives FUSEPROF_SOFTMAX_REG=WxV can force
// when tuning on a GPU machine (see sm_create).
#define SM_REG_SHAPES(X) X(1, 1) X(1, 2) X(1, 4) X(1, 8) X(2, 4) X(2, 8) \
	X(4, 2) X(4, 4) X(4, 8) X(8, 2) X(8, 4) X(16, 1) X(16, 2) X(16, 4) \
	X(32, 1) X(32, 2)

static int reg_shape_compiled(int wpr, int vpt)
{
#define IS_SHAPE(W_, V_) if (wpr == W_ && vpt == V_) return 1;
	SM_REG_SHAPES(IS_SHAPE)
#undef IS_SHAPE
	return 0;
}

// Blocks per row for the wide kernels, rows of S slots of `arrays` inputs
// (1 forward, 2 backward): the fewest of 1, 2, 4, 8 that leave each block at
// most WIDE_BLOCK_STASH bytes to stash.
static int wide_cluster(long S, int arrays)
{
	int c = 1;

	while (c < WIDE_CLUSTER && (S + c - 1) / c * 16 * arrays > WIDE_BLOCK_STASH)
		c *= 2;
	return c;
}

static unsigned blocks_for(long M, int wpr)
{
	int rows = wpr >= 4 ? 1 : 4 / wpr;

	return (unsigned)((M + rows - 1) / rows);
}

// A launch of C blocks per row, clustered; cfg points to attr.
static void wide_config(cudaLaunchConfig_t *cfg, cudaLaunchAttribute *attr,
			long M, int C, size_t smem, cudaStream_t st)
{
	cluster_config(cfg, attr, (unsigned)C, (unsigned)(M * C), WIDE_THREADS, smem, st);
}

template <typename T, bool MASKED>
static int launch_fused_fwd(const struct sm_op *op, const T *x, T *y,
			    float scale, cudaStream_t st)
{
	const long M = op->M;
	const int N = (int)op->N;

	if (!op->wpr) {
		cudaLaunchConfig_t cfg;
		cudaLaunchAttribute attr;

		wide_config(&cfg, &attr, M, op->cluster_fwd, (size_t)op->stash_fwd * 16, st);

		return CUDA_CHECK(cudaLaunchKernelEx(&cfg, softmax_fused_wide<T, MASKED>,
						     x, y, N, scale, op->chunk_fwd,
						     op->stash_fwd));
	}
	const unsigned g = blocks_for(M, op->wpr);
	const int thr = op->wpr * 32 < 128 ? 128 : op->wpr * 32;
#define FWD_CASE(W_, V_) \
	if (op->wpr == W_ && op->vpt == V_) \
		softmax_fused_reg<T, W_, V_, MASKED><<<g, thr, 0, st>>>(x, y, M, N, scale); else
	SM_REG_SHAPES(FWD_CASE)
		return error("softmax: no register kernel for %d warps x %d slots",
			     op->wpr, op->vpt);
#undef FWD_CASE
	return CUDA_CHECK_LAUNCH("softmax_fused_reg");
}

template <typename T>
static int launch_fused_bwd(const struct sm_op *op, const T *y, const T *dy,
			    T *dx, cudaStream_t st)
{
	const long M = op->M;
	const int N = (int)op->N;

	if (!op->wpr) {
		cudaLaunchConfig_t cfg;
		cudaLaunchAttribute attr;

		wide_config(&cfg, &attr, M, op->cluster_bwd, (size_t)op->stash_bwd * 32, st);

		return CUDA_CHECK(cudaLaunchKernelEx(&cfg, softmax_bwd_fused_wide<T>,
						     y, dy, dx, N, op->chunk_bwd,
						     op->stash_bwd));
	}
	const unsigned g = blocks_for(M, op->wpr);
	const int thr = op->wpr * 32 < 128 ? 128 : op->wpr * 32;
#define BWD_CASE(W_, V_) \
	if (op->wpr == W_ && op->vpt == V_) \
		softmax_bwd_fused_reg<T, W_, V_><<<g, thr, 0, st>>>(y, dy, dx, M, N); else
	SM_REG_SHAPES(BWD_CASE)
		return error("softmax_bwd: no register kernel for %d warps x %d slots",
			     op->wpr, op->vpt);
#undef BWD_CASE
	return CUDA_CHECK_LAUNCH("softmax_bwd_fused_reg");
}

template <typename T>
static int launch_t(const struct sm_op *op, const void *in0, const void *in1,
		    cudaStream_t st)
{
	const T *a = (const T *)in0, *b = (const T *)in1;
	T *out = (T *)op->out, *tmp = (T *)op->tmp;
	const unsigned M = (unsigned)op->M;
	const int N = (int)op->N;

	switch (op->kind) {
	case SM_FWD:
		if (op->variant == 1)
			return launch_fused_fwd<T, false>(op, a, out, 1.f, st);
		k_row_max<T><<<M, UF_THREADS, 0, st>>>(a, op->rowa, N);
		if (CUDA_CHECK_LAUNCH("k_row_max"))
			return -1;
		k_exp_sub<T><<<M, UF_THREADS, 0, st>>>(a, op->rowa, tmp, N);
		if (CUDA_CHECK_LAUNCH("k_exp_sub"))
			return -1;
		k_row_sum<T><<<M, UF_THREADS, 0, st>>>(tmp, op->rowb, N);
		if (CUDA_CHECK_LAUNCH("k_row_sum"))
			return -1;
		k_div<T><<<M, UF_THREADS, 0, st>>>(tmp, op->rowb, out, N);
		return CUDA_CHECK_LAUNCH("k_div");
	case SM_MASKED:
		if (op->variant == 1)
			return launch_fused_fwd<T, true>(op, a, out,
							 (float)SOFTMAX_MASKED_SCALE, st);
		k_scale_mask<T><<<M, UF_THREADS, 0, st>>>(a, tmp, N,
							  (float)SOFTMAX_MASKED_SCALE);
		if (CUDA_CHECK_LAUNCH("k_scale_mask"))
			return -1;
		return launch_fused_fwd<T, false>(op, tmp, out, 1.f, st);
	case SM_BWD:
		if (op->variant == 1)
			return launch_fused_bwd<T>(op, a, b, out, st);
		k_row_dot<T><<<M, UF_THREADS, 0, st>>>(a, b, op->rowa, N);
		if (CUDA_CHECK_LAUNCH("k_row_dot"))
			return -1;
		k_bwd_elem<T><<<M, UF_THREADS, 0, st>>>(a, b, op->rowa, out, N);
		return CUDA_CHECK_LAUNCH("k_bwd_elem");
	}
	return error("softmax: unknown workload kind %d", (int)op->kind);
}

static int sm_launch(struct fp_op *fop, int set, cudaStream_t st)
{
	const struct sm_op *op = (const struct sm_op *)fop;
	const void *in0 = op->in0 + (size_t)set * op->set_bytes;
	const void *in1 = op->in1 ? op->in1 + (size_t)set * op->set_bytes : NULL;

	if (set < 0 || set >= op->nsets)
		return error("softmax: input set %d out of range [0, %d)", set,
			     op->nsets);
	if (op->dt == FP_BF16)
		return launch_t<__nv_bfloat16>(op, in0, in1, st);
	return launch_t<float>(op, in0, in1, st);
}

// Let the wide kernels take as much shared memory as a block may have, once
// per process and kernel; returns that amount in bytes, or -1.
static long wide_smem_setup(void)
{
	static long avail = -2;
	int dev, optin;

	if (avail != -2)
		return avail;
	if (CUDA_CHECK(cudaGetDevice(&dev)) ||
	    CUDA_CHECK(cudaDeviceGetAttribute(&optin,
			cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)))
		return -1;
	// Leave room for the kernels' static shared memory (< 300 bytes).
	avail = ((long)optin - 1024) & ~15L;
#define SET_SMEM(...) \
	if (CUDA_CHECK(cudaFuncSetAttribute(__VA_ARGS__, \
			cudaFuncAttributeMaxDynamicSharedMemorySize, (int)avail))) \
		return avail = -1;
	SET_SMEM(softmax_fused_wide<float, false>)
	SET_SMEM(softmax_fused_wide<float, true>)
	SET_SMEM(softmax_fused_wide<__nv_bfloat16, false>)
	SET_SMEM(softmax_fused_wide<__nv_bfloat16, true>)
	SET_SMEM(softmax_bwd_fused_wide<float>)
	SET_SMEM(softmax_bwd_fused_wide<__nv_bfloat16>)
#undef SET_SMEM
	return avail;
}

// ---------------------------------------------------------------------------
// The workload contract

#define SM_MAX_M 2147483647L  // one block per row: the grid's x limit
#define SM_MAX_N (1L << 30)   // in-row indices are 32-bit
#define SM_TOL_FP32 1e-5      // forward and backward alike
#define SM_TOL_BF16 1e-2
// Shared memory a block may have on the devices fuseprof targets (H100,
// H200: 227 KB), for model() which must not touch the GPU.
#define SM_ASSUMED_STASH_BYTES (232448L - 1024)

static int sm_validate(const struct fp_shape *s, enum fp_dtype dt, char *why,
		       size_t n)
{
	long M = s->v[0], N = s->v[1];
	int wpr, vpt;

	if (dt != FP_F32 && dt != FP_BF16)
		snprintf(why, n, "dtype %d is not supported (fp32, bf16)", (int)dt);
	else if (M < 1)
		snprintf(why, n, "M=%ld: there must be at least 1 row", M);
	else if (N < 1)
		snprintf(why, n, "N=%ld: rows must be at least 1 element wide", N);
	else if (M > SM_MAX_M)
		snprintf(why, n, "M=%ld: at most %ld rows (one thread block per row)",
			 M, SM_MAX_M);
	else if (N > SM_MAX_N)
		snprintf(why, n, "N=%ld: rows are at most %ld elements wide (32-bit in-row indexing)",
			 N, SM_MAX_N);
	else if (pick_reg(N, dt, &wpr, &vpt) && M > SM_MAX_M / WIDE_CLUSTER)
		snprintf(why, n, "M=%ld: rows of N=%ld run as clusters of up to %d blocks, so at most %ld rows",
			 M, N, WIDE_CLUSTER, SM_MAX_M / WIDE_CLUSTER);
	else
		return 0;
	return -1;
}

static size_t dev_bytes(enum sm_kind kind, const struct fp_shape *s,
			enum fp_dtype dt, int variant, int nsets)
{
	size_t M = (size_t)s->v[0], set = dev_pad(M * (size_t)s->v[1] * fp_dtype_size(dt));
	size_t rowv = dev_pad(M * sizeof(float));

	switch (kind) {
	case SM_FWD:
		return (size_t)nsets * set + set + (variant == 0 ? set + 2 * rowv : 0);
	case SM_MASKED:
		return (size_t)nsets * set + set + (variant == 0 ? set : 0);
	default:
		return 2 * (size_t)nsets * set + set + (variant == 0 ? rowv : 0);
	}
}

static size_t fwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	return dev_bytes(SM_FWD, s, dt, variant, nsets);
}

static size_t masked_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
				  int variant, int nsets)
{
	return dev_bytes(SM_MASKED, s, dt, variant, nsets);
}

static size_t bwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	return dev_bytes(SM_BWD, s, dt, variant, nsets);
}

// DRAM bytes the wide kernel re-reads per row beyond its blocks' stashes (arrays: 1
// forward, 2 backward), assuming the re-read misses L2.
static double wide_reread(long N, enum fp_dtype dt, int arrays)
{
	int wpr, vpt, W = dt == FP_BF16 ? 8 : 4;
	long S = max_row_slots(N, W), cap = SM_ASSUMED_STASH_BYTES / (16L * arrays);
	int C = wide_cluster(S, arrays);
	long chunk = (S + C - 1) / C;

	if (pick_reg(N, dt, &wpr, &vpt) == 0 || chunk <= cap)
		return 0;
	return (double)(chunk - cap) * C * 16 * arrays;
}

static void fwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], N = (double)s->v[1], E = M * N;
	double es = (double)fp_dtype_size(dt);

	m->flops = 5 * E;
	m->min_bytes = 2 * E * es;
	if (variant == 0)  // max: E; exp: 2E; sum: E; div: 2E; 4 row vectors
		m->variant_bytes = 6 * E * es + 16 * M;
	else
		m->variant_bytes = m->min_bytes + M * wide_reread(s->v[1], dt, 1);
}

static void masked_model(const struct fp_shape *s, enum fp_dtype dt,
			 int variant, struct fp_model *m)
{
	double M = (double)s->v[0], N = (double)s->v[1], E = M * N;
	double es = (double)fp_dtype_size(dt), kept = softmax_causal_kept(s->v[0], s->v[1]);

	m->flops = 6 * kept;
	m->min_bytes = (kept + E) * es;
	if (variant == 0)  // scale+mask: read E, write E; softmax of t: 2E
		m->variant_bytes = 4 * E * es + M * wide_reread(s->v[1], dt, 1);
	else  // the wide kernel reads kept columns only; bound it by the row
		m->variant_bytes = m->min_bytes + M * wide_reread(s->v[1], dt, 1);
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], N = (double)s->v[1], E = M * N;
	double es = (double)fp_dtype_size(dt);

	m->flops = 4 * E;
	m->min_bytes = 3 * E * es;
	if (variant == 0)  // dot: read 2E, write M; elem: read 2E + M, write E
		m->variant_bytes = 5 * E * es + 8 * M;
	else
		m->variant_bytes = m->min_bytes + M * wide_reread(s->v[1], dt, 2);
}

static void sm_destroy(struct fp_op *fop)
{
	struct sm_op *op = (struct sm_op *)fop;

	if (!op)
		return;
	cudaFree(op->in0);
	cudaFree(op->in1);
	cudaFree(op->out);
	cudaFree(op->tmp);
	cudaFree(op->rowa);
	cudaFree(op->rowb);
	free(op);
}

static int sm_create(enum sm_kind kind, struct fp_op **out,
		     const struct fp_shape *s, enum fp_dtype dt, int variant,
		     int nsets, unsigned long long seed)
{
	struct sm_op *op = (struct sm_op *)xcalloc(1, sizeof *op);
	char why[160];
	size_t E, rowv;
	long avail;

	*out = NULL;
	if (sm_validate(s, dt, why, sizeof why)) {
		free(op);
		return error("softmax: %s", why);
	}
	if (nsets < 1 || variant < 0 || variant > 1) {
		free(op);
		return error("softmax: bad instance (variant %d, %d input sets)",
			     variant, nsets);
	}
	op->kind = kind;
	op->dt = dt;
	op->variant = variant;
	op->M = s->v[0];
	op->N = s->v[1];
	op->nsets = nsets;
	E = (size_t)op->M * (size_t)op->N;
	op->set_bytes = dev_pad(E * fp_dtype_size(dt));
	rowv = dev_pad((size_t)op->M * sizeof(float));
	if (pick_reg(op->N, dt, &op->wpr, &op->vpt)) {
		long S = max_row_slots(op->N, dt == FP_BF16 ? 8 : 4);

		op->wpr = op->vpt = 0;
		if ((avail = wide_smem_setup()) < 0)
			goto out_free;
		const char *force = getenv("FUSEPROF_SOFTMAX_WIDE");  // tuning
		int c = force ? atoi(force) : 0;

		if (c != 1 && c != 2 && c != 4 && c != 8)
			c = 0;
		op->cluster_fwd = c ? c : wide_cluster(S, 1);
		op->cluster_bwd = c ? c : wide_cluster(S, 2);
		op->chunk_fwd = (int)((S + op->cluster_fwd - 1) / op->cluster_fwd);
		op->chunk_bwd = (int)((S + op->cluster_bwd - 1) / op->cluster_bwd);
		op->stash_fwd = (int)(op->chunk_fwd < avail / 16 ? op->chunk_fwd : avail / 16);
		op->stash_bwd = (int)(op->chunk_bwd < avail / 32 ? op->chunk_bwd : avail / 32);
	} else {
		const char *force = getenv("FUSEPROF_SOFTMAX_REG");
		int w, v;

		if (force && sscanf(force, "%dx%d", &w, &v) == 2 &&
		    reg_shape_compiled(w, v) &&
		    (long)w * 32 * v >= max_row_slots(op->N, dt == FP_BF16 ? 8 : 4)) {
			op->wpr = w;
			op->vpt = v;
		}
	}
	if (dev_alloc(&op->in0, (size_t)nsets * op->set_bytes) ||
	    (kind == SM_BWD && dev_alloc(&op->in1, (size_t)nsets * op->set_bytes)) ||
	    dev_alloc(&op->out, op->set_bytes) ||
	    (variant == 0 && kind != SM_BWD && dev_alloc(&op->tmp, op->set_bytes)) ||
	    (variant == 0 && kind != SM_MASKED && dev_alloc(&op->rowa, rowv)) ||
	    (variant == 0 && kind == SM_FWD && dev_alloc(&op->rowb, rowv)))
		goto out_free;

	// Profile-0 inputs for timing, drawn on the device. Backward gets a
	// real softmax output as y: the forward kernel over normal logits
	// (drawn into the dx buffer) writes it.
	for (int i = 0; i < nsets; i++) {
		char *in0 = op->in0 + (size_t)i * op->set_bytes;
		uint64_t sd = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);

		if (kind != SM_BWD) {
			if (dev_fill_normal(in0, dt, E, sd, 0.f,
					    kind == SM_MASKED ? 8.f : 1.f, 0))
				goto out_free;
			continue;
		}
		if (dev_fill_normal(op->out, dt, E, sd, 0.f, 1.f, 0) ||
		    (dt == FP_BF16
		     ? launch_fused_fwd<__nv_bfloat16, false>(op,
				(const __nv_bfloat16 *)op->out, (__nv_bfloat16 *)in0, 1.f, 0)
		     : launch_fused_fwd<float, false>(op, (const float *)op->out,
				(float *)in0, 1.f, 0)) ||
		    dev_fill_normal(op->in1 + (size_t)i * op->set_bytes, dt, E,
				    sd ^ 0xd1b54a32d192ed03ull, 0.f, 1.f, 0))
			goto out_free;
	}
	if (CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	*out = (struct fp_op *)op;
	return 0;

out_free:
	sm_destroy((struct fp_op *)op);
	return -1;
}

static int fwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed,
			  const struct fp_kopts *ko)
{
	return sm_create(SM_FWD, op, s, dt, variant, nsets, seed);
}

static int masked_create(struct fp_op **op, const struct fp_shape *s,
			 enum fp_dtype dt, int variant, int nsets,
			 unsigned long long seed,
			  const struct fp_kopts *ko)
{
	return sm_create(SM_MASKED, op, s, dt, variant, nsets, seed);
}

static int bwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed,
			  const struct fp_kopts *ko)
{
	return sm_create(SM_BWD, op, s, dt, variant, nsets, seed);
}

// One part of a check's reference rows (parallel_for): rows [r0, r1) of
// the inputs a (and b), compared with the GPU's got into cmp[part].
struct sm_ref_job {
	const struct sm_op *op;
	const double *a, *b, *got;
	struct fp_cmp *cmp;
};

static void sm_ref_rows(void *ctx, int part, long r0, long r1)
{
	const struct sm_ref_job *j = (const struct sm_ref_job *)ctx;
	const long N = j->op->N;
	double *ref = (double *)xmalloc((size_t)N * sizeof *ref);

	cmp_init(&j->cmp[part]);
	for (long row = r0; row < r1; row++) {
		size_t o = (size_t)row * N;

		if (j->op->kind == SM_BWD)
			bwd_ref_row(j->a + o, j->b + o, ref, N);
		else if (j->op->kind == SM_MASKED)
			fwd_ref_row(j->a + o, ref, N, softmax_causal_keep(row, N),
				    SOFTMAX_MASKED_SCALE);
		else
			fwd_ref_row(j->a + o, ref, N, N, 1.0);
		cmp_add(&j->cmp[part], j->got + o, ref, (size_t)N);
	}
	free(ref);
}

// One part of the backward check's inputs: rows [r0, r1) of a (logits on
// entry) become y = softmax(a), and of b the upstream gradient dy ~
// N(0, scale^2), each row from its own stream.
struct bwd_in_job {
	double *a, *b;
	long N;
	double scale;
	uint64_t seed;
};

static void bwd_in_rows(void *ctx, int part, long r0, long r1)
{
	const struct bwd_in_job *j = (const struct bwd_in_job *)ctx;
	const long N = j->N;
	struct fp_rng g;

	(void)part;
	for (long r = r0; r < r1; r++) {
		double *ar = j->a + r * N, *br = j->b + r * N;

		fwd_ref_row(ar, br, N, N, 1.0);
		memcpy(ar, br, (size_t)N * sizeof *ar);
		rng_seed_item(&g, j->seed, r);
		for (long k = 0; k < N; k++)
			br[k] = j->scale * rng_normal(&g);
	}
}

// Fresh host inputs from profile and seed into set 0, outputs (and the
// unfused intermediates) poisoned, one run, every row compared with the
// double reference computed on the very values the GPU saw.
static int sm_check(struct fp_op *fop, int profile, unsigned long long seed,
		    struct fp_check *r)
{
	struct sm_op *op = (struct sm_op *)fop;
	const long M = op->M, N = op->N;
	const size_t E = (size_t)M * (size_t)N, es = fp_dtype_size(op->dt);
	const enum sm_profile p = (enum sm_profile)profile;
	double *a = (double *)xmalloc(E * sizeof(double));
	double *b = NULL, *got = NULL;
	struct fp_cmp c;
	int rc = -1;

	if (profile < SM_NORMAL || profile > SM_DEADROWS) {
		error("softmax: no input profile %d", profile);
		goto out_free;
	}
	softmax_gen_logits(a, M, N, p, op->kind == SM_MASKED ? 8.0 : 1.0, seed);
	if (op->kind == SM_BWD) {
		// y = softmax(logits of the profile); dy ~ N(0, 1), 1e4 x that
		// for the large profile.
		struct bwd_in_job job = { NULL, NULL, N,
			p == SM_LARGE ? 1e4 : 1.0, seed ^ 0x5851f42d4c957f2dull };

		b = (double *)xmalloc(E * sizeof(double));
		job.a = a;
		job.b = b;
		parallel_for(M, parallel_min_rows(N), 64, bwd_in_rows, &job);
		host_round(b, E, op->dt);
		if (dev_upload(op->in1, op->dt, b, E))
			goto out_free;
	}
	host_round(a, E, op->dt);
	if (dev_upload(op->in0, op->dt, a, E) ||
	    dev_poison(op->out, E * es) ||
	    (op->tmp && dev_poison(op->tmp, E * es)) ||
	    (op->rowa && dev_poison(op->rowa, (size_t)M * sizeof(float))) ||
	    (op->rowb && dev_poison(op->rowb, (size_t)M * sizeof(float))) ||
	    sm_launch(fop, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	got = (double *)xmalloc(E * sizeof(double));
	if (dev_download(got, op->out, op->dt, E))
		goto out_free;

	check_begin(r, seed, op->dt == FP_BF16 ? SM_TOL_BF16 : SM_TOL_FP32);
	{
		// The references on every core, rows split into parts whose
		// comparisons merge in row order.
		const long min_rows = parallel_min_rows(N);
		struct sm_ref_job job = { op, a, b, got, NULL };
		const int np = parallel_parts(M, min_rows, 64);

		job.cmp = (struct fp_cmp *)xcalloc((size_t)np, sizeof *job.cmp);
		parallel_for(M, min_rows, 64, sm_ref_rows, &job);
		cmp_init(&c);
		for (int p = 0; p < np; p++)
			cmp_merge(&c, &job.cmp[p]);
		free(job.cmp);
	}
	check_output(r, op->kind == SM_BWD ? "dx" : "y", &c);
	rc = 0;
out_free:
	free(a);
	free(b);
	free(got);
	return rc;
}

static const struct fp_param sm_params[] = {
	{ "M", 16384, 1, SM_MAX_M, "rows" },
	{ "N", FP_REQUIRED, 1, SM_MAX_N, "row width (elements)" },
	{ NULL, 0, 0, 0, NULL },
};

// Index i is enum sm_profile i.
static const char *const sm_profiles[] = {
	"normal", "large", "neginf", "deadrows", NULL,
};

#define SM_TESTS "M=1,N=1;M=1,N=4097;M=3,N=1023;M=16384,N=768;M=4,N=50257;" \
	"M=7,N=3;M=5,N=8192;M=5,N=16384;M=3,N=131101;M=2,N=1000003"

static const struct fp_variant fwd_variants[] = {
	{ "unfused4", FP_UNFUSED,
	  "4 kernels: row max, exp(x - max), row sum, divide; e = exp(x - max) in DRAM" },
	{ "fused", FP_FUSED,
	  "1 kernel: row in registers (online max/sum and a shared-memory stash for wide rows)" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_softmax_fwd = {
	.name = "softmax_fwd",
	.summary = "y = softmax(x) over each row of an M x N matrix",
	.params = sm_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = sm_profiles,
	.suite = "M=16384,N=1024;M=16384,N=4096;M=2048,N=50257",
	.quick = "M=2048,N=1024;M=64,N=50257",
	.tests = SM_TESTS,
	.validate = sm_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.launch = sm_launch,
	.check = sm_check,
	.destroy = sm_destroy,
};

// The mask is a causal rule, not an M x N tensor: rows are blocks of N
// queries over N keys and query i = r mod N sees keys 0..i (the decoder
// attention that softmax over scores serves). A rule costs no bytes, so the
// fused kernel reads only the kept scores (about half) where a tensor mask
// would add a full extra input to every variant; the unfused form is the
// eager framework's masked_fill followed by softmax, which materialises the
// masked scores in DRAM. The scale is fixed at 1/sqrt(64).
static const struct fp_variant masked_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "2 kernels: t = x*scale with causal -inf fill (in DRAM), then the fused softmax of t" },
	{ "fused", FP_FUSED,
	  "1 kernel: scale, causal mask and softmax; masked scores are never read" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_softmax_masked_fwd = {
	.name = "softmax_masked_fwd",
	.summary = "y = softmax(x/8 + causal mask) over rows of M/N blocks of N x N scores",
	.params = sm_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = masked_variants,
	.profiles = sm_profiles,
	.suite = "M=16384,N=1024;M=16384,N=4096",
	.quick = "M=2048,N=1024",
	.tests = SM_TESTS,
	.validate = sm_validate,
	.device_bytes = masked_device_bytes,
	.model = masked_model,
	.create = masked_create,
	.launch = sm_launch,
	.check = sm_check,
	.destroy = sm_destroy,
};

static const struct fp_variant bwd_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "2 kernels: s = rowsum(dy*y) to DRAM, then dx = y*(dy - s)" },
	{ "fused", FP_FUSED,
	  "1 kernel: y and dy read once, row dot product on chip, dx written once" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_softmax_bwd = {
	.name = "softmax_bwd",
	.summary = "dx = y * (dy - sum(dy * y)) per row: the gradient of softmax",
	.params = sm_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = sm_profiles,
	.suite = "M=16384,N=1024;M=16384,N=4096;M=2048,N=50257",
	.quick = "M=2048,N=1024;M=64,N=50257",
	.tests = SM_TESTS,
	.validate = sm_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.launch = sm_launch,
	.check = sm_check,
	.destroy = sm_destroy,
};
