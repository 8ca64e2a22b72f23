/* activity.c - kernel durations from CUPTI Activity concurrent-kernel
 * records: buffers handed to CUPTI, records copied out on completion, every
 * dropped record counted. The run loop synchronizes, then collects; records
 * come back in launch order. */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "error.h"
#include "probes.h"
#include "util.h"

/* Big enough that one op's reps (a few thousand kernels at ~250 bytes a
 * record) fit in one buffer; CUPTI asks for more when it needs them.
 * Buffers come zeroed from calloc (fresh pages for a size this large), so
 * CUPTI need not clear them itself in the launching thread. */
#define BUFFER_BYTES (4u << 20)

/* libstdc++'s demangler (fuseprof links libstdc++ for CUDA already). */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len,
			    int *status);

static struct {
	pthread_mutex_t lock;
	int started;
	struct kernel_rec *recs;
	size_t n, alloc;
	unsigned long long dropped;
	int failed;   /* a CUPTI call inside a callback failed */
} st = { PTHREAD_MUTEX_INITIALIZER, 0, NULL, 0, 0, 0, 0 };

static const char *cupti_str(CUptiResult r)
{
	const char *s = NULL;

	cuptiGetResultString(r, &s);
	return s ? s : "unknown CUPTI error";
}

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size,
				      size_t *max_records)
{
	*buf = calloc(1, BUFFER_BYTES);
	*size = *buf ? BUFFER_BYTES : 0;
	*max_records = 0;  /* as many as fit */
}

/* Kernel names, interned: a run records the same few kernels thousands of
 * times, and demangling each record cost ~10 us of the timed loop's wall
 * time. Open addressing on the mangled name; entries live as long as the
 * process (records point into them). Called under st.lock. */
struct name_entry {
	char *mangled, *name;
	uint64_t hash;
};

static struct {
	struct name_entry *v;
	size_t n, cap;    /* cap a power of two */
} names;

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;  /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static char *demangle(const char *mangled)
{
	int status = -1;
	char *d = __cxa_demangle(mangled, NULL, NULL, &status);

	if (d && status == 0) {
		char *copy = xstrdup(d);

		free(d);
		return copy;
	}
	free(d);
	return xstrdup(mangled);
}

static const struct name_entry *intern(const char *mangled)
{
	uint64_t h;
	size_t i;

	if (!mangled)
		mangled = "?";
	h = hash_str(mangled);
	if (2 * (names.n + 1) > names.cap) {
		size_t cap = names.cap ? 2 * names.cap : 64;
		struct name_entry *v = xcalloc(cap, sizeof *v);

		for (size_t j = 0; j < names.cap; j++) {
			if (!names.v[j].mangled)
				continue;
			for (i = names.v[j].hash & (cap - 1); v[i].mangled; i = (i + 1) & (cap - 1))
				;
			v[i] = names.v[j];
		}
		free(names.v);
		names.v = v;
		names.cap = cap;
	}
	for (i = h & (names.cap - 1); names.v[i].mangled; i = (i + 1) & (names.cap - 1))
		if (names.v[i].hash == h && !strcmp(names.v[i].mangled, mangled))
			return &names.v[i];
	names.v[i].mangled = xstrdup(mangled);
	names.v[i].name = demangle(mangled);
	names.v[i].hash = h;
	names.n++;
	return &names.v[i];
}

static void keep(const CUpti_ActivityKernel10 *k)
{
	struct kernel_rec *r;

	if (st.n == st.alloc) {
		st.alloc = st.alloc ? 2 * st.alloc : 1024;
		st.recs = xrealloc(st.recs, st.alloc * sizeof *st.recs);
	}
	r = &st.recs[st.n++];
	memset(r, 0, sizeof *r);
	{
		const struct name_entry *e = intern(k->name);

		r->name = e->name;
		r->mangled = e->mangled;
	}
	r->grid[0] = (unsigned)k->gridX;
	r->grid[1] = (unsigned)k->gridY;
	r->grid[2] = (unsigned)k->gridZ;
	r->block[0] = (unsigned)k->blockX;
	r->block[1] = (unsigned)k->blockY;
	r->block[2] = (unsigned)k->blockZ;
	r->registers = k->registersPerThread;
	r->static_smem = k->staticSharedMemory;
	r->dynamic_smem = k->dynamicSharedMemory;
	r->stream = k->streamId;
	r->correlation = k->correlationId;
	r->start = k->start;
	r->end = k->end;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
				      uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;
	CUptiResult r;

	pthread_mutex_lock(&st.lock);
	while ((r = cuptiActivityGetNextRecord(buf, valid, &rec)) == CUPTI_SUCCESS) {
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		    rec->kind == CUPTI_ACTIVITY_KIND_KERNEL)
			keep((const CUpti_ActivityKernel10 *)rec);
	}
	if (r != CUPTI_ERROR_MAX_LIMIT_REACHED)
		st.failed = 1;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		st.dropped += dropped;
	pthread_mutex_unlock(&st.lock);
	free(buf);
}

int activity_start(void)
{
	CUptiResult r;

	if (st.started)
		return 0;
	r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r == CUPTI_SUCCESS) {
		uint8_t zeroed = 1;
		size_t size = sizeof zeroed;

		r = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
					      &size, &zeroed);
	}
	if (r == CUPTI_SUCCESS)
		r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return PROBE_BUSY;
	if (r != CUPTI_SUCCESS)
		return error("cannot trace kernels with CUPTI Activity: %s",
			     cupti_str(r));
	st.started = 1;
	return 0;
}

static int by_correlation(const void *a, const void *b)
{
	const struct kernel_rec *x = a, *y = b;

	if (x->correlation != y->correlation)
		return x->correlation < y->correlation ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

int activity_collect(struct kernel_rec **recs, size_t *n)
{
	CUptiResult r;

	*recs = NULL;
	*n = 0;
	if (!st.started)
		return error("cannot collect kernel records: tracing is not started");
	r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	if (r != CUPTI_SUCCESS)
		return error("cannot flush CUPTI Activity buffers: %s", cupti_str(r));
	pthread_mutex_lock(&st.lock);
	*recs = st.recs;
	*n = st.n;
	st.recs = NULL;
	st.n = st.alloc = 0;
	if (st.failed) {
		st.failed = 0;
		pthread_mutex_unlock(&st.lock);
		activity_free(*recs, *n);
		*recs = NULL;
		*n = 0;
		return error("cannot read CUPTI Activity records: a buffer was corrupt");
	}
	pthread_mutex_unlock(&st.lock);
	if (*n > 1)
		qsort(*recs, *n, sizeof **recs, by_correlation);
	return 0;
}

void activity_free(struct kernel_rec *recs, size_t n)
{
	(void)n;  /* the names are interned */
	free(recs);
}

unsigned long long activity_dropped(void)
{
	unsigned long long d;

	pthread_mutex_lock(&st.lock);
	d = st.dropped;
	pthread_mutex_unlock(&st.lock);
	return d;
}

void activity_stop(void)
{
	struct kernel_rec *recs;
	size_t n;

	if (!st.started)
		return;
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (activity_collect(&recs, &n) == 0)
		activity_free(recs, n);
	st.started = 0;
}
