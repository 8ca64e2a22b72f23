// fwd_skinny.cu - the fused bf16 forward for few rows (up to 16) on the
// tensor cores with the GEMM's operands swapped: k_fwd_skinny computes
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
#pragma unroll
	for (int q = tid; q < ROWS * 8; q += NT) {
		const int r = q >> 3, ch = q & 7, k = k0 + ch * 8;
		const long gr = r0 + r;
		const bool ok = gr < lim && k < K;

		cp_async16(dst + r * 128 + ((ch ^ (r & 7)) << 4), ok ? src + gr * K + k : src,
			   ok ? 16 : 0);
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

	// Every rank: the statistics of all MP rows from the C slices' sums.
	for (int r = tid; r < MP; r += NT) {
		float a1 = 0.f, a2 = 0.f;

		for (int q = 0; q < C; q++) {
			const float2 p = *cl.map_shared_rank(st_sum + r, q);

			a1 += p.x;
			a2 += p.y;
		}
		shifted_stats(a1, a2, K, &st_mt[r], &st_rs[r]);
	}
	__syncthreads();

	// This rank's share of the tile's float4s: the C slices added in rank
	// order, then the epilogue. Float4 u is thread u % NT's j = u / NT:
	// W' rows n0 + 16 w + g (.x, .y) and + 8 (.z, .w), x rows 8 j + 2t
	// (.x, .z) and + 1 (.y, .w).
	const int U = NF * NT, lo = rank * U / C, hi = (rank + 1) * U / C;
	for (int u = lo + tid; u < hi; u += NT) {
		float4 v = make_float4(0.f, 0.f, 0.f, 0.f);

		for (int q = 0; q < C; q++) {
			const float4 p = *cl.map_shared_rank(red + u, q);

			v.x += p.x;
			v.y += p.y;
			v.z += p.z;
			v.w += p.w;
		}
		const int to = u % NT, j = u / NT, lo_ = to & 31;
		const long wr = n0 + (to >> 5) * 16 + (lo_ >> 2);
		const int m = 8 * j + 2 * (lo_ & 3);
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
	cl.sync();  // no rank leaves while another reads its shared memory
}

// ---------------------------------------------------------------------------
// Launcher

template <int MP>
static int skinny_attr(void)
{
	return CUDA_CHECK(cudaFuncSetAttribute(k_fwd_skinny<SK_BW, MP>,
					       cudaFuncAttributeMaxDynamicSharedMemorySize,
					       SK_SMEM(SK_BW, MP)));
}

int fwd_skinny_setup(void)
{
	static int done;

	if (done)
		return 0;
	if (skinny_attr<8>() || skinny_attr<16>())
		return -1;
	done = 1;
	return 0;
}

template <int MP>
static int skinny_slots(int sms, long *slots)
{
	int n = 0;

	if (CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
		    &n, k_fwd_skinny<SK_BW, MP>, 2 * SK_BW, SK_SMEM(SK_BW, MP))))
		return -1;
	*slots = (long)n * sms;
	return 0;
}

int fwd_skinny_slots(long M, int sms, long *slots)
{
	return M <= 8 ? skinny_slots<8>(sms, slots) : skinny_slots<16>(sms, slots);
}

template <int MP>
static int skinny_run(const struct lnl_op *op, const __nv_bfloat16 *x, cudaStream_t st)
{
	const long wrows = op->wperm ? op->Np : op->N;
	const int KT = lnl_ktiles(op->K, op->dt);
	const int kchunk = (KT + op->splits - 1) / op->splits;
	const int splits = (KT + kchunk - 1) / kchunk;  // none empty
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute attr;

	cluster_config(&cfg, &attr, 1, (unsigned)((wrows + SK_BW - 1) / SK_BW), 2 * SK_BW,
		       SK_SMEM(SK_BW, MP), st);
	cfg.gridDim.y = (unsigned)splits;
	attr.val.clusterDim.x = 1;
	attr.val.clusterDim.y = (unsigned)splits;
	return CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_fwd_skinny<SK_BW, MP>, x,
					     (const __nv_bfloat16 *)op->Wf, (const float *)op->sW,
					     (const float *)op->bf, (__nv_bfloat16 *)op->y,
					     (int)op->M, (int)op->K, (int)op->N, wrows, kchunk,
					     op->wperm));
}

int fwd_skinny_launch(const struct lnl_op *op, const void *x, cudaStream_t st)
{
	if (op->dt != FP_BF16 || op->M > LNL_SKINNY_MAX_M || op->splits > LNL_SKINNY_MAX_SPLITS)
		return error("ln_linear_fwd: no skinny kernel for %ld rows of this dtype in %d "
			     "slices", op->M, op->splits);
	return op->M <= 8 ? skinny_run<8>(op, (const __nv_bfloat16 *)x, st)
			  : skinny_run<16>(op, (const __nv_bfloat16 *)x, st);
}
