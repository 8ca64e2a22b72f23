/* cmd-query.c - `fuseprof query`: read-only SQL, or a named view, printed as
 * a table, CSV, JSON or Markdown. */
#include "config.h"

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "error.h"
#include "opps.h"
#include "store.h"
#include "table.h"
#include "util.h"
#include "views.h"

static void help(void)
{
	printf("Usage: fuseprof query [OPTION]... SQL\n"
	       "       fuseprof query [OPTION]... VIEW\n"
	       "       fuseprof query [OPTION]... opportunities [RUN]\n"
	       "       fuseprof query --list\n"
	       "Run one read-only SQL statement against the database and print its rows.\n"
	       "A bare VIEW name (e.g. 'ops' or 'v_ops') selects every row of that view.\n"
	       "The database is opened read-only: statements that write are refused.\n"
	       "Options may come before or after the SQL; '--' ends them.\n"
	       "\n"
	       "Named queries (each prints a view documented in fuseprof(1)):\n"
	       "  runs          every run, newest first: date, GPU, tag, status, op\n"
	       "                counts (v_runs)\n"
	       "  regressions   each op against the same op in the previous run on the\n"
	       "                same GPU model: time, DRAM-byte and FLOP ratios, newest\n"
	       "                run and largest slowdown first (v_regressions)\n"
	       "  fusion-gains  each fused variant against the other variants of its\n"
	       "                workload, dtype and shape: speedup, byte and launch\n"
	       "                ratios, and where it loses, whether fusion can pay\n"
	       "                there (v_fusion)\n"
	       "  roofline      per op: FLOPs, bytes, intensity, achieved rates and %% of\n"
	       "                the roof (v_roofline)\n"
	       "  save-recompute  each forward variant with its backward: bytes kept\n"
	       "                for the backward, forward+backward time, memory saved\n"
	       "                and time paid against the other variants\n"
	       "                (v_save_recompute)\n"
	       "  opportunities [RUN]  a profiled run's fusion candidates: chains of\n"
	       "                memory-bound kernels on one stream, the bytes fused,\n"
	       "                predicted time and gain, by rank (v_fusion_candidates;\n"
	       "                RUN: an id, 'latest', 'latest~N' or a tag; default:\n"
	       "                every profiled run, newest first). A profiled run\n"
	       "                that cannot have them (no counters, no ceilings)\n"
	       "                gets one line on stderr saying why; a RUN that is\n"
	       "                not a profiled run is an error\n"
	       "  predicted     each range of a profiled run with fusion candidates:\n"
	       "                its time and its time were its chains fused, at the\n"
	       "                DRAM roof and at the chains' own bandwidth\n"
	       "                (v_fusion_predicted; compare with another run's time\n"
	       "                for the same range, as 'report --base' does)\n"
	       "  stragglers    per range of a profiled run of several ranks: least,\n"
	       "                median and most time over the ranks, the spread and the\n"
	       "                slowest rank, largest spread first (v_rank_spread)\n"
	       "\n"
	       "Options:\n"
	       "      --db PATH        database file (default: $FUSEPROF_DB or fuseprof.db)\n"
	       "  -f, --format FMT     table (default), csv, json or md\n"
	       "  -l, --list           list the views with a line about each\n"
	       "  -h, --help           show this help and exit\n"
	       "\n"
	       "Examples:\n"
	       "  fuseprof query runs\n"
	       "  fuseprof query --format csv regressions > regressions.csv\n"
	       "  fuseprof query \"SELECT workload, variant, time_ratio FROM v_regressions\n"
	       "                  WHERE run_id = 7 AND (time_ratio > 1.05 OR dram_ratio > 1.01)\"\n"
	       "  fuseprof query --format json fusion-gains\n"
	       "  fuseprof query opportunities eager\n"
	       "  fuseprof query --format csv \"SELECT workload, variant, time_ns FROM v_ops\"\n"
	       "  fuseprof query --format json \"SELECT * FROM v_kernels WHERE run_id = 3\"\n"
	       "\n"
	       "Exit status: 0 success, 1 failure (bad SQL, unreadable database, a\n"
	       "RUN of 'opportunities' not found or not profiled),\n"
	       "2 usage error.\n");
}

/* Named questions: `fuseprof query NAME` prints the view that answers it,
 * in the order that reads best (NULL: the view's own). */
static const struct named_query {
	const char *name, *view, *order;
} named_queries[] = {
	{ "runs", "v_runs", "run_id DESC" },
	{ "regressions", "v_regressions", "run_id DESC, time_ratio DESC" },
	{ "fusion-gains", "v_fusion", NULL },
	{ "roofline", "v_roofline", NULL },
	{ "save-recompute", "v_save_recompute",
	  "run_id DESC, workload, dtype, shape, saved_bytes DESC, variant" },
	{ "opportunities", "v_fusion_candidates",
	  "run_id DESC, rank IS NULL, rank, kind, time_ns DESC" },
	{ "predicted", "v_fusion_predicted", "run_id DESC, workload" },
	{ "stragglers", "v_rank_spread", "run_id DESC, spread DESC, workload" },
	{ NULL, NULL, NULL }
};

static const struct named_query *find_named(const char *word)
{
	for (const struct named_query *q = named_queries; q->name; q++)
		if (!strcmp(q->name, word))
			return q;
	return NULL;
}

/* "ops" / "v_ops" / "fusion-gains" -> the view's name, or NULL. */
static const char *find_view(const char *word)
{
	const struct named_query *q = find_named(word);
	char buf[64];
	size_t n = strlen(word);

	if (q)
		word = q->view;
	n = strlen(word);
	if (n == 0 || n + 3 > sizeof buf)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)word[i]) && word[i] != '_' && word[i] != '-')
			return NULL;
	snprintf(buf, sizeof buf, "%s%s", strncmp(word, "v_", 2) ? "v_" : "", word);
	for (char *p = buf; *p; p++)
		if (*p == '-')
			*p = '_';
	for (const struct view_def *v = fp_views; v->name; v++)
		if (!strcmp(v->name, buf))
			return v->name;
	return NULL;
}

static int list_views(enum table_format fmt)
{
	static const char *const hdr[] = { "name", "about" };
	struct table t;

	table_init(&t, 2, hdr);
	for (const struct named_query *q = named_queries; q->name; q++) {
		char *doc = xasprintf("named query: the rows of %s", q->view);

		table_add_text(&t, q->name);
		table_add_text(&t, doc);
		free(doc);
	}
	for (const struct view_def *v = fp_views; v->name; v++) {
		table_add_text(&t, v->name);
		table_add_text(&t, v->doc);
	}
	table_print(&t, fmt, stdout);
	table_release(&t);
	return EXIT_OK;
}

static int only_space(const char *s)
{
	for (; *s; s++)
		if (!isspace((unsigned char)*s) && *s != ';')
			return 0;
	return 1;
}

/* Pragmas that only report (with or without an argument). */
static int pragma_reads(const char *name, const char *arg)
{
	static const char *const introspect[] = {
		"table_info", "table_xinfo", "table_list", "index_info",
		"index_xinfo", "index_list", "foreign_key_list", "foreign_key_check",
		"integrity_check", "quick_check", "function_list", "module_list",
		"pragma_list", "collation_list", "database_list", "compile_options",
		NULL
	};
	static const char *const acting[] = {
		"optimize", "wal_checkpoint", "incremental_vacuum", "shrink_memory",
		NULL
	};

	for (int i = 0; introspect[i]; i++)
		if (!strcasecmp(name, introspect[i]))
			return 1;
	/* Without an argument a pragma reads its setting, except these. */
	if (arg)
		return 0;
	for (int i = 0; acting[i]; i++)
		if (!strcasecmp(name, acting[i]))
			return 0;
	return 1;
}

/* The first action a statement was refused, for the error message; and
 * the first write to SQLite's schema table, allowed (see below) but named
 * if the statement then fails to prepare. */
struct refusal {
	char what[64];
	char schema[64];
};

/* SQLite authorizer: allow reading rows and calling functions, nothing else.
 * The read-only open already stops writes to the file; this also refuses
 * what sqlite3_stmt_readonly() lets through (ATTACH, DETACH, BEGIN, pragmas
 * that change the connection) and names what was refused. */
static int reads_only(void *ctx, int action, const char *a, const char *b,
		      const char *dbname, const char *trigger)
{
	struct refusal *r = ctx;

	(void)dbname;
	(void)trigger;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		/* Loading an extension runs code from a file: the connection
		 * refuses it anyway, but only as "not authorized". */
		if (b && !strcasecmp(b, "load_extension")) {
			if (!r->what[0])
				snprintf(r->what, sizeof r->what, "load_extension()");
			return SQLITE_DENY;
		}
		return SQLITE_OK;
	case SQLITE_INSERT:
	case SQLITE_UPDATE:
	case SQLITE_DELETE:
		/* SQLite reports its own schema bookkeeping this way (even when
		 * preparing a read of a pragma function); a real schema change
		 * also reports its CREATE or DROP, refused below. */
		if (a && (!strcmp(a, "sqlite_master") || !strcmp(a, "sqlite_temp_master"))) {
			if (!r->schema[0])
				snprintf(r->schema, sizeof r->schema, "%s on %s",
					 action == SQLITE_INSERT ? "INSERT" :
					 action == SQLITE_UPDATE ? "UPDATE" : "DELETE", a);
			return SQLITE_OK;
		}
		break;
	case SQLITE_PRAGMA:
		if (pragma_reads(a, b))
			return SQLITE_OK;
		if (!r->what[0])
			snprintf(r->what, sizeof r->what, "PRAGMA %s%s", a, b ? " = ..." : "");
		return SQLITE_DENY;
	}
	if (!r->what[0]) {
		static const struct { int code; const char *name; } names[] = {
			{ SQLITE_INSERT, "INSERT" }, { SQLITE_UPDATE, "UPDATE" },
			{ SQLITE_DELETE, "DELETE" }, { SQLITE_ATTACH, "ATTACH" },
			{ SQLITE_DETACH, "DETACH" }, { SQLITE_TRANSACTION, "a transaction" },
			{ SQLITE_SAVEPOINT, "SAVEPOINT" }, { SQLITE_ALTER_TABLE, "ALTER TABLE" },
			{ SQLITE_REINDEX, "REINDEX" }, { SQLITE_ANALYZE, "ANALYZE" },
			{ SQLITE_CREATE_VTABLE, "CREATE VIRTUAL TABLE" },
			{ SQLITE_DROP_VTABLE, "DROP VIRTUAL TABLE" },
		};
		const char *name = action >= SQLITE_CREATE_INDEX &&
				   action <= SQLITE_CREATE_VIEW ? "CREATE"
				 : action >= SQLITE_DROP_INDEX &&
				   action <= SQLITE_DROP_VIEW ? "DROP" : "a write";

		for (size_t i = 0; i < ARRAY_SIZE(names); i++)
			if (names[i].code == action)
				name = names[i].name;
		snprintf(r->what, sizeof r->what, "%s", name);
	}
	return SQLITE_DENY;
}

/* The statement's leading keyword when it is one that writes or changes
 * the connection (copied into buf, uppercased), else NULL. Names the
 * refusal when SQLite rejects such a statement before asking the
 * authorizer (e.g. "DELETE FROM sqlite_master"). */
static const char *writing_keyword(const char *sql, char *buf, size_t n)
{
	static const char *const words[] = {
		"INSERT", "REPLACE", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER",
		"ATTACH", "DETACH", "VACUUM", "REINDEX", "ANALYZE", "BEGIN",
		"COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE", NULL
	};
	size_t i = 0;

	while (isspace((unsigned char)*sql))
		sql++;
	while (i + 1 < n && isalpha((unsigned char)sql[i])) {
		buf[i] = (char)toupper((unsigned char)sql[i]);
		i++;
	}
	buf[i] = '\0';
	for (int w = 0; words[w]; w++)
		if (!strcmp(buf, words[w]))
			return buf;
	return NULL;
}

/* The error for a statement refused because it would write or change
 * the connection: what was refused, and the statement quoted on one line,
 * cut short (the action alone can be SQLite's: ANALYZE refuses as a
 * CREATE). Returns -1. */
static int refuse(const char *sql, const char *what)
{
	char quote[48];
	size_t q = 0;

	for (const char *p = sql; *p && q < sizeof quote - 4; p++)
		if (!isspace((unsigned char)*p) || (q && quote[q - 1] != ' '))
			quote[q++] = isspace((unsigned char)*p) ? ' ' : *p;
	strcpy(quote + q, strlen(sql) > q ? "..." : "");
	return error("query: refusing %s in '%s': query only reads (SELECT, "
		     "WITH, pragmas that report); the database is opened "
		     "read-only", what, quote);
}

/* Aligned text holds at most this window to measure its column widths. */
#define WINDOW_ROWS 1000
#define WINDOW_BYTES (1 << 20)

/* Run sql and print every row as it comes; 0 or -1 (reported, after the
 * rows printed so far). */
static int print_query(struct store *st, const char *sql, enum table_format fmt)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *s = NULL;
	const char *tail = NULL;
	const char **hdr, *text;
	struct refusal refused = { "", "" };
	struct table_printer out = TABLE_PRINTER_INIT(fmt, stdout);
	char keyword[16];
	struct table t;
	size_t window = 0;
	int ncols, rc, ret = -1;

	sqlite3_set_authorizer(db, reads_only, &refused);
	rc = sqlite3_prepare_v2(db, sql, -1, &s, &tail);
	if (rc != SQLITE_OK && !refused.what[0] &&
	    writing_keyword(sql, keyword, sizeof keyword))
		snprintf(refused.what, sizeof refused.what, "%s", keyword);
	if (rc != SQLITE_OK && (refused.what[0] || refused.schema[0]))
		return refuse(sql, refused.what[0] ? refused.what : refused.schema);
	if (rc != SQLITE_OK)
		return error("query: %s", sqlite3_errmsg(db));
	if (!s)
		return error("query: the SQL is empty");
	if (tail && !only_space(tail)) {
		sqlite3_finalize(s);
		return error("query: give one statement at a time (found more after ';')");
	}
	if (!sqlite3_stmt_readonly(s)) {
		sqlite3_finalize(s);
		return error("query: only read-only statements are allowed; "
			     "the database is opened read-only");
	}
	ncols = sqlite3_column_count(s);
	if (ncols == 0) {
		sqlite3_finalize(s);
		return error("query: the statement returns no columns");
	}
	hdr = xcalloc((size_t)ncols, sizeof *hdr);
	for (int i = 0; i < ncols; i++)
		hdr[i] = sqlite3_column_name(s, i);
	table_init(&t, ncols, hdr);
	free(hdr);
	t.soft = 1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (int i = 0; i < ncols; i++) {
			switch (sqlite3_column_type(s, i)) {
			case SQLITE_NULL:
				table_add_null(&t);
				break;
			case SQLITE_INTEGER:
				table_add_int(&t, sqlite3_column_int64(s, i));
				break;
			case SQLITE_FLOAT:
				table_add_double(&t, sqlite3_column_double(s, i), 15);
				break;
			default:
				text = (const char *)sqlite3_column_text(s, i);
				if (!text && sqlite3_errcode(db) == SQLITE_NOMEM)
					t.nomem = 1;
				window += (size_t)sqlite3_column_bytes(s, i);
				table_add_text(&t, text);
			}
		}
		if (t.nomem)
			break;
		/* Aligned text measures its widths on a first window of rows;
		 * every other format, and text after that window, goes out a
		 * row at a time, so memory stays bounded however many rows. */
		if (fmt != TABLE_TEXT || out.started || t.nrows == WINDOW_ROWS ||
		    window >= WINDOW_BYTES) {
			table_print_rows(&out, &t);
			table_clear_rows(&t);
			window = 0;
		}
	}
	if (t.nomem || rc == SQLITE_NOMEM) {
		fflush(stdout);
		error("query: out of memory after %zu rows (print fewer: add a "
		      "LIMIT or a WHERE)", out.rows);
	} else if (rc != SQLITE_DONE) {
		/* A pragma function (pragma_optimize) asks the authorizer only
		 * when it runs. */
		fflush(stdout);
		if (refused.what[0])
			refuse(sql, refused.what);
		else
			error("query: %s", sqlite3_errmsg(db));
	} else {
		table_print_rows(&out, &t);
		table_print_end(&out, &t);
		ret = 0;
	}
	/* After an error the output stops where it was, unclosed. */
	table_printer_release(&out);
	sqlite3_finalize(s);
	table_release(&t);
	return ret;
}

/* `query opportunities [RUN]`: v_fusion_candidates of RUN, or of every
 * profiled run; for each run that cannot have candidates, one line on
 * stderr saying why (opps_notice), rather than an unexplained empty table.
 * Returns an exit status. */
static int opportunities(struct store *st, const char *ref, enum table_format fmt)
{
	sqlite3_stmt *s = NULL;
	long long run_id = 0;
	char *sql, *notice;
	int rc, step;

	if (ref && store_resolve_run(st, ref, &run_id))
		return EXIT_FAIL;
	if (ref) {
		rc = opps_notice(st, run_id, &notice);
		if (rc == 1)
			error("query: opportunities: %s", notice);
		else if (notice)
			warning("%s", notice);
		free(notice);
		if (rc)
			return EXIT_FAIL;
	} else {
		if (sqlite3_prepare_v2(store_db(st), "SELECT id FROM runs WHERE kind = "
				       "'profile' ORDER BY id DESC", -1, &s, NULL) != SQLITE_OK) {
			store_error(st, "cannot read runs from");
			return EXIT_FAIL;
		}
		while ((step = sqlite3_step(s)) == SQLITE_ROW) {
			if (opps_notice(st, sqlite3_column_int64(s, 0), &notice) < 0) {
				sqlite3_finalize(s);
				return EXIT_FAIL;
			}
			if (notice)
				warning("%s", notice);
			free(notice);
		}
		sqlite3_finalize(s);
		if (step != SQLITE_DONE) {
			store_error(st, "cannot read runs from");
			return EXIT_FAIL;
		}
	}
	sql = ref ? xasprintf("SELECT * FROM v_fusion_candidates WHERE run_id = %lld "
			      "ORDER BY %s", run_id, find_named("opportunities")->order)
		  : xasprintf("SELECT * FROM v_fusion_candidates ORDER BY %s",
			      find_named("opportunities")->order);
	rc = print_query(st, sql, fmt);
	free(sql);
	return rc ? EXIT_FAIL : EXIT_OK;
}

static int cmd_query(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *db = default_db_path(), *view;
	const struct named_query *named;
	enum table_format fmt = TABLE_TEXT;
	const char *arg = NULL, *run_ref = NULL;
	struct store *st;
	char *sql;
	int c, list = 0, rc, nargs = 0;

	opterr = 0;
	optind = 1;
	/* "-": operands come back in order as 1, so options may follow the
	 * SQL, as GNU tools take them, whatever $POSIXLY_CORRECT says. */
	while ((c = getopt_long(argc, argv, "-f:lh", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (!nargs++)
				arg = optarg;
			else if (nargs == 2)
				run_ref = optarg;
			break;
		case 'd':
			db = optarg;
			break;
		case 'f':
			if (format_option("query", optarg, &fmt))
				return EXIT_USAGE;
			break;
		case 'l':
			list = 1;
			break;
		case 'h':
			help();
			return EXIT_OK;
		default:
			return usage_error("query", "query: unknown or incomplete option '%s'",
					   argv[optind - 1]);
		}
	}
	/* After "--", the rest are operands. */
	for (; optind < argc; optind++)
		if (!nargs++)
			arg = argv[optind];
		else if (nargs == 2)
			run_ref = argv[optind];
	if (list)
		return !nargs ? list_views(fmt)
			      : usage_error("query", "query: --list takes no SQL");
	if (!nargs)
		return usage_error("query", "query: no SQL or view name given");
	if (nargs > 2 || (nargs == 2 && strcmp(arg, "opportunities")))
		return usage_error("query", "query: give the SQL as one argument (quote "
				   "it); only 'opportunities' takes a run after it");
	if (run_ref && !*run_ref)
		return usage_error("query", "query: opportunities: empty run (give an "
				   "id, 'latest', 'latest~N' or a tag)");
	if (check_default_db(db) || store_open(&st, db, STORE_READONLY))
		return EXIT_FAIL;
	if (!strcmp(arg, "opportunities")) {
		rc = opportunities(st, run_ref, fmt);
		store_close(st);
		return rc;
	}
	named = find_named(arg);
	view = find_view(arg);
	if (named && !view) {
		error("query: '%s' needs the view %s, which this fuseprof lacks "
		      "(see 'fuseprof query --list')", named->name, named->view);
		store_close(st);
		return EXIT_FAIL;
	}
	sql = !view ? xstrdup(arg)
	    : named && named->order ? xasprintf("SELECT * FROM %s ORDER BY %s", view,
						named->order)
	    : xasprintf("SELECT * FROM %s", view);
	rc = print_query(st, sql, fmt);
	free(sql);
	store_close(st);
	return rc ? EXIT_FAIL : EXIT_OK;
}

const struct cmd_entry cmd_query_entry = {
	"query", "run read-only SQL or print a view of the database", cmd_query
};
