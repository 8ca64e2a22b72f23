// unfused.cu - the unfused softmax variants: the textbook chain of
// kernels an eager framework runs (softmax_fwd/unfused4: row max,
// exp(x - max), row sum, divide; softmax_masked_fwd/unfused: masked_fill,
// then the fused softmax; softmax_bwd/unfused: row dot product, then the
// elementwise gradient), with their intermediates in DRAM. They are what
// the fused kernels (fused.cu) are measured against.
//
// Read top to bottom as in llm.c's dev/cuda: the kernels, then the
// launcher. The CPU references are in ref.c, the device helpers in
// slots.cuh.
#include "config.h"

#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "kutil.h"
#include "softmax/sm.h"
#include "slots.cuh"

// ---------------------------------------------------------------------------
// Kernels: blocks of UF_THREADS, each taking UF_THREADS / TPR rows of TPR
// threads (row_group_threads(): the fewest, 32 to 256, that give each
// thread at most UF_SLOTS 16-byte slots of its row; a block a row from 513
// slots on, rows of 4089 bf16 or 2045 fp32 elements and wider). These are
// the textbook expansion, each kernel as good as it can be on its own
// (16-byte slots, several loads in flight per thread); what they lose is
// the intermediates' round trips through DRAM. A block a row of 256
// threads left narrow rows' kernels waiting on latency: at 16384 x 1024
// bf16 half the threads had one slot and the rest none, and the chain ran
// at two thirds of the fused kernel's bandwidth (bench/RESULTS.md, "The
// unfused softmax in row groups").
//
// softmax_fwd/unfused4 at M x N: row_max reads E, exp_sub reads E and writes
// E, row_sum reads E, div reads E and writes E: 6*E*es (+16*M for the row
// vectors), three times the fused kernel's 2*E*es, so expect ~3x its time
// (as PyTorch's eager max/exp/sum/div chain against torch.softmax).
// Measured at the copy bandwidth counting the bytes they move: 3.0x the
// fused kernel, as predicted (bench/RESULTS.md, "Softmax, H100").

#define UF_THREADS 256
#define UF_SLOTS 4

// A row group's place: its row (live: below M), the thread's index in it,
// and the row's slots (none past M, so a dead group loops zero times but
// still reaches its reductions' barrier).
template <typename T, int TPR>
struct uf_row {
	long row;
	int t, off, S;
	bool live;

	__device__ __forceinline__ uf_row(long M, int N)
	{
		row = (long)blockIdx.x * (UF_THREADS / TPR) + threadIdx.x / TPR;
		t = threadIdx.x % TPR;
		live = row < M;
		off = live ? (int)(((size_t)row * N) % vec<T>::W) : 0;
		S = live ? row_slots<T>(off, N) : 0;
	}
	__device__ __forceinline__ size_t base(int N) const
	{
		return (size_t)row * N - off;
	}
};

// Sum (or max) over a row's TPR threads; every thread of the block calls
// it. red: UF_THREADS / 32 floats.
template <int TPR, bool MAX>
__device__ __forceinline__ float uf_reduce(float v, float *red)
{
	constexpr int WPR = TPR / 32;

	return group_reduce<WPR, MAX>(v, red + threadIdx.x / TPR * WPR,
				      threadIdx.x % TPR);
}

// max over each row -> mx[row] (fp32).
template <typename T, int TPR>
__global__ void __launch_bounds__(UF_THREADS)
k_row_max(const T *__restrict__ x, float *__restrict__ mx, long M, int N)
{
	__shared__ float red[UF_THREADS / 32];
	constexpr int W = vec<T>::W;
	const uf_row<T, TPR> r(M, N);
	const T *a = x + r.base(N);
	float m = -INFINITY;

#pragma unroll 4
	for (int k = r.t; k < r.S; k += TPR) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(a, k, r.off, N, -INFINITY), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			m = fmaxf(m, v[e]);
	}
	m = uf_reduce<TPR, true>(m, red);
	if (r.live && r.t == 0)
		mx[r.row] = m;
}

// e = exp(x - mx[row]) in the storage dtype (an all -inf row gives zeros).
template <typename T, int TPR>
__global__ void __launch_bounds__(UF_THREADS)
k_exp_sub(const T *__restrict__ x, const float *__restrict__ mx,
	  T *__restrict__ ex, long M, int N)
{
	constexpr int W = vec<T>::W;
	const uf_row<T, TPR> r(M, N);
	const size_t base = r.base(N);
	const float m = r.live ? mx[r.row] : 0.f, mz = m == -INFINITY ? 0.f : m;

#pragma unroll 4
	for (int k = r.t; k < r.S; k += TPR) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(x + base, k, r.off, N, -INFINITY), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			v[e] = exp2_ftz((v[e] - mz) * LOG2E);
		store_slot<T>(ex + base, k, r.off, N, v);
	}
}

// sum over each row -> sum[row] (fp32).
template <typename T, int TPR>
__global__ void __launch_bounds__(UF_THREADS)
k_row_sum(const T *__restrict__ x, float *__restrict__ sum, long M, int N)
{
	__shared__ float red[UF_THREADS / 32];
	constexpr int W = vec<T>::W;
	const uf_row<T, TPR> r(M, N);
	const T *a = x + r.base(N);
	float s = 0;

#pragma unroll 4
	for (int k = r.t; k < r.S; k += TPR) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(a, k, r.off, N, 0.f), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			s += v[e];
	}
	s = uf_reduce<TPR, false>(s, red);
	if (r.live && r.t == 0)
		sum[r.row] = s;
}

// y = e / sum[row] (0 where the sum is 0: an all -inf row).
template <typename T, int TPR>
__global__ void __launch_bounds__(UF_THREADS)
k_div(const T *__restrict__ ex, const float *__restrict__ sum,
      T *__restrict__ y, long M, int N)
{
	constexpr int W = vec<T>::W;
	const uf_row<T, TPR> r(M, N);
	const size_t base = r.base(N);
	const float s = r.live ? sum[r.row] : 0.f, inv = s > 0 ? 1.f / s : 0.f;

#pragma unroll 4
	for (int k = r.t; k < r.S; k += TPR) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(ex + base, k, r.off, N, 0.f), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			v[e] *= inv;
		store_slot<T>(y + base, k, r.off, N, v);
	}
}

// softmax_masked_fwd/unfused, kernel 1: t = x * scale where the causal rule
// keeps the column, -inf elsewhere (a masked_fill: it reads all of x).
// Kernel 2 is the fused softmax (fused.cu), over t. Bytes: 2*E*es + 2*E*es.
template <typename T, int TPR>
__global__ void __launch_bounds__(UF_THREADS)
k_scale_mask(const T *__restrict__ x, T *__restrict__ t, long M, int N,
	     float scale)
{
	constexpr int W = vec<T>::W;
	const uf_row<T, TPR> r(M, N);
	const int keep = (int)(r.row % N) + 1;
	const size_t base = r.base(N);

#pragma unroll 4
	for (int k = r.t; k < r.S; k += TPR) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(x + base, k, r.off, N, 0.f), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			v[e] = k * W - r.off + e < keep ? v[e] * scale : -INFINITY;
		store_slot<T>(t + base, k, r.off, N, v);
	}
}

// softmax_bwd/unfused, kernel 1: s[row] = sum(dy * y). Reads 2*E*es.
template <typename T, int TPR>
__global__ void __launch_bounds__(UF_THREADS)
k_row_dot(const T *__restrict__ y, const T *__restrict__ dy,
	  float *__restrict__ sdot, long M, int N)
{
	__shared__ float red[UF_THREADS / 32];
	constexpr int W = vec<T>::W;
	const uf_row<T, TPR> r(M, N);
	const size_t base = r.base(N);
	float s = 0;

#pragma unroll 4
	for (int k = r.t; k < r.S; k += TPR) {
		float a[W], b[W];
		vec<T>::unpack(load_slot<T, false>(y + base, k, r.off, N, 0.f), a);
		vec<T>::unpack(load_slot<T, false>(dy + base, k, r.off, N, 0.f), b);
#pragma unroll
		for (int e = 0; e < W; e++)
			s = fmaf(a[e], b[e], s);
	}
	s = uf_reduce<TPR, false>(s, red);
	if (r.live && r.t == 0)
		sdot[r.row] = s;
}

// softmax_bwd/unfused, kernel 2: dx = y * (dy - s[row]). Reads 2*E*es,
// writes E*es: 5*E*es in all against the fused kernel's 3*E*es.
template <typename T, int TPR>
__global__ void __launch_bounds__(UF_THREADS)
k_bwd_elem(const T *__restrict__ y, const T *__restrict__ dy,
	   const float *__restrict__ sdot, T *__restrict__ dx, long M, int N)
{
	constexpr int W = vec<T>::W;
	const uf_row<T, TPR> r(M, N);
	const size_t base = r.base(N);
	const float s = r.live ? sdot[r.row] : 0.f;

#pragma unroll 4
	for (int k = r.t; k < r.S; k += TPR) {
		float a[W], b[W];
		vec<T>::unpack(load_slot<T, false>(y + base, k, r.off, N, 0.f), a);
		vec<T>::unpack(load_slot<T, false>(dy + base, k, r.off, N, 0.f), b);
#pragma unroll
		for (int e = 0; e < W; e++)
			a[e] = a[e] * (b[e] - s);
		store_slot<T>(dx + base, k, r.off, N, a);
	}
}

// ---------------------------------------------------------------------------
// Launcher

template <typename T, int TPR>
static int unfused_tpr(const struct sm_op *op, const void *in0, const void *in1,
		       cudaStream_t st)
{
	const T *a = (const T *)in0, *b = (const T *)in1;
	T *out = (T *)op->out, *tmp = (T *)op->tmp;
	const long M = op->M;
	const int N = (int)op->N;
	constexpr long RPB = UF_THREADS / TPR;
	const unsigned grid = (unsigned)((M + RPB - 1) / RPB);

	switch (op->kind) {
	case SM_FWD:
		k_row_max<T, TPR><<<grid, UF_THREADS, 0, st>>>(a, op->rowa, M, N);
		if (CUDA_CHECK_LAUNCH("k_row_max"))
			return -1;
		k_exp_sub<T, TPR><<<grid, UF_THREADS, 0, st>>>(a, op->rowa, tmp, M, N);
		if (CUDA_CHECK_LAUNCH("k_exp_sub"))
			return -1;
		k_row_sum<T, TPR><<<grid, UF_THREADS, 0, st>>>(tmp, op->rowb, M, N);
		if (CUDA_CHECK_LAUNCH("k_row_sum"))
			return -1;
		k_div<T, TPR><<<grid, UF_THREADS, 0, st>>>(tmp, op->rowb, out, M, N);
		return CUDA_CHECK_LAUNCH("k_div");
	case SM_MASKED:
		k_scale_mask<T, TPR><<<grid, UF_THREADS, 0, st>>>(a, tmp, M, N,
								 (float)SOFTMAX_MASKED_SCALE);
		if (CUDA_CHECK_LAUNCH("k_scale_mask"))
			return -1;
		return sm_fused_fwd(op, tmp, out, SM_MASK_NONE, 1.f, st);
	case SM_BWD:
		k_row_dot<T, TPR><<<grid, UF_THREADS, 0, st>>>(a, b, op->rowa, M, N);
		if (CUDA_CHECK_LAUNCH("k_row_dot"))
			return -1;
		k_bwd_elem<T, TPR><<<grid, UF_THREADS, 0, st>>>(a, b, op->rowa, out, M, N);
		return CUDA_CHECK_LAUNCH("k_bwd_elem");
	}
	return error("softmax: unknown workload kind %d", (int)op->kind);
}

template <typename T>
static int unfused_t(const struct sm_op *op, const void *in0, const void *in1,
		     cudaStream_t st)
{
	// a row of N spans at most N / W + 1 slots
	switch (row_group_threads(op->N / vec<T>::W + 1, UF_SLOTS, UF_THREADS)) {
	case 32:
		return unfused_tpr<T, 32>(op, in0, in1, st);
	case 64:
		return unfused_tpr<T, 64>(op, in0, in1, st);
	case 128:
		return unfused_tpr<T, 128>(op, in0, in1, st);
	default:
		return unfused_tpr<T, UF_THREADS>(op, in0, in1, st);
	}
}

int sm_unfused(const struct sm_op *op, const void *in0, const void *in1,
	       cudaStream_t st)
{
	if (op->dt == FP_BF16)
		return unfused_t<__nv_bfloat16>(op, in0, in1, st);
	return unfused_t<float>(op, in0, in1, st);
}
