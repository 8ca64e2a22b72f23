// dropout.cu - the bias+dropout+residual workloads: y = dropout(x + bias, p)
// + residual (bias_dropout_add_fwd) and dx = dy mask / (1 - p), dbias = the
// column sums of dx (bias_dropout_add_bwd; dresidual = dy is the identity,
// nothing to compute or copy), fp32 and bf16 (bf16 storage, fp32 math).
//
// The mask is Philox 4x32-10 over the flattened element index (philox.h):
// a pure function of (seed, e), so any thread layout, the CPU reference
// and a backward regenerating it all draw the same one. Variants trade
// what the forward keeps for the backward (model saved_bytes):
//   unfused      3 kernels, h = x + b; d = dropout(h) writing a byte mask;
//                y = d + residual. Saves M N bytes.
//   fused_bytemask  unfused's kernels as one (h and d on chip), the same
//                byte mask saved: its twin, what a prediction of fusing
//                them is checked against.
//   fused_mask   1 kernel writing y and a 1-bit-per-element mask: saves
//                ceil(M N / 32) 4 bytes.
//   fused_regen  1 kernel writing y only: saves nothing but the seed; the
//                backward redraws the mask.
//
// Napkin math, M x N of s-byte elements (s = 4 fp32, 2 bf16):
//   forward   min bytes (3 M N + N) s: x, residual read, bias once, y
//             written. FLOP 3 M N (bias add, scale, residual add; the
//             Philox draw is integer work, 40 IMAD per 4 elements).
//   backward  min bytes (2 M N + N) s: dy read, dx and dbias written (the
//             mask regenerated: no bytes). FLOP 2 M N (scale, column sum).
// At 16384 x 4096 fp32 the forward is 805 MB and 0.2 GFLOP: memory-bound.
// The integer work is what could make it compute-bound: 10 IMAD an element
// at 64 IMAD/clk/SM is about 3 times faster than bf16's 6 bytes an element
// arrive at full bandwidth, so the draw hides behind the loads.
// Measured: bench/RESULTS.md.
//
// The room: ref.c (the CPU reference), kernels.cuh (the device kernels),
// this file (launchers, the contract, the check).
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
#include "dropout/dropout.h"
#include "ewmask/ewmask.cuh"
#include "dropout/kernels.cuh"

/* ------------------------------------------------------------------------ */
/* Launchers                                                                */
/* ------------------------------------------------------------------------ */

struct fp_op {
	int bwd, variant, nsets;
	enum fp_dtype dt;
	long M, N, drop;
	size_t es, mnp;        // bytes of one M x N tensor, padded: a set's stride
	uint32_t t;            // dropout_threshold(drop)
	float scale;           // 1 / (1 - p)
	uint64_t *seeds;       // the Philox seed of each set (bda_seed)
	struct ew_plan plan;
	int bulk;              // backward: the fused variants on the bulk kernel
	bool pdl;              // backward: the column sum launched programmatically
	struct ew_plan bplan;  // its plan (ew_plan_bulk) where bulk
	unsigned gy;           // backward: the fused kernels' grid rows (ew_resident_gy
	                       // with a saved mask, the plan's otherwise)
	char *x, *res, *bias;  // forward inputs, nsets each
	char *dy;              // backward input, nsets
	char *saved;           // backward: what the forward saved, nsets
	size_t saved_set;      // its stride (0: fused_regen saves nothing)
	// What a launch writes, set 0's, carved out of wbuf (written_bytes'
	// order): set s's lie s * wset bytes further on (set_view).
	char *wbuf;
	size_t wset;
	char *out;             // y or dx
	char *h, *d;           // forward unfused: x + bias, dropout(x + bias)
	uint8_t *bytes;        // forward unfused, fused_bytemask: the byte mask
	uint32_t *words;       // forward fused_mask: the bit mask
	char *dbias;           // backward
	float *partial;        // backward: [plan.prows][N]
};

static void set_view(const struct fp_op *op, int set, struct fp_op *v)
{
	const size_t off = (size_t)set * op->wset;

	*v = *op;
	v->out = (char *)dev_in_set(op->out, off);
	v->h = (char *)dev_in_set(op->h, off);
	v->d = (char *)dev_in_set(op->d, off);
	v->bytes = (uint8_t *)dev_in_set(op->bytes, off);
	v->words = (uint32_t *)dev_in_set(op->words, off);
	v->dbias = (char *)dev_in_set(op->dbias, off);
	v->partial = (float *)dev_in_set(op->partial, off);
}

template <typename T>
static int launch_fwd(const struct fp_op *op, int set, cudaStream_t st)
{
	constexpr int V = 16 / sizeof(T);
	const struct ew_plan *p = &op->plan;
	const dim3 grid(p->gx, p->gy), block(p->tx, p->ty);
	const size_t n = (size_t)op->M * op->N;
	const T *x = (const T *)(op->x + set * op->mnp);
	const T *res = (const T *)(op->res + set * op->mnp);
	const T *b = (const T *)(op->bias + set * dev_pad(op->N * op->es));
	const uint64_t seed = op->seeds[set];
	const unsigned fg = ew_flat_grid(n / V, (size_t)EW_THREADS * EW_UNROLL);

	switch (op->variant) {
	case BDA_UNFUSED:
		if (p->vec)
			ew_bias_act_kernel<T, V, true, false><<<grid, block, 0, st>>>(
				x, b, (T *)op->h, op->M, op->N);
		else
			ew_bias_act_kernel<T, V, false, false><<<grid, block, 0, st>>>(
				x, b, (T *)op->h, op->M, op->N);
		if (CUDA_CHECK_LAUNCH("ew_bias_act_kernel"))
			return -1;
		dropout_bytes_kernel<T><<<fg, EW_THREADS, 0, st>>>(
			(const T *)op->h, (T *)op->d, op->bytes, n, seed, op->t, op->scale);
		if (CUDA_CHECK_LAUNCH("dropout_bytes_kernel"))
			return -1;
		add_kernel<T><<<fg, EW_THREADS, 0, st>>>((const T *)op->d, res,
							 (T *)op->out, n);
		return CUDA_CHECK_LAUNCH("add_kernel");
	case BDA_FUSED_MASK:
		if (p->vec && op->N % 32 == 0)
			fwd_rows_kernel<T, V, true, BDA_MASK_BITS><<<grid, block, 0, st>>>(
				x, b, res, (T *)op->out, op->words, NULL, op->M, op->N,
				seed, op->t, op->scale);
		else
			fwd_flat_kernel<T><<<ew_flat_grid(n, EW_THREADS), EW_THREADS, 0, st>>>(
				x, b, res, (T *)op->out, op->words, op->M, op->N, seed,
				op->t, op->scale);
		return CUDA_CHECK_LAUNCH("fused_mask forward");
	case BDA_FUSED_BYTEMASK:
		if (p->vec)
			fwd_rows_kernel<T, V, true, BDA_MASK_BYTES><<<grid, block, 0, st>>>(
				x, b, res, (T *)op->out, NULL, op->bytes, op->M, op->N,
				seed, op->t, op->scale);
		else
			fwd_rows_kernel<T, V, false, BDA_MASK_BYTES><<<grid, block, 0, st>>>(
				x, b, res, (T *)op->out, NULL, op->bytes, op->M, op->N,
				seed, op->t, op->scale);
		return CUDA_CHECK_LAUNCH("fused_bytemask forward");
	default:
		if (p->vec)
			fwd_rows_kernel<T, V, true, BDA_MASK_NONE><<<grid, block, 0, st>>>(
				x, b, res, (T *)op->out, NULL, NULL, op->M, op->N, seed,
				op->t, op->scale);
		else
			fwd_rows_kernel<T, V, false, BDA_MASK_NONE><<<grid, block, 0, st>>>(
				x, b, res, (T *)op->out, NULL, NULL, op->M, op->N, seed,
				op->t, op->scale);
		return CUDA_CHECK_LAUNCH("fused_regen forward");
	}
}

// A fused backward: dx and the dbias partials by the bulk kernel (MK, its
// mask functor) or the rows kernel (MASK: the bits in words, the bytes, or
// the mask redrawn from seed), then their column sum. name, bulk_name: what
// an error says of the launch (as CUDA_CHECK_LAUNCH's).
template <typename T, int MASK, class MK>
static int fused_bwd(const struct fp_op *op, const T *dy, MK mk, const uint32_t *words,
		     const uint8_t *bytes, uint64_t seed, const char *name,
		     const char *bulk_name, cudaStream_t st)
{
	constexpr int V = 16 / sizeof(T);
	const struct ew_plan *p = op->bulk ? &op->bplan : &op->plan;
	const dim3 grid(p->gx, op->gy), block(p->tx, p->ty);

	if (op->bulk)
		ew_bulk_bwd<T, V>(p, dy, mk, op->scale, (T *)op->out, op->partial, op->M,
				  op->N, st);
	else if (p->vec)
		bwd_rows_kernel<T, V, true, MASK><<<grid, block, 0, st>>>(
			dy, words, bytes, (T *)op->out, op->partial, op->M, op->N, seed,
			op->t, op->scale);
	else
		bwd_rows_kernel<T, V, false, MASK><<<grid, block, 0, st>>>(
			dy, words, bytes, (T *)op->out, op->partial, op->M, op->N, seed,
			op->t, op->scale);
	if (cuda_check(cudaGetLastError(), op->bulk ? bulk_name : name, __FILE__, __LINE__))
		return -1;
	return ew_colsum<T>(op->partial, (long)op->gy, op->N, (T *)op->dbias, op->pdl, st);
}

// The fused backward's rows kernel for dt, the vector path or not, and a
// mask kind (BDA_MASK_*): what ew_resident_gy asks the occupancy of.
template <typename T>
static const void *bwd_rows_fn(int vec, int mask)
{
	constexpr int V = 16 / sizeof(T);

	if (mask == BDA_MASK_BITS)
		return vec ? (const void *)bwd_rows_kernel<T, V, true, BDA_MASK_BITS>
			   : (const void *)bwd_rows_kernel<T, V, false, BDA_MASK_BITS>;
	return vec ? (const void *)bwd_rows_kernel<T, V, true, BDA_MASK_BYTES>
		   : (const void *)bwd_rows_kernel<T, V, false, BDA_MASK_BYTES>;
}

// The backward's grid rows (op->gy) for op's variant, plans and bulk
// choice, set: the saved-mask rows kernels on a resident grid, the rest
// on their plan's (prows = gy in both plans). Every backward op, the
// workload's and the library's (bda_api_op), takes it from here.
static unsigned bwd_grid_rows(const struct fp_op *op)
{
	int mk;

	if (op->bulk)
		return op->bplan.gy;
	if (op->variant != BDA_FUSED_MASK && op->variant != BDA_FUSED_BYTEMASK)
		return op->plan.gy;
	mk = op->variant == BDA_FUSED_MASK ? BDA_MASK_BITS : BDA_MASK_BYTES;
	return ew_resident_gy(&op->plan, op->M,
			      op->dt == FP_BF16 ? bwd_rows_fn<__nv_bfloat16>(op->plan.vec, mk)
						: bwd_rows_fn<float>(op->plan.vec, mk));
}

template <typename T>
static int launch_bwd(const struct fp_op *op, int set, cudaStream_t st)
{
	constexpr int V = 16 / sizeof(T);
	const struct ew_plan *p = &op->plan;
	const dim3 grid(p->gx, p->gy), block(p->tx, p->ty);
	const size_t n = (size_t)op->M * op->N;
	const T *dy = (const T *)(op->dy + set * op->mnp);
	const char *saved = op->saved + set * op->saved_set;
	const uint32_t *words = (const uint32_t *)saved;
	const uint8_t *bytes = (const uint8_t *)saved;
	const uint64_t seed = op->seeds[set];

	switch (op->variant) {
	case BDA_UNFUSED:
		dropout_bytes_bwd_kernel<T><<<ew_flat_grid(n / V, (size_t)EW_THREADS * EW_UNROLL),
					     EW_THREADS, 0, st>>>(dy, bytes, (T *)op->out, n,
								  op->scale);
		if (CUDA_CHECK_LAUNCH("dropout_bytes_bwd_kernel"))
			return -1;
		if (p->vec)
			ew_colpart_kernel<T, V, true><<<grid, block, 0, st>>>(
				(const T *)op->out, op->partial, op->M, op->N);
		else
			ew_colpart_kernel<T, V, false><<<grid, block, 0, st>>>(
				(const T *)op->out, op->partial, op->M, op->N);
		if (CUDA_CHECK_LAUNCH("ew_colpart_kernel"))
			return -1;
		return ew_colsum<T>(op->partial, p->prows, op->N, (T *)op->dbias, op->pdl,
				     st);
	case BDA_FUSED_MASK:
		return fused_bwd<T, BDA_MASK_BITS>(op, dy, ew_mask_words<V>{ words }, words,
						   NULL, seed, "launch of fused_mask backward",
						   "launch of fused_mask bulk backward", st);
	case BDA_FUSED_BYTEMASK:
		return fused_bwd<T, BDA_MASK_BYTES>(op, dy, byte_mask<V>{ bytes }, NULL, bytes,
						    seed, "launch of fused_bytemask backward",
						    "launch of fused_bytemask bulk backward", st);
	default:
		return fused_bwd<T, BDA_MASK_NONE>(op, dy, regen_mask<V>{ seed, op->t }, NULL,
						   NULL, seed, "launch of fused_regen backward",
						   "launch of fused_regen bulk backward", st);
	}
}

/* The fused_regen kernels on a caller's pointers (dropout.h): the mask of
 * element e = i N + j is dropout_keep(seed, t, e), t = round(p 2^32). */
extern "C" long bda_partials(enum fp_dtype dt, long M, long N)
{
	return ew_plan_cols(M, N, fp_dtype_size(dt)).prows;
}

static void bda_api_op(struct fp_op *op, int bwd, enum fp_dtype dt, long M, long N,
		       double p, uint64_t *seed)
{
	memset(op, 0, sizeof *op);
	op->bwd = bwd;
	op->variant = BDA_FUSED_REGEN;
	op->dt = dt;
	op->M = M;
	op->N = N;
	op->es = fp_dtype_size(dt);
	op->t = (uint32_t)(p * 4294967296.0 + 0.5);
	op->scale = (float)(1.0 / (1.0 - p));
	op->seeds = seed;
	op->plan = bwd ? ew_plan_cols(M, N, op->es) : ew_plan_rows(M, N, op->es);
	// bwd_kernel's default; its partial rows fit ew_plan_cols' (bda_partials)
	op->bulk = bwd && ew_bulk_use(EW_BWD_AUTO, dt, N, op->es);
	op->pdl = ew_colsum_pdl(EW_CS_AUTO);
	if (op->bulk)
		op->bplan = ew_plan_bulk(M, N, op->es);
	if (bwd)
		op->gy = bwd_grid_rows(op);
}

extern "C" int bda_fused_fwd(enum fp_dtype dt, const void *x, const void *bias,
			     const void *residual, void *y, long M, long N, double p,
			     uint64_t seed, cudaStream_t st)
{
	struct fp_op op;

	bda_api_op(&op, 0, dt, M, N, p, &seed);
	op.x = (char *)x;
	op.bias = (char *)bias;
	op.res = (char *)residual;
	op.out = (char *)y;
	return dt == FP_BF16 ? launch_fwd<__nv_bfloat16>(&op, 0, st)
			     : launch_fwd<float>(&op, 0, st);
}

extern "C" int bda_fused_bwd(enum fp_dtype dt, const void *dy, void *dx, void *dbias,
			     float *partial, long M, long N, double p, uint64_t seed,
			     cudaStream_t st)
{
	struct fp_op op;

	bda_api_op(&op, 1, dt, M, N, p, &seed);
	op.dy = (char *)dy;
	op.out = (char *)dx;
	op.dbias = (char *)dbias;
	op.partial = partial;
	return dt == FP_BF16 ? launch_bwd<__nv_bfloat16>(&op, 0, st)
			     : launch_bwd<float>(&op, 0, st);
}

static int op_launch(struct fp_op *base, int set, cudaStream_t st)
{
	struct fp_op view;

	if (set < 0 || set >= base->nsets)
		return error("bias_dropout_add: set %d out of range [0, %d)", set,
			     base->nsets);
	set_view(base, set, &view);
	if (view.bwd)
		return view.dt == FP_BF16 ? launch_bwd<__nv_bfloat16>(&view, set, st)
					  : launch_bwd<float>(&view, set, st);
	return view.dt == FP_BF16 ? launch_fwd<__nv_bfloat16>(&view, set, st)
				  : launch_fwd<float>(&view, set, st);
}

// The saved mask of backward set `set`, drawn from its seed as the
// forward variant of the same name writes it.
static int make_saved(const struct fp_op *op, int set)
{
	const uint64_t n = (uint64_t)op->M * op->N;
	char *s = op->saved + set * op->saved_set;

	if (op->variant == BDA_FUSED_REGEN)
		return 0;
	mask_kernel<<<ew_flat_grid(n, EW_THREADS), EW_THREADS>>>(
		bda_saves_bytes(op->variant) ? (uint8_t *)s : NULL,
		op->variant == BDA_FUSED_MASK ? (uint32_t *)s : NULL, n,
		op->seeds[set], op->t);
	return CUDA_CHECK_LAUNCH("mask_kernel");
}

/* ------------------------------------------------------------------------ */
/* The workloads                                                            */
/* ------------------------------------------------------------------------ */

static const struct fp_param bda_params[] = {
	{ "M", FP_REQUIRED, 1, 1L << 31, "rows" },
	{ "N", FP_REQUIRED, 1, 1L << 30, "row width (elements)" },
	{ "drop", 100, 0, 999, "drop probability p in per mille (100: p = 0.1)" },
	{ NULL, 0, 0, 0, NULL }
};

static const char *const fwd_profiles[] = {
	"normal",  // x, residual ~ N(0, 1), bias ~ N(0, 0.25): what timing uses
	"large",   // x, residual ~ 1e30 N(0, 1): scaling by up to 1000 stays finite
	"cancel",  // x = -bias exactly: kept and dropped alike give y = residual,
		   // so a bias taken from the wrong column shows
	NULL
};
static const char *const bwd_profiles[] = {
	"normal",  // dy ~ N(0, 1)
	"large",   // dy ~ 1e30 N(0, 1): dbias sums of 1e34 stay finite in fp32
	NULL
};
enum { P_NORMAL, P_LARGE, P_CANCEL };

#define BDA_SUITE "M=16384,N=768;M=16384,N=4096"
#define BDA_QUICK "M=2048,N=768"
// N = 1 and odd N take the scalar row kernels (and the flattened bit-mask
// kernel, whose words straddle rows); N = 36 and 100 are 16-byte rows in
// fp32 but not in bf16, and not whole words; p = 0, 0.5 and 0.999 the
// threshold's ends; M = 16384 the performance shapes' rows (at N = 768
// the fused byte- and bit-mask backwards' resident grid on a large GPU:
// ew_resident_gy), M = 20001, N = 1030 that grid over a last band of one
// row, the scalar path (N not a multiple of 8 or 4); with
// bwd_kernel=bulk, M = 133, N = 1000 a last column strip of 29 (bf16) or 26
// (fp32) vectors and a last stage and block of few rows, M = 1 a block of
// one row.
#define BDA_TESTS "M=1,N=1;M=1,N=4097;M=3,N=1023;M=7,N=3;M=5,N=36;" \
	"M=64,N=100,drop=0;M=1024,N=4096,drop=500;M=3,N=65536,drop=999;" \
	"M=16384,N=768;M=133,N=1000;M=1,N=2048;M=20001,N=1030"

static const struct fp_kopt bwd_kopts[] = {
	{ "bwd_kernel", ew_bwd_kernel_values,
	  EW_BWD_KERNEL_HELP " (fused_mask, fused_regen, fused_bytemask)" },
	{ "colsum", ew_colsum_values, EW_COLSUM_HELP " (every variant)", "pdl" },
	{ NULL, NULL, NULL }
};

static const struct fp_variant fwd_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "3 kernels: h = x + bias; d = dropout(h) and a byte mask; y = d + residual",
	  NULL, "fused_bytemask" },
	{ "fused_mask", FP_FUSED,
	  "1 kernel: y and a 1-bit-per-element mask for the backward" },
	{ "fused_regen", FP_FUSED,
	  "1 kernel: y only; the backward redraws the mask from the seed" },
	{ "fused_bytemask", FP_FUSED,
	  "1 kernel: unfused's three as one: y and the byte mask (h and d on chip)" },
	{ NULL, FP_UNFUSED, NULL }
};

static const struct fp_variant bwd_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "3 kernels: dx = dy * byte mask / (1-p); dbias column partials of dx; "
	  "partial sum", NULL, "fused_bytemask" },
	{ "fused_mask", FP_FUSED,
	  "2 kernels: dx from dy and the bit mask with dbias partials; partial sum" },
	{ "fused_regen", FP_FUSED,
	  "2 kernels: dx from dy and the mask redrawn from the seed with dbias "
	  "partials; partial sum" },
	{ "fused_bytemask", FP_FUSED,
	  "2 kernels: dx from dy and the byte mask with dbias partials; partial sum" },
	{ NULL, FP_UNFUSED, NULL }
};

// Largest one-tensor size we accept: beyond any GPU, and far from overflow.
#define MAX_TENSOR_BYTES (1.0 * (1ull << 47))

static int bda_validate(const struct fp_shape *s, enum fp_dtype dt, char *why,
			size_t whylen)
{
	long M = s->v[0], N = s->v[1], drop = s->v[2];

	if (dt != FP_F32 && dt != FP_BF16)
		snprintf(why, whylen, "dtype %s: bias_dropout_add takes fp32 or bf16",
			 fp_dtype_name(dt));
	else if (M < 1 || N < 1)
		snprintf(why, whylen, "M=%ld,N=%ld: rows and row width must be at least 1",
			 M, N);
	else if (drop < 0 || drop > 999)
		snprintf(why, whylen, "drop=%ld: the drop probability in per mille must be "
			 "in [0, 999] (p = 1 leaves nothing to scale)", drop);
	else if ((double)M * (double)N * (double)fp_dtype_size(dt) > MAX_TENSOR_BYTES)
		snprintf(why, whylen, "M=%ld,N=%ld: one %s tensor would take %.3g TiB, "
			 "more than any GPU holds", M, N, fp_dtype_name(dt),
			 (double)M * (double)N * (double)fp_dtype_size(dt) / 0x1p40);
	else
		return 0;
	return -1;
}

// Bytes the forward variant keeps for its backward (model saved_bytes) and
// the backward reads: a byte or a bit per element, or nothing.
static size_t saved_size(long M, long N, int variant)
{
	if (bda_saves_bytes(variant))
		return (size_t)M * (size_t)N;
	return variant == BDA_FUSED_MASK ? ew_bits_bytes(M, N) : 0;
}

// One set's written buffers (fp_op.wbuf), padded, in carving order; the
// sizes go to z[] when z is not NULL.
static size_t written_bytes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
			    int variant, size_t z[5])
{
	const long M = s->v[0], N = s->v[1];
	const size_t es = fp_dtype_size(dt), mn = (size_t)M * N * es;
	size_t w[5] = { 0, 0, 0, 0, 0 }, sum = 0;

	w[0] = mn;  // y or dx
	if (!bwd && variant == BDA_UNFUSED) {
		w[1] = mn;                    // h
		w[2] = mn;                    // d
		w[3] = saved_size(M, N, variant);  // byte mask
	} else if (!bwd && variant != BDA_FUSED_REGEN) {
		w[3] = saved_size(M, N, variant);  // bit or byte mask
	} else if (bwd) {
		w[1] = (size_t)N * es;        // dbias
		w[2] = (size_t)ew_plan_cols(M, N, es).prows * N * sizeof(float);
	}
	for (int i = 0; i < 5; i++) {
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

	if (bwd)  // dy, the saved mask
		in = ns * mnp + ns * dev_pad(saved_size(s->v[0], s->v[1], variant));
	else      // x, residual, bias
		in = 2 * ns * mnp + ns * dev_pad((size_t)s->v[1] * es);
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
	const double saved = (double)saved_size(s->v[0], s->v[1], variant);

	memset(m, 0, sizeof *m);
	m->flops = 3 * mn;  // bias add, scale, residual add
	m->min_bytes = (3 * mn + N) * es;
	m->saved_bytes = saved;
	if (variant == BDA_UNFUSED)
		// bias add: x, bias in, h out; dropout: h in, d and the byte
		// mask out; add: d, residual in, y out
		m->variant_bytes = (7 * mn + N) * es + saved;
	else
		m->variant_bytes = m->min_bytes + saved;
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	const double M = (double)s->v[0], N = (double)s->v[1], mn = M * N;
	const double es = (double)fp_dtype_size(dt);
	const double saved = (double)saved_size(s->v[0], s->v[1], variant);

	memset(m, 0, sizeof *m);
	m->flops = 2 * mn;  // scale, column sum
	m->min_bytes = (2 * mn + N) * es;
	m->saved_bytes = saved;
	// The dbias partials (a row per block, M / 64 x N fp32 up to 1024 x N:
	// ew_plan_cols; fewer on a resident grid, ew_resident_gy) are written
	// and read back at once; they are expected to stay in L2 and are not
	// counted.
	if (variant == BDA_UNFUSED)
		// dx kernel: dy and the byte mask in, dx out; the column
		// partials read dx again
		m->variant_bytes = (3 * mn + N) * es + saved;
	else
		m->variant_bytes = m->min_bytes + saved;
}

static void op_destroy(struct fp_op *op)
{
	if (!op)
		return;
	cudaFree(op->x);
	cudaFree(op->res);
	cudaFree(op->bias);
	cudaFree(op->dy);
	cudaFree(op->saved);
	cudaFree(op->wbuf);
	free(op->seeds);
	free(op);
}

// bwdk, csk: the backward's options bwd_kernel (an EW_BWD_ value) and
// colsum (an EW_CS_ value).
static int op_create(int bwd, struct fp_op **out, const struct fp_shape *s,
		     enum fp_dtype dt, int variant, int nsets,
		     unsigned long long seed, int bwdk, int csk)
{
	struct fp_op *op;
	size_t z[5], elems, nbp;
	char why[160], *cur;

	*out = NULL;
	if (bda_validate(s, dt, why, sizeof why))
		return error("bias_dropout_add: %s", why);
	if (nsets < 1 || variant < 0 || variant > BDA_FUSED_BYTEMASK)
		return error("bias_dropout_add: bad instance (variant %d, %d input sets)",
			     variant, nsets);
	if (bwdk < 0 || bwdk >= EW_BWD_NVALUES)
		return error("bias_dropout_add: kernel option bwd_kernel: no value %d", bwdk);
	if (csk < 0 || csk >= EW_CS_NVALUES)
		return error("bias_dropout_add: kernel option colsum: no value %d", csk);
	op = (struct fp_op *)xcalloc(1, sizeof *op);
	op->bwd = bwd;
	op->variant = variant;
	op->nsets = nsets;
	op->dt = dt;
	op->M = s->v[0];
	op->N = s->v[1];
	op->drop = s->v[2];
	op->es = fp_dtype_size(dt);
	op->t = dropout_threshold(op->drop);
	op->scale = (float)bda_scale(op->drop);
	op->plan = bwd ? ew_plan_cols(op->M, op->N, op->es)
		       : ew_plan_rows(op->M, op->N, op->es);
	op->bulk = bwd && variant != BDA_UNFUSED && ew_bulk_use(bwdk, dt, op->N, op->es);
	op->pdl = bwd && ew_colsum_pdl(csk);
	if (op->bulk)
		op->bplan = ew_plan_bulk(op->M, op->N, op->es);
	op->gy = bwd ? bwd_grid_rows(op) : op->plan.gy;
	elems = (size_t)op->M * op->N;
	op->mnp = dev_pad(elems * op->es);
	nbp = dev_pad((size_t)op->N * op->es);
	op->seeds = (uint64_t *)xmalloc((size_t)nsets * sizeof *op->seeds);
	for (int i = 0; i < nsets; i++)
		op->seeds[i] = bda_seed(seed, i);
	op->saved_set = dev_pad(saved_size(op->M, op->N, variant));
	op->wset = written_bytes(bwd, s, dt, variant, z);
	if ((!bwd && (dev_alloc(&op->x, nsets * op->mnp) ||
		      dev_alloc(&op->res, nsets * op->mnp) ||
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
		op->d = (char *)dev_carve(&cur, z[2]);
		if (bda_saves_bytes(variant))
			op->bytes = (uint8_t *)dev_carve(&cur, z[3]);
		else
			op->words = (uint32_t *)dev_carve(&cur, z[3]);
	}
	for (int i = 0; i < nsets; i++) {
		uint64_t sd = splitmix64(seed + 0x100 * (uint64_t)i);

		if (bwd) {
			if (dev_fill_normal(op->dy + i * op->mnp, dt, elems, sd, 0.f, 1.f, 0) ||
			    make_saved(op, i))
				goto out_free;
		} else if (dev_fill_normal(op->x + i * op->mnp, dt, elems, sd, 0.f, 1.f, 0) ||
			   dev_fill_normal(op->res + i * op->mnp, dt, elems,
					   splitmix64(sd + 1), 0.f, 1.f, 0) ||
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

// workload->kernel(): which row kernel the shape picked.
static void op_kernel(const struct fp_op *op, char *buf, size_t n)
{
	const struct ew_plan *p = &op->plan;
	const int flat = !op->bwd && op->variant == BDA_FUSED_MASK &&
			 !(p->vec && op->N % 32 == 0);

	if (!op->bwd && op->variant == BDA_UNFUSED)
		snprintf(buf, n, "rows %s (bias add), flattened 16-byte (dropout, add)",
			 p->vec ? "16-byte" : "scalar");
	else if (flat)
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

// What one case's check computes on the CPU, kept in the reference cache
// (checkref.h): the inputs as the device holds them, the Philox seed, the
// reference of the compared rows and their mask, and dbias in full.
struct bda_ref {
	char *a, *b;          // x and residual (forward) or dy (backward), dt bytes
	double *bias;         // forward: N values, rounded to dt
	uint64_t pseed;       // the Philox seed of the check
	long nrows, *rows;    // rows compared (all unless M x N is large)
	double *ref;          // nrows x N: y or dx of rows[s] at s N
	double *floor;        // forward: nrows, the sums of the squares of y's
	                      // two terms (dropout(x + bias), residual) a row
	unsigned char *mask;  // nrows x N: the mask of those rows
	double *dbias;        // backward: N, over every row: 3 N, then the sums
	                      // of dx rounded to dt (unfused's), then the sums
	                      // of dx's squares (the floors: cmp_rel)
};

static void bda_ref_free(void *p)
{
	struct bda_ref *e = (struct bda_ref *)p;

	free(e->a);
	free(e->b);
	free(e->bias);
	free(e->rows);
	free(e->ref);
	free(e->floor);
	free(e->mask);
	free(e->dbias);
	free(e);
}

// One chunk of rows or columns of a case (par_for).
struct bda_job {
	const struct fp_op *op;
	struct bda_ref *e;
	int profile;
	uint64_t base;  // the stream drawn from
	char *dst;      // the tensor drawn
	double scale;   // of the draw
};

static void draw_rows(size_t lo, size_t hi, void *arg)
{
	const struct bda_job *j = (const struct bda_job *)arg;
	const long N = j->op->N;
	double *v = (double *)xmalloc((size_t)N * sizeof *v);
	struct fp_rng g;

	for (size_t r = lo; r < hi; r++) {
		rng_seed_item(&g, j->base, (long)r);
		for (long k = 0; k < N; k++)
			v[k] = j->scale * rng_normal(&g);
		if (j->profile == P_CANCEL && j->e->bias)
			for (long k = 0; k < N; k++)
				v[k] = -j->e->bias[k];
		host_round(v, (size_t)N, j->op->dt);
		check_encode(j->dst + r * N * j->op->es, j->op->dt, v, (size_t)N);
	}
	free(v);
}

// The reference and the mask of compared rows [lo, hi).
static void ref_rows(size_t lo, size_t hi, void *arg)
{
	const struct bda_job *j = (const struct bda_job *)arg;
	const struct fp_op *op = j->op;
	const struct bda_ref *e = j->e;
	const long N = op->N;
	double *a = (double *)xmalloc(2 * (size_t)N * sizeof *a), *b = a + N;
	double *db = (double *)xcalloc((size_t)N, sizeof *db);

	for (size_t s = lo; s < hi; s++) {
		const long row = e->rows[s];

		check_decode(a, e->a + (size_t)row * N * op->es, op->dt, (size_t)N);
		if (op->bwd) {
			bda_ref_bwd(a, e->ref + s * N, db, row, 1, N, op->drop, e->pseed);
		} else {
			check_decode(b, e->b + (size_t)row * N * op->es, op->dt, (size_t)N);
			bda_ref_fwd(a, e->bias, b, e->ref + s * N, row, 1, N, op->drop,
				    e->pseed);
		}
		bda_ref_mask(e->pseed, op->drop, (uint64_t)row * N, (size_t)N,
			     e->mask + s * N);
		if (!op->bwd) {
			// y = d + residual: where the two cancel, y's error is
			// the rounding d carries (the unfused variant stores
			// x + bias and d in dt), not a fraction of y.
			double f = 0;

			for (long k = 0; k < N; k++) {
				const double d = e->mask[s * N + k] ? (a[k] + e->bias[k]) *
								      bda_scale(op->drop)
								    : 0;

				f += d * d + b[k] * b[k];
			}
			e->floor[s] = f;
		}
	}
	free(a);
	free(db);
}

// dbias of columns [lo, hi) over every row, summed in row order: the same
// bits however the columns are split. Twice: the sums of dx, and (into
// dbias + N) the sums of dx rounded to the storage type, which is what
// the unfused variant's column sums read back by design (its dx is the
// stored one). They differ by dx's rounding, 2^-9 an element in bf16,
// which a column whose values cancel can raise to more than bf16's
// tolerance of its sum (M = 7 rows of 1e30 did, 1.1 %); the fused
// variants sum dx before it is rounded.
static void ref_dbias(size_t lo, size_t hi, void *arg)
{
	const struct bda_job *j = (const struct bda_job *)arg;
	const struct fp_op *op = j->op;
	const size_t w = hi - lo;
	double *dy = (double *)xmalloc(2 * w * sizeof *dy), *dx = dy + w;
	double *db = (double *)xcalloc(3 * w, sizeof *db), *dbr = db + w, *sq = dbr + w;

	for (long i = 0; i < op->M; i++) {
		check_decode(dy, j->e->a + ((size_t)i * op->N + lo) * op->es, op->dt, w);
		for (size_t k = 0; k < w; k++) {
			const uint64_t el = (uint64_t)i * op->N + lo + k;

			dx[k] = dropout_keep(j->e->pseed, op->t, el) ? dy[k] * bda_scale(op->drop) : 0;
			db[k] += dx[k];
			sq[k] += dx[k] * dx[k];
		}
		host_round(dx, w, op->dt);
		for (size_t k = 0; k < w; k++)
			dbr[k] += dx[k];
	}
	memcpy(j->e->dbias + lo, db, w * sizeof *db);
	memcpy(j->e->dbias + op->N + lo, dbr, w * sizeof *dbr);
	memcpy(j->e->dbias + 2 * op->N + lo, sq, w * sizeof *sq);
	free(dy);
	free(db);
}

static struct bda_ref *bda_reference(const struct fp_op *op, int profile,
				     unsigned long long seed)
{
	const long M = op->M, N = op->N;
	const size_t E = (size_t)M * N, grain = par_grain_rows((size_t)N);
	struct ref_key key;
	struct bda_ref *e;
	struct bda_job job;
	struct fp_rng rng;

	memset(&key, 0, sizeof key);
	snprintf(key.what, sizeof key.what, "bias_dropout_add_%s", op->bwd ? "bwd" : "fwd");
	key.dims[0] = M;
	key.dims[1] = N;
	key.dims[2] = op->drop;
	key.dt = op->dt;
	key.profile = profile;
	key.seed = seed;
	if ((e = (struct bda_ref *)refcache_find(&key)))
		return e;
	e = (struct bda_ref *)xcalloc(1, sizeof *e);
	e->pseed = bda_seed(seed, 0);
	rng_seed(&rng, seed);
	memset(&job, 0, sizeof job);
	job.op = op;
	job.e = e;
	job.profile = profile;
	job.scale = profile == P_LARGE ? 1e30 : 1.0;
	if (!op->bwd) {
		e->bias = (double *)xmalloc((size_t)N * sizeof *e->bias);
		for (long j = 0; j < N; j++)
			e->bias[j] = job.scale * 0.5 * rng_normal(&rng);
		host_round(e->bias, (size_t)N, op->dt);
	}
	e->a = (char *)xmalloc(E * op->es);
	job.base = rng_next(&rng);
	job.dst = e->a;
	par_for((size_t)M, grain, draw_rows, &job);
	if (!op->bwd) {
		e->b = (char *)xmalloc(E * op->es);
		job.base = rng_next(&rng);
		job.dst = e->b;
		job.profile = P_NORMAL;  // the residual: cancel applies to x only
		par_for((size_t)M, grain, draw_rows, &job);
	}
	e->nrows = check_sample_rows(M, (double)N, seed ^ 0x94d049bb133111ebull, &e->rows);
	e->ref = (double *)xmalloc((size_t)e->nrows * N * sizeof *e->ref);
	e->mask = (unsigned char *)xmalloc((size_t)e->nrows * N);
	if (!op->bwd)
		e->floor = (double *)xmalloc((size_t)e->nrows * sizeof *e->floor);
	par_for((size_t)e->nrows, grain, ref_rows, &job);
	if (op->bwd) {
		e->dbias = (double *)xmalloc(3 * (size_t)N * sizeof *e->dbias);
		par_for((size_t)N, 64, ref_dbias, &job);
	}
	refcache_keep(&key, e, E * op->es * (op->bwd ? 1 : 2) +
		      (size_t)e->nrows * (N * (sizeof(double) + 1) + sizeof(double)) +
			      4 * N * sizeof(double),
		      bda_ref_free);
	return e;
}

// The mask the forward saved (byte or bit mask) against the reference's,
// on the compared rows: it must match bit for bit.
static int check_saved(const struct fp_op *op, const struct bda_ref *e,
		       struct fp_check *r)
{
	const size_t E = (size_t)op->M * op->N;
	const size_t bytes = bda_saves_bytes(op->variant) ? E : ew_bits_bytes(op->M, op->N);
	unsigned char *got = (unsigned char *)xmalloc(bytes);
	const void *src = bda_saves_bytes(op->variant) ? (const void *)op->bytes
						     : (const void *)op->words;
	int rc = -1;

	if (CUDA_CHECK(cudaMemcpy(got, src, bytes, cudaMemcpyDeviceToHost)))
		goto out_free;
	for (long s = 0; s < e->nrows; s++) {
		for (long j = 0; j < op->N; j++) {
			const size_t el = (size_t)e->rows[s] * op->N + j;
			const int g = bda_saves_bytes(op->variant) ? got[el]
				: (got[el / 8] >> (el % 8)) & 1;

			if (g != e->mask[s * op->N + j] && r->passed) {
				r->passed = 0;
				snprintf(r->detail, sizeof r->detail,
					 "saved mask: element %zu is %d, the reference's %d",
					 el, g, e->mask[s * op->N + j]);
			}
		}
	}
	rc = 0;
out_free:
	free(got);
	return rc;
}

// Set 0's launch again (ew_check_repeat).
static int relaunch(struct fp_op *op)
{
	return op_launch(op, 0, 0);
}

// Fresh inputs from profile and seed into set 0 (and its saved mask drawn
// with the check's Philox seed), outputs poisoned, one run, compared with
// the double reference on the very values the GPU saw: y or dx on every
// row or a sample of rows (check_sample_rows), dbias in full and bit for
// bit the same from a second launch, the saved mask bit for bit.
static int op_check(struct fp_op *op, int profile, unsigned long long seed,
		    struct fp_check *r)
{
	const long M = op->M, N = op->N;
	const size_t E = (size_t)M * N, bytes = E * op->es;
	const struct bda_ref *e;
	char *got = NULL;
	double *db = NULL;
	struct fp_cmp c;
	int rc = -1;

	if (profile < 0 || profile >= (op->bwd ? 2 : 3))
		return error("bias_dropout_add: no input profile %d", profile);
	e = bda_reference(op, profile, seed);
	op->seeds[0] = e->pseed;
	if (op->bwd) {
		if (CUDA_CHECK(cudaMemcpy(op->dy, e->a, bytes, cudaMemcpyHostToDevice)) ||
		    make_saved(op, 0) || dev_poison(op->dbias, (size_t)N * op->es) ||
		    dev_poison(op->partial, (size_t)op->plan.prows * N * sizeof(float)))
			goto out_free;
	} else if (CUDA_CHECK(cudaMemcpy(op->x, e->a, bytes, cudaMemcpyHostToDevice)) ||
		   CUDA_CHECK(cudaMemcpy(op->res, e->b, bytes, cudaMemcpyHostToDevice)) ||
		   dev_upload(op->bias, op->dt, e->bias, (size_t)N) ||
		   (op->h && dev_poison(op->h, bytes)) ||
		   (op->d && dev_poison(op->d, bytes)) ||
		   (op->bytes && dev_poison(op->bytes, E)) ||
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
	if (!op->bwd)
		cmp_add_floor(&c, e->floor, (size_t)e->nrows);
	check_output(r, op->bwd ? "dx" : "y", &c);
	if (op->bwd) {
		db = (double *)xmalloc((size_t)N * sizeof *db);
		if (dev_download(db, op->dbias, op->dt, (size_t)N))
			goto out_free;
		cmp_init(&c);
		cmp_add(&c, db, e->dbias + (op->variant == BDA_UNFUSED ? N : 0), (size_t)N);
		cmp_add_floor(&c, e->dbias + 2 * N, (size_t)N);
		check_output(r, "dbias", &c);
		if (ew_check_repeat(op, op->dbias, (size_t)N * op->es, relaunch, r))
			goto out_free;
	} else if (op->variant != BDA_FUSED_REGEN && check_saved(op, e, r)) {
		goto out_free;
	}
	check_note_rows(r, e->nrows, M);
	rc = 0;

out_free:
	free(got);
	free(db);
	return rc;
}

extern "C" int bda_probe(int bwd, int variant, long M, long N, long drop,
			 uint64_t seed, unsigned char *implied, unsigned char *saved)
{
	struct fp_shape s;
	struct fp_op *op = NULL;
	const size_t E = (size_t)M * N;
	const unsigned g = ew_flat_grid(E, EW_THREADS);
	unsigned char *raw = NULL;
	float *out = NULL;
	int rc = -1;

	memset(&s, 0, sizeof s);
	s.v[0] = M;
	s.v[1] = N;
	s.v[2] = drop;
	if (op_create(bwd, &op, &s, FP_F32, variant, 1, seed, EW_BWD_AUTO, EW_CS_AUTO))
		return -1;
	if (bwd) {
		fill_kernel<float><<<g, EW_THREADS>>>((float *)op->dy, E, 1.f);
	} else {
		fill_kernel<float><<<g, EW_THREADS>>>((float *)op->x, E, 1.f);
		fill_kernel<float><<<g, EW_THREADS>>>((float *)op->res, E, 0.f);
		fill_kernel<float><<<g, EW_THREADS>>>((float *)op->bias, (size_t)N, 0.f);
	}
	if (CUDA_CHECK_LAUNCH("fill_kernel") || dev_poison(op->out, E * sizeof(float)) ||
	    op_launch(op, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	out = (float *)xmalloc(E * sizeof *out);
	if (CUDA_CHECK(cudaMemcpy(out, op->out, E * sizeof *out, cudaMemcpyDeviceToHost)))
		goto out_free;
	for (size_t e = 0; e < E; e++)
		implied[e] = out[e] != 0.f;
	if (!bwd && saved && variant != BDA_FUSED_REGEN) {
		const size_t n = bda_saves_bytes(variant) ? E : ew_bits_bytes(M, N);

		raw = (unsigned char *)xmalloc(n);
		if (CUDA_CHECK(cudaMemcpy(raw, bda_saves_bytes(variant) ? (void *)op->bytes
							       : (void *)op->words,
					  n, cudaMemcpyDeviceToHost)))
			goto out_free;
		for (size_t e = 0; e < E; e++)
			saved[e] = bda_saves_bytes(variant) ? raw[e] : (raw[e / 8] >> (e % 8)) & 1;
	}
	rc = 0;
out_free:
	free(out);
	free(raw);
	op_destroy(op);
	return rc;
}

extern "C" const struct workload wl_bias_dropout_add_fwd = {
	.name = "bias_dropout_add_fwd",
	.summary = "y = dropout(x + bias, p) + residual, Philox 4x32-10 mask from a seed",
	.params = bda_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = fwd_profiles,
	.suite = BDA_SUITE,
	.quick = BDA_QUICK,
	.tests = BDA_TESTS,
	.backward = "bias_dropout_add_bwd",
	.validate = bda_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.kernel = op_kernel,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};

extern "C" const struct workload wl_bias_dropout_add_bwd = {
	.name = "bias_dropout_add_bwd",
	.summary = "dx = dy * mask / (1 - p), dbias = column sums of dx "
		   "(dresidual = dy, the identity)",
	.params = bda_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = bwd_profiles,
	.suite = BDA_SUITE,
	.quick = BDA_QUICK,
	.tests = BDA_TESTS,
	.kopts = bwd_kopts,
	.validate = bda_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.kernel = op_kernel,
	.launch = op_launch,
	.check = op_check,
	.destroy = op_destroy,
};
