/* util.c - allocation, string, number and time helpers. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static void oom(size_t n)
{
	fprintf(stderr, "fuseprof: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

char *xasprintf(const char *fmt, ...)
{
	char small[128], *s;
	va_list ap;
	int n;

	/* Most results are short (a number, a path): format once into a
	 * stack buffer; only longer ones are formatted a second time. */
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	s = xmalloc((size_t)n + 1);
	if ((size_t)n < sizeof small) {
		memcpy(s, small, (size_t)n + 1);
		return s;
	}
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* The fast path scales v by a power of ten into [10^(digits-1), 10^digits)
 * with one correctly rounded multiply or divide (relative error at most
 * 2^-53), so the nearest integer is the exact value's unless the scaled
 * value sits within that error of a rounding boundary (a half, or the
 * ends of the range): those, and the extremes, go to snprintf. */
size_t fmt_g(char *buf, double v, int digits)
{
	static const double p10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};
	double a = fabs(v), m = 0, lo, hi, tol, fl, frac;
	char d[16], *p = buf;
	int e, x, nd, tries;
	long long n;

	if (digits < 1 || digits > 15 || !isfinite(v) || a < 1e-280 || a > 1e280)
		goto slow;
	lo = p10[digits - 1];
	hi = p10[digits];
	e = (int)floor(log10(a));
	for (tries = 0; tries < 3; tries++) {
		int k = digits - 1 - e;

		if (k > 22 || k < -22)
			goto slow;
		m = k >= 0 ? a * p10[k] : a / p10[-k];
		if (m < lo)
			e--;
		else if (m >= hi)
			e++;
		else
			break;
	}
	tol = m * 0x1p-51;
	if (tries == 3 || m - lo <= tol || hi - m <= tol)
		goto slow;
	fl = floor(m);
	frac = m - fl;
	if (fabs(frac - 0.5) <= tol)
		goto slow;
	n = (long long)fl + (frac > 0.5);
	x = e;
	if (n == (long long)hi) {
		n = (long long)lo;
		x++;
	}
	for (int i = digits - 1; i >= 0; i--, n /= 10)
		d[i] = (char)('0' + n % 10);
	for (nd = digits; nd > 1 && d[nd - 1] == '0'; nd--)
		;
	if (signbit(v))
		*p++ = '-';
	if (x < -4 || x >= digits) {
		*p++ = d[0];
		if (nd > 1) {
			*p++ = '.';
			memcpy(p, d + 1, (size_t)nd - 1);
			p += nd - 1;
		}
		*p++ = 'e';
		*p++ = x < 0 ? '-' : '+';
		x = abs(x);
		if (x >= 100)
			*p++ = (char)('0' + x / 100);
		*p++ = (char)('0' + x / 10 % 10);
		*p++ = (char)('0' + x % 10);
		*p = 0;
	} else if (x >= 0) {
		memcpy(p, d, (size_t)x + 1);
		p += x + 1;
		if (nd > x + 1) {
			*p++ = '.';
			memcpy(p, d + x + 1, (size_t)(nd - x - 1));
			p += nd - x - 1;
		}
		*p = 0;
	} else {
		*p++ = '0';
		*p++ = '.';
		for (int i = 0; i < -x - 1; i++)
			*p++ = '0';
		memcpy(p, d, (size_t)nd);
		p += nd;
		*p = 0;
	}
	return (size_t)(p - buf);
slow:
	return (size_t)snprintf(buf, FMT_G_SIZE, "%.*g", digits, v);
}

static void strbuf_grow(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->alloc)
		return;
	sb->alloc = (sb->len + extra + 1) * 3 / 2 + 32;
	sb->buf = xrealloc(sb->buf, sb->alloc);
}

void strbuf_add(struct strbuf *sb, const char *s, size_t n)
{
	strbuf_grow(sb, n);
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	strbuf_grow(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void strbuf_release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}

const char *strbuf_str(const struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

int parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return 1;
		p += len + (e ? 1 : 0);
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median_of(const double *v, size_t n)
{
	double *c, m;

	if (n == 0)
		return NAN;
	c = xmalloc(n * sizeof *c);
	memcpy(c, v, n * sizeof *c);
	qsort(c, n, sizeof *c, cmp_double);
	m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
	free(c);
	return m;
}

static int cmp_span(const void *a, const void *b)
{
	uint64_t x = ((const struct span *)a)->start, y = ((const struct span *)b)->start;

	return (x > y) - (x < y);
}

uint64_t busy_time(struct span *v, size_t n)
{
	uint64_t busy = 0, lo = 0, hi = 0;
	int open = 0;

	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, cmp_span);
	for (size_t i = 0; i < n; i++) {
		if (v[i].end <= v[i].start)
			continue;
		if (open && v[i].start <= hi) {
			if (v[i].end > hi)
				hi = v[i].end;
			continue;
		}
		if (open)
			busy += hi - lo;
		lo = v[i].start;
		hi = v[i].end;
		open = 1;
	}
	return open ? busy + hi - lo : busy;
}

void utc_now_iso(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

const char *json_escape(unsigned char c, char buf[8])
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	default:
		if (c >= 0x20)
			return NULL;
		snprintf(buf, 8, "\\u%04x", c);
		return buf;
	}
}

void strbuf_add_json(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run = p;
	char buf[8];

	strbuf_addstr(sb, "\"");
	for (; *p; p++) {
		const char *e = json_escape(*p, buf);

		if (!e)
			continue;
		strbuf_add(sb, (const char *)run, (size_t)(p - run));
		strbuf_addstr(sb, e);
		run = p + 1;
	}
	strbuf_add(sb, (const char *)run, (size_t)(p - run));
	strbuf_addstr(sb, "\"");
}
