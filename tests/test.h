/* test.h - assertions for fuseprof's unit tests (automake exit codes:
 * 0 pass, 77 skip, 99 hard error; an assertion failure exits 1). */
#ifndef FP_TEST_H
#define FP_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SKIP 77
#define TEST_HARD_ERROR 99

#define FAIL(...) do { \
	fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); \
	exit(1); \
} while (0)

#define ASSERT(cond) do { \
	if (!(cond)) FAIL("assertion failed: %s", #cond); \
} while (0)

#define ASSERT_EQ(a, b) do { \
	long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_); \
} while (0)

#define ASSERT_STR_EQ(a, b) do { \
	const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_)) \
		FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, \
		     a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
} while (0)

/* |a - b| <= tol * max(1, |b|) */
#define ASSERT_NEAR(a, b, tol) do { \
	double a_ = (a), b_ = (b), t_ = (tol) * (fabs(b_) > 1 ? fabs(b_) : 1); \
	if (!(fabs(a_ - b_) <= t_)) \
		FAIL("%s ~= %s: %.17g vs %.17g (tol %g)", #a, #b, a_, b_, (double)(tol)); \
} while (0)

#define SKIP(...) do { \
	fprintf(stderr, "SKIP: "); \
	fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); \
	exit(TEST_SKIP); \
} while (0)

#endif
