// bwd.cu - the LayerNorm+Linear backward (ln_linear_bwd): the naive kernel
// (one thread a row, fp32 atomics), the db column sums, and the launcher of
// every variant; the unfused and fused variants' GEMMs are cuBLASLt's
// (cublaslt.cu) and their LayerNorm kernels the LayerNorm module's
// (layernorm/layernorm.h). See internal.h for the numerics.
#include "config.h"

#include <string.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "internal.h"
#include "layernorm/layernorm.h"

// --- backward, naive: one thread per row. Statistics as in k_fwd_naive;
// dh = dy_row W recomputed for each chunk of V columns (two passes: sums,
// then dx); every parameter gradient (dgamma, dbeta, dW, db) accumulated
// with fp32 atomics into a zeroed fp32 buffer, converted to the dtype
// afterwards. Each thread starts its k loops at its own row index, so the
// 32 lanes of a warp read W at adjacent chunks and add to adjacent
// addresses of dW instead of queueing on one; dy is read V entries at a time
// where N allows, and the loops over N are unrolled so that several loads
// are in flight (at M = 512 there is one warp per SM; batching the dW
// loads made it markedly faster at 512 x 4096 -> 16384 on an H200). The
// teaching version: M*N*K atomics and recomputation make it slow by design.
template <typename T, int V>
__global__ void k_bwd_naive(const T *__restrict__ x, const T *__restrict__ gamma,
			    const T *__restrict__ beta, const T *__restrict__ W,
			    const T *__restrict__ dy, T *__restrict__ dx,
			    float *__restrict__ acc, long M, int K, int N)
{
	long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
	float *adW = acc, *adg = acc + (long)N * K, *adb = adg + K, *adbias = adb + K;
	const T *xr = x + i * K, *dyr = dy + i * N;
	const int KC = K / V, NV = N % V == 0 ? V : 1;
	float c, mt, rs, sg = 0, sgx = 0;

	if (i >= M)
		return;
	naive_row_stats<T, V>(x, M, K, i, &c, &mt, &rs);
	for (int nn = 0; nn < N; nn++) {
		int n = (int)((nn + i) % N);

		atomicAdd(&adbias[n], to_f(dyr[n]));
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int kc = 0; kc < KC; kc++) {
			int k = (int)((kc + i) % KC) * V;
			float dh[V], xv[V], gv[V];

			for (int j = 0; j < V; j++)
				dh[j] = 0.f;
#pragma unroll 8
			for (int n = 0; n < N; n += NV) {
				float dv[V], wv[V];

				if (NV == V)
					load_chunk<T, V>(dy, M, N, i, n, dv);
				else
					dv[0] = to_f(dyr[n]);
#pragma unroll
				for (int jn = 0; jn < V; jn++) {
					if (jn >= NV)
						break;
					load_chunk<T, V>(W, N, K, n + jn, k, wv);
					for (int j = 0; j < V; j++)
						dh[j] = fmaf(dv[jn], wv[j], dh[j]);
				}
			}
			load_chunk<T, V>(x, M, K, i, k, xv);
			load_chunk<T, V>(gamma, 1, K, 0, k, gv);
			for (int j = 0; j < V; j++) {
				float xh = ((xv[j] - c) - mt) * rs, g = dh[j] * gv[j];

				if (pass == 0) {
					atomicAdd(&adg[k + j], dh[j] * xh);
					atomicAdd(&adb[k + j], dh[j]);
					sg += g;
					sgx += g * xh;
				} else {
					dx[i * K + k + j] = from_f<T>(rs * (g - sg / K - xh * (sgx / K)));
				}
			}
		}
	}
	// dW: NB chunks of dy are loaded before their atomics are issued, so
	// NB loads are in flight (the compiler does not move loads above
	// atomics, and one load at a time waited behind the previous chunk's
	// atomics).
	constexpr int NB = 8;
	for (int kk = 0; kk < K; kk++) {
		int k = (int)((kk + i) % K);
		float h = ((to_f(xr[k]) - c) - mt) * rs * to_f(gamma[k]) +
			  to_f(beta[k]);

		for (int n0 = 0; n0 < N; n0 += NB * NV) {
			float dv[NB][V];

#pragma unroll
			for (int u = 0; u < NB; u++) {
				const int n = n0 + u * NV;

				if (NV == V)
					load_chunk<T, V>(dy, M, N, i, n, dv[u]);
				else
					dv[u][0] = n < N ? to_f(dyr[n]) : 0.f;
			}
#pragma unroll
			for (int u = 0; u < NB; u++) {
#pragma unroll
				for (int jn = 0; jn < V; jn++) {
					const int n = n0 + u * NV + jn;

					if (jn < NV && n < N)
						atomicAdd(&adW[(long)n * K + k], dv[u][jn] * h);
				}
			}
		}
	}
}

template <typename T>
__global__ void k_f32_to(const float *__restrict__ src, T *__restrict__ dst, long n)
{
	for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
	     i += (long)gridDim.x * blockDim.x)
		dst[i] = from_f<T>(src[i]);
}

// --- db: column sums of dy over rows, deterministic (no atomics): blocks
// of 32 columns x COLSUM_ROWS rows write per-chunk partials, k_colsum_final
// adds the chunks in order.
template <typename T, int V>
__global__ void k_colsum_db(const T *__restrict__ dy, float *__restrict__ part,
			    long M, long C)
{
	__shared__ float sa[8][32 * V + 1];
	int tx = threadIdx.x, ty = threadIdx.y;
	long c0 = (blockIdx.x * 32L + tx) * V, chunk = blockIdx.y;
	long r0 = chunk * COLSUM_ROWS, r1 = r0 + COLSUM_ROWS < M ? r0 + COLSUM_ROWS : M;
	float a[V];

#pragma unroll
	for (int e = 0; e < V; e++)
		a[e] = 0;
	if (c0 < C) {  // V > 1 only when C % V == 0: all V columns are in
		for (long r = r0 + ty; r < r1; r += 8) {
			if constexpr (V > 1) {
				T v[V];
				uint4 q = __ldcs(reinterpret_cast<const uint4 *>(dy + r * C + c0));

				memcpy(v, &q, sizeof q);
#pragma unroll
				for (int e = 0; e < V; e++)
					a[e] += to_f(v[e]);
			} else {
				a[0] += to_f(dy[r * C + c0]);
			}
		}
	}
#pragma unroll
	for (int e = 0; e < V; e++)
		sa[ty][tx * V + e] = a[e];
	__syncthreads();
	if (ty == 0 && c0 < C) {
#pragma unroll
		for (int e = 0; e < V; e++) {
			for (int j = 1; j < 8; j++)
				a[e] += sa[j][tx * V + e];
			part[chunk * C + c0 + e] = a[e];
		}
	}
}

template <typename T>
__global__ void k_colsum_final(const float *__restrict__ part, long R, int C,
			       T *__restrict__ out0, T *__restrict__ out1)
{
	long c = blockIdx.x * (long)blockDim.x + threadIdx.x;
	float a = 0, b = 0;

	if (c >= C)
		return;
	for (long r = 0; r < R; r++) {
		a += part[r * C + c];
		if (out1)
			b += part[(R + r) * C + c];
	}
	out0[c] = from_f<T>(a);
	if (out1)
		out1[c] = from_f<T>(b);
}


// ---------------------------------------------------------------------------
// Launcher

template <typename T>
static int bwd_run(const struct lnl_op *op, const T *x, const T *dy, cudaStream_t st)
{
	const long M = op->M, K = op->K, N = op->N, R = (M + COLSUM_ROWS - 1) / COLSUM_ROWS;

	if (op->variant == BWD_NAIVE) {
		size_t nacc = (size_t)N * K + 2 * (size_t)K + (size_t)N;

		if (CUDA_CHECK(cudaMemsetAsync(op->acc, 0, nacc * sizeof(float), st)))
			return -1;
		if (lnl_vec_width(K, op->dt) == 1)
			k_bwd_naive<T, 1><<<(unsigned)((M + FP_WARP - 1) / FP_WARP), FP_WARP, 0, st>>>(
				x, (const T *)op->gamma, (const T *)op->beta,
				(const T *)op->W, dy, (T *)op->dx, op->acc, M, K, N);
		else
			k_bwd_naive<T, 16 / sizeof(T)><<<(unsigned)((M + FP_WARP - 1) / FP_WARP),
							 FP_WARP, 0, st>>>(
				x, (const T *)op->gamma, (const T *)op->beta,
				(const T *)op->W, dy, (T *)op->dx, op->acc, M, K, N);
		if (CUDA_CHECK_LAUNCH("k_bwd_naive"))
			return -1;
		k_f32_to<T><<<1024, 256, 0, st>>>(op->acc, (T *)op->dW, (long)N * K);
		k_f32_to<T><<<1, 256, 0, st>>>(op->acc + (long)N * K, (T *)op->dg, K);
		k_f32_to<T><<<1, 256, 0, st>>>(op->acc + (long)N * K + K, (T *)op->dbeta, K);
		k_f32_to<T><<<1, 256, 0, st>>>(op->acc + (long)N * K + 2 * K, (T *)op->db, N);
		return CUDA_CHECK_LAUNCH("k_f32_to");
	}
	// Unfused: h = LayerNorm(x) recomputed, with its statistics; dW = dy^T
	// h; dh = dy W; the LayerNorm backward (the LayerNorm module's
	// kernel) gives dx, dgamma and dbeta. Fused: dh first, then one pass
	// over x and dh recomputes the statistics, writes h and does the
	// LayerNorm backward (x read once, no statistics in memory); then dW.
	if (op->variant == BWD_FUSED) {
		if (lt_run(&op->g1, op->lt, op->W, dy, op->dh, op->workspace, st) ||
		    layernorm_bwd_recompute(op->dt, op->dh, x, op->gamma, op->beta,
					     op->h, op->dx, op->dg, op->dbeta, op->part, op->lnb,
					     M, K, st) ||
		    lt_run(&op->g0, op->lt, op->h, dy, op->dW, op->workspace, st))
			return -1;
	} else if (layernorm_fwd(op->dt, x, op->gamma, op->beta, op->h, op->stats,
				  M, K, st) ||
		   lt_run(&op->g0, op->lt, op->h, dy, op->dW, op->workspace, st) ||
		   lt_run(&op->g1, op->lt, op->W, dy, op->dh, op->workspace, st) ||
		   layernorm_bwd(op->dt, op->dh, x, op->gamma, op->stats, op->dx,
				  op->dg, op->dbeta, op->part, op->lnb, M, K, st)) {
		return -1;
	}
	// db: column sums of dy (partials reuse the buffer: ordered on st).
	if (N % (16 / sizeof(T)) == 0)
		k_colsum_db<T, 16 / sizeof(T)><<<dim3((unsigned)((N + 32 * (16 / sizeof(T)) - 1) /
							     (32 * (16 / sizeof(T)))),
						      (unsigned)R), dim3(32, 8), 0, st>>>(
			dy, op->part, M, N);
	else
		k_colsum_db<T, 1><<<dim3((unsigned)((N + 31) / 32), (unsigned)R),
				    dim3(32, 8), 0, st>>>(dy, op->part, M, N);
	if (CUDA_CHECK_LAUNCH("k_colsum_db"))
		return -1;
	k_colsum_final<T><<<(unsigned)((N + 255) / 256), 256, 0, st>>>(
		op->part, R, N, (T *)op->db, (T *)NULL);
	return CUDA_CHECK_LAUNCH("k_colsum_final");
}

int bwd_launch(const struct lnl_op *op, const void *x, const void *dy, cudaStream_t st)
{
	return op->dt == FP_BF16
		? bwd_run(op, (const __nv_bfloat16 *)x, (const __nv_bfloat16 *)dy, st)
		: bwd_run(op, (const float *)x, (const float *)dy, st);
}
