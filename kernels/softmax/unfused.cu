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
// Kernels: one block of UF_THREADS per row, grid = M rows. These are
// the textbook expansion, each kernel as good as it can be on its own
// (16-byte slots, 4 loads in flight per thread); what they lose is the
// intermediates' round trips through DRAM.
//
// softmax_fwd/unfused4 at M x N: row_max reads E, exp_sub reads E and writes
// E, row_sum reads E, div reads E and writes E: 6*E*es (+16*M for the row
// vectors), three times the fused kernel's 2*E*es, so expect ~3x its time
// (as PyTorch's eager max/exp/sum/div chain against torch.softmax).
// Measured at the copy bandwidth counting the bytes they move: 3.0x the
// fused kernel, as predicted (bench/RESULTS.md, "Softmax, H100").

#define UF_THREADS 256
#define UF_WARPS (UF_THREADS / 32)

// max over each row -> mx[row] (fp32).
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_row_max(const T *__restrict__ x, float *__restrict__ mx, int N)
{
	__shared__ float red[UF_WARPS + 1];
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const T *a = x + (size_t)row * N - off;
	float m = -INFINITY;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(a, k, off, N, -INFINITY), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			m = fmaxf(m, v[e]);
	}
	m = block_reduce<UF_WARPS, true>(m, red);
	if (threadIdx.x == 0)
		mx[row] = m;
}

// e = exp(x - mx[row]) in the storage dtype (an all -inf row gives zeros).
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_exp_sub(const T *__restrict__ x, const float *__restrict__ mx,
	  T *__restrict__ ex, int N)
{
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const size_t base = (size_t)row * N - off;
	const float m = mx[row], mz = m == -INFINITY ? 0.f : m;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(x + base, k, off, N, -INFINITY), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			v[e] = exp2f((v[e] - mz) * LOG2E);
		store_slot<T>(ex + base, k, off, N, v);
	}
}

// sum over each row -> sum[row] (fp32).
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_row_sum(const T *__restrict__ x, float *__restrict__ sum, int N)
{
	__shared__ float red[UF_WARPS + 1];
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const T *a = x + (size_t)row * N - off;
	float s = 0;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(a, k, off, N, 0.f), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			s += v[e];
	}
	s = block_reduce<UF_WARPS, false>(s, red);
	if (threadIdx.x == 0)
		sum[row] = s;
}

// y = e / sum[row] (0 where the sum is 0: an all -inf row).
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_div(const T *__restrict__ ex, const float *__restrict__ sum,
      T *__restrict__ y, int N)
{
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const size_t base = (size_t)row * N - off;
	const float s = sum[row], inv = s > 0 ? 1.f / s : 0.f;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(ex + base, k, off, N, 0.f), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			v[e] *= inv;
		store_slot<T>(y + base, k, off, N, v);
	}
}

// softmax_masked_fwd/unfused, kernel 1: t = x * scale where the causal rule
// keeps the column, -inf elsewhere (a masked_fill: it reads all of x).
// Kernel 2 is the fused softmax (fused.cu), over t. Bytes: 2*E*es + 2*E*es.
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_scale_mask(const T *__restrict__ x, T *__restrict__ t, int N, float scale)
{
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const int keep = (int)(row % N) + 1;
	const size_t base = (size_t)row * N - off;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float v[W];
		vec<T>::unpack(load_slot<T, false>(x + base, k, off, N, 0.f), v);
#pragma unroll
		for (int e = 0; e < W; e++)
			v[e] = k * W - off + e < keep ? v[e] * scale : -INFINITY;
		store_slot<T>(t + base, k, off, N, v);
	}
}

// softmax_bwd/unfused, kernel 1: s[row] = sum(dy * y). Reads 2*E*es.
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_row_dot(const T *__restrict__ y, const T *__restrict__ dy,
	  float *__restrict__ sdot, int N)
{
	__shared__ float red[UF_WARPS + 1];
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const size_t base = (size_t)row * N - off;
	float s = 0;

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float a[W], b[W];
		vec<T>::unpack(load_slot<T, false>(y + base, k, off, N, 0.f), a);
		vec<T>::unpack(load_slot<T, false>(dy + base, k, off, N, 0.f), b);
#pragma unroll
		for (int e = 0; e < W; e++)
			s = fmaf(a[e], b[e], s);
	}
	s = block_reduce<UF_WARPS, false>(s, red);
	if (threadIdx.x == 0)
		sdot[row] = s;
}

// softmax_bwd/unfused, kernel 2: dx = y * (dy - s[row]). Reads 2*E*es,
// writes E*es: 5*E*es in all against the fused kernel's 3*E*es.
template <typename T>
__global__ void __launch_bounds__(UF_THREADS)
k_bwd_elem(const T *__restrict__ y, const T *__restrict__ dy,
	   const float *__restrict__ sdot, T *__restrict__ dx, int N)
{
	constexpr int W = vec<T>::W;
	const long row = blockIdx.x;
	const int off = (int)(((size_t)row * N) % W), S = row_slots<T>(off, N);
	const size_t base = (size_t)row * N - off;
	const float s = sdot[row];

#pragma unroll 4
	for (int k = threadIdx.x; k < S; k += UF_THREADS) {
		float a[W], b[W];
		vec<T>::unpack(load_slot<T, false>(y + base, k, off, N, 0.f), a);
		vec<T>::unpack(load_slot<T, false>(dy + base, k, off, N, 0.f), b);
#pragma unroll
		for (int e = 0; e < W; e++)
			a[e] = a[e] * (b[e] - s);
		store_slot<T>(dx + base, k, off, N, a);
	}
}

// ---------------------------------------------------------------------------
// Launcher

template <typename T>
static int unfused_t(const struct sm_op *op, const void *in0, const void *in1,
		     cudaStream_t st)
{
	const T *a = (const T *)in0, *b = (const T *)in1;
	T *out = (T *)op->out, *tmp = (T *)op->tmp;
	const unsigned M = (unsigned)op->M;
	const int N = (int)op->N;

	switch (op->kind) {
	case SM_FWD:
		k_row_max<T><<<M, UF_THREADS, 0, st>>>(a, op->rowa, N);
		if (CUDA_CHECK_LAUNCH("k_row_max"))
			return -1;
		k_exp_sub<T><<<M, UF_THREADS, 0, st>>>(a, op->rowa, tmp, N);
		if (CUDA_CHECK_LAUNCH("k_exp_sub"))
			return -1;
		k_row_sum<T><<<M, UF_THREADS, 0, st>>>(tmp, op->rowb, N);
		if (CUDA_CHECK_LAUNCH("k_row_sum"))
			return -1;
		k_div<T><<<M, UF_THREADS, 0, st>>>(tmp, op->rowb, out, N);
		return CUDA_CHECK_LAUNCH("k_div");
	case SM_MASKED:
		k_scale_mask<T><<<M, UF_THREADS, 0, st>>>(a, tmp, N,
							  (float)SOFTMAX_MASKED_SCALE);
		if (CUDA_CHECK_LAUNCH("k_scale_mask"))
			return -1;
		return sm_fused_fwd(op, tmp, out, SM_MASK_NONE, 1.f, st);
	case SM_BWD:
		k_row_dot<T><<<M, UF_THREADS, 0, st>>>(a, b, op->rowa, N);
		if (CUDA_CHECK_LAUNCH("k_row_dot"))
			return -1;
		k_bwd_elem<T><<<M, UF_THREADS, 0, st>>>(a, b, op->rowa, out, N);
		return CUDA_CHECK_LAUNCH("k_bwd_elem");
	}
	return error("softmax: unknown workload kind %d", (int)op->kind);
}

int sm_unfused(const struct sm_op *op, const void *in0, const void *in1,
	       cudaStream_t st)
{
	if (op->dt == FP_BF16)
		return unfused_t<__nv_bfloat16>(op, in0, in1, st);
	return unfused_t<float>(op, in0, in1, st);
}
