// workload.cu - the LayerNorm+Linear workloads, forward (ln_linear_fwd) and
// backward (ln_linear_bwd), fp32 and bf16 (bf16 storage, fp32
// accumulation): the forward's kernel choice and launch, the kernel
// options, the kernel() line, then the contract (limits, sizes, models,
// create, the check against ref.c's double references, the two workload
// definitions). The kernels are in the files internal.h lists; it also
// holds the operation, its napkin math and the numerics they share.
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "internal.h"
#include "layernorm/layernorm.h"
#include "par.h"
#include "util.h"

static int fwd_pass_possible(const struct fp_shape *s, enum fp_dtype dt);

// ---------------------------------------------------------------------------
// The forward's kernel choice and the launch

// The forward's kernel, chosen once per instance from the variant, the
// rows' alignment, the tile count against the SMs, the device and the
// options; an option that cannot serve falls back as described in its help
// line, and kernel() says what runs:
//   naive, unfused                  their one kernel sequence
//   fused, rows not 16-byte aligned k_fwd_fused (fwd_simt.cu)
//   fused, too few 128 x 256 tiles  k_fwd_fused_mma 64 x 128 (fill half the
//                                   SMs, else small M would not spread)
//   fused fp32, or no sm_90a code   k_fwd_fused_mma 128 x 256 (3xTF32 in fp32)
//   fused bf16 on Hopper            k_fwd_fused_wgmma below K = WS_MIN_K,
//                                   k_fwd_fused_ws from there (gemm=)
// For k_fwd_fused_ws also the cluster size (clusters=: pairs sharing each W'
// tile by multicast where W' has more than one tile column, N > 256; they
// gained at N = 4096 and 16384, nothing at N = 1024 and lost a little at
// N = 256: bench/RESULTS.md, "fuseprof run times a case's variants side by
// side; the bf16 fused forward in block pairs (H100)") and whether the row
// statistics take a pass of their own (stats_pass=, see WS_PASS_N).
static int fwd_choose(struct lnl_op *op)
{
	const long big = ((op->M + 127) / 128) * ((op->N + 255) / 256);
	const int gemm = op->ko.v[OPT_GEMM], clusters = op->ko.v[OPT_CLUSTERS];
	const int pass = op->ko.v[OPT_STATS_PASS];
	const struct fp_shape sh = { { op->M, op->K, op->N } };
	int hopper = 0;

	op->ws_cl = 1;
	op->ws_pairs = op->ws_pass = 0;
	if (op->variant != FWD_FUSED) {
		op->fk = op->variant == FWD_NAIVE ? FK_NAIVE : FK_UNFUSED;
		return 0;
	}
	if (fwd_mma_setup() || fwd_wgmma_setup(&hopper))
		return -1;
	if (vec_width(op->K, op->dt) == 1) {
		op->fk = FK_SIMT;
		return 0;
	}
	if (2 * big < op->sms) {
		op->fk = FK_MMA_SMALL;
		return 0;
	}
	if (op->dt != FP_BF16 || !hopper || gemm == GEMM_MMA) {
		op->fk = FK_MMA;
		return 0;
	}
	if (gemm == GEMM_WGMMA || (gemm == GEMM_AUTO && op->K < WS_MIN_K)) {
		op->fk = FK_WGMMA;
		return 0;
	}
	op->fk = FK_WS;
	op->ws_pass = fwd_pass_possible(&sh, op->dt) &&
		      (pass == PASS_ON || (pass == PASS_AUTO && op->N >= WS_PASS_N));
	op->ws_cl = clusters == CLUSTERS_AUTO ? (op->N > 256 ? 2 : 1)
						: clusters == CLUSTERS_2 ? 2 : 1;
	if (op->ws_cl == 2) {
		if (ws_pairs_resident(op->sms, &op->ws_pairs))
			return -1;
		if (op->ws_pairs < 1)
			op->ws_cl = 1;  // no room for a pair: one block a cluster
	}
	return 0;
}

static int fwd_launch(const struct lnl_op *op, const void *x, cudaStream_t st)
{
	switch (op->fk) {
	case FK_NAIVE:
		return fwd_naive_launch(op, x, st);
	case FK_UNFUSED:  // the LayerNorm module's row kernel
		return layernorm_fwd(op->dt, x, op->gamma, op->beta, op->h, NULL,
				      op->M, op->K, st) ||
		       lt_run(&op->g0, op->lt, op->W, op->h, op->y, op->workspace, st) ? -1 : 0;
	case FK_SIMT:
		return fwd_simt_launch(op, x, st);
	case FK_MMA_SMALL:
		return fwd_mma_launch(op, x, 0, st);
	case FK_MMA:
		return fwd_mma_launch(op, x, 1, st);
	case FK_WGMMA:
		return fwd_wgmma_launch(op, x, st);
	case FK_WS:
		return fwd_ws_launch(op, x, st);
	}
	return error("ln_linear_fwd: no kernel %d", (int)op->fk);
}

// p, a written buffer of set 0 (or NULL), moved to the set off bytes on.
static void *in_set(void *p, size_t off)
{
	return p ? (char *)p + off : NULL;
}

// v = op as seen by a launch of set `set`: its written buffers set * wset
// bytes past set 0's (the inputs are offset by the launch).
static void set_view(const struct lnl_op *op, int set, struct lnl_op *v)
{
	const size_t off = (size_t)set * op->wset;

	*v = *op;
	v->y = in_set(op->y, off);
	v->h = in_set(op->h, off);
	v->stats = (float *)in_set(op->stats, off);
	v->dx = in_set(op->dx, off);
	v->dW = in_set(op->dW, off);
	v->dg = in_set(op->dg, off);
	v->dbeta = in_set(op->dbeta, off);
	v->db = in_set(op->db, off);
	v->dh = in_set(op->dh, off);
	v->part = (float *)in_set(op->part, off);
	v->acc = (float *)in_set(op->acc, off);
	v->workspace = in_set(op->workspace, off);
}

static int lnl_launch(struct fp_op *fop, int set, cudaStream_t st)
{
	const struct lnl_op *base = (const struct lnl_op *)fop;
	struct lnl_op view;
	const void *x, *dy;

	if (set < 0 || set >= base->nsets)
		return error("ln_linear: set %d out of range [0, %d)", set, base->nsets);
	set_view(base, set, &view);
	x = base->x + (size_t)set * base->xset;
	dy = base->dy ? base->dy + (size_t)set * base->dyset : NULL;
	return base->bwd ? bwd_launch(&view, x, dy, st) : fwd_launch(&view, x, st);
}

// What fwd_choose picked (forward) or which LayerNorm backward the fused
// backward runs (rows the register kernels hold, or not), as one line.
static void lnl_kernel(const struct fp_op *fop, char *buf, size_t n)
{
	const struct lnl_op *op = (const struct lnl_op *)fop;
	const char *loads = vec_width(op->K, op->dt) > 1 ? "16-byte loads" : "element loads";
	const char *tf = op->dt == FP_BF16 ? "" : "3xTF32 ";
	const char *unfused = "LayerNorm rows, cuBLASLt dW and dh, LayerNorm "
			      "backward, db column sums";

	if (op->bwd) {
		if (op->variant == BWD_NAIVE)
			snprintf(buf, n, "one thread a row, fp32 atomics, %s", loads);
		else if (op->variant == BWD_FUSED && op->lnh)
			snprintf(buf, n, "cuBLASLt dh, LayerNorm backward recomputing h "
				 "(rows in registers), cuBLASLt dW, db column sums");
		else
			snprintf(buf, n, "%s%s", op->variant == BWD_FUSED ?
				 "rows too wide to recompute in registers: " : "", unfused);
		return;
	}
	switch (op->fk) {
	case FK_NAIVE:
		snprintf(buf, n, "one thread a row, %s", loads);
		break;
	case FK_UNFUSED:
		snprintf(buf, n, "LayerNorm rows + cuBLASLt (bias in its epilogue)");
		break;
	case FK_SIMT:
		snprintf(buf, n, "first fused kernel 128x128 on %s, element loads",
			 op->dt == FP_BF16 ? "WMMA" : "FMA");
		break;
	case FK_MMA_SMALL:
		snprintf(buf, n, "%smma.sync 64x128", tf);
		break;
	case FK_MMA:
		snprintf(buf, n, "%smma.sync 128x256", tf);
		break;
	case FK_WGMMA:
		snprintf(buf, n, "wgmma 128x256");
		break;
	case FK_WS:
		snprintf(buf, n, "wgmma warp-specialized 128x256, clusters of %d%s",
			 op->ws_cl, op->ws_pass ? ", statistics pass" : "");
		break;
	}
}

// The forward's kernel options (values[0], the default, is today's choice).
static const char *const gemm_values[] = { "auto", "wgmma-ws", "wgmma", "mma", NULL };
static const char *const clusters_values[] = { "auto", "1", "2", NULL };
static const char *const pass_values[] = { "auto", "on", "off", NULL };
static const struct fp_kopt fwd_kopts[] = {
	{ "gemm", gemm_values,
	  "fused bf16 tensor-core kernel: wgmma-ws (warp-specialized), wgmma (both Hopper "
	  "only), mma (mma.sync); auto: wgmma-ws from K = 512, wgmma below, mma off Hopper; "
	  "fp32, unaligned rows and too few tiles for the SMs keep their mma.sync/first kernel" },
	{ "clusters", clusters_values,
	  "blocks a cluster of the warp-specialized kernel: 2 share each W' tile by multicast "
	  "(1 where no pair fits); auto: 2 where N > 256" },
	{ "stats_pass", pass_values,
	  "row statistics of the warp-specialized kernel from a pass of their own (on) or "
	  "summed from its tiles (off); bf16 from K = 2048 only; auto: on from N = 2048" },
	{ NULL, NULL, NULL },
};

// ---------------------------------------------------------------------------
// The workload contract

#define LNL_MAX_M (1L << 22)   // column-sum chunks: M / 128 <= 65535 grid rows
#define LNL_MAX_KN (1L << 20)  // in-row indices are 32-bit
#define LNL_MAX_ELEMS (1L << 34)
// Relative error bounds (L2 norm of the error over the L2 norm of the
// reference, per output). fp32: GEMM summation order and fp32 statistics
// give ~1e-6; 1e-4 leaves room for K = 4096 sums and rstd up to 316 (the
// constant profile). bf16: the normalised x (or shifted x) and the outputs
// are rounded to bf16 (2^-9 relative each): ~4e-3 at worst.
#define LNL_TOL_FP32 1e-4
#define LNL_TOL_BF16 1e-2

static int lnl_validate(const struct fp_shape *s, enum fp_dtype dt, char *why,
			size_t n)
{
	long M = s->v[0], K = s->v[1], N = s->v[2];

	if (dt != FP_F32 && dt != FP_BF16)
		snprintf(why, n, "dtype %d is not supported (fp32, bf16)", (int)dt);
	else if (M < 1)
		snprintf(why, n, "M=%ld: there must be at least 1 row", M);
	else if (K < 1)
		snprintf(why, n, "K=%ld: rows must have at least 1 feature", K);
	else if (N < 1)
		snprintf(why, n, "N=%ld: there must be at least 1 output feature", N);
	else if (M > LNL_MAX_M)
		snprintf(why, n, "M=%ld: at most %ld rows", M, LNL_MAX_M);
	else if (K > LNL_MAX_KN)
		snprintf(why, n, "K=%ld: at most %ld features (32-bit in-row indexing)",
			 K, LNL_MAX_KN);
	else if (N > LNL_MAX_KN)
		snprintf(why, n, "N=%ld: at most %ld output features (32-bit in-row indexing)",
			 N, LNL_MAX_KN);
	else if ((double)M * K > (double)LNL_MAX_ELEMS || (double)M * N > (double)LNL_MAX_ELEMS)
		snprintf(why, n, "M=%ld: x or y would exceed 2^34 elements", M);
	else
		return 0;
	return -1;
}

// Whether a bf16 fused forward's statistics pass may run at this shape
// (whatever the options say): create() allocates its buffer there, so that
// device_bytes(), which knows no options, counts what create() allocates.
static int fwd_pass_possible(const struct fp_shape *s, enum fp_dtype dt)
{
	return dt == FP_BF16 && s->v[1] >= WS_PASS_K;
}

// Whether it runs by default (stats_pass=auto), where the warp-specialized
// kernel serves: only that kernel has the choice, and the pass was measured
// at K = 4096 only, so below K = WS_PASS_K the sums stay in the load path.
static int fwd_pass_auto(const struct fp_shape *s, enum fp_dtype dt)
{
	return fwd_pass_possible(s, dt) && s->v[2] >= WS_PASS_N;
}

// Sizes of everything an instance allocates, shared by create() and
// device_bytes() so the two cannot drift apart. Each written buffer is
// counted once here; wset, their padded sum, is one set's share of wbuf.
struct lnl_sizes {
	size_t xset, dyset, vecK, vecN, W;
	size_t Wf, fold;  // the fused forward's W' and s, b' (fp32, N each)
	size_t y, h, stats, dx, dW, dg, db, dh, part, acc, workspace;  // written
	size_t wset, total;
};

static void lnl_sizes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
		      int variant, int nsets, struct lnl_sizes *z)
{
	size_t M = (size_t)s->v[0], K = (size_t)s->v[1], N = (size_t)s->v[2];
	size_t es = fp_dtype_size(dt), R = (M + COLSUM_ROWS - 1) / COLSUM_ROWS;

	memset(z, 0, sizeof *z);
	z->xset = dev_pad(M * K * es);
	z->vecK = dev_pad(K * es);
	z->vecN = dev_pad(N * es);
	z->W = dev_pad(N * K * es);
	if (!bwd) {
		z->y = dev_pad(M * N * es);
		if (variant == FWD_UNFUSED) {
			z->h = z->xset;
			z->workspace = LT_WORKSPACE_BYTES;
		}
		if (variant == FWD_FUSED) {  // W', s, b'; the statistics
			z->Wf = dev_pad((N + 31) / 32 * 32 * K * es);
			z->fold = 2 * dev_pad(N * sizeof(float));
			if (fwd_pass_possible(s, dt))
				z->stats = dev_pad(3 * M * sizeof(float));
		}
		z->wset = z->y + z->h + z->stats + z->workspace;
		z->total = (size_t)nsets * (z->xset + z->wset) + 2 * z->vecK + z->W +
			   z->vecN + z->Wf + z->fold;
		return;
	}
	z->dyset = dev_pad(M * N * es);
	z->dx = z->xset;
	z->dW = z->W;
	z->dg = 2 * z->vecK;  // dgamma, then dbeta K elements on
	z->db = z->vecN;
	if (variant == BWD_NAIVE) {
		z->acc = dev_pad((N * K + 2 * K + N) * sizeof(float));
	} else {
		z->h = z->xset;
		z->stats = dev_pad(3 * M * sizeof(float));
		z->dh = dev_pad(M * K * es);
		// db's column-sum partials, or the LayerNorm backward's (at
		// most LNL_PARTIALS blocks of 2 K)
		z->part = 2 * R * N > 2 * LNL_PARTIALS * K ? 2 * R * N
							   : 2 * LNL_PARTIALS * K;
		z->part = dev_pad(z->part * sizeof(float));
		z->workspace = LT_WORKSPACE_BYTES;
	}
	// inputs: x, dy sets; gamma, beta, W. written, per set: dx, dW,
	// dgamma, dbeta, db and the scratch.
	z->wset = z->dx + z->dW + z->dg + z->db + z->acc + z->h + z->stats +
		  z->dh + z->part + z->workspace;
	z->total = (size_t)nsets * (z->xset + z->dyset + z->wset) + 2 * z->vecK +
		   z->W;
}

static size_t fwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	struct lnl_sizes z;

	lnl_sizes(0, s, dt, variant, nsets, &z);
	return z.total;
}

static size_t bwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	struct lnl_sizes z;

	lnl_sizes(1, s, dt, variant, nsets, &z);
	return z.total;
}

// Extra DRAM reads of a weight of wbytes by a GEMM that walks M rows in
// groups of gm rows (8 tiles of 128 for the fused kernel; cuBLAS's
// rasterisation is similar): none while the weight stays in L2 (counted as
// 16 MB of the H100's 50 MB, leaving room for the streamed operand), else
// one more read per row group.
static double weight_rereads(double M, double wbytes, double gm)
{
	if (wbytes <= 16e6)
		return 0;
	return (ceil(M / gm) - 1) * wbytes;
}

static void fwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], K = (double)s->v[1], N = (double)s->v[2];
	double es = (double)fp_dtype_size(dt), wre = weight_rereads(M, N * K * es, 1024);

	memset(m, 0, sizeof *m);
	m->flops = 2 * M * N * K + 8 * M * K + M * N;
	m->min_bytes = es * (M * K + 2 * K + N * K + N + M * N);
	switch (variant) {
	case FWD_NAIVE:  // x read three times (mean/var, output loop); W from L2
		m->variant_bytes = m->min_bytes + 2 * M * K * es + wre;
		break;
	case FWD_UNFUSED:  // h written by the LayerNorm and read by the GEMM
		m->variant_bytes = m->min_bytes + 2 * M * K * es + wre;
		break;
	default:  // W' in place of W, s and b' (fp32) in place of gamma, beta,
	          // b; with a statistics pass x read once more, 3 floats a row
	          // written and read (the model knows no kernel options: it
	          // counts the default's pass)
		m->variant_bytes = m->min_bytes - 2 * K * es - N * es + 8 * N + wre;
		if (m->variant_bytes < m->min_bytes)
			m->variant_bytes = m->min_bytes;
		if (fwd_pass_auto(s, dt))
			m->variant_bytes += M * K * es + 24 * M;
		/* fp32 rows in 16-byte chunks go to the tensor cores as 3xTF32
		 * (fwd_mma.cu): three products for each of the GEMM's. */
		if (dt == FP_F32 && vec_width((long)K, dt) > 1)
			m->executed_flops = m->flops + 2 * (2 * M * N * K);
		break;
	}
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], K = (double)s->v[1], N = (double)s->v[2];
	double es = (double)fp_dtype_size(dt);
	double E = M * K, wre = weight_rereads(M, N * K * es, 1024);

	memset(m, 0, sizeof *m);
	m->flops = 4 * M * N * K + 18 * M * K + M * N;
	m->min_bytes = es * (M * N + M * K + 2 * K + N * K) +
		       es * (M * K + 2 * K + N * K + N);
	if (variant == BWD_NAIVE)  // x and dy re-read per pass; fp32 accumulators
		m->variant_bytes = m->min_bytes + 3 * E * es + 3 * M * N * es +
				   2 * 4 * (N * K + 2 * K + N);
	else  // h and dh written and read; dy read by both GEMMs and the db
	      // column sums; unfused: x read twice, statistics (3 floats a
	      // row) written and read (fused: x once, statistics in registers;
	      // rows too wide for them take the unfused path)
		m->variant_bytes = m->min_bytes + 4 * E * es + 2 * M * N * es + 2 * wre +
				   (variant == BWD_UNFUSED || layernorm_plan(1, s->v[1], dt) == 0 ?
				    E * es + 24 * M : 0);
}

static void lnl_destroy(struct fp_op *fop)
{
	struct lnl_op *op = (struct lnl_op *)fop;

	if (!op)
		return;
	lt_release(&op->g0);
	lt_release(&op->g1);
	if (op->lt)
		cublasLtDestroy(op->lt);
	void *bufs[] = { op->x, op->dy, op->gamma, op->beta, op->W, op->b,
			 op->Wf, op->sW, op->bf, op->wbuf };
	for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
		cudaFree(bufs[i]);
	free(op);
}

// The cuBLASLt plans of the unfused variants.
static int lnl_plan(struct lnl_op *op)
{
	const long M = op->M, K = op->K, N = op->N;
	cudaDataType_t t = op->dt == FP_BF16 ? CUDA_R_16BF : CUDA_R_32F;

	if (cublasLtCreate(&op->lt) != CUBLAS_STATUS_SUCCESS) {
		op->lt = NULL;
		return error("ln_linear: cannot create a cuBLASLt handle");
	}
	if (!op->bwd)
		return lt_init(&op->g0, op->lt, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K,
			       t, K, K, t, N, op->b);
	return lt_init(&op->g0, op->lt, CUBLAS_OP_N, CUBLAS_OP_T, K, N, M,
		       t, K, N, t, K, NULL) ||
	       lt_init(&op->g1, op->lt, CUBLAS_OP_N, CUBLAS_OP_N, K, M, N,
		       t, K, N, t, K, NULL);
}

static int lnl_create(int bwd, struct fp_op **out, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	struct lnl_op *op = (struct lnl_op *)xcalloc(1, sizeof *op);
	struct lnl_sizes z;
	char why[160], *cur;
	const char *name = bwd ? "ln_linear_bwd" : "ln_linear_fwd";

	*out = NULL;
	if (lnl_validate(s, dt, why, sizeof why)) {
		free(op);
		return error("%s: %s", name, why);
	}
	if (nsets < 1 || variant < 0 || variant > (bwd ? BWD_FUSED : FWD_FUSED)) {
		free(op);
		return error("%s: bad instance (variant %d, %d input sets)", name,
			     variant, nsets);
	}
	op->bwd = bwd;
	op->dt = dt;
	op->variant = variant;
	op->M = s->v[0];
	op->K = s->v[1];
	op->N = s->v[2];
	op->Np = (op->N + 31) / 32 * 32;
	op->nsets = nsets;
	if (ko)
		op->ko = *ko;
	lnl_sizes(bwd, s, dt, variant, nsets, &z);
	op->xset = z.xset;
	op->dyset = z.dyset;
	op->wset = z.wset;
	if (dev_alloc(&op->x, (size_t)nsets * z.xset) ||
	    dev_alloc(&op->dy, (size_t)nsets * z.dyset) ||
	    dev_alloc(&op->gamma, z.vecK) || dev_alloc(&op->beta, z.vecK) ||
	    dev_alloc(&op->W, z.W) || (!bwd && dev_alloc(&op->b, z.vecN)) ||
	    dev_alloc(&op->Wf, z.Wf) ||
	    dev_alloc(&op->sW, z.fold / 2) || dev_alloc(&op->bf, z.fold / 2) ||
	    dev_alloc(&op->wbuf, (size_t)nsets * z.wset))
		goto out_free;
	cur = op->wbuf;  // set 0's written buffers, in the order of lnl_sizes
	op->y = dev_carve(&cur, z.y);
	op->h = dev_carve(&cur, z.h);
	op->stats = (float *)dev_carve(&cur, z.stats);
	op->dx = dev_carve(&cur, z.dx);
	op->dW = dev_carve(&cur, z.dW);
	op->dg = dev_carve(&cur, z.dg);
	op->db = dev_carve(&cur, z.db);
	op->dh = dev_carve(&cur, z.dh);
	op->part = (float *)dev_carve(&cur, z.part);
	op->acc = (float *)dev_carve(&cur, z.acc);
	op->workspace = dev_carve(&cur, z.workspace);
	if (bwd)
		op->dbeta = (char *)op->dg + (size_t)op->K * fp_dtype_size(dt);
	if ((bwd ? variant != BWD_NAIVE : variant == FWD_UNFUSED) && lnl_plan(op))
		goto out_free;
	if (bwd && variant != BWD_NAIVE) {
		op->lnh = variant == BWD_FUSED &&
			  layernorm_bwd_blocks(dt, op->M, op->K, 1) > 0;
		op->lnb = layernorm_bwd_blocks(dt, op->M, op->K, op->lnh);
		if (op->lnb < 0 || op->lnb > LNL_PARTIALS) {
			error("ln_linear_bwd: the LayerNorm backward wants %ld blocks "
			      "(at most %d)", op->lnb, LNL_PARTIALS);
			goto out_free;
		}
	}
	{
		int dev = 0;

		if (CUDA_CHECK(cudaGetDevice(&dev)) ||
		    CUDA_CHECK(cudaDeviceGetAttribute(&op->sms,
				cudaDevAttrMultiProcessorCount, dev)))
			goto out_free;
	}
	if (!bwd && fwd_choose(op))
		goto out_free;

	// Profile-0 inputs for timing, drawn on the device (see lnl_gen_inputs
	// for the distributions).
	for (int i = 0; i < nsets; i++) {
		uint64_t sd = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);

		if (dev_fill_normal(op->x + (size_t)i * z.xset, dt,
				    (size_t)(op->M * op->K), sd, 0.f, 1.f, 0) ||
		    (bwd && dev_fill_normal(op->dy + (size_t)i * z.dyset, dt,
					    (size_t)(op->M * op->N), sd ^ 0xd1b5u,
					    0.f, 1.f, 0)))
			goto out_free;
	}
	if (dev_fill_normal(op->gamma, dt, (size_t)op->K, seed ^ 1, 1.f, 0.1f, 0) ||
	    dev_fill_normal(op->beta, dt, (size_t)op->K, seed ^ 2, 0.f, 0.1f, 0) ||
	    dev_fill_normal(op->W, dt, (size_t)(op->N * op->K), seed ^ 3, 0.f,
			    (float)(1 / sqrt((double)op->K)), 0) ||
	    (op->b && dev_fill_normal(op->b, dt, (size_t)op->N, seed ^ 4, 0.f, 0.1f, 0)))
		goto out_free;
	// The weight fold: once per weight, not in the timed launch.
	if (!bwd && variant == FWD_FUSED && fold_launch(op, 0))
		goto out_free;
	if (CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	*out = (struct fp_op *)op;
	return 0;

out_free:
	lnl_destroy((struct fp_op *)op);
	return -1;
}

static int fwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return lnl_create(0, op, s, dt, variant, nsets, seed, ko);
}

// The backward declares no kernel options: ko is copied and unused.
static int bwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return lnl_create(1, op, s, dt, variant, nsets, seed, ko);
}

// ---------------------------------------------------------------------------
// The check
//
// Inputs are drawn on the device (counter-based, like create()'s, with the
// profile's distribution) and downloaded into floats, which hold every fp32
// and bf16 value exactly: the double reference sees the very values the GPU
// saw, and no check spends seconds drawing 67 M normals on one CPU core.
// Only what the sampled references read comes down (fwd_check and
// bwd_check say what), through pinned buffers, widened on every core; a
// tensor that every row of a reference needs is streamed by rows, never
// held whole on the host. Every reference sums in the order of a serial
// loop, so its bits depend on neither the thread count nor the chunks.
//
// Why sampling keeps the check strong. Each output is compared in full when
// its reference costs at most LNL_CHECK_MACS multiply-adds; past that, on a
// sample chosen by lnl_sample_counts/lnl_pick: every column (or a sample of
// columns too) of rows taken from every block of LNL_SAMPLE_BLOCK rows, at
// offsets drawn fresh for each check (the seed is printed). Every kernel
// here computes its output in tiles of at least 64 rows (and columns), so
// every tile of every launch - every block's mainloop, pipeline stages,
// tails and epilogue - is compared on at least one of its rows and one of
// its columns, and successive runs hit different rows inside the tiles. A
// wrong element that is alone in its tile is the one kind of bug a sample
// can miss; no kernel here computes an element apart from its tile.
// Parameter gradients (dW, dgamma, dbeta) are reduced over all M rows, so
// each sampled entry checks every row's contribution. The measure is the
// full check's: ||got - ref|| / ||ref|| over the compared entries.

// x (M x K) of profile p (see enum lnl_profile).
template <typename T>
__global__ void k_draw_x(T *__restrict__ x, long M, int K, int p, uint64_t seed)
{
	const long n = M * K;

	for (long e = blockIdx.x * (long)blockDim.x + threadIdx.x; e < n;
	     e += (long)gridDim.x * blockDim.x) {
		float z = draw_normal(seed, (uint64_t)e);

		x[e] = from_f<T>(p == LNL_OFFSET ? (float)LNL_OFFSET_MEAN + z
				 : p == LNL_CONSTANT
				 ? draw_normal(seed ^ 0x5851f42d4c957f2dull, (uint64_t)(e / K)) + 1e-3f * z
				 : z);
	}
}

// Fresh inputs of profile p into set 0 and the weights.
static int draw_inputs(struct lnl_op *op, int p, uint64_t seed)
{
	const enum fp_dtype dt = op->dt;
	const size_t MK = (size_t)(op->M * op->K), NK = (size_t)(op->N * op->K);
	const long nb = (long)((MK + 255) / 256) < 65536 ? (long)((MK + 255) / 256) : 65536;

	if (dt == FP_BF16)
		k_draw_x<__nv_bfloat16><<<(unsigned)nb, 256>>>((__nv_bfloat16 *)op->x,
			op->M, (int)op->K, p, seed);
	else
		k_draw_x<float><<<(unsigned)nb, 256>>>((float *)op->x, op->M,
			(int)op->K, p, seed);
	if (CUDA_CHECK_LAUNCH("k_draw_x") ||
	    dev_fill_normal(op->gamma, dt, (size_t)op->K, seed ^ 0x243f6a8885a308d3ull,
			    1.f, 0.1f, 0) ||
	    dev_fill_normal(op->beta, dt, (size_t)op->K, seed ^ 0x13198a2e03707344ull,
			    0.f, 0.1f, 0) ||
	    dev_fill_normal(op->W, dt, NK, seed ^ 0xa4093822299f31d0ull, 0.f,
			    (float)(1 / sqrt((double)op->K)), 0) ||
	    (op->b && dev_fill_normal(op->b, dt, (size_t)op->N,
				      seed ^ 0x082efa98ec4e6c89ull, 0.f, 0.1f, 0)) ||
	    (op->dy && dev_fill_normal(op->dy, dt, (size_t)(op->M * op->N),
				       seed ^ 0x452821e638d01377ull, 0.f, 1.f, 0)))
		return -1;
	return 0;
}

// What a check downloads goes through page-locked staging (cudaMallocHost
// once per check, freed at its end), so the copies run at the link's speed
// and no fresh pageable GiB is first-touched, then lnl_widen on every core.
// At most CHECK_STAGE_ELEMS elements a staging buffer (16 MiB in fp32).
#define CHECK_STAGE_ELEMS (1L << 22)

// n elements of a dtype tensor into floats (exact for fp32 and bf16): for
// the vectors (K or N elements); tensors go through gather_rows and
// row_stream.
static int download_f(float *dst, const void *src, enum fp_dtype dt, size_t n)
{
	uint16_t *h;
	int rc;

	if (dt == FP_F32)
		return CUDA_CHECK(cudaMemcpy(dst, src, n * 4, cudaMemcpyDeviceToHost));
	h = (uint16_t *)xmalloc(n * 2);
	rc = CUDA_CHECK(cudaMemcpy(h, src, n * 2, cudaMemcpyDeviceToHost));
	if (rc == 0)
		lnl_widen(dst, h, dt, n);
	free(h);
	return rc;
}

// Rows idx[0..n) (increasing) of a row-major tensor of rows of len dtype
// elements into dst as floats: all len columns (cols NULL, dst n x len) or
// columns cols[0..nc) (dst n x nc). Runs of consecutive rows are one copy;
// batches of at most CHECK_STAGE_ELEMS elements (one row at least) through
// one pinned buffer.
static int gather_rows(float *dst, const void *src, enum fp_dtype dt, const long *idx,
		       long n, long len, const long *cols, long nc)
{
	const size_t es = fp_dtype_size(dt), rb = (size_t)len * es;
	const long per = CHECK_STAGE_ELEMS / len > n ? n
			 : CHECK_STAGE_ELEMS / len < 1 ? 1 : CHECK_STAGE_ELEMS / len;
	char *stage = NULL;
	float *wide = NULL;
	int rc = -1;

	if (n < 1)
		return 0;
	if (CUDA_CHECK(cudaMallocHost((void **)&stage, (size_t)per * rb)))
		return -1;
	if (cols)
		wide = (float *)xmalloc((size_t)(per * len) * sizeof *wide);
	for (long b = 0; b < n; b += per) {
		const long cnt = n - b < per ? n - b : per;

		for (long q = 0, run; q < cnt; q += run) {
			for (run = 1; q + run < cnt && idx[b + q + run] == idx[b + q] + run; run++)
				;
			if (CUDA_CHECK(cudaMemcpyAsync(stage + (size_t)q * rb,
						       (const char *)src + (size_t)idx[b + q] * rb,
						       (size_t)run * rb, cudaMemcpyDeviceToHost, 0)))
				goto out_free;
		}
		if (CUDA_CHECK(cudaStreamSynchronize(0)))
			goto out_free;
		if (!cols) {
			lnl_widen(dst + (size_t)b * (size_t)len, stage, dt, (size_t)(cnt * len));
			continue;
		}
		lnl_widen(wide, stage, dt, (size_t)(cnt * len));
		for (long q = 0; q < cnt; q++)
			for (long j = 0; j < nc; j++)
				dst[(b + q) * nc + j] = wide[q * len + cols[j]];
	}
	rc = 0;
out_free:
	cudaFreeHost(stage);
	free(wide);
	return rc;
}

// A row-major tensor of `rows` rows of len dtype elements, handed out in
// chunks of `chunk` rows as floats: two pinned buffers, the next chunk's
// copy (on a stream of its own) in flight while the caller works on the
// current one. Zeroed, then row_stream_open; row_stream_close always.
struct row_stream {
	const char *src;
	enum fp_dtype dt;
	long rows, len, chunk;
	long next;        // first row of the chunk in flight (rows: none)
	int cur;          // the buffer that chunk lands in
	char *pin[2];
	float *wide;      // bf16: the chunk widened (fp32 hands out pin itself)
	cudaStream_t st;
	cudaEvent_t ev[2];
	int made;         // st and ev[] exist
};

// The copy of the chunk from row s->next into pin[s->cur].
static int row_stream_issue(struct row_stream *s)
{
	const size_t rb = (size_t)s->len * fp_dtype_size(s->dt);
	const long cnt = s->rows - s->next < s->chunk ? s->rows - s->next : s->chunk;

	if (s->next >= s->rows)
		return 0;
	return CUDA_CHECK(cudaMemcpyAsync(s->pin[s->cur], s->src + (size_t)s->next * rb,
					  (size_t)cnt * rb, cudaMemcpyDeviceToHost, s->st)) ||
	       CUDA_CHECK(cudaEventRecord(s->ev[s->cur], s->st)) ? -1 : 0;
}

// chunk rows a step (clamped to [1, rows]); the first copy starts here.
static int row_stream_open(struct row_stream *s, const void *src, enum fp_dtype dt,
			   long rows, long len, long chunk)
{
	const size_t es = fp_dtype_size(dt);

	s->src = (const char *)src;
	s->dt = dt;
	s->rows = rows;
	s->len = len;
	s->chunk = chunk > rows ? rows : chunk < 1 ? 1 : chunk;
	s->next = 0;
	s->cur = 0;
	for (int b = 0; b < 2; b++)
		if (CUDA_CHECK(cudaMallocHost((void **)&s->pin[b],
					      (size_t)(s->chunk * len) * es)))
			return -1;
	if (dt != FP_F32)
		s->wide = (float *)xmalloc((size_t)(s->chunk * len) * sizeof *s->wide);
	if (CUDA_CHECK(cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking)))
		return -1;
	if (CUDA_CHECK(cudaEventCreateWithFlags(&s->ev[0], cudaEventDisableTiming))) {
		cudaStreamDestroy(s->st);
		return -1;
	}
	if (CUDA_CHECK(cudaEventCreateWithFlags(&s->ev[1], cudaEventDisableTiming))) {
		cudaEventDestroy(s->ev[0]);
		cudaStreamDestroy(s->st);
		return -1;
	}
	s->made = 1;
	return row_stream_issue(s);
}

// The next chunk: its first row in *lo, its row count in *cnt and its rows
// (cnt x len floats, valid until the next call) in *f. Returns 1, 0 when
// every row has been handed out, -1 on an error (reported).
static int row_stream_next(struct row_stream *s, long *lo, long *cnt, const float **f)
{
	const int b = s->cur;

	if (s->next >= s->rows)
		return 0;
	if (CUDA_CHECK(cudaEventSynchronize(s->ev[b])))
		return -1;
	*lo = s->next;
	*cnt = s->rows - s->next < s->chunk ? s->rows - s->next : s->chunk;
	// The other buffer held the chunk the caller has finished with.
	s->next += *cnt;
	s->cur = b ^ 1;
	if (row_stream_issue(s))
		return -1;
	if (s->dt == FP_F32) {
		*f = (const float *)s->pin[b];
	} else {
		lnl_widen(s->wide, s->pin[b], s->dt, (size_t)(*cnt * s->len));
		*f = s->wide;
	}
	return 1;
}

static void row_stream_close(struct row_stream *s)
{
	if (s->made) {
		cudaStreamSynchronize(s->st);
		cudaEventDestroy(s->ev[0]);
		cudaEventDestroy(s->ev[1]);
		cudaStreamDestroy(s->st);
	}
	cudaFreeHost(s->pin[0]);
	cudaFreeHost(s->pin[1]);
	free(s->wide);
	memset(s, 0, sizeof *s);
}

static double *to_double(const float *v, long n)
{
	double *d = (double *)xmalloc((size_t)(n > 0 ? n : 1) * sizeof *d);

	for (long i = 0; i < n; i++)
		d[i] = v[i];
	return d;
}

// Mean and rstd of a row of floats, in double (two passes, as
// lnl_layernorm_row_ref).
static void row_stats(const float *x, long K, double *mean, double *rstd)
{
	double m = 0, v = 0;

	for (long k = 0; k < K; k++)
		m += x[k];
	m /= (double)K;
	for (long k = 0; k < K; k++)
		v += (x[k] - m) * (x[k] - m);
	*mean = m;
	*rstd = 1 / sqrt(v / (double)K + LNL_EPS);
}

// Four partial sums: four independent add chains.
static double dot_df(const double *a, const float *b, long n)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	long k = 0;

	for (; k + 4 <= n; k += 4) {
		s0 += a[k] * b[k];
		s1 += a[k + 1] * b[k + 1];
		s2 += a[k + 2] * b[k + 2];
		s3 += a[k + 3] * b[k + 3];
	}
	for (; k < n; k++)
		s0 += a[k] * b[k];
	return (s0 + s1) + (s2 + s3);
}

// The sum of the squares of a dot product's terms (cmp_rel's floor).
static double dot_sq_df(const double *a, const float *b, long n)
{
	double s = 0;

	for (long k = 0; k < n; k++)
		s += (a[k] * b[k]) * (a[k] * b[k]);
	return s;
}

// Columns [lo, hi) of fwd_check's grid (par_for): the reference, and the
// chunk's part of the floor, summed in the order of the serial loop.
struct fwd_ref_job {
	const float *W;  // W's rows cols[0..nc), nc x K
	const double *h, *b;
	const long *cols;
	double *ref, *floor;
	long K, nr, nc;
	size_t grain;
};

static void fwd_ref_cols(size_t lo, size_t hi, void *arg)
{
	const struct fwd_ref_job *jb = (const struct fwd_ref_job *)arg;
	const long K = jb->K;
	double fl = 0;

	for (size_t j = lo; j < hi; j++) {
		const float *w = jb->W + (long)j * K;
		const double bj = jb->b[jb->cols[j]];

		for (long s = 0; s < jb->nr; s++) {
			jb->ref[s * jb->nc + (long)j] = bj + dot_df(jb->h + s * K, w, K);
			fl += bj * bj + dot_sq_df(jb->h + s * K, w, K);
		}
	}
	jb->floor[lo / jb->grain] = fl;
}

// y on a grid of sampled rows x sampled (or all) columns: downloads those
// rows of x, the rows of W that are the sampled columns, and the grid of y.
static int fwd_check(struct lnl_op *op, struct fp_rng *g, struct fp_check *r)
{
	const long M = op->M, K = op->K, N = op->N;
	const enum fp_dtype dt = op->dt;
	long w1, w2, nr, nc, *rows = NULL, *cols = NULL;
	float *W = NULL, *x = NULL, *v = NULL;
	double *gm = NULL, *bt = NULL, *b = NULL, *h = NULL, *ref = NULL, *got = NULL;
	float *y = NULL;
	struct fp_cmp c;
	int rc = -1;

	lnl_sample_counts(M, N, (double)K, LNL_CHECK_MACS, &w1, &w2);
	rows = (long *)xmalloc((size_t)w1 * sizeof *rows);
	cols = (long *)xmalloc((size_t)w2 * sizeof *cols);
	nr = lnl_pick(M, w1, g, rows);
	nc = lnl_pick(N, w2, g, cols);
	W = (float *)xmalloc((size_t)(nc * K) * sizeof *W);
	x = (float *)xmalloc((size_t)(nr * K) * sizeof *x);
	y = (float *)xmalloc((size_t)(nr * nc) * sizeof *y);
	v = (float *)xmalloc((size_t)(K > N ? K : N) * sizeof *v);
	h = (double *)xmalloc((size_t)(nr * K) * sizeof *h);
	ref = (double *)xmalloc((size_t)(nr * nc) * sizeof *ref);
	got = (double *)xmalloc((size_t)(nr * nc) * sizeof *got);
	if (gather_rows(W, op->W, dt, cols, nc, K, NULL, 0) ||
	    gather_rows(x, op->x, dt, rows, nr, K, NULL, 0) ||
	    download_f(v, op->gamma, dt, (size_t)K))
		goto out_free;
	gm = to_double(v, K);
	if (download_f(v, op->beta, dt, (size_t)K))
		goto out_free;
	bt = to_double(v, K);
	if (download_f(v, op->b, dt, (size_t)N))
		goto out_free;
	b = to_double(v, N);

	for (long s = 0; s < nr; s++) {
		double m, rs, *hr = h + s * K;
		const float *xr = x + s * K;

		row_stats(xr, K, &m, &rs);
		for (long k = 0; k < K; k++)
			hr[k] = (xr[k] - m) * rs * gm[k] + bt[k];
	}
	// Column outer: W's row stays in L1 while every sampled row meets it.
	// The floor: with one or a few outputs, b + h W^T can cancel to far
	// below its terms (K = 1: b' against W beta), and then its relative
	// error measures fp32's rounding of the terms, not the kernel.
	// On every core, in chunks of columns whose floors add in chunk order.
	cmp_init(&c);
	{
		struct fwd_ref_job job = { W, h, b, cols, ref, NULL, K, nr, nc, 8 };
		const size_t nch = par_chunks((size_t)nc, job.grain);

		job.floor = (double *)xcalloc(nch, sizeof *job.floor);
		par_for((size_t)nc, job.grain, fwd_ref_cols, &job);
		for (size_t q = 0; q < nch; q++)
			c.sq_floor += job.floor[q];
		free(job.floor);
	}
	if (gather_rows(y, op->y, dt, rows, nr, N, cols, nc))
		goto out_free;
	for (long e = 0; e < nr * nc; e++)
		got[e] = y[e];
	cmp_add(&c, got, ref, (size_t)(nr * nc));
	check_output(r, "y", &c);
	rc = 0;
out_free:
	free(rows);
	free(cols);
	free(W);
	free(x);
	free(y);
	free(v);
	free(gm);
	free(bt);
	free(b);
	free(h);
	free(ref);
	free(got);
	return rc;
}

// Compares a downloaded vector of n dtype elements on the sampled indices.
static int check_vec(struct fp_check *r, const char *name, const void *dev,
		     enum fp_dtype dt, long n, const long *idx, long cnt,
		     const double *ref)
{
	float *v = (float *)xmalloc((size_t)n * sizeof *v);
	double *got = (double *)xmalloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *got);
	struct fp_cmp c;
	int rc = download_f(v, dev, dt, (size_t)n);

	if (rc == 0) {
		for (long i = 0; i < cnt; i++)
			got[i] = v[idx ? idx[i] : i];
		cmp_init(&c);
		cmp_add(&c, got, ref, (size_t)cnt);
		check_output(r, name, &c);
	}
	free(v);
	free(got);
	return rc;
}

// dh of the sampled rows, columns [lo, hi) (par_for), from W's rows
// [n0, n0 + cnt): each entry sums over n in order, as a serial loop's, so
// W's chunks add up to the sum over all of W, whatever the thread count.
struct dh_job {
	const float *W, *dy;  // W's chunk (cnt x K); dy's sampled rows (nr x N)
	double *dh;           // nr x K
	long N, K, nr, n0, cnt;
};

static void dh_cols(size_t lo, size_t hi, void *arg)
{
	const struct dh_job *jb = (const struct dh_job *)arg;

	for (long n = 0; n < jb->cnt; n++) {
		const float *w = jb->W + n * jb->K;

		for (long s = 0; s < jb->nr; s++) {
			double d = jb->dy[s * jb->N + jb->n0 + n], *o = jb->dh + s * jb->K;

			for (size_t k = lo; k < hi; k++)
				o[k] += d * w[k];
		}
	}
}

// Rows [lo, hi) of a chunk of x and dy (par_for), row i = i0 + q: its
// statistics, h on dW's sampled columns ik (hc), xhat on dgamma's ig (xg),
// dy on dW's sampled outputs in (dyc), and dh = dy W on ig (dg, over n in
// order): all the backward's parameter gradients need of the row.
struct rows_job {
	const float *x, *dy;          // the chunk: cnt x K, cnt x N
	const double *gm, *bt, *wg;   // wg: W's columns ig, N x ng
	const long *ik, *in, *ig;
	double *hc, *xg, *dg;         // M x nk, M x ng, M x ng
	float *dyc;                   // M x nn
	long K, N, i0, nk, nn, ng;
};

static void bwd_rows(size_t lo, size_t hi, void *arg)
{
	const struct rows_job *jb = (const struct rows_job *)arg;
	const long K = jb->K, N = jb->N, nk = jb->nk, nn = jb->nn, ng = jb->ng;

	for (size_t q = lo; q < hi; q++) {
		const long i = jb->i0 + (long)q;
		const float *xr = jb->x + (long)q * K, *dr = jb->dy + (long)q * N;
		double m, rs, *o = jb->dg + i * ng;

		row_stats(xr, K, &m, &rs);
		for (long j = 0; j < nk; j++) {
			const long k = jb->ik[j];

			jb->hc[i * nk + j] = (xr[k] - m) * rs * jb->gm[k] + jb->bt[k];
		}
		for (long j = 0; j < ng; j++) {
			jb->xg[i * ng + j] = (xr[jb->ig[j]] - m) * rs;
			o[j] = 0;
		}
		for (long s = 0; s < nn; s++)
			jb->dyc[i * nn + s] = dr[jb->in[s]];
		for (long n = 0; n < N; n++) {
			const double a = dr[n], *w = jb->wg + n * ng;

			for (long j = 0; j < ng; j++)
				o[j] += a * w[j];
		}
	}
}

// db's columns [lo, hi) (par_for), a chunk of cnt rows of dy added in row
// order.
struct db_job {
	const float *dy;
	double *db;
	long N, cnt;
};

static void db_cols(size_t lo, size_t hi, void *arg)
{
	const struct db_job *jb = (const struct db_job *)arg;

	for (long q = 0; q < jb->cnt; q++) {
		const float *r = jb->dy + q * jb->N;

		for (size_t n = lo; n < hi; n++)
			jb->db[n] += r[n];
	}
}

// dW's grid rows [lo, hi) (par_for): each entry sums over i in order; i
// outer, so a chunk reads its columns of dyc a cache line at a time.
struct dw_job {
	const float *dyc;   // M x nn: dy's sampled columns
	const double *hc;   // M x nk: h's sampled columns
	double *ref;
	long M, nn, nk;
};

static void dw_rows(size_t lo, size_t hi, void *arg)
{
	const struct dw_job *jb = (const struct dw_job *)arg;
	const long nk = jb->nk;

	for (long i = 0; i < jb->M; i++) {
		const float *dr = jb->dyc + i * jb->nn;
		const double *hr = jb->hc + i * nk;

		for (size_t s = lo; s < hi; s++) {
			double d = dr[s], *o = jb->ref + s * nk;

			for (long j = 0; j < nk; j++)
				o[j] += d * hr[j];
		}
	}
}

// The backward's outputs: dx on sampled rows (each whole: a row's LayerNorm
// backward needs its whole dh row, N*K multiply-adds), dW on a grid of
// sampled (n, k) entries (M each), dgamma and dbeta on sampled columns k
// (M*N each: dh's column over every row), db in full. What is downloaded:
// the sampled rows of x, dy and dx, the sampled rows of dW, the vectors,
// and W, x and dy once each, streamed by rows (dx's dh needs all of W;
// dgamma, dbeta and db every row of x and dy), never held whole.
static int bwd_check(struct lnl_op *op, struct fp_rng *g, struct fp_check *r)
{
	const long M = op->M, K = op->K, N = op->N;
	const enum fp_dtype dt = op->dt;
	long w1, w2, nr, nn, nk, ng, *ir = NULL, *in = NULL, *ik = NULL, *ig = NULL;
	float *xs = NULL, *dys = NULL, *v = NULL, *dyc = NULL, *gf = NULL;
	double *gm = NULL, *bt = NULL, *dh = NULL, *ref = NULL, *got = NULL;
	double *hc = NULL, *xg = NULL, *dg = NULL, *wg = NULL, *vref = NULL;
	struct row_stream sw, sx, sd;
	struct fp_cmp c;
	int rc = -1, more = 0;

	memset(&sw, 0, sizeof sw);
	memset(&sx, 0, sizeof sx);
	memset(&sd, 0, sizeof sd);
	// The samples of dx, dW, then dgamma and dbeta, drawn in that order.
	lnl_sample_counts(M, 1, (double)N * K, LNL_CHECK_MACS, &w1, &w2);
	ir = (long *)xmalloc((size_t)w1 * sizeof *ir);
	nr = lnl_pick(M, w1, g, ir);
	lnl_sample_counts(N, K, (double)M, LNL_CHECK_MACS, &w1, &w2);
	in = (long *)xmalloc((size_t)w1 * sizeof *in);
	ik = (long *)xmalloc((size_t)w2 * sizeof *ik);
	nn = lnl_pick(N, w1, g, in);
	nk = lnl_pick(K, w2, g, ik);
	lnl_sample_counts(K, 1, (double)M * N, LNL_CHECK_MACS, &w1, &w2);
	ig = (long *)xmalloc((size_t)w1 * sizeof *ig);
	ng = lnl_pick(K, w1, g, ig);

	v = (float *)xmalloc((size_t)(K > N ? K : N) * sizeof *v);
	if (download_f(v, op->gamma, dt, (size_t)K))
		goto out_free;
	gm = to_double(v, K);
	if (download_f(v, op->beta, dt, (size_t)K))
		goto out_free;
	bt = to_double(v, K);

	// dx. dh of the sampled rows from W streamed by rows, which also
	// gives dgamma's columns of W.
	xs = (float *)xmalloc((size_t)(nr * K) * sizeof *xs);
	dys = (float *)xmalloc((size_t)(nr * N) * sizeof *dys);
	dh = (double *)xcalloc((size_t)(nr * K), sizeof *dh);
	wg = (double *)xmalloc((size_t)(N * ng) * sizeof *wg);
	if (gather_rows(xs, op->x, dt, ir, nr, K, NULL, 0) ||
	    gather_rows(dys, op->dy, dt, ir, nr, N, NULL, 0) ||
	    row_stream_open(&sw, op->W, dt, N, K, CHECK_STAGE_ELEMS / K))
		goto out_free;
	{
		struct dh_job job = { NULL, dys, dh, N, K, nr, 0, 0 };
		const float *f;

		while ((more = row_stream_next(&sw, &job.n0, &job.cnt, &f)) > 0) {
			job.W = f;
			par_for((size_t)K, 128, dh_cols, &job);
			for (long n = 0; n < job.cnt; n++)
				for (long j = 0; j < ng; j++)
					wg[(job.n0 + n) * ng + j] = f[n * K + ig[j]];
		}
		if (more < 0)
			goto out_free;
	}
	row_stream_close(&sw);
	ref = (double *)xmalloc((size_t)(nr * K) * sizeof *ref);
	got = (double *)xmalloc((size_t)(nr * K) * sizeof *got);
	for (long s = 0; s < nr; s++) {
		const float *xr = xs + s * K;
		const double *dr = dh + s * K;
		double m, rs, sg = 0, sgx = 0;

		row_stats(xr, K, &m, &rs);
		for (long k = 0; k < K; k++) {
			double xh = (xr[k] - m) * rs, gk = dr[k] * gm[k];

			sg += gk;
			sgx += gk * xh;
		}
		sg /= (double)K;
		sgx /= (double)K;
		for (long k = 0; k < K; k++) {
			double xh = (xr[k] - m) * rs;

			ref[s * K + k] = rs * (dr[k] * gm[k] - sg - xh * sgx);
		}
	}
	if (gather_rows(xs, op->dx, dt, ir, nr, K, NULL, 0))
		goto out_free;
	for (long e = 0; e < nr * K; e++)
		got[e] = xs[e];
	cmp_init(&c);
	cmp_add(&c, got, ref, (size_t)(nr * K));
	check_output(r, "dx", &c);
	free(ref);
	free(got);
	free(xs);
	free(dys);
	free(dh);
	ref = got = dh = NULL;
	xs = dys = NULL;

	// One pass over x and dy in chunks of rows: bwd_rows gathers what the
	// parameter gradients need of each row, db_cols adds db up.
	hc = (double *)xmalloc((size_t)(M * nk) * sizeof *hc);
	xg = (double *)xmalloc((size_t)(M * ng) * sizeof *xg);
	dg = (double *)xmalloc((size_t)(M * ng) * sizeof *dg);
	dyc = (float *)xmalloc((size_t)(M * nn) * sizeof *dyc);
	vref = (double *)xcalloc((size_t)(2 * ng + N), sizeof *vref);
	{
		const long chunk = CHECK_STAGE_ELEMS / (K > N ? K : N);
		struct rows_job rj = { NULL, NULL, gm, bt, wg, ik, in, ig, hc, xg, dg, dyc,
				       K, N, 0, nk, nn, ng };
		struct db_job dj = { NULL, vref + 2 * ng, N, 0 };
		const size_t grain = par_grain_rows((size_t)(2 * K + N * (ng + 1)));
		long lo2, cnt2;
		const float *fd;

		if (row_stream_open(&sx, op->x, dt, M, K, chunk) ||
		    row_stream_open(&sd, op->dy, dt, M, N, chunk))
			goto out_free;
		while ((more = row_stream_next(&sx, &rj.i0, &dj.cnt, &rj.x)) > 0) {
			if ((more = row_stream_next(&sd, &lo2, &cnt2, &fd)) <= 0)
				break;
			rj.dy = dj.dy = fd;
			par_for((size_t)dj.cnt, grain, bwd_rows, &rj);
			par_for((size_t)N, 1024, db_cols, &dj);
		}
		if (more < 0)
			goto out_free;
	}
	row_stream_close(&sx);
	row_stream_close(&sd);

	// dW[n][k] = sum_i dy[i][n] h[i][k] on the grid.
	ref = (double *)xcalloc((size_t)(nn * nk), sizeof *ref);
	got = (double *)xmalloc((size_t)(nn * nk) * sizeof *got);
	gf = (float *)xmalloc((size_t)(nn * nk) * sizeof *gf);
	{
		struct dw_job job = { dyc, hc, ref, M, nn, nk };

		// At most 32 chunks of grid rows: 8 a chunk at nn = 256.
		par_for((size_t)nn, (size_t)(nn + 31) / 32, dw_rows, &job);
	}
	if (gather_rows(gf, op->dW, dt, in, nn, K, ik, nk))
		goto out_free;
	for (long e = 0; e < nn * nk; e++)
		got[e] = gf[e];
	cmp_init(&c);
	cmp_add(&c, got, ref, (size_t)(nn * nk));
	check_output(r, "dW", &c);

	// dgamma[k] = sum_i dh[i][k] xhat[i][k], dbeta[k] = sum_i dh[i][k] on
	// the sampled k, in row order; db in full.
	for (long i = 0; i < M; i++)
		for (long j = 0; j < ng; j++) {
			const double d = dg[i * ng + j];

			vref[j] += d * xg[i * ng + j];
			vref[ng + j] += d;
		}
	if (check_vec(r, "dgamma", op->dg, dt, K, ig, ng, vref) ||
	    check_vec(r, "dbeta", op->dbeta, dt, K, ig, ng, vref + ng) ||
	    check_vec(r, "db", op->db, dt, N, NULL, N, vref + 2 * ng))
		goto out_free;
	rc = 0;
out_free:
	row_stream_close(&sw);
	row_stream_close(&sx);
	row_stream_close(&sd);
	free(ir);
	free(in);
	free(ik);
	free(ig);
	free(xs);
	free(dys);
	free(v);
	free(dyc);
	free(gf);
	free(gm);
	free(bt);
	free(dh);
	free(ref);
	free(got);
	free(hc);
	free(xg);
	free(dg);
	free(wg);
	free(vref);
	return rc;
}

// Outputs and intermediates poisoned, then one run of set 0, finished.
static int poison_run(struct lnl_op *op)
{
	const long M = op->M, K = op->K, N = op->N;
	const size_t es = fp_dtype_size(op->dt);

	if ((op->y && dev_poison(op->y, (size_t)(M * N) * es)) ||
	    (op->h && dev_poison(op->h, (size_t)(M * K) * es)) ||
	    (op->dx && dev_poison(op->dx, (size_t)(M * K) * es)) ||
	    (op->dW && dev_poison(op->dW, (size_t)(N * K) * es)) ||
	    (op->dg && dev_poison(op->dg, (size_t)K * es)) ||
	    (op->dbeta && dev_poison(op->dbeta, (size_t)K * es)) ||
	    (op->db && dev_poison(op->db, (size_t)N * es)) ||
	    (op->stats && dev_poison(op->stats, (size_t)(3 * M) * 4)) ||
	    (op->dh && dev_poison(op->dh, (size_t)(M * K) * es)) ||
	    lnl_launch((struct fp_op *)op, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()))
		return -1;
	return 0;
}

// Fresh inputs of the profile drawn from seed into set 0 and the weights
// (on the device), the outputs and intermediates poisoned, one run, outputs
// compared with the double reference on the downloaded inputs (see the top
// of this section for what is compared).
static int lnl_check(struct fp_op *fop, int profile, unsigned long long seed,
		     struct fp_check *r)
{
	struct lnl_op *op = (struct lnl_op *)fop;
	const long K = op->K, N = op->N;
	const size_t es = fp_dtype_size(op->dt);
	struct fp_rng g;

	if (profile < 0 || profile >= LNL_NPROFILES)
		return error("ln_linear: no input profile %d", profile);
	if (draw_inputs(op, profile, seed))
		return -1;
	if (op->Wf && (dev_poison(op->Wf, (size_t)(op->Np * K) * es) ||
		       dev_poison(op->sW, (size_t)N * 4) ||
		       dev_poison(op->bf, (size_t)N * 4) || fold_launch(op, 0)))
		return -1;
	if (poison_run(op))
		return -1;
	check_begin(r, seed, op->dt == FP_BF16 ? LNL_TOL_BF16 : LNL_TOL_FP32);
	rng_seed(&g, seed ^ 0x6a09e667f3bcc908ull);
	return op->bwd ? bwd_check(op, &g, r) : fwd_check(op, &g, r);
}

static const struct fp_param lnl_params[] = {
	{ "M", 16384, 1, LNL_MAX_M, "rows" },
	{ "K", FP_REQUIRED, 1, LNL_MAX_KN, "input features (LayerNorm width)" },
	{ "N", FP_REQUIRED, 1, LNL_MAX_KN, "output features" },
	{ NULL, 0, 0, 0, NULL },
};

// Index i is enum lnl_profile i.
static const char *const lnl_profiles[] = { "normal", "offset", "constant", NULL };

// The tests' shapes: the issue's four, and two that send the bf16 fused
// forward's tensor-core kernel through its two tile sizes with every tail
// (K past the last 64-column step, partial row and column tiles, N not a
// multiple of 8 for the element-wise epilogue).
#define LNL_TESTS "M=1,K=1,N=1;M=3,K=1023,N=17;M=200,K=264,N=100;" \
	"M=4000,K=200,N=520;M=16384,K=768,N=256;M=512,K=4096,N=16384"
// The naive variants run the suite's smallest shape only (still paired
// with the fused variant there): their place on the roofline shows at any
// size, and at K = 4096, N = 16384 one naive forward repetition takes ~22 s.
#define LNL_SUITE_SMALL "M=16384,K=768,N=256"
#define LNL_SUITE LNL_SUITE_SMALL ";M=16384,K=4096,N=256;M=16384,K=4096,N=16384"
#define LNL_QUICK "M=2048,K=768,N=256;M=1024,K=1024,N=1024"

static const struct fp_variant fwd_variants[] = {
	{ "naive", FP_NAIVE,
	  "1 kernel, one thread per row: statistics and all N outputs of the row, no tiling",
	  LNL_SUITE_SMALL },
	{ "unfused", FP_UNFUSED,
	  "2 kernels: LayerNorm writes h = LN(x) (dtype), cuBLASLt h W^T with the bias in its epilogue" },
	{ "fused", FP_FUSED,
	  "1 kernel: tiled GEMM on x - c against W' = W o gamma (folded in create; bf16 on "
	  "wgmma or mma.sync, fp32 as 3xTF32 on mma.sync), row statistics from the same tiles "
	  "(bf16 from N, K >= 2048: from a statistics pass first, 2 kernels), "
	  "y = rstd (acc - (mean - c) s) + b' in the epilogue" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_ln_linear_fwd = {
	.name = "ln_linear_fwd",
	.summary = "y = LayerNorm(x; gamma, beta) W^T + b, x: M x K, W: N x K",
	.params = lnl_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = lnl_profiles,
	.suite = LNL_SUITE,
	.quick = LNL_QUICK,
	.tests = LNL_TESTS,
	.kopts = fwd_kopts,
	.validate = lnl_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.kernel = lnl_kernel,
	.launch = lnl_launch,
	.check = lnl_check,
	.destroy = lnl_destroy,
};

static const struct fp_variant bwd_variants[] = {
	{ "naive", FP_NAIVE,
	  "1 kernel + 4 conversions, one thread per row: dx, and dgamma, dbeta, dW, db by fp32 atomics",
	  LNL_SUITE_SMALL },
	{ "unfused", FP_UNFUSED,
	  "7 kernels: LayerNorm recompute h (with row statistics), cuBLASLt dW = dy^T h and "
	  "dh = dy W, LayerNorm backward (dx and dgamma/dbeta partials, reduced in order), "
	  "db by column sums of dy (deterministic)" },
	{ "fused", FP_FUSED,
	  "6 kernels: dh = dy W, then one pass over x and dh recomputes the statistics, writes h "
	  "and does the LayerNorm backward (x read once), dW = dy^T h, db column sums" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_ln_linear_bwd = {
	.name = "ln_linear_bwd",
	.summary = "dx, dgamma, dbeta, dW, db of y = LayerNorm(x) W^T + b, given dy "
		   "(mean and rstd recomputed)",
	.params = lnl_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = lnl_profiles,
	.suite = LNL_SUITE,
	.quick = LNL_QUICK,
	.tests = LNL_TESTS,
	.validate = lnl_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.kernel = lnl_kernel,
	.launch = lnl_launch,
	.check = lnl_check,
	.destroy = lnl_destroy,
};
