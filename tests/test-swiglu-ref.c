/* test-swiglu-ref.c - CPU-only checks of the SwiGLU workloads: the
 * double-precision backward reference against central finite differences
 * of the forward reference, silu's stability for |a| up to 1e4, and the
 * host-side contract (shapes, validate, model at a shape computed by hand,
 * device bytes, saved bytes of the forward and backward variants alike).
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
#include "swiglu/swiglu.h"
#include "test.h"
#include "wltest.h"
#include "workload.h"

static double loss(const double *dy, const double *p, double *y, long M, long N)
{
	double l = 0;

	swiglu_ref_fwd(p, y, M, N);
	for (long i = 0; i < M * N; i++)
		l += dy[i] * y[i];
	return l;
}

static void check_grad(struct fp_rng *r, long M, long N, double ascale)
{
	size_t mn = (size_t)(M * N);
	double *p = calloc(2 * mn, sizeof *p), *dy = calloc(mn, sizeof *dy);
	double *y = calloc(mn, sizeof *y), *dp = calloc(2 * mn, sizeof *dp);
	double worst = 0;

	ASSERT(p && dy && y && dp);
	for (long i = 0; i < M; i++)
		for (long j = 0; j < 2 * N; j++)
			p[i * 2 * N + j] = (j < N ? ascale : 1.0) * rng_normal(r);
	for (size_t i = 0; i < mn; i++)
		dy[i] = rng_normal(r);
	swiglu_ref_bwd(dy, p, dp, M, N);
	for (size_t i = 0; i < 2 * mn; i++) {
		volatile double up = p[i] + 1e-6 * (fabs(p[i]) > 1 ? fabs(p[i]) : 1);
		double keep = p[i], h = up - keep, lp, lm, want, err;

		p[i] = keep + h;
		lp = loss(dy, p, y, M, N);
		p[i] = keep - h;
		lm = loss(dy, p, y, M, N);
		p[i] = keep;
		want = (lp - lm) / (2 * h);
		err = fabs(dp[i] - want) / (fabs(want) > 1 ? fabs(want) : 1);
		if (err > 1e-6)
			FAIL("dp[%zu] M=%ld N=%ld: %.12g, finite difference %.12g",
			     i, M, N, dp[i], want);
		worst = err > worst ? err : worst;
	}
	printf("ok   grad M=%ld N=%ld a scale %g: worst err %.2g\n", M, N, ascale, worst);
	free(p), free(dy), free(y), free(dp);
}

/* silu and silu' are finite and right where exp overflows; the naive
 * forms are not. */
static void check_silu(void)
{
	volatile double big = 1e4;

	ASSERT(isnan(exp(big) / (1 + exp(big))));  /* the naive form */
	ASSERT(swiglu_ref_silu(1e4) == 1e4);
	ASSERT(swiglu_ref_silu(-1e4) == 0 || fabs(swiglu_ref_silu(-1e4)) < 1e-300);
	ASSERT(swiglu_ref_silu_grad(1e4) == 1);
	ASSERT(isfinite(swiglu_ref_silu_grad(-1e4)) && fabs(swiglu_ref_silu_grad(-1e4)) < 1e-300);
	ASSERT(swiglu_ref_silu(0) == 0);
	ASSERT(swiglu_ref_silu_grad(0) == 0.5);
	for (double a = -30; a <= 30; a += 0.37) {
		double d = (swiglu_ref_silu(a + 1e-6) - swiglu_ref_silu(a - 1e-6)) / 2e-6;

		ASSERT_NEAR(swiglu_ref_silu_grad(a), d, 1e-8);
		/* sig(a) + sig(-a) = 1; silu(a) - silu(-a) = a */
		ASSERT_NEAR(swiglu_ref_sigmoid(a) + swiglu_ref_sigmoid(-a), 1, 1e-15);
		ASSERT_NEAR(swiglu_ref_silu(a) - swiglu_ref_silu(-a), a, 1e-13);
	}
	/* the negative tail keeps its value: no 1 - sig cancellation */
	ASSERT_NEAR(swiglu_ref_silu(-40) / (-40 * exp(-40)), 1, 1e-12);
	printf("ok   silu stability and identities\n");
}

static void check_contract(const struct workload *w, const struct workload *fw, int bwd)
{
	struct fp_shape s;
	struct fp_model m[2], mf;
	struct fp_kopts ko;
	struct fp_op *op;
	char why[256];
	const int nv = workload_nvariants(w);
	const double E = 16384.0 * 4096;

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
	if (bwd)
		ASSERT(w->backward == NULL);
	else
		ASSERT_STR_EQ(w->backward, "swiglu_bwd");

	ASSERT_EQ(workload_parse_shape(w, "M=4", &s, why, sizeof why), -1);
	ASSERT(strstr(why, "'N'"));
	ASSERT_EQ(workload_parse_shape(w, "M=2147483648,N=1073741824", &s, why, sizeof why), 0);
	ASSERT_EQ(w->validate(&s, FP_BF16, why, sizeof why), -1);
	ASSERT(strstr(why, "N=1073741824") && !strchr(why, '\n'));

	ASSERT_EQ(workload_parse_shape(w, "M=16384,N=4096", &s, why, sizeof why), 0);
	for (int v = 0; v < nv; v++) {
		w->model(&s, FP_F32, v, &m[v]);
		fw->model(&s, FP_F32, v, &mf);
		ASSERT_NEAR(m[v].saved_bytes, mf.saved_bytes, 0);
	}
	ASSERT_NEAR(m[1].flops, (bwd ? 11 : 5) * E, 1e-12);
	ASSERT_NEAR(m[1].min_bytes, (bwd ? 5 : 3) * E * 4, 1e-12);
	ASSERT_NEAR(m[1].variant_bytes, m[1].min_bytes, 1e-12);
	ASSERT_NEAR(m[0].variant_bytes, (bwd ? 7 : 5) * E * 4, 1e-12);
	ASSERT_NEAR(m[0].saved_bytes, E * 4, 0);  /* s = silu(a) */
	ASSERT(m[1].saved_bytes == 0);
	{
		struct fp_model mb;

		w->model(&s, FP_BF16, 0, &mb);
		ASSERT_NEAR(mb.saved_bytes * 2, m[0].saved_bytes, 0);
		ASSERT_NEAR(mb.flops, m[0].flops, 1e-12);
	}
	for (int v = 0; v < nv; v++) {
		size_t one = w->device_bytes(&s, FP_F32, v, 1);
		size_t two = w->device_bytes(&s, FP_F32, v, 2);
		/* inputs and outputs, the saved s, the unfused forward's s */
		size_t want = (size_t)(E * 4) * ((bwd ? 5 : 3) + (v == 0 ? 1 : 0));

		ASSERT_EQ(one, want);
		ASSERT_EQ(two, 2 * one);
		ASSERT_EQ(w->device_bytes(&s, FP_BF16, v, 1) * 2, one);
	}
	/* one option, accesses a thread: auto (1), 1, 2 or 4; a value past
	 * the list is refused before anything is allocated */
	ASSERT_EQ(workload_nkopts(w), 1);
	ASSERT_EQ(workload_kopt(w, "vectors"), 0);
	memset(&ko, 0, sizeof ko);
	ASSERT_EQ(workload_parse_kopts(w, "vectors=4", &ko, why, sizeof why), 0);
	ASSERT_EQ(ko.v[0], 3);
	ASSERT_EQ(workload_parse_kopts(w, "vectors=3", &ko, why, sizeof why), -1);
	ASSERT(strstr(why, "'3'") && strstr(why, "auto, 1, 2, 4"));
	memset(&ko, 0, sizeof ko);
	ko.v[0] = 4;
	op = (struct fp_op *)&ko;
	ASSERT_EQ(w->create(&op, &s, FP_F32, 0, 1, 1, &ko), -1);
	ASSERT(op == NULL);
	ASSERT(w->kernel != NULL);
	printf("ok   contract %s\n", w->name);
}

int main(void)
{
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	struct fp_rng r;

	printf("seed %llu\n", (unsigned long long)seed);
	rng_seed(&r, seed);
	check_silu();
	check_grad(&r, 1, 1, 1);
	check_grad(&r, 3, 5, 1);
	check_grad(&r, 2, 17, 4);
	check_grad(&r, 2, 8, 30);   /* the saturated tails */
	check_contract(&wl_swiglu_fwd, &wl_swiglu_fwd, 0);
	check_contract(&wl_swiglu_bwd, &wl_swiglu_fwd, 1);
	return 0;
}
