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
/* Devices one --device list names at most. */
#define RUN_MAX_DEVICES 64

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
	int device;             /* the GPU a run of one device measures on */
	int all_devices;        /* --device all */
	int devices[RUN_MAX_DEVICES];  /* --device LIST of two or more,
	                           distinct indices, in the order given */
	int ndevices;           /* 0: one device, `device` */
	long long into_run;     /* a measuring process of run_devices():
	                           store ops into this running run (its
	                           ceilings too) instead of a run of its own,
	                           and leave the run to the parent; 0: none */
	int run_device;         /* with into_run: this device is the run's
	                           (the first listed); the others set it only
	                           where none is set */
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

/* `run --device all` or a list: one run, one measuring process a device
 * (this program again, run with argc/argv, the command's own vector, and
 * --device N --into-run RUN appended), all writing the same database.
 * Checks the indices against the devices present (one line and nothing
 * written for one that is not there), starts the run (its device the
 * first listed, which its process records), waits for every process (Ctrl-C
 * reaches them all: each finishes its op in flight), then marks the run
 * complete, aborted (a process interrupted) or failed (one that failed
 * outside its ops, or died) with a note per device, and prints its ops.
 * Returns the exit status: 130 when a process was interrupted, else 1
 * when one failed or found a wrong op, else 0. (run-devices.c) */
int run_devices(const struct run_opts *o, int argc, char **argv);

/* The table of run_id's ops on stdout, as a run ends. */
void run_print_summary(struct store *st, long long run_id);

#endif
