/* compare.h - regression verdicts for one op measured in two runs: timing
 * against the noise of both runs, hardware counts against a fixed
 * tolerance, correctness and launch counts. Pure C, no SQLite: callers load
 * the numbers, this decides.
 *
 * Timing noise. For each run the noise of an op is the relative
 * inter-decile spread of its per-repetition times,
 *
 *     noise = (p90 - p10) / median,
 *
 * with percentiles interpolated linearly between order statistics (the
 * "type 7" rule of R and NumPy). A timing change is
 *
 *     change = median_new / median_base - 1,
 *
 * and counts only when |change| exceeds the bar max(threshold, noise_base,
 * noise_new): SLOWER when change > bar, FASTER when change < -bar, else
 * SAME. For normally distributed times p90 - p10 is 2.56 sigma, so the bar
 * sits well outside the spread of either run. With one repetition the
 * spread is 0 and only the threshold applies.
 *
 * Counter verdicts need no noise model: DRAM bytes and FLOPs are counts of
 * hardware events for a deterministic kernel, so a change larger than the
 * counter tolerance (1% by default) is real. An op without counters on
 * either side gets no counter verdict ("n/a"), never a false one; nor do
 * DRAM bytes of two runs whose counters were taken differently (one
 * counting the write-back of dirty L2 lines and the other not, another
 * replay or flush): those differ for that reason alone, so they are
 * "not-comparable", neither MORE nor FEWER. */
#ifndef FP_COMPARE_H
#define FP_COMPARE_H

#include <stddef.h>

/* The default bars: 5% for times, 1% for hardware counts. */
#define CMP_DEFAULT_TIME_THRESHOLD 0.05
#define CMP_DEFAULT_COUNT_THRESHOLD 0.01

/* One op as measured in one run. */
struct cmp_op {
	const char *status;     /* "ok", "wrong", "error" */
	const double *samples;  /* per-repetition times (ns); not owned */
	size_t nsamples;        /* 0: no timing (e.g. the op failed) */
	long long launches;     /* kernel launches per repetition; < 0 unknown */
	int has_counters;       /* the run collected counters for this op */
	double dram_bytes;      /* DRAM bytes read + written; NaN when not measured */
	double flops;           /* FLOPs of every precision; NaN when not measured */
};

struct cmp_opts {
	double time_threshold;   /* fraction: 0.05 = 5% */
	double count_threshold;  /* fraction: 0.01 = 1% */
	int bytes_incomparable;  /* 1: the runs took counters differently, so
				  * DRAM bytes get CMP_COUNT_INCOMPARABLE */
};

enum cmp_time { CMP_TIME_NA, CMP_TIME_SAME, CMP_TIME_FASTER, CMP_TIME_SLOWER };
enum cmp_count {
	CMP_COUNT_NA, CMP_COUNT_SAME, CMP_COUNT_FEWER, CMP_COUNT_MORE,
	CMP_COUNT_INCOMPARABLE,  /* both counted, but not alike: no verdict */
};

/* The headline of one op, worst first: sorting by this value puts the rows
 * that need attention on top. The first four fail the gate. */
enum cmp_verdict {
	CMP_WRONG,        /* was ok, now wrong or error */
	CMP_SLOWER,       /* time above the bar */
	CMP_MORE_BYTES,   /* DRAM bytes up by more than the tolerance */
	CMP_MORE_FLOPS,   /* FLOPs up by more than the tolerance */
	CMP_REMOVED,      /* in BASE only */
	CMP_ADDED,        /* in NEW only */
	CMP_LAUNCHES,     /* launch count changed, nothing worse */
	CMP_STILL_WRONG,  /* not ok in either run */
	CMP_FIXED,        /* was wrong or error, now ok */
	CMP_FASTER,
	CMP_FEWER_BYTES,
	CMP_FEWER_FLOPS,
	CMP_SAME,
	CMP_NVERDICTS
};

struct cmp_result {
	enum cmp_verdict verdict;
	int regressed;           /* 1 when this op fails the gate */

	enum cmp_time time;
	double base_ns, new_ns;  /* medians (ns); NaN when absent */
	double base_noise, new_noise;  /* fractions; NaN when absent */
	double time_change;      /* new / base - 1; NaN when not compared */
	double time_bar;         /* the bar the change had to pass (fraction) */

	enum cmp_count dram, flops;
	double dram_change, flops_change;  /* new / base - 1; NaN when n/a */

	long long base_launches, new_launches;  /* < 0 unknown or absent */
	int launches_changed;    /* both ok, both known, and different */
};

/* Percentile p (0..1) of n sorted values, interpolated linearly between
 * order statistics. NaN when n == 0. */
double cmp_percentile(const double *sorted, size_t n, double p);

/* Median (ns) and relative noise ((p90 - p10) / median) of n per-rep times.
 * Returns 0, or -1 when n == 0 or the median is not positive (then both
 * outputs are NaN). The samples are not modified. */
int cmp_time_stats(const double *samples, size_t n, double *median, double *noise);

/* Timing verdict of NEW against BASE with the rule above; fills the timing
 * fields of r (the rest is left alone). CMP_TIME_NA when either side has no
 * usable samples. */
enum cmp_time cmp_time_verdict(const double *base, size_t nbase,
			       const double *new, size_t nnew,
			       double threshold, struct cmp_result *r);

/* Counter verdict for one count: MORE / FEWER when new differs from base by
 * more than threshold (a fraction of base), SAME otherwise, NA when either
 * value is NaN or negative. A count going from 0 to anything positive is
 * MORE (change +inf). *change gets new / base - 1, or NaN when NA. */
enum cmp_count cmp_count_verdict(double base, double new, double threshold,
				 double *change);

/* Compare one op. base NULL: the op was ADDED; new NULL: REMOVED (not both).
 * Timing and counters are compared only when both sides are ok, since the
 * time of a wrong result means nothing. Fills all of *r. */
void cmp_ops(const struct cmp_op *base, const struct cmp_op *new,
	     const struct cmp_opts *opts, struct cmp_result *r);

/* Order for qsort-style sorting, worst first: by verdict, then by the size
 * of the change that decided it (largest first). Ties compare equal; break
 * them with the op's key. */
int cmp_result_order(const struct cmp_result *a, const struct cmp_result *b);

/* "WRONG", "SLOWER", "MORE-BYTES", ... and "SAME", "FASTER", "n/a",
 * "not-comparable", ... */
const char *cmp_verdict_name(enum cmp_verdict v);
const char *cmp_time_name(enum cmp_time t);
const char *cmp_count_name(enum cmp_count c);

/* ---- which op of one run is which op of another ----------------------- */

/* What an op is matched by between two runs. Strings are borrowed; none
 * is NULL. device: the op's device among its run's devices (0 the first,
 * by device row), set when a run measured on several GPUs, so that
 * each GPU's ops meet the same GPU's; else 0. */
struct cmp_key {
	const char *workload, *variant, *dtype, *shape;
	int device;
};

/* 1 when the ops of a run of kind base_kind and one of new_kind (v_runs.kind;
 * NULL counts as "run") match by workload alone: two `fuseprof profile`
 * runs, whose workload is the range path and whose variant is the tag, so
 * a program's eager and compiled profiles pair up range by range. 0 when
 * they match by workload, variant, dtype and shape. */
int cmp_match_by_path(const char *base_kind, const char *new_kind);

/* Key order: workload, then variant (left out when by_path), dtype, shape,
 * each by strcmp, then device. */
int cmp_key_order(const struct cmp_key *a, const struct cmp_key *b, int by_path);

/* One row of a matching: an index into each run's keys, CMP_NONE on the
 * side that lacks the op. */
#define CMP_NONE ((size_t)-1)
struct cmp_match {
	size_t base, new;
};

/* Match base[0..nbase) against new[0..nnew) by key (cmp_key_order): one
 * row per pair, per op only in base and per op only in new, in key order
 * (an op only in one run sorts where its key would be). A key that
 * occurs k times in a run pairs its occurrences with those of the other
 * run in index order. Returns the rows (malloc'd: the caller frees them;
 * never NULL) and their count in *n. The keys are only read. */
struct cmp_match *cmp_match_ops(const struct cmp_key *base, size_t nbase,
				const struct cmp_key *new, size_t nnew, int by_path,
				size_t *n);

#endif
