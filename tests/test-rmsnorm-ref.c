/* test-rmsnorm-ref.c - CPU-only checks of the RMSNorm workloads: the
 * double-precision backward reference against central finite differences
 * of the forward reference, and the host-side contract (shapes, validate,
 * model at a shape computed by hand, device bytes, saved bytes of the
 * forward and backward variants alike). Needs no GPU. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kutil.h"
#include "rmsnorm/rmsnorm.h"
#include "test.h"
#include "wltest.h"
#include "workload.h"

static double loss(const double *dy, const double *x, const double *g, double *y,
		   long M, long N)
{
	double l = 0;

	rmsnorm_ref_fwd(x, g, y, NULL, M, N);
	for (long i = 0; i < M * N; i++)
		l += dy[i] * y[i];
	return l;
}

/* Central difference of loss() along coordinate p, the step relative to
 * the coordinate's size, taken as the difference actually represented. */
static double fd(double *p, const double *dy, const double *x, const double *g,
		 double *y, long M, long N)
{
	volatile double up = *p + 1e-5 * (fabs(*p) > 1e-3 ? fabs(*p) : 1e-3);
	double keep = *p, h = up - keep, lp, lm;

	*p = keep + h;
	lp = loss(dy, x, g, y, M, N);
	*p = keep - h;
	lm = loss(dy, x, g, y, M, N);
	*p = keep;
	return (lp - lm) / (2 * h);
}

static void check_grad(struct fp_rng *r, long M, long N, double offset, double scale)
{
	size_t mn = (size_t)(M * N);
	double *x = calloc(mn, sizeof *x), *dy = calloc(mn, sizeof *dy);
	double *y = calloc(mn, sizeof *y), *dx = calloc(mn, sizeof *dx);
	double *g = calloc((size_t)N, sizeof *g), *dg = calloc((size_t)N, sizeof *dg);
	double worst = 0, gmax = 0;

	ASSERT(x && dy && y && dx && g && dg);
	for (size_t i = 0; i < mn; i++) {
		x[i] = offset + scale * rng_normal(r);
		dy[i] = rng_normal(r);
	}
	for (long j = 0; j < N; j++)
		g[j] = 1 + 0.5 * rng_normal(r);
	rmsnorm_ref_bwd(dy, x, g, dx, dg, M, N);
	/* the scale of dx's terms, rstd dy gamma: dx itself may cancel to
	 * far below them (N = 1: dx ~ eps / |x|^3) */
	for (size_t i = 0; i < mn; i++)
		gmax = fmax(gmax, fabs(dy[i] * g[i % (size_t)N]) *
			    rmsnorm_ref_rstd(x + i / (size_t)N * (size_t)N, N));
	for (size_t i = 0; i < mn; i++) {
		double want = fd(&x[i], dy, x, g, y, M, N);
		/* judged against the scale of its terms: dx scales as 1/rms,
		 * and the step is relative to x, so the error stays relative */
		double err = fabs(dx[i] - want) / (gmax > 0 ? gmax : 1);

		if (err > 1e-6)
			FAIL("dx[%zu] M=%ld N=%ld offset=%g scale=%g: %.12g, finite "
			     "difference %.12g", i, M, N, offset, scale, dx[i], want);
		worst = err > worst ? err : worst;
	}
	for (long j = 0; j < N; j++)
		ASSERT_NEAR(dg[j], fd(&g[j], dy, x, g, y, M, N), 1e-6);
	/* dgamma accumulates: a second call doubles it. */
	{
		double g0 = dg[0];

		rmsnorm_ref_bwd(dy, x, g, dx, dg, M, N);
		ASSERT_NEAR(dg[0], 2 * g0, 1e-12);
	}
	printf("ok   grad M=%ld N=%ld offset=%g scale=%g: worst dx err %.2g\n",
	       M, N, offset, scale, worst);
	free(x), free(dy), free(y), free(dx), free(g), free(dg);
}

/* Forward identities: rows scaled by c > 0 normalize alike (while eps is
 * negligible), a zero row gives 0 and rstd 1/sqrt(eps), eps inside the
 * root, and y matches torch's formula on a row worked by hand. */
static void check_fwd(struct fp_rng *r)
{
	enum { N = 37 };
	double x[N], xs[N], g[N], y[N], ys[N], rstd;

	for (int j = 0; j < N; j++) {
		x[j] = 1e3 * rng_normal(r);  /* eps negligible against x^2 */
		xs[j] = 1e3 * x[j];
		g[j] = 1 + 0.5 * rng_normal(r);
	}
	rmsnorm_ref_fwd(x, g, y, NULL, 1, N);
	rmsnorm_ref_fwd(xs, g, ys, NULL, 1, N);
	for (int j = 0; j < N; j++)
		ASSERT_NEAR(ys[j], y[j], 1e-9);
	memset(xs, 0, sizeof xs);
	rmsnorm_ref_fwd(xs, g, ys, &rstd, 1, N);
	ASSERT_NEAR(rstd, 1 / sqrt(RMSNORM_EPS), 1e-12);
	for (int j = 0; j < N; j++)
		ASSERT(ys[j] == 0);
	/* x = (3, 4): mean(x^2) = 12.5 */
	{
		double x2[2] = { 3, 4 }, g2[2] = { 1, 2 }, y2[2];

		rmsnorm_ref_fwd(x2, g2, y2, &rstd, 1, 2);
		ASSERT_NEAR(rstd, 1 / sqrt(12.5 + 1e-5), 1e-15);
		ASSERT_NEAR(y2[1], 8 / sqrt(12.5 + 1e-5), 1e-15);
	}
	/* tiny rows: eps dominates, so y is far below x / rms(x) */
	for (int j = 0; j < N; j++)
		xs[j] = 1e-7 * x[j];
	rmsnorm_ref_fwd(xs, g, ys, &rstd, 1, N);
	ASSERT(rstd < 1 / sqrt(RMSNORM_EPS) && rstd > 0.99 / sqrt(RMSNORM_EPS));
	ASSERT(fabs(ys[0]) < 0.1 * fabs(y[0]) + 1e-12);
	printf("ok   forward identities\n");
}

static void check_contract(const struct workload *w, const struct workload *fw, int bwd)
{
	struct fp_shape s;
	struct fp_model m[2], mf;
	char why[256];
	const int nv = workload_nvariants(w);
	const double M = 16384, N = 4096, mn = M * N;

	ASSERT(workload_find(w->name) == w);
	ASSERT_EQ(nv, 2);
	ASSERT_STR_EQ(w->variants[0].name, "unfused");
	ASSERT_STR_EQ(w->variants[1].name, "fused");
	ASSERT_EQ(w->variants[1].role, FP_FUSED);
	ASSERT(workload_nprofiles(w) >= 4);
	ASSERT_STR_EQ(w->profiles[0], "normal");
	assert_shapes_run(w, w->suite, 2);
	assert_shapes_run(w, w->quick, 1);
	assert_shapes_run(w, w->tests, 8);
	ASSERT_STR_EQ(w->suite, "M=16384,N=768;M=16384,N=4096");
	ASSERT(strstr(w->tests, "M=1,N=1") && strstr(w->tests, "N=1023") &&
	       strstr(w->tests, "N=65536"));
	if (bwd)
		ASSERT(w->backward == NULL);
	else
		ASSERT_STR_EQ(w->backward, "rmsnorm_bwd");

	ASSERT_EQ(workload_parse_shape(w, "N=4096", &s, why, sizeof why), -1);
	ASSERT(strstr(why, "'M'"));
	ASSERT_EQ(workload_parse_shape(w, "M=2147483648,N=1073741824", &s, why, sizeof why), 0);
	ASSERT_EQ(w->validate(&s, FP_F32, why, sizeof why), -1);
	ASSERT(strstr(why, "M=2147483648") && !strchr(why, '\n'));

	/* the model at 16384 x 4096 fp32, by hand */
	ASSERT_EQ(workload_parse_shape(w, "M=16384,N=4096", &s, why, sizeof why), 0);
	for (int v = 0; v < nv; v++) {
		w->model(&s, FP_F32, v, &m[v]);
		fw->model(&s, FP_F32, v, &mf);
		/* the forward and the backward of a name keep the same bytes */
		ASSERT_NEAR(m[v].saved_bytes, mf.saved_bytes, 0);
	}
	if (!bwd) {
		ASSERT_NEAR(m[1].flops, 4 * mn, 1e-12);
		ASSERT_NEAR(m[1].min_bytes, (2 * mn + N) * 4, 1e-12);
		ASSERT_NEAR(m[0].variant_bytes, (3 * mn + N) * 4 + 8 * M, 1e-12);
	} else {
		ASSERT_NEAR(m[1].flops, 11 * mn, 1e-12);
		ASSERT_NEAR(m[1].min_bytes, (3 * mn + 2 * N) * 4, 1e-12);
		ASSERT_NEAR(m[0].variant_bytes, (7 * mn + 3 * N) * 4 + 16 * M, 1e-12);
	}
	ASSERT_NEAR(m[1].variant_bytes, m[1].min_bytes, 1e-12);
	ASSERT_NEAR(m[0].saved_bytes, 4 * M, 0);  /* rstd, fp32 per row */
	ASSERT(m[1].saved_bytes == 0);            /* recomputed */
	ASSERT_NEAR(m[0].min_bytes, m[1].min_bytes, 0);
	{
		struct fp_model mb;

		w->model(&s, FP_BF16, 1, &mb);
		ASSERT_NEAR(mb.min_bytes * 2, m[1].min_bytes, 1e-12);
		ASSERT_NEAR(mb.flops, m[1].flops, 1e-12);
		w->model(&s, FP_BF16, 0, &mb);
		ASSERT_NEAR(mb.saved_bytes, 4 * M, 0);  /* rstd stays fp32 */
	}

	/* device_bytes: every set holds what a repetition reads and writes;
	 * nothing is shared, so two sets take twice one (every buffer is a
	 * whole number of 512-byte blocks at this shape); within 10% of the
	 * tensors plus the partials */
	for (int v = 0; v < nv; v++) {
		size_t one = w->device_bytes(&s, FP_F32, v, 1);
		size_t two = w->device_bytes(&s, FP_F32, v, 2);
		size_t t = (size_t)mn * 4, set = t * (bwd ? 3 : 2) + (bwd ? 2 : 1) * 4096 * 4;

		ASSERT(one >= set + (size_t)m[v].saved_bytes);
		ASSERT_EQ(two, 2 * one);
		ASSERT((double)one <= 1.1 * (double)set + 20e6);
		/* more rows, more bytes */
		struct fp_shape s2 = s;
		s2.v[0] *= 2;
		ASSERT(w->device_bytes(&s2, FP_F32, v, 1) > one);
		ASSERT(w->device_bytes(&s, FP_BF16, v, 1) < one);
	}
	ASSERT_EQ(workload_nkopts(w), 0);
	ASSERT(w->kernel != NULL);
	printf("ok   contract %s\n", w->name);
}

int main(void)
{
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	struct fp_rng r;

	printf("seed %llu\n", (unsigned long long)seed);
	rng_seed(&r, seed);
	check_fwd(&r);
	check_grad(&r, 1, 1, 0, 1);
	check_grad(&r, 3, 5, 0, 1);
	check_grad(&r, 2, 17, 0, 1);
	check_grad(&r, 2, 8, 1e4, 1);    /* the offset profile */
	check_grad(&r, 2, 9, 0, 1e-3);   /* the tiny profile: eps matters */
	check_contract(&wl_rmsnorm_fwd, &wl_rmsnorm_fwd, 0);
	check_contract(&wl_rmsnorm_bwd, &wl_rmsnorm_fwd, 1);
	return 0;
}
