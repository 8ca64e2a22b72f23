/* table.c - typed rows printed as aligned text, CSV, JSON or Markdown. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "util.h"

int table_format_parse(const char *s, enum table_format *out)
{
	static const struct {
		const char *name;
		enum table_format f;
	} names[] = {
		{ "table", TABLE_TEXT }, { "text", TABLE_TEXT },
		{ "csv", TABLE_CSV },    { "json", TABLE_JSON },
		{ "md", TABLE_MD },      { "markdown", TABLE_MD },
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(s, names[i].name)) {
			*out = names[i].f;
			return 0;
		}
	}
	return -1;
}

/* Cell texts live in chunks of at least CHUNK bytes, freed together: a
 * report of 10,000 ops has half a million cells, and a malloc and a free
 * for each cost more than formatting them. */
#define CHUNK 65536

struct table_chunk {
	struct table_chunk *next;
	size_t used, size;
	char data[];
};

static char *keep(struct table *t, const char *s, size_t n)
{
	struct table_chunk *c = t->chunks;
	char *p;

	if (!c || c->size - c->used < n + 1) {
		size_t size = n + 1 > CHUNK ? n + 1 : CHUNK;

		c = t->soft ? malloc(sizeof *c + size) : xmalloc(sizeof *c + size);
		if (!c) {
			t->nomem = 1;
			return NULL;
		}
		c->next = t->chunks;
		c->used = 0;
		c->size = size;
		t->chunks = c;
	}
	p = c->data + c->used;
	memcpy(p, s, n);
	p[n] = 0;
	c->used += n + 1;
	return p;
}

void table_init(struct table *t, int ncols, const char *const *headers)
{
	memset(t, 0, sizeof *t);
	t->ncols = ncols;
	t->headers = xcalloc((size_t)ncols, sizeof *t->headers);
	for (int i = 0; i < ncols; i++)
		t->headers[i] = xstrdup(headers[i]);
}

void table_release(struct table *t)
{
	while (t->chunks) {
		struct table_chunk *next = t->chunks->next;

		free(t->chunks);
		t->chunks = next;
	}
	for (int i = 0; i < t->ncols; i++)
		free(t->headers[i]);
	free(t->cells);
	free(t->headers);
	memset(t, 0, sizeof *t);
}

static void add_cell(struct table *t, enum cell_kind kind, const char *text, size_t n)
{
	struct cell *c;

	if (t->nomem)
		return;
	if (t->col == 0) {
		if (t->nrows == t->alloc) {
			size_t alloc = t->alloc ? 2 * t->alloc : 16;
			size_t size = alloc * (size_t)t->ncols * sizeof *t->cells;
			struct cell *cells = t->soft ? realloc(t->cells, size)
						     : xrealloc(t->cells, size);

			if (!cells) {
				t->nomem = 1;
				return;
			}
			t->cells = cells;
			t->alloc = alloc;
		}
		t->nrows++;
	}
	c = &t->cells[(t->nrows - 1) * (size_t)t->ncols + (size_t)t->col];
	c->kind = kind;
	c->text = text ? keep(t, text, n) : NULL;
	if (text && !c->text)
		c->kind = CELL_NULL;
	t->col = (t->col + 1) % t->ncols;
}

void table_clear_rows(struct table *t)
{
	/* Keep one ordinary chunk for the next rows: a window of one row at
	 * a time would otherwise cost a malloc and a free per row. */
	struct table_chunk *keep_one = t->chunks && t->chunks->size == CHUNK ?
				       t->chunks : NULL;

	if (keep_one)
		t->chunks = keep_one->next;
	while (t->chunks) {
		struct table_chunk *next = t->chunks->next;

		free(t->chunks);
		t->chunks = next;
	}
	if (keep_one) {
		keep_one->next = NULL;
		keep_one->used = 0;
		t->chunks = keep_one;
	}
	t->nrows = 0;
	t->col = 0;
}

void table_add_text(struct table *t, const char *s)
{
	add_cell(t, s ? CELL_TEXT : CELL_NULL, s, s ? strlen(s) : 0);
}

void table_add_null(struct table *t)
{
	add_cell(t, CELL_NULL, NULL, 0);
}

void table_add_int(struct table *t, long long v)
{
	char buf[24], *p = buf + sizeof buf;
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	add_cell(t, CELL_NUMBER, p, (size_t)(buf + sizeof buf - p));
}

void table_add_double(struct table *t, double v, int digits)
{
	static const double p10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15,
	};
	char buf[FMT_G_SIZE];

	if (!isfinite(v)) {
		add_cell(t, CELL_NULL, NULL, 0);
	} else if (digits >= 1 && digits <= 15 && v == floor(v) &&
		   fabs(v) < p10[digits] && (v != 0 || !signbit(v))) {
		/* An integer of at most `digits` digits prints as itself under
		 * %g: counts, bytes and launches are most of a report's cells. */
		table_add_int(t, (long long)v);
	} else if (digits >= 1 && digits <= 15) {
		add_cell(t, CELL_NUMBER, buf, fmt_g(buf, v, digits));
	} else {
		char *s = xasprintf("%.*g", digits, v);

		add_cell(t, CELL_NUMBER, s, strlen(s));
		free(s);
	}
}

void table_add_number_text(struct table *t, const char *s)
{
	add_cell(t, s ? CELL_NUMBER : CELL_NULL, s, s ? strlen(s) : 0);
}

static const struct cell *cell_at(const struct table *t, size_t r, int c)
{
	return &t->cells[r * (size_t)t->ncols + (size_t)c];
}

static const char *shown(const struct cell *c)
{
	return c->kind == CELL_NULL ? "" : c->text;
}

/* Rows are assembled in a strbuf and written with one fwrite each: a
 * stdio call per field takes the stream's lock per field. A row longer
 * than SINK_MAX goes out in pieces, so printing never holds more than
 * that beside the table (a query's row can be as long as memory). */
#define SINK_MAX 65536

struct sink {
	struct strbuf sb;
	FILE *out;  /* NULL: keep everything (a JSON key) */
};

static void add(struct sink *sk, const char *s, size_t n)
{
	if (sk->out && sk->sb.len + n > SINK_MAX) {
		if (sk->sb.len)
			fwrite(sk->sb.buf, 1, sk->sb.len, sk->out);
		strbuf_reset(&sk->sb);
		if (n > SINK_MAX) {
			fwrite(s, 1, n, sk->out);
			return;
		}
	}
	strbuf_add(&sk->sb, s, n);
}

static void put(struct sink *sk, const char *s)
{
	add(sk, s, strlen(s));
}

static void putch(struct sink *sk, char c)
{
	add(sk, &c, 1);
}

static void pad(struct sink *sk, size_t n)
{
	static const char spaces[] = "                                ";

	for (; n > sizeof spaces - 1; n -= sizeof spaces - 1)
		add(sk, spaces, sizeof spaces - 1);
	add(sk, spaces, n);
}

static void flush_row(struct sink *sk)
{
	if (sk->sb.len)
		fwrite(sk->sb.buf, 1, sk->sb.len, sk->out);
	strbuf_reset(&sk->sb);
}

static void text_header(struct table_printer *p, const struct table *t,
			struct sink *sb)
{
	size_t *w = xcalloc((size_t)t->ncols, sizeof *w);

	for (int c = 0; c < t->ncols; c++) {
		w[c] = strlen(t->headers[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t n = strlen(shown(cell_at(t, r, c)));
			if (n > w[c])
				w[c] = n;
		}
	}
	for (int c = 0; c < t->ncols; c++) {
		size_t n = strlen(t->headers[c]);

		put(sb, c ? "  " : "");
		put(sb, t->headers[c]);
		if (c != t->ncols - 1 && n < w[c])
			pad(sb, w[c] - n);
	}
	putch(sb, '\n');
	for (int c = 0; c < t->ncols; c++) {
		put(sb, c ? "  " : "");
		for (size_t i = 0; i < w[c]; i++)
			putch(sb, '-');
	}
	putch(sb, '\n');
	flush_row(sb);
	p->w = w;
}

static void text_rows(struct table_printer *p, const struct table *t, struct sink *sb)
{
	const size_t *w = p->w;

	for (size_t r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			const struct cell *x = cell_at(t, r, c);
			const char *s = shown(x);
			size_t n = strlen(s);
			int last = c == t->ncols - 1;

			put(sb, c ? "  " : "");
			if (x->kind == CELL_NUMBER) {
				if (n < w[c])
					pad(sb, w[c] - n);
				put(sb, s);
			} else {
				put(sb, s);
				if (!last && n < w[c])
					pad(sb, w[c] - n);
			}
		}
		putch(sb, '\n');
		flush_row(sb);
	}
}

static void csv_field(struct sink *sb, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		put(sb, s);
		return;
	}
	putch(sb, '"');
	for (; *s; s++) {
		if (*s == '"')
			putch(sb, '"');
		putch(sb, *s);
	}
	putch(sb, '"');
}

static void csv_header(struct table_printer *p, const struct table *t,
		       struct sink *sb)
{
	for (int c = 0; c < t->ncols; c++) {
		if (c)
			putch(sb, ',');
		csv_field(sb, t->headers[c]);
	}
	put(sb, "\r\n");
	flush_row(sb);
}

static void csv_rows(struct table_printer *p, const struct table *t, struct sink *sb)
{
	for (size_t r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			if (c)
				putch(sb, ',');
			csv_field(sb, shown(cell_at(t, r, c)));
		}
		put(sb, "\r\n");
		flush_row(sb);
	}
}

static int json_plain(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\')
			return 0;
	return 1;
}

static void json_string(struct sink *sb, const char *s)
{
	putch(sb, '"');
	/* Most strings need no escape: copy them whole. */
	if (json_plain(s)) {
		put(sb, s);
		putch(sb, '"');
		return;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char u[8];
		const char *e = json_escape(*p, u);

		if (e)
			put(sb, e);
		else
			putch(sb, (char)*p);
	}
	putch(sb, '"');
}

static void json_header(struct table_printer *p, const struct table *t,
			struct sink *sb)
{
	/* Each key as it is printed ("name": ), escaped once, not per row. */
	p->keys = xcalloc((size_t)t->ncols, sizeof *p->keys);
	p->ncols = t->ncols;
	for (int c = 0; c < t->ncols; c++) {
		struct sink key = { STRBUF_INIT, NULL };

		json_string(&key, t->headers[c]);
		put(&key, ": ");
		p->keys[c] = key.sb;
	}
	putch(sb, '[');
	flush_row(sb);
}

static void json_rows(struct table_printer *p, const struct table *t, struct sink *sb)
{
	for (size_t r = 0; r < t->nrows; r++) {
		put(sb, p->rows + r ? ",\n {" : "\n {");
		for (int c = 0; c < t->ncols; c++) {
			const struct cell *x = cell_at(t, r, c);

			if (c)
				put(sb, ", ");
			add(sb, p->keys[c].buf, p->keys[c].len);
			if (x->kind == CELL_NULL)
				put(sb, "null");
			else if (x->kind == CELL_NUMBER)
				put(sb, x->text);
			else
				json_string(sb, x->text);
		}
		putch(sb, '}');
		flush_row(sb);
	}
}

static void md_field(struct sink *sb, const char *s)
{
	if (!strpbrk(s, "|\n")) {
		put(sb, s);
		return;
	}
	for (; *s; s++) {
		if (*s == '|')
			putch(sb, '\\');
		putch(sb, *s == '\n' ? ' ' : *s);
	}
}

static void md_header(struct table_printer *p, const struct table *t,
		      struct sink *sb)
{
	putch(sb, '|');
	for (int c = 0; c < t->ncols; c++) {
		putch(sb, ' ');
		md_field(sb, t->headers[c]);
		put(sb, " |");
	}
	put(sb, "\n|");
	for (int c = 0; c < t->ncols; c++) {
		int num = t->nrows && cell_at(t, 0, c)->kind == CELL_NUMBER;
		put(sb, num ? " ---: |" : " --- |");
	}
	putch(sb, '\n');
	flush_row(sb);
}

static void md_rows(struct table_printer *p, const struct table *t, struct sink *sb)
{
	for (size_t r = 0; r < t->nrows; r++) {
		putch(sb, '|');
		for (int c = 0; c < t->ncols; c++) {
			putch(sb, ' ');
			md_field(sb, shown(cell_at(t, r, c)));
			put(sb, " |");
		}
		putch(sb, '\n');
		flush_row(sb);
	}
}

void table_print_rows(struct table_printer *p, const struct table *t)
{
	static void (*const header[])(struct table_printer *, const struct table *,
				      struct sink *) = {
		[TABLE_TEXT] = text_header, [TABLE_CSV] = csv_header,
		[TABLE_JSON] = json_header, [TABLE_MD] = md_header,
	};
	static void (*const rows[])(struct table_printer *, const struct table *,
				    struct sink *) = {
		[TABLE_TEXT] = text_rows, [TABLE_CSV] = csv_rows,
		[TABLE_JSON] = json_rows, [TABLE_MD] = md_rows,
	};
	struct sink sk = { STRBUF_INIT, p->out };
	enum table_format f = p->f <= TABLE_MD ? p->f : TABLE_TEXT;

	if (!p->started) {
		header[f](p, t, &sk);
		p->started = 1;
	}
	rows[f](p, t, &sk);
	p->rows += t->nrows;
	strbuf_release(&sk.sb);
}

void table_print_end(struct table_printer *p, const struct table *t)
{
	if (!p->started) {
		struct table none = *t;

		none.nrows = 0;
		table_print_rows(p, &none);
	}
	if (p->f == TABLE_JSON)
		fputs(p->rows ? "\n]\n" : "]\n", p->out);
	table_printer_release(p);
}

void table_printer_release(struct table_printer *p)
{
	for (int c = 0; c < p->ncols; c++)
		strbuf_release(&p->keys[c]);
	free(p->keys);
	free(p->w);
	p->keys = NULL;
	p->w = NULL;
	p->ncols = 0;
}

void table_print(const struct table *t, enum table_format f, FILE *out)
{
	struct table_printer p = TABLE_PRINTER_INIT(f, out);

	table_print_rows(&p, t);
	table_print_end(&p, t);
}
