// skinny.cuh - the skinny forward's device pieces that its kernels share
// (fwd_skinny.cu; the wgmma form of the resident kernel in fwd_skinny_wg.cu):
// the k-tile copy, the slices' sum and the epilogue's store, the split
// cluster barrier, and the x-resident kernel's body over a multiply policy
// (mma.sync here; wgmma where sm_90a is built). See fwd_skinny.cu for
// how they work together.
#ifndef FUSEPROF_LNL_SKINNY_CUH
#define FUSEPROF_LNL_SKINNY_CUH

#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_bf16.h>

#include "internal.h"

namespace cg = cooperative_groups;

// cp.async of one k-tile (columns k0 .. k0 + 63) of ROWS rows from r0 of a
// row-major bf16 tensor (rows K long, ld elements apart) into the swizzled
// tile at dst, zero-filled past row lim and column K.
template <int ROWS, int NT>
__device__ __forceinline__ void sk_copy(uint32_t dst, const __nv_bfloat16 *__restrict__ src,
					long r0, long lim, int K, long ld, int k0, int tid)
{
	// Thread tid copies chunk tid % 8 of rows tid / 8, + NT / 8, ...: the
	// same column and (NT / 8 a multiple of 8) the same swizzle each time.
	constexpr int RPI = NT / 8;
	static_assert(NT % 64 == 0, "rows a pass a multiple of 8");
	const int ch = tid & 7, rt = tid >> 3, k = k0 + ch * 8;
	const bool kok = k < K;
	const __nv_bfloat16 *p = src + (r0 + rt) * ld + k;
	const uint32_t d = dst + rt * 128 + ((ch ^ (rt & 7)) << 4);

#pragma unroll
	for (int i = 0; i < (ROWS + RPI - 1) / RPI; i++) {
		if (ROWS % RPI != 0 && rt + i * RPI >= ROWS)
			break;
		const bool ok = kok && r0 + rt + i * RPI < lim;

		cp_async16(d + i * RPI * 128, ok ? p + (long)i * RPI * ld : src, ok ? 16 : 0);
	}
}

// A 16-byte chunk of a row of x in shared memory, shifted in place by the
// row's pivot (cu: c twice, x~ = x - c) and summed into its statistics (a1,
// a2) where it lies before K (ok), else zeroed.
__device__ __forceinline__ void sk_shift_chunk(uint4 *p, bool ok, uint32_t cu, float &a1,
					       float &a2)
{
	if (ok) {
		uint4 v = *p;

		shift_stats4(v, cu, a1, a2);
		*p = v;
	} else {
		*p = make_uint4(0, 0, 0, 0);
	}
}

__device__ __forceinline__ void sk_add(float4 &v, float4 p)
{
	v.x += p.x;
	v.y += p.y;
	v.z += p.z;
	v.w += p.w;
}

__device__ __forceinline__ void sk_add(float2 &v, float2 p)
{
	v.x += p.x;
	v.y += p.y;
}

// The value at p (a float4 of a tile's sums, a float2 of a row's
// statistics) in each of the cluster's C blocks, added in rank order
// (every load in flight first): the same bits every run.
template <typename V>
__device__ __forceinline__ V sk_slices_sum(cg::cluster_group &cl, const V *p, int C)
{
	V v = {}, pq[LNL_SKINNY_MAX_SPLITS];

#pragma unroll
	for (int q = 0; q < LNL_SKINNY_MAX_SPLITS; q++)
		if (q < C)
			pq[q] = *cl.map_shared_rank(p, q);
#pragma unroll
	for (int q = 0; q < LNL_SKINNY_MAX_SPLITS; q++)
		if (q < C)
			sk_add(v, pq[q]);
	return v;
}

// Every rank: mean - c and rstd of x's rows 0 .. MP - 1 from the C
// slices' sums (st_sum in each rank's shared memory), added in rank order.
template <int MP, int NT>
__device__ __forceinline__ void sk_merge_stats(cg::cluster_group &cl, float2 *st_sum, int C, int K,
					       int tid, float *st_mt, float *st_rs)
{
	for (int r = tid; r < MP; r += NT) {
		const float2 a = sk_slices_sum(cl, st_sum + r, C);

		shifted_stats(a.x, a.y, K, &st_mt[r], &st_rs[r]);
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

// The producer warp of a streaming kernel, done: in a cluster of C > 1
// blocks it joins the consumers' two cluster barriers (their sums shared,
// then read).
__device__ __forceinline__ void stream_producer_join(int C)
{
	if (C > 1) {
		__syncwarp();
		cluster_arrive();
		cluster_wait();
		cluster_arrive();
		cluster_wait();
	}
}

// A wgmma kernel's 64 x BN tile over C > 1 slices of K in a cluster, past
// the barrier that shares the slices' sums: this rank's 1/C of the tile's
// float2s (red2[q 128 + t] = thread t's accumulators 2 q and 2 q + 1 in
// each rank's shared memory, q = 2 j + h: x row 16 (t / 32) + g + 8 h, W'
// rows n0 + 8 j + 2 tq and the next, g and tq the lane's quad and place in
// it) added over the ranks in rank order (sk_slices_sum: the same bits
// every run) by the NT threads tid, and stored: y = rstd (acc - (mean - c)
// s) + b' (the rows' st_mt and st_rs, s and b' staged in ep_s, ep_b), a
// float2's two columns in one 4-byte store where y keeps them side by
// side, as xa_store's (wgmma.cuh); rows past M, W' rows past wrows and
// columns past N not stored.
template <int BN, int NT>
__device__ __forceinline__ void
sk_tile_slices_store(cg::cluster_group &cl, const float2 *red2, int C, int rank, int tid,
		     const float *st_mt, const float *st_rs, long n0,
		     __nv_bfloat16 *__restrict__ y, int M, int N, long wrows, int wperm,
		     const float *ep_s, const float *ep_b)
{
	constexpr int U = BN / 4 * 128;  // float2s of a tile
	const int lo = rank * U / C, hi = (rank + 1) * U / C;

	for (int u = lo + tid; u < hi; u += NT) {
		// float2 u: thread to = u % 128 of warpgroup 0 (warp to / 32,
		// lane lq), pair q = u / 128 = 2 j + h
		const int to = u & 127, q = u >> 7, lq = to & 31;
		const int m = 16 * (to >> 5) + (lq >> 2) + 8 * (q & 1);
		const long wr = n0 + 8 * (q >> 1) + 2 * (lq & 3);
		const float2 v = sk_slices_sum(cl, red2 + u, C);
		const float e[2] = { v.x, v.y };

		if (m >= M)
			continue;
		if (!wperm && !(N & 1) && wr + 1 < wrows && wr + 1 < N) {  // both: one store
			*(__nv_bfloat162 *)(y + (long)m * N + wr) = __floats2bfloat162_rn(
				st_rs[m] * (e[0] - st_mt[m] * ep_s[wr - n0]) + ep_b[wr - n0],
				st_rs[m] * (e[1] - st_mt[m] * ep_s[wr + 1 - n0]) + ep_b[wr + 1 - n0]);
			continue;
		}
#pragma unroll
		for (int c = 0; c < 2; c++) {
			const long col = wperm ? perm32(wr + c) : wr + c;

			if (wr + c < wrows && col < N)
				y[(long)m * N + col] = __float2bfloat16_rn(
					st_rs[m] * (e[c] - st_mt[m] * ep_s[wr + c - n0]) +
					ep_b[wr + c - n0]);
		}
	}
}

// The resident kernel's multiply of one k-tile on mma.sync: warp w's NAF
// A fragments (rows 16 (NAF wa + a) of the W' stage at sw) against its
// NFW B fragments (x~ rows 8 f0 on, of the resident k-tile at sx), both
// ldmatrix'd, into acc[a][j].
struct SkMmaSync {
	static constexpr bool ASYNC_PROXY = false;

	template <int MP, int XS, int NAF>
	__device__ __forceinline__ static void ktile(float (&acc)[NAF][MP / 8 / XS][4],
						     uint32_t sw, uint32_t sx, int lane, int wa,
						     int f0)
	{
		constexpr int NFW = MP / 8 / XS;

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
};

// ---------------------------------------------------------------------------
// The x-resident kernel (k_fwd_skinny_res): x's slice of K resident in shared memory, shifted and
// summed once; the ring streams W' alone, tile after tile.
//
// At 64 rows k_fwd_skinny's ring carried as many bytes of x as of W', and
// every warp shifted and summed the same x fragments again (it lost to the
// split-K kernel from 32 rows). Here a cluster = C blocks, one slice of K
// each (rank order), one block an SM; grid.x = G clusters, cluster g
// taking W''s tiles g, g + G, ... (SR_BW rows each), its ring running on
// from one tile into the next: a producer warp (the block's last) issues
// each stage's TMA copy once every consumer warp has arrived on the
// stage's empty mbarrier, and a full mbarrier says it landed (TMA beat
// every thread's cp.async by 5-8 % from 3072 wide, lost 2-3 % at
// 1000-2048; the producer warp, against thread 0 issuing after a block
// barrier a k-tile, took 2-15 % off but at 3072 -> 9216, 1-2 % worse
// there: bench/RESULTS.md, sessions 21 and 22). Each block's consumers
// first load its slice of x (MP rows, zeros past M and K), shift it in
// place (x~ = x - c, 0 past K) and sum it, TPR threads a row, while the
// ring fills, and multiply as soon as that is done; the ranks' sums meet
// once, in rank order, where the first tile is reduced. A block of NA XS
// warps (NA = SR_BW / 16 / NAF): warp w takes NAF A fragments (16 rows
// of W' each) from row 16 NAF (w % NA) of the tile
// against x group w / NA (MP / XS rows, NFW B fragments, ldmatrix'd from
// the resident slice as they are). At a tile's end each block leaves its
// sums in one of two buffers and arrives on the cluster barrier; it waits
// on that barrier only after its next tile's loop, then adds its 1/C of
// the finished tile over the slices in rank order (deterministic) and
// stores y.
#define SR_BW LNL_SKINNY_RES_BW
#define SR_STAGE (SR_BW * 128)
// A block: the consumers' NA XS warps, then the producer warp.
#define SR_NT(XS, NAF) (SR_BW / 16 / (NAF) * (XS) * 32)
#define SR_THREADS(XS, NAF) (SR_NT(XS, NAF) + 32)

template <int MP, int XS, int NAF, typename Mma>
__device__ __forceinline__ void
skinny_res_body(const __nv_bfloat16 *__restrict__ x, const float *__restrict__ sW,
		const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y, int M, int K, int N,
		long wrows, int kchunk, int tiles, int wperm, const CUtensorMap *tw)
{
	constexpr int NA = SR_BW / 16 / NAF, NT = SR_NT(XS, NAF), NFW = MP / 8 / XS, NJ = NAF * NFW;
	constexpr int TPR = NT / MP;
	constexpr int ST = LNL_SKINNY_RES_STAGES(MP);
	static_assert(MP % (8 * XS) == 0 && (NFW == 1 || NFW % 2 == 0), "fragments");
	static_assert(TPR >= 1 && TPR <= 32 && (TPR & (TPR - 1)) == 0, "threads a row");
	unsigned char *smem = dyn_smem();
	__shared__ float2 st_sum[MP];
	__shared__ float st_mt[MP], st_rs[MP];
	__shared__ __align__(8) uint64_t full[ST];   // stage s landed
	__shared__ __align__(8) uint64_t empty[ST];  // every consumer warp is done with it
	cg::cluster_group cl = cg::this_cluster();
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
	const int wa = w % NA, f0 = w / NA * NFW;
	const uint32_t fb = smem_u32(full), eb = smem_u32(empty);
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
	// TMA from the producer warp's lane 0 (zeros past wrows and K).
	auto load_w = [&](int step) {
		const int i = step / NKT, lk = step % NKT, s = step % ST;
		const long n0 = (long)(grp + i * G) * SR_BW;

		mbar_expect(fb + 8 * s, SR_STAGE);
		tma_load(ring + s * SR_STAGE, tw, (kb + lk) * LNL_KTILE, (int)n0, fb + 8 * s);
	};

	if (tid == 0) {
		for (int s = 0; s < ST; s++) {
			mbar_init(fb + 8 * s, 1);
			mbar_init(eb + 8 * s, NT / 32);
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads();
	if (tid >= NT) {
		// The producer warp: the ring's stages as soon as each is free
		// (every consumer warp has arrived on its empty barrier), the
		// first ST at once; it joins the cluster barriers in the
		// consumers' order, a tile's arrival once that tile is issued.
		int step = 0;

		if (lane == 0)
			for (; step < min(ST, S); step++)
				load_w(step);
		__syncwarp();
		for (int i = 0; i < ntile; i++) {
			if (lane == 0)
				for (; step < (i + 1) * NKT; step++) {
					mbar_wait(eb + 8 * (step % ST), (step / ST - 1) & 1);
					load_w(step);
				}
			__syncwarp();
			if (i > 0)
				cluster_wait();
			cluster_arrive();
		}
		cluster_wait();
		cluster_arrive();
		cluster_wait();
		return;
	}
	// The consumers: x's slice (cp.async), while the ring fills, and the
	// pivot of the row each thread shifts (its load in flight meanwhile).
	const int r = tid / TPR, sub = tid % TPR;
	const __nv_bfloat16 c = r < M ? x[(long)r * K] : __float2bfloat16_rn(0.f);

	for (int lk = 0; lk < NKT; lk++)
		sk_copy<MP, NT>(xs + lk * MP * 128, x, 0, M, K, K, (kb + lk) * LNL_KTILE, tid);
	cp_async_commit();
	cp_async_wait<0>();
	bar_sync(1, NT);

	// x~ = x - c in place (0 past K), and the slice's sums: TPR threads a
	// row, adjacent lanes, added in a fixed order.
	{
		const __nv_bfloat162 cc = __halves2bfloat162(c, c);
		const uint32_t cu = *(const uint32_t *)&cc;
		float a1 = 0.f, a2 = 0.f;

		for (int q = sub; q < NKT * 8; q += TPR) {
			const int lk = q >> 3, ch = q & 7;
			uint4 *p = (uint4 *)(smem + (xs - sbase) + lk * MP * 128 + r * 128 +
					     ((ch ^ (r & 7)) << 4));

			sk_shift_chunk(p, (kb + lk) * LNL_KTILE + ch * 8 < K, cu, a1, a2);
		}
#pragma unroll
		for (int o = 1; o < TPR; o <<= 1) {
			a1 += __shfl_xor_sync(FP_FULL_MASK, a1, o);
			a2 += __shfl_xor_sync(FP_FULL_MASK, a2, o);
		}
		if (sub == 0)
			st_sum[r] = make_float2(a1, a2);
	}
	if constexpr (Mma::ASYNC_PROXY)  // x~ written through the generic proxy
		asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	bar_sync(1, NT);  // every warp's x~ before any multiply reads it

	// This rank's share of tile ti's sums: the C slices added in rank
	// order, then the epilogue. The rows' statistics are first needed
	// here: the ranks' sums meet at the first reduction, past a cluster
	// barrier that every rank arrived on after writing its st_sum, so no
	// cluster barrier stands between the shift and the multiply: there
	// it waited 1.4-2.6 µs of 9.5 at 64 x 2048 -> 2048 with every W' stage
	// already landed; without it (and with the pivots' loads moved ahead)
	// the kernel is 3-14 % faster from 17 to 64 rows (bench/RESULTS.md,
	// "the skinny forwards at 17-64 rows: ..."). Shifting each k-tile as
	// it lands instead of the whole slice first (two block barriers a
	// k-tile) was 2-24 % slower.
	bool merged = false;
	auto reduce = [&](int ti) {
		const float4 *const red = red0 + (ti & 1) * NJ * NT;
		const long n0 = (long)(grp + ti * G) * SR_BW;
		const int U = NJ * NT, lo = rank * U / C, hi = (rank + 1) * U / C;

		if (!merged) {
			sk_merge_stats<MP, NT>(cl, st_sum, C, K, tid, st_mt, st_rs);
			bar_sync(1, NT);
			merged = true;
		}

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
			const int step = i * NKT + lk, s = step % ST;

			mbar_wait(fb + 8 * s, step / ST & 1);
			Mma::template ktile<MP, XS, NAF>(acc, ring + s * SR_STAGE, xs + lk * MP * 128,
							 lane, wa, f0);
			// The warp's reads of the stage are done (wgmma waited
			// for; ldmatrix ordered by the arrival's release).
			__syncwarp();
			if (lane == 0)
				mbar_arrive(eb + 8 * s);
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


#endif
