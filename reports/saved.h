/* saved.h - save or recompute in one run: each forward variant beside the
 * backward variant of the same name (view v_save_recompute), with what it
 * keeps for the backward and what keeping less costs in time. */
#ifndef FP_SAVED_H
#define FP_SAVED_H

#include <stddef.h>

struct store;

/* One row of v_save_recompute: a forward variant and its backward, both
 * ok. Units: bytes, ns; NaN when unknown (saved_bytes of a model that
 * does not say). A pattern is the run's forward workload, dtype and shape:
 * bytes_saved, time_paid_ns and time_ratio compare within it. */
struct sr_row {
	long long fwd_op_id, bwd_op_id;
	char *workload, *backward, *variant, *role, *dtype, *shape;
	double saved_bytes;
	double fwd_time_ns, bwd_time_ns, total_time_ns;
	double fwd_dram_bytes, bwd_dram_bytes, total_dram_bytes;
	char *dram_basis;   /* "measured", "model" or "mixed" */
	char *saves_most;   /* the pattern's variant that keeps the most */
	double bytes_saved; /* its saved_bytes - this one's */
	char *fastest;      /* the pattern's variant of least total time */
	double time_paid_ns, time_ratio;  /* against the fastest total */
};

struct sr_rows {
	size_t n;
	struct sr_row *v;
};

/* Read the rows of run run_id, ordered by forward workload and op (the
 * variants of a pattern together), keeping only those whose forward or
 * backward workload is in the NULL-terminated list when it is not NULL.
 * Reads the run's rows rf_load left in RF_RUN_TABLE when it holds exactly
 * the run's ops, else the view. Returns 0 (n may be 0), or -1 after an
 * error with nothing to free. */
int saved_load_run(struct store *st, long long run_id, const char *const *workloads,
		   struct sr_rows *out);

/* Free what saved_load_run allocated. */
void saved_release(struct sr_rows *r);

#endif
