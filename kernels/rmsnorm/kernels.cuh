// kernels.cuh - the RMSNorm kernels (simplest first) and the templates that
// pick an instance for a row width. CUDA C++ only; included by
// kernels/rmsnorm/rmsnorm.cu alone, so no kernel is compiled twice.
//
// The 16-byte accesses, the row sums and the launch bookkeeping (struct
// kcfg, row_grid, persistent_grid) are LayerNorm's, from
// kernels/layernorm/rows.cuh; so are the row capacities (FWD_PER_THREAD,
// BWD_PER_THREAD) and thus layernorm_plan(), which picks the threads per
// row here too. RMSNorm needs no mean, so its statistics are one pass: the
// sum of x^2, which has no cancellation to guard against.
//
// With xhat = x rstd and g = dy gamma, the backward is
//   dx = rstd (g - xhat mean(g xhat)) = rstd g - x (rstd^3 d / N),
//   d = sum_j g_j x_j, dgamma = sum over rows of dy xhat,
// so one pass over the row takes both of its sums (sum x^2 and d).
#ifndef FP_RMSNORM_KERNELS_CUH
#define FP_RMSNORM_KERNELS_CUH

#include "layernorm/rows.cuh"
#include "rmsnorm/rmsnorm.h"

// What a forward row kernel does:
//   RMS_STATS  writes rstd per row (the unfused forward's first kernel)
//   RMS_NORM   reads rstd, writes y = x rstd gamma (its second)
//   RMS_FUSED  both on chip: y only
enum { RMS_STATS, RMS_NORM, RMS_FUSED };
#define RMS_RCHUNK 64     // rows per block of the column-partial kernel, at
                          // least (more where M / 64 passes the grid's y limit)
#define RMS_ELEM_THREADS 256
#define RMS_ELEM_UNROLL 4
// The fused forward's thread capacity where a row fills a block of
// ROW_BLOCK at it (N in (ROW_BLOCK * 8, ROW_BLOCK * 16]: 2049-4096): one
// row a block of 256 threads, 16 values each, Triton's shape for its
// rmsnorm (a row a program), instead of two rows of 128 threads at 32.
#define RMS_FUSED_PER_THREAD 16

// Kernel 1: rows of any width, a block of WIDE_THREADS per row, scalar
// accesses, two passes over global memory (sum x^2; write y), the second
// mostly from L2. The fallback for rows the register kernel cannot take: N
// not a multiple of the 16-byte vector (rows then start unaligned) or wider
// than FWD_PER_THREAD x 1024.
template <typename T, int MODE>
__global__ void __launch_bounds__(WIDE_THREADS)
rms_wide_fwd(const T *__restrict__ x, const T *__restrict__ gamma,
	     T *__restrict__ y, float *__restrict__ rstd_io, long M, long N)
{
	__shared__ float sh[WIDE_THREADS / 32];

	for (long row = blockIdx.x; row < M; row += gridDim.x) {
		const T *xr = x + row * N;
		float rstd;

		if constexpr (MODE == RMS_NORM) {
			rstd = rstd_io[row];
		} else {
			float s[1] = { 0.0f };

			for (long j = threadIdx.x; j < N; j += WIDE_THREADS) {
				float v = to_f(xr[j]);
				s[0] = fmaf(v, v, s[0]);
			}
			row_sum<WIDE_THREADS, 1>(s, sh);
			rstd = rsqrtf(s[0] / (float)N + (float)RMSNORM_EPS);
			if (MODE == RMS_STATS && threadIdx.x == 0)
				rstd_io[row] = rstd;
		}
		if constexpr (MODE != RMS_STATS)
			for (long j = threadIdx.x; j < N; j += WIDE_THREADS)
				y[row * N + j] = from_f<T>(to_f(xr[j]) * rstd * to_f(gamma[j]));
	}
}

// Kernel 2: the row in registers (as LayerNorm's kernel 2): TPR threads a
// row, each loading its FWD_PER_THREAD values with 16-byte loads, all of
// them before the first use; x is read from DRAM once and y written once.
// With TPR < 256 a block of 256 takes 256 / TPR rows. E is a thread's
// capacity in values: FWD_PER_THREAD, or RMS_FUSED_PER_THREAD where
// rms_fused_plan() picks it. Napkin (RMS_FUSED, 16384 x 4096 fp32):
// 537 MB, the floor is the copy of as many bytes.
template <typename T, int TPR, int MODE, int E = FWD_PER_THREAD>
__global__ void __launch_bounds__(TPR > ROW_BLOCK ? TPR : ROW_BLOCK)
rms_rows_fwd(const T *__restrict__ x, const T *__restrict__ gamma,
	     T *__restrict__ y, float *__restrict__ rstd_io, long M, long Nl)
{
	constexpr int V = 16 / sizeof(T), CH = E / V;
	constexpr int BLOCK = TPR > ROW_BLOCK ? TPR : ROW_BLOCK, RPB = BLOCK / TPR;
	__shared__ float sh[BLOCK / 32];
	const int N = (int)Nl, t = threadIdx.x % TPR, g = threadIdx.x / TPR;

	// The loop bound is the same for the whole block: barriers stay matched.
	for (long r0 = (long)blockIdx.x * RPB; r0 < M; r0 += (long)gridDim.x * RPB) {
		const long row = r0 + g;
		const bool live = row < M;
		float v[CH][V], rstd;

#pragma unroll
		for (int c = 0; c < CH; c++) {
			const int j = (c * TPR + t) * V;
			if (live && j < N)
				ld16<true>(x + row * N + j, v[c]);
			else
#pragma unroll
				for (int k = 0; k < V; k++)
					v[c][k] = 0.0f;
		}
		if constexpr (MODE == RMS_NORM) {
			rstd = live ? rstd_io[row] : 0.0f;
		} else {
			float s[1] = { 0.0f };

#pragma unroll
			for (int c = 0; c < CH; c++)
#pragma unroll
				for (int k = 0; k < V; k++)
					s[0] = fmaf(v[c][k], v[c][k], s[0]);
			row_sum<TPR, 1>(s, sh);
			rstd = rsqrtf(s[0] / (float)N + (float)RMSNORM_EPS);
			if constexpr (MODE == RMS_STATS) {
				if (live && t == 0)
					rstd_io[row] = rstd;
				continue;
			}
		}
		if (!live)
			continue;  // no barrier follows in this iteration
#pragma unroll
		for (int c = 0; c < CH; c++) {
			const int j = (c * TPR + t) * V;
			if (j < N) {
				float gm[V];

				ld16<false>(gamma + j, gm);
#pragma unroll
				for (int k = 0; k < V; k++)
					v[c][k] = v[c][k] * rstd * gm[k];
				st16<true>(y + row * N + j, v[c]);
			}
		}
	}
}

// Kernel 3: the fused backward for rows of any width, a block per row of a
// persistent grid, scalar accesses: pass 1 takes sum x^2 and d = sum dy
// gamma x, pass 2 writes dx and adds dy xhat into this block's partial row
// (each column always owned by the same thread: no race, a fixed order).
// Reads x and dy twice, the second time mostly from L2.
template <typename T>
__global__ void __launch_bounds__(WIDE_THREADS)
rms_wide_bwd(const T *__restrict__ dy, const T *__restrict__ x,
	     const T *__restrict__ gamma, T *__restrict__ dx,
	     float *__restrict__ partial, long M, long N)
{
	__shared__ float sh[WIDE_THREADS / 32 * 2];
	float *pr = partial + (size_t)blockIdx.x * N;

	for (long j = threadIdx.x; j < N; j += WIDE_THREADS)
		pr[j] = 0.0f;
	for (long row = blockIdx.x; row < M; row += gridDim.x) {
		const T *xr = x + row * N, *dyr = dy + row * N;
		float s[2] = { 0.0f, 0.0f };

		for (long j = threadIdx.x; j < N; j += WIDE_THREADS) {
			float xv = to_f(xr[j]);
			s[0] = fmaf(xv, xv, s[0]);
			s[1] = fmaf(to_f(dyr[j]) * to_f(gamma[j]), xv, s[1]);
		}
		row_sum<WIDE_THREADS, 2>(s, sh);
		const float rstd = rsqrtf(s[0] / (float)N + (float)RMSNORM_EPS);
		const float c = rstd * rstd * rstd * s[1] / (float)N;

		for (long j = threadIdx.x; j < N; j += WIDE_THREADS) {
			float xv = to_f(xr[j]), d = to_f(dyr[j]);

			dx[row * N + j] = from_f<T>(fmaf(rstd * d, to_f(gamma[j]), -xv * c));
			pr[j] = fmaf(d, xv * rstd, pr[j]);
		}
	}
}

// Kernel 4: the fused backward with the row in registers (kernel 2's
// layout, BWD_PER_THREAD values of x and of dy a thread) on a persistent
// grid: every thread keeps the same columns for every row it takes, so
// gamma is loaded once and its dgamma contributions accumulate in
// registers across rows; at the end the block's row groups add theirs in
// group order and the block writes one partial row ([grid][N], summed in a
// fixed order by kernel 7). One row sum
// of two values per row; dx stored once. Napkin (16384 x 4096 fp32): 805
// MB (dy, x read, dx written) plus the partials (grid * N * 4 bytes, read
// back by kernel 7 from L2).
//
// E: values of a row a thread holds, BWD_PER_THREAD, or
// BWD_WIDE_PER_THREAD in rows of 8193 to 16384 (a multiple of the vector;
// layernorm_bwd_wide), 512 threads a row as LayerNorm's backward takes
// them: there gamma is loaded from L1 where it is used, each row, and the
// dgamma accumulators live in dynamic shared memory (RMS_BWD_SMEM bytes,
// [E][TPR], each thread its own slots: no race, a warp's threads on
// consecutive words), which leaves x, dy and the next row's prefetch the
// registers. Before, those rows took kernel 3 (two passes through L2, the
// partial row updated in global memory every row): bf16 16384 x 12288
// fused 1059 µs against the unfused chain's 885, now 374 (H200,
// bench/RESULTS.md, "RMSNorm's fused backward: rows of 8193-16384 in
// registers").
template <typename T, int TPR, int E = BWD_PER_THREAD>
__global__ void __launch_bounds__(TPR > ROW_BLOCK ? TPR : ROW_BLOCK,
				  TPR > ROW_BLOCK ? 1 : 2)
rms_rows_bwd(const T *__restrict__ dy, const T *__restrict__ x,
	     const T *__restrict__ gamma, T *__restrict__ dx,
	     float *__restrict__ partial, long M, long Nl)
{
	constexpr int V = 16 / sizeof(T), CH = E / V;
	constexpr int BLOCK = TPR > ROW_BLOCK ? TPR : ROW_BLOCK, RPB = BLOCK / TPR;
	constexpr bool WIDE = E > BWD_PER_THREAD;
	__shared__ float sh[BLOCK / 32 * 2];
	extern __shared__ float sacc[];
	const int N = (int)Nl, t = threadIdx.x % TPR, g = threadIdx.x / TPR;
	const float inv_n = 1.0f / (float)N;
	float gm[WIDE ? 1 : CH][V], ag[WIDE ? 1 : CH][V];
	auto acc = [&](int c, int k) -> float & {
		if constexpr (WIDE)
			return sacc[(c * V + k) * TPR + t];
		else
			return ag[c][k];
	};
	// gamma's chunk c: held (gm[c]), or loaded into *buf (WIDE)
	auto gam = [&](int c, float (&buf)[V]) -> const float * {
		if constexpr (WIDE) {
			const int j = (c * TPR + t) * V;
			if (j < N)
				ld16<false>(gamma + j, buf);
			else
#pragma unroll
				for (int k = 0; k < V; k++)
					buf[k] = 0.0f;
			return buf;
		} else {
			return gm[c];
		}
	};

#pragma unroll
	for (int c = 0; c < CH; c++) {
		const int j = (c * TPR + t) * V;
		if (!WIDE && j < N)
			ld16<false>(gamma + j, gm[WIDE ? 0 : c]);
#pragma unroll
		for (int k = 0; k < V; k++) {
			if (!WIDE && j >= N)
				gm[WIDE ? 0 : c][k] = 0.0f;
			acc(c, k) = 0.0f;
		}
	}
	// bf16: the next row's x and dy are loaded (as raw 16-byte vectors,
	// 4 registers each) while this one is reduced and written, so loads
	// stay in flight across the row sum's barrier and the stores. fp32
	// would need twice the registers for it (and meets its mark without).
	constexpr bool PF = sizeof(T) == 2;
	const long rstep = (long)gridDim.x * RPB;
	uint4 nx[PF ? CH : 1], nd[PF ? CH : 1];

	if constexpr (PF) {
		const long row = (long)blockIdx.x * RPB + g;
#pragma unroll
		for (int c = 0; c < CH; c++) {
			const int j = (c * TPR + t) * V;
			if (row < M && j < N) {
				nx[c] = __ldcs((const uint4 *)(x + row * N + j));
				nd[c] = __ldcs((const uint4 *)(dy + row * N + j));
			}
		}
	}
	for (long r0 = (long)blockIdx.x * RPB; r0 < M; r0 += rstep) {
		const long row = r0 + g;
		const bool live = row < M;
		float xv[CH][V], gv[CH][V], s[2] = { 0.0f, 0.0f };

#pragma unroll
		for (int c = 0; c < CH; c++) {
			const int j = (c * TPR + t) * V;
			if (live && j < N) {
				if constexpr (PF) {
					unpack_bf16x8(nx[c], xv[c]);
					unpack_bf16x8(nd[c], gv[c]);
				} else {
					ld16<true>(x + row * N + j, xv[c]);
					ld16<true>(dy + row * N + j, gv[c]);
				}
			} else {
#pragma unroll
				for (int k = 0; k < V; k++)
					xv[c][k] = gv[c][k] = 0.0f;
			}
		}
		if constexpr (PF) {
			const long next = row + rstep;
#pragma unroll
			for (int c = 0; c < CH; c++) {
				const int j = (c * TPR + t) * V;
				if (next < M && j < N) {
					nx[c] = __ldcs((const uint4 *)(x + next * N + j));
					nd[c] = __ldcs((const uint4 *)(dy + next * N + j));
				}
			}
		}
#pragma unroll
		for (int c = 0; c < CH; c++) {
			float gb[V];
			const float *gc = gam(c, gb);

#pragma unroll
			for (int k = 0; k < V; k++) {
				s[0] = fmaf(xv[c][k], xv[c][k], s[0]);
				s[1] = fmaf(gv[c][k] * gc[k], xv[c][k], s[1]);
			}
		}
		row_sum<TPR, 2>(s, sh);
		const float rstd = rsqrtf(s[0] * inv_n + (float)RMSNORM_EPS);
		const float cf = rstd * rstd * rstd * s[1] * inv_n;

		// A row past M has dy = x = 0: it adds nothing to dgamma.
#pragma unroll
		for (int c = 0; c < CH; c++) {
			float gb[V];
			const float *gc = gam(c, gb);

#pragma unroll
			for (int k = 0; k < V; k++) {
				acc(c, k) = fmaf(gv[c][k], xv[c][k] * rstd, acc(c, k));
				gv[c][k] = fmaf(rstd * gv[c][k], gc[k], -xv[c][k] * cf);
			}
		}
		if (!live)
			continue;
#pragma unroll
		for (int c = 0; c < CH; c++) {
			const int j = (c * TPR + t) * V;
			if (j < N)
				st16<true>(dx + row * N + j, gv[c]);
		}
	}
	// One partial row a block: the row groups after the first hand their
	// sums to it through shared memory, added in group order (a fixed
	// order), so kernel 7 sums grid rows, not grid * RPB.
	if constexpr (RPB > 1) {
		__shared__ float red[RPB > 1 ? RPB - 1 : 1][TPR * BWD_PER_THREAD];

		if (g > 0)
#pragma unroll
			for (int c = 0; c < CH; c++)
#pragma unroll
				for (int k = 0; k < V; k++)
					red[g - 1][(c * TPR + t) * V + k] = acc(c, k);
		__syncthreads();
		if (g > 0)
			return;
		for (int h = 0; h < RPB - 1; h++)
#pragma unroll
			for (int c = 0; c < CH; c++)
#pragma unroll
				for (int k = 0; k < V; k++)
					acc(c, k) += red[h][(c * TPR + t) * V + k];
	}
	float *pr = partial + (size_t)blockIdx.x * N;
#pragma unroll
	for (int c = 0; c < CH; c++) {
		const int j = (c * TPR + t) * V;
		if (j < N)
#pragma unroll
			for (int k = 0; k < V; k += 4) {
				float a4[4];

#pragma unroll
				for (int e = 0; e < 4; e++)
					a4[e] = acc(c, k + e);
				st16<false>(pr + j + k, a4);
			}
	}
}

// Dynamic shared memory of rms_rows_bwd<T, TPR, E>: the dgamma
// accumulators where E is wide.
#define RMS_BWD_SMEM(TPR, E) ((E) > BWD_PER_THREAD ? (size_t)(TPR) * (E) * sizeof(float) : 0)

// The unfused backward, as an eager framework runs it: separate reductions
// and elementwise kernels around the rstd the forward saved.
// Kernel 5a: d = sum_j dy gamma x per row, to DRAM (16-byte loads where
// rows are aligned, else scalar): a block takes ROW_BLOCK / TPR rows of
// TPR threads, TPR the fewest from 32 to ROW_BLOCK that leave each thread
// at most RMS_DOT_VECS 16-byte vectors of its row (row_group_threads()).
// A block of 256 a row left a 768-wide bf16 row's 96 vectors to 96
// threads, one load each, waiting on latency (bench/RESULTS.md, "The
// unfused RMSNorm backward's row dots in row groups").
#define RMS_DOT_VECS 4
template <typename T, int TPR>
__global__ void __launch_bounds__(ROW_BLOCK)
rms_rowdot(const T *__restrict__ dy, const T *__restrict__ x,
	   const T *__restrict__ gamma, float *__restrict__ d, long M, long N)
{
	constexpr int V = 16 / sizeof(T), RPB = ROW_BLOCK / TPR;
	__shared__ float sh[ROW_BLOCK / 32];
	const int t = threadIdx.x % TPR, g = threadIdx.x / TPR;

	// The loop bound is the same for the whole block: barriers stay matched.
	for (long r0 = (long)blockIdx.x * RPB; r0 < M; r0 += (long)gridDim.x * RPB) {
		const long row = r0 + g;
		const bool live = row < M;
		const T *xr = x + row * N, *dyr = dy + row * N;
		float s[1] = { 0.0f };

		if (live && N % V == 0) {
#pragma unroll 4
			for (long j = (long)t * V; j < N; j += TPR * V) {
				float a[V], b[V], gm[V];

				ld16<true>(xr + j, a);
				ld16<true>(dyr + j, b);
				ld16<false>(gamma + j, gm);
#pragma unroll
				for (int k = 0; k < V; k++)
					s[0] = fmaf(b[k] * gm[k], a[k], s[0]);
			}
		} else if (live) {
			for (long j = t; j < N; j += TPR)
				s[0] = fmaf(to_f(dyr[j]) * to_f(gamma[j]), to_f(xr[j]), s[0]);
		}
		row_sum<TPR, 1>(s, sh);
		if (live && t == 0)
			d[row] = s[0];
	}
}

// Kernel 5b: dx = rstd dy gamma - x rstd^3 d / N, elementwise over the
// M N values (VW values an access: 16 bytes where rows are aligned, else
// 1), RMS_ELEM_UNROLL accesses in flight per thread.
template <typename T, int VW>
__device__ __forceinline__ void ldv(const T *p, float *v)
{
	if constexpr (VW * sizeof(T) == 16)
		ld16<true>(p, v);
	else
#pragma unroll
		for (int k = 0; k < VW; k++)
			v[k] = to_f(p[k]);
}

template <typename T, int VW>
__device__ __forceinline__ void stv(T *p, const float *v)
{
	if constexpr (VW * sizeof(T) == 16)
		st16<true>(p, v);
	else
#pragma unroll
		for (int k = 0; k < VW; k++)
			p[k] = from_f<T>(v[k]);
}

template <typename T, int VW>
__global__ void __launch_bounds__(RMS_ELEM_THREADS)
rms_dx(const T *__restrict__ dy, const T *__restrict__ x,
       const T *__restrict__ gamma, const float *__restrict__ rstd,
       const float *__restrict__ d, T *__restrict__ dx, long M, long N)
{
	const size_t nvr = (size_t)N / VW, nv = (size_t)M * nvr;
	const size_t stride = (size_t)gridDim.x * RMS_ELEM_THREADS * RMS_ELEM_UNROLL;
	const float inv_n = 1.0f / (float)N;

	for (size_t q0 = (size_t)blockIdx.x * RMS_ELEM_THREADS * RMS_ELEM_UNROLL + threadIdx.x;
	     q0 < nv; q0 += stride) {
		float a[RMS_ELEM_UNROLL][VW], b[RMS_ELEM_UNROLL][VW];

#pragma unroll
		for (int u = 0; u < RMS_ELEM_UNROLL; u++) {
			const size_t q = q0 + (size_t)u * RMS_ELEM_THREADS;
			if (q < nv) {
				ldv<T, VW>(x + q * VW, a[u]);
				ldv<T, VW>(dy + q * VW, b[u]);
			}
		}
#pragma unroll
		for (int u = 0; u < RMS_ELEM_UNROLL; u++) {
			const size_t q = q0 + (size_t)u * RMS_ELEM_THREADS;
			if (q < nv) {
				const size_t row = q / nvr, j = (q - row * nvr) * VW;
				const float r = rstd[row], cf = r * r * r * d[row] * inv_n;
				float gm[VW];

				ldv<T, VW>(gamma + j, gm);
#pragma unroll
				for (int k = 0; k < VW; k++)
					b[u][k] = fmaf(r * b[u][k], gm[k], -a[u][k] * cf);
				stv<T, VW>(dx + q * VW, b[u]);
			}
		}
	}
}

// Kernel 6: dgamma partials, a column reduction: block (column tile,
// chunk of `chunk` rows), a thread a column summing dy x rstd down its
// chunk into partial[chunk][N] (coalesced across the warp).
template <typename T>
__global__ void __launch_bounds__(RMS_ELEM_THREADS)
rms_dgamma_partial(const T *__restrict__ dy, const T *__restrict__ x,
		   const float *__restrict__ rstd, float *__restrict__ partial,
		   long M, long N, long chunk)
{
	const long j = (long)blockIdx.x * RMS_ELEM_THREADS + threadIdx.x;
	const long r0 = (long)blockIdx.y * chunk;
	const long r1 = r0 + chunk < M ? r0 + chunk : M;
	float s = 0.0f;

	if (j >= N)
		return;
	for (long r = r0; r < r1; r++)
		s = fmaf(to_f(dy[r * N + j]), to_f(x[r * N + j]) * rstd[r], s);
	partial[(size_t)blockIdx.y * N + j] = s;
}

// Kernel 7: out[c] = sum over the P partial rows of partial[p][c], in a
// fixed order (LayerNorm's reduce_partials for a row of W columns):
// RED_COLS columns a block, RED_SLICES slices of the rows summed by a tree.
template <typename T>
__global__ void __launch_bounds__(RED_COLS * RED_SLICES)
rms_reduce(const float *__restrict__ partial, long P, long W, T *__restrict__ out)
{
	__shared__ float sh[RED_SLICES][RED_COLS + 1];
	const long col = (long)blockIdx.x * RED_COLS + threadIdx.x;
	float s = 0.0f;

	if (col < W)
		for (long p = threadIdx.y; p < P; p += RED_SLICES)
			s += partial[(size_t)p * W + col];
	sh[threadIdx.y][threadIdx.x] = s;
	for (int h = RED_SLICES / 2; h; h >>= 1) {
		__syncthreads();
		if ((int)threadIdx.y < h)
			sh[threadIdx.y][threadIdx.x] += sh[threadIdx.y + h][threadIdx.x];
	}
	if (threadIdx.y == 0 && col < W)
		out[col] = from_f<T>(sh[0][threadIdx.x]);
}

/* ------------------------------------------------------------------------ */
/* Picking an instance                                                      */
/* ------------------------------------------------------------------------ */

#define RMS_FWD_CASE(TPR, T, MODE)                                            \
	case TPR: return { (const void *)rms_rows_fwd<T, TPR, MODE>,          \
			   TPR > ROW_BLOCK ? TPR : ROW_BLOCK,                  \
			   TPR > ROW_BLOCK ? 1 : ROW_BLOCK / TPR, 0 }
#define RMS_BWD_CASE(TPR, T)                                                  \
	case TPR: return { (const void *)rms_rows_bwd<T, TPR>,                \
			   TPR > ROW_BLOCK ? TPR : ROW_BLOCK,                  \
			   TPR > ROW_BLOCK ? 1 : ROW_BLOCK / TPR, 0 }

template <typename T, int MODE>
static struct kcfg rms_fwd_kernel(int tpr)
{
	switch (tpr) {
	RMS_FWD_CASE(32, T, MODE);
	RMS_FWD_CASE(64, T, MODE);
	RMS_FWD_CASE(128, T, MODE);
	RMS_FWD_CASE(256, T, MODE);
	RMS_FWD_CASE(512, T, MODE);
	RMS_FWD_CASE(1024, T, MODE);
	default: return { (const void *)rms_wide_fwd<T, MODE>, WIDE_THREADS, 1, 0 };
	}
}

// The fused forward where rms_fused_plan() gives a row a whole block:
// RMS_FUSED_PER_THREAD values a thread.
template <typename T>
static struct kcfg rms_fused_narrow_kernel(void)
{
	return { (const void *)rms_rows_fwd<T, ROW_BLOCK, RMS_FUSED, RMS_FUSED_PER_THREAD>,
		 ROW_BLOCK, 1, 0 };
}

template <typename T>
static struct kcfg rms_bwd_kernel(int tpr, bool wide)
{
	if (wide)
		return { (const void *)rms_rows_bwd<T, WIDE_THREADS, BWD_WIDE_PER_THREAD>,
			 WIDE_THREADS, 1, RMS_BWD_SMEM(WIDE_THREADS, BWD_WIDE_PER_THREAD) };
	switch (tpr) {
	RMS_BWD_CASE(32, T);
	RMS_BWD_CASE(64, T);
	RMS_BWD_CASE(128, T);
	RMS_BWD_CASE(256, T);
	RMS_BWD_CASE(512, T);
	default: return { (const void *)rms_wide_bwd<T>, WIDE_THREADS, 1, 0 };
	}
}

#endif
