/* test-softmax-ref.c - the softmax workloads' CPU side, no GPU needed: the
 * double references (backward against central finite differences of the
 * forward, inputs around +-1e4, rows with -inf, the causal rule), the input
 * profiles, validate()/model()/device_bytes() and the kernel options
 * through the registry, cmp_merge (the checks' comparison split over threads) and cmp_rel's
 * floor. $FUSEPROF_SEED fixes the seed. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kutil.h"
#include "softmax/softmax.h"
#include "par.h"
#include "test.h"
#include "wltest.h"
#include "workload.h"

static double *dalloc(long n)
{
	double *p = calloc((size_t)n, sizeof *p);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(TEST_HARD_ERROR);
	}
	return p;
}

/* sum(dy * softmax(x)) over one row: the loss whose gradient softmax_bwd_ref
 * claims to be. */
static double loss(const double *x, const double *dy, double *y, long N)
{
	double l = 0;

	softmax_fwd_ref(x, y, 1, N, 1.0, 0);
	for (long j = 0; j < N; j++)
		l += dy[j] * y[j];
	return l;
}

static void test_bwd_fd(struct fp_rng *g)
{
	static const long widths[] = { 1, 2, 3, 5, 17, 64 };
	const double h = 1e-5;

	for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
		const long M = 3, N = widths[w];
		double *x = dalloc(M * N), *y = dalloc(M * N), *dy = dalloc(M * N);
		double *dx = dalloc(M * N), *tmp = dalloc(N);
		double worst = 0;

		for (long i = 0; i < M * N; i++) {
			x[i] = 1.5 * rng_normal(g);
			dy[i] = rng_normal(g);
		}
		/* Row 2 gets a -inf entry when it has room for one: its
		 * gradient there is 0 and the rest must still match. */
		if (N > 1)
			x[2 * N + (long)(rng_next(g) % (uint64_t)N)] = -INFINITY;
		softmax_fwd_ref(x, y, M, N, 1.0, 0);
		softmax_bwd_ref(y, dy, dx, M, N);
		for (long r = 0; r < M; r++) {
			double *xr = x + r * N;

			for (long j = 0; j < N; j++) {
				double keep = xr[j], lp, lm, fd;

				if (keep == -INFINITY) {
					ASSERT(dx[r * N + j] == 0);
					continue;
				}
				xr[j] = keep + h;
				lp = loss(xr, dy + r * N, tmp, N);
				xr[j] = keep - h;
				lm = loss(xr, dy + r * N, tmp, N);
				xr[j] = keep;
				fd = (lp - lm) / (2 * h);
				ASSERT_NEAR(dx[r * N + j], fd, 1e-8);
				if (fabs(dx[r * N + j] - fd) > worst)
					worst = fabs(dx[r * N + j] - fd);
			}
		}
		/* A 1-wide row has y = 1 and zero gradient: a wrong formula
		 * could still pass there, not at the wider ones. */
		printf("bwd vs finite differences, 3 x %ld: max |diff| %.2g\n", N, worst);
		free(x);
		free(y);
		free(dy);
		free(dx);
		free(tmp);
	}
}

static void assert_row_is_distribution(const double *y, long N)
{
	double s = 0;

	for (long j = 0; j < N; j++) {
		ASSERT(isfinite(y[j]) && y[j] >= 0 && y[j] <= 1);
		s += y[j];
	}
	ASSERT_NEAR(s, 1.0, 1e-12);
}

static void test_large(struct fp_rng *g)
{
	const long N = 257;
	double *x = dalloc(N), *xs = dalloc(N), *y = dalloc(N), *ys = dalloc(N);
	long top = 0;

	/* Shifting by +-1e4 changes nothing (exp(1e4) overflows a double:
	 * only the max subtraction makes this work). */
	for (long j = 0; j < N; j++)
		x[j] = rng_normal(g);
	softmax_fwd_ref(x, y, 1, N, 1.0, 0);
	for (int sign = -1; sign <= 1; sign += 2) {
		for (long j = 0; j < N; j++)
			xs[j] = x[j] + sign * 1e4;
		softmax_fwd_ref(xs, ys, 1, N, 1.0, 0);
		assert_row_is_distribution(ys, N);
		for (long j = 0; j < N; j++)
			ASSERT_NEAR(ys[j], y[j], 1e-9);
	}
	/* Spread over [-1e4, 1e4]: the largest input takes almost all. */
	for (long j = 0; j < N; j++) {
		xs[j] = (2 * rng_uniform(g) - 1) * 1e4;
		if (xs[j] > xs[top])
			top = j;
	}
	softmax_fwd_ref(xs, ys, 1, N, 1.0, 0);
	assert_row_is_distribution(ys, N);
	for (long j = 0; j < N; j++)
		ASSERT(ys[j] <= ys[top]);
	ASSERT(ys[top] > 0.5);
	free(x);
	free(xs);
	free(y);
	free(ys);
}

static void test_neginf(struct fp_rng *g, uint64_t seed)
{
	const long M = 60, N = 33;
	double *x = dalloc(M * N), *y = dalloc(M * N), *sub = dalloc(N), *ysub = dalloc(N);

	/* -inf entries give 0; the rest is the softmax of the finite ones. */
	softmax_gen_logits(x, M, N, SM_NEGINF, 1.0, seed);
	softmax_fwd_ref(x, y, M, N, 1.0, 0);
	for (long r = 0; r < M; r++) {
		long n = 0, k = 0;

		for (long j = 0; j < N; j++)
			if (x[r * N + j] != -INFINITY)
				sub[n++] = x[r * N + j];
		ASSERT(n >= 1);  /* the profile keeps a finite entry per row */
		softmax_fwd_ref(sub, ysub, 1, n, 1.0, 0);
		assert_row_is_distribution(y + r * N, N);
		for (long j = 0; j < N; j++) {
			if (x[r * N + j] == -INFINITY)
				ASSERT(y[r * N + j] == 0);
			else
				ASSERT_NEAR(y[r * N + j], ysub[k++], 1e-14);
		}
	}
	/* An all -inf row gives zeros, not NaN (the documented choice). */
	softmax_gen_logits(x, M, N, SM_DEADROWS, 1.0, seed + 1);
	softmax_fwd_ref(x, y, M, N, 1.0, 0);
	for (long r = 0; r < M; r++) {
		if (r % 3 == 1) {
			for (long j = 0; j < N; j++) {
				ASSERT(x[r * N + j] == -INFINITY);
				ASSERT(y[r * N + j] == 0);
			}
		} else {
			assert_row_is_distribution(y + r * N, N);
		}
	}
	/* Its gradient is zero too. */
	{
		double *dy = dalloc(M * N), *dx = dalloc(M * N);

		for (long i = 0; i < M * N; i++)
			dy[i] = rng_normal(g);
		softmax_bwd_ref(y, dy, dx, M, N);
		for (long j = 0; j < N; j++)
			ASSERT(dx[1 * N + j] == 0);
		free(dy);
		free(dx);
	}
	free(x);
	free(y);
	free(sub);
	free(ysub);
}

static void test_causal(struct fp_rng *g)
{
	const long M = 23, N = 7;
	const double sc = SOFTMAX_MASKED_SCALE;
	double *x = dalloc(M * N), *y = dalloc(M * N), *sub = dalloc(N), *ysub = dalloc(N);
	double kept = 0;

	for (long i = 0; i < M * N; i++)
		x[i] = 8 * rng_normal(g);
	softmax_fwd_ref(x, y, M, N, sc, 1);
	for (long r = 0; r < M; r++) {
		long keep = softmax_causal_keep(r, N);

		ASSERT(keep >= 1 && keep <= N);
		ASSERT_EQ(keep, r % N + 1);
		kept += (double)keep;
		softmax_fwd_ref(x + r * N, ysub, 1, keep, sc, 0);
		assert_row_is_distribution(y + r * N, N);
		for (long j = 0; j < N; j++)
			ASSERT_NEAR(y[r * N + j], j < keep ? ysub[j] : 0.0, 1e-14);
	}
	ASSERT_NEAR(softmax_causal_kept(M, N), kept, 0);
	ASSERT_NEAR(softmax_causal_kept(16384, 4096), 4.0 * 4096 * 4097 / 2, 0);
	free(x);
	free(y);
	free(sub);
	free(ysub);
}

static void test_profiles(uint64_t seed)
{
	const long M = 30, N = 40;
	double *a = dalloc(M * N), *b = dalloc(M * N);
	int naive_overflows = 0;

	/* Same seed, same numbers; another seed, other numbers. */
	softmax_gen_logits(a, M, N, SM_NORMAL, 1.0, seed);
	softmax_gen_logits(b, M, N, SM_NORMAL, 1.0, seed);
	ASSERT(!memcmp(a, b, (size_t)(M * N) * sizeof *a));
	softmax_gen_logits(b, M, N, SM_NORMAL, 1.0, seed + 1);
	ASSERT(memcmp(a, b, (size_t)(M * N) * sizeof *a));
	free(a);
	free(b);
	/* Drawn on every core, the numbers do not depend on how many: each
	 * row has its own stream (and rows differ). */
	{
		const long W = 4096, R = 64;

		a = dalloc(R * W);
		b = dalloc(R * W);
		par_set_threads(1);
		softmax_gen_logits(a, R, W, SM_NEGINF, 1.0, seed);
		par_set_threads(5);
		softmax_gen_logits(b, R, W, SM_NEGINF, 1.0, seed);
		par_set_threads(0);
		ASSERT(!memcmp(a, b, (size_t)(R * W) * sizeof *a));
		ASSERT(memcmp(a, a + W, (size_t)W * sizeof *a));
		free(a);
		free(b);
	}
	a = dalloc(M * N);
	b = dalloc(M * N);
	/* The large profile really does overflow a naive exp in fp32. */
	softmax_gen_logits(a, M, N, SM_LARGE, 1.0, seed);
	for (long i = 0; i < M * N; i++) {
		ASSERT(isfinite(a[i]) && fabs(a[i]) <= 1e4 + 20);
		if (isinf(expf((float)a[i])))
			naive_overflows++;
	}
	ASSERT(naive_overflows > 0);
	free(a);
	free(b);
}

/* The kernel options each softmax workload declares: auto first, every
 * value a number, and the registry's parser takes them and names the
 * allowed ones on a bad value. */
static void test_kopts(const struct workload *w)
{
	struct fp_kopts ko;
	char why[256], buf[128];

	ASSERT_EQ(workload_nkopts(w), 4);
	ASSERT(w->kernel != NULL);
	for (int i = 0; w->kopts[i].name; i++) {
		int nv = 0;

		ASSERT_STR_EQ(w->kopts[i].values[0], "auto");
		ASSERT(w->kopts[i].help && *w->kopts[i].help);
		for (nv = 1; w->kopts[i].values[nv]; nv++)  /* stash=0: none */
			ASSERT(atoi(w->kopts[i].values[nv]) > 0 ||
			       (!strcmp(w->kopts[i].name, "stash") &&
				(!strcmp(w->kopts[i].values[nv], "0") ||
				 !strcmp(w->kopts[i].values[nv], "all"))));
		ASSERT(nv <= FP_MAX_KOPT_VALUES);
	}
	memset(&ko, 0, sizeof ko);
	workload_format_kopts(w, &ko, buf, sizeof buf);
	ASSERT_STR_EQ(buf, "warps=auto,slots=auto,clusters=auto,stash=auto");
	ASSERT_EQ(workload_parse_kopts(w, "clusters=4,warps=8,stash=0", &ko, why, sizeof why), 0);
	workload_format_kopts(w, &ko, buf, sizeof buf);
	ASSERT_STR_EQ(buf, "warps=8,slots=auto,clusters=4,stash=0");
	ASSERT_EQ(workload_parse_kopts(w, "clusters=9", &ko, why, sizeof why), -1);
	ASSERT(strstr(why, "auto, 1, 2, 3, 4, 5, 6, 7, 8") != NULL);
	ASSERT_EQ(workload_parse_kopts(w, "stash=12", &ko, why, sizeof why), -1);
}

/* The wide kernels' stash rule on an H100's or H200's SM (228 KB of shared
 * memory an SM, a 1 KB reserve a block, 2048 threads: 8 blocks of 256; a
 * block may have 227 KB less 1 KB kept for static arrays). The parts are
 * the cluster rule's (each block at most 50 KB of the row): the picks
 * measured in bench/RESULTS.md, "The wide softmax's stash capped". */
static void test_wide_stash(struct fp_rng *g)
{
	const struct sm_wide_sm h = { 233472, 1024 + 256, 8, 231424 };
	const long bwd = softmax_wide_cap(1, 0), fwd = softmax_wide_cap(0, 0),
		   skip = softmax_wide_cap(0, 1);

	ASSERT(skip < bwd && bwd < fwd);
	ASSERT_EQ(softmax_wide_blocks(&h, 0), 8);
	ASSERT_EQ(softmax_wide_blocks(&h, 50272), 4);
	/* 2048 x 50257 bf16 backward: 4 blocks a row of 1571 slots of y and dy:
	 * the cap, 5 blocks an SM instead of 4 */
	ASSERT_EQ(softmax_wide_stash(&h, 50272, bwd, 1), bwd);
	ASSERT_EQ(softmax_wide_blocks(&h, bwd), 5);
	/* its forward, 2 blocks of 3142 slots: a 48 KB cap leaves 4 an SM, so
	 * the whole part; fp32 1024 x 128256, 8 blocks of 4008 slots: 3 -> 4 */
	ASSERT_EQ(softmax_wide_stash(&h, 50272, fwd, 1), 50272);
	ASSERT_EQ(softmax_wide_stash(&h, 64128, fwd, 1), fwd);
	/* the masked forward that skips: 6 blocks an SM */
	ASSERT_EQ(softmax_wide_stash(&h, 50272, skip, 1), skip);
	ASSERT_EQ(softmax_wide_blocks(&h, skip), 6);
	/* 3000 x 40000 bf16 backward: a part of 40000 bytes fits the cap */
	ASSERT_EQ(softmax_wide_stash(&h, 40000, bwd, 1), 40000);
	/* an explicit cap holds whether or not it adds a block; none: 0 */
	ASSERT_EQ(softmax_wide_stash(&h, 50272, fwd, 0), fwd);
	ASSERT_EQ(softmax_wide_stash(&h, 50272, 0, 0), 0);
	ASSERT_EQ(softmax_wide_stash(&h, 50272, 65536, 0), 50272);
	/* a part past what a block may have: the block's most */
	ASSERT_EQ(softmax_wide_stash(&h, 400000, h.block_max, 0), h.block_max);
	ASSERT_EQ(softmax_wide_stash(&h, 400000, bwd, 1), bwd);
	for (int i = 0; i < 100000; i++) {
		const long part = (long)(rng_uniform(g) * 300000),
			   cap = (long)(rng_uniform(g) * 300000);
		const int automatic = (int)(rng_next(g) & 1);
		const long all = part < h.block_max ? part : h.block_max;
		const long r = softmax_wide_stash(&h, part, cap, automatic);

		ASSERT(r == all || (r == cap && cap < all));
		if (!automatic)
			ASSERT_EQ(r, cap < all ? cap : all);
		else if (r < all)  /* capped only for another block */
			ASSERT(softmax_wide_blocks(&h, r) > softmax_wide_blocks(&h, all));
		else if (cap < all)
			ASSERT(softmax_wide_blocks(&h, cap) == softmax_wide_blocks(&h, all));
	}
	printf("ok   wide stash rule: caps %ld / %ld / %ld bytes (backward / forward / "
	       "masked skip), 100000 random parts\n", bwd, fwd, skip);
}

static void test_contract(void)
{
	static const char *const names[] = {
		"softmax_fwd", "softmax_masked_fwd", "softmax_bwd",
	};
	/* Inputs and outputs per element, in units of M x N tensors. */
	static const double min_tensors[] = { 2, -1, 3 };

	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const struct workload *w = workload_find(names[i]);
		struct fp_shape s;
		struct fp_model m0, m1;
		char why[256];
		int nv;

		ASSERT(w != NULL);
		nv = workload_nvariants(w);
		/* the masked forward adds fused_dense, its unfused chain's
		 * twin (every score read, masked in registers) */
		ASSERT_EQ(nv, i == 1 ? 3 : 2);
		ASSERT_EQ(workload_nprofiles(w), 4);
		ASSERT_STR_EQ(w->profiles[0], "normal");
		ASSERT(w->dtypes == (FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16)));
		for (int v = 0; v < nv; v++)
			ASSERT_EQ(w->variants[v].role,
				  !strncmp(w->variants[v].name, "fused", 5) ? FP_FUSED
				  : FP_UNFUSED);
		assert_shapes_run(w, w->suite, 2);
		assert_shapes_run(w, w->quick, 1);
		assert_shapes_run(w, w->tests, 5);
		ASSERT(strstr(w->tests, "M=1,N=1") && strstr(w->tests, "M=4,N=50257") &&
		       strstr(w->tests, "M=1,N=4097") && strstr(w->tests, "M=3,N=1023") &&
		       strstr(w->tests, "M=16384,N=768"));

		/* validate: one line naming the parameter, before anything runs */
		ASSERT(workload_parse_shape(w, "M=1,N=1", &s, why, sizeof why) == 0);
		ASSERT(w->validate(&s, FP_F32, why, sizeof why) == 0);
		s.v[1] = 0;
		why[0] = '\0';
		ASSERT(w->validate(&s, FP_BF16, why, sizeof why) == -1);
		ASSERT(!strncmp(why, "N=0", 3) && !strchr(why, '\n'));
		s.v[1] = 5;
		s.v[0] = 0;
		ASSERT(w->validate(&s, FP_F32, why, sizeof why) == -1);
		ASSERT(!strncmp(why, "M=0", 3));
		s.v[0] = 2;
		s.v[1] = (1L << 30) + 1;
		ASSERT(w->validate(&s, FP_F32, why, sizeof why) == -1);
		ASSERT(!strncmp(why, "N=", 2));
		s.v[1] = 5;
		ASSERT(w->validate(&s, (enum fp_dtype)7, why, sizeof why) == -1);
		ASSERT(workload_parse_shape(w, "N=0", &s, why, sizeof why) == -1);

		/* model at the headline shape */
		ASSERT(workload_parse_shape(w, "M=16384,N=4096", &s, why, sizeof why) == 0);
		for (int dt = 0; dt < FP_NDTYPES; dt++) {
			double E = 16384.0 * 4096, es = dt == FP_BF16 ? 2 : 4;
			double mint = min_tensors[i] > 0 ? min_tensors[i]
				: 1 + softmax_causal_kept(16384, 4096) / E;
			size_t d1, d3;

			w->model(&s, (enum fp_dtype)dt, workload_variant(w, "fused"), &m1);
			w->model(&s, (enum fp_dtype)dt, 0, &m0);
			ASSERT_NEAR(m1.min_bytes, mint * E * es, 1e-12);
			ASSERT_NEAR(m1.variant_bytes, m1.min_bytes, 1e-12);
			ASSERT_NEAR(m0.min_bytes, m1.min_bytes, 1e-12);
			ASSERT(m0.variant_bytes >= 1.6 * m1.variant_bytes);
			ASSERT(m1.flops >= 4 * E * (i == 1 ? 0.5 : 1) &&
			       m1.flops <= 6 * E);
			/* a set is everything a repetition reads and writes:
			 * the inputs (x, or y and dy), the output and the
			 * unfused intermediates (e or t, and the row vectors);
			 * nothing is shared between sets */
			d1 = w->device_bytes(&s, (enum fp_dtype)dt, 0, 1);
			d3 = w->device_bytes(&s, (enum fp_dtype)dt, 0, 3);
			ASSERT_EQ(d1, 3 * (size_t)(E * es) +
				  (i == 0 ? 2 : i == 2 ? 1 : 0) * (size_t)16384 * 4);
			ASSERT_EQ(d3, 3 * d1);
			d1 = w->device_bytes(&s, (enum fp_dtype)dt, 1, 1);
			d3 = w->device_bytes(&s, (enum fp_dtype)dt, 1, 3);
			ASSERT_EQ(d1, (i == 2 ? 3 : 2) * (size_t)(E * es));
			ASSERT_EQ(d3, 3 * d1);
			if (i == 1) {
				/* fused_dense: the unfused chain's bytes less
				 * t's write and read, the whole of x read */
				int dv = workload_variant(w, "fused_dense");
				struct fp_model md;

				ASSERT_EQ(dv, 2);
				w->model(&s, (enum fp_dtype)dt, dv, &md);
				ASSERT_NEAR(md.variant_bytes, 2 * E * es, 1e-12);
				ASSERT_NEAR(m0.variant_bytes - md.variant_bytes,
					    2 * E * es, 1e-12);
				ASSERT(md.variant_bytes > m1.variant_bytes);
				ASSERT_NEAR(md.saved_bytes, m0.saved_bytes, 0);
				ASSERT_EQ(w->device_bytes(&s, (enum fp_dtype)dt, dv, 1),
					  2 * (size_t)(E * es));
				ASSERT_STR_EQ(w->variants[0].twin, "fused_dense");
			}
		}
		/* the forward's textbook form moves three times the bytes */
		if (i == 0) {
			w->model(&s, FP_F32, workload_variant(w, "unfused4"), &m0);
			w->model(&s, FP_F32, workload_variant(w, "fused"), &m1);
			ASSERT(m0.variant_bytes >= 3 * m1.variant_bytes);
		}
		test_kopts(w);
		printf("%s: contract ok\n", w->name);
	}
}

/* cmp_merge: a comparison split into parts and merged in order equals the
 * whole one (the error sums up to rounding), bad elements and the first
 * bad index included. */
static int test_cmp_merge(struct fp_rng *g)
{
	enum { N = 10007 };
	static double out[N], ref[N];
	const size_t cuts[] = { 0, 1, 2500, 2501, 7000, N };
	struct fp_cmp whole, merged, part;

	for (size_t i = 0; i < N; i++) {
		ref[i] = rng_normal(g);
		out[i] = ref[i] + 1e-3 * rng_normal(g);
	}
	out[4321] = NAN;          /* bad: non-finite where ref is finite */
	out[9000] = INFINITY;
	ref[6000] = -INFINITY;    /* a non-finite ref matched exactly... */
	out[6000] = -INFINITY;
	ref[6001] = NAN;          /* ...and one not matched: bad */
	cmp_init(&whole);
	cmp_add(&whole, out, ref, N);
	cmp_init(&merged);
	for (size_t k = 0; k + 1 < sizeof cuts / sizeof *cuts; k++) {
		cmp_init(&part);
		cmp_add(&part, out + cuts[k], ref + cuts[k], cuts[k + 1] - cuts[k]);
		cmp_merge(&merged, &part);
	}
	ASSERT_EQ(merged.n, whole.n);
	ASSERT_EQ(merged.bad, 3);
	ASSERT_EQ(whole.bad, 3);
	ASSERT_EQ(merged.first_bad, 4321);
	ASSERT_EQ(whole.first_bad, 4321);
	ASSERT(merged.max_abs == whole.max_abs);
	ASSERT(fabs(merged.sq_err - whole.sq_err) <= 1e-12 * whole.sq_err);
	ASSERT(fabs(merged.sq_ref - whole.sq_ref) <= 1e-12 * whole.sq_ref);
	printf("cmp_merge: %zu elements in 5 parts, %zu bad from %zu, as whole\n",
	       merged.n, merged.bad, merged.first_bad);
	return 0;
}

/* cmp_rel's floor: one cancelled output (terms 0.1 and -0.1 + 7e-6, off by
 * 1e-9) is judged against its terms' size; the floor never tightens a
 * check, is merged with the parts, and leaves a large error large. */
static int test_cmp_floor(void)
{
	const double ref = 7e-6, out = 7e-6 + 1e-9, floor_sq = 0.1 * 0.1 * 2;
	const double big = 1.0, off = 1.5;
	struct fp_cmp c, a, b;

	cmp_init(&c);
	cmp_add(&c, &out, &ref, 1);
	ASSERT(cmp_rel(&c) > 1e-4);                   /* without: "fails" */
	c.sq_floor = floor_sq;
	ASSERT(fabs(cmp_rel(&c) - 1e-9 / sqrt(floor_sq)) < 1e-15);
	c.sq_floor = 1e-30;                           /* below ||ref||^2 */
	ASSERT(fabs(cmp_rel(&c) - 1e-9 / 7e-6) < 1e-9);
	cmp_init(&a);
	cmp_add(&a, &off, &big, 1);
	a.sq_floor = 1.0;
	cmp_init(&b);
	cmp_add(&b, &out, &ref, 1);
	b.sq_floor = floor_sq;
	cmp_merge(&a, &b);
	ASSERT(fabs(a.sq_floor - (1.0 + floor_sq)) < 1e-15);
	ASSERT(cmp_rel(&a) > 0.4);                    /* 0.5 / sqrt(1.02) */
	printf("cmp_rel: floor %.3g judges a cancelled output at %.3g\n",
	       sqrt(floor_sq), 1e-9 / sqrt(floor_sq));
	return 0;
}

int main(void)
{
	const char *env = getenv("FUSEPROF_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0)
			    : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	struct fp_rng g;

	printf("seed %llu (set FUSEPROF_SEED to reproduce)\n",
	       (unsigned long long)seed);
	rng_seed(&g, seed);
	test_bwd_fd(&g);
	test_large(&g);
	test_neginf(&g, seed);
	test_causal(&g);
	test_profiles(seed);
	test_contract();
	test_wide_stash(&g);
	test_cmp_merge(&g);
	test_cmp_floor();
	return 0;
}
