/* test-compare.c - the verdict logic of `fuseprof compare` on constructed
 * distributions: the noise rule on both sides of its bar, counter verdicts,
 * correctness changes, launch counts, ADDED/REMOVED and the sort order. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "compare.h"
#include "test.h"

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	/* xorshift64*: enough to draw shapes of test distributions. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static double rng_uniform(double lo, double hi)
{
	return lo + (hi - lo) * (double)(rng_next() >> 11) / 9007199254740992.0;
}

/* n (odd) samples evenly spaced over median * [1 - s/2, 1 + s/2], in random
 * order. Their median is `median` and, with type-7 percentiles, p90 - p10 is
 * 0.8 * s * median: the noise is 0.8 * s exactly. */
static double *make_dist(size_t n, double median, double s)
{
	double *v = malloc(n * sizeof *v);

	if (!v)
		exit(TEST_HARD_ERROR);
	for (size_t k = 0; k < n; k++)
		v[k] = median * (1 - s / 2 + s * (double)k / (double)(n - 1));
	for (size_t k = n - 1; k > 0; k--) {
		size_t j = (size_t)(rng_next() % (k + 1));
		double t = v[k];

		v[k] = v[j];
		v[j] = t;
	}
	return v;
}

static size_t random_odd_n(void)
{
	return 11 + 2 * (size_t)(rng_next() % 20);
}

static const struct cmp_opts opts = {
	CMP_DEFAULT_TIME_THRESHOLD, CMP_DEFAULT_COUNT_THRESHOLD, 0
};

/* An ok op with samples and no counters. */
static struct cmp_op op_with(const double *v, size_t n)
{
	struct cmp_op op = { "ok", v, n, 1, 0, NAN, NAN };

	return op;
}

static void test_stats(void)
{
	size_t n = random_odd_n();
	double m = rng_uniform(1e3, 1e6), s = rng_uniform(0.01, 0.5);
	double *v = make_dist(n, m, s), med, noise;
	double sorted[5] = { 1, 2, 3, 4, 5 };

	ASSERT_NEAR(cmp_percentile(sorted, 5, 0.5), 3, 1e-12);
	ASSERT_NEAR(cmp_percentile(sorted, 5, 0.1), 1.4, 1e-12);
	ASSERT_NEAR(cmp_percentile(sorted, 5, 0.9), 4.6, 1e-12);
	ASSERT(isnan(cmp_percentile(sorted, 0, 0.5)));
	ASSERT_EQ(cmp_time_stats(v, n, &med, &noise), 0);
	ASSERT_NEAR(med, m, 1e-9);
	ASSERT_NEAR(noise, 0.8 * s, 1e-9);
	/* One sample: no spread, only the threshold will apply. */
	ASSERT_EQ(cmp_time_stats(v, 1, &med, &noise), 0);
	ASSERT_NEAR(noise, 0, 1e-12);
	ASSERT_EQ(cmp_time_stats(v, 0, &med, &noise), -1);
	ASSERT(isnan(med) && isnan(noise));
	free(v);
}

/* Verdict of NEW (median m * (1 + change), noise nn) against BASE (median m,
 * noise nb). */
static enum cmp_time time_case(double nb, double nn, double change,
			       struct cmp_result *r)
{
	size_t n1 = random_odd_n(), n2 = random_odd_n();
	double m = rng_uniform(1e3, 1e6);
	double *b = make_dist(n1, m, nb / 0.8), *x = make_dist(n2, m * (1 + change), nn / 0.8);
	struct cmp_op ob = op_with(b, n1), on = op_with(x, n2);

	cmp_ops(&ob, &on, &opts, r);
	ASSERT_NEAR(r->time_change, change, 1e-9);
	free(b);
	free(x);
	return r->time;
}

static void test_threshold_bound(void)
{
	const double eps = 1e-4, t = CMP_DEFAULT_TIME_THRESHOLD;
	double quiet = rng_uniform(0.001, 0.03);  /* below the threshold */
	struct cmp_result r;

	ASSERT_EQ(time_case(quiet, quiet, t + eps, &r), CMP_TIME_SLOWER);
	ASSERT_NEAR(r.time_bar, t, 1e-12);
	ASSERT_EQ(r.verdict, CMP_SLOWER);
	ASSERT(r.regressed);
	ASSERT_EQ(time_case(quiet, quiet, t - eps, &r), CMP_TIME_SAME);
	ASSERT_EQ(r.verdict, CMP_SAME);
	ASSERT(!r.regressed);
	ASSERT_EQ(time_case(quiet, quiet, -t - eps, &r), CMP_TIME_FASTER);
	ASSERT_EQ(r.verdict, CMP_FASTER);
	ASSERT(!r.regressed);
	ASSERT_EQ(time_case(quiet, quiet, -t + eps, &r), CMP_TIME_SAME);
}

static void test_noise_bound(void)
{
	const double eps = 1e-4;
	double loud = rng_uniform(0.1, 0.3), quiet = rng_uniform(0.001, 0.03);
	double mid = (CMP_DEFAULT_TIME_THRESHOLD + loud) / 2;
	struct cmp_result r;

	/* Past the threshold but inside BASE's noise: not a change. */
	ASSERT_EQ(time_case(loud, quiet, mid, &r), CMP_TIME_SAME);
	ASSERT_NEAR(r.time_bar, loud, 1e-9);
	ASSERT(!r.regressed);
	ASSERT_EQ(time_case(loud, quiet, loud + eps, &r), CMP_TIME_SLOWER);
	ASSERT(r.regressed);
	ASSERT_EQ(time_case(loud, quiet, loud - eps, &r), CMP_TIME_SAME);
	/* The same with the noise in NEW, and on the faster side. */
	ASSERT_EQ(time_case(quiet, loud, mid, &r), CMP_TIME_SAME);
	ASSERT_NEAR(r.time_bar, loud, 1e-9);
	ASSERT_EQ(time_case(quiet, loud, loud + eps, &r), CMP_TIME_SLOWER);
	ASSERT_EQ(time_case(quiet, loud, -mid, &r), CMP_TIME_SAME);
	ASSERT_EQ(time_case(quiet, loud, -loud - eps, &r), CMP_TIME_FASTER);
	ASSERT_EQ(time_case(loud, loud, -loud + eps, &r), CMP_TIME_SAME);
}

static void test_counts(void)
{
	const double t = CMP_DEFAULT_COUNT_THRESHOLD;
	double bytes = floor(rng_uniform(1e6, 1e10)), c;
	size_t n = random_odd_n();
	double *v = make_dist(n, 1e5, 0.01);
	struct cmp_op b = op_with(v, n), x = op_with(v, n);
	struct cmp_result r;

	ASSERT_EQ(cmp_count_verdict(bytes, bytes * (1 + t / 2), t, &c), CMP_COUNT_SAME);
	ASSERT_EQ(cmp_count_verdict(bytes, bytes * (1 + 1.5 * t), t, &c), CMP_COUNT_MORE);
	ASSERT_NEAR(c, 1.5 * t, 1e-9);
	ASSERT_EQ(cmp_count_verdict(bytes, bytes * (1 - 1.5 * t), t, &c), CMP_COUNT_FEWER);
	ASSERT_EQ(cmp_count_verdict(0, 0, t, &c), CMP_COUNT_SAME);
	ASSERT_EQ(cmp_count_verdict(0, bytes, t, &c), CMP_COUNT_MORE);
	ASSERT(isinf(c));
	ASSERT_EQ(cmp_count_verdict(NAN, bytes, t, &c), CMP_COUNT_NA);
	ASSERT(isnan(c));

	/* Same time, 3% more DRAM bytes: a regression the clock cannot see. */
	b.has_counters = x.has_counters = 1;
	b.dram_bytes = bytes;
	x.dram_bytes = bytes * 1.03;
	b.flops = x.flops = 4 * bytes;
	cmp_ops(&b, &x, &opts, &r);
	ASSERT_EQ(r.time, CMP_TIME_SAME);
	ASSERT_EQ(r.dram, CMP_COUNT_MORE);
	ASSERT_EQ(r.flops, CMP_COUNT_SAME);
	ASSERT_EQ(r.verdict, CMP_MORE_BYTES);
	ASSERT(r.regressed);

	/* More FLOPs, bytes the same. */
	x.dram_bytes = bytes;
	x.flops = 4 * bytes * 1.02;
	cmp_ops(&b, &x, &opts, &r);
	ASSERT_EQ(r.verdict, CMP_MORE_FLOPS);
	ASSERT(r.regressed);

	/* Fewer bytes and FLOPs: better, not a regression. */
	x.dram_bytes = bytes * 0.5;
	x.flops = 4 * bytes * 0.9;
	cmp_ops(&b, &x, &opts, &r);
	ASSERT_EQ(r.verdict, CMP_FEWER_BYTES);
	ASSERT_EQ(r.flops, CMP_COUNT_FEWER);
	ASSERT(!r.regressed);

	/* Counters taken differently: the bytes are not compared, whichever
	 * way they moved; FLOPs and time still are. */
	{
		struct cmp_opts other = opts;

		other.bytes_incomparable = 1;
		for (int dir = -1; dir <= 1; dir += 2) {
			x.dram_bytes = bytes * (1 + dir * 0.3);
			x.flops = 4 * bytes;
			cmp_ops(&b, &x, &other, &r);
			ASSERT_EQ(r.dram, CMP_COUNT_INCOMPARABLE);
			ASSERT_NEAR(r.dram_change, dir * 0.3, 1e-9);
			ASSERT_EQ(r.verdict, CMP_SAME);
			ASSERT(!r.regressed);
		}
		x.flops = 4 * bytes * 1.02;
		cmp_ops(&b, &x, &other, &r);
		ASSERT_EQ(r.verdict, CMP_MORE_FLOPS);
		ASSERT(r.regressed);
		ASSERT_STR_EQ(cmp_count_name(r.dram), "not-comparable");
	}

	/* A run without counters gives no counter verdict, however different
	 * the (meaningless) numbers look. */
	x.has_counters = 0;
	x.dram_bytes = bytes * 10;
	cmp_ops(&b, &x, &opts, &r);
	ASSERT_EQ(r.dram, CMP_COUNT_NA);
	ASSERT_EQ(r.flops, CMP_COUNT_NA);
	ASSERT(isnan(r.dram_change));
	ASSERT_EQ(r.verdict, CMP_SAME);
	ASSERT(!r.regressed);
	b.has_counters = 0;
	x.has_counters = 1;
	cmp_ops(&b, &x, &opts, &r);
	ASSERT_EQ(r.dram, CMP_COUNT_NA);
	ASSERT(!r.regressed);
	free(v);
}

static void test_faster_but_more_bytes(void)
{
	size_t n = random_odd_n();
	double *v = make_dist(n, 1e5, 0.01), *w = make_dist(n, 0.5e5, 0.01);
	struct cmp_op b = op_with(v, n), x = op_with(w, n);
	struct cmp_result r;

	b.has_counters = x.has_counters = 1;
	b.dram_bytes = 1e9;
	x.dram_bytes = 1.2e9;
	b.flops = x.flops = 0;
	cmp_ops(&b, &x, &opts, &r);
	ASSERT_EQ(r.time, CMP_TIME_FASTER);
	ASSERT_EQ(r.verdict, CMP_MORE_BYTES);
	ASSERT(r.regressed);
	free(v);
	free(w);
}

static void test_launches(void)
{
	size_t n = random_odd_n();
	double *v = make_dist(n, 2e4, 0.02);
	struct cmp_op b = op_with(v, n), x = op_with(v, n);
	struct cmp_result r;

	b.launches = 3;
	x.launches = 1;
	cmp_ops(&b, &x, &opts, &r);
	ASSERT(r.launches_changed);
	ASSERT_EQ(r.base_launches, 3);
	ASSERT_EQ(r.new_launches, 1);
	ASSERT_EQ(r.verdict, CMP_LAUNCHES);
	ASSERT(!r.regressed);
	x.launches = -1;  /* unknown: no change claimed */
	cmp_ops(&b, &x, &opts, &r);
	ASSERT(!r.launches_changed);
	ASSERT_EQ(r.verdict, CMP_SAME);
	free(v);
}

static void test_correctness(void)
{
	size_t n = random_odd_n();
	double *v = make_dist(n, 5e4, 0.02), *w = make_dist(n, 5e3, 0.02);
	struct cmp_op b = op_with(v, n), x = op_with(w, n);
	struct cmp_result r;

	/* Ten times faster, but wrong: the gate fails. */
	x.status = "wrong";
	cmp_ops(&b, &x, &opts, &r);
	ASSERT_EQ(r.verdict, CMP_WRONG);
	ASSERT_EQ(r.time, CMP_TIME_NA);
	ASSERT(r.regressed);
	x.status = "error";
	x.nsamples = 0;
	x.launches = 0;  /* stopped before launching: not a launch change */
	cmp_ops(&b, &x, &opts, &r);
	ASSERT_EQ(r.verdict, CMP_WRONG);
	ASSERT(r.regressed);
	ASSERT(!r.launches_changed);
	ASSERT(isnan(r.new_ns));
	cmp_ops(&x, &b, &opts, &r);
	ASSERT_EQ(r.verdict, CMP_FIXED);
	ASSERT(!r.regressed);
	b.status = "wrong";
	cmp_ops(&b, &x, &opts, &r);
	ASSERT_EQ(r.verdict, CMP_STILL_WRONG);
	ASSERT(!r.regressed);
	free(v);
	free(w);
}

static void test_added_removed(void)
{
	size_t n = random_odd_n();
	double m = rng_uniform(1e3, 1e6), *v = make_dist(n, m, 0.02);
	struct cmp_op x = op_with(v, n);
	struct cmp_result r;

	cmp_ops(NULL, &x, &opts, &r);
	ASSERT_EQ(r.verdict, CMP_ADDED);
	ASSERT(!r.regressed);
	ASSERT(isnan(r.base_ns));
	ASSERT_NEAR(r.new_ns, m, 1e-9);
	cmp_ops(&x, NULL, &opts, &r);
	ASSERT_EQ(r.verdict, CMP_REMOVED);
	ASSERT(!r.regressed);
	ASSERT_NEAR(r.base_ns, m, 1e-9);
	ASSERT(isnan(r.new_ns));
	/* No samples on an ok op: nothing to time, no verdict invented. */
	x.nsamples = 0;
	cmp_ops(&x, &x, &opts, &r);
	ASSERT_EQ(r.time, CMP_TIME_NA);
	ASSERT_EQ(r.verdict, CMP_SAME);
	free(v);
}

static int order(const void *a, const void *b)
{
	return cmp_result_order(a, b);
}

static void test_order(void)
{
	/* Changes in random order; sorted they must come out worst first. */
	const double changes[] = { 0.30, 0.10, 0.0, -0.20, 0.60 };
	const size_t k = sizeof changes / sizeof changes[0];
	struct cmp_result r[6];
	size_t n = random_odd_n();
	double *b = make_dist(n, 1e5, 0.01);

	for (size_t i = 0; i < k; i++) {
		double *x = make_dist(n, 1e5 * (1 + changes[i]), 0.01);
		struct cmp_op ob = op_with(b, n), on = op_with(x, n);

		cmp_ops(&ob, &on, &opts, &r[i]);
		free(x);
	}
	{
		struct cmp_op ob = op_with(b, n), on = op_with(b, n);

		on.status = "wrong";
		cmp_ops(&ob, &on, &opts, &r[k]);
	}
	qsort(r, k + 1, sizeof r[0], order);
	ASSERT_EQ(r[0].verdict, CMP_WRONG);
	ASSERT_EQ(r[1].verdict, CMP_SLOWER);
	ASSERT_NEAR(r[1].time_change, 0.60, 1e-9);
	ASSERT_NEAR(r[2].time_change, 0.30, 1e-9);
	ASSERT_NEAR(r[3].time_change, 0.10, 1e-9);
	ASSERT_EQ(r[4].verdict, CMP_FASTER);
	ASSERT_EQ(r[5].verdict, CMP_SAME);
	ASSERT_STR_EQ(cmp_verdict_name(r[0].verdict), "WRONG");
	ASSERT_STR_EQ(cmp_verdict_name(CMP_MORE_BYTES), "MORE-BYTES");
	ASSERT_STR_EQ(cmp_time_name(CMP_TIME_NA), "n/a");
	ASSERT_STR_EQ(cmp_count_name(CMP_COUNT_MORE), "MORE");
	free(b);
}

/* The matching of two runs' ops: random subsets of a small set of keys,
 * in random order, matched with and without the variant. Every op lands
 * in one row, a pair has equal keys, rows come in key order, and the
 * counts are those of the sets: a key held k times by one run and m by
 * the other gives max(k, m) rows, min(k, m) of them pairs, the first
 * occurrences paired first. */
static void test_match(void)
{
	static const char *const wl[] = { "ln", "softmax", "step/mlp" };
	static const char *const var[] = { "fused", "unfused", "eager" };
	static const char *const shp[] = { "M=1", "M=2" };
	enum { NK = 3 * 3 * 2 };
	struct cmp_key all[NK], b[2 * NK], w[2 * NK];
	size_t nb = 0, nw = 0, n;

	for (int i = 0; i < NK; i++)
		all[i] = (struct cmp_key){ wl[i / 6], var[i / 2 % 3], "fp32", shp[i % 2], 0 };
	for (int i = 0; i < NK; i++) {
		if (rng_next() % 3)
			b[nb++] = all[i];
		if (rng_next() % 3)
			w[nw++] = all[i];
	}
	/* Shuffled: the matching must not rely on the order it is given. */
	for (size_t i = nb; i > 1; i--) {
		size_t j = rng_next() % i;
		struct cmp_key t = b[i - 1];

		b[i - 1] = b[j];
		b[j] = t;
	}
	for (size_t i = nw; i > 1; i--) {
		size_t j = rng_next() % i;
		struct cmp_key t = w[i - 1];

		w[i - 1] = w[j];
		w[j] = t;
	}
	for (int by_path = 0; by_path < 2; by_path++) {
		struct cmp_match *m = cmp_match_ops(b, nb, w, nw, by_path, &n);
		char seen_b[2 * NK] = { 0 }, seen_w[2 * NK] = { 0 };
		size_t want_rows = 0, want_pairs = 0, pairs = 0;

		/* The counts, from the keys: per key (without the variant when
		 * by_path), max and min of the two runs' occurrences. */
		for (int i = 0; i < NK; i++) {
			size_t kb = 0, kw = 0;
			int first = 1;

			for (int j = 0; j < i; j++)
				if (!cmp_key_order(&all[i], &all[j], by_path))
					first = 0;
			if (!first)
				continue;
			for (size_t j = 0; j < nb; j++)
				kb += !cmp_key_order(&all[i], &b[j], by_path);
			for (size_t j = 0; j < nw; j++)
				kw += !cmp_key_order(&all[i], &w[j], by_path);
			want_rows += kb > kw ? kb : kw;
			want_pairs += kb < kw ? kb : kw;
		}
		ASSERT_EQ(n, want_rows);
		for (size_t k = 0; k < n; k++) {
			const struct cmp_key *kk = m[k].base != CMP_NONE ? &b[m[k].base]
								 : &w[m[k].new];

			ASSERT(m[k].base != CMP_NONE || m[k].new != CMP_NONE);
			if (m[k].base != CMP_NONE) {
				ASSERT(m[k].base < nb && !seen_b[m[k].base]);
				seen_b[m[k].base] = 1;
			}
			if (m[k].new != CMP_NONE) {
				ASSERT(m[k].new < nw && !seen_w[m[k].new]);
				seen_w[m[k].new] = 1;
			}
			if (m[k].base != CMP_NONE && m[k].new != CMP_NONE) {
				pairs++;
				ASSERT_EQ(cmp_key_order(&b[m[k].base], &w[m[k].new], by_path), 0);
				/* Only between profiles may the variants differ. */
				if (!by_path)
					ASSERT_STR_EQ(b[m[k].base].variant, w[m[k].new].variant);
			}
			if (k > 0) {
				const struct cmp_key *prev = m[k - 1].base != CMP_NONE
							     ? &b[m[k - 1].base] : &w[m[k - 1].new];

				ASSERT(cmp_key_order(prev, kk, by_path) <= 0);
			}
		}
		ASSERT_EQ(pairs, want_pairs);
		for (size_t i = 0; i < nb; i++)
			ASSERT(seen_b[i]);
		for (size_t i = 0; i < nw; i++)
			ASSERT(seen_w[i]);
		free(m);
	}
	ASSERT(cmp_match_by_path("profile", "profile"));
	ASSERT(!cmp_match_by_path("profile", "run"));
	ASSERT(!cmp_match_by_path(NULL, "profile"));
}

/* Two profiles of one program: each range path pairs across the tags,
 * and a path held twice by one run pairs its first occurrence first. */
static void test_match_profiles(void)
{
	const struct cmp_key b[] = {
		{ "step/fwd", "eager", "", "" }, { "step/bwd", "eager", "", "" },
		{ "step/opt", "eager", "", "" }, { "step/fwd", "eager", "", "" },
	};
	const struct cmp_key w[] = {
		{ "step/bwd", "compiled", "", "" }, { "step/fwd", "compiled", "", "" },
		{ "triton_kernel", "compiled", "", "" },
	};
	size_t n;
	struct cmp_match *m = cmp_match_ops(b, 4, w, 3, 1, &n);

	/* In key order: step/bwd, step/fwd (0 with 1), step/fwd (3 alone),
	 * step/opt, triton_kernel. */
	ASSERT_EQ(n, 5);
	ASSERT_EQ(m[0].base, 1);
	ASSERT_EQ(m[0].new, 0);
	ASSERT_EQ(m[1].base, 0);
	ASSERT_EQ(m[1].new, 1);
	ASSERT_EQ(m[2].base, 3);
	ASSERT(m[2].new == CMP_NONE);
	ASSERT_EQ(m[3].base, 2);
	ASSERT(m[3].new == CMP_NONE);
	ASSERT(m[4].base == CMP_NONE);
	ASSERT_EQ(m[4].new, 2);
	free(m);
	/* By variant too, nothing pairs. */
	m = cmp_match_ops(b, 4, w, 3, 0, &n);
	ASSERT_EQ(n, 7);
	for (size_t k = 0; k < n; k++)
		ASSERT(m[k].base == CMP_NONE || m[k].new == CMP_NONE);
	free(m);
}

int main(void)
{
	const char *env = getenv("FUSEPROF_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0)
			    : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);

	rng_state = seed ? seed : 1;
	fprintf(stderr, "seed %" PRIu64 " (set FUSEPROF_TEST_SEED to repeat)\n", seed);
	for (int round = 0; round < 20; round++) {
		test_stats();
		test_threshold_bound();
		test_noise_bound();
		test_counts();
		test_faster_but_more_bytes();
		test_launches();
		test_correctness();
		test_added_removed();
		test_order();
		test_match();
	}
	test_match_profiles();
	return 0;
}
