// bias_relu.cu - the bias+ReLU workloads: y = relu(x + bias) (bias_relu_fwd)
// and dx = dy (x + bias > 0), dbias = the column sums of dx (bias_relu_bwd),
// fp32 and bf16 (bf16 storage, fp32 math): the automatic-differentiation
// chapter's bitmask. The backward needs only the sign of x + bias; the
// variants differ in what the forward keeps to give it (model saved_bytes):
//   save_input         2 kernels (bias add writing h, ReLU), saving h: M N s
//                      bytes; its backward: relu' from h and dy, then the
//                      dbias column partials read dx back, then their sum.
//   fused_save_output  1 kernel; the backward reads y (y > 0 iff h > 0):
//                      M N s bytes, but y is an output the next layer keeps
//                      anyway in a real network (counted here all the same).
//   fused_bitmask      1 kernel writing y and 1 bit an element
//                      (ceil(M N / 32) 4 bytes, kernels/ewmask/): the
//                      backward reads 1/32 (fp32) of an activation's bytes.
//
// Napkin math, M x N of s-byte elements (s = 4 fp32, 2 bf16):
//   forward   min bytes (2 M N + N) s: x read, bias once, y written. FLOP
//             2 M N (add, max).
//   backward  min bytes (2 M N + N) s + M N / 8: dy read, dx and dbias
//             written, and the sign of x + bias read at its least, one bit
//             an element. FLOP 2 M N (select, column sum).
// save_input's backward moves (4 M N + N) s, fused_bitmask's (2 M N + N) s
// + M N / 8: 0.51x in fp32, 0.52x in bf16 (the issue asks <= 0.55x). At
// 16384 x 4096 fp32 the forward is 537 MB for 0.13 GFLOP: memory-bound.
// Measured: bench/RESULTS.md.
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "checkref.h"
#include "kutil.h"
#include "par.h"
#include "util.h"
#include "bias_relu/bias_relu.h"
#include "ewmask/ewmask.cuh"

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

// The bias add and the ReLU of save_input, and fused_save_output's kernel
// where N is not a multiple of the vector width, are ew_bias_act_kernel
// (kernels/ewmask/ewmask.cuh).

#define BR_FLAT_U 2            /* 16-byte vectors a thread, flat kernel */

// fused_save_output's forward where N is a multiple of V (16 bytes): the
// tensor flattened as the softplus kernels take it, BR_FLAT_U vectors a
// thread EW_THREADS apart, one pass where the grid allows; vector i's bias
// is vector i mod nv (nv = N / V) of bias, through the read-only cache.
// nvec = M N / V, at most 2^31 (the launcher checks).
template <typename T>
__global__ void __launch_bounds__(EW_THREADS, 8)
fwd_relu_flat_kernel(const T *__restrict__ x, const T *__restrict__ bias,
		     T *__restrict__ y, unsigned nvec, unsigned nv)
{
	constexpr int V = 16 / sizeof(T);
	const unsigned stride = gridDim.x * EW_THREADS * BR_FLAT_U;

	for (unsigned i0 = blockIdx.x * EW_THREADS * BR_FLAT_U + threadIdx.x;
	     i0 < nvec; i0 += stride) {
		uint4 xr[BR_FLAT_U], br[BR_FLAT_U];  // as loaded

#pragma unroll
		for (int u = 0; u < BR_FLAT_U; u++) {
			const unsigned i = i0 + u * EW_THREADS;

			if (i < nvec) {
				xr[u] = ew_ldraw<true>(x + (size_t)i * V);
				br[u] = ew_ldraw<false>(bias + (size_t)(i % nv) * V);
			}
		}
#pragma unroll
		for (int u = 0; u < BR_FLAT_U; u++) {
			const unsigned i = i0 + u * EW_THREADS;
			float v[V], b[V];

			if (i >= nvec)
				continue;
			unpack16(xr[u], v, T());
			unpack16(br[u], b, T());
#pragma unroll
			for (int k = 0; k < V; k++)
				v[k] = fmaxf(v[k] + b[k], 0.f);
			st16<true>(y + (size_t)i * V, v);
		}
	}
}

// save_input's backward, first kernel: dx = dy (h > 0), flattened, 16-byte
// vectors, EW_UNROLL in flight a thread (the column sums follow:
// ew_colpart_kernel, ew_colsum_kernel).
template <typename T>
__global__ void __launch_bounds__(EW_THREADS)
relu_grad_kernel(const T *__restrict__ dy, const T *__restrict__ h,
		 T *__restrict__ dx, size_t n)
{
	constexpr int V = 16 / sizeof(T);
	const size_t nvec = n / V;
	const size_t stride = (size_t)gridDim.x * EW_THREADS * EW_UNROLL;

	for (size_t i0 = (size_t)blockIdx.x * EW_THREADS * EW_UNROLL + threadIdx.x;
	     i0 < nvec; i0 += stride) {
		float g[EW_UNROLL][V], v[EW_UNROLL][V];

#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++)
			if (i0 + u * EW_THREADS < nvec) {
				ld16<true>(dy + (i0 + u * EW_THREADS) * V, g[u]);
				ld16<true>(h + (i0 + u * EW_THREADS) * V, v[u]);
			}
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++)
			if (i0 + u * EW_THREADS < nvec) {
#pragma unroll
				for (int k = 0; k < V; k++)
					g[u][k] = v[u][k] > 0.f ? g[u][k] : 0.f;
				st16<true>(dx + (i0 + u * EW_THREADS) * V, g[u]);
			}
	}
	const size_t e = nvec * V + (size_t)blockIdx.x * EW_THREADS + threadIdx.x;
	if (e < n && (size_t)blockIdx.x * EW_THREADS + threadIdx.x < (size_t)V)
		dx[e] = to_f(h[e]) > 0.f ? dy[e] : from_f<T>(0.f);
}

// fused_bitmask's forward, rows under the ewmask plan (vector path, N %
// 32 == 0): x read, bias in registers, y and the mask words written once.
template <typename T, int V>
__global__ void __launch_bounds__(EW_THREADS)
fwd_bits_rows_kernel(const T *__restrict__ x, const T *__restrict__ bias,
		     T *__restrict__ y, uint32_t *__restrict__ words, long M, long N)
{
	const long c0 = ((long)blockIdx.x * blockDim.x + threadIdx.x) * V;
	// A block's EW_UNROLL bands of blockDim.y rows lie together (a thread's
	// rows rs apart), so the block streams one span of memory.
	const long r0 = (long)blockIdx.y * blockDim.y * EW_UNROLL + threadIdx.y;
	const long rs = blockDim.y;
	const long step = (long)gridDim.y * blockDim.y * EW_UNROLL;
	float b[V];

	if (c0 < N)
		ld16<false>(bias + c0, b);
	for (long i0 = r0; i0 < M; i0 += step) {
		float v[EW_UNROLL][V];
		uint4 xr[EW_UNROLL];  // as loaded

#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++)
			if (i0 + u * rs < M && c0 < N)
				xr[u] = ew_ldraw<true>(x + (i0 + u * rs) * N + c0);
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const long i = i0 + u * rs;
			unsigned bits = 0;

			if (i >= M)  // uniform over the warp: a warp is one thread row
				continue;
			unpack16(xr[u], v[u], T());
#pragma unroll
			for (int k = 0; k < V; k++) {
				const float hv = v[u][k] + b[k];

				bits |= (unsigned)(hv > 0.f) << k;
				v[u][k] = hv > 0.f ? hv : 0.f;
			}
			if (c0 < N)
				st16<true>(y + i * N + c0, v[u]);
			ew_store_bits<V>(words, ((uint64_t)i * N + c0) >> 5, bits, c0 < N);
		}
	}
}

// fused_bitmask's forward at any N: a warp takes 32 consecutive flattened
// elements, __ballot_sync makes their word (words straddle rows when N %
// 32 != 0). Scalar, coalesced, a division an element: the fallback.
template <typename T>
__global__ void __launch_bounds__(EW_THREADS)
fwd_bits_flat_kernel(const T *__restrict__ x, const T *__restrict__ bias,
		     T *__restrict__ y, uint32_t *__restrict__ words, long M, long N)
{
	const uint64_t n = (uint64_t)M * N, nw = (n + 31) / 32;
	const uint64_t warps = (uint64_t)gridDim.x * (EW_THREADS / 32);
	const int lane = threadIdx.x & 31;

	for (uint64_t w = (uint64_t)blockIdx.x * (EW_THREADS / 32) + threadIdx.x / 32;
	     w < nw; w += warps) {
		const uint64_t e = w * 32 + lane;
		int keep = 0;

		if (e < n) {
			const float hv = to_f(x[e]) + to_f(bias[e % (uint64_t)N]);

			keep = hv > 0.f;
			y[e] = from_f<T>(keep ? hv : 0.f);
		}
		const uint32_t word = __ballot_sync(FP_FULL_MASK, keep);
		if (lane == 0)
			words[w] = word;
	}
}

// The fused backward, rows under the plan: dy and the sign (from the
// bits with BITS, else from y > 0) read, dx written, the column sums of dx
// kept per thread, added over the block's rows and written as its partial
// row (ew_block_partial; ew_colsum_kernel adds the rows in order).
template <typename T, int V, bool VEC, bool BITS>
__global__ void __launch_bounds__(EW_THREADS)
bwd_rows_kernel(const T *__restrict__ dy, const T *__restrict__ y,
		const uint32_t *__restrict__ words, T *__restrict__ dx,
		float *__restrict__ partial, long M, long N)
{
	const long c0 = VEC ? ((long)blockIdx.x * blockDim.x + threadIdx.x) * V
			    : (long)blockIdx.x * blockDim.x * V + threadIdx.x;
	const long cs = VEC ? 1 : blockDim.x;
	// A block's EW_UNROLL bands of blockDim.y rows lie together (a thread's
	// rows rs apart), so the block streams one span of memory.
	const long r0 = (long)blockIdx.y * blockDim.y * EW_UNROLL + threadIdx.y;
	const long rs = blockDim.y;
	const long step = (long)gridDim.y * blockDim.y * EW_UNROLL;
	float acc[V];

	grid_dep_launch();  // the column sum may be scheduled (ew_colsum)

#pragma unroll
	for (int k = 0; k < V; k++)
		acc[k] = 0.f;
	for (long i0 = r0; i0 < M; i0 += step) {
		float v[EW_UNROLL][V], s[EW_UNROLL][V];
		uint4 gr[EW_UNROLL], sr[EW_UNROLL];  // VEC: dy, y as loaded
		unsigned bits[EW_UNROLL];

#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const long i = i0 + u * rs;

			bits[u] = 0;
			if (i >= M)
				continue;
			if (VEC) {
				if (c0 >= N)
					continue;
				gr[u] = ew_ldraw<true>(dy + i * N + c0);
				if (BITS)
					bits[u] = ew_load_bits<V>(words, (uint64_t)i * N + c0);
				else
					sr[u] = ew_ldraw<true>(y + i * N + c0);
			} else {
#pragma unroll
				for (int k = 0; k < V; k++) {
					const long c = c0 + k * cs;

					if (c >= N)
						continue;
					v[u][k] = to_f(dy[i * N + c]);
					if (BITS)
						bits[u] |= ew_load_bit(words, (uint64_t)i * N + c) << k;
					else
						s[u][k] = to_f(y[i * N + c]);
				}
			}
		}
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const long i = i0 + u * rs;

			if (i >= M || (VEC && c0 >= N))
				continue;
			if (VEC) {
				unpack16(gr[u], v[u], T());
				if (!BITS)
					unpack16(sr[u], s[u], T());
			}
#pragma unroll
			for (int k = 0; k < V; k++) {
				const bool keep = BITS ? (bits[u] >> k) & 1u : s[u][k] > 0.f;

				v[u][k] = keep ? v[u][k] : 0.f;
				if (VEC || c0 + k * cs < N)
					acc[k] += v[u][k];
			}
			if (VEC) {
				st16<true>(dx + i * N + c0, v[u]);
			} else {
#pragma unroll
				for (int k = 0; k < V; k++)
					if (c0 + k * cs < N)
						dx[i * N + c0 + k * cs] = from_f<T>(v[u][k]);
			}
		}
	}
	ew_block_partial<V>(acc, partial, c0, cs, N);
}

/* ------------------------------------------------------------------------ */
/* Launchers                                                                */
/* ------------------------------------------------------------------------ */

struct fp_op {
	int bwd, variant, nsets;
	enum fp_dtype dt;
	long M, N;
	size_t es, mnp;        // bytes of one M x N tensor, padded: a set's stride
	struct ew_plan plan;
	int bulk;              // backward: fused_bitmask on the bulk kernel
	bool pdl;              // backward: the column sum launched programmatically
	struct ew_plan bplan;  // its plan (ew_plan_bulk) where bulk
	unsigned gy;           // backward: the rows kernels' grid rows (ew_resident_gy
	                       // for fused_bitmask's, plan.gy otherwise)
	char *x, *bias;        // forward inputs, nsets each
	char *dy;              // backward input, nsets
	char *saved;           // backward: h, y or the bit mask, nsets
	size_t saved_set;      // its stride
	// What a launch writes, set 0's, carved out of wbuf (written_bytes'
	// order): set s's lie s * wset bytes further on (set_view).
	char *wbuf;
	size_t wset;
	char *out;             // y or dx
	char *h;               // forward save_input: x + bias
	uint32_t *words;       // forward fused_bitmask: the bit mask
	char *dbias;           // backward
	float *partial;        // backward: [plan.prows][N]
};

static void set_view(const struct fp_op *op, int set, struct fp_op *v)
{
	const size_t off = (size_t)set * op->wset;

	*v = *op;
	v->out = (char *)dev_in_set(op->out, off);
	v->h = (char *)dev_in_set(op->h, off);
	v->words = (uint32_t *)dev_in_set(op->words, off);
	v->dbias = (char *)dev_in_set(op->dbias, off);
	v->partial = (float *)dev_in_set(op->partial, off);
}

// The forward variant on x and bias, writing y to y and what it saves to
// h (save_input) or words (fused_bitmask).
template <typename T>
static int run_fwd(const struct fp_op *op, int variant, const T *x, const T *b,
		   T *y, T *h, uint32_t *words, cudaStream_t st)
{
	constexpr int V = 16 / sizeof(T);
	const struct ew_plan *p = &op->plan;
	const dim3 grid(p->gx, p->gy), block(p->tx, p->ty);
	const size_t nvec = (size_t)op->M * op->N / V;

	switch (variant) {
	case BR_SAVE_INPUT:
		if (p->vec) {
			ew_bias_act_kernel<T, V, true, false><<<grid, block, 0, st>>>(
				x, b, h, op->M, op->N);
			ew_bias_act_kernel<T, V, true, true><<<grid, block, 0, st>>>(
				h, NULL, y, op->M, op->N);
		} else {
			ew_bias_act_kernel<T, V, false, false><<<grid, block, 0, st>>>(
				x, b, h, op->M, op->N);
			ew_bias_act_kernel<T, V, false, true><<<grid, block, 0, st>>>(
				h, NULL, y, op->M, op->N);
		}
		return CUDA_CHECK_LAUNCH("save_input forward");
	case BR_FUSED_SAVE_OUTPUT:
		if (p->vec && nvec <= (1ul << 31))
			fwd_relu_flat_kernel<T><<<ew_flat_grid(nvec, (size_t)EW_THREADS * BR_FLAT_U),
						  EW_THREADS, 0, st>>>(
				x, b, y, (unsigned)nvec, (unsigned)(op->N / V));
		else if (p->vec)
			ew_bias_act_kernel<T, V, true, true><<<grid, block, 0, st>>>(
				x, b, y, op->M, op->N);
		else
			ew_bias_act_kernel<T, V, false, true><<<grid, block, 0, st>>>(
				x, b, y, op->M, op->N);
		return CUDA_CHECK_LAUNCH("fused_save_output forward");
	default:
		if (p->vec && op->N % 32 == 0)
			fwd_bits_rows_kernel<T, V><<<grid, block, 0, st>>>(
				x, b, y, words, op->M, op->N);
		else
			fwd_bits_flat_kernel<T><<<ew_flat_grid((size_t)op->M * op->N, EW_THREADS),
						   EW_THREADS, 0, st>>>(
				x, b, y, words, op->M, op->N);
		return CUDA_CHECK_LAUNCH("fused_bitmask forward");
	}
}

template <typename T>
static int launch_bwd(const struct fp_op *op, int set, cudaStream_t st)
{
	constexpr int V = 16 / sizeof(T);
	const struct ew_plan *p = &op->plan;
	const dim3 grid(p->gx, op->gy), block(p->tx, p->ty);
	const size_t n = (size_t)op->M * op->N;
	const T *dy = (const T *)(op->dy + set * op->mnp);
	const char *saved = op->saved + set * op->saved_set;
	T *dx = (T *)op->out;

	switch (op->variant) {
	case BR_SAVE_INPUT:
		relu_grad_kernel<T><<<ew_flat_grid(n / V, (size_t)EW_THREADS * EW_UNROLL),
				     EW_THREADS, 0, st>>>(dy, (const T *)saved, dx, n);
		if (CUDA_CHECK_LAUNCH("relu_grad_kernel"))
			return -1;
		if (p->vec)
			ew_colpart_kernel<T, V, true><<<grid, block, 0, st>>>(
				dx, op->partial, op->M, op->N);
		else
			ew_colpart_kernel<T, V, false><<<grid, block, 0, st>>>(
				dx, op->partial, op->M, op->N);
		break;
	case BR_FUSED_SAVE_OUTPUT:
		if (p->vec)
			bwd_rows_kernel<T, V, true, false><<<grid, block, 0, st>>>(
				dy, (const T *)saved, NULL, dx, op->partial, op->M, op->N);
		else
			bwd_rows_kernel<T, V, false, false><<<grid, block, 0, st>>>(
				dy, (const T *)saved, NULL, dx, op->partial, op->M, op->N);
		break;
	default:
		if (op->bulk) {
			ew_bulk_bwd<T, V>(&op->bplan, dy,
					  ew_mask_words<V>{ (const uint32_t *)saved }, 1.f, dx,
					  op->partial, op->M, op->N, st);
			if (CUDA_CHECK_LAUNCH("fused_bitmask bulk backward"))
				return -1;
			return ew_colsum<T>(op->partial, op->bplan.prows, op->N,
					     (T *)op->dbias, op->pdl, st);
		}
		if (p->vec)
			bwd_rows_kernel<T, V, true, true><<<grid, block, 0, st>>>(
				dy, NULL, (const uint32_t *)saved, dx, op->partial, op->M,
				op->N);
		else
			bwd_rows_kernel<T, V, false, true><<<grid, block, 0, st>>>(
				dy, NULL, (const uint32_t *)saved, dx, op->partial, op->M,
				op->N);
		break;
	}
	if (CUDA_CHECK_LAUNCH("bias_relu backward"))
		return -1;
	return ew_colsum<T>(op->partial, (long)op->gy, op->N, (T *)op->dbias, op->pdl,
			     st);
}

// fused_bitmask's backward rows kernel for dt, the vector path or not:
// what ew_resident_gy asks the occupancy of.
static const void *bitmask_bwd_fn(enum fp_dtype dt, int vec)
{
	if (dt == FP_BF16)
		return vec ? (const void *)bwd_rows_kernel<__nv_bfloat16, 8, true, true>
			   : (const void *)bwd_rows_kernel<__nv_bfloat16, 8, false, true>;
	return vec ? (const void *)bwd_rows_kernel<float, 4, true, true>
		   : (const void *)bwd_rows_kernel<float, 4, false, true>;
}

template <typename T>
static int launch_fwd(const struct fp_op *op, int set, cudaStream_t st)
{
	return run_fwd<T>(op, op->variant, (const T *)(op->x + set * op->mnp),
			  (const T *)(op->bias + set * dev_pad(op->N * op->es)),
			  (T *)op->out, (T *)op->h, op->words, st);
}

static int op_launch(struct fp_op *base, int set, cudaStream_t st)
{
	struct fp_op view;

	if (set < 0 || set >= base->nsets)
		return error("bias_relu: set %d out of range [0, %d)", set, base->nsets);
	set_view(base, set, &view);
	if (view.bwd)
		return view.dt == FP_BF16 ? launch_bwd<__nv_bfloat16>(&view, set, st)
					  : launch_bwd<float>(&view, set, st);
	return view.dt == FP_BF16 ? launch_fwd<__nv_bfloat16>(&view, set, st)
				  : launch_fwd<float>(&view, set, st);
}

// The backward's grid rows (op->gy) for op's variant and bulk choice,
// set: fused_bitmask's rows kernel on a resident grid, the rest on the
// plan's. The workload's backward ops and the library's
// (bias_relu_fused_bwd) take it from here.
static unsigned bwd_grid_rows(const struct fp_op *op)
{
	if (op->bulk || op->variant != BR_FUSED_BITMASK)
		return op->plan.gy;
	return ew_resident_gy(&op->plan, op->M, bitmask_bwd_fn(op->dt, op->plan.vec));
}

/* The fused_bitmask kernels on a caller's pointers (bias_relu.h). */
extern "C" size_t bias_relu_bits_bytes(long M, long N)
{
	return ew_bits_bytes(M, N);
}

extern "C" long bias_relu_partials(enum fp_dtype dt, long M, long N)
{
	return ew_plan_cols(M, N, fp_dtype_size(dt)).prows;
}

extern "C" int bias_relu_fused_fwd(enum fp_dtype dt, const void *x, const void *bias,
				   void *y, uint32_t *words, long M, long N, cudaStream_t st)
{
	struct fp_op op;

	memset(&op, 0, sizeof op);
	op.dt = dt;
	op.M = M;
	op.N = N;
	op.es = fp_dtype_size(dt);
	op.plan = ew_plan_rows(M, N, op.es);
	return dt == FP_BF16
		? run_fwd<__nv_bfloat16>(&op, BR_FUSED_BITMASK, (const __nv_bfloat16 *)x,
					 (const __nv_bfloat16 *)bias, (__nv_bfloat16 *)y,
					 NULL, words, st)
		: run_fwd<float>(&op, BR_FUSED_BITMASK, (const float *)x,
				 (const float *)bias, (float *)y, NULL, words, st);
}

extern "C" int bias_relu_fused_bwd(enum fp_dtype dt, const void *dy, const uint32_t *words,
				   void *dx, void *dbias, float *partial, long M, long N,
				   cudaStream_t st)
{
	struct fp_op op;

	memset(&op, 0, sizeof op);
	op.bwd = 1;
	op.variant = BR_FUSED_BITMASK;
	op.dt = dt;
	op.M = M;
	op.N = N;
	op.es = fp_dtype_size(dt);
	op.plan = ew_plan_cols(M, N, op.es);
	// bwd_kernel's default; its partial rows fit ew_plan_cols'
	// (bias_relu_partials)
	op.bulk = ew_bulk_use(EW_BWD_AUTO, dt, N, op.es);
	op.pdl = ew_colsum_pdl(EW_CS_AUTO);
	if (op.bulk)
		op.bplan = ew_plan_bulk(M, N, op.es);
	op.gy = bwd_grid_rows(&op);
	op.dy = (char *)dy;
	op.saved = (char *)words;
	op.out = (char *)dx;
	op.dbias = (char *)dbias;
	op.partial = partial;
	return dt == FP_BF16 ? launch_bwd<__nv_bfloat16>(&op, 0, st)
			     : launch_bwd<float>(&op, 0, st);
}

// What backward set `set` reads, made by the forward variant of the same
// name from the x and bias a caller put in set 0's dx and dbias buffers;
// the forward's y goes to the set's dy buffer (drawn over afterwards)
// where the variant saves something else.
static int make_saved(const struct fp_op *op, int set)
{
	char *s = op->saved + set * op->saved_set, *dy = op->dy + set * op->mnp;

	if (op->dt == FP_BF16) {
		typedef __nv_bfloat16 T;
		return run_fwd<T>(op, op->variant, (const T *)op->out, (const T *)op->dbias,
				  op->variant == BR_FUSED_SAVE_OUTPUT ? (T *)s : (T *)dy,
				  (T *)s, (uint32_t *)s, 0);
	}
	return run_fwd<float>(op, op->variant, (const float *)op->out,
			      (const float *)op->dbias,
			      op->variant == BR_FUSED_SAVE_OUTPUT ? (float *)s : (float *)dy,
			      (float *)s, (uint32_t *)s, 0);
}

/* ------------------------------------------------------------------------ */
/* The workloads                                                            */
/* ------------------------------------------------------------------------ */

static const struct fp_param br_params[] = {
	{ "M", FP_REQUIRED, 1, 1L << 31, "rows" },
	{ "N", FP_REQUIRED, 1, 1L << 30, "row width (elements)" },
	{ NULL, 0, 0, 0, NULL }
};

static const char *const br_profiles[] = {
	"normal",  // x ~ N(0, 1), bias ~ N(0, 0.25): what timing uses
	"edge",    // x = -bias exactly in odd columns (h = 0: relu and relu'
		   // give 0), bias = 0 and x = +-1e-30 in even ones: the sign of
		   // tiny values must survive every saved form
	"large",   // x, bias ~ 1e30 N(0, 1): finite, dbias sums of 1e34
	NULL
};
enum { P_NORMAL, P_EDGE, P_LARGE };

#define BR_SUITE "M=16384,N=768;M=16384,N=4096"
#define BR_QUICK "M=2048,N=768"
// N = 1 and odd N take the scalar row kernels (and the flattened bit-mask
// kernel, whose words straddle rows); N = 36 and 100 are 16-byte rows in
// fp32 but not in bf16, and not whole words; M = 16384 many rows per
// thread row (at N = 768 fused_bitmask's resident backward grid on a
// large GPU: ew_resident_gy), M = 20001, N = 1030 that grid over a last
// band of one row, the scalar path; N = 65536 the widest grid; with
// bwd_kernel=bulk, M = 133, N = 1000 a last column strip of 29 (bf16) or
// 26 (fp32) vectors and a last stage and block of few rows, M = 1 a block
// of one row.
#define BR_TESTS "M=1,N=1;M=1,N=4097;M=3,N=1023;M=7,N=3;M=5,N=36;M=64,N=100;" \
	"M=1024,N=4096;M=3,N=65536;M=16384,N=768;M=133,N=1000;M=1,N=2048;M=20001,N=1030"

static const struct fp_kopt bwd_kopts[] = {
	{ "bwd_kernel", ew_bwd_kernel_values, EW_BWD_KERNEL_HELP " (fused_bitmask)" },
	{ "colsum", ew_colsum_values, EW_COLSUM_HELP " (every variant)", "pdl" },
	{ NULL, NULL, NULL }
};

static const struct fp_variant fwd_variants[] = {
	{ "save_input", FP_UNFUSED,
	  "2 kernels: h = x + bias (saved for the backward); y = relu(h)" },
	{ "fused_save_output", FP_FUSED,
	  "1 kernel: y = relu(x + bias); the backward reads y > 0" },
	{ "fused_bitmask", FP_FUSED,
	  "1 kernel: y and a 1-bit-per-element mask of x + bias > 0" },
	{ NULL, FP_UNFUSED, NULL }
};

static const struct fp_variant bwd_variants[] = {
	{ "save_input", FP_UNFUSED,
	  "3 kernels: dx = dy * (h > 0); dbias column partials of dx; partial sum" },
	{ "fused_save_output", FP_FUSED,
	  "2 kernels: dx from dy and y > 0 with dbias partials; partial sum" },
	{ "fused_bitmask", FP_FUSED,
	  "2 kernels: dx from dy and the bit mask with dbias partials; partial sum" },
	{ NULL, FP_UNFUSED, NULL }
};

#define MAX_TENSOR_BYTES (1.0 * (1ull << 47))

static int br_validate(const struct fp_shape *s, enum fp_dtype dt, char *why,
		       size_t whylen)
{
	long M = s->v[0], N = s->v[1];

	if (dt != FP_F32 && dt != FP_BF16)
		snprintf(why, whylen, "dtype %s: bias_relu takes fp32 or bf16",
			 fp_dtype_name(dt));
	else if (M < 1 || N < 1)
		snprintf(why, whylen, "M=%ld,N=%ld: rows and row width must be at least 1",
			 M, N);
	else if ((double)M * (double)N * (double)fp_dtype_size(dt) > MAX_TENSOR_BYTES)
		snprintf(why, whylen, "M=%ld,N=%ld: one %s tensor would take %.3g TiB, "
			 "more than any GPU holds", M, N, fp_dtype_name(dt),
			 (double)M * (double)N * (double)fp_dtype_size(dt) / 0x1p40);
	else
		return 0;
	return -1;
}

// Bytes the forward variant keeps for its backward (model saved_bytes):
// h, y, or the bit mask.
static size_t saved_size(long M, long N, enum fp_dtype dt, int variant)
{
	if (variant == BR_FUSED_BITMASK)
		return ew_bits_bytes(M, N);
	return (size_t)M * (size_t)N * fp_dtype_size(dt);
}

// One set's written buffers (fp_op.wbuf), padded, in carving order; sizes
// to z[] when z is not NULL.
static size_t written_bytes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
			    int variant, size_t z[3])
{
	const long M = s->v[0], N = s->v[1];
	const size_t es = fp_dtype_size(dt), mn = (size_t)M * N * es;
	size_t w[3] = { mn, 0, 0 }, sum = 0;  // y or dx first

	if (bwd) {
		w[1] = (size_t)N * es;  // dbias
		w[2] = (size_t)ew_plan_cols(M, N, es).prows * N * sizeof(float);
	} else if (variant == BR_SAVE_INPUT) {
		w[1] = mn;  // h
	} else if (variant == BR_FUSED_BITMASK) {
		w[2] = ew_bits_bytes(M, N);
	}
	for (int i = 0; i < 3; i++) {
		sum += dev_pad(w[i]);
		if (z)
			z[i] = w[i];
	}
	return sum;
}

static size_t op_bytes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
		       int variant, int nsets)
{
	const size_t es = fp_dtype_size(dt), ns = (size_t)nsets;
	const size_t mnp = dev_pad((size_t)s->v[0] * s->v[1] * es);
	size_t in;

	if (bwd)  // dy, what the forward saved
		in = ns * mnp + ns * dev_pad(saved_size(s->v[0], s->v[1], dt, variant));
	else      // x, bias
		in = ns * mnp + ns * dev_pad((size_t)s->v[1] * es);
	return in + ns * written_bytes(bwd, s, dt, variant, NULL);
}

static size_t fwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	return op_bytes(0, s, dt, variant, nsets);
}

static size_t bwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	return op_bytes(1, s, dt, variant, nsets);
}

static void fwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	const double M = (double)s->v[0], N = (double)s->v[1], mn = M * N;
	const double es = (double)fp_dtype_size(dt);

	memset(m, 0, sizeof *m);
	m->flops = 2 * mn;  // add, max
	m->min_bytes = (2 * mn + N) * es;
	m->saved_bytes = (double)saved_size(s->v[0], s->v[1], dt, variant);
	if (variant == BR_SAVE_INPUT)  // bias add: x, bias in, h out; relu: h in, y out
		m->variant_bytes = (4 * mn + N) * es;
	else if (variant == BR_FUSED_BITMASK)
		m->variant_bytes = m->min_bytes + m->saved_bytes;
	else
		m->variant_bytes = m->min_bytes;
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	const double M = (double)s->v[0], N = (double)s->v[1], mn = M * N;
	const double es = (double)fp_dtype_size(dt);
	const double bits = (double)ew_bits_bytes(s->v[0], s->v[1]);

	memset(m, 0, sizeof *m);
	m->flops = 2 * mn;  // select, column sum
	// The least the backward must learn of the forward is one bit an
	// element (the sign): mn / 8 bytes, whatever word the mask is packed in.
	m->min_bytes = (2 * mn + N) * es + mn / 8;
	m->saved_bytes = (double)saved_size(s->v[0], s->v[1], dt, variant);
	// The dbias partials (a row per block, M / 64 x N fp32 up to 1024 x N:
	// ew_plan_cols; fewer on a resident grid, ew_resident_gy) are written
	// and read back at once; they are expected to stay in L2 and are not
	// counted.
	if (variant == BR_SAVE_INPUT)
		// relu': h, dy in, dx out; the column partials read dx again
		m->variant_bytes = (4 * mn + N) * es;
	else if (variant == BR_FUSED_SAVE_OUTPUT)  // y, dy in, dx out
		m->variant_bytes = (3 * mn + N) * es;
	else  // dy, the mask's words in; dx out
		m->variant_bytes = (2 * mn + N) * es + bits;
}

static void op_destroy(struct fp_op *op)
{
	if (!op)
		return;
	cudaFree(op->x);
	cudaFree(op->bias);
	cudaFree(op->dy);
	cudaFree(op->saved);
	cudaFree(op->wbuf);
	free(op);
}

// bwdk, csk: the backward's options bwd_kernel (an EW_BWD_ value) and
// colsum (an EW_CS_ value).
static int op_create(int bwd, struct fp_op **out, const struct fp_shape *s,
		     enum fp_dtype dt, int variant, int nsets,
		     unsigned long long seed, int bwdk, int csk)
{
	struct fp_op *op;
	size_t z[3], elems, nbp;
	char why[160], *cur;

	*out = NULL;
	if (br_validate(s, dt, why, sizeof why))
		return error("bias_relu: %s", why);
	if (nsets < 1 || variant < 0 || variant > BR_FUSED_BITMASK)
		return error("bias_relu: bad instance (variant %d, %d input sets)",
			     variant, nsets);
	if (bwdk < 0 || bwdk >= EW_BWD_NVALUES)
		return error("bias_relu: kernel option bwd_kernel: no value %d", bwdk);
	if (csk < 0 || csk >= EW_CS_NVALUES)
		return error("bias_relu: kernel option colsum: no value %d", csk);
	op = (struct fp_op *)xcalloc(1, sizeof *op);
	op->bwd = bwd;
	op->variant = variant;
	op->nsets = nsets;
	op->dt = dt;
	op->M = s->v[0];
	op->N = s->v[1];
	op->es = fp_dtype_size(dt);
	op->plan = bwd ? ew_plan_cols(op->M, op->N, op->es)
		       : ew_plan_rows(op->M, op->N, op->es);
	op->bulk = bwd && variant == BR_FUSED_BITMASK && ew_bulk_use(bwdk, dt, op->N, op->es);
	op->pdl = bwd && ew_colsum_pdl(csk);
	if (op->bulk)
		op->bplan = ew_plan_bulk(op->M, op->N, op->es);
	op->gy = bwd ? bwd_grid_rows(op) : op->plan.gy;
	elems = (size_t)op->M * op->N;
	op->mnp = dev_pad(elems * op->es);
	nbp = dev_pad((size_t)op->N * op->es);
	op->saved_set = dev_pad(saved_size(op->M, op->N, dt, variant));
	op->wset = written_bytes(bwd, s, dt, variant, z);
	if ((!bwd && (dev_alloc(&op->x, nsets * op->mnp) ||
		      dev_alloc(&op->bias, nsets * nbp))) ||
	    (bwd && (dev_alloc(&op->dy, nsets * op->mnp) ||
		     dev_alloc(&op->saved, nsets * op->saved_set))) ||
	    dev_alloc(&op->wbuf, nsets * op->wset))
		goto out_free;
	cur = op->wbuf;  // set 0's written buffers, in written_bytes' order
	op->out = (char *)dev_carve(&cur, z[0]);
	if (bwd) {
		op->dbias = (char *)dev_carve(&cur, z[1]);
		op->partial = (float *)dev_carve(&cur, z[2]);
	} else {
		op->h = (char *)dev_carve(&cur, z[1]);
		op->words = (uint32_t *)dev_carve(&cur, z[2]);
	}
	for (int i = 0; i < nsets; i++) {
		uint64_t sd = splitmix64(seed + 0x100 * (uint64_t)i);

		if (bwd) {
			// x and bias into set 0's dx and dbias, the forward
			// makes what it saves, then dy
			if (dev_fill_normal(op->out, dt, elems, sd, 0.f, 1.f, 0) ||
			    dev_fill_normal(op->dbias, dt, (size_t)op->N,
					    splitmix64(sd + 2), 0.f, 0.5f, 0) ||
			    make_saved(op, i) ||
			    dev_fill_normal(op->dy + i * op->mnp, dt, elems,
					    splitmix64(sd + 1), 0.f, 1.f, 0))
				goto out_free;
		} else if (dev_fill_normal(op->x + i * op->mnp, dt, elems, sd, 0.f, 1.f, 0) ||
			   dev_fill_normal(op->bias + i * nbp, dt, (size_t)op->N,
					   splitmix64(sd + 2), 0.f, 0.5f, 0)) {
			goto out_free;
		}
	}
	if (CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	*out = op;
	return 0;

out_free:
	op_destroy(op);
	return -1;
}

// The forward has no kernel options: ko is ignored.
static int fwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return op_create(0, op, s, dt, variant, nsets, seed, EW_BWD_AUTO, EW_CS_AUTO);
}

static int bwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return op_create(1, op, s, dt, variant, nsets, seed, ko ? ko->v[0] : EW_BWD_AUTO,
			 ko ? ko->v[1] : EW_CS_AUTO);
}

static void op_kernel(const struct fp_op *op, char *buf, size_t n)
{
	const struct ew_plan *p = &op->plan;

	if (!op->bwd && op->variant == BR_FUSED_BITMASK && !(p->vec && op->N % 32 == 0))
		snprintf(buf, n, "flattened, a warp a mask word (N %% 32 != 0 or "
			 "unaligned rows)");
	else if (op->bulk)
		snprintf(buf, n, "bulk: dy by bulk copies, %d stages of %d rows, blocks "
			 "32x8 of %ld rows, grid %ux%u; %s", EW_BULK_STAGES, EW_BULK_ROWS,
			 op->bplan.brows, op->bplan.gx, op->bplan.gy, ew_colsum_desc(op->pdl));
	else
		snprintf(buf, n, "rows %s, blocks %ux%u, grid %ux%u%s%s%s",
			 p->vec ? "16-byte" : "scalar", p->tx, p->ty, p->gx,
			 op->bwd ? op->gy : p->gy,
			 op->bwd && op->gy != p->gy ? " (resident)" : "",
			 op->bwd ? "; " : "", op->bwd ? ew_colsum_desc(op->pdl) : "");
}

// What one case's check computes on the CPU, kept in the reference cache:
// the inputs as the device holds them, the reference of the compared rows,
// dbias in full.
struct br_ref {
	char *x, *dy;       // M x N of dt; dy backward only
	double *bias;       // N, rounded to dt
	long nrows, *rows;  // rows compared (all unless M x N is large)
	double *ref;        // nrows x N: y or dx of rows[s] at s N
	double *dbias;      // backward: N, over every row, then the N sums of
	                    // the squares of its terms (cmp_rel's sq_floor)
};

static void br_ref_free(void *p)
{
	struct br_ref *e = (struct br_ref *)p;

	free(e->x);
	free(e->dy);
	free(e->bias);
	free(e->rows);
	free(e->ref);
	free(e->dbias);
	free(e);
}

struct br_job {
	const struct fp_op *op;
	struct br_ref *e;
	int profile;
	uint64_t base;
	char *dst;
};

static void draw_rows(size_t lo, size_t hi, void *arg)
{
	const struct br_job *j = (const struct br_job *)arg;
	const long N = j->op->N;
	double *v = (double *)xmalloc((size_t)N * sizeof *v);
	struct fp_rng g;

	for (size_t r = lo; r < hi; r++) {
		rng_seed_item(&g, j->base, (long)r);
		for (long k = 0; k < N; k++) {
			double z = rng_normal(&g);

			if (j->profile == P_LARGE)
				v[k] = 1e30 * z;
			else if (j->profile == P_EDGE)
				v[k] = k % 2 ? -j->e->bias[k] : 1e-30 * z;
			else
				v[k] = z;
		}
		host_round(v, (size_t)N, j->op->dt);
		check_encode(j->dst + r * N * j->op->es, j->op->dt, v, (size_t)N);
	}
	free(v);
}

static void ref_rows(size_t lo, size_t hi, void *arg)
{
	const struct br_job *j = (const struct br_job *)arg;
	const struct fp_op *op = j->op;
	const struct br_ref *e = j->e;
	const long N = op->N;
	double *x = (double *)xmalloc(2 * (size_t)N * sizeof *x), *dy = x + N;
	double *db = (double *)xcalloc((size_t)N, sizeof *db);

	for (size_t s = lo; s < hi; s++) {
		const size_t row = (size_t)e->rows[s];

		check_decode(x, e->x + row * N * op->es, op->dt, (size_t)N);
		if (op->bwd) {
			check_decode(dy, e->dy + row * N * op->es, op->dt, (size_t)N);
			bias_relu_ref_bwd(dy, x, e->bias, e->ref + s * N, db, 1, N);
		} else {
			bias_relu_ref_fwd(x, e->bias, e->ref + s * N, 1, N);
		}
	}
	free(x);
	free(db);
}

// dbias of columns [lo, hi) over every row, in row order, and the sums of
// its terms' squares (a column whose terms cancel is judged by the rounding
// its terms carry: cmp_rel).
static void ref_dbias(size_t lo, size_t hi, void *arg)
{
	const struct br_job *j = (const struct br_job *)arg;
	const struct fp_op *op = j->op;
	const size_t w = hi - lo;
	double *x = (double *)xmalloc(2 * w * sizeof *x), *dy = x + w;
	double *db = (double *)xcalloc(2 * w, sizeof *db), *sq = db + w;

	for (long i = 0; i < op->M; i++) {
		const size_t at = ((size_t)i * op->N + lo) * op->es;

		check_decode(x, j->e->x + at, op->dt, w);
		check_decode(dy, j->e->dy + at, op->dt, w);
		for (size_t k = 0; k < w; k++)
			if (x[k] + j->e->bias[lo + k] > 0) {
				db[k] += dy[k];
				sq[k] += dy[k] * dy[k];
			}
	}
	memcpy(j->e->dbias + lo, db, w * sizeof *db);
	memcpy(j->e->dbias + op->N + lo, sq, w * sizeof *sq);
	free(x);
	free(db);
}

static struct br_ref *br_reference(const struct fp_op *op, int profile,
				   unsigned long long seed)
{
	const long M = op->M, N = op->N;
	const size_t E = (size_t)M * N, grain = par_grain_rows((size_t)N);
	struct ref_key key;
	struct br_ref *e;
	struct br_job job;
	struct fp_rng rng;

	memset(&key, 0, sizeof key);
	snprintf(key.what, sizeof key.what, "bias_relu_%s", op->bwd ? "bwd" : "fwd");
	key.dims[0] = M;
	key.dims[1] = N;
	key.dt = op->dt;
	key.profile = profile;
	key.seed = seed;
	if ((e = (struct br_ref *)refcache_find(&key)))
		return e;
	e = (struct br_ref *)xcalloc(1, sizeof *e);
	e->bias = (double *)xmalloc((size_t)N * sizeof *e->bias);
	rng_seed(&rng, seed);
	for (long j = 0; j < N; j++) {
		double z = rng_normal(&rng);

		e->bias[j] = profile == P_LARGE ? 1e30 * z :
			     profile == P_EDGE && j % 2 == 0 ? 0 : 0.5 * z;
	}
	host_round(e->bias, (size_t)N, op->dt);
	memset(&job, 0, sizeof job);
	job.op = op;
	job.e = e;
	job.profile = profile;
	e->x = (char *)xmalloc(E * op->es);
	job.base = rng_next(&rng);
	job.dst = e->x;
	par_for((size_t)M, grain, draw_rows, &job);
	if (op->bwd) {
		e->dy = (char *)xmalloc(E * op->es);
		job.base = rng_next(&rng);
		job.dst = e->dy;
		job.profile = P_NORMAL;
		par_for((size_t)M, grain, draw_rows, &job);
	}
	e->nrows = check_sample_rows(M, (double)N, seed ^ 0x94d049bb133111ebull, &e->rows);
	e->ref = (double *)xmalloc((size_t)e->nrows * N * sizeof *e->ref);
	par_for((size_t)e->nrows, grain, ref_rows, &job);
	if (op->bwd) {
		e->dbias = (double *)xmalloc(2 * (size_t)N * sizeof *e->dbias);
		par_for((size_t)N, 64, ref_dbias, &job);
	}
	refcache_keep(&key, e, E * op->es * (op->bwd ? 2 : 1) +
		      ((size_t)e->nrows + 3) * N * sizeof(double), br_ref_free);
	return e;
}

// Set 0's launch again (ew_check_repeat).
static int relaunch(struct fp_op *op)
{
	return op_launch(op, 0, 0);
}

// Fresh inputs from profile and seed into set 0 (the backward's saved data
// made by its forward variant from them), outputs poisoned, one run,
// compared with the double reference on the very values the GPU saw; a
// backward's dbias bit for bit the same from a second launch.
static int op_check(struct fp_op *op, int profile, unsigned long long seed,
		    struct fp_check *r)
{
	const long M = op->M, N = op->N;
	const size_t E = (size_t)M * N, bytes = E * op->es;
	const struct br_ref *e;
	char *got = NULL;
	double *db = NULL;
	struct fp_cmp c;
	int rc = -1;

	if (profile < 0 || profile > P_LARGE)
		return error("bias_relu: no input profile %d", profile);
	e = br_reference(op, profile, seed);
	if (op->bwd) {
		if (CUDA_CHECK(cudaMemcpy(op->out, e->x, bytes, cudaMemcpyHostToDevice)) ||
		    dev_upload(op->dbias, op->dt, e->bias, (size_t)N) ||
		    make_saved(op, 0) ||
		    CUDA_CHECK(cudaMemcpy(op->dy, e->dy, bytes, cudaMemcpyHostToDevice)) ||
		    dev_poison(op->dbias, (size_t)N * op->es) ||
		    dev_poison(op->partial, (size_t)op->plan.prows * N * sizeof(float)))
			goto out_free;
	} else if (CUDA_CHECK(cudaMemcpy(op->x, e->x, bytes, cudaMemcpyHostToDevice)) ||
		   dev_upload(op->bias, op->dt, e->bias, (size_t)N) ||
		   (op->h && dev_poison(op->h, bytes)) ||
		   (op->words && dev_poison(op->words, ew_bits_bytes(M, N)))) {
		goto out_free;
	}
	if (dev_poison(op->out, bytes) || op_launch(op, 0, 0) ||
	    CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	got = (char *)xmalloc(bytes);
	if (CUDA_CHECK(cudaMemcpy(got, op->out, bytes, cudaMemcpyDeviceToHost)))
		goto out_free;
	check_begin(r, seed, op->dt == FP_BF16 ? 1e-2 : 1e-5);
	check_compare_rows(&c, got, op->dt, N, e->rows, e->nrows, e->ref);
	check_output(r, op->bwd ? "dx" : "y", &c);
	if (op->bwd) {
		db = (double *)xmalloc((size_t)N * sizeof *db);
		if (dev_download(db, op->dbias, op->dt, (size_t)N))
			goto out_free;
		cmp_init(&c);
		cmp_add(&c, db, e->dbias, (size_t)N);
		cmp_add_floor(&c, e->dbias + N, (size_t)N);
		check_output(r, "dbias", &c);
		if (ew_check_repeat(op, op->dbias, (size_t)N * op->es, relaunch, r))
			goto out_free;
	}
	check_note_rows(r, e->nrows, M);
	rc = 0;

out_free:
	free(got);
	free(db);
	return rc;
}

extern "C" const struct workload wl_bias_relu_fwd = {
	.name = "bias_relu_fwd",
	.summary = "y = relu(x + bias) over rows of width N",
	.params = br_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = br_profiles,
	.suite = BR_SUITE,
	.quick = BR_QUICK,
	.tests = BR_TESTS,
	.backward = "bias_relu_bwd",
	.validate = br_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.kernel = op_kernel,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};

extern "C" const struct workload wl_bias_relu_bwd = {
	.name = "bias_relu_bwd",
	.summary = "dx = dy * (x + bias > 0), dbias = column sums of dx",
	.params = br_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = br_profiles,
	.suite = BR_SUITE,
	.quick = BR_QUICK,
	.tests = BR_TESTS,
	.kopts = bwd_kopts,
	.validate = br_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.kernel = op_kernel,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};
