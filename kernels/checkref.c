/* checkref.c - row sampling, dtype encoding, the parallel row compare and
 * the reference cache of the workloads' checks (checkref.h). Plain C. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkref.h"
#include "par.h"
#include "util.h"

long check_sample_rows(long n, double row_cost, uint64_t seed, long **rows)
{
	const long E = CHECK_EDGE_ROWS, B = CHECK_SAMPLE_BLOCK;
	long *r, want, cnt = 0, lo, mid, nb;
	struct fp_rng g;

	if (n < 1) {
		*rows = (long *)xmalloc(sizeof **rows);
		return 0;
	}
	want = (long)((double)CHECK_FULL_ELEMS / (row_cost > 1 ? row_cost : 1));
	if ((double)n * row_cost <= (double)CHECK_FULL_ELEMS || n <= 2 * E + B ||
	    want >= n) {
		r = (long *)xmalloc((size_t)n * sizeof *r);
		for (long i = 0; i < n; i++)
			r[i] = i;
		*rows = r;
		return n;
	}
	mid = n - 2 * E;
	nb = (mid + B - 1) / B;
	want -= 2 * E;
	if (want < nb)
		want = nb;
	r = (long *)xmalloc((size_t)(2 * E + want) * sizeof *r);
	rng_seed(&g, seed);
	for (long i = 0; i < E; i++)
		r[cnt++] = i;
	for (long b = 0; b < nb; b++) {
		long sz = mid - b * B < B ? mid - b * B : B, perm[CHECK_SAMPLE_BLOCK];
		long share = want / nb + (b < want % nb);

		lo = E + b * B;
		if (share > sz)
			share = sz;  /* only the last block can be short */
		for (long i = 0; i < sz; i++)
			perm[i] = i;
		/* Partial Fisher-Yates, then the picks in order. */
		for (long i = 0; i < share; i++) {
			long j = i + (long)(rng_next(&g) % (uint64_t)(sz - i)), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		for (long i = 1; i < share; i++)
			for (long j = i; j > 0 && perm[j - 1] > perm[j]; j--) {
				long t = perm[j];

				perm[j] = perm[j - 1];
				perm[j - 1] = t;
			}
		for (long i = 0; i < share; i++)
			r[cnt++] = lo + perm[i];
	}
	for (long i = n - E; i < n; i++)
		r[cnt++] = i;
	*rows = r;
	return cnt;
}

void check_encode(void *dst, enum fp_dtype dt, const double *v, size_t n)
{
	if (dt == FP_BF16) {
		uint16_t *b = (uint16_t *)dst;

		/* v is a bf16 value already: its float's top half, exactly */
		for (size_t i = 0; i < n; i++) {
			float f = (float)v[i];
			uint32_t u;

			memcpy(&u, &f, 4);
			b[i] = (uint16_t)(u >> 16);
		}
	} else {
		float *f = (float *)dst;

		for (size_t i = 0; i < n; i++)
			f[i] = (float)v[i];
	}
}

void check_decode(double *dst, const void *src, enum fp_dtype dt, size_t n)
{
	if (dt == FP_BF16) {
		const uint16_t *b = (const uint16_t *)src;

		for (size_t i = 0; i < n; i++) {
			uint32_t u = (uint32_t)b[i] << 16;
			float f;

			memcpy(&f, &u, 4);
			dst[i] = f;
		}
	} else {
		const float *f = (const float *)src;

		for (size_t i = 0; i < n; i++)
			dst[i] = f[i];
	}
}

struct cmp_job {
	const char *got;
	enum fp_dtype dt;
	long N;
	const long *rows;
	const double *ref;
	size_t grain;
	struct fp_cmp *part;  /* one per chunk */
};

static void cmp_rows(size_t lo, size_t hi, void *arg)
{
	const struct cmp_job *j = (const struct cmp_job *)arg;
	const size_t es = fp_dtype_size(j->dt), N = (size_t)j->N;
	struct fp_cmp *c = &j->part[lo / j->grain];
	double *row = (double *)xmalloc(N * sizeof *row);

	cmp_init(c);
	for (size_t s = lo; s < hi; s++) {
		check_decode(row, j->got + (size_t)j->rows[s] * N * es, j->dt, N);
		cmp_add(c, row, j->ref + s * N, N);
	}
	free(row);
}

void check_compare_rows(struct fp_cmp *c, const void *got, enum fp_dtype dt,
			long N, const long *rows, long nrows, const double *ref)
{
	struct cmp_job j = { (const char *)got, dt, N, rows, ref,
			     par_grain_rows((size_t)N), NULL };
	size_t nc = par_chunks((size_t)nrows, j.grain);

	j.part = (struct fp_cmp *)xcalloc(nc ? nc : 1, sizeof *j.part);
	par_for((size_t)nrows, j.grain, cmp_rows, &j);
	cmp_init(c);
	for (size_t i = 0; i < nc; i++)
		cmp_merge(c, &j.part[i]);
	free(j.part);
}

void check_note_rows(struct fp_check *r, long compared, long total)
{
	size_t len = strlen(r->detail);

	if (compared >= total || len >= sizeof r->detail)
		return;
	snprintf(r->detail + len, sizeof r->detail - len, "%srows compared: %ld of %ld",
		 len ? "; " : "", compared, total);
}

struct refcache_slot {
	struct ref_key key;
	void *data;
	size_t bytes;
	void (*release)(void *);
	unsigned long long used;  /* 0: empty */
};

static struct refcache_slot slots[REFCACHE_SLOTS];
static unsigned long long refcache_clock;

static int same_key(const struct ref_key *a, const struct ref_key *b)
{
	return !strcmp(a->what, b->what) && !memcmp(a->dims, b->dims, sizeof a->dims) &&
	       a->dt == b->dt && a->profile == b->profile && a->seed == b->seed;
}

static void drop(struct refcache_slot *s)
{
	if (s->used && s->release)
		s->release(s->data);
	memset(s, 0, sizeof *s);
}

void *refcache_find(const struct ref_key *key)
{
	for (int i = 0; i < REFCACHE_SLOTS; i++)
		if (slots[i].used && same_key(&slots[i].key, key)) {
			slots[i].used = ++refcache_clock;
			return slots[i].data;
		}
	return NULL;
}

void refcache_keep(const struct ref_key *key, void *data, size_t bytes,
		   void (*release)(void *))
{
	size_t total = bytes;
	int i;

	if (bytes > REFCACHE_BYTES) {
		release(data);
		return;
	}
	for (i = 0; i < REFCACHE_SLOTS; i++)
		if (slots[i].used && same_key(&slots[i].key, key))
			drop(&slots[i]);
	for (i = 0; i < REFCACHE_SLOTS; i++)
		total += slots[i].bytes;
	/* Evict the least recently used until a slot and the bytes are free. */
	for (;;) {
		int empty = -1, lru = -1;

		for (i = 0; i < REFCACHE_SLOTS; i++) {
			if (!slots[i].used)
				empty = i;
			else if (lru < 0 || slots[i].used < slots[lru].used)
				lru = i;
		}
		if (empty >= 0 && total <= REFCACHE_BYTES) {
			slots[empty].key = *key;
			slots[empty].data = data;
			slots[empty].bytes = bytes;
			slots[empty].release = release;
			slots[empty].used = ++refcache_clock;
			return;
		}
		total -= slots[lru].bytes;
		drop(&slots[lru]);
	}
}

void refcache_clear(void)
{
	for (int i = 0; i < REFCACHE_SLOTS; i++)
		drop(&slots[i]);
}
