/* test-busy.c - busy_time (lib/util.c), an op's time when its kernels may
 * overlap: random sets of spans against a count of the covered
 * nanoseconds one by one, and the cases by hand (none, disjoint: the sum
 * of the lengths; nested; touching; one programmatic launch that starts
 * before its predecessor ends; empty and reversed spans). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

static uint64_t state;

static uint64_t next(void)
{
	return splitmix64(state++);
}

/* The covered nanoseconds counted one by one on [base, base + 512). */
static uint64_t covered(const struct span *v, size_t n, uint64_t base)
{
	uint64_t c = 0;

	for (uint64_t t = base; t < base + 512; t++)
		for (size_t i = 0; i < n; i++)
			if (v[i].start <= t && t < v[i].end) {
				c++;
				break;
			}
	return c;
}

static uint64_t busy_of(const struct span *v, size_t n)
{
	struct span c[8];

	memcpy(c, v, n * sizeof *c);
	return busy_time(c, n);
}

int main(void)
{
	unsigned long long seed = (unsigned long long)time(NULL) ^ (unsigned long long)getpid();

	fprintf(stderr, "seed %llu\n", seed);
	state = seed;
	{
		const struct span disjoint[] = { { 100, 250 }, { 300, 320 }, { 10, 40 } };
		const struct span nested[] = { { 100, 400 }, { 150, 200 }, { 390, 400 } };
		const struct span touching[] = { { 100, 200 }, { 200, 300 } };
		/* A rows kernel, then a column sum launched programmatically
		 * that starts 7 ns before the rows kernel ends. */
		const struct span pdl[] = { { 1000, 2000 }, { 1993, 2050 } };
		const struct span empty[] = { { 50, 50 }, { 80, 60 }, { 10, 20 } };

		ASSERT_EQ(busy_time(NULL, 0), 0);
		ASSERT_EQ(busy_of(disjoint, 3), 150 + 20 + 30);
		ASSERT_EQ(busy_of(nested, 3), 300);
		ASSERT_EQ(busy_of(touching, 2), 200);
		ASSERT_EQ(busy_of(pdl, 2), 1050);
		ASSERT_EQ(busy_of(empty, 3), 10);
	}
	for (int i = 0; i < 20000; i++) {
		const uint64_t base = (next() & 1) ? 0 : (uint64_t)1 << 62;
		struct span v[8];
		const size_t n = 1 + next() % 8;
		uint64_t want, got;

		for (size_t j = 0; j < n; j++) {
			v[j].start = base + next() % 480;
			v[j].end = v[j].start + next() % (next() % 4 ? 40 : 200);
			if (v[j].end > base + 512)
				v[j].end = base + 512;
		}
		want = covered(v, n, base);
		got = busy_of(v, n);
		if (got != want) {
			fprintf(stderr, "set %d: busy_time %llu, covered %llu\n", i,
				(unsigned long long)got, (unsigned long long)want);
			return 1;
		}
	}
	return 0;
}
