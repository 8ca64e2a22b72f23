/* par.c - par_for: chunks of a fixed grain handed out to a team of threads
 * started for the call (see par.h). */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "par.h"

static int par_nthreads;       /* 0: every online CPU */
static _Thread_local int in_par;  /* inside a chunk: nested calls run serially */

struct team {
	void (*fn)(size_t lo, size_t hi, void *arg);
	void *arg;
	size_t n, grain, chunks;
	atomic_size_t next;
};

/* Takes chunks until none is left; every thread runs this, the caller's
 * too, so a thread that could not start costs time, never work. */
static void *work(void *p)
{
	struct team *t = p;
	size_t c;

	in_par = 1;
	while ((c = atomic_fetch_add(&t->next, 1)) < t->chunks) {
		size_t lo = c * t->grain;
		size_t hi = t->n - lo < t->grain ? t->n : lo + t->grain;

		t->fn(lo, hi, t->arg);
	}
	in_par = 0;
	return NULL;
}

size_t par_chunks(size_t n, size_t grain)
{
	if (grain == 0)
		grain = 1;
	return n / grain + (n % grain != 0);
}

size_t par_grain_rows(size_t row_len)
{
	return row_len >= PAR_GRAIN_ELEMS || row_len == 0 ? 1 : PAR_GRAIN_ELEMS / row_len;
}

void par_set_threads(int n)
{
	par_nthreads = n > PAR_MAX_THREADS ? PAR_MAX_THREADS : n < 0 ? 0 : n;
}

int par_threads(void)
{
	long n = par_nthreads;

	if (n == 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > PAR_MAX_THREADS ? PAR_MAX_THREADS : (int)n;
}

void par_for(size_t n, size_t grain,
	     void (*fn)(size_t lo, size_t hi, void *arg), void *arg)
{
	struct team t;
	pthread_t tid[PAR_MAX_THREADS];
	int started = 0, want;

	if (grain == 0)
		grain = 1;
	t.fn = fn;
	t.arg = arg;
	t.n = n;
	t.grain = grain;
	t.chunks = par_chunks(n, grain);
	atomic_init(&t.next, 0);
	want = par_threads();
	if ((size_t)want > t.chunks)
		want = (int)t.chunks;
	if (in_par || want <= 1) {
		int outer = in_par;

		work(&t);
		in_par = outer;
		return;
	}
	while (started < want - 1 &&
	       pthread_create(&tid[started], NULL, work, &t) == 0)
		started++;
	work(&t);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}
