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
	for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
		free(t->cells[i].text);
	for (int i = 0; i < t->ncols; i++)
		free(t->headers[i]);
	free(t->cells);
	free(t->headers);
	memset(t, 0, sizeof *t);
}

static void add_cell(struct table *t, enum cell_kind kind, char *text)
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
	c->text = text;
	t->col = (t->col + 1) % t->ncols;
}

void table_add_text(struct table *t, const char *s)
{
	if (!s)
		add_cell(t, CELL_NULL, NULL);
	else
		add_cell(t, CELL_TEXT, xstrdup(s));
}

void table_add_null(struct table *t)
{
	add_cell(t, CELL_NULL, NULL);
}

void table_add_int(struct table *t, long long v)
{
	add_cell(t, CELL_NUMBER, xasprintf("%lld", v));
}

void table_add_double(struct table *t, double v, int digits)
{
	char buf[FMT_G_SIZE];

	if (!isfinite(v))
		add_cell(t, CELL_NULL, NULL);
	else if (digits >= 1 && digits <= 15)
		add_cell(t, CELL_NUMBER, xstrdup((fmt_g(buf, v, digits), buf)));
	else
		add_cell(t, CELL_NUMBER, xasprintf("%.*g", digits, v));
}

void table_add_number_text(struct table *t, const char *s)
{
	add_cell(t, s ? CELL_NUMBER : CELL_NULL, s ? xstrdup(s) : NULL);
}

static const struct cell *cell_at(const struct table *t, size_t r, int c)
{
	return &t->cells[r * (size_t)t->ncols + (size_t)c];
}

static const char *shown(const struct cell *c)
{
	return c->kind == CELL_NULL ? "" : c->text;
}

static void print_text(const struct table *t, FILE *out)
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
	for (int c = 0; c < t->ncols; c++)
		fprintf(out, "%s%-*s", c ? "  " : "",
			c == t->ncols - 1 ? 0 : (int)w[c], t->headers[c]);
	fputc('\n', out);
	for (int c = 0; c < t->ncols; c++) {
		fputs(c ? "  " : "", out);
		for (size_t i = 0; i < w[c]; i++)
			fputc('-', out);
	}
	fputc('\n', out);
	for (size_t r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			const struct cell *x = cell_at(t, r, c);
			int last = c == t->ncols - 1;

			fputs(c ? "  " : "", out);
			if (x->kind == CELL_NUMBER)
				fprintf(out, "%*s", (int)w[c], x->text);
			else
				fprintf(out, "%-*s", last ? 0 : (int)w[c], shown(x));
		}
		fputc('\n', out);
	}
	free(w);
}

static void csv_field(const char *s, FILE *out)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void print_csv(const struct table *t, FILE *out)
{
	for (int c = 0; c < t->ncols; c++) {
		if (c)
			fputc(',', out);
		csv_field(t->headers[c], out);
	}
	fputs("\r\n", out);
	for (size_t r = 0; r < t->nrows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			if (c)
				fputc(',', out);
			csv_field(shown(cell_at(t, r, c)), out);
		}
		fputs("\r\n", out);
	}
}

static int json_plain(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == '"' || *p == '\\')
			return 0;
	return 1;
}

static void json_string(const char *s, FILE *out)
{
	fputc('"', out);
	/* Most strings need no escape: write them whole. */
	if (json_plain(s)) {
		fputs(s, out);
		fputc('"', out);
		return;
	}
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

static void print_json(const struct table *t, FILE *out)
{
	/* Each key as it is printed ("name": ), escaped once, not per row. */
	char **keys = xcalloc((size_t)t->ncols, sizeof *keys);

	for (int c = 0; c < t->ncols; c++) {
		char *buf = NULL;
		size_t len;
		FILE *m = open_memstream(&buf, &len);

		if (!m)
			continue;  /* printed the slow way below */
		json_string(t->headers[c], m);
		fputs(": ", m);
		if (fclose(m)) {
			free(buf);
			buf = NULL;
		}
		keys[c] = buf;
	}
	fputc('[', out);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs(r ? ",\n {" : "\n {", out);
		for (int c = 0; c < t->ncols; c++) {
			const struct cell *x = cell_at(t, r, c);

			if (c)
				fputs(", ", out);
			if (keys[c]) {
				fputs(keys[c], out);
			} else {
				json_string(t->headers[c], out);
				fputs(": ", out);
			}
			if (x->kind == CELL_NULL)
				fputs("null", out);
			else if (x->kind == CELL_NUMBER)
				fputs(x->text, out);
			else
				json_string(x->text, out);
		}
		fputc('}', out);
	}
	fputs(t->nrows ? "\n]\n" : "]\n", out);
	for (int c = 0; c < t->ncols; c++)
		free(keys[c]);
	free(keys);
}

static void md_field(const char *s, FILE *out)
{
	if (!strpbrk(s, "|\n")) {
		fputs(s, out);
		return;
	}
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', out);
		fputc(*s == '\n' ? ' ' : *s, out);
	}
}

static void print_md(const struct table *t, FILE *out)
{
	fputc('|', out);
	for (int c = 0; c < t->ncols; c++) {
		fputc(' ', out);
		md_field(t->headers[c], out);
		fputs(" |", out);
	}
	fputs("\n|", out);
	for (int c = 0; c < t->ncols; c++) {
		int num = t->nrows && cell_at(t, 0, c)->kind == CELL_NUMBER;
		fputs(num ? " ---: |" : " --- |", out);
	}
	fputc('\n', out);
	for (size_t r = 0; r < t->nrows; r++) {
		fputc('|', out);
		for (int c = 0; c < t->ncols; c++) {
			fputc(' ', out);
			md_field(shown(cell_at(t, r, c)), out);
			fputs(" |", out);
		}
		fputc('\n', out);
	}
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
