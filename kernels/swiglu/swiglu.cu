// swiglu.cu - the SwiGLU workloads: y = silu(a) * b on a packed [M, 2N]
// input (swiglu_fwd) and the packed gradient (da, db) (swiglu_bwd), fused
// and unfused, fp32 and bf16 (bf16 storage, fp32 math).
//
// Read top to bottom: the kernels (one elementwise template, what it
// computes a parameter), the launchers, then the two workload
// definitions. The CPU reference is ref.c.
//
// Napkin math for M x N outputs of s-byte elements (s = 4 fp32, 2 bf16;
// E = M N):
//   forward   min bytes 3 E s: a and b read, y written.
//             FLOP 5 E: sigmoid 3 (exp, counted 1 as a transcendental;
//             add; divide), a sig 1, times b 1.
//   backward  min bytes 5 E s: dy, a, b read, da and db written.
//             FLOP 11 E: sigmoid 3; silu'(a) = sig (1 + a e sig) 4 (a e,
//             an FMA, times sig); da = dy b silu' 2; db = dy a sig 2.
// At 16384 x 4096 fp32: 805 MB forward, 1.34 GB backward, 0.3 and 0.7
// GFLOP: memory-bound, "fast" means "at the copy bandwidth". Measured:
// bench/RESULTS.md.
//
// What each variant keeps alive for the backward (model saved_bytes): the
// unfused forward materialises s = silu(a) (E s bytes) between its two
// kernels, and its backward reads it (db = dy s) instead of recomputing
// it; the fused pair keeps nothing: the backward recomputes silu(a) from
// a, which it reads anyway for silu'(a).
//
// Stability for |a| up to 1e4 and beyond: with e = exp(-|a|) (in (0, 1],
// never overflows) and r = 1 / (1 + e), sig(a) = r and 1 - sig = e r for
// a >= 0, the other way round for a < 0: no inf/inf, no inf * 0, no
// cancellation. Where a < 0 sig = e r is tiny, and exp(-|a|) leaves fp32's
// normal range at |a| = 87 (the hardware exp of the bf16 path flushes it
// to 0) while a sig b, which the outputs are, stays normal to |a| ~ 92:
// so e = h^2 with h = exp(-|a| / 2) (normal to |a| = 174), the kernels
// carry sig / h (normal) and multiply each output by h last, so no
// intermediate is ever smaller than the output it makes.
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "error.h"
#include "checkref.h"
#include "kutil.h"
#include "par.h"
#include "layernorm/rows.cuh"
#include "swiglu/swiglu.h"
#include "util.h"

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

// What the elementwise kernel computes, per element (i, j) with a = p[i,
// j], b = p[i, N + j] of the packed input p:
//   SW_SILU  o[i, j] = s = silu(a)              (unfused forward, kernel 1)
//   SW_MUL   o[i, j] = u[i, j] * b, u = s       (unfused forward, kernel 2)
//   SW_FWD   o[i, j] = silu(a) * b              (fused forward)
//   SW_DB    o[i, N + j] = u * w, u = dy, w = s (unfused backward, kernel 1)
//   SW_DA    o[i, j] = u * b * silu'(a), u = dy (unfused backward, kernel 2)
//   SW_BWD   both of the last two               (fused backward)
enum { SW_SILU, SW_MUL, SW_FWD, SW_DB, SW_DA, SW_BWD };
#define SW_THREADS 256
// Accesses of each operand a thread takes (the kernel option `vectors`;
// SW_VECTORS by default), 256 threads apart, all loads issued before the
// first use. One a thread with a grid of one pass is the fastest shape on
// an H100 (bench/RESULTS.md, "The elementwise kernels' shape"): 1-2 % over
// four a thread at 16384 x 4096, 2-4 % at 16384 x 768, where many short
// blocks make a short last wave.
#define SW_VECTORS 1
// Blocks an SM at least (a register cap): 4 (32 warps, 64 registers) where
// the kernel computes one output, 3 (24 warps, 85 registers) where it
// computes silu'(a); every instance fits without spilling. Left alone the
// bf16 backward took 100 registers (16 warps an SM, too few).
#define SW_MIN_BLOCKS(OP) ((OP) == SW_DA || (OP) == SW_BWD ? 3 : 4)

// The sigmoid of a, split for the outputs' sake (see the top of the
// file): returns sh = sig(a) / h with *h = 1 (a >= 0) or exp(-|a| / 2)
// (a < 0), and *om = 1 - sig(a). fp32 takes expf; bf16 (FAST) the
// hardware exp2, whose error is far below bf16's rounding.
template <bool FAST>
__device__ __forceinline__ float sw_sigmoid(float a, float *h, float *om)
{
	const float eh = FAST ? __expf(-0.5f * fabsf(a)) : expf(-0.5f * fabsf(a));
	const float e = eh * eh, r = __fdividef(1.0f, 1.0f + e);
	const bool pos = a >= 0.0f;

	*h = pos ? 1.0f : eh;
	*om = pos ? e * r : r;
	return pos ? r : eh * r;
}

// One access as loaded, still in storage form (a 16-byte vector, or one
// element): the loads of a thread's accesses (U) are held like this
// until their use, which in bf16 takes half the registers that floats
// would (with floats the bf16 backward took 144 registers a thread: one
// block of 8 warps per SM, too few to cover the memory latency).
template <typename T, int VW>
struct sw_raw {
	using type = typename std::conditional<VW * sizeof(T) == 16, uint4, T>::type;
};

template <typename T, int VW>
__device__ __forceinline__ typename sw_raw<T, VW>::type sw_ld(const T *p)
{
	if constexpr (VW * sizeof(T) == 16)
		return __ldcs((const uint4 *)p);
	else
		return __ldcs(p);
}

// The VW values of an access, in fp32.
template <typename T, int VW>
__device__ __forceinline__ void sw_unpack(typename sw_raw<T, VW>::type r, float *v)
{
	if constexpr (VW * sizeof(T) == 16 && sizeof(T) == 2) {
		unpack_bf16x8(r, v);
	} else if constexpr (VW * sizeof(T) == 16) {
		v[0] = __uint_as_float(r.x), v[1] = __uint_as_float(r.y);
		v[2] = __uint_as_float(r.z), v[3] = __uint_as_float(r.w);
	} else {
		v[0] = to_f(r);
	}
}

template <typename T, int VW>
__device__ __forceinline__ void sw_st(T *p, const float *v)
{
	if constexpr (VW * sizeof(T) == 16)
		st16<true>(p, v);
	else
#pragma unroll
		for (int k = 0; k < VW; k++)
			__stcs(p + k, from_f<T>(v[k]));
}

// q / d for q < 2^31 and 1 <= d < 2^31 by a multiply and a shift
// (Granlund and Montgomery; the divisor's magic number made once on the
// host by sw_divider): a 64-bit division per access costs more issue slots
// than the bf16 kernels have to spare.
struct sw_div {
	unsigned d, mul, shift;  // mul = 0: d is 1
};

static struct sw_div sw_divider(unsigned d)
{
	struct sw_div v = { d, 0, 0 };
	unsigned l = 0;

	while ((1ull << l) < d)
		l++;
	if (d > 1) {
		v.mul = (unsigned)(((1ull << (31 + l)) + d - 1) / d);
		v.shift = l - 1;
	}
	return v;
}

__device__ __forceinline__ unsigned sw_quot(unsigned q, struct sw_div v)
{
	return v.mul ? __umulhi(q, v.mul) >> v.shift : q;
}

// Elementwise over the M x N outputs, VW elements an access: 16 bytes
// where a row of N is a whole number of them (N a multiple of 4 fp32, 8
// bf16: then every row of a and of b starts 16-byte aligned), else 1 (a
// row of odd N in bf16 starts at an odd address: per-element accesses are
// the scheme that is right for every N). U accesses (the option `vectors`) of each
// operand in flight per thread before the first use, as ln_gelu's
// gelu_kernel; grid-stride past MAX_GRID blocks. Accesses are numbered in
// 32 bits where M N / VW < 2^31 (Q = unsigned: every suite and test
// shape), the row of one a multiply and a shift (sw_div); else in 64 bits
// with a division.
template <typename T, int OP, int VW, int U, typename Q>
__global__ void __launch_bounds__(SW_THREADS, SW_MIN_BLOCKS(OP))
sw_kernel(const T *__restrict__ p, const T *__restrict__ u,
	  const T *__restrict__ w, T *__restrict__ o, long M, long N, struct sw_div dv)
{
	constexpr bool FAST = sizeof(T) == 2;
	constexpr bool LA = OP == SW_SILU || OP == SW_FWD || OP == SW_DA || OP == SW_BWD;
	constexpr bool LB = OP == SW_MUL || OP == SW_FWD || OP == SW_DA || OP == SW_BWD;
	constexpr bool LU = OP == SW_MUL || OP >= SW_DB;
	const Q nvr = (Q)(N / VW), nv = (Q)M * nvr;
	const Q stride = (Q)gridDim.x * SW_THREADS * U;

	for (Q q0 = (Q)blockIdx.x * SW_THREADS * U + threadIdx.x;
	     q0 < nv; q0 += stride) {
		typename sw_raw<T, VW>::type ra[U], rb[U], ru[U];
		size_t pa[U];

#pragma unroll
		for (int k = 0; k < U; k++) {
			const Q q = q0 + (Q)k * SW_THREADS;
			if (q < nv) {
				Q row;

				if constexpr (sizeof(Q) == 4)
					row = sw_quot(q, dv);
				else
					row = q / nvr;
				pa[k] = (size_t)row * 2 * (size_t)N + (size_t)(q - row * nvr) * VW;
				if (LA)
					ra[k] = sw_ld<T, VW>(p + pa[k]);
				if (LB)
					rb[k] = sw_ld<T, VW>(p + pa[k] + N);
				if (LU)
					ru[k] = sw_ld<T, VW>(u + (size_t)q * VW);
				if (OP == SW_DB)
					rb[k] = sw_ld<T, VW>(w + (size_t)q * VW);
			}
		}
#pragma unroll
		for (int k = 0; k < U; k++) {
			const Q q = q0 + (Q)k * SW_THREADS;
			if (q >= nv)
				continue;
			float va[VW], vb[VW], vu[VW], r0[VW], r1[VW];

			if (LA)
				sw_unpack<T, VW>(ra[k], va);
			if (LB || OP == SW_DB)
				sw_unpack<T, VW>(rb[k], vb);
			if (LU)
				sw_unpack<T, VW>(ru[k], vu);
#pragma unroll
			for (int i = 0; i < VW; i++) {
				const float a = va[i], b = vb[i], d = vu[i];
				float h, om, sh;

				if constexpr (OP == SW_SILU || OP == SW_FWD || OP == SW_DA ||
					      OP == SW_BWD)
					sh = sw_sigmoid<FAST>(a, &h, &om);
				// Each product with sh is taken before the last
				// factor h (see sw_sigmoid).
				if constexpr (OP == SW_SILU)
					r0[i] = a * sh * h;
				else if constexpr (OP == SW_MUL)
					r0[i] = d * b;
				else if constexpr (OP == SW_FWD)
					r0[i] = a * sh * b * h;
				else if constexpr (OP == SW_DB)
					r1[i] = d * b;  // b holds s here
				else {
					// silu'(a) = sig (1 + a (1 - sig))
					r0[i] = d * b * (sh * fmaf(a, om, 1.0f)) * h;
					if constexpr (OP == SW_BWD)
						r1[i] = d * a * sh * h;
				}
			}
			if constexpr (OP <= SW_FWD)
				sw_st<T, VW>(o + (size_t)q * VW, r0);
			if constexpr (OP == SW_DA || OP == SW_BWD)
				sw_st<T, VW>(o + pa[k], r0);
			if constexpr (OP == SW_DB || OP == SW_BWD)
				sw_st<T, VW>(o + pa[k] + N, r1);
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Launchers                                                                */
/* ------------------------------------------------------------------------ */

template <typename T, int OP, int VW, int U>
static void sw_launch_vw(unsigned grid, const void *p, const void *u, const void *w,
			 void *o, long M, long N, cudaStream_t st)
{
	const size_t nv = (size_t)M * (size_t)(N / VW);

	// 32 bits where no index the loop forms (up to nv plus a grid stride)
	// reaches 2^31
	if (nv + (size_t)grid * SW_THREADS * U < (1ull << 31))
		sw_kernel<T, OP, VW, U, unsigned><<<grid, SW_THREADS, 0, st>>>(
			(const T *)p, (const T *)u, (const T *)w, (T *)o, M, N,
			sw_divider((unsigned)(N / VW)));
	else
		sw_kernel<T, OP, VW, U, size_t><<<grid, SW_THREADS, 0, st>>>(
			(const T *)p, (const T *)u, (const T *)w, (T *)o, M, N,
			sw_divider(1));
}

template <typename T, int OP, int U>
static int sw_launch_u(const void *p, const void *u, const void *w, void *o,
		       long M, long N, cudaStream_t st)
{
	constexpr int V = 16 / sizeof(T);
	const int vw = N % V ? 1 : V;
	const size_t nv = (size_t)M * (size_t)(N / vw), per = (size_t)SW_THREADS * U;
	const size_t b = (nv + per - 1) / per;
	const unsigned grid = (unsigned)(b < 1 ? 1 : b > (size_t)MAX_GRID ? MAX_GRID : b);

	if (vw == V)
		sw_launch_vw<T, OP, V, U>(grid, p, u, w, o, M, N, st);
	else
		sw_launch_vw<T, OP, 1, U>(grid, p, u, w, o, M, N, st);
	return CUDA_CHECK_LAUNCH("sw_kernel");
}

template <typename T, int OP>
static int sw_launch_t(int vectors, const void *p, const void *u, const void *w,
		       void *o, long M, long N, cudaStream_t st)
{
	switch (vectors) {
	case 1:
		return sw_launch_u<T, OP, 1>(p, u, w, o, M, N, st);
	case 2:
		return sw_launch_u<T, OP, 2>(p, u, w, o, M, N, st);
	case 4:
		return sw_launch_u<T, OP, 4>(p, u, w, o, M, N, st);
	}
	return error("swiglu: %d accesses a thread (1, 2 or 4)", vectors);
}

// Enqueue one kernel of OP, `vectors` accesses of each operand a thread.
template <int OP>
static int sw_launch(enum fp_dtype dt, int vectors, const void *p, const void *u,
		     const void *w, void *o, long M, long N, cudaStream_t st)
{
	return dt == FP_BF16 ? sw_launch_t<__nv_bfloat16, OP>(vectors, p, u, w, o, M, N, st)
			     : sw_launch_t<float, OP>(vectors, p, u, w, o, M, N, st);
}

/* The fused variants' kernels on a caller's pointers (swiglu.h). */
extern "C" int swiglu_fused_fwd(enum fp_dtype dt, const void *xp, void *y, long M,
				long N, cudaStream_t st)
{
	return sw_launch<SW_FWD>(dt, SW_VECTORS, xp, NULL, NULL, y, M, N, st);
}

extern "C" int swiglu_fused_bwd(enum fp_dtype dt, const void *dy, const void *xp,
				void *dxp, long M, long N, cudaStream_t st)
{
	return sw_launch<SW_BWD>(dt, SW_VECTORS, xp, dy, NULL, dxp, M, N, st);
}

enum { V_UNFUSED, V_FUSED };

struct fp_op {
	int bwd, variant, nsets;
	int vectors;        // accesses of each operand a thread (kernel option)
	enum fp_dtype dt;
	long M, N;
	size_t es;
	size_t pset, yset;  // bytes of one set's packed (M x 2N) / M x N tensor
	char *p, *dy;       // inputs, nsets sets each: packed a|b; backward dy
	char *saved;        // unfused backward: s = silu(a), nsets sets
	// What a launch writes, set 0's, carved out of wbuf: set s's lie s *
	// wset bytes further on.
	char *wbuf;
	size_t wset;
	char *out;          // y (forward, M x N) or the packed da|db (backward)
	char *s;            // unfused forward: s = silu(a) (M x N)
};

static int op_launch(struct fp_op *op, int set, cudaStream_t st)
{
	const size_t off = (size_t)set * op->wset;
	const char *p, *dy, *saved;
	char *out, *s;

	if (set < 0 || set >= op->nsets)
		return error("swiglu: set %d out of range [0, %d)", set, op->nsets);
	p = op->p + set * op->pset;
	out = (char *)dev_in_set(op->out, off);
	if (!op->bwd) {
		if (op->variant == V_FUSED)
			return sw_launch<SW_FWD>(op->dt, op->vectors, p, NULL, NULL, out, op->M, op->N, st);
		s = (char *)dev_in_set(op->s, off);
		return sw_launch<SW_SILU>(op->dt, op->vectors, p, NULL, NULL, s, op->M, op->N, st) ||
		       sw_launch<SW_MUL>(op->dt, op->vectors, p, s, NULL, out, op->M, op->N, st) ? -1 : 0;
	}
	dy = op->dy + set * op->yset;
	if (op->variant == V_FUSED)
		return sw_launch<SW_BWD>(op->dt, op->vectors, p, dy, NULL, out, op->M, op->N, st);
	saved = op->saved + set * op->yset;
	return sw_launch<SW_DB>(op->dt, op->vectors, p, dy, saved, out, op->M, op->N, st) ||
	       sw_launch<SW_DA>(op->dt, op->vectors, p, dy, NULL, out, op->M, op->N, st) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* The workloads                                                            */
/* ------------------------------------------------------------------------ */

static const struct fp_param sw_params[] = {
	{ "M", FP_REQUIRED, 1, 1L << 31, "rows" },
	{ "N", FP_REQUIRED, 1, 1L << 30, "output width (elements; the input is 2N wide)" },
	{ NULL, 0, 0, 0, NULL }
};

static const char *const sw_profiles[] = {
	"normal",    // a, b ~ N(0, 1): what timing uses
	"large",     // |a| log-uniform in [1, 1e4], either sign: exp(-a)
	             // overflows, a naive a / (1 + exp(-a)) or e^a / (1 + e^a)
	             // gives inf/inf or inf * 0
	"overflow",  // |a| uniform in [80, 100], either sign: the edge where
	             // exp(|a|) leaves fp32's (and bf16's) range
	"zeros",     // a = 0 in every other column (silu 0, silu' 1/2 exactly),
	             // b = 0 in every third
	NULL
};
enum { P_NORMAL, P_LARGE, P_OVERFLOW, P_ZEROS };

#define SW_SUITE "M=16384,N=768;M=16384,N=4096"
#define SW_QUICK "M=2048,N=768"
// N = 1, 3, 1023 and 4097 take the per-element path in both dtypes, N =
// 1020 in bf16 only (a multiple of 4, not of 8); the rest 16-byte accesses,
// with a partial last block of the grid and a wide row.
#define SW_TESTS "M=1,N=1;M=7,N=3;M=3,N=1023;M=5,N=4097;M=9,N=1020;" \
	"M=2048,N=768;M=1000,N=1000;M=2,N=65536;M=16384,N=8"

static const struct fp_variant fwd_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "2 kernels: s = silu(a) to DRAM (kept for the backward); y = s*b" },
	{ "fused", FP_FUSED, "1 kernel: a and b read once, y written once; keeps nothing" },
	{ NULL, FP_UNFUSED, NULL }
};

static const struct fp_variant bwd_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "2 kernels: db = dy*s from the forward's saved s; da = dy*b*silu'(a)" },
	{ "fused", FP_FUSED,
	  "1 kernel: dy, a, b read once, silu(a) recomputed, da and db written once" },
	{ NULL, FP_UNFUSED, NULL }
};

// Largest one-tensor size we accept: beyond any GPU, and far from overflow.
#define MAX_TENSOR_BYTES (1.0 * (1ull << 47))

static int sw_validate(const struct fp_shape *s, enum fp_dtype dt, char *why,
		       size_t whylen)
{
	long M = s->v[0], N = s->v[1];
	double bytes = 2.0 * (double)M * (double)N * (double)fp_dtype_size(dt);

	if (dt != FP_F32 && dt != FP_BF16)
		snprintf(why, whylen, "dtype %s: swiglu takes fp32 or bf16",
			 fp_dtype_name(dt));
	else if (M < 1 || N < 1)
		snprintf(why, whylen, "M=%ld,N=%ld: rows and width must be at least 1", M, N);
	else if (bytes > MAX_TENSOR_BYTES)
		snprintf(why, whylen, "M=%ld,N=%ld: the %s input would take %.3g TiB, "
			 "more than any GPU holds", M, N, fp_dtype_name(dt), bytes / 0x1p40);
	else
		return 0;
	return -1;
}

// One set's written buffers: the output (y, or the packed gradient) and
// the unfused forward's s.
static size_t written_bytes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
			    int variant, size_t *out, size_t *mid)
{
	size_t E = (size_t)s->v[0] * (size_t)s->v[1] * fp_dtype_size(dt);

	*out = bwd ? 2 * E : E;
	*mid = !bwd && variant == V_UNFUSED ? E : 0;
	return dev_pad(*out) + dev_pad(*mid);
}

// Inputs (packed a|b; backward dy, and the unfused backward's saved s) and
// written buffers, nsets of each.
static size_t op_bytes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
		       int variant, int nsets)
{
	size_t E = (size_t)s->v[0] * (size_t)s->v[1] * fp_dtype_size(dt), out, mid;

	return dev_pad(nsets * 2 * E) + (bwd ? dev_pad(nsets * E) : 0) +
	       (bwd && variant == V_UNFUSED ? dev_pad(nsets * E) : 0) +
	       (size_t)nsets * written_bytes(bwd, s, dt, variant, &out, &mid);
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
	double E = (double)s->v[0] * (double)s->v[1], es = (double)fp_dtype_size(dt);

	memset(m, 0, sizeof *m);
	m->flops = 5 * E;
	m->min_bytes = 3 * E * es;
	if (variant == V_UNFUSED) {
		// silu: a in, s out; multiply: s, b in, y out.
		m->variant_bytes = 5 * E * es;
		m->saved_bytes = E * es;  // s
	} else {
		m->variant_bytes = m->min_bytes;
	}
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double E = (double)s->v[0] * (double)s->v[1], es = (double)fp_dtype_size(dt);

	memset(m, 0, sizeof *m);
	m->flops = 11 * E;
	m->min_bytes = 5 * E * es;
	if (variant == V_UNFUSED) {
		// db: dy, s in, db out; da: dy, a, b in, da out.
		m->variant_bytes = 7 * E * es;
		m->saved_bytes = E * es;  // the forward's s, read here
	} else {
		m->variant_bytes = m->min_bytes;
	}
}

static void op_destroy(struct fp_op *op)
{
	if (!op)
		return;
	cudaFree(op->p);
	cudaFree(op->dy);
	cudaFree(op->saved);
	cudaFree(op->wbuf);
	free(op);
}

static int op_create(int bwd, struct fp_op **out, const struct fp_shape *s,
		     enum fp_dtype dt, int variant, int nsets,
		     unsigned long long seed, const struct fp_kopts *ko)
{
	static const int vectors[] = { SW_VECTORS, 1, 2, 4 };
	struct fp_op *op;
	size_t zout, zmid, E;
	char why[160], *cur;

	*out = NULL;
	if (sw_validate(s, dt, why, sizeof why))
		return error("swiglu: %s", why);
	if (nsets < 1 || variant < 0 || variant > 1)
		return error("swiglu: bad instance (variant %d, %d input sets)",
			     variant, nsets);
	if (ko && ko->v[0] >= sizeof vectors / sizeof vectors[0])
		return error("swiglu: kernel option vectors: no value %d", ko->v[0]);
	op = (struct fp_op *)xcalloc(1, sizeof *op);
	op->bwd = bwd;
	op->variant = variant;
	op->dt = dt;
	op->M = s->v[0];
	op->N = s->v[1];
	op->nsets = nsets;
	op->vectors = vectors[ko ? ko->v[0] : 0];
	op->es = fp_dtype_size(dt);
	E = (size_t)op->M * op->N;
	op->yset = E * op->es;
	op->pset = 2 * op->yset;
	op->wset = written_bytes(bwd, s, dt, variant, &zout, &zmid);
	if (dev_alloc(&op->p, nsets * op->pset) ||
	    (bwd && dev_alloc(&op->dy, nsets * op->yset)) ||
	    (bwd && variant == V_UNFUSED && dev_alloc(&op->saved, nsets * op->yset)) ||
	    dev_alloc(&op->wbuf, (size_t)nsets * op->wset))
		goto out_free;
	cur = op->wbuf;
	op->out = (char *)dev_carve(&cur, zout);
	op->s = (char *)dev_carve(&cur, zmid);
	for (int i = 0; i < nsets; i++) {
		uint64_t sd = splitmix64(seed + 0x100 * (uint64_t)i);
		char *p = op->p + i * op->pset;

		if (dev_fill_normal(p, dt, 2 * E, sd, 0.0f, 1.0f, 0) ||
		    (bwd && dev_fill_normal(op->dy + i * op->yset, dt, E, splitmix64(sd + 3),
					    0.0f, 1.0f, 0)) ||
		    // the saved s is what the unfused forward's first kernel writes
		    (op->saved && sw_launch<SW_SILU>(dt, SW_VECTORS, p, NULL, NULL, op->saved + i * op->yset,
						     op->M, op->N, 0)))
			goto out_free;
	}
	if (CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	*out = op;
	return 0;

out_free:
	op_destroy(op);
	return -1;
}

// The one kernel option: accesses of each operand a thread (SW_VECTORS);
// each value but auto is the number.
static const char *const vectors_values[] = { "auto", "1", "2", "4", NULL };
static const struct fp_kopt sw_kopts[] = {
	{ "vectors", vectors_values,
	  "16-byte accesses (1 element where rows are unaligned) of each operand "
	  "a thread takes (auto: 1)" },
	{ NULL, NULL, NULL },
};

static int fwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return op_create(0, op, s, dt, variant, nsets, seed, ko);
}

static int bwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return op_create(1, op, s, dt, variant, nsets, seed, ko);
}

// workload->kernel(): the access width the row width allows, and how
// many of each operand a thread takes.
static void op_kernel(const struct fp_op *op, char *buf, size_t n)
{
	snprintf(buf, n, "%s accesses, %d a thread",
		 op->N % (long)(16 / op->es) ? "per-element (rows unaligned)" : "16-byte",
		 op->vectors);
}

// Row `row` of profile `profile`: the packed a|b (2N values) into v,
// rounded to dt. dy rows are drawn as profile 0's a half.
static void draw_row(struct fp_rng *r, int profile, double *v, long N,
		     enum fp_dtype dt)
{
	for (long j = 0; j < N; j++) {
		double sign = rng_uniform(r) < 0.5 ? -1.0 : 1.0;

		switch (profile) {
		case P_LARGE:
			v[j] = sign * pow(10.0, 4.0 * rng_uniform(r));
			break;
		case P_OVERFLOW:
			v[j] = sign * (80.0 + 20.0 * rng_uniform(r));
			break;
		case P_ZEROS:
			v[j] = j % 2 ? rng_normal(r) : 0.0;
			break;
		default:
			v[j] = rng_normal(r);
		}
	}
	for (long j = 0; j < N; j++)
		v[N + j] = profile == P_ZEROS && j % 3 == 0 ? 0.0 : rng_normal(r);
	host_round(v, 2 * (size_t)N, dt);
}

// What one case's check computes on the CPU, kept in the reference cache
// under workload, shape, dtype, profile and seed: the inputs as the device
// holds them and the reference rows.
struct sw_ref {
	char *p, *dy;      // M x 2N and M x N of dt; dy backward only
	long nrows;        // rows compared (all unless M x N is large)
	long *rows;
	double *ref;       // nrows x W (W = N forward, 2N backward)
};

static void sw_ref_free(void *q)
{
	struct sw_ref *e = (struct sw_ref *)q;

	free(e->p);
	free(e->dy);
	free(e->rows);
	free(e->ref);
	free(e);
}

struct sw_job {
	const struct fp_op *op;
	struct sw_ref *e;
	int profile;
	uint64_t base;     // the inputs' streams
};

// Rows [lo, hi) of the inputs, each from its own stream: the packed row,
// then dy's (backward).
static void draw_rows(size_t lo, size_t hi, void *arg)
{
	const struct sw_job *j = (const struct sw_job *)arg;
	const long N = j->op->N;
	const size_t es = j->op->es;
	double *v = (double *)xmalloc(2 * (size_t)N * sizeof *v);
	struct fp_rng g;

	for (size_t row = lo; row < hi; row++) {
		rng_seed_item(&g, j->base, (long)row);
		draw_row(&g, j->profile, v, N, j->op->dt);
		check_encode(j->e->p + row * 2 * (size_t)N * es, j->op->dt, v, 2 * (size_t)N);
		if (j->op->bwd) {
			draw_row(&g, P_NORMAL, v, N, j->op->dt);
			check_encode(j->e->dy + row * (size_t)N * es, j->op->dt, v, (size_t)N);
		}
	}
	free(v);
}

// The reference of compared rows [lo, hi).
static void ref_rows(size_t lo, size_t hi, void *arg)
{
	const struct sw_job *j = (const struct sw_job *)arg;
	const struct sw_ref *e = j->e;
	const long N = j->op->N, W = j->op->bwd ? 2 * N : N;
	const size_t es = j->op->es;
	double *p = (double *)xmalloc(3 * (size_t)N * sizeof *p), *dy = p + 2 * N;

	for (size_t s = lo; s < hi; s++) {
		const size_t row = (size_t)e->rows[s];

		check_decode(p, e->p + row * 2 * N * es, j->op->dt, 2 * (size_t)N);
		if (j->op->bwd) {
			check_decode(dy, e->dy + row * N * es, j->op->dt, (size_t)N);
			swiglu_ref_bwd(dy, p, e->ref + s * W, 1, N);
		} else {
			swiglu_ref_fwd(p, e->ref + s * W, 1, N);
		}
	}
	free(p);
}

static struct sw_ref *sw_reference(const struct fp_op *op, int profile,
				   unsigned long long seed)
{
	const long M = op->M, N = op->N, W = op->bwd ? 2 * N : N;
	const size_t E = (size_t)M * (size_t)N, grain = par_grain_rows((size_t)W);
	struct ref_key key;
	struct sw_ref *e;
	struct sw_job job;

	memset(&key, 0, sizeof key);
	snprintf(key.what, sizeof key.what, "swiglu_%s", op->bwd ? "bwd" : "fwd");
	key.dims[0] = M;
	key.dims[1] = N;
	key.dt = op->dt;
	key.profile = profile;
	key.seed = seed;
	if ((e = (struct sw_ref *)refcache_find(&key)))
		return e;
	e = (struct sw_ref *)xcalloc(1, sizeof *e);
	e->p = (char *)xmalloc(2 * E * op->es);
	e->dy = op->bwd ? (char *)xmalloc(E * op->es) : NULL;
	job.op = op;
	job.e = e;
	job.profile = profile;
	job.base = splitmix64(seed);
	par_for((size_t)M, grain, draw_rows, &job);
	e->nrows = check_sample_rows(M, (double)W, seed ^ 0x94d049bb133111ebull, &e->rows);
	e->ref = (double *)xmalloc((size_t)e->nrows * W * sizeof *e->ref);
	par_for((size_t)e->nrows, grain, ref_rows, &job);
	refcache_keep(&key, e, E * op->es * (op->bwd ? 3 : 2) +
		      (size_t)e->nrows * W * sizeof(double), sw_ref_free);
	return e;
}

// Fresh inputs from profile and seed, outputs (and s) poisoned, the
// unfused backward's saved s made by the unfused forward's first kernel
// as a training step would, one run, compared with the double reference
// on every row or a sample of rows (the detail says how many).
static int op_check(struct fp_op *op, int profile, unsigned long long seed,
		    struct fp_check *res)
{
	const long M = op->M, N = op->N, W = op->bwd ? 2 * N : N;
	const size_t out_bytes = (size_t)M * W * op->es;
	const struct sw_ref *e;
	char *got = NULL;
	struct fp_cmp c;
	int rc = -1;

	if (profile < 0 || profile > P_ZEROS)
		return error("swiglu: no input profile %d", profile);
	e = sw_reference(op, profile, seed);
	if (CUDA_CHECK(cudaMemcpy(op->p, e->p, op->pset, cudaMemcpyHostToDevice)) ||
	    (op->bwd && CUDA_CHECK(cudaMemcpy(op->dy, e->dy, op->yset,
					      cudaMemcpyHostToDevice))) ||
	    (op->saved && (dev_poison(op->saved, op->yset) ||
			   sw_launch<SW_SILU>(op->dt, op->vectors, op->p, NULL, NULL, op->saved,
					      M, N, 0))) ||
	    dev_poison(op->out, out_bytes) ||
	    (op->s && dev_poison(op->s, op->yset)) ||
	    op_launch(op, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	got = (char *)xmalloc(out_bytes);
	if (CUDA_CHECK(cudaMemcpy(got, op->out, out_bytes, cudaMemcpyDeviceToHost)))
		goto out_free;
	check_begin(res, seed, op->dt == FP_BF16 ? 1e-2 : 1e-5);
	check_compare_rows(&c, got, op->dt, W, e->rows, e->nrows, e->ref);
	// Outputs under the smallest normal float (a << -80: silu(a) ~ a
	// exp(a)) are held by both dtypes with only the denormals' absolute
	// spacing: judged against that size, FLT_MIN each, not their own.
	c.sq_floor = (double)e->nrows * (double)W * (double)FLT_MIN * (double)FLT_MIN;
	check_output(res, op->bwd ? "da|db" : "y", &c);
	check_note_rows(res, e->nrows, M);
	rc = 0;

out_free:
	free(got);
	return rc;
}

extern "C" const struct workload wl_swiglu_fwd = {
	.name = "swiglu_fwd",
	.summary = "y = silu(a) * b, a and b the two halves of each row of an M x 2N input",
	.params = sw_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = sw_profiles,
	.suite = SW_SUITE,
	.quick = SW_QUICK,
	.tests = SW_TESTS,
	.kopts = sw_kopts,
	.backward = "swiglu_bwd",
	.validate = sw_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.kernel = op_kernel,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};

extern "C" const struct workload wl_swiglu_bwd = {
	.name = "swiglu_bwd",
	.summary = "da = dy*b*silu'(a), db = dy*silu(a), packed as the M x 2N input",
	.params = sw_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = sw_profiles,
	.suite = SW_SUITE,
	.quick = SW_QUICK,
	.tests = SW_TESTS,
	.kopts = sw_kopts,
	.backward = NULL,
	.validate = sw_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.kernel = op_kernel,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};
