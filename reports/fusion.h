/* fusion.h - what fusion bought in one run: each fused variant against
 * every other variant of the same workload, dtype and shape (view
 * v_fusion), plus the reference math of that view for the tests. */
#ifndef FP_FUSION_H
#define FP_FUSION_H

#include <stddef.h>

struct store;
struct rf_op;

/* One pair, a row of v_fusion. Both ops passed their check. Ratios are
 * base / fused, so above 1 favours the fused variant; NaN when unknown.
 * Units: ns, bytes, launches per repetition, percent. */
struct fu_pair {
	long long fused_op_id, base_op_id;
	char *workload, *dtype, *shape, *fused_variant, *base_variant, *base_role;
	double fused_time_ns, base_time_ns, speedup;
	double fused_dram_bytes, base_dram_bytes, dram_ratio;
	double fused_launches, base_launches, launch_ratio;
	double fused_model_bytes, base_model_bytes, predicted_speedup;
	double kernel_ceiling;  /* base time / base's longest kernel */
	double fused_roof_pct, base_roof_pct, fused_eff_bw_pct, base_eff_bw_pct;
	/* Fusion cannot pay here (views.h, FP_FUSION_NOISE_PCT): best_unfused
	 * is 1 on the row of the fused op's fastest unfused twin; the bound
	 * of what fusion can win (the bytes it removes, and the base's
	 * launches but one, which a single fused kernel would save; their time
	 * in ns and as a percentage of base_time_ns) is NaN unless the base is
	 * unfused; note is the verdict where the fused op is slower than
	 * that twin, else NULL. */
	long long best_unfused;
	double fusion_removed_bytes, fusion_removed_launches;
	double fusion_bound_ns, fusion_bound_pct;
	/* The kernels both ops run (same name, as a backward's two GEMMs in
	 * both variants): how many, how much longer they took in the fused
	 * op (ns a repetition; NaN where none is shared) and the rest of the
	 * fused op's time over the rest of the base's (NaN unless both rests
	 * are positive). The note says so where the fused op loses and they
	 * took longer in it: time fusion did not change. */
	double shared_kernels, shared_delta_ns, own_ratio;
	char *fusion_note;
};

/* One kernel of an op for fusion_shared: its name and its time a
 * repetition (duration times launches, summed over its rows of that
 * name). */
struct fu_kernel {
	const char *name;
	double ns;
};

struct fu_pairs {
	size_t n;
	struct fu_pair *v;
};

/* Read the pairs of run run_id (ordered by workload, fused op, base op),
 * keeping only workloads in the NULL-terminated list when it is not NULL.
 * Returns 0 (n may be 0), or -1 after an error with nothing to free. */
int fusion_load(struct store *st, long long run_id, const char *const *workloads,
		struct fu_pairs *out);

/* The same pairs, by the same SQL (FP_FUSION_SQL), from the rows of v_roofline
 * that rf_load of this run left in RF_RUN_TABLE on st's connection: the view
 * is not evaluated a second time. Falls back to fusion_load when that table
 * is missing or does not hold exactly the run's ops. */
int fusion_load_run(struct store *st, long long run_id, const char *const *workloads,
		    struct fu_pairs *out);
/* Free what fusion_load allocated. */
void fusion_release(struct fu_pairs *p);

/* The reference of v_fusion's ratios and of the bound of what fusion can
 * win: fill p's numbers from two ops as rf_load returns them (strings,
 * ids, best_unfused and fusion_note are left alone). */
void fusion_compute(const struct rf_op *fused, const struct rf_op *base,
		    struct fu_pair *p);

/* The reference of v_fusion's shared_kernels, shared_delta_ns and
 * own_ratio for a pair fusion_compute filled: the fused op's kernels fk
 * (nf, one per name) and the base's bk (nb). */
void fusion_shared(struct fu_pair *p, const struct fu_kernel *fk, size_t nf,
		   const struct fu_kernel *bk, size_t nb);

/* The rule "fusion cannot pay here" (views.h, above FP_FUSION_NOISE_PCT)
 * for a pair fusion_compute filled, whose base is the fused op's fastest
 * unfused twin when best is 1: the verdict, as v_fusion's fusion_note
 * words it, in a string the caller frees; NULL where there is none (best
 * is 0, or the fused op is not slower). */
char *fusion_note(const struct fu_pair *p, int best);

#endif
