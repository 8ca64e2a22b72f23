/* cmd-compare.c - `fuseprof compare BASE NEW`: match the ops of two runs and
 * say, op by op, what got slower, moves more bytes or FLOPs, or broke; the
 * exit status gates a CI job. The verdicts themselves live in
 * reports/compare.c. */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "compare.h"
#include "error.h"
#include "store.h"
#include "table.h"
#include "util.h"

static void help(void)
{
	printf("Usage: fuseprof compare [OPTION]... BASE NEW\n"
	       "Compare run NEW against run BASE op by op and exit 1 if anything\n"
	       "regressed, so 'fuseprof compare latest~1 latest' can gate a CI job.\n"
	       "BASE and NEW are run ids, 'latest', 'latest~N' (N runs before the\n"
	       "latest) or tags (the newest run carrying it).\n"
	       "\n"
	       "Ops are matched by workload, variant, dtype and shape; two profiled\n"
	       "runs ('fuseprof profile') by workload alone, their range path (their\n"
	       "variant is their tag: 'eager->compiled' in the variant column).\n"
	       "When a run measured on several GPUs ('run --device all'), ops match\n"
	       "device by device too (the first GPU of each run with the first, and\n"
	       "so on; a run on one GPU is the other's first; the workload column\n"
	       "says '@N').\n"
	       "Each op gets:\n"
	       "  time    SLOWER / FASTER / SAME from the per-repetition times. The\n"
	       "          change is median(NEW) / median(BASE) - 1; it counts only when\n"
	       "          it exceeds both the threshold and the noise of each run,\n"
	       "          where noise = (p90 - p10) / median of that run's repetitions.\n"
	       "  dram    MORE / FEWER / SAME DRAM bytes (read + write), and\n"
	       "  flops   the same for FLOPs of all precisions: hardware counts, so a\n"
	       "          change past --count-threshold is real; n/a when a run has\n"
	       "          no counters. When the runs took counters differently\n"
	       "          (runs.counters: one counted the write-back of dirty L2\n"
	       "          lines and the other not, another replay or flush), DRAM\n"
	       "          bytes are not comparable: a warning names both methods,\n"
	       "          the dram column says not-comparable and no verdict or\n"
	       "          exit status rests on bytes.\n"
	       "A verdict column names the worst finding per op: WRONG (was ok, now\n"
	       "wrong or failed), SLOWER, MORE-BYTES, MORE-FLOPS, REMOVED, ADDED,\n"
	       "LAUNCHES (launch count changed), STILL-WRONG, FIXED, FASTER,\n"
	       "FEWER-BYTES, FEWER-FLOPS, SAME. Rows come worst first.\n"
	       "Runs on different GPU models (device names; every GPU of a run of\n"
	       "several) are refused (exit 2).\n"
	       "\n"
	       "Options:\n"
	       "      --db PATH              database of NEW, and of BASE unless\n"
	       "                             --base-db (default: $FUSEPROF_DB or\n"
	       "                             fuseprof.db)\n"
	       "      --base-db PATH         database of BASE\n"
	       "  -t, --threshold PCT        smallest time change that counts, in %%\n"
	       "                             (default %g)\n"
	       "      --count-threshold PCT  smallest DRAM-byte or FLOP change that\n"
	       "                             counts, in %% (default %g)\n"
	       "      --force                compare runs on different GPU models\n"
	       "  -c, --changes              leave out the SAME rows\n"
	       "  -f, --format FMT           table (default), csv, json or md\n"
	       "  -h, --help                 show this help and exit\n"
	       "\n"
	       "Columns: verdict, the op's key, base_ns and new_ns (median times),\n"
	       "time_pct (change in %%), noise_pct (larger noise of the two runs),\n"
	       "time, dram_pct, dram, flops_pct, flops, launches (per repetition,\n"
	       "'3->1' when changed), status ('ok->wrong' when changed) and kernel:\n"
	       "'kernel' when the two runs' launchers picked different kernels for\n"
	       "the op, 'options' when different kernel options were in force (both:\n"
	       "'kernel,options'); each such op also gets a warning on stderr. Such a\n"
	       "row compares two kernels; the exit status is judged as for any other.\n"
	       "\n"
	       "Examples:\n"
	       "  fuseprof compare latest~1 latest           # CI: exit 1 on a regression\n"
	       "  fuseprof compare --changes v1.2 latest     # tags; only what changed\n"
	       "  fuseprof compare -t 10 --format md 3 7     # 10%% bar, Markdown table\n"
	       "  fuseprof compare --base-db main.db --db pr.db latest latest\n"
	       "  fuseprof compare --format json 12 15 > diff.json\n"
	       "\n"
	       "Exit status: 0 nothing regressed, 1 something is SLOWER, moves more\n"
	       "DRAM bytes or FLOPs, or became wrong (or the comparison failed),\n"
	       "2 usage error or a refusal (runs on different GPU models).\n",
	       100 * CMP_DEFAULT_TIME_THRESHOLD, 100 * CMP_DEFAULT_COUNT_THRESHOLD);
}

/* One op of one run, as the verdicts need it. */
struct op {
	long long id;
	char *workload, *variant, *dtype, *shape, *status;
	char *kernel_opts, *kernel;  /* "" when not recorded */
	int device;             /* its device among the run's (0 first) */
	double *samples;
	size_t nsamples, alloc;
	long long launches;
	int has_counters;
	double dram_bytes, flops;
};

struct run {
	long long id;
	char *started, *tag, *status, *device, *counters, *kind;
	char *models;           /* its ops' GPU models, ", "-joined; NULL: none */
	int ndevices;           /* devices its ops ran on */
	const char *db;
	struct op *ops;
	size_t nops;
};

struct row {
	const struct op *base, *new;
	int by_path;  /* the runs' ops matched by range path (cmp_match_by_path) */
	int by_device;  /* and device by device (both runs on several GPUs) */
	struct cmp_result r;
};

static char *column_dup(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t ? xstrdup((const char *)t) : NULL;
}

static double column_real(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static struct cmp_key op_key(const struct op *o)
{
	return (struct cmp_key){ o->workload, o->variant, o->dtype, o->shape, 0 };
}

static void run_release(struct run *r)
{
	for (size_t i = 0; i < r->nops; i++) {
		struct op *o = &r->ops[i];

		free(o->workload);
		free(o->variant);
		free(o->dtype);
		free(o->shape);
		free(o->status);
		free(o->kernel_opts);
		free(o->kernel);
		free(o->samples);
	}
	free(r->ops);
	free(r->started);
	free(r->tag);
	free(r->status);
	free(r->device);
	free(r->models);
	free(r->counters);
	free(r->kind);
	memset(r, 0, sizeof *r);
}

/* Resolve ref in db and load the run with its ops (in op id order) and
 * per-rep samples. Returns 0, or -1 after an error. */
static int load_run(const char *db, const char *ref, struct run *run)
{
	struct store *st = NULL;
	sqlite3_stmt *s = NULL;
	size_t alloc = 0, j = 0;
	int rc = -1, step;

	memset(run, 0, sizeof *run);
	run->db = db;
	if (check_default_db(db) || store_open(&st, db, STORE_READONLY) ||
	    store_resolve_run(st, ref, &run->id))
		goto out;

	if (sqlite3_prepare_v2(store_db(st), "SELECT started_at, tag, status, device, "
			       "counters, kind FROM v_runs WHERE run_id = ?1", -1, &s,
			       NULL) != SQLITE_OK)
		goto out_sql;
	sqlite3_bind_int64(s, 1, run->id);
	if (sqlite3_step(s) != SQLITE_ROW)
		goto out_sql;
	run->started = column_dup(s, 0);
	run->tag = column_dup(s, 1);
	run->status = column_dup(s, 2);
	run->device = column_dup(s, 3);
	run->counters = column_dup(s, 4);
	run->kind = column_dup(s, 5);
	sqlite3_finalize(s);

	/* The GPU models of its ops: a run on several GPUs may mix them. */
	if (sqlite3_prepare_v2(store_db(st), "SELECT group_concat(name, ', ') FROM "
			       "(SELECT DISTINCT d.name FROM ops o JOIN runs r ON "
			       "r.id = o.run_id JOIN devices d ON d.id = "
			       "coalesce(o.device_id, r.device_id) WHERE o.run_id = ?1 "
			       "ORDER BY d.name)", -1, &s, NULL) != SQLITE_OK)
		goto out_sql;
	sqlite3_bind_int64(s, 1, run->id);
	if (sqlite3_step(s) != SQLITE_ROW)
		goto out_sql;
	run->models = column_dup(s, 0);
	sqlite3_finalize(s);

	/* FLOPs of all precisions, defined as v_roofline does; NULL without
	 * counters, since v_kernel_counters reports 0 FLOPs then. */
	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT op_id, workload, variant, dtype, shape, status,"
			       " launches, ncounters, dram_bytes,"
			       " CASE WHEN ncounters > 0 THEN flops_fp32 + flops_fp64"
			       "  + flops_fp16 + coalesce(flops_tensor, 0) END,"
			       " kernel_opts, kernel,"
			       " dense_rank() OVER (ORDER BY device_id) - 1"
			       " FROM v_ops WHERE run_id = ?1 ORDER BY op_id",
			       -1, &s, NULL) != SQLITE_OK)
		goto out_sql;
	sqlite3_bind_int64(s, 1, run->id);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct op *o;

		if (run->nops == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			run->ops = xrealloc(run->ops, alloc * sizeof *run->ops);
		}
		o = &run->ops[run->nops++];
		memset(o, 0, sizeof *o);
		o->id = sqlite3_column_int64(s, 0);
		o->workload = column_dup(s, 1);
		o->variant = column_dup(s, 2);
		o->dtype = column_dup(s, 3);
		o->shape = column_dup(s, 4);
		o->status = column_dup(s, 5);
		o->launches = sqlite3_column_type(s, 6) == SQLITE_NULL
			      ? -1 : sqlite3_column_int64(s, 6);
		o->has_counters = sqlite3_column_int64(s, 7) > 0;
		o->dram_bytes = column_real(s, 8);
		o->flops = column_real(s, 9);
		o->kernel_opts = xstrdup(sqlite3_column_text(s, 10)
					 ? (const char *)sqlite3_column_text(s, 10) : "");
		o->kernel = xstrdup(sqlite3_column_text(s, 11)
				    ? (const char *)sqlite3_column_text(s, 11) : "");
		o->device = sqlite3_column_int(s, 12);
		if (o->device + 1 > run->ndevices)
			run->ndevices = o->device + 1;
	}
	if (step != SQLITE_DONE)
		goto out_sql;
	sqlite3_finalize(s);

	/* Samples in op id order, walked alongside the ops in the same order. */
	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT s.op_id, s.time_ns FROM samples s"
			       " JOIN ops o ON o.id = s.op_id WHERE o.run_id = ?1"
			       " ORDER BY s.op_id, s.rep", -1, &s, NULL) != SQLITE_OK)
		goto out_sql;
	sqlite3_bind_int64(s, 1, run->id);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(s, 0);
		struct op *o;

		while (j < run->nops && run->ops[j].id < id)
			j++;
		if (j == run->nops || run->ops[j].id != id)
			continue;
		o = &run->ops[j];
		if (o->nsamples == o->alloc) {
			o->alloc = o->alloc ? 2 * o->alloc : 16;
			o->samples = xrealloc(o->samples, o->alloc * sizeof *o->samples);
		}
		o->samples[o->nsamples++] = sqlite3_column_double(s, 1);
	}
	if (step != SQLITE_DONE)
		goto out_sql;
	sqlite3_finalize(s);
	s = NULL;
	rc = 0;
	goto out;

out_sql:
	store_error(st, "cannot read the run from");
	sqlite3_finalize(s);
out:
	store_close(st);
	if (rc)
		run_release(run);
	return rc;
}

static void to_cmp(const struct op *o, struct cmp_op *c)
{
	c->status = o->status;
	c->samples = o->samples;
	c->nsamples = o->nsamples;
	c->launches = o->launches;
	c->has_counters = o->has_counters;
	c->dram_bytes = o->dram_bytes;
	c->flops = o->flops;
}

/* Match the ops of the two runs (cmp_match_ops: by range path between two
 * profiles) and judge each pair. Returns the rows (malloc'd) and their
 * count in *n. */
static struct row *match(const struct run *base, const struct run *new,
			 const struct cmp_opts *opts, size_t *n)
{
	struct cmp_key *kb = xcalloc(base->nops + 1, sizeof *kb);
	struct cmp_key *kn = xcalloc(new->nops + 1, sizeof *kn);
	int by_path = cmp_match_by_path(base->kind, new->kind);
	struct cmp_match *m;
	struct row *rows;

	/* Device by device when a run has several: a run of one GPU is
	 * the other's first; the other GPUs' ops are only in one run. */
	int by_device = base->ndevices > 1 || new->ndevices > 1;

	for (size_t i = 0; i < base->nops; i++) {
		kb[i] = op_key(&base->ops[i]);
		kb[i].device = by_device ? base->ops[i].device : 0;
	}
	for (size_t i = 0; i < new->nops; i++) {
		kn[i] = op_key(&new->ops[i]);
		kn[i].device = by_device ? new->ops[i].device : 0;
	}
	m = cmp_match_ops(kb, base->nops, kn, new->nops, by_path, n);
	rows = xcalloc(*n + 1, sizeof *rows);
	for (size_t k = 0; k < *n; k++) {
		struct row *r = &rows[k];
		struct cmp_op cb, cn;

		r->base = m[k].base != CMP_NONE ? &base->ops[m[k].base] : NULL;
		r->new = m[k].new != CMP_NONE ? &new->ops[m[k].new] : NULL;
		r->by_path = by_path;
		r->by_device = by_device;
		if (r->base)
			to_cmp(r->base, &cb);
		if (r->new)
			to_cmp(r->new, &cn);
		cmp_ops(r->base ? &cb : NULL, r->new ? &cn : NULL, opts, &r->r);
	}
	free(m);
	free(kb);
	free(kn);
	return rows;
}

static int row_order(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int c = cmp_result_order(&a->r, &b->r);
	struct cmp_key ka, kb;

	if (c)
		return c;
	ka = op_key(a->base ? a->base : a->new);
	kb = op_key(b->base ? b->base : b->new);
	ka.device = a->by_device ? (a->base ? a->base : a->new)->device : 0;
	kb.device = b->by_device ? (b->base ? b->base : b->new)->device : 0;
	return cmp_key_order(&ka, &kb, a->by_path);
}

/* What differs in how a matched pair ran: "kernel" (the launchers picked
 * different kernels), "options" (different kernel options in force),
 * "kernel,options", or NULL when nothing does or one side is missing.
 * Either difference makes the timing a comparison of two kernels, not a
 * regression of one. An op stored before kernels were recorded ("") is
 * taken as unknown, not as different. */
static const char *kernel_diff(const struct row *row)
{
	const struct op *b = row->base, *n = row->new;
	int k, o;

	if (!b || !n)
		return NULL;
	k = *b->kernel && *n->kernel && strcmp(b->kernel, n->kernel);
	o = *b->kernel_opts && *n->kernel_opts && strcmp(b->kernel_opts, n->kernel_opts);
	return k && o ? "kernel,options" : k ? "kernel" : o ? "options" : NULL;
}

/* Warn (stderr) about each matched op that ran a different kernel or
 * different kernel options; after MAX_KERNEL_WARNINGS of them, a count. */
#define MAX_KERNEL_WARNINGS 10
static void warn_kernels(const struct row *rows, size_t n, const struct run *base,
			 const struct run *new)
{
	size_t shown = 0, more = 0;

	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		const char *d = kernel_diff(r);

		if (!d)
			continue;
		if (shown == MAX_KERNEL_WARNINGS) {
			more++;
			continue;
		}
		shown++;
		if (!strcmp(d, "options"))
			warning("compare: %s/%s/%s/%s ran with different kernel options "
				"(run %lld '%s', run %lld '%s')", r->new->workload,
				r->new->variant, r->new->dtype, r->new->shape, base->id,
				r->base->kernel_opts, new->id, r->new->kernel_opts);
		else
			warning("compare: %s/%s/%s/%s ran a different kernel (run %lld "
				"'%s' [%s], run %lld '%s' [%s])", r->new->workload,
				r->new->variant, r->new->dtype, r->new->shape, base->id,
				r->base->kernel, r->base->kernel_opts, new->id,
				r->new->kernel, r->new->kernel_opts);
	}
	if (more)
		warning("compare: %zu more op%s ran a different kernel or different "
			"kernel options (the 'kernel' column)", more, more == 1 ? "" : "s");
}

/* A number with a fixed number of decimals, or null when not finite. No
 * '+' sign and no "-0.0": the cell must stay a valid JSON number. */
static void add_fixed(struct table *t, double v, int decimals)
{
	char buf[64];

	if (!isfinite(v)) {
		table_add_null(t);
		return;
	}
	if (fabs(v) < 0.5 * pow(10, -decimals))
		v = 0;
	snprintf(buf, sizeof buf, "%.*f", decimals, v);
	table_add_number_text(t, buf);
}

/* A change (fraction) as a percentage with one decimal. */
static void add_pct(struct table *t, double fraction)
{
	add_fixed(t, 100 * fraction, 1);
}

static void add_row(struct table *t, const struct row *row)
{
	const struct cmp_result *r = &row->r;
	const struct op *key = row->base ? row->base : row->new;
	char buf[64];

	table_add_text(t, cmp_verdict_name(r->verdict));
	if (row->by_device) {
		char *w = xasprintf("%s@%d", key->workload, key->device);

		table_add_text(t, w);
		free(w);
	} else {
		table_add_text(t, key->workload);
	}
	if (row->base && row->new && strcmp(row->base->variant, row->new->variant)) {
		char *v = xasprintf("%s->%s", row->base->variant, row->new->variant);

		table_add_text(t, v);
		free(v);
	} else {
		table_add_text(t, key->variant);
	}
	table_add_text(t, key->dtype);
	table_add_text(t, key->shape);
	/* Whole ns: the timer's resolution. */
	add_fixed(t, r->base_ns, 0);
	add_fixed(t, r->new_ns, 0);
	add_pct(t, r->time_change);
	if (r->time == CMP_TIME_NA)
		table_add_null(t);
	else
		add_fixed(t, 100 * fmax(r->base_noise, r->new_noise), 1);
	table_add_text(t, cmp_time_name(r->time));
	add_pct(t, r->dram_change);
	table_add_text(t, cmp_count_name(r->dram));
	add_pct(t, r->flops_change);
	table_add_text(t, cmp_count_name(r->flops));
	if (r->launches_changed) {
		snprintf(buf, sizeof buf, "%lld->%lld", r->base_launches, r->new_launches);
		table_add_text(t, buf);
	} else if (r->new_launches >= 0 || r->base_launches >= 0) {
		table_add_int(t, r->new_launches >= 0 ? r->new_launches : r->base_launches);
	} else {
		table_add_null(t);
	}
	if (row->base && row->new && strcmp(row->base->status, row->new->status)) {
		snprintf(buf, sizeof buf, "%s->%s", row->base->status, row->new->status);
		table_add_text(t, buf);
	} else {
		table_add_text(t, key->status);
	}
	table_add_text(t, kernel_diff(row));
}

static void describe_run(const char *label, const struct run *r)
{
	printf("%s: run %lld (%s), started %s on %s%s%s, in %s\n", label, r->id,
	       r->status ? r->status : "?", r->started ? r->started : "?",
	       r->device ? r->device : "an unknown GPU",
	       r->tag ? ", tag " : "", r->tag ? r->tag : "", r->db);
}

static void summary(const struct row *rows, size_t n, int regressed,
		    const struct cmp_opts *opts)
{
	size_t count[CMP_NVERDICTS] = { 0 };
	int first = 1;

	for (size_t i = 0; i < n; i++)
		count[rows[i].r.verdict]++;
	printf("\n%zu op%s:", n, n == 1 ? "" : "s");
	for (int v = 0; v < CMP_NVERDICTS; v++) {
		if (!count[v])
			continue;
		printf("%s %zu %s", first ? "" : ",", count[v],
		       cmp_verdict_name((enum cmp_verdict)v));
		first = 0;
	}
	printf("; bars: time %g%% or the noise, counts %g%%%s: %s\n",
	       100 * opts->time_threshold, 100 * opts->count_threshold,
	       opts->bytes_incomparable ? " (DRAM bytes not comparable: counters "
					  "taken differently)" : "",
	       regressed ? "REGRESSED" : "no regression");
}

/* "5", "5%", "2.5" -> 0.05, 0.05, 0.025. */
static int parse_pct(const char *s, double *out)
{
	char buf[64];
	size_t n = strlen(s);
	double v;

	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n + 1);
	if (buf[n - 1] == '%')
		buf[n - 1] = '\0';
	if (parse_double(buf, &v) || v < 0 || v >= 1000)
		return -1;
	*out = v / 100;
	return 0;
}

static int cmd_compare(int argc, char **argv)
{
	enum { OPT_DB = 256, OPT_BASE_DB, OPT_COUNT, OPT_FORCE };
	static const struct option opts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "base-db", required_argument, NULL, OPT_BASE_DB },
		{ "threshold", required_argument, NULL, 't' },
		{ "count-threshold", required_argument, NULL, OPT_COUNT },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "changes", no_argument, NULL, 'c' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const hdr[] = {
		"verdict", "workload", "variant", "dtype", "shape", "base_ns",
		"new_ns", "time_pct", "noise_pct", "time", "dram_pct", "dram",
		"flops_pct", "flops", "launches", "status", "kernel"
	};
	struct cmp_opts co = { CMP_DEFAULT_TIME_THRESHOLD, CMP_DEFAULT_COUNT_THRESHOLD, 0 };
	const char *db = default_db_path(), *base_db = NULL;
	enum table_format fmt = TABLE_TEXT;
	struct run base, new;
	struct row *rows = NULL;
	struct table t;
	size_t n = 0;
	int c, force = 0, changes = 0, regressed = 0, rc = EXIT_FAIL;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "t:cf:h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_DB:
			db = optarg;
			break;
		case OPT_BASE_DB:
			base_db = optarg;
			break;
		case 't':
			if (parse_pct(optarg, &co.time_threshold))
				return usage_error("compare", "compare: bad --threshold '%s' "
						   "(a percentage, e.g. 5 or 2.5%%)", optarg);
			break;
		case OPT_COUNT:
			if (parse_pct(optarg, &co.count_threshold))
				return usage_error("compare", "compare: bad --count-threshold "
						   "'%s' (a percentage, e.g. 1)", optarg);
			break;
		case OPT_FORCE:
			force = 1;
			break;
		case 'c':
			changes = 1;
			break;
		case 'f':
			if (format_option("compare", optarg, &fmt))
				return EXIT_USAGE;
			break;
		case 'h':
			help();
			return EXIT_OK;
		default:
			return usage_error("compare", "compare: unknown or incomplete "
					   "option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return usage_error("compare", "compare: give two runs, BASE and NEW "
				   "(e.g. 'latest~1 latest'), got %d", argc - optind);
	if (!*db || (base_db && !*base_db))
		return usage_error("compare", "compare: --%s: empty path",
				   *db ? "base-db" : "db");

	if (load_run(base_db ? base_db : db, argv[optind], &base))
		return EXIT_FAIL;
	if (load_run(db, argv[optind + 1], &new))
		goto out_base;
	/* A refusal, not a verdict: exit 2, as for any other request compare
	 * will not carry out, so a CI job that gates on 1 (regressed) does
	 * not read two GPU models as a regression. */
	{
		/* The models of every GPU a run used, where its ops say. */
		const char *bm = base.models ? base.models : base.device;
		const char *nm = new.models ? new.models : new.device;

		if (bm && nm && strcmp(bm, nm) && !force) {
			rc = usage_error("compare", "compare: run %lld of '%s' ran on "
					 "'%s' and run %lld of '%s' on '%s': refusing to "
					 "compare different GPU models (--force compares "
					 "anyway)", base.id, base.db, bm, new.id, new.db, nm);
			goto out_new;
		}
	}
	if (!base.device || !new.device)
		warning("compare: run %lld has no recorded GPU; cannot check that both "
			"runs used the same model", base.device ? new.id : base.id);
	if (base.status && strcmp(base.status, "complete"))
		warning("compare: base run %lld is '%s': ops it did not reach show as ADDED",
			base.id, base.status);
	if (new.status && strcmp(new.status, "complete"))
		warning("compare: new run %lld is '%s': ops it did not reach show as REMOVED",
			new.id, new.status);
	/* One counting the write-back of dirty L2 lines and the other not
	 * (or another replay, flush or group): their DRAM bytes differ for
	 * that alone, so no byte verdict; times and FLOPs stand. */
	if (base.counters && new.counters && strcmp(base.counters, new.counters)) {
		co.bytes_incomparable = 1;
		warning("compare: the runs collected counters differently ('%s', then "
			"'%s'): bytes not comparable, the dram column says "
			"not-comparable; times and FLOPs are compared",
			base.counters, new.counters);
	}

	rows = match(&base, &new, &co, &n);
	qsort(rows, n, sizeof *rows, row_order);
	warn_kernels(rows, n, &base, &new);
	table_init(&t, (int)ARRAY_SIZE(hdr), hdr);
	for (size_t i = 0; i < n; i++) {
		regressed |= rows[i].r.regressed;
		if (!changes || rows[i].r.verdict != CMP_SAME)
			add_row(&t, &rows[i]);
	}
	if (fmt == TABLE_TEXT) {
		describe_run("base", &base);
		describe_run("new", &new);
		putchar('\n');
	}
	table_print(&t, fmt, stdout);
	if (fmt == TABLE_TEXT)
		summary(rows, n, regressed, &co);
	table_release(&t);
	free(rows);
	rc = regressed ? EXIT_FAIL : EXIT_OK;
out_new:
	run_release(&new);
out_base:
	run_release(&base);
	return rc;
}

const struct cmd_entry cmd_compare_entry = {
	"compare", "compare two runs op by op; exit 1 on a regression", cmd_compare
};
