/* merge.h - one database from many (`fuseprof merge`): every table of
 * another fuseprof database added to this one, ids remapped, each input in
 * one transaction, what is already here left out.
 *
 * What is "already here":
 *   devices   the same uuid, driver and clocks (their UNIQUE key)
 *   ceilings  the same device, name, unit, provenance, value, method,
 *             time of measurement and run (the run that measured them:
 *             v_ceilings prefers a run's own ceilings, so each run keeps
 *             its own)
 *   runs      the same kind, start time, host, pid, process start time
 *             (proc_start) and command line: the process that made the
 *             run and when, which one fuseprof process makes once (two
 *             runs of one input are never one run here)
 *   processes of profiled runs (procs): the same host, pid, proc_start
 *             and start time
 * A run already here is left out whole; a profiled run adds only its
 * processes that are not here yet (a database merged again after more
 * processes joined its run).
 *
 * Ranks: a profiled run from another process (`fuseprof profile` started
 * once a rank, each rank writing a file of its own: --db run-%r.db) joins
 * the profiled run here with the same command line and tag whose start is
 * at most join_window_s away (the nearest), as if every rank had written
 * into one file: its processes, range instances, samples and launches go
 * to that run, its ops join the run's ops of the same range path (ops
 * first seen here are added), its kernels the op's kernel slots of the
 * same name and launch configuration, and each op it touched and its
 * slots are recomputed from all their samples and launches. The run's
 * own row (status, device, note) stays the first rank's; a device it
 * lacks is taken from the joining run. Samples, ranges and launches
 * name their process by its row (proc_id, remapped), so processes of two
 * hosts with the same pid join one run as any others do (a schema-6
 * input's rows are given the process of their run with their pid, as
 * the migration to 7 gives them). A profiled run without processes never
 * joins. */
#ifndef FP_STORE_MERGE_H
#define FP_STORE_MERGE_H

#include "store.h"

struct store_merge_opts {
	double join_window_s;  /* profiled runs of the same command line and
	                          tag started at most this many seconds apart
	                          are one run of several ranks; 0: never */
};

/* What one input added. */
struct store_merge_stats {
	long long runs_added;    /* new runs */
	long long runs_joined;   /* profiled runs whose processes joined a
	                            run here (another rank's, or the same
	                            run's processes not here yet) */
	long long runs_present;  /* runs here already: nothing added */
	/* Rows added, table by table. */
	long long devices, ceilings, procs, ranges, ops, samples, kernels,
		counters, launches;
};

/* Add the fuseprof database at path to st, in one transaction (BEGIN
 * IMMEDIATE: waits for other writers up to the busy timeout): its devices,
 * ceilings, runs, ops, samples, kernels, counters, profiled processes,
 * ranges, launches and the meta keys st lacks, each row not here yet (see
 * above), with new ids. The input is opened read-only (immutable when it
 * is a WAL file with no log, as readers do) and never written. An input
 * of an older schema is read as its migrations would make it (every
 * column added since at its default, or what the migration derives); one of a newer schema, one that is
 * not a fuseprof database or not SQLite, or one damaged, is refused.
 * Reads and writes stream (INSERT ... SELECT): memory does not grow with
 * the input, beyond the samples of one op of a joined profiled run.
 * *stats is set (zeroed first). Returns 0, or -1 after a one-line error
 * naming path; st then holds nothing of the input. */
int store_merge(struct store *st, const char *path,
		const struct store_merge_opts *o, struct store_merge_stats *stats);

#endif
