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

/* How a JSON string writes byte c: NULL when as itself, else its escape
 * (backslash-quote, backslash-n, backslash-u0001: the form of RFC 8259),
 * written into buf (8 bytes) when it needs one. Bytes of 0x80 and above
 * pass as they are (UTF-8). */
const char *json_escape(unsigned char c, char buf[8]);

/* Append s to sb as a JSON string, quotes included. */
void strbuf_add_json(struct strbuf *sb, const char *s);

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

/* A stretch of time [start, end) in ns: a kernel's run. */
struct span {
	uint64_t start, end;
};

/* The time covered by at least one of n spans: the sum of their lengths
 * where none overlap, a stretch several cover counted once (a kernel
 * launched programmatically starts while its predecessor runs). Sorts v in
 * place by start; 0 when n == 0. An empty or reversed span covers nothing. */
uint64_t busy_time(struct span *v, size_t n);

/* Wall-clock time now as "YYYY-MM-DDTHH:MM:SSZ" (UTC) into buf (>= 21 bytes). */
void utc_now_iso(char *buf, size_t n);

/* Monotonic time in seconds. */
double now_seconds(void);

#ifdef __cplusplus
}
#endif
#endif
