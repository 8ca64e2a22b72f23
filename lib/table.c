/* table.c - typed rows printed as aligned text, CSV, JSON or Markdown. */
#include "config.h"

#include <math.h>
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

		c = xmalloc(sizeof *c + size);
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

	if (t->col == 0) {
		if (t->nrows == t->alloc) {
			t->alloc = t->alloc ? 2 * t->alloc : 16;
			t->cells = xrealloc(t->cells, t->alloc * (size_t)t->ncols *
							      sizeof *t->cells);
		}
		t->nrows++;
	}
	c = &t->cells[(t->nrows - 1) * (size_t)t->ncols + (size_t)t->col];
	c->kind = kind;
	c->text = text ? keep(t, text, n) : NULL;
	t->col = (t->col + 1) % t->ncols;
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
 * stdio call per field takes the stream's lock per field. */
static void put(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

static void putch(struct strbuf *sb, char c)
{
	strbuf_add(sb, &c, 1);
}

static void pad(struct strbuf *sb, size_t n)
{
	static const char spaces[] = "                                ";

	for (; n > sizeof spaces - 1; n -= sizeof spaces - 1)
		strbuf_add(sb, spaces, sizeof spaces - 1);
	strbuf_add(sb, spaces, n);
}

static void flush_row(struct strbuf *sb, FILE *out)
{
	if (sb->len)
		fwrite(sb->buf, 1, sb->len, out);
	strbuf_reset(sb);
}

static void print_text(const struct table *t, FILE *out)
{
	size_t *w = xcalloc((size_t)t->ncols, sizeof *w);
	struct strbuf sb = STRBUF_INIT;

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

		put(&sb, c ? "  " : "");
		put(&sb, t->headers[c]);
		if (c != t->ncols - 1 && n < w[c])
			pad(&sb, w[c] - n);
	}
	putch(&sb, '\n');
	for (int c = 0; c < t->ncols; c++) {
		put(&sb, c ? "  " : "");
		for (size_t i = 0; i < w[c]; i++)
			putch(&sb, '-');
	}
	putch(&sb, '\n');
	flush_row(&sb, out);
	for (size_t r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			const struct cell *x = cell_at(t, r, c);
			const char *s = shown(x);
			size_t n = strlen(s);
			int last = c == t->ncols - 1;

			put(&sb, c ? "  " : "");
			if (x->kind == CELL_NUMBER) {
				if (n < w[c])
					pad(&sb, w[c] - n);
				put(&sb, s);
			} else {
				put(&sb, s);
				if (!last && n < w[c])
					pad(&sb, w[c] - n);
			}
		}
		putch(&sb, '\n');
		flush_row(&sb, out);
	}
	strbuf_release(&sb);
	free(w);
}

static void csv_field(struct strbuf *sb, const char *s)
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

static void print_csv(const struct table *t, FILE *out)
{
	struct strbuf sb = STRBUF_INIT;

	for (int c = 0; c < t->ncols; c++) {
		if (c)
			putch(&sb, ',');
		csv_field(&sb, t->headers[c]);
	}
	put(&sb, "\r\n");
	flush_row(&sb, out);
	for (size_t r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			if (c)
				putch(&sb, ',');
			csv_field(&sb, shown(cell_at(t, r, c)));
		}
		put(&sb, "\r\n");
		flush_row(&sb, out);
	}
	strbuf_release(&sb);
}

static int json_plain(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\')
			return 0;
	return 1;
}

static void json_string(struct strbuf *sb, const char *s)
{
	putch(sb, '"');
	/* Most strings need no escape: copy them whole. */
	if (json_plain(s)) {
		put(sb, s);
		putch(sb, '"');
		return;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			put(sb, "\\\"");
			break;
		case '\\':
			put(sb, "\\\\");
			break;
		case '\n':
			put(sb, "\\n");
			break;
		case '\r':
			put(sb, "\\r");
			break;
		case '\t':
			put(sb, "\\t");
			break;
		default:
			if (*p < 0x20)
				strbuf_addf(sb, "\\u%04x", *p);
			else
				putch(sb, (char)*p);
		}
	}
	putch(sb, '"');
}

static void print_json(const struct table *t, FILE *out)
{
	/* Each key as it is printed ("name": ), escaped once, not per row. */
	struct strbuf *keys = xcalloc((size_t)t->ncols, sizeof *keys);
	struct strbuf sb = STRBUF_INIT;

	for (int c = 0; c < t->ncols; c++) {
		json_string(&keys[c], t->headers[c]);
		put(&keys[c], ": ");
	}
	putch(&sb, '[');
	for (size_t r = 0; r < t->nrows; r++) {
		put(&sb, r ? ",\n {" : "\n {");
		for (int c = 0; c < t->ncols; c++) {
			const struct cell *x = cell_at(t, r, c);

			if (c)
				put(&sb, ", ");
			strbuf_add(&sb, keys[c].buf, keys[c].len);
			if (x->kind == CELL_NULL)
				put(&sb, "null");
			else if (x->kind == CELL_NUMBER)
				put(&sb, x->text);
			else
				json_string(&sb, x->text);
		}
		putch(&sb, '}');
		flush_row(&sb, out);
	}
	put(&sb, t->nrows ? "\n]\n" : "]\n");
	flush_row(&sb, out);
	strbuf_release(&sb);
	for (int c = 0; c < t->ncols; c++)
		strbuf_release(&keys[c]);
	free(keys);
}

static void md_field(struct strbuf *sb, const char *s)
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

static void print_md(const struct table *t, FILE *out)
{
	struct strbuf sb = STRBUF_INIT;

	putch(&sb, '|');
	for (int c = 0; c < t->ncols; c++) {
		putch(&sb, ' ');
		md_field(&sb, t->headers[c]);
		put(&sb, " |");
	}
	put(&sb, "\n|");
	for (int c = 0; c < t->ncols; c++) {
		int num = t->nrows && cell_at(t, 0, c)->kind == CELL_NUMBER;
		put(&sb, num ? " ---: |" : " --- |");
	}
	putch(&sb, '\n');
	flush_row(&sb, out);
	for (size_t r = 0; r < t->nrows; r++) {
		putch(&sb, '|');
		for (int c = 0; c < t->ncols; c++) {
			putch(&sb, ' ');
			md_field(&sb, shown(cell_at(t, r, c)));
			put(&sb, " |");
		}
		putch(&sb, '\n');
		flush_row(&sb, out);
	}
	strbuf_release(&sb);
}

void table_print(const struct table *t, enum table_format f, FILE *out)
{
	switch (f) {
	case TABLE_CSV:
		print_csv(t, out);
		break;
	case TABLE_JSON:
		print_json(t, out);
		break;
	case TABLE_MD:
		print_md(t, out);
		break;
	default:
		print_text(t, out);
	}
}
