/* counters-layout.c - where a counter collection's kernels and L2
 * write-backs sit among its ranges (counters_layout): the index arithmetic
 * of counters.cu's evaluate(), apart from CUPTI so that it can be tested
 * without a GPU. */
#include "config.h"

#include <stdio.h>

#include "probes.h"

int counters_layout(int op_replay, int flush_each, int nflush, int nafter, size_t total,
		    struct counters_layout *l, char *why, size_t size)
{
	size_t extra;

	l->flush_each = flush_each;
	l->after = nafter > 0;
	/* Flushes beside the kernels': the opening one (op replay, or the
	 * first kernel's F) and the closing W. */
	l->lead = op_replay || flush_each;
	extra = op_replay ? 2 - (size_t)flush_each : (size_t)flush_each;
	l->step = 1 + (size_t)flush_each + (size_t)l->after;
	if (l->after && (!flush_each || nafter != nflush)) {
		snprintf(why, size, "%d L2 flushes after kernels for %d before them "
			 "(every kernel gets both or none)", nafter, nflush);
		return -1;
	}
	/* With a flush around each kernel the count has to tell which range
	 * is which (auto ranges are named by index only). */
	if (flush_each && total != 2 * (size_t)nflush + (size_t)nafter + 1) {
		snprintf(why, size, "%zu ranges for %d L2 flushes before kernels and "
			 "%d after them (a kernel launched in a way fuseprof does not "
			 "intercept?)", total, nflush, nafter);
		return -1;
	}
	if (total < extra) {
		snprintf(why, size, "%zu ranges, fewer than the L2 flushes of a pass",
			 total);
		return -1;
	}
	l->k = (total - extra) / l->step;
	return 0;
}

long counters_layout_writeback(const struct counters_layout *l, size_t j, size_t total)
{
	if (j >= l->k)
		return -1;
	if (l->after)                       /* F K A: the A right after it */
		return (long)(l->lead + j * l->step + 1);
	if (l->flush_each)                  /* F K F K ... W: the next F, or W */
		return (long)(j + 1 < l->k ? 2 * (j + 1) : total - 1);
	return j + 1 == l->k ? (long)(total - 1) : -1;  /* per op: W, the last's */
}
