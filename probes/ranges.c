/* ranges.c - NVTX range instances of a profiled program, from its markers:
 * per thread, the instances alive in start order and the ones still open,
 * so that a launch's thread and time give the innermost range it ran in
 * (a binary search and a walk up the parents), and closed instances are
 * forgotten once no launch still to come can fall in them. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "util.h"

struct thread_ranges {
	uint32_t tid;
	struct range_inst **v;     /* alive, by start */
	size_t n, alloc;
	struct range_inst **open;  /* open, innermost last */
	size_t nopen, aopen;
};

struct ranges {
	struct thread_ranges *t;
	size_t nt, at;
	long long next_id;
	struct range_inst **changed;
	size_t nchanged, achanged;
	size_t alive;
	uint32_t main_tid;
};

/* A range instance waiting in the changed list. */
#define DIRTY 1

struct ranges *ranges_new(void)
{
	return xcalloc(1, sizeof(struct ranges));
}

void ranges_free(struct ranges *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nt; i++) {
		for (size_t j = 0; j < r->t[i].n; j++) {
			free(r->t[i].v[j]->path);
			free(r->t[i].v[j]);
		}
		free(r->t[i].v);
		free(r->t[i].open);
	}
	free(r->t);
	free(r->changed);
	free(r);
}

static struct thread_ranges *thread_of(struct ranges *r, uint32_t tid, int add)
{
	for (size_t i = 0; i < r->nt; i++)
		if (r->t[i].tid == tid)
			return &r->t[i];
	if (!add)
		return NULL;
	if (r->nt == r->at) {
		r->at = r->at ? 2 * r->at : 8;
		r->t = xrealloc(r->t, r->at * sizeof *r->t);
	}
	memset(&r->t[r->nt], 0, sizeof r->t[r->nt]);
	r->t[r->nt].tid = tid;
	return &r->t[r->nt++];
}

static void mark(struct ranges *r, struct range_inst *in)
{
	if (in->reported == DIRTY)
		return;
	in->reported = DIRTY;
	if (r->nchanged == r->achanged) {
		r->achanged = r->achanged ? 2 * r->achanged : 64;
		r->changed = xrealloc(r->changed, r->achanged * sizeof *r->changed);
	}
	r->changed[r->nchanged++] = in;
}

/* Index of the last instance of th starting at or before ts, or -1. */
static long last_started(const struct thread_ranges *th, uint64_t ts)
{
	long lo = 0, hi = (long)th->n - 1, found = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (th->v[mid]->start <= ts) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

static void open_range(struct ranges *r, const struct marker_rec *m)
{
	struct thread_ranges *th = thread_of(r, m->tid, 1);
	struct range_inst *in = xcalloc(1, sizeof *in);
	struct range_inst *parent = th->nopen ? th->open[th->nopen - 1] : NULL;
	const char *name = m->name ? m->name : "";
	long at;

	in->id = ++r->next_id;
	in->tid = m->tid;
	in->marker = m->id;
	in->name = name;
	in->domain = m->domain;
	in->start = m->ts;
	in->parent = parent;
	in->depth = parent ? parent->depth + 1 : 0;
	in->path = parent ? xasprintf("%s/%s", parent->path, name) : xstrdup(name);
	if (parent)
		parent->children++;
	/* In start order: markers come in time order, but a batch may hold
	 * a marker older than the last one of the batch before. */
	if (th->n == th->alloc) {
		th->alloc = th->alloc ? 2 * th->alloc : 16;
		th->v = xrealloc(th->v, th->alloc * sizeof *th->v);
	}
	at = last_started(th, m->ts) + 1;
	memmove(&th->v[at + 1], &th->v[at], (th->n - (size_t)at) * sizeof *th->v);
	th->v[at] = in;
	th->n++;
	if (th->nopen == th->aopen) {
		th->aopen = th->aopen ? 2 * th->aopen : 16;
		th->open = xrealloc(th->open, th->aopen * sizeof *th->open);
	}
	th->open[th->nopen++] = in;
	r->alive++;
	mark(r, in);
}

/* Position of the open instance with marker id in th, or -1. */
static long open_with_id(const struct thread_ranges *th, uint32_t id)
{
	for (long i = (long)th->nopen - 1; i >= 0; i--)
		if (th->open[i]->marker == id)
			return i;
	return -1;
}

static void close_at(struct ranges *r, struct thread_ranges *th, long i, uint64_t ts)
{
	struct range_inst *in = th->open[i];

	in->end = ts > in->start ? ts : in->start;
	memmove(&th->open[i], &th->open[i + 1], (th->nopen - (size_t)i - 1) * sizeof *th->open);
	th->nopen--;
	mark(r, in);
}

static void close_range(struct ranges *r, const struct marker_rec *m,
			unsigned long long *unmatched)
{
	struct thread_ranges *th = thread_of(r, m->tid, 0);
	long i = th ? open_with_id(th, m->id) : -1;

	/* A start/end range may end on another thread than its own. */
	for (size_t k = 0; i < 0 && k < r->nt; k++) {
		i = open_with_id(&r->t[k], m->id);
		if (i >= 0)
			th = &r->t[k];
	}
	if (i < 0 && th && th->nopen)
		i = (long)th->nopen - 1;
	if (i < 0) {
		if (unmatched)
			(*unmatched)++;
		return;
	}
	close_at(r, th, i, m->ts);
}

struct ordered {
	struct marker_rec m;
	size_t at;
};

static int by_time(const void *a, const void *b)
{
	const struct ordered *x = a, *y = b;

	if (x->m.ts != y->m.ts)
		return x->m.ts < y->m.ts ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

void ranges_apply(struct ranges *r, struct marker_rec *m, size_t n,
		  unsigned long long *unmatched)
{
	struct ordered *o = xmalloc((n ? n : 1) * sizeof *o);

	/* By time, ties in the order CUPTI gave them. */
	for (size_t i = 0; i < n; i++) {
		o[i].m = m[i];
		o[i].at = i;
	}
	qsort(o, n, sizeof *o, by_time);
	for (size_t i = 0; i < n; i++) {
		m[i] = o[i].m;
		if (m[i].kind == MARKER_START)
			open_range(r, &m[i]);
		else if (m[i].kind == MARKER_END)
			close_range(r, &m[i], unmatched);
	}
	free(o);
}

/* The innermost instance of thread tid's list open at ts, or NULL. */
static const struct range_inst *at_on(const struct ranges *r, uint32_t tid, uint64_t ts)
{
	const struct thread_ranges *th = NULL;
	const struct range_inst *c;
	long i;

	for (size_t k = 0; k < r->nt && !th; k++)
		if (r->t[k].tid == tid)
			th = &r->t[k];
	if (!th || (i = last_started(th, ts)) < 0)
		return NULL;
	/* The last to start before ts, or the nearest of its ancestors still
	 * open at ts: each started before it. */
	for (c = th->v[i]; c && c->end && c->end < ts; c = c->parent)
		;
	return c;
}

void ranges_main_thread(struct ranges *r, uint32_t tid)
{
	r->main_tid = tid;
}

const struct range_inst *ranges_at(const struct ranges *r, uint32_t tid, uint64_t ts)
{
	const struct range_inst *own = at_on(r, tid, ts), *all;

	if (!own && r->main_tid && tid != r->main_tid)
		own = at_on(r, r->main_tid, ts);

	/* Markers of no known thread (tid 0) hold for every thread: the
	 * innermost of the two is the one that started last. */
	if (tid == 0 || !(all = at_on(r, 0, ts)))
		return own;
	return !own || all->start > own->start ? all : own;
}

long long ranges_next_id(struct ranges *r)
{
	return ++r->next_id;
}

size_t ranges_changed(struct ranges *r, const struct range_inst ***out)
{
	size_t n = r->nchanged;

	for (size_t i = 0; i < n; i++)
		r->changed[i]->reported = 0;
	r->nchanged = 0;
	*out = (const struct range_inst **)r->changed;
	return n;
}

void ranges_prune(struct ranges *r, uint64_t ts)
{
	for (size_t k = 0; k < r->nt; k++) {
		struct thread_ranges *th = &r->t[k];
		size_t keep = th->n;

		/* Newest first: a child goes before its parent is judged. */
		for (size_t j = th->n; j-- > 0;) {
			struct range_inst *in = th->v[j];

			if (!in->end || in->end >= ts || in->children || in->reported)
				continue;
			if (in->parent)
				in->parent->children--;
			free(in->path);
			free(in);
			th->v[j] = NULL;
			r->alive--;
			keep--;
		}
		if (keep != th->n) {
			size_t w = 0;

			for (size_t j = 0; j < th->n; j++)
				if (th->v[j])
					th->v[w++] = th->v[j];
			th->n = w;
		}
	}
}

size_t ranges_alive(const struct ranges *r)
{
	return r->alive;
}
