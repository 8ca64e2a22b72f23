/* cmd-query.c - `fuseprof query`: read-only SQL, or a named view, printed as
 * a table, CSV, JSON or Markdown. */
#include "config.h"

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "store.h"
#include "table.h"
#include "util.h"
#include "views.h"

static void help(void)
{
	printf("Usage: fuseprof query [OPTION]... SQL\n"
	       "       fuseprof query [OPTION]... VIEW\n"
	       "       fuseprof query --list\n"
	       "Run one read-only SQL statement against the database and print its rows.\n"
	       "A bare VIEW name (e.g. 'ops' or 'v_ops') selects every row of that view.\n"
	       "The database is opened read-only: statements that write are refused.\n"
	       "\n"
	       "Options:\n"
	       "      --db PATH        database file (default: $FUSEPROF_DB or fuseprof.db)\n"
	       "  -f, --format FMT     table (default), csv, json or md\n"
	       "  -l, --list           list the views with a line about each\n"
	       "  -h, --help           show this help and exit\n"
	       "\n"
	       "Examples:\n"
	       "  fuseprof query runs\n"
	       "  fuseprof query --format csv \"SELECT workload, variant, time_ns FROM v_ops\"\n"
	       "  fuseprof query --format json \"SELECT * FROM v_kernels WHERE run_id = 3\"\n"
	       "\n"
	       "Exit status: 0 success, 1 failure (bad SQL, unreadable database),\n"
	       "2 usage error.\n");
}

/* "ops" / "v_ops" / "fusion-gains" -> the view's name, or NULL. */
static const char *find_view(const char *word)
{
	char buf[64];
	size_t n = strlen(word);

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
	static const char *const hdr[] = { "view", "rows" };
	struct table t;

	table_init(&t, 2, hdr);
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

/* Run sql and print every row; 0 or -1 (reported). */
static int print_query(struct store *st, const char *sql, enum table_format fmt)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *s = NULL;
	const char *tail = NULL;
	const char **hdr;
	struct table t;
	int ncols, rc;

	if (sqlite3_prepare_v2(db, sql, -1, &s, &tail) != SQLITE_OK)
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
				table_add_text(&t, (const char *)sqlite3_column_text(s, i));
			}
		}
	}
	if (rc != SQLITE_DONE) {
		error("query: %s", sqlite3_errmsg(db));
		sqlite3_finalize(s);
		table_release(&t);
		return -1;
	}
	sqlite3_finalize(s);
	table_print(&t, fmt, stdout);
	table_release(&t);
	return 0;
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
	enum table_format fmt = TABLE_TEXT;
	struct store *st;
	char *sql;
	int c, list = 0, rc;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+f:lh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db = optarg;
			break;
		case 'f':
			if (table_format_parse(optarg, &fmt))
				return usage_error("query", "query: unknown format '%s' "
						   "(use table, csv, json or md)", optarg);
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
	if (list)
		return optind == argc ? list_views(fmt)
				      : usage_error("query", "query: --list takes no SQL");
	if (optind == argc)
		return usage_error("query", "query: no SQL or view name given");
	if (optind + 1 < argc)
		return usage_error("query", "query: give the SQL as one argument (quote it)");
	if (store_open(&st, db, STORE_READONLY))
		return EXIT_FAIL;
	view = find_view(argv[optind]);
	sql = view ? xasprintf("SELECT * FROM %s", view) : xstrdup(argv[optind]);
	rc = print_query(st, sql, fmt);
	free(sql);
	store_close(st);
	return rc ? EXIT_FAIL : EXIT_OK;
}

const struct cmd_entry cmd_query_entry = {
	"query", "run read-only SQL or print a view of the database", cmd_query
};
