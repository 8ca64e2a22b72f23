// fwd_simt.cu - the LayerNorm+Linear forward without a tensor-core
// pipeline: the naive kernel (one thread a row), the FlashNorm weight fold
// every fused kernel reads, and the first fused kernel, which now serves
// rows whose 16-byte chunks are not aligned. See internal.h for the
// operation, the napkin math and the numerics every kernel here follows.
#include "config.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include "error.h"
#include "internal.h"

// --- forward, naive: one thread per row computes the row's statistics (two
// passes over x) and every output of the row, renormalising x for each of
// the N outputs. W is read by every thread in the same order, so a warp's
// loads broadcast; x rows are read with a stride of K between lanes, V
// elements (16 bytes) at a time where K allows. One warp per block, so that
// small M still spreads over M / 32 multiprocessors. The teaching version:
// its roofline point shows what fusing without tiling costs. (M = 16384,
// K = 768, N = 256: 3.2 G multiply-adds on 16384 threads, each a dependent
// chain of 196608 FMAs.)
template <typename T, int V>
__global__ void k_fwd_naive(const T *__restrict__ x, const T *__restrict__ gamma,
			    const T *__restrict__ beta, const T *__restrict__ W,
			    const T *__restrict__ b, T *__restrict__ y, long M,
			    int K, int N)
{
	long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
	float c, mt, rs;

	if (i >= M)
		return;
	naive_row_stats<T, V>(x, M, K, i, &c, &mt, &rs);
	// NB outputs per pass over the row: each normalised chunk serves NB
	// rows of W (rows past N read as zeros and are not stored), and NB
	// independent W streams keep loads in flight.
	constexpr int NB = 4;
	for (int n0 = 0; n0 < N; n0 += NB) {
		float acc[NB];

		for (int q = 0; q < NB; q++)
			acc[q] = 0.f;
#pragma unroll 2
		for (int k = 0; k < K; k += V) {
			float xv[V], gv[V], bv[V], wv[NB][V];

			load_chunk<T, V>(x, M, K, i, k, xv);
			load_chunk<T, V>(gamma, 1, K, 0, k, gv);
			load_chunk<T, V>(beta, 1, K, 0, k, bv);
			for (int q = 0; q < NB; q++)
				load_chunk<T, V>(W, N, K, n0 + q, k, wv[q]);
			for (int j = 0; j < V; j++) {
				float h = ((xv[j] - c) - mt) * rs * gv[j] + bv[j];

				for (int q = 0; q < NB; q++)
					acc[q] = fmaf(h, wv[q][j], acc[q]);
			}
		}
		for (int q = 0; q < NB && n0 + q < N; q++)
			y[i * N + n0 + q] = from_f<T>(acc[q] + to_f(b[n0 + q]));
	}
}

// --- FlashNorm weight fold, one warp per output feature n:
// W'[n] = round(W[n] o gamma), s[n] = sum of the rounded W'[n],
// b'[n] = W[n] . beta + b[n]. Preparation (create/check), not timed.
// perm: W' in perm32's order, over N rounded up to 32 rows (the rows of
// columns past N zero); s and b' stay in column order. W''s rows are ld
// elements apart, zero past K.
template <typename T>
__global__ void k_fold(const T *__restrict__ W, const T *__restrict__ gamma,
		       const T *__restrict__ beta, const T *__restrict__ b,
		       T *__restrict__ Wf, float *__restrict__ sW,
		       float *__restrict__ bf, int N, int K, long ld, int perm)
{
	long n = blockIdx.x * (long)(blockDim.x / FP_WARP) + threadIdx.x / FP_WARP;
	int lane = threadIdx.x % FP_WARP;
	float s = 0, bb = 0;
	T *wr = Wf + (perm ? perm32(n) : n) * ld;

	if (n >= (perm ? (N + 31L) / 32 * 32 : N))
		return;
	for (long k = (n >= N ? 0 : K) + lane; k < ld; k += FP_WARP)
		wr[k] = from_f<T>(0.f);
	if (n >= N)
		return;
	for (int k = lane; k < K; k += FP_WARP) {
		float w = to_f(W[n * K + k]);
		T wf = from_f<T>(w * to_f(gamma[k]));

		wr[k] = wf;
		s += to_f(wf);
		bb = fmaf(w, to_f(beta[k]), bb);
	}
	s = warp_sum(s);
	bb = warp_sum(bb);
	if (lane == 0) {
		sW[n] = s;
		bf[n] = bb + to_f(b[n]);
	}
}

// --- forward, fused, the first version; now the path for rows whose
// 16-byte chunks are not aligned (fp32 K % 4 != 0, bf16 K % 8 != 0): one
// kernel, a 128 x 128 tile of y per block of 256 threads, K walked in
// steps of 32. Each step's x and W' tiles go global -> registers ->
// shared memory; on the way every x element is shifted by its row's pivot
// c and its shifted value summed into the row's statistics, so the
// statistics cost no extra pass over x and the normalised x exists only as
// the shifted tile in shared memory. The next step's tiles are loaded into
// registers while the current one is multiplied. bf16 multiplies on tensor
// cores (WMMA 16x16x16, fp32 accumulation; 8 warps as 2 x 4, 64 x 32 each);
// fp32 on the FMA pipes (8 x 8 outputs per thread; plain fp32, no TF32).
// Blocks walk the tiles in groups of LNL_GROUP row tiles so that a wave's x and W'
// tiles stay in L2 when W' is larger than L2.
// A first version: no cp.async/TMA, no multi-stage pipeline, single-buffered
// shared memory, element-wise shared-memory stores, scalar epilogue stores;
// ~180 registers a thread, so one block (8 warps) per SM. Measured against
// the unfused variant, cuBLAS's Linear alone and eager PyTorch in
// bench/RESULTS.md, "LayerNorm+Linear, H100 (first versions)": correct
// (every profile, awkward shapes, compute-sanitizer clean) but bf16 an order
// of magnitude under the tensor cores and fp32 well under SGEMM, which is
// what k_fwd_fused_mma (fwd_mma.cu) and the Hopper kernels (fwd_wgmma.cu)
// fixed. Its DRAM bytes are modelled at min bytes for N = 256 (the two
// column tiles of a row block run together, so x comes from DRAM once; W'
// stays in L2).
#define SIMT_M 128
#define SIMT_N 128
#define SIMT_K 32
#define SIMT_THREADS 256
#define SIMT_ALD (SIMT_K + 8)   // bf16 tile row stride: WMMA wants a multiple of 8
#define SIMT_TLD (SIMT_M + 4)   // fp32 transposed tile row stride

template <typename T, int V>
__global__ void __launch_bounds__(SIMT_THREADS)
k_fwd_fused(const T *__restrict__ x, const T *__restrict__ Wf,
	    const float *__restrict__ sW, const float *__restrict__ bf,
	    T *__restrict__ y, long M, int K, int N)
{
	constexpr bool BF = sizeof(T) == 2;
	constexpr int TPR = SIMT_K / V;          // threads per tile row
	constexpr int RPP = SIMT_THREADS / TPR;   // tile rows per pass
	constexpr int NP = SIMT_M / RPP;         // passes (rows per thread)
	constexpr int SMEM = BF ? 2 * SIMT_M * SIMT_ALD * 2 + 8 * 256 * 4
				: 2 * SIMT_K * SIMT_TLD * 4;
	__shared__ __align__(128) unsigned char smem[SMEM];
	__shared__ float st_mt[SIMT_M], st_rs[SIMT_M];

	const int t = threadIdx.x, rr = t / TPR, kk = (t % TPR) * V;
	const long tiles_m = (M + SIMT_M - 1) / SIMT_M, tiles_n = (N + SIMT_N - 1) / SIMT_N;
	long m0, n0;

	group_tile(blockIdx.x, tiles_m, tiles_n, LNL_GROUP, SIMT_M, SIMT_N, &m0, &n0);

	float piv[NP], s1[NP], s2[NP], xa[NP][V], wb[NP][V];

	for (int p = 0; p < NP; p++) {
		long r = m0 + rr + p * RPP;

		piv[p] = r < M ? to_f(x[r * K]) : 0.f;
		s1[p] = s2[p] = 0.f;
	}
	for (int p = 0; p < NP; p++) {
		load_chunk<T, V>(x, M, K, m0 + rr + p * RPP, kk, xa[p]);
		load_chunk<T, V>(Wf, N, K, n0 + rr + p * RPP, kk, wb[p]);
	}

	// bf16: WMMA accumulators; fp32: 8 x 8 per thread.
	using namespace nvcuda;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[BF ? 4 : 1][BF ? 2 : 1];
	float facc[BF ? 1 : 8][BF ? 1 : 8];
	const int warp = t / FP_WARP, lane = t % FP_WARP;
	const int wm = warp / 4, wn = warp % 4;  // bf16 warp tile 64 x 32
	const int ty = t / 16, tx = t % 16;      // fp32 thread tile

	if constexpr (BF) {
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 2; j++)
				wmma::fill_fragment(acc[i][j], 0.f);
	} else {
		for (int i = 0; i < 8; i++)
			for (int j = 0; j < 8; j++)
				facc[i][j] = 0.f;
	}

	for (int k0 = 0; k0 < K; k0 += SIMT_K) {
		__syncthreads();  // the previous step's multiplies are done
		for (int p = 0; p < NP; p++) {
			int r = rr + p * RPP;
			long gr = m0 + r;

			for (int e = 0; e < V; e++) {
				int k = k0 + kk + e;
				float v = gr < M && k < K ? xa[p][e] - piv[p] : 0.f;

				s1[p] += v;
				s2[p] = fmaf(v, v, s2[p]);
				if constexpr (BF) {
					__nv_bfloat16 *As = (__nv_bfloat16 *)smem;
					__nv_bfloat16 *Bs = As + SIMT_M * SIMT_ALD;

					As[r * SIMT_ALD + kk + e] = __float2bfloat16_rn(v);
					Bs[r * SIMT_ALD + kk + e] = __float2bfloat16_rn(wb[p][e]);
				} else {
					float *As = (float *)smem, *Bs = As + SIMT_K * SIMT_TLD;

					As[(kk + e) * SIMT_TLD + r] = v;
					Bs[(kk + e) * SIMT_TLD + r] = wb[p][e];
				}
			}
		}
		__syncthreads();
		if (k0 + SIMT_K < K) {
			for (int p = 0; p < NP; p++) {
				load_chunk<T, V>(x, M, K, m0 + rr + p * RPP, k0 + SIMT_K + kk, xa[p]);
				load_chunk<T, V>(Wf, N, K, n0 + rr + p * RPP, k0 + SIMT_K + kk, wb[p]);
			}
		}
		if constexpr (BF) {
			const __nv_bfloat16 *As = (const __nv_bfloat16 *)smem;
			const __nv_bfloat16 *Bs = As + SIMT_M * SIMT_ALD;

			for (int ks = 0; ks < SIMT_K; ks += 16) {
				wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16,
					       wmma::row_major> a[4];
				wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16,
					       wmma::col_major> bfr[2];

				for (int i = 0; i < 4; i++)
					wmma::load_matrix_sync(a[i], As + (wm * 64 + i * 16) * SIMT_ALD + ks, SIMT_ALD);
				for (int j = 0; j < 2; j++)
					wmma::load_matrix_sync(bfr[j], Bs + (wn * 32 + j * 16) * SIMT_ALD + ks, SIMT_ALD);
#pragma unroll
				for (int i = 0; i < 4; i++)
#pragma unroll
					for (int j = 0; j < 2; j++)
						wmma::mma_sync(acc[i][j], a[i], bfr[j], acc[i][j]);
			}
		} else {
			const float *As = (const float *)smem, *Bs = As + SIMT_K * SIMT_TLD;

#pragma unroll 4
			for (int k = 0; k < SIMT_K; k++) {
				float av[8], bv[8];

				for (int i = 0; i < 8; i++)
					av[i] = As[k * SIMT_TLD + ty + 16 * i];
				for (int j = 0; j < 8; j++)
					bv[j] = Bs[k * SIMT_TLD + tx + 16 * j];
				for (int i = 0; i < 8; i++)
					for (int j = 0; j < 8; j++)
						facc[i][j] = fmaf(av[i], bv[j], facc[i][j]);
			}
		}
	}

	// Row statistics: the TPR threads of a tile row are adjacent lanes.
	for (int p = 0; p < NP; p++) {
		for (int o = TPR / 2; o > 0; o >>= 1) {
			s1[p] += __shfl_xor_sync(0xffffffffu, s1[p], o);
			s2[p] += __shfl_xor_sync(0xffffffffu, s2[p], o);
		}
		if (t % TPR == 0)
			shifted_stats(s1[p], s2[p], K, &st_mt[rr + p * RPP],
				      &st_rs[rr + p * RPP]);
	}
	__syncthreads();

	// Epilogue: y = rstd * (acc - (mean - c) * s) + b'.
	if constexpr (BF) {
		float *scratch = (float *)(smem + 2 * SIMT_M * SIMT_ALD * 2) + warp * 256;

#pragma unroll
		for (int i = 0; i < 4; i++) {
#pragma unroll
			for (int j = 0; j < 2; j++) {
				wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
				__syncwarp();
				for (int q = 0; q < 8; q++) {
					int rl = wm * 64 + i * 16 + q * 2 + lane / 16;
					long row = m0 + rl, col = n0 + wn * 32 + j * 16 + lane % 16;
					float v = scratch[(q * 2 + lane / 16) * 16 + lane % 16];

					if (row < M && col < N)
						y[row * N + col] = from_f<T>(st_rs[rl] *
							(v - st_mt[rl] * sW[col]) + bf[col]);
				}
				__syncwarp();
			}
		}
	} else {
		for (int i = 0; i < 8; i++) {
			int rl = ty + 16 * i;
			long row = m0 + rl;

			if (row >= M)
				continue;
			for (int j = 0; j < 8; j++) {
				long col = n0 + tx + 16 * j;

				if (col < N)
					y[row * N + col] = from_f<T>(st_rs[rl] *
						(facc[i][j] - st_mt[rl] * sW[col]) + bf[col]);
			}
		}
	}
}


// ---------------------------------------------------------------------------
// Launchers

template <typename T>
static int fold_run(const struct lnl_op *op, cudaStream_t st)
{
	const int perm = op->fk == FK_WS;  // the warp-specialized kernel's order
	unsigned blocks = (unsigned)(((perm ? op->Np : op->N) + 7) / 8);

	k_fold<T><<<blocks, 256, 0, st>>>((const T *)op->W, (const T *)op->gamma,
					  (const T *)op->beta, (const T *)op->b,
					  (T *)op->Wf, op->sW, op->bf, (int)op->N,
					  (int)op->K, op->ldw, perm);
	return CUDA_CHECK_LAUNCH("k_fold");
}

int fold_launch(const struct lnl_op *op, cudaStream_t st)
{
	return op->dt == FP_BF16 ? fold_run<__nv_bfloat16>(op, st) : fold_run<float>(op, st);
}

template <typename T>
static int naive_run(const struct lnl_op *op, const T *x, cudaStream_t st)
{
	const long M = op->M;
	const int K = (int)op->K, N = (int)op->N;
	const unsigned nb = (unsigned)((M + FP_WARP - 1) / FP_WARP);

	if (lnl_vec_width(K, op->dt) == 1)
		k_fwd_naive<T, 1><<<nb, FP_WARP, 0, st>>>(x, (const T *)op->gamma,
			(const T *)op->beta, (const T *)op->W, (const T *)op->b,
			(T *)op->y, M, K, N);
	else
		k_fwd_naive<T, 16 / sizeof(T)><<<nb, FP_WARP, 0, st>>>(x,
			(const T *)op->gamma, (const T *)op->beta, (const T *)op->W,
			(const T *)op->b, (T *)op->y, M, K, N);
	return CUDA_CHECK_LAUNCH("k_fwd_naive");
}

int fwd_naive_launch(const struct lnl_op *op, const void *x, cudaStream_t st)
{
	return op->dt == FP_BF16 ? naive_run(op, (const __nv_bfloat16 *)x, st)
				 : naive_run(op, (const float *)x, st);
}

// Only rows without aligned 16-byte chunks come here (lnl_vec_width 1): the
// others take the tensor-core kernels.
template <typename T>
static int simt_run(const struct lnl_op *op, const T *x, cudaStream_t st)
{
	const long M = op->M;
	const int K = (int)op->K, N = (int)op->N;
	const long tiles = ((M + SIMT_M - 1) / SIMT_M) * ((N + SIMT_N - 1) / SIMT_N);

	k_fwd_fused<T, 1><<<(unsigned)tiles, SIMT_THREADS, 0, st>>>(
		x, (const T *)op->Wf, op->sW, op->bf, (T *)op->y, M, K, N);
	return CUDA_CHECK_LAUNCH("k_fwd_fused");
}

int fwd_simt_launch(const struct lnl_op *op, const void *x, cudaStream_t st)
{
	return op->dt == FP_BF16 ? simt_run(op, (const __nv_bfloat16 *)x, st)
				 : simt_run(op, (const float *)x, st);
}
