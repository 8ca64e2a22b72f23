// rmsnorm.cu - the RMSNorm workloads: y = x rstd(x) gamma with rstd =
// 1/sqrt(mean(x^2) + eps) (rmsnorm_fwd) and its gradients dx, dgamma
// (rmsnorm_bwd), fused and unfused, fp32 and bf16 (bf16 storage, fp32
// math): launchers, napkin math, the instances' lifecycle and the check.
//
// The room: ref.c (the CPU reference), kernels.cuh (the kernels, simplest
// first), then this file.
//
// Napkin math for one row-major M x N tensor of s-byte elements
// (s = 4 fp32, 2 bf16; E = M N):
//   forward   min bytes (2 E + N) s: x read, y written, gamma once.
//             FLOP 4 E: the square-accumulate FMA 2, x rstd 1, times gamma
//             1 (the per-row rsqrt is one transcendental a row: M).
//   backward  min bytes (3 E + 2 N) s: dy and x read, dx written, gamma
//             read, dgamma written.
//             FLOP 11 E: sum x^2 (FMA) 2, dy gamma 1, d = sum(dy gamma x)
//             (FMA) 2, dx = rstd dy gamma - x c (mul + FMA) 3, dgamma's
//             dy x rstd accumulated (mul + FMA) 3.
// At 16384 x 4096 fp32 that is 537 MB and 0.27 GFLOP forward, 805 MB and
// 0.74 GFLOP backward: nothing next to an H100's FLOP rate, so every kernel
// is memory-bound and "fast" means "moves few bytes at the copy bandwidth".
// Measured: bench/RESULTS.md.
//
// What each variant keeps alive for the backward (model saved_bytes): the
// unfused forward writes rstd per row (4 M bytes) between its kernels
// anyway, and its backward reads it instead of recomputing it; the fused
// forward keeps nothing, and the fused backward recomputes rstd from the
// row of x it holds in registers anyway (no DRAM bytes, a few FLOP a row).
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
#include "rmsnorm/kernels.cuh"
#include "rmsnorm/rmsnorm.h"
#include "util.h"

/* ------------------------------------------------------------------------ */
/* Launchers                                                                */
/* ------------------------------------------------------------------------ */

enum { V_UNFUSED, V_FUSED };

// Whether the fused forward takes a row a block of ROW_BLOCK threads at
// RMS_FUSED_PER_THREAD values each (see kernels.cuh): where the plan at
// FWD_PER_THREAD gives ROW_BLOCK / 2 threads a row, two rows a block.
static int rms_fused_plan(long N, enum fp_dtype dt)
{
	return layernorm_plan(0, N, dt) == ROW_BLOCK / 2 &&
	       N <= (long)ROW_BLOCK * RMS_FUSED_PER_THREAD;
}

template <int MODE>
static struct kcfg fwd_pick_rms(long N, enum fp_dtype dt)
{
	const int tpr = layernorm_plan(0, N, dt);

	if (MODE == RMS_FUSED && rms_fused_plan(N, dt))
		return dt == FP_BF16 ? rms_fused_narrow_kernel<__nv_bfloat16>()
				     : rms_fused_narrow_kernel<float>();
	return dt == FP_BF16 ? rms_fwd_kernel<__nv_bfloat16, MODE>(tpr)
			     : rms_fwd_kernel<float, MODE>(tpr);
}

// The fused backward's row kernel: layernorm_plan()'s threads a row of
// BWD_PER_THREAD values, 512 of BWD_WIDE_PER_THREAD where
// layernorm_bwd_wide() (8193 to 16384), else the wide-row kernel 3.
static struct kcfg bwd_pick_rms(long N, enum fp_dtype dt)
{
	const int tpr = layernorm_plan(1, N, dt);
	const bool wide = layernorm_bwd_wide(N, dt);

	return dt == FP_BF16 ? rms_bwd_kernel<__nv_bfloat16>(tpr, wide)
			     : rms_bwd_kernel<float>(tpr, wide);
}

struct fp_op {
	int bwd, variant, nsets;
	enum fp_dtype dt;
	long M, N;
	size_t es;
	char *x, *gamma, *dy;  // nsets input sets each
	float *saved;          // unfused backward: the forward's rstd, nsets sets
	// What a launch writes, set 0's, carved out of wbuf (written_bytes'
	// order): set s's lie s * wset bytes further on (set_view).
	char *wbuf;
	size_t wset;
	char *out;             // y (forward) or dx (backward)
	char *dg;              // backward: dgamma (N)
	float *rstd;           // unfused forward: rstd per row (M)
	float *rowdot;         // unfused backward: d per row (M)
	float *partial;        // backward: [prows][N]
	long prows;            // partial rows the launch writes
	struct kcfg main;      // fused backward: the row kernel
	int pgrid;             // its persistent grid
};

// The saved rstd of one set: M floats, sets dev_pad apart.
static size_t saved_set_bytes(long M)
{
	return dev_pad((size_t)M * sizeof(float));
}

static int launch_fwd_rms(const struct kcfg *k, const void *x, const void *g,
			  void *y, float *rstd, long M, long N, cudaStream_t st)
{
	void *args[] = { &x, &g, &y, &rstd, &M, &N };

	return CUDA_CHECK(cudaLaunchKernel(k->fn, dim3(row_grid(k, M)), dim3(k->block),
					   args, 0, st));
}

static unsigned elem_grid(size_t nv)
{
	size_t per = (size_t)RMS_ELEM_THREADS * RMS_ELEM_UNROLL, b = (nv + per - 1) / per;

	return (unsigned)(b < 1 ? 1 : b > (size_t)MAX_GRID ? MAX_GRID : b);
}

// Rows per block of the unfused dgamma partials: RMS_RCHUNK, or more where
// that would make more chunks than a grid's y dimension takes.
static long row_chunk(long M)
{
	long c = (M + 65534) / 65535;

	return c > RMS_RCHUNK ? c : RMS_RCHUNK;
}

template <typename T, int TPR>
static int launch_rowdot_t(const T *dy, const T *x, const T *g, float *d,
			   long M, long N, cudaStream_t st)
{
	const long groups = (M + ROW_BLOCK / TPR - 1) / (ROW_BLOCK / TPR);

	rms_rowdot<T, TPR><<<(unsigned)(groups < MAX_GRID ? groups : MAX_GRID),
			     ROW_BLOCK, 0, st>>>(dy, x, g, d, M, N);
	return CUDA_CHECK_LAUNCH("rms_rowdot");
}

template <typename T>
static int launch_rowdot(int tpr, const T *dy, const T *x, const T *g,
			 float *d, long M, long N, cudaStream_t st)
{
	switch (tpr) {
	case 32:
		return launch_rowdot_t<T, 32>(dy, x, g, d, M, N, st);
	case 64:
		return launch_rowdot_t<T, 64>(dy, x, g, d, M, N, st);
	case 128:
		return launch_rowdot_t<T, 128>(dy, x, g, d, M, N, st);
	default:
		return launch_rowdot_t<T, ROW_BLOCK>(dy, x, g, d, M, N, st);
	}
}

template <typename T>
static int unfused_bwd(const struct fp_op *op, const T *dy, const T *x,
		       const T *g, const float *rstd, cudaStream_t st)
{
	const long M = op->M, N = op->N, V = 16 / sizeof(T);
	T *dx = (T *)op->out;

	if (launch_rowdot(row_group_threads((N + V - 1) / V, RMS_DOT_VECS, ROW_BLOCK),
			  dy, x, g, op->rowdot, M, N, st))
		return -1;
	if (N % V == 0)
		rms_dx<T, 16 / sizeof(T)><<<elem_grid((size_t)M * N / V), RMS_ELEM_THREADS, 0, st>>>(
			dy, x, g, rstd, op->rowdot, dx, M, N);
	else
		rms_dx<T, 1><<<elem_grid((size_t)M * N), RMS_ELEM_THREADS, 0, st>>>(
			dy, x, g, rstd, op->rowdot, dx, M, N);
	if (CUDA_CHECK_LAUNCH("rms_dx"))
		return -1;
	rms_dgamma_partial<T><<<dim3((unsigned)((N + RMS_ELEM_THREADS - 1) / RMS_ELEM_THREADS),
				     (unsigned)op->prows), RMS_ELEM_THREADS, 0, st>>>(
		dy, x, rstd, op->partial, M, N, row_chunk(M));
	return CUDA_CHECK_LAUNCH("rms_dgamma_partial");
}

static int launch_reduce(const struct fp_op *op, cudaStream_t st)
{
	unsigned grid = (unsigned)((op->N + RED_COLS - 1) / RED_COLS);
	dim3 block(RED_COLS, RED_SLICES);

	if (op->dt == FP_BF16)
		rms_reduce<__nv_bfloat16><<<grid, block, 0, st>>>(
			op->partial, op->prows, op->N, (__nv_bfloat16 *)op->dg);
	else
		rms_reduce<float><<<grid, block, 0, st>>>(op->partial, op->prows, op->N,
							  (float *)op->dg);
	return CUDA_CHECK_LAUNCH("rms_reduce");
}

// The fused backward (op->main on its persistent grid op->pgrid) writing
// op->out and the partial rows, then their fixed-order sum into op->dg.
static int launch_fused_bwd(const struct fp_op *op, const void *dy, const void *x,
			    const void *g, cudaStream_t st)
{
	void *out = op->out;
	float *partial = op->partial;
	long M = op->M, N = op->N;
	void *args[] = { &dy, &x, &g, &out, &partial, &M, &N };

	return CUDA_CHECK(cudaLaunchKernel(op->main.fn, dim3((unsigned)op->pgrid),
					   dim3(op->main.block), args, op->main.smem, st)) ||
	       launch_reduce(op, st) ? -1 : 0;
}

// v = op as seen by a launch of set `set`: its written buffers set * wset
// bytes past set 0's (the inputs are offset by the launch).
static void set_view(const struct fp_op *op, int set, struct fp_op *v)
{
	const size_t off = (size_t)set * op->wset;

	*v = *op;
	v->out = (char *)dev_in_set(op->out, off);
	v->dg = (char *)dev_in_set(op->dg, off);
	v->rstd = (float *)dev_in_set(op->rstd, off);
	v->rowdot = (float *)dev_in_set(op->rowdot, off);
	v->partial = (float *)dev_in_set(op->partial, off);
}

static int op_launch(struct fp_op *base, int set, cudaStream_t st)
{
	struct fp_op view, *op = &view;
	const size_t mn = (size_t)base->M * base->N * base->es, nb = (size_t)base->N * base->es;
	const char *x, *g, *dy;

	if (set < 0 || set >= base->nsets)
		return error("rmsnorm: set %d out of range [0, %d)", set, base->nsets);
	set_view(base, set, &view);
	x = op->x + set * mn;
	g = op->gamma + set * nb;
	if (!op->bwd) {
		if (op->variant == V_FUSED)
			return rmsnorm_fused_fwd(op->dt, x, g, op->out, op->M, op->N, st);
		struct kcfg k1 = fwd_pick_rms<RMS_STATS>(op->N, op->dt);
		struct kcfg k2 = fwd_pick_rms<RMS_NORM>(op->N, op->dt);

		return launch_fwd_rms(&k1, x, NULL, NULL, op->rstd, op->M, op->N, st) ||
		       launch_fwd_rms(&k2, x, g, op->out, op->rstd, op->M, op->N, st) ? -1 : 0;
	}
	dy = op->dy + set * mn;
	if (op->variant == V_UNFUSED) {
		const float *rstd = (const float *)((const char *)op->saved +
						    set * saved_set_bytes(op->M));
		int rc = op->dt == FP_BF16
			? unfused_bwd(op, (const __nv_bfloat16 *)dy, (const __nv_bfloat16 *)x,
				      (const __nv_bfloat16 *)g, rstd, st)
			: unfused_bwd(op, (const float *)dy, (const float *)x,
				      (const float *)g, rstd, st);

		return rc || launch_reduce(op, st) ? -1 : 0;
	}
	return launch_fused_bwd(op, dy, x, g, st);
}

/* ------------------------------------------------------------------------ */
/* The workloads                                                            */
/* ------------------------------------------------------------------------ */

static const struct fp_param rms_params[] = {
	{ "M", FP_REQUIRED, 1, 1L << 31, "rows" },
	{ "N", FP_REQUIRED, 1, 1L << 30, "row width (elements)" },
	{ NULL, 0, 0, 0, NULL }
};

static const char *const rms_profiles[] = {
	"normal",    // x ~ N(0, 1): what timing uses
	"offset",    // x ~ 1e4 + N(0, 1): rstd ~ 1e-4, xhat ~ 1 everywhere
	"tiny",      // x ~ 1e-3 N(0, 1): mean(x^2) ~ 1e-6 < eps, eps dominates
	"zerorows",  // every third row all 0: rstd = 1/sqrt(eps), no 0/0
	"spiky",     // N(0, 1) with one +-1000 outlier per row
	NULL
};
enum { P_NORMAL, P_OFFSET, P_TINY, P_ZEROROWS, P_SPIKY };

#define RMS_SUITE "M=16384,N=768;M=16384,N=4096"
#define RMS_QUICK "M=2048,N=768"
// Awkward widths (1, 3, odd, not a multiple of the bf16 vector: 4100)
// take the wide-row kernels; the rest hit the register kernels' block
// shapes, a partial last block (M=5), many rows per persistent block
// (M=1000), the fused backward's widest register rows (N=9000, 16384:
// 512 threads of 32 values; 300 rows, a few a block of the persistent
// grid) and rows past the register capacity (N=65536, 131101).
#define RMS_TESTS "M=1,N=1;M=7,N=3;M=3,N=1023;M=16384,N=768;M=5,N=4096;" \
	"M=4,N=4100;M=33,N=8;M=1000,N=1024;M=5,N=9000;M=300,N=16384;" \
	"M=2,N=65536;M=3,N=131101"

static const struct fp_variant fwd_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "2 kernels: rstd per row to DRAM (kept for the backward); y = x*rstd*gamma" },
	{ "fused", FP_FUSED,
	  "1 kernel: row read once into registers (a block a row for wide rows), "
	  "y written once; keeps nothing" },
	{ NULL, FP_UNFUSED, NULL }
};

static const struct fp_variant bwd_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "4 kernels around the forward's saved rstd: row dots d = sum(dy*gamma*x); "
	  "dx elementwise; dgamma partials by column; their fixed-order sum" },
	{ "fused", FP_FUSED,
	  "2 kernels: rstd recomputed, dx and dgamma partials in one pass over dy "
	  "and x; their fixed-order sum" },
	{ NULL, FP_UNFUSED, NULL }
};

// Largest one-tensor size we accept: beyond any GPU, and far from overflow.
#define MAX_TENSOR_BYTES (1.0 * (1ull << 47))

static int rms_validate(const struct fp_shape *s, enum fp_dtype dt, char *why,
			size_t whylen)
{
	long M = s->v[0], N = s->v[1];
	double bytes = (double)M * (double)N * (double)fp_dtype_size(dt);

	if (dt != FP_F32 && dt != FP_BF16)
		snprintf(why, whylen, "dtype %s: rmsnorm takes fp32 or bf16",
			 fp_dtype_name(dt));
	else if (M < 1 || N < 1)
		snprintf(why, whylen, "M=%ld,N=%ld: rows and row width must be at least 1",
			 M, N);
	else if (bytes > MAX_TENSOR_BYTES)
		snprintf(why, whylen, "M=%ld,N=%ld: one %s tensor would take %.3g TiB, "
			 "more than any GPU holds", M, N, fp_dtype_name(dt), bytes / 0x1p40);
	else
		return 0;
	return -1;
}

// Partial rows of the backward. Fused: the persistent grid (at most one
// block per row group, at most MAX_PARTIALS blocks; create() sizes it from
// the device), a row per block. Unfused: a row per chunk of row_chunk()
// rows.
static long partial_rows_max(const struct fp_shape *s, enum fp_dtype dt, int variant)
{
	if (variant == V_UNFUSED)
		return (s->v[0] + row_chunk(s->v[0]) - 1) / row_chunk(s->v[0]);
	struct kcfg k = bwd_pick_rms(s->v[1], dt);
	long groups = (s->v[0] + k.rpb - 1) / k.rpb;

	return groups < MAX_PARTIALS ? groups : MAX_PARTIALS;
}

// The sizes of one set's written buffers (fp_op.wbuf), each in bytes, 0
// where the variant has none; returns their padded sum, the set's stride.
struct wsizes {
	size_t out, dg, rstd, rowdot, partial;
};

static size_t written_bytes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
			    int variant, struct wsizes *z)
{
	size_t M = (size_t)s->v[0], N = (size_t)s->v[1], es = fp_dtype_size(dt);

	memset(z, 0, sizeof *z);
	z->out = M * N * es;
	if (bwd) {
		z->dg = N * es;
		z->partial = (size_t)partial_rows_max(s, dt, variant) * N * sizeof(float);
		if (variant == V_UNFUSED)
			z->rowdot = M * sizeof(float);
	} else if (variant == V_UNFUSED) {
		z->rstd = M * sizeof(float);
	}
	return dev_pad(z->out) + dev_pad(z->dg) + dev_pad(z->rstd) +
	       dev_pad(z->rowdot) + dev_pad(z->partial);
}

// Inputs (x, gamma; backward dy, and the unfused backward's saved rstd)
// and written buffers, nsets of each.
static size_t op_bytes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
		       int variant, int nsets)
{
	size_t N = (size_t)s->v[1], es = fp_dtype_size(dt);
	size_t mn = (size_t)s->v[0] * N * es;
	struct wsizes z;

	return dev_pad(nsets * mn) * (bwd ? 2 : 1) + dev_pad(nsets * N * es) +
	       (bwd && variant == V_UNFUSED ? dev_pad(nsets * saved_set_bytes(s->v[0])) : 0) +
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
	m->flops = 4 * mn;
	m->min_bytes = (2 * mn + N) * es;
	if (variant == V_UNFUSED) {
		// rstd: x in, 4 B/row out; normalize: x, rstd, gamma in, y out.
		m->variant_bytes = (3 * mn + N) * es + 8 * M;
		m->saved_bytes = 4 * M;  // rstd
	} else {
		m->variant_bytes = m->min_bytes;
	}
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], N = (double)s->v[1], es = (double)fp_dtype_size(dt);
	double mn = M * N;

	memset(m, 0, sizeof *m);
	m->flops = 11 * mn;
	m->min_bytes = (3 * mn + 2 * N) * es;
	// The dgamma partials are written and read back at once; they are
	// expected to stay in L2 and are not counted.
	if (variant == V_UNFUSED) {
		// row dots: dy, x, gamma in, 4 B/row out; dx: dy, x, gamma,
		// rstd, d in, dx out; partials: dy, x, rstd in; the sum:
		// dgamma out.
		m->variant_bytes = (7 * mn + 3 * N) * es + 16 * M;
		m->saved_bytes = 4 * M;  // the forward's rstd, read here
	} else {
		m->variant_bytes = m->min_bytes;
	}
}

static void op_destroy(struct fp_op *op)
{
	if (!op)
		return;
	cudaFree(op->x);
	cudaFree(op->gamma);
	cudaFree(op->dy);
	cudaFree(op->saved);
	cudaFree(op->wbuf);
	free(op);
}

// The unfused forward's first kernel alone: rstd of x into rstd. How the
// unfused backward's saved input is made, at create and at each check.
static int make_saved(const struct fp_op *op, const void *x, float *rstd)
{
	struct kcfg k = fwd_pick_rms<RMS_STATS>(op->N, op->dt);

	return launch_fwd_rms(&k, x, NULL, NULL, rstd, op->M, op->N, 0);
}

/* The fused variants' kernels on a caller's pointers (rmsnorm.h). */
extern "C" int rmsnorm_fused_fwd(enum fp_dtype dt, const void *x, const void *gamma,
				 void *y, long M, long N, cudaStream_t st)
{
	struct kcfg k = fwd_pick_rms<RMS_FUSED>(N, dt);

	return launch_fwd_rms(&k, x, gamma, y, NULL, M, N, st);
}

extern "C" long rmsnorm_fused_partials(enum fp_dtype dt, long M, long N)
{
	const struct fp_shape s = { { M, N } };

	return partial_rows_max(&s, dt, V_FUSED);
}

extern "C" int rmsnorm_fused_bwd(enum fp_dtype dt, const void *dy, const void *x,
				 const void *gamma, void *dx, void *dgamma, float *partial,
				 long M, long N, cudaStream_t st)
{
	struct fp_op op;

	memset(&op, 0, sizeof op);
	op.dt = dt;
	op.M = M;
	op.N = N;
	op.out = (char *)dx;
	op.dg = (char *)dgamma;
	op.partial = partial;
	op.main = bwd_pick_rms(N, dt);
	if (kcfg_ready(&op.main) || persistent_grid(&op.main, M, &op.pgrid))
		return -1;
	op.prows = op.pgrid;
	if (op.prows > rmsnorm_fused_partials(dt, M, N))
		return error("rmsnorm_bwd: %ld partial rows, room for %ld", op.prows,
			     rmsnorm_fused_partials(dt, M, N));
	return launch_fused_bwd(&op, dy, x, gamma, st);
}

static int op_create(int bwd, struct fp_op **out, const struct fp_shape *s,
		     enum fp_dtype dt, int variant, int nsets,
		     unsigned long long seed)
{
	struct fp_op *op;
	struct wsizes z;
	size_t mn, nb, elems;
	char why[160], *cur;

	*out = NULL;
	if (rms_validate(s, dt, why, sizeof why))
		return error("rmsnorm: %s", why);
	if (nsets < 1 || variant < 0 || variant > 1)
		return error("rmsnorm: bad instance (variant %d, %d input sets)",
			     variant, nsets);
	op = (struct fp_op *)xcalloc(1, sizeof *op);
	op->bwd = bwd;
	op->variant = variant;
	op->dt = dt;
	op->M = s->v[0];
	op->N = s->v[1];
	op->nsets = nsets;
	op->es = fp_dtype_size(dt);
	elems = (size_t)op->M * op->N;
	mn = elems * op->es;
	nb = (size_t)op->N * op->es;

	op->wset = written_bytes(bwd, s, dt, variant, &z);
	op->prows = partial_rows_max(s, dt, variant);
	if (dev_alloc(&op->x, nsets * mn) || dev_alloc(&op->gamma, nsets * nb) ||
	    (bwd && dev_alloc(&op->dy, nsets * mn)) ||
	    (bwd && variant == V_UNFUSED &&
	     dev_alloc(&op->saved, nsets * saved_set_bytes(op->M))) ||
	    dev_alloc(&op->wbuf, (size_t)nsets * op->wset))
		goto out_free;
	cur = op->wbuf;  // set 0's written buffers, in written_bytes' order
	op->out = (char *)dev_carve(&cur, z.out);
	op->dg = (char *)dev_carve(&cur, z.dg);
	op->rstd = (float *)dev_carve(&cur, z.rstd);
	op->rowdot = (float *)dev_carve(&cur, z.rowdot);
	op->partial = (float *)dev_carve(&cur, z.partial);
	if (bwd && variant == V_FUSED) {
		op->main = bwd_pick_rms(op->N, dt);
		if (kcfg_ready(&op->main) ||
		    persistent_grid(&op->main, op->M, &op->pgrid))
			goto out_free;
		op->prows = op->pgrid;
		// partial is sized for partial_rows_max() rows, what
		// device_bytes() counts without a device
		if ((size_t)op->prows * op->N * sizeof(float) > z.partial) {
			error("rmsnorm_bwd: %ld partial rows, room for %zu", op->prows,
			      z.partial / (op->N * sizeof(float)));
			goto out_free;
		}
	}
	for (int i = 0; i < nsets; i++) {
		uint64_t sd = splitmix64(seed + 0x100 * (uint64_t)i);

		if (dev_fill_normal(op->x + i * mn, dt, elems, sd, 0.0f, 1.0f, 0) ||
		    dev_fill_normal(op->gamma + i * nb, dt, op->N, splitmix64(sd + 1), 1.0f, 0.5f, 0) ||
		    (bwd && dev_fill_normal(op->dy + i * mn, dt, elems, splitmix64(sd + 3),
					    0.0f, 1.0f, 0)) ||
		    (op->saved && make_saved(op, op->x + i * mn,
					     (float *)((char *)op->saved + i * saved_set_bytes(op->M)))))
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

// RMSNorm has no kernel options: ko is ignored.
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
// wide-row fallback, see layernorm_plan()) and the fused backward's
// persistent grid, which the device sets; the unfused backward's access
// width.
static void op_kernel(const struct fp_op *op, char *buf, size_t n)
{
	const bool wide = op->bwd && op->variant == V_FUSED && layernorm_bwd_wide(op->N, op->dt);
	const int tpr = !op->bwd && op->variant == V_FUSED && rms_fused_plan(op->N, op->dt)
		? ROW_BLOCK : op->bwd ? layernorm_bwd_threads(op->N, op->dt)
		: layernorm_plan(0, op->N, op->dt);
	const int rpb = tpr >= ROW_BLOCK ? 1 : ROW_BLOCK / (tpr ? tpr : ROW_BLOCK);
	int len;

	if (op->bwd && op->variant == V_UNFUSED) {
		snprintf(buf, n, "%s accesses",
			 op->N % (long)(16 / op->es) ? "scalar (rows unaligned)" : "16-byte");
		return;
	}
	if (wide)
		len = snprintf(buf, n, "rows in registers, %d threads a row of %d values each, "
			       "dgamma accumulated in shared memory", tpr, BWD_WIDE_PER_THREAD);
	else if (tpr)
		len = snprintf(buf, n, "rows in registers, %d threads a row", tpr);
	else
		len = snprintf(buf, n, "rows of any width, a block of %d a row",
			       WIDE_THREADS);
	if (tpr && rpb > 1 && len >= 0 && (size_t)len < n)
		len += snprintf(buf + len, n - (size_t)len, ", %d rows a block", rpb);
	if (op->bwd && len >= 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, "; persistent grid of %d blocks",
			 op->pgrid);
}

// Draw one row of profile `profile` into v (N values), rounded to dt.
static void draw_row(struct fp_rng *r, int profile, long row, double *v, long N,
		     enum fp_dtype dt)
{
	const double off = profile == P_OFFSET ? 1e4 : 0.0;
	const double scale = profile == P_TINY ? 1e-3 : 1.0;

	if (profile == P_ZEROROWS && row % 3 == 0) {
		memset(v, 0, (size_t)N * sizeof *v);
		return;
	}
	for (long j = 0; j < N; j++)
		v[j] = off + scale * rng_normal(r);
	if (profile == P_SPIKY) {
		long at = (long)(rng_uniform(r) * (double)N);
		v[at < N ? at : N - 1] = rng_uniform(r) < 0.5 ? -1e3 : 1e3;
	}
	host_round(v, (size_t)N, dt);
}

// What one case's check computes on the CPU, kept in the reference cache
// (checkref.h) under workload, shape, dtype, profile and seed: the inputs
// as the device holds them and the references, so the other variant of
// the case, checked on the same seed, only uploads, runs and compares.
struct rms_ref {
	double *g;         // gamma (N, rounded to dt)
	char *x, *dy;      // M x N of dt; dy backward only
	long nrows;        // rows of y / dx compared (all unless M x N is large)
	long *rows;
	double *ref;       // nrows x N: y or dx of rows[s] at s N
	double *dg;        // backward: dgamma (N), over every row
	// Backward: per compared row, the sum over its N outputs of the
	// squares of dx's two terms, (rstd dy gamma)^2 + (xhat rstd m)^2: dx is
	// their difference, which cancels to almost nothing where xhat^2 ~ 1
	// for every j (N = 1), so dx is judged against the size of its terms
	// (cmp_rel's sq_floor, summed in row order).
	double *floor;
};

static void rms_ref_free(void *p)
{
	struct rms_ref *e = (struct rms_ref *)p;

	free(e->g);
	free(e->x);
	free(e->dy);
	free(e->rows);
	free(e->ref);
	free(e->dg);
	free(e->floor);
	free(e);
}

// One chunk of a case's rows (par_for): drawing x or dy, or the reference.
struct rms_job {
	const struct fp_op *op;
	struct rms_ref *e;
	int profile;
	uint64_t base;     // the stream of the tensor drawn
	char *dst;         // the tensor drawn
	size_t grain;      // the reference's chunk of rows
	double *part;      // backward: per chunk, its dgamma sums (N)
};

// Rows [lo, hi) of a tensor, each from its own stream of base, rounded to
// dt and stored as dt: the values the GPU sees.
static void draw_rows(size_t lo, size_t hi, void *arg)
{
	const struct rms_job *j = (const struct rms_job *)arg;
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

// The floor of one row's dx (struct rms_ref's floor): with r = rstd and m
// = mean(dy gamma xhat), the sum over j of (r dy_j g_j)^2 + (x_j r^2 m)^2.
static double dx_floor(const double *dy, const double *x, const double *g, long N)
{
	const double r = rmsnorm_ref_rstd(x, N);
	double m = 0, f = 0;

	for (long j = 0; j < N; j++)
		m += dy[j] * g[j] * x[j] * r;
	m /= (double)N;
	for (long j = 0; j < N; j++) {
		const double a = r * dy[j] * g[j], b = x[j] * r * r * m;

		f += a * a + b * b;
	}
	return f;
}

// The reference of rows [lo, hi). Forward: lo, hi index the compared rows.
// Backward: they are rows of x, every one of them feeding this chunk's
// dgamma sums; dx is kept for the compared ones.
static void ref_rows(size_t lo, size_t hi, void *arg)
{
	const struct rms_job *j = (const struct rms_job *)arg;
	const struct rms_ref *e = j->e;
	const long N = j->op->N;
	const size_t es = j->op->es;
	double *xr = (double *)xmalloc(3 * (size_t)N * sizeof *xr);
	double *dyr = xr + N, *dx = dyr + N;

	if (!j->op->bwd) {
		for (size_t s = lo; s < hi; s++) {
			check_decode(xr, e->x + (size_t)e->rows[s] * N * es, j->op->dt,
				     (size_t)N);
			rmsnorm_ref_fwd(xr, e->g, e->ref + s * N, NULL, 1, N);
		}
	} else {
		double *dg = j->part + (lo / j->grain) * N;
		long s = 0;

		while (s < e->nrows && e->rows[s] < (long)lo)
			s++;
		memset(dg, 0, (size_t)N * sizeof *dg);
		for (size_t row = lo; row < hi; row++) {
			const int kept = s < e->nrows && e->rows[s] == (long)row;

			check_decode(xr, e->x + row * N * es, j->op->dt, (size_t)N);
			check_decode(dyr, e->dy + row * N * es, j->op->dt, (size_t)N);
			rmsnorm_ref_bwd(dyr, xr, e->g, kept ? e->ref + s * N : dx, dg, 1, N);
			if (kept)
				e->floor[s] = dx_floor(dyr, xr, e->g, N);
			s += kept;
		}
	}
	free(xr);
}

// A case's inputs and references, from the cache or computed on every
// core: gamma from seed's stream, then one value of it seeding x's rows'
// streams and the next dy's (dy is always profile 0: the profiles are
// about x).
static struct rms_ref *rms_reference(const struct fp_op *op, int profile,
				     unsigned long long seed)
{
	const long M = op->M, N = op->N;
	const size_t E = (size_t)M * (size_t)N, grain = par_grain_rows((size_t)N);
	struct ref_key key;
	struct rms_ref *e;
	struct rms_job job;
	struct fp_rng rng;

	memset(&key, 0, sizeof key);
	snprintf(key.what, sizeof key.what, "rmsnorm_%s", op->bwd ? "bwd" : "fwd");
	key.dims[0] = M;
	key.dims[1] = N;
	key.dt = op->dt;
	key.profile = profile;
	key.seed = seed;
	if ((e = (struct rms_ref *)refcache_find(&key)))
		return e;
	e = (struct rms_ref *)xcalloc(1, sizeof *e);
	e->g = (double *)xmalloc((size_t)N * sizeof *e->g);
	rng_seed(&rng, seed);
	for (long j = 0; j < N; j++)
		e->g[j] = 1.0 + 0.5 * rng_normal(&rng);
	host_round(e->g, (size_t)N, op->dt);
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
		// dgamma: per-chunk sums added in chunk order. At most about 256
		// chunks (a grain from M, never from the threads), so the
		// partials stay small.
		const size_t nc0 = 256, g2 = ((size_t)M + nc0 - 1) / nc0;
		size_t nc;

		job.grain = g2 > grain ? g2 : grain;
		nc = par_chunks((size_t)M, job.grain);
		job.part = (double *)xmalloc(nc * N * sizeof *job.part);
		e->floor = (double *)xcalloc((size_t)e->nrows, sizeof *e->floor);
		par_for((size_t)M, job.grain, ref_rows, &job);
		e->dg = (double *)xcalloc((size_t)N, sizeof *e->dg);
		for (size_t c = 0; c < nc; c++)
			for (long k = 0; k < N; k++)
				e->dg[k] += job.part[c * N + k];
		free(job.part);
	}
	refcache_keep(&key, e, E * op->es * (op->bwd ? 2 : 1) +
		      ((size_t)e->nrows + 2) * N * sizeof(double) +
		      (e->floor ? (size_t)e->nrows * sizeof(double) : 0), rms_ref_free);
	return e;
}

static int poison_all(struct fp_op *op)
{
	size_t mn = (size_t)op->M * op->N * op->es, mf = (size_t)op->M * sizeof(float);

	return dev_poison(op->out, mn) ||
	       (op->rstd && dev_poison(op->rstd, mf)) ||
	       (op->rowdot && dev_poison(op->rowdot, mf)) ||
	       (op->dg && dev_poison(op->dg, (size_t)op->N * op->es)) ||
	       (op->partial && dev_poison(op->partial,
					  (size_t)op->prows * op->N * sizeof(float)))
	       ? -1 : 0;
}

// Fresh inputs from profile and seed, outputs and intermediates poisoned
// (the unfused backward's saved rstd made by the unfused forward's first
// kernel, as a training step would), one run, compared with the double
// reference computed on the very values the GPU saw: y (dx) on every row,
// or on a sample of rows when M x N is large (check_sample_rows; the
// detail says how many), dgamma in full.
static int op_check(struct fp_op *op, int profile, unsigned long long seed,
		    struct fp_check *res)
{
	const long M = op->M, N = op->N;
	const enum fp_dtype dt = op->dt;
	const size_t bytes = (size_t)M * N * op->es;
	const struct rms_ref *e;
	char *got = NULL;
	double *dg = NULL;
	struct fp_cmp c;
	int rc = -1;

	if (profile < 0 || profile > P_SPIKY)
		return error("rmsnorm: no input profile %d", profile);
	e = rms_reference(op, profile, seed);
	if (dev_upload(op->gamma, dt, e->g, (size_t)N) ||
	    CUDA_CHECK(cudaMemcpy(op->x, e->x, bytes, cudaMemcpyHostToDevice)) ||
	    (op->bwd && CUDA_CHECK(cudaMemcpy(op->dy, e->dy, bytes,
					      cudaMemcpyHostToDevice))) ||
	    (op->saved && (dev_poison(op->saved, (size_t)M * sizeof(float)) ||
			   make_saved(op, op->x, op->saved))) ||
	    poison_all(op) || op_launch(op, 0, 0) ||
	    CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	got = (char *)xmalloc(bytes);
	if (CUDA_CHECK(cudaMemcpy(got, op->out, bytes, cudaMemcpyDeviceToHost)))
		goto out_free;
	check_begin(res, seed, dt == FP_BF16 ? 1e-2 : 1e-5);
	check_compare_rows(&c, got, dt, N, e->rows, e->nrows, e->ref);
	if (op->bwd)
		cmp_add_floor(&c, e->floor, (size_t)e->nrows);
	check_output(res, op->bwd ? "dx" : "y", &c);
	if (op->bwd) {
		dg = (double *)xmalloc((size_t)N * sizeof *dg);
		if (dev_download(dg, op->dg, dt, (size_t)N))
			goto out_free;
		cmp_init(&c);
		cmp_add(&c, dg, e->dg, (size_t)N);
		check_output(res, "dgamma", &c);
	}
	check_note_rows(res, e->nrows, M);
	rc = 0;

out_free:
	free(got);
	free(dg);
	return rc;
}

extern "C" const struct workload wl_rmsnorm_fwd = {
	.name = "rmsnorm_fwd",
	.summary = "y = x / sqrt(mean(x^2) + 1e-5) * gamma over rows of width N",
	.params = rms_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = rms_profiles,
	.suite = RMS_SUITE,
	.quick = RMS_QUICK,
	.tests = RMS_TESTS,
	.kopts = NULL,
	.backward = "rmsnorm_bwd",
	.validate = rms_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.kernel = op_kernel,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};

extern "C" const struct workload wl_rmsnorm_bwd = {
	.name = "rmsnorm_bwd",
	.summary = "dx, dgamma of x / sqrt(mean(x^2) + 1e-5) * gamma from dy",
	.params = rms_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = rms_profiles,
	.suite = RMS_SUITE,
	.quick = RMS_QUICK,
	.tests = RMS_TESTS,
	.kopts = NULL,
	.backward = NULL,
	.validate = rms_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.kernel = op_kernel,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};
