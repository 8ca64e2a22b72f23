/* counters.cu - hardware counters per kernel through the CUPTI Range
 * Profiler (CUDA 13: cupti_range_profiler.h for the target side,
 * cupti_profiler_host.h for configuration and evaluation), with auto ranges
 * (one range per kernel).
 *
 * Passes are replayed one of two ways. Op replay (the default; CUPTI's user
 * replay): the caller's work runs once per pass, with L2 flushed before
 * each by reading a buffer four times its size, so every pass starts from
 * the same clean cache, as Nsight Compute's --cache-control all does. It
 * needs work that can be repeated (every workload's launch can: the timed
 * repetitions rely on it) and costs a pass what the op costs. Kernel replay:
 * CUPTI saves the device memory before each kernel and restores it before
 * every further pass; any work qualifies, but the save and restore take far
 * longer than the kernels, and the restored lines it leaves dirty in L2 are
 * written back during the next pass and counted as the kernel's writes.
 *
 * The sm__sass_* metrics are not hardware counters: CUPTI counts them by
 * patching the kernel's code, and under user replay (CUDA 13.0) they read
 * zero. So op replay splits a request in two configurations: the hardware
 * metrics, replayed per op, and the SASS metrics (instruction counts, which
 * caches do not change), under kernel replay. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_target.h>
#include <cupti_profiler_target.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

#include "error.h"
#include "probes.h"

/* One counter configuration: the metrics CUPTI schedules together, and
 * how their passes are replayed. */
struct config {
	CUpti_Profiler_Host_Object *host;
	const char **names;     /* this configuration's metrics */
	int *index;             /* names[i] is the caller's metric index[i] */
	int n, passes;
	enum counters_replay replay;
	uint8_t *image;
	size_t image_size;
	uint8_t *data;
	size_t data_size;
};

struct counters {
	CUcontext ctx;
	CUpti_RangeProfiler_Object *rp;
	int n, max_ranges, running, sms;
	struct config cfg[2];
	int ncfg;
	void *flush;           /* op replay: the buffer read to flush L2 */
	size_t flush_bytes;
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

/* Build cfg's configuration image for its metrics. */
static int config_build(struct config *cfg, const char *chip, uint8_t *avail)
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
	cfg->host = hi.pHostObject;

	/* All metrics in one call: added one call at a time, CUPTI 13.0
	 * scheduled every sm__sass_thread_inst_executed_op_* metric with the
	 * first one's instruction filter (all read the same value). */
	memset(&am, 0, sizeof am);
	am.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
	am.pHostObject = cfg->host;
	am.ppMetricNames = cfg->names;
	am.numMetrics = (size_t)cfg->n;
	r = cuptiProfilerHostConfigAddMetrics(&am);
	if (r != CUPTI_SUCCESS) {
		/* Name the culprit: the first metric CUPTI has no properties for. */
		const char *bad = NULL;

		for (int i = 0; i < cfg->n && !bad; i++) {
			CUpti_Profiler_Host_GetMetricProperties_Params mp;

			memset(&mp, 0, sizeof mp);
			mp.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
			mp.pHostObject = cfg->host;
			mp.pMetricName = cfg->names[i];
			if (cuptiProfilerHostGetMetricProperties(&mp) != CUPTI_SUCCESS)
				bad = cfg->names[i];
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
	cs.pHostObject = cfg->host;
	TRY(cuptiProfilerHostGetConfigImageSize(&cs), out);
	cfg->image_size = cs.configImageSize;
	cfg->image = (uint8_t *)malloc(cfg->image_size);
	if (!cfg->image)
		return error("cannot collect counters: out of memory");
	memset(&ci, 0, sizeof ci);
	ci.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
	ci.pHostObject = cfg->host;
	ci.configImageSize = cfg->image_size;
	ci.pConfigImage = cfg->image;
	TRY(cuptiProfilerHostGetConfigImage(&ci), out);
	memset(&np, 0, sizeof np);
	np.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
	np.configImageSize = cfg->image_size;
	np.pConfigImage = cfg->image;
	TRY(cuptiProfilerHostGetNumOfPasses(&np), out);
	cfg->passes = (int)np.numOfPasses;
	rc = 0;
out:
	return rc;
}

static int rp_enable(struct counters *c)
{
	CUpti_RangeProfiler_Enable_Params en;
	int rc = -1;

	memset(&en, 0, sizeof en);
	en.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
	en.ctx = c->ctx;
	TRY(cuptiRangeProfilerEnable(&en), out);
	c->rp = en.pRangeProfilerObject;
	rc = 0;
out:
	return rc;
}

static void rp_disable(struct counters *c)
{
	CUpti_RangeProfiler_Disable_Params dp;

	if (!c->rp)
		return;
	memset(&dp, 0, sizeof dp);
	dp.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
	dp.pRangeProfilerObject = c->rp;
	cuptiRangeProfilerDisable(&dp);
	c->rp = NULL;
}

/* Size cfg's counter data image for max_ranges ranges (this also tells the
 * range profiler which metrics the next image holds), allocating it the
 * first time. */
static int config_data(struct counters *c, struct config *cfg)
{
	CUpti_RangeProfiler_GetCounterDataSize_Params ds;
	int rc = -1;

	memset(&ds, 0, sizeof ds);
	ds.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
	ds.pRangeProfilerObject = c->rp;
	ds.pMetricNames = cfg->names;
	ds.numMetrics = (size_t)cfg->n;
	ds.maxNumOfRanges = (size_t)c->max_ranges;
	ds.maxNumRangeTreeNodes = (uint32_t)c->max_ranges;
	TRY(cuptiRangeProfilerGetCounterDataSize(&ds), out);
	if (cfg->data && cfg->data_size != ds.counterDataSize)
		return error("cannot collect counters: the counter data image "
			     "changed size (%zu, now %zu bytes)", cfg->data_size,
			     (size_t)ds.counterDataSize);
	cfg->data_size = ds.counterDataSize;
	if (!cfg->data)
		cfg->data = (uint8_t *)malloc(cfg->data_size);
	if (!cfg->data)
		return error("cannot collect counters: out of memory");
	rc = 0;
out:
	return rc;
}

/* Split the caller's metrics into configurations: under op replay the
 * hardware metrics (op replay) and the SASS ones (kernel replay); under
 * kernel replay, one configuration. */
static int config_split(struct counters *c, const char *const *metrics, int n,
			enum counters_replay replay)
{
	for (int i = 0; i < n; i++) {
		int sass = replay == COUNTERS_REPLAY_OP && strstr(metrics[i], "__sass_");
		int k;
		struct config *cfg;

		for (k = 0; k < c->ncfg; k++)
			if ((c->cfg[k].replay == COUNTERS_REPLAY_KERNEL) ==
			    (sass || replay == COUNTERS_REPLAY_KERNEL))
				break;
		cfg = &c->cfg[k];
		if (k == c->ncfg) {
			c->ncfg++;
			cfg->replay = sass ? COUNTERS_REPLAY_KERNEL : replay;
			cfg->names = (const char **)calloc((size_t)n, sizeof *cfg->names);
			cfg->index = (int *)calloc((size_t)n, sizeof *cfg->index);
			if (!cfg->names || !cfg->index)
				return error("cannot collect counters: out of memory");
		}
		cfg->names[cfg->n] = metrics[i];
		cfg->index[cfg->n++] = i;
	}
	return 0;
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
	c = (struct counters *)calloc(1, sizeof *c);
	if (!c)
		return error("cannot collect counters: out of memory");
	c->n = n;
	c->max_ranges = max_ranges;
	if (current_context(&c->ctx) || cudaGetDevice(&dev) != cudaSuccess)
		goto out_free;
	if (config_split(c, metrics, n, replay))
		goto out_free;
	if (replay == COUNTERS_REPLAY_OP) {
		int l2 = 0;
		cudaError_t e;

		e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
		if (e == cudaSuccess)
			e = cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, dev);
		c->flush_bytes = 4 * (size_t)(l2 > (1 << 20) ? l2 : 1 << 20);
		if (e == cudaSuccess)
			e = cudaMalloc(&c->flush, c->flush_bytes);
		if (e == cudaSuccess)
			e = cudaMemset(c->flush, 0, c->flush_bytes);
		if (e != cudaSuccess) {
			rc = error("cannot collect counters: the L2 flush buffer "
				   "(%zu MB): %s", c->flush_bytes >> 20,
				   cudaGetErrorString(e));
			goto out_free;
		}
	}
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
	for (int k = 0; k < c->ncfg; k++) {
		rc = config_build(&c->cfg[k], cn.pChipName, avail);
		if (rc)
			goto out_free;
	}
	rc = -1;

	rc = rp_enable(c);
	if (rc)
		goto out_free;
	rc = -1;
	for (int k = 0; k < c->ncfg; k++)
		if (config_data(c, &c->cfg[k]))
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
	int p = 0;

	for (int k = 0; k < c->ncfg; k++)
		p += c->cfg[k].passes;
	return p;
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

static int flush_l2(struct counters *c)
{
	cudaError_t e;

	flush_l2_read<<<4 * c->sms, 512>>>((const float4 *)c->flush,
					     c->flush_bytes / sizeof(float4),
					     (float *)c->flush);
	e = cudaGetLastError();
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	if (e != cudaSuccess)
		return error("cannot flush L2 before a counter pass: %s",
			     cudaGetErrorString(e));
	return 0;
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

/* Decode cfg's counter data and evaluate every range into out (nranges x
 * c->n, the caller's metric order); *nranges must match what an earlier
 * configuration found (or be -1 for the first). */
static int evaluate(struct counters *c, struct config *cfg, double **out,
		    int *nranges, int *dropped)
{
	CUpti_RangeProfiler_DecodeData_Params dd;
	CUpti_RangeProfiler_GetCounterDataInfo_Params inf;
	double *v = NULL;
	int rc = -1;

	memset(&dd, 0, sizeof dd);
	dd.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
	dd.pRangeProfilerObject = c->rp;
	TRY(cuptiRangeProfilerDecodeData(&dd), out);
	*dropped += (int)dd.numOfRangeDropped;

	memset(&inf, 0, sizeof inf);
	inf.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
	inf.pCounterDataImage = cfg->data;
	inf.counterDataImageSize = cfg->data_size;
	TRY(cuptiRangeProfilerGetCounterDataInfo(&inf), out);
	if (*nranges >= 0 && (size_t)*nranges != inf.numTotalRanges)
		return error("cannot collect counters: %zu kernels in one replay, "
			     "%d in the other: the work must launch the same kernels "
			     "every time", inf.numTotalRanges, *nranges);
	if (!*out) {
		*out = (double *)calloc(inf.numTotalRanges ?
					inf.numTotalRanges * (size_t)c->n : 1,
					sizeof **out);
		if (!*out)
			return error("cannot collect counters: out of memory");
	}
	v = (double *)calloc((size_t)cfg->n, sizeof *v);
	if (!v)
		return error("cannot collect counters: out of memory");
	for (size_t i = 0; i < inf.numTotalRanges; i++) {
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev;

		memset(&ev, 0, sizeof ev);
		ev.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
		ev.pHostObject = cfg->host;
		ev.pCounterDataImage = cfg->data;
		ev.counterDataImageSize = cfg->data_size;
		ev.rangeIndex = i;
		ev.ppMetricNames = cfg->names;
		ev.numMetrics = (size_t)cfg->n;
		ev.pMetricValues = v;
		TRY(cuptiProfilerHostEvaluateToGpuValues(&ev), out);
		for (int m = 0; m < cfg->n; m++)
			(*out)[i * (size_t)c->n + (size_t)cfg->index[m]] = v[m];
	}
	*nranges = (int)inf.numTotalRanges;
	rc = 0;
out:
	free(v);
	return rc;
}

/* Collect cfg: one run of the work per pass (op replay) or one in all
 * (kernel replay), then evaluate into *values. */
static int collect_config(struct counters *c, struct config *cfg,
			  int (*work)(void *), void *arg, double **values,
			  int *nranges, int *dropped)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params di;
	CUpti_RangeProfiler_SetConfig_Params sc;
	CUpti_RangeProfiler_Start_Params st;
	CUpti_RangeProfiler_Stop_Params sp;
	int rc = -1, pass;

	/* One range profiler session per configuration: CUPTI 13.0 fails
	 * (CUPTI_ERROR_UNKNOWN) to initialize a second configuration's counter
	 * data image in the session of the first. */
	if (c->ncfg > 1) {
		rp_disable(c);
		rc = rp_enable(c);
		if (rc || (rc = config_data(c, cfg)))
			goto out;
		rc = -1;
	}
	memset(cfg->data, 0, cfg->data_size);
	memset(&di, 0, sizeof di);
	di.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
	di.pRangeProfilerObject = c->rp;
	di.counterDataSize = cfg->data_size;
	di.pCounterData = cfg->data;
	TRY(cuptiRangeProfilerCounterDataImageInitialize(&di), out);

	memset(&sc, 0, sizeof sc);
	sc.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
	sc.pRangeProfilerObject = c->rp;
	sc.configSize = cfg->image_size;
	sc.pConfig = cfg->image;
	sc.counterDataImageSize = cfg->data_size;
	sc.pCounterDataImage = cfg->data;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = cfg->replay == COUNTERS_REPLAY_KERNEL ? CUPTI_KernelReplay
							      : CUPTI_UserReplay;
	sc.maxRangesPerPass = (size_t)c->max_ranges;
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	sc.passIndex = 0;
	sc.targetNestingLevel = 1;
	TRY(cuptiRangeProfilerSetConfig(&sc), out);

	/* Kernel replay submits every pass in one go; op replay needs one
	 * run of the work per pass, and CUPTI says when it has them all. */
	for (pass = 0;; pass++) {
		cudaError_t e;
		int wrc;

		if (cfg->replay == COUNTERS_REPLAY_OP && flush_l2(c))
			goto out;
		memset(&st, 0, sizeof st);
		st.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
		st.pRangeProfilerObject = c->rp;
		TRY(cuptiRangeProfilerStart(&st), out);
		c->running = 1;
		wrc = work(arg);
		e = cudaDeviceSynchronize();
		if (stop(c, &sp) || wrc)
			goto out;
		if (e != cudaSuccess) {
			rc = error("cannot collect counters: the GPU reported an error: %s",
				   cudaGetErrorString(e));
			goto out;
		}
		if (sp.isAllPassSubmitted)
			break;
		if (cfg->replay == COUNTERS_REPLAY_KERNEL || pass + 1 >= cfg->passes) {
			rc = error("cannot collect counters: %d replay passes left "
				   "passes unsubmitted (CUPTI is at pass %zu of %d)",
				   pass + 1, sp.passIndex, cfg->passes);
			goto out;
		}
	}
	rc = evaluate(c, cfg, values, nranges, dropped);
out:
	return rc;
}

int counters_collect(struct counters *c, int (*work)(void *), void *arg,
		     double **values, int *nranges, int *dropped)
{
	int rc = 0, nr = -1;

	*values = NULL;
	*nranges = 0;
	*dropped = 0;
	for (int k = 0; k < c->ncfg && rc == 0; k++)
		rc = collect_config(c, &c->cfg[k], work, arg, values, &nr, dropped);
	if (rc) {
		free(*values);
		*values = NULL;
		return rc;
	}
	*nranges = nr < 0 ? 0 : nr;
	return 0;
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
	rp_disable(c);
	for (int k = 0; k < c->ncfg; k++) {
		struct config *cfg = &c->cfg[k];

		if (cfg->host) {
			CUpti_Profiler_Host_Deinitialize_Params hd;

			memset(&hd, 0, sizeof hd);
			hd.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
			hd.pHostObject = cfg->host;
			cuptiProfilerHostDeinitialize(&hd);
		}
		free(cfg->names);
		free(cfg->index);
		free(cfg->image);
		free(cfg->data);
	}
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
