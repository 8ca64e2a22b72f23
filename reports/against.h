/* against.h - one run against a base run (`fuseprof report --base`): the
 * ops of both matched as `fuseprof compare` matches them (cmp_match_ops:
 * by workload, variant, dtype and shape; two profiles by range path), each
 * pair's times, DRAM bytes and % of roof, whether it has a place on the
 * roofline in both runs (the plots then draw an arrow from the base op to
 * this run's), and the ops only one run has. */
#ifndef FP_AGAINST_H
#define FP_AGAINST_H

#include <stddef.h>

struct rf_op;
struct rf_run;
struct store;
struct strbuf;
struct table;

/* Why a matched pair has no arrow on the roofline; the side says in which
 * run (the first reason found, the base run's first). */
enum ag_why {
	AG_DRAWN,        /* both ops have a place: an arrow */
	AG_NOT_OK,       /* the op failed its check: never drawn */
	AG_NO_COUNTERS,  /* no DRAM bytes or FLOPs: no intensity, no rate */
	AG_NO_FLOPS,     /* no FLOPs counted: nowhere on a log FLOP/s axis */
	AG_NO_BYTES,     /* no DRAM bytes counted: no DRAM intensity */
	AG_NO_TIME,      /* no time: no rate */
	AG_NWHY
};

/* One op in both runs, or in one of them (the other side NULL). */
struct ag_row {
	const struct rf_op *base, *op;  /* borrowed from the two runs */
	double time_ratio;  /* op time / base time (below 1: this run is
			     * faster); NaN unless both passed their check
			     * with a time */
	enum ag_why why;    /* pairs only: AG_DRAWN or why there is no arrow */
	int why_base;       /* 1: the reason is the base run's op's */
	/* The base op's time were its fusion candidates fused, at the DRAM
	 * roof and at the chains' own bandwidth (v_fusion_predicted; NaN:
	 * none, or not loaded), and its chains (against_predict). */
	double pred_ns, pred_own_ns;
	int chains;
};

struct against {
	const struct rf_run *base, *run;  /* borrowed */
	int by_path;        /* matched by range path (two profiles) */
	size_t n;
	struct ag_row *v;   /* key order (cmp_match_ops) */
	size_t npairs, ndrawn, nbase_only, nrun_only;
	size_t npredicted;  /* pairs with a prediction for the base op */
	size_t nwhy[2][AG_NWHY];  /* pairs without an arrow: [why_base][why] */
};

/* Match run against base (both loaded by rf_load, with the same workload
 * filter) into *out. The runs must outlive *out; release with
 * against_release. */
void against_match(const struct rf_run *base, const struct rf_run *run,
		   struct against *out);
void against_release(struct against *a);

/* The section's title, "Against run N (tag)" or "Against run N" without a
 * tag, into sb. */
void against_title(const struct against *a, struct strbuf *sb);

/* The section's text into sb, as plain sentences: how ops were matched,
 * how many pairs, how many have an arrow and why the others have none,
 * whether fewer arrows were drawn (ndrawn_plot: arrows the plots drew, or
 * (size_t)-1 when there were no plots), the two devices when they
 * differ, and the ops only one run has, by name. */
void against_text(const struct against *a, size_t ndrawn_plot, struct strbuf *sb);

/* The pairs in reading units (display: Markdown, HTML), or every row in
 * base units with the op ids, the side it is in ("both", "base", "run")
 * and the reason a pair has no arrow (CSV base.csv, JSON). */
void against_table(const struct against *a, struct table *t, int display);

/* Two profiles: the predictions for the base run's ranges
 * (v_fusion_predicted) into the pairs. Nothing to do otherwise. Returns 0,
 * or -1 after an error reading the database. */
int against_predict(struct store *st, struct against *a);

/* The pairs whose base op has a prediction, with this run's time: in
 * reading units (display) or base units with the op ids (CSV, JSON). */
void against_predicted_table(const struct against *a, struct table *t, int display);

/* A sentence on how to read that table, into sb. */
void against_predicted_text(const struct against *a, struct strbuf *sb);

/* "failed its check", "no counters", ...: why there is no arrow. */
const char *ag_why_text(enum ag_why why);

#endif
