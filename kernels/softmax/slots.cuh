// slots.cuh - the device helpers of the softmax kernels: rows walked in
// 16-byte slots, dtype packing, block and row-group reductions, the online
// (max, sum) merge. Included by kernels/softmax/unfused.cu and fused.cu.
// CUDA C++ only.
//
// Conventions every softmax kernel shares:
// - A row is walked in 16-byte slots aligned to memory, not to the row: slot
//   k of a row covers the elements whose addresses fall in the k-th 16-byte
//   chunk at or below the row start. Only the first and last slot of a row
//   can be partial; they are read and written element by element, every other
//   slot with one 16-byte access. So any N (odd widths, N = 1) and any row
//   start (row r starts at r*N elements) run on the same code, and no byte
//   outside the row is touched. All buffers are 16-byte aligned (cudaMalloc
//   plus 512-byte padded input sets), so x, y, dy, dx rows share one layout.
// - exp(v - max) is computed as 2^((v - max) * log2(e)) by exp2_ftz
//   (device.cuh: the SFU's one instruction, results under 2^-126 flushed
//   to zero, where exp2f takes about four). The subtraction comes first:
//   with inputs around 1e4 it is exact (both operands within a factor of
//   two), where the fused form fmaf(v, log2e, -max*log2e) would lose ~1e-3
//   of the exponent to rounding.
// - A row whose entries are all -inf gives zeros (see softmax_fwd_ref).
#ifndef FP_SOFTMAX_SLOTS_CUH
#define FP_SOFTMAX_SLOTS_CUH

#include <math.h>
#include <stdint.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "device.cuh"

template <typename T> struct vec;

template <> struct vec<float> {
	static constexpr int W = 4;  // elements per 16-byte slot
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
	__device__ static void unpack(uint4 r, float *v) { unpack_bf16x8(r, v); }
	__device__ static uint4 pack(const float *v) { return pack_bf16x8(v); }
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
		v[e] = j >= 0 && j < n ? to_f(a[(size_t)k * W + e]) : fill;
	}
	return vec<T>::pack(v);  // exact: every v[e] came from a T or is fill
}

// Write the elements of slot k that lie in [0, n) of the row, streaming
// (evict-first: nothing reads the output back). That made the fused
// kernels faster (bench/RESULTS.md, "LayerNorm+GELU and softmax on an H100,
// measured by fuseprof", the streaming stores).
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
			a[(size_t)k * W + e] = from_f<T>(v[e]);
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
	s = s * exp2_ftz((m - mn) * LOG2E) + s2 * exp2_ftz((m2 - mn) * LOG2E);
	m = mn;
}

#endif
