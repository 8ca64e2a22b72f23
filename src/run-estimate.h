/* run-estimate.h - what `fuseprof run --dry-run` can tell before the GPU
 * is touched: whether the database would take the run, and how long the
 * run would take, estimated op by op from the workloads' byte and FLOP
 * models and the protocol's repetition counts. */
#ifndef FP_RUN_ESTIMATE_H
#define FP_RUN_ESTIMATE_H

#include <stddef.h>
#include <stdio.h>

#include "runloop.h"
#include "workload.h"

/* Seconds a run would spend, by phase, summed over its ops; and the op
 * that needs the most GPU memory. */
struct run_estimate {
	size_t nops;
	double time_s;      /* warm-up, settling and timed repetitions */
	double check_s;     /* the CPU references of the checks */
	double counters_s;  /* the counter passes */
	size_t max_bytes;   /* GPU memory of the largest op, one input set */
	char max_key[256];  /* that op's key */
};

/* Add one op (workload w, variant, dtype dt, shape s, key for messages)
 * of the run o describes to e; counters is 0 when the run takes no
 * counters. Reads only the workload's models: no GPU. */
void run_estimate_op(struct run_estimate *e, const struct run_opts *o,
		     const struct workload *w, int variant, enum fp_dtype dt,
		     const struct fp_shape *s, int counters, const char *key);

/* Print e as two "fuseprof: dry run: ..." lines on f. */
void run_estimate_print(const struct run_estimate *e, FILE *f);

/* Would a run be able to store into the database at path? An existing
 * file must open as a fuseprof database this build understands (opened
 * read-only: a dry run writes nothing) and be writable; a missing one
 * needs a folder that exists and can be written. Returns 0, or -1 after
 * a one-line error naming path. */
int run_check_db(const char *path);

#endif
