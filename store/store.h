/* store.h - the SQLite store: every measurement fuseprof makes, versioned
 * schema, one transaction per op, and the reads that reports need.
 *
 * Schema (v8), see store/store.c for the DDL and store/views.c for the public views:
 *   meta(key, value)            schema version, creator
 *   devices                     one row per GPU x driver x clocks
 *   runs                        one `fuseprof run` (kind 'run') or `fuseprof
 *                               profile` (kind 'profile'): status running/complete/aborted/failed,
 *                               host, pid and process start time (proc_start);
 *                               readers show a 'running' run whose process is
 *                               gone as 'killed' (store/proc.h)
 *   ceilings                    measured and theoretical roofs per device
 *   ops                         workload x variant x dtype x shape on a device
 *                               in a run, with the kernel options in force and
 *                               the kernel picked
 *   samples                     per-repetition op times (ns)
 *   kernels                     per op: each distinct kernel, launches, durations
 *   counters                    per kernel: raw hardware counter values
 *   procs, ranges, launches     profiled runs: each process (host, pid, rank),
 *                               its NVTX range instances and kernel launches,
 *                               each naming its process by proc_id, a counted
 *                               launch with the device pointers among its
 *                               arguments (ptrs) (store/profile.h)
 * One database from many: store/merge.h. */
#ifndef FP_STORE_H
#define FP_STORE_H

#include <sqlite3.h>

#define STORE_SCHEMA_VERSION 8

enum store_mode {
	STORE_READONLY = 0,  /* must exist; opened read-only; nothing written */
	STORE_READWRITE = 1, /* must exist */
	STORE_CREATE = 2,    /* created (schema and all) when missing */
};

struct store;

/* Open the database at path. Validates that it is a fuseprof database of a
 * schema this build understands, migrates an older one forward (not in
 * READONLY mode: there the connection sees the current schema through TEMP
 * views over the old tables, the columns added since defaulted, and the
 * file stays untouched), and (re)creates the views when they are out of
 * date. READONLY opens a WAL file with no log beside it immutable (no
 * locks, no -wal or -shm created: works where the user cannot write), and
 * one with a log read-only through it; its v_runs shows 'killed' runs.
 * Every connection defines the SQL function fp_run_status(status, host,
 * pid, proc_start) (proc_run_status()). A malformed
 * $FUSEPROF_BUSY_TIMEOUT_MS is an error.
 * Returns 0 with *out set, or -1 after a one-line error naming the file and
 * the cause; the file is then untouched. */
int store_open(struct store **out, const char *path, enum store_mode mode);

/* Close and free. NULL is a no-op. */
void store_close(struct store *st);

/* The underlying connection, for reads the API does not cover. */
sqlite3 *store_db(struct store *st);
const char *store_path(const struct store *st);

/* Report the connection's last error as "<what>: '<path>': <sqlite message>"
 * and return -1. */
int store_error(struct store *st, const char *what);

/* ---- writes ---------------------------------------------------------- */

struct store_device {
	const char *uuid, *name;
	int cc_major, cc_minor, sm_count;
	long long l2_bytes, mem_bytes;
	int mem_bus_bits;
	int sm_clock_khz, mem_clock_khz;  /* clocks the run saw */
	int driver_version, runtime_version, cupti_version;
};

/* Find or insert the row for this device (uuid, driver and clocks). */
int store_upsert_device(struct store *st, const struct store_device *d,
			long long *id);

struct store_run {
	const char *tool_version;  /* PACKAGE_VERSION */
	const char *host;
	const char *command_line;
	const char *tag;           /* may be NULL */
	long long device_id;       /* 0 when not known yet */
	const char *counters;      /* "range-profiler", "none", "denied", ... */
	const char *kind;          /* "run" (NULL) or "profile" */
};

/* Insert a run with status 'running' and started_at now, with this
 * process's pid and start time, and host (this machine's name when
 * r->host is NULL). */
int store_begin_run(struct store *st, const struct store_run *r,
		    long long *run_id);
int store_set_run_device(struct store *st, long long run_id, long long device_id);
int store_set_run_counters(struct store *st, long long run_id, const char *counters);
/* Set the final status ("complete", "aborted", "failed") and finished_at;
 * note may be NULL. */
int store_finish_run(struct store *st, long long run_id, const char *status,
		     const char *note);

/* The one counter row fuseprof derives rather than reads: the DRAM bytes
 * written back from L2 for lines the kernel (under per-op flushes: its op,
 * stored with the op's last kernel) left dirty, which its own
 * dram__bytes_write.sum does not count (probes.h, counters_writeback). */
#define FP_WRITEBACK_METRIC "fuseprof.dram_writeback_bytes"

struct store_kernel {
	const char *name;      /* demangled */
	const char *mangled;   /* may be NULL */
	unsigned grid[3], block[3];
	int registers, static_smem, dynamic_smem;
	long long launches;    /* launches per repetition */
	double dur_ns_median, dur_ns_min, dur_ns_max;  /* per launch */
	int ncounters;
	const char *const *counter_names;  /* raw metric names, as CUPTI took
					      them, and FP_WRITEBACK_METRIC */
	const double *counter_values;      /* summed over this kernel's launches */
};

struct store_op {
	const char *workload, *variant, *role, *dtype, *shape;
	const char *status;     /* "ok", "wrong", "error" */
	unsigned long long seed;
	double rel_err, max_abs_err, tolerance;  /* NaN when not checked */
	int reps;               /* number of samples below */
	const double *time_ns;  /* per rep: sum of the op's kernel durations */
	const double *span_ns;  /* per rep: first kernel start to last end */
	long long launches;     /* kernel launches per repetition */
	double model_flops, model_min_bytes, model_variant_bytes;
	double model_executed_flops;  /* what the FLOP counters should read
					 where it differs from model_flops;
					 0: the same */
	double model_saved_bytes;  /* bytes the variant keeps alive from
				      the forward for the backward, by its
				      model (struct fp_model.saved_bytes);
				      NaN: not part of a forward/backward
				      pair, stored as NULL */
	const char *backward;   /* for a forward: its backward workload
	                           (workload->backward); NULL: none */
	const char *message;    /* may be NULL */
	const char *kernel_opts;  /* the kernel options in force, canonical
	                             (workload_format_kopts); NULL = "" */
	const char *kernel;     /* the kernels the launcher picked (the
	                           workload's kernel() line); NULL = "" */
	long long device_id;    /* the device it ran on (store_upsert_device);
	                           0: the run's (NULL while it has none) */
	int nkernels;
	const struct store_kernel *kernels;
};

/* Insert one op with its samples, kernels and counters in one transaction
 * (BEGIN IMMEDIATE; waits up to the busy timeout for other writers). The
 * op's median/min/max time are computed from the samples. On error nothing
 * of the op is stored. */
int store_insert_op(struct store *st, long long run_id,
		    const struct store_op *op, long long *op_id);

struct store_ceiling {
	const char *name;        /* "dram_bw", "l2_bw", "fp32_fma", "fp64_fma", "tensor_bf16", ... */
	const char *unit;        /* "B/s" or "FLOP/s" */
	double value;
	const char *provenance;  /* "measured" or "theoretical" */
	const char *method;      /* how: "copy kernel, 4 GiB", "cuBLAS bf16 GEMM 8192^3" */
};

int store_insert_ceiling(struct store *st, long long device_id,
			 long long run_id, const struct store_ceiling *c);

/* ---- reads ----------------------------------------------------------- */

/* Resolve a run reference to an id: a number, "latest", "latest~N" (N runs
 * before the latest), or a tag (the newest run carrying it). Returns 0 with
 * *id set, or -1 after an error naming ref. */
int store_resolve_run(struct store *st, const char *ref, long long *id);

/* As store_resolve_run, for a caller that words its own error when ref
 * names no run: returns 1 with *id set, 0 (nothing printed) when no run
 * answers to ref (an empty ref, an id that is not there, no such tag),
 * or -1 after an error reading the database. */
int store_find_run(struct store *st, const char *ref, long long *id);

/* Run in a transaction that readers see whole: store_begin / store_commit /
 * store_rollback for callers that write several rows outside insert_op. */
int store_begin(struct store *st);
int store_commit(struct store *st);
void store_rollback(struct store *st);

#endif
