// ln_gelu.cu - the LayerNorm+GELU workloads: y = GELU(LayerNorm(x; gamma, beta))
// (ln_gelu_fwd) and its gradients dx, dgamma, dbeta (ln_gelu_bwd), fused and
// unfused, fp32 and bf16 (bf16 storage, fp32 math).
//
// Read top to bottom as in llm.c's dev/cuda: the CPU reference, the kernels
// (simplest first), the launchers, then the two workload definitions. The
// row kernels (LayerNorm with GELU on or off) live in the LayerNorm module,
// kernels/layernorm/rows.cuh; this file instantiates their GELU modes and
// adds the elementwise GELU kernel of the unfused variants.
//
// Napkin math for one row-major M x N tensor of s-byte elements
// (s = 4 fp32, 2 bf16):
//   forward   min bytes (2 M N + 2 N) s: x read, y written, gamma/beta once.
//             FLOP 17 M N (tanh GELU) or 13 M N (erf): LayerNorm 8 per
//             element (mean add; subtract; square-accumulate FMA; normalize
//             sub+mul; affine FMA), GELU 9 (tanh form) or 5 (erf form),
//             counting an FMA as 2 and a transcendental as 1.
//   backward  min bytes (3 M N + 4 N) s: dy and x read, dx written, gamma
//             and beta read, dgamma and dbeta written.
//             FLOP 35 M N (tanh) or 29 M N (erf): LayerNorm recomputed 8,
//             GELU' 15 (tanh) or 9 (erf) plus dh = dy GELU'(h) 1, the
//             dgamma/dbeta accumulation 3, dxhat and its two row sums 4,
//             dx = rstd (dxhat - a - xhat b) 4.
// At 16384 x 4096 that is 537 MB (fp32) / 268 MB (bf16) forward and 1.14
// GFLOP, nothing next to the H100's 51 TFLOP/s: every kernel here is
// memory-bound and "fast" means "moves few bytes at full bandwidth".
// Measured: bench/RESULTS.md, "LayerNorm+GELU, H100", "LayerNorm+GELU and
// softmax, H200" and "LayerNorm+GELU and softmax on an H100, measured by
// fuseprof".
//
// Choices every kernel shares (the statistics in two passes, dgamma and
// dbeta without atomics, the GELU forms: see rows.cuh), and:
// - The backward takes dy, x, gamma and beta and recomputes mean and rstd
//   from x instead of taking saved statistics: the fused kernel holds the
//   row of x in registers anyway, so recomputing costs ALU time only, no
//   DRAM bytes, and the workload stays self-contained (its inputs are the
//   op's inputs, not another kernel's by-products).
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "device.cuh"
#include "checkref.h"
#include "kutil.h"
#include "par.h"
#include "layernorm/rows.cuh"
#include "ln_gelu/ln_gelu.h"
#include "util.h"

/* ------------------------------------------------------------------------ */
/* CPU reference (double)                                                   */
/* ------------------------------------------------------------------------ */

static const double ref_k = 0.79788456080286535588;  // sqrt(2 / pi)
static const double ref_c = 0.044715;

extern "C" double ln_gelu_ref_gelu(double h, int erf)
{
	if (erf)
		return 0.5 * h * ::erfc(-h * M_SQRT1_2);
	// 0.5 h (1 + tanh u) = h / (1 + exp(-2u)); exp overflow gives h / inf = 0.
	return h / (1.0 + exp(-2.0 * ref_k * (h + ref_c * h * h * h)));
}

extern "C" double ln_gelu_ref_gelu_grad(double h, int erf)
{
	if (erf)
		return 0.5 * ::erfc(-h * M_SQRT1_2) +
		       h * exp(-0.5 * h * h) * (0.5 * M_2_SQRTPI * M_SQRT1_2);
	// Deliberately the textbook tanh form, not the GPU's sigmoid form, so the
	// two are independent.
	double t = tanh(ref_k * (h + ref_c * h * h * h));

	return 0.5 * (1.0 + t) +
	       0.5 * h * (1.0 - t * t) * ref_k * (1.0 + 3.0 * ref_c * h * h);
}

// Mean and 1/sqrt(var + eps) of one row, two passes plus the correction term.
static void ref_stats(const double *x, long N, double *mean, double *rstd)
{
	double s = 0, d1 = 0, d2 = 0, m;

	for (long j = 0; j < N; j++)
		s += x[j];
	m = s / (double)N;
	for (long j = 0; j < N; j++) {
		d1 += x[j] - m;
		d2 += (x[j] - m) * (x[j] - m);
	}
	d1 /= (double)N;
	*mean = m + d1;
	d2 = d2 / (double)N - d1 * d1;
	*rstd = 1.0 / sqrt((d2 > 0 ? d2 : 0) + LAYERNORM_EPS);
}

extern "C" void ln_gelu_ref_fwd(const double *x, const double *gamma,
				const double *beta, double *y, long M, long N,
				int erf)
{
	for (long i = 0; i < M; i++) {
		const double *xr = x + i * N;
		double mean, rstd;

		ref_stats(xr, N, &mean, &rstd);
		for (long j = 0; j < N; j++)
			y[i * N + j] = ln_gelu_ref_gelu(
				(xr[j] - mean) * rstd * gamma[j] + beta[j], erf);
	}
}

extern "C" void ln_gelu_ref_bwd(const double *dy, const double *x,
				const double *gamma, const double *beta,
				double *dx, double *dgamma, double *dbeta,
				long M, long N, int erf)
{
	for (long i = 0; i < M; i++) {
		const double *xr = x + i * N, *dyr = dy + i * N;
		double mean, rstd, a = 0, b = 0;

		ref_stats(xr, N, &mean, &rstd);
		// First pass: dgamma/dbeta and the two row means of dxhat; the
		// row of dx holds dh until the second pass.
		for (long j = 0; j < N; j++) {
			double xh = (xr[j] - mean) * rstd;
			double dh = dyr[j] * ln_gelu_ref_gelu_grad(xh * gamma[j] + beta[j], erf);

			dgamma[j] += dh * xh;
			dbeta[j] += dh;
			a += dh * gamma[j];
			b += dh * gamma[j] * xh;
			dx[i * N + j] = dh;
		}
		a /= (double)N;
		b /= (double)N;
		for (long j = 0; j < N; j++) {
			double xh = (xr[j] - mean) * rstd;

			dx[i * N + j] = rstd * (dx[i * N + j] * gamma[j] - a - xh * b);
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

// The row kernels, LayerNorm with GELU on (FWD_FUSED, BWD_DH, BWD_FUSED)
// or with the statistics given (FWD_NORM), are kernels 1, 2, 4 and 5 of
// kernels/layernorm/rows.cuh; kernel 3 there sums the backward's partials.
// What is left here is the GELU alone:

// GELU alone, elementwise over the M N values of h (the second half of
// unfused2, the third kernel of unfused3).
// Napkin: reads and writes M N s bytes, 9 FLOP per element: at 16384 x 4096
// fp32 537 MB.
// 16-byte accesses, GELU_UNROLL independent loads in flight per thread
// before the first use; the < 16-byte tail of the buffer goes scalar.
// Measured inside unfused2 at the copy bandwidth (bench/RESULTS.md,
// "LayerNorm+GELU, H100": unfused2 moves twice the fused bytes in about
// twice its time).
#define GELU_THREADS 256
#define GELU_UNROLL 4
template <typename T, int ERF>
__global__ void __launch_bounds__(GELU_THREADS)
gelu_kernel(const T *__restrict__ h, T *__restrict__ y, size_t n)
{
	constexpr bool FAST = sizeof(T) == 2;
	constexpr int V = 16 / sizeof(T);
	const size_t nvec = n / V;
	const size_t stride = (size_t)gridDim.x * GELU_THREADS * GELU_UNROLL;

	for (size_t i0 = (size_t)blockIdx.x * GELU_THREADS * GELU_UNROLL + threadIdx.x;
	     i0 < nvec; i0 += stride) {
		float v[GELU_UNROLL][V];

#pragma unroll
		for (int u = 0; u < GELU_UNROLL; u++) {
			size_t i = i0 + (size_t)u * GELU_THREADS;
			if (i < nvec)
				ld16<true>(h + i * V, v[u]);
		}
#pragma unroll
		for (int u = 0; u < GELU_UNROLL; u++) {
			size_t i = i0 + (size_t)u * GELU_THREADS;
			if (i < nvec) {
#pragma unroll
				for (int k = 0; k < V; k++)
					v[u][k] = gelu<FAST>(v[u][k], ERF);
				st16<true>(y + i * V, v[u]);
			}
		}
	}
	size_t tail = nvec * V + (size_t)blockIdx.x * GELU_THREADS + threadIdx.x;
	if (tail < n && blockIdx.x * (size_t)GELU_THREADS + threadIdx.x < (size_t)V)
		y[tail] = from_f<T>(gelu<FAST>(to_f(h[tail]), ERF));
}

/* ------------------------------------------------------------------------ */
/* Launchers                                                                */
/* ------------------------------------------------------------------------ */

// The GELU modes of the row kernels (rows.cuh): the forward's FWD_NORM and
// FWD_FUSED, the backward's BWD_DH and BWD_FUSED. The plain modes are
// launched through layernorm.h, which instantiates them.
static struct kcfg fwd_kernel_for(int mode, int erf, long N, enum fp_dtype dt)
{
	if (mode == FWD_NORM)
		return fwd_pick<FWD_NORM, 0>(N, dt);
	return erf ? fwd_pick<FWD_FUSED, 1>(N, dt) : fwd_pick<FWD_FUSED, 0>(N, dt);
}

static struct kcfg bwd_kernel_for(int mode, int erf, long N, enum fp_dtype dt)
{
	if (mode == BWD_DH)
		return erf ? bwd_pick<BWD_DH, 1>(N, dt) : bwd_pick<BWD_DH, 0>(N, dt);
	return erf ? bwd_pick<BWD_FUSED, 1>(N, dt) : bwd_pick<BWD_FUSED, 0>(N, dt);
}

enum { V_FWD_UNFUSED3, V_FWD_UNFUSED2, V_FWD_FUSED };
enum { V_BWD_UNFUSED, V_BWD_FUSED };

struct fp_op {
	int bwd, variant, erf, nsets;
	enum fp_dtype dt;
	long M, N;
	size_t es;
	char *x, *gamma, *beta, *dy;  // nsets input sets each
	// What a launch writes, set 0's, carved out of wbuf (written_bytes'
	// order): set s's lie s * wset bytes further on (set_view).
	char *wbuf;                   // nsets * wset
	size_t wset;
	char *out;                    // y (forward) or dx (backward)
	char *dgb;                    // backward: dgamma then dbeta, 2N
	char *mid;                    // unfused: h (forward) or dh (backward)
	float *stats;                 // hi, lo, rstd per row (3M)
	float *partial;               // backward: [pgrid][2N]
	struct kcfg main;             // fused backward: the row kernel
	int pgrid;                    // the backward's persistent grid
};

static int launch_fwd_rows(const struct fp_op *op, int mode, const void *x,
			   const void *g, const void *b, void *out,
			   cudaStream_t st)
{
	struct kcfg k = fwd_kernel_for(mode, op->erf, op->N, op->dt);

	return launch_fwd(&k, x, g, b, out, op->stats, op->M, op->N, st);
}

static int launch_gelu(const struct fp_op *op, const void *h, void *y,
		       cudaStream_t st)
{
	size_t n = (size_t)op->M * op->N, per = (size_t)GELU_THREADS * GELU_UNROLL;
	size_t nvec = n / (16 / op->es), blocks = (nvec + per - 1) / per;
	unsigned grid = (unsigned)(blocks < 1 ? 1 : blocks > MAX_GRID ? MAX_GRID : blocks);

	if (op->dt == FP_BF16) {
		if (op->erf)
			gelu_kernel<__nv_bfloat16, 1><<<grid, GELU_THREADS, 0, st>>>(
				(const __nv_bfloat16 *)h, (__nv_bfloat16 *)y, n);
		else
			gelu_kernel<__nv_bfloat16, 0><<<grid, GELU_THREADS, 0, st>>>(
				(const __nv_bfloat16 *)h, (__nv_bfloat16 *)y, n);
	} else {
		if (op->erf)
			gelu_kernel<float, 1><<<grid, GELU_THREADS, 0, st>>>(
				(const float *)h, (float *)y, n);
		else
			gelu_kernel<float, 0><<<grid, GELU_THREADS, 0, st>>>(
				(const float *)h, (float *)y, n);
	}
	return CUDA_CHECK_LAUNCH("gelu_kernel");
}

// v = op as seen by a launch of set `set`: its written buffers set * wset
// bytes past set 0's (the inputs are offset by the launch).
static void set_view(const struct fp_op *op, int set, struct fp_op *v)
{
	const size_t off = (size_t)set * op->wset;

	*v = *op;
	v->out = (char *)dev_in_set(op->out, off);
	v->dgb = (char *)dev_in_set(op->dgb, off);
	v->mid = (char *)dev_in_set(op->mid, off);
	v->stats = (float *)dev_in_set(op->stats, off);
	v->partial = (float *)dev_in_set(op->partial, off);
}

static int op_launch(struct fp_op *base, int set, cudaStream_t st)
{
	struct fp_op view, *op = &view;
	size_t mn = (size_t)base->M * base->N * base->es, nb = (size_t)base->N * base->es;
	const char *x, *g, *b;

	if (set < 0 || set >= base->nsets)
		return error("ln_gelu: set %d out of range [0, %d)", set, base->nsets);
	set_view(base, set, &view);
	x = op->x + set * mn;
	g = op->gamma + set * nb;
	b = op->beta + set * nb;
	if (!op->bwd) {
		switch (op->variant) {
		case V_FWD_UNFUSED3:
			return layernorm_stats(op->dt, x, op->stats, op->M, op->N, st) ||
			       launch_fwd_rows(op, FWD_NORM, x, g, b, op->mid, st) ||
			       launch_gelu(op, op->mid, op->out, st) ? -1 : 0;
		case V_FWD_UNFUSED2:
			return layernorm_fwd(op->dt, x, g, b, op->mid, op->stats, op->M,
					     op->N, st) ||
			       launch_gelu(op, op->mid, op->out, st) ? -1 : 0;
		default:
			return ln_gelu_fused_fwd(op->dt, op->erf, x, g, b, op->out, op->M,
						 op->N, st);
		}
	}
	const char *dy = op->dy + set * mn;

	if (op->variant == V_BWD_UNFUSED) {
		struct kcfg k1 = bwd_kernel_for(BWD_DH, op->erf, op->N, op->dt);

		return launch_bwd(&k1, row_grid(&k1, op->M), dy, x, g, b, op->mid,
				  op->stats, op->partial, op->M, op->N, NULL, st) ||
		       layernorm_bwd(op->dt, op->mid, x, g, op->stats, op->out,
				     op->dgb, op->dgb + op->N * op->es, op->partial,
				     op->pgrid, op->M, op->N, st) ? -1 : 0;
	}
	return launch_bwd(&op->main, (unsigned)op->pgrid, dy, x, g, b, op->out,
			  op->stats, op->partial, op->M, op->N, NULL, st) ||
	       layernorm_bwd_reduce(op->dt, op->partial, op->pgrid, op->N, op->dgb,
				    op->dgb + op->N * op->es, st) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* The fused kernels on a caller's pointers (ln_gelu.h)                     */
/* ------------------------------------------------------------------------ */

static long partial_rows_max(const struct fp_shape *s, enum fp_dtype dt, int variant);

extern "C" int ln_gelu_fused_fwd(enum fp_dtype dt, int erf, const void *x,
				 const void *gamma, const void *beta, void *y,
				 long M, long N, cudaStream_t st)
{
	struct kcfg k = fwd_kernel_for(FWD_FUSED, erf, N, dt);

	return launch_fwd(&k, x, gamma, beta, y, NULL, M, N, st);
}

extern "C" long ln_gelu_fused_partials(enum fp_dtype dt, int erf, long M, long N)
{
	const struct fp_shape s = { { M, N, erf } };

	return partial_rows_max(&s, dt, V_BWD_FUSED);
}

extern "C" int ln_gelu_fused_bwd(enum fp_dtype dt, int erf, const void *dy,
				 const void *x, const void *gamma, const void *beta,
				 void *dx, void *dgamma, void *dbeta, float *partial,
				 long M, long N, cudaStream_t st)
{
	struct kcfg k = bwd_kernel_for(BWD_FUSED, erf, N, dt);
	int grid;

	if (kcfg_ready(&k) || persistent_grid(&k, M, &grid))
		return -1;
	if (grid > ln_gelu_fused_partials(dt, erf, M, N))
		return error("ln_gelu_bwd: %d partial rows, room for %ld", grid,
			     ln_gelu_fused_partials(dt, erf, M, N));
	return launch_bwd(&k, (unsigned)grid, dy, x, gamma, beta, dx, NULL, partial,
			  M, N, NULL, st) ||
	       layernorm_bwd_reduce(dt, partial, grid, N, dgamma, dbeta, st) ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* The workloads                                                            */
/* ------------------------------------------------------------------------ */

static const struct fp_param ln_gelu_params[] = {
	{ "M", FP_REQUIRED, 1, 1L << 31, "rows" },
	{ "N", FP_REQUIRED, 1, 1L << 30, "row width (elements)" },
	{ "erf", 0, 0, 1, "GELU form: 0 tanh approximation, 1 exact erf" },
	{ NULL, 0, 0, 0, NULL }
};

static const char *const ln_gelu_profiles[] = {
	"normal",    // x ~ N(0, 1): what timing uses
	"offset",    // x ~ 1e4 + N(0, 1): breaks E[x^2] - E[x]^2
	"constant",  // every even row one repeated value: variance exactly 0
	"spiky",     // N(0, 1) with one +-1000 outlier per row
	NULL
};
enum { P_NORMAL, P_OFFSET, P_CONSTANT, P_SPIKY };

#define LN_GELU_SUITE "M=16384,N=768;M=16384,N=1024;M=16384,N=4096"
#define LN_GELU_QUICK "M=4096,N=768;M=2048,N=4096"
// Awkward widths (1, odd, prime-ish, a vocabulary) take the wide-row
// kernels; the rest hit every register-kernel block shape, a partial last
// block (M=5, N=4096: two rows per block), many rows per persistent
// block (M=1000, M=16384), the fp32 backward's 3-chunk rows (768,
// 1536 and 2600: 64, 128 and 256 threads a row; at 2600 the last chunk
// part full) and the bf16 forward's (768 and 520 at 32 threads a row, at
// 520 one thread's third chunk only; 1536 at 64, 2600 at 128, 6144 at
// 256), the full-row instances (rows of exactly the threads' chunks,
// N a constant: 768-6144, 512 and 2048 among them, at tails of M), and
// the backward's widest register rows (512 threads of 32 values,
// layernorm_bwd_wide: 9000 with its last chunks empty, 16384 full).
#define LN_GELU_TESTS "M=1,N=1;M=1,N=4097;M=3,N=1023,erf=1;M=16384,N=768;" \
	"M=4,N=50257;M=7,N=64,erf=1;M=5,N=4096;M=3,N=16384,erf=1;" \
	"M=2,N=32768;M=1000,N=1024;M=37,N=1536,erf=1;M=5,N=2600;M=9,N=520;" \
	"M=3,N=6144;M=33,N=2048;M=5,N=512;M=3,N=3072;M=5,N=9000"

static const struct fp_variant fwd_variants[] = {
	{ "unfused3", FP_UNFUSED,
	  "3 kernels: row mean/rstd; normalize+affine to h; GELU(h)", NULL, "fused" },
	{ "unfused2", FP_UNFUSED, "2 kernels: LayerNorm to h; GELU(h)", NULL,
	  "fused" },
	{ "fused", FP_FUSED,
	  "1 kernel: row read once into registers, LayerNorm+GELU, written once" },
	{ NULL, FP_UNFUSED, NULL }
};

static const struct fp_variant bwd_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "3 kernels: dh = dy*GELU'(LN(x)) with stats; LayerNorm backward to dx "
	  "and dgamma/dbeta partials; partial sum", NULL, "fused" },
	{ "fused", FP_FUSED,
	  "2 kernels: dx and dgamma/dbeta partials in one pass over dy and x; "
	  "partial sum" },
	{ NULL, FP_UNFUSED, NULL }
};

// Largest one-tensor size we accept: beyond any GPU, and far from overflow.
#define MAX_TENSOR_BYTES (1.0 * (1ull << 47))

static int ln_gelu_validate(const struct fp_shape *s, enum fp_dtype dt,
			    char *why, size_t whylen)
{
	long M = s->v[0], N = s->v[1], erf = s->v[2];

	if (dt != FP_F32 && dt != FP_BF16) {
		snprintf(why, whylen, "dtype %s: ln_gelu takes fp32 or bf16",
			 fp_dtype_name(dt));
		return -1;
	}
	if (M < 1 || N < 1) {
		snprintf(why, whylen, "M=%ld,N=%ld: rows and row width must be at least 1",
			 M, N);
		return -1;
	}
	if (erf != 0 && erf != 1) {
		snprintf(why, whylen, "erf=%ld: must be 0 (tanh GELU) or 1 (erf GELU)", erf);
		return -1;
	}
	if ((double)M * (double)N * (double)fp_dtype_size(dt) > MAX_TENSOR_BYTES) {
		snprintf(why, whylen, "M=%ld,N=%ld: one %s tensor would take %.3g TiB, "
			 "more than any GPU holds", M, N, fp_dtype_name(dt),
			 (double)M * (double)N * (double)fp_dtype_size(dt) / 0x1p40);
		return -1;
	}
	return 0;
}

static int uses_stats(int bwd, int variant)
{
	return bwd ? variant == V_BWD_UNFUSED : variant == V_FWD_UNFUSED3;
}

static int uses_mid(int bwd, int variant)
{
	return bwd ? variant == V_BWD_UNFUSED : variant != V_FWD_FUSED;
}

// Partial rows of the backward: the persistent grid, at most one block per
// row group and at most MAX_PARTIALS (create() sizes it from the device).
// Rows per block depend on the row width only, so the fused kernel's count
// holds for the unfused variant's BWD_LN kernel too.
static long partial_rows_max(const struct fp_shape *s, enum fp_dtype dt, int variant)
{
	struct kcfg k = bwd_kernel_for(BWD_FUSED, (int)s->v[2], s->v[1], dt);
	long groups = (s->v[0] + k.rpb - 1) / k.rpb;

	return groups < MAX_PARTIALS ? groups : MAX_PARTIALS;
}

// The sizes of one set's written buffers (fp_op.wbuf), each in bytes, 0
// where the variant has none; returns their padded sum, the set's stride.
struct wsizes {
	size_t out, dgb, mid, stats, partial;
};

static size_t written_bytes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
			    int variant, struct wsizes *z)
{
	size_t M = (size_t)s->v[0], N = (size_t)s->v[1], es = fp_dtype_size(dt);

	memset(z, 0, sizeof *z);
	z->out = M * N * es;
	if (bwd) {
		z->dgb = 2 * N * es;
		z->partial = (size_t)partial_rows_max(s, dt, variant) * 2 * N * sizeof(float);
	}
	if (uses_mid(bwd, variant))
		z->mid = M * N * es;
	if (uses_stats(bwd, variant))
		z->stats = 3 * M * sizeof(float);
	return dev_pad(z->out) + dev_pad(z->dgb) + dev_pad(z->mid) +
	       dev_pad(z->stats) + dev_pad(z->partial);
}

// Inputs (x, gamma, beta; backward dy) and written buffers, nsets of each.
static size_t op_bytes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
		       int variant, int nsets)
{
	size_t N = (size_t)s->v[1], es = fp_dtype_size(dt);
	size_t mn = (size_t)s->v[0] * N * es;
	struct wsizes z;

	return dev_pad(nsets * mn) * (bwd ? 2 : 1) + 2 * dev_pad(nsets * N * es) +
	       (size_t)nsets * written_bytes(bwd, s, dt, variant, &z);
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
	double M = (double)s->v[0], N = (double)s->v[1], es = (double)fp_dtype_size(dt);
	double mn = M * N;

	memset(m, 0, sizeof *m);
	m->flops = (s->v[2] ? 13.0 : 17.0) * mn;
	m->min_bytes = (2 * mn + 2 * N) * es;
	// Kept for the backward: nothing. Every ln_gelu_bwd variant reads dy,
	// x, gamma and beta only and recomputes the statistics and h from x.
	m->saved_bytes = 0;
	switch (variant) {
	case V_FWD_UNFUSED3:
		// stats: x in, 12 B/row out; normalize: x, stats, gamma, beta
		// in, h out; GELU: h in, y out.
		m->variant_bytes = (5 * mn + 2 * N) * es + 24 * M;
		break;
	case V_FWD_UNFUSED2:
		m->variant_bytes = (4 * mn + 2 * N) * es;
		break;
	default:
		m->variant_bytes = m->min_bytes;
		break;
	}
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], N = (double)s->v[1], es = (double)fp_dtype_size(dt);
	double mn = M * N;

	memset(m, 0, sizeof *m);
	m->flops = (s->v[2] ? 29.0 : 35.0) * mn;
	m->min_bytes = (3 * mn + 4 * N) * es;
	// It reads what the forward took (x, gamma, beta) and dy: the forward
	// keeps nothing for it (its 12 B/row of unfused statistics are its own).
	m->saved_bytes = 0;
	// The dgamma/dbeta partials (at most 1024 x 2N fp32) are written and
	// read back at once; they are expected to stay in L2 and are not
	// counted.
	if (variant == V_BWD_UNFUSED)
		// dh kernel: dy, x, gamma, beta in, dh and 12 B/row of stats
		// out; LayerNorm backward: dh, x, stats, gamma in, dx out.
		m->variant_bytes = (6 * mn + 5 * N) * es + 24 * M;
	else
		m->variant_bytes = m->min_bytes;
}

static void op_destroy(struct fp_op *op)
{
	if (!op)
		return;
	cudaFree(op->x);
	cudaFree(op->gamma);
	cudaFree(op->beta);
	cudaFree(op->dy);
	cudaFree(op->wbuf);
	free(op);
}


static int op_create(int bwd, struct fp_op **out, const struct fp_shape *s,
		     enum fp_dtype dt, int variant, int nsets,
		     unsigned long long seed)
{
	struct fp_op *op;
	struct wsizes z;
	size_t mn, nb, elems;
	char *cur;

	*out = NULL;
	if (nsets < 1)
		return error("ln_gelu: nsets=%d: need at least one input set", nsets);
	op = (struct fp_op *)xcalloc(1, sizeof *op);
	op->bwd = bwd;
	op->variant = variant;
	op->dt = dt;
	op->M = s->v[0];
	op->N = s->v[1];
	op->erf = (int)s->v[2];
	op->nsets = nsets;
	op->es = fp_dtype_size(dt);
	elems = (size_t)op->M * op->N;
	mn = elems * op->es;
	nb = (size_t)op->N * op->es;

	op->wset = written_bytes(bwd, s, dt, variant, &z);
	if (dev_alloc(&op->x, nsets * mn) || dev_alloc(&op->gamma, nsets * nb) ||
	    dev_alloc(&op->beta, nsets * nb) ||
	    (bwd && dev_alloc(&op->dy, nsets * mn)) ||
	    dev_alloc(&op->wbuf, (size_t)nsets * op->wset))
		goto out_free;
	cur = op->wbuf;  // set 0's written buffers, in written_bytes' order
	op->out = (char *)dev_carve(&cur, z.out);
	op->dgb = (char *)dev_carve(&cur, z.dgb);
	op->mid = (char *)dev_carve(&cur, z.mid);
	op->stats = (float *)dev_carve(&cur, z.stats);
	op->partial = (float *)dev_carve(&cur, z.partial);
	if (bwd) {
		struct kcfg k1 = bwd_kernel_for(BWD_DH, op->erf, op->N, dt);
		long blocks;

		if (kcfg_ready(&k1))
			goto out_free;
		if (variant == V_BWD_UNFUSED) {
			// The LayerNorm backward of layernorm.h.
			if ((blocks = layernorm_bwd_blocks(dt, op->M, op->N, 0)) < 0)
				goto out_free;
			op->pgrid = (int)blocks;
		} else {
			op->main = bwd_kernel_for(BWD_FUSED, op->erf, op->N, dt);
			if (kcfg_ready(&op->main) ||
			    persistent_grid(&op->main, op->M, &op->pgrid))
				goto out_free;
		}
		// partial is sized for partial_rows_max() rows, what
		// device_bytes() counts without a device
		if ((size_t)op->pgrid * 2 * op->N * sizeof(float) > z.partial) {
			error("ln_gelu_bwd: %d partial rows, room for %zu", op->pgrid,
			      z.partial / (2 * op->N * sizeof(float)));
			goto out_free;
		}
	}
	for (int i = 0; i < nsets; i++) {
		uint64_t sd = splitmix64(seed + 0x100 * (uint64_t)i);

		if (dev_fill_normal(op->x + i * mn, dt, elems, sd, 0.0f, 1.0f, 0) ||
		    dev_fill_normal(op->gamma + i * nb, dt, op->N, splitmix64(sd + 1), 1.0f, 0.5f, 0) ||
		    dev_fill_normal(op->beta + i * nb, dt, op->N, splitmix64(sd + 2), 0.0f, 0.5f, 0) ||
		    (bwd && dev_fill_normal(op->dy + i * mn, dt, elems, splitmix64(sd + 3),
					    0.0f, 1.0f, 0)))
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

// LayerNorm+GELU has no kernel options: ko is ignored.
static int fwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return op_create(0, op, s, dt, variant, nsets, seed);
}

static int bwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return op_create(1, op, s, dt, variant, nsets, seed);
}

// workload->kernel(): the row kernels the width picked (registers or the
// wide-row fallback, see layernorm_plan()) and the backward's persistent
// grid, which the device sets.
static void op_kernel(const struct fp_op *op, char *buf, size_t n)
{
	const int tpr = op->bwd ? layernorm_bwd_threads(op->N, op->dt)
				: layernorm_plan(0, op->N, op->dt);
	const int rpb = tpr >= ROW_BLOCK ? 1 : ROW_BLOCK / (tpr ? tpr : ROW_BLOCK);
	int len;

	if (tpr)
		len = snprintf(buf, n, "LayerNorm rows in registers, %d threads a row%s",
			       tpr, rpb > 1 ? "" : ", a block a row");
	else
		len = snprintf(buf, n, "LayerNorm rows of any width, a block of %d a row",
			       WIDE_THREADS);
	if (tpr && rpb > 1 && len >= 0 && (size_t)len < n)
		len += snprintf(buf + len, n - (size_t)len, ", %d rows a block", rpb);
	if (tpr && len >= 0 && (size_t)len < n)
		len += snprintf(buf + len, n - (size_t)len, ", %d values a thread%s",
				op->bwd ? layernorm_bwd_held(op->N, op->dt)
					: layernorm_fwd_held(op->N, op->dt),
				(op->bwd ? layernorm_bwd_full(op->N, op->dt)
					 : layernorm_fwd_full(op->N, op->dt)) ?
				" (rows full: N a constant)" : "");
	// unfused3's normalizing kernel reads the statistics: it stages
	// nothing (rows.cuh, GBS)
	if (!op->bwd && layernorm_fwd_looped(op->N, op->dt) && len >= 0 && (size_t)len < n)
		len += snprintf(buf + len, n - (size_t)len,
				"; %d blocks an SM looping over rows%s", FWD_LOOP_BLOCKS,
				op->variant == V_FWD_UNFUSED3 ? "" :
				", gamma and beta staged once a block");
	if (op->bwd && len >= 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, "; persistent grid of %d blocks",
			 op->pgrid);
}

// Draw one row of profile `profile` into v (N values), rounded to dt.
static void draw_row(struct fp_rng *r, int profile, long row, double *v, long N,
		     enum fp_dtype dt)
{
	if (profile == P_CONSTANT && row % 2 == 0) {
		double c = 5.0 * rng_normal(r);
		for (long j = 0; j < N; j++)
			v[j] = c;
	} else {
		double off = profile == P_OFFSET ? 1e4 : 0.0;
		for (long j = 0; j < N; j++)
			v[j] = off + rng_normal(r);
		if (profile == P_SPIKY) {
			long at = (long)(rng_uniform(r) * (double)N);
			v[at < N ? at : N - 1] = rng_uniform(r) < 0.5 ? -1e3 : 1e3;
		}
	}
	host_round(v, (size_t)N, dt);
}

// What one case's check computes on the CPU, kept in the reference cache
// (checkref.h) under workload, GELU form, shape, dtype, profile and seed:
// the inputs as the device holds them and the references, so the other
// variants of the case, checked on the same seed, only upload, run and
// compare.
struct lg_ref {
	double *g, *b;     // gamma, beta (N each, rounded to dt)
	char *x, *dy;      // M x N of dt; dy backward only
	long nrows;        // rows of y / dx compared (all unless M x N is large)
	long *rows;
	double *ref;       // nrows x N: y or dx of rows[s] at s N
	double *dgb;       // backward: dgamma then dbeta (2 N), over every row,
	                   // then the sums of their terms' squares (2 N: the
	                   // floors of cmp_rel, for columns whose terms cancel)
};

static void lg_ref_free(void *p)
{
	struct lg_ref *e = (struct lg_ref *)p;

	free(e->g);
	free(e->b);
	free(e->x);
	free(e->dy);
	free(e->rows);
	free(e->ref);
	free(e->dgb);
	free(e);
}

// One chunk of a case's rows (par_for): drawing x or dy, or the reference.
struct lg_job {
	const struct fp_op *op;
	struct lg_ref *e;
	int profile;
	uint64_t base;     // the stream of the tensor drawn
	char *dst;         // the tensor drawn
	size_t grain;      // the reference's chunk of rows
	double *part;      // backward: per chunk, its dgamma and dbeta sums and
	                   // their terms' squares' (4 N)
};

// Rows [lo, hi) of a tensor, each from its own stream of base, rounded to
// dt and stored as dt: the values the GPU sees.
static void draw_rows(size_t lo, size_t hi, void *arg)
{
	const struct lg_job *j = (const struct lg_job *)arg;
	const long N = j->op->N;
	const size_t es = j->op->es;
	double *v = (double *)xmalloc((size_t)N * sizeof *v);
	struct fp_rng g;

	for (size_t row = lo; row < hi; row++) {
		rng_seed_item(&g, j->base, (long)row);
		draw_row(&g, j->profile, (long)row, v, N, j->op->dt);
		check_encode(j->dst + row * (size_t)N * es, j->op->dt, v, (size_t)N);
	}
	free(v);
}

// The reference of rows [lo, hi). Forward: lo, hi index the compared rows.
// Backward: they are rows of x, every one of them feeding this chunk's
// dgamma and dbeta sums; dx is kept for the compared ones.
static void ref_rows(size_t lo, size_t hi, void *arg)
{
	const struct lg_job *j = (const struct lg_job *)arg;
	const struct lg_ref *e = j->e;
	const long N = j->op->N;
	const size_t es = j->op->es;
	double *xr = (double *)xmalloc(5 * (size_t)N * sizeof *xr);
	double *dyr = xr + N, *dx = dyr + N, *tg = dx + N, *tb = tg + N;

	if (!j->op->bwd) {
		for (size_t s = lo; s < hi; s++) {
			check_decode(xr, e->x + (size_t)e->rows[s] * N * es, j->op->dt,
				     (size_t)N);
			ln_gelu_ref_fwd(xr, e->g, e->b, e->ref + s * N, 1, N, j->op->erf);
		}
	} else {
		double *dg = j->part + (lo / j->grain) * 4 * N, *db = dg + N;
		double *sg = db + N, *sb = sg + N;
		long s = 0;

		while (s < e->nrows && e->rows[s] < (long)lo)
			s++;
		memset(dg, 0, 4 * (size_t)N * sizeof *dg);
		for (size_t row = lo; row < hi; row++) {
			const int kept = s < e->nrows && e->rows[s] == (long)row;

			check_decode(xr, e->x + row * N * es, j->op->dt, (size_t)N);
			check_decode(dyr, e->dy + row * N * es, j->op->dt, (size_t)N);
			memset(tg, 0, 2 * (size_t)N * sizeof *tg);
			ln_gelu_ref_bwd(dyr, xr, e->g, e->b, kept ? e->ref + s * N : dx,
					tg, tb, 1, N, j->op->erf);
			for (long k = 0; k < N; k++) {
				dg[k] += tg[k];
				db[k] += tb[k];
				sg[k] += tg[k] * tg[k];
				sb[k] += tb[k] * tb[k];
			}
			s += kept;
		}
	}
	free(xr);
}

// A case's inputs and references, from the cache or computed on every
// core. The draws are those of the sequential code before them: gamma and
// beta from seed's stream, then one value of it seeding x's rows' streams
// and the next dy's.
static struct lg_ref *lg_reference(const struct fp_op *op, int profile,
				   unsigned long long seed)
{
	const long M = op->M, N = op->N;
	const size_t E = (size_t)M * (size_t)N, grain = par_grain_rows((size_t)N);
	struct ref_key key;
	struct lg_ref *e;
	struct lg_job job;
	struct fp_rng rng;

	memset(&key, 0, sizeof key);
	snprintf(key.what, sizeof key.what, "ln_gelu_%s erf=%d", op->bwd ? "bwd" : "fwd",
		 op->erf);
	key.dims[0] = M;
	key.dims[1] = N;
	key.dt = op->dt;
	key.profile = profile;
	key.seed = seed;
	if ((e = (struct lg_ref *)refcache_find(&key)))
		return e;
	e = (struct lg_ref *)xcalloc(1, sizeof *e);
	e->g = (double *)xmalloc((size_t)N * sizeof *e->g);
	e->b = (double *)xmalloc((size_t)N * sizeof *e->b);
	rng_seed(&rng, seed);
	for (long j = 0; j < N; j++) {
		e->g[j] = 1.0 + 0.5 * rng_normal(&rng);
		e->b[j] = 0.5 * rng_normal(&rng);
	}
	host_round(e->g, (size_t)N, op->dt);
	host_round(e->b, (size_t)N, op->dt);
	memset(&job, 0, sizeof job);
	job.op = op;
	job.e = e;
	e->x = (char *)xmalloc(E * op->es);
	job.profile = profile;
	job.base = rng_next(&rng);
	job.dst = e->x;
	par_for((size_t)M, grain, draw_rows, &job);
	if (op->bwd) {
		e->dy = (char *)xmalloc(E * op->es);
		job.profile = P_NORMAL;
		job.base = rng_next(&rng);
		job.dst = e->dy;
		par_for((size_t)M, grain, draw_rows, &job);
	}

	e->nrows = check_sample_rows(M, (double)N, seed ^ 0x94d049bb133111ebull, &e->rows);
	e->ref = (double *)xmalloc((size_t)e->nrows * N * sizeof *e->ref);
	if (!op->bwd) {
		job.grain = grain;
		par_for((size_t)e->nrows, grain, ref_rows, &job);
	} else {
		// dgamma and dbeta: per-chunk sums added in chunk order. At most
		// about 256 chunks (a grain from M, never from the threads), so
		// the partials stay small.
		const size_t nc0 = 256, g2 = ((size_t)M + nc0 - 1) / nc0;
		size_t nc;

		job.grain = g2 > grain ? g2 : grain;
		nc = par_chunks((size_t)M, job.grain);
		job.part = (double *)xmalloc(nc * 4 * N * sizeof *job.part);
		par_for((size_t)M, job.grain, ref_rows, &job);
		e->dgb = (double *)xcalloc(4 * (size_t)N, sizeof *e->dgb);
		for (size_t c = 0; c < nc; c++)
			for (long k = 0; k < 4 * N; k++)
				e->dgb[k] += job.part[c * 4 * N + k];
		free(job.part);
	}
	refcache_keep(&key, e, E * op->es * (op->bwd ? 2 : 1) +
		      ((size_t)e->nrows + 6) * N * sizeof(double), lg_ref_free);
	return e;
}

static int poison_all(struct fp_op *op)
{
	size_t mn = (size_t)op->M * op->N * op->es;

	return dev_poison(op->out, mn) ||
	       (op->mid && dev_poison(op->mid, mn)) ||
	       (op->stats && dev_poison(op->stats, 3 * (size_t)op->M * sizeof(float))) ||
	       (op->dgb && dev_poison(op->dgb, 2 * (size_t)op->N * op->es)) ||
	       (op->partial && dev_poison(op->partial,
					  (size_t)op->pgrid * 2 * op->N * sizeof(float)))
	       ? -1 : 0;
}

// Fresh inputs from profile and seed, outputs and intermediates poisoned,
// one run, compared with the double reference computed on the very values
// the GPU saw: y (dx) on every row, or on a sample of rows when M x N is
// large (check_sample_rows; the detail says how many), dgamma and dbeta in
// full.
static int op_check(struct fp_op *op, int profile, unsigned long long seed,
		    struct fp_check *res)
{
	const long M = op->M, N = op->N;
	const enum fp_dtype dt = op->dt;
	const size_t bytes = (size_t)M * N * op->es;
	const struct lg_ref *e = lg_reference(op, profile, seed);
	char *got = NULL;
	double *dgb = NULL;
	struct fp_cmp c;
	int rc = -1;

	if (dev_upload(op->gamma, dt, e->g, (size_t)N) ||
	    dev_upload(op->beta, dt, e->b, (size_t)N) ||
	    CUDA_CHECK(cudaMemcpy(op->x, e->x, bytes, cudaMemcpyHostToDevice)) ||
	    (op->bwd && CUDA_CHECK(cudaMemcpy(op->dy, e->dy, bytes,
					      cudaMemcpyHostToDevice))) ||
	    poison_all(op) || op_launch(op, 0, 0) ||
	    CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	got = (char *)xmalloc(bytes);
	if (CUDA_CHECK(cudaMemcpy(got, op->out, bytes, cudaMemcpyDeviceToHost)))
		goto out_free;
	check_begin(res, seed, dt == FP_BF16 ? 1e-2 : 1e-5);
	check_compare_rows(&c, got, dt, N, e->rows, e->nrows, e->ref);
	check_output(res, op->bwd ? "dx" : "y", &c);
	if (op->bwd) {
		dgb = (double *)xmalloc(2 * (size_t)N * sizeof *dgb);
		if (dev_download(dgb, op->dgb, dt, 2 * (size_t)N))
			goto out_free;
		for (int h = 0; h < 2; h++) {
			cmp_init(&c);
			cmp_add(&c, dgb + h * N, e->dgb + h * N, (size_t)N);
			cmp_add_floor(&c, e->dgb + (2 + h) * N, (size_t)N);
			check_output(res, h ? "dbeta" : "dgamma", &c);
		}
	}
	check_note_rows(res, e->nrows, M);
	rc = 0;

out_free:
	free(got);
	free(dgb);
	return rc;
}

extern "C" const struct workload wl_ln_gelu_fwd = {
	.name = "ln_gelu_fwd",
	.summary = "y = GELU(LayerNorm(x; gamma, beta)) over rows of width N",
	.params = ln_gelu_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = ln_gelu_profiles,
	.suite = LN_GELU_SUITE,
	.quick = LN_GELU_QUICK,
	.tests = LN_GELU_TESTS,
	.backward = "ln_gelu_bwd",
	.validate = ln_gelu_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.kernel = op_kernel,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};

extern "C" const struct workload wl_ln_gelu_bwd = {
	.name = "ln_gelu_bwd",
	.summary = "dx, dgamma, dbeta of GELU(LayerNorm(x; gamma, beta)) from dy",
	.params = ln_gelu_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = ln_gelu_profiles,
	.suite = LN_GELU_SUITE,
	.quick = LN_GELU_QUICK,
	.tests = LN_GELU_TESTS,
	.validate = ln_gelu_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.kernel = op_kernel,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};
