// fpk.cu - libfuseprof-kernels: the fused variants' kernels behind the C API
// of kernels/fuseprof/kernels.h, on the caller's pointers, workspace and
// stream: LayerNorm+Linear, LayerNorm+GELU, softmax, RMSNorm, SwiGLU, the
// softplus chain, bias+ReLU with a bit mask and bias+dropout+residual with
// the mask regenerated from the seed.
//
// Each entry point checks its arguments (no CUDA call before that), then
// reaches the same launchers the workloads use: LayerNorm+Linear through an
// instance (struct lnl_op, ln_linear/internal.h) filled on the stack with
// the caller's pointers and workspace, LayerNorm+GELU through
// ln_gelu_fused_*, softmax through sm_plan and sm_fused_*. What the
// launchers report through error() lands in this thread's fpk_last_error()
// instead of stderr (error_sink). The LayerNorm+Linear backward's cuBLASLt
// plans are made once per device, shape and dtype and kept (plan_for).
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mutex>

#include <cuda_runtime.h>

#include "fuseprof/kernels.h"
#include "bias_relu/bias_relu.h"
#include "dropout/dropout.h"
#include "error.h"
#include "kutil.h"
#include "layernorm/layernorm.h"
#include "ln_gelu/ln_gelu.h"
#include "ln_linear/internal.h"
#include "ln_linear/ln_linear.h"
#include "rmsnorm/rmsnorm.h"
#include "softmax/sm.h"
#include "softplus/sp.h"
#include "swiglu/swiglu.h"

#define FPK_EXPORT extern "C" __attribute__((visibility("default")))

// ---------------------------------------------------------------------------
// Errors: this thread's last message, and the function it came from

static thread_local char last_error[512];
static thread_local const char *current_fn = "fuseprof";

static void sink(const char *message, int is_warning)
{
	if (!is_warning)
		snprintf(last_error, sizeof last_error, "%s: %s", current_fn, message);
}

// Every entry point starts here: route error() to this thread's message.
static void enter(const char *fn)
{
	error_sink = sink;
	current_fn = fn;
	last_error[0] = '\0';
}

__attribute__((format(printf, 2, 3)))
static int fail(int status, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	snprintf(last_error, sizeof last_error, "%s: %s", current_fn, buf);
	return status;
}

FPK_EXPORT int fpk_version(void)
{
	return FPK_VERSION;
}

FPK_EXPORT const char *fpk_strerror(int status)
{
	switch (status) {
	case FPK_OK:
		return "success";
	case FPK_EINVAL:
		return "invalid argument";
	case FPK_EUNSUPPORTED:
		return "not supported";
	case FPK_ECUDA:
		return "CUDA error";
	}
	return "unknown status";
}

FPK_EXPORT const char *fpk_last_error(void)
{
	return last_error;
}

// ---------------------------------------------------------------------------
// Argument checks: each returns FPK_OK or the status with the message set

#define DIM_MAX (1L << 31)  // rows and widths: below 2^31
#define ELEMS_MAX (1L << 40) // one tensor's elements

static int check_dtype(int dtype, enum fp_dtype *dt)
{
	if (dtype != FPK_F32 && dtype != FPK_BF16)
		return fail(FPK_EINVAL, "dtype=%d: not FPK_F32 (0) or FPK_BF16 (1)", dtype);
	*dt = dtype == FPK_BF16 ? FP_BF16 : FP_F32;
	return FPK_OK;
}

static int check_dim(const char *name, long v)
{
	if (v < 1)
		return fail(FPK_EINVAL, "%s=%ld: must be at least 1", name, v);
	if (v >= DIM_MAX)
		return fail(FPK_EINVAL, "%s=%ld: must be below 2^31", name, v);
	return FPK_OK;
}

static int check_elems(const char *what, long a, long b)
{
	if ((double)a * (double)b >= (double)ELEMS_MAX)
		return fail(FPK_EINVAL, "%s: %ld x %ld elements, more than 2^40", what, a, b);
	return FPK_OK;
}

static int check_ptr(const char *name, const void *p)
{
	if (p == NULL)
		return fail(FPK_EINVAL, "%s is NULL", name);
	if ((uintptr_t)p % 16 != 0)
		return fail(FPK_EINVAL, "%s=%p: not 16-byte aligned", name, p);
	return FPK_OK;
}

static int check_workspace(const void *ws, size_t bytes, size_t need)
{
	if (need == 0)
		return FPK_OK;
	if (bytes < need)
		return fail(FPK_EINVAL, "workspace_bytes=%zu: this shape needs %zu (ask "
			    "the _workspace function)", bytes, need);
	return check_ptr("workspace", ws);
}

// The first failing check's status; every check is evaluated until one fails.
#define CHECK(e)                              \
	do {                                  \
		int rc_ = (e);                \
		if (rc_ != FPK_OK)            \
			return rc_;           \
	} while (0)

static size_t pad(size_t n)
{
	return dev_pad(n);
}

// The current device's multiprocessors.
static int device_sms(int *sms)
{
	int dev;

	if (CUDA_CHECK(cudaGetDevice(&dev)) ||
	    CUDA_CHECK(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev)))
		return -1;
	return 0;
}

// ---------------------------------------------------------------------------
// LayerNorm + Linear

// The fold: W' (Np rows at lnl_fold_ld, in room for rows of lnl_row_ld), then
// s and b' (N floats each), each padded.
static size_t fold_wf_bytes(long K, long N, enum fp_dtype dt)
{
	// rows of lnl_row_ld: what lnl_fold_ld gives on any device
	return pad((size_t)((N + 31) / 32 * 32) * (size_t)lnl_row_ld(K, dt) * fp_dtype_size(dt));
}

static void fold_view(struct lnl_op *op, const void *folded)
{
	char *p = (char *)folded;

	op->Wf = p;
	op->sW = (float *)(p + fold_wf_bytes(op->K, op->N, op->dt));
	op->bf = op->sW + pad((size_t)op->N * sizeof(float)) / sizeof(float);
}

static int lnl_args(long M, long K, long N, int dtype, enum fp_dtype *dt)
{
	CHECK(check_dtype(dtype, dt));
	CHECK(check_dim("M", M));
	CHECK(check_dim("K", K));
	CHECK(check_dim("N", N));
	CHECK(check_elems("x", M, K));
	CHECK(check_elems("W", N, K));
	return check_elems("y", M, N);
}

static void lnl_base(struct lnl_op *op, long M, long K, long N, enum fp_dtype dt)
{
	memset(op, 0, sizeof *op);
	op->dt = dt;
	op->M = M;
	op->K = K;
	op->N = N;
	op->Np = (N + 31) / 32 * 32;
	op->ldw = K;  // lnl_fold_ld once the device is known
	op->nsets = 1;
}

static size_t fold_bytes(long K, long N, enum fp_dtype dt)
{
	return fold_wf_bytes(K, N, dt) + 2 * pad((size_t)N * sizeof(float));
}

FPK_EXPORT size_t fpk_ln_linear_folded_bytes(long K, long N, int dtype)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_ln_linear_folded_bytes");
	if (lnl_args(1, K, N, dtype, &dt) != FPK_OK)
		return 0;
	return fold_bytes(K, N, dt);
}

FPK_EXPORT int fpk_ln_linear_fold(const void *gamma, const void *beta, const void *W,
				  const void *b, long K, long N, int dtype, void *folded,
				  size_t folded_bytes, cudaStream_t stream)
{
	struct lnl_op op;
	enum fp_dtype dt = FP_F32;
	int hopper = 0;
	size_t need;

	enter("fpk_ln_linear_fold");
	CHECK(lnl_args(1, K, N, dtype, &dt));
	CHECK(check_ptr("gamma", gamma));
	CHECK(check_ptr("beta", beta));
	CHECK(check_ptr("W", W));
	CHECK(check_ptr("b", b));
	CHECK(check_ptr("folded", folded));
	need = fold_bytes(K, N, dt);
	if (folded_bytes < need)
		return fail(FPK_EINVAL, "folded_bytes=%zu: K=%ld, N=%ld need %zu", folded_bytes,
			    K, N, need);
	lnl_base(&op, 1, K, N, dt);
	op.gamma = (void *)gamma;
	op.beta = (void *)beta;
	op.W = (void *)W;
	op.b = (void *)b;
	fold_view(&op, folded);
	if (fwd_mma_setup() || fwd_wgmma_setup(&hopper))
		return FPK_ECUDA;
	op.fk = lnl_fold_perm(K, dt, hopper) ? FK_WS : FK_MMA;
	op.ldw = lnl_fold_ld(K, dt, hopper);
	return fold_launch(&op, stream) ? FPK_ECUDA : FPK_OK;
}

// The forward's workspace, in this order: the rows' statistics where the
// bf16 statistics pass or the x~ skinny kernel may run (3 M floats), x~
// where that kernel may (M rows of lnl_row_ld(K) bf16), then, where the
// launcher splits K on a device of sms multiprocessors
// (lnl_fwd_part_slices; sms = 0: the device is not known yet, and the
// partials are left out), the split-K partials of that many slices.
static size_t fwd_stats_bytes(long M, long K, enum fp_dtype dt)
{
	return lnl_fwd_pass_possible(K, dt) || lnl_fwd_xt_possible(M, K, dt)
		       ? pad(3 * (size_t)M * sizeof(float)) : 0;
}

static size_t fwd_xt_bytes(long M, long K, enum fp_dtype dt)
{
	return lnl_fwd_xt_possible(M, K, dt) ? pad(lnl_xt_bytes(M, K)) : 0;
}

static size_t fwd_ws_bytes(long M, long K, long N, enum fp_dtype dt, int sms)
{
	const int splits = sms > 0 ? lnl_fwd_part_slices(M, K, N, dt, sms) : 1;

	return fwd_stats_bytes(M, K, dt) + fwd_xt_bytes(M, K, dt) +
	       pad(lnl_part_bytes(M, N, splits));
}

// The current device's multiprocessors, or 0 where there is none to ask
// (the runtime's error cleared, nothing reported).
static int device_sms_quiet(void)
{
	int dev, sms = 0;

	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return sms;
}

FPK_EXPORT size_t fpk_ln_linear_fwd_workspace(long M, long K, long N, int dtype)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_ln_linear_fwd_workspace");
	if (lnl_args(M, K, N, dtype, &dt) != FPK_OK)
		return 0;
	return fwd_ws_bytes(M, K, N, dt, device_sms_quiet());
}

FPK_EXPORT int fpk_ln_linear_fwd(const void *x, const void *folded, void *y, long M,
				 long K, long N, int dtype, void *workspace,
				 size_t workspace_bytes, cudaStream_t stream)
{
	struct lnl_op op;
	enum fp_dtype dt = FP_F32;
	size_t sbytes, xbytes;
	int hopper = 0;

	enter("fpk_ln_linear_fwd");
	CHECK(lnl_args(M, K, N, dtype, &dt));
	CHECK(check_ptr("x", x));
	CHECK(check_ptr("folded", folded));
	CHECK(check_ptr("y", y));
	// what every device needs, before any CUDA call; the partials after
	sbytes = fwd_stats_bytes(M, K, dt);
	xbytes = fwd_xt_bytes(M, K, dt);
	CHECK(check_workspace(workspace, workspace_bytes, sbytes + xbytes));
	lnl_base(&op, M, K, N, dt);
	op.variant = FWD_FUSED;
	op.y = y;
	op.stats = sbytes ? (float *)workspace : NULL;
	op.h = xbytes ? (char *)workspace + sbytes : NULL;  // x~
	fold_view(&op, folded);
	if (device_sms(&op.sms))
		return FPK_ECUDA;
	CHECK(check_workspace(workspace, workspace_bytes, fwd_ws_bytes(M, K, N, dt, op.sms)));
	if (lnl_fwd_part_slices(M, K, N, dt, op.sms) > 1)
		op.fpart = (float *)((char *)workspace + sbytes + xbytes);
	if (fwd_mma_setup() || fwd_wgmma_setup(&hopper))
		return FPK_ECUDA;
	op.ldw = lnl_fold_ld(K, dt, hopper);  // as fpk_ln_linear_fold wrote W'
	if (lnl_fwd_choose(&op, 1))
		return FPK_ECUDA;
	if (op.ws_pass && op.stats == NULL)
		return fail(FPK_EINVAL, "workspace is NULL");
	return lnl_fwd_launch(&op, x, stream) ? FPK_ECUDA : FPK_OK;
}

// The backward's scratch, carved from the workspace in this order: h and
// dh (M x K, dtype each), the statistics (3 M floats), the column sums'
// partials, cuBLASLt's workspace.
struct bwd_layout {
	size_t h, dh, stats, part, lt, total;
};

static void bwd_layout(long M, long K, long N, enum fp_dtype dt, struct bwd_layout *z)
{
	const size_t es = fp_dtype_size(dt), R = ((size_t)M + COLSUM_ROWS - 1) / COLSUM_ROWS;
	size_t part = 2 * R * (size_t)N;

	if (part < 2 * (size_t)LNL_PARTIALS * (size_t)K)
		part = 2 * (size_t)LNL_PARTIALS * (size_t)K;
	z->h = pad((size_t)M * (size_t)K * es);
	z->dh = z->h;
	z->stats = pad(3 * (size_t)M * sizeof(float));
	z->part = pad(part * sizeof(float));
	z->lt = LT_WORKSPACE_BYTES;
	z->total = z->h + z->dh + z->stats + z->part + z->lt;
}

// cuBLASLt plans of the backward's two GEMMs per device, shape and dtype,
// made on first use and kept (a few dozen shapes; past that the oldest goes).
// The LayerNorm backward's grid is planned with them.
struct bwd_plan {
	int used, dev;
	long M, K, N;
	enum fp_dtype dt = FP_F32;
	cublasLtHandle_t lt;
	struct lt_gemm g0, g1;
	long lnb;
};

#define NPLANS 32
static struct bwd_plan plans[NPLANS];
static int plan_next;
static std::mutex plan_lock;

static void plan_release(struct bwd_plan *p)
{
	lt_release(&p->g0);
	lt_release(&p->g1);
	if (p->lt)
		cublasLtDestroy(p->lt);
	*p = bwd_plan{};
}

// The plan for this shape on the current device, made if new. Called with
// plan_lock held; NULL on failure (reported).
static struct bwd_plan *plan_for(long M, long K, long N, enum fp_dtype dt)
{
	cudaDataType_t t = dt == FP_BF16 ? CUDA_R_16BF : CUDA_R_32F;
	struct bwd_plan *p;
	int dev;

	if (CUDA_CHECK(cudaGetDevice(&dev)))
		return NULL;
	for (int i = 0; i < NPLANS; i++) {
		p = &plans[i];
		if (p->used && p->dev == dev && p->M == M && p->K == K && p->N == N && p->dt == dt)
			return p;
	}
	p = &plans[plan_next];
	plan_next = (plan_next + 1) % NPLANS;
	if (p->used)
		plan_release(p);
	p->dev = dev;
	p->M = M;
	p->K = K;
	p->N = N;
	p->dt = dt;
	if (cublasLtCreate(&p->lt) != CUBLAS_STATUS_SUCCESS) {
		p->lt = NULL;
		error("cannot create a cuBLASLt handle");
		return NULL;
	}
	if (lt_init(&p->g0, p->lt, CUBLAS_OP_N, CUBLAS_OP_T, K, N, M, t, K, N, t, K, NULL) ||
	    lt_init(&p->g1, p->lt, CUBLAS_OP_N, CUBLAS_OP_N, K, M, N, t, K, N, t, K, NULL))
		goto fail;
	p->lnb = layernorm_bwd_blocks(dt, M, K, 1);
	if (p->lnb < 0)
		goto fail;
	if (p->lnb > LNL_PARTIALS) {
		error("the LayerNorm backward wants %ld blocks (at most %d)", p->lnb, LNL_PARTIALS);
		goto fail;
	}
	p->used = 1;
	return p;
fail:
	plan_release(p);
	return NULL;
}

FPK_EXPORT size_t fpk_ln_linear_bwd_workspace(long M, long K, long N, int dtype)
{
	struct bwd_layout z;
	enum fp_dtype dt = FP_F32;

	enter("fpk_ln_linear_bwd_workspace");
	if (lnl_args(M, K, N, dtype, &dt) != FPK_OK)
		return 0;
	bwd_layout(M, K, N, dt, &z);
	return z.total;
}

FPK_EXPORT int fpk_ln_linear_bwd(const void *dy, const void *x, const void *gamma,
				 const void *beta, const void *W, void *dx, void *dgamma,
				 void *dbeta, void *dW, void *db, long M, long K, long N,
				 int dtype, void *workspace, size_t workspace_bytes,
				 cudaStream_t stream)
{
	struct bwd_layout z;
	struct lnl_op op;
	struct bwd_plan *p;
	enum fp_dtype dt = FP_F32;
	char *cur;
	int rc;

	enter("fpk_ln_linear_bwd");
	CHECK(lnl_args(M, K, N, dtype, &dt));
	CHECK(check_ptr("dy", dy));
	CHECK(check_ptr("x", x));
	CHECK(check_ptr("gamma", gamma));
	CHECK(check_ptr("beta", beta));
	CHECK(check_ptr("W", W));
	CHECK(check_ptr("dx", dx));
	CHECK(check_ptr("dgamma", dgamma));
	CHECK(check_ptr("dbeta", dbeta));
	CHECK(check_ptr("dW", dW));
	CHECK(check_ptr("db", db));
	bwd_layout(M, K, N, dt, &z);
	CHECK(check_workspace(workspace, workspace_bytes, z.total));
	lnl_base(&op, M, K, N, dt);
	op.bwd = 1;
	op.variant = BWD_FUSED;
	op.gamma = (void *)gamma;
	op.beta = (void *)beta;
	op.W = (void *)W;
	op.dx = dx;
	op.dW = dW;
	op.db = db;
	cur = (char *)workspace;
	op.dg = dgamma;
	op.dbeta = dbeta;
	op.h = dev_carve(&cur, z.h);
	op.dh = dev_carve(&cur, z.dh);
	op.stats = (float *)dev_carve(&cur, z.stats);
	op.part = (float *)dev_carve(&cur, z.part);
	op.workspace = dev_carve(&cur, z.lt);
	std::lock_guard<std::mutex> hold(plan_lock);
	if ((p = plan_for(M, K, N, dt)) == NULL)
		return FPK_ECUDA;
	op.lt = p->lt;
	op.g0 = p->g0;
	op.g1 = p->g1;
	op.lnb = p->lnb;
	rc = bwd_launch(&op, x, dy, stream);
	return rc ? FPK_ECUDA : FPK_OK;
}

// ---------------------------------------------------------------------------
// LayerNorm + GELU

static int rows_args(long M, long N, int dtype, enum fp_dtype *dt)
{
	CHECK(check_dtype(dtype, dt));
	CHECK(check_dim("M", M));
	CHECK(check_dim("N", N));
	return check_elems("x", M, N);
}

static int erf_arg(int erf)
{
	if (erf != 0 && erf != 1)
		return fail(FPK_EINVAL, "erf=%d: 0 (tanh form) or 1 (exact)", erf);
	return FPK_OK;
}

FPK_EXPORT int fpk_ln_gelu_fwd(const void *x, const void *gamma, const void *beta,
			       void *y, long M, long N, int erf, int dtype,
			       cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_ln_gelu_fwd");
	CHECK(rows_args(M, N, dtype, &dt));
	CHECK(erf_arg(erf));
	CHECK(check_ptr("x", x));
	CHECK(check_ptr("gamma", gamma));
	CHECK(check_ptr("beta", beta));
	CHECK(check_ptr("y", y));
	return ln_gelu_fused_fwd(dt, erf, x, gamma, beta, y, M, N, stream) ? FPK_ECUDA
									   : FPK_OK;
}

// The partial rows (2 N floats each); their bound does not depend on erf.
static size_t gelu_ws_bytes(long M, long N, enum fp_dtype dt)
{
	return pad((size_t)ln_gelu_fused_partials(dt, 0, M, N) * 2 * (size_t)N * sizeof(float));
}

FPK_EXPORT size_t fpk_ln_gelu_bwd_workspace(long M, long N, int dtype)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_ln_gelu_bwd_workspace");
	if (rows_args(M, N, dtype, &dt) != FPK_OK)
		return 0;
	return gelu_ws_bytes(M, N, dt);
}

FPK_EXPORT int fpk_ln_gelu_bwd(const void *dy, const void *x, const void *gamma,
			       const void *beta, void *dx, void *dgamma, void *dbeta,
			       long M, long N, int erf, int dtype, void *workspace,
			       size_t workspace_bytes, cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_ln_gelu_bwd");
	CHECK(rows_args(M, N, dtype, &dt));
	CHECK(erf_arg(erf));
	CHECK(check_ptr("dy", dy));
	CHECK(check_ptr("x", x));
	CHECK(check_ptr("gamma", gamma));
	CHECK(check_ptr("beta", beta));
	CHECK(check_ptr("dx", dx));
	CHECK(check_ptr("dgamma", dgamma));
	CHECK(check_ptr("dbeta", dbeta));
	CHECK(check_workspace(workspace, workspace_bytes, gelu_ws_bytes(M, N, dt)));
	if (ln_gelu_fused_bwd(dt, erf, dy, x, gamma, beta, dx, dgamma, dbeta,
			      (float *)workspace, M, N, stream))
		return FPK_ECUDA;
	return FPK_OK;
}

// ---------------------------------------------------------------------------
// Softmax

static int sm_setup(struct sm_op *op, enum sm_kind kind, enum fp_dtype dt, long M, long N)
{
	memset(op, 0, sizeof *op);
	op->kind = kind;
	op->dt = dt;
	op->variant = 1;
	op->M = M;
	op->N = N;
	op->nsets = 1;
	return sm_plan(op, 0, 0, 0, SM_STASH_AUTO);
}

FPK_EXPORT int fpk_softmax_fwd(const void *x, void *y, long M, long N, float scale,
			       int causal, int dtype, cudaStream_t stream)
{
	struct sm_op op;
	enum fp_dtype dt = FP_F32;

	enter("fpk_softmax_fwd");
	CHECK(rows_args(M, N, dtype, &dt));
	if (!(scale > 0.0f) || scale > 3.4e38f)
		return fail(FPK_EINVAL, "scale=%g: must be positive and finite", (double)scale);
	if (causal != 0 && causal != 1)
		return fail(FPK_EINVAL, "causal=%d: 0 or 1", causal);
	if (causal && M % N != 0)
		return fail(FPK_EINVAL, "causal with M=%ld, N=%ld: M must be a multiple of N "
			    "(blocks of N queries over N keys)", M, N);
	CHECK(check_ptr("x", x));
	CHECK(check_ptr("y", y));
	if (sm_setup(&op, causal ? SM_MASKED : SM_FWD, dt, M, N) ||
	    sm_fused_fwd(&op, x, y, causal ? SM_MASK_SKIP : SM_MASK_NONE, scale, stream))
		return FPK_ECUDA;
	return FPK_OK;
}

FPK_EXPORT int fpk_softmax_bwd(const void *y, const void *dy, void *dx, long M, long N,
			       int dtype, cudaStream_t stream)
{
	struct sm_op op;
	enum fp_dtype dt = FP_F32;

	enter("fpk_softmax_bwd");
	CHECK(rows_args(M, N, dtype, &dt));
	CHECK(check_ptr("y", y));
	CHECK(check_ptr("dy", dy));
	CHECK(check_ptr("dx", dx));
	if (sm_setup(&op, SM_BWD, dt, M, N) || sm_fused_bwd(&op, y, dy, dx, stream))
		return FPK_ECUDA;
	return FPK_OK;
}

// ---------------------------------------------------------------------------
// RMSNorm, SwiGLU, the softplus chain

// The partial rows of dgamma (N floats each): the whole workspace.
static size_t rms_ws_bytes(long M, long N, enum fp_dtype dt)
{
	return pad((size_t)rmsnorm_fused_partials(dt, M, N) * (size_t)N * sizeof(float));
}

FPK_EXPORT int fpk_rmsnorm_fwd(const void *x, const void *gamma, void *y, long M, long N,
			       int dtype, cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_rmsnorm_fwd");
	CHECK(rows_args(M, N, dtype, &dt));
	CHECK(check_ptr("x", x));
	CHECK(check_ptr("gamma", gamma));
	CHECK(check_ptr("y", y));
	return rmsnorm_fused_fwd(dt, x, gamma, y, M, N, stream) ? FPK_ECUDA : FPK_OK;
}

FPK_EXPORT size_t fpk_rmsnorm_bwd_workspace(long M, long N, int dtype)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_rmsnorm_bwd_workspace");
	if (rows_args(M, N, dtype, &dt) != FPK_OK)
		return 0;
	return rms_ws_bytes(M, N, dt);
}

FPK_EXPORT int fpk_rmsnorm_bwd(const void *dy, const void *x, const void *gamma, void *dx,
			       void *dgamma, long M, long N, int dtype, void *workspace,
			       size_t workspace_bytes, cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_rmsnorm_bwd");
	CHECK(rows_args(M, N, dtype, &dt));
	CHECK(check_ptr("dy", dy));
	CHECK(check_ptr("x", x));
	CHECK(check_ptr("gamma", gamma));
	CHECK(check_ptr("dx", dx));
	CHECK(check_ptr("dgamma", dgamma));
	CHECK(check_workspace(workspace, workspace_bytes, rms_ws_bytes(M, N, dt)));
	// the kernels write dgamma whole: straight into the caller's
	return rmsnorm_fused_bwd(dt, dy, x, gamma, dx, dgamma, (float *)workspace, M, N,
				 stream) ? FPK_ECUDA : FPK_OK;
}

static int swiglu_args(long M, long N, int dtype, enum fp_dtype *dt)
{
	CHECK(rows_args(M, N, dtype, dt));
	return check_elems("xp", M, 2 * N);
}

FPK_EXPORT int fpk_swiglu_fwd(const void *xp, void *y, long M, long N, int dtype,
			      cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_swiglu_fwd");
	CHECK(swiglu_args(M, N, dtype, &dt));
	CHECK(check_ptr("xp", xp));
	CHECK(check_ptr("y", y));
	return swiglu_fused_fwd(dt, xp, y, M, N, stream) ? FPK_ECUDA : FPK_OK;
}

FPK_EXPORT int fpk_swiglu_bwd(const void *dy, const void *xp, void *dxp, long M, long N,
			      int dtype, cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_swiglu_bwd");
	CHECK(swiglu_args(M, N, dtype, &dt));
	CHECK(check_ptr("dy", dy));
	CHECK(check_ptr("xp", xp));
	CHECK(check_ptr("dxp", dxp));
	return swiglu_fused_bwd(dt, dy, xp, dxp, M, N, stream) ? FPK_ECUDA : FPK_OK;
}

static int flat_args(size_t n, int dtype, enum fp_dtype *dt)
{
	CHECK(check_dtype(dtype, dt));
	if (n < 1)
		return fail(FPK_EINVAL, "n=0: must be at least 1");
	if (n >= (size_t)ELEMS_MAX)
		return fail(FPK_EINVAL, "n=%zu: more than 2^40 elements", n);
	return FPK_OK;
}

FPK_EXPORT int fpk_softplus_fwd(const void *x, void *y, size_t n, int dtype,
				cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_softplus_fwd");
	CHECK(flat_args(n, dtype, &dt));
	CHECK(check_ptr("x", x));
	CHECK(check_ptr("y", y));
	const void *in[1] = { x };
	void *out[1] = { y };

	return sp_launch_op(SP_K_FWD, dt, 0, in, out, n, stream) ? FPK_ECUDA : FPK_OK;
}

FPK_EXPORT int fpk_softplus_bwd(const void *dy, const void *x, void *dx, size_t n,
				int dtype, cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_softplus_bwd");
	CHECK(flat_args(n, dtype, &dt));
	CHECK(check_ptr("dy", dy));
	CHECK(check_ptr("x", x));
	CHECK(check_ptr("dx", dx));
	const void *in[2] = { dy, x };
	void *out[1] = { dx };

	return sp_launch_op(SP_K_BWD_RECOMPUTE, dt, 0, in, out, n, stream) ? FPK_ECUDA
									     : FPK_OK;
}

// ---------------------------------------------------------------------------
// bias + ReLU (a bit mask for the backward), bias + dropout + residual

// The column sums' partial rows (N floats each): the whole workspace.
static size_t colsum_ws_bytes(long rows, long N)
{
	return pad((size_t)rows * (size_t)N * sizeof(float));
}

FPK_EXPORT size_t fpk_bias_relu_mask_bytes(long M, long N)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_bias_relu_mask_bytes");
	if (rows_args(M, N, FPK_F32, &dt) != FPK_OK)
		return 0;
	return bias_relu_bits_bytes(M, N);
}

FPK_EXPORT int fpk_bias_relu_fwd(const void *x, const void *bias, void *y, void *mask,
				 long M, long N, int dtype, cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_bias_relu_fwd");
	CHECK(rows_args(M, N, dtype, &dt));
	CHECK(check_ptr("x", x));
	CHECK(check_ptr("bias", bias));
	CHECK(check_ptr("y", y));
	CHECK(check_ptr("mask", mask));
	return bias_relu_fused_fwd(dt, x, bias, y, (uint32_t *)mask, M, N, stream)
		? FPK_ECUDA : FPK_OK;
}

FPK_EXPORT size_t fpk_bias_relu_bwd_workspace(long M, long N, int dtype)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_bias_relu_bwd_workspace");
	if (rows_args(M, N, dtype, &dt) != FPK_OK)
		return 0;
	return colsum_ws_bytes(bias_relu_partials(dt, M, N), N);
}

FPK_EXPORT int fpk_bias_relu_bwd(const void *dy, const void *mask, void *dx, void *dbias,
				 long M, long N, int dtype, void *workspace,
				 size_t workspace_bytes, cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_bias_relu_bwd");
	CHECK(rows_args(M, N, dtype, &dt));
	CHECK(check_ptr("dy", dy));
	CHECK(check_ptr("mask", mask));
	CHECK(check_ptr("dx", dx));
	CHECK(check_ptr("dbias", dbias));
	CHECK(check_workspace(workspace, workspace_bytes,
			      colsum_ws_bytes(bias_relu_partials(dt, M, N), N)));
	return bias_relu_fused_bwd(dt, dy, (const uint32_t *)mask, dx, dbias,
				   (float *)workspace, M, N, stream) ? FPK_ECUDA : FPK_OK;
}

static int drop_arg(float p)
{
	if (!(p >= 0.0f && p < 1.0f))
		return fail(FPK_EINVAL, "p=%g: a dropout probability in [0, 1)", (double)p);
	return FPK_OK;
}

FPK_EXPORT int fpk_bias_dropout_add_fwd(const void *x, const void *bias,
					const void *residual, void *y, long M, long N,
					float p, unsigned long long seed, int dtype,
					cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_bias_dropout_add_fwd");
	CHECK(rows_args(M, N, dtype, &dt));
	CHECK(drop_arg(p));
	CHECK(check_ptr("x", x));
	CHECK(check_ptr("bias", bias));
	CHECK(check_ptr("residual", residual));
	CHECK(check_ptr("y", y));
	return bda_fused_fwd(dt, x, bias, residual, y, M, N, p, seed, stream) ? FPK_ECUDA
									      : FPK_OK;
}

FPK_EXPORT size_t fpk_bias_dropout_add_bwd_workspace(long M, long N, int dtype)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_bias_dropout_add_bwd_workspace");
	if (rows_args(M, N, dtype, &dt) != FPK_OK)
		return 0;
	return colsum_ws_bytes(bda_partials(dt, M, N), N);
}

FPK_EXPORT int fpk_bias_dropout_add_bwd(const void *dy, void *dx, void *dbias, long M,
					long N, float p, unsigned long long seed, int dtype,
					void *workspace, size_t workspace_bytes,
					cudaStream_t stream)
{
	enum fp_dtype dt = FP_F32;

	enter("fpk_bias_dropout_add_bwd");
	CHECK(rows_args(M, N, dtype, &dt));
	CHECK(drop_arg(p));
	CHECK(check_ptr("dy", dy));
	CHECK(check_ptr("dx", dx));
	CHECK(check_ptr("dbias", dbias));
	CHECK(check_workspace(workspace, workspace_bytes,
			      colsum_ws_bytes(bda_partials(dt, M, N), N)));
	return bda_fused_bwd(dt, dy, dx, dbias, (float *)workspace, M, N, p, seed,
			     stream) ? FPK_ECUDA : FPK_OK;
}

// ---------------------------------------------------------------------------
// The CPU references

static int ref_args(const void *const *p, const char *const *names, int n, long M,
		    long K, long N)
{
	for (int i = 0; i < n; i++)
		if (p[i] == NULL)
			return fail(FPK_EINVAL, "%s is NULL", names[i]);
	CHECK(check_dim("M", M));
	CHECK(check_dim("K", K));
	return check_dim("N", N);
}

FPK_EXPORT int fpk_ref_ln_linear_fwd(const double *x, const double *gamma,
				     const double *beta, const double *W, const double *b,
				     double *y, long M, long K, long N)
{
	const void *p[] = { x, gamma, beta, W, b, y };
	static const char *const names[] = { "x", "gamma", "beta", "W", "b", "y" };

	enter("fpk_ref_ln_linear_fwd");
	CHECK(ref_args(p, names, 6, M, K, N));
	lnl_fwd_ref(x, gamma, beta, W, b, y, M, K, N);
	return FPK_OK;
}

FPK_EXPORT int fpk_ref_ln_linear_bwd(const double *x, const double *gamma,
				     const double *beta, const double *W, const double *dy,
				     double *dx, double *dgamma, double *dbeta, double *dW,
				     double *db, long M, long K, long N)
{
	const void *p[] = { x, gamma, beta, W, dy, dx, dgamma, dbeta, dW, db };
	static const char *const names[] = { "x", "gamma", "beta", "W", "dy", "dx",
					     "dgamma", "dbeta", "dW", "db" };

	enter("fpk_ref_ln_linear_bwd");
	CHECK(ref_args(p, names, 10, M, K, N));
	lnl_bwd_ref(x, gamma, beta, W, dy, dx, dgamma, dbeta, dW, db, M, K, N);
	return FPK_OK;
}
