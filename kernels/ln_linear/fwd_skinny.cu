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
#include "skinny.cuh"

#define SK_STAGES 4
#define SK_BW LNL_SKINNY_BW

// Dynamic shared memory of k_fwd_skinny<BW, MP>: the ring, which the
// accumulators' exchange reuses.
#define SK_SMEM(BW, MP) (SK_STAGES * ((BW) + (MP)) * 128)

template <int BW, int MP>
__global__ void __launch_bounds__(2 * BW)
k_fwd_skinny(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ Wf,
	     long ldw, const float *__restrict__ sW, const float *__restrict__ bf,
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

		sk_copy<BW, NT>(sa, Wf, n0, wrows, K, ldw, kt * LNL_KTILE, tid);
		sk_copy<MP, NT>(sa + BW * 128, x, 0, M, K, K, kt * LNL_KTILE, tid);
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

// k_fwd_skinny_res: skinny.cuh's body on mma.sync.
template <int MP, int XS, int NAF>
__global__ void __launch_bounds__(SR_THREADS(XS, NAF), 1)
k_fwd_skinny_res(const __nv_bfloat16 *__restrict__ x, const float *__restrict__ sW,
		 const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y, int M, int K, int N,
		 long wrows, int kchunk, int tiles, int wperm,
		 const __grid_constant__ CUtensorMap tw)
{
	skinny_res_body<MP, XS, NAF, SkMmaSync>(x, sW, bf, y, M, K, N, wrows, kchunk, tiles, wperm,
						&tw);
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
	{ MP, SR_THREADS(XS, NAF), (const void *)k_fwd_skinny_res<MP, XS, NAF> }

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
	const void *const fns[] = { sr_kerns[0].fn, sr_kerns[1].fn, fwd_skinny_wg_kernel(32),
				    fwd_skinny_wg_kernel(64) };

	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		const void *fn = fns[i];
		cudaFuncAttributes fa;
		int dyn;

		if (CUDA_CHECK(cudaFuncGetAttributes(&fa, fn)))
			return -1;
		dyn = optin - (int)fa.sharedSizeBytes;
		if (dyn < 1 || CUDA_CHECK(cudaFuncSetAttribute(fn,
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

int fwd_skinny_res_plan(long M, long K, long Nw, enum fp_dtype dt, int want, int *slices,
			int *groups)
{
	return lnl_fwd_skinny_res(M, K, Nw, dt, sr_clusters, sr_smem_max, want, slices, groups);
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
	long ldw = op->ldw;
	void *args_sk[] = { &x, &Wf, &ldw, &sW, &bf, &y, &M, &K, &N, (void *)&wrows, &kchunk,
			    &wperm };
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
		const void *fn = op->swg ? fwd_skinny_wg_kernel(k->mp) : k->fn;
		CUtensorMap tw;

		if (lnl_tma_map(&tw, op->Wf, op->K, op->ldw, wrows, LNL_SKINNY_RES_BW))
			return -1;
		return sk_launch(fn, op, x, (unsigned)op->sgroups,
				 op->swg ? (unsigned)SR_THREADS(1, 1) : (unsigned)k->threads,
				 lnl_skinny_res_smem(k->mp, kchunk), kchunk, tiles, &tw, st);
	}
	return sk_launch(op->M <= 8 ? (const void *)k_fwd_skinny<SK_BW, 8>
				    : (const void *)k_fwd_skinny<SK_BW, 16>,
			 op, x, (unsigned)((wrows + SK_BW - 1) / SK_BW), SK_THREADS,
			 SK_SMEM_MP(op->M <= 8 ? 8 : 16), kchunk, 0, NULL, st);
}
