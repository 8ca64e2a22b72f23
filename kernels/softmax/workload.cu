// workload.cu - the row softmax workloads' contract: softmax_fwd,
// softmax_masked_fwd and softmax_bwd, fused and unfused (and the masked
// forward's fused_dense), fp32 and bf16
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
#include "checkref.h"
#include "kutil.h"
#include "par.h"
#include "softmax/sm.h"
#include "softmax/softmax.h"
#include "util.h"

// ---------------------------------------------------------------------------
// The workload contract

// Bytes of one set's written buffers (sm_op.wbuf): the output, and the
// unfused variants' intermediates.
static size_t written_bytes(enum sm_kind kind, size_t set, size_t rowv, int variant)
{
	size_t n = set;

	if (variant == 0 && kind != SM_BWD)
		n += set;  // tmp
	if (variant == 0 && kind != SM_MASKED)
		n += rowv;  // rowa
	if (variant == 0 && kind == SM_FWD)
		n += rowv;  // rowb
	return n;
}

// v = op as seen by a launch of set `set`: its written buffers set *
// wset_bytes past set 0's (the inputs are offset by the launch).
static void set_view(const struct sm_op *op, int set, struct sm_op *v)
{
	const size_t off = (size_t)set * op->wset_bytes;

	*v = *op;
	v->out = dev_in_set(op->out, off);
	v->tmp = dev_in_set(op->tmp, off);
	v->rowa = (float *)dev_in_set(op->rowa, off);
	v->rowb = (float *)dev_in_set(op->rowb, off);
}

static int sm_launch(struct fp_op *fop, int set, cudaStream_t st)
{
	const struct sm_op *base = (const struct sm_op *)fop;
	struct sm_op view, *op = &view;
	const void *in0, *in1;

	if (set < 0 || set >= base->nsets)
		return error("softmax: set %d out of range [0, %d)", set, base->nsets);
	set_view(base, set, &view);
	in0 = op->in0 + (size_t)set * op->set_bytes;
	in1 = op->in1 ? op->in1 + (size_t)set * op->set_bytes : NULL;
	if (op->variant == 0)
		return sm_unfused(op, in0, in1, st);
	switch (op->kind) {
	case SM_FWD:
		return sm_fused_fwd(op, in0, op->out, SM_MASK_NONE, 1.f, st);
	case SM_MASKED:
		return sm_fused_fwd(op, in0, op->out, op->variant == 2 ? SM_MASK_DENSE
				    : SM_MASK_SKIP, (float)SOFTMAX_MASKED_SCALE, st);
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
enum { KO_WARPS, KO_SLOTS, KO_CLUSTERS, KO_STASH, SM_NKOPTS };
static const char *const warps_values[] = { "auto", "1", "2", "4", "8", "16", "32", NULL };
static const char *const slots_values[] = { "auto", "1", "2", "4", "8", NULL };
static const char *const clusters_values[] = { "auto", "1", "2", "3", "4", "5", "6", "7", "8", NULL };
static const char *const stash_values[] = { "auto", "all", "0", "8", "16", "24", "32", "40", "48", "64", NULL };
static const struct fp_kopt sm_kopts[] = {
	{ "warps", warps_values,
	  "rows held in registers: warps per row (auto: the fewest that hold it at "
	  "4 slots a thread; with slots=auto, the fewest slots that hold it)" },
	{ "slots", slots_values,
	  "rows held in registers: 16-byte slots per thread (auto: see warps; "
	  "with warps=auto, the fewest warps that hold the row)" },
	{ "clusters", clusters_values,
	  "wide rows: blocks per row, a cluster (auto: the fewest that leave "
	  "each at most 50 KB of the row)", "3" },
	{ "stash", stash_values,
	  "wide rows: most KB a block keeps of its part of the row in shared "
	  "memory, the rest read again (from L2) in pass 2 (auto: 48 forward, "
	  "40 backward, 32 in the masked fused forward; all: as much as a "
	  "block may have)", "all,0" },
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

	// inputs (x; backward y and dy), then what a launch writes: both per set
	return (size_t)nsets * ((kind == SM_BWD ? 2 : 1) * set +
				written_bytes(kind, set, rowv, variant));
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
// forward, 2 backward), assuming the re-read misses L2: the part past the
// shared memory a block may have. What the stash cap (sm.h, WIDE_STASH_*)
// leaves is read again from L2 while the row is there and counts nothing
// (the truth's DRAM bytes within 1.5 % of this model at 2048 x 50257, H200).
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

	memset(m, 0, sizeof *m);
	m->flops = 5 * E;
	m->min_bytes = 2 * E * es;
	m->saved_bytes = E * es;  // y: every softmax_bwd variant reads it
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

	memset(m, 0, sizeof *m);
	m->flops = 6 * kept;
	m->min_bytes = (kept + E) * es;
	// Its gradient, dx = y (dy - sum(dy y)) / 8, reads y as softmax_bwd does
	// (no workload measures it, so .backward stays NULL).
	m->saved_bytes = E * es;
	if (variant == 0)  // scale+mask: read E, write E; softmax of t: 2E
		m->variant_bytes = 4 * E * es + M * wide_reread(s->v[1], dt, 1);
	else if (variant == 2)  // fused_dense: x read whole, y written
		m->variant_bytes = 2 * E * es + M * wide_reread(s->v[1], dt, 1);
	else  // the wide kernel reads kept columns only; bound it by the row
		m->variant_bytes = m->min_bytes + M * wide_reread(s->v[1], dt, 1);
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], N = (double)s->v[1], E = M * N;
	double es = (double)fp_dtype_size(dt);

	memset(m, 0, sizeof *m);
	m->flops = 4 * E;
	m->min_bytes = 3 * E * es;
	m->saved_bytes = E * es;  // y, which the forward keeps for it
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
	cudaFree(op->wbuf);
	free(op);
}

// The number option i of ko asks for: 0 for "auto" (values[0]), else the
// value, which is a number for every softmax option.
static int kopt_number(const struct fp_kopts *ko, int i)
{
	return ko && ko->v[i] ? atoi(sm_kopts[i].values[ko->v[i]]) : 0;
}

// The stash option as sm_plan takes it: KB, SM_STASH_AUTO or SM_STASH_ALL.
static int kopt_stash(const struct fp_kopts *ko)
{
	if (!ko || !ko->v[KO_STASH])
		return SM_STASH_AUTO;
	if (!strcmp(sm_kopts[KO_STASH].values[ko->v[KO_STASH]], "all"))
		return SM_STASH_ALL;
	return kopt_number(ko, KO_STASH);
}

static int sm_create(enum sm_kind kind, struct fp_op **out,
		     const struct fp_shape *s, enum fp_dtype dt, int variant,
		     int nsets, unsigned long long seed, const struct fp_kopts *ko)
{
	struct sm_op *op = (struct sm_op *)xcalloc(1, sizeof *op);
	char why[160];
	size_t E, rowv;
	char *cur;

	*out = NULL;
	if (sm_validate(s, dt, why, sizeof why)) {
		free(op);
		return error("softmax: %s", why);
	}
	if (nsets < 1 || variant < 0 || variant > (kind == SM_MASKED ? 2 : 1)) {
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
		    kopt_number(ko, KO_CLUSTERS), kopt_stash(ko)))
		goto out_free;
	op->wset_bytes = written_bytes(kind, op->set_bytes, rowv, variant);
	if (dev_alloc(&op->in0, (size_t)nsets * op->set_bytes) ||
	    (kind == SM_BWD && dev_alloc(&op->in1, (size_t)nsets * op->set_bytes)) ||
	    dev_alloc(&op->wbuf, (size_t)nsets * op->wset_bytes))
		goto out_free;
	cur = op->wbuf;  // set 0's written buffers, in written_bytes' order
	op->out = dev_carve(&cur, op->set_bytes);
	op->tmp = dev_carve(&cur, variant == 0 && kind != SM_BWD ? op->set_bytes : 0);
	op->rowa = (float *)dev_carve(&cur, variant == 0 && kind != SM_MASKED ? rowv : 0);
	op->rowb = (float *)dev_carve(&cur, variant == 0 && kind == SM_FWD ? rowv : 0);

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
		    sm_fused_fwd(op, op->out, in0, SM_MASK_NONE, 1.f, 0) ||
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

// The check. What one case's check computes on the CPU is kept in the
// reference cache (checkref.h), keyed by kind, shape, dtype, profile and
// seed: the inputs as the device holds them and the reference of the
// compared rows, so the other variants of the case, checked on the same
// seed, only upload, run and compare.
struct sm_ref {
	char *in0, *in1;  // M x N of dt: x (forward) or y, and dy (backward)
	long nrows;       // rows compared (all of them unless M x N is large)
	long *rows;
	double *ref;      // nrows x N: the reference of rows[s] at s N
};

static void sm_ref_free(void *p)
{
	struct sm_ref *e = (struct sm_ref *)p;

	free(e->in0);
	free(e->in1);
	free(e->rows);
	free(e->ref);
	free(e);
}

// One chunk of rows of a case's inputs or reference (par_for).
struct sm_job {
	enum sm_kind kind;
	enum fp_dtype dt;
	long N;
	enum sm_profile p;
	uint64_t seed;
	struct sm_ref *e;
};

// Inputs of rows [lo, hi), each row from its own stream, as today's
// generator draws them: the profile's logits, and for the backward y =
// softmax(logits) and dy ~ N(0, scale^2) (1e4 for the large profile), each
// rounded to dt and stored as dt.
static void sm_input_rows(size_t lo, size_t hi, void *arg)
{
	const struct sm_job *j = (const struct sm_job *)arg;
	const size_t N = (size_t)j->N, es = fp_dtype_size(j->dt);
	double *a = (double *)xmalloc(2 * N * sizeof *a), *b = a + N;
	struct fp_rng g;

	for (size_t r = lo; r < hi; r++) {
		softmax_gen_row(a, (long)r, j->N, j->p, j->kind == SM_MASKED ? 8.0 : 1.0,
				j->seed);
		if (j->kind == SM_BWD) {
			const double scale = j->p == SM_LARGE ? 1e4 : 1.0;

			softmax_fwd_ref_row(a, b, j->N, j->N, 1.0);
			memcpy(a, b, N * sizeof *a);
			rng_seed_item(&g, j->seed ^ 0x5851f42d4c957f2dull, (long)r);
			for (size_t k = 0; k < N; k++)
				b[k] = scale * rng_normal(&g);
			host_round(b, N, j->dt);
			check_encode(j->e->in1 + r * N * es, j->dt, b, N);
		}
		host_round(a, N, j->dt);
		check_encode(j->e->in0 + r * N * es, j->dt, a, N);
	}
	free(a);
}

// The reference of compared rows [lo, hi) (indices into e->rows), from
// the inputs exactly as uploaded.
static void sm_ref_rows(size_t lo, size_t hi, void *arg)
{
	const struct sm_job *j = (const struct sm_job *)arg;
	const size_t N = (size_t)j->N, es = fp_dtype_size(j->dt);
	double *a = (double *)xmalloc(2 * N * sizeof *a), *b = a + N;

	for (size_t s = lo; s < hi; s++) {
		const long row = j->e->rows[s];
		double *ref = j->e->ref + s * N;

		check_decode(a, j->e->in0 + (size_t)row * N * es, j->dt, N);
		if (j->kind == SM_BWD) {
			check_decode(b, j->e->in1 + (size_t)row * N * es, j->dt, N);
			softmax_bwd_ref_row(a, b, ref, j->N);
		} else if (j->kind == SM_MASKED) {
			softmax_fwd_ref_row(a, ref, j->N, softmax_causal_keep(row, j->N),
					    SOFTMAX_MASKED_SCALE);
		} else {
			softmax_fwd_ref_row(a, ref, j->N, j->N, 1.0);
		}
	}
	free(a);
}

// A case's inputs and reference, from the cache or computed on every core.
static struct sm_ref *sm_reference(const struct sm_op *op, enum sm_profile p,
				   unsigned long long seed)
{
	static const char *const kinds[] = { "softmax_fwd", "softmax_masked_fwd",
					     "softmax_bwd" };
	const long M = op->M, N = op->N;
	const size_t E = (size_t)M * (size_t)N, es = fp_dtype_size(op->dt);
	const size_t grain = par_grain_rows((size_t)N);
	struct ref_key key;
	struct sm_ref *e;
	struct sm_job job;

	memset(&key, 0, sizeof key);
	snprintf(key.what, sizeof key.what, "%s", kinds[op->kind]);
	key.dims[0] = M;
	key.dims[1] = N;
	key.dt = op->dt;
	key.profile = (int)p;
	key.seed = seed;
	if ((e = (struct sm_ref *)refcache_find(&key)))
		return e;
	e = (struct sm_ref *)xcalloc(1, sizeof *e);
	e->in0 = (char *)xmalloc(E * es);
	e->in1 = op->kind == SM_BWD ? (char *)xmalloc(E * es) : NULL;
	job = (struct sm_job){ op->kind, op->dt, N, p, seed, e };
	par_for((size_t)M, grain, sm_input_rows, &job);
	e->nrows = check_sample_rows(M, (double)N, seed ^ 0x94d049bb133111ebull, &e->rows);
	e->ref = (double *)xmalloc((size_t)e->nrows * N * sizeof *e->ref);
	par_for((size_t)e->nrows, grain, sm_ref_rows, &job);
	refcache_keep(&key, e, E * es * (e->in1 ? 2 : 1) +
		      (size_t)e->nrows * N * sizeof(double), sm_ref_free);
	return e;
}

// Fresh host inputs from profile and seed into set 0, outputs (and the
// unfused intermediates) poisoned, one run, compared with the double
// reference computed on the very values the GPU saw: every row, or a
// sample of rows when M x N is large (check_sample_rows; the detail says
// how many).
static int sm_check(struct fp_op *fop, int profile, unsigned long long seed,
		    struct fp_check *r)
{
	struct sm_op *op = (struct sm_op *)fop;
	const long M = op->M, N = op->N;
	const size_t E = (size_t)M * (size_t)N, es = fp_dtype_size(op->dt);
	const struct sm_ref *e;
	char *got = NULL;
	struct fp_cmp c;
	int rc = -1;

	if (profile < SM_NORMAL || profile > SM_DEADROWS)
		return error("softmax: no input profile %d", profile);
	e = sm_reference(op, (enum sm_profile)profile, seed);
	if ((e->in1 && CUDA_CHECK(cudaMemcpy(op->in1, e->in1, E * es,
					     cudaMemcpyHostToDevice))) ||
	    CUDA_CHECK(cudaMemcpy(op->in0, e->in0, E * es, cudaMemcpyHostToDevice)) ||
	    dev_poison(op->out, E * es) ||
	    (op->tmp && dev_poison(op->tmp, E * es)) ||
	    (op->rowa && dev_poison(op->rowa, (size_t)M * sizeof(float))) ||
	    (op->rowb && dev_poison(op->rowb, (size_t)M * sizeof(float))) ||
	    sm_launch(fop, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	got = (char *)xmalloc(E * es);
	if (CUDA_CHECK(cudaMemcpy(got, op->out, E * es, cudaMemcpyDeviceToHost)))
		goto out_free;

	check_begin(r, seed, op->dt == FP_BF16 ? SM_TOL_BF16 : SM_TOL_FP32);
	check_compare_rows(&c, got, op->dt, N, e->rows, e->nrows, e->ref);
	check_output(r, op->kind == SM_BWD ? "dx" : "y", &c);
	check_note_rows(r, e->nrows, M);
	rc = 0;
out_free:
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
	  "4 kernels: row max, exp(x - max), row sum, divide; e = exp(x - max) in DRAM",
	  NULL, "fused" },
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
	.backward = "softmax_bwd",
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
// masked scores in DRAM; fused_dense is those two kernels as one, as a
// fusing compiler that knows nothing of the rule's zeros would write it
// (every score read, masked in registers): the twin a prediction of fusing
// the unfused chain is checked against, where fused shows what skipping
// the masked reads adds. The scale is fixed at 1/sqrt(64).
static const struct fp_variant masked_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "2 kernels: t = x*scale with causal -inf fill (in DRAM), then the fused softmax of t",
	  NULL, "fused_dense" },
	{ "fused", FP_FUSED,
	  "1 kernel: scale, causal mask and softmax; masked scores are never read" },
	{ "fused_dense", FP_FUSED,
	  "1 kernel: unfused's two fused: every score read, scaled and masked in "
	  "registers, softmax, y written once" },
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
	  "2 kernels: s = rowsum(dy*y) to DRAM, then dx = y*(dy - s)", NULL, "fused" },
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
