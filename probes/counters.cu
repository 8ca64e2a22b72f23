/* counters.cu - hardware counters per kernel through the CUPTI Range
 * Profiler (CUDA 13: cupti_range_profiler.h for the target side,
 * cupti_profiler_host.h for configuration and evaluation), with auto ranges
 * (one range per kernel).
 *
 * Passes are replayed one of two ways. Op replay (CUPTI's user replay): the
 * caller's work runs once per pass, with L2 flushed before each by reading
 * a buffer four times its size, so every pass starts from the same clean
 * cache, as Nsight Compute's --cache-control all does. It needs work that
 * can be repeated (every workload's launch can: the timed repetitions rely
 * on it) and costs a pass what the op costs, a few milliseconds. Inside
 * the profiled region each pass opens with one more flush (what is dirty
 * before the op is written back in that range, which is dropped) and
 * closes with another: its range's DRAM writes are the lines the op left
 * dirty in L2, which no kernel range counts (counters_writeback). Kernel
 * replay: CUPTI saves the device memory before each kernel and restores it
 * before every further pass; any work qualifies, but the save and restore
 * take far longer than the kernels, and the restored lines it leaves dirty
 * in L2 are written back during the next pass and counted as the kernel's
 * writes.
 *
 * The sm__sass_* metrics are not hardware counters: CUPTI counts them by
 * patching the kernel's code, which it does under kernel replay only (under
 * user replay, CUDA 13.0, they read zero). So op replay refuses them, and a
 * caller that wants both keeps two collectors: the instruction counts under
 * kernel replay (caches do not change them), the rest under op replay. Only
 * one collector may be collecting at a time: the range profiler session is
 * opened at the first collection and held until counters_close, and
 * opening one costs a few hundred milliseconds (CUPTI prepares the loaded
 * code), so a caller should finish with one collector before the next. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_target.h>
#include <cupti_profiler_target.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

#include "error.h"
#include "probes.h"

struct counters {
	CUcontext ctx;
	CUpti_RangeProfiler_Object *rp;  /* NULL until the first collection */
	CUpti_Profiler_Host_Object *host;
	const char *const *names;        /* the caller's, n of them */
	int n, passes, max_ranges, running, sms, trace;
	enum counters_replay replay;
	uint8_t *image;                  /* configuration image */
	size_t image_size;
	uint8_t *data;                   /* counter data image */
	size_t data_size;
	void *flush;                     /* op replay: the buffer read to flush L2 */
	size_t flush_bytes;
	double trace_t;
	/* counters_flush_each_kernel: a launch callback flushes L2 before
	 * every kernel of a pass (in_pass), once per launch however many API
	 * layers report it (pending), ignoring its own flush (flushing). */
	CUpti_SubscriberHandle sub;
	int flush_each, in_pass, pending, flushing, nflush;
	int nafter;     /* counters_flush_after's flushes in this collection */
	/* Op replay: the write-backs of the last collection (counters_writeback),
	 * nwb of them, read from metric wb_metric (dram__bytes_write.sum; -1:
	 * not among the metrics, so none are measured). */
	double *wb;
	int nwb, wb_metric;
};

const char *counters_result_name(int r)
{
	const char *s = NULL;

	cuptiGetResultString((CUptiResult)r, &s);
	return s ? s : "unknown CUPTI error";
}

/* Map the results callers handle specially; report the rest. */
static int fail(CUptiResult r, const char *what)
{
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
	    r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
		return PROBE_DENIED;
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ||
	    r == CUPTI_ERROR_HARDWARE_BUSY)
		return PROBE_BUSY;
	return error("cannot collect counters: %s: %s", what, counters_result_name(r));
}

#define TRY(call, label) do { \
	CUptiResult r_ = (call); \
	if (r_ != CUPTI_SUCCESS) { \
		rc = fail(r_, #call); \
		goto label; \
	} \
} while (0)

/* The current context through the runtime: fuseprof does not link
 * libcuda, so a machine without a driver can still run its other commands. */
static int current_context(CUcontext *ctx)
{
	typedef CUresult (*get_fn)(CUcontext *);
	void *fn = NULL;
	cudaDriverEntryPointQueryResult q;
	cudaError_t e;

	e = cudaFree(NULL);
	if (e == cudaSuccess)
		e = cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000,
						     cudaEnableDefault, &q);
	if (e != cudaSuccess || !fn || q != cudaDriverEntryPointSuccess)
		return error("cannot find the CUDA context: %s",
			     e != cudaSuccess ? cudaGetErrorString(e)
					      : "cuCtxGetCurrent not found");
	if (((get_fn)fn)(ctx) != CUDA_SUCCESS || !*ctx)
		return error("cannot find the CUDA context: none is current");
	return 0;
}

static int initialized;

int counters_instrumented(const char *metric)
{
	return strstr(metric, "__sass_") != NULL;
}

/* FUSEPROF_TRACE_COUNTERS=1: the time of each step of a collection on
 * stderr, for whoever tunes the collector. */
static void trace(struct counters *c, const char *what)
{
	struct timespec ts;
	double t;

	if (!c->trace)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
	if (what)
		fprintf(stderr, "fuseprof: counters: %-22s %8.3f ms\n", what,
			1e3 * (t - c->trace_t));
	c->trace_t = t;
}

/* Build the configuration image for c's metrics. */
static int config_build(struct counters *c, const char *chip, uint8_t *avail)
{
	CUpti_Profiler_Host_Initialize_Params hi;
	CUpti_Profiler_Host_ConfigAddMetrics_Params am;
	CUpti_Profiler_Host_GetConfigImageSize_Params cs;
	CUpti_Profiler_Host_GetConfigImage_Params ci;
	CUpti_Profiler_Host_GetNumOfPasses_Params np;
	CUptiResult r;
	int rc = -1;

	memset(&hi, 0, sizeof hi);
	hi.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
	hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hi.pChipName = chip;
	hi.pCounterAvailabilityImage = avail;
	TRY(cuptiProfilerHostInitialize(&hi), out);
	c->host = hi.pHostObject;

	/* All metrics in one call: added one call at a time, CUPTI 13.0
	 * scheduled every sm__sass_thread_inst_executed_op_* metric with the
	 * first one's instruction filter (all read the same value). */
	memset(&am, 0, sizeof am);
	am.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
	am.pHostObject = c->host;
	am.ppMetricNames = (const char **)c->names;
	am.numMetrics = (size_t)c->n;
	r = cuptiProfilerHostConfigAddMetrics(&am);
	if (r != CUPTI_SUCCESS) {
		/* Name the culprit: the first metric CUPTI has no properties for. */
		const char *bad = NULL;

		for (int i = 0; i < c->n && !bad; i++) {
			CUpti_Profiler_Host_GetMetricProperties_Params mp;

			memset(&mp, 0, sizeof mp);
			mp.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
			mp.pHostObject = c->host;
			mp.pMetricName = c->names[i];
			if (cuptiProfilerHostGetMetricProperties(&mp) != CUPTI_SUCCESS)
				bad = c->names[i];
		}
		if (!bad)
			return fail(r, "cuptiProfilerHostConfigAddMetrics");
		error("unknown counter '%s' on chip %s (fix the counter group, "
		      "or list the chip's metrics with 'ncu --query-metrics')",
		      bad, chip);
		return PROBE_BAD_COUNTER;
	}
	memset(&cs, 0, sizeof cs);
	cs.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
	cs.pHostObject = c->host;
	TRY(cuptiProfilerHostGetConfigImageSize(&cs), out);
	c->image_size = cs.configImageSize;
	c->image = (uint8_t *)malloc(c->image_size);
	if (!c->image)
		return error("cannot collect counters: out of memory");
	memset(&ci, 0, sizeof ci);
	ci.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
	ci.pHostObject = c->host;
	ci.configImageSize = c->image_size;
	ci.pConfigImage = c->image;
	TRY(cuptiProfilerHostGetConfigImage(&ci), out);
	memset(&np, 0, sizeof np);
	np.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
	np.configImageSize = c->image_size;
	np.pConfigImage = c->image;
	TRY(cuptiProfilerHostGetNumOfPasses(&np), out);
	c->passes = (int)np.numOfPasses;
	rc = 0;
out:
	return rc;
}

/* Ranges a pass may record: the kernels, under op replay a flush before
 * each (counters_flush_each_kernel) and the closing write-back flush. */
static int ranges_cap(const struct counters *c)
{
	return c->replay == COUNTERS_REPLAY_OP ? 2 * c->max_ranges + 1 : c->max_ranges;
}

/* Open the range profiler session and size the counter data image for
 * max_ranges kernels (which also tells the profiler which metrics it holds):
 * done at the first collection, held until counters_close. */
static int session_open(struct counters *c)
{
	CUpti_RangeProfiler_Enable_Params en;
	CUpti_RangeProfiler_GetCounterDataSize_Params ds;
	int rc = -1;

	memset(&en, 0, sizeof en);
	en.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
	en.ctx = c->ctx;
	TRY(cuptiRangeProfilerEnable(&en), out);
	c->rp = en.pRangeProfilerObject;

	memset(&ds, 0, sizeof ds);
	ds.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
	ds.pRangeProfilerObject = c->rp;
	ds.pMetricNames = (const char **)c->names;
	ds.numMetrics = (size_t)c->n;
	ds.maxNumOfRanges = (size_t)ranges_cap(c);
	ds.maxNumRangeTreeNodes = (uint32_t)ranges_cap(c);
	TRY(cuptiRangeProfilerGetCounterDataSize(&ds), out);
	c->data_size = ds.counterDataSize;
	c->data = (uint8_t *)malloc(c->data_size);
	if (!c->data)
		return error("cannot collect counters: out of memory");
	rc = 0;
out:
	return rc;
}

static int flush_alloc(struct counters *c);

/* Where the write-backs are read from: dram__bytes_write.sum's place
 * among the metrics (a flush's range's DRAM writes), or -1. */
static int writeback_metric(const struct counters *c)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], "dram__bytes_write.sum"))
			return i;
	return -1;
}

int counters_open(struct counters **out, const char *const *metrics, int n,
		  int max_ranges, enum counters_replay replay)
{
	CUpti_Profiler_Initialize_Params ip;
	CUpti_Device_GetChipName_Params cn;
	CUpti_Profiler_GetCounterAvailability_Params ca;
	struct counters *c;
	uint8_t *avail = NULL;
	int dev, rc = -1;

	*out = NULL;
	if (n <= 0 || max_ranges <= 0)
		return error("cannot collect counters: nothing to collect");
	for (int i = 0; i < n && replay == COUNTERS_REPLAY_OP; i++)
		if (counters_instrumented(metrics[i]))
			return error("cannot collect '%s' under op replay: CUPTI "
				     "counts it by instrumenting the kernel, which "
				     "needs kernel replay", metrics[i]);
	c = (struct counters *)calloc(1, sizeof *c);
	if (!c)
		return error("cannot collect counters: out of memory");
	c->names = metrics;
	c->n = n;
	c->max_ranges = max_ranges;
	c->replay = replay;
	c->wb_metric = replay == COUNTERS_REPLAY_OP ? writeback_metric(c) : -1;
	c->trace = getenv("FUSEPROF_TRACE_COUNTERS") != NULL;
	if (current_context(&c->ctx) || cudaGetDevice(&dev) != cudaSuccess)
		goto out_free;
	if (replay == COUNTERS_REPLAY_OP && (rc = flush_alloc(c)) != 0)
		goto out_free;
	if (!initialized) {
		memset(&ip, 0, sizeof ip);
		ip.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
		TRY(cuptiProfilerInitialize(&ip), out_free);
		initialized = 1;
	}
	memset(&cn, 0, sizeof cn);
	cn.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
	cn.deviceIndex = (size_t)dev;
	TRY(cuptiDeviceGetChipName(&cn), out_free);

	memset(&ca, 0, sizeof ca);
	ca.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
	ca.ctx = c->ctx;
	TRY(cuptiProfilerGetCounterAvailability(&ca), out_free);
	avail = (uint8_t *)malloc(ca.counterAvailabilityImageSize);
	if (!avail) {
		rc = error("cannot collect counters: out of memory");
		goto out_free;
	}
	ca.pCounterAvailabilityImage = avail;
	TRY(cuptiProfilerGetCounterAvailability(&ca), out_free);
	rc = config_build(c, cn.pChipName, avail);
	if (rc)
		goto out_free;
	free(avail);
	*out = c;
	return 0;

out_free:
	free(avail);
	counters_close(c);
	return rc;
}

int counters_passes(const struct counters *c)
{
	return c->passes;
}

/* Read the flush buffer once: every line of L2 then holds clean lines of
 * it, and whatever the previous pass left dirty has been written back during
 * this kernel, not during the next pass's first kernel. */
__global__ void flush_l2_read(const float4 *__restrict__ p, size_t n, float *sink)
{
	float acc = 0.0f;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float4 v = __ldcg(p + i);

		acc += v.x + v.y + v.z + v.w;
	}
	if (acc == 1234.5f)  /* never true (the buffer is zero): keeps the loads */
		*sink = acc;
}

/* Enqueue one L2 flush on stream s. */
static void flush_launch(const struct counters *c, cudaStream_t s)
{
	flush_l2_read<<<4 * c->sms, 512, 0, s>>>((const float4 *)c->flush,
						 c->flush_bytes / sizeof(float4),
						 (float *)c->flush);
}

static int flush_l2(struct counters *c)
{
	cudaError_t e;

	flush_launch(c, 0);
	e = cudaGetLastError();
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	if (e != cudaSuccess)
		return error("cannot flush L2 before a counter pass: %s",
			     cudaGetErrorString(e));
	return 0;
}

/* Before each kernel launch of a pass, on its stream: the L2 flush. A
 * runtime launch reaches the driver's launch too; pending keeps that to
 * one flush. */
static void CUPTIAPI on_launch(void *ud, CUpti_CallbackDomain dom,
			       CUpti_CallbackId id, const void *data)
{
	const CUpti_CallbackData *cd = (const CUpti_CallbackData *)data;
	struct counters *c = (struct counters *)ud;
	cudaStream_t s = 0;

	if (!c->in_pass || c->flushing ||
	    !probe_launch_stream(dom, id, cd->functionParams, (void **)&s))
		return;
	if (cd->callbackSite == CUPTI_API_EXIT) {
		c->pending = 0;
		return;
	}
	if (c->pending)
		return;
	c->pending = 1;
	c->flushing = 1;
	c->nflush++;
	flush_launch(c, s);
	c->flushing = 0;
}

int counters_flush_each_kernel(struct counters *c)
{
	static const CUpti_CallbackId rt[] = {
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
		CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
	};
	static const CUpti_CallbackId drv[] = {
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	};
	int rc = -1;

	if (c->replay != COUNTERS_REPLAY_OP)
		return error("cannot flush L2 before each kernel: that is op "
			     "replay's (kernel replay restores memory instead)");
	TRY(cuptiSubscribe(&c->sub, (CUpti_CallbackFunc)on_launch, c), out);
	for (size_t i = 0; i < sizeof rt / sizeof *rt; i++)
		TRY(cuptiEnableCallback(1, c->sub, CUPTI_CB_DOMAIN_RUNTIME_API, rt[i]), out);
	for (size_t i = 0; i < sizeof drv / sizeof *drv; i++)
		TRY(cuptiEnableCallback(1, c->sub, CUPTI_CB_DOMAIN_DRIVER_API, drv[i]), out);
	c->flush_each = 1;
	rc = 0;
out:
	return rc;
}

static int stop(struct counters *c, CUpti_RangeProfiler_Stop_Params *sp)
{
	int rc = -1;

	c->running = 0;
	memset(sp, 0, sizeof *sp);
	sp->structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
	sp->pRangeProfilerObject = c->rp;
	TRY(cuptiRangeProfilerStop(sp), out);
	rc = 0;
out:
	return rc;
}

/* Evaluate range i's metrics into v[c->n]. */
static int eval_range(struct counters *c, size_t i, double *v)
{
	CUpti_Profiler_Host_EvaluateToGpuValues_Params ev;
	int rc = -1;

	memset(&ev, 0, sizeof ev);
	ev.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
	ev.pHostObject = c->host;
	ev.pCounterDataImage = c->data;
	ev.counterDataImageSize = c->data_size;
	ev.rangeIndex = i;
	ev.ppMetricNames = (const char **)c->names;
	ev.numMetrics = (size_t)c->n;
	ev.pMetricValues = v;
	TRY(cuptiProfilerHostEvaluateToGpuValues(&ev), out);
	rc = 0;
out:
	return rc;
}

/* FUSEPROF_TRACE_COUNTERS: every range's values, flushes included. */
static void trace_ranges(struct counters *c, size_t total)
{
	double *v = (double *)calloc((size_t)c->n, sizeof *v);

	for (size_t i = 0; v && i < total; i++) {
		int flush = (c->replay == COUNTERS_REPLAY_OP || c->flush_each) &&
			    (i == 0 || i + 1 == total || (c->flush_each && i % 2 == 0));

		if (eval_range(c, i, v))
			break;
		fprintf(stderr, "fuseprof: counters: range %zu (%s):", i,
			flush ? "flush" : "kernel");
		for (int m = 0; m < c->n; m++)
			fprintf(stderr, " %s %.6g", c->names[m], v[m]);
		fputc('\n', stderr);
	}
	free(v);
}

/* Decode the counter data and evaluate every kernel's range into *out
 * (nranges x n, malloc'd), and the write-back flushes into c->wb.
 *
 * The ranges of one pass, k kernels: op replay, flushed per op,
 *   F K0 K1 ... K(k-1) W
 * and flushed before each kernel,
 *   F K0 F K1 ... F K(k-1) W
 * where F is a flush and W the closing one. A flush's DRAM writes are the
 * dirty lines that were in L2 when it started: under per-kernel flushes,
 * the F after kernel j (or W) holds kernel j's write-back; under per-op
 * flushes W holds the op's, charged to its last kernel (the others get
 * NaN: not measured apart); the first F's are what was dirty before the
 * op, dropped. Kernel replay has K ranges alone, or, with a flush around
 * each kernel (counters_kernel_flushes), F K0 F K1 ... F K(k-1) W as op
 * replay's per-kernel flushes, and with counters_flush_after too
 * F K0 A0 F K1 A1 ... W, where Aj, right after kernel j, holds its
 * write-back (and F what the program wrote between two kernels, dropped).
 * counters_layout (counters-layout.c) does the arithmetic. */
static int evaluate(struct counters *c, double **out, int *nranges, int *dropped)
{
	CUpti_RangeProfiler_DecodeData_Params dd;
	CUpti_RangeProfiler_GetCounterDataInfo_Params inf;
	struct counters_layout l;
	char why[256];
	size_t total, k;
	double *v = NULL;
	int rc = -1;

	memset(&dd, 0, sizeof dd);
	dd.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
	dd.pRangeProfilerObject = c->rp;
	TRY(cuptiRangeProfilerDecodeData(&dd), out);
	*dropped = (int)dd.numOfRangeDropped;

	memset(&inf, 0, sizeof inf);
	inf.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
	inf.pCounterDataImage = c->data;
	inf.counterDataImageSize = c->data_size;
	TRY(cuptiRangeProfilerGetCounterDataInfo(&inf), out);
	total = inf.numTotalRanges;
	if (counters_layout(c->replay == COUNTERS_REPLAY_OP, c->flush_each, c->nflush,
			    c->nafter, total, &l, why, sizeof why)) {
		rc = error("cannot collect counters: %s", why);
		goto out;
	}
	k = l.k;
	*out = (double *)calloc(k ? k * (size_t)c->n : 1, sizeof **out);
	v = (double *)calloc((size_t)c->n, sizeof *v);
	free(c->wb);
	c->wb = (double *)calloc(k ? k : 1, sizeof *c->wb);
	c->nwb = 0;
	if (!*out || !v || !c->wb) {
		rc = error("cannot collect counters: out of memory");
		goto out;
	}
	for (size_t j = 0; j < k; j++) {
		long after;

		rc = eval_range(c, l.lead + j * l.step, *out + j * (size_t)c->n);
		if (rc)
			goto out;
		c->wb[j] = NAN;
		after = counters_layout_writeback(&l, j, total);
		if (c->wb_metric < 0 || after < 0)
			continue;
		rc = eval_range(c, (size_t)after, v);
		if (rc)
			goto out;
		c->wb[j] = v[c->wb_metric];
	}
	if (c->trace)
		trace_ranges(c, total);
	c->nwb = (int)k;
	*nranges = (int)k;
	rc = 0;
out:
	free(v);
	return rc;
}

/* Ready the counter data image and the session's configuration for one
 * collection (the session opened at the first). */
static int prepare(struct counters *c)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params di;
	CUpti_RangeProfiler_SetConfig_Params sc;
	int rc = -1;

	if (!c->rp) {
		if (session_open(c))
			goto out;
		trace(c, "open the session");
	}
	memset(c->data, 0, c->data_size);
	memset(&di, 0, sizeof di);
	di.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
	di.pRangeProfilerObject = c->rp;
	di.counterDataSize = c->data_size;
	di.pCounterData = c->data;
	TRY(cuptiRangeProfilerCounterDataImageInitialize(&di), out);

	memset(&sc, 0, sizeof sc);
	sc.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
	sc.pRangeProfilerObject = c->rp;
	sc.configSize = c->image_size;
	sc.pConfig = c->image;
	sc.counterDataImageSize = c->data_size;
	sc.pCounterDataImage = c->data;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = c->replay == COUNTERS_REPLAY_KERNEL ? CUPTI_KernelReplay
							   : CUPTI_UserReplay;
	sc.maxRangesPerPass = (size_t)ranges_cap(c);
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	sc.passIndex = 0;
	sc.targetNestingLevel = 1;
	TRY(cuptiRangeProfilerSetConfig(&sc), out);
	trace(c, "set up the data");
	rc = 0;
out:
	return rc;
}

static int start(struct counters *c)
{
	CUpti_RangeProfiler_Start_Params st;
	int rc = -1;

	memset(&st, 0, sizeof st);
	st.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
	st.pRangeProfilerObject = c->rp;
	TRY(cuptiRangeProfilerStart(&st), out);
	c->running = 1;
	c->nflush = 0;
	c->nafter = 0;
	rc = 0;
out:
	return rc;
}

int counters_collect(struct counters *c, int (*work)(void *), void *arg,
		     double **values, int *nranges, int *dropped)
{
	CUpti_RangeProfiler_Stop_Params sp;
	int rc = -1, pass;

	*values = NULL;
	*nranges = 0;
	*dropped = 0;
	trace(c, NULL);
	if (prepare(c))
		goto out;

	/* Kernel replay submits every pass in one go; op replay needs one
	 * run of the work per pass, and CUPTI says when it has them all. */
	for (pass = 0;; pass++) {
		cudaError_t e;
		int wrc;

		if (c->replay == COUNTERS_REPLAY_OP && flush_l2(c))
			goto out;
		if (start(c))
			goto out;
		c->in_pass = c->flush_each;
		/* The opening flush, in the profiled region (under per-kernel
		 * flushes, the one before the first kernel): what is dirty in
		 * L2 when the pass starts is written back during its range,
		 * which is dropped. Starting a range profiler session leaves
		 * some 20 MB dirty after the flush before the pass. */
		if (c->replay == COUNTERS_REPLAY_OP && !c->flush_each)
			flush_launch(c, 0);
		wrc = work(arg);
		c->in_pass = c->pending = 0;
		/* The closing flush, in the profiled region: what the op left
		 * dirty in L2 is written back during its range (evaluate). */
		if (c->replay == COUNTERS_REPLAY_OP)
			flush_launch(c, 0);
		e = cudaGetLastError();
		if (e == cudaSuccess)
			e = cudaDeviceSynchronize();
		if (stop(c, &sp) || wrc)
			goto out;
		if (e != cudaSuccess) {
			rc = error("cannot collect counters: the GPU reported an error: %s",
				   cudaGetErrorString(e));
			goto out;
		}
		trace(c, c->replay == COUNTERS_REPLAY_OP ? "one pass (op)"
							 : "all passes (kernel)");
		if (sp.isAllPassSubmitted)
			break;
		if (c->replay == COUNTERS_REPLAY_KERNEL || pass + 1 >= c->passes) {
			rc = error("cannot collect counters: %d replay passes left "
				   "passes unsubmitted (CUPTI is at pass %zu of %d)",
				   pass + 1, sp.passIndex, c->passes);
			goto out;
		}
	}
	rc = evaluate(c, values, nranges, dropped);
	trace(c, "decode and evaluate");
out:
	if (rc) {
		free(*values);
		*values = NULL;
		*nranges = 0;
	}
	return rc;
}

/* ---- collections around someone else's kernels (the profiler) ---------- */

/* The L2 flush buffer: 4 x L2, zeroed. */
static int flush_alloc(struct counters *c)
{
	int dev, l2 = 0;
	cudaError_t e;

	e = cudaGetDevice(&dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, dev);
	c->flush_bytes = 4 * (size_t)(l2 > (1 << 20) ? l2 : 1 << 20);
	if (e == cudaSuccess)
		e = cudaMalloc(&c->flush, c->flush_bytes);
	if (e == cudaSuccess)
		e = cudaMemset(c->flush, 0, c->flush_bytes);
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	if (e != cudaSuccess)
		return error("cannot collect counters: the L2 flush buffer "
			     "(%zu MB): %s", c->flush_bytes >> 20, cudaGetErrorString(e));
	return 0;
}

int counters_kernel_flushes(struct counters *c)
{
	if (!c->flush && flush_alloc(c))
		return -1;
	c->flush_each = 1;
	c->wb_metric = writeback_metric(c);
	return 0;
}

int counters_begin(struct counters *c)
{
	if (c->replay != COUNTERS_REPLAY_KERNEL && c->passes > 1)
		return error("cannot collect around someone else's kernels under "
			     "op replay in %d passes: it needs work it can repeat",
			     c->passes);
	if (c->running)
		return 0;
	trace(c, NULL);
	if (prepare(c) || start(c))
		return -1;
	return 0;
}

int counters_running(const struct counters *c)
{
	return c->running;
}

void counters_flush_before(struct counters *c, void *stream)
{
	if (!c->flush_each || !c->running)
		return;
	c->nflush++;
	flush_launch(c, (cudaStream_t)stream);
}

void counters_flush_after(struct counters *c, void *stream)
{
	if (!c->flush_each || !c->running)
		return;
	c->nafter++;
	flush_launch(c, (cudaStream_t)stream);
}

int counters_end(struct counters *c, void *stream, double **values, int *nranges,
		 int *dropped)
{
	CUpti_RangeProfiler_Stop_Params sp;
	cudaError_t e;
	int rc = -1;

	*values = NULL;
	*nranges = 0;
	*dropped = 0;
	if (!c->running)
		return 0;
	/* The closing flush: the last kernel's write-back (evaluate). */
	if (c->flush_each)
		flush_launch(c, (cudaStream_t)stream);
	e = cudaGetLastError();
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	if (stop(c, &sp))
		goto out;
	if (e != cudaSuccess) {
		rc = error("cannot collect counters: the GPU reported an error: %s",
			   cudaGetErrorString(e));
		goto out;
	}
	if (!sp.isAllPassSubmitted) {
		rc = error("cannot collect counters: CUPTI wants more passes than one");
		goto out;
	}
	trace(c, c->replay == COUNTERS_REPLAY_OP ? "the one pass (op)" : "all passes (kernel)");
	rc = evaluate(c, values, nranges, dropped);
	trace(c, "decode and evaluate");
out:
	if (rc) {
		free(*values);
		*values = NULL;
		*nranges = 0;
	}
	return rc;
}

void counters_suspend(struct counters *c)
{
	CUpti_RangeProfiler_Disable_Params dp;

	if (!c || !c->rp)
		return;
	if (c->running) {
		CUpti_RangeProfiler_Stop_Params sp;

		stop(c, &sp);
	}
	memset(&dp, 0, sizeof dp);
	dp.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
	dp.pRangeProfilerObject = c->rp;
	cuptiRangeProfilerDisable(&dp);
	c->rp = NULL;
	free(c->data);
	c->data = NULL;
	c->data_size = 0;
}

double counters_writeback(const struct counters *c, int kernel)
{
	return kernel >= 0 && kernel < c->nwb ? c->wb[kernel] : NAN;
}

void counters_close(struct counters *c)
{
	if (!c)
		return;
	if (c->running) {
		CUpti_RangeProfiler_Stop_Params sp;

		memset(&sp, 0, sizeof sp);
		sp.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
		sp.pRangeProfilerObject = c->rp;
		cuptiRangeProfilerStop(&sp);
	}
	if (c->rp) {
		CUpti_RangeProfiler_Disable_Params dp;

		memset(&dp, 0, sizeof dp);
		dp.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
		dp.pRangeProfilerObject = c->rp;
		cuptiRangeProfilerDisable(&dp);
	}
	if (c->sub)
		cuptiUnsubscribe(c->sub);
	if (c->host) {
		CUpti_Profiler_Host_Deinitialize_Params hd;

		memset(&hd, 0, sizeof hd);
		hd.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
		hd.pHostObject = c->host;
		cuptiProfilerHostDeinitialize(&hd);
	}
	free(c->image);
	free(c->data);
	free(c->wb);
	if (c->flush)
		cudaFree(c->flush);
	free(c);
}

int counters_sample(const char *const *metrics, int n, int (*fn)(void *),
		    void *arg, double *out)
{
	struct counters *c = NULL;
	double *v = NULL;
	int rc, nr = 0, dropped = 0;

	rc = counters_open(&c, metrics, n, 4, COUNTERS_REPLAY_KERNEL);
	if (rc)
		return rc;
	rc = counters_collect(c, fn, arg, &v, &nr, &dropped);
	if (rc == 0 && nr < 1)
		rc = error("cannot sample counters: no kernel ran");
	if (rc == 0)
		memcpy(out, v, (size_t)n * sizeof *out);
	free(v);
	counters_close(c);
	return rc;
}
