/* cmd-list.c - `fuseprof list`: the runs in a database, or the workloads this
 * build can measure. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "store.h"
#include "table.h"
#include "util.h"
#ifdef FP_GPU_PROGRAM
#include "workload.h"
#endif

static void help(void)
{
	printf("Usage: fuseprof list [OPTION]... runs\n"
	       "       fuseprof list [OPTION]... workloads\n"
	       "List the runs stored in the database (newest first), or the workloads\n"
	       "this fuseprof can measure with their variants, dtypes and shape\n"
	       "parameters, and the variants that run a default suite of their own (the\n"
	       "naive ones: the smallest shape). With --options, the workloads' kernel\n"
	       "options instead: one row per option with its allowed values ('*' marks\n"
	       "the default) and what it does; 'fuseprof run --kernel-opt KEY=VALUE'\n"
	       "sets them. With --variants, the variants instead: one row per variant\n"
	       "with its role (fused, unfused, naive), its twin (for an unfused\n"
	       "variant, the fused variant that runs the same kernels as one, keeping\n"
	       "the same tensors for the backward: what a predicted fusion of them is\n"
	       "checked against) and what its kernels do.\n"
	       "\n"
	       "Options:\n"
	       "      --db PATH        database file (default: $FUSEPROF_DB or fuseprof.db)\n"
	       "  -o, --options        workloads: list the kernel options\n"
	       "      --variants       workloads: list the variants\n"
	       "  -f, --format FMT     table (default), csv, json or md\n"
	       "  -h, --help           show this help and exit\n"
	       "\n"
	       "Examples:\n"
	       "  fuseprof list runs\n"
	       "  fuseprof list runs --format json --db nightly.db\n"
	       "  fuseprof list workloads\n"
	       "  fuseprof list workloads --options\n"
	       "  fuseprof list workloads --variants --format csv\n");
}

static int list_runs(const char *db, enum table_format fmt)
{
	static const char *const hdr[] = {
		"id", "started", "device", "tag", "status", "ops", "failed"
	};
	struct store *st;
	sqlite3_stmt *s = NULL;
	struct table t;
	int rc;

	if (check_default_db(db) || store_open(&st, db, STORE_READONLY))
		return EXIT_FAIL;
	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT run_id, started_at, device, tag, status, ops, "
			       "failed_ops FROM v_runs ORDER BY run_id DESC",
			       -1, &s, NULL) != SQLITE_OK) {
		store_error(st, "cannot read runs from");
		store_close(st);
		return EXIT_FAIL;
	}
	table_init(&t, 7, hdr);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		table_add_int(&t, sqlite3_column_int64(s, 0));
		for (int i = 1; i <= 4; i++)
			table_add_text(&t, (const char *)sqlite3_column_text(s, i));
		table_add_int(&t, sqlite3_column_int64(s, 5));
		table_add_int(&t, sqlite3_column_int64(s, 6));
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		store_error(st, "cannot read runs from");
		table_release(&t);
		store_close(st);
		return EXIT_FAIL;
	}
	table_print(&t, fmt, stdout);
	table_release(&t);
	store_close(st);
	return EXIT_OK;
}

#ifdef FP_GPU_PROGRAM
/* One row per kernel option: workload, option, its values with '*' after
 * the default ("auto*,simt,mma"), help. A workload without options has
 * no row. */
static int list_kopts(enum table_format fmt)
{
	static const char *const hdr[] = { "workload", "option", "values", "help" };
	struct table t;

	table_init(&t, 4, hdr);
	for (const struct workload *const *w = fp_workloads; *w; w++) {
		for (int k = 0; k < workload_nkopts(*w); k++) {
			const struct fp_kopt *ko = &(*w)->kopts[k];
			struct strbuf v = STRBUF_INIT;

			for (int i = 0; ko->values[i]; i++)
				strbuf_addf(&v, "%s%s%s", i ? "," : "", ko->values[i],
					    i ? "" : "*");
			table_add_text(&t, (*w)->name);
			table_add_text(&t, ko->name);
			table_add_text(&t, strbuf_str(&v));
			table_add_text(&t, ko->help);
			strbuf_release(&v);
		}
	}
	table_print(&t, fmt, stdout);
	table_release(&t);
	return EXIT_OK;
}

/* One row per variant: workload, variant, role, twin (empty where it
 * declares none), its own default suite (empty: the workload's), summary. */
static int list_variants(enum table_format fmt)
{
	static const char *const hdr[] = {
		"workload", "variant", "role", "twin", "suite", "summary"
	};
	struct table t;

	table_init(&t, 6, hdr);
	for (const struct workload *const *w = fp_workloads; *w; w++)
		for (const struct fp_variant *v = (*w)->variants; v->name; v++) {
			table_add_text(&t, (*w)->name);
			table_add_text(&t, v->name);
			table_add_text(&t, fp_role_name(v->role));
			table_add_text(&t, v->twin ? v->twin : "");
			table_add_text(&t, v->suite ? v->suite : "");
			table_add_text(&t, v->summary);
		}
	table_print(&t, fmt, stdout);
	table_release(&t);
	return EXIT_OK;
}

/* One row per workload: its variants, dtypes, shape parameters ('[P=d]':
 * optional, default d), the variants that run a default suite of their own
 * instead of the workload's ("naive: M=16384,K=768,N=256"; empty when none
 * does), a forward's backward workload (empty when it has none), and its
 * summary. */
static int list_workloads(enum table_format fmt)
{
	static const char *const hdr[] = {
		"workload", "variants", "dtypes", "shape", "variant suites",
		"backward", "summary"
	};
	struct table t;

	table_init(&t, 7, hdr);
	for (const struct workload *const *w = fp_workloads; *w; w++) {
		struct strbuf v = STRBUF_INIT, d = STRBUF_INIT, p = STRBUF_INIT;
		struct strbuf vs = STRBUF_INIT;

		for (int i = 0; (*w)->variants[i].name; i++) {
			const struct fp_variant *fv = &(*w)->variants[i];

			strbuf_addf(&v, "%s%s", i ? "," : "", fv->name);
			if (fv->suite)
				strbuf_addf(&vs, "%s%s: %s", vs.len ? "; " : "",
					    fv->name, fv->suite);
		}
		for (int i = 0; i < FP_NDTYPES; i++)
			if ((*w)->dtypes & FP_DTYPE_BIT(i))
				strbuf_addf(&d, "%s%s", d.len ? "," : "",
					    fp_dtype_name((enum fp_dtype)i));
		for (int i = 0; (*w)->params[i].name; i++) {
			const struct fp_param *pp = &(*w)->params[i];

			if (pp->def == FP_REQUIRED)
				strbuf_addf(&p, "%s%s", i ? "," : "", pp->name);
			else
				strbuf_addf(&p, "%s[%s=%ld]", i ? "," : "", pp->name, pp->def);
		}
		table_add_text(&t, (*w)->name);
		table_add_text(&t, strbuf_str(&v));
		table_add_text(&t, strbuf_str(&d));
		table_add_text(&t, strbuf_str(&p));
		table_add_text(&t, strbuf_str(&vs));
		table_add_text(&t, (*w)->backward ? (*w)->backward : "");
		table_add_text(&t, (*w)->summary);
		strbuf_release(&vs);
		strbuf_release(&v);
		strbuf_release(&d);
		strbuf_release(&p);
	}
	table_print(&t, fmt, stdout);
	table_release(&t);
	return EXIT_OK;
}
#endif

static int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "options", no_argument, NULL, 'o' },
		{ "variants", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *db = default_db_path();
	enum table_format fmt = TABLE_TEXT;
	int c, kopts = 0, variants = 0;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:oh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db = optarg;
			break;
		case 'f':
			if (format_option("list", optarg, &fmt))
				return EXIT_USAGE;
			break;
		case 'o':
			kopts = 1;
			break;
		case 'V':
			variants = 1;
			break;
		case 'h':
			help();
			return EXIT_OK;
		default:
			return usage_error("list", "list: unknown or incomplete option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind == argc)
		return usage_error("list", "list: say what to list: runs or workloads");
	if (optind + 1 < argc)
		return usage_error("list", "list: one thing at a time: runs or workloads");
	if (!strcmp(argv[optind], "runs")) {
		if (kopts || variants)
			return usage_error("list", "list: --%s is for 'list workloads'",
					   kopts ? "options" : "variants");
		return list_runs(db, fmt);
	}
	if (kopts && variants)
		return usage_error("list", "list: --options or --variants, not both");
	if (!strcmp(argv[optind], "workloads"))
#ifdef FP_GPU_PROGRAM
		return kopts ? list_kopts(fmt) : variants ? list_variants(fmt)
		     : list_workloads(fmt);
#else
		return gpu_exec(argc, argv);  /* the registry links CUDA */
#endif
	return usage_error("list", "list: unknown list '%s' (use runs or workloads)",
			   argv[optind]);
}

const struct cmd_entry cmd_list_entry = {
	"list", "list the runs in a database, or the workloads", cmd_list
};
