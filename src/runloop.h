/* runloop.h - the measurement protocol of `fuseprof run` (DESIGN.md): build
 * the op list from the registry, then per op validate, fit, create, check,
 * warm up, time under CUPTI Activity, count under the Range Profiler, store
 * in one transaction. Also the ceilings bookkeeping `run` and `ceilings`
 * share. Knows no workload by name. */
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

/* Copy device facts into the store's row form (strings borrowed from d). */
void device_to_store(const struct probe_device *d, struct store_device *out);

/* Number of ceilings of provenance prov stored for device_id, in *n. */
int ceilings_count(struct store *st, long long device_id, const char *prov,
		   long long *n);

/* Store n ceilings for device_id (run_id 0 = none) in one transaction. */
int ceilings_save(struct store *st, long long device_id, long long run_id,
		  const struct ceiling *c, int n);

/* Print the newest ceiling of each name and provenance for device_id
 * (0 = every device) as a table. Returns 0 or -1. */
int ceilings_print(struct store *st, long long device_id, enum table_format f);

/* Measure (verbose: progress on stderr) the measured and theoretical
 * ceilings of the current device into out[max]; returns how many or -1. */
int ceilings_collect(const struct probe_device *d, struct ceiling *out, int max,
		     int verbose);

#endif
