/* par.h - a parallel for over [0, n) in chunks of a fixed grain, on every
 * online CPU: what the checks' CPU references and input draws run on. */
#ifndef FP_PAR_H
#define FP_PAR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Call fn(lo, hi, arg) once for each chunk [c grain, min(n, (c + 1) grain))
 * of [0, n), c = 0 .. par_chunks(n, grain) - 1, on up to par_threads()
 * threads (the caller's is one of them); returns when every chunk is done.
 * Chunks are handed out in order but run in any order and at once, so fn
 * must write only what its chunk owns. Chunk boundaries come from grain
 * alone, never from the thread count: a caller that keeps one partial
 * result per chunk (index lo / grain) and combines the partials in chunk
 * order gets the same bits on any number of threads. One chunk runs on the
 * caller's thread alone, and so does a par_for inside fn. grain 0 counts
 * as 1; n = 0 calls nothing. */
void par_for(size_t n, size_t grain,
	     void (*fn)(size_t lo, size_t hi, void *arg), void *arg);

/* How many chunks par_for(n, grain, ...) makes: ceil(n / grain). */
size_t par_chunks(size_t n, size_t grain);

/* The grain for rows of row_len elements: rows of about PAR_GRAIN_ELEMS
 * elements in all (at least one row), so a chunk's work dwarfs handing it
 * out. Depends on row_len only. */
#define PAR_GRAIN_ELEMS 65536
size_t par_grain_rows(size_t row_len);

/* Use n threads from now on (tests: results do not depend on it); n <= 0
 * goes back to the default, every online CPU (sysconf), at most
 * PAR_MAX_THREADS. Not to be called while a par_for runs. */
#define PAR_MAX_THREADS 256
void par_set_threads(int n);

/* The threads par_for uses now (at least 1). */
int par_threads(void);

#ifdef __cplusplus
}
#endif
#endif
