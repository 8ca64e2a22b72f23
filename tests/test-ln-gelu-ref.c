/* test-ln-gelu-ref.c - CPU-only checks of the LayerNorm+GELU workloads: the
 * double-precision backward reference against central finite differences
 * of the forward reference, GELU identities, and the host-side contract
 * (shapes, validate, model, device bytes, the LayerNorm kernel plan).
 * Needs no GPU. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kutil.h"
#include "ln_gelu/ln_gelu.h"
#include "test.h"
#include "workload.h"

static double loss(const double *dy, const double *x, const double *g,
		   const double *b, double *y, long M, long N, int erf)
{
	double l = 0;

	ln_gelu_ref_fwd(x, g, b, y, M, N, erf);
	for (long i = 0; i < M * N; i++)
		l += dy[i] * y[i];
	return l;
}

/* Central difference of loss() along one coordinate p, step 1e-5 (the
 * function varies on a unit scale whatever the offset), taken as the
 * difference actually represented: O(h^2) ~ 1e-10 truncation error. */
static double fd(double *p, const double *dy, const double *x, const double *g,
		 const double *b, double *y, long M, long N, int erf)
{
	volatile double up = *p + 1e-5;
	double keep = *p, h = up - keep, lp, lm;

	*p = keep + h;
	lp = loss(dy, x, g, b, y, M, N, erf);
	*p = keep - h;
	lm = loss(dy, x, g, b, y, M, N, erf);
	*p = keep;
	return (lp - lm) / (2 * h);
}

static void check_grad(struct fp_rng *r, long M, long N, int erf, double offset)
{
	size_t mn = (size_t)(M * N);
	double *x = calloc(mn, sizeof *x), *dy = calloc(mn, sizeof *dy);
	double *y = calloc(mn, sizeof *y), *dx = calloc(mn, sizeof *dx);
	double *g = calloc((size_t)N, sizeof *g), *b = calloc((size_t)N, sizeof *b);
	double *dg = calloc((size_t)N, sizeof *dg), *db = calloc((size_t)N, sizeof *db);
	double worst = 0;

	ASSERT(x && dy && y && dx && g && b && dg && db);
	for (size_t i = 0; i < mn; i++) {
		x[i] = offset + rng_normal(r);
		dy[i] = rng_normal(r);
	}
	for (long j = 0; j < N; j++) {
		g[j] = 1 + 0.5 * rng_normal(r);
		b[j] = 0.5 * rng_normal(r);
	}
	ln_gelu_ref_bwd(dy, x, g, b, dx, dg, db, M, N, erf);
	for (size_t i = 0; i < mn; i++) {
		double want = fd(&x[i], dy, x, g, b, y, M, N, erf);
		/* x near 1e4 costs the double loss 4 digits: looser. */
		double tol = offset ? 1e-5 : 1e-6;
		double err = fabs(dx[i] - want) / (fabs(want) > 1 ? fabs(want) : 1);

		if (err > tol)
			FAIL("dx[%zu] M=%ld N=%ld erf=%d offset=%g: %.12g, finite "
			     "difference %.12g", i, M, N, erf, offset, dx[i], want);
		worst = err > worst ? err : worst;
	}
	for (long j = 0; j < N; j++) {
		double wg = fd(&g[j], dy, x, g, b, y, M, N, erf);
		double wb = fd(&b[j], dy, x, g, b, y, M, N, erf);

		ASSERT_NEAR(dg[j], wg, 1e-6);
		ASSERT_NEAR(db[j], wb, 1e-6);
	}
	/* dgamma/dbeta accumulate: a second call doubles them. */
	{
		double g0 = dg[0], b0 = db[0];

		ln_gelu_ref_bwd(dy, x, g, b, dx, dg, db, M, N, erf);
		ASSERT_NEAR(dg[0], 2 * g0, 1e-12);
		ASSERT_NEAR(db[0], 2 * b0, 1e-12);
	}
	printf("ok   grad M=%ld N=%ld erf=%d offset=%g: worst dx rel err %.2g\n",
	       M, N, erf, offset, worst);
	free(x), free(dy), free(y), free(dx), free(g), free(b), free(dg), free(db);
}

static void check_gelu(void)
{
	for (int erf = 0; erf <= 1; erf++) {
		ASSERT(ln_gelu_ref_gelu(0, erf) == 0);
		ASSERT_NEAR(ln_gelu_ref_gelu_grad(0, erf), 0.5, 1e-15);
		for (double h = -8; h <= 8; h += 0.37) {
			/* GELU(h) - GELU(-h) = h for both forms. */
			ASSERT_NEAR(ln_gelu_ref_gelu(h, erf) - ln_gelu_ref_gelu(-h, erf),
				    h, 1e-14);
			double d = (ln_gelu_ref_gelu(h + 1e-6, erf) -
				    ln_gelu_ref_gelu(h - 1e-6, erf)) / 2e-6;
			ASSERT_NEAR(ln_gelu_ref_gelu_grad(h, erf), d, 1e-8);
		}
		/* The tails: no cancellation to 0 where the value is not 0. */
		ASSERT(ln_gelu_ref_gelu(-6, erf) < 0);
		ASSERT(ln_gelu_ref_gelu(-6, erf) > -1e-6);
		ASSERT(isfinite(ln_gelu_ref_gelu(-1e4, erf)));
		ASSERT(ln_gelu_ref_gelu(1e4, erf) == 1e4);
	}
	/* The two forms agree to about 1e-3 over the usual range. */
	for (double h = -4; h <= 4; h += 0.1)
		ASSERT(fabs(ln_gelu_ref_gelu(h, 0) - ln_gelu_ref_gelu(h, 1)) < 1e-3);
	printf("ok   gelu identities\n");
}

/* A constant row normalizes to 0, and a shifted row to the same values. */
static void check_fwd_invariants(struct fp_rng *r)
{
	enum { N = 37 };
	double x[N], xs[N], g[N], b[N], y[N], ys[N];

	for (int j = 0; j < N; j++) {
		x[j] = rng_normal(r);
		xs[j] = x[j] + 1e4;
		g[j] = 1 + 0.5 * rng_normal(r);
		b[j] = 0.5 * rng_normal(r);
	}
	ln_gelu_ref_fwd(x, g, b, y, 1, N, 0);
	ln_gelu_ref_fwd(xs, g, b, ys, 1, N, 0);
	for (int j = 0; j < N; j++)
		ASSERT_NEAR(ys[j], y[j], 1e-9);
	for (int j = 0; j < N; j++)
		xs[j] = 0.1;
	ln_gelu_ref_fwd(xs, g, b, ys, 1, N, 1);
	for (int j = 0; j < N; j++)
		ASSERT_NEAR(ys[j], ln_gelu_ref_gelu(b[j], 1), 1e-12);
	printf("ok   forward shift invariance, constant rows\n");
}

static void check_contract(const struct workload *w, int bwd)
{
	struct fp_shape s;
	struct fp_model m[3];
	char why[256];
	const char *lists[] = { w->suite, w->quick, w->tests };
	int nv = workload_nvariants(w), fused = -1;

	ASSERT(workload_find(w->name) == w);
	ASSERT(workload_nprofiles(w) >= 4);
	ASSERT_STR_EQ(w->profiles[0], "normal");
	for (int v = 0; v < nv; v++)
		if (w->variants[v].role == FP_FUSED)
			fused = v;
	ASSERT(fused >= 0);

	/* Every listed shape parses and validates, for both dtypes. */
	for (int l = 0; l < 3; l++) {
		char *specs = strdup(lists[l]), *save = NULL;

		for (char *t = strtok_r(specs, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
			if (workload_parse_shape(w, t, &s, why, sizeof why))
				FAIL("%s: '%s' does not parse: %s", w->name, t, why);
			for (int dt = 0; dt < FP_NDTYPES; dt++)
				if (w->validate(&s, (enum fp_dtype)dt, why, sizeof why))
					FAIL("%s: '%s' rejected: %s", w->name, t, why);
		}
		free(specs);
	}
	ASSERT(strstr(w->tests, "N=50257") && strstr(w->tests, "erf=1"));

	/* erf defaults to 0 (tanh); M and N are required. */
	ASSERT_EQ(workload_parse_shape(w, "M=16384,N=4096", &s, why, sizeof why), 0);
	ASSERT_EQ(s.v[2], 0);
	ASSERT_EQ(workload_parse_shape(w, "N=4096", &s, why, sizeof why), -1);
	ASSERT(strstr(why, "'M'"));
	ASSERT_EQ(workload_parse_shape(w, "M=1,N=1,erf=2", &s, why, sizeof why), -1);

	/* validate: a tensor past any GPU is refused with one line. */
	ASSERT_EQ(workload_parse_shape(w, "M=2147483648,N=1073741824", &s, why, sizeof why), 0);
	ASSERT_EQ(w->validate(&s, FP_F32, why, sizeof why), -1);
	ASSERT(strstr(why, "M=2147483648") && !strchr(why, '\n'));

	/* model at 16384 x 4096 fp32. */
	ASSERT_EQ(workload_parse_shape(w, "M=16384,N=4096", &s, why, sizeof why), 0);
	for (int v = 0; v < nv; v++) {
		w->model(&s, FP_F32, v, &m[v]);
		ASSERT(m[v].flops > 0);
		ASSERT(m[v].variant_bytes >= m[v].min_bytes);
	}
	{
		double mn = 16384.0 * 4096;
		double want = bwd ? (3 * mn + 4 * 4096.0) * 4 : (2 * mn + 2 * 4096.0) * 4;

		ASSERT_NEAR(m[fused].min_bytes, want, 1e-12);
		ASSERT_NEAR(m[fused].variant_bytes, want, 1e-12);
		/* Unfused moves about twice the fused bytes or more. */
		for (int v = 0; v < nv; v++)
			if (v != fused)
				ASSERT(m[v].variant_bytes >= 1.99 * m[fused].variant_bytes);
		/* bf16 halves the bytes, not the FLOPs. */
		struct fp_model mb;
		w->model(&s, FP_BF16, fused, &mb);
		ASSERT_NEAR(mb.min_bytes * 2, m[fused].min_bytes, 1e-12);
		ASSERT_NEAR(mb.flops, m[fused].flops, 1e-12);
	}

	/* device_bytes covers every set, and a set is everything a repetition
	 * reads and writes: x, gamma, beta (dy); y or dx (dgamma, dbeta and
	 * their partials), and the unfused variants' h or dh (statistics).
	 * Nothing is shared, so two sets take twice one (every buffer is a
	 * whole number of 512-byte blocks at this shape). */
	for (int v = 0; v < nv; v++) {
		size_t one = w->device_bytes(&s, FP_F32, v, 1);
		size_t two = w->device_bytes(&s, FP_F32, v, 2);
		size_t mn = (size_t)16384 * 4096 * 4;
		size_t set = mn * (bwd ? 3 : 2) + (bwd ? 4 : 2) * 4096 * 4;

		ASSERT(one >= (size_t)m[v].min_bytes);
		ASSERT(one >= set + (v == fused ? 0 : mn));
		ASSERT_EQ(two, 2 * one);
		/* no more than 10% over what the buffers need */
		ASSERT((double)one <= 1.1 * (m[v].variant_bytes > m[v].min_bytes
					      ? m[v].variant_bytes : m[v].min_bytes) + 40e6);
	}
	/* no kernel options; kernel() names the row kernels the width picked */
	ASSERT_EQ(workload_nkopts(w), 0);
	ASSERT(w->kernel != NULL);
	printf("ok   contract %s\n", w->name);
}

static void check_plan(void)
{
	for (int bwd = 0; bwd <= 1; bwd++) {
		int e = layernorm_per_thread(bwd);

		for (int dt = 0; dt < FP_NDTYPES; dt++) {
			long v = 16 / (long)fp_dtype_size((enum fp_dtype)dt);

			ASSERT_EQ(e % v, 0);
			for (long n = 1; n <= 70000; n += (n < 300 ? 1 : 97)) {
				int tpr = layernorm_plan(bwd, n, (enum fp_dtype)dt);

				if (n % v) {
					ASSERT_EQ(tpr, 0);  /* unaligned rows go wide */
					continue;
				}
				if (!tpr) {
					/* only rows past the register capacity;
					 * the backward's up to twice it take 512
					 * threads of 32 (layernorm_bwd_wide) */
					ASSERT(n > (bwd ? 512L : 1024L) * e);
					if (bwd) {
						int wide = n <= 512L * 32;

						ASSERT_EQ(layernorm_bwd_wide(n, (enum fp_dtype)dt), wide);
						ASSERT_EQ(layernorm_bwd_held(n, (enum fp_dtype)dt),
							  wide ? 32 : 0);
						ASSERT(!layernorm_bwd_full(n, (enum fp_dtype)dt));
					}
					continue;
				}
				if (bwd)
					ASSERT(!layernorm_bwd_wide(n, (enum fp_dtype)dt));
				ASSERT(tpr >= 32 && tpr <= 1024 && !(tpr & (tpr - 1)));
				ASSERT((long)tpr * e >= n);
				/* and the smallest such */
				ASSERT(tpr == 32 || (long)tpr / 2 * e < n);
				if (!bwd) {
					/* the forward's likewise: 3 chunks (24 bf16)
					 * where bf16 rows of 32-256 threads fill no
					 * more (N in (16, 24] x tpr), 4 (32 values)
					 * elsewhere */
					int held = layernorm_fwd_held(n, (enum fp_dtype)dt);
					ASSERT(held % v == 0 && (long)tpr * held >= n);
					ASSERT_EQ(held, dt == FP_BF16 && tpr <= 256 &&
						  n > 16L * tpr && n <= 24L * tpr ? 24 : e);
					/* the full-row instance: rows of exactly
					 * the values held, up to 256 threads */
					ASSERT_EQ(layernorm_fwd_full(n, (enum fp_dtype)dt),
						  tpr <= 256 && (long)tpr * held == n);
					continue;
				}
				/* the backward's threads hold the row in whole
				 * 16-byte chunks, 3 of them only where fp32 rows
				 * of 64-256 threads fill no more (N in (8, 12] x
				 * tpr), 4 elsewhere */
				int held = layernorm_bwd_held(n, (enum fp_dtype)dt);
				ASSERT(held % v == 0 && (long)tpr * held >= n);
				ASSERT_EQ(held, dt == FP_F32 && tpr >= 64 && tpr <= 256 &&
					  n > 8L * tpr && n <= 12L * tpr ? 12 : e);
				ASSERT_EQ(layernorm_bwd_full(n, (enum fp_dtype)dt),
					  tpr <= 256 && (long)tpr * held == n);
			}
		}
	}
	ASSERT_EQ(layernorm_bwd_held(768, FP_F32), 12);    /* 64 threads a row */
	ASSERT_EQ(layernorm_bwd_held(1024, FP_F32), 16);
	ASSERT_EQ(layernorm_bwd_held(1536, FP_F32), 12);   /* 128 */
	ASSERT_EQ(layernorm_bwd_held(3072, FP_F32), 12);   /* 256 */
	ASSERT_EQ(layernorm_bwd_held(320, FP_F32), 16);    /* 32: kept at 4 */
	ASSERT_EQ(layernorm_bwd_held(6144, FP_F32), 16);   /* 512: kept at 4 */
	ASSERT_EQ(layernorm_bwd_held(768, FP_BF16), 16);
	ASSERT_EQ(layernorm_bwd_held(50257, FP_F32), 0);   /* the wide kernel */
	ASSERT_EQ(layernorm_bwd_held(8200, FP_BF16), 32);  /* 512 threads of 32 */
	ASSERT_EQ(layernorm_bwd_held(16384, FP_F32), 32);
	ASSERT_EQ(layernorm_bwd_held(16392, FP_BF16), 0);  /* past 512 x 32 */
	ASSERT(!layernorm_bwd_wide(8192, FP_BF16));        /* 512 x 16 */
	ASSERT(!layernorm_bwd_wide(9001, FP_F32));         /* unaligned: wide kernel */
	ASSERT_EQ(layernorm_fwd_held(768, FP_BF16), 24);   /* 32 threads a row */
	ASSERT_EQ(layernorm_fwd_held(520, FP_BF16), 24);
	ASSERT_EQ(layernorm_fwd_held(512, FP_BF16), 32);   /* 16 a thread: 2 chunks, kept at 4 */
	ASSERT_EQ(layernorm_fwd_held(1024, FP_BF16), 32);
	ASSERT_EQ(layernorm_fwd_held(1536, FP_BF16), 24);  /* 64 */
	ASSERT_EQ(layernorm_fwd_held(6144, FP_BF16), 24);  /* 256 */
	ASSERT_EQ(layernorm_fwd_held(12288, FP_BF16), 32); /* 512: kept at 4 */
	ASSERT_EQ(layernorm_fwd_held(768, FP_F32), 32);
	ASSERT_EQ(layernorm_fwd_held(50257, FP_BF16), 0);  /* the wide kernel */
	ASSERT(layernorm_fwd_full(768, FP_BF16));   /* 32 threads x 24 */
	ASSERT(layernorm_fwd_full(1024, FP_BF16));  /* 32 x 32 */
	ASSERT(layernorm_fwd_full(4096, FP_BF16));  /* 128 x 32 */
	ASSERT(layernorm_fwd_full(1024, FP_F32));   /* 32 x 32 */
	ASSERT(!layernorm_fwd_full(768, FP_F32));   /* 32 x 32 holds 1024 */
	ASSERT(!layernorm_fwd_full(1000, FP_BF16));
	ASSERT(!layernorm_fwd_full(16384, FP_BF16)); /* 512 threads a row */
	ASSERT(!layernorm_fwd_full(50257, FP_F32));
	/* the looped grid and staged gamma, beta: full bf16 rows of a warp */
	ASSERT(layernorm_fwd_looped(768, FP_BF16));
	ASSERT(layernorm_fwd_looped(1024, FP_BF16));
	ASSERT(!layernorm_fwd_looped(1024, FP_F32));   /* fp32 lost */
	ASSERT(!layernorm_fwd_looped(2048, FP_BF16));  /* 64 threads a row */
	ASSERT(!layernorm_fwd_looped(1000, FP_BF16));  /* not full */
	ASSERT(!layernorm_fwd_looped(512, FP_BF16));   /* 32 x 32 holds 1024 */
	ASSERT(layernorm_bwd_full(768, FP_F32));    /* 64 threads x 12 */
	ASSERT(layernorm_bwd_full(1024, FP_F32));   /* 64 x 16 */
	ASSERT(layernorm_bwd_full(1024, FP_BF16));  /* 64 x 16 */
	ASSERT(layernorm_bwd_full(4096, FP_BF16));  /* 256 x 16 */
	ASSERT(!layernorm_bwd_full(768, FP_BF16));  /* 64 x 16 holds 1024 */
	ASSERT(!layernorm_bwd_full(8192, FP_F32));  /* 512 threads a row */
	ASSERT(!layernorm_bwd_full(1000, FP_F32));
	/* the suite's big shape stays in registers */
	ASSERT(layernorm_plan(0, 4096, FP_F32) > 0 && layernorm_plan(1, 4096, FP_BF16) > 0);
	ASSERT_EQ(layernorm_plan(0, 50257, FP_F32), 0);
	printf("ok   kernel plan\n");
}

int main(void)
{
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	struct fp_rng r;

	printf("seed %llu\n", (unsigned long long)seed);
	rng_seed(&r, seed);
	check_gelu();
	check_fwd_invariants(&r);
	for (int erf = 0; erf <= 1; erf++) {
		check_grad(&r, 1, 1, erf, 0);
		check_grad(&r, 3, 5, erf, 0);
		check_grad(&r, 2, 17, erf, 0);
		check_grad(&r, 2, 8, erf, 1e4);
	}
	check_contract(&wl_ln_gelu_fwd, 0);
	check_contract(&wl_ln_gelu_bwd, 1);
	check_plan();
	return 0;
}
