// softplus.cu - the softplus chain workloads: w = log(exp(x) + 1) over an
// M x N tensor written as three elementwise ops, the AD chapter's running
// example (softplus_chain_fwd), and its gradient dx = dy sigmoid(x)
// (softplus_chain_bwd): unfused (the chain's three kernels), the chain
// fused as it is (its tape saved), fused saving what the backward needs,
// and fused saving nothing; fp32 and bf16 (bf16 storage, fp32 math).
//
// The room: ref.c (the CPU reference and input profiles), this file
// (kernels simplest first, launchers), workload.cu (the contract).
//
// Stability. Read literally the chain is a = exp(x), b = a + 1,
// w = log(b): exp(x) overflows fp32 (and bf16, same exponent range) above
// 88.72, so w = inf and the backward's a / b = inf / inf = NaN; and below
// about -17 (fp32) b rounds to 1 and w to 0, losing w ~ exp(x) entirely.
// Every variant instead computes the same three ops on the stable side:
//   e = exp(-|x|)           in (0, 1]: never overflows
//   l = log1p(e)            the "+ 1" and the log as one op, so that e
//                           is not rounded away against 1 (a materialised
//                           1 + e keeps e only to 2^-24 fp32, 2^-8 bf16)
//   w = max(x, 0) + l       = log(exp(x) + 1) exactly in real arithmetic
// and the backward sigmoid(x) = (x >= 0 ? 1 : e) / (1 + e), bounded.
//
// What each variant keeps for the backward (model saved_bytes):
//   unfused3          e, the tape of the chain: exp's backward needs its
//                     output, log1p's needs its input, both e; l is
//                     materialised but no backward reads it, so a tape
//                     frees it. The backward runs the chain's backward
//                     ops: de = dy / (1 + e), then dx = dy [x >= 0] -
//                     sgn(x) e de (the add passes dy to both branches).
//   fused_save        s = sigmoid(x), the whole local derivative, so the
//                     backward is one multiply reading dy and s and not
//                     even x. Saving exp(x), as the chain's tape would,
//                     is out (inf above 88.72); saving e = exp(-|x|) would
//                     need x as well for the sign: 4 tensors moved where s
//                     moves 3, at the same saved bytes.
//   fused_tape        e, as unfused3: its kernels fused and nothing
//                     else changed (l and de stay on chip), so it reads
//                     and writes what the chain does less the
//                     intermediates: the twin a prediction of fusing
//                     unfused3 is checked against (forward x in, w and e
//                     out; backward dy, x and e in, dx out).
//   fused_recompute   nothing: the backward recomputes e from x (one exp
//                     and one reciprocal an element, free next to the
//                     bytes).
//
// Napkin math, per element of the M x N tensor (E = M N elements of s
// bytes, s = 4 fp32 / 2 bf16), counting a transcendental as 1 FLOP:
//   forward   6 FLOP (-|x|, exp, + 1 and log of log1p, max, add); min
//             bytes 2 E s (x read, w written)
//   backward  6 FLOP (-|x|, exp, 1 + e, reciprocal, times e or 1, times
//             dy); min bytes 3 E s (dy and x, or what the forward saved,
//             read; dx written)
// At 16384 x 4096 fp32 that is 537 MB forward and 805 MB backward for 0.4
// GFLOP: about 180 and 270 us at 3 TB/s, where the 0.4 GFLOP take a few us.
// Bound by bytes: "fast" means one pass at copy bandwidth, so every kernel
// is the same elementwise loop (16-byte accesses, several in flight per
// thread) around a different op. The bf16 kernels move half the bytes per
// element and use the hardware exp, log2 and reciprocal (MUFU) to stay
// under the issue budget; bf16 rounds to 2^-8 anyway. Measurements belong in
// bench/RESULTS.md ("Softplus chain"), not here.
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "device.cuh"
#include "kutil.h"
#include "softplus/sp.h"

/* ------------------------------------------------------------------------ */
/* Device helpers                                                           */
/* ------------------------------------------------------------------------ */

// One 16-byte access: 4 fp32 or 8 bf16 values, converted to/from fp32.
// Streaming (evict-first): every tensor here is touched once per launch.
__device__ __forceinline__ void sp_ld16(const float *p, float *v)
{
	float4 a = __ldcs((const float4 *)p);

	v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
}

__device__ __forceinline__ void sp_ld16(const __nv_bfloat16 *p, float *v)
{
	unpack_bf16x8(__ldcs((const uint4 *)p), v);
}

__device__ __forceinline__ void sp_st16(float *p, const float *v)
{
	__stcs((float4 *)p, make_float4(v[0], v[1], v[2], v[3]));
}

__device__ __forceinline__ void sp_st16(__nv_bfloat16 *p, const float *v)
{
	__stcs((uint4 *)p, pack_bf16x8(v));
}

// e = exp(-|x|), in (0, 1]. FAST (bf16): the hardware ex2, whose error
// (2 + 1.2 |x| ulp) is far below bf16's 2^-8 where e is not 0 anyway.
template <bool FAST>
__device__ __forceinline__ float sp_exp_neg_abs(float x)
{
	return FAST ? __expf(-fabsf(x)) : expf(-fabsf(x));
}

// log1p(e) for e in [0, 1]. FAST: below 2^-6 the series to e^4 (relative
// error under 2^-24 / 5), above it the hardware log of 1 + e (absolute
// error 2^-21.4 against a result of at least 0.0155); both branches are a
// few instructions, and a select takes one.
template <bool FAST>
__device__ __forceinline__ float sp_log1p(float e)
{
	if (!FAST)
		return log1pf(e);
	float p = e * (1.0f - e * (0.5f - e * (1.0f / 3.0f - 0.25f * e)));

	return e < 0x1p-6f ? p : __logf(1.0f + e);
}

// The forward's last two ops together, w = max(x, 0) + log1p(e).
template <bool FAST>
__device__ __forceinline__ float sp_softplus(float x)
{
	return fmaxf(x, 0.0f) + sp_log1p<FAST>(sp_exp_neg_abs<FAST>(x));
}

// 1 / d for d = 1 + e in [1, 2]. FAST (bf16): the hardware reciprocal
// alone (MUFU.RCP, within 1 ulp of fp32, far below bf16's 2^-8; d is never
// subnormal, so flushing is moot); otherwise correctly rounded (MUFU.RCP
// and a Newton step, with a range check and a slow path the bf16 kernels
// do not pay for).
template <bool FAST>
__device__ __forceinline__ float sp_rcp(float d)
{
	float r;

	if (!FAST)
		return __frcp_rn(d);
	asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
	return r;
}

// sigmoid(x) from e = exp(-|x|): (x >= 0 ? 1 : e) / (1 + e). The product
// keeps a subnormal e (no flush): bf16 holds sigmoid(x) down to x ~ -92.
template <bool FAST>
__device__ __forceinline__ float sp_sigmoid(float x, float e)
{
	return (x >= 0.0f ? 1.0f : e) * sp_rcp<FAST>(1.0f + e);
}

/* ------------------------------------------------------------------------ */
/* The ops: what one element of each kernel computes                         */
/* ------------------------------------------------------------------------ */

// Each op reads NIN values of an element and writes NOUT, in fp32; the
// kernel below loads and stores them. The order of in[] and out[] is that
// of struct sp_args' pointers.

// unfused3 forward, kernel 1 of 3: e = exp(-|x|).
struct op_exp {
	static constexpr int NIN = 1, NOUT = 1;
	template <bool FAST>
	__device__ static void f(const float *in, float *out)
	{
		out[0] = sp_exp_neg_abs<FAST>(in[0]);
	}
};

// unfused3 forward, kernel 2 of 3: l = log1p(e).
struct op_log1p {
	static constexpr int NIN = 1, NOUT = 1;
	template <bool FAST>
	__device__ static void f(const float *in, float *out)
	{
		out[0] = sp_log1p<FAST>(in[0]);
	}
};

// unfused3 forward, kernel 3 of 3: w = max(x, 0) + l; in: x, l.
struct op_add {
	static constexpr int NIN = 2, NOUT = 1;
	template <bool FAST>
	__device__ static void f(const float *in, float *out)
	{
		out[0] = fmaxf(in[0], 0.0f) + in[1];
	}
};

// fused_recompute forward: w from x, nothing else written.
struct op_fwd {
	static constexpr int NIN = 1, NOUT = 1;
	template <bool FAST>
	__device__ static void f(const float *in, float *out)
	{
		out[0] = sp_softplus<FAST>(in[0]);
	}
};

// fused_save forward: w and s = sigmoid(x) from one e.
struct op_fwd_save {
	static constexpr int NIN = 1, NOUT = 2;
	template <bool FAST>
	__device__ static void f(const float *in, float *out)
	{
		const float x = in[0], e = sp_exp_neg_abs<FAST>(x);

		out[0] = fmaxf(x, 0.0f) + sp_log1p<FAST>(e);
		out[1] = sp_sigmoid<FAST>(x, e);
	}
};

// unfused3 backward, kernel 1 of 2 (log1p's backward): de = dy / (1 + e);
// in: dy, e.
struct op_bwd_log1p {
	static constexpr int NIN = 2, NOUT = 1;
	template <bool FAST>
	__device__ static void f(const float *in, float *out)
	{
		out[0] = in[0] * sp_rcp<FAST>(1.0f + in[1]);
	}
};

// unfused3 backward, kernel 2 of 2 (the backward of exp(-|x|) and of
// max(x, 0), summed as the add's two branches): dx = dy [x >= 0] - sgn(x)
// e de, sgn(0) = +1 so that x = 0 gives 1 - 1/2; in: dy, x, e, de.
struct op_bwd_exp {
	static constexpr int NIN = 4, NOUT = 1;
	template <bool FAST>
	__device__ static void f(const float *in, float *out)
	{
		const float t = in[2] * in[3];

		out[0] = in[1] >= 0.0f ? in[0] - t : t;
	}
};

// fused_tape forward: w and the chain's tape e = exp(-|x|) from one e.
struct op_fwd_tape {
	static constexpr int NIN = 1, NOUT = 2;
	template <bool FAST>
	__device__ static void f(const float *in, float *out)
	{
		const float x = in[0], e = sp_exp_neg_abs<FAST>(x);

		out[0] = fmaxf(x, 0.0f) + sp_log1p<FAST>(e);
		out[1] = e;
	}
};

// fused_save backward: dx = dy s; in: dy, s.
struct op_bwd_save {
	static constexpr int NIN = 2, NOUT = 1;
	template <bool FAST>
	__device__ static void f(const float *in, float *out)
	{
		out[0] = in[0] * in[1];
	}
};

// fused_recompute backward: dx = dy sigmoid(x), e recomputed; in: dy, x.
struct op_bwd_recompute {
	static constexpr int NIN = 2, NOUT = 1;
	template <bool FAST>
	__device__ static void f(const float *in, float *out)
	{
		const float x = in[1];

		out[0] = in[0] * sp_sigmoid<FAST>(x, sp_exp_neg_abs<FAST>(x));
	}
};

// fused_tape backward: unfused3's two backward ops in one, de on chip:
// dx = dy [x >= 0] - sgn(x) e dy / (1 + e), which is dy sigmoid(x) from
// the saved e; in: dy, x, e.
struct op_bwd_tape {
	static constexpr int NIN = 3, NOUT = 1;
	template <bool FAST>
	__device__ static void f(const float *in, float *out)
	{
		out[0] = in[0] * sp_sigmoid<FAST>(in[1], in[2]);
	}
};

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

// The one kernel: OP over the n elements of flat tensors (a tensor's rows
// are contiguous, so the M x N shape does not matter to an elementwise
// op, and neither does N's alignment: only the buffer's, which dev_pad
// makes 512 bytes). Each thread takes U 16-byte vectors of every input,
// 256 threads apart so a warp's accesses coalesce, and issues all their
// loads before the first use. By default (sp_vectors) U is 1: 16 bytes of
// each input in flight a thread, 32 registers, so that 8 blocks of 256
// threads fit an SM, with short blocks, so that at 16384 x 768 (13 to 25
// us a launch) the last, partial wave of blocks is short too. Measured on
// an H100 against U = 2 (bench/RESULTS.md, "The elementwise kernels'
// shape"): 0-3 % faster in every kernel of the fused variants, most at
// 16384 x 768. (bf16 two-input kernels at U = 2 took 55-61 registers, 4
// blocks an SM, and ran at 2850 GB/s at 16384 x 4096.)
// The kernel option `vectors` asks for U = 1, 2 or 4 instead (more than 2
// vectors of input a thread: more registers, fewer blocks an SM,
// sp_min_blocks). The grid covers the tensor in one pass where it can
// (grid-stride beyond SP_MAX_GRID blocks); the last n mod V elements go
// scalar, one per thread of block 0.
#define SP_THREADS 256
#define SP_MAX_GRID (1u << 20)

template <typename T>
struct sp_args {
	const T *in[4];
	T *out[2];
};

// Blocks an SM the register budget is set for (__launch_bounds__): 8 (32
// registers) for one vector of each input a thread or two of one input,
// where none spills; beyond, what the compiler takes (up to about 130
// registers at 4 vectors of 4 bf16 inputs), so that none spills there
// either.
static constexpr int sp_min_blocks(int nin, int u)
{
	return u == 1 || nin * u <= 2 ? 8 : 1;
}

// Vectors i0 + u 256 (u < U) of every input through OP to every output;
// GUARD: only those below nvec (the last batch of a tensor), else all U
// with no compare, at addresses one base plus constant offsets.
template <typename T, class OP, int U, bool GUARD>
__device__ __forceinline__ void sp_batch(const sp_args<T> &a, size_t i0,
					 size_t nvec)
{
	constexpr bool FAST = sizeof(T) == 2;
	constexpr int V = 16 / sizeof(T), NIN = OP::NIN, NOUT = OP::NOUT;
	float v[U][NIN][V];

#pragma unroll
	for (int u = 0; u < U; u++) {
		const size_t i = i0 + (size_t)u * SP_THREADS;
#pragma unroll
		for (int k = 0; k < NIN; k++)
			if (!GUARD || i < nvec)
				sp_ld16(a.in[k] + i * V, v[u][k]);
	}
#pragma unroll
	for (int u = 0; u < U; u++) {
		const size_t i = i0 + (size_t)u * SP_THREADS;
		float o[NOUT][V];

		if (GUARD && i >= nvec)
			continue;
#pragma unroll
		for (int j = 0; j < V; j++) {
			float in[NIN], out[NOUT];
#pragma unroll
			for (int k = 0; k < NIN; k++)
				in[k] = v[u][k][j];
			OP::template f<FAST>(in, out);
#pragma unroll
			for (int k = 0; k < NOUT; k++)
				o[k][j] = out[k];
		}
#pragma unroll
		for (int k = 0; k < NOUT; k++)
			sp_st16(a.out[k] + i * V, o[k]);
	}
}

template <typename T, class OP, int U>
__global__ void __launch_bounds__(SP_THREADS, sp_min_blocks(OP::NIN, U))
sp_kernel(const sp_args<T> a, size_t n)
{
	constexpr bool FAST = sizeof(T) == 2;
	constexpr int V = 16 / sizeof(T);
	constexpr int NIN = OP::NIN, NOUT = OP::NOUT;
	const size_t nvec = n / V;
	const size_t stride = (size_t)gridDim.x * SP_THREADS * U;

	for (size_t i0 = (size_t)blockIdx.x * SP_THREADS * U + threadIdx.x;
	     i0 < nvec; i0 += stride) {
		if (i0 + (size_t)(U - 1) * SP_THREADS < nvec)
			sp_batch<T, OP, U, false>(a, i0, nvec);
		else
			sp_batch<T, OP, U, true>(a, i0, nvec);
	}
	if (blockIdx.x == 0 && threadIdx.x < n - nvec * V) {
		const size_t i = nvec * V + threadIdx.x;
		float in[NIN], out[NOUT];

#pragma unroll
		for (int k = 0; k < NIN; k++)
			in[k] = to_f(a.in[k][i]);
		OP::template f<FAST>(in, out);
#pragma unroll
		for (int k = 0; k < NOUT; k++)
			a.out[k][i] = from_f<T>(out[k]);
	}
}

/* ------------------------------------------------------------------------ */
/* Launchers                                                                */
/* ------------------------------------------------------------------------ */

template <typename T, class OP, int U>
static int launch_t(const void *const *in, void *const *out, size_t n,
		    cudaStream_t st)
{
	constexpr int V = 16 / sizeof(T);
	const size_t per = (size_t)SP_THREADS * U, blocks = (n / V + per - 1) / per;
	const unsigned grid = blocks < 1 ? 1 : blocks > SP_MAX_GRID ? SP_MAX_GRID
		: (unsigned)blocks;
	sp_args<T> a = {};

	for (int k = 0; k < OP::NIN; k++)
		a.in[k] = (const T *)in[k];
	for (int k = 0; k < OP::NOUT; k++)
		a.out[k] = (T *)out[k];
	sp_kernel<T, OP, U><<<grid, SP_THREADS, 0, st>>>(a, n);
	return CUDA_CHECK_LAUNCH("sp_kernel");
}

template <class OP>
static int launch(enum fp_dtype dt, int u, const void *const *in,
		  void *const *out, size_t n, cudaStream_t st)
{
	if (dt == FP_BF16)
		return u == 1 ? launch_t<__nv_bfloat16, OP, 1>(in, out, n, st)
		     : u == 2 ? launch_t<__nv_bfloat16, OP, 2>(in, out, n, st)
			      : launch_t<__nv_bfloat16, OP, 4>(in, out, n, st);
	return u == 1 ? launch_t<float, OP, 1>(in, out, n, st)
	     : u == 2 ? launch_t<float, OP, 2>(in, out, n, st)
		      : launch_t<float, OP, 4>(in, out, n, st);
}

extern "C" int sp_vectors(enum sp_kop k, enum fp_dtype dt, int vectors)
{
	(void)k;
	(void)dt;
	return vectors ? vectors : 1;
}

extern "C" int sp_launch_op(enum sp_kop k, enum fp_dtype dt, int vectors,
			    const void *const *in, void *const *out, size_t n,
			    cudaStream_t st)
{
	const int u = sp_vectors(k, dt, vectors);

	if (u != 1 && u != 2 && u != 4)
		return error("softplus: %d vectors a thread (1, 2 or 4)", vectors);
	if (n == 0)
		return 0;
	switch (k) {
	case SP_K_EXP:
		return launch<op_exp>(dt, u, in, out, n, st);
	case SP_K_LOG1P:
		return launch<op_log1p>(dt, u, in, out, n, st);
	case SP_K_ADD:
		return launch<op_add>(dt, u, in, out, n, st);
	case SP_K_FWD:
		return launch<op_fwd>(dt, u, in, out, n, st);
	case SP_K_FWD_SAVE:
		return launch<op_fwd_save>(dt, u, in, out, n, st);
	case SP_K_BWD_LOG1P:
		return launch<op_bwd_log1p>(dt, u, in, out, n, st);
	case SP_K_BWD_EXP:
		return launch<op_bwd_exp>(dt, u, in, out, n, st);
	case SP_K_BWD_SAVE:
		return launch<op_bwd_save>(dt, u, in, out, n, st);
	case SP_K_BWD_RECOMPUTE:
		return launch<op_bwd_recompute>(dt, u, in, out, n, st);
	case SP_K_FWD_TAPE:
		return launch<op_fwd_tape>(dt, u, in, out, n, st);
	case SP_K_BWD_TAPE:
		return launch<op_bwd_tape>(dt, u, in, out, n, st);
	}
	return error("softplus: unknown kernel %d", (int)k);
}
