/* util.h - small helpers shared by every module: allocation, strings, numbers, time. */
#ifndef FP_UTIL_H
#define FP_UTIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation that aborts the program on out-of-memory: a profiler that cannot
 * get a few kilobytes of host memory has nothing sensible left to do. */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 1, 2)))
#endif
	;

/* splitmix64's output function applied to x + 0x9e3779b97f4a7c15: a
 * well-mixed 64-bit value for each x, the seed-derivation step of every
 * generator in fuseprof (seeds of ops, input sets, check profiles). */
uint64_t splitmix64(uint64_t x);

/* A growable NUL-terminated string. Initialise with STRBUF_INIT; release with
 * strbuf_release(), which leaves it empty and reusable. */
struct strbuf {
	char *buf;
	size_t len, alloc;
};
#define STRBUF_INIT { NULL, 0, 0 }
void strbuf_add(struct strbuf *sb, const char *s, size_t n);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
void strbuf_reset(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
/* Returns the string ("" when empty); the strbuf still owns it. */
const char *strbuf_str(const struct strbuf *sb);

/* Parse a whole string as a decimal integer / finite double. Returns 0, or -1
 * (and leaves *out alone) if s is empty, has trailing junk or overflows. */
int parse_long(const char *s, long *out);
int parse_double(const char *s, double *out);

/* Is name one of the comma-separated items of list ("a,b,c")? A NULL list
 * has none. */
int list_has(const char *list, const char *name);

/* Write v into buf exactly as snprintf(buf, FMT_G_SIZE, "%.*g", digits, v)
 * would, for finite v and 1 <= digits <= 15, mostly without printf: reports
 * format hundreds of thousands of numbers. Returns the length. */
#define FMT_G_SIZE 32
size_t fmt_g(char *buf, double v, int digits);

/* Median of n doubles (sorts a copy); NaN when n == 0. */
double median_of(const double *v, size_t n);

/* Wall-clock time now as "YYYY-MM-DDTHH:MM:SSZ" (UTC) into buf (>= 21 bytes). */
void utc_now_iso(char *buf, size_t n);

/* Monotonic time in seconds. */
double now_seconds(void);

/* How many parts parallel_for splits n items into: the threads to use
 * ($FUSEPROF_THREADS, else the online CPUs; at most 64), no more than
 * max_parts, and at most one part per min_items items; at least 1. */
int parallel_parts(long n, long min_items, int max_parts);

/* The min_items for rows of row_len elements: a part gets at least
 * PARALLEL_MIN_ELEMS elements (one row if a row is longer), so that a
 * thread's start-up stays small against its work. */
#define PARALLEL_MIN_ELEMS 65536L
long parallel_min_rows(long row_len);

/* Run fn(ctx, part, begin, end) on parallel_parts(n, min_items,
 * max_parts) contiguous slices of [0, n), in order (part p's slice comes
 * before part p + 1's), each on its own thread (the caller's is one of
 * them); returns when all are done. fn must not touch what another part
 * writes: callers keep a slot per part and combine the slots in part
 * order afterwards, so results depend on the number of parts only. */
void parallel_for(long n, long min_items, int max_parts,
		  void (*fn)(void *ctx, int part, long begin, long end), void *ctx);

#ifdef __cplusplus
}
#endif
#endif
