/* render.h - writes a run's report: Markdown, a self-contained HTML page
 * (plots embedded), CSV and JSON tables, and the short summary on stdout. */
#ifndef FP_RENDER_H
#define FP_RENDER_H

#include <stdio.h>

struct against;
struct rf_run;
struct fu_pairs;
struct sr_rows;
struct opps;
struct rk_rows;
struct plot_images;

enum report_format {
	REPORT_MD = 1,
	REPORT_HTML = 2,
	REPORT_CSV = 4,
	REPORT_JSON = 8,
	REPORT_ALL = 15,
};

struct report {
	const struct rf_run *run;
	const struct fu_pairs *pairs;
	const struct sr_rows *saved;       /* save-vs-recompute rows; NULL: none */
	const struct rk_rows *ranks;       /* a profiled run's ranges over its
					    * ranks; NULL or none: no section */
	const struct plot_images *images;  /* images->skipped: why none */
	const struct against *against;     /* --base: run against a base run;
					    * NULL: none */
	const struct opps *opps;           /* a profiled run's fusion
					    * opportunities; NULL: not one */
	const char *db_path;
	const char *workloads;             /* the --workload filter, or NULL */
};

/* "md,html,csv,json" (any subset, comma-separated) -> REPORT_* bits.
 * Returns 0, or -1 with the offending word in *bad (points into list). */
int report_parse_formats(const char *list, unsigned *formats, const char **bad);

/* The ceilings every report looks for, NULL-terminated; those a run lacks
 * are listed as missing. */
extern const char *const report_ceiling_names[];

/* Write report.md, report.html, roofline.csv, fusion.csv, ceilings.csv,
 * distrust.csv, save-recompute.csv (only when the run has rows of it),
 * opportunities.csv (only for a profiled run whose candidates were
 * computed),
 * ranks.csv (only for a profiled run of several ranks),
 * base.csv (only against a base run) and report.json (as formats asks)
 * into dir, which exists.
 * Returns 0, or -1 after an error naming the file. */
int report_write(const struct report *r, const char *dir, unsigned formats);

/* The short summary: one row per workload (ops, wrong, pairs, median and
 * best speedup of fused over unfused, median % of roof of fused ops). */
void report_summary(const struct report *r, FILE *out);

#endif
