/* runloop.h - the measurement protocol of `fuseprof run`: build the op
 * list from the registry, then per op validate, fit, create, check, warm
 * up, time under CUPTI Activity, count under the Range Profiler, store in
 * one transaction. Knows no workload by name. The ceilings bookkeeping
 * `run` shares with `ceilings` is in run-ceilings.h. */
#ifndef FP_RUNLOOP_H
#define FP_RUNLOOP_H

#include "probes.h"
#include "store.h"
#include "table.h"

/* --kernel-opt pairs one run takes at most. */
#define RUN_MAX_KOPTS 64

struct run_opts {
	const char *db;
	const char *workloads;  /* comma-separated names, NULL = all */
	const char *variants;   /* comma-separated, NULL = all */
	const char *dtypes;     /* comma-separated, NULL = all the workload has */
	const char *shape;      /* sweep spec (shape.h), NULL = the suite */
	int reps;               /* timed repetitions per op */
	int warmup;             /* untimed repetitions first */
	int counters;           /* 0: --no-counters */
	const char *group;      /* counter group name or file */
	enum counters_replay replay;
	int flush_each_kernel;  /* op replay: flush L2 before every kernel */
	int device;
	const char *tag;
	int quick;              /* the workloads' quick suites */
	int remeasure;          /* measure ceilings even if stored */
	int dry_run;            /* list the ops and stop; no GPU, no store */
	int check_all;          /* check with every input profile, not only
	                           the plain random inputs timing uses */
	const char *command_line;
	const char *const *kopts;  /* --kernel-opt: "[WORKLOAD:]KEY=VALUE", one
	                              pair each, in the order given */
	int nkopts;             /* <= RUN_MAX_KOPTS */
};

/* Run the suite o describes. Returns the exit status: 0 all ops ok, 1 a
 * failure or a wrong op (the run still finishes), 2 a usage error found
 * while building the op list (among them a kernel option that no selected
 * workload declares, or a value it does not allow), 130 interrupted (run
 * marked aborted). */
int run_suite(const struct run_opts *o);

#endif
