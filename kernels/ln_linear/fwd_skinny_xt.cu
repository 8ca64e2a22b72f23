// fwd_skinny_xt.cu - the skinny LayerNorm+Linear forward from a pass over
// x (bf16, 17 to 64 rows, Hopper; skinny_x=stream_xt): k_xt_pass writes x~
// = x - c (c the row's first element, each difference rounded once to
// bf16) and the rows' statistics, and k_fwd_skinny_xt, launched
// programmatically behind it, is a plain GEMM: x~ as wgmma's A and a tile
// of W' as its B, both read by the tensor cores from shared memory, with
// no work on x a k-tile. Its ring's stages hold xks k-tiles each: what a
// TMA ring streams grows with its stage (bench/tma-stream: 1.7 TB/s in
// 8-KB stages, 3.6 in 32-KB ones), and the other skinny kernels' stages
// are one k-tile of each operand (12-16 KB). The producer issues the first
// stages' W' before the pass has ended and their x~ once it has, so W'
// streams while the pass runs. With xt_split, a cluster of blocks takes a
// tile over slices of K and adds their sums through DSMEM (skinny.cuh's
// sk_tile_slices_store): wider tiles at the same block count, so less x~
// a block, but slower wherever one slice's tiles fill the SMs
// (bench/RESULTS.md, "the x~ kernel over 2, 3 and 4 slices of K"), so
// auto never takes it. Built for sm_90a (local.mk) with the primitives of
// wgmma.cuh; lnl_fwd_choose (choose.cu) says where it runs.
#include "config.h"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "internal.h"
#include "skinny.cuh"
#include "wgmma.cuh"

#define XT_PASS_THREADS 128
#define XT_PASS_UNROLL 4  // 16-byte chunks a thread loads at once
#define XT_THREADS 160  // one consumer warpgroup, then the producer warp
// The ring: as many stages of KS k-tiles (a 64-row slot of x~, mp rows of
// it loaded, and BN rows of W' each) as XT_RING bytes hold, at most 16.
#define XT_RING (224 * 1024)
#define XT_STAGE(BN, KS) ((KS) * (64 + (BN)) * 128)
#define XT_STAGES(BN, KS) (XT_RING / XT_STAGE(BN, KS) < 16 ? XT_RING / XT_STAGE(BN, KS) : 16)
#define XT_SMEM(BN, KS) (1024 + XT_STAGES(BN, KS) * XT_STAGE(BN, KS))

// The pass: a block a row m. x~ (the GEMM's A, M rows of K bf16 at xt, ld
// elements apart: lnl_row_ld, whole 128-byte lines a row) and the
// row's statistics in the shifted form the epilogue takes (stats[m] = mean
// - c, stats[M + m] = rstd), summed from x~ as the other skinny kernels sum
// them; the blocks past M (up to lnl_xt_rows) write rows of zeros, so that
// the GEMM's boxes lie within x~. Its first act lets the GEMM be scheduled
// (grid_dep_launch): the GEMM reads x~ and the statistics only past its
// grid_dep_wait, which waits for this kernel's end.
__global__ void __launch_bounds__(XT_PASS_THREADS)
k_xt_pass(const __nv_bfloat16 *__restrict__ x, __nv_bfloat16 *__restrict__ xt,
	  float *__restrict__ stats, int M, int K, int ld)
{
	__shared__ float2 part[XT_PASS_THREADS / 32];
	const int m = blockIdx.x, tid = threadIdx.x, lane = tid & 31;
	const uint4 *src = (const uint4 *)(x + (long)m * K);
	uint4 *dst = (uint4 *)(xt + (long)m * ld);

	grid_dep_launch();
	if (m >= M) {  // a padding row
		for (int i = tid; i < K / 8; i += XT_PASS_THREADS)
			dst[i] = make_uint4(0, 0, 0, 0);
		return;
	}
	const __nv_bfloat16 c = x[(long)m * K];
	const __nv_bfloat162 cc = __halves2bfloat162(c, c);
	const uint32_t cu = *(const uint32_t *)&cc;
	float a1 = 0.f, a2 = 0.f;

	for (int i0 = tid; i0 < K / 8; i0 += XT_PASS_UNROLL * XT_PASS_THREADS) {
		uint4 v[XT_PASS_UNROLL];

#pragma unroll
		for (int u = 0; u < XT_PASS_UNROLL; u++)  // the loads first, together
			if (i0 + u * XT_PASS_THREADS < K / 8)
				v[u] = src[i0 + u * XT_PASS_THREADS];
#pragma unroll
		for (int u = 0; u < XT_PASS_UNROLL; u++) {
			if (i0 + u * XT_PASS_THREADS >= K / 8)
				break;
			shift_stats4(v[u], cu, a1, a2);
			dst[i0 + u * XT_PASS_THREADS] = v[u];
		}
	}
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) {
		a1 += __shfl_xor_sync(FP_FULL_MASK, a1, o);
		a2 += __shfl_xor_sync(FP_FULL_MASK, a2, o);
	}
	if (lane == 0)
		part[tid >> 5] = make_float2(a1, a2);
	__syncthreads();
	if (tid == 0) {
		float s1 = 0.f, s2 = 0.f, mt, rs;

		for (int i = 0; i < XT_PASS_THREADS / 32; i++) {  // in order: the same bits
			s1 += part[i].x;
			s2 += part[i].y;
		}
		shifted_stats(s1, s2, K, &mt, &rs);
		stats[m] = mt;
		stats[M + m] = rs;
	}
}

#if SM90A_CODE
// The GEMM: a block a tile of BN rows of W' over all of K (SLICED: over
// its rank's slice of kchunk k-tiles, the tile's C slices in a cluster
// along y); warps 0-3 (one warpgroup) multiply, warp 4's lane 0 fills the
// ring (in a cluster, the whole warp joins the two cluster barriers of
// the end). Stage s holds KS
// k-tiles: x~'s at ring + s STAGE + j XS (64-row slots of which the first
// mp rows are loaded: the rows past them only reach rows of the product
// past M, which are not stored), W''s at + KS XS + j WS. The warpgroup
// queues a stage's wgmmas, waits for them (wait<0>) and frees the stage at
// once: the stage's TMA refill is what the kernel waits on, not its math,
// and holding it until the next stage's wgmmas were queued (wait<1>) kept
// a stage fewer of the 2-4 in flight (on an H200, 0.89-0.97x the time at
// 15 of 50 shapes of 17 to 64 rows, K and N of 1024 to 9216, the others
// 0.97-1.01x: bench/RESULTS.md, "the x~ kernel frees a stage as soon as
// its wgmmas are done"); y = rstd (acc - (mean - c) s) + b' at the end. A
// stage always holds KS k-tiles (those past K load as zeros), so that no
// branch stands around the wgmmas: with one (the last stage's k-tiles
// counted) ptxas serialized every wgmma of the kernel (its warning C7520),
// and the kernel took 1.5-2x as long.
template <int BN, int KS, bool SLICED>
__device__ __forceinline__ void
skinny_xt_body(const CUtensorMap *tx, const CUtensorMap *tw, const float *__restrict__ stats,
	       const float *__restrict__ sW, const float *__restrict__ bf,
	       __nv_bfloat16 *__restrict__ y, int M, int K, int N, long wrows, int wperm, int mp,
	       int kchunk)
{
	constexpr int ST = XT_STAGES(BN, KS), XS = 64 * 128, WS = BN * 128;
	constexpr int STAGE = XT_STAGE(BN, KS);
	static_assert(WS % 1024 == 0 && STAGE % 1024 == 0, "slots 1024-aligned");
	static_assert(BN * 256 <= ST * STAGE, "the tile's sums fit in the ring");
	unsigned char *smem = dyn_smem();
	__shared__ __align__(8) uint64_t full[ST], empty[ST];
	__shared__ float ep_s[BN], ep_b[BN];  // s and b' of the tile's W' rows
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
	const int C = SLICED ? (int)cluster_nctarank() : 1;
	const int rank = SLICED ? (int)cluster_ctarank() : 0;
	// This block's k-tiles: kb on, KT of them (a slice of kchunk, a
	// multiple of KS: no stage reaches into the next slice's k-tiles)
	const int KA = (K + LNL_KTILE - 1) / LNL_KTILE, kb = rank * kchunk;
	const int KT = SLICED ? min(KA, kb + kchunk) - kb : KA, NS = (KT + KS - 1) / KS;
	const long n0 = (long)blockIdx.x * BN;
	// This block's rows of x~: m0 on, Ml of them (blockIdx.z, a 64-row
	// tile of M; the rows' statistics at stats[m0 ..] and [M + m0 ..])
	const int m0 = (int)blockIdx.z * 64, Ml = min(64, M - m0);
	const float *st_m = stats + m0, *st_r = stats + M + m0;
	__nv_bfloat16 *const yt = y + (long)m0 * N;
	const uint32_t ring = (smem_u32(smem) + 1023) & ~1023u;
	const uint32_t fb = smem_u32(full), eb = smem_u32(empty);

	if (tid == 0) {
		for (int s = 0; s < ST; s++) {
			mbar_init(fb + 8 * s, 1);
			mbar_init(eb + 8 * s, 4);
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads();
	if (w == 4) {
		if (lane != 0) {
			stream_producer_join(C);
			return;
		}
		// The first stages' W' now, their x~ once the pass has ended.
		const int pre = NS < ST ? NS : ST;
		auto load_x = [&](int st) {
			const uint32_t sa = ring + (st % ST) * STAGE;

			for (int j = 0; j < KS; j++)
				tma_load(sa + j * XS, tx, (kb + st * KS + j) * LNL_KTILE, m0,
					 fb + 8 * (st % ST));
		};

		for (int st = 0; st < NS; st++) {
			const int s = st % ST;
			const uint32_t sa = ring + s * STAGE;

			if (st >= ST)
				mbar_wait(eb + 8 * s, (st / ST - 1) & 1);
			mbar_expect(fb + 8 * s, KS * (mp * 128 + WS));
			for (int j = 0; j < KS; j++)
				tma_load(sa + KS * XS + j * WS, tw, (kb + st * KS + j) * LNL_KTILE,
					 (int)n0, fb + 8 * s);
			if (st >= ST)
				load_x(st);
			if (st == pre - 1) {
				grid_dep_wait();
				for (int p = 0; p < pre; p++)
					load_x(p);
			}
		}
		stream_producer_join(C);
		return;
	}

	xa_stage_fold<BN>(ep_s, ep_b, sW, bf, n0, tid, wrows, N, wperm);

	float d[BN / 2];

#pragma unroll
	for (int i = 0; i < BN / 2; i++)
		d[i] = 0.f;
	for (int st = 0; st < NS; st++) {
		const int s = st % ST;
		const uint32_t sa = ring + s * STAGE;

		mbar_wait(fb + 8 * s, st / ST & 1);
#pragma unroll
		for (int i = 0; i < BN / 2; i++)
			wg_fence_operand(d[i]);
		wg_arrive();
#pragma unroll
		for (int j = 0; j < KS; j++)
#pragma unroll
			for (int ks = 0; ks < LNL_KTILE / 16; ks++)
				wgmma_ss<BN>(d, wg_desc(sa + j * XS + ks * 32),
					     wg_desc(sa + KS * XS + j * WS + ks * 32));
		wg_commit();
		wg_wait<0>();  // this stage's wgmmas are done: free it
#pragma unroll
		for (int i = 0; i < BN / 2; i++)
			wg_fence_operand(d[i]);
		if (lane == 0)
			mbar_arrive(eb + 8 * s);
	}
	wg_wait<0>();
#pragma unroll
	for (int i = 0; i < BN / 2; i++)
		wg_fence_operand(d[i]);

	if constexpr (SLICED) {
		// Over C slices: the block's sums into the ring (every stage
		// consumed, no load in flight), the pass's statistics beside
		// them; past a cluster barrier this rank adds and stores its
		// 1/C of the tile, and a second barrier keeps every rank's
		// shared memory until all have read it.
		__shared__ float st_mt[64], st_rs[64];
		float2 *const red2 = (float2 *)(smem + (ring - smem_u32(smem)));
		cg::cluster_group cl = cg::this_cluster();

		bar_sync(1, 128);  // every warp's wgmmas done: the ring is free
#pragma unroll
		for (int q = 0; q < BN / 4; q++)
			red2[q * 128 + tid] = make_float2(d[2 * q], d[2 * q + 1]);
		grid_dep_wait();  // the pass's statistics
		if (tid < 64) {
			st_mt[tid] = tid < Ml ? st_m[tid] : 0.f;
			st_rs[tid] = tid < Ml ? st_r[tid] : 0.f;
		}
		cluster_arrive();
		cluster_wait();
		sk_tile_slices_store<BN, 128>(cl, red2, C, rank, tid, st_mt, st_rs, n0, yt, Ml, N,
					      wrows, wperm, ep_s, ep_b);
		cluster_arrive();
		cluster_wait();
		return;
	}

	// Epilogue: warp w's rows 16 w on, the pass's statistics.
	const int g = lane >> 2;
	float mt[2], rs[2];

	grid_dep_wait();  // the pass's statistics
	bar_sync(1, 128);  // ep_s, ep_b staged
#pragma unroll
	for (int h = 0; h < 2; h++) {
		const int m = 16 * w + g + 8 * h;

		mt[h] = m < Ml ? st_m[m] : 0.f;
		rs[h] = m < Ml ? st_r[m] : 0.f;
	}
	xa_store<BN>(yt, [&](int i) { return d[i]; }, mt, rs, 16 * w, lane, n0, Ml, N, wrows,
		     wperm, ep_s, ep_b);
}
#endif  // SM90A_CODE

template <int BN, int KS, bool SLICED>
__global__ void __launch_bounds__(XT_THREADS, 1)
k_fwd_skinny_xt(const __grid_constant__ CUtensorMap tx, const __grid_constant__ CUtensorMap tw,
		const float *__restrict__ stats, const float *__restrict__ sW,
		const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y, int M, int K, int N,
		long wrows, int wperm, int mp, int kchunk)
{
	SM90A_ONLY((skinny_xt_body<BN, KS, SLICED>(&tx, &tw, stats, sW, bf, y, M, K, N, wrows,
						    wperm, mp, kchunk)));
}

typedef void (*xt_kernel)(CUtensorMap, CUtensorMap, const float *, const float *, const float *,
			  __nv_bfloat16 *, int, int, int, long, int, int, int);

// Each tile and stage twice: a block a tile over all of K (k), and a
// cluster of blocks a tile over slices of K (ks).
#define XT_INSTANCE(BN, KS) \
	{ BN, KS, k_fwd_skinny_xt<BN, KS, false>, k_fwd_skinny_xt<BN, KS, true>, XT_SMEM(BN, KS) }
#define XT_INSTANCES(BN) XT_INSTANCE(BN, 1), XT_INSTANCE(BN, 2), XT_INSTANCE(BN, 4)
static const struct xt_instance {
	int bn, ks;
	xt_kernel k, ksl;
	int smem;
} xt_instances[] = {
	XT_INSTANCES(32), XT_INSTANCES(40), XT_INSTANCES(48), XT_INSTANCES(56), XT_INSTANCES(64),
	XT_INSTANCES(72), XT_INSTANCES(80), XT_INSTANCES(88), XT_INSTANCES(96),
};

int fwd_xt_pass_launch(const struct lnl_op *op, const void *x, cudaStream_t st)
{
	k_xt_pass<<<(unsigned)lnl_xt_rows(op->M), XT_PASS_THREADS, 0, st>>>(
		(const __nv_bfloat16 *)x, (__nv_bfloat16 *)op->h, op->stats, (int)op->M,
		(int)op->K, (int)lnl_row_ld(op->K, FP_BF16));
	return CUDA_CHECK_LAUNCH("k_xt_pass");
}

int fwd_skinny_xt_launch(const struct lnl_op *op, const void *xv, cudaStream_t st)
{
	static int ready;
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)xv;
	const long wrows = op->wperm ? op->Np : op->N;
	// x~'s rows a block: all M (up to 64, whole 8-row groups), or 64-row
	// tiles of them along z
	const int mp = op->M > 64 ? 64 : (int)((op->M + 7) / 8 * 8);
	const long ldx = lnl_row_ld(op->K, FP_BF16);  // x~'s rows (lnl_fwd_xt_possible)
	const struct xt_instance *in = NULL;
	CUtensorMap tx, tw;
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute attr[2];
	int kchunk, slices;

	for (const auto &i : xt_instances)
		if (i.bn == op->xbn && i.ks == op->xks)
			in = &i;
	if (!in || !lnl_fwd_xt_possible(op->M, op->K, op->dt) || !op->h || !op->stats ||
	    op->splits < 1 || op->splits > LNL_SKINNY_MAX_SPLITS)
		return error("ln_linear_fwd: no x~ skinny kernel for %ld x %ld of this dtype in "
			     "%d-row tiles of %d k-tiles a stage over %d slices of K", op->M,
			     op->K, op->xbn, op->xks, op->splits);
	if (!ready) {
		for (const auto &i : xt_instances)
			if (CUDA_CHECK(cudaFuncSetAttribute(
				    i.k, cudaFuncAttributeMaxDynamicSharedMemorySize, i.smem)) ||
			    CUDA_CHECK(cudaFuncSetAttribute(
				    i.ksl, cudaFuncAttributeMaxDynamicSharedMemorySize, i.smem)))
				return -1;
		ready = 1;
	}
	slices = lnl_skinny_xt_slices(op->K, op->xks, op->splits, &kchunk);
	if (lnl_tma_map(&tx, op->h, op->K, ldx, lnl_xt_rows(op->M), mp) ||
	    lnl_tma_map(&tw, op->Wf, op->K, op->ldw, wrows, op->xbn))
		return -1;
	if (fwd_xt_pass_launch(op, x, st))
		return -1;
	// Over slices: a cluster of `slices` blocks along y a tile (rank =
	// blockIdx.y, the slice), as the x-as-A kernel's (stream_launch); the
	// launch programmatic behind the pass either way.
	cluster_config(&cfg, &attr[0], 1, (unsigned)((wrows + op->xbn - 1) / op->xbn), XT_THREADS,
		       (size_t)in->smem, st);
	cfg.gridDim.y = (unsigned)slices;
	cfg.gridDim.z = (unsigned)((op->M + 63) / 64);
	attr[0].val.clusterDim.y = (unsigned)slices;
	if (slices < 2)
		cfg.numAttrs = 0;  // one slice: no cluster
	config_programmatic(&cfg);
	return CUDA_CHECK(cudaLaunchKernelEx(&cfg, slices > 1 ? in->ksl : in->k, tx, tw,
					     (const float *)op->stats, (const float *)op->sW,
					     (const float *)op->bf, (__nv_bfloat16 *)op->y,
					     (int)op->M, (int)op->K, (int)op->N, wrows, op->wperm, mp,
					     kchunk));
}
