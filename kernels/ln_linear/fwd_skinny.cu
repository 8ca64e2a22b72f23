// fwd_skinny.cu - the fused bf16 forward for few rows (up to 64) on the
// tensor cores with the GEMM's operands swapped, k_fwd_skinny up to 16
// rows and k_fwd_skinny_res (below) from 17. k_fwd_skinny computes
// y^T = W' x~^T, W' (N x K) the MMA's A operand and x~ (M x K) its B, so
// an m16n8k16 fragment multiplies 16 rows of W' by 8 rows of x. The
// 64 x 128 tile of k_fwd_fused_mma spends its multiplies on 64 rows of x
// where a decode step has 8 (the tiles' rows past M are zeros that still
// go through the tensor cores and the ring), and its slices of K meet in
// fp32 partials in DRAM and a second kernel (bench/RESULTS.md, issue #25:
// 1.2-1.7x LayerNorm + cuBLASLt at 8 to 64 rows of 3072 -> 9216).
//
// A block of BW / 16 warps takes BW rows of W' (each warp 16: one A
// fragment) against all MP rows of x (MP = M rounded up to 8: MP / 8
// B fragments), k-tiles of 64 columns through a ring of SK_STAGES cp.async
// stages, 128-byte rows XOR-swizzled for ldmatrix. x~ = x - c (c = x[m][0],
// as in every fused kernel of this workload: the statistics stay exact
// near a large mean) is formed on the B fragments; warp w also sums x~ and
// x~^2 of fragments w, w + BW / 16, ... (the row statistics, spread over
// the warps; past K the tile is zero, so x~ = -c there: masked).
//
// Slices of K: the C blocks of one W' tile are a thread-block cluster (C
// up to 8, the portable size), each slice one rank. Each leaves its
// accumulators and its statistics' sums in its own shared memory; after a
// cluster barrier every rank merges the statistics of all MP rows (ranks
// added in rank order) and finishes 1/C of the tile's outputs, adding the
// C slices' sums through distributed shared memory in rank order: the same
// bits every run, and no partials in DRAM, no second kernel. Epilogue
// y = rstd (acc - (mean - c) s) + b', s and b' from the fold (FlashNorm).
// W' may be in perm32's order (op->wperm, the library's fold): row j then
// holds output column perm32(j).
#include "config.h"

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "internal.h"

namespace cg = cooperative_groups;

#define SK_STAGES 4
#define SK_BW LNL_SKINNY_BW

// Dynamic shared memory of k_fwd_skinny<BW, MP>: the ring, which the
// accumulators' exchange reuses.
#define SK_SMEM(BW, MP) (SK_STAGES * ((BW) + (MP)) * 128)

// cp.async of one k-tile (columns k0 .. k0 + 63) of ROWS rows from r0 of a
// row-major bf16 tensor (rows K long) into the swizzled tile at dst, zero-
// filled past row lim and column K.
template <int ROWS, int NT>
__device__ __forceinline__ void sk_copy(uint32_t dst, const __nv_bfloat16 *__restrict__ src,
					long r0, long lim, int K, int k0, int tid)
{
	// Thread tid copies chunk tid % 8 of rows tid / 8, + NT / 8, ...: the
	// same column and (NT / 8 a multiple of 8) the same swizzle each time.
	constexpr int RPI = NT / 8;
	static_assert(NT % 64 == 0, "rows a pass a multiple of 8");
	const int ch = tid & 7, rt = tid >> 3, k = k0 + ch * 8;
	const bool kok = k < K;
	const __nv_bfloat16 *p = src + (r0 + rt) * (long)K + k;
	const uint32_t d = dst + rt * 128 + ((ch ^ (rt & 7)) << 4);

#pragma unroll
	for (int i = 0; i < (ROWS + RPI - 1) / RPI; i++) {
		if (ROWS % RPI != 0 && rt + i * RPI >= ROWS)
			break;
		const bool ok = kok && r0 + rt + i * RPI < lim;

		cp_async16(d + i * RPI * 128, ok ? p + (long)i * RPI * K : src, ok ? 16 : 0);
	}
}

// The float4 at red in each of the cluster's C blocks, added in rank order
// (every load in flight first): the same bits every run.
__device__ __forceinline__ float4 sk_slices_sum(cg::cluster_group &cl, const float4 *red, int C)
{
	float4 v = make_float4(0.f, 0.f, 0.f, 0.f), pq[LNL_SKINNY_MAX_SPLITS];

#pragma unroll
	for (int q = 0; q < LNL_SKINNY_MAX_SPLITS; q++)
		if (q < C)
			pq[q] = *cl.map_shared_rank(red, q);
#pragma unroll
	for (int q = 0; q < LNL_SKINNY_MAX_SPLITS; q++) {
		if (q < C) {
			v.x += pq[q].x;
			v.y += pq[q].y;
			v.z += pq[q].z;
			v.w += pq[q].w;
		}
	}
	return v;
}

// Every rank: mean - c and rstd of x's rows 0 .. MP - 1 from the C
// slices' sums (st_sum in each rank's shared memory), added in rank order.
template <int MP, int NT>
__device__ __forceinline__ void sk_merge_stats(cg::cluster_group &cl, float2 *st_sum, int C, int K,
					       int tid, float *st_mt, float *st_rs)
{
	for (int r = tid; r < MP; r += NT) {
		float a1 = 0.f, a2 = 0.f;

		for (int q = 0; q < C; q++) {
			const float2 p = *cl.map_shared_rank(st_sum + r, q);

			a1 += p.x;
			a2 += p.y;
		}
		shifted_stats(a1, a2, K, &st_mt[r], &st_rs[r]);
	}
}

// The epilogue of one float4 of a tile's sums: W' rows wr (.x, .y) and
// wr + 8 (.z, .w), x rows m (.x, .z) and m + 1 (.y, .w); y = rstd (acc -
// (mean - c) s) + b', rows of W' past wrows, columns past N and rows of x
// past M left out. W' row j holds column perm32(j) where wperm says.
__device__ __forceinline__ void sk_store(__nv_bfloat16 *__restrict__ y, float4 v, long wr, int m,
					 int M, int N, long wrows, int wperm,
					 const float *__restrict__ sW, const float *__restrict__ bf,
					 const float *st_mt, const float *st_rs)
{
	const float e[2][2] = { { v.x, v.y }, { v.z, v.w } };

#pragma unroll
	for (int h = 0; h < 2; h++) {
		const long col = wperm ? perm32(wr + 8 * h) : wr + 8 * h;

		if (wr + 8 * h >= wrows || col >= N)
			continue;
		const float sc = sW[col], bc = bf[col];
#pragma unroll
		for (int d = 0; d < 2; d++) {
			if (m + d < M)
				y[(long)(m + d) * N + col] = __float2bfloat16_rn(
					st_rs[m + d] * (e[h][d] - st_mt[m + d] * sc) + bc);
		}
	}
}

template <int BW, int MP>
__global__ void __launch_bounds__(2 * BW)
k_fwd_skinny(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ Wf,
	     const float *__restrict__ sW, const float *__restrict__ bf,
	     __nv_bfloat16 *__restrict__ y, int M, int K, int N, long wrows, int kchunk,
	     int wperm)
{
	constexpr int NT = 2 * BW, NW = BW / 16, NF = MP / 8, STAGE = (BW + MP) * 128;
	static_assert(MP % 8 == 0 && MP <= 64 && BW % 16 == 0, "tile");
	static_assert(NF * NT * 16 <= SK_SMEM(BW, MP), "the exchange fits the ring");
	unsigned char *smem = dyn_smem();
	__shared__ float2 st_sum[MP];  // this slice's (sum x~, sum x~^2) a row
	__shared__ float st_mt[MP], st_rs[MP];
	cg::cluster_group cl = cg::this_cluster();
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, g = lane >> 2, t = lane & 3;
	const int C = (int)cluster_nctarank(), rank = (int)cluster_ctarank();
	const long n0 = (long)blockIdx.x * BW;
	const int KT = (K + LNL_KTILE - 1) / LNL_KTILE;
	const int kb = rank * kchunk, ke = min(KT, kb + kchunk), NKT = ke - kb;
	const uint32_t sbase = smem_u32(smem);
	uint32_t piv[NF];       // c of x row 8 j + g, as bf16x2 (c, c)
	float acc[NF][4], s1[NF], s2[NF];

	auto load_tile = [&](int stage, int kt) {
		const uint32_t sa = sbase + stage * STAGE;

		sk_copy<BW, NT>(sa, Wf, n0, wrows, K, kt * LNL_KTILE, tid);
		sk_copy<MP, NT>(sa + BW * 128, x, 0, M, K, kt * LNL_KTILE, tid);
	};

#pragma unroll
	for (int s = 0; s < SK_STAGES - 1; s++) {
		if (s < NKT)
			load_tile(s, kb + s);
		cp_async_commit();
	}
#pragma unroll
	for (int j = 0; j < NF; j++) {
		const int r = 8 * j + g;
		const __nv_bfloat16 c = r < M ? x[(long)r * K] : __float2bfloat16_rn(0.f);
		const __nv_bfloat162 cc = __halves2bfloat162(c, c);

		piv[j] = *(const uint32_t *)&cc;
		s1[j] = s2[j] = 0.f;
		acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
	}

	for (int lk = 0; lk < NKT; lk++) {
		const int kt = kb + lk;

		cp_async_wait<SK_STAGES - 2>();
		__syncthreads();  // tile kt landed for all; stage lk - 1 is free
		if (lk + SK_STAGES - 1 < NKT)
			load_tile((lk + SK_STAGES - 1) % SK_STAGES, kt + SK_STAGES - 1);
		cp_async_commit();

		const uint32_t sw = sbase + (lk % SK_STAGES) * STAGE, sx = sw + BW * 128;
		const int kleft = K - kt * LNL_KTILE;  // under 64 in a last, partial tile

#pragma unroll
		for (int ks = 0; ks < 4; ks++) {
			uint32_t a[4], b[NF][2];

			{
				const int r = w * 16 + (lane & 15), ch = ks * 2 + (lane >> 4);

				ldsm_x4(sw + r * 128 + ((ch ^ (r & 7)) << 4), a[0], a[1], a[2], a[3]);
			}
			if constexpr (NF == 1) {
				// rows 0-7 only: lanes 0-7 and 8-15 address the two chunks
				const int r = lane & 7, ch = ks * 2 + ((lane >> 3) & 1);
				uint32_t u0, u1, u2, u3;

				ldsm_x4(sx + r * 128 + ((ch ^ (r & 7)) << 4), u0, u1, u2, u3);
				b[0][0] = u0;
				b[0][1] = u1;
				(void)u2;
				(void)u3;
			} else {
#pragma unroll
				for (int p = 0; p < NF / 2; p++) {
					const int r = p * 16 + (lane & 7) + ((lane >> 4) << 3);
					const int ch = ks * 2 + ((lane >> 3) & 1);

					ldsm_x4(sx + r * 128 + ((ch ^ (r & 7)) << 4), b[2 * p][0],
						b[2 * p][1], b[2 * p + 1][0], b[2 * p + 1][1]);
				}
			}
			// b[j][0]: columns 16 ks + 2t (+1) of x row 8 j + g; b[j][1]:
			// 8 columns on. x~ = x - c, then (warp 0) the sums.
#pragma unroll
			for (int j = 0; j < NF; j++) {
				b[j][0] = bsub2(b[j][0], piv[j]);
				b[j][1] = bsub2(b[j][1], piv[j]);
			}
			{
				const int kc = ks * 16 + 2 * t;
				const bool lo = kc < kleft, hi = kc + 8 < kleft;

#pragma unroll
				for (int j = 0; j < NF; j++) {
					if (j % NW != w)
						continue;
					if (lo)
						stats2(b[j][0], s1[j], s2[j]);
					if (hi)
						stats2(b[j][1], s1[j], s2[j]);
				}
			}
#pragma unroll
			for (int j = 0; j < NF; j++)
				mma_bf16(acc[j], a, b[j]);
		}
	}
	cp_async_wait<0>();
	__syncthreads();  // every warp is done with the ring

	// This slice's statistics (warp j % NW has fragment j's; a row's sums over the quad's t) and
	// accumulators (thread-major float4s: a thread's j-th at j NT + tid)
	// where the other ranks read them.
#pragma unroll
	for (int j = 0; j < NF; j++) {
		if (j % NW == w) {
			float a1 = s1[j], a2 = s2[j];

			a1 += __shfl_xor_sync(FP_FULL_MASK, a1, 1);
			a2 += __shfl_xor_sync(FP_FULL_MASK, a2, 1);
			a1 += __shfl_xor_sync(FP_FULL_MASK, a1, 2);
			a2 += __shfl_xor_sync(FP_FULL_MASK, a2, 2);
			if (t == 0)
				st_sum[8 * j + g] = make_float2(a1, a2);
		}
	}
	float4 *red = (float4 *)smem;
#pragma unroll
	for (int j = 0; j < NF; j++)
		red[j * NT + tid] = make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]);
	cl.sync();

	sk_merge_stats<MP, NT>(cl, st_sum, C, K, tid, st_mt, st_rs);
	__syncthreads();

	// This rank's share of the tile's float4s: the C slices added in rank
	// order, then the epilogue. Float4 u is thread u % NT's j = u / NT:
	// W' rows n0 + 16 w + g (.x, .y) and + 8 (.z, .w), x rows 8 j + 2t
	// (.x, .z) and + 1 (.y, .w).
	const int U = NF * NT, lo = rank * U / C, hi = (rank + 1) * U / C;
	for (int u = lo + tid; u < hi; u += NT) {
		const int to = u % NT, j = u / NT, lo_ = to & 31;

		sk_store(y, sk_slices_sum(cl, red + u, C), n0 + (to >> 5) * 16 + (lo_ >> 2),
			 8 * j + 2 * (lo_ & 3), M, N, wrows, wperm, sW, bf, st_mt, st_rs);
	}
	cl.sync();  // no rank leaves while another reads its shared memory
}

// The two halves of a cluster barrier, apart: arrive (release: this
// thread's shared-memory writes before it are seen by every rank past its
// wait), and wait (acquire) for every thread of the cluster's arrival.
__device__ __forceinline__ void cluster_arrive(void)
{
	asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
}

__device__ __forceinline__ void cluster_wait(void)
{
	asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

// ---------------------------------------------------------------------------
// k_fwd_skinny_res: x's slice of K resident in shared memory, shifted and
// summed once; the ring streams W' alone, tile after tile.
//
// At 64 rows k_fwd_skinny's ring carried as many bytes of x as of W', and
// every warp shifted and summed the same x fragments again (it lost to the
// split-K kernel from 32 rows). Here a cluster = C blocks, one slice of K
// each (rank order), one block an SM; grid.x = G clusters, cluster g
// taking W''s tiles g, g + G, ... (SR_BW rows each), its ring running on
// from one tile into the next: thread 0 issues each stage's TMA copy, an
// mbarrier a stage says it landed, a block barrier a k-tile says the stage
// before is free (TMA beat every thread's cp.async by 5-8 % from 3072
// wide, lost 2-3 % at 1000-2048: bench/RESULTS.md, session 21; its
// instruction stream is the lighter). Each block first loads its slice of x
// (MP rows, zeros past M and K), shifts it in place (x~ = x - c, 0 past K)
// and sums it, TPR threads a row; the ranks' sums meet once, in rank
// order. A block of NA XS warps (NA = SR_BW / 16 / NAF): warp w takes NAF
// A fragments (16 rows of W' each) from row 16 NAF (w % NA) of the tile
// against x group w / NA (MP / XS rows, NFW B fragments, ldmatrix'd from
// the resident slice as they are). At a tile's end each block leaves its
// sums in one of two buffers and arrives on the cluster barrier; it waits
// on that barrier only after its next tile's loop, then adds its 1/C of
// the finished tile over the slices in rank order (deterministic) and
// stores y.
#define SR_BW LNL_SKINNY_RES_BW
#define SR_STAGE (SR_BW * 128)

template <int MP, int XS, int NAF>
__global__ void __launch_bounds__(SR_BW / 16 / NAF * XS * 32, 1)
k_fwd_skinny_res(const __nv_bfloat16 *__restrict__ x, const float *__restrict__ sW,
		 const float *__restrict__ bf,
		 __nv_bfloat16 *__restrict__ y, int M, int K, int N, long wrows, int kchunk,
		 int tiles, int wperm, const __grid_constant__ CUtensorMap tw)
{
	constexpr int NA = SR_BW / 16 / NAF, NT = 32 * NA * XS, NFW = MP / 8 / XS, NJ = NAF * NFW;
	constexpr int TPR = NT / MP;
	constexpr int ST = LNL_SKINNY_RES_STAGES(MP);
	static_assert(MP % (8 * XS) == 0 && (NFW == 1 || NFW % 2 == 0), "fragments");
	static_assert(TPR >= 1 && TPR <= 32 && (TPR & (TPR - 1)) == 0, "threads a row");
	unsigned char *smem = dyn_smem();
	__shared__ float2 st_sum[MP];
	__shared__ float st_mt[MP], st_rs[MP];
	__shared__ __align__(8) uint64_t full[ST];  // stage s landed
	cg::cluster_group cl = cg::this_cluster();
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
	const int wa = w % NA, f0 = w / NA * NFW;
	const uint32_t fb = smem_u32(full);
	const int C = (int)cluster_nctarank(), rank = (int)cluster_ctarank();
	const int G = (int)gridDim.x, grp = (int)blockIdx.x;
	const int KT = (K + LNL_KTILE - 1) / LNL_KTILE;
	const int kb = rank * kchunk, NKT = min(KT, kb + kchunk) - kb;
	const int ntile = (tiles - grp + G - 1) / G, S = ntile * NKT;
	// The ring 1024-aligned (TMA's 128-byte swizzle repeats every 8 rows).
	const uint32_t sbase = smem_u32(smem), ring = (sbase + 1023) & ~1023u;
	const uint32_t xs = ring + ST * SR_STAGE;
	float4 *const red0 =
		(float4 *)(smem + (ring - sbase) + ST * SR_STAGE + (size_t)kchunk * MP * 128);

	// W' of step (tile step / NKT, k-tile step % NKT) into its stage, by
	// TMA from thread 0 (zeros past wrows and K).
	auto load_w = [&](int step) {
		const int i = step / NKT, lk = step % NKT, s = step % ST;
		const long n0 = (long)(grp + i * G) * SR_BW;

		mbar_expect(fb + 8 * s, SR_STAGE);
		tma_load(ring + s * SR_STAGE, &tw, (kb + lk) * LNL_KTILE, (int)n0, fb + 8 * s);
	};

	if (tid == 0) {
		for (int s = 0; s < ST; s++)
			mbar_init(fb + 8 * s, 1);
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads();
	// x's slice (cp.async, every thread), then the ring's first stages.
	for (int lk = 0; lk < NKT; lk++)
		sk_copy<MP, NT>(xs + lk * MP * 128, x, 0, M, K, (kb + lk) * LNL_KTILE, tid);
	cp_async_commit();
#pragma unroll
	for (int s = 0; s < ST - 1; s++)
		if (s < S && tid == 0)
			load_w(s);
	cp_async_wait<0>();
	__syncthreads();

	// x~ = x - c in place (0 past K), and the slice's sums: TPR threads a
	// row, adjacent lanes, added in a fixed order.
	{
		const int r = tid / TPR, sub = tid % TPR;
		const __nv_bfloat16 c = r < M ? x[(long)r * K] : __float2bfloat16_rn(0.f);
		const __nv_bfloat162 cc = __halves2bfloat162(c, c);
		const uint32_t cu = *(const uint32_t *)&cc;
		float a1 = 0.f, a2 = 0.f;

		for (int q = sub; q < NKT * 8; q += TPR) {
			const int lk = q >> 3, ch = q & 7;
			uint4 *p = (uint4 *)(smem + (xs - sbase) + lk * MP * 128 + r * 128 +
					     ((ch ^ (r & 7)) << 4));

			if ((kb + lk) * LNL_KTILE + ch * 8 < K) {
				uint4 v = *p;

				v.x = bsub2(v.x, cu);
				v.y = bsub2(v.y, cu);
				v.z = bsub2(v.z, cu);
				v.w = bsub2(v.w, cu);
				stats2(v.x, a1, a2);
				stats2(v.y, a1, a2);
				stats2(v.z, a1, a2);
				stats2(v.w, a1, a2);
				*p = v;
			} else {
				*p = make_uint4(0, 0, 0, 0);
			}
		}
#pragma unroll
		for (int o = 1; o < TPR; o <<= 1) {
			a1 += __shfl_xor_sync(FP_FULL_MASK, a1, o);
			a2 += __shfl_xor_sync(FP_FULL_MASK, a2, o);
		}
		if (sub == 0)
			st_sum[r] = make_float2(a1, a2);
	}
	cl.sync();
	sk_merge_stats<MP, NT>(cl, st_sum, C, K, tid, st_mt, st_rs);

	// This rank's share of tile ti's sums: the C slices added in rank
	// order, then the epilogue.
	auto reduce = [&](int ti) {
		const float4 *const red = red0 + (ti & 1) * NJ * NT;
		const long n0 = (long)(grp + ti * G) * SR_BW;
		const int U = NJ * NT, lo = rank * U / C, hi = (rank + 1) * U / C;

		for (int u = lo + tid; u < hi; u += NT) {
			const int to = u % NT, j = u / NT, lo_ = to & 31, wo = to >> 5;

			sk_store(y, sk_slices_sum(cl, red + u, C),
				 n0 + ((wo % NA) * NAF + j / NFW) * 16 + (lo_ >> 2),
				 8 * (wo / NA * NFW + j % NFW) + 2 * (lo_ & 3), M, N, wrows, wperm, sW,
				 bf, st_mt, st_rs);
		}
	};

	for (int i = 0; i < ntile; i++) {
		float acc[NAF][NFW][4];

#pragma unroll
		for (int a = 0; a < NAF; a++)
#pragma unroll
			for (int j = 0; j < NFW; j++)
				acc[a][j][0] = acc[a][j][1] = acc[a][j][2] = acc[a][j][3] = 0.f;

		for (int lk = 0; lk < NKT; lk++) {
			const int step = i * NKT + lk;

			__syncthreads();  // every warp is done with step - 1's stage
			if (tid == 0 && step + ST - 1 < S)
				load_w(step + ST - 1);
			mbar_wait(fb + 8 * (step % ST), step / ST & 1);

			const uint32_t sw = ring + (step % ST) * SR_STAGE, sx = xs + lk * MP * 128;

#pragma unroll
			for (int ks = 0; ks < 4; ks++) {
				uint32_t A[NAF][4], b[NFW][2];

#pragma unroll
				for (int a = 0; a < NAF; a++) {
					const int r = (wa * NAF + a) * 16 + (lane & 15);
					const int ch = ks * 2 + (lane >> 4);

					ldsm_x4(sw + r * 128 + ((ch ^ (r & 7)) << 4), A[a][0], A[a][1],
						A[a][2], A[a][3]);
				}
				if constexpr (NFW == 1) {
					const int r = 8 * f0 + (lane & 7), ch = ks * 2 + ((lane >> 3) & 1);
					uint32_t u2, u3;

					ldsm_x4(sx + r * 128 + ((ch ^ (r & 7)) << 4), b[0][0], b[0][1], u2,
						u3);
					(void)u2;
					(void)u3;
				} else {
#pragma unroll
					for (int p = 0; p < NFW / 2; p++) {
						const int r = 8 * f0 + p * 16 + (lane & 7) + ((lane >> 4) << 3);
						const int ch = ks * 2 + ((lane >> 3) & 1);

						ldsm_x4(sx + r * 128 + ((ch ^ (r & 7)) << 4), b[2 * p][0],
							b[2 * p][1], b[2 * p + 1][0], b[2 * p + 1][1]);
					}
				}
#pragma unroll
				for (int a = 0; a < NAF; a++)
#pragma unroll
					for (int j = 0; j < NFW; j++)
						mma_bf16(acc[a][j], A[a], b[j]);
			}
		}

		// The tile's sums where the other ranks read them (float4 j =
		// a NFW + f of thread tid at j NT + tid; two buffers, tiles
		// alternating); the last tile's share reduced first, once every
		// rank has arrived (its arrival overlapped this tile's loop).
		if (i > 0) {
			cluster_wait();
			reduce(i - 1);
		}
		float4 *const red = red0 + (i & 1) * NJ * NT;
#pragma unroll
		for (int a = 0; a < NAF; a++)
#pragma unroll
			for (int j = 0; j < NFW; j++)
				red[(a * NFW + j) * NT + tid] =
					make_float4(acc[a][j][0], acc[a][j][1], acc[a][j][2], acc[a][j][3]);
		// Buffer i & 1 was last read (tile i - 2) by every rank before
		// its arrival for tile i - 1, which the wait above waited for.
		cluster_arrive();
	}
	cluster_wait();
	if (ntile > 0)
		reduce(ntile - 1);
	cluster_arrive();
	cluster_wait();  // no rank leaves while another reads its shared memory
}

// ---------------------------------------------------------------------------
// Launchers

#define SK_THREADS (2 * SK_BW)
#define SK_SMEM_MP(MP) SK_SMEM(SK_BW, MP)

// The resident kernel for x's rows rounded up to mp: 32 rows or fewer a
// warp per 16 rows of W' (more warps: 31.4 against 32.6 µs at 32 rows of
// 3072 -> 9216, H100), 64 with two A fragments a warp and x in two groups
// (39.6 against 43.4); bench/RESULTS.md, session 21.
struct sr_kern {
	int mp, threads;
	const void *fn;
};

#define SR_KERN(MP, XS, NAF) \
	{ MP, LNL_SKINNY_RES_BW / 16 / (NAF) * (XS) * 32, \
	  (const void *)k_fwd_skinny_res<MP, XS, NAF> }

static const struct sr_kern sr_kerns[] = { SR_KERN(32, 1, 1), SR_KERN(64, 2, 2) };

// What fwd_skinny_setup learnt of the device: the resident kernel's most
// dynamic shared memory a block, and its clusters of c blocks the device
// runs at once (one block an SM: the GPCs' sizes decide).
static size_t sr_smem_max;
static int sr_clusters[LNL_SKINNY_MAX_SPLITS + 1];

static const struct sr_kern *sr_kern(long M)
{
	return &sr_kerns[lnl_skinny_res_mp(M) <= 32 ? 0 : 1];
}

int fwd_skinny_setup(void)
{
	static int done;
	int dev, optin;

	if (done)
		return 0;
	if (CUDA_CHECK(cudaFuncSetAttribute(k_fwd_skinny<SK_BW, 8>,
					    cudaFuncAttributeMaxDynamicSharedMemorySize,
					    SK_SMEM_MP(8))) ||
	    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_skinny<SK_BW, 16>,
					    cudaFuncAttributeMaxDynamicSharedMemorySize,
					    SK_SMEM_MP(16))) ||
	    CUDA_CHECK(cudaGetDevice(&dev)) ||
	    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)))
		return -1;
	sr_smem_max = (size_t)optin;
	for (size_t i = 0; i < sizeof sr_kerns / sizeof sr_kerns[0]; i++) {
		cudaFuncAttributes fa;
		int dyn;

		if (CUDA_CHECK(cudaFuncGetAttributes(&fa, sr_kerns[i].fn)))
			return -1;
		dyn = optin - (int)fa.sharedSizeBytes;
		if (dyn < 1 || CUDA_CHECK(cudaFuncSetAttribute(sr_kerns[i].fn,
					cudaFuncAttributeMaxDynamicSharedMemorySize, dyn)))
			return -1;
		if ((size_t)dyn < sr_smem_max)
			sr_smem_max = (size_t)dyn;
	}
	for (int c = 1; c <= LNL_SKINNY_MAX_SPLITS; c++) {
		cudaLaunchConfig_t cfg;
		cudaLaunchAttribute attr;

		cluster_config(&cfg, &attr, 1, (unsigned)c, (unsigned)sr_kerns[1].threads,
			       lnl_skinny_res_smem(64, 1), 0);
		cfg.gridDim.y = (unsigned)c;
		attr.val.clusterDim.x = 1;
		attr.val.clusterDim.y = (unsigned)c;
		if (CUDA_CHECK(cudaOccupancyMaxActiveClusters(&sr_clusters[c], sr_kerns[1].fn,
							      &cfg)))
			return -1;
	}
	done = 1;
	return 0;
}

int fwd_skinny_slots(long M, int sms, long *slots)
{
	int n = 0;

	if (CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
		    &n, M <= 8 ? (const void *)k_fwd_skinny<SK_BW, 8>
			       : (const void *)k_fwd_skinny<SK_BW, 16>,
		    SK_THREADS, SK_SMEM_MP(M <= 8 ? 8 : 16))))
		return -1;
	*slots = (long)n * sms;
	return 0;
}

int fwd_skinny_res_plan(long M, long K, long Nw, enum fp_dtype dt, int *slices, int *groups)
{
	return lnl_fwd_skinny_res(M, K, Nw, dt, sr_clusters, sr_smem_max, slices, groups);
}

// One launch over slices of K in clusters along y, as either kernel cuts
// them (kchunk k-tiles each, none empty).
static int sk_launch(const void *fn, const struct lnl_op *op, const void *xv, unsigned gx,
		     unsigned threads, size_t smem, int kchunk, int extra, const CUtensorMap *tw,
		     cudaStream_t st)
{
	const long wrows = op->wperm ? op->Np : op->N;
	const int KT = lnl_ktiles(op->K, op->dt), splits = (KT + kchunk - 1) / kchunk;
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)xv;
	const __nv_bfloat16 *Wf = (const __nv_bfloat16 *)op->Wf;
	const float *sW = (const float *)op->sW, *bf = (const float *)op->bf;
	__nv_bfloat16 *y = (__nv_bfloat16 *)op->y;
	int M = (int)op->M, K = (int)op->K, N = (int)op->N, wperm = op->wperm;
	void *args_sk[] = { &x, &Wf, &sW, &bf, &y, &M, &K, &N, (void *)&wrows, &kchunk, &wperm };
	void *args_sr[] = { &x, &sW, &bf, &y, &M, &K, &N, (void *)&wrows, &kchunk, &extra, &wperm,
			    (void *)tw };
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute attr;

	cluster_config(&cfg, &attr, 1, gx, threads, smem, st);
	cfg.gridDim.y = (unsigned)splits;
	attr.val.clusterDim.x = 1;
	attr.val.clusterDim.y = (unsigned)splits;
	return CUDA_CHECK(cudaLaunchKernelExC(&cfg, fn, op->fk == FK_SKINNY_RES ? args_sr : args_sk));
}

int fwd_skinny_launch(const struct lnl_op *op, const void *x, cudaStream_t st)
{
	const long wrows = op->wperm ? op->Np : op->N;
	const int KT = lnl_ktiles(op->K, op->dt);
	const int kchunk = (KT + op->splits - 1) / op->splits;

	if (op->dt != FP_BF16 || op->splits < 1 || op->splits > LNL_SKINNY_MAX_SPLITS ||
	    op->M > (op->fk == FK_SKINNY_RES ? LNL_SKINNY_RES_MAX_M : LNL_SKINNY_MAX_M))
		return error("ln_linear_fwd: no skinny kernel for %ld rows of this dtype in %d "
			     "slices", op->M, op->splits);
	if (op->fk == FK_SKINNY_RES) {
		const struct sr_kern *k = sr_kern(op->M);
		const int tiles = (int)((wrows + LNL_SKINNY_RES_BW - 1) / LNL_SKINNY_RES_BW);
		CUtensorMap tw;

		if (lnl_tma_map(&tw, op->Wf, op->K, wrows, LNL_SKINNY_RES_BW))
			return -1;
		return sk_launch(k->fn, op, x, (unsigned)op->sgroups, (unsigned)k->threads,
				 lnl_skinny_res_smem(k->mp, kchunk), kchunk, tiles, &tw, st);
	}
	return sk_launch(op->M <= 8 ? (const void *)k_fwd_skinny<SK_BW, 8>
				    : (const void *)k_fwd_skinny<SK_BW, 16>,
			 op, x, (unsigned)((wrows + SK_BW - 1) / SK_BW), SK_THREADS,
			 SK_SMEM_MP(op->M <= 8 ? 8 : 16), kchunk, 0, NULL, st);
}
