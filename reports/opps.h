/* opps.h - fusion opportunities of a profiled run: the rows of
 * v_fusion_candidates (store/views.h says how they are found and how
 * wrong they can be) as report tables, and the one line that says why a
 * run has none to show. */
#ifndef FP_OPPS_H
#define FP_OPPS_H

#include <stddef.h>

#include "table.h"

struct store;

/* The display table shows at most this many ranked candidates, and this
 * many epilogue or prologue pairs; the full table has every row. */
#define OPPS_SHOWN 25
#define OPPS_SHOWN_EDGES 10

struct opps {
	char *notice;       /* why the run has no candidates to compute (not
	                       a profiled run, no counters, no ceilings); NULL
	                       when they were computed (there may be none) */
	size_t nranked;     /* chains and cross-range chains, ranked */
	size_t nedges;      /* epilogue and prologue pairs */
	double total_gain_ns;   /* the chains' positive predicted gains, all
	                           instances (cross-range ones left out: they
	                           hold chains) */
	double program_ns;      /* the run's kernel time; NaN without chains */
	struct table full;  /* every column of the view, by rank, then the
	                       pairs */
	struct table disp;  /* the columns a reader looks at, the first
	                       OPPS_SHOWN ranked and OPPS_SHOWN_EDGES pairs */
};

/* Why run run_id can have no fusion candidates, as one line in *notice
 * (owned by the caller): it is not a profiled run, its kernels have no
 * DRAM counters, or its GPU has no DRAM bandwidth or FP32 peak ceiling.
 * *notice is NULL when candidates can be computed. Returns 1 when the
 * run is not a profiled run, else 0, or -1 after an error reading the
 * database. */
int opps_notice(struct store *st, long long run_id, char **notice);

/* Fill *o for run run_id: the notice, else the candidates' tables.
 * Returns 0, or -1 after an error (nothing to release then). */
int opps_load(struct store *st, long long run_id, struct opps *o);

/* Free what opps_load filled; the struct can be loaded again. */
void opps_release(struct opps *o);

/* A sentence on what the tables hold and how to read them, for the
 * report's section (plain text, no trailing newline). */
extern const char opps_text[];

#endif
