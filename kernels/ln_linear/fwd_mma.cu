// fwd_mma.cu - the LayerNorm+Linear fused forward on tensor cores through
// mma.sync, for rows whose 16-byte chunks are aligned: bf16 (m16n8k16) and
// fp32 (3xTF32 on m16n8k8). On Hopper the bf16 128 x 256 tile runs as the
// wgmma kernels of fwd_wgmma.cu instead. See internal.h for the numerics.
#include "config.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "internal.h"

// --- forward, fused, on tensor cores where every 16-byte chunk of a row
// is aligned (bf16 K % 8 == 0, fp32 K % 4 == 0): what k_fwd_fused does,
// rebuilt around the tensor cores' own instructions. Over it:
// * cp.async (16 bytes, zero-filled past M, N and K) into a MMA_STAGES-deep
//   shared-memory ring of raw x and W' tiles (BM x 64 and BN x 64 bf16, each
//   row 128 bytes with its 16-byte chunks XOR-swizzled by row, so ldmatrix
//   reads are free of bank conflicts): three tiles are in flight while one
//   is multiplied, and no thread touches the data on its way in.
// * ldmatrix + mma.sync m16n8k16 (bf16 in, fp32 accumulate), 8 warps as 2
//   along M x 4 along N, a warp tile of BM/2 x BN/4.
// * The row shift happens in registers: each A fragment register (two bf16
//   of one row) gets x~ = x - c with one bf16x2 subtraction (the exact
//   difference rounded once to bf16, as k_fwd_fused's fp32 subtraction and
//   bf16 store). The statistics are summed from those same shifted
//   fragments, so the GEMM and the mean/variance see the same x~; each
//   k-step's sums are taken by one of the four warps that share its rows
//   (warp n of a row pair takes k-step n of every 64-column tile), so every
//   element is summed once, and the four partials of a row are added in a
//   fixed order after the loop: deterministic.
// * The epilogue y = rstd (acc - (mean - c) s) + b' goes through shared
//   memory and leaves as 16-byte row-contiguous stores.
// Tiles: 128 x 256 (one block per SM, 192 KB of ring) when there are enough
// of them for half the SMs, or 128 x 192 where those come in fewer whole
// rounds of the SMs (option mma_tile, lnl_ws_bn's rule), else 64 x 128 (two
// blocks per SM), so small M still spreads; over slices of K, 32 x 128 for
// fp32 up to 32 rows (split_tile, lnl_fwd_split_rows32), the warps 2 x 4
// with a 16-row warp tile each. At M = 16384, N = 256 a block
// owns whole rows of y and reads its rows of x exactly once; W' (0.4 / 2 MB)
// comes from L2 for every block: 2 bytes of W' per byte of x through L2.
// Measured in bench/RESULTS.md, "LayerNorm+Linear forward, tensor-core
// fused kernel, H200": ncu found it issue-bound around the mma.sync stream,
// so the bf16 128 x 256 tile now runs as k_fwd_fused_wgmma where sm_90a code
// is there; this kernel keeps the small tiles and other targets.
// fp32 (the same kernel, T = float): a 128-byte tile row is 32 fp32, a
// k-step m16n8k8 TF32, whose fragments occupy the same 32-bit registers as
// m16n8k16 bf16's, so the ring, the swizzle and the ldmatrix addressing
// are unchanged. The shift is an fp32 subtraction (exact where it
// matters, as in k_fwd_fused) and the multiply 3xTF32 (see mma_tf32),
// which k_fwd_fused's FMA loop ran at a third of the rate of. It beats
// the unfused variant's SGEMM on time and on accuracy at K = 4096
// (bench/RESULTS.md, "LayerNorm+Linear fp32 fused forward on tensor cores
// (3xTF32), H200").
#define MMA_STAGES 4
#define MMA_THREADS 256

// Dynamic shared memory of k_fwd_fused_mma<BM, BN>: the ring, which the
// staged output tile (BM x (BN + 8) bf16) reuses.
#define MMA_SMEM(BM, BN) (MMA_STAGES * ((BM) + (BN)) * LNL_KTILE * 2)

// fp32 tensor-core arithmetic for the fp32 kernel: 3xTF32 (tf32_lo and
// mma_tf32 in device.cuh, which say why). The tensor cores round their
// fp32 sums toward zero, so accumulating all of K in the MMA's own
// accumulator biases every step the same way, to many times SGEMM's error
// at K = 4096 on an H200 ("LayerNorm+Linear fp32 fused forward on tensor
// cores (3xTF32), H200" in bench/RESULTS.md). Each 8-deep k-step's three
// products therefore go to a fresh partial whose truncation is relative
// to itself, and plain fp32 adds (round to nearest) take the partials
// into the accumulator.
// cp.async of one k-tile of ROWS rows of a row-major tensor (rows r0..,
// each K long, ld elements apart) into the swizzled tile at dst: the eight
// 16-byte chunks from column k0 of each row, zero-filled past row lim and
// column K.
template <typename T, int ROWS>
__device__ __forceinline__ void copy_tile(uint32_t dst, const T *__restrict__ src,
					  long r0, long lim, int K, long ld, int k0, int tid)
{
	constexpr int E = 16 / sizeof(T);

#pragma unroll
	for (int j = 0; j < ROWS * 8 / MMA_THREADS; j++) {
		const int q = tid + j * MMA_THREADS, r = q >> 3, ch = q & 7, k = k0 + ch * E;
		const long gr = r0 + r;
		const bool ok = gr < lim && k < K;

		cp_async16(dst + r * 128 + ((ch ^ (r & 7)) << 4),
			   ok ? src + gr * ld + k : src, ok ? 16 : 0);
	}
}

template <typename T, int BM, int BN>
__global__ void __launch_bounds__(MMA_THREADS, BM >= 128 ? 1 : 2)
k_fwd_fused_mma(const T *__restrict__ x, const T *__restrict__ Wf, long ldw,
		const float *__restrict__ sW, const float *__restrict__ bf,
		T *__restrict__ y, long M, int K, int N, float *__restrict__ part,
		int kchunk, int wperm)
{
	constexpr bool BF = sizeof(T) == 2;
	constexpr int E = 16 / sizeof(T);      // elements per 16-byte chunk
	constexpr int KTILE = 8 * E;           // a tile row: 8 chunks, 128 bytes
	constexpr int WN = 4, TM = BM / 2, TN = BN / WN, MI = TM / 16, NI = TN / 8;
	constexpr int A_BYTES = BM * 128, STAGE = (BM + BN) * 128;
	constexpr int YLD = BN + 8;  // staged output row: conflict-free
	static_assert(4 == WN, "one k-step of statistics per warp column");
	static_assert(BM * 8 % MMA_THREADS == 0 && BN * 8 % MMA_THREADS == 0, "tile loads");
	static_assert(BM * YLD * sizeof(T) <= MMA_SMEM(BM, BN), "output tile fits the ring");
	extern __shared__ __align__(128) unsigned char smem[];
	__shared__ float st1[WN][BM], st2[WN][BM], st_mt[BM], st_rs[BM];

	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int wm = warp / WN, wn = warp % WN, g = lane >> 2, t = lane & 3;
	const long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
	long m0, n0;

	group_tile(blockIdx.x, tiles_m, tiles_n, LNL_GROUP, BM, BN, &m0, &n0);
	const int KT = (K + KTILE - 1) / KTILE;
	// Split-K (part != NULL): this block takes k-tiles [kb, ke), slice
	// blockIdx.y of kchunk tiles, and leaves its partial sums in part.
	const int kb = part ? (int)blockIdx.y * kchunk : 0;
	const int ke = part ? min(KT, kb + kchunk) : KT, NKT = ke - kb;
	// wperm (split-K only): W' is in perm32's order over N rounded up to
	// 32 rows, so all of those rows are read, and row n's sums are output
	// column perm32(n).
	const long wrows = wperm ? (N + 31L) / 32 * 32 : N;
	const uint32_t sbase = smem_u32(smem);

	// The shift c of rows wm*TM + i*16 + g + 8h: (c, c) as bf16x2, or c's
	// fp32 bits.
	uint32_t piv[MI][2];
	float s1[MI][2], s2[MI][2], acc[MI][NI][4];

	auto load_tile = [&](int stage, int kt) {
		const uint32_t sa = sbase + stage * STAGE;

		copy_tile<T, BM>(sa, x, m0, M, K, K, kt * KTILE, tid);
		copy_tile<T, BN>(sa + A_BYTES, Wf, n0, wrows, K, ldw, kt * KTILE, tid);
	};

#pragma unroll
	for (int s = 0; s < MMA_STAGES - 1; s++) {
		if (s < NKT)
			load_tile(s, kb + s);
		cp_async_commit();
	}
#pragma unroll
	for (int i = 0; i < MI; i++) {
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const long r = m0 + wm * TM + i * 16 + g + 8 * h;

			if constexpr (BF) {
				__nv_bfloat16 c = r < M ? x[r * K] : __float2bfloat16_rn(0.f);
				__nv_bfloat162 cc = __halves2bfloat162(c, c);

				piv[i][h] = *(const uint32_t *)&cc;
			} else {
				piv[i][h] = __float_as_uint(r < M ? x[r * K] : 0.f);
			}
			s1[i][h] = s2[i][h] = 0.f;
		}
#pragma unroll
		for (int j = 0; j < NI; j++)
			acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;
	}

	for (int lk = 0; lk < NKT; lk++) {
		const int kt = kb + lk;

		cp_async_wait<MMA_STAGES - 2>();
		__syncthreads();  // tile kt landed for all; stage lk - 1 is free
		if (lk + MMA_STAGES - 1 < NKT)
			load_tile((lk + MMA_STAGES - 1) % MMA_STAGES, kt + MMA_STAGES - 1);
		cp_async_commit();

		const uint32_t sa = sbase + (lk % MMA_STAGES) * STAGE, sb = sa + A_BYTES;
		const int kleft = K - kt * KTILE;  // under KTILE in a last, partial tile

		// A k-step is two chunks of every tile row: an m16n8k16 (bf16) or
		// m16n8k8 (TF32) multiply. The fragments' register layouts are the
		// same in 32-bit words, so the ldmatrix addressing is too.
#pragma unroll
		for (int ks = 0; ks < 4; ks++) {
			uint32_t a[MI][4], b[NI][2];

#pragma unroll
			for (int i = 0; i < MI; i++) {
				const int r = wm * TM + i * 16 + (lane & 15), ch = ks * 2 + (lane >> 4);

				ldsm_x4(sa + r * 128 + ((ch ^ (r & 7)) << 4),
					a[i][0], a[i][1], a[i][2], a[i][3]);
			}
#pragma unroll
			for (int j = 0; j < NI / 2; j++) {
				const int r = wn * TN + j * 16 + (lane & 7) + ((lane >> 4) << 3);
				const int ch = ks * 2 + ((lane >> 3) & 1);

				ldsm_x4(sb + r * 128 + ((ch ^ (r & 7)) << 4),
					b[2 * j][0], b[2 * j][1], b[2 * j + 1][0], b[2 * j + 1][1]);
			}
#pragma unroll
			for (int i = 0; i < MI; i++) {
#pragma unroll
				for (int q = 0; q < 4; q++) {
					if constexpr (BF)
						a[i][q] = bsub2(a[i][q], piv[i][q & 1]);
					else
						a[i][q] = __float_as_uint(__uint_as_float(a[i][q]) -
									  __uint_as_float(piv[i][q & 1]));
				}
			}
			if (ks == wn) {
				// Registers 0/1 hold column kc (bf16: kc, kc + 1) of
				// rows g/g+8; registers 2/3 the same E columns on.
				// Past K the tile is zero, so x~ = -c: masked.
				const int kc = ks * 2 * E + t * (E / 4);
				const bool lo = kc < kleft, hi = kc + E < kleft;

#pragma unroll
				for (int i = 0; i < MI; i++) {
#pragma unroll
					for (int q = 0; q < 4; q++) {
						if (!(q < 2 ? lo : hi))
							continue;
						if constexpr (BF) {
							stats2(a[i][q], s1[i][q & 1], s2[i][q & 1]);
						} else {
							const float v = __uint_as_float(a[i][q]);

							s1[i][q & 1] += v;
							s2[i][q & 1] = fmaf(v, v, s2[i][q & 1]);
						}
					}
				}
			}
			if constexpr (BF) {
#pragma unroll
				for (int i = 0; i < MI; i++)
#pragma unroll
					for (int j = 0; j < NI; j++)
						mma_bf16(acc[i][j], a[i], b[j]);
			} else {
				uint32_t bl[NI][2];

#pragma unroll
				for (int j = 0; j < NI; j++) {
					bl[j][0] = tf32_lo(b[j][0]);
					bl[j][1] = tf32_lo(b[j][1]);
				}
#pragma unroll
				for (int i = 0; i < MI; i++) {
					uint32_t al[4];

#pragma unroll
					for (int q = 0; q < 4; q++)
						al[q] = tf32_lo(a[i][q]);
#pragma unroll
					for (int j = 0; j < NI; j++) {
						float p[4] = { 0.f, 0.f, 0.f, 0.f };

						mma_tf32(p, al, b[j]);
						mma_tf32(p, a[i], bl[j]);
						mma_tf32(p, a[i], b[j]);
#pragma unroll
						for (int q = 0; q < 4; q++)
							acc[i][j][q] += p[q];
					}
				}
			}
		}
	}
	cp_async_wait<0>();

	// Row statistics: a row's sums are spread over the 4 lanes t of a
	// quad and the WN warps of its warp row.
#pragma unroll
	for (int i = 0; i < MI; i++) {
#pragma unroll
		for (int h = 0; h < 2; h++) {
			float a1 = s1[i][h], a2 = s2[i][h];

			a1 += __shfl_xor_sync(0xffffffffu, a1, 1);
			a2 += __shfl_xor_sync(0xffffffffu, a2, 1);
			a1 += __shfl_xor_sync(0xffffffffu, a1, 2);
			a2 += __shfl_xor_sync(0xffffffffu, a2, 2);
			if (t == 0) {
				const int r = wm * TM + i * 16 + g + 8 * h;

				st1[wn][r] = a1;
				st2[wn][r] = a2;
			}
		}
	}
	__syncthreads();  // also: every warp is done with the ring
	if (part) {
		// Split-K: this slice's sums, rows under M only: x~ W'^T in
		// part[slice][row][col], then (the first tile column's blocks)
		// the row statistics' shifted sums in the 2 M floats after
		// every slice's M x N.
		float *ps = part + (size_t)blockIdx.y * M * N;

#pragma unroll
		for (int i = 0; i < MI; i++) {
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const long row = m0 + wm * TM + i * 16 + g + 8 * h;

				if (row >= M)
					continue;
#pragma unroll
				for (int j = 0; j < NI; j++) {
					const long wr = n0 + wn * TN + j * 8 + 2 * t;
					const long col = wperm ? perm32(wr) : wr;  // wr even: col too

					if (col < N)
						ps[row * N + col] = acc[i][j][2 * h];
					if (col + 1 < N)
						ps[row * N + col + 1] = acc[i][j][2 * h + 1];
				}
			}
		}
		if (n0 == 0) {
			float *pst = part + (size_t)gridDim.y * M * N + (size_t)blockIdx.y * 2 * M;

			for (int r = tid; r < BM && m0 + r < M; r += MMA_THREADS) {
				float a1 = st1[0][r], a2 = st2[0][r];

				for (int w = 1; w < WN; w++) {
					a1 += st1[w][r];
					a2 += st2[w][r];
				}
				pst[2 * (m0 + r)] = a1;
				pst[2 * (m0 + r) + 1] = a2;
			}
		}
		return;
	}
	for (int r = tid; r < BM; r += MMA_THREADS) {
		float a1 = st1[0][r], a2 = st2[0][r];

		for (int w = 1; w < WN; w++) {
			a1 += st1[w][r];
			a2 += st2[w][r];
		}
		shifted_stats(a1, a2, K, &st_mt[r], &st_rs[r]);
	}
	__syncthreads();

	// Epilogue: y = rstd * (acc - (mean - c) * s) + b', staged in the
	// dtype. acc[i][j][2h + e] is row wm*TM + i*16 + g + 8h, column
	// wn*TN + j*8 + 2t + e.
	T *sy = (T *)smem;

#pragma unroll
	for (int j = 0; j < NI; j++) {
		const int cl = wn * TN + j * 8 + 2 * t;
		const long col = n0 + cl;
		const float sc0 = col < N ? sW[col] : 0.f, sc1 = col + 1 < N ? sW[col + 1] : 0.f;
		const float bc0 = col < N ? bf[col] : 0.f, bc1 = col + 1 < N ? bf[col + 1] : 0.f;

#pragma unroll
		for (int i = 0; i < MI; i++) {
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int rl = wm * TM + i * 16 + g + 8 * h;
				const float mt = st_mt[rl], rs = st_rs[rl];
				const float v0 = rs * (acc[i][j][2 * h] - mt * sc0) + bc0;
				const float v1 = rs * (acc[i][j][2 * h + 1] - mt * sc1) + bc1;

				if constexpr (BF)
					*(__nv_bfloat162 *)&sy[rl * YLD + cl] = __floats2bfloat162_rn(v0, v1);
				else
					*(float2 *)&sy[rl * YLD + cl] = make_float2(v0, v1);
			}
		}
	}
	__syncthreads();
	store_tile<T, BM, BN, YLD, MMA_THREADS>(y, sy, m0, n0, M, N, tid);
}

// ---------------------------------------------------------------------------
// Launchers

// The dynamic shared memory limit of one instance.
template <typename T, int BM, int BN>
static int mma_smem_limit(void)
{
	return CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_mma<T, BM, BN>,
					       cudaFuncAttributeMaxDynamicSharedMemorySize,
					       MMA_SMEM(BM, BN)));
}

// The dynamic shared memory limits of every instance, raised once a process.
int fwd_mma_setup(void)
{
	static int done;

	if (done)
		return 0;
	if (mma_smem_limit<__nv_bfloat16, 128, 256>() || mma_smem_limit<__nv_bfloat16, 64, 128>() ||
	    mma_smem_limit<float, 128, 256>() || mma_smem_limit<float, 64, 128>() ||
	    mma_smem_limit<__nv_bfloat16, 128, 192>() || mma_smem_limit<float, 128, 192>() ||
	    mma_smem_limit<__nv_bfloat16, 32, 128>() || mma_smem_limit<float, 32, 128>())
		return -1;
	done = 1;
	return 0;
}

// One block a BM x BN tile of y, all of K.
template <typename T, int BM, int BN>
static int mma_tiles(const struct lnl_op *op, const T *x, cudaStream_t st)
{
	const long M = op->M;
	const int K = (int)op->K, N = (int)op->N;
	const long tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);

	k_fwd_fused_mma<T, BM, BN><<<(unsigned)tiles, MMA_THREADS, MMA_SMEM(BM, BN), st>>>(
		x, (const T *)op->Wf, op->ldw, op->sW, op->bf, (T *)op->y, M, K, N, nullptr, 0, 0);
	return CUDA_CHECK_LAUNCH("k_fwd_fused_mma");
}

template <typename T>
static int mma_run(const struct lnl_op *op, const T *x, int big, cudaStream_t st)
{
	if (!big)
		return mma_tiles<T, 64, 128>(op, x, st);
	return op->mma_bn == 192 ? mma_tiles<T, 128, 192>(op, x, st)
				 : mma_tiles<T, 128, 256>(op, x, st);
}

template <typename T, int BM>
static int mma_split_run(const struct lnl_op *op, const T *x, cudaStream_t st)
{
	const long M = op->M;
	const int K = (int)op->K, N = (int)op->N;
	const long small = ((M + BM - 1) / BM) * ((N + 127) / 128);
	const int KT = lnl_ktiles(op->K, op->dt);
	// slices of equal k-tiles; the last may be short, none empty
	const int kchunk = (KT + op->splits - 1) / op->splits;
	const int splits = (KT + kchunk - 1) / kchunk;

	if (!op->fpart || op->splits < 2)
		return error("ln_linear_fwd: split-K without its partials");
	k_fwd_fused_mma<T, BM, 128><<<dim3((unsigned)small, (unsigned)splits), MMA_THREADS,
				      MMA_SMEM(BM, 128), st>>>(
		x, (const T *)op->Wf, op->ldw, op->sW, op->bf, (T *)op->y, M, K, N, op->fpart, kchunk,
		op->wperm);
	if (CUDA_CHECK_LAUNCH("k_fwd_fused_mma split-K"))
		return -1;
	return fwd_split_reduce_launch(op, splits, NULL, st);
}

// In op->mma_bm-row tiles (split_tile).
template <typename T>
static int mma_split_rows(const struct lnl_op *op, const T *x, cudaStream_t st)
{
	return op->mma_bm == 32 ? mma_split_run<T, 32>(op, x, st) : mma_split_run<T, 64>(op, x, st);
}

int fwd_mma_split_launch(const struct lnl_op *op, const void *x, cudaStream_t st)
{
	return op->dt == FP_BF16 ? mma_split_rows(op, (const __nv_bfloat16 *)x, st)
				 : mma_split_rows(op, (const float *)x, st);
}

int fwd_mma_launch(const struct lnl_op *op, const void *x, int big, cudaStream_t st)
{
	return op->dt == FP_BF16 ? mma_run(op, (const __nv_bfloat16 *)x, big, st)
				 : mma_run(op, (const float *)x, big, st);
}
