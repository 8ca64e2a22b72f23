/* test-parallel.c - parallel_for: slices cover [0, n) once, contiguous and
 * in part order, on several threads at once; the part count follows
 * FUSEPROF_THREADS, max_parts and min_items; n = 0 and n < parts work. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "util.h"

struct seen {
	long n;
	int *hits;          /* per item: how many parts covered it */
	long begin[64], end[64];
	pthread_t who[64];
	double sum[64];     /* per part: the sum of its items */
};

static void visit(void *ctx, int part, long begin, long end)
{
	struct seen *s = ctx;

	s->begin[part] = begin;
	s->end[part] = end;
	s->who[part] = pthread_self();
	for (long i = begin; i < end; i++) {
		s->hits[i]++;  /* items are disjoint across parts: no race */
		s->sum[part] += (double)i;
	}
}

static int run(long n, long min_items, int max_parts, int want_parts)
{
	struct seen s;
	int np = parallel_parts(n, min_items, max_parts);
	double total = 0;

	memset(&s, 0, sizeof s);
	s.n = n;
	s.hits = calloc((size_t)(n ? n : 1), sizeof *s.hits);
	ASSERT(s.hits != NULL);
	ASSERT_EQ(np, want_parts);
	parallel_for(n, min_items, max_parts, visit, &s);
	for (long i = 0; i < n; i++)
		ASSERT_EQ(s.hits[i], 1);
	ASSERT_EQ(s.begin[0], 0);
	ASSERT_EQ(s.end[np - 1], n);
	for (int p = 0; p < np; p++) {
		ASSERT(s.end[p] >= s.begin[p]);
		if (p)
			ASSERT_EQ(s.begin[p], s.end[p - 1]);
		/* balanced: sizes differ by at most one */
		ASSERT(s.end[p] - s.begin[p] >= n / np && s.end[p] - s.begin[p] <= n / np + 1);
		total += s.sum[p];
	}
	ASSERT(total == (double)n * (double)(n - 1) / 2);
	/* with several parts, at least two ran on different threads */
	if (np > 1)
		ASSERT(!pthread_equal(s.who[0], s.who[np - 1]));
	free(s.hits);
	return 0;
}

int main(void)
{
	setenv("FUSEPROF_THREADS", "8", 1);
	run(1000003, 1, 64, 8);
	run(1000, 1, 3, 3);         /* max_parts caps */
	run(1000, 300, 64, 3);      /* at most one part per 300 items */
	run(5, 1, 64, 5);           /* fewer items than threads */
	run(0, 1, 64, 1);           /* nothing to do: one empty part */
	run(1, 1000, 64, 1);
	setenv("FUSEPROF_THREADS", "1", 1);
	run(100000, 1, 64, 1);
	setenv("FUSEPROF_THREADS", "100", 1);
	run(100000, 1, 1000, 64);   /* at most 64 threads */
	unsetenv("FUSEPROF_THREADS");
	ASSERT(parallel_parts(1L << 30, 1, 64) >= 1);
	return 0;
}
