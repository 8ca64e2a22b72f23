/* rows.h - view rows into C structs for the report readers: a table of
 * columns (name, kind, offset in the struct) drives the SELECT list, the
 * copy of each row and its release, so the three cannot drift apart. */
#ifndef FP_ROWS_H
#define FP_ROWS_H

#include <stddef.h>

#include <sqlite3.h>

#include "util.h"

enum col_kind {
	COL_TEXT,        /* char *, owned; "" where the view has NULL */
	COL_TEXT_NULL,   /* char *, owned; NULL where the view has NULL */
	COL_REAL,        /* double; NAN where the view has NULL */
	COL_INT,         /* long long */
};

struct col {
	const char *name;   /* the view's column */
	enum col_kind kind;
	size_t off;         /* offsetof the field it lands in */
};

/* Append the columns' names to sql, joined by ", ". */
void cols_select(struct strbuf *sql, const struct col *cols, size_t n);

/* Copy the current row of s, from result column `first` on, into row. */
void cols_read(sqlite3_stmt *s, int first, const struct col *cols, size_t n,
	       void *row);

/* Free the text fields cols_read() filled in row. */
void cols_free(const struct col *cols, size_t n, void *row);

/* Is workload one of workloads (NULL-terminated; NULL = every one)? */
int rows_wanted(const char *workload, const char *const *workloads);

#endif
