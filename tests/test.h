/* test.h - assertions for fuseprof's unit tests (automake exit codes:
 * 0 pass, 77 skip, 99 hard error; an assertion failure exits 1). */
#ifndef FP_TEST_H
#define FP_TEST_H

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>

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

/* A GPU test holds this lock from the moment it knows it has a GPU until it
 * exits, so that GPU tests run one at a time even under make -j: counters
 * admit one profiling session per device, and DRAM counters count every
 * process's traffic (test-probes-gpu checks a copy's bytes to 3%). The
 * shell tests take the same lock with flock(1) (tests/setup, gpu_lock). */
static inline void gpu_test_lock(void)
{
	const char *dir = getenv("top_builddir");
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/tests/gpu-test.lock", dir && *dir ? dir : ".");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0 && flock(fd, LOCK_EX) == 0)
		return;  /* held until the process exits */
	fprintf(stderr, "note: cannot lock %s: GPU tests may overlap\n", path);
}

#endif
