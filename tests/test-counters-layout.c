/* test-counters-layout.c - where a counter collection's kernels and
 * write-backs sit among its ranges (counters_layout,
 * probes/counters-layout.c), for every layout the collectors make: op
 * replay flushed per op and per kernel, kernel flushes before each kernel,
 * and before and after each (the profiler's, so that what a program writes
 * between two kernels is not charged to the first); counts that cannot be
 * such a collection are refused with the reason. No GPU. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "probes.h"
#include "test.h"

/* The layout of total ranges, and every kernel's range and write-back
 * range joined as "K:W K:W ..." in buf. */
static int lay(int op, int each, int nf, int na, size_t total, char *buf, size_t n,
	       struct counters_layout *l)
{
	char why[256];
	size_t at = 0;

	buf[0] = '\0';
	if (counters_layout(op, each, nf, na, total, l, why, sizeof why))
		return -1;
	for (size_t j = 0; j < l->k; j++)
		at += (size_t)snprintf(buf + at, n - at, "%s%zu:%ld", j ? " " : "",
				       l->lead + j * l->step,
				       counters_layout_writeback(l, j, total));
	return 0;
}

int main(void)
{
	struct counters_layout l;
	char buf[256], why[256];

	/* F K0 F K1 F K2 W: each kernel's write-back is the next F, the
	 * last one's W. */
	ASSERT_EQ(lay(0, 1, 3, 0, 7, buf, sizeof buf, &l), 0);
	ASSERT_EQ(l.k, 3);
	ASSERT(!strcmp(buf, "1:2 3:4 5:6"));
	/* F K0 A0 F K1 A1 F K2 A2 W: each kernel's own A, right after it;
	 * the F between them (what the program wrote in between) and W
	 * charged to nobody. */
	ASSERT_EQ(lay(0, 1, 3, 3, 10, buf, sizeof buf, &l), 0);
	ASSERT_EQ(l.k, 3);
	ASSERT(!strcmp(buf, "1:2 4:5 7:8"));
	ASSERT_EQ(lay(0, 1, 1, 1, 4, buf, sizeof buf, &l), 0);
	ASSERT(!strcmp(buf, "1:2"));
	/* Op replay flushed per op, F K0 K1 K2 W: the op's write-back is
	 * the last kernel's, the others are not measured apart. */
	ASSERT_EQ(lay(1, 0, 0, 0, 5, buf, sizeof buf, &l), 0);
	ASSERT(!strcmp(buf, "1:-1 2:-1 3:4"));
	/* Op replay flushed per kernel, F K0 F K1 W. */
	ASSERT_EQ(lay(1, 1, 2, 0, 5, buf, sizeof buf, &l), 0);
	ASSERT(!strcmp(buf, "1:2 3:4"));
	/* Kernel replay without flushes: the kernels alone. */
	ASSERT_EQ(lay(0, 0, 0, 0, 4, buf, sizeof buf, &l), 0);
	ASSERT_EQ(l.k, 4);
	ASSERT_EQ(l.lead, 0);
	ASSERT_EQ(l.step, 1);
	/* Counts no collection has: a range too many (a kernel launched
	 * where no flush was put around it), an A missing (a failed launch),
	 * A flushes without F ones. */
	ASSERT_EQ(counters_layout(0, 1, 3, 3, 11, &l, why, sizeof why), -1);
	ASSERT(strstr(why, "11 ranges for 3 L2 flushes before kernels and 3 after"));
	ASSERT_EQ(counters_layout(0, 1, 3, 0, 8, &l, why, sizeof why), -1);
	ASSERT(strstr(why, "8 ranges"));
	ASSERT_EQ(counters_layout(0, 1, 3, 2, 9, &l, why, sizeof why), -1);
	ASSERT(strstr(why, "2 L2 flushes after kernels for 3 before them"));
	ASSERT_EQ(counters_layout(0, 0, 0, 2, 4, &l, why, sizeof why), -1);
	ASSERT_EQ(counters_layout(1, 0, 0, 0, 1, &l, why, sizeof why), -1);
	ASSERT(strstr(why, "fewer than the L2 flushes"));
	/* A kernel past the last has no write-back. */
	ASSERT_EQ(lay(0, 1, 3, 3, 10, buf, sizeof buf, &l), 0);
	ASSERT_EQ(counters_layout_writeback(&l, 3, 10), -1);
	printf("ok   counters_layout\n");
	return 0;
}
