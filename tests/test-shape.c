/* test-shape.c - the sweep shape-spec parser: lists, ranges, products,
 * errors, and a random round trip (seed printed). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shape.h"
#include "test.h"
#include "workload.h"

static const struct fp_param params[] = {
	{ "M", FP_REQUIRED, 1, 1L << 30, "rows" },
	{ "N", FP_REQUIRED, 1, 1L << 20, "row width" },
	{ "erf", 1, 0, 1, "exact GELU" },
	{ NULL, 0, 0, 0, NULL }
};
static const struct workload fake = { .name = "fake", .params = params };

/* Expand spec; assert success and the exact items (NULL-terminated). */
static void expect(const char *spec, const char *const *want)
{
	struct shape_list l = SHAPE_LIST_INIT;
	char why[256] = "";
	size_t n = 0;

	if (shape_expand(spec, &l, why, sizeof why))
		FAIL("'%s' was refused: %s", spec, why);
	while (want[n])
		n++;
	if (l.n != n)
		FAIL("'%s' gave %zu shapes, wanted %zu", spec, l.n, n);
	for (size_t i = 0; i < n; i++)
		ASSERT_STR_EQ(l.items[i], want[i]);
	shape_list_release(&l);
}

/* Expand spec; assert a one-line error mentioning needle. */
static void refuse(const char *spec, const char *needle)
{
	struct shape_list l = SHAPE_LIST_INIT;
	char why[256] = "";

	if (shape_expand(spec, &l, why, sizeof why) == 0)
		FAIL("'%s' was accepted (%zu shapes)", spec, l.n);
	ASSERT(l.n == 0);
	ASSERT(why[0] != '\0');
	ASSERT(strchr(why, '\n') == NULL);
	if (!strstr(why, needle))
		FAIL("error for '%s' does not mention '%s': %s", spec, needle, why);
}

static void test_expand(void)
{
	expect("M=16384,N=768", (const char *[]){ "M=16384,N=768", NULL });
	expect("M=16384,N=768:4096:x2", (const char *[]){ "M=16384,N=768",
		"M=16384,N=1536", "M=16384,N=3072", NULL });
	expect("N=1024:4096:+1024", (const char *[]){ "N=1024", "N=2048", "N=3072",
		"N=4096", NULL });
	expect("M=1|2,N=3|4", (const char *[]){ "M=1,N=3", "M=1,N=4", "M=2,N=3",
		"M=2,N=4", NULL });
	expect("M=1;M=2,N=5", (const char *[]){ "M=1", "M=2,N=5", NULL });
	expect(" M = 8 , N = 1:4:x2 ; ", (const char *[]){ "M=8,N=1", "M=8,N=2",
		"M=8,N=4", NULL });
	expect("N=7|1:3:+1", (const char *[]){ "N=7", "N=1", "N=2", "N=3", NULL });
	expect("N=5:5:x2", (const char *[]){ "N=5", NULL });
	expect("N=-3", (const char *[]){ "N=-3", NULL });
}

static void test_errors(void)
{
	refuse("", "empty");
	refuse(" ; ", "empty");
	refuse("M", "'='");
	refuse("M=", "number");
	refuse("=5", "parameter name");
	refuse("M=1:2", "step");
	refuse("M=2:1:x2", "empty");
	refuse("M=1:8:x1", "at least 2");
	refuse("M=0:8:x2", "starts at 1");
	refuse("M=1:8:+0", "at least 1");
	refuse("M=1:8:*2", "xF");
	refuse("M=1,,N=2", "parameter name");
	refuse("M=abc", "number");
	refuse("M=1)", "unexpected");
	refuse("M=99999999999999999999999", "too large");
	refuse("M=1:5000:+1", "more than");
	refuse("M=1:100:+1,N=1:100:+1", "more than");
}

static void test_sweep(void)
{
	struct fp_shape *s = NULL;
	size_t n = 0;
	char why[256] = "";

	ASSERT_EQ(shape_sweep(&fake, "M=4,N=8|8|16", &s, &n, why, sizeof why), 0);
	ASSERT_EQ(n, 2);  /* repeats dropped */
	ASSERT_EQ(s[0].v[0], 4);
	ASSERT_EQ(s[0].v[1], 8);
	ASSERT_EQ(s[0].v[2], 1);  /* default */
	ASSERT_EQ(s[1].v[1], 16);
	free(s);
	ASSERT(shape_sweep(&fake, "M=4,N=8,Q=1", &s, &n, why, sizeof why) < 0);
	ASSERT(strstr(why, "unknown parameter 'Q'") != NULL);
	ASSERT(s == NULL && n == 0);
	ASSERT(shape_sweep(&fake, "M=4,N=0:4:+2", &s, &n, why, sizeof why) < 0);
	ASSERT(strstr(why, "N=0") != NULL);
	ASSERT(shape_sweep(&fake, "N=4", &s, &n, why, sizeof why) < 0);
	ASSERT(strstr(why, "missing parameter 'M'") != NULL);
}

/* Random lists and ranges: the expansion has exactly the product of the
 * value counts, in order, and every item parses back to its values. */
static void test_random(unsigned seed)
{
	srand(seed);
	for (int iter = 0; iter < 2000; iter++) {
		long vals[2][8];
		int nv[2];
		char spec[512];
		size_t len = 0;
		struct shape_list l = SHAPE_LIST_INIT;
		char why[256];

		for (int p = 0; p < 2; p++) {
			nv[p] = 1 + rand() % 8;
			len += (size_t)snprintf(spec + len, sizeof spec - len, "%s%s=",
						p ? "," : "", p ? "N" : "M");
			for (int i = 0; i < nv[p]; i++) {
				vals[p][i] = 1 + rand() % 100000;
				len += (size_t)snprintf(spec + len, sizeof spec - len, "%s%ld",
							i ? "|" : "", vals[p][i]);
			}
		}
		if (shape_expand(spec, &l, why, sizeof why))
			FAIL("seed %u: '%s' refused: %s", seed, spec, why);
		ASSERT_EQ(l.n, (size_t)(nv[0] * nv[1]));
		for (int i = 0; i < nv[0]; i++)
			for (int j = 0; j < nv[1]; j++) {
				char want[64];

				snprintf(want, sizeof want, "M=%ld,N=%ld", vals[0][i],
					 vals[1][j]);
				ASSERT_STR_EQ(l.items[i * nv[1] + j], want);
			}
		shape_list_release(&l);
	}
}

int main(void)
{
	unsigned seed = (unsigned)time(NULL);

	fprintf(stderr, "test-shape: seed %u\n", seed);
	test_expand();
	test_errors();
	test_sweep();
	test_random(seed);
	return 0;
}
