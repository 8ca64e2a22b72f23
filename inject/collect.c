/* collect.c - the profiler's pipeline (collect.h): range instances from
 * markers, each launch placed in its range when its batch comes, each
 * kernel record stored as a launch of its op, one commit a batch. */
#include "config.h"

#include <fnmatch.h>
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "error.h"
#include "launcher.h"
#include "profile.h"
#include "store.h"
#include "strmap.h"
#include "util.h"

/* Where a launch ran: its record (thread, time, pointers) with its op (a
 * range path, interned here; NULL outside any range) and the range
 * instance, by the launching call's correlation id. */
struct placed {
	struct launch_rec l;
	int used;
	long long instance;
	const char *op;
};

_Static_assert(PROBE_LAUNCH_PTRS == STORE_PROF_PTRS, "a launch's pointers fit its row");

/* A launch whose kernel has not come this long after it never will (a
 * record CUPTI dropped): its entry goes, once the map is this big. */
#define PLACED_MAX_AGE_NS (600ull * 1000000000ull)
#define PLACED_AGE_ABOVE 65536

/* An open-addressing map from correlation id to placement, with
 * backward-shift deletion: an entry leaves when its kernel arrives
 * (a graph launch's stays: all its kernels share the id). */
struct placements {
	struct placed *v;
	size_t n, cap;
};

struct collector {
	struct collect_config cfg;
	struct store *st;
	struct store_proc proc;
	struct ranges *ranges;
	struct placements placed;
	struct strmap paths;         /* interned range paths */
	regex_t filter;
	int has_filter;
	struct strmap filtered;      /* demangled name -> 1 kept, 2 left out */
	struct strmap included;      /* range path -> 1 kept, 2 left out
	                                (--nvtx-include) */
	struct kernel_rec *waiting;  /* kernels whose launch was not known */
	size_t nwaiting;
	uint64_t prev_taken;         /* the previous batch's taken time */
	unsigned long long unmatched;
	long long lost;              /* launches of commits that failed */
	int devices[64];             /* 1: recorded (by device index) */
	struct counted_rec *cnt;     /* counted launches not yet stored, by */
	unsigned char *cnt_age;      /* correlation; batches each has waited */
	size_t ncnt;
	long long counted;
	int duration;                /* COLLECT_DURATION_METRIC's place in
	                                cfg.counter_names, or -1 */
	struct { long long stream, end; } *last;  /* end_to_end(): per stream */
	size_t nlast;
	int warned;
};

static uint64_t mix(uint32_t k)
{
	return splitmix64(k);
}

static struct placed *placed_find(struct placements *p, uint32_t corr)
{
	if (!p->cap)
		return NULL;
	for (size_t i = mix(corr) & (p->cap - 1); p->v[i].used; i = (i + 1) & (p->cap - 1))
		if (p->v[i].l.correlation == corr)
			return &p->v[i];
	return NULL;
}

static void placed_put(struct placements *p, const struct placed *e)
{
	size_t i;

	if (2 * (p->n + 1) > p->cap) {
		struct placements g = { NULL, 0, p->cap ? 2 * p->cap : 1024 };

		g.v = xcalloc(g.cap, sizeof *g.v);
		for (size_t j = 0; j < p->cap; j++)
			if (p->v[j].used)
				placed_put(&g, &p->v[j]);
		free(p->v);
		*p = g;
	}
	for (i = mix(e->l.correlation) & (p->cap - 1); p->v[i].used; i = (i + 1) & (p->cap - 1))
		if (p->v[i].l.correlation == e->l.correlation)
			break;
	if (!p->v[i].used)
		p->n++;
	p->v[i] = *e;
	p->v[i].used = 1;
}

static void placed_remove(struct placements *p, struct placed *e)
{
	size_t i = (size_t)(e - p->v), j = i;

	p->v[i].used = 0;
	p->n--;
	/* Shift back every entry of the run after i that the gap cut off
	 * from its home slot. */
	for (;;) {
		size_t home;

		j = (j + 1) & (p->cap - 1);
		if (!p->v[j].used)
			return;
		home = mix(p->v[j].l.correlation) & (p->cap - 1);
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			p->v[i] = p->v[j];
			p->v[j].used = 0;
			i = j;
		}
	}
}

/* Drop the entries of launches older than before (graph launches too:
 * their kernels run within minutes). */
static void placed_age(struct placements *p, uint64_t before)
{
	struct placements g = { NULL, 0, p->cap };

	g.v = xcalloc(g.cap, sizeof *g.v);
	for (size_t j = 0; j < p->cap; j++)
		if (p->v[j].used && p->v[j].l.ts >= before)
			placed_put(&g, &p->v[j]);
	free(p->v);
	*p = g;
}

static int open_store(const struct collect_config *cfg, struct store **st)
{
	return store_open(st, cfg->db, STORE_READWRITE);
}

/* Where this process's launcher placed it (torchrun, Open MPI, PMI,
 * Slurm), from its environment: -1 where none said. */
static void set_rank(struct store_proc *p)
{
	struct launcher_rank r;

	launcher_rank(&r);
	p->rank = r.rank;
	p->local_rank = r.local_rank;
	p->world_size = r.world_size;
}

int collect_open(struct collector **out, const struct collect_config *cfg,
		 long long pid, const char *command_line)
{
	struct collector *c = xcalloc(1, sizeof *c);
	int rc;

	*out = NULL;
	c->cfg = *cfg;
	c->duration = -1;
	for (int i = 0; i < cfg->ncounters; i++)
		if (!strcmp(cfg->counter_names[i], COLLECT_DURATION_METRIC))
			c->duration = i;
	if (cfg->kernel_filter && *cfg->kernel_filter) {
		rc = regcomp(&c->filter, cfg->kernel_filter, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char why[256];

			regerror(rc, &c->filter, why, sizeof why);
			free(c);
			return error("bad kernel filter '%s': %s", cfg->kernel_filter, why);
		}
		c->has_filter = 1;
	}
	if (open_store(cfg, &c->st))
		goto out_free;
	c->proc.run_id = cfg->run_id;
	c->proc.pid = pid;
	c->proc.command_line = command_line;
	set_rank(&c->proc);
	if (store_proc_begin(c->st, &c->proc, "running", NULL))
		goto out_close;
	c->ranges = ranges_new();
	ranges_main_thread(c->ranges, (uint32_t)pid);
	*out = c;
	return 0;

out_close:
	store_close(c->st);
out_free:
	if (c->has_filter)
		regfree(&c->filter);
	free(c);
	return -1;
}

int collect_refuse(const struct collect_config *cfg, long long pid,
		   const char *command_line, const char *status, const char *note)
{
	struct store *st;
	struct store_proc p = { .run_id = cfg->run_id, .pid = pid,
				.command_line = command_line };
	int rc;

	set_rank(&p);
	if (open_store(cfg, &st))
		return -1;
	rc = store_proc_begin(st, &p, status, note);
	if (rc == 0)
		rc = store_proc_finish(st, &p, status, NULL);
	store_proc_release(&p);
	store_close(st);
	return rc;
}

static const char *intern_path(struct collector *c, const char *path)
{
	return strmap_put(&c->paths, path, NULL)->key;
}

int collect_nvtx_included(const char *patterns, const char *path)
{
	char *pats, *save = NULL, *part;
	int hit = 0;

	if (!patterns || !*patterns)
		return 1;
	if (!path)
		return 0;
	pats = xstrdup(patterns);
	part = xstrdup(path);
	for (char *pat = strtok_r(pats, "\n", &save); pat && !hit;
	     pat = strtok_r(NULL, "\n", &save)) {
		/* the whole path, then each leading part, longest first */
		strcpy(part, path);
		for (char *slash; !hit;) {
			hit = fnmatch(pat, part, 0) == 0;
			if (!(slash = strrchr(part, '/')))
				break;
			*slash = '\0';
		}
	}
	free(part);
	free(pats);
	return hit;
}

/* 1 when the --nvtx-include patterns keep launches in the range path op
 * (NULL: outside every range). */
static int range_kept(struct collector *c, const char *op)
{
	struct strmap_entry *e;

	if (!c->cfg.nvtx_include || !*c->cfg.nvtx_include)
		return 1;
	if (!op)
		return 0;
	e = strmap_put(&c->included, op, NULL);
	if (!e->v.i)
		e->v.i = collect_nvtx_included(c->cfg.nvtx_include, op) ? 1 : 2;
	return e->v.i == 1;
}

size_t collect_op_name(const char *name, char *buf, size_t size)
{
	const char *s = strncmp(name, "void ", 5) == 0 ? name + 5 : name;
	size_t n = strlen(s);
	uint32_t h = 2166136261u;  /* FNV-1a */

	/* The parameter list: the final ")" and the "(" that opens it. */
	if (n && s[n - 1] == ')') {
		int depth = 0;

		for (size_t i = n; i-- > 0;) {
			if (s[i] == ')') {
				depth++;
			} else if (s[i] == '(' && --depth == 0) {
				if (i > 0)
					n = i;
				break;
			}
		}
	}
	if (n <= COLLECT_OP_NAME_MAX)
		return (size_t)snprintf(buf, size, "%.*s", (int)n, s);
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return (size_t)snprintf(buf, size, "%.*s...%08x", COLLECT_OP_NAME_MAX - 16, s, h);
}

/* The op of a launch outside every range. */
static const char *kernel_op(struct collector *c, const char *name)
{
	char buf[COLLECT_OP_NAME_MAX + 1];

	collect_op_name(name, buf, sizeof buf);
	return intern_path(c, buf);
}

/* 1 when the kernel filter keeps name (every name without a filter). */
static int kept(struct collector *c, const char *name)
{
	struct strmap_entry *e;

	if (!c->has_filter)
		return 1;
	e = strmap_put(&c->filtered, name, NULL);
	if (!e->v.i)
		e->v.i = regexec(&c->filter, name, 0, NULL, 0) == 0 ? 1 : 2;
	return e->v.i == 1;
}

/* Record the device of a kernel the first time it shows. */
static void note_device(struct collector *c, uint32_t index)
{
	struct probe_device d;
	long long id;

	if (!c->cfg.query_device || index >= ARRAY_SIZE(c->devices) || c->devices[index])
		return;
	c->devices[index] = 1;
	if (c->cfg.query_device((int)index, &d))
		return;
	struct store_device sd = {
		.uuid = d.uuid, .name = d.name, .cc_major = d.cc_major,
		.cc_minor = d.cc_minor, .sm_count = d.sm_count, .l2_bytes = d.l2_bytes,
		.mem_bytes = d.mem_bytes, .mem_bus_bits = d.mem_bus_bits,
		.sm_clock_khz = d.sm_clock_khz, .mem_clock_khz = d.mem_clock_khz,
		.driver_version = d.driver_version, .runtime_version = d.runtime_version,
		.cupti_version = d.cupti_version,
	};
	if (store_upsert_device(c->st, &sd, &id) == 0)
		store_profile_device(c->st, c->cfg.run_id, id);
}

/* Place each launch in the innermost range its thread was in. */
static void place_launches(struct collector *c, const struct collect_batch *b)
{
	for (size_t i = 0; i < b->nlaunches; i++) {
		const struct launch_rec *l = &b->launches[i];
		const struct range_inst *in = ranges_at(c->ranges, l->tid, l->ts);
		struct placed e = {
			.l = *l, .instance = in ? in->id : 0,
			.op = in ? intern_path(c, in->path) : NULL,
		};

		placed_put(&c->placed, &e);
	}
}

static void wait_for_launch(struct collector *c, const struct kernel_rec *k)
{
	c->waiting = xrealloc(c->waiting, (c->nwaiting + 1) * sizeof *c->waiting);
	c->waiting[c->nwaiting++] = *k;
}

static int cmp_counted(const void *a, const void *b)
{
	uint32_t x = ((const struct counted_rec *)a)->correlation;
	uint32_t y = ((const struct counted_rec *)b)->correlation;

	return (x > y) - (x < y);
}

/* Take a batch's counted launches beside those still waiting, kept
 * sorted by correlation id (new ones mostly come after the old: an
 * insertion sort of the pairs). */
static void counted_add(struct collector *c, struct collect_batch *b)
{
	size_t n = c->ncnt + b->ncounted;

	if (!b->ncounted)
		return;
	c->cnt = xrealloc(c->cnt, n * sizeof *c->cnt);
	c->cnt_age = xrealloc(c->cnt_age, n);
	for (size_t i = 0; i < b->ncounted; i++) {
		size_t j = c->ncnt + i;

		while (j > 0 && c->cnt[j - 1].correlation > b->counted[i].correlation) {
			c->cnt[j] = c->cnt[j - 1];
			c->cnt_age[j] = c->cnt_age[j - 1];
			j--;
		}
		c->cnt[j] = b->counted[i];
		c->cnt_age[j] = 0;
	}
	c->ncnt = n;
	b->ncounted = 0;
}

static const double *counted_find(const struct collector *c, uint32_t corr)
{
	struct counted_rec key = { corr, NULL }, *e;

	if (!c->ncnt)
		return NULL;
	e = bsearch(&key, c->cnt, c->ncnt, sizeof *c->cnt, cmp_counted);
	return e ? e->values : NULL;
}

/* After a batch: what waited a batch already goes (its kernel was left
 * out, or its record lost, or it was stored); the rest waits one, for a
 * kernel record that comes a batch after its launch. */
static void counted_age(struct collector *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->ncnt; i++) {
		if (c->cnt_age[i] >= 1) {
			free(c->cnt[i].values);
			continue;
		}
		c->cnt[k] = c->cnt[i];
		c->cnt_age[k++] = c->cnt_age[i] + 1;
	}
	c->ncnt = k;
}

/* A counted kernel: its duration (its record's, or, where the record
 * has no times, the counters' COLLECT_DURATION_METRIC), right after the
 * previous counted kernel of its stream (the first at its own start, or
 * at its launch call's return): the time between counted kernels is the
 * collector's (flushes, waits), so a counted run's timeline lays its
 * kernels end to end, in launch order, per stream. */
static void end_to_end(struct collector *c, struct store_prof_launch *out,
		    uint64_t launched, double dur_ns)
{
	size_t i;

	for (i = 0; i < c->nlast && c->last[i].stream != out->stream; i++)
		;
	if (i == c->nlast) {
		c->last = xrealloc(c->last, (c->nlast + 1) * sizeof *c->last);
		c->last[c->nlast].stream = out->stream;
		c->last[c->nlast++].end = (long long)launched;
	}
	out->start_ns = c->last[i].end;
	out->end_ns = out->start_ns + llround(dur_ns);
	c->last[i].end = out->end_ns;
}

/* Turn kernel k into a launch to store in *out; 0 when it is not to be
 * stored (left out, or waiting for its launch). */
static int launch_of(struct collector *c, const struct kernel_rec *k, int may_wait,
		     struct store_prof_launch *out)
{
	struct placed *p = placed_find(&c->placed, k->correlation);
	int stored = 0;

	if (!p && may_wait) {
		wait_for_launch(c, k);
		return 0;
	}
	c->proc.kernels_seen++;
	if (!kept(c, k->name) || !range_kept(c, p ? p->op : NULL) ||
	    (c->cfg.one_device && (int)k->device != c->cfg.device)) {
		c->proc.kernels_filtered++;
	} else if (c->cfg.max_kernels > 0 &&
		   c->proc.kernels_recorded >= c->cfg.max_kernels) {
		c->proc.kernels_over_limit++;
	} else {
		memset(out, 0, sizeof *out);
		out->op = p && p->op ? p->op : kernel_op(c, k->name);
		/* Outside any range each launch is a sample of its own. */
		out->instance = p && p->op ? p->instance : ranges_next_id(c->ranges);
		out->name = k->name;
		out->mangled = k->mangled;
		memcpy(out->grid, k->grid, sizeof out->grid);
		memcpy(out->block, k->block, sizeof out->block);
		out->registers = k->registers;
		out->static_smem = k->static_smem;
		out->dynamic_smem = k->dynamic_smem;
		out->tid = p ? (long long)p->l.tid : -1;
		out->device = k->device;
		out->stream = k->stream;
		out->correlation = k->correlation;
		out->start_ns = (long long)k->start;
		out->end_ns = (long long)(k->end > k->start ? k->end : k->start);
		out->nptrs = p ? p->l.nptrs : -1;
		out->ptrs_cut = p && p->l.ptrs_cut;
		if (out->nptrs > 0) {
			memcpy(out->ptrs, p->l.ptrs, sizeof(uint64_t) * (size_t)out->nptrs);
			memcpy(out->ptr_bytes, p->l.ptr_bytes,
			       sizeof(uint64_t) * (size_t)out->nptrs);
		}
		if ((out->counters = counted_find(c, k->correlation))) {
			out->counter_names = c->cfg.counter_names;
			out->ncounters = c->cfg.ncounters;
			if (k->start > 0)
				end_to_end(c, out, k->start, (double)(out->end_ns - out->start_ns));
			else if (c->duration >= 0 && p &&
				 !isnan(out->counters[c->duration]))
				end_to_end(c, out, p->l.ts, out->counters[c->duration]);
		}
		c->proc.kernels_recorded++;
		note_device(c, k->device);
		stored = 1;
	}
	if (p && !p->l.graph)
		placed_remove(&c->placed, p);
	return stored;
}

int collect_batch(struct collector *c, struct collect_batch *b)
{
	struct store_prof_launch *l;
	struct store_prof_range *r = NULL;
	const struct range_inst **changed;
	struct kernel_rec *waiting = c->waiting;
	size_t nwaiting = c->nwaiting, nl = 0, nr;
	long long recorded = c->proc.kernels_recorded;
	int rc;

	ranges_apply(c->ranges, b->markers, b->nmarkers, &c->unmatched);
	place_launches(c, b);
	counted_add(c, b);
	/* Kernels that waited for their launch go first: they ran first. */
	c->waiting = NULL;
	c->nwaiting = 0;
	l = xmalloc((nwaiting + b->nkernels + 1) * sizeof *l);
	for (size_t i = 0; i < nwaiting; i++)
		nl += (size_t)launch_of(c, &waiting[i], 0, &l[nl]);
	for (size_t i = 0; i < b->nkernels; i++)
		nl += (size_t)launch_of(c, &b->kernels[i], !b->last, &l[nl]);
	free(waiting);
	nr = ranges_changed(c->ranges, &changed);
	if (nr)
		r = xcalloc(nr, sizeof *r);
	for (size_t i = 0; i < nr; i++) {
		r[i].instance = changed[i]->id;
		r[i].tid = changed[i]->tid;
		r[i].domain = changed[i]->domain;
		r[i].name = changed[i]->name;
		r[i].path = changed[i]->path;
		r[i].depth = changed[i]->depth;
		r[i].start_ns = (long long)changed[i]->start;
		r[i].end_ns = (long long)changed[i]->end;
	}
	c->proc.records_dropped = (long long)b->dropped + c->lost;
	c->proc.ranges += (long long)nr;
	rc = store_profile_commit(c->st, &c->proc, l, nl, r, nr);
	for (size_t i = 0; rc == 0 && i < nl; i++)
		c->counted += l[i].ncounters > 0;
	if (rc) {
		/* Lost, and counted: never silently. */
		c->proc.kernels_recorded = recorded;
		c->lost += (long long)nl;
		c->proc.records_dropped = (long long)b->dropped + c->lost;
		c->proc.ranges -= (long long)nr;
		if (!c->warned)
			warning("profile: the records of process %lld since its last "
				"commit are lost", c->proc.pid);
		c->warned = 1;
	}
	/* No launch taken after the previous batch's can have run in a
	 * range that ended before it was taken. */
	ranges_prune(c->ranges, c->prev_taken);
	if (c->placed.n > PLACED_AGE_ABOVE && b->taken > PLACED_MAX_AGE_NS)
		placed_age(&c->placed, b->taken - PLACED_MAX_AGE_NS);
	c->prev_taken = b->taken;
	counted_age(c);
	free(l);
	free(r);
	return rc;
}

void collect_counts(const struct collector *c, struct collect_counts *out)
{
	out->seen = c->proc.kernels_seen;
	out->recorded = c->proc.kernels_recorded;
	out->filtered = c->proc.kernels_filtered;
	out->over_limit = c->proc.kernels_over_limit;
	out->dropped = c->proc.records_dropped;
	out->ranges = c->proc.ranges;
	out->counted = c->counted;
	out->unmatched_ends = c->unmatched;
}

int collect_close(struct collector *c, const char *status, const char *note)
{
	int rc;

	if (!c)
		return 0;
	rc = store_proc_finish(c->st, &c->proc, status, note);
	store_proc_release(&c->proc);
	store_close(c->st);
	ranges_free(c->ranges);
	free(c->placed.v);
	strmap_clear(&c->paths, NULL);
	strmap_clear(&c->filtered, NULL);
	strmap_clear(&c->included, NULL);
	if (c->has_filter)
		regfree(&c->filter);
	free(c->waiting);
	for (size_t i = 0; i < c->ncnt; i++)
		free(c->cnt[i].values);
	free(c->cnt);
	free(c->cnt_age);
	free(c->last);
	free(c);
	return rc;
}
