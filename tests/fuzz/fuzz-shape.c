/* fuzz-shape.c - fuzz target for the sweep shape parser (src/shape.c).
 *
 * In `make check` it is a random-input driver with a fixed budget
 * ($FUZZ_SHAPE_ITERS inputs, default 30000; seed printed, or taken from
 * $FUZZ_SHAPE_SEED to replay). Built with -DFUZZ_LIBFUZZER and
 * -fsanitize=fuzzer it is a libFuzzer target instead:
 *   clang -DFUZZ_LIBFUZZER -fsanitize=fuzzer,address -Ilib -Isrc -Ikernels -I. \
 *     tests/fuzz/fuzz-shape.c src/shape.c lib/util.c lib/error.c \
 *     kernels/registry.c -o fuzz-shape
 * Invariants: no crash; success gives 1..SHAPE_MAX_EXPANSION items, each
 * "NAME=INT(,NAME=INT)*"; failure gives a non-empty one-line reason and
 * leaves the list unchanged. */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shape.h"
#include "workload.h"

static const struct fp_param params[] = {
	{ "M", FP_REQUIRED, 1, 1L << 30, "rows" },
	{ "N", 64, 1, 1L << 20, "row width" },
	{ "K", 1, -5, 5, "small" },
	{ NULL, 0, 0, 0, NULL }
};
static const struct workload fake = { .name = "fake", .params = params };

static void die(const char *what, const char *input)
{
	fprintf(stderr, "fuzz-shape: %s on input '%s'\n", what, input);
	abort();
}

static int well_formed(const char *s)
{
	const char *p = s;

	for (;;) {
		if (!isalpha((unsigned char)*p) && *p != '_' && !isdigit((unsigned char)*p))
			return 0;
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		if (*p++ != '=')
			return 0;
		if (*p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return 0;
		while (isdigit((unsigned char)*p))
			p++;
		if (*p == '\0')
			return 1;
		if (*p++ != ',')
			return 0;
	}
}

static void one(const char *input)
{
	struct shape_list l = SHAPE_LIST_INIT;
	struct fp_shape *s = NULL;
	char why[256];
	size_t n = 0;

	why[0] = '\0';
	if (shape_expand(input, &l, why, sizeof why) == 0) {
		if (l.n < 1 || l.n > SHAPE_MAX_EXPANSION)
			die("bad expansion count", input);
		for (size_t i = 0; i < l.n; i++)
			if (!well_formed(l.items[i]))
				die("malformed item", input);
	} else {
		if (l.n != 0)
			die("list changed on failure", input);
		if (!why[0] || strchr(why, '\n'))
			die("empty or multi-line reason", input);
	}
	shape_list_release(&l);
	why[0] = '\0';
	if (shape_sweep(&fake, input, &s, &n, why, sizeof why) == 0) {
		if (n < 1 || !s)
			die("sweep returned nothing", input);
		for (size_t i = 0; i < n; i++)
			if (s[i].v[0] < 1 || s[i].v[2] < -5 || s[i].v[2] > 5)
				die("out-of-range value accepted", input);
	} else if (!why[0] || s || n) {
		die("sweep failed without a reason", input);
	}
	free(s);
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	memcpy(s, data, size);
	s[size] = '\0';
	one(s);
	free(s);
	return 0;
}
#else
/* Mostly grammar characters, so inputs get deep into the parser. */
static const char alphabet[] = "MNKQ_=,;|:x+-0123456789 \t";

static void grammar(char *buf, size_t n)
{
	static const char *const names[] = { "M", "N", "K", "Q" };
	size_t len = 0;
	int na = 1 + rand() % 3;

	for (int a = 0; a < na && len + 40 < n; a++) {
		int items = 1 + rand() % 3;

		len += (size_t)snprintf(buf + len, n - len, "%s%s=", a ? (rand() % 5 ? "," : ";") : "",
					names[rand() % 4]);
		for (int it = 0; it < items && len + 30 < n; it++) {
			long lo = rand() % 40 - 3, hi = lo + rand() % 64;

			if (rand() % 2)
				len += (size_t)snprintf(buf + len, n - len, "%s%ld", it ? "|" : "", lo);
			else
				len += (size_t)snprintf(buf + len, n - len, "%s%ld:%ld:%c%d",
							it ? "|" : "", lo, hi, rand() % 2 ? 'x' : '+',
							rand() % 5);
		}
	}
	if (len && rand() % 3 == 0)
		buf[rand() % len] = alphabet[rand() % (sizeof alphabet - 1)];
}

int main(void)
{
	const char *it = getenv("FUZZ_SHAPE_ITERS"), *sd = getenv("FUZZ_SHAPE_SEED");
	long iters = it ? atol(it) : 30000;
	unsigned seed = sd ? (unsigned)strtoul(sd, NULL, 10) : (unsigned)time(NULL);
	char buf[96];
	long ok = 0;

	fprintf(stderr, "fuzz-shape: seed %u, %ld inputs\n", seed, iters);
	srand(seed);
	for (long i = 0; i < iters; i++) {
		int len = rand() % (int)(sizeof buf - 1);

		for (int j = 0; j < len; j++)
			buf[j] = rand() % 16 ? alphabet[rand() % (sizeof alphabet - 1)]
					     : (char)(1 + rand() % 255);
		buf[len] = '\0';
		/* Half the inputs follow the grammar, then maybe get one byte
		 * changed: they reach the range and product code. */
		if (i % 2)
			grammar(buf, sizeof buf);
		one(buf);
		{
			struct shape_list l = SHAPE_LIST_INIT;
			char why[256];

			ok += shape_expand(buf, &l, why, sizeof why) == 0;
			shape_list_release(&l);
		}
	}
	fprintf(stderr, "fuzz-shape: %ld of %ld inputs parsed\n", ok, iters);
	/* A driver that never reaches a valid input tests nothing. */
	return ok > 0 ? 0 : 1;
}
#endif
