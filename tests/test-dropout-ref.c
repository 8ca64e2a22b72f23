/* test-dropout-ref.c - CPU-only checks of the bias+dropout+residual
 * workloads: Philox 4x32-10 against Random123's known answers, the mask's
 * definition (threshold, counter layout, keep rate), the double backward
 * against central finite differences of the forward, and the host-side
 * contract (shapes, validate, models, saved_bytes, device bytes). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kutil.h"
#include "dropout/dropout.h"
#include "test.h"
#include "wltest.h"
#include "workload.h"

/* Random123 tests/kat_vectors, the three philox4x32 10 lines. */
static void check_kat(void)
{
	static const uint32_t kat[3][10] = {
		{ 0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
		{ 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
		  0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
		{ 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
		  0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 },
	};

	for (int i = 0; i < 3; i++) {
		struct philox4 c = { { kat[i][0], kat[i][1], kat[i][2], kat[i][3] } };
		struct philox4 r = philox4x32_10(c, kat[i][4], kat[i][5]);

		for (int k = 0; k < 4; k++)
			ASSERT_EQ(r.v[k], kat[i][6 + k]);
	}
	/* dropout_words: counter (q low, q high, 0, 0), key (seed low, high). */
	{
		struct philox4 c = { { 0x89abcdefu, 0x01234567u, 0, 0 } };
		struct philox4 a = philox4x32_10(c, 0xdeadbeefu, 0xfeedf00du);
		struct philox4 b = dropout_words(0xfeedf00ddeadbeefull, 0x0123456789abcdefull);

		for (int k = 0; k < 4; k++)
			ASSERT_EQ(a.v[k], b.v[k]);
	}
	printf("ok   philox4x32-10 known answers\n");
}

static void check_mask(void)
{
	const uint64_t seed = 0x1234567890abcdefull;
	unsigned char m[4096];

	ASSERT_EQ(dropout_threshold(0), 0);
	ASSERT_EQ(dropout_threshold(500), 0x80000000u);
	ASSERT_EQ(dropout_threshold(100), 429496730u);  /* round(0.1 * 2^32) */
	ASSERT_EQ(dropout_threshold(999), 4290672329u); /* round(0.999 * 2^32) */
	ASSERT_NEAR(bda_scale(100), 1 / 0.9, 1e-15);
	/* element e takes word e % 4 of counter e / 4 */
	for (uint64_t e = (1ull << 34) - 8; e < (1ull << 34) + 8; e++) {
		struct philox4 w = dropout_words(seed, e >> 2);

		ASSERT_EQ(dropout_keep(seed, 0x80000000u, e), w.v[e & 3] >= 0x80000000u);
	}
	/* p = 0 keeps everything; the mask at an offset is the tail of the
	 * mask from 0 (a pure function of the element index) */
	bda_ref_mask(seed, 0, 0, 4096, m);
	for (int i = 0; i < 4096; i++)
		ASSERT_EQ(m[i], 1);
	{
		unsigned char a[600], b[100];

		bda_ref_mask(seed, 300, 0, 600, a);
		bda_ref_mask(seed, 300, 500, 100, b);
		ASSERT(!memcmp(a + 500, b, 100));
	}
	/* keep rate within 4 sigma of 1 - p, and another seed a different mask */
	for (long drop = 100; drop <= 900; drop += 400) {
		const size_t n = 1 << 20;
		unsigned char *k = malloc(n), *k2 = malloc(n);
		double p = drop / 1000.0, kept = 0, sigma = sqrt(n * p * (1 - p));
		size_t differ = 0;

		ASSERT(k && k2);
		bda_ref_mask(seed, drop, 0, n, k);
		bda_ref_mask(seed + 1, drop, 0, n, k2);
		for (size_t i = 0; i < n; i++) {
			kept += k[i];
			differ += k[i] != k2[i];
		}
		if (fabs(kept - n * (1 - p)) > 4 * sigma)
			FAIL("drop=%ld: kept %.0f of %zu, expected %.0f +- %.0f", drop, kept,
			     n, n * (1 - p), 4 * sigma);
		ASSERT(differ > n * p * (1 - p));  /* independent masks differ */
		free(k);
		free(k2);
	}
	printf("ok   mask definition and keep rate\n");
}

/* The loss sum(dy * y) is linear in x and bias: central differences are
 * exact up to rounding, and dx must be dy mask scale, dbias its column sum,
 * dresidual dy. */
static double loss(const double *dy, const double *x, const double *b,
		   const double *r, double *y, long M, long N, long drop, uint64_t s)
{
	double l = 0;

	bda_ref_fwd(x, b, r, y, 0, M, N, drop, s);
	for (long i = 0; i < M * N; i++)
		l += dy[i] * y[i];
	return l;
}

static double fd(double *p, const double *dy, const double *x, const double *b,
		 const double *r, double *y, long M, long N, long drop, uint64_t s)
{
	const double keep = *p, h = 1e-3;
	double lp, lm;

	*p = keep + h;
	lp = loss(dy, x, b, r, y, M, N, drop, s);
	*p = keep - h;
	lm = loss(dy, x, b, r, y, M, N, drop, s);
	*p = keep;
	return (lp - lm) / (2 * h);
}

static void check_grad(struct fp_rng *g, long M, long N, long drop)
{
	const size_t mn = (size_t)(M * N);
	const uint64_t s = rng_next(g);
	double *x = calloc(mn, sizeof *x), *r = calloc(mn, sizeof *r);
	double *dy = calloc(mn, sizeof *dy), *y = calloc(mn, sizeof *y);
	double *dx = calloc(mn, sizeof *dx), *b = calloc((size_t)N, sizeof *b);
	double *db = calloc((size_t)N, sizeof *db);
	size_t zeros = 0;

	ASSERT(x && r && dy && y && dx && b && db);
	for (size_t i = 0; i < mn; i++) {
		x[i] = rng_normal(g);
		r[i] = rng_normal(g);
		dy[i] = rng_normal(g);
	}
	for (long j = 0; j < N; j++)
		b[j] = rng_normal(g);
	bda_ref_bwd(dy, dx, db, 0, M, N, drop, s);
	for (size_t i = 0; i < mn; i++) {
		ASSERT_NEAR(dx[i], fd(&x[i], dy, x, b, r, y, M, N, drop, s), 1e-9);
		ASSERT_NEAR(dy[i], fd(&r[i], dy, x, b, r, y, M, N, drop, s), 1e-9);
		zeros += dx[i] == 0;
	}
	for (long j = 0; j < N; j++)
		ASSERT_NEAR(db[j], fd(&b[j], dy, x, b, r, y, M, N, drop, s), 1e-9);
	if (drop == 0)
		ASSERT_EQ(zeros, 0);
	if (drop == 500)
		ASSERT(zeros > 0 && zeros < mn);
	/* dbias accumulates: a second call doubles it */
	{
		double b0 = db[0];

		bda_ref_bwd(dy, dx, db, 0, M, N, drop, s);
		ASSERT_NEAR(db[0], 2 * b0, 1e-12);
	}
	/* rows fed from row0 = 1 are rows 1.. of the whole */
	if (M > 1) {
		double *y1 = calloc(mn, sizeof *y1);

		ASSERT(y1);
		bda_ref_fwd(x, b, r, y, 0, M, N, drop, s);
		bda_ref_fwd(x + N, b, r + N, y1, 1, M - 1, N, drop, s);
		ASSERT(!memcmp(y + N, y1, (mn - N) * sizeof *y));
		free(y1);
	}
	printf("ok   grad M=%ld N=%ld drop=%ld\n", M, N, drop);
	free(x), free(r), free(dy), free(y), free(dx), free(b), free(db);
}

static void check_contract(const struct workload *w, int bwd)
{
	struct fp_shape s;
	struct fp_model m, f;
	char why[256];
	const struct workload *fw = workload_find("bias_dropout_add_fwd");
	const struct workload *bw = workload_find("bias_dropout_add_bwd");

	ASSERT(w && fw && bw);
	ASSERT_EQ(workload_nvariants(w), 4);
	ASSERT_STR_EQ(w->variants[BDA_UNFUSED].name, "unfused");
	ASSERT_STR_EQ(w->variants[BDA_FUSED_MASK].name, "fused_mask");
	ASSERT_STR_EQ(w->variants[BDA_FUSED_REGEN].name, "fused_regen");
	ASSERT_STR_EQ(w->variants[BDA_FUSED_BYTEMASK].name, "fused_bytemask");
	/* unfused's twin: its kernels as one, keeping its byte mask */
	ASSERT_STR_EQ(w->variants[BDA_UNFUSED].twin, "fused_bytemask");
	ASSERT(bda_saves_bytes(BDA_UNFUSED) && bda_saves_bytes(BDA_FUSED_BYTEMASK) &&
	       !bda_saves_bytes(BDA_FUSED_MASK) && !bda_saves_bytes(BDA_FUSED_REGEN));
	if (!bwd)
		ASSERT_STR_EQ(w->backward, "bias_dropout_add_bwd");
	assert_shapes_run(w, w->suite, 2);
	assert_shapes_run(w, w->quick, 1);
	assert_shapes_run(w, w->tests, 8);

	/* validate and the parser */
	ASSERT(workload_parse_shape(w, "M=4,N=8,drop=1000", &s, why, sizeof why) == -1);
	ASSERT(strstr(why, "drop=1000"));
	ASSERT(workload_parse_shape(w, "M=4,N=8", &s, why, sizeof why) == 0);
	ASSERT_EQ(s.v[2], 100);
	s.v[2] = 1000;
	ASSERT(w->validate(&s, FP_F32, why, sizeof why) == -1);
	ASSERT(strstr(why, "drop=1000") && strstr(why, "[0, 999]"));
	s.v[2] = -1;
	ASSERT(w->validate(&s, FP_F32, why, sizeof why) == -1);
	s.v[2] = 0;
	s.v[1] = 0;
	ASSERT(w->validate(&s, FP_BF16, why, sizeof why) == -1);
	ASSERT(strstr(why, "N=0"));
	s.v[0] = 1L << 31;
	s.v[1] = 1L << 30;
	ASSERT(w->validate(&s, FP_F32, why, sizeof why) == -1);
	ASSERT(strstr(why, "TiB"));

	/* models by hand at M = 1000, N = 96 (M N / 32 = 3000 words) */
	s.v[0] = 1000, s.v[1] = 96, s.v[2] = 100;
	for (int dt = 0; dt < FP_NDTYPES; dt++) {
		const double es = dt == FP_BF16 ? 2 : 4, mn = 96000;

		for (int v = 0; v < 4; v++) {
			w->model(&s, (enum fp_dtype)dt, v, &m);
			(bwd ? fw : bw)->model(&s, (enum fp_dtype)dt, v, &f);
			ASSERT(m.saved_bytes == f.saved_bytes);  /* the pair agrees */
			ASSERT(m.variant_bytes >= m.min_bytes);
			ASSERT(m.flops == (bwd ? 2 : 3) * mn);
			ASSERT(m.min_bytes == ((bwd ? 2 : 3) * mn + 96) * es);
			ASSERT(m.saved_bytes == (bda_saves_bytes(v) ? mn :
						 v == BDA_FUSED_MASK ? 12000 : 0));
		}
		w->model(&s, (enum fp_dtype)dt, BDA_UNFUSED, &m);
		ASSERT(m.variant_bytes == ((bwd ? 3 : 7) * mn + 96) * es + mn);
		w->model(&s, (enum fp_dtype)dt, BDA_FUSED_REGEN, &m);
		ASSERT(m.variant_bytes == m.min_bytes);
		w->model(&s, (enum fp_dtype)dt, BDA_FUSED_MASK, &m);
		ASSERT(m.variant_bytes == m.min_bytes + 12000);
		/* the twin: unfused's bytes less h's and d's writes and reads
		 * (and, backward, dx's read by the column partials) */
		w->model(&s, (enum fp_dtype)dt, BDA_FUSED_BYTEMASK, &m);
		ASSERT(m.variant_bytes == m.min_bytes + mn);
		w->model(&s, (enum fp_dtype)dt, BDA_UNFUSED, &f);
		ASSERT(f.variant_bytes - m.variant_bytes == (bwd ? 1 : 4) * mn * es);
	}
	/* device bytes: grows with sets and shape, fused_regen holds least */
	for (int v = 0; v < 4; v++) {
		size_t one = w->device_bytes(&s, FP_F32, v, 1);
		size_t two = w->device_bytes(&s, FP_F32, v, 2);

		ASSERT(one > 96000 * 4 && two == 2 * one);
		ASSERT(w->device_bytes(&s, FP_BF16, v, 1) < one);
		ASSERT(w->device_bytes(&s, FP_F32, BDA_FUSED_REGEN, 1) <= one);
	}
	ASSERT(w->device_bytes(&s, FP_F32, BDA_UNFUSED, 1) >
	       w->device_bytes(&s, FP_F32, BDA_FUSED_MASK, 1));
	/* the byte mask in place of the bit mask; the forward without h, d */
	ASSERT(w->device_bytes(&s, FP_F32, BDA_FUSED_BYTEMASK, 1) >
	       w->device_bytes(&s, FP_F32, BDA_FUSED_MASK, 1));
	if (!bwd)
		ASSERT(w->device_bytes(&s, FP_F32, BDA_UNFUSED, 1) -
		       w->device_bytes(&s, FP_F32, BDA_FUSED_BYTEMASK, 1) == 2 * 96000 * 4);
	printf("ok   %s contract\n", w->name);
}

/* resident_rows (kutil.h), the fused byte- and bit-mask backwards' grid:
 * over grids, row counts, bands and device limits, the rows it keeps are
 * the plan's where every block fits at once (or the limits are unknown);
 * otherwise they fit, no block takes more bands than the fewest any
 * resident grid allows, and one row of blocks fewer would take more. */
static void check_resident(void)
{
	static const long gxs[] = { 1, 3, 6, 16, 32, 129 };
	static const long rowss[] = { 1, 31, 32, 33, 1000, 16384, 16385, 100000 };
	static const int pers[] = { 0, 1, 4, 5, 8 };
	static const int smss[] = { 0, 1, 78, 132 };
	long n = 0;

	for (size_t a = 0; a < sizeof gxs / sizeof *gxs; a++)
	for (size_t b = 0; b < sizeof rowss / sizeof *rowss; b++)
	for (long band = 8; band <= 32; band += 24)
	for (size_t c = 0; c < sizeof pers / sizeof *pers; c++)
	for (size_t d = 0; d < sizeof smss / sizeof *smss; d++) {
		const long gx = gxs[a], rows = rowss[b], bands = (rows + band - 1) / band;
		const long gy = (bands + 1) / 2 < 1024 ? (bands + 1) / 2 : 1024;  /* 2 bands a block */
		const int per = pers[c], sms = smss[d];
		const long fit = (long)per * sms / gx;
		const long r = resident_rows(gx, gy, rows, band, per, sms);

		if (per < 1 || sms < 1 || fit < 1 || fit >= gy) {
			ASSERT(r == gy);
		} else {
			const long least = (bands + fit - 1) / fit;

			ASSERT(r >= 1 && r <= fit && r < gy);
			ASSERT((bands + r - 1) / r == least);
			ASSERT(r == 1 || (bands + r - 2) / (r - 1) > least);
		}
		n++;
	}
	/* 16384 x 768 bf16 on 132 SMs at 4 blocks an SM: 3 column strips,
	 * 512 bands of 32 rows, 176 rows of blocks fit: 3 bands each */
	ASSERT(resident_rows(3, 256, 16384, 32, 4, 132) == 171);
	printf("ok   resident grid rows (%ld cases)\n", n);
}

int main(void)
{
	struct fp_rng g;
	uint64_t seed = getenv("FUSEPROF_SEED") ? strtoull(getenv("FUSEPROF_SEED"), NULL, 0)
						: 0x5eed;

	printf("seed %#llx\n", (unsigned long long)seed);
	rng_seed(&g, seed);
	check_kat();
	check_mask();
	check_grad(&g, 1, 1, 100);
	check_grad(&g, 3, 7, 0);
	check_grad(&g, 5, 13, 500);
	check_grad(&g, 4, 33, 999);
	check_resident();
	check_contract(workload_find("bias_dropout_add_fwd"), 0);
	check_contract(workload_find("bias_dropout_add_bwd"), 1);
	return 0;
}
