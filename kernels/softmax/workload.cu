// workload.cu - the row softmax workloads' contract: softmax_fwd,
// softmax_masked_fwd and softmax_bwd, fused and unfused, fp32 and bf16
// (bf16 storage, fp32 math): shapes, napkin math, kernel options, the
// instances' lifecycle and the check against the CPU reference.
//
// The room: ref.c (CPU references and input profiles), slots.cuh (device
// helpers), unfused.cu (the unfused kernels), fused.cu (the fused kernels
// and the kernel choice), then this file.
//
// Napkin math, per element of an M x N input (E = M*N, es = 4 fp32 / 2 bf16):
//   softmax_fwd          5 FLOP (max, subtract, exp, sum, scale by 1/sum),
//                        min bytes 2*E*es (read x, write y)
//   softmax_masked_fwd   6 FLOP per kept element (plus the scale), min bytes
//                        (kept + E)*es: masked inputs need not be read
//   softmax_bwd          4 FLOP (dy*y summed as an FMA, subtract, multiply),
//                        min bytes 3*E*es (read y, dy, write dx)
// exp counts as one FLOP (the hardware does an FMUL by log2(e) and one
// MUFU.EX2, which FLOP counters do not see). At 16384 x 4096 softmax_fwd is
// 335 MFLOP over 537 MB fp32 (0.6 FLOP/byte): on an H100 the bytes take
// some 25 times the FLOPs' time, so every kernel here is bound by bytes and
// "fast" means "near the copy of as many bytes". The exps (67 M MUFU.EX2
// at 16/clk/SM) take a fraction of one pipe: hidden. Measured:
// bench/RESULTS.md, "Softmax, H100" and "LayerNorm+GELU and softmax on an
// H100, measured by fuseprof".
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "error.h"
#include "kutil.h"
#include "softmax/sm.h"
#include "softmax/softmax.h"
#include "util.h"

// ---------------------------------------------------------------------------
// The workload contract

static int sm_launch(struct fp_op *fop, int set, cudaStream_t st)
{
	const struct sm_op *op = (const struct sm_op *)fop;
	const void *in0 = op->in0 + (size_t)set * op->set_bytes;
	const void *in1 = op->in1 ? op->in1 + (size_t)set * op->set_bytes : NULL;

	if (set < 0 || set >= op->nsets)
		return error("softmax: input set %d out of range [0, %d)", set,
			     op->nsets);
	if (op->variant == 0)
		return sm_unfused(op, in0, in1, st);
	switch (op->kind) {
	case SM_FWD:
		return sm_fused_fwd(op, in0, op->out, 0, 1.f, st);
	case SM_MASKED:
		return sm_fused_fwd(op, in0, op->out, 1, (float)SOFTMAX_MASKED_SCALE, st);
	case SM_BWD:
		return sm_fused_bwd(op, in0, in1, op->out, st);
	}
	return error("softmax: unknown workload kind %d", (int)op->kind);
}

// Kernel options, the same for the three workloads. Each asks the fused
// kernels for a shape (the default, auto, is what sm_plan picks by itself);
// a value that cannot serve at a shape falls back to auto, and kernel()
// says what ran. The unfused variants' own kernels have no choice (the
// masked one ends with the fused kernel, which the options steer).
enum { KO_WARPS, KO_SLOTS, KO_CLUSTERS, SM_NKOPTS };
static const char *const warps_values[] = { "auto", "1", "2", "4", "8", "16", "32", NULL };
static const char *const slots_values[] = { "auto", "1", "2", "4", "8", NULL };
static const char *const clusters_values[] = { "auto", "1", "2", "4", "8", NULL };
static const struct fp_kopt sm_kopts[] = {
	{ "warps", warps_values,
	  "rows held in registers: warps per row (auto: the fewest that hold it at "
	  "4 slots a thread; with slots=auto, the fewest slots that hold it)" },
	{ "slots", slots_values,
	  "rows held in registers: 16-byte slots per thread (auto: see warps; "
	  "with warps=auto, the fewest warps that hold the row)" },
	{ "clusters", clusters_values,
	  "wide rows: blocks per row, a cluster (auto: the fewest that stash at "
	  "most 50 KB each)" },
	{ NULL, NULL, NULL },
};

// workload->kernel(): the fused kernel's shape (also what the masked
// unfused variant ends with); nothing for the fixed unfused chains.
static void sm_kernel(const struct fp_op *fop, char *buf, size_t n)
{
	const struct sm_op *op = (const struct sm_op *)fop;
	size_t len = 0;

	buf[0] = '\0';
	if (op->variant == 0 && op->kind != SM_MASKED)
		return;
	if (op->variant == 0) {
		snprintf(buf, n, "scale and mask, then ");
		len = strlen(buf);
	}
	if (len < n)
		sm_describe(op, buf + len, n - len);
}

#define SM_MAX_M 2147483647L  // one block per row: the grid's x limit
#define SM_MAX_N (1L << 30)   // in-row indices are 32-bit
#define SM_TOL_FP32 1e-5      // forward and backward alike
#define SM_TOL_BF16 1e-2
// Shared memory a block may have on the devices fuseprof targets (H100,
// H200: 227 KB), for model() which must not touch the GPU.
#define SM_ASSUMED_STASH_BYTES (232448L - 1024)

static int sm_validate(const struct fp_shape *s, enum fp_dtype dt, char *why,
		       size_t n)
{
	long M = s->v[0], N = s->v[1];
	int wpr, vpt;

	if (dt != FP_F32 && dt != FP_BF16)
		snprintf(why, n, "dtype %d is not supported (fp32, bf16)", (int)dt);
	else if (M < 1)
		snprintf(why, n, "M=%ld: there must be at least 1 row", M);
	else if (N < 1)
		snprintf(why, n, "N=%ld: rows must be at least 1 element wide", N);
	else if (M > SM_MAX_M)
		snprintf(why, n, "M=%ld: at most %ld rows (one thread block per row)",
			 M, SM_MAX_M);
	else if (N > SM_MAX_N)
		snprintf(why, n, "N=%ld: rows are at most %ld elements wide (32-bit in-row indexing)",
			 N, SM_MAX_N);
	else if (sm_pick_reg(N, dt, &wpr, &vpt) && M > SM_MAX_M / WIDE_CLUSTER)
		snprintf(why, n, "M=%ld: rows of N=%ld run as clusters of up to %d blocks, so at most %ld rows",
			 M, N, WIDE_CLUSTER, SM_MAX_M / WIDE_CLUSTER);
	else
		return 0;
	return -1;
}

static size_t dev_bytes(enum sm_kind kind, const struct fp_shape *s,
			enum fp_dtype dt, int variant, int nsets)
{
	size_t M = (size_t)s->v[0], set = dev_pad(M * (size_t)s->v[1] * fp_dtype_size(dt));
	size_t rowv = dev_pad(M * sizeof(float));

	switch (kind) {
	case SM_FWD:
		return (size_t)nsets * set + set + (variant == 0 ? set + 2 * rowv : 0);
	case SM_MASKED:
		return (size_t)nsets * set + set + (variant == 0 ? set : 0);
	default:
		return 2 * (size_t)nsets * set + set + (variant == 0 ? rowv : 0);
	}
}

static size_t fwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	return dev_bytes(SM_FWD, s, dt, variant, nsets);
}

static size_t masked_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
				  int variant, int nsets)
{
	return dev_bytes(SM_MASKED, s, dt, variant, nsets);
}

static size_t bwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	return dev_bytes(SM_BWD, s, dt, variant, nsets);
}

// DRAM bytes the wide kernel re-reads per row beyond its blocks' stashes (arrays: 1
// forward, 2 backward), assuming the re-read misses L2.
static double wide_reread(long N, enum fp_dtype dt, int arrays)
{
	int wpr, vpt, W = dt == FP_BF16 ? 8 : 4;
	long S = sm_max_row_slots(N, W), cap = SM_ASSUMED_STASH_BYTES / (16L * arrays);
	int C = sm_wide_cluster(S, arrays);
	long chunk = (S + C - 1) / C;

	if (sm_pick_reg(N, dt, &wpr, &vpt) == 0 || chunk <= cap)
		return 0;
	return (double)(chunk - cap) * C * 16 * arrays;
}

static void fwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], N = (double)s->v[1], E = M * N;
	double es = (double)fp_dtype_size(dt);

	m->flops = 5 * E;
	m->min_bytes = 2 * E * es;
	if (variant == 0)  // max: E; exp: 2E; sum: E; div: 2E; 4 row vectors
		m->variant_bytes = 6 * E * es + 16 * M;
	else
		m->variant_bytes = m->min_bytes + M * wide_reread(s->v[1], dt, 1);
}

static void masked_model(const struct fp_shape *s, enum fp_dtype dt,
			 int variant, struct fp_model *m)
{
	double M = (double)s->v[0], N = (double)s->v[1], E = M * N;
	double es = (double)fp_dtype_size(dt), kept = softmax_causal_kept(s->v[0], s->v[1]);

	m->flops = 6 * kept;
	m->min_bytes = (kept + E) * es;
	if (variant == 0)  // scale+mask: read E, write E; softmax of t: 2E
		m->variant_bytes = 4 * E * es + M * wide_reread(s->v[1], dt, 1);
	else  // the wide kernel reads kept columns only; bound it by the row
		m->variant_bytes = m->min_bytes + M * wide_reread(s->v[1], dt, 1);
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], N = (double)s->v[1], E = M * N;
	double es = (double)fp_dtype_size(dt);

	m->flops = 4 * E;
	m->min_bytes = 3 * E * es;
	if (variant == 0)  // dot: read 2E, write M; elem: read 2E + M, write E
		m->variant_bytes = 5 * E * es + 8 * M;
	else
		m->variant_bytes = m->min_bytes + M * wide_reread(s->v[1], dt, 2);
}

static void sm_destroy(struct fp_op *fop)
{
	struct sm_op *op = (struct sm_op *)fop;

	if (!op)
		return;
	cudaFree(op->in0);
	cudaFree(op->in1);
	cudaFree(op->out);
	cudaFree(op->tmp);
	cudaFree(op->rowa);
	cudaFree(op->rowb);
	free(op);
}

// The number option i of ko asks for: 0 for "auto" (values[0]), else the
// value, which is a number for every softmax option.
static int kopt_number(const struct fp_kopts *ko, int i)
{
	return ko && ko->v[i] ? atoi(sm_kopts[i].values[ko->v[i]]) : 0;
}

static int sm_create(enum sm_kind kind, struct fp_op **out,
		     const struct fp_shape *s, enum fp_dtype dt, int variant,
		     int nsets, unsigned long long seed, const struct fp_kopts *ko)
{
	struct sm_op *op = (struct sm_op *)xcalloc(1, sizeof *op);
	char why[160];
	size_t E, rowv;

	*out = NULL;
	if (sm_validate(s, dt, why, sizeof why)) {
		free(op);
		return error("softmax: %s", why);
	}
	if (nsets < 1 || variant < 0 || variant > 1) {
		free(op);
		return error("softmax: bad instance (variant %d, %d input sets)",
			     variant, nsets);
	}
	for (int i = 0; ko && i < SM_NKOPTS; i++) {
		int nv = 0;

		while (sm_kopts[i].values[nv])
			nv++;
		if (ko->v[i] >= nv) {
			free(op);
			return error("softmax: kernel option %s: no value %d",
				     sm_kopts[i].name, ko->v[i]);
		}
	}
	if (ko)
		op->ko = *ko;
	op->kind = kind;
	op->dt = dt;
	op->variant = variant;
	op->M = s->v[0];
	op->N = s->v[1];
	op->nsets = nsets;
	E = (size_t)op->M * (size_t)op->N;
	op->set_bytes = dev_pad(E * fp_dtype_size(dt));
	rowv = dev_pad((size_t)op->M * sizeof(float));
	if (sm_plan(op, kopt_number(ko, KO_WARPS), kopt_number(ko, KO_SLOTS),
		    kopt_number(ko, KO_CLUSTERS)))
		goto out_free;
	if (dev_alloc(&op->in0, (size_t)nsets * op->set_bytes) ||
	    (kind == SM_BWD && dev_alloc(&op->in1, (size_t)nsets * op->set_bytes)) ||
	    dev_alloc(&op->out, op->set_bytes) ||
	    (variant == 0 && kind != SM_BWD && dev_alloc(&op->tmp, op->set_bytes)) ||
	    (variant == 0 && kind != SM_MASKED && dev_alloc(&op->rowa, rowv)) ||
	    (variant == 0 && kind == SM_FWD && dev_alloc(&op->rowb, rowv)))
		goto out_free;

	// Profile-0 inputs for timing, drawn on the device. Backward gets a
	// real softmax output as y: the forward kernel over normal logits
	// (drawn into the dx buffer) writes it.
	for (int i = 0; i < nsets; i++) {
		char *in0 = op->in0 + (size_t)i * op->set_bytes;
		uint64_t sd = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);

		if (kind != SM_BWD) {
			if (dev_fill_normal(in0, dt, E, sd, 0.f,
					    kind == SM_MASKED ? 8.f : 1.f, 0))
				goto out_free;
			continue;
		}
		if (dev_fill_normal(op->out, dt, E, sd, 0.f, 1.f, 0) ||
		    sm_fused_fwd(op, op->out, in0, 0, 1.f, 0) ||
		    dev_fill_normal(op->in1 + (size_t)i * op->set_bytes, dt, E,
				    sd ^ 0xd1b54a32d192ed03ull, 0.f, 1.f, 0))
			goto out_free;
	}
	if (CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	*out = (struct fp_op *)op;
	return 0;

out_free:
	sm_destroy((struct fp_op *)op);
	return -1;
}

static int fwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return sm_create(SM_FWD, op, s, dt, variant, nsets, seed, ko);
}

static int masked_create(struct fp_op **op, const struct fp_shape *s,
			 enum fp_dtype dt, int variant, int nsets,
			 unsigned long long seed, const struct fp_kopts *ko)
{
	return sm_create(SM_MASKED, op, s, dt, variant, nsets, seed, ko);
}

static int bwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return sm_create(SM_BWD, op, s, dt, variant, nsets, seed, ko);
}

// One part of a check's reference rows (parallel_for): rows [r0, r1) of
// the inputs a (and b), compared with the GPU's got into cmp[part].
struct sm_ref_job {
	const struct sm_op *op;
	const double *a, *b, *got;
	struct fp_cmp *cmp;
};

static void sm_ref_rows(void *ctx, int part, long r0, long r1)
{
	const struct sm_ref_job *j = (const struct sm_ref_job *)ctx;
	const long N = j->op->N;
	double *ref = (double *)xmalloc((size_t)N * sizeof *ref);

	cmp_init(&j->cmp[part]);
	for (long row = r0; row < r1; row++) {
		size_t o = (size_t)row * N;

		if (j->op->kind == SM_BWD)
			softmax_bwd_ref_row(j->a + o, j->b + o, ref, N);
		else if (j->op->kind == SM_MASKED)
			softmax_fwd_ref_row(j->a + o, ref, N, softmax_causal_keep(row, N),
					    SOFTMAX_MASKED_SCALE);
		else
			softmax_fwd_ref_row(j->a + o, ref, N, N, 1.0);
		cmp_add(&j->cmp[part], j->got + o, ref, (size_t)N);
	}
	free(ref);
}

// One part of the backward check's inputs: rows [r0, r1) of a (logits on
// entry) become y = softmax(a), and of b the upstream gradient dy ~
// N(0, scale^2), each row from its own stream.
struct bwd_in_job {
	double *a, *b;
	long N;
	double scale;
	uint64_t seed;
};

static void bwd_in_rows(void *ctx, int part, long r0, long r1)
{
	const struct bwd_in_job *j = (const struct bwd_in_job *)ctx;
	const long N = j->N;
	struct fp_rng g;

	(void)part;
	for (long r = r0; r < r1; r++) {
		double *ar = j->a + r * N, *br = j->b + r * N;

		softmax_fwd_ref_row(ar, br, N, N, 1.0);
		memcpy(ar, br, (size_t)N * sizeof *ar);
		rng_seed_item(&g, j->seed, r);
		for (long k = 0; k < N; k++)
			br[k] = j->scale * rng_normal(&g);
	}
}

// Fresh host inputs from profile and seed into set 0, outputs (and the
// unfused intermediates) poisoned, one run, every row compared with the
// double reference computed on the very values the GPU saw.
static int sm_check(struct fp_op *fop, int profile, unsigned long long seed,
		    struct fp_check *r)
{
	struct sm_op *op = (struct sm_op *)fop;
	const long M = op->M, N = op->N;
	const size_t E = (size_t)M * (size_t)N, es = fp_dtype_size(op->dt);
	const enum sm_profile p = (enum sm_profile)profile;
	double *a = (double *)xmalloc(E * sizeof(double));
	double *b = NULL, *got = NULL;
	struct fp_cmp c;
	int rc = -1;

	if (profile < SM_NORMAL || profile > SM_DEADROWS) {
		error("softmax: no input profile %d", profile);
		goto out_free;
	}
	softmax_gen_logits(a, M, N, p, op->kind == SM_MASKED ? 8.0 : 1.0, seed);
	if (op->kind == SM_BWD) {
		// y = softmax(logits of the profile); dy ~ N(0, 1), 1e4 x that
		// for the large profile.
		struct bwd_in_job job = { NULL, NULL, N,
			p == SM_LARGE ? 1e4 : 1.0, seed ^ 0x5851f42d4c957f2dull };

		b = (double *)xmalloc(E * sizeof(double));
		job.a = a;
		job.b = b;
		parallel_for(M, parallel_min_rows(N), 64, bwd_in_rows, &job);
		host_round(b, E, op->dt);
		if (dev_upload(op->in1, op->dt, b, E))
			goto out_free;
	}
	host_round(a, E, op->dt);
	if (dev_upload(op->in0, op->dt, a, E) ||
	    dev_poison(op->out, E * es) ||
	    (op->tmp && dev_poison(op->tmp, E * es)) ||
	    (op->rowa && dev_poison(op->rowa, (size_t)M * sizeof(float))) ||
	    (op->rowb && dev_poison(op->rowb, (size_t)M * sizeof(float))) ||
	    sm_launch(fop, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	got = (double *)xmalloc(E * sizeof(double));
	if (dev_download(got, op->out, op->dt, E))
		goto out_free;

	check_begin(r, seed, op->dt == FP_BF16 ? SM_TOL_BF16 : SM_TOL_FP32);
	{
		// The references on every core, rows split into parts whose
		// comparisons merge in row order.
		const long min_rows = parallel_min_rows(N);
		struct sm_ref_job job = { op, a, b, got, NULL };
		const int np = parallel_parts(M, min_rows, 64);

		job.cmp = (struct fp_cmp *)xcalloc((size_t)np, sizeof *job.cmp);
		parallel_for(M, min_rows, 64, sm_ref_rows, &job);
		cmp_init(&c);
		for (int p = 0; p < np; p++)
			cmp_merge(&c, &job.cmp[p]);
		free(job.cmp);
	}
	check_output(r, op->kind == SM_BWD ? "dx" : "y", &c);
	rc = 0;
out_free:
	free(a);
	free(b);
	free(got);
	return rc;
}

static const struct fp_param sm_params[] = {
	{ "M", 16384, 1, SM_MAX_M, "rows" },
	{ "N", FP_REQUIRED, 1, SM_MAX_N, "row width (elements)" },
	{ NULL, 0, 0, 0, NULL },
};

// Index i is enum sm_profile i.
static const char *const sm_profiles[] = {
	"normal", "large", "neginf", "deadrows", NULL,
};

#define SM_TESTS "M=1,N=1;M=1,N=4097;M=3,N=1023;M=16384,N=768;M=4,N=50257;" \
	"M=7,N=3;M=5,N=8192;M=5,N=16384;M=3,N=131101;M=2,N=1000003"

static const struct fp_variant fwd_variants[] = {
	{ "unfused4", FP_UNFUSED,
	  "4 kernels: row max, exp(x - max), row sum, divide; e = exp(x - max) in DRAM" },
	{ "fused", FP_FUSED,
	  "1 kernel: row in registers (online max/sum and a shared-memory stash for wide rows)" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_softmax_fwd = {
	.name = "softmax_fwd",
	.summary = "y = softmax(x) over each row of an M x N matrix",
	.params = sm_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = sm_profiles,
	.suite = "M=16384,N=1024;M=16384,N=4096;M=2048,N=50257",
	.quick = "M=2048,N=1024;M=64,N=50257",
	.tests = SM_TESTS,
	.kopts = sm_kopts,
	.validate = sm_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.kernel = sm_kernel,
	.launch = sm_launch,
	.check = sm_check,
	.destroy = sm_destroy,
};

// The mask is a causal rule, not an M x N tensor: rows are blocks of N
// queries over N keys and query i = r mod N sees keys 0..i (the decoder
// attention that softmax over scores serves). A rule costs no bytes, so the
// fused kernel reads only the kept scores (about half) where a tensor mask
// would add a full extra input to every variant; the unfused form is the
// eager framework's masked_fill followed by softmax, which materialises the
// masked scores in DRAM. The scale is fixed at 1/sqrt(64).
static const struct fp_variant masked_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "2 kernels: t = x*scale with causal -inf fill (in DRAM), then the fused softmax of t" },
	{ "fused", FP_FUSED,
	  "1 kernel: scale, causal mask and softmax; masked scores are never read" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_softmax_masked_fwd = {
	.name = "softmax_masked_fwd",
	.summary = "y = softmax(x/8 + causal mask) over rows of M/N blocks of N x N scores",
	.params = sm_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = masked_variants,
	.profiles = sm_profiles,
	.suite = "M=16384,N=1024;M=16384,N=4096",
	.quick = "M=2048,N=1024",
	.tests = SM_TESTS,
	.kopts = sm_kopts,
	.validate = sm_validate,
	.device_bytes = masked_device_bytes,
	.model = masked_model,
	.create = masked_create,
	.kernel = sm_kernel,
	.launch = sm_launch,
	.check = sm_check,
	.destroy = sm_destroy,
};

static const struct fp_variant bwd_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "2 kernels: s = rowsum(dy*y) to DRAM, then dx = y*(dy - s)" },
	{ "fused", FP_FUSED,
	  "1 kernel: y and dy read once, row dot product on chip, dx written once" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_softmax_bwd = {
	.name = "softmax_bwd",
	.summary = "dx = y * (dy - sum(dy * y)) per row: the gradient of softmax",
	.params = sm_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = sm_profiles,
	.suite = "M=16384,N=1024;M=16384,N=4096;M=2048,N=50257",
	.quick = "M=2048,N=1024;M=64,N=50257",
	.tests = SM_TESTS,
	.kopts = sm_kopts,
	.validate = sm_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.kernel = sm_kernel,
	.launch = sm_launch,
	.check = sm_check,
	.destroy = sm_destroy,
};
