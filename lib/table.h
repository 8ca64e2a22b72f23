/* table.h - a table of typed cells printed as aligned text, CSV, JSON or
 * Markdown: the one output path of every command that prints rows. */
#ifndef FP_TABLE_H
#define FP_TABLE_H

#include <stddef.h>
#include <stdio.h>

enum table_format { TABLE_TEXT, TABLE_CSV, TABLE_JSON, TABLE_MD };

/* "table", "csv", "json", "md" -> format. Returns 0 or -1. */
int table_format_parse(const char *s, enum table_format *out);

enum cell_kind { CELL_NULL, CELL_TEXT, CELL_NUMBER };

struct cell {
	enum cell_kind kind;
	char *text;  /* owned; the printed form (numbers too) */
};

struct table_chunk;

struct table {
	int ncols;
	char **headers;
	size_t nrows, alloc;
	struct cell *cells;  /* row-major, nrows * ncols */
	int col;             /* next column of the row being filled */
	struct table_chunk *chunks;  /* where the cells' texts are kept */
	/* Out of memory while adding a cell: a table whose soft is set
	 * (after table_init) drops the cell and sets nomem, for a caller that
	 * reports it (query: one line, exit 1); any other aborts, as xmalloc. */
	int soft, nomem;
};

/* Start an empty table with ncols named columns (names are copied). */
void table_init(struct table *t, int ncols, const char *const *headers);
/* Free every cell and header; the table can be initialised again. */
void table_release(struct table *t);

/* Fill a row left to right; a row starts with the first cell after the
 * previous row was complete. */
void table_add_text(struct table *t, const char *s);  /* NULL adds a null */
void table_add_null(struct table *t);
void table_add_int(struct table *t, long long v);
/* %.*g with the given significant digits; NaN and inf become null. */
void table_add_double(struct table *t, double v, int digits);
/* A number already formatted (e.g. "12.5"), kept as a number for JSON. */
void table_add_number_text(struct table *t, const char *s);

/* Print the whole table. Text: aligned columns, numbers right-aligned, a
 * header line and a rule; CSV: RFC 4180 with a header; JSON: an array of
 * objects, nulls as null; Markdown: a pipe table. */
void table_print(const struct table *t, enum table_format f, FILE *out);

/* Printing a table one window of rows at a time, for results too large to
 * hold (fuseprof query): fill t with a window of rows, table_print_rows,
 * table_clear_rows, and so on; then table_print_end. The output is
 * table_print's for all the rows together, except that aligned text takes
 * its column widths from the first window (a longer cell later pushes the
 * rest of its row right) and Markdown aligns each column by the first
 * row. Start with TABLE_PRINTER_INIT. */
struct strbuf;
struct table_printer {
	enum table_format f;
	FILE *out;
	int started;   /* the header is out */
	size_t rows;   /* rows printed so far */
	size_t *w;     /* aligned text: the first window's column widths */
	struct strbuf *keys;  /* JSON: each column's key, escaped once */
	int ncols;
};
#define TABLE_PRINTER_INIT(f, out) { (f), (out), 0, 0, NULL, NULL, 0 }
void table_print_rows(struct table_printer *p, const struct table *t);
void table_print_end(struct table_printer *p, const struct table *t);
/* Free what the printer holds without printing the end (after an error:
 * the output stops where it was). table_print_end calls it. */
void table_printer_release(struct table_printer *p);
/* Forget t's rows, keeping its columns (and memory for the next rows). */
void table_clear_rows(struct table *t);

#endif
