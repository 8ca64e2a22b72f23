/* cmd-report.c - `fuseprof report`: turns one run of the database into
 * rooflines, fusion gains and tables (Markdown, HTML, CSV, JSON), and
 * prints a short summary. Needs no GPU. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "against.h"
#include "cmd.h"
#include "error.h"
#include "fusion.h"
#include "opps.h"
#include "plot-input.h"
#include "plot.h"
#include "render.h"
#include "roofline.h"
#include "ranks.h"
#include "saved.h"
#include "store.h"
#include "util.h"

#define DEFAULT_OUT "fuseprof-report"

/* The list of the files the last report wrote into its folder, kept
 * there: the next report into the folder removes those it does not write
 * again, and only those, so a folder never mixes two reports' charts and
 * a file fuseprof did not write is never touched. */
#define MANIFEST ".fuseprof-report"

static void help(void)
{
	printf("Usage: fuseprof report [OPTION]...\n"
	       "Write a report of one run: rooflines (PNG and SVG), fusion gains, the\n"
	       "ceilings used, every op that failed its check, for a profiled run its\n"
	       "fusion opportunities (opportunities.csv) and, where the run has\n"
	       "forwards with their backwards, what saving versus recomputing costs; as\n"
	       "report.md, a self-contained report.html, CSV and JSON tables; print a\n"
	       "summary.\n"
	       "Works on any machine with the database file; no GPU needed.\n"
	       "\n"
	       "Options:\n"
	       "      --db PATH         database file (default: $FUSEPROF_DB or fuseprof.db)\n"
	       "  -r, --run REF         run id, 'latest' (default), 'latest~N' or a tag\n"
	       "      --base REF        also against run REF of the same database (as\n"
	       "                        --run takes it): a section with each op's time,\n"
	       "                        DRAM bytes and %% of roof in both runs (base.csv),\n"
	       "                        and on the rooflines an arrow from each op of\n"
	       "                        REF to the same op of this run; ops match as\n"
	       "                        'fuseprof compare' matches them\n"
	       "  -o, --out DIR         output folder, created if missing (default: "
	       DEFAULT_OUT ")\n"
	       "  -f, --format LIST     any of md,html,csv,json (default: all of them)\n"
	       "  -w, --workload NAME   only this workload (repeat or comma-separate)\n"
	       "      --hierarchical    also plot each op at its DRAM, L2 and L1 intensity\n"
	       "      --size WxH        PNG size in pixels (default: 1200x800)\n"
	       "      --no-svg          PNG only\n"
	       "      --no-plots        tables only; gnuplot is not run (the plot options\n"
	       "                        above and --keep-data are then usage errors)\n"
	       "  -k, --keep-data       keep the plots' .dat files, plots.gp and the .gp\n"
	       "                        scripts in DIR, to restyle with 'gnuplot plots.gp'\n"
	       "  -h, --help            show this help and exit\n"
	       "\n"
	       "Writing into the folder of an earlier report removes the files that\n"
	       "report listed in DIR/" MANIFEST " and this one does not write again\n"
	       "(unless changed since); nothing else there is touched.\n"
	       "\n"
	       "With --base, an op without a place on the roofline in both runs (no\n"
	       "counters, a failed check) has no arrow; the section says how many and\n"
	       "why, and lists the ops only one of the two runs has.\n"
	       "\n"
	       "Plots need gnuplot ($GNUPLOT, else the one found at build time); without\n"
	       "it the tables are written and a warning says the plots were skipped.\n"
	       "\n"
	       "Examples:\n"
	       "  fuseprof report\n"
	       "  fuseprof report --db examples/h200-sample.db --out /tmp/h200\n"
	       "  fuseprof report --run nightly --workload softmax_fwd,softmax_bwd --format md,csv\n"
	       "  fuseprof report --run latest --base latest~1 --out /tmp/vs-previous\n"
	       "\n"
	       "Exit status: 0 success, 1 failure (no such run, a run without ops,\n"
	       "an unwritable folder, gnuplot failed), 2 usage error (--base naming no\n"
	       "run, or the run reported).\n");
}

static int parse_size(const char *s, int *w, int *h)
{
	char *x;
	long a, b;

	errno = 0;
	a = strtol(s, &x, 10);
	if (x == s || (*x != 'x' && *x != 'X'))
		return -1;
	s = x + 1;
	b = strtol(s, &x, 10);
	if (x == s || *x || errno || a < 100 || b < 100 || a > 20000 || b > 20000)
		return -1;
	*w = (int)a;
	*h = (int)b;
	return 0;
}

/* mkdir -p: create dir and its missing parents; then make sure we can write
 * into it. 0 or -1 (reported). */
static int make_out_dir(const char *dir)
{
	char *p = xstrdup(dir);
	struct stat sb;
	int rc = 0;

	for (char *s = p + 1; ; s++) {
		char c = *s;

		if (c != '/' && c != 0)
			continue;
		*s = 0;
		if (mkdir(p, 0777) && errno != EEXIST) {
			rc = error("cannot create the output folder '%s': %s", p,
				   strerror(errno));
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	if (rc)
		return -1;
	if (stat(dir, &sb) || !S_ISDIR(sb.st_mode))
		return error("cannot write the report to '%s': %s", dir,
			     errno && !S_ISDIR(sb.st_mode) ? "not a directory" : strerror(errno));
	if (access(dir, W_OK | X_OK))
		return error("cannot write the report to '%s': %s (choose another "
			     "folder with --out)", dir, strerror(errno));
	return 0;
}

/* Split a comma list into *list (NULL-terminated, strings owned by buf).
 * Returns 0, or 2 after a usage error for an empty name ("", "a,,b",
 * "a,"): strtok would skip it, and an empty --workload would select
 * every workload. */
static int add_workloads(const char *arg, char ***list, int *n, struct strbuf *all)
{
	char *copy;

	if (!*arg || *arg == ',' || strstr(arg, ",,") || arg[strlen(arg) - 1] == ',')
		return usage_error("report", "report: --workload: empty workload name "
				   "in '%s' (give names, comma-separated; 'fuseprof "
				   "list workloads' lists them)", arg);
	copy = xstrdup(arg);
	for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
		*list = xrealloc(*list, (size_t)(*n + 2) * sizeof **list);
		(*list)[(*n)++] = xstrdup(tok);
		(*list)[*n] = NULL;
		strbuf_addf(all, "%s%s", all->len ? "," : "", tok);
	}
	free(copy);
	return 0;
}

static char *run_workloads(struct store *st, long long run_id)
{
	sqlite3_stmt *s = NULL;
	char *w = NULL;

	if (sqlite3_prepare_v2(store_db(st), "SELECT group_concat(workload, ', ') FROM "
			       "(SELECT DISTINCT workload FROM ops WHERE run_id = ?1 "
			       "ORDER BY workload)", -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, run_id);
		if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
			w = xstrdup((const char *)sqlite3_column_text(s, 0));
	}
	sqlite3_finalize(s);
	return w;
}

/* ---- the files of a report ------------------------------------------- */

/* What this report writes, to tell its files from a previous report's. */
struct written {
	unsigned formats;
	const struct plot_opts *po;
	const struct plot_images *images;
	size_t nsaved;  /* save-vs-recompute rows: save-recompute.csv */
	size_t nranks;  /* ranges over several ranks: ranks.csv */
	int base;       /* against a base run: base.csv */
	int opps;       /* a profiled run's candidates: opportunities.csv */
};

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* Could a report have written name? Any report's tables and scripts,
 * and its charts and their data: roofline*.png|svg|dat, fusion*.png|svg|dat. */
static int report_file(const char *name)
{
	static const char *const fixed[] = {
		"report.md", "report.html", "report.json", "roofline.csv",
		"fusion.csv", "ceilings.csv", "distrust.csv", "save-recompute.csv",
		"ranks.csv", "base.csv", "opportunities.csv", "plots.gp", "roofline.gp",
		"fusion.gp", NULL
	};

	for (int i = 0; fixed[i]; i++)
		if (!strcmp(name, fixed[i]))
			return 1;
	return !strchr(name, '/') &&
	       (!strncmp(name, "roofline", 8) || !strncmp(name, "fusion", 6)) &&
	       (ends_with(name, ".png") || ends_with(name, ".svg") ||
		ends_with(name, ".dat"));
}

/* Did this report write name? */
static int wrote(const struct written *w, const char *name)
{
	static const struct {
		unsigned format;
		const char *name;
	} tables[] = {
		{ REPORT_MD, "report.md" }, { REPORT_HTML, "report.html" },
		{ REPORT_JSON, "report.json" }, { REPORT_CSV, "roofline.csv" },
		{ REPORT_CSV, "fusion.csv" }, { REPORT_CSV, "ceilings.csv" },
		{ REPORT_CSV, "distrust.csv" },
	};
	int keep = w->po->keep_data && w->images->n;

	for (size_t i = 0; i < ARRAY_SIZE(tables); i++)
		if (!strcmp(name, tables[i].name))
			return !!(w->formats & tables[i].format);
	if (!strcmp(name, "save-recompute.csv"))
		return (w->formats & REPORT_CSV) && w->nsaved;
	if (!strcmp(name, "ranks.csv"))
		return (w->formats & REPORT_CSV) && w->nranks;
	if (!strcmp(name, "base.csv"))
		return (w->formats & REPORT_CSV) && w->base;
	if (!strcmp(name, "opportunities.csv"))
		return (w->formats & REPORT_CSV) && w->opps;
	if (keep && (!strcmp(name, "plots.gp") || !strcmp(name, "roofline.gp") ||
		     !strcmp(name, "fusion.gp")))
		return 1;
	for (size_t i = 0; i < w->images->n; i++) {
		const char *stem = w->images->v[i].stem;
		size_t n = strlen(stem);

		if (strncmp(name, stem, n) || name[n] != '.')
			continue;
		if (!strcmp(name + n, ".png") || (w->po->svg && !strcmp(name + n, ".svg")))
			return 1;
		/* stem.points.dat, stem.arrows.dat, ... */
		if (keep && ends_with(name, ".dat") && !strchr(name + n + 1, '/'))
			return 1;
	}
	return 0;
}

/* Remove what the previous report listed in dir's manifest and this one
 * did not write, when it is still the file that report wrote (same size
 * and modification time: a file the user has since replaced stays), then
 * list this report's files. Problems are warnings: the report itself is
 * written. */
static void tidy_out_dir(const char *dir, const struct written *w)
{
	char *path = xasprintf("%s/" MANIFEST, dir);
	char *tmp = xasprintf("%s/" MANIFEST ".tmp", dir);
	char line[4096];
	FILE *f = fopen(path, "r");
	DIR *d;
	struct dirent *e;

	while (f && fgets(line, sizeof line, f)) {
		long long sec, size;
		long nsec;
		int at = 0;
		struct stat sb;
		char *file;

		line[strcspn(line, "\n")] = 0;
		if (line[0] == '#' || sscanf(line, "%lld.%ld %lld %n", &sec, &nsec,
					     &size, &at) != 3 || !at)
			continue;
		if (!report_file(line + at) || wrote(w, line + at))
			continue;
		file = xasprintf("%s/%s", dir, line + at);
		if (!lstat(file, &sb) && S_ISREG(sb.st_mode) && sb.st_size == size &&
		    sb.st_mtim.tv_sec == sec && sb.st_mtim.tv_nsec == nsec &&
		    unlink(file))
			warning("cannot remove '%s', left by an earlier report: %s",
				file, strerror(errno));
		free(file);
	}
	if (f)
		fclose(f);

	if (!(f = fopen(tmp, "w")) || !(d = opendir(dir))) {
		warning("cannot list the report's files in '%s': %s", path,
			strerror(errno));
		if (f)
			fclose(f);
		goto out;
	}
	fprintf(f, "# %s - written by fuseprof report: the files of the last "
		"report in this folder (modification time, size, name); the next "
		"report here removes those it does not write again.\n", MANIFEST);
	while ((e = readdir(d))) {
		struct stat sb;
		char *file;

		if (!report_file(e->d_name) || !wrote(w, e->d_name))
			continue;
		file = xasprintf("%s/%s", dir, e->d_name);
		if (!lstat(file, &sb) && S_ISREG(sb.st_mode))
			fprintf(f, "%lld.%09ld %lld %s\n", (long long)sb.st_mtim.tv_sec,
				(long)sb.st_mtim.tv_nsec, (long long)sb.st_size, e->d_name);
		free(file);
	}
	closedir(d);
	if ((ferror(f) | fclose(f)) || rename(tmp, path))
		warning("cannot write '%s': %s", path, strerror(errno));
out:
	unlink(tmp);
	free(tmp);
	free(path);
}

static int cmd_report(int argc, char **argv)
{
	enum { OPT_DB = 256, OPT_BASE, OPT_HIER, OPT_SIZE, OPT_NOSVG, OPT_NOPLOTS };
	static const struct option opts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "run", required_argument, NULL, 'r' },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "out", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "workload", required_argument, NULL, 'w' },
		{ "hierarchical", no_argument, NULL, OPT_HIER },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "no-svg", no_argument, NULL, OPT_NOSVG },
		{ "no-plots", no_argument, NULL, OPT_NOPLOTS },
		{ "keep-data", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *db = default_db_path(), *ref = "latest", *out = DEFAULT_OUT, *bad;
	const char *base_ref = NULL;
	const char *plot_opt = NULL;  /* the last plot option given */
	struct plot_opts po = { .width = 1200, .height = 800, .svg = 1 };
	struct strbuf wall = STRBUF_INIT;
	struct plot_images images = { 0 };
	struct fu_pairs pairs = { 0 };
	struct sr_rows saved = { 0 };
	struct opps opps = { 0 };
	struct rk_rows ranks = { 0 };
	struct rf_run run = { 0 }, base = { 0 };
	struct against ag = { 0 };
	struct report rep;
	struct store *st = NULL;
	unsigned formats = REPORT_ALL;
	char **workloads = NULL;
	int c, nw = 0, plots = 1, rc = EXIT_FAIL, plot_failed = 0;
	long long run_id, base_id = 0;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+r:o:f:w:kh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB:
			db = optarg;
			break;
		case 'r':
			ref = optarg;
			break;
		case OPT_BASE:
			base_ref = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'f':
			if (report_parse_formats(optarg, &formats, &bad)) {
				rc = usage_error("report", "report: unknown format '%.*s' "
						 "(use md, html, csv or json, comma-separated)",
						 (int)strcspn(bad, ","), bad);
				goto out_free;
			}
			break;
		case 'w':
			if (add_workloads(optarg, &workloads, &nw, &wall)) {
				rc = EXIT_USAGE;
				goto out_free;
			}
			break;
		case OPT_HIER:
			po.hierarchical = 1;
			plot_opt = "--hierarchical";
			break;
		case OPT_SIZE:
			plot_opt = "--size";
			if (parse_size(optarg, &po.width, &po.height)) {
				rc = usage_error("report", "report: bad --size '%s' (use WxH "
						 "in pixels, e.g. 1600x1000, each 100 to 20000)",
						 optarg);
				goto out_free;
			}
			break;
		case OPT_NOSVG:
			po.svg = 0;
			plot_opt = "--no-svg";
			break;
		case OPT_NOPLOTS:
			plots = 0;
			break;
		case 'k':
			po.keep_data = 1;
			plot_opt = "--keep-data";
			break;
		case 'h':
			help();
			rc = EXIT_OK;
			goto out_free;
		default:
			rc = usage_error("report", "report: unknown or incomplete option '%s'",
					 argv[optind - 1]);
			goto out_free;
		}
	}
	if (optind < argc) {
		rc = usage_error("report", "report: unexpected argument '%s'", argv[optind]);
		goto out_free;
	}
	if (!*out) {
		rc = usage_error("report", "report: --out needs a folder name");
		goto out_free;
	}
	if (!*db) {
		rc = usage_error("report", "report: --db: empty path");
		goto out_free;
	}
	if (base_ref && !*base_ref) {
		rc = usage_error("report", "report: --base needs a run (an id, "
				 "'latest', 'latest~N' or a tag)");
		goto out_free;
	}
	/* A plot option with --no-plots asks for something that will not
	 * be drawn: say so rather than drop it. */
	if (!plots && plot_opt) {
		rc = usage_error("report", "report: %s shapes the plots, which "
				 "--no-plots leaves out: drop one of them", plot_opt);
		goto out_free;
	}
	if (check_default_db(db) || store_open(&st, db, STORE_READONLY))
		goto out_free;
	/* The report reads every page of the run several times (counters
	 * by kernel, then the pairs): a page cache that holds them all
	 * (at most 64 MiB) saves rereading them from the file. */
	sqlite3_exec(store_db(st), "PRAGMA cache_size = -65536", NULL, NULL, NULL);
	if (store_resolve_run(st, ref, &run_id))
		goto out_close;
	if (base_ref) {
		int found = store_find_run(st, base_ref, &base_id);

		if (found < 0)
			goto out_close;
		/* Asked for what cannot be: a usage error, before anything
		 * is written. */
		if (!found) {
			rc = usage_error("report", "report: --base '%s': no such run "
					 "in '%s' (give a run id, 'latest', 'latest~N' "
					 "or a tag; see 'fuseprof list runs')", base_ref, db);
			goto out_close;
		}
		if (base_id == run_id) {
			rc = usage_error("report", "report: --base '%s' is run %lld, "
					 "the run reported: give another run to set it "
					 "against", base_ref, run_id);
			goto out_close;
		}
		/* The base first: rf_load leaves its rows for the readers
		 * after it, which want the run's. */
		if (rf_load(st, base_id, (const char *const *)workloads, &base))
			goto out_close;
	}
	if (rf_load(st, run_id, (const char *const *)workloads, &run))
		goto out_close;
	if (run.nops == 0) {
		char *have = run_workloads(st, run_id);

		if (have && nw)
			error("no ops of workload '%s' in run %lld of '%s' (it has: %s)",
			      strbuf_str(&wall), run_id, db, have);
		else
			error("run %lld in '%s' has no ops: nothing to report (its status "
			      "is '%s'; see 'fuseprof list runs')", run_id, db, run.status);
		free(have);
		goto out_release;
	}
	if (strcmp(run.status, "complete"))
		warning("run %lld is '%s', not complete: the report covers the %zu "
			"ops it stored", run_id, run.status, run.nops);
	if (base_ref) {
		if (strcmp(base.status, "complete"))
			warning("base run %lld is '%s', not complete: ops it did not "
				"reach show as only in run %lld", base_id, base.status,
				run_id);
		against_match(&base, &run, &ag);
		if (against_predict(st, &ag))
			goto out_release;
	}
	if (fusion_load_run(st, run_id, (const char *const *)workloads, &pairs) ||
	    saved_load_run(st, run_id, (const char *const *)workloads, &saved) ||
	    ranks_load_run(st, run_id, (const char *const *)workloads, &ranks))
		goto out_release;
	/* A profiled run's fusion opportunities, over the whole program
	 * (a chain may run across the --workload ranges asked for). */
	if (!strcmp(run.kind, "profile") && opps_load(st, run_id, &opps))
		goto out_release;
	if (make_out_dir(out))
		goto out_release;

	po.dir = out;
	if (!plots) {
		images.skipped = xstrdup("not asked for (--no-plots)");
	} else if (report_plots(&run, &pairs, base_ref ? &ag : NULL, &po, &images)) {
		/* Tables still carry every number: write them, then fail. */
		plot_failed = 1;
		images.skipped = xstrdup("gnuplot failed");
	}
	rep = (struct report){ .run = &run, .pairs = &pairs, .saved = &saved,
			       .ranks = &ranks,
			       .images = &images, .against = base_ref ? &ag : NULL,
			       .opps = strcmp(run.kind, "profile") ? NULL : &opps,
			       .db_path = db, .workloads = nw ? strbuf_str(&wall) : NULL };
	if (report_write(&rep, out, formats))
		goto out_release;
	if (!plot_failed) {
		struct written w = { formats, &po, &images, saved.n, ranks.n,
				     base_ref != NULL, opps.full.ncols > 0 };

		tidy_out_dir(out, &w);
	}
	report_summary(&rep, stdout);
	printf("\nreport of run %lld (%zu ops, %zu fusion pairs) written to %s/\n",
	       run_id, run.nops, pairs.n, out);
	if (!strcmp(run.kind, "profile")) {
		if (opps.notice)
			printf("fusion opportunities: none computed: %s\n", opps.notice);
		else
			printf("fusion opportunities: %zu chains (predicted gain %.4g us "
			       "in all), %zu GEMM epilogue or prologue pairs\n",
			       opps.nranked, opps.total_gain_ns / 1e3, opps.nedges);
	}
	if (ranks.n)
		printf("%lld ranks: the largest spread is %s's, %.3g x from the fastest "
		       "rank to the slowest rank %lld (%s)\n", ranks.nranks,
		       ranks.v[0].workload, ranks.v[0].spread, ranks.v[0].slowest_rank,
		       ranks.v[0].slowest_host);
	if (base_ref)
		printf("against run %lld: %zu ops in both runs, %zu with an arrow on "
		       "the roofline; %zu only in run %lld, %zu only in run %lld\n",
		       base_id, ag.npairs, ag.ndrawn, ag.nbase_only, base_id,
		       ag.nrun_only, run_id);
	/* Impossible numbers are flagged in the files; say so where the
	 * user is looking, naming the first file written that lists them.
	 * A failed report says its one error line alone. */
	if (run.nflagged && !plot_failed)
		warning("%zu op%s numbers to distrust: see %s/%s", run.nflagged,
			run.nflagged == 1 ? " has" : "s have", out,
			formats & REPORT_MD ? "report.md" : formats & REPORT_HTML
			? "report.html" : formats & REPORT_CSV ? "distrust.csv"
			: "report.json");
	rc = plot_failed ? EXIT_FAIL : EXIT_OK;

out_release:
	plot_images_release(&images);
	opps_release(&opps);
	saved_release(&saved);
	ranks_release(&ranks);
	fusion_release(&pairs);
	rf_release(&run);
out_close:
	against_release(&ag);
	rf_release(&base);
	store_close(st);
out_free:
	for (int i = 0; i < nw; i++)
		free(workloads[i]);
	free(workloads);
	strbuf_release(&wall);
	return rc;
}

const struct cmd_entry cmd_report_entry = {
	"report", "write rooflines, fusion gains and tables for a run (no GPU needed)",
	cmd_report
};
