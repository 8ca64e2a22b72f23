/* ranks.h - stragglers in a profiled run of several ranks: each range's
 * time over the ranks (view v_rank_spread), for the report. */
#ifndef FP_RANKS_H
#define FP_RANKS_H

#include <stddef.h>

struct store;

/* One row of v_rank_spread: an op (range path) of a run whose processes
 * have ranks. Times in ns: least, median and most over the ranks of each
 * rank's median sample time; spread = most / least. */
struct rk_row {
	long long op_id;
	char *workload;
	long long ranks, samples;
	double time_ns_min, time_ns_median, time_ns_max, spread;
	long long slowest_rank, fastest_rank;
	char *slowest_host;  /* "" when unknown */
};

struct rk_rows {
	size_t n;
	struct rk_row *v;
	long long nranks;  /* ranks in the run (procs.rank, distinct) */
};

/* Read the rows of run run_id with two ranks or more, largest spread
 * first, keeping only ops whose workload is in the NULL-terminated list
 * when it is not NULL. A run of fewer than two ranks gives n = 0.
 * Returns 0, or -1 after an error with nothing to free. */
int ranks_load_run(struct store *st, long long run_id, const char *const *workloads,
		   struct rk_rows *out);

/* Free what ranks_load_run allocated. */
void ranks_release(struct rk_rows *r);

#endif
