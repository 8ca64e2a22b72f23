/* activity.c - CUPTI Activity: kernel records (and, for the profiler, NVTX
 * markers) from buffers handed to CUPTI, every dropped record counted;
 * and the launch callbacks that tell which thread launched a kernel when.
 * `run` keeps the kernel records for activity_collect (the run loop
 * synchronizes, then collects; records come back in launch order); the
 * profiler (inject/) takes every record through a sink as it comes. */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cupti.h>

#include "error.h"
#include "probes.h"
#include "strmap.h"
#include "util.h"

/* Big enough that one op's reps (a few thousand kernels at ~250 bytes a
 * record) fit in one buffer; CUPTI asks for more when it needs them.
 * Buffers come zeroed from calloc (fresh pages for a size this large), so
 * CUPTI need not clear them itself in the launching thread. */
#define BUFFER_BYTES (4u << 20)

/* libstdc++'s demangler (fuseprof links libstdc++ for CUDA already). */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len,
			    int *status);

static void keep(const struct kernel_rec *k, void *arg);
static const struct activity_sink keep_sink = { keep, NULL, NULL };

static struct {
	pthread_mutex_t lock;
	int started;
	const struct activity_sink *sink;
	struct kernel_rec *recs;  /* keep_sink's, for activity_collect */
	size_t n, alloc;
	unsigned long long dropped;
	int failed;   /* a CUPTI call inside a callback failed */
} st = { PTHREAD_MUTEX_INITIALIZER, 0, NULL, NULL, 0, 0, 0, 0 };

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

/* Names, interned: a run records the same few kernels thousands of times,
 * and demangling each record cost ~10 us of the timed loop's wall time.
 * Kernel names map mangled -> demangled; other strings (NVTX names and
 * domains) map to themselves. Entries live as long as the process
 * (records point into them). */
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct strmap kernel_names = STRMAP_INIT, strings = STRMAP_INIT;

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

/* The interned mangled name in *mangled, its demangled form returned. */
static const char *intern_kernel(const char *name, const char **mangled)
{
	struct strmap_entry *e;
	int added;

	pthread_mutex_lock(&names_lock);
	e = strmap_put(&kernel_names, name ? name : "?", &added);
	if (added)
		e->v.p = demangle(e->key);
	*mangled = e->key;
	name = e->v.p;
	pthread_mutex_unlock(&names_lock);
	return name;
}

const char *activity_intern(const char *s)
{
	const char *r;

	if (!s)
		return NULL;
	pthread_mutex_lock(&names_lock);
	r = strmap_put(&strings, s, NULL)->key;
	pthread_mutex_unlock(&names_lock);
	return r;
}

static void kernel_rec_of(const CUpti_ActivityKernel10 *k, struct kernel_rec *r)
{
	memset(r, 0, sizeof *r);
	r->name = intern_kernel(k->name, &r->mangled);
	r->grid[0] = (unsigned)k->gridX;
	r->grid[1] = (unsigned)k->gridY;
	r->grid[2] = (unsigned)k->gridZ;
	r->block[0] = (unsigned)k->blockX;
	r->block[1] = (unsigned)k->blockY;
	r->block[2] = (unsigned)k->blockZ;
	r->registers = k->registersPerThread;
	r->static_smem = k->staticSharedMemory;
	r->dynamic_smem = k->dynamicSharedMemory;
	r->device = k->deviceId;
	r->context = k->contextId;
	r->stream = k->streamId;
	r->correlation = k->correlationId;
	r->start = k->start;
	r->end = k->end;
}

static void marker_rec_of(const CUpti_ActivityMarker2 *m, struct marker_rec *r)
{
	memset(r, 0, sizeof *r);
	r->kind = m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START ? MARKER_START
		: m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END ? MARKER_END
		: MARKER_INSTANT;
	r->id = m->id;
	/* A process-scoped marker (a start/end range, which may end on
	 * another thread) keeps tid 0: it holds for every thread's launches
	 * (ranges_at), as a PyTorch backward's kernels, launched from
	 * autograd's own thread, need. */
	if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
		r->tid = m->objectId.pt.threadId;
	r->ts = m->timestamp;
	r->name = activity_intern(m->name);
	r->domain = activity_intern(m->domain);
}

/* `run`'s sink: the kernel records, for activity_collect. Under st.lock. */
static void keep(const struct kernel_rec *k, void *arg)
{
	(void)arg;
	if (st.n == st.alloc) {
		st.alloc = st.alloc ? 2 * st.alloc : 1024;
		st.recs = xrealloc(st.recs, st.alloc * sizeof *st.recs);
	}
	st.recs[st.n++] = *k;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
				      uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;
	CUptiResult r;

	pthread_mutex_lock(&st.lock);
	while ((r = cuptiActivityGetNextRecord(buf, valid, &rec)) == CUPTI_SUCCESS) {
		if ((rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		     rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) && st.sink->kernel) {
			struct kernel_rec k;

			kernel_rec_of((const CUpti_ActivityKernel10 *)rec, &k);
			st.sink->kernel(&k, st.sink->arg);
		} else if (rec->kind == CUPTI_ACTIVITY_KIND_MARKER && st.sink->marker) {
			struct marker_rec m;

			marker_rec_of((const CUpti_ActivityMarker2 *)rec, &m);
			st.sink->marker(&m, st.sink->arg);
		}
	}
	if (r != CUPTI_ERROR_MAX_LIMIT_REACHED)
		st.failed = 1;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		st.dropped += dropped;
	pthread_mutex_unlock(&st.lock);
	free(buf);
}

int activity_start_sink(const struct activity_sink *sink)
{
	CUptiResult r;

	if (st.started)
		return 0;
	st.sink = sink;
	/* The system's thread ids, as the launch callbacks take them. */
	r = sink->marker ? cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
			 : CUPTI_SUCCESS;
	if (r == CUPTI_SUCCESS)
		r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r == CUPTI_SUCCESS) {
		uint8_t zeroed = 1;
		size_t size = sizeof zeroed;

		r = cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
					      &size, &zeroed);
	}
	if (r == CUPTI_SUCCESS)
		r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (r == CUPTI_SUCCESS && sink->marker)
		r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return PROBE_BUSY;
	if (r != CUPTI_SUCCESS)
		return error("cannot trace kernels with CUPTI Activity: %s",
			     cupti_str(r));
	st.started = 1;
	return 0;
}

int activity_start(void)
{
	return activity_start_sink(&keep_sink);
}

int activity_flush(int forced)
{
	CUptiResult r = cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);

	if (r != CUPTI_SUCCESS)
		return error("cannot flush CUPTI Activity buffers: %s", cupti_str(r));
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
	*recs = NULL;
	*n = 0;
	if (!st.started || st.sink != &keep_sink)
		return error("cannot collect kernel records: tracing is not started");
	if (activity_flush(1))
		return -1;
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
	if (!st.started)
		return;
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	if (st.sink->marker)
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MARKER);
	activity_flush(1);
	pthread_mutex_lock(&st.lock);
	free(st.recs);
	st.recs = NULL;
	st.n = st.alloc = 0;
	pthread_mutex_unlock(&st.lock);
	st.started = 0;
}

uint64_t activity_now(void)
{
	uint64_t t = 0;

	cuptiGetTimestamp(&t);
	return t;
}

/* ---- launch callbacks --------------------------------------------------- */

static void (*launch_fn)(const struct launch_rec *, void *);
static void *launch_arg;
static void (*edge_fn)(const struct launch_edge *, void *);
static void *edge_arg;
/* Set while a launch hook's own launches (an L2 flush) are under way in
 * this thread: they are not the program's, and nobody hears of them. */
static __thread int own_launch;

/* The calls that launch kernels (graph launches last in each list): the
 * runtime's (its kernels carry the runtime call's correlation id) and the
 * driver's (Triton, cuBLAS and others launch through it directly). */
static const CUpti_CallbackId runtime_launches[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
};
static const CUpti_CallbackId driver_launches[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

static int is_graph_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	return domain == CUPTI_CB_DOMAIN_RUNTIME_API
		? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
		  cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000
		: cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
		  cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

/* Runtime launch calls under way in this thread: a runtime launch makes
 * driver calls of its own, with correlation ids no kernel carries (its
 * kernels carry the runtime call's), so those are left out. */
static __thread int in_runtime_launch;
/* This thread's id, asked of the kernel once rather than a system call a
 * launch; a forked child's one thread (a copy of the forking one, storage
 * included) asks again (forget_tid, at fork). */
static __thread uint32_t my_tid;

static void forget_tid(void)
{
	my_tid = 0;
}

/* The pointers of the launch under way in this thread (read at the
 * driver call's entry, taken by the record at the outer call's exit). */
static int (*read_ptrs)(unsigned, const void *, uint64_t *, uint64_t *, int);
static __thread int pending_n = -1, pending_cut;
static __thread uint64_t pending[PROBE_LAUNCH_PTRS], pending_bytes[PROBE_LAUNCH_PTRS];

void activity_launch_pointers(int (*read)(unsigned cbid, const void *params,
					  uint64_t *out, uint64_t *bytes, int max))
{
	read_ptrs = read;
}

int probe_launch_stream(int domain, unsigned cbid, const void *params,
			void **s)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		switch (cbid) {
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
			*s = (void *)((const cudaLaunchKernel_v7000_params *)params)->stream;
			return 1;
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
			*s = (void *)((const cudaLaunchKernel_ptsz_v7000_params *)params)->stream;
			return 1;
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
			*s = (void *)((const cudaLaunchKernelExC_v11060_params *)params)->config->stream;
			return 1;
		case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
			*s = (void *)((const cudaLaunchKernelExC_ptsz_v11060_params *)params)->config->stream;
			return 1;
		}
		return 0;
	}
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
		*s = (void *)((const cuLaunchKernel_params *)params)->hStream;
		return 1;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
		*s = (void *)((const cuLaunchKernel_ptsz_params *)params)->hStream;
		return 1;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
		*s = (void *)((const cuLaunchKernelEx_params *)params)->config->hStream;
		return 1;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
		*s = (void *)((const cuLaunchKernelEx_ptsz_params *)params)->config->hStream;
		return 1;
	}
	return 0;
}

/* The launch's edges for the hook (activity_trace_launch_edges). */
static void edge(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		 const CUpti_CallbackData *cb)
{
	struct launch_edge e = { 0 };

	e.enter = cb->callbackSite == CUPTI_API_ENTER;
	e.correlation = cb->correlationId;
	e.graph = is_graph_launch(domain, cbid);
	e.known = probe_launch_stream(domain, cbid, cb->functionParams, &e.stream);
	e.single = !e.graph && !(domain == CUPTI_CB_DOMAIN_RUNTIME_API
		? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000
		: cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice);
	/* cudaError_t and CUresult alike: 0 is success. */
	e.ok = !e.enter && cb->functionReturnValue &&
	       *(const int *)cb->functionReturnValue == 0;
	own_launch = 1;
	edge_fn(&e, edge_arg);
	own_launch = 0;
}

static void CUPTIAPI on_launch(void *arg, CUpti_CallbackDomain domain,
			       CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	struct launch_rec l;

	(void)arg;
	if (own_launch)
		return;
	if (read_ptrs && cb->callbackSite == CUPTI_API_ENTER) {
		/* a runtime launch's pointers are its driver call's */
		if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
			int n = read_ptrs(cbid, cb->functionParams, pending,
					  pending_bytes, PROBE_LAUNCH_PTRS);

			pending_cut = n < 0;
			pending_n = n < 0 ? -1 - n : n;
		} else if (in_runtime_launch == 0)
			pending_n = -1;
	}
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		in_runtime_launch += cb->callbackSite == CUPTI_API_ENTER ? 1 : -1;
	else if (in_runtime_launch > 0)
		return;
	if (edge_fn)
		edge(domain, cbid, cb);
	if (cb->callbackSite != CUPTI_API_EXIT || !cb->functionReturnValue)
		return;
	/* cudaError_t and CUresult alike: 0 is success. */
	if (*(const int *)cb->functionReturnValue != 0)
		return;
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	l.correlation = cb->correlationId;
	l.tid = my_tid;
	l.ts = activity_now();
	l.graph = is_graph_launch(domain, cbid);
	l.nptrs = read_ptrs && !l.graph ? pending_n : -1;
	l.ptrs_cut = l.nptrs >= 0 && pending_cut;
	if (l.nptrs > 0) {
		memcpy(l.ptrs, pending, sizeof(uint64_t) * (size_t)l.nptrs);
		memcpy(l.ptr_bytes, pending_bytes, sizeof(uint64_t) * (size_t)l.nptrs);
	}
	pending_n = -1;
	launch_fn(&l, launch_arg);
}

void activity_hide_launches(int hide)
{
	own_launch = hide;
}

void activity_trace_launch_edges(void (*fn)(const struct launch_edge *e, void *arg),
				 void *arg)
{
	edge_arg = arg;
	edge_fn = fn;
}

int activity_trace_launches(void (*fn)(const struct launch_rec *l, void *arg),
			    void *arg)
{
	CUpti_SubscriberHandle sub;
	CUptiResult r;

	launch_fn = fn;
	launch_arg = arg;
	pthread_atfork(NULL, NULL, forget_tid);
	r = cuptiSubscribe(&sub, on_launch, NULL);
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
		return PROBE_BUSY;
	if (r != CUPTI_SUCCESS)
		return error("cannot trace kernel launches with CUPTI: %s", cupti_str(r));
	/* A call this CUPTI does not know is left out, not an error: its
	 * kernels count as launched outside any range. */
	for (size_t i = 0; i < ARRAY_SIZE(runtime_launches); i++)
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_launches[i]);
	for (size_t i = 0; i < ARRAY_SIZE(driver_launches); i++)
		cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, driver_launches[i]);
	return 0;
}
