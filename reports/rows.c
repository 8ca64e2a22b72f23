/* rows.c - view rows into C structs for the report readers (rows.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rows.h"

void cols_select(struct strbuf *sql, const struct col *cols, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sql, "%s%s", i ? ", " : "", cols[i].name);
}

void cols_read(sqlite3_stmt *s, int first, const struct col *cols, size_t n,
	       void *row)
{
	for (size_t i = 0; i < n; i++) {
		char *f = (char *)row + cols[i].off;
		int k = first + (int)i;
		const unsigned char *t;

		switch (cols[i].kind) {
		case COL_TEXT:
		case COL_TEXT_NULL:
			t = sqlite3_column_text(s, k);
			*(char **)f = t ? xstrdup((const char *)t)
					: cols[i].kind == COL_TEXT ? xstrdup("") : NULL;
			break;
		case COL_REAL:
			*(double *)f = sqlite3_column_type(s, k) == SQLITE_NULL
				? NAN : sqlite3_column_double(s, k);
			break;
		case COL_INT:
			*(long long *)f = sqlite3_column_int64(s, k);
			break;
		}
	}
}

void cols_free(const struct col *cols, size_t n, void *row)
{
	for (size_t i = 0; i < n; i++)
		if (cols[i].kind == COL_TEXT || cols[i].kind == COL_TEXT_NULL)
			free(*(char **)((char *)row + cols[i].off));
}

int rows_wanted(const char *workload, const char *const *workloads)
{
	if (!workloads)
		return 1;
	for (; *workloads; workloads++)
		if (!strcmp(*workloads, workload))
			return 1;
	return 0;
}
