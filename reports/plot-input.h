/* plot-input.h - the report's charts: reports/ turns its own rows (rf_run,
 * fu_pairs) into the plain rows plots/ draws (plot.h), so the call goes
 * down from reports/ to plots/ and plots/ includes nothing of reports/. */
#ifndef FP_PLOT_INPUT_H
#define FP_PLOT_INPUT_H

struct against;
struct fu_pairs;
struct plot_images;
struct plot_opts;
struct rf_run;

/* plot_run (plot.h) over run's ceilings and ops and the pairs' arrows, and
 * with ag (NULL: none; else matched against run) an arrow from the base
 * run's op to run's of each pair that has a place on the roofline in
 * both, with the same contract: 0 with *out filled (release with
 * plot_images_release), also when gnuplot is missing; -1 after an error.
 * run, pairs and ag are only read, and nothing of them is kept after the
 * call. */
int report_plots(const struct rf_run *run, const struct fu_pairs *pairs,
		 const struct against *ag, const struct plot_opts *o,
		 struct plot_images *out);

#endif
