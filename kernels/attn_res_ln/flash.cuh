// flash.cuh - the flash-attention device code that the flash_then_ln
// kernel and the fused kernel share: one block of 4 warps runs the online-
// softmax loop of one head for ARL_BQ = 64 query rows (16 a warp) over
// K/V tiles of ARL_BK = 64 keys, D = 64, leaving each thread its rows'
// normalised outputs in registers. CUDA C++ only; kernels/attn_res_ln/
// alone includes it.
//
// The scores never reach memory: per key tile, S = Q K^T in registers, the
// causal and sequence-end masks, the running max m and sum l per row
// (rescaling the accumulators by exp(m_old - m_new) when the max grows by
// more than a factor 2^8 in some row of the warp: fl_softmax), then O +=
// P V. The exps run in base 2 with scale * log2(e) folded in.
//
// bf16: tensor cores. ldmatrix + mma.sync m16n8k16 (bf16 in, fp32
// accumulate); Q's fragments stay in registers for the whole loop; P goes
// from the S accumulators to A fragments in registers (rounded to bf16, as
// FlashAttention does); V's B fragments come from ldmatrix.trans. Tiles are
// 64 rows of 128 bytes with their 16-byte chunks XOR-swizzled by row (the
// layout of kernels/ln_linear/fwd_mma.cu), so ldmatrix is conflict-free.
// K and V tiles are double-buffered with cp.async: tile j + 1 is in flight
// while tile j is multiplied.
// fp32: tensor cores too, as 3xTF32 (mma_3xtf32 in device.cuh: fp32
// accuracy at a third of the TF32 rate, several times the CUDA cores'
// FMA), m16n8k8, whose 32-bit fragments sit where m16n8k16's do: the same
// accumulator layout, so the masks, the online softmax and the epilogues
// are one code for both types. Tile rows are 256 bytes with the same XOR
// swizzle of their 16-byte chunks; ldmatrix (b16, non-transposed) gives a
// thread word t of row g of an 8 x 4 float block, which is exactly a TF32
// A fragment (Q) or B fragment (K). P V needs no transpose either: the
// sum over a tile's keys may take them in any order, so k-step n pairs
// TF32 index t with key 8n + 2t and t + 4 with key 8n + 2t + 1, the two
// probabilities a thread already holds in registers (its accumulator
// layout), and V's B fragments are the matching scalar reads of rows
// 8n + 2t (+1), conflict-free under the swizzle. The S accumulators take
// one tile's 24 MMAs; P V goes to a fresh partial a tile, added to o in
// fp32 (the MMA truncates its sums: device.cuh).
#ifndef FP_ARL_FLASH_CUH
#define FP_ARL_FLASH_CUH

#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>

#include "attn_res_ln/arl.h"
#include "device.cuh"

#define FL_THREADS 128  // 4 warps, 16 query rows each
#define FL_NT 8         // 8-wide fragments across 64 keys or 64 dims
#define FL_RESCALE 8.f  // log2 of the largest probability before m moves (fl_softmax)

// CTAs an SM the flash loop's kernels are built for (__launch_bounds__,
// which caps their registers to fit): bf16 4 (128 registers; 41 KB of
// shared memory would allow 5, 49 KB with the fused kernel's stash 4),
// fp32 2 (its shared memory's limit, 2 x 81 KB).
template <typename T>
__host__ __device__ constexpr int fl_min_blocks()
{
	return sizeof(T) == 2 ? 4 : 2;
}

// Shared-memory layout of the flash loop: five tiles (Q, each K and V
// stage) of 64 rows of 64 elements, each row's 16-byte chunks XOR-swizzled
// by the row's low three bits: SMEM bytes in all.
template <typename T> struct fl_layout {
	static constexpr int ROW = 64 * (int)sizeof(T);  // bytes: 128 or 256
	static constexpr int TILE = ARL_BK * ROW;        // 8 or 16 KB
	static constexpr int SMEM = 5 * TILE;            // Q, K[2], V[2]: 40 or 80 KB
};

// Byte offset of chunk c (16 bytes) of row r in a swizzled tile.
template <typename T>
__device__ __forceinline__ uint32_t fl_at(int r, int c)
{
	return (uint32_t)(r * fl_layout<T>::ROW + ((c ^ (r & 7)) << 4));
}

// cp.async of rows [r0, r0 + 64) of a [S, 64] head (rows past S zero-
// filled) into the tile at dst. Thread tid copies chunk tid % CH of rows
// tid / CH + i FL_THREADS / CH: the same chunk of every row it copies, and
// (bf16) the same swizzle, since those rows are 16 apart.
template <typename T>
__device__ __forceinline__ void fl_load_tile(uint32_t dst, const T *__restrict__ src,
					     int r0, int S, int tid)
{
	constexpr int CH = 64 * sizeof(T) / 16;  // 16-byte chunks a row: 8 or 16
	constexpr int N = ARL_BK * CH / FL_THREADS;

	if (r0 + ARL_BK <= S) {
		// a whole tile (every tile but the last): one address a thread,
		// the rows FL_THREADS / CH apart at constant offsets (a multiple
		// of 8: the same swizzle), no checks
		constexpr int RS = FL_THREADS / CH;
		// tid read afresh: the few instructions of these addresses are
		// cheaper than registers held across the loop, which has none
		const int tx = (int)tid_x(), r = tx / CH, c = tx % CH;
		const uint32_t at = dst + fl_at<T>(r, c);
		const T *from = src + (size_t)(r0 + r) * 64 + c * (16 / sizeof(T));

#pragma unroll
		for (int i = 0; i < N; i++)
			cp_async16(at + i * RS * fl_layout<T>::ROW, from + i * RS * 64, 16);
		return;
	}
#pragma unroll
	for (int i = 0; i < N; i++) {
		const int q = tid + i * FL_THREADS, r = q / CH, c = q % CH;
		const bool ok = r0 + r < S;

		cp_async16(dst + fl_at<T>(r, c),
			   ok ? src + (size_t)(r0 + r) * 64 + c * (16 / sizeof(T)) : src,
			   ok ? 16 : 0);
	}
}

// s[n][i] = q . k over this warp's rows (g, g + 8) and keys 8n + 2t (+1):
// the m16n8 accumulator layout, 64 keys in 8 fragments. bf16: Q's A
// fragments qf in registers, m16n8k16. fp32: Q's from the Q tile at sq (a
// k-step's ldmatrix each tile: registers are dearer than the reads; sq
// points at this warp's 16 rows, whose swizzle is the tile's), m16n8k8 in
// 3xTF32.
template <typename T>
__device__ __forceinline__ void fl_scores(float s[FL_NT][4], const uint32_t qf[4][4],
					  uint32_t sq, uint32_t ks, int lane)
{
	constexpr int KS = 64 * (int)sizeof(T) / 32;  // k-steps over d: 4 or 8

#pragma unroll
	for (int n = 0; n < FL_NT; n++)
		s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
	for (int k = 0; k < KS; k++) {
		uint32_t a[4], al[4];

		if constexpr (sizeof(T) == 4) {
			const int r = lane & 15, c = k * 2 + (lane >> 4);

			ldsm_x4(sq + fl_at<T>(r, c), a[0], a[1], a[2], a[3]);
#pragma unroll
			for (int i = 0; i < 4; i++)
				al[i] = tf32_lo(a[i]);
		} else {
			(void)sq;
		}
#pragma unroll
		for (int p = 0; p < 4; p++) {
			const int r = p * 16 + (lane & 7) + ((lane >> 4) << 3);
			const int c = k * 2 + ((lane >> 3) & 1);
			uint32_t b0[2], b1[2];

			ldsm_x4(ks + fl_at<T>(r, c), b0[0], b0[1], b1[0], b1[1]);
			if constexpr (sizeof(T) == 2) {
				mma_bf16(s[2 * p], qf[k], b0);
				mma_bf16(s[2 * p + 1], qf[k], b1);
			} else {
				const uint32_t l0[2] = { tf32_lo(b0[0]), tf32_lo(b0[1]) };
				const uint32_t l1[2] = { tf32_lo(b1[0]), tf32_lo(b1[1]) };

				mma_3xtf32(s[2 * p], a, al, b0, l0);
				mma_3xtf32(s[2 * p + 1], a, al, b1, l1);
			}
		}
	}
}

// o += P V for one key tile: bf16 P from the probabilities in registers,
// V's fragments by ldmatrix.trans from the swizzled tile at vs.
__device__ __forceinline__ void fl_pv(float o[FL_NT][4], const float p[FL_NT][4],
				      uint32_t vs, int lane)
{
#pragma unroll
	for (int k = 0; k < 4; k++) {
		uint32_t a[4];

		a[0] = pack_bf16(p[2 * k][0], p[2 * k][1]);
		a[1] = pack_bf16(p[2 * k][2], p[2 * k][3]);
		a[2] = pack_bf16(p[2 * k + 1][0], p[2 * k + 1][1]);
		a[3] = pack_bf16(p[2 * k + 1][2], p[2 * k + 1][3]);
#pragma unroll
		for (int dp = 0; dp < 4; dp++) {
			const int r = k * 16 + (lane & 15), c = dp * 2 + (lane >> 4);
			uint32_t b0[2], b1[2];

			ldsm_x4_trans(vs + fl_at<__nv_bfloat16>(r, c), b0[0], b0[1], b1[0], b1[1]);
			mma_bf16(o[2 * dp], a, b0);
			mma_bf16(o[2 * dp + 1], a, b1);
		}
	}
}

// The fp32 form, 3xTF32: k-step n takes keys 8n + 2t (TF32 index t) and
// 8n + 2t + 1 (t + 4), the probabilities p[n] this thread holds, and V's
// rows of those keys at dims 8 dn + g (scalar reads: each row's chunk
// 2 dn + g / 4 lands, swizzled by 2t or 2t + 1, on a bank of its own).
// The tile's sum goes to a fresh partial, added to o in fp32.
__device__ __forceinline__ void fl_pv_f32(float o[FL_NT][4], const float p[FL_NT][4],
					  uint32_t vt, int lane)
{
	const int g = lane >> 2, t = lane & 3;
	float acc[FL_NT][4];

#pragma unroll
	for (int n = 0; n < FL_NT; n++)
		acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
#pragma unroll
	for (int n = 0; n < FL_NT; n++) {
		const uint32_t a[4] = { __float_as_uint(p[n][0]), __float_as_uint(p[n][2]),
					__float_as_uint(p[n][1]), __float_as_uint(p[n][3]) };
		const uint32_t al[4] = { tf32_lo(a[0]), tf32_lo(a[1]), tf32_lo(a[2]), tf32_lo(a[3]) };
		const int r = 8 * n + 2 * t;

#pragma unroll
		for (int dn = 0; dn < FL_NT; dn++) {
			const int c = 2 * dn + (g >> 2), wd = (g & 3) * 4;
			const uint32_t b[2] = { lds_u32(vt + fl_at<float>(r, c) + wd),
						lds_u32(vt + fl_at<float>(r + 1, c) + wd) };
			const uint32_t bl[2] = { tf32_lo(b[0]), tf32_lo(b[1]) };

			mma_3xtf32(acc[dn], a, al, b, bl);
		}
	}
#pragma unroll
	for (int n = 0; n < FL_NT; n++) {
		o[n][0] += acc[n][0];
		o[n][1] += acc[n][1];
		o[n][2] += acc[n][2];
		o[n][3] += acc[n][3];
	}
}

// Key tiles query tile q0 (a multiple of ARL_BQ) visits: every tile of the
// sequence, or under the causal mask those up to the one holding its last
// row's diagonal.
__device__ __forceinline__ int fl_key_tiles(int q0, int S, bool causal)
{
	const int all = (S + ARL_BK - 1) / ARL_BK;

	return causal ? min(all, q0 / ARL_BK + 1) : all;
}

// One key tile's step of the online softmax for this thread's two rows
// (row0, row0 + 8): the scores s masked where EDGE (keys past S, and past
// the row under the causal mask), the running max m (in base 2, scaled) and
// sum l updated, the accumulators o rescaled, s turned into the
// probabilities 2^(s scale_log2 - m), one FMA and the SFU's exp each. EDGE
// a template argument, so the unmasked tiles carry no compare.
template <bool CAUSAL, bool EDGE>
__device__ __forceinline__ void fl_softmax(float s[FL_NT][4], float o[FL_NT][4], float m[2],
					   float l[2], int k0, int row0, int t, int S,
					   float scale_log2)
{
	float mt[2];  // the tile's max of each row, scaled

#pragma unroll
	for (int h = 0; h < 2; h++) {
		const int row = row0 + 8 * h;
		float mx = -INFINITY;

#pragma unroll
		for (int n = 0; n < FL_NT; n++) {
#pragma unroll
			for (int e = 0; e < 2; e++) {
				const int key = k0 + 8 * n + 2 * t + e;

				if (EDGE && (key >= S || (CAUSAL && key > row)))
					s[n][2 * h + e] = -INFINITY;
				mx = fmaxf(mx, s[n][2 * h + e]);
			}
		}
		mx = fmaxf(mx, __shfl_xor_sync(FP_FULL_MASK, mx, 1));
		mx = fmaxf(mx, __shfl_xor_sync(FP_FULL_MASK, mx, 2));
		mt[h] = mx * scale_log2;  // scale_log2 > 0 keeps the order
	}
	// The running max m moves only where a row's tile max passes it by
	// more than FL_RESCALE (and then in every row of the warp, a uniform
	// branch): below that the probabilities are exps of at most
	// 2^FL_RESCALE against the kept max, which fp32 sums and bf16 P carry
	// as well as 1, and the rescaling of o and l (a multiply an output) is
	// skipped. Rows with nothing yet (m = -inf) always take it.
	if (__any_sync(FP_FULL_MASK, mt[0] > m[0] + FL_RESCALE || mt[1] > m[1] + FL_RESCALE)) {
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const float mnew = fmaxf(m[h], mt[h]);
			const float alpha = exp2_ftz(m[h] - (mnew == -INFINITY ? 0.f : mnew));

			m[h] = mnew;
			l[h] *= alpha;
#pragma unroll
			for (int n = 0; n < FL_NT; n++) {
				o[n][2 * h] *= alpha;
				o[n][2 * h + 1] *= alpha;
			}
		}
	}
#pragma unroll
	for (int h = 0; h < 2; h++) {
		const float base = m[h] == -INFINITY ? 0.f : m[h];  // a row with nothing yet
		float sum = 0.f;

#pragma unroll
		for (int n = 0; n < FL_NT; n++) {
#pragma unroll
			for (int e = 0; e < 2; e++) {
				const float p = exp2_ftz(fmaf(s[n][2 * h + e], scale_log2, -base));

				s[n][2 * h + e] = p;
				sum += p;
			}
		}
		l[h] += sum;
	}
}

// The flash loop of one head for the block's query rows [q0, q0 + 64):
// Q, K, V point at the head's [S, 64] rows. On return o holds this
// thread's outputs, rows q0 + 16 w + g (o[n][0..1]) and + 8 (o[n][2..3]),
// dims 8n + 2t (+1), already divided by the softmax sums. smem is the
// fl_layout<T>::SMEM bytes of the loop (dynamic shared memory); the block
// synchronises inside, and on return every thread is done with it. QG
// (bf16): Q's fragments come from global memory into registers and the Q
// tile (the layout's first TILE bytes) is left alone, free for the caller.
template <typename T, bool CAUSAL, bool QG = false>
__device__ __forceinline__ void flash_head(const T *__restrict__ Q, const T *__restrict__ K,
					   const T *__restrict__ V, int S, int q0,
					   float scale_log2, unsigned char *smem,
					   float o[FL_NT][4])
{
	using L = fl_layout<T>;
	constexpr bool BF = sizeof(T) == 2;
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
	const int g = lane >> 2, t = lane & 3;
	const uint32_t sq = smem_u32(smem), sk = sq + L::TILE, sv = sq + 3 * L::TILE;
	const int nkt = fl_key_tiles(q0, S, CAUSAL);
	const int row0 = q0 + w * 16 + g;  // this thread's rows: row0, row0 + 8
	float m[2] = { -INFINITY, -INFINITY }, l[2] = { 0.f, 0.f };
	uint32_t qf[4][4];

	static_assert(!QG || BF, "Q fragments from global memory: bf16 only");
	if constexpr (QG) {
		// Q's A fragments straight from global memory (rows past S zero):
		// the Q tile's shared memory is not touched
		const int ra = row0, rb = row0 + 8;
#pragma unroll
		for (int k = 0; k < 4; k++) {
			const T *c = Q + 16 * k + 2 * t;

			qf[k][0] = ra < S ? *(const uint32_t *)(c + (size_t)ra * 64) : 0u;
			qf[k][1] = rb < S ? *(const uint32_t *)(c + (size_t)rb * 64) : 0u;
			qf[k][2] = ra < S ? *(const uint32_t *)(c + (size_t)ra * 64 + 8) : 0u;
			qf[k][3] = rb < S ? *(const uint32_t *)(c + (size_t)rb * 64 + 8) : 0u;
		}
	} else {
		fl_load_tile<T>(sq, Q, q0, S, tid);
	}
	fl_load_tile<T>(sk, K, 0, S, tid);
	fl_load_tile<T>(sv, V, 0, S, tid);
	cp_async_commit();
#pragma unroll
	for (int n = 0; n < FL_NT; n++)
		o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;

	for (int j = 0; j < nkt; j++) {
		const int st = j & 1;
		float s[FL_NT][4];

		if (j + 1 < nkt) {
			fl_load_tile<T>(sk + (st ^ 1) * L::TILE, K, (j + 1) * ARL_BK, S, tid);
			fl_load_tile<T>(sv + (st ^ 1) * L::TILE, V, (j + 1) * ARL_BK, S, tid);
		}
		cp_async_commit();
		cp_async_wait<1>();  // tile j (and Q) landed for this thread
		__syncthreads();     // ... and for every thread
		if constexpr (BF) {
			if (!QG && j == 0) {
#pragma unroll
				for (int k = 0; k < 4; k++) {
					const int r = w * 16 + (lane & 15), c = k * 2 + (lane >> 4);

					ldsm_x4(sq + fl_at<T>(r, c),
						qf[k][0], qf[k][1], qf[k][2], qf[k][3]);
				}
			}
		}
		fl_scores<T>(s, qf, sq + w * 16 * L::ROW, sk + st * L::TILE, lane);

		// Masks (the tile past S, and the diagonal tile under causal),
		// then the online softmax in base 2; the tiles without a masked
		// key (all but one or two) take the form without the mask's
		// compares.
		const int k0 = j * ARL_BK;
		if (k0 + ARL_BK > S || (CAUSAL && k0 + ARL_BK > q0))
			fl_softmax<CAUSAL, true>(s, o, m, l, k0, row0, t, S, scale_log2);
		else
			fl_softmax<CAUSAL, false>(s, o, m, l, k0, row0, t, S, scale_log2);
		if constexpr (BF)
			fl_pv(o, s, sv + st * L::TILE, lane);
		else
			fl_pv_f32(o, s, sv + st * L::TILE, lane);
		__syncthreads();  // stage st is free for tile j + 2
	}
#pragma unroll
	for (int h = 0; h < 2; h++) {
		float sum = l[h];

		sum += __shfl_xor_sync(FP_FULL_MASK, sum, 1);
		sum += __shfl_xor_sync(FP_FULL_MASK, sum, 2);
		const float inv = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
		for (int n = 0; n < FL_NT; n++) {
			o[n][2 * h] *= inv;
			o[n][2 * h + 1] *= inv;
		}
	}
}

#endif
