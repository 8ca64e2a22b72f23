/* test-par.c - par_for: chunks cover [0, n) once, with boundaries from the
 * grain alone, several at once on several threads; per-chunk partials
 * combined in chunk order give the same bits on 1, 2, 3 and 7 threads;
 * n = 0, grain 0, a nested par_for and one chunk work. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "par.h"
#include "test.h"
#include "util.h"

struct seen {
	size_t n, grain;
	int *hits;               /* per item: how many chunks covered it */
	double *part;            /* per chunk: a sum that depends on order */
	atomic_int live, most;   /* chunks running at once, and the most seen */
	int wait;                /* slow chunks wait for a second one to start */
	pthread_t *who;          /* per chunk: the thread that ran it */
};

static void visit(size_t lo, size_t hi, void *arg)
{
	struct seen *s = arg;
	size_t c = lo / s->grain;
	int now = atomic_fetch_add(&s->live, 1) + 1, m = atomic_load(&s->most);
	double sum = 0;

	while (now > m && !atomic_compare_exchange_weak(&s->most, &m, now))
		;
	ASSERT_EQ(lo % s->grain, 0);
	ASSERT_EQ(hi, lo + s->grain < s->n ? lo + s->grain : s->n);
	for (size_t i = lo; i < hi; i++) {
		s->hits[i]++;  /* items are disjoint across chunks: no race */
		/* irrational steps, so the sum's rounding depends on order */
		sum += 1.0 / (double)(i + 3) * (double)(splitmix64(i) >> 40);
	}
	s->part[c] = sum;
	s->who[c] = pthread_self();
	/* A slow chunk stays until another has started beside it (or 5 s have
	 * passed: then par_for did not run them at once, which run() asserts),
	 * so that a loaded machine, whose threads may start late, cannot make
	 * the overlap look missing. */
	if (hi - lo >= 1000) {
		usleep(2000);
		for (int t = 0; s->wait && atomic_load(&s->most) < 2 && t < 5000; t++)
			usleep(1000);
	}
	atomic_fetch_sub(&s->live, 1);
}

/* par_for over n in chunks of grain on `threads` threads: every item once,
 * and the partials' sum in chunk order (its bits returned in *total). */
static void run(size_t n, size_t grain, int threads, double *total)
{
	struct seen s;
	size_t nc = par_chunks(n, grain), g = grain ? grain : 1;
	int threads_seen = 0;

	memset(&s, 0, sizeof s);
	s.n = n;
	s.grain = g;
	s.wait = threads > 1 && nc > 1 && g >= 1000;
	s.hits = calloc(n + 1, sizeof *s.hits);
	s.part = calloc(nc + 1, sizeof *s.part);
	s.who = calloc(nc + 1, sizeof *s.who);
	ASSERT(s.hits && s.part && s.who);
	ASSERT_EQ(nc, n / g + (n % g != 0));
	par_set_threads(threads);
	ASSERT_EQ(par_threads(), threads);
	par_for(n, grain, visit, &s);
	for (size_t i = 0; i < n; i++)
		ASSERT_EQ(s.hits[i], 1);
	*total = 0;
	for (size_t c = 0; c < nc; c++) {
		*total += s.part[c];
		for (size_t d = 0; d < c && threads_seen < 2; d++)
			if (!pthread_equal(s.who[c], s.who[d]))
				threads_seen = 2;
	}
	ASSERT(atomic_load(&s.most) <= threads);
	/* with several threads and several slow chunks, chunks overlapped
	 * on different threads */
	if (threads > 1 && nc > 1 && g >= 1000) {
		ASSERT(atomic_load(&s.most) >= 2);
		ASSERT_EQ(threads_seen, 2);
	}
	if (threads == 1 || nc <= 1)
		for (size_t c = 0; c < nc; c++)
			ASSERT(pthread_equal(s.who[c], pthread_self()));
	free(s.hits);
	free(s.part);
	free(s.who);
}

static void inner(size_t lo, size_t hi, void *arg)
{
	atomic_long *sum = arg;

	for (size_t i = lo; i < hi; i++)
		atomic_fetch_add(sum, (long)i);
}

static void outer(size_t lo, size_t hi, void *arg)
{
	/* a par_for inside a chunk runs on this thread alone */
	for (size_t i = lo; i < hi; i++)
		par_for(100, 7, inner, arg);
}

int main(void)
{
	const int counts[] = { 1, 2, 3, 7 };
	double ref, t;
	atomic_long sum = 0;

	/* Same bits on any number of threads, for awkward n and grains. */
	for (size_t k = 0; k < 4; k++) {
		size_t n = (size_t[]){ 100003, 5000, 7, 64 }[k];
		size_t grain = (size_t[]){ 1000, 1000, 3, 64 }[k];

		run(n, grain, 1, &ref);
		for (size_t j = 1; j < ARRAY_SIZE(counts); j++) {
			run(n, grain, counts[j], &t);
			ASSERT(memcmp(&t, &ref, sizeof t) == 0);
		}
	}
	run(0, 10, 4, &t);          /* nothing to do */
	ASSERT(t == 0);
	run(10, 0, 4, &t);          /* grain 0 counts as 1 */
	run(5, 1000, 4, &t);        /* one chunk: the caller's thread */
	ASSERT_EQ(par_chunks(0, 5), 0);
	ASSERT_EQ(par_chunks(10, 5), 2);
	ASSERT_EQ(par_chunks(11, 5), 3);
	ASSERT_EQ(par_grain_rows(1), PAR_GRAIN_ELEMS);
	ASSERT_EQ(par_grain_rows(1000), PAR_GRAIN_ELEMS / 1000);
	ASSERT_EQ(par_grain_rows(1 << 20), 1);
	ASSERT_EQ(par_grain_rows(0), 1);

	par_set_threads(4);
	par_for(10, 1, outer, &sum);
	ASSERT_EQ(atomic_load(&sum), 10L * (99 * 100 / 2));

	/* The default is every online CPU, capped. */
	par_set_threads(0);
	ASSERT(par_threads() >= 1 && par_threads() <= PAR_MAX_THREADS);
	ASSERT_EQ(par_threads(), sysconf(_SC_NPROCESSORS_ONLN) > PAR_MAX_THREADS
		  ? PAR_MAX_THREADS : sysconf(_SC_NPROCESSORS_ONLN));
	par_set_threads(100000);
	ASSERT_EQ(par_threads(), PAR_MAX_THREADS);
	par_set_threads(-3);
	ASSERT(par_threads() >= 1);
	return 0;
}
