/* groups.c - counter groups as text files (format in probes.h): parse,
 * find by name, list, and evaluate their formulas. A new metric set is a
 * new file, not new code. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "probes.h"
#include "util.h"

#ifndef FP_GROUPS_DIR
#define FP_GROUPS_DIR "/usr/local/share/fuseprof/groups"
#endif
#ifndef FP_GROUPS_SRCDIR
#define FP_GROUPS_SRCDIR "probes/groups"
#endif

void group_release(struct counter_group *g)
{
	for (int i = 0; i < g->ncounters; i++)
		free(g->counters[i]);
	for (int i = 0; i < g->nformulas; i++) {
		free(g->formula_names[i]);
		free(g->formulas[i]);
	}
	free(g->counters);
	free(g->formula_names);
	free(g->formulas);
	free(g->name);
	free(g->description);
	free(g->path);
	memset(g, 0, sizeof *g);
}

static int is_metric_char(int c)
{
	return isalnum(c) || c == '_' || c == '.';
}

static int counter_index(const struct counter_group *g, const char *name,
			 size_t len)
{
	for (int i = 0; i < g->ncounters; i++)
		if (strlen(g->counters[i]) == len && !strncmp(g->counters[i], name, len))
			return i;
	return -1;
}

/* ---- expressions: sum := term (('+'|'-') term)*, term := factor
 * (('*'|'/') factor)*, factor := NUMBER | COUNTER | '(' sum ')' | '-' factor.
 * One routine both checks (values == NULL) and evaluates. */
struct expr {
	const struct counter_group *g;
	const char *p;
	const double *values;
	char err[160];
};

static double e_sum(struct expr *e);

static void e_space(struct expr *e)
{
	while (isspace((unsigned char)*e->p))
		e->p++;
}

static double e_factor(struct expr *e)
{
	e_space(e);
	if (e->err[0])
		return NAN;
	if (*e->p == '(') {
		double v;

		e->p++;
		v = e_sum(e);
		e_space(e);
		if (*e->p != ')') {
			if (!e->err[0])
				snprintf(e->err, sizeof e->err, "missing ')'");
			return NAN;
		}
		e->p++;
		return v;
	}
	if (*e->p == '-') {
		e->p++;
		return -e_factor(e);
	}
	if (isdigit((unsigned char)*e->p) || *e->p == '.') {
		char *end;
		double v = strtod(e->p, &end);

		e->p = end;
		return v;
	}
	if (isalpha((unsigned char)*e->p)) {
		const char *s = e->p;
		int i;

		while (is_metric_char((unsigned char)*e->p))
			e->p++;
		i = counter_index(e->g, s, (size_t)(e->p - s));
		if (i < 0) {
			snprintf(e->err, sizeof e->err, "'%.*s' is not a counter of "
				 "this group", (int)(e->p - s), s);
			return NAN;
		}
		return e->values ? e->values[i] : 1.0;
	}
	snprintf(e->err, sizeof e->err, "unexpected '%s'", *e->p ? e->p : "end");
	return NAN;
}

static double e_term(struct expr *e)
{
	double v = e_factor(e);

	for (;;) {
		e_space(e);
		if (*e->p == '*') {
			e->p++;
			v *= e_factor(e);
		} else if (*e->p == '/') {
			double d;

			e->p++;
			d = e_factor(e);
			v = d == 0 ? NAN : v / d;
		} else {
			return v;
		}
	}
}

static double e_sum(struct expr *e)
{
	double v = e_term(e);

	for (;;) {
		e_space(e);
		if (*e->p == '+') {
			e->p++;
			v += e_term(e);
		} else if (*e->p == '-') {
			e->p++;
			v -= e_term(e);
		} else {
			return v;
		}
	}
}

/* Check (values NULL) or evaluate text; returns 0 or -1 with e->err set. */
static int expr_run(struct expr *e, const struct counter_group *g,
		    const char *text, const double *values, double *out)
{
	memset(e, 0, sizeof *e);
	e->g = g;
	e->p = text;
	e->values = values;
	*out = e_sum(e);
	e_space(e);
	if (!e->err[0] && *e->p)
		snprintf(e->err, sizeof e->err, "unexpected '%s'", e->p);
	return e->err[0] ? -1 : 0;
}

double group_eval(const struct counter_group *g, int i, const double *values)
{
	struct expr e;
	double v;

	if (i < 0 || i >= g->nformulas || expr_run(&e, g, g->formulas[i], values, &v))
		return NAN;
	return v;
}

/* ---- parsing ---------------------------------------------------------- */

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int group_parse(struct counter_group *g, const char *text, const char *path)
{
	char *copy = xstrdup(text), *line;
	int lineno = 0;

	memset(g, 0, sizeof *g);
	g->path = xstrdup(path);
	for (char *p = copy; p; p = line) {
		char *kw, *rest, *hash;

		line = strchr(p, '\n');
		if (line)
			*line++ = '\0';
		lineno++;
		hash = strchr(p, '#');
		if (hash)
			*hash = '\0';
		p = trim(p);
		if (!*p)
			continue;
		kw = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
		rest = trim(p);
		if (!strcmp(kw, "name") || !strcmp(kw, "description")) {
			char **dst = kw[0] == 'n' ? &g->name : &g->description;

			if (*dst) {
				error("%s:%d: '%s' given twice", path, lineno, kw);
				goto out_fail;
			}
			if (!*rest) {
				error("%s:%d: '%s' needs a value", path, lineno, kw);
				goto out_fail;
			}
			*dst = xstrdup(rest);
		} else if (!strcmp(kw, "counter")) {
			size_t n = strlen(rest);

			if (n == 0 || strspn(rest, "abcdefghijklmnopqrstuvwxyz"
					     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != n ||
			    !isalpha((unsigned char)rest[0])) {
				error("%s:%d: '%s' is not a counter name (letters, digits, "
				      "'_' and '.', e.g. dram__bytes_read.sum)", path,
				      lineno, rest);
				goto out_fail;
			}
			if (counter_index(g, rest, n) >= 0) {
				error("%s:%d: counter '%s' listed twice", path, lineno, rest);
				goto out_fail;
			}
			g->counters = xrealloc(g->counters,
					       (size_t)(g->ncounters + 1) * sizeof *g->counters);
			g->counters[g->ncounters++] = xstrdup(rest);
		} else if (!strcmp(kw, "formula")) {
			char *eq = strchr(rest, '='), *fname, *body;
			struct expr e;
			double v;

			if (!eq) {
				error("%s:%d: a formula is 'formula NAME = EXPRESSION'",
				      path, lineno);
				goto out_fail;
			}
			*eq = '\0';
			fname = trim(rest);
			body = trim(eq + 1);
			if (!*fname || strspn(fname, "abcdefghijklmnopqrstuvwxyz0123456789_")
					!= strlen(fname)) {
				error("%s:%d: formula name '%s' must be lowercase letters, "
				      "digits and '_'", path, lineno, fname);
				goto out_fail;
			}
			/* Counters come first so a formula can be checked here. */
			if (expr_run(&e, g, body, NULL, &v)) {
				error("%s:%d: formula '%s': %s", path, lineno, fname, e.err);
				goto out_fail;
			}
			g->formula_names = xrealloc(g->formula_names, (size_t)(g->nformulas + 1)
						    * sizeof *g->formula_names);
			g->formulas = xrealloc(g->formulas, (size_t)(g->nformulas + 1)
					       * sizeof *g->formulas);
			g->formula_names[g->nformulas] = xstrdup(fname);
			g->formulas[g->nformulas++] = xstrdup(body);
		} else {
			error("%s:%d: unknown keyword '%s' (use name, description, "
			      "counter or formula)", path, lineno, kw);
			goto out_fail;
		}
	}
	if (!g->name) {
		error("%s: no 'name' line", path);
		goto out_fail;
	}
	if (g->ncounters == 0) {
		error("%s: the group '%s' lists no counters", path, g->name);
		goto out_fail;
	}
	free(copy);
	return 0;

out_fail:
	free(copy);
	group_release(g);
	return -1;
}

/* ---- finding groups --------------------------------------------------- */

/* The directories searched, in order; entries may be NULL. */
static void group_dirs(const char *dirs[3])
{
	const char *env = getenv("FUSEPROF_GROUPS_DIR");

	dirs[0] = env && *env ? env : NULL;
	dirs[1] = FP_GROUPS_DIR;
	dirs[2] = FP_GROUPS_SRCDIR;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	{
		char *s = xstrdup(strbuf_str(&sb));

		strbuf_release(&sb);
		return s;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *group_list(void)
{
	const char *dirs[3];
	char **names = NULL;
	size_t n = 0;
	struct strbuf sb = STRBUF_INIT;
	char *out;

	group_dirs(dirs);
	for (int d = 0; d < 3; d++) {
		DIR *dir;
		struct dirent *de;

		if (!dirs[d] || !(dir = opendir(dirs[d])))
			continue;
		while ((de = readdir(dir))) {
			size_t len = strlen(de->d_name);
			int dup = 0;

			if (len < 5 || strcmp(de->d_name + len - 4, ".txt"))
				continue;
			for (size_t i = 0; i < n && !dup; i++)
				dup = strlen(names[i]) == len - 4 &&
				      !strncmp(names[i], de->d_name, len - 4);
			if (dup)
				continue;
			names = xrealloc(names, (n + 1) * sizeof *names);
			names[n] = xstrdup(de->d_name);
			names[n++][len - 4] = '\0';
		}
		closedir(dir);
	}
	qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		strbuf_addf(&sb, "%s%s", i ? ", " : "", names[i]);
		free(names[i]);
	}
	free(names);
	out = xstrdup(n ? strbuf_str(&sb) : "none found");
	strbuf_release(&sb);
	return out;
}

int group_load(struct counter_group *g, const char *name)
{
	const char *dirs[3];
	char *text = NULL, *path = NULL, *list;
	int rc;

	memset(g, 0, sizeof *g);
	if (strchr(name, '/')) {
		path = xstrdup(name);
		text = read_file(path);
		if (!text) {
			rc = error("cannot read counter group '%s': %s", path,
				   strerror(errno));
			free(path);
			return rc;
		}
	} else {
		group_dirs(dirs);
		for (int d = 0; d < 3 && !text; d++) {
			if (!dirs[d])
				continue;
			free(path);
			path = xasprintf("%s/%s.txt", dirs[d], name);
			text = read_file(path);
		}
		if (!text) {
			list = group_list();
			free(path);
			rc = error("unknown counter group '%s' (groups: %s; or give "
				   "a file path)", name, list);
			free(list);
			return rc;
		}
	}
	rc = group_parse(g, text, path);
	free(text);
	free(path);
	return rc;
}
