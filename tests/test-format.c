/* test-format.c - fmt_g against snprintf's "%.*g" on random doubles of
 * every magnitude, decimal-looking values, exact halves and neighbours of
 * powers of ten: the reports' numbers must not change by a character. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "table.h"
#include "test.h"
#include "util.h"

static uint64_t state;

static uint64_t next(void)  /* xorshift64* */
{
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545f4914f6cdd1dull;
}

static double uniform(void)
{
	return (double)(next() >> 11) * 0x1p-53;
}

static int check(double v, int digits)
{
	char want[64], got[FMT_G_SIZE];
	size_t n;

	snprintf(want, sizeof want, "%.*g", digits, v);
	n = fmt_g(got, v, digits);
	if (strcmp(want, got) || n != strlen(want)) {
		fprintf(stderr, "%.17g at %d digits: fmt_g '%s', printf '%s'\n",
			v, digits, got, want);
		return 1;
	}
	return 0;
}

/* A table's cells print numbers as "%.*g" too, integers by a shorter
 * path: whole numbers of every size and sign, near 10^digits, and -0. */
static long check_table(long *tested)
{
	static const char *const hdr[] = { "v" };
	struct table t;
	double v[4096];
	int digits[4096];
	long fails = 0;
	size_t n = 0;

	table_init(&t, 1, hdr);
	for (int d = 1; d <= 15; d++) {
		double p = pow(10, d);
		const double edge[] = { 0.0, -0.0, 1, -1, p - 1, p, p + 1, -(p - 1), -p,
					p / 10, p * 10, 0.5, -2.5 };

		for (size_t i = 0; i < ARRAY_SIZE(edge); i++, n++) {
			v[n] = edge[i];
			digits[n] = d;
		}
	}
	while (n < ARRAY_SIZE(v)) {
		int e = (int)(next() % 19);

		v[n] = floor(uniform() * pow(10, e)) * ((next() & 1) ? 1 : -1);
		digits[n++] = 1 + (int)(next() % 15);
	}
	for (size_t i = 0; i < n; i++)
		table_add_double(&t, v[i], digits[i]);
	for (size_t i = 0; i < n; i++) {
		char want[64];

		snprintf(want, sizeof want, "%.*g", digits[i], v[i]);
		if (strcmp(want, t.cells[i].text)) {
			fprintf(stderr, "%.17g at %d digits: table '%s', printf '%s'\n",
				v[i], digits[i], t.cells[i].text, want);
			fails++;
		}
		(*tested)++;
	}
	table_release(&t);
	return fails;
}

int main(void)
{
	unsigned long long seed = (unsigned long long)time(NULL) ^ (unsigned long long)getpid();
	long fails = 0, tested = 0;

	fprintf(stderr, "seed %llu\n", seed);
	state = seed | 1;
	for (long i = 0; i < 40000; i++) {
		uint64_t bits = next();
		double v[6];
		int k = (int)(next() % 31) - 15;

		/* Any bit pattern; a value of any decade; a decimal with few
		 * digits; an exact half; a neighbour of a power of ten. */
		memcpy(&v[0], &bits, sizeof v[0]);
		v[1] = (uniform() * 2 - 1) * pow(10, (int)(next() % 80) - 40);
		v[2] = (double)(next() % 100000) / pow(10, (int)(next() % 8));
		v[3] = ((double)(next() % 20000) + 0.5) * pow(10, k % 6);
		v[4] = nextafter(pow(10, k), (next() & 1) ? INFINITY : 0);
		v[5] = (double)(next() % 1000000000000ull) * pow(10, k);
		for (int j = 0; j < 6; j++) {
			if (!isfinite(v[j]))
				continue;
			for (int d = 1; d <= 15; d++) {
				fails += check(v[j], d);
				tested++;
			}
		}
		if (fails > 20)
			break;
	}
	/* The edges by hand. */
	{
		const double edge[] = { 0.0, -0.0, 1, -1, 0.5, 9.5, 0.0001, 0.00001,
					99999.5, 1e15, 1e-5, 123456789012345.0, 1e300,
					4.9e-324, 1.7976931348623157e308, 2.5, 0.125 };

		for (size_t i = 0; i < ARRAY_SIZE(edge); i++)
			for (int d = 1; d <= 15; d++) {
				fails += check(edge[i], d);
				tested++;
			}
	}
	fails += check_table(&tested);
	fprintf(stderr, "%ld numbers compared, %ld differ\n", tested, fails);
	ASSERT(tested > 1000000);
	ASSERT_EQ(fails, 0);
	return 0;
}
