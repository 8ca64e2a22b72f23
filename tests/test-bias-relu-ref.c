/* test-bias-relu-ref.c - CPU-only checks of the bias+ReLU workloads: the
 * double backward against central finite differences of the forward (at
 * points away from the kink), relu'(0) = 0, and the host-side contract
 * (shapes, validate, models with the byte target, saved_bytes,
 * device bytes). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kutil.h"
#include "bias_relu/bias_relu.h"
#include "test.h"
#include "wltest.h"
#include "workload.h"

static double loss(const double *dy, const double *x, const double *b, double *y,
		   long M, long N)
{
	double l = 0;

	bias_relu_ref_fwd(x, b, y, M, N);
	for (long i = 0; i < M * N; i++)
		l += dy[i] * y[i];
	return l;
}

/* Step 1e-4; every x + b is kept at least 1e-2 from 0, so no difference
 * crosses the kink and the loss is linear along each step. */
static double fd(double *p, const double *dy, const double *x, const double *b,
		 double *y, long M, long N)
{
	const double keep = *p, h = 1e-4;
	double lp, lm;

	*p = keep + h;
	lp = loss(dy, x, b, y, M, N);
	*p = keep - h;
	lm = loss(dy, x, b, y, M, N);
	*p = keep;
	return (lp - lm) / (2 * h);
}

static void check_grad(struct fp_rng *g, long M, long N)
{
	const size_t mn = (size_t)(M * N);
	double *x = calloc(mn, sizeof *x), *dy = calloc(mn, sizeof *dy);
	double *y = calloc(mn, sizeof *y), *dx = calloc(mn, sizeof *dx);
	double *b = calloc((size_t)N, sizeof *b), *db = calloc((size_t)N, sizeof *db);
	size_t zeros = 0;

	ASSERT(x && dy && y && dx && b && db);
	for (long j = 0; j < N; j++)
		b[j] = 0.5 * rng_normal(g);
	for (size_t i = 0; i < mn; i++) {
		do
			x[i] = rng_normal(g);
		while (fabs(x[i] + b[i % N]) < 1e-2);
		dy[i] = rng_normal(g);
	}
	bias_relu_ref_bwd(dy, x, b, dx, db, M, N);
	for (size_t i = 0; i < mn; i++) {
		ASSERT_NEAR(dx[i], fd(&x[i], dy, x, b, y, M, N), 1e-9);
		zeros += dx[i] == 0;
	}
	for (long j = 0; j < N; j++)
		ASSERT_NEAR(db[j], fd(&b[j], dy, x, b, y, M, N), 1e-9);
	if (mn > 16)
		ASSERT(zeros > 0 && zeros < mn);  /* both sides of the kink seen */
	{
		double b0 = db[0];

		bias_relu_ref_bwd(dy, x, b, dx, db, M, N);
		ASSERT_NEAR(db[0], 2 * b0, 1e-12);
	}
	printf("ok   grad M=%ld N=%ld\n", M, N);
	free(x), free(dy), free(y), free(dx), free(b), free(db);
}

/* At the kink: relu(0) = 0 and its derivative is taken as 0; tiny values
 * keep their sign. */
static void check_edges(void)
{
	double x[4] = { -0.25, 1e-300, -1e-300, 3 }, b[4] = { 0.25, 0, 0, -3 };
	double dy[4] = { 1, 2, 3, 4 }, y[4], dx[4], db[4] = { 0 };

	bias_relu_ref_fwd(x, b, y, 1, 4);
	bias_relu_ref_bwd(dy, x, b, dx, db, 1, 4);
	ASSERT(y[0] == 0 && y[1] == 1e-300 && y[2] == 0 && y[3] == 0);
	ASSERT(dx[0] == 0 && dx[1] == 2 && dx[2] == 0 && dx[3] == 0);
	ASSERT(db[1] == 2 && db[0] == 0);
	printf("ok   relu at 0 and tiny values\n");
}

static void check_contract(const struct workload *w, int bwd)
{
	const struct workload *fw = workload_find("bias_relu_fwd");
	const struct workload *bw = workload_find("bias_relu_bwd");
	struct fp_shape s;
	struct fp_model m, f, si;
	char why[256];

	ASSERT(w && fw && bw);
	ASSERT_EQ(workload_nvariants(w), 3);
	ASSERT_STR_EQ(w->variants[BR_SAVE_INPUT].name, "save_input");
	ASSERT_STR_EQ(w->variants[BR_FUSED_SAVE_OUTPUT].name, "fused_save_output");
	ASSERT_STR_EQ(w->variants[BR_FUSED_BITMASK].name, "fused_bitmask");
	if (!bwd)
		ASSERT_STR_EQ(w->backward, "bias_relu_bwd");
	assert_shapes_run(w, w->suite, 2);
	assert_shapes_run(w, w->quick, 1);
	assert_shapes_run(w, w->tests, 8);

	memset(&s, 0, sizeof s);
	s.v[0] = 0, s.v[1] = 5;
	ASSERT(w->validate(&s, FP_F32, why, sizeof why) == -1);
	ASSERT(strstr(why, "M=0"));
	s.v[0] = 1L << 31, s.v[1] = 1L << 30;
	ASSERT(w->validate(&s, FP_BF16, why, sizeof why) == -1);
	ASSERT(strstr(why, "TiB"));

	/* models by hand at M = 1000, N = 96: M N = 96000, 3000 mask words */
	s.v[0] = 1000, s.v[1] = 96;
	for (int dt = 0; dt < FP_NDTYPES; dt++) {
		const double es = dt == FP_BF16 ? 2 : 4, mn = 96000;

		for (int v = 0; v < 3; v++) {
			w->model(&s, (enum fp_dtype)dt, v, &m);
			(bwd ? fw : bw)->model(&s, (enum fp_dtype)dt, v, &f);
			ASSERT(m.saved_bytes == f.saved_bytes);
			ASSERT(m.variant_bytes >= m.min_bytes);
			ASSERT(m.flops == 2 * mn);
			ASSERT(m.saved_bytes == (v == BR_FUSED_BITMASK ? 12000 : mn * es));
		}
		w->model(&s, (enum fp_dtype)dt, BR_SAVE_INPUT, &si);
		ASSERT(si.variant_bytes == (4 * mn + 96) * es);
		w->model(&s, (enum fp_dtype)dt, BR_FUSED_BITMASK, &m);
		ASSERT(m.min_bytes == (2 * mn + 96) * es + (bwd ? 12000 : 0));
		ASSERT(m.variant_bytes == (2 * mn + 96) * es + 12000);
		if (bwd)  /* the target: <= 0.55x save_input's bytes */
			ASSERT(m.variant_bytes <= 0.55 * si.variant_bytes);
		w->model(&s, (enum fp_dtype)dt, BR_FUSED_SAVE_OUTPUT, &m);
		ASSERT(m.variant_bytes == ((bwd ? 3 : 2) * mn + 96) * es);
	}
	/* one element: the mask is a whole word, still no variant below the
	 * minimum (one bit an element) */
	s.v[0] = 1, s.v[1] = 1;
	for (int dt = 0; dt < FP_NDTYPES; dt++) {
		for (int v = 0; v < 3; v++) {
			w->model(&s, (enum fp_dtype)dt, v, &m);
			ASSERT(m.variant_bytes >= m.min_bytes);
		}
	}
	s.v[0] = 1000, s.v[1] = 96;
	for (int v = 0; v < 3; v++) {
		size_t one = w->device_bytes(&s, FP_F32, v, 1);

		ASSERT(one > 96000 * 4 && w->device_bytes(&s, FP_F32, v, 3) == 3 * one);
		ASSERT(w->device_bytes(&s, FP_BF16, v, 1) < one);
	}
	ASSERT(w->device_bytes(&s, FP_F32, BR_FUSED_BITMASK, 1) <
	       w->device_bytes(&s, FP_F32, BR_SAVE_INPUT, 1));
	printf("ok   %s contract\n", w->name);
}

int main(void)
{
	struct fp_rng g;
	uint64_t seed = getenv("FUSEPROF_SEED") ? strtoull(getenv("FUSEPROF_SEED"), NULL, 0)
						: 0x5eed;

	printf("seed %#llx\n", (unsigned long long)seed);
	rng_seed(&g, seed);
	check_edges();
	check_grad(&g, 1, 1);
	check_grad(&g, 3, 7);
	check_grad(&g, 6, 19);
	check_contract(workload_find("bias_relu_fwd"), 0);
	check_contract(workload_find("bias_relu_bwd"), 1);
	return 0;
}
