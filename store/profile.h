/* profile.h - the store's side of `fuseprof profile`: each profiled
 * process's row, and its periodic commits of kernel launches and NVTX range
 * instances, after which every op they touched is brought up to date so
 * that v_ops, v_roofline, report and compare read it as any op.
 *
 * A profiled run's op is an innermost NVTX range path (or a kernel's name,
 * for kernels launched outside any range): workload = that name, variant =
 * the run's tag (or "profiled"), dtype and shape '', role 'fused' (the
 * program's code as it runs: the report's figures of fused variants, % of
 * roof among them, are its figures; no other variant pairs with it). Each
 * range instance (or each launch outside a range) is one sample: its
 * kernels' summed durations, first start to last end, its launches. The
 * op's time is the median over its samples of every process, as a `run`
 * op's is over its repetitions; each kernel slot (one name, grid, block,
 * registers and shared memory in the op) has its per-launch median and its
 * launches per sample. Model columns stay NULL. */
#ifndef FP_STORE_PROFILE_H
#define FP_STORE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct proc_cache;

/* One profiled process: its procs row and what it counted so far. */
struct store_proc {
	long long id;              /* the procs row; set by store_proc_begin */
	long long run_id;
	long long pid;
	const char *command_line;  /* may be NULL */
	long rank, local_rank, world_size;  /* where its launcher placed it
	                                       (launcher_rank); -1: unknown,
	                                       stored NULL */
	char variant[256];         /* its ops' variant: the run's tag or
	                              "profiled"; set by store_proc_begin */
	/* Totals so far, written with every commit. */
	long long kernels_seen;       /* kernel records CUPTI delivered */
	long long kernels_recorded;   /* stored as launches */
	long long kernels_filtered;   /* left out by the kernel filter */
	long long kernels_over_limit; /* left out past the launch limit */
	long long records_dropped;    /* records CUPTI dropped, or lost in a
	                                 commit that failed */
	long long ranges;             /* NVTX range instances stored */
	struct proc_cache *cache;     /* ids already looked up; internal */
};

/* Add the procs row of process p->pid (this process's host and start
 * time, p's rank, local rank and world size) to profile run p->run_id
 * with the given status ("running", or
 * "busy" / "failed" for a process that records nothing; note may be NULL).
 * The run must be a running profiled run. Sets p->id and p->variant.
 * Returns 0, or -1 after an error naming the run. */
int store_proc_begin(struct store *st, struct store_proc *p, const char *status,
		     const char *note);

/* Write p's counts, status ("complete", "failed", "killed") and
 * finished_at; note may be NULL. */
int store_proc_finish(struct store *st, const struct store_proc *p,
		      const char *status, const char *note);

/* Free what p holds (not p). */
void store_proc_release(struct store_proc *p);

/* Pointers a launch keeps at most (probes.h's PROBE_LAUNCH_PTRS). */
#define STORE_PROF_PTRS 32

/* One kernel launch of a profiled process. */
struct store_prof_launch {
	const char *op;           /* its op: innermost range path, or the
	                             kernel's name outside any range */
	long long instance;       /* its sample: the process's id for the
	                             range instance (or for the launch itself,
	                             outside any range) */
	const char *name;         /* demangled */
	const char *mangled;      /* may be NULL */
	unsigned grid[3], block[3];
	int registers, static_smem, dynamic_smem;
	long long tid;            /* the launching thread; -1: unknown */
	long long device, stream, correlation;
	long long start_ns, end_ns;  /* GPU timestamps, CUPTI's clock */
	/* The device pointers among its arguments, in order, each once
	 * (`profile --metrics`); nptrs -1: not read (stored NULL); ptrs_cut:
	 * the list was cut (stored with a trailing null). */
	int nptrs, ptrs_cut;
	uint64_t ptrs[STORE_PROF_PTRS];
	uint64_t ptr_bytes[STORE_PROF_PTRS];  /* each to its allocation's end */
	/* Hardware counters of this launch (`profile --metrics`), or
	 * ncounters 0: counter_names[i] = counters[i], NaN: not measured. */
	const char *const *counter_names;
	const double *counters;
	int ncounters;
};

/* A launch's pointers as launches.ptrs keeps them: a JSON array of
 * [pointer, bytes from it to its allocation's end] pairs in order, []
 * for none, a trailing null where the list was cut
 * ("[[140386217836544,4194304],[140386222030848,4194304],null]"); size
 * STORE_PROF_PTRS * 44 + 8 holds any. */
void store_ptrs_json(const uint64_t *ptrs, const uint64_t *bytes, int n, int cut,
		     char *out, size_t size);

/* How a profiled run's counters are kept. Each kernel slot holds, per
 * metric, the sum over its counted launches (metric STORE_SUM_PREFIX
 * NAME) and how many launches measured it (STORE_N_PREFIX NAME; a NaN
 * value is not a measurement), and how many launches were counted
 * (STORE_COUNTED); each commit sets the metric NAME itself to sum / n x
 * the slot's launches per sample,
 * so that NAME reads, as in a `run`, per op instance, and v_ops and
 * v_roofline sum a profiled op's kernels as any op's. Per launch of the
 * slot: NAME / kernels.launches. */
#define STORE_SUM_PREFIX "fuseprof.sum:"
#define STORE_N_PREFIX "fuseprof.n:"
#define STORE_COUNTED "fuseprof.counted"

/* One NVTX range instance of a profiled process. */
struct store_prof_range {
	long long instance;       /* the process's id for it */
	long long tid;
	const char *domain;       /* NULL: the default domain */
	const char *name;
	const char *path;         /* outermost to innermost, '/'-joined */
	int depth;                /* 0: outermost on its thread */
	long long start_ns, end_ns;  /* end 0: still open */
};

/* In one transaction: store the launches (their ops, kernel slots and
 * samples found or created) and the ranges (a range stored open before is
 * closed), recompute every sample, op and kernel slot they touched from
 * all the launches stored for it (by any process), and write p's counts
 * and committed_at. On error nothing of the batch is stored and -1 is
 * returned (reported); p's cache is cleared. */
int store_profile_commit(struct store *st, struct store_proc *p,
			 const struct store_prof_launch *l, size_t nl,
			 const struct store_prof_range *r, size_t nr);

/* Set the device of profile run run_id when it has none yet (the first
 * device a process saw). */
int store_profile_device(struct store *st, long long run_id, long long device_id);

/* Recompute each of the n ops (ids in ops) of a profiled run from the
 * samples stored for it, and every kernel slot of each from its launches,
 * as a commit does for the ops it touched: `fuseprof merge` calls it after
 * adding another process's samples and launches to an op. Runs inside the
 * caller's transaction; holds one op's samples in memory at a time.
 * Returns 0, or -1 (reported). */
int store_profile_refresh(struct store *st, const long long *ops, size_t n);

#endif
