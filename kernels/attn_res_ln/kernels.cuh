// kernels.cuh - the attention + residual + LayerNorm kernels: the unfused
// chain's own kernels (its GEMMs are cuBLAS's and its LayerNorm the
// LayerNorm module's, see workload.cu), the flash kernel and the
// residual+LayerNorm kernel of flash_then_ln, and the two fused kernels
// (k_fused, the default; k_fused_heads, clusters=heads). Read top
// to bottom as in llm.c's dev/cuda: simplest first, each saying what it
// changes over the previous one. The flash loop itself is in flash.cuh, the
// launchers in kernels.cu. CUDA C++ only; kernels.cu alone includes it.
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
#ifndef FP_ARL_KERNELS_CUH
#define FP_ARL_KERNELS_CUH

#include <math.h>
#include <stdint.h>

#include <utility>

#include <cooperative_groups.h>
#include <cuda_bf16.h>

#include "attn_res_ln/flash.cuh"

namespace cg = cooperative_groups;

// ---------------------------------------------------------------------------
// The unfused chain's kernels.
//
// k_softmax: one block a row of scores, in place. A first pass keeps a
// running max and a sum rescaled as the max grows (each thread its own,
// combined across the block), a second rereads the row (from L1/L2: a row
// is at most 64 KB) and writes the probabilities, zeros past the causal
// diagonal so the PV GEMM can multiply the whole square. The scale is
// applied here, in fp32, to the scores the GEMM stored. VEC: rows of a
// whole number of 16-byte chunks (S a multiple of 4 fp32 or 8 bf16, so
// every row starts aligned) move as 16-byte accesses, each chunk's max
// taken first so a chunk costs one rescale; other rows element by element.
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

template <typename T, bool VEC>
__global__ void __launch_bounds__(SMX_THREADS)
k_softmax(T *__restrict__ P, int S, int causal, float scale_log2)
{
	constexpr int W = VEC ? 16 / (int)sizeof(T) : 1;  // elements an access
	__shared__ float red[2][SMX_THREADS / 32];
	const long row = blockIdx.x;
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
	const int keep = causal ? (int)(row % S) + 1 : S;
	T *p = P + (size_t)row * S;
	float m = -INFINITY, l = 0.f;

	for (int c = tid; c * W < keep; c += SMX_THREADS) {
		float v[W], mc = -INFINITY;

		if constexpr (VEC)
			unpack16(*(const uint4 *)(p + c * W), v, T());
		else
			v[0] = to_f(p[c]);
#pragma unroll
		for (int e = 0; e < W; e++) {
			v[e] = c * W + e < keep ? v[e] * scale_log2 : -INFINITY;
			mc = fmaxf(mc, v[e]);
		}
		if (mc > m) {
			l = m == -INFINITY ? 0.f : l * exp2f(m - mc);
			m = mc;
		}
#pragma unroll
		for (int e = 0; e < W; e++)
			l += exp2f(v[e] - m);  // 0 for the masked: exp2(-inf)
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
	for (int c = tid; c * W < S; c += SMX_THREADS) {
		float v[W];

		if constexpr (VEC)
			unpack16(*(const uint4 *)(p + c * W), v, T());
		else
			v[0] = to_f(p[c]);
#pragma unroll
		for (int e = 0; e < W; e++)
			v[e] = c * W + e < keep ? exp2f(v[e] * scale_log2 - m) * inv : 0.f;
		if constexpr (VEC)
			st16<false>(p + c * W, v);
		else
			p[c] = from_f<T>(v[0]);
	}
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
__global__ void __launch_bounds__(FL_THREADS, fl_min_blocks<T>())
k_flash(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
	T *__restrict__ O, int B, int H, int S, float scale_log2)
{
	unsigned char *smem = dyn_smem();
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
// values a thread of 256: rows up to 2048 = ARL_MAX_HEADS * 64 wide), both
// sums reduced in a fixed order: x and o read once, y written once. Rows
// of mean 1e3 keep their spread: every value is first shifted by the row's
// first one (v - v0 is exact where both are near 1e3, Sterbenz), so the
// sum of the row carries no 1e6-sized partials whose rounding would move
// the mean by 1e-5 of the spread, and the variance is two-pass, about the
// shifted mean.
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
	const float pivot = to_f(x[base]) + to_f(o[base]);
	float v[RL_PER], sum = 0.f, sq = 0.f, mean, rstd;

#pragma unroll
	for (int i = 0; i < RL_PER; i++) {
		const int c = threadIdx.x + i * RL_THREADS;

		v[i] = c < N ? to_f(x[base + c]) + to_f(o[base + c]) - pivot : 0.f;
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
// normalised output in shared memory in the storage type, as
// flash_then_ln's o (bf16: rounded once, as there; fp32: exact), which at
// 4 heads a CTA takes 33 KB (bf16: three CTAs fit an SM, where fp32 tiles
// would have left two) or 66 KB (fp32). Then the row statistics of v = o +
// x are summed across the cluster through distributed shared memory in two
// rounds (the sums, then the squares about the mean: the two-pass
// variance), each rank's partials read in rank order, so every CTA gets the
// same bits; v is formed again from o and x for each pass (x's tile is
// 64 rows of the CTA's columns, read from DRAM once and then from cache),
// shifted by the row's x[0] as k_res_ln shifts its rows. Each CTA writes
// its own columns of y. x is read once from DRAM, y written once, and the
// attention output never leaves the chip.
// Shared memory: the flash loop's (fl_layout) + 64 rows x (hpc * 64 + 8)
// elements (the + 8 keeps the fragment stores of a warp, bf16x2, or of a
// half-warp, float2, on distinct banks) + the rows' two partials (2 x 64
// floats), which the cluster's CTAs read.
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
	unsigned char *smem = dyn_smem();
	cg::cluster_group cl = cg::this_cluster();
	const int C = (int)cluster_nctarank(), rank = (int)cluster_ctarank();
	const int ntq = (S + ARL_BQ - 1) / ARL_BQ, tile = (int)(blockIdx.x / C);
	const int b = tile % B, q0 = (ntq - 1 - tile / B) * ARL_BQ;
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
	const int nh = (H - rank + C - 1) / C, ld = fused_ld((H + C - 1) / C);
	const int N = H * 64, ncols = nh * 64;
	T *os = (T *)(smem + fl_layout<T>::SMEM);
	float *part1 = (float *)(os + ARL_BQ * ld), *part2 = part1 + ARL_BQ;  // the rows' partials
	float o[FL_NT][4];

	for (int hl = 0; hl < nh; hl++) {
		const size_t off = (size_t)(b * H + rank + hl * C) * S * 64;

		flash_head<T, CAUSAL>(Q + off, K + off, V + off, S, q0, scale_log2, smem, o);
#pragma unroll
		for (int hh = 0; hh < 2; hh++) {
			T *dst = os + (w * 16 + g + 8 * hh) * ld + hl * 64 + 2 * t;
#pragma unroll
			for (int n = 0; n < FL_NT; n++)
				store2<T>(dst + 8 * n, o[n][2 * hh], o[n][2 * hh + 1]);
		}
	}
	__syncthreads();

	// Each warp its 16 rows. Column c of this CTA is head rank + (c / 64) C.
	auto xcol = [&](int c) { return (rank + (c >> 6) * C) * 64 + (c & 63); };
	for (int r = w * 16; r < w * 16 + 16; r++) {
		const int s = q0 + r;
		float sum = 0.f;

		if (s < S) {
			const T *xr = x + ((size_t)b * S + s) * N;
			const float pivot = to_f(xr[0]);

			for (int c = lane; c < ncols; c += 32)
				sum += to_f(os[r * ld + c]) + to_f(xr[xcol(c)]) - pivot;
		}
		sum = warp_sum(sum);
		if (lane == 0)
			part1[r] = sum;
	}
	cl.sync();
	for (int r = w * 16; r < w * 16 + 16; r++) {
		const int s = q0 + r;
		float mean = 0.f, sq = 0.f;

		if (s < S) {
			const T *xr = x + ((size_t)b * S + s) * N;
			const float pivot = to_f(xr[0]);

			for (int q = 0; q < C; q++)
				mean += cl.map_shared_rank(part1, q)[r];
			mean /= (float)N;
			for (int c = lane; c < ncols; c += 32) {
				const float d = to_f(os[r * ld + c]) + to_f(xr[xcol(c)]) - pivot - mean;

				sq += d * d;
			}
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
		const T *xr = x + ((size_t)b * S + s) * N;
		const float pivot = to_f(xr[0]);
		T *yr = y + ((size_t)b * S + s) * N;

		for (int c = lane; c < ncols; c += 32) {
			const int col = xcol(c);
			const float d = to_f(os[r * ld + c]) + to_f(xr[col]) - pivot - mean;

			yr[col] = from_f<T>(d * rstd * to_f(gamma[col]) + to_f(beta[col]));
		}
	}
	cl.sync();  // no CTA leaves while another still reads its partials
}

// k_fused_heads (clusters=heads): the fused kernel as the flash kernel plus
// an epilogue. k_fused's CTAs each run the flash loop for several heads one
// after the other, with more shared memory than the flash kernel (fewer
// CTAs an SM) and a third to a sixth of its CTAs: at H = 12 it has half the
// flash kernel's parallelism for twice the serial work a CTA (bench/
// RESULTS.md, issue #22, has the analysis). Here a cluster of C = ceil(H /
// HPC) CTAs owns 64 query rows of one sequence, HPC heads a CTA
// (arl_heads_cluster: 1 to 3, at least 2 where H > 16):
// CTA rank runs flash_head for heads rank, rank + C, ..., with the flash
// kernel's block, tile and shared memory, each CTA as resident as the
// flash kernel's, and the outputs stay in registers; in bf16 all but the
// last head's outputs wait in shared memory (the stash) so that the loop
// keeps the flash kernel's 128 registers, in fp32 the first two of three
// (heads_stashed). The statistics: the 64 columns
// a head gives a row live in one quad of threads (the m16n8 layout), so a
// CTA's partial of a row (the sum of v = o + (x - x[0]) over its columns,
// and the squares about its own mean) takes quad shuffles only; after one cluster barrier every CTA reads
// the C partials of its rows through DSMEM and merges them (Chan's parallel
// variance: the squares about the row's mean are each partial's plus its
// count times its mean's offset squared), each lane of a quad a fixed
// quarter of the ranks, so every CTA gets the same bits. Each CTA then
// normalises and writes its own columns straight from registers (a quad
// stores 16 or 32 contiguous bytes, as k_flash). A second barrier, arrived
// at as soon as the partials are read and waited for at exit, keeps every
// CTA's partials alive while the others read them. x is read once, y
// written once; o never leaves the registers and is not rounded to the
// storage type. Shared memory: the flash loop's + 64 (sum, squares) pairs.
template <typename T> __device__ __forceinline__ float2 load2(const T *p);
template <> __device__ __forceinline__ float2 load2<float>(const float *p)
{
	return *(const float2 *)p;
}
template <> __device__ __forceinline__ float2 load2<__nv_bfloat16>(const __nv_bfloat16 *p)
{
	return __bfloat1622float2(*(const __nv_bfloat162 *)p);
}

// Bytes of the bf16 stash past the loop's shared memory (its other 8 KB is
// the Q tile): 16 of a thread's 32 fp32 outputs of one head (two heads),
// or 16 bf16 pairs of the second head (three), for 128 threads.
#define ARL_STASH_B (16 * FL_THREADS * 4)

// Heads whose outputs k_fused_heads<T, HPC> keeps in shared memory while
// the last head's loop runs, and the bytes they take past the loop's:
// bf16, every head but the last (in the Q tile and ARL_STASH_B); fp32
// three heads' two first (32 fp32 a thread each: 32 KB), where two keep
// theirs in registers.
__host__ __device__ constexpr int heads_stashed(int es, int hpc)
{
	return hpc > 1 && (es == 2 || hpc == 3) ? hpc - 1 : 0;
}

__host__ __device__ constexpr int heads_stash_bytes(int es, int hpc)
{
	return es == 2 ? (hpc > 1 ? ARL_STASH_B : 0)
		       : heads_stashed(es, hpc) * 32 * FL_THREADS * 4;
}

template <typename T, bool CAUSAL, int HPC>
__global__ void __launch_bounds__(FL_THREADS, fl_min_blocks<T>())
k_fused_heads(const T *__restrict__ Q, const T *__restrict__ K, const T *__restrict__ V,
	      const T *__restrict__ x, const T *__restrict__ gamma, const T *__restrict__ beta,
	      T *__restrict__ y, int B, int H, int S, float scale_log2)
{
	constexpr int RPL = (ARL_HEADS_CLUSTER + 3) / 4;  // ranks a lane of a quad reads
	unsigned char *smem = dyn_smem();
	cg::cluster_group cl = cg::this_cluster();
	const int C = (int)cluster_nctarank(), rank = (int)cluster_ctarank();
	const int ntq = (S + ARL_BQ - 1) / ARL_BQ;
	// bf16 with two or three heads: all but the last head's outputs wait in
	// shared memory (the stash: the Q tile, which the loop then leaves
	// alone, and 8 KB past the loop's), so the loop has the registers of a
	// CTA of one head and 4 CTAs an SM. Two heads: the first's 32 fp32
	// values a thread. Three: the first two's as bf16 pairs (rounded as
	// flash_then_ln's o is), spread to fp32 in the K/V stages once the
	// last loop is done.
	constexpr int NST = heads_stashed(sizeof(T), HPC);  // heads stashed
	static_assert(NST <= 2 && HPC <= 3, "the stash holds two heads");
	float v[NST ? 1 : HPC][FL_NT][4];
	// This thread's element c of fragment n of head hl: registers, or its
	// slots of the stash or of the K/V stages (thread-major: conflict-free).
	auto at = [&](int hl, int n, int c) -> float & {
		const int i = n * 4 + c;

		if constexpr (NST == 1) {
			if (hl == 0)
				return i < 16 ? ((float *)smem)[i * FL_THREADS + threadIdx.x]
					      : ((float *)(smem + fl_layout<T>::SMEM))
						[(i - 16) * FL_THREADS + threadIdx.x];
			return v[0][n][c];
		} else if constexpr (NST == 2) {
			// bf16: spread into the K/V stages; fp32: past the loop's
			constexpr int at0 = sizeof(T) == 2 ? fl_layout<T>::TILE : fl_layout<T>::SMEM;

			if (hl < 2)
				return ((float *)(smem + at0))[(hl * 32 + i) * FL_THREADS + threadIdx.x];
			return v[0][n][c];
		} else {
			return v[hl][n][c];
		}
	};

	// bf16 (a stash or not): Q's fragments from global memory, the loop's
	// registers those of the flash kernel (one head a CTA through the
	// other branch spilled 32 bytes)
	if constexpr (sizeof(T) == 2) {
#pragma unroll
		for (int hl = 0; hl < HPC; hl++) {
			// the same in every thread of the CTA; every CTA has a first
			if (hl == 0 || rank + hl * C < H) {
				// the head's place, from a fresh read of the CTA index
				const int tile = (int)(ctaid_x() / C);
				const size_t off = (size_t)((tile % B) * H + rank + hl * C) * S * 64;

				flash_head<T, CAUSAL, true>(Q + off, K + off, V + off, S,
							    (ntq - 1 - tile / B) * ARL_BQ,
							    scale_log2, smem, v[0]);
				if (hl < NST) {
#pragma unroll
					for (int n = 0; n < FL_NT; n++) {
						if constexpr (NST == 1) {
#pragma unroll
							for (int c = 0; c < 4; c++)
								at(0, n, c) = v[0][n][c];
						} else {
							uint32_t *st = (uint32_t *)(smem + (hl ? fl_layout<T>::SMEM : 0));

							st[(2 * n) * FL_THREADS + threadIdx.x] =
								pack_bf16(v[0][n][0], v[0][n][1]);
							st[(2 * n + 1) * FL_THREADS + threadIdx.x] =
								pack_bf16(v[0][n][2], v[0][n][3]);
						}
					}
				}
			}
		}
		if constexpr (NST == 2) {
			// the K/V stages are free (flash_head's contract): the two
			// stashed heads there as fp32, each thread its own slots
#pragma unroll
			for (int hl = 0; hl < 2; hl++) {
				const uint32_t *st = (const uint32_t *)(smem + (hl ? fl_layout<T>::SMEM : 0));

#pragma unroll
				for (int n = 0; n < FL_NT; n++) {
#pragma unroll
					for (int p = 0; p < 2; p++) {
						const float2 f = __bfloat1622float2(*(const __nv_bfloat162 *)
							&st[(2 * n + p) * FL_THREADS + threadIdx.x]);

						at(hl, n, 2 * p) = f.x;
						at(hl, n, 2 * p + 1) = f.y;
					}
				}
			}
		}
	} else {
		// fp32: each head's outputs in registers of their own, or (three
		// heads) the first two's to the stash as each loop ends, the
		// loop's registers those of one head
		const int tile = (int)(blockIdx.x / C), b = tile % B;
		const int q0 = (ntq - 1 - tile / B) * ARL_BQ;

#pragma unroll
		for (int hl = 0; hl < HPC; hl++) {
			// the same in every thread of the CTA; every CTA has a first
			if (hl == 0 || rank + hl * C < H) {
				const size_t off = (size_t)(b * H + rank + hl * C) * S * 64;

				flash_head<T, CAUSAL>(Q + off, K + off, V + off, S, q0,
						      scale_log2, smem, v[NST ? 0 : hl]);
				if (hl < NST) {
#pragma unroll
					for (int n = 0; n < FL_NT; n++)
#pragma unroll
						for (int c = 0; c < 4; c++)
							at(hl, n, c) = v[0][n][c];
				}
			}
		}
	}
	// The tile's coordinates again, from a fresh read of the CTA index:
	// not held in registers through the flash loop, whose registers are
	// full (held, they cost the loop spills).
	const int tile = (int)(ctaid_x() / C), b = tile % B, q0 = (ntq - 1 - tile / B) * ARL_BQ;
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
	// This CTA's heads: rank, rank + C, ...; every rank has HPC - 1 or HPC
	// (arl_heads_cluster), the last where rank + (HPC - 1) C < H.
	const int N = H * 64, nh = HPC - 1 + (rank + (HPC - 1) * C < H);
	const float inv_n = 1.f / (float)N;
	constexpr float inv_lo = HPC > 1 ? 1.f / (64 * (HPC - 1)) : 1.f / 64, inv_hi = 1.f / (64 * HPC);
	// a row's (sum, squares), past the loop's shared memory and the stash's
	float2 *part = (float2 *)(smem + fl_layout<T>::SMEM + heads_stash_bytes(sizeof(T), HPC));

	// v = o + (x - x[0]) (x - x[0] exact where both are near a large mean,
	// as in k_res_ln), 0 in rows past S and in heads this CTA lacks; then
	// this CTA's partials of its rows.
	float mean[2], rstd[2];
#pragma unroll
	for (int hh = 0; hh < 2; hh++) {
		const int r = w * 16 + g + 8 * hh, s = q0 + r;
		const T *xr = x + ((size_t)b * S + (s < S ? s : 0)) * N;
		const float pivot = to_f(xr[0]);
		float sum = 0.f, sq = 0.f;

#pragma unroll
		for (int hl = 0; hl < HPC; hl++) {
			const T *xh = xr + (rank + hl * C) * 64 + 2 * t;
			const bool ok = s < S && hl < nh;

#pragma unroll
			for (int n = 0; n < FL_NT; n++) {
				const float2 xv = ok ? load2<T>(xh + 8 * n) : make_float2(0.f, 0.f);

				at(hl, n, 2 * hh) = ok ? at(hl, n, 2 * hh) + (xv.x - pivot) : 0.f;
				at(hl, n, 2 * hh + 1) = ok ? at(hl, n, 2 * hh + 1) + (xv.y - pivot) : 0.f;
				sum += at(hl, n, 2 * hh) + at(hl, n, 2 * hh + 1);
			}
		}
		sum += __shfl_xor_sync(FP_FULL_MASK, sum, 1);
		sum += __shfl_xor_sync(FP_FULL_MASK, sum, 2);
		const float lm = sum * (nh == HPC ? inv_hi : inv_lo);  // 1 / (64 nh)
#pragma unroll
		for (int hl = 0; hl < HPC; hl++) {
#pragma unroll
			for (int n = 0; n < FL_NT; n++) {
				const float d0 = at(hl, n, 2 * hh) - lm, d1 = at(hl, n, 2 * hh + 1) - lm;

				sq += hl < nh ? d0 * d0 + d1 * d1 : 0.f;
			}
		}
		sq += __shfl_xor_sync(FP_FULL_MASK, sq, 1);
		sq += __shfl_xor_sync(FP_FULL_MASK, sq, 2);
		if (t == 0)
			part[r] = make_float2(sum, sq);
	}
	cl.sync();

	// The rows' statistics from the C partials: lane t of a quad merges
	// ranks t, t + 4, ..., the quad's butterfly adds the four (the same bits
	// in every lane and every CTA).
#pragma unroll
	for (int hh = 0; hh < 2; hh++) {
		const int r = w * 16 + g + 8 * hh;
		float2 p[RPL];
		float sum = 0.f, sq = 0.f;

#pragma unroll
		for (int i = 0; i < RPL; i++) {
			const int q = t + 4 * i;

			p[i] = q < C ? *cl.map_shared_rank(part + r, q) : make_float2(0.f, 0.f);
			sum += p[i].x;
		}
		sum += __shfl_xor_sync(FP_FULL_MASK, sum, 1);
		sum += __shfl_xor_sync(FP_FULL_MASK, sum, 2);
		mean[hh] = sum * inv_n;
#pragma unroll
		for (int i = 0; i < RPL; i++) {
			const int q = t + 4 * i;
			const bool all = q + (HPC - 1) * C < H;  // rank q holds HPC heads
			const float nq = 64.f * (float)(all ? HPC : HPC - 1);
			const float d = q < C ? p[i].x * (all ? inv_hi : inv_lo) - mean[hh] : 0.f;

			sq += q < C ? p[i].y + nq * d * d : 0.f;
		}
		sq += __shfl_xor_sync(FP_FULL_MASK, sq, 1);
		sq += __shfl_xor_sync(FP_FULL_MASK, sq, 2);
		rstd[hh] = rsqrtf(sq * inv_n + (float)ARL_EPS);
	}
	auto arrived = cl.barrier_arrive();  // done with the other CTAs' partials

#pragma unroll
	for (int hl = 0; hl < HPC; hl++) {
		if (hl >= nh)
			break;
		const int c0 = (rank + hl * C) * 64 + 2 * t;
#pragma unroll
		for (int n = 0; n < FL_NT; n++) {
			const float2 gm = load2<T>(gamma + c0 + 8 * n), bt = load2<T>(beta + c0 + 8 * n);
#pragma unroll
			for (int hh = 0; hh < 2; hh++) {
				const int s = q0 + w * 16 + g + 8 * hh;

				if (s < S)
					store2<T>(y + ((size_t)b * S + s) * N + c0 + 8 * n,
						  (at(hl, n, 2 * hh) - mean[hh]) * rstd[hh] * gm.x + bt.x,
						  (at(hl, n, 2 * hh + 1) - mean[hh]) * rstd[hh] * gm.y + bt.y);
			}
		}
	}
	cl.barrier_wait(std::move(arrived));  // no CTA leaves while another reads its partials
}

// Dynamic shared memory of a fused CTA holding hpc heads' outputs of es
// bytes an element, beside the flash loop's flash_bytes.
__host__ __device__ constexpr size_t fused_smem_bytes(int flash_bytes, int hpc, int es)
{
	return (size_t)flash_bytes + (size_t)ARL_BQ * fused_ld(hpc) * es +
	       2 * ARL_BQ * sizeof(float);
}

#endif
