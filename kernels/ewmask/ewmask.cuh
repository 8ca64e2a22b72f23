/* ewmask.cuh - what the bias-elementwise workloads with a saved mask
 * (bias_dropout_add, bias_relu) share on the device: the plan of their row
 * kernels, 1-bit-per-element mask packing, and the deterministic column
 * sums (dbias): a partial row per block, then a fixed-order second pass.
 * CUDA C++ only.
 *
 * The row kernels: an M x N row-major tensor, blocks of EW_THREADS threads
 * shaped tx x ty (tx a multiple of 32 covering up to 256 vectors of a
 * row, ty rows side by side), a grid of gx column blocks by gy row groups;
 * a block takes EW_UNROLL bands of ty rows that lie together, a thread row
 * r, r + ty, ... of them in flight, then moves gy ty EW_UNROLL rows on, and
 * a thread keeps the same columns all along (its dbias partial in
 * registers). The forward's grid covers M in one pass (a thread's
 * EW_UNROLL rows and done: short blocks, no partial last wave of long
 * ones); the backward's in two, so that its partial rows stay few
 * (ew_plan_cols). Vector path when N is a multiple of the 16-byte vector width
 * V (every row then starts 16-byte aligned); otherwise each thread takes V
 * columns tx apart, scalar (coalesced, no alignment needed).
 *
 * The bit mask: bit e % 32 of word e / 32 is element e = i N + j (the
 * flattened index), ceil(M N / 32) words. In the vector path with N a
 * multiple of 32 the 32 / V lanes of a word combine their bits with shuffles
 * and one writes it; otherwise the forward runs a flattened kernel in which
 * a warp takes 32 consecutive elements and __ballot_sync builds the word. */
#ifndef FP_EWMASK_CUH
#define FP_EWMASK_CUH

#include <stdint.h>

#include "device.cuh"

/* A 16-byte vector kept as loaded, widened to fp32 at use: 4 registers a
 * vector in flight whatever the type (8 as bf16's floats). */
template <bool STREAM>
__device__ __forceinline__ uint4 ew_ldraw(const void *p)
{
	return STREAM ? __ldcs((const uint4 *)p) : __ldg((const uint4 *)p);
}

#define EW_THREADS 256
#define EW_UNROLL 4            /* rows in flight per thread */
#define EW_MAX_GY 65535        /* the grid's y limit */
#define EW_MAX_PARTIALS 1024   /* most partial rows of dbias */

struct ew_plan {
	int vec;             /* 1: the 16-byte vector path */
	int V;               /* elements per 16 bytes */
	unsigned tx, ty;     /* block shape */
	unsigned gx, gy;     /* grid */
	long prows;          /* dbias partial rows: gy (ew_plan_cols), else 0 */
};

/* The forward's plan for M x N of es-byte elements (no partial rows); the
 * same on every device, as ew_plan_cols. */
static inline struct ew_plan ew_plan_rows(long M, long N, size_t es)
{
	struct ew_plan p;
	long nv, gy;

	p.V = (int)(16 / es);
	p.vec = N % p.V == 0;
	nv = (N + p.V - 1) / p.V;
	p.tx = (unsigned)(nv >= 256 ? 256 : (nv + 31) / 32 * 32);
	p.ty = EW_THREADS / p.tx;
	p.gx = (unsigned)((nv + p.tx - 1) / p.tx);
	gy = (M + (long)p.ty * EW_UNROLL - 1) / ((long)p.ty * EW_UNROLL);
	if (gy > EW_MAX_GY)
		gy = EW_MAX_GY;
	p.gy = (unsigned)(gy < 1 ? 1 : gy);
	p.prows = 0;
	return p;
}

/* The backward's plan for M x N of es-byte elements: blocks of one warp
 * across (32 vectors of a row) by EW_THREADS / 32 rows, so a block's
 * column sums fold into one partial row (ew_block_partial); a thread takes
 * 2 EW_UNROLL rows (the grid covers M in two passes), so prows = gy =
 * M / 64 (256 at M = 16384: 1.6 % of dx's bytes at fp32), at most
 * EW_MAX_PARTIALS. The partial rows enter device_bytes, which must not
 * touch the GPU: the plan is the same on every device. */
static inline struct ew_plan ew_plan_cols(long M, long N, size_t es)
{
	struct ew_plan p;
	long nv, gy;

	p.V = (int)(16 / es);
	p.vec = N % p.V == 0;
	nv = (N + p.V - 1) / p.V;
	p.tx = 32;
	p.ty = EW_THREADS / 32;
	p.gx = (unsigned)((nv + 31) / 32);
	gy = (M + 2L * p.ty * EW_UNROLL - 1) / (2L * p.ty * EW_UNROLL);
	if (gy > EW_MAX_PARTIALS)
		gy = EW_MAX_PARTIALS;
	p.gy = (unsigned)(gy < 1 ? 1 : gy);
	p.prows = p.gy;
	return p;
}

/* The blocks of a flat kernel over n items, per items a block: at least
 * 1, at most 2^20 (a kernel past that loops over the rest). */
static inline unsigned ew_flat_grid(size_t n, size_t per)
{
	size_t b = (n + per - 1) / per;

	return (unsigned)(b < 1 ? 1 : b > (1u << 20) ? (1u << 20) : b);
}

/* Bits of a mask for M x N elements, in bytes: ceil(M N / 32) words. */
static inline size_t ew_bits_bytes(long M, long N)
{
	return ((size_t)M * (size_t)N + 31) / 32 * 4;
}

/* Vector path, N % 32 == 0: lane groups of 32 / V lanes hold one word's V-bit
 * pieces (lane order = element order); put the word together and let the
 * group's first lane store it at words[w]. Every lane of the warp calls it
 * (valid: whether this lane's columns exist; a group is wholly in or out). */
template <int V>
__device__ __forceinline__ void ew_store_bits(uint32_t *words, uint64_t w,
					      unsigned bits, bool valid)
{
	constexpr int G = 32 / V;
	const int lane = threadIdx.x & 31;
	uint32_t part = (uint32_t)bits << ((lane % G) * V);

#pragma unroll
	for (int o = 1; o < G; o <<= 1)
		part |= __shfl_xor_sync(FP_FULL_MASK, part, o);
	if (valid && lane % G == 0)
		words[w] = part;
}

/* The V bits of elements e .. e + V - 1 (e a multiple of V; V divides 32). */
template <int V>
__device__ __forceinline__ unsigned ew_load_bits(const uint32_t *words, uint64_t e)
{
	return (__ldg(words + (e >> 5)) >> (e & 31)) & ((1u << V) - 1u);
}

__device__ __forceinline__ unsigned ew_load_bit(const uint32_t *words, uint64_t e)
{
	return (__ldg(words + (e >> 5)) >> (e & 31)) & 1u;
}

/* h = x + bias, and y = relu(h) where RELU: the unfused variants' first
 * kernel (and bias_relu's ReLU alone with bias NULL). Rows under the plan. */
template <typename T, int V, bool VEC, bool RELU>
__global__ void __launch_bounds__(EW_THREADS)
ew_bias_act_kernel(const T *__restrict__ x, const T *__restrict__ bias,
		   T *__restrict__ y, long M, long N)
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

#pragma unroll
	for (int k = 0; k < V; k++)
		b[k] = 0.f;
	if (bias && VEC && c0 < N)
		ld16<false>(bias + c0, b);
	else if (bias && !VEC)
#pragma unroll
		for (int k = 0; k < V; k++)
			if (c0 + k * cs < N)
				b[k] = to_f(bias[c0 + k * cs]);
	for (long i0 = r0; i0 < M; i0 += step) {
		float v[EW_UNROLL][V];
		uint4 xr[EW_UNROLL];  // VEC: as loaded

#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const long i = i0 + u * rs;

			if (i >= M)
				continue;
			if (VEC) {
				if (c0 < N)
					xr[u] = ew_ldraw<true>(x + i * N + c0);
			} else {
#pragma unroll
				for (int k = 0; k < V; k++)
					if (c0 + k * cs < N)
						v[u][k] = to_f(x[i * N + c0 + k * cs]);
			}
		}
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const long i = i0 + u * rs;

			if (i >= M)
				continue;
			if (VEC)
				unpack16(xr[u], v[u], T());
#pragma unroll
			for (int k = 0; k < V; k++) {
				v[u][k] += b[k];
				if (RELU)
					v[u][k] = fmaxf(v[u][k], 0.f);
			}
			if (VEC) {
				if (c0 < N)
					st16<true>(y + i * N + c0, v[u]);
			} else {
#pragma unroll
				for (int k = 0; k < V; k++)
					if (c0 + k * cs < N)
						y[i * N + c0 + k * cs] = from_f<T>(v[u][k]);
			}
		}
	}
}

/* A block's column sums under ew_plan_cols: acc[k] (column c0 + k cs of
 * this thread's rows) added over the block's rows in threadIdx.y order
 * through shared memory, then written as partial row blockIdx.y. Every
 * thread of the block calls it (it synchronizes). */
template <int V>
__device__ __forceinline__ void ew_block_partial(const float *acc, float *__restrict__ partial,
						 long c0, long cs, long N)
{
	__shared__ float red[V * EW_THREADS];
	const int t = threadIdx.y * blockDim.x + threadIdx.x;

#pragma unroll
	for (int k = 0; k < V; k++)
		red[k * EW_THREADS + t] = acc[k];
	__syncthreads();
	if (threadIdx.y != 0)
		return;
#pragma unroll
	for (int k = 0; k < V; k++) {
		float s = 0.f;

		for (unsigned r = 0; r < blockDim.y; r++)
			s += red[k * EW_THREADS + r * blockDim.x + threadIdx.x];
		if (c0 + k * cs < N)
			partial[(long)blockIdx.y * N + c0 + k * cs] = s;
	}
}

/* dbias[j] = the sum of partial[p][j] over p < prows: the fixed-order second
 * pass of the column sums (no float atomics, the same bits every run).
 * Blocks of EW_CS_COLS columns by EW_CS_LANES lanes: lane l adds rows l,
 * l + EW_CS_LANES, ... in order (4 loads in flight), then lane 0 adds the
 * lanes' sums in lane order. Grid: ceil(N / EW_CS_COLS). */
#define EW_CS_COLS 32
#define EW_CS_LANES 32

template <typename T>
__global__ void __launch_bounds__(EW_CS_COLS * EW_CS_LANES)
ew_colsum_kernel(const float *__restrict__ partial, long prows, long N,
		 T *__restrict__ dbias)
{
	__shared__ float red[EW_CS_LANES][EW_CS_COLS + 1];
	const long j = (long)blockIdx.x * EW_CS_COLS + threadIdx.x;
	float s = 0.f;

	if (j < N) {
		long p = threadIdx.y;

		for (; p + 3 * EW_CS_LANES < prows; p += 4 * EW_CS_LANES) {
			const float a0 = partial[p * N + j];
			const float a1 = partial[(p + EW_CS_LANES) * N + j];
			const float a2 = partial[(p + 2 * EW_CS_LANES) * N + j];
			const float a3 = partial[(p + 3 * EW_CS_LANES) * N + j];

			s += a0;
			s += a1;
			s += a2;
			s += a3;
		}
		for (; p < prows; p += EW_CS_LANES)
			s += partial[p * N + j];
	}
	red[threadIdx.y][threadIdx.x] = s;
	__syncthreads();
	if (threadIdx.y == 0 && j < N) {
		float t = 0.f;

		for (int l = 0; l < EW_CS_LANES; l++)
			t += red[l][threadIdx.x];
		dbias[j] = from_f<T>(t);
	}
}

/* The second pass's launch on stream st. */
template <typename T>
static inline void ew_colsum(const float *partial, long prows, long N, T *dbias,
			     cudaStream_t st)
{
	const dim3 block(EW_CS_COLS, EW_CS_LANES);

	ew_colsum_kernel<T><<<(unsigned)((N + EW_CS_COLS - 1) / EW_CS_COLS), block, 0, st>>>(
		partial, prows, N, dbias);
}

/* Column partials of g (an M x N tensor, the dx of an unfused backward)
 * into partial[prows][N] under ew_plan_cols: the unfused variants' second
 * kernel. */
template <typename T, int V, bool VEC>
__global__ void __launch_bounds__(EW_THREADS)
ew_colpart_kernel(const T *__restrict__ g, float *__restrict__ partial, long M, long N)
{
	const long c0 = VEC ? ((long)blockIdx.x * blockDim.x + threadIdx.x) * V
			    : (long)blockIdx.x * blockDim.x * V + threadIdx.x;
	const long cs = VEC ? 1 : blockDim.x;
	const long r0 = (long)blockIdx.y * blockDim.y + threadIdx.y;
	const long rs = (long)gridDim.y * blockDim.y;
	float acc[V];

#pragma unroll
	for (int k = 0; k < V; k++)
		acc[k] = 0.f;
	for (long i = r0; i < M; i += rs) {
		if (VEC) {
			if (c0 < N) {
				float v[V];

				ld16<true>(g + i * N + c0, v);
#pragma unroll
				for (int k = 0; k < V; k++)
					acc[k] += v[k];
			}
		} else {
#pragma unroll
			for (int k = 0; k < V; k++)
				if (c0 + k * cs < N)
					acc[k] += to_f(g[i * N + c0 + k * cs]);
		}
	}
	ew_block_partial<V>(acc, partial, c0, cs, N);
}

#endif
