/* jsoncheck.c - the check of `fuseprof export --format perfetto` that a
 * JSON parser and the Trace Event Format's rules make (tests/ has no
 * Python to lean on): parse stdin as strict JSON (RFC 8259: no trailing
 * commas, no comments, escapes and numbers as the grammar says), then
 * check the trace: an object with a "traceEvents" array and
 * "displayTimeUnit": "ns"; every event an object with "ph"; every complete
 * event ("X") with a string "name", numbers "ts" >= 0, "dur" >= 0, "pid"
 * and "tid"; every metadata event ("M") a known name with "args"; and on
 * each track (pid, tid) the complete events properly nested: sorted by
 * start (longest first), each starts after the previous ended or ends
 * within the innermost still open. Prints "events N slices N tracks N",
 * then "CAT N" per category, and exits 0; 1 with a line on what broke. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct json {
	enum kind kind;
	double num;
	char *str;              /* J_STR */
	struct json **v;        /* J_ARR items, J_OBJ values */
	char **keys;            /* J_OBJ */
	size_t n;
};

static const char *p, *text;

static void die(const char *what)
{
	fprintf(stderr, "jsoncheck: %s (at byte %ld)\n", what, (long)(p - text));
	exit(1);
}

static void *xalloc(size_t n)
{
	void *q = calloc(1, n ? n : 1);

	if (!q)
		die("out of memory");
	return q;
}

static void ws(void)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
}

static struct json *value(int depth);

static char *string(void)
{
	size_t cap = 16, n = 0;
	char *s = xalloc(cap);

	if (*p++ != '"')
		die("expected a string");
	while (*p != '"') {
		unsigned c = (unsigned char)*p++;

		if (c == 0)
			die("unterminated string");
		if (c < 0x20)
			die("control character in a string");
		if (c == '\\') {
			c = (unsigned char)*p++;
			switch (c) {
			case '"': case '\\': case '/': break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u':
				for (int i = 0; i < 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						die("bad \\u escape");
				c = (unsigned)strtoul((char[5]){ p[0], p[1], p[2], p[3], 0 }, NULL, 16);
				p += 4;
				if (c > 0x7f)
					c = '?';  /* the checks need no more */
				break;
			default:
				die("bad escape");
			}
		}
		if (n + 2 > cap) {
			cap *= 2;
			s = realloc(s, cap);
			if (!s)
				die("out of memory");
		}
		s[n++] = (char)c;
	}
	p++;
	s[n] = 0;
	return s;
}

static double number(void)
{
	const char *start = p;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (isdigit((unsigned char)*p))
		while (isdigit((unsigned char)*p))
			p++;
	else
		die("bad number");
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			die("bad fraction");
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			die("bad exponent");
		while (isdigit((unsigned char)*p))
			p++;
	}
	return strtod(start, NULL);
}

static void push(struct json *j, char *key, struct json *v)
{
	j->v = realloc(j->v, (j->n + 1) * sizeof *j->v);
	if (j->kind == J_OBJ)
		j->keys = realloc(j->keys, (j->n + 1) * sizeof *j->keys);
	if (!j->v || (j->kind == J_OBJ && !j->keys))
		die("out of memory");
	if (j->kind == J_OBJ)
		j->keys[j->n] = key;
	j->v[j->n++] = v;
}

static struct json *value(int depth)
{
	struct json *j = xalloc(sizeof *j);

	if (depth > 64)
		die("nested too deep");
	ws();
	if (*p == '{') {
		j->kind = J_OBJ;
		p++;
		ws();
		if (*p == '}') {
			p++;
			return j;
		}
		for (;;) {
			char *k;

			ws();
			k = string();
			ws();
			if (*p++ != ':')
				die("expected ':'");
			push(j, k, value(depth + 1));
			ws();
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p++ != '}')
				die("expected ',' or '}'");
			return j;
		}
	}
	if (*p == '[') {
		j->kind = J_ARR;
		p++;
		ws();
		if (*p == ']') {
			p++;
			return j;
		}
		for (;;) {
			push(j, NULL, value(depth + 1));
			ws();
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p++ != ']')
				die("expected ',' or ']'");
			return j;
		}
	}
	if (*p == '"') {
		j->kind = J_STR;
		j->str = string();
	} else if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
		j->kind = J_BOOL;
		p += *p == 't' ? 4 : 5;
	} else if (!strncmp(p, "null", 4)) {
		j->kind = J_NULL;
		p += 4;
	} else {
		j->kind = J_NUM;
		j->num = number();
	}
	return j;
}

static const struct json *get(const struct json *o, const char *key)
{
	for (size_t i = 0; o->kind == J_OBJ && i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return o->v[i];
	return NULL;
}

struct slice {
	double pid, tid, ts, end;
	size_t at;
};

static int by_track(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->at < y->at ? -1 : 1;
}

static void bad_event(size_t i, const char *why)
{
	fprintf(stderr, "jsoncheck: event %zu: %s\n", i, why);
	exit(1);
}

int main(void)
{
	size_t cap = 1 << 16, n = 0, r, nslices = 0, ntracks = 0;
	char *buf = malloc(cap);
	const struct json *root, *events, *unit;
	struct slice *sl;
	double *stack;
	struct { char *cat; size_t n; } cats[32];
	size_t ncats = 0;

	while (buf && (r = fread(buf + n, 1, cap - n - 1, stdin)) > 0) {
		n += r;
		if (n + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf)
		die("out of memory");
	buf[n] = 0;
	if (strlen(buf) != n)
		die("a NUL byte in the input");
	text = p = buf;
	root = value(0);
	ws();
	if (*p)
		die("text after the JSON value");
	if (root->kind != J_OBJ)
		die("the trace is not a JSON object");
	events = get(root, "traceEvents");
	if (!events || events->kind != J_ARR)
		die("no \"traceEvents\" array");
	unit = get(root, "displayTimeUnit");
	if (!unit || unit->kind != J_STR || strcmp(unit->str, "ns"))
		die("\"displayTimeUnit\" is not \"ns\"");
	sl = xalloc(events->n * sizeof *sl);
	for (size_t i = 0; i < events->n; i++) {
		const struct json *e = events->v[i], *ph, *f;

		if (e->kind != J_OBJ)
			bad_event(i, "not an object");
		ph = get(e, "ph");
		if (!ph || ph->kind != J_STR)
			bad_event(i, "no \"ph\"");
		if (!strcmp(ph->str, "M")) {
			f = get(e, "name");
			if (!f || f->kind != J_STR || (strcmp(f->str, "process_name") &&
			    strcmp(f->str, "thread_name") && strcmp(f->str, "thread_sort_index")))
				bad_event(i, "metadata of an unknown name");
			if (!get(e, "args") || get(e, "args")->kind != J_OBJ ||
			    !get(e, "pid") || get(e, "pid")->kind != J_NUM)
				bad_event(i, "metadata without args or pid");
			continue;
		}
		if (strcmp(ph->str, "X"))
			bad_event(i, "neither a complete (X) nor a metadata (M) event");
		f = get(e, "name");
		if (!f || f->kind != J_STR)
			bad_event(i, "no string \"name\"");
		static const char *const nums[] = { "ts", "dur", "pid", "tid" };
		for (size_t k = 0; k < 4; k++) {
			f = get(e, nums[k]);
			if (!f || f->kind != J_NUM || !isfinite(f->num))
				bad_event(i, "a field of ts, dur, pid, tid is not a number");
		}
		if (get(e, "ts")->num < 0 || get(e, "dur")->num < 0)
			bad_event(i, "negative ts or dur");
		sl[nslices].pid = get(e, "pid")->num;
		sl[nslices].tid = get(e, "tid")->num;
		sl[nslices].ts = get(e, "ts")->num;
		sl[nslices].end = sl[nslices].ts + get(e, "dur")->num;
		sl[nslices].at = i;
		nslices++;
		f = get(e, "cat");
		{
			const char *c = f && f->kind == J_STR ? f->str : "(none)";
			size_t k;

			for (k = 0; k < ncats && strcmp(cats[k].cat, c); k++)
				;
			if (k == ncats && ncats < 32) {
				cats[ncats].cat = (char *)c;
				cats[ncats++].n = 0;
			}
			if (k < 32)
				cats[k].n++;
		}
	}
	/* Nesting per track, to a nanosecond (the events' precision). */
	qsort(sl, nslices, sizeof *sl, by_track);
	stack = xalloc(nslices * sizeof *stack);
	for (size_t i = 0, depth = 0; i < nslices; i++) {
		if (i == 0 || sl[i].pid != sl[i - 1].pid || sl[i].tid != sl[i - 1].tid) {
			depth = 0;
			ntracks++;
		}
		while (depth && stack[depth - 1] <= sl[i].ts + 1e-4)
			depth--;
		if (depth && sl[i].end > stack[depth - 1] + 1e-4) {
			fprintf(stderr, "jsoncheck: event %zu (pid %.0f tid %.0f, ts %.3f) "
				"overlaps an open slice ending at %.3f without nesting in it\n",
				sl[i].at, sl[i].pid, sl[i].tid, sl[i].ts, stack[depth - 1]);
			return 1;
		}
		stack[depth++] = sl[i].end;
	}
	printf("events %zu slices %zu tracks %zu\n", events->n, nslices, ntracks);
	for (size_t k = 0; k < ncats; k++)
		printf("%s %zu\n", cats[k].cat, cats[k].n);
	return 0;
}
