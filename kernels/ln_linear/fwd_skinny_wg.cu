// fwd_skinny_wg.cu - the skinny LayerNorm+Linear forward's kernels on
// wgmma (bf16, 17 to 64 rows, Hopper): the x-resident kernel's body
// (skinny.cuh) with wgmma as its multiply (k_fwd_skinny_wg), and the
// x-streamed kernels (k_fwd_skinny_st: W' as wgmma's A; k_fwd_skinny_xa: x
// as A). Built for sm_90a (local.mk), with the primitives of wgmma.cuh;
// lnl_fwd_choose (choose.cu) says which runs where, fwd_skinny.cu has the
// kernels of fewer rows and the resident kernel on mma.sync.
#include "config.h"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "internal.h"
#include "layernorm/layernorm.h"
#include "skinny.cuh"
#include "wgmma.cuh"

#if SM90A_CODE
// The x-resident skinny kernel's multiply of one k-tile on wgmma
// (skinny.cuh's body; NAF = XS = 1: warp w's 16 rows of W' are rows
// 16 (w % 4) of its warpgroup's 64, w / 4 the warpgroup): the warpgroup's
// 64 rows of the W' stage at sw against all MP rows of the resident x~
// k-tile at sx, four k-steps, both operands read by the tensor cores from
// shared memory (no ldmatrix, no fragments in registers). The
// accumulators are mma.sync's fragments in the same order (d[4 j + e] is
// acc[0][j][e]: rows g, g + 8, columns 8 j + 2 t, + 1), so the body's
// exchange and epilogue serve both.
struct SkWgmma {
	static constexpr bool ASYNC_PROXY = true;  // x~ is read through it

	template <int MP, int XS, int NAF>
	__device__ __forceinline__ static void ktile(float (&acc)[NAF][MP / 8 / XS][4],
						     uint32_t sw, uint32_t sx, int lane, int wa,
						     int f0)
	{
		static_assert(XS == 1 && NAF == 1 && (MP == 32 || MP == 64), "warpgroup shape");
		float *d = &acc[0][0][0];
		const uint32_t sa = sw + (wa >> 2) * 64 * 128;

		(void)lane;
		(void)f0;
		wg_ktile_ss<MP, 0>(sa, sx, d);
	}
};

// --- the skinny forward with x streamed (k_fwd_skinny_st): bf16, 17 to 64
// rows, a block a tile of LNL_SKINNY_ST_BW = 64 rows of W' over all of K,
// no slices, no clusters, no reduction between blocks. The ring carries
// each k-tile of W' (64 rows, the wgmma's A) and of x (MP rows, its B) by
// TMA from the producer warp. Two warpgroups take the k-tiles in turn
// (even, odd), each with its own sums: a warpgroup shifts its k-tile of x
// in shared memory (x~ = x - c, 0 past K), summing the rows' statistics
// as it goes, and multiplies it (m64nMPk16, both operands in shared
// memory) while it shifts its next one; at the end the second warpgroup's
// sums are added to the first's in that order (the same bits every run).
// Every block sums all MP rows' statistics again: x is MP K bf16 from L2,
// W' the bytes that come from DRAM. As cuBLASLt's skinny kernels do, it
// takes as many blocks as W' has tiles (two an SM fit), each one stream
// of W' from start to end; the x-resident kernel (skinny.cuh) cuts K into
// slices instead and adds them through DSMEM at each tile's end.
// Over slices of K at up to 32 rows it also runs one block an SM in a
// deep ring (LNL_SKINNY_ST_DEEP_STAGES stages) with four warpgroups
// taking the k-tiles in turn (their sums added in order, 0 + 1 + 2 + 3):
// with the shift in shared memory left out (timing only) a launch at 24 x
// 14336 -> 1024 took 13.6 us where one with it in the deep ring took
// 16.8, so the shift and its fence before the wgmma, not DRAM, held a
// block. Twice the stages in flight and twice the warpgroups shifting
// take 0.81-0.99x the time of the two-an-SM ring where that ring's slices
// put one block an SM (bench/RESULTS.md, "the x-streamed kernel's deep
// ring").
#define ST_BW LNL_SKINNY_ST_BW
// The streamed kernels' consumer warpgroups (two; k_fwd_skinny_st's deep
// ring four), then the producer warp
#define ST_WGS(DEEP) ((DEEP) ? 4 : 2)
#define ST_WG_THREADS(DEEP) (ST_WGS(DEEP) * 128 + 32)
#define ST_THREADS ST_WG_THREADS(false)

// The x-streamed kernels' ring: ST stages of STAGE bytes from ring, each
// the k-tile of the wgmma's A at its start and of its B at BOFF, with full
// barriers (fb: one arrival and the bytes) and empty ones (eb: the four
// warps of the warpgroup that consumed the stage). stream_ring_init: the
// barriers, by thread 0, then the block's barrier.
template <int ST>
__device__ __forceinline__ void stream_ring_init(uint32_t fb, uint32_t eb)
{
	if (threadIdx.x == 0) {
		for (int s = 0; s < ST; s++) {
			mbar_init(fb + 8 * s, 1);
			mbar_init(eb + 8 * s, 4);
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads();
}

// The producer warp's lane 0: the KT k-tiles from k-tile k0 on, the
// block's kt-th of ta (rows from ra) and of tb (from rb) into stage kt %
// ST once the warpgroup before has released it (zeros past K and the
// tensors' rows).
template <int ST, int STAGE, int BOFF>
__device__ __forceinline__ void stream_produce(const CUtensorMap *ta, int ra, const CUtensorMap *tb,
					       int rb, uint32_t ring, uint32_t fb, uint32_t eb,
					       int k0, int KT)
{
	for (int kt = 0; kt < KT; kt++) {
		const int s = kt % ST;
		const uint32_t sa = ring + s * STAGE;

		if (kt >= ST)
			mbar_wait(eb + 8 * s, (kt / ST - 1) & 1);
		mbar_expect(fb + 8 * s, STAGE);
		tma_load(sa, ta, (k0 + kt) * LNL_KTILE, ra, fb + 8 * s);
		tma_load(sa + BOFF, tb, (k0 + kt) * LNL_KTILE, rb, fb + 8 * s);
	}
}

template <int MP, bool SLICED, int ST, int NWG>
__device__ __forceinline__ void
skinny_st_body(const CUtensorMap *tx, const CUtensorMap *tw, const __nv_bfloat16 *__restrict__ x,
	       const float *__restrict__ sW, const float *__restrict__ bf,
	       __nv_bfloat16 *__restrict__ y, int M, int K, int N, long wrows, int wperm,
	       int kchunk)
{
	constexpr int WB = ST_BW * 128, STAGE = WB + MP * 128;
	constexpr int TPR = 128 / MP, NA = MP / 2;  // threads a row; accumulators a thread
	constexpr int NT = NWG * 128;  // the consumers
	static_assert(MP == 32 || MP == 64, "a warpgroup's B");
	static_assert(NWG == 2 || NWG == 4, "named barriers 1 .. NWG + 1");
	unsigned char *smem = dyn_smem();
	__shared__ __align__(8) uint64_t full[ST], empty[ST];
	__shared__ float2 st_part[NWG][MP], st_sum[MP];
	__shared__ float st_mt[MP], st_rs[MP];
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
	const int C = SLICED ? (int)cluster_nctarank() : 1;
	const int rank = SLICED ? (int)cluster_ctarank() : 0;
	const int KA = (K + LNL_KTILE - 1) / LNL_KTILE;  // k-tiles of K
	const int kb = C > 1 ? rank * kchunk : 0;  // this block's first
	const int KT = C > 1 ? min(KA, kb + kchunk) - kb : KA;  // and how many
	const long n0 = (long)blockIdx.x * ST_BW;
	const uint32_t sbase = smem_u32(smem), ring = (sbase + 1023) & ~1023u;
	const uint32_t fb = smem_u32(full), eb = smem_u32(empty);

	stream_ring_init<ST>(fb, eb);
	if (w == 4 * NWG) {  // the producer warp: W' as A, x as B
		if (lane == 0)
			stream_produce<ST, STAGE, WB>(tw, (int)n0, tx, 0, ring, fb, eb, kb, KT);
		stream_producer_join(C);
		return;
	}

	// Warpgroup wg takes k-tiles wg, wg + NWG, ...; its row r of each x
	// k-tile is shifted and summed by TPR adjacent threads, 8 / TPR
	// 16-byte chunks each.
	const int wg = w >> 2, wt = tid & 127, r = wt / TPR, sub = wt % TPR;
	const __nv_bfloat16 c = r < M ? x[(long)r * K] : __float2bfloat16_rn(0.f);
	const __nv_bfloat162 cc = __halves2bfloat162(c, c);
	const uint32_t cu = *(const uint32_t *)&cc;
	float a1 = 0.f, a2 = 0.f, d[NA];

	auto shift = [&](int kt) {
		const uint32_t sx = ring + (kt % ST) * STAGE + WB;

		mbar_wait(fb + 8 * (kt % ST), kt / ST & 1);
#pragma unroll
		for (int i = 0; i < 8 / TPR; i++) {
			const int ch = sub + i * TPR;
			uint4 *p = (uint4 *)(smem + (sx - sbase) + r * 128 + ((ch ^ (r & 7)) << 4));

			sk_shift_chunk(p, (kb + kt) * LNL_KTILE + ch * 8 < K, cu, a1, a2);
		}
		fence_proxy_async();  // x~ is read by wgmma, through the async proxy
	};

#pragma unroll
	for (int i = 0; i < NA; i++)
		d[i] = 0.f;
	// Warpgroup wg's own barrier (constant ids: named barriers 1 to NWG).
	auto wg_sync = [&]() {
		if (wg == 0)
			bar_sync(1, 128);
		else if (NWG == 2 || wg == 1)
			bar_sync(2, 128);
		else if (wg == 2)
			bar_sync(3, 128);
		else
			bar_sync(4, 128);
	};

	if (wg < KT)
		shift(wg);
	wg_sync();
	for (int kt = wg; kt < KT; kt += NWG) {
		const uint32_t sa = ring + (kt % ST) * STAGE;

#pragma unroll
		for (int i = 0; i < NA; i++)
			wg_fence_operand(d[i]);
		wg_arrive();
#pragma unroll
		for (int ks = 0; ks < LNL_KTILE / 16; ks++)
			wgmma_ss<MP>(d, wg_desc(sa + ks * 32), wg_desc(sa + WB + ks * 32));
		wg_commit();
		if (kt + NWG < KT)
			shift(kt + NWG);  // while the tensor cores multiply kt
		wg_wait<0>();
#pragma unroll
		for (int i = 0; i < NA; i++)
			wg_fence_operand(d[i]);
		__syncwarp();
		if (lane == 0)
			mbar_arrive(eb + 8 * (kt % ST));
		wg_sync();  // k-tile kt + NWG shifted by every warp
	}

	// The rows' sums: the TPR threads', then the warpgroups' in order.
#pragma unroll
	for (int o = 1; o < TPR; o <<= 1) {
		a1 += __shfl_xor_sync(FP_FULL_MASK, a1, o);
		a2 += __shfl_xor_sync(FP_FULL_MASK, a2, o);
	}
	if (sub == 0)
		st_part[wg][r] = make_float2(a1, a2);
	// The other warpgroups' accumulators through the ring (every stage
	// consumed: every warpgroup is past its loop), warpgroup g's at red +
	// (g - 1) NA 128; warpgroup 0 adds them to its own in order.
	float *const red = (float *)(smem + (ring - sbase));
	auto add_wgs = [&]() {
#pragma unroll
		for (int g = 1; g < NWG; g++)
#pragma unroll
			for (int i = 0; i < NA; i++)
				d[i] += red[((g - 1) * NA + i) * 128 + wt];
	};
	auto stats_sum = [&]() {
		float2 a = st_part[0][r];

#pragma unroll
		for (int g = 1; g < NWG; g++)
			a = make_float2(a.x + st_part[g][r].x, a.y + st_part[g][r].y);
		return a;
	};

	bar_sync(NWG + 1, NT);
	if (wg > 0) {
#pragma unroll
		for (int i = 0; i < NA; i++)
			red[((wg - 1) * NA + i) * 128 + wt] = d[i];
	}
	bar_sync(NWG + 1, NT);
	if (C > 1) {
		// Slices in a cluster: the block's sums (the warpgroups' added
		// in order) as float4 j of thread wt at red4[j 128 + wt] past
		// red, then each rank's 1/C of the tile over the ranks in rank
		// order.
		cg::cluster_group cl = cg::this_cluster();
		float4 *const red4 = (float4 *)(red + (NWG - 1) * NA * 128);
		constexpr int U = MP / 8 * 128;
		const int lo = rank * U / C, hi = (rank + 1) * U / C;

		if (wg == 0) {
			add_wgs();
#pragma unroll
			for (int j = 0; j < MP / 8; j++)
				red4[j * 128 + wt] = make_float4(d[4 * j], d[4 * j + 1], d[4 * j + 2],
								 d[4 * j + 3]);
			if (sub == 0)
				st_sum[r] = stats_sum();
		}
		cluster_arrive();
		cluster_wait();
		sk_merge_stats<MP, NT>(cl, st_sum, C, K, tid, st_mt, st_rs);
		bar_sync(NWG + 1, NT);
		for (int u = lo + tid; u < hi; u += NT) {
			const int to = u & 127, j = u >> 7, lq = to & 31;

			sk_store(y, sk_slices_sum(cl, red4 + u, C), n0 + 16 * (to >> 5) + (lq >> 2),
				 8 * j + 2 * (lq & 3), M, N, wrows, wperm, sW, bf, st_mt, st_rs);
		}
		cluster_arrive();
		cluster_wait();
		return;
	}
	if (wg > 0)
		return;
	if (sub == 0) {
		const float2 a = stats_sum();

		shifted_stats(a.x, a.y, K, &st_mt[r], &st_rs[r]);
	}
	add_wgs();
	bar_sync(1, 128);
#pragma unroll
	for (int j = 0; j < MP / 8; j++)
		sk_store(y, make_float4(d[4 * j], d[4 * j + 1], d[4 * j + 2], d[4 * j + 3]),
			 n0 + 16 * w + (lane >> 2), 8 * j + 2 * (lane & 3), M, N, wrows, wperm, sW, bf,
			 st_mt, st_rs);
}

// --- the x-as-A form (k_fwd_skinny_xa<BN>): 33 to 64 rows where W' has
// more 64-row tiles than SMs but under 1.5 an SM (k_fwd_skinny_st would
// leave some SMs two blocks and most one: they finish last), in tiles of
// BN = 72 or 96 rows of W'; and 17 to 64 rows at short K where W' has
// fewer, in tiles of 32 or 48 (lnl_skinny_xa_narrow; 16 and 64 by
// xa_tile only). A block a tile (as many blocks as SMs or fewer, one
// each), x as the wgmma's A (64 rows, zeros past M) and W''s tile as its B
// (wgmma's N is any multiple of 8; its M is 64): two warpgroups take the
// k-tiles in turn as the warp-specialized kernel's math warps do
// (wg_ktile: A ldmatrix'd, shifted and summed in registers, the next
// k-tile's A prepared while one k-tile's wgmmas run), the second one's
// sums added to the first's at the end. One block an SM, and its ring
// about as deep as an SM's shared memory allows (XA_STAGES: 12 stages of
// 72 rows, 11 of 96, the most that fit): the kernel waits on DRAM's
// latency, not on its math, and 6 stages had it 5-7 % slower at 33-64 x
// 3072 -> 9216, 4096 -> 8192 and 4096 -> 14336; 13 of 72 rows fit too
// but were 1 % slower than 12 (bench/RESULTS.md, "the skinny forwards
// at 17-64 rows: a deeper x-as-A ring, ..."). Tried there and not
// kept: pairs of blocks sharing x's k-tiles by multicast (cuBLASLt's
// kernel at 64 x 3072 -> 9216 runs in pairs): 4-11 % slower but at K =
// 1000, where it gained 7-9 %; nor, for the narrow tiles, clusters of 2,
// 4 or 8 sharing x: slower the larger the cluster (wip/xa-narrow-cl).
// Narrow tiles take as many stages as 200 KB hold (12 to 20).
// Slices of K (option xa_split, lnl_skinny_xa_plan): the C blocks of a
// cluster along y take one tile over C slices of kchunk k-tiles (rank z
// the z-th), leave their sums in shared memory and, past a cluster
// barrier, each adds its 1/C of the tile over the slices in rank order
// through DSMEM (the same bits every run) and stores it: where W' has few
// tiles and K is long, a block a tile over all of K leaves most SMs idle.
// As partials in global memory with a reduction kernel after, the
// reduction alone took 2.3-8 us (bench/RESULTS.md, "the x-as-A kernel over
// slices of K").
#define XA_STAGES(BN) ((BN) == 72 ? 12 : (BN) == 96 ? 11 : 200 * 1024 / ((64 + (BN)) * 128))

// Row m's statistics from the statistics pass (layernorm_stats: the mean
// in two parts, hi at stats[m] and lo at stats[M + m], rstd at stats[2 M +
// m]), in the shifted form the epilogue takes (mt = mean - c, c the row's
// first element; rs = rstd), once the pass has ended (grid_dep_wait: the
// kernel may be launched while it runs); rows past M 0.
__device__ __forceinline__ void xa_pass_stats(const __nv_bfloat16 *__restrict__ x,
					      const float *__restrict__ stats, int m, int M, int K,
					      float *mt, float *rs)
{
	grid_dep_wait();
	*mt = m < M ? stats[m] - __bfloat162float(x[(long)m * K]) + stats[M + m] : 0.f;
	*rs = m < M ? stats[2 * M + m] : 0.f;
}

// The x-as-A kernel's end over C > 1 slices in a cluster (every consumer
// thread; red holds warpgroup 1's accumulators, st_part its rows' sums):
// warpgroup 0 leaves the block's sums in shared memory (red2[(2 j + h)
// 128 + thread] = d[4 j + 2 h], d[4 j + 2 h + 1]; st_sum), then past a
// cluster barrier the rows' statistics are merged and this rank's 1/C of
// the tile added over the ranks and stored (sk_tile_slices_store, s and
// b' from the block's staged ep_s, ep_b); a second barrier keeps every
// rank's shared memory until all have read it.
template <int BN, bool PASS>
__device__ __forceinline__ void
xa_cluster_sum(float *red, const float *d, const float *s1, const float *s2,
	       const float2 *st_part, float2 *st_sum, float *st_mt, float *st_rs, int wg, int tid,
	       int C, int rank, long n0, __nv_bfloat16 *__restrict__ y, int M, int K, int N,
	       long wrows, int wperm, const float *ep_s, const float *ep_b,
	       const __nv_bfloat16 *__restrict__ x, const float *__restrict__ stats)
{
	cg::cluster_group cl = cg::this_cluster();
	float2 *const red2 = (float2 *)(red + 64 * BN);

	if (wg == 0) {
		const int lane = tid & 31, g = lane >> 2, row0 = 16 * (tid >> 5);

#pragma unroll
		for (int q = 0; q < BN / 4; q++)
			red2[q * 128 + tid] = make_float2(d[2 * q] + red[2 * q * 128 + tid],
							  d[2 * q + 1] + red[(2 * q + 1) * 128 + tid]);
		if (!PASS && (lane & 3) == 0) {
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const float2 p = st_part[row0 + g + 8 * h];

				st_sum[row0 + g + 8 * h] = make_float2(s1[h] + p.x, s2[h] + p.y);
			}
		}
	}
	cluster_arrive();
	cluster_wait();
	if constexpr (PASS) {
		if (tid < 64)
			xa_pass_stats(x, stats, tid, M, K, &st_mt[tid], &st_rs[tid]);
	} else {
		sk_merge_stats<64, 256>(cl, st_sum, C, K, tid, st_mt, st_rs);
	}
	bar_sync(3, 256);
	sk_tile_slices_store<BN, 256>(cl, red2, C, rank, tid, st_mt, st_rs, n0, y, M, N, wrows,
				      wperm, ep_s, ep_b);
	cluster_arrive();
	cluster_wait();
}

template <int BN, bool SLICED, bool PASS>
__device__ __forceinline__ void
skinny_xa_body(const CUtensorMap *tx, const CUtensorMap *tw, const __nv_bfloat16 *__restrict__ x,
	       const float *__restrict__ sW, const float *__restrict__ bf,
	       __nv_bfloat16 *__restrict__ y, int M, int K, int N, long wrows, int wperm,
	       int kchunk, const float *__restrict__ stats)
{
	constexpr int ST = XA_STAGES(BN), XB = 64 * 128, STAGE = XB + BN * 128;
	static_assert(STAGE % 1024 == 0, "stages 1024-aligned");
	unsigned char *smem = dyn_smem();
	__shared__ __align__(8) uint64_t full[ST], empty[ST];
	__shared__ float2 st_part[64], st_sum[64];
	__shared__ float st_mt[64], st_rs[64];
	__shared__ float ep_s[BN], ep_b[BN];  // s and b' of the tile's W' rows
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
	const int g = lane >> 2, t = lane & 3;
	const int C = SLICED ? (int)cluster_nctarank() : 1;
	const int rank = SLICED ? (int)cluster_ctarank() : 0;
	const int KA = (K + LNL_KTILE - 1) / LNL_KTILE;  // k-tiles of K
	const int kb = C > 1 ? rank * kchunk : 0;  // this block's first
	const int KT = C > 1 ? min(KA, kb + kchunk) - kb : KA;  // and how many
	const long n0 = (long)blockIdx.x * BN;
	const uint32_t sbase = smem_u32(smem), ring = (sbase + 1023) & ~1023u;
	const uint32_t fb = smem_u32(full), eb = smem_u32(empty);

	stream_ring_init<ST>(fb, eb);
	if (w == 8) {  // the producer warp: x as A, W' as B
		if (lane == 0)
			stream_produce<ST, STAGE, XB>(tx, 0, tw, (int)n0, ring, fb, eb, kb, KT);
		stream_producer_join(C);
		return;
	}

	// s and b' of the tile's rows of W', staged now (read in the epilogue
	// past the barriers that end the k loop)
	xa_stage_fold<BN>(ep_s, ep_b, sW, bf, n0, tid, wrows, N, wperm);

	// Warpgroup wg takes k-tiles wg, wg + 2, ...; its warp w & 3 rows
	// row0 .. row0 + 15 of x.
	const int wg = w >> 2, row0 = 16 * (w & 3);
	uint32_t a0[LNL_KTILE / 16][4], a1[LNL_KTILE / 16][4], piv[2];
	float s1[2] = { 0.f, 0.f }, s2[2] = { 0.f, 0.f }, d[BN / 2];
	int prev = -1;  // the stage of this warpgroup's k-tile in flight

	auto step = [&](int kt, uint32_t (&a)[LNL_KTILE / 16][4]) {
		const int s = kt % ST;
		const uint32_t sa = ring + s * STAGE;

		mbar_wait(fb + 8 * s, kt / ST & 1);
		wg_ktile<!PASS, BN>(sa, sa + XB, row0, lane, K - (kb + kt) * LNL_KTILE, piv, a, s1,
				    s2, d);
		if (prev >= 0 && lane == 0)  // its wgmmas are done: free its stage
			mbar_arrive(eb + 8 * prev);
		prev = s;
	};

	wg_pivots(x, row0 + g, M, K, piv);
	wg_kloop<BN / 2>(wg, 2, KT, step, a0, a1, d);
	if (prev >= 0 && lane == 0)
		mbar_arrive(eb + 8 * prev);

	// The rows' sums over the quad, then warpgroup 0's + 1's; the second
	// warpgroup's accumulators through the ring (every stage consumed:
	// both warpgroups are past their loops).
	float *const red = (float *)(smem + (ring - sbase));

#pragma unroll
	for (int h = 0; h < 2; h++)
#pragma unroll
		for (int o = 1; o < 4; o <<= 1) {
			s1[h] += __shfl_xor_sync(FP_FULL_MASK, s1[h], o);
			s2[h] += __shfl_xor_sync(FP_FULL_MASK, s2[h], o);
		}
	bar_sync(3, 256);
	if (wg == 1) {
		if (t == 0) {
			st_part[row0 + g] = make_float2(s1[0], s2[0]);
			st_part[row0 + g + 8] = make_float2(s1[1], s2[1]);
		}
#pragma unroll
		for (int i = 0; i < BN / 2; i++)
			red[i * 128 + (tid & 127)] = d[i];
	}
	bar_sync(3, 256);
	if (C > 1) {
		xa_cluster_sum<BN, PASS>(red, d, s1, s2, st_part, st_sum, st_mt, st_rs, wg, tid, C,
					 rank, n0, y, M, K, N, wrows, wperm, ep_s, ep_b, x, stats);
		return;
	}
	if (wg == 1)
		return;

	// Epilogue: warpgroup 0's sums plus warpgroup 1's.
	float mt[2], rs[2];

#pragma unroll
	for (int h = 0; h < 2; h++) {
		const float2 p = st_part[row0 + g + 8 * h];

		if constexpr (PASS)
			xa_pass_stats(x, stats, row0 + g + 8 * h, M, K, &mt[h], &rs[h]);
		else
			shifted_stats(s1[h] + p.x, s2[h] + p.y, K, &mt[h], &rs[h]);
	}
	xa_store<BN>(y, [&](int i) { return d[i] + red[i * 128 + tid]; }, mt, rs, row0, lane, n0,
		     M, N, wrows, wperm, ep_s, ep_b);
}

#endif  // SM90A_CODE

// k_fwd_skinny_wg: skinny.cuh's x-resident body on wgmma (MP = 32, 64).
template <int MP>
__global__ void __launch_bounds__(SR_THREADS(1, 1), 1)
k_fwd_skinny_wg(const __nv_bfloat16 *__restrict__ x, const float *__restrict__ sW,
		const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y, int M, int K, int N,
		long wrows, int kchunk, int tiles, int wperm, const __grid_constant__ CUtensorMap tw)
{
	SM90A_ONLY((skinny_res_body<MP, 1, 1, SkWgmma>(x, sW, bf, y, M, K, N, wrows, kchunk, tiles,
							wperm, &tw)));
}

const void *fwd_skinny_wg_kernel(int mp)
{
	return mp == 32 ? (const void *)k_fwd_skinny_wg<32>
			: mp == 64 ? (const void *)k_fwd_skinny_wg<64> : NULL;
}

// k_fwd_skinny_st: the x-streamed skinny body (MP = 32, 64), two blocks an
// SM (DEEP: one, in a ring of LNL_SKINNY_ST_DEEP_STAGES stages, twice the
// bytes in flight a block, with four warpgroups); SLICED: in clusters
// along y, slices of kchunk k-tiles, added through DSMEM as
// k_fwd_skinny_xa's are.
template <int MP, bool SLICED, bool DEEP>
__global__ void __launch_bounds__(ST_WG_THREADS(DEEP), DEEP ? 1 : 2)
k_fwd_skinny_st(const __grid_constant__ CUtensorMap tx, const __grid_constant__ CUtensorMap tw,
		const __nv_bfloat16 *__restrict__ x, const float *__restrict__ sW,
		const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y, int M, int K, int N,
		long wrows, int wperm, int kchunk, const float *__restrict__ stats)
{
	(void)stats;
	SM90A_ONLY((skinny_st_body<MP, SLICED,
				   DEEP ? LNL_SKINNY_ST_DEEP_STAGES : LNL_SKINNY_ST_STAGES(MP),
				   ST_WGS(DEEP)>(&tx, &tw, x, sW, bf, y, M, K, N, wrows, wperm,
						 kchunk)));
}

// k_fwd_skinny_xa: the x-as-A skinny body, one block an SM; SLICED: in
// clusters along y, slices of kchunk k-tiles (an instance of its own, so
// that the one over all of K is the code it was: with the slices' code
// beside it, it took 2-4 % longer at 33-64 x 1024 -> 4096).
template <int BN, bool SLICED, bool PASS>
__global__ void __launch_bounds__(ST_THREADS, 1)
k_fwd_skinny_xa(const __grid_constant__ CUtensorMap tx, const __grid_constant__ CUtensorMap tw,
		const __nv_bfloat16 *__restrict__ x, const float *__restrict__ sW,
		const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y, int M, int K, int N,
		long wrows, int wperm, int kchunk, const float *__restrict__ stats)
{
	SM90A_ONLY((skinny_xa_body<BN, SLICED, PASS>(&tx, &tw, x, sW, bf, y, M, K, N, wrows,
						      wperm, kchunk, stats)));
}

#define XA_SMEM(BN) (1024 + XA_STAGES(BN) * (64 + (BN)) * 128)

// The streamed kernels' signature (the last argument: k-tiles a slice).
typedef void (*stream_kernel)(CUtensorMap, CUtensorMap, const __nv_bfloat16 *, const float *,
			      const float *, __nv_bfloat16 *, int, int, int, long, int, int,
			      const float *);

// Their instances: rows of W' a block (k_fwd_skinny_xa) or of x
// (k_fwd_skinny_st), the kernel over all of K and over slices.
// With the rows' statistics from a pass (kp, kps: the x-as-A kernel's
// tiles of 48 rows and more), none for the x-streamed kernel; over slices
// in the deep ring (ksd: the x-streamed kernel's 32 rows of x).
#define XA_KERNELS(BN) { BN, k_fwd_skinny_xa<BN, false, false>, k_fwd_skinny_xa<BN, true, false>, \
			 NULL, NULL }
#define XA_KERNELS_PASS(BN) { BN, k_fwd_skinny_xa<BN, false, false>, \
			      k_fwd_skinny_xa<BN, true, false>, k_fwd_skinny_xa<BN, false, true>, \
			      k_fwd_skinny_xa<BN, true, true> }
static const struct stream_kernels {
	int rows;
	stream_kernel k, ks, kp, kps, ksd;
} xa_kernels[] = {
	XA_KERNELS(16), XA_KERNELS(32), XA_KERNELS_PASS(48),
	XA_KERNELS_PASS(64), XA_KERNELS_PASS(72), XA_KERNELS_PASS(96),
}, st_kernels[] = {
	{ 32, k_fwd_skinny_st<32, false, false>, k_fwd_skinny_st<32, true, false>, NULL, NULL,
	  k_fwd_skinny_st<32, true, true> },
	{ 64, k_fwd_skinny_st<64, false, false>, k_fwd_skinny_st<64, true, false>, NULL, NULL,
	  NULL },
};

// The x-streamed kernels' dynamic shared memory, once a process.
static int stream_setup(void)
{
	static int done;

	if (done)
		return 0;
	for (const auto &st : st_kernels)
		for (stream_kernel k : { st.k, st.ks, st.ksd })
			if (k && CUDA_CHECK(cudaFuncSetAttribute(
					 k, cudaFuncAttributeMaxDynamicSharedMemorySize,
					 (int)lnl_skinny_st_smem(st.rows, k == st.ksd))))
				return -1;
	for (const auto &xa : xa_kernels)
		for (stream_kernel k : { xa.k, xa.ks, xa.kp, xa.kps })
			if (k && CUDA_CHECK(cudaFuncSetAttribute(
					 k, cudaFuncAttributeMaxDynamicSharedMemorySize,
					 XA_SMEM(xa.rows))))
				return -1;
	done = 1;
	return 0;
}

int fwd_skinny_stream_caps(int which, const int **caps)
{
	// [0]: k_fwd_skinny_xa (every instance takes an SM's shared memory,
	// XA_SMEM: the widest speaks for all); [1], [2]: k_fwd_skinny_st of
	// 32 and 64 rows of x (two blocks an SM); [3]: k_fwd_skinny_st of 32
	// rows in the deep ring (one block an SM)
	static int have[4][LNL_SKINNY_MAX_SPLITS + 1], done[4];
	const stream_kernel k = which == 0 ? k_fwd_skinny_xa<96, true, false>
				: which == 1 ? k_fwd_skinny_st<32, true, false>
				: which == 2 ? k_fwd_skinny_st<64, true, false>
					     : k_fwd_skinny_st<32, true, true>;
	const size_t smem = which == 0 ? XA_SMEM(96)
			    : lnl_skinny_st_smem(which == 2 ? 64 : 32, which == 3);

	if (which < 0 || which > 3)
		return error("ln_linear_fwd: no streamed skinny kernel %d", which);
	if (!done[which]) {
		if (stream_setup())
			return -1;
		for (int c = 1; c <= LNL_SKINNY_MAX_SPLITS; c++) {
			cudaLaunchConfig_t cfg;
			cudaLaunchAttribute attr;

			cluster_config(&cfg, &attr, 1, 1, ST_WG_THREADS(which == 3), smem, 0);
			cfg.gridDim.y = (unsigned)c;
			attr.val.clusterDim.y = (unsigned)c;
			if (CUDA_CHECK(cudaOccupancyMaxActiveClusters(&have[which][c], k, &cfg)))
				return -1;
		}
		done[which] = 1;
	}
	*caps = have[which];
	return 0;
}

// One launch of the instance of ks for `rows` (k over all of K, ks over
// slices; with pass, kp and kps, which take the rows' statistics from
// op->stats, written by layernorm_stats launched here first: the kernel
// launched programmatically, so that it streams W' while the pass runs) on
// a block a tile of W' (wbox rows each; x's boxes xbox rows) times
// op->splits slices of K (as many clusters along y, none for one; slices
// of equal k-tiles, none empty), smem bytes a block; what names the kernel
// in an error.
static int stream_launch(const struct lnl_op *op, const __nv_bfloat16 *x,
			 const struct stream_kernels *ks, size_t nks, int rows, int xbox, int wbox,
			 size_t smem, int pass, int deep, cudaStream_t st, const char *what)
{
	const long wrows = op->wperm ? op->Np : op->N;
	const int KT = lnl_ktiles(op->K, op->dt);
	const int kchunk = (KT + op->splits - 1) / op->splits;
	const int slices = (KT + kchunk - 1) / kchunk;
	stream_kernel k = NULL;
	CUtensorMap tx, tw;
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute attr[2];

	for (size_t i = 0; i < nks; i++)
		if (ks[i].rows == rows)
			k = deep ? (slices > 1 && !pass ? ks[i].ksd : NULL)
			    : pass ? (slices > 1 ? ks[i].kps : ks[i].kp)
				   : (slices > 1 ? ks[i].ks : ks[i].k);
	if (op->dt != FP_BF16 || op->M > LNL_SKINNY_RES_MAX_M || !k || op->splits < 1 ||
	    op->splits > LNL_SKINNY_MAX_SPLITS || (pass && !op->stats))
		return error("ln_linear_fwd: no %s skinny kernel for %ld rows of this dtype in "
			     "%d-row tiles over %d slices of K%s%s", what, op->M, rows, op->splits,
			     pass ? " with a statistics pass" : "", deep ? " in the deep ring" : "");
	if (stream_setup() || lnl_tma_map(&tx, x, op->K, op->K, op->M, xbox) ||
	    lnl_tma_map(&tw, op->Wf, op->K, op->ldw, wrows, wbox))
		return -1;
	if (pass && layernorm_stats(FP_BF16, x, op->stats, op->M, op->K, st))
		return -1;
	cluster_config(&cfg, &attr[0], 1, (unsigned)((wrows + wbox - 1) / wbox),
		       ST_WG_THREADS(deep), smem, st);
	cfg.gridDim.y = (unsigned)slices;
	attr[0].val.clusterDim.y = (unsigned)slices;
	if (slices < 2)
		cfg.numAttrs = 0;  // one slice: no cluster, as it was launched
	if (pass)
		config_programmatic(&cfg);
	return CUDA_CHECK(cudaLaunchKernelEx(&cfg, k, tx, tw, x, (const float *)op->sW,
					     (const float *)op->bf, (__nv_bfloat16 *)op->y,
					     (int)op->M, (int)op->K, (int)op->N, wrows, op->wperm,
					     kchunk, (const float *)(pass ? op->stats : NULL)));
}

int fwd_skinny_st_launch(const struct lnl_op *op, const void *xv, cudaStream_t st)
{
	const int mp = lnl_skinny_res_mp(op->M);

	return stream_launch(op, (const __nv_bfloat16 *)xv, st_kernels,
			     sizeof st_kernels / sizeof st_kernels[0], mp, mp, ST_BW,
			     lnl_skinny_st_smem(mp, op->st_deep), 0, op->st_deep, st, "x-streamed");
}

int fwd_skinny_xa_launch(const struct lnl_op *op, const void *xv, cudaStream_t st)
{
	return stream_launch(op, (const __nv_bfloat16 *)xv, xa_kernels,
			     sizeof xa_kernels / sizeof xa_kernels[0], op->xbn, 64, op->xbn,
			     XA_SMEM(op->xbn), op->xa_pass, 0, st, "x-as-A");
}
