// workload.cu - the softplus chain workloads' contract: softplus_chain_fwd
// and softplus_chain_bwd, variants unfused3, fused_save, fused_recompute
// and fused_tape, fp32 and bf16 (bf16 storage, fp32 math): shapes, the
// models (napkin math and what each variant keeps for the backward: see
// softplus.cu's header), the instances' lifecycle and the check against
// the CPU reference (ref.c).
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
#include "softplus/softplus.h"
#include "softplus/sp.h"
#include "util.h"

enum { V_UNFUSED3, V_FUSED_SAVE, V_FUSED_RECOMPUTE, V_FUSED_TAPE };

// Everything one instance holds. Each set's buffers are carved out of two
// blocks, inputs (ibuf) and what a launch writes (wbuf), in sp_sizes'
// order; the pointers are set 0's, set s's lie s * iset (s * wset) bytes
// further on (set_view).
struct fp_op {
	int bwd, variant, nsets;
	int vectors;    // kernel option: 16-byte vectors of input a thread, 0 auto
	enum fp_dtype dt;
	long M, N;
	size_t n, es;   // elements, bytes an element
	char *ibuf, *wbuf;
	size_t iset, wset;
	char *x;        // inputs: x; backward also dy and what the forward saved
	char *dy;
	char *saved;    // backward: e (unfused3, fused_tape) or s (fused_save)
	char *out;      // written: w (forward) or dx (backward)
	char *keep;     // forward: what it saves for the backward, e or s
	char *mid;      // unfused3: l (forward) or de (backward)
};

// Bytes of each buffer of one set, 0 where the variant has none.
struct sp_sizes {
	size_t x, dy, saved, out, keep, mid;
};

static int saves(int variant)
{
	return variant != V_FUSED_RECOMPUTE;
}

// Whether what it saves is e = exp(-|x|) (the chain's tape), not s.
static int saves_e(int variant)
{
	return variant == V_UNFUSED3 || variant == V_FUSED_TAPE;
}

// Fills *z; returns the padded bytes of one set's inputs in *iset and of
// its written buffers in *wset.
static void sp_sizes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
		     int variant, struct sp_sizes *z, size_t *iset, size_t *wset)
{
	const size_t t = (size_t)s->v[0] * (size_t)s->v[1] * fp_dtype_size(dt);

	memset(z, 0, sizeof *z);
	z->x = t;
	z->out = t;
	if (bwd) {
		// fused_save's backward does not read x, but its inputs are
		// made as a step makes them: the forward over x saves s.
		z->dy = t;
		z->saved = saves(variant) ? t : 0;
	} else {
		z->keep = saves(variant) ? t : 0;
	}
	z->mid = variant == V_UNFUSED3 ? t : 0;
	*iset = dev_pad(z->x) + dev_pad(z->dy) + dev_pad(z->saved);
	*wset = dev_pad(z->out) + dev_pad(z->keep) + dev_pad(z->mid);
}

// v = op as seen by a launch of set `set`.
static void set_view(const struct fp_op *op, int set, struct fp_op *v)
{
	const size_t ioff = (size_t)set * op->iset, woff = (size_t)set * op->wset;

	*v = *op;
	v->x = (char *)dev_in_set(op->x, ioff);
	v->dy = (char *)dev_in_set(op->dy, ioff);
	v->saved = (char *)dev_in_set(op->saved, ioff);
	v->out = (char *)dev_in_set(op->out, woff);
	v->keep = (char *)dev_in_set(op->keep, woff);
	v->mid = (char *)dev_in_set(op->mid, woff);
}

static int run(enum sp_kop k, const struct fp_op *op, const void *i0,
	       const void *i1, const void *i2, const void *i3, void *o0,
	       void *o1, cudaStream_t st)
{
	const void *in[4] = { i0, i1, i2, i3 };
	void *out[2] = { o0, o1 };

	return sp_launch_op(k, op->dt, op->vectors, in, out, op->n, st);
}

// The forward of v's variant, w written to w_out, what it saves to keep:
// the forward launch, and how a backward instance makes its saved input.
static int forward(const struct fp_op *v, const void *x, void *w_out,
		   void *keep, void *mid, cudaStream_t st)
{
	switch (v->variant) {
	case V_UNFUSED3:
		return run(SP_K_EXP, v, x, NULL, NULL, NULL, keep, NULL, st) ||
		       run(SP_K_LOG1P, v, keep, NULL, NULL, NULL, mid, NULL, st) ||
		       run(SP_K_ADD, v, x, mid, NULL, NULL, w_out, NULL, st) ? -1 : 0;
	case V_FUSED_SAVE:
		return run(SP_K_FWD_SAVE, v, x, NULL, NULL, NULL, w_out, keep, st);
	case V_FUSED_TAPE:
		return run(SP_K_FWD_TAPE, v, x, NULL, NULL, NULL, w_out, keep, st);
	default:
		return run(SP_K_FWD, v, x, NULL, NULL, NULL, w_out, NULL, st);
	}
}

// A backward instance's saved input of set v (a set_view): what the
// forward of the same variant saves, made by its kernels (unfused3's
// first; a fused variant's forward, with w going to the set's dx as
// scratch).
static int make_saved(const struct fp_op *v, cudaStream_t st)
{
	if (v->variant == V_UNFUSED3)
		return run(SP_K_EXP, v, v->x, NULL, NULL, NULL, v->saved, NULL, st);
	return saves(v->variant) ? forward(v, v->x, v->out, v->saved, NULL, st) : 0;
}

static int sp_launch(struct fp_op *op, int set, cudaStream_t st)
{
	struct fp_op v;

	if (set < 0 || set >= op->nsets)
		return error("softplus: set %d out of range [0, %d)", set, op->nsets);
	set_view(op, set, &v);
	if (!v.bwd)
		return forward(&v, v.x, v.out, v.keep, v.mid, st);
	switch (v.variant) {
	case V_UNFUSED3:
		return run(SP_K_BWD_LOG1P, &v, v.dy, v.saved, NULL, NULL, v.mid,
			   NULL, st) ||
		       run(SP_K_BWD_EXP, &v, v.dy, v.x, v.saved, v.mid, v.out,
			   NULL, st) ? -1 : 0;
	case V_FUSED_SAVE:
		return run(SP_K_BWD_SAVE, &v, v.dy, v.saved, NULL, NULL, v.out,
			   NULL, st);
	case V_FUSED_TAPE:
		return run(SP_K_BWD_TAPE, &v, v.dy, v.x, v.saved, NULL, v.out,
			   NULL, st);
	default:
		return run(SP_K_BWD_RECOMPUTE, &v, v.dy, v.x, NULL, NULL, v.out,
			   NULL, st);
	}
}

// Largest one-tensor size accepted: beyond any GPU, and far from overflow.
#define MAX_TENSOR_BYTES (1.0 * (1ull << 47))
#define SP_TOL_FP32 1e-5
#define SP_TOL_BF16 1e-2

static int sp_validate(const struct fp_shape *s, enum fp_dtype dt, char *why,
		       size_t whylen)
{
	const long M = s->v[0], N = s->v[1];
	const double bytes = (double)M * (double)N * (double)fp_dtype_size(dt);

	if (dt != FP_F32 && dt != FP_BF16)
		snprintf(why, whylen, "dtype %s: softplus_chain takes fp32 or bf16",
			 fp_dtype_name(dt));
	else if (M < 1 || N < 1)
		snprintf(why, whylen, "M=%ld,N=%ld: rows and row width must be at least 1",
			 M, N);
	else if (bytes > MAX_TENSOR_BYTES)
		snprintf(why, whylen, "M=%ld,N=%ld: one %s tensor would take %.3g TiB, "
			 "more than any GPU holds", M, N, fp_dtype_name(dt),
			 bytes / 0x1p40);
	else
		return 0;
	return -1;
}

static size_t dev_bytes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
			int variant, int nsets)
{
	struct sp_sizes z;
	size_t iset, wset;

	sp_sizes(bwd, s, dt, variant, &z, &iset, &wset);
	return (size_t)nsets * (iset + wset);
}

static size_t fwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	return dev_bytes(0, s, dt, variant, nsets);
}

static size_t bwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	return dev_bytes(1, s, dt, variant, nsets);
}

// fp32 takes CUDA's accurate expf and log1pf, which expand into fp32
// arithmetic the FLOP counters count (nvcc 13.0's PTX for sm_90: expf 3
// FMA, a multiply and an add, 8 FLOP; log1pf 12 FMA, 2 multiplies and an
// add, 27 FLOP), where the model counts each transcendental as 1; bf16
// takes the hardware's ex2/lg2 and a short series. A forward's
// executed_flops in fp32 is its FLOPs with the two expanded: on an H100 the
// counters read 0.95x (fused_recompute, unfused3) and 1.07x (fused_save,
// whose correctly rounded reciprocal expands too) of it, where against the
// unexpanded model they read 6.0-6.3x.
#define SP_EXPF_FLOP 8
#define SP_LOG1PF_FLOP 27

// The napkin math of softplus.cu's header, per variant (T = one tensor's
// bytes, E its elements).
static void fwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	const double E = (double)s->v[0] * (double)s->v[1];
	const double T = E * (double)fp_dtype_size(dt);

	memset(m, 0, sizeof *m);
	m->flops = 6 * E;
	m->min_bytes = 2 * T;
	switch (variant) {
	case V_UNFUSED3:
		// exp: x in, e out; log1p: e in, l out; add: x and l in, w out
		m->variant_bytes = 7 * T;
		m->saved_bytes = T;  // e
		break;
	case V_FUSED_SAVE:
		m->variant_bytes = 3 * T;  // x in, w and s out
		m->saved_bytes = T;        // s
		m->executed_flops = 8 * E; // and s: a reciprocal, times e or 1
		break;
	case V_FUSED_TAPE:
		m->variant_bytes = 3 * T;  // x in, w and e out
		m->saved_bytes = T;        // e
		break;
	default:
		m->variant_bytes = 2 * T;
		break;
	}
	if (dt == FP_F32)
		m->executed_flops = (m->executed_flops > 0 ? m->executed_flops : m->flops) +
				    (SP_EXPF_FLOP + SP_LOG1PF_FLOP - 2) * E;
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	const double E = (double)s->v[0] * (double)s->v[1];
	const double T = E * (double)fp_dtype_size(dt);

	memset(m, 0, sizeof *m);
	m->flops = 6 * E;
	m->min_bytes = 3 * T;
	switch (variant) {
	case V_UNFUSED3:
		// dy and e in, de out; dy, x, e and de in, dx out
		m->variant_bytes = 8 * T;
		m->saved_bytes = T;
		m->executed_flops = 5 * E;  // 1 + e, reciprocal, times dy; e de, dy - e de
		break;
	case V_FUSED_SAVE:
		m->variant_bytes = 3 * T;  // dy and s in, dx out
		m->saved_bytes = T;
		m->executed_flops = E;     // dy s
		break;
	case V_FUSED_TAPE:
		m->variant_bytes = 4 * T;  // dy, x and e in, dx out
		m->saved_bytes = T;
		m->executed_flops = 4 * E; // 1 + e, reciprocal, times e or 1, times dy
		break;
	default:
		m->variant_bytes = 3 * T;  // dy and x in, dx out
		break;
	}
}

static void sp_destroy(struct fp_op *op)
{
	if (!op)
		return;
	cudaFree(op->ibuf);
	cudaFree(op->wbuf);
	free(op);
}

// The one kernel option: how many 16-byte vectors of each input a thread
// of every kernel takes (softplus.cu, sp_vectors); each value but auto is
// the number.
static const char *const vectors_values[] = { "auto", "1", "2", "4", NULL };
static const struct fp_kopt sp_kopts[] = {
	{ "vectors", vectors_values,
	  "16-byte vectors of each input a thread takes (auto: 1)" },
	{ NULL, NULL, NULL },
};

// workload->kernel(): the vectors a thread of each of the variant's
// kernels takes, "1 vector a thread" or "2, 2, 1 vectors a thread".
static void sp_kernel_desc(const struct fp_op *op, char *buf, size_t n)
{
	static const enum sp_kop ks[2][4][3] = {
		{ { SP_K_EXP, SP_K_LOG1P, SP_K_ADD }, { SP_K_FWD_SAVE }, { SP_K_FWD },
		  { SP_K_FWD_TAPE } },
		{ { SP_K_BWD_LOG1P, SP_K_BWD_EXP }, { SP_K_BWD_SAVE },
		  { SP_K_BWD_RECOMPUTE }, { SP_K_BWD_TAPE } },
	};
	const int nk = op->variant != V_UNFUSED3 ? 1 : op->bwd ? 2 : 3;
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < nk && len < n; i++) {
		snprintf(buf + len, n - len, "%s%d", i ? ", " : "",
			 sp_vectors(ks[op->bwd][op->variant][i], op->dt,
				    op->vectors));
		len = strlen(buf);
	}
	if (len < n)
		snprintf(buf + len, n - len, nk == 1 && strcmp(buf, "1") == 0 ?
			 " vector a thread" : " vectors a thread");
}

// ko: the kernel options (sp_kopts; NULL for every default).
static int sp_create(int bwd, struct fp_op **out, const struct fp_shape *s,
		     enum fp_dtype dt, int variant, int nsets,
		     unsigned long long seed, const struct fp_kopts *ko)
{
	struct fp_op *op;
	struct sp_sizes z;
	char why[160], *cur;

	*out = NULL;
	if (sp_validate(s, dt, why, sizeof why))
		return error("softplus: %s", why);
	if (nsets < 1 || variant < V_UNFUSED3 || variant > V_FUSED_TAPE)
		return error("softplus: bad instance (variant %d, %d input sets)",
			     variant, nsets);
	if (ko && ko->v[0] > 3)
		return error("softplus: kernel option vectors: no value %d", ko->v[0]);
	op = (struct fp_op *)xcalloc(1, sizeof *op);
	op->vectors = ko && ko->v[0] ? atoi(vectors_values[ko->v[0]]) : 0;
	op->bwd = bwd;
	op->variant = variant;
	op->nsets = nsets;
	op->dt = dt;
	op->M = s->v[0];
	op->N = s->v[1];
	op->n = (size_t)op->M * (size_t)op->N;
	op->es = fp_dtype_size(dt);
	sp_sizes(bwd, s, dt, variant, &z, &op->iset, &op->wset);
	if (dev_alloc(&op->ibuf, (size_t)nsets * op->iset) ||
	    dev_alloc(&op->wbuf, (size_t)nsets * op->wset))
		goto out_free;
	cur = op->ibuf;
	op->x = (char *)dev_carve(&cur, z.x);
	op->dy = (char *)dev_carve(&cur, z.dy);
	op->saved = (char *)dev_carve(&cur, z.saved);
	cur = op->wbuf;
	op->out = (char *)dev_carve(&cur, z.out);
	op->keep = (char *)dev_carve(&cur, z.keep);
	op->mid = (char *)dev_carve(&cur, z.mid);

	// Profile-0 inputs for timing, drawn on the device; a backward's
	// saved input made by its forward from the set's x.
	for (int i = 0; i < nsets; i++) {
		const uint64_t sd = splitmix64(seed + 0x100 * (uint64_t)i);
		struct fp_op v;

		set_view(op, i, &v);
		if (dev_fill_normal(v.x, dt, op->n, sd, 0.0f, 1.0f, 0) ||
		    (bwd && dev_fill_normal(v.dy, dt, op->n, splitmix64(sd + 1),
					    0.0f, 1.0f, 0)) ||
		    (bwd && make_saved(&v, 0)))
			goto out_free;
	}
	if (CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	*out = op;
	return 0;

out_free:
	sp_destroy(op);
	return -1;
}

static int fwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return sp_create(0, op, s, dt, variant, nsets, seed, ko);
}

static int bwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return sp_create(1, op, s, dt, variant, nsets, seed, ko);
}

// The check. What one case's check computes on the CPU is kept in the
// reference cache (checkref.h) under workload, shape, dtype, profile and
// seed: the inputs as the device holds them and the reference of the
// compared rows, so the other variants of the case only upload, run and
// compare.
struct sp_ref {
	char *x, *dy;  // M x N of dt; dy backward only
	long nrows;    // rows compared (all of them unless M x N is large)
	long *rows;
	double *ref;   // nrows x N: w, or dx from x, of rows[s] at s N, rounded to dt
};

static void sp_ref_free(void *p)
{
	struct sp_ref *e = (struct sp_ref *)p;

	free(e->x);
	free(e->dy);
	free(e->rows);
	free(e->ref);
	free(e);
}

// What a chunk of rows computes (par_for).
enum { J_DRAW, J_W, J_DX, J_E, J_S, J_DX_S, J_DE, J_DX_E, J_DX_XE };
struct sp_job {
	int what;
	enum fp_dtype dt;
	long N;
	enum sp_profile p;
	uint64_t xseed, dyseed;
	const struct sp_ref *e;
	const char *t1, *t2;  // stored tensors (M x N of dt) the reference reads
	char *x, *dy;         // J_DRAW: where the rows go
	double *ref;          // the others: nrows x N
};

// J_DRAW: rows [lo, hi) of x (and dy), rounded to dt and stored as dt.
// Otherwise compared rows [lo, hi) (indices into e->rows) of what a kernel
// stores, from its inputs exactly as stored, and rounded to dt as the
// kernel's store rounds it: w, dx from x (J_DX), e = exp(-|x|), s =
// sigmoid(x), and the backward from what the forward saved: dx = dy s
// (J_DX_S, t1 = s), de = dy / (1 + e) (J_DE, t1 = e), dx from e and de
// (J_DX_E, t1 = e, t2 = de), dx from e alone (J_DX_XE, t1 = e).
static void sp_rows(size_t lo, size_t hi, void *arg)
{
	const struct sp_job *j = (const struct sp_job *)arg;
	const size_t N = (size_t)j->N, es = fp_dtype_size(j->dt);
	double *a = (double *)xmalloc(4 * N * sizeof *a), *b = a + N, *c = b + N,
	       *d = c + N;
	struct fp_rng g;

	for (size_t r = lo; r < hi; r++) {
		if (j->what == J_DRAW) {
			softplus_gen_row(a, (long)r, j->N, j->p, j->xseed);
			host_round(a, N, j->dt);
			check_encode(j->x + r * N * es, j->dt, a, N);
			if (!j->dy)
				continue;
			rng_seed_item(&g, j->dyseed, (long)r);
			for (size_t k = 0; k < N; k++)
				b[k] = rng_normal(&g);
			host_round(b, N, j->dt);
			check_encode(j->dy + r * N * es, j->dt, b, N);
			continue;
		}
		const size_t off = (size_t)j->e->rows[r] * N * es;
		double *ref = j->ref + r * N;

		check_decode(a, j->e->x + off, j->dt, N);
		if (j->e->dy)
			check_decode(b, j->e->dy + off, j->dt, N);
		if (j->t1)
			check_decode(c, j->t1 + off, j->dt, N);
		if (j->t2)
			check_decode(d, j->t2 + off, j->dt, N);
		switch (j->what) {
		case J_W:
			softplus_ref_fwd(a, ref, N);
			break;
		case J_DX:
			softplus_ref_bwd(b, a, ref, N);
			break;
		case J_E:
			for (size_t k = 0; k < N; k++)
				ref[k] = exp(-fabs(a[k]));
			break;
		case J_S:
			for (size_t k = 0; k < N; k++)
				ref[k] = softplus_ref_grad(a[k]);
			break;
		case J_DX_S:
			softplus_ref_bwd_s(b, c, ref, N);
			break;
		case J_DE:
			softplus_ref_bwd_de(b, c, ref, N);
			break;
		case J_DX_XE:
			softplus_ref_bwd_xe(b, a, c, ref, N);
			break;
		default:
			softplus_ref_bwd_e(b, a, c, d, ref, N);
		}
		host_round(ref, N, j->dt);
	}
	free(a);
}

// The reference of what for e's compared rows (nrows x N, the caller
// frees), reading the stored tensors t1 and t2 where what needs them.
static double *rows_ref(const struct fp_op *op, const struct sp_ref *e,
			int what, const char *t1, const char *t2)
{
	struct sp_job job;

	memset(&job, 0, sizeof job);
	job.what = what;
	job.dt = op->dt;
	job.N = op->N;
	job.e = e;
	job.t1 = t1;
	job.t2 = t2;
	job.ref = (double *)xmalloc((size_t)e->nrows * op->N * sizeof *job.ref);
	par_for((size_t)e->nrows, par_grain_rows((size_t)op->N), sp_rows, &job);
	return job.ref;
}

// A case's inputs and the reference of its w (forward) or of dx from x
// (backward: fused_recompute's), from the cache or computed on every core.
static struct sp_ref *sp_reference(const struct fp_op *op, enum sp_profile p,
				   unsigned long long seed)
{
	const long M = op->M, N = op->N;
	const size_t E = op->n;
	struct ref_key key;
	struct sp_ref *e;
	struct sp_job job;

	memset(&key, 0, sizeof key);
	snprintf(key.what, sizeof key.what, "softplus_chain_%s", op->bwd ? "bwd" : "fwd");
	key.dims[0] = M;
	key.dims[1] = N;
	key.dt = op->dt;
	key.profile = (int)p;
	key.seed = seed;
	if ((e = (struct sp_ref *)refcache_find(&key)))
		return e;
	e = (struct sp_ref *)xcalloc(1, sizeof *e);
	e->x = (char *)xmalloc(E * op->es);
	e->dy = op->bwd ? (char *)xmalloc(E * op->es) : NULL;
	memset(&job, 0, sizeof job);
	job.what = J_DRAW;
	job.dt = op->dt;
	job.N = N;
	job.p = p;
	job.xseed = splitmix64(seed);
	job.dyseed = splitmix64(seed ^ 0x5851f42d4c957f2dull);
	job.x = e->x;
	job.dy = e->dy;
	par_for((size_t)M, par_grain_rows((size_t)N), sp_rows, &job);
	e->nrows = check_sample_rows(M, (double)N, seed ^ 0x94d049bb133111ebull, &e->rows);
	e->ref = rows_ref(op, e, op->bwd ? J_DX : J_W, NULL, NULL);
	refcache_keep(&key, e, E * op->es * (e->dy ? 2 : 1) +
		      (size_t)e->nrows * N * sizeof(double), sp_ref_free);
	return e;
}

// The n elements of dt at dev, downloaded into a new host buffer (the
// caller frees); NULL if the copy failed (reported).
static char *download(const struct fp_op *op, const void *dev)
{
	char *h = (char *)xmalloc(op->n * op->es);

	if (CUDA_CHECK(cudaMemcpy(h, dev, op->n * op->es, cudaMemcpyDeviceToHost))) {
		free(h);
		return NULL;
	}
	return h;
}

// Compare got (the n elements of dt downloaded) on the reference's rows
// with ref into r under name.
static void compare(struct fp_check *r, const char *name,
		    const struct fp_op *op, const char *got,
		    const struct sp_ref *e, const double *ref)
{
	struct fp_cmp c;

	check_compare_rows(&c, got, op->dt, op->N, e->rows, e->nrows, ref);
	check_output(r, name, &c);
}

// Fresh host inputs from profile and seed into set 0; for a backward, the
// saved input made by the forward kernels of its variant from them, as a
// training step makes it; everything the launch writes poisoned; one run;
// then every tensor the variant stores compared, on every row, or on a
// sample of rows when M x N is large (check_sample_rows; the detail says
// how many), with the double reference computed from that kernel's inputs
// exactly as stored and rounded to the dtype as the store rounds (a value
// the dtype cannot hold is not an error: exp(-1e4) is 0 in fp32):
//   forward   w from x; the saved e or s from x
//   backward  fused_recompute: dx from dy and x; fused_save: the saved s
//             from x, dx from dy and the saved s; unfused3: the saved e
//             from x, de from dy and the saved e, dx from dy, x, e and the
//             de the first kernel stored; fused_tape: the saved e from x,
//             dx from dy, x and the saved e
// So each kernel is held to what it was given, and what it was given to
// the double reference.
static int sp_check(struct fp_op *op, int profile, unsigned long long seed,
		    struct fp_check *r)
{
	const size_t bytes = op->n * op->es;
	const struct sp_ref *e;
	char *got = NULL, *sv = NULL, *mid = NULL;
	double *ref = NULL;
	int rc = -1;

	if (profile < 0 || profile >= SP_NPROFILES)
		return error("softplus: no input profile %d", profile);
	e = sp_reference(op, (enum sp_profile)profile, seed);
	if (CUDA_CHECK(cudaMemcpy(op->x, e->x, bytes, cudaMemcpyHostToDevice)) ||
	    (op->dy && CUDA_CHECK(cudaMemcpy(op->dy, e->dy, bytes,
					     cudaMemcpyHostToDevice))) ||
	    (op->saved && (dev_poison(op->saved, bytes) || make_saved(op, 0))) ||
	    dev_poison(op->out, bytes) ||
	    (op->keep && dev_poison(op->keep, bytes)) ||
	    (op->mid && dev_poison(op->mid, bytes)) ||
	    sp_launch(op, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()) ||
	    !(got = download(op, op->out)) ||
	    (op->saved && !(sv = download(op, op->saved))) ||
	    (op->bwd && op->mid && !(mid = download(op, op->mid))) ||
	    (op->keep && !(sv = download(op, op->keep))))
		goto out_free;
	check_begin(r, seed, op->dt == FP_BF16 ? SP_TOL_BF16 : SP_TOL_FP32);
	if (!op->bwd) {
		compare(r, "w", op, got, e, e->ref);
		if (op->keep) {
			const int ve = saves_e(op->variant);

			ref = rows_ref(op, e, ve ? J_E : J_S, NULL, NULL);
			compare(r, ve ? "saved e" : "saved s", op, sv, e, ref);
		}
	} else if (op->saved) {
		// the saved input held to the double reference first, so that
		// the references built on it stand on checked values
		const int ve = saves_e(op->variant);

		ref = rows_ref(op, e, ve ? J_E : J_S, NULL, NULL);
		compare(r, ve ? "saved e" : "saved s", op, sv, e, ref);
		free(ref);
		if (op->variant == V_UNFUSED3) {
			ref = rows_ref(op, e, J_DE, sv, NULL);
			compare(r, "de", op, mid, e, ref);
			free(ref);
			ref = rows_ref(op, e, J_DX_E, sv, mid);
		} else if (ve) {
			ref = rows_ref(op, e, J_DX_XE, sv, NULL);
		} else {
			ref = rows_ref(op, e, J_DX_S, sv, NULL);
		}
		compare(r, "dx", op, got, e, ref);
	} else {
		compare(r, "dx", op, got, e, e->ref);
	}
	check_note_rows(r, e->nrows, op->M);
	rc = 0;

out_free:
	free(got);
	free(sv);
	free(mid);
	free(ref);
	return rc;
}

static const struct fp_param sp_params[] = {
	{ "M", FP_REQUIRED, 1, 1L << 31, "rows" },
	{ "N", FP_REQUIRED, 1, 1L << 30, "row width (elements)" },
	{ NULL, 0, 0, 0, NULL },
};

// Index i is enum sp_profile i (softplus.h says what each is for).
static const char *const sp_profiles[] = {
	"normal", "large", "edges", "tail", NULL,
};

// The issue's two performance shapes; the kernels are elementwise over
// the flat tensor, so the awkward sizes are about its element count: one
// element, fewer than one vector, a tail after the vectors in both dtypes
// (odd counts), a wide row, an odd prime-ish width over many rows, and a
// few million elements.
#define SP_SUITE "M=16384,N=768;M=16384,N=4096"
#define SP_QUICK "M=2048,N=768"
#define SP_TESTS "M=1,N=1;M=1,N=3;M=7,N=5;M=3,N=1023;M=5,N=4097;" \
	"M=2,N=65537;M=2048,N=768;M=64,N=50257"

static const struct fp_variant fwd_variants[] = {
	{ "unfused3", FP_UNFUSED,
	  "3 kernels: e = exp(-|x|); l = log1p(e); w = max(x,0) + l; e and l in "
	  "DRAM, e kept for the backward", NULL, "fused_tape" },
	{ "fused_save", FP_FUSED,
	  "1 kernel: w, and s = sigmoid(x) kept for the backward" },
	{ "fused_recompute", FP_FUSED,
	  "1 kernel: w only; the backward recomputes from x" },
	{ "fused_tape", FP_FUSED,
	  "1 kernel: unfused3 fused: w, and e = exp(-|x|) kept for the backward "
	  "(l on chip)" },
	{ NULL, FP_UNFUSED, NULL },
};

static const struct fp_variant bwd_variants[] = {
	{ "unfused3", FP_UNFUSED,
	  "2 kernels: de = dy/(1+e) (log1p's backward) to DRAM; dx = dy[x>=0] - "
	  "sgn(x) e de (exp's and max's), reading the saved e", NULL, "fused_tape" },
	{ "fused_save", FP_FUSED, "1 kernel: dx = dy s, reading the saved s" },
	{ "fused_recompute", FP_FUSED,
	  "1 kernel: dx = dy sigmoid(x), e = exp(-|x|) recomputed from x" },
	{ "fused_tape", FP_FUSED,
	  "1 kernel: unfused3 fused: dx = dy (x>=0 ? 1 : e)/(1+e) from dy, x and "
	  "the saved e (de on chip)" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_softplus_chain_fwd = {
	.name = "softplus_chain_fwd",
	.summary = "w = log(exp(x) + 1) as three elementwise ops, stably "
		   "max(x,0) + log1p(exp(-|x|))",
	.params = sp_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = sp_profiles,
	.suite = SP_SUITE,
	.quick = SP_QUICK,
	.tests = SP_TESTS,
	.kopts = sp_kopts,
	.backward = "softplus_chain_bwd",
	.validate = sp_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.kernel = sp_kernel_desc,
	.launch = sp_launch,
	.check = sp_check,
	.destroy = sp_destroy,
};

extern "C" const struct workload wl_softplus_chain_bwd = {
	.name = "softplus_chain_bwd",
	.summary = "dx = dy * sigmoid(x): the gradient of the softplus chain, "
		   "from what its forward saved",
	.params = sp_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = sp_profiles,
	.suite = SP_SUITE,
	.quick = SP_QUICK,
	.tests = SP_TESTS,
	.kopts = sp_kopts,
	.backward = NULL,
	.validate = sp_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.kernel = sp_kernel_desc,
	.launch = sp_launch,
	.check = sp_check,
	.destroy = sp_destroy,
};
