// kernels.cuh - inside kernels/dropout/: the bias+dropout+residual
// workloads' device kernels, included by dropout.cu only (the launchers,
// the contract and the check live there). The mask is Philox 4x32-10 over
// the flattened element index (philox.h); what each variant writes and
// reads is in dropout.cu's header.
#ifndef FP_DROPOUT_KERNELS_CUH
#define FP_DROPOUT_KERNELS_CUH

#include <stdint.h>
#include <string.h>

#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "device.cuh"
#include "dropout/dropout.h"
#include "ewmask/ewmask.cuh"

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

// The keep bits of elements e .. e + V - 1 (e a multiple of 4): V / 4
// Philox draws.
template <int V>
__device__ __forceinline__ unsigned keep_bits(uint64_t seed, uint32_t t, uint64_t e)
{
	unsigned bits = 0;

#pragma unroll
	for (int g = 0; g < V / 4; g++) {
		struct philox4 w = dropout_words(seed, (e >> 2) + g);

#pragma unroll
		for (int k = 0; k < 4; k++)
			bits |= (unsigned)(w.v[k] >= t) << (4 * g + k);
	}
	return bits;
}

// What a fused kernel writes or reads of the mask: nothing (the backward
// redraws it from the seed), a bit an element (fused_mask) or a byte an
// element (fused_bytemask, as the unfused variant stores it).
enum { BDA_MASK_NONE, BDA_MASK_BITS, BDA_MASK_BYTES };

// The V mask bytes of a vector: 4 or 8 bytes, one aligned access.
template <int V>
using bda_mask_vec = typename std::conditional<V == 4, unsigned int, uint2>::type;

// The keep bits of the V bytes of a vector at element e (e a multiple of
// V: an aligned load), streaming.
template <int V>
__device__ __forceinline__ unsigned byte_bits(const uint8_t *bytes, uint64_t e)
{
	const bda_mask_vec<V> w = __ldcs((const bda_mask_vec<V> *)(bytes + e));
	uint8_t b[V];
	unsigned bits = 0;

	memcpy(b, &w, V);
#pragma unroll
	for (int k = 0; k < V; k++)
		bits |= (unsigned)(b[k] != 0) << k;
	return bits;
}

// The V bytes of keep bits at element e (e a multiple of V), streaming.
template <int V>
__device__ __forceinline__ void store_byte_bits(uint8_t *bytes, uint64_t e, unsigned bits)
{
	uint8_t b[V];
	bda_mask_vec<V> w;

#pragma unroll
	for (int k = 0; k < V; k++)
		b[k] = (bits >> k) & 1u;
	memcpy(&w, b, V);
	__stcs((bda_mask_vec<V> *)(bytes + e), w);
}

// The byte mask as the bulk backward reads it.
template <int V>
struct byte_mask {
	const uint8_t *bytes;

	__device__ __forceinline__ unsigned bits(uint64_t e) const
	{
		return byte_bits<V>(bytes, e);
	}
};

// The mask redrawn from the seed, as the bulk backward reads it.
template <int V>
struct regen_mask {
	uint64_t seed;
	uint32_t t;

	__device__ __forceinline__ unsigned bits(uint64_t e) const
	{
		return keep_bits<V>(seed, t, e);
	}
};

// Unfused, second kernel: d = dropout(h) and the byte mask, over the
// flattened M N elements (no bias, so no rows): 16-byte vectors, EW_UNROLL
// in flight a thread, the tail scalar.
template <typename T>
__global__ void __launch_bounds__(EW_THREADS)
dropout_bytes_kernel(const T *__restrict__ h, T *__restrict__ d,
		     uint8_t *__restrict__ mask, size_t n, uint64_t seed,
		     uint32_t t, float scale)
{
	constexpr int V = 16 / sizeof(T);
	using MaskT = bda_mask_vec<V>;
	const size_t nvec = n / V;
	const size_t stride = (size_t)gridDim.x * EW_THREADS * EW_UNROLL;

	for (size_t i0 = (size_t)blockIdx.x * EW_THREADS * EW_UNROLL + threadIdx.x;
	     i0 < nvec; i0 += stride) {
		float v[EW_UNROLL][V];

#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++)
			if (i0 + u * EW_THREADS < nvec)
				ld16<true>(h + (i0 + u * EW_THREADS) * V, v[u]);
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const size_t i = i0 + u * EW_THREADS;

			if (i >= nvec)
				continue;
			unsigned bits = keep_bits<V>(seed, t, (uint64_t)i * V);
			uint8_t b[V];

#pragma unroll
			for (int k = 0; k < V; k++) {
				b[k] = (bits >> k) & 1u;
				v[u][k] = b[k] ? v[u][k] * scale : 0.f;
			}
			st16<true>(d + i * V, v[u]);
			MaskT w;

			memcpy(&w, b, V);
			__stcs((MaskT *)(mask + i * V), w);
		}
	}
	const size_t e = nvec * V + (size_t)blockIdx.x * EW_THREADS + threadIdx.x;
	if (e < n && (size_t)blockIdx.x * EW_THREADS + threadIdx.x < (size_t)V) {
		const int keep = dropout_keep(seed, t, e);

		d[e] = from_f<T>(keep ? to_f(h[e]) * scale : 0.f);
		mask[e] = (uint8_t)keep;
	}
}

// Unfused, third kernel: y = d + residual, flattened.
template <typename T>
__global__ void __launch_bounds__(EW_THREADS)
add_kernel(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ y,
	   size_t n)
{
	constexpr int V = 16 / sizeof(T);
	const size_t nvec = n / V;
	const size_t stride = (size_t)gridDim.x * EW_THREADS * EW_UNROLL;

	for (size_t i0 = (size_t)blockIdx.x * EW_THREADS * EW_UNROLL + threadIdx.x;
	     i0 < nvec; i0 += stride) {
		float va[EW_UNROLL][V], vb[EW_UNROLL][V];

#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++)
			if (i0 + u * EW_THREADS < nvec) {
				ld16<true>(a + (i0 + u * EW_THREADS) * V, va[u]);
				ld16<true>(b + (i0 + u * EW_THREADS) * V, vb[u]);
			}
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++)
			if (i0 + u * EW_THREADS < nvec) {
#pragma unroll
				for (int k = 0; k < V; k++)
					va[u][k] += vb[u][k];
				st16<true>(y + (i0 + u * EW_THREADS) * V, va[u]);
			}
	}
	const size_t e = nvec * V + (size_t)blockIdx.x * EW_THREADS + threadIdx.x;
	if (e < n && (size_t)blockIdx.x * EW_THREADS + threadIdx.x < (size_t)V)
		y[e] = from_f<T>(to_f(a[e]) + to_f(b[e]));
}

// Unfused backward, first kernel: dx = dy mask scale from the byte mask,
// flattened (the column sums follow: ew_colpart_kernel, ew_colsum_kernel).
template <typename T>
__global__ void __launch_bounds__(EW_THREADS)
dropout_bytes_bwd_kernel(const T *__restrict__ dy, const uint8_t *__restrict__ mask,
			 T *__restrict__ dx, size_t n, float scale)
{
	constexpr int V = 16 / sizeof(T);
	using MaskT = bda_mask_vec<V>;
	const size_t nvec = n / V;
	const size_t stride = (size_t)gridDim.x * EW_THREADS * EW_UNROLL;

	for (size_t i0 = (size_t)blockIdx.x * EW_THREADS * EW_UNROLL + threadIdx.x;
	     i0 < nvec; i0 += stride) {
		float v[EW_UNROLL][V];
		uint8_t b[EW_UNROLL][V];

#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const size_t i = i0 + u * EW_THREADS;

			if (i >= nvec)
				continue;
			ld16<true>(dy + i * V, v[u]);
			const MaskT w = __ldcs((const MaskT *)(mask + i * V));

			memcpy(b[u], &w, V);
		}
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const size_t i = i0 + u * EW_THREADS;

			if (i >= nvec)
				continue;
#pragma unroll
			for (int k = 0; k < V; k++)
				v[u][k] = b[u][k] ? v[u][k] * scale : 0.f;
			st16<true>(dx + i * V, v[u]);
		}
	}
	const size_t e = nvec * V + (size_t)blockIdx.x * EW_THREADS + threadIdx.x;
	if (e < n && (size_t)blockIdx.x * EW_THREADS + threadIdx.x < (size_t)V)
		dx[e] = from_f<T>(mask[e] ? to_f(dy[e]) * scale : 0.f);
}

// The fused forward, rows under the ewmask plan: x and residual read, bias
// kept in registers, the mask drawn, y written once; with MASK the mask too
// (BDA_MASK_BITS: into words, the vector path needing N % 32 == 0 then,
// fwd_flat_kernel taking the rest; BDA_MASK_BYTES: into bytes, a byte an
// element as the unfused variant stores it). EW_UNROLL rows in flight a
// thread.
template <typename T, int V, bool VEC, int MASK>
__global__ void __launch_bounds__(EW_THREADS)
fwd_rows_kernel(const T *__restrict__ x, const T *__restrict__ bias,
		const T *__restrict__ res, T *__restrict__ y,
		uint32_t *__restrict__ words, uint8_t *__restrict__ bytes, long M,
		long N, uint64_t seed, uint32_t t, float scale)
{
	const long c0 = VEC ? ((long)blockIdx.x * blockDim.x + threadIdx.x) * V
			    : (long)blockIdx.x * blockDim.x * V + threadIdx.x;
	const long cs = VEC ? 1 : blockDim.x;
	// A block's EW_UNROLL bands of blockDim.y rows lie together (a thread's
	// rows rs apart), so the block streams one span of memory.
	const long r0 = (long)blockIdx.y * blockDim.y * EW_UNROLL + threadIdx.y;
	const long rs = blockDim.y;
	const long step = (long)gridDim.y * blockDim.y * EW_UNROLL;
	float b[V];

	if (VEC) {
		if (c0 < N)
			ld16<false>(bias + c0, b);
	} else {
#pragma unroll
		for (int k = 0; k < V; k++)
			b[k] = c0 + k * cs < N ? to_f(bias[c0 + k * cs]) : 0.f;
	}
	for (long i0 = r0; i0 < M; i0 += step) {
		float v[EW_UNROLL][V], r[EW_UNROLL][V];
		uint4 xr[EW_UNROLL], rr[EW_UNROLL];  // VEC: as loaded

#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const long i = i0 + u * rs;

			if (i >= M)
				continue;
			if (VEC) {
				if (c0 < N) {
					xr[u] = ew_ldraw<true>(x + i * N + c0);
					rr[u] = ew_ldraw<true>(res + i * N + c0);
				}
			} else {
#pragma unroll
				for (int k = 0; k < V; k++)
					if (c0 + k * cs < N) {
						v[u][k] = to_f(x[i * N + c0 + k * cs]);
						r[u][k] = to_f(res[i * N + c0 + k * cs]);
					}
			}
		}
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const long i = i0 + u * rs;

			if (i >= M)  // uniform over the warp: a warp is one thread row
				continue;
			if (VEC) {
				const uint64_t e = (uint64_t)i * N + c0;
				const unsigned bits = c0 < N ? keep_bits<V>(seed, t, e) : 0u;

				unpack16(xr[u], v[u], T());
				unpack16(rr[u], r[u], T());

#pragma unroll
				for (int k = 0; k < V; k++)
					v[u][k] = ((bits >> k) & 1u ? (v[u][k] + b[k]) * scale : 0.f) +
						  r[u][k];
				if (c0 < N)
					st16<true>(y + i * N + c0, v[u]);
				if (MASK == BDA_MASK_BITS)
					ew_store_bits<V>(words, e >> 5, bits, c0 < N);
				if (MASK == BDA_MASK_BYTES && c0 < N)
					store_byte_bits<V>(bytes, e, bits);
			} else {
#pragma unroll
				for (int k = 0; k < V; k++) {
					const long c = c0 + k * cs;

					if (c < N) {
						const int keep = dropout_keep(seed, t, (uint64_t)i * N + c);

						y[i * N + c] = from_f<T>(
							(keep ? (v[u][k] + b[k]) * scale : 0.f) + r[u][k]);
						if (MASK == BDA_MASK_BYTES)
							bytes[i * N + c] = (uint8_t)keep;
					}
				}
			}
		}
	}
}

// The fused forward with the bit mask at any N: a warp takes 32
// consecutive flattened elements at a time, __ballot_sync makes their word.
// Scalar accesses (coalesced), a division per element: the fallback of
// fused_mask where words straddle rows or rows are not 16-byte aligned.
template <typename T>
__global__ void __launch_bounds__(EW_THREADS)
fwd_flat_kernel(const T *__restrict__ x, const T *__restrict__ bias,
		const T *__restrict__ res, T *__restrict__ y,
		uint32_t *__restrict__ words, long M, long N, uint64_t seed,
		uint32_t t, float scale)
{
	const uint64_t n = (uint64_t)M * N, nw = (n + 31) / 32;
	const uint64_t warps = (uint64_t)gridDim.x * (EW_THREADS / 32);
	const int lane = threadIdx.x & 31;

	for (uint64_t w = (uint64_t)blockIdx.x * (EW_THREADS / 32) + threadIdx.x / 32;
	     w < nw; w += warps) {
		const uint64_t e = w * 32 + lane;
		int keep = 0;

		if (e < n) {
			const long j = (long)(e % (uint64_t)N);

			keep = dropout_keep(seed, t, e);
			y[e] = from_f<T>((keep ? (to_f(x[e]) + to_f(bias[j])) * scale : 0.f) +
					 to_f(res[e]));
		}
		const uint32_t word = __ballot_sync(FP_FULL_MASK, keep);
		if (lane == 0)
			words[w] = word;
	}
}

// The fused backward, rows under the plan: dy read, the mask read from the
// bits (MASK BDA_MASK_BITS) or the bytes (BDA_MASK_BYTES) or redrawn from
// the seed (BDA_MASK_NONE), dx written, the column sums of dx kept per
// thread, added over the block's rows and written as its partial row
// (ew_colsum_kernel adds the rows in order).
template <typename T, int V, bool VEC, int MASK>
__global__ void __launch_bounds__(EW_THREADS)
bwd_rows_kernel(const T *__restrict__ dy, const uint32_t *__restrict__ words,
		const uint8_t *__restrict__ bytes, T *__restrict__ dx,
		float *__restrict__ partial, long M, long N, uint64_t seed,
		uint32_t t, float scale)
{
	constexpr bool REGEN = MASK == BDA_MASK_NONE;
	const long c0 = VEC ? ((long)blockIdx.x * blockDim.x + threadIdx.x) * V
			    : (long)blockIdx.x * blockDim.x * V + threadIdx.x;
	const long cs = VEC ? 1 : blockDim.x;
	// A block's EW_UNROLL bands of blockDim.y rows lie together (a thread's
	// rows rs apart), so the block streams one span of memory.
	const long r0 = (long)blockIdx.y * blockDim.y * EW_UNROLL + threadIdx.y;
	const long rs = blockDim.y;
	const long step = (long)gridDim.y * blockDim.y * EW_UNROLL;
	float acc[V];

	grid_dep_launch();  // the column sum may be scheduled (ew_colsum)

#pragma unroll
	for (int k = 0; k < V; k++)
		acc[k] = 0.f;
	for (long i0 = r0; i0 < M; i0 += step) {
		float v[EW_UNROLL][V];
		uint4 gr[EW_UNROLL];  // VEC: dy as loaded
		unsigned bits[EW_UNROLL];

#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const long i = i0 + u * rs;

			bits[u] = 0;
			if (i >= M)
				continue;
			if (VEC) {
				if (c0 < N) {
					gr[u] = ew_ldraw<true>(dy + i * N + c0);
					if (MASK == BDA_MASK_BITS)
						bits[u] = ew_load_bits<V>(words, (uint64_t)i * N + c0);
					if (MASK == BDA_MASK_BYTES)
						bits[u] = byte_bits<V>(bytes, (uint64_t)i * N + c0);
				}
			} else {
#pragma unroll
				for (int k = 0; k < V; k++)
					if (c0 + k * cs < N) {
						const uint64_t e = (uint64_t)i * N + c0 + k * cs;

						v[u][k] = to_f(dy[e]);
						if (MASK == BDA_MASK_BITS)
							bits[u] |= ew_load_bit(words, e) << k;
						if (MASK == BDA_MASK_BYTES)
							bits[u] |= (unsigned)(bytes[e] != 0) << k;
					}
			}
		}
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const long i = i0 + u * rs;

			if (i >= M)
				continue;
			if (VEC) {
				if (c0 >= N)
					continue;
				if (REGEN)
					bits[u] = keep_bits<V>(seed, t, (uint64_t)i * N + c0);
				unpack16(gr[u], v[u], T());
#pragma unroll
				for (int k = 0; k < V; k++) {
					v[u][k] = (bits[u] >> k) & 1u ? v[u][k] * scale : 0.f;
					acc[k] += v[u][k];
				}
				st16<true>(dx + i * N + c0, v[u]);
			} else {
#pragma unroll
				for (int k = 0; k < V; k++) {
					const long c = c0 + k * cs;

					if (c >= N)
						continue;
					const uint64_t e = (uint64_t)i * N + c;
					const int keep = REGEN ? dropout_keep(seed, t, e)
							       : (int)((bits[u] >> k) & 1u);
					const float g = keep ? v[u][k] * scale : 0.f;

					acc[k] += g;
					dx[e] = from_f<T>(g);
				}
			}
		}
	}
	ew_block_partial<V>(acc, partial, c0, cs, N);
}

// The saved mask of a backward instance, drawn from the seed as its
// forward would write it: bytes (the unfused variant's) or bits.
__global__ void __launch_bounds__(EW_THREADS)
mask_kernel(uint8_t *__restrict__ bytes, uint32_t *__restrict__ words, uint64_t n,
	    uint64_t seed, uint32_t t)
{
	const uint64_t nw = (n + 31) / 32;
	const uint64_t warps = (uint64_t)gridDim.x * (EW_THREADS / 32);
	const int lane = threadIdx.x & 31;

	for (uint64_t w = (uint64_t)blockIdx.x * (EW_THREADS / 32) + threadIdx.x / 32;
	     w < nw; w += warps) {
		const uint64_t e = w * 32 + lane;
		const int keep = e < n ? dropout_keep(seed, t, e) : 0;

		if (bytes && e < n)
			bytes[e] = (uint8_t)keep;
		const uint32_t word = __ballot_sync(FP_FULL_MASK, keep);
		if (words && lane == 0)
			words[w] = word;
	}
}

template <typename T>
__global__ void fill_kernel(T *p, size_t n, float v)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = from_f<T>(v);
}

#endif
