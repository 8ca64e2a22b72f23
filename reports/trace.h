/* trace.h - a run as a trace for Perfetto and chrome://tracing: the Trace
 * Event Format's JSON object form, {"traceEvents": [...],
 * "displayTimeUnit": "ns", "otherData": {...}}, every slice a complete
 * event ("ph": "X", "ts" and "dur" in microseconds, 3 decimals: ns
 * exact), every track well nested (a slice that would overlap another
 * without nesting goes to a track of its own beside it), tracks named by
 * metadata events.
 *
 * A profiled run: one process per profiled process (its pid; its procs
 * row id where two processes of the run share a pid, ranks of two hosts
 * merged; named with its rank when its launcher gave one), each GPU
 * stream a track ("GPU 0 stream 7") of its kernels, each thread that
 * opened NVTX ranges a track of its range instances, nested as they were;
 * timestamps are CUPTI's (one clock for every process of a host), shown
 * from the run's first event (otherData.t0_ns). A `run` keeps no launch
 * rows: its ops are laid end to end on one track, each a slice of its
 * median time holding its kernels (median duration, each launch) one
 * after the other; those times say how long, not when. */
#ifndef FP_TRACE_H
#define FP_TRACE_H

#include <stdio.h>

#include "store.h"

struct trace_counts {
	long long slices;    /* complete events written */
	long long tracks;    /* tracks they are on */
	int laid_out;        /* 1: a run's ops laid end to end (no timeline) */
};

/* Write run run_id of st to out as a trace. Returns 0, or -1 after an
 * error (the output is then incomplete). */
int trace_write(struct store *st, long long run_id, FILE *out,
		struct trace_counts *counts);

#endif
