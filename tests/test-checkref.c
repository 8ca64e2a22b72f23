/* test-checkref.c - the checks' shared CPU pieces (kernels/checkref.h):
 * which rows a large check compares (small outputs: every row), dtype
 * encoding round trips, the row compare gives the same bits on any number
 * of threads and counts what a serial compare counts, and the reference
 * cache finds only an exact key and evicts within its bounds; and the
 * launch arithmetic of kernels/kutil.h that the row-group kernels take
 * (row_group_threads). No GPU. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkref.h"
#include "kutil.h"
#include "par.h"
#include "test.h"
#include "util.h"

static void test_sample(void)
{
	long *r, n;

	/* Small outputs: every row, in order. */
	n = check_sample_rows(16384, 768, 1, &r);
	ASSERT_EQ(n, 16384);
	for (long i = 0; i < n; i++)
		ASSERT_EQ(r[i], i);
	free(r);
	n = check_sample_rows(2, 1000003, 1, &r);
	ASSERT_EQ(n, 2);
	free(r);
	/* Large: first and last CHECK_EDGE_ROWS, increasing, every block of
	 * the middle hit, about the budget's rows. */
	for (uint64_t seed = 1; seed < 4; seed++) {
		const long M = 16384 + 37, N = 4096;
		long *r2, n2;
		int *hit;

		n = check_sample_rows(M, N, seed, &r);
		ASSERT(n < M);
		ASSERT(n >= CHECK_FULL_ELEMS / N && n <= CHECK_FULL_ELEMS / N + 2);
		for (long i = 0; i < CHECK_EDGE_ROWS; i++) {
			ASSERT_EQ(r[i], i);
			ASSERT_EQ(r[n - CHECK_EDGE_ROWS + i], M - CHECK_EDGE_ROWS + i);
		}
		hit = calloc((size_t)M, sizeof *hit);
		for (long i = 0; i < n; i++) {
			ASSERT(r[i] >= 0 && r[i] < M);
			if (i)
				ASSERT(r[i] > r[i - 1]);
			hit[(r[i] - CHECK_EDGE_ROWS) / CHECK_SAMPLE_BLOCK + 1]++;
		}
		for (long b = 1; b <= (M - 2 * CHECK_EDGE_ROWS + CHECK_SAMPLE_BLOCK - 1) /
				     CHECK_SAMPLE_BLOCK; b++)
			ASSERT(hit[b] >= 1);
		free(hit);
		/* the same seed, the same rows; another, others */
		n2 = check_sample_rows(M, N, seed, &r2);
		ASSERT(n2 == n && !memcmp(r, r2, (size_t)n * sizeof *r));
		free(r2);
		n2 = check_sample_rows(M, N, seed + 100, &r2);
		ASSERT(n2 != n || memcmp(r, r2, (size_t)n * sizeof *r));
		free(r2);
		free(r);
	}
	/* Rows so wide the budget affords fewer rows than blocks: one a block. */
	n = check_sample_rows(100000, 1e6, 7, &r);
	ASSERT_EQ(n, 2 * CHECK_EDGE_ROWS +
		  (100000 - 2 * CHECK_EDGE_ROWS + CHECK_SAMPLE_BLOCK - 1) / CHECK_SAMPLE_BLOCK);
	free(r);
}

static void test_encode(struct fp_rng *g)
{
	enum fp_dtype dts[] = { FP_F32, FP_BF16 };

	for (int d = 0; d < 2; d++) {
		double v[257], w[257];
		char buf[257 * 4];

		for (int i = 0; i < 257; i++)
			v[i] = 100 * rng_normal(g);
		v[3] = -INFINITY;
		host_round(v, 257, dts[d]);
		check_encode(buf, dts[d], v, 257);
		check_decode(w, buf, dts[d], 257);
		ASSERT(!memcmp(v, w, sizeof v));
	}
}

static void test_compare(struct fp_rng *g)
{
	const long M = 300, N = 1000, nr = 150;
	float *got = malloc((size_t)(M * N) * sizeof *got);
	double *ref = malloc((size_t)(nr * N) * sizeof *ref), *row = malloc((size_t)N * sizeof *row);
	long rows[150];
	struct fp_cmp c1, c, serial;

	for (long i = 0; i < M * N; i++)
		got[i] = (float)rng_normal(g);
	for (long s = 0; s < nr; s++) {
		rows[s] = 2 * s + 1;
		for (long k = 0; k < N; k++)
			ref[s * N + k] = got[rows[s] * N + k] + 1e-3 * rng_normal(g);
	}
	got[7 * N + 5] = NAN;  /* row 7 is compared: one bad element */
	cmp_init(&serial);
	for (long s = 0; s < nr; s++) {
		for (long k = 0; k < N; k++)
			row[k] = got[rows[s] * N + k];
		cmp_add(&serial, row, ref + s * N, (size_t)N);
	}
	par_set_threads(1);
	check_compare_rows(&c1, got, FP_F32, N, rows, nr, ref);
	for (int t = 2; t <= 5; t += 3) {
		par_set_threads(t);
		check_compare_rows(&c, got, FP_F32, N, rows, nr, ref);
		ASSERT(!memcmp(&c, &c1, sizeof c));
	}
	par_set_threads(0);
	ASSERT_EQ(c1.n, serial.n);
	ASSERT_EQ(c1.bad, 1);
	ASSERT_EQ(c1.first_bad, serial.first_bad);
	ASSERT_EQ(c1.first_bad, 3 * N + 5);
	ASSERT_NEAR(c1.sq_err, serial.sq_err, 1e-12);
	ASSERT_NEAR(c1.sq_ref, serial.sq_ref, 1e-12);
	ASSERT(c1.max_abs == serial.max_abs);
	free(got);
	free(ref);
	free(row);
}

static int freed;
static void count_free(void *p)
{
	freed++;
	free(p);
}

static struct ref_key key(const char *what, long m, enum fp_dtype dt, int profile,
			  unsigned long long seed)
{
	struct ref_key k;

	memset(&k, 0, sizeof k);
	snprintf(k.what, sizeof k.what, "%s", what);
	k.dims[0] = m;
	k.dims[1] = 64;
	k.dt = dt;
	k.profile = profile;
	k.seed = seed;
	return k;
}

static void test_cache(void)
{
	struct ref_key k = key("softmax_fwd", 100, FP_F32, 0, 42), o;
	void *p = malloc(8);

	ASSERT(refcache_find(&k) == NULL);
	refcache_keep(&k, p, 8, count_free);
	ASSERT(refcache_find(&k) == p);
	/* Every part of the key counts. */
	o = key("softmax_bwd", 100, FP_F32, 0, 42);
	ASSERT(refcache_find(&o) == NULL);
	o = key("softmax_fwd", 101, FP_F32, 0, 42);
	ASSERT(refcache_find(&o) == NULL);
	o = k;
	o.dims[1] = 65;
	ASSERT(refcache_find(&o) == NULL);
	o = key("softmax_fwd", 100, FP_BF16, 0, 42);
	ASSERT(refcache_find(&o) == NULL);
	o = key("softmax_fwd", 100, FP_F32, 1, 42);
	ASSERT(refcache_find(&o) == NULL);
	o = key("softmax_fwd", 100, FP_F32, 0, 43);
	ASSERT(refcache_find(&o) == NULL);
	/* The same key again replaces the entry. */
	refcache_keep(&k, malloc(8), 8, count_free);
	ASSERT_EQ(freed, 1);
	ASSERT(refcache_find(&k) != p);
	/* At most REFCACHE_SLOTS: the least recently used goes first. */
	for (int i = 1; i <= REFCACHE_SLOTS; i++) {
		o = key("x", i, FP_F32, 0, 1);
		refcache_keep(&o, malloc(8), 8, count_free);
		if (i == REFCACHE_SLOTS - 2)
			ASSERT(refcache_find(&k) != NULL);  /* k used again */
	}
	ASSERT_EQ(freed, 2);  /* entry "x" 1 went, not k */
	o = key("x", 1, FP_F32, 0, 1);
	ASSERT(refcache_find(&o) == NULL);
	ASSERT(refcache_find(&k) != NULL);
	/* Bytes: a too large entry is freed at once; a large one evicts. */
	o = key("huge", 1, FP_F32, 0, 1);
	refcache_keep(&o, malloc(8), REFCACHE_BYTES + 1, count_free);
	ASSERT_EQ(freed, 3);
	ASSERT(refcache_find(&o) == NULL);
	o = key("big", 1, FP_F32, 0, 1);
	refcache_keep(&o, malloc(8), REFCACHE_BYTES, count_free);
	ASSERT(refcache_find(&o) != NULL);
	ASSERT(refcache_find(&k) == NULL);
	ASSERT_EQ(freed, 3 + REFCACHE_SLOTS);
	refcache_clear();
	ASSERT_EQ(freed, 4 + REFCACHE_SLOTS);
	ASSERT(refcache_find(&o) == NULL);
}

/* row_group_threads: a power of two from 32 to most, the fewest that
 * leave each thread at most per_thread units, or most where none does. */
static void test_row_group_threads(void)
{
	static const int most[] = { 128, 256, 1024 }, per[] = { 1, 4, 16 };

	for (size_t a = 0; a < sizeof most / sizeof *most; a++)
		for (size_t b = 0; b < sizeof per / sizeof *per; b++)
			for (long u = 0; u <= 5000; u++) {
				const int t = row_group_threads(u, per[b], most[a]);

				ASSERT(t >= 32 && t <= most[a] && (t & (t - 1)) == 0);
				ASSERT(t == most[a] || (long)t * per[b] >= u);
				ASSERT(t == 32 || (long)(t / 2) * per[b] < u);
			}
	/* the two callers' points: a 768-wide bf16 row is 96 vectors (32
	 * threads of at most 4), 1024 bf16 with its slot of slack 129 (64),
	 * 4096 bf16 513 slots (a block of 256) */
	ASSERT_EQ(row_group_threads(96, 4, 256), 32);
	ASSERT_EQ(row_group_threads(129, 4, 256), 64);
	ASSERT_EQ(row_group_threads(513, 4, 256), 256);
	ASSERT_EQ(row_group_threads(1L << 40, 4, 256), 256);
}

int main(void)
{
	struct fp_rng g;

	rng_seed(&g, 12345);
	test_sample();
	test_encode(&g);
	test_compare(&g);
	test_cache();
	test_row_group_threads();
	return 0;
}
