/* checkref.h - what the workloads' checks share on the CPU: the sample of
 * rows a large check compares, dtype encoding of host inputs, a compare
 * over rows on every core, and the cache of the last references, so the
 * variants of one case checked on the same inputs compute them once.
 * C and C++ (nvcc) clean. */
#ifndef FP_CHECKREF_H
#define FP_CHECKREF_H

#include <stddef.h>
#include <stdint.h>

#include "kutil.h"
#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A check compares every row of an output whose reference costs at most
 * this many element-operations (an element of a row-wise reference, about
 * 10-40 ns of one core), else a sample of rows (check_sample_rows). The
 * tests' shapes stay below it, so they check every row. */
#define CHECK_FULL_ELEMS (1L << 24)
/* Rows taken whole from each end of a sampled output (first and last
 * tiles, the tail), and the block size within which the rows between get
 * at least one sampled row each: every kernel here handles rows in tiles
 * of at most 64. */
#define CHECK_EDGE_ROWS 64L
#define CHECK_SAMPLE_BLOCK 64L

/* The rows of an n-row output a check compares when one row's reference
 * costs row_cost: all n when n * row_cost <= CHECK_FULL_ELEMS; else the
 * first and last CHECK_EDGE_ROWS rows and, between them, as many rows as
 * the budget affords (never fewer than one per CHECK_SAMPLE_BLOCK rows),
 * spread evenly over the blocks at offsets drawn from seed. Returns the
 * count and *rows (strictly increasing; xmalloc'ed, the caller frees). */
long check_sample_rows(long n, double row_cost, uint64_t seed, long **rows);

/* Write n values (already rounded to dt: host_round) into dst as dt's
 * bytes, what the device holds. */
void check_encode(void *dst, enum fp_dtype dt, const double *v, size_t n);
/* n elements of dt's bytes from src into doubles (exact). */
void check_decode(double *dst, const void *src, enum fp_dtype dt, size_t n);

/* Compare the rows rows[0..nrows) of got (an output of rows of N elements
 * of dt, as downloaded) with ref (nrows x N doubles, row s the reference
 * of rows[s]) into *c (cmp_init'ed here): on every core, in chunks of rows
 * whose comparisons merge in row order, so the result does not depend on
 * the number of threads. */
void check_compare_rows(struct fp_cmp *c, const void *got, enum fp_dtype dt,
			long N, const long *rows, long nrows, const double *ref);

/* After a check's check_output calls: when compared < total rows, say so
 * in r->detail ("rows compared: 4224 of 16384", after the failure's
 * reason when it failed). */
void check_note_rows(struct fp_check *r, long compared, long total);

/* What a cached reference was computed for: every part must match. what
 * names the workload and any choice that changes the reference (e.g.
 * "ln_gelu_bwd erf=1"); dims the shape. */
struct ref_key {
	char what[48];
	long dims[4];
	enum fp_dtype dt;
	int profile;
	unsigned long long seed;
};

/* The cache keeps the references (and the inputs they were computed on)
 * of the last REFCACHE_SLOTS checks, at most REFCACHE_BYTES in all, the
 * least recently used going first; an entry larger than that is not kept.
 * Entries live until evicted or refcache_clear(); the process's exit
 * frees the rest. Checks run one at a time: it takes no lock. */
#define REFCACHE_SLOTS 8
#define REFCACHE_BYTES (4ull << 30)

/* The data kept under key, or NULL. It stays valid until the next
 * refcache_keep or refcache_clear. */
void *refcache_find(const struct ref_key *key);
/* Keep data (bytes large) under key; the cache owns it from now on and
 * frees it with release(data), at once if it cannot keep it. */
void refcache_keep(const struct ref_key *key, void *data, size_t bytes,
		   void (*release)(void *));
/* Free every entry. */
void refcache_clear(void);

#ifdef __cplusplus
}
#endif
#endif
