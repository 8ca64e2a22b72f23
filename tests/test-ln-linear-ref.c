/* test-ln-linear-ref.c - the LayerNorm+Linear workloads' CPU side, no GPU
 * needed: the double references (backward against central finite
 * differences of the forward, a hand-computed case, shift invariance), the
 * FlashNorm identity the fused kernel relies on and the cancellation that
 * its per-row shift avoids, the input profiles, check sampling (every
 * block of rows covered, counts within the budget), and
 * validate()/model()/device_bytes() through the registry, and the
 * parallel widening of downloaded bf16/fp32 (lnl_widen), and the split-K
 * forward's slices and partial bytes (split.c: what the workload's launcher
 * takes and the library's workspace holds).
 * $FUSEPROF_SEED fixes the seed. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkref.h"
#include "kutil.h"
#include "ln_linear/ln_linear.h"
#include "par.h"
#include "test.h"
#include "wltest.h"
#include "workload.h"

static double *dalloc(long n)
{
	double *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);

	if (!p) {
		fprintf(stderr, "out of memory\n");
		exit(TEST_HARD_ERROR);
	}
	return p;
}

static double max_abs(const double *v, long n)
{
	double m = 0;

	for (long i = 0; i < n; i++)
		if (fabs(v[i]) > m)
			m = fabs(v[i]);
	return m;
}

/* L = sum(dy * y(x, gamma, beta, W, b)). */
static double loss(const double *x, const double *g, const double *be,
		   const double *W, const double *b, const double *dy, double *y,
		   long M, long K, long N)
{
	double l = 0;

	lnl_fwd_ref(x, g, be, W, b, y, M, K, N);
	for (long i = 0; i < M * N; i++)
		l += dy[i] * y[i];
	return l;
}

/* Central difference of the loss along every element of p[0..n), compared
 * with the analytic gradient ana; returns the worst difference relative to
 * the gradient's largest entry. */
static double fd_compare(double *p, long n, const double *ana, double h,
			 const double *x, const double *g, const double *be,
			 const double *W, const double *b, const double *dy,
			 double *y, long M, long K, long N)
{
	double scale = max_abs(ana, n) + 1e-3, worst = 0;

	for (long i = 0; i < n; i++) {
		double keep = p[i], lp, lm, fd;

		p[i] = keep + h;
		lp = loss(x, g, be, W, b, dy, y, M, K, N);
		p[i] = keep - h;
		lm = loss(x, g, be, W, b, dy, y, M, K, N);
		p[i] = keep;
		fd = (lp - lm) / (2 * h);
		if (fabs(fd - ana[i]) / scale > worst)
			worst = fabs(fd - ana[i]) / scale;
	}
	return worst;
}

static void test_bwd_fd(uint64_t seed)
{
	static const long shapes[][3] = {
		{ 1, 1, 1 }, { 2, 3, 2 }, { 3, 5, 4 }, { 2, 17, 3 }, { 4, 8, 1 },
	};

	for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
		const long M = shapes[s][0], K = shapes[s][1], N = shapes[s][2];

		for (int p = 0; p < LNL_NPROFILES; p++) {
			double *x = dalloc(M * K), *g = dalloc(K), *be = dalloc(K);
			double *W = dalloc(N * K), *b = dalloc(N), *dy = dalloc(M * N);
			double *y = dalloc(M * N), *dx = dalloc(M * K), *dg = dalloc(K);
			double *dbe = dalloc(K), *dW = dalloc(N * K), *db = dalloc(N);
			/* The constant rows have rstd ~ 300: a smaller step
			 * keeps the third-derivative error down. */
			double h = p == LNL_CONSTANT ? 1e-8 : 1e-6, w[5];

			lnl_gen_inputs((enum lnl_profile)p, seed + s, M, K, N, x, g,
				       be, W, b, dy);
			lnl_bwd_ref(x, g, be, W, dy, dx, dg, dbe, dW, db, M, K, N);
			w[0] = fd_compare(x, M * K, dx, h, x, g, be, W, b, dy, y, M, K, N);
			w[1] = fd_compare(g, K, dg, h, x, g, be, W, b, dy, y, M, K, N);
			w[2] = fd_compare(be, K, dbe, h, x, g, be, W, b, dy, y, M, K, N);
			w[3] = fd_compare(W, N * K, dW, h, x, g, be, W, b, dy, y, M, K, N);
			w[4] = fd_compare(b, N, db, h, x, g, be, W, b, dy, y, M, K, N);
			printf("bwd vs finite differences, %ld x %ld -> %ld, profile %d: "
			       "dx %.1e dgamma %.1e dbeta %.1e dW %.1e db %.1e\n",
			       M, K, N, p, w[0], w[1], w[2], w[3], w[4]);
			for (int j = 0; j < 5; j++)
				ASSERT(w[j] < 1e-5);
			/* A one-feature row normalises to 0: dx and dgamma
			 * vanish, the rest must not. */
			if (K == 1)
				ASSERT(max_abs(dx, M) == 0 && max_abs(dg, K) == 0);
			ASSERT(max_abs(dW, N * K) > 0 && max_abs(db, N) > 0);
			free(x), free(g), free(be), free(W), free(b), free(dy);
			free(y), free(dx), free(dg), free(dbe), free(dW), free(db);
		}
	}
}

/* K = 2 by hand: x = (a, c) normalises to (+-d, -+d) with
 * d = (a - c)/2 / sqrt(((a - c)/2)^2 + eps). */
static void test_hand(void)
{
	double x[2] = { 3.0, -1.0 }, g[2] = { 2.0, 0.5 }, be[2] = { 0.25, -1.0 };
	double W[6] = { 1, 2, -1, 0.5, 0, 3 }, b[3] = { 0.1, -0.2, 0.3 }, y[3];
	double d = 2.0 / sqrt(4.0 + LNL_EPS), h0 = d * 2.0 + 0.25, h1 = -d * 0.5 - 1.0;

	lnl_fwd_ref(x, g, be, W, b, y, 1, 2, 3);
	ASSERT_NEAR(y[0], h0 * 1 + h1 * 2 + 0.1, 1e-14);
	ASSERT_NEAR(y[1], h0 * -1 + h1 * 0.5 - 0.2, 1e-14);
	ASSERT_NEAR(y[2], h0 * 0 + h1 * 3 + 0.3, 1e-14);
}

/* LayerNorm ignores a shift of its row: y(x + 1e3) = y(x). */
static void test_shift(uint64_t seed)
{
	const long M = 5, K = 33, N = 7;
	double *x = dalloc(M * K), *g = dalloc(K), *be = dalloc(K), *W = dalloc(N * K);
	double *b = dalloc(N), *y0 = dalloc(M * N), *y1 = dalloc(M * N);

	lnl_gen_inputs(LNL_NORMAL, seed, M, K, N, x, g, be, W, b, NULL);
	lnl_fwd_ref(x, g, be, W, b, y0, M, K, N);
	for (long i = 0; i < M * K; i++)
		x[i] += LNL_OFFSET_MEAN;
	lnl_fwd_ref(x, g, be, W, b, y1, M, K, N);
	for (long i = 0; i < M * N; i++)
		ASSERT_NEAR(y1[i], y0[i], 1e-10);
	free(x), free(g), free(be), free(W), free(b), free(y0), free(y1);
}

/* The fused kernel's algebra, in double: with W' = W o gamma, s = rowsum(W'),
 * b' = W beta + b and any pivot c per row,
 * y = rstd * ((x - c) W'^T - (mean - c) s) + b'. Then the same GEMM in float
 * at mean offset 1e3, unshifted (c = 0, FlashNorm as published) and shifted
 * by the row's first element: the unshifted one loses ~3 digits. */
static void test_flashnorm(uint64_t seed)
{
	const long M = 4, K = 4096, N = 8;
	double *x = dalloc(M * K), *g = dalloc(K), *be = dalloc(K), *W = dalloc(N * K);
	double *b = dalloc(N), *y = dalloc(M * N), *Wf = dalloc(N * K), *s = dalloc(N);
	double *bf = dalloc(N), e2[2] = { 0, 0 }, r2 = 0;

	lnl_gen_inputs(LNL_OFFSET, seed, M, K, N, x, g, be, W, b, NULL);
	/* fp32 inputs, as the GPU would see them */
	host_round(x, (size_t)(M * K), FP_F32);
	host_round(g, (size_t)K, FP_F32);
	host_round(be, (size_t)K, FP_F32);
	host_round(W, (size_t)(N * K), FP_F32);
	lnl_fwd_ref(x, g, be, W, b, y, M, K, N);
	for (long n = 0; n < N; n++) {
		s[n] = 0;
		bf[n] = b[n];
		for (long k = 0; k < K; k++) {
			/* rounded to fp32, as the fold stores it */
			Wf[n * K + k] = (float)(W[n * K + k] * g[k]);
			s[n] += Wf[n * K + k];
			bf[n] += W[n * K + k] * be[k];
		}
	}
	for (long i = 0; i < M; i++) {
		const double *xr = x + i * K;
		double mean, rstd;

		lnl_layernorm_row_ref(xr, K, g, be, NULL, NULL, &mean, &rstd);
		for (long n = 0; n < N; n++) {
			const double *w = Wf + n * K;
			double acc = 0, yd;
			float f[2] = { 0, 0 };

			for (long k = 0; k < K; k++) {
				acc += (xr[k] - xr[0]) * w[k];
				f[0] = fmaf((float)xr[k], (float)w[k], f[0]);
				f[1] = fmaf((float)xr[k] - (float)xr[0], (float)w[k], f[1]);
			}
			yd = rstd * (acc - (mean - xr[0]) * s[n]) + bf[n];
			/* exact but for the fold's rounding of W' (2^-24) */
			ASSERT_NEAR(yd, y[i * N + n], 1e-5);
			e2[0] += pow(rstd * ((double)f[0] - mean * s[n]) + bf[n] - yd, 2);
			e2[1] += pow(rstd * ((double)f[1] - (mean - xr[0]) * s[n]) + bf[n] - yd, 2);
			r2 += yd * yd;
		}
	}
	printf("fp32 GEMM at mean offset 1e3, K = %ld: relative error %.2g "
	       "unshifted (FlashNorm), %.2g shifted by the row's first element\n",
	       K, sqrt(e2[0] / r2), sqrt(e2[1] / r2));
	ASSERT(sqrt(e2[0] / r2) > 1e-4);       /* over the fp32 tolerance */
	ASSERT(sqrt(e2[1] / r2) < 2e-5);
	ASSERT(sqrt(e2[0] / r2) > 10 * sqrt(e2[1] / r2));
	free(x), free(g), free(be), free(W), free(b), free(y), free(Wf), free(s), free(bf);
}

static void test_profiles(uint64_t seed)
{
	const long M = 20, K = 64, N = 5;
	double *a = dalloc(M * K), *b = dalloc(M * K), *W0 = dalloc(N * K), *W1 = dalloc(N * K);

	/* same seed, same numbers; skipping an input changes no other */
	lnl_gen_inputs(LNL_NORMAL, seed, M, K, N, a, NULL, NULL, W0, NULL, NULL);
	lnl_gen_inputs(LNL_NORMAL, seed, M, K, N, b, NULL, NULL, W1, NULL, NULL);
	ASSERT(!memcmp(a, b, (size_t)(M * K) * sizeof *a));
	ASSERT(!memcmp(W0, W1, (size_t)(N * K) * sizeof *W0));
	lnl_gen_inputs(LNL_NORMAL, seed + 1, M, K, N, b, NULL, NULL, NULL, NULL, NULL);
	ASSERT(memcmp(a, b, (size_t)(M * K) * sizeof *a));
	/* offset rows sit around 1e3; constant rows vary less than eps */
	lnl_gen_inputs(LNL_OFFSET, seed, M, K, N, a, NULL, NULL, NULL, NULL, NULL);
	lnl_gen_inputs(LNL_CONSTANT, seed, M, K, N, b, NULL, NULL, NULL, NULL, NULL);
	for (long i = 0; i < M; i++) {
		double m, r;

		lnl_layernorm_row_ref(a + i * K, K, NULL, NULL, NULL, NULL, &m, &r);
		ASSERT(fabs(m - LNL_OFFSET_MEAN) < 1 && r > 0.5 && r < 2);
		lnl_layernorm_row_ref(b + i * K, K, NULL, NULL, NULL, NULL, &m, &r);
		ASSERT(1 / (r * r) - LNL_EPS < LNL_EPS);
	}
	free(a), free(b), free(W0), free(W1);
}

/* Every block of LNL_SAMPLE_BLOCK gets an index, the ends are in, the
 * indices increase, the same generator state gives the same sample and the
 * counts follow the budget. */
static void check_pick(long n, long want, uint64_t seed)
{
	long *idx = calloc((size_t)(want > 0 ? want : 1), sizeof *idx), *again;
	long nb = (n + LNL_SAMPLE_BLOCK - 1) / LNL_SAMPLE_BLOCK, cnt, seen = 0;
	struct fp_rng g;

	again = calloc((size_t)(want > 0 ? want : 1), sizeof *again);
	if (!idx || !again)
		exit(TEST_HARD_ERROR);
	rng_seed(&g, seed);
	cnt = lnl_pick(n, want, &g, idx);
	ASSERT_EQ(cnt, want < n ? want : n);
	for (long i = 1; i < cnt; i++)
		ASSERT(idx[i] > idx[i - 1]);
	ASSERT(idx[0] >= 0 && idx[cnt - 1] < n);
	ASSERT_EQ(idx[0], 0);
	if (cnt >= 2)
		ASSERT_EQ(idx[cnt - 1], n - 1);
	if (want >= nb) {
		for (long i = 0, b = -1; i < cnt; i++)
			if (idx[i] / LNL_SAMPLE_BLOCK != b) {
				b = idx[i] / LNL_SAMPLE_BLOCK;
				seen++;
			}
		ASSERT_EQ(seen, nb);
	}
	rng_seed(&g, seed);
	ASSERT_EQ(lnl_pick(n, want, &g, again), cnt);
	ASSERT(!memcmp(idx, again, (size_t)cnt * sizeof *idx));
	free(idx);
	free(again);
}

static void test_sample(uint64_t seed)
{
	static const long picks[][2] = {
		{ 1, 1 }, { 10, 3 }, { 10, 10 }, { 10, 50 }, { 64, 2 }, { 65, 2 },
		{ 65, 64 }, { 129, 3 }, { 200, 100 }, { 512, 8 }, { 16384, 256 },
		{ 16384, 1271 }, { 16384, 7 }, { 1000, 999 },
	};
	long w1, w2, a[300], b[300];
	struct fp_rng g;
	int differ = 0;

	for (size_t i = 0; i < sizeof picks / sizeof *picks; i++)
		check_pick(picks[i][0], picks[i][1], seed + i);
	/* fresh offsets for a fresh seed */
	for (int t = 0; t < 4 && !differ; t++) {
		rng_seed(&g, seed + 100 + t);
		lnl_pick(16384, 300, &g, a);
		rng_seed(&g, seed + 200 + t);
		lnl_pick(16384, 300, &g, b);
		differ = memcmp(a, b, sizeof a) != 0;
	}
	ASSERT(differ);

	/* small outputs in full */
	lnl_sample_counts(3, 17, 1023, LNL_CHECK_MACS, &w1, &w2);
	ASSERT(w1 == 3 && w2 == 17);
	/* y at 16384 x 768 -> 256: all columns, rows to the budget */
	lnl_sample_counts(16384, 256, 768, LNL_CHECK_MACS, &w1, &w2);
	ASSERT_EQ(w2, 256);
	ASSERT(w1 >= 16384 / LNL_SAMPLE_BLOCK && w1 < 16384);
	ASSERT((double)w1 * w2 * 768 <= LNL_CHECK_MACS);
	/* y at 512 x 4096 -> 16384: a row per block, columns to the budget */
	lnl_sample_counts(512, 16384, 4096, LNL_CHECK_MACS, &w1, &w2);
	ASSERT_EQ(w1, 512 / LNL_SAMPLE_BLOCK);
	ASSERT(w2 >= 16384 / LNL_SAMPLE_BLOCK && w2 < 16384);
	ASSERT((double)w1 * w2 * 4096 <= LNL_CHECK_MACS);
	/* dx rows at 512 x 4096 -> 16384: one per block though over budget */
	lnl_sample_counts(512, 1, 4096.0 * 16384, LNL_CHECK_MACS, &w1, &w2);
	ASSERT(w1 == 8 && w2 == 1);
	/* far past the tests: what the budget affords, at least 8 */
	lnl_sample_counts(16384, 1, 4096.0 * 16384, LNL_CHECK_MACS, &w1, &w2);
	ASSERT(w1 == 8 && w2 == 1);
	lnl_sample_counts(16384, 16384, 4096, LNL_CHECK_MACS, &w1, &w2);
	ASSERT(w1 == 16384 / LNL_SAMPLE_BLOCK && w2 >= 16384 / LNL_SAMPLE_BLOCK);
	ASSERT((double)w1 * w2 * 4096 <= 4 * LNL_CHECK_MACS);
}

static void expect_reject(const struct workload *w, const char *spec,
			  enum fp_dtype dt, const char *prefix)
{
	struct fp_shape s;
	char why[256] = "";

	ASSERT(workload_parse_shape(w, "M=1,K=1,N=1", &s, why, sizeof why) == 0);
	if (!strncmp(spec, "M=", 2))
		s.v[0] = atol(spec + 2);
	else if (!strncmp(spec, "K=", 2))
		s.v[1] = atol(spec + 2);
	else
		s.v[2] = atol(spec + 2);
	ASSERT(w->validate(&s, dt, why, sizeof why) == -1);
	if (strncmp(why, prefix, strlen(prefix)) || strchr(why, '\n'))
		FAIL("%s: '%s' rejected as '%s', expected '%s...'", w->name, spec,
		     why, prefix);
}

/* n bytes as device_bytes() counts them (dev_pad). */
static size_t pad(double n)
{
	return dev_pad((size_t)n);
}

/* device_bytes at one shape, dtype and variant: a set is everything a
 * repetition reads and writes, x (and dy), the outputs and the scratch
 * (cuBLASLt's workspace too); the sets share only what no launch writes:
 * W, gamma, beta, b and the fused forward's folded W', s and b'. */
static void check_sets(const struct workload *w, const struct fp_shape *s,
		       enum fp_dtype dt, int v)
{
	const int b = !strcmp(w->name, "ln_linear_bwd");
	const double M = (double)s->v[0], K = (double)s->v[1], N = (double)s->v[2];
	const double es = (double)fp_dtype_size(dt), Np = (double)((s->v[2] + 31) / 32 * 32);
	size_t d1 = w->device_bytes(s, dt, v, 1), d3 = w->device_bytes(s, dt, v, 3);
	size_t per = (d3 - d1) / 2, in, out, shared;

	in = pad(M * K * es) + (b ? pad(M * N * es) : 0);
	out = b ? pad(M * K * es) + pad(N * K * es) + pad(2 * K * es) + pad(N * es)
		: pad(M * N * es);
	shared = pad(N * K * es) + 2 * pad(K * es);
	if (!b)
		shared += pad(N * es) + (v == 2 ? pad(Np * K * es) + 2 * pad(N * 4) : 0);
	ASSERT_EQ(d3 - d1, 2 * per);
	ASSERT_EQ(d1 - per, shared);
	ASSERT(per >= in + out);
	if (v == 1)  /* cuBLASLt's workspace, one a set */
		ASSERT(per >= in + out + (32u << 20));
}

/* The naive variant's default suite is the one shape of the workload's
 * suite that moves the fewest bytes (so it still meets the fused variant
 * there); the other variants run the workload's suite. */
static void check_naive_suite(const struct workload *w)
{
	const char *own = w->variants[workload_variant(w, "naive")].suite;
	char *specs = strdup(w->suite), *save = NULL, why[256];
	struct fp_shape s, mine;
	double least = -1, at_mine = -1;

	ASSERT(own != NULL && !strchr(own, ';'));
	ASSERT(w->variants[workload_variant(w, "unfused")].suite == NULL);
	ASSERT(w->variants[workload_variant(w, "fused")].suite == NULL);
	ASSERT(workload_parse_shape(w, own, &mine, why, sizeof why) == 0);
	for (char *t = strtok_r(specs, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
		struct fp_model m;

		ASSERT(workload_parse_shape(w, t, &s, why, sizeof why) == 0);
		w->model(&s, FP_F32, workload_variant(w, "fused"), &m);
		if (least < 0 || m.min_bytes < least)
			least = m.min_bytes;
		if (!memcmp(s.v, mine.v, (size_t)workload_nparams(w) * sizeof s.v[0]))
			at_mine = m.min_bytes;
	}
	free(specs);
	ASSERT(at_mine > 0);  /* one of the suite's shapes */
	ASSERT(at_mine == least);
}

static void test_contract(void)
{
	static const char *const names[] = { "ln_linear_fwd", "ln_linear_bwd" };

	for (int b = 0; b < 2; b++) {
		const struct workload *w = workload_find(names[b]);
		struct fp_shape s;
		char why[256];
		int nv;

		ASSERT(w != NULL);
		nv = workload_nvariants(w);
		ASSERT_EQ(nv, 3);
		ASSERT_EQ(w->variants[workload_variant(w, "naive")].role, FP_NAIVE);
		ASSERT_EQ(w->variants[workload_variant(w, "unfused")].role, FP_UNFUSED);
		ASSERT_EQ(w->variants[workload_variant(w, "fused")].role, FP_FUSED);
		ASSERT_EQ(workload_nprofiles(w), 3);
		ASSERT_STR_EQ(w->profiles[LNL_NORMAL], "normal");
		ASSERT_STR_EQ(w->profiles[LNL_OFFSET], "offset");
		ASSERT_STR_EQ(w->profiles[LNL_CONSTANT], "constant");
		ASSERT(w->dtypes == (FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16)));
		assert_shapes_run(w, w->suite, 3);
		check_naive_suite(w);
		assert_shapes_run(w, w->quick, 1);
		assert_shapes_run(w, w->tests, 6);
		ASSERT(strstr(w->tests, "M=1,K=1,N=1") && strstr(w->tests, "M=3,K=1023,N=17") &&
		       strstr(w->tests, "M=16384,K=768,N=256") &&
		       strstr(w->tests, "M=512,K=4096,N=16384"));
		ASSERT(strstr(w->suite, "M=16384,K=768,N=256") &&
		       strstr(w->suite, "M=16384,K=4096,N=256") &&
		       strstr(w->suite, "M=16384,K=4096,N=16384"));

		expect_reject(w, "M=0", FP_F32, "M=0");
		expect_reject(w, "K=0", FP_BF16, "K=0");
		expect_reject(w, "N=0", FP_F32, "N=0");
		expect_reject(w, "K=2000000", FP_F32, "K=2000000");
		expect_reject(w, "N=2000000", FP_BF16, "N=2000000");
		ASSERT(workload_parse_shape(w, "M=4,K=5,N=6", &s, why, sizeof why) == 0);
		ASSERT(w->validate(&s, (enum fp_dtype)7, why, sizeof why) == -1);
		ASSERT(workload_parse_shape(w, "M=4,K=5", &s, why, sizeof why) == -1);
		ASSERT(strstr(why, "'N'"));

		for (int dt = 0; dt < FP_NDTYPES; dt++) {
			double es = dt == FP_BF16 ? 2 : 4;
			const char *shapes[] = { "M=16384,K=768,N=256", "M=16384,K=4096,N=16384",
						 "M=3,K=1023,N=17", "M=16384,K=14336,N=2048" };

			for (size_t j = 0; j < 4; j++) {
				double M, K, N, minb;
				struct fp_model m[3];

				ASSERT(workload_parse_shape(w, shapes[j], &s, why, sizeof why) == 0);
				M = (double)s.v[0], K = (double)s.v[1], N = (double)s.v[2];
				minb = b ? es * (2 * M * K + M * N + 4 * K + 2 * N * K + N)
					 : es * (M * K + 2 * K + N * K + N + M * N);
				for (int v = 0; v < nv; v++) {
					size_t d1 = w->device_bytes(&s, (enum fp_dtype)dt, v, 1);

					w->model(&s, (enum fp_dtype)dt, v, &m[v]);
					ASSERT_NEAR(m[v].min_bytes, minb, 1e-12);
					ASSERT(m[v].variant_bytes >= m[v].min_bytes);
					ASSERT(m[v].flops >= (b ? 4 : 2) * M * N * K);
					ASSERT(m[v].flops <= (b ? 4 : 2) * M * N * K + 20 * M * K + M * N);
					check_sets(w, &s, (enum fp_dtype)dt, v);
					ASSERT((double)d1 >= minb);
				}
				/* the unfused form writes and reads the
				 * normalised x */
				ASSERT(m[1].variant_bytes >= m[1].min_bytes + 2 * M * K * es);
				/* the fused forward's model claims min bytes
				 * while the weight stays in L2; the fused
				 * backward moves less than the unfused one */
				if (!b && N * K * es <= 16e6)
					ASSERT(m[2].variant_bytes <= 1.0001 * m[2].min_bytes);
				if (b && M >= 16384)
					ASSERT(m[2].variant_bytes < m[1].variant_bytes);
				/* at every K (rows in registers, wide or
				 * unaligned) the fused backward reads x once
				 * and keeps no statistics: one read of x and
				 * 24 bytes a row fewer than unfused */
				if (b)
					ASSERT_NEAR(m[1].variant_bytes - m[2].variant_bytes,
						    M * K * es + 24 * M, 1e-6);
			}
		}
		printf("%s: contract ok\n", w->name);
	}
}

// lnl_widen: bf16 and fp32 bytes (every bit pattern class: normals,
// subnormals, zeros, infinities, NaNs) widen to the floats check_decode
// reads them as, past several of its chunks and a ragged tail, with the
// same bits on 1, 3 and every thread; n = 0 writes nothing.
static void test_widen(uint64_t seed)
{
	const size_t n = 3 * ((size_t)1 << 18) + 17;
	uint16_t *h = malloc(n * sizeof *h);
	uint32_t *w = malloc(n * sizeof *w);
	float *f1 = malloc(n * sizeof *f1), *f = malloc(n * sizeof *f);
	double *d = malloc(n * sizeof *d);
	struct fp_rng g;

	if (!h || !w || !f1 || !f || !d)
		FAIL("out of memory");
	rng_seed(&g, seed ^ 0x77d3);
	for (size_t i = 0; i < n; i++) {
		uint64_t u = rng_next(&g);

		h[i] = (uint16_t)u;
		w[i] = (uint32_t)(u >> 32);
	}
	h[5] = 0x7f80, h[6] = 0xff80, h[7] = 0x7fc1, h[8] = 0x0001, h[9] = 0x8000;
	for (int dt = FP_F32; dt <= FP_BF16; dt++) {
		const void *src = dt == FP_BF16 ? (const void *)h : (const void *)w;
		size_t nan = 0;

		par_set_threads(1);
		lnl_widen(f1, src, (enum fp_dtype)dt, n);
		check_decode(d, src, (enum fp_dtype)dt, n);
		for (size_t i = 0; i < n; i++) {
			if (isnan(d[i])) {
				ASSERT(isnan(f1[i]));
				nan++;
			} else if ((double)f1[i] != d[i]) {
				FAIL("dtype %d element %zu: %.9g, check_decode %.9g", dt, i,
				     (double)f1[i], d[i]);
			}
		}
		ASSERT(nan > 0);  // NaNs went through, not just finite values
		if (dt == FP_F32)  // fp32 NaNs keep their payloads too
			ASSERT(!memcmp(f1, src, n * sizeof *f1));
		for (int t = 3; t <= 4; t++) {
			par_set_threads(t == 4 ? 0 : t);
			memset(f, 0xab, n * sizeof *f);
			lnl_widen(f, src, (enum fp_dtype)dt, n);
			ASSERT(!memcmp(f, f1, n * sizeof *f));
		}
		memset(f, 0xab, sizeof *f);
		lnl_widen(f, src, (enum fp_dtype)dt, 0);
		ASSERT_EQ(((const unsigned char *)f)[0], 0xab);
	}
	par_set_threads(0);
	ASSERT(isinf(f1[5]) && f1[5] > 0 && isinf(f1[6]) && f1[6] < 0);
	ASSERT(f1[8] > 0 && f1[8] < 1e-38f && f1[9] == 0 && signbit(f1[9]));
	free(h);
	free(w);
	free(f1);
	free(f);
	free(d);
	printf("widen ok\n");
}

/* The split-K forward's slices at the decode shapes measured on an H100
 * (132 SMs; bench/RESULTS.md, "The decode forward: split-K", whose slices
 * column the workload's kernel line reported), the shapes where it must not
 * split, and the partials' bytes. */
static void test_split(void)
{
	static const struct {
		long M, K, N;
		enum fp_dtype dt;
		int slices;
	} h100[] = {
		{ 1, 2048, 2048, FP_BF16, 16 },  { 8, 2048, 2048, FP_BF16, 16 },
		{ 64, 2048, 2048, FP_BF16, 8 },  { 1, 3072, 9216, FP_BF16, 7 },
		{ 8, 3072, 9216, FP_BF16, 7 },   { 64, 3072, 9216, FP_BF16, 7 },
		{ 1, 2048, 2048, FP_F32, 16 },   { 64, 2048, 2048, FP_F32, 16 },
		{ 1, 3072, 9216, FP_F32, 11 },   { 64, 3072, 9216, FP_F32, 11 },
	};

	for (size_t i = 0; i < sizeof h100 / sizeof h100[0]; i++) {
		const long M = h100[i].M, K = h100[i].K, N = h100[i].N;
		const int s = lnl_fwd_splits(M, K, N, h100[i].dt, 132);

		ASSERT_EQ(s, h100[i].slices);
		ASSERT(s <= lnl_split_max(M, K, h100[i].dt));
		/* the library's partials fit in what the workload allocates */
		ASSERT(lnl_part_bytes(M, N, s) <= lnl_split_bytes(M, K, N, h100[i].dt));
		ASSERT_EQ(lnl_part_bytes(M, N, s), (size_t)s * M * (N + 2) * 4);
	}
	/* the cap: partials within half of W''s bytes */
	ASSERT_EQ(lnl_split_max(64, 2048, FP_BF16), 8);
	ASSERT_EQ(lnl_split_max(1, 2048, FP_BF16), LNL_SPLIT_MAX);
	/* no split: many rows (the 128 x 256 tiles fill the SMs), rows
	 * without aligned 16-byte chunks, a K of one k-tile, as many 128 x
	 * 256 tiles as half the SMs, 64 x 128 tiles as many as the SMs (160
	 * at 128 x 4096 -> 10240; at 64 rows, 80: split), an unknown device */
	ASSERT_EQ(lnl_fwd_splits(16384, 2048, 2048, FP_BF16, 132), 1);
	ASSERT_EQ(lnl_fwd_splits(1, 2047, 2048, FP_BF16, 132), 1);
	ASSERT_EQ(lnl_fwd_splits(1, 2046, 2048, FP_F32, 132), 1);
	ASSERT_EQ(lnl_fwd_splits(1, 64, 2048, FP_BF16, 132), 1);
	ASSERT_EQ(lnl_fwd_splits(64, 4096, 132 * 128, FP_BF16, 132), 1);
	ASSERT_EQ(lnl_fwd_splits(128, 4096, 10240, FP_BF16, 132), 1);
	ASSERT_EQ(lnl_fwd_splits(64, 4096, 10240, FP_BF16, 132), 13);
	ASSERT_EQ(lnl_fwd_splits(1, 2048, 2048, FP_BF16, 0), 1);
	/* fewer SMs, fewer slots: the same 16 tiles of 32 k-tiles on 20
	 * SMs (40 slots) take 5 slices (two waves of 7 k-tiles), not 16
	 * (seven waves of 2: no faster, more partials) */
	ASSERT_EQ(lnl_fwd_splits(1, 2048, 2048, FP_BF16, 20), 5);
	ASSERT_EQ(lnl_part_bytes(5, 7, 1), 0);
	ASSERT_EQ(lnl_split_bytes(16384, 2048, 2048, FP_BF16), 0);
	printf("ok   split-K slices and partial bytes (H100 decode shapes, no-split cases)\n");
}

/* The skinny forward's slices at the shapes measured on an H100 (132 SMs;
 * bench/RESULTS.md, session 20: four blocks an SM of 64 rows of W'), the
 * shapes it does not serve, and a sweep: no slice empty, at most the
 * portable cluster, at least LNL_SPLIT_MIN_KT k-tiles a slice where K has
 * them. */
static void test_skinny(void)
{
	static const struct {
		long M, K, N;
		int slices;
	} h100[] = {
		{ 8, 3072, 9216, 4 },  { 16, 3072, 9216, 4 }, { 16, 2048, 2048, 8 },
		{ 3, 1000, 3000, 8 },  { 8, 4096, 14336, 3 }, { 5, 1000, 300, 8 },
		{ 13, 1032, 700, 6 },  { 1, 128, 64, 1 },
	};
	int s = -1;

	for (size_t i = 0; i < sizeof h100 / sizeof h100[0]; i++) {
		ASSERT_EQ(lnl_fwd_skinny(h100[i].M, h100[i].K, h100[i].N, FP_BF16, 132, 0, &s), 1);
		ASSERT_EQ(s, h100[i].slices);
	}
	/* one wave: 16 rows of 4096 -> 14336 (224 tiles) on 5 blocks an SM
	 * take 2 slices, not 3 (a second wave of 12 blocks); 8 rows on 6, 3 */
	ASSERT_EQ(lnl_fwd_skinny(16, 4096, 14336, FP_BF16, 132, 5 * 132, &s), 1);
	ASSERT_EQ(s, 2);
	ASSERT_EQ(lnl_fwd_skinny(8, 4096, 14336, FP_BF16, 132, 6 * 132, &s), 1);
	ASSERT_EQ(s, 3);
	ASSERT_EQ(lnl_fwd_skinny(8, 4096, 100000, FP_BF16, 132, 6 * 132, &s), 1);
	ASSERT_EQ(s, 1);
	/* bf16 only, at most LNL_SKINNY_MAX_M rows, aligned rows, a device */
	ASSERT_EQ(lnl_fwd_skinny(8, 3072, 9216, FP_F32, 132, 0, &s), 0);
	ASSERT_EQ(lnl_fwd_skinny(LNL_SKINNY_MAX_M + 1, 3072, 9216, FP_BF16, 132, 0, &s), 0);
	ASSERT_EQ(lnl_fwd_skinny(8, 3071, 9216, FP_BF16, 132, 0, &s), 0);
	ASSERT_EQ(lnl_fwd_skinny(8, 3072, 9216, FP_BF16, 0, 0, &s), 0);
	ASSERT_EQ(lnl_fwd_skinny(0, 3072, 9216, FP_BF16, 132, 0, &s), 0);
	for (long K = 8; K <= 9000; K += K < 600 ? 8 : 328) {
		for (long N = 1; N <= 30000; N = N * 3 + 1) {
			const int kt = lnl_ktiles(K, FP_BF16);
			int kchunk;

			ASSERT_EQ(lnl_fwd_skinny(4, K, N, FP_BF16, 132, 0, &s), 1);
			ASSERT(s >= 1 && s <= LNL_SKINNY_MAX_SPLITS && s <= kt);
			kchunk = (kt + s - 1) / s;
			ASSERT_EQ((kt + kchunk - 1) / kchunk, s);  /* as the kernel cuts */
			ASSERT(s == 1 || kchunk >= LNL_SPLIT_MIN_KT);
		}
	}
	printf("ok   skinny forward slices (H100 shapes, where it does not serve, a sweep)\n");
}

/* An H100's limits for the resident skinny forward: clusters of c blocks
 * at once, one block an SM (132 / 66 / 39 / 30 / 22 / 17 / 15 / 15 as
 * cudaOccupancyMaxActiveClusters gave them, bench/RESULTS.md session 21;
 * an H200 ran 39 / 30 / 22 / 17 / 15 / 15 for 3 to 8 too, session 30), and
 * 232448 bytes of shared memory less 2048 of static. */
static const int res_h100[LNL_SKINNY_MAX_SPLITS + 1] = { 0, 132, 66, 39, 30, 22, 17, 15, 15 };
static const size_t res_smax = 232448 - 2048;

/* The resident plan of M x K -> N bf16 (want slices, or 0) on those
 * limits is c slices on g clusters. */
static void res_plan_is(long M, long K, long N, int want, int c, int g)
{
	int pc = -1, pg = -1;

	ASSERT_EQ(lnl_fwd_skinny_res(M, K, N, FP_BF16, res_h100, res_smax, want, &pc, &pg), 1);
	ASSERT_EQ(pc, c);
	ASSERT_EQ(pg, g);
}

/* The resident skinny forward's plans on those limits, the rows it
 * serves, and a sweep: the plan's slices cut K as the kernel does, none
 * empty, at most the portable cluster, its shared memory within the
 * limit. */
static void test_skinny_res(void)
{
	const int *const h100 = res_h100;
	const size_t smax = res_smax;
	int c = -1, g = -1;

	/* 64 rows of 3072 -> 9216: 72 tiles of 128 rows, 48 k-tiles; 8 slices
	 * of 6 k-tiles on 15 clusters (5 tiles each: 5 x (6 + 4) = 50) beat 7
	 * of 7 (5 x 11) and 6 of 8 on 17 (5 x 12); fewer leave x no room.
	 * Each tile costs LNL_SKINNY_RES_ROUND = 4 k-tiles more. */
	res_plan_is(64, 3072, 9216, 0, 8, 15);
	/* 32 rows: x's slice is half as tall, and 3 slices fit */
	res_plan_is(32, 3072, 9216, 0, 3, 39);
	/* 2048 -> 2048: 16 tiles, one a cluster of 6 slices of 6 k-tiles on
	 * 16 clusters (1 x 10); 8 slices of 4 have room for 15 clusters, one
	 * of which takes two tiles (2 x 8) */
	res_plan_is(64, 2048, 2048, 0, 6, 16);
	/* 24 rows of 2048 -> 5120, 40 tiles: 2 slices of 16 on 40 clusters,
	 * a tile each (1 x 20), not 8 of 4 on 15 (3 x 8; measured on an H200
	 * 1.13x the time, bench/RESULTS.md, "The x-resident kernel's slices");
	 * asked for, 8 slices (res_split), and none where x's slice does not
	 * fit (1 slice: all of K) */
	res_plan_is(24, 2048, 5120, 0, 2, 40);
	res_plan_is(24, 2048, 5120, 8, 8, 15);
	ASSERT_EQ(lnl_fwd_skinny_res(24, 2048, 5120, FP_BF16, h100, smax, 1, &c, &g), 0);
	/* 4096 -> 5120 (64 k-tiles): 2 slices do not fit; 5 of 13 on 22 (2 x
	 * 17) beat 8 of 8 on 15 (3 x 12) */
	res_plan_is(24, 4096, 5120, 0, 5, 22);
	/* x's slice must fit: 64 rows of K = 4104 (65 k-tiles, 9 a slice at
	 * most 8 slices: 72 KB of x beside a 96 KB ring and 64 KB of sums) do
	 * not; 32 rows do */
	ASSERT_EQ(lnl_fwd_skinny_res(64, 4104, 4300, FP_BF16, h100, smax, 0, &c, &g), 0);
	ASSERT_EQ(lnl_fwd_skinny_res(32, 4104, 4300, FP_BF16, h100, smax, 0, &c, &g), 1);
	/* 17 to 64 bf16 rows of aligned K only */
	ASSERT_EQ(lnl_fwd_skinny_res(16, 3072, 9216, FP_BF16, h100, smax, 0, &c, &g), 0);
	ASSERT_EQ(lnl_fwd_skinny_res(65, 3072, 9216, FP_BF16, h100, smax, 0, &c, &g), 0);
	ASSERT_EQ(lnl_fwd_skinny_res(33, 3072, 9216, FP_F32, h100, smax, 0, &c, &g), 0);
	ASSERT_EQ(lnl_fwd_skinny_res(33, 3076, 9216, FP_BF16, h100, smax, 0, &c, &g), 0);
	for (long M = 17; M <= 64; M += 47) {
		for (long K = 8; K <= 20000; K += K < 600 ? 8 : 776) {
			for (long N = 1; N <= 30000; N = N * 5 + 3) {
				const int kt = lnl_ktiles(K, FP_BF16);
				int kc;

				if (!lnl_fwd_skinny_res(M, K, N, FP_BF16, h100, smax, 0, &c, &g))
					continue;
				ASSERT(c >= 1 && c <= LNL_SKINNY_MAX_SPLITS && c <= kt);
				kc = (kt + c - 1) / c;
				ASSERT_EQ((kt + kc - 1) / kc, c);
				ASSERT(c == 1 || kc >= LNL_SPLIT_MIN_KT);
				ASSERT(g >= 1 && g <= h100[c] &&
				       g <= (N + LNL_SKINNY_RES_BW - 1) / LNL_SKINNY_RES_BW);
				ASSERT(lnl_skinny_res_smem(lnl_skinny_res_mp(M), kc) <= smax);
			}
		}
	}
	printf("ok   resident skinny forward plans (H100 limits, where it does not serve, a "
	       "sweep)\n");
}

/* skinny_x=auto on 132 SMs: x streamed where W' has 119 64-row tiles or
 * more, in 72- or 96-row tiles from 133 to 197 at 33 to 64 rows (no more
 * blocks than SMs), and below 119 in 32- or 48-row tiles at short K
 * (lnl_skinny_xa_narrow), never outside 17 to 64 rows. */
static void test_skinny_x(void)
{
	ASSERT_EQ(lnl_fwd_skinny_x(32, 3072, 9216, FP_BF16, 132), 64);   /* 144 tiles, 32 rows */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 3072, 9216, FP_BF16, 132), 72);   /* 144: 128 of 72 rows */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 3072, 9504, FP_BF16, 132), 72);   /* 132 of 72 */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 3072, 9512, FP_BF16, 132), 96);   /* 133 of 72: 100 of 96 */
	ASSERT_EQ(lnl_fwd_skinny_x(33, 3072, 12608, FP_BF16, 132), 96);  /* 197 of 64, 132 of 96 */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 3072, 8448, FP_BF16, 132), 64);   /* 132: one each */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 3072, 8456, FP_BF16, 132), 72);   /* 133 */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 3072, 8192, FP_BF16, 132), 64);   /* 128 */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 3072, 14336, FP_BF16, 132), 64);  /* 224 */
	ASSERT_EQ(lnl_fwd_skinny_x(33, 3072, 12672, FP_BF16, 132), 64);  /* 198 */
	ASSERT_EQ(lnl_fwd_skinny_x(17, 3072, 7616, FP_BF16, 132), 64);   /* 119 */
	ASSERT_EQ(lnl_fwd_skinny_x(17, 3072, 7552, FP_BF16, 132), 0);    /* 118 */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 3072, 2048, FP_BF16, 132), 0);
	ASSERT_EQ(lnl_fwd_skinny_x(16, 3072, 9216, FP_BF16, 132), 0);
	ASSERT_EQ(lnl_fwd_skinny_x(65, 3072, 9216, FP_BF16, 132), 0);
	ASSERT_EQ(lnl_fwd_skinny_x(32, 3072, 9216, FP_BF16, 0), 0);
	/* Narrow x-as-A tiles below 119 64-row tiles: 32 rows up to 132
	 * blocks, then 48; short K (8 k-tiles to 32 rows, 16 above), or 32
	 * k-tiles above 32 rows where W' has 119 32-row tiles or more; at
	 * least 60 blocks. */
	ASSERT_EQ(lnl_fwd_skinny_x(24, 512, 2048, FP_BF16, 132), 32);    /* 8 k-tiles, 64 blocks */
	ASSERT_EQ(lnl_fwd_skinny_x(24, 520, 2048, FP_BF16, 132), 0);     /* 9 */
	ASSERT_EQ(lnl_fwd_skinny_x(32, 512, 5120, FP_BF16, 132), 48);    /* 160 of 32, 107 of 48 */
	ASSERT_EQ(lnl_fwd_skinny_x(33, 1024, 2048, FP_BF16, 132), 32);   /* 16 */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 1088, 3072, FP_BF16, 132), 0);    /* 17, 96 tiles of 32 */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 2048, 4096, FP_BF16, 132), 32);   /* 32, 128 tiles */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 2048, 3776, FP_BF16, 132), 0);    /* 118 tiles */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 2112, 4096, FP_BF16, 132), 0);    /* 33 k-tiles */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 1536, 6336, FP_BF16, 132), 48);   /* 132 of 48 */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 1536, 6344, FP_BF16, 132), 0);    /* 133 of 48 */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 512, 1888, FP_BF16, 132), 0);     /* 59 blocks */
	ASSERT_EQ(lnl_fwd_skinny_x(64, 512, 1920, FP_BF16, 132), 32);    /* 60 */
	ASSERT_EQ(lnl_fwd_skinny_x(16, 512, 2048, FP_BF16, 132), 0);
	ASSERT_EQ(lnl_fwd_skinny_x(64, 2048, 2048, FP_BF16, 132), 0);    /* the zoo's */
	/* the x-as-A tiles never make more blocks than SMs */
	for (long K = 64; K <= 4096; K += 448)
		for (long N = 1; N <= 40000; N += 8) {
			const int bn = lnl_fwd_skinny_x(48, K, N, FP_BF16, 132);

			ASSERT(bn == 0 || bn == 32 || bn == 48 || bn == 64 || bn == 72 ||
			       bn == 96);
			ASSERT(bn == 0 || bn == 64 || (N + bn - 1) / bn <= 132);
		}
	printf("ok   streamed skinny forward's auto rule\n");
}

/* The x-as-A kernel over slices of K (lnl_skinny_xa_plan) with an H100's
 * cluster capacities as the device reported them: one wave, the fewest
 * k-tiles a block with a slicing counted as 20 more, ties to more blocks,
 * then wider tiles. The picks the grid measured (bench/RESULTS.md). */
static void test_xa_plan(void)
{
	static const int caps[] = { 0, 132, 66, 42, 30, 26, 21, 15, 15 };
	int bn = 0, s = 0;

	ASSERT(lnl_skinny_xa_plan(64, 2048, 2048, FP_BF16, caps, 0, &bn, &s));
	ASSERT(bn == 96 && s == 5);   /* 22 clusters of 5, 7 k-tiles a block */
	ASSERT(lnl_skinny_xa_plan(64, 8192, 2048, FP_BF16, caps, 0, &bn, &s));
	ASSERT(bn == 96 && s == 5);   /* 26 k-tiles; 72 in 4 slices take 32 */
	ASSERT(lnl_skinny_xa_plan(48, 4096, 1024, FP_BF16, caps, 0, &bn, &s));
	ASSERT(bn == 72 && s == 8);   /* 15 clusters of 8; 96 ties with fewer blocks */
	ASSERT(lnl_skinny_xa_plan(64, 1024, 4096, FP_BF16, caps, 0, &bn, &s));
	ASSERT(bn == 32 && s == 1);   /* 16 k-tiles whole beat 8 sliced (+20) */
	ASSERT(lnl_skinny_xa_plan(64, 2048, 4096, FP_BF16, caps, 0, &bn, &s));
	ASSERT(bn == 32 && s == 1);   /* 32 k-tiles whole beat 16 sliced (+20) */
	ASSERT(lnl_skinny_xa_plan(44, 1536, 5120, FP_BF16, caps, 0, &bn, &s));
	ASSERT(bn == 48 && s == 1);   /* 107 blocks over all of K, not 96 in 2 slices */
	ASSERT(lnl_skinny_xa_plan(36, 3072, 6144, FP_BF16, caps, 0, &bn, &s));
	ASSERT(bn == 96 && s == 2);   /* 48 k-tiles: 24 sliced (+20) beat 48 whole */
	ASSERT(lnl_skinny_xa_plan(64, 3072, 9216, FP_BF16, caps, 0, &bn, &s));
	ASSERT(bn == 72 && s == 1);   /* 128 blocks over all of K */
	ASSERT(lnl_skinny_xa_plan(64, 2048, 8192, FP_BF16, caps, 0, &bn, &s));
	ASSERT(bn == 64 && s == 1);   /* 128 blocks: more than 96's 86 */
	/* no tile in one wave: 171 of 96 rows */
	ASSERT(!lnl_skinny_xa_plan(64, 2048, 16384, FP_BF16, caps, 0, &bn, &s));
	/* the tile chosen elsewhere, its slices here */
	ASSERT(lnl_skinny_xa_plan(24, 4096, 4096, FP_BF16, caps, 64, &bn, &s));
	ASSERT(bn == 64 && s == 2);
	ASSERT(!lnl_skinny_xa_plan(24, 4096, 4096, FP_BF16, caps, 0, &bn, &s));  /* 32 rows */
	ASSERT(!lnl_skinny_xa_plan(16, 4096, 4096, FP_BF16, caps, 64, &bn, &s));
	ASSERT(!lnl_skinny_xa_plan(65, 4096, 4096, FP_BF16, caps, 0, &bn, &s));
	ASSERT(!lnl_skinny_xa_plan(64, 4096, 4096, FP_F32, caps, 0, &bn, &s));
	/* every plan: one wave, s slices none empty, a candidate tile */
	for (long K = 8; K <= 9000; K += 376)
		for (long N = 1; N <= 20000; N += 333) {
			const int kt = lnl_ktiles(K, FP_BF16);

			if (!lnl_skinny_xa_plan(40, K, N, FP_BF16, caps, 0, &bn, &s))
				continue;
			ASSERT(bn == 32 || bn == 48 || bn == 64 || bn == 72 || bn == 96);
			ASSERT(s >= 1 && s <= LNL_SKINNY_MAX_SPLITS && s <= kt);
			ASSERT((N + bn - 1) / bn <= caps[s]);
			ASSERT((kt + (kt + s - 1) / s - 1) / ((kt + s - 1) / s) == s);
		}
	printf("ok   x-as-A slices of K: the auto rule\n");
}

/* The x~ kernel's tile, stage and auto rule (lnl_skinny_xt_tile, _stage,
 * _auto) on 132 SMs: the fewest rows a multiple of 8 from 32 to 96 that
 * make at most one block an SM; 4 k-tiles a stage up to 48 rows; auto from
 * 17 rows where x~'s rows are fewer than twice the tile's, up to 88, or
 * twice from K = 1536 where its blocks are 0.8 an SM, and to 32 rows where
 * its blocks are 0.9 an SM; everywhere where they are 0.7 an SM, or 0.45
 * up to K = 2048 (4096 where x~ has up to 40 rows). */
static void test_xt_plan(void)
{
	ASSERT_EQ(lnl_skinny_xt_tile(5120, 132), 40);   /* 128 blocks */
	ASSERT_EQ(lnl_skinny_xt_tile(4096, 132), 32);
	ASSERT_EQ(lnl_skinny_xt_tile(4225, 132), 40);   /* 133 of 32 */
	ASSERT_EQ(lnl_skinny_xt_tile(9216, 132), 72);
	ASSERT_EQ(lnl_skinny_xt_tile(12288, 132), 96);
	ASSERT_EQ(lnl_skinny_xt_tile(12673, 132), 0);   /* 133 of 96 */
	ASSERT_EQ(lnl_skinny_xt_tile(100, 132), 32);
	ASSERT_EQ(lnl_skinny_xt_stage(32), 4);
	ASSERT_EQ(lnl_skinny_xt_stage(48), 4);
	ASSERT_EQ(lnl_skinny_xt_stage(56), 2);
	ASSERT_EQ(lnl_skinny_xt_stage(96), 2);
	ASSERT_EQ(lnl_skinny_xt_auto(33, 4096, 5120, 132), 40);
	ASSERT_EQ(lnl_skinny_xt_auto(17, 4096, 4096, 132), 32);
	ASSERT_EQ(lnl_skinny_xt_auto(17, 4096, 3072, 132), 0);   /* 96 blocks: resident */
	ASSERT_EQ(lnl_skinny_xt_auto(33, 4096, 3072, 132), 32);  /* from 33 rows it takes them */
	ASSERT_EQ(lnl_skinny_xt_auto(16, 4096, 5120, 132), 0);   /* the skinny kernel's */
	ASSERT_EQ(lnl_skinny_xt_auto(65, 4096, 5120, 132), 0);
	ASSERT_EQ(lnl_skinny_xt_auto(64, 4096, 4096, 132), 32);  /* x~ twice the tile: K */
	ASSERT_EQ(lnl_skinny_xt_auto(57, 1536, 4096, 132), 32);
	ASSERT_EQ(lnl_skinny_xt_auto(64, 1535, 4096, 132), 0);
	ASSERT_EQ(lnl_skinny_xt_auto(64, 1024, 4096, 132), 0);
	ASSERT_EQ(lnl_skinny_xt_auto(64, 4096, 3380, 132), 32);  /* 106 blocks, 0.8 an SM */
	ASSERT_EQ(lnl_skinny_xt_auto(64, 4096, 3360, 132), 0);   /* 105 */
	ASSERT_EQ(lnl_skinny_xt_auto(33, 4096, 3776, 132), 32);  /* 33 rows: any blocks */
	ASSERT_EQ(lnl_skinny_xt_auto(24, 4096, 3776, 132), 0);   /* 118 < 0.9 an SM */
	ASSERT_EQ(lnl_skinny_xt_auto(56, 1024, 3072, 132), 32);  /* 56 < 64: any K, any blocks */
	ASSERT_EQ(lnl_skinny_xt_auto(57, 4096, 5120, 132), 40);  /* 64 < 80 */
	ASSERT_EQ(lnl_skinny_xt_auto(64, 4096, 5120, 132), 40);  /* 64 < 2 x 40 */
	ASSERT_EQ(lnl_skinny_xt_auto(40, 4096, 12288, 132), 0);  /* 96-row tiles */
	ASSERT_EQ(lnl_skinny_xt_auto(64, 4096, 9216, 132), 72);
	/* under 0.7 blocks an SM (0.45 up to K = 2048): the x-as-A kernel's
	 * slices of K */
	ASSERT_EQ(lnl_skinny_xt_auto(40, 8192, 2048, 132), 0);   /* 64 blocks */
	ASSERT_EQ(lnl_skinny_xt_auto(48, 4096, 2560, 132), 0);   /* 80 */
	ASSERT_EQ(lnl_skinny_xt_auto(48, 4096, 2976, 132), 32);  /* 93 = 0.7 an SM */
	ASSERT_EQ(lnl_skinny_xt_auto(48, 4096, 2944, 132), 0);   /* 92 */
	ASSERT_EQ(lnl_skinny_xt_auto(40, 4096, 2560, 132), 32);  /* x~ of 40 rows: K 4096 */
	ASSERT_EQ(lnl_skinny_xt_auto(33, 4096, 1920, 132), 32);
	ASSERT_EQ(lnl_skinny_xt_auto(40, 4160, 2560, 132), 0);
	ASSERT_EQ(lnl_skinny_xt_auto(41, 4096, 2560, 132), 0);   /* x~ of 48 rows */
	ASSERT_EQ(lnl_skinny_xt_auto(40, 2048, 2048, 132), 32);  /* short K: 64 */
	ASSERT_EQ(lnl_skinny_xt_auto(40, 2048, 1920, 132), 32);  /* 60 = 0.45 an SM */
	ASSERT_EQ(lnl_skinny_xt_auto(40, 2048, 1888, 132), 0);   /* 59 */
	ASSERT_EQ(lnl_skinny_xt_auto(48, 2049, 2048, 132), 0);
	ASSERT_EQ(lnl_skinny_xt_auto(56, 14336, 1024, 132), 0);
	for (long N = 1; N <= 20000; N += 37)
		for (int sms = 1; sms <= 160; sms += 13) {
			const int bn = lnl_skinny_xt_tile(N, sms);

			ASSERT(bn == 0 || (bn % 8 == 0 && bn >= 32 && bn <= 96));
			ASSERT(bn == 0 || (N + bn - 1) / bn <= sms);
			ASSERT(bn == 0 || bn == 32 || (N + bn - 9) / (bn - 8) > sms);
			ASSERT(bn != 0 || (N + 95) / 96 > sms);
		}
	printf("ok   x~ kernel: tile, stage and auto rule\n");
	/* Its slices of K: multiples of the stage's k-tiles, none empty,
	 * covering K, the slices asked for or fewer */
	{
		int kc;

		ASSERT_EQ(lnl_skinny_xt_slices(4096, 2, 2, &kc), 2);  /* 64 k-tiles */
		ASSERT_EQ(kc, 32);
		ASSERT_EQ(lnl_skinny_xt_slices(4096, 4, 3, &kc), 3);  /* 24, 24, 16 */
		ASSERT_EQ(kc, 24);
		ASSERT_EQ(lnl_skinny_xt_slices(1024, 4, 3, &kc), 2);  /* 16: 8 and 8 */
		ASSERT_EQ(kc, 8);
		ASSERT_EQ(lnl_skinny_xt_slices(4104, 4, 1, &kc), 1);  /* 65 k-tiles */
		ASSERT_EQ(kc, 68);
		ASSERT_EQ(lnl_skinny_xt_slices(64, 4, 8, &kc), 1);
		/* the test shapes LNL_TESTS names for it (workload.cu) */
		ASSERT_EQ(lnl_skinny_xt_auto(45, 3000, 4000, 132), 32);
		ASSERT_EQ(lnl_skinny_xt_tile(4000, 132 / 3), 96);
		ASSERT_EQ(lnl_skinny_xt_stage(96), 2);
		ASSERT_EQ(lnl_skinny_xt_slices(3000, 2, 3, &kc), 3);  /* 47 k-tiles */
		ASSERT_EQ(kc, 16);
		ASSERT_EQ(lnl_skinny_xt_auto(50, 4104, 999, 132), 0);
		ASSERT_EQ(lnl_skinny_xt_auto(33, 3000, 520, 132), 0);
		for (long K = 8; K <= 20000; K += 88)
			for (int ks = 1; ks <= 4; ks *= 2)
				for (int s = 1; s <= 8; s++) {
					const int kt = (int)((K + 63) / 64);
					const int n = lnl_skinny_xt_slices(K, ks, s, &kc);
					int kc2;

					ASSERT(n >= 1 && n <= s && kc % ks == 0);
					ASSERT((long)n * kc >= kt && (long)(n - 1) * kc < kt);
					/* the launch recomputes the same cut */
					ASSERT_EQ(lnl_skinny_xt_slices(K, ks, n, &kc2), n);
					ASSERT_EQ(kc2, kc);
				}
		printf("ok   x~ kernel: slices of K\n");
	}
	ASSERT(lnl_fwd_split_rows32(1, FP_F32));
	ASSERT(lnl_fwd_split_rows32(32, FP_F32));
	ASSERT(!lnl_fwd_split_rows32(33, FP_F32));
	ASSERT(!lnl_fwd_split_rows32(24, FP_BF16));
	printf("ok   split-K tiles: 32 rows for fp32 up to 32 rows\n");
}

/* lnl_skinny_st_plan at 20 rows over a grid of K and N, with the deep ring
 * (dcaps) or without (NULL): every plan's slices are s slices as the
 * kernel cuts them, at least 2 in the deep ring, and run in one wave of
 * the ring's clusters. */
static void st_plan_sweep(const int *caps, const int *dcaps)
{
	int s = 0, d = 0;

	for (long K = 8; K <= 20000; K += 488)
		for (long N = 1; N <= 17000; N += 331) {
			const int kt = lnl_ktiles(K, FP_BF16);

			if (!lnl_skinny_st_plan(20, K, N, FP_BF16, caps, dcaps, 132, 0, &s, &d))
				continue;
			ASSERT(s >= 1 && s <= LNL_SKINNY_MAX_SPLITS && s <= kt);
			ASSERT(!d || (dcaps && s >= 2));
			ASSERT((N + 63) / 64 <= (d ? dcaps : caps)[s]);
			ASSERT_EQ(lnl_even_slices(kt, s), s);
		}
}

/* The x-streamed kernel's slices of K (lnl_skinny_st_plan) on an H200's
 * capacities for its clusters (two blocks an SM) and 132 SMs: the picks the
 * sweep measured best, one wave always. */
static void test_st_plan(void)
{
	static const int caps[] = { 0, 264, 132, 79, 62, 47, 39, 32, 30 };
	int s = 0, d = 0;

	ASSERT(lnl_skinny_st_plan(24, 8192, 2048, FP_BF16, caps, NULL, 132, 0, &s, &d));
	ASSERT_EQ(s, 7);  /* 224 blocks of 19 k-tiles; 8 slices: 32 tiles > 30 */
	ASSERT(lnl_skinny_st_plan(24, 6144, 4096, FP_BF16, caps, NULL, 132, 0, &s, &d));
	ASSERT_EQ(s, 2);  /* 128 blocks of 48; 3 slices: two blocks of 32 an SM */
	ASSERT(lnl_skinny_st_plan(17, 6144, 3072, FP_BF16, caps, NULL, 132, 0, &s, &d));
	ASSERT_EQ(s, 4);  /* 192 blocks of 24 beat 96 of 48 */
	ASSERT(lnl_skinny_st_plan(32, 8192, 1024, FP_BF16, caps, NULL, 132, 0, &s, &d));
	ASSERT_EQ(s, 8);  /* 128 blocks, one an SM */
	ASSERT(lnl_skinny_st_plan(24, 128, 1024, FP_BF16, caps, NULL, 132, 0, &s, &d));
	ASSERT_EQ(s, 2);  /* no more slices than k-tiles */
	ASSERT(!lnl_skinny_st_plan(16, 8192, 2048, FP_BF16, caps, NULL, 132, 0, &s, &d));
	ASSERT(!lnl_skinny_st_plan(33, 8192, 2048, FP_BF16, caps, NULL, 132, 0, &s, &d));
	ASSERT(!lnl_skinny_st_plan(24, 8192, 2048, FP_F32, caps, NULL, 132, 0, &s, &d));
	ASSERT(!lnl_skinny_st_plan(24, 8191, 2048, FP_BF16, caps, NULL, 132, 0, &s, &d));  /* rows unaligned */
	ASSERT(!lnl_skinny_st_plan(24, 8192, 64 * 265, FP_BF16, caps, NULL, 132, 0, &s, &d));
	st_plan_sweep(caps, NULL);
	printf("ok   x-streamed slices of K: the auto rule\n");
}

/* The x-streamed kernel's deep ring (lnl_skinny_st_plan with dcaps) on
 * one-block-an-SM capacities like an H200's: taken where the two-an-SM
 * ring's slices put one block an SM, with its own slices in one wave. */
static void test_st_plan_deep(void)
{
	static const int caps[] = { 0, 264, 132, 79, 62, 47, 39, 32, 30 };
	static const int dcaps[] = { 0, 132, 66, 42, 30, 26, 21, 15, 15 };
	int s = 0, d = 0;

	/* 16 tiles: 8 slices, 128 blocks one an SM; deep: 8 would be 128 >
	 * 15 x 8, so 6 (96 blocks of 22 k-tiles) */
	ASSERT(lnl_skinny_st_plan(24, 8192, 1024, FP_BF16, caps, dcaps, 132, 0, &s, &d));
	ASSERT_EQ(d, 1);
	ASSERT_EQ(s, 6);
	ASSERT(lnl_skinny_st_plan(24, 8192, 1024, FP_BF16, caps, dcaps, 132, 1, &s, &d));
	ASSERT_EQ(d, 0);  /* the two-an-SM ring asked for */
	ASSERT_EQ(s, 8);
	/* 12 tiles: 8 slices in either ring */
	ASSERT(lnl_skinny_st_plan(17, 14336, 768, FP_BF16, caps, dcaps, 132, 0, &s, &d));
	ASSERT_EQ(d, 1);
	ASSERT_EQ(s, 8);
	/* 32 tiles: 7 slices pair blocks on SMs, so the two-an-SM ring stays
	 * unless the deep one is asked for (3 slices: 96 blocks) */
	ASSERT(lnl_skinny_st_plan(24, 8192, 2048, FP_BF16, caps, dcaps, 132, 0, &s, &d));
	ASSERT_EQ(d, 0);
	ASSERT_EQ(s, 7);
	ASSERT(lnl_skinny_st_plan(24, 8192, 2048, FP_BF16, caps, dcaps, 132, 2, &s, &d));
	ASSERT_EQ(d, 1);
	ASSERT_EQ(s, 3);
	/* more tiles than any deep cluster count holds: the two-an-SM ring */
	ASSERT(lnl_skinny_st_plan(24, 8192, 64 * 140, FP_BF16, caps, dcaps, 132, 2, &s, &d));
	ASSERT_EQ(d, 0);
	st_plan_sweep(caps, dcaps);
	printf("ok   x-streamed slices of K: the deep ring where blocks are one an SM\n");
}

/* The row stride the forward gives W' and x~ (lnl_row_ld): K rounded up
 * to whole 128-byte lines, never less than K, and K itself where K fills
 * its lines. */
static void test_row_ld(void)
{
	ASSERT_EQ(lnl_row_ld(8192, FP_BF16), 8192);
	ASSERT_EQ(lnl_row_ld(8200, FP_BF16), 8256);
	ASSERT_EQ(lnl_row_ld(1000, FP_BF16), 1024);
	ASSERT_EQ(lnl_row_ld(1, FP_BF16), 64);
	ASSERT_EQ(lnl_row_ld(1000, FP_F32), 1024);
	ASSERT_EQ(lnl_row_ld(1016, FP_F32), 1024);
	ASSERT_EQ(lnl_row_ld(1024, FP_F32), 1024);
	for (long K = 1; K <= 20000; K += 7)
		for (int d = 0; d < 2; d++) {
			const enum fp_dtype dt = d ? FP_BF16 : FP_F32;
			const long ld = lnl_row_ld(K, dt), e = 128 / (long)fp_dtype_size(dt);

			ASSERT(ld >= K && ld < K + e && ld % e == 0);
		}
	/* the library's fold: whole lines for bf16 on Hopper from K = 64 */
	ASSERT_EQ(lnl_fold_ld(1000, FP_BF16, 1), 1024);
	ASSERT_EQ(lnl_fold_ld(8200, FP_BF16, 1), 8256);
	ASSERT_EQ(lnl_fold_ld(1000, FP_BF16, 0), 1000);
	ASSERT_EQ(lnl_fold_ld(1000, FP_F32, 1), 1000);
	ASSERT_EQ(lnl_fold_ld(56, FP_BF16, 1), 56);
	ASSERT_EQ(lnl_fold_ld(1001, FP_BF16, 1), 1001);
	printf("ok   W' and x~ rows in whole 128-byte lines\n");
}

/* Few tiles from 65 rows (bf16 on Hopper, 132 SMs): which kernel auto
 * takes (lnl_few_tiles_ws), the warp-specialized kernel's tiles and
 * slices (lnl_ws_plan: auto's width; over x slices only as asked, over x~
 * the model's in a cluster), room for the partials an option may ask in
 * the workload's sizing, and x~'s padded rows. */
static void test_few_tiles(void)
{
	/* clusters of 1 to 8 blocks held at once, as an H200 might hold them */
	static const int caps[] = { 0, 132, 66, 39, 31, 26, 22, 18, 16 };
	static const int caps3[] = { 0, 132, 66, 0, 31, 26, 22, 18, 16 };
	int bn, s;

	/* the x~ kernel or the warp-specialized kernel over x~, as the model
	 * has them (the faster of the two on an H200 at each of these); the
	 * warp-specialized kernel over x past LNL_XT_MAX_M rows and where x~
	 * cannot be (K not a multiple of 8) */
	ASSERT(!lnl_few_tiles_ws(65, 1000, 1024, 132, caps));   /* 32-row tiles of W' */
	ASSERT(!lnl_few_tiles_ws(256, 4096, 1024, 132, caps));  /* one round either way */
	ASSERT(!lnl_few_tiles_ws(384, 1000, 1024, 132, caps));
	ASSERT(lnl_few_tiles_ws(512, 4096, 1024, 132, caps));   /* 128 x 64 in 2 slices */
	ASSERT(lnl_few_tiles_ws(65, 1024, 4096, 132, caps));    /* 128 x 64: 64 tiles */
	ASSERT(lnl_few_tiles_ws(256, 4096, 4096, 132, caps));   /* 128 x 64: 128 tiles */
	ASSERT(lnl_few_tiles_ws(96, 3072, 9216, 132, caps));    /* 128 x 128: 72 tiles */
	ASSERT(lnl_few_tiles_ws(1024, 4096, 1024, 132, caps));  /* x~'s 2 rounds of 96 */
	ASSERT(lnl_few_tiles_ws(65, 8192, 2048, 132, caps));    /* 3 slices */
	ASSERT(!lnl_few_tiles_ws(65, 8192, 2048, 132, NULL));   /* none: x~'s */
	ASSERT(lnl_few_tiles_ws(2000, 256, 256, 132, caps));    /* past LNL_XT_MAX_M */
	ASSERT(lnl_few_tiles_ws(300, 1001, 1024, 132, caps));   /* no x~ */
	/* the model's times: slices cut the k-tiles a block; a round more
	 * where the clusters held at once are fewer than the tiles; none
	 * where no cluster of s is held */
	ASSERT(lnl_few_ws_ns(65, 8192, 2048, 132, caps, 64, 3) <
	       lnl_few_ws_ns(65, 8192, 2048, 132, caps, 64, 1));
	ASSERT(lnl_few_ws_ns(65, 8192, 2048, 132, caps, 64, 4) >
	       1.5 * lnl_few_ws_ns(65, 8192, 2048, 132, caps, 64, 3));  /* 32 tiles, 31 held */
	ASSERT(lnl_few_ws_ns(65, 8192, 2048, 132, caps3, 64, 3) < 0);
	ASSERT(lnl_few_xt_ns(65, 8192, 2048, 132) > 0);
	ASSERT(lnl_few_xt_ns(65, 8192, 2048, 0) < 0);
	/* pairs where the row tiles are even or 8 and more */
	ASSERT(!lnl_ws_pairs_pay(100));
	ASSERT(!lnl_ws_pairs_pay(384));
	ASSERT(lnl_ws_pairs_pay(512));
	ASSERT(!lnl_ws_pairs_pay(896));
	ASSERT(lnl_ws_pairs_pay(1000));
	ASSERT(lnl_ws_pairs_pay(16384));
	/* the plan: one wave of 128 x 128 tiles over all of K at 1024 x 2048
	 * -> 2048; a width or slices asked for are taken (and slices only
	 * where there is room for partials, none empty) */
	lnl_ws_plan(1024, 2048, 2048, 132, 0, NULL, 0, 0, 1, &bn, &s);
	ASSERT_EQ(bn, 128);
	ASSERT_EQ(s, 1);
	lnl_ws_plan(1024, 2048, 2048, 132, 0, NULL, 256, 0, 1, &bn, &s);
	ASSERT_EQ(bn, 256);
	lnl_ws_plan(96, 1000, 1024, 132, 0, NULL, 128, 3, 1, &bn, &s);
	ASSERT_EQ(bn, 128);
	ASSERT_EQ(s, 3);
	lnl_ws_plan(96, 1000, 1024, 132, 0, NULL, 128, 3, 0, &bn, &s);
	ASSERT_EQ(s, 1);
	lnl_ws_plan(96, 8192, 1024, 132, 0, NULL, 0, 0, 1, &bn, &s); /* auto: all of K */
	ASSERT_EQ(s, 1);
	ASSERT_EQ(bn, 128);  /* 8 tiles: one round whatever the width */
	lnl_ws_plan(96, 8192, 1024, 132, 0, NULL, 0, 5, 1, &bn, &s); /* 5 of 26, 26, 26, 26, 24 */
	ASSERT_EQ(s, 5);
	lnl_ws_plan(96, 8192, 1024, 132, 0, NULL, 0, 8, 1, &bn, &s);
	ASSERT_EQ(s, 8);
	lnl_ws_plan(96, 200, 1024, 132, 0, NULL, 0, 8, 1, &bn, &s); /* 4 k-tiles: 2 a slice */
	ASSERT_EQ(s, 2);
	/* over x~, 64 columns too, and without caps (ws_reduce=kernel) all
	 * of K a block unless asked: the narrowest where every width is one
	 * round; 128 where 64 would take two */
	lnl_ws_plan(96, 8192, 1024, 132, 1, NULL, 0, 0, 1, &bn, &s);
	ASSERT_EQ(bn, 64);
	lnl_ws_plan(256, 4096, 4096, 132, 1, NULL, 0, 0, 1, &bn, &s); /* 128 tiles */
	ASSERT_EQ(bn, 64);
	lnl_ws_plan(512, 4096, 4096, 132, 1, NULL, 0, 0, 1, &bn, &s); /* 256 tiles of 64 */
	ASSERT_EQ(bn, 128);
	/* over x~ with caps: the model's slices, in a cluster (none past
	 * LNL_WS_DSUM_AUTO, none of a size no cluster of is held), or as
	 * asked */
	lnl_ws_plan(65, 8192, 2048, 132, 1, caps, 0, 0, 0, &bn, &s);
	ASSERT_EQ(bn, 64);
	ASSERT_EQ(s, 3);
	lnl_ws_plan(65, 8192, 2048, 132, 1, caps3, 0, 0, 0, &bn, &s);
	ASSERT(s != 3);
	lnl_ws_plan(512, 8192, 2048, 132, 1, caps, 0, 0, 0, &bn, &s);
	ASSERT_EQ(bn, 128);
	ASSERT_EQ(s, 2);
	lnl_ws_plan(96, 8192, 1024, 132, 1, caps, 0, 0, 1, &bn, &s);
	ASSERT_EQ(bn, 64);
	ASSERT_EQ(s, LNL_WS_DSUM_AUTO);
	lnl_ws_plan(96, 8192, 1024, 132, 1, caps, 0, 6, 1, &bn, &s);
	ASSERT_EQ(s, 6);
	lnl_ws_plan(96, 8192, 1024, 132, 1, caps, 192, 0, 1, &bn, &s);
	ASSERT_EQ(bn, 192);
	lnl_ws_plan(1024, 1000, 1024, 132, 1, caps, 0, 0, 1, &bn, &s);
	ASSERT_EQ(s, 1);  /* 64 tiles of 128 x 128: slices would take rounds */
	for (long K = 64; K <= 9000; K += 424)
		for (int w = 0; w <= 8; w++)
			for (int xt = 0; xt < 2; xt++) {
				lnl_ws_plan(300, K, 1024, 132, xt, xt ? caps : NULL, 0, w, 1,
					    &bn, &s);
				ASSERT(bn == 128 || bn == 192 || bn == 256 || (xt && bn == 64));
				ASSERT(s >= 1 && s <= lnl_ws_split_max(300, K, 1024, FP_BF16));
				ASSERT(lnl_part_bytes(300, 1024, s) <=
				       lnl_split_bytes(300, K, 1024, FP_BF16));
			}
	/* the workload's partials: room for the slices an option may ask */
	ASSERT_EQ(lnl_ws_split_max(96, 8192, 1024, FP_BF16), LNL_WS_SPLIT_MAX);
	ASSERT_EQ(lnl_ws_split_max(96, 200, 1024, FP_BF16), 2);
	ASSERT_EQ(lnl_ws_split_max(96, 8192, 1024, FP_F32), 1);
	ASSERT_EQ(lnl_ws_split_max(64, 8192, 1024, FP_BF16), 1);
	ASSERT_EQ(lnl_ws_split_max(8192, 4096, 4096, FP_BF16), 1); /* many tiles */
	/* x~'s rows: whole 8-row groups to 64, whole 128-row tiles past */
	ASSERT_EQ(lnl_xt_rows(17), 24);
	ASSERT_EQ(lnl_xt_rows(64), 64);
	ASSERT_EQ(lnl_xt_rows(65), 128);
	ASSERT_EQ(lnl_xt_rows(130), 256);
	ASSERT_EQ(lnl_xt_rows(300), 384);
	ASSERT_EQ(lnl_xt_rows(1000), 1024);
	ASSERT(lnl_fwd_xt_possible(1024, 1000, FP_BF16));
	ASSERT(!lnl_fwd_xt_possible(1025, 1000, FP_BF16));
	ASSERT(!lnl_fwd_xt_possible(512, 1000, FP_F32));
	printf("ok   few tiles from 65 rows: the kernel, the plan, x~'s rows\n");
}

/* The warp-specialized forward's tile width (lnl_ws_bn) on an H100's 66
 * pairs: 192 at the shapes whose 256-wide units leave the last round
 * of the SMs far from full, 256 at the zoo's training shapes; and the
 * units it counts. */
static void test_ws_bn(void)
{
	ASSERT_EQ(lnl_ws_units(2000, 3008, 2, 256), 96);   /* 8 pairs x 12 */
	ASSERT_EQ(lnl_ws_units(2000, 3008, 2, 192), 128);  /* 8 x 16 */
	ASSERT_EQ(lnl_ws_units(2000, 3008, 1, 256), 192);
	ASSERT_EQ(lnl_ws_units(129, 32, 2, 192), 1);
	ASSERT_EQ(lnl_ws_bn(2000, 3008, 2, 66), 192);      /* 2 rounds either way */
	ASSERT_EQ(lnl_ws_bn(3000, 2048, 2, 66), 192);
	ASSERT_EQ(lnl_ws_bn(16384, 4096, 2, 66), 256);     /* 16 rounds vs 22 */
	ASSERT_EQ(lnl_ws_bn(16384, 3072, 2, 66), 256);     /* 12 x 256 = 16 x 192 */
	ASSERT_EQ(lnl_ws_bn(8192, 8192, 2, 66), 256);      /* 21 x 192 vs 16 x 256 */
	ASSERT_EQ(lnl_ws_bn(6000, 2016, 2, 66), 256);      /* 4 x 192 = 3 x 256 */
	ASSERT_EQ(lnl_ws_bn(4096, 28672, 2, 66), 256);
	ASSERT_EQ(lnl_ws_bn(1000, 4096, 2, 66), 256);      /* one round of 256 */
	ASSERT_EQ(lnl_ws_bn(16384, 2048, 2, 66), 256);
	ASSERT_EQ(lnl_ws_bn(2000, 3008, 2, 0), 256);
	/* the mma.sync kernel's, one block an SM of 132: fp32 2000 x 1000 ->
	 * 3000 is 192 tiles of 256 (2 rounds, the second 45 % full) or 256
	 * of 192 (2 rounds) */
	ASSERT_EQ(lnl_ws_bn(2000, 3000, 1, 132), 192);
	ASSERT_EQ(lnl_ws_bn(16384, 4096, 1, 132), 256);    /* 16 rounds vs 22 */
	/* 192 only where its rounds take under 0.85 of 256's time */
	for (long M = 128; M <= 20000; M += 371)
		for (long Np = 32; Np <= 30000; Np += 928) {
			const long r256 = (lnl_ws_units(M, Np, 2, 256) + 65) / 66;
			const long r192 = (lnl_ws_units(M, Np, 2, 192) + 65) / 66;
			const int bn = lnl_ws_bn(M, Np, 2, 66);

			ASSERT(bn == 256 || bn == 192);
			ASSERT((bn == 192) == (100 * 192 * r192 < 85 * 256 * r256));
		}
	printf("ok   warp-specialized forward's tile width\n");
}

/* The decode forward's plans (lnl_fwd_gemv) at the zoo's decode shapes and
 * the tests' (the plans the comment over LNL_TESTS in workload.cu names)
 * on 132 SMs, where it does not serve, and its invariants over a sweep:
 * every row of W' in a block, every chunk of K in a slice and no slice
 * empty, the warps within their cap, the partials within what the workload
 * allocates, bf16's row blocks and chunks those of fp32 (LNL_GEMV_E
 * columns a lane in both: only lnl_split_max, in bytes, differs), and the
 * library's workspace slices its. */
static void test_gemv(void)
{
	static const struct {
		long M, K, N;
		enum fp_dtype dt;
		int brows;
		long blocks;
		int splits, warps;
	} want[] = {
		{ 1, 2048, 2048, FP_BF16, 8, 256, 1, 8 },
		{ 1, 3072, 9216, FP_BF16, 8, 1152, 1, 8 },
		{ 8, 3072, 9216, FP_BF16, 8, 1152, 1, 8 },
		{ 8, 2048, 2048, FP_BF16, 4, 512, 1, 8 },
		{ 1, 2048, 2048, FP_F32, 8, 256, 1, 8 },
		{ 1, 3072, 9216, FP_F32, 8, 1152, 1, 8 },
		{ 1, 2048, 200, FP_BF16, 8, 28, 8, 2 },
		{ 1, 2048, 200, FP_F32, 8, 28, 8, 2 },
		{ 1, 520, 8500, FP_BF16, 8, 1064, 1, 5 },
		{ 1, 520, 8500, FP_F32, 8, 1064, 1, 5 },
		{ 5, 1000, 300, FP_BF16, 4, 80, 4, 2 },
		{ 5, 1000, 300, FP_F32, 4, 80, 4, 2 },
		{ 2, 4096, 130, FP_BF16, 8, 20, 11, 3 },
		{ 2, 4096, 130, FP_F32, 8, 20, 11, 3 },
		{ 8, 4104, 4300, FP_BF16, 4, 1080, 1, 8 },
		{ 8, 4104, 4300, FP_F32, 4, 1080, 1, 8 },
	};
	struct lnl_gemv g, g32;

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		ASSERT(lnl_fwd_gemv(want[i].M, want[i].K, want[i].N, want[i].dt, 132, &g));
		ASSERT_EQ(g.brows, want[i].brows);
		ASSERT_EQ(g.blocks, want[i].blocks);
		ASSERT_EQ(g.splits, want[i].splits);
		ASSERT_EQ(g.warps, want[i].warps);
	}
	/* not served: too many rows, rows without aligned 16-byte chunks, an
	 * unknown device */
	/* decode=auto's rule: fp32 up to 8 rows, bf16 up to two */
	ASSERT(lnl_fwd_gemv_auto(8, FP_F32) && !lnl_fwd_gemv_auto(9, FP_F32));
	ASSERT(lnl_fwd_gemv_auto(2, FP_BF16) && !lnl_fwd_gemv_auto(3, FP_BF16));
	/* bf16 decode rows on 132 SMs: the decode kernel up to 80 KiB of W' an
	 * SM (520 x 8500: 66.9 KiB), the skinny kernel beyond (1536 x 4096:
	 * 95.3 KiB) */
	ASSERT(!lnl_fwd_gemv_bf16_big(2048, 2048, 132));
	ASSERT(!lnl_fwd_gemv_bf16_big(520, 8500, 132));
	ASSERT(!lnl_fwd_gemv_bf16_big(1000, 3000, 132));
	ASSERT(lnl_fwd_gemv_bf16_big(1536, 4096, 132));
	ASSERT(lnl_fwd_gemv_bf16_big(3072, 9216, 132));
	ASSERT(!lnl_fwd_gemv_bf16_big(3072, 9216, 0));  /* no device known */
	ASSERT(!lnl_fwd_gemv_bf16_big(1024, 5120, 132) && lnl_fwd_gemv_bf16_big(1024, 5120, 63));
	ASSERT_EQ(lnl_fwd_part_slices(8, 3072, 9216, FP_BF16, 132),
		  lnl_fwd_splits(8, 3072, 9216, FP_BF16, 132));
	ASSERT(!lnl_fwd_gemv(9, 2048, 2048, FP_BF16, 132, &g));
	ASSERT(!lnl_fwd_gemv(9, 2048, 2048, FP_F32, 132, &g));
	ASSERT(!lnl_fwd_gemv(1, 2047, 2048, FP_BF16, 132, &g));
	ASSERT(!lnl_fwd_gemv(1, 2046, 2048, FP_F32, 132, &g));
	ASSERT(!lnl_fwd_gemv(1, 2048, 2048, FP_BF16, 0, &g));
	/* the library's slices: the decode forward's where it serves */
	ASSERT_EQ(lnl_fwd_part_slices(1, 2048, 200, FP_BF16, 132), 8);
	ASSERT_EQ(lnl_fwd_part_slices(1, 2048, 2048, FP_BF16, 132), 1);
	ASSERT_EQ(lnl_fwd_part_slices(64, 2048, 2048, FP_BF16, 132),
		  lnl_fwd_splits(64, 2048, 2048, FP_BF16, 132));
	for (int dt = 0; dt < 2; dt++) {
		const enum fp_dtype t = dt ? FP_BF16 : FP_F32;
		const int e = dt ? 8 : 4;

		for (long M = 1; M <= LNL_GEMV_MAX_M; M++)
			for (long K = e; K <= 20000; K = K * 3 + e - (K * 3) % e)
				for (long N = 1; N <= 40000; N = N * 5 + 3)
					for (int sms = 1; sms <= 200; sms = sms * 3 + 1) {
						const long Np = (N + 31) / 32 * 32;

						ASSERT(lnl_fwd_gemv(M, K, N, t, sms, &g));
						ASSERT(g.mp >= M && g.mp < 2 * M);
						ASSERT_EQ(g.group, LNL_GEMV_GROUP(g.mp));
						ASSERT(g.brows % g.group == 0);
						ASSERT(g.brows * g.mp <= LNL_GEMV_SUMS);
						ASSERT(g.blocks * g.brows >= Np);
						ASSERT((g.blocks - 1) * g.brows < Np);
						/* 8 row blocks an SM, unless of one group */
						ASSERT(g.blocks >= 8L * sms || g.brows == g.group);
						ASSERT(g.brows == LNL_GEMV_SUMS / g.mp ||
						       (Np + 2L * g.brows - 1) / (2L * g.brows) < 8L * sms);
						ASSERT_EQ(g.chunks, (int)((K + 127) / 128));
						ASSERT((long)g.splits * g.cps >= g.chunks);
						ASSERT((long)(g.splits - 1) * g.cps < g.chunks);
						ASSERT(g.splits <= lnl_split_max(M, K, t));
						ASSERT(g.warps >= 1 && g.warps <= g.cps &&
						       g.warps <= LNL_GEMV_WARPS);
						ASSERT(lnl_part_bytes(M, N, g.splits) <=
						       lnl_split_bytes(M, K, N, t));
						if (t != FP_BF16)
							continue;
						ASSERT(lnl_fwd_gemv(M, K, N, FP_F32, sms, &g32));
						ASSERT(g.group == g32.group && g.brows == g32.brows);
						ASSERT(g.blocks == g32.blocks && g.chunks == g32.chunks);
						ASSERT(g.splits <= g32.splits);
					}
	}
	printf("gemv ok\n");
}

int main(void)
{
	const char *env = getenv("FUSEPROF_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0)
			    : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

	printf("seed %llu (set FUSEPROF_SEED to reproduce)\n",
	       (unsigned long long)seed);
	test_hand();
	test_shift(seed);
	test_bwd_fd(seed);
	test_flashnorm(seed);
	test_profiles(seed);
	test_sample(seed);
	test_widen(seed);
	test_contract();
	test_split();
	test_skinny();
	test_skinny_res();
	test_skinny_x();
	test_xa_plan();
	test_xt_plan();
	test_st_plan();
	test_st_plan_deep();
	test_ws_bn();
	test_gemv();
	test_row_ld();
	test_few_tiles();
	return 0;
}
