/* collect.h - the profiler's pipeline from records to the store, with no
 * CUPTI in it (inject/inject.c feeds it from CUPTI; tests feed it
 * synthetic records): NVTX markers become range instances, each launch is
 * given the innermost range its thread was in when it launched, and each
 * kernel record becomes a stored launch of that range's op (or of its own
 * op, named by the kernel, outside any range), one commit a batch. */
#ifndef FP_COLLECT_H
#define FP_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "probes.h"

struct collect_config {
	const char *db;             /* the database, an absolute path */
	long long run_id;           /* a running profile run in it */
	const char *kernel_filter;  /* POSIX extended regex on demangled
	                               names; NULL: every kernel */
	long long max_kernels;      /* launches recorded at most; 0: all */
	const char *nvtx_include;   /* fnmatch patterns on range paths, one a
	                               line: only launches in a range whose
	                               path, or the path of a range around
	                               it, matches one are recorded (none
	                               outside every range); NULL: all */
	int one_device;             /* 1: record only device's kernels */
	int device;
	/* Device facts for a device index, the first time one appears
	 * (probe_device_query); NULL: devices are not recorded. */
	int (*query_device)(int index, struct probe_device *d);
	/* The metrics of each counted launch's values (collect_batch's
	 * counted), ncounters of them; 0: launches are not counted. */
	const char *const *counter_names;
	int ncounters;
};

/* The metric that gives a counted kernel its duration (ns): CUPTI's
 * kernel records of kernels the range profiler measures carry no times
 * (start and end 0), so such a launch is stored with this duration.
 * Every counted launch is stored right after the previous counted launch
 * of its stream (the first at its own start, or its launch call's
 * return): a counted run's kernels end to end, the time between them
 * being the collector's. */
#define COLLECT_DURATION_METRIC "gpu__time_duration.sum"

/* One counted kernel launch: its launching call's correlation id and
 * its values, cfg.ncounters of them (NaN: not measured), malloc'd. */
struct counted_rec {
	uint32_t correlation;
	double *values;
};

struct collector;

/* Open the database and add this process's row (status running).
 * Returns 0 with *out set, or -1 after an error. */
int collect_open(struct collector **out, const struct collect_config *cfg,
		 long long pid, const char *command_line);

/* Add the row of a process that records nothing, with status ("busy":
 * another profiler holds CUPTI; "failed") and a note. Returns 0 or -1. */
int collect_refuse(const struct collect_config *cfg, long long pid,
		   const char *command_line, const char *status, const char *note);

/* What CUPTI delivered since the last batch. The launches were taken
 * before the flush that delivered the markers and kernels, so that every
 * marker before a launch has arrived when the launch is placed. */
struct collect_batch {
	struct marker_rec *markers;   /* reordered by time */
	size_t nmarkers;
	const struct launch_rec *launches;
	size_t nlaunches;
	const struct kernel_rec *kernels;
	size_t nkernels;
	uint64_t taken;               /* CUPTI's clock when the launches were taken */
	unsigned long long dropped;   /* records CUPTI dropped so far, in all */
	int last;                     /* the final batch: nothing waits for
	                                 a later one */
	/* The counters of launches taken in this batch (or the previous
	 * one, whose kernel records come late): the collector takes them
	 * (their values; the array stays the caller's) and attaches each
	 * to its kernel's launch. */
	struct counted_rec *counted;
	size_t ncounted;
};

/* Place, filter and store one batch in one commit. A kernel whose launch
 * is not known yet waits for the next batch (once). Returns 0, or -1
 * after an error (the batch's launches then count as dropped). */
int collect_batch(struct collector *c, struct collect_batch *b);

/* Does a launch in the range of this path (NULL: outside every range)
 * pass the --nvtx-include patterns (one a line; NULL or empty: every
 * launch does)? The path matches when it or one of its leading parts
 * ("a", "a/b" of "a/b/c") matches a pattern as fnmatch(3) matches, '*'
 * crossing '/'. */
int collect_nvtx_included(const char *patterns, const char *path);

/* The op name of a launch outside every NVTX range, from its kernel's
 * demangled name: without a leading "void " and the parameter list, and
 * past COLLECT_OP_NAME_MAX characters cut short and ended with "..." and a
 * hash of the whole name (so that the cut keeps different kernels apart).
 * Written to buf as snprintf does; returns the length. */
#define COLLECT_OP_NAME_MAX 96
size_t collect_op_name(const char *name, char *buf, size_t size);

/* Counts so far. */
struct collect_counts {
	long long seen, recorded, filtered, over_limit, dropped, ranges;
	long long counted;  /* recorded launches stored with counters */
	unsigned long long unmatched_ends;  /* range ends with nothing open */
};
void collect_counts(const struct collector *c, struct collect_counts *out);

/* Write the final counts and status ("complete", or "failed" with a
 * note), close the database and free c. Returns 0 or -1. */
int collect_close(struct collector *c, const char *status, const char *note);

#endif
