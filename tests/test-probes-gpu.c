/* test-probes-gpu.c - the probes on kernels of known work (skips with 77
 * without a GPU or without permission to read counters):
 *  - a copy of N floats (N*4 much larger than L2) reads 4N DRAM bytes within
 *    3% and writes between 4N - L2 and 4N (+1%);
 *  - FMA chains report exactly their FFMA count;
 *  - CUPTI Activity returns one record per launch, in order, none dropped. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "probes.h"
#include "test.h"

#define CUDA_OK(call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) \
		FAIL("%s: %s", #call, cudaGetErrorString(e_)); \
} while (0)

static const char *const metrics[] = {
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"lts__t_bytes.sum",
	"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
};
#define NM 7

int main(void)
{
	struct probe_device d;
	struct counters *c = NULL;
	struct kernel_rec *recs = NULL;
	size_t nrecs = 0, n;
	float *src, *dst, *host;
	void *p;
	double *v = NULL, bytes, l2;
	unsigned seed = (unsigned)time(NULL);
	int count = 0, nr, drop, rc, blocks, threads = 128, iters;

	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
		SKIP("no GPU");
	fprintf(stderr, "test-probes-gpu: seed %u\n", seed);
	srand(seed);
	ASSERT_EQ(probe_device_open(0, &d), 0);
	fprintf(stderr, "device: %s, %d SMs, L2 %lld MiB, CUPTI %d\n", d.name,
		d.sm_count, d.l2_bytes >> 20, d.cupti_version);
	ASSERT(d.sm_count > 0 && d.l2_bytes > 0 && d.mem_bytes > 0);
	ASSERT(strncmp(d.uuid, "GPU-", 4) == 0);
	l2 = (double)d.l2_bytes;

	/* N floats: about 10 x L2, plus a random odd tail. */
	n = (size_t)(10 * l2 / 4) + (size_t)(rand() % 100000) * 2 + 1;
	bytes = 4.0 * (double)n;
	CUDA_OK(cudaMalloc(&p, n * 4));
	src = p;
	CUDA_OK(cudaMalloc(&p, n * 4));
	dst = p;
	host = malloc(n * 4);
	ASSERT(host != NULL);
	for (size_t i = 0; i < n; i++)
		host[i] = (float)rand() / RAND_MAX - 0.5f;
	CUDA_OK(cudaMemcpy(src, host, n * 4, cudaMemcpyHostToDevice));

	/* Activity: three launches, three records, in order. */
	ASSERT_EQ(activity_start(), 0);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(probe_copy_f32(dst, src, n), 0);
	CUDA_OK(cudaDeviceSynchronize());
	ASSERT_EQ(activity_collect(&recs, &nrecs), 0);
	ASSERT_EQ(nrecs, 3);
	for (size_t i = 0; i < nrecs; i++) {
		fprintf(stderr, "activity: %s grid %u block %u regs %d: %.1f us\n",
			recs[i].name, recs[i].grid[0], recs[i].block[0],
			recs[i].registers, (recs[i].end - recs[i].start) / 1e3);
		ASSERT(strstr(recs[i].name, "copy_f32") != NULL);
		ASSERT(recs[i].end > recs[i].start);
		ASSERT_EQ(recs[i].block[0], 256);
		if (i)
			ASSERT(recs[i].correlation > recs[i - 1].correlation &&
			       recs[i].start >= recs[i - 1].end);
	}
	ASSERT_EQ(activity_dropped(), 0);
	activity_free(recs, nrecs);

	rc = counters_open(&c, metrics, NM, 8);
	if (rc == PROBE_DENIED || rc == PROBE_BUSY)
		SKIP("counters not available here (%s)", rc == PROBE_DENIED ?
		     "insufficient privileges" : "another profiler attached");
	ASSERT_EQ(rc, 0);
	fprintf(stderr, "counters: %d metrics, %d pass(es)\n", NM, counters_passes(c));
	ASSERT(counters_passes(c) >= 1);

	/* Copy: DRAM bytes. */
	rc = counters_begin(c);
	if (rc == PROBE_DENIED || rc == PROBE_BUSY)
		SKIP("counters not available here");
	ASSERT_EQ(rc, 0);
	ASSERT_EQ(probe_copy_f32(dst, src, n), 0);
	CUDA_OK(cudaDeviceSynchronize());
	ASSERT_EQ(counters_end(c, &v, &nr, &drop), 0);
	ASSERT_EQ(nr, 1);
	ASSERT_EQ(drop, 0);
	fprintf(stderr, "copy of %zu floats (4N = %.0f): read %.0f (%.3f%%), write "
		"%.0f (%.3f%%), L2 %.0f, ffma %.0f\n", n, bytes, v[0],
		100 * (v[0] / bytes - 1), v[1], 100 * (v[1] / bytes - 1), v[3], v[2]);
	ASSERT(fabs(v[0] - bytes) <= 0.03 * bytes);
	/* Dirty lines may stay in L2 when the kernel ends (hence 4N - L2);
	 * an H200 also showed +0.44% over 4N: allow 1% of other traffic. */
	ASSERT(v[1] >= bytes - l2 && v[1] <= bytes * 1.01);
	ASSERT_EQ(v[2], 0);
	ASSERT(v[3] >= 2 * bytes * 0.97);  /* every byte passes L2 both ways */
	free(v);

	/* FMA chains: an exact count, twice, at random sizes. */
	for (int t = 0; t < 2; t++) {
		double want;
		float *out;

		blocks = 1 + rand() % (4 * d.sm_count);
		iters = 1 + rand() % 2000;
		want = (double)blocks * threads * iters * PROBE_FMA_CHAINS;
		CUDA_OK(cudaMalloc(&p, (size_t)blocks * threads * sizeof(float)));
		out = p;
		ASSERT_EQ(counters_begin(c), 0);
		ASSERT_EQ(probe_fma_f32(out, blocks, threads, iters), 0);
		CUDA_OK(cudaDeviceSynchronize());
		ASSERT_EQ(counters_end(c, &v, &nr, &drop), 0);
		ASSERT_EQ(nr, 1);
		fprintf(stderr, "fma %d x %d threads x %d iters x %d chains: ffma %.0f, "
			"want %.0f\n", blocks, threads, iters, PROBE_FMA_CHAINS, v[2], want);
		ASSERT_EQ((long long)v[2], (long long)want);
		/* Each instruction type counted on its own: no FMUL or DFMA
		 * here, a few FADDs (the final sum of the chains). */
		ASSERT_EQ((long long)v[5], 0);
		ASSERT_EQ((long long)v[6], 0);
		ASSERT(v[4] > 0 && v[4] < want);
		free(v);
		CUDA_OK(cudaFree(out));
	}

	/* Several kernels in one collection: one range each, in launch order. */
	{
		float *out;

		CUDA_OK(cudaMalloc(&p, 64 * threads * sizeof(float)));
		out = p;
		ASSERT_EQ(counters_begin(c), 0);
		ASSERT_EQ(probe_fma_f32(out, 64, threads, 10), 0);
		ASSERT_EQ(probe_copy_f32(dst, src, n), 0);
		ASSERT_EQ(probe_fma_f32(out, 64, threads, 20), 0);
		CUDA_OK(cudaDeviceSynchronize());
		ASSERT_EQ(counters_end(c, &v, &nr, &drop), 0);
		ASSERT_EQ(nr, 3);
		ASSERT_EQ((long long)v[0 * NM + 2], 64LL * threads * 10 * PROBE_FMA_CHAINS);
		ASSERT_EQ((long long)v[1 * NM + 2], 0);
		ASSERT(fabs(v[1 * NM + 0] - bytes) <= 0.03 * bytes);
		ASSERT_EQ((long long)v[2 * NM + 2], 64LL * threads * 20 * PROBE_FMA_CHAINS);
		free(v);
		CUDA_OK(cudaFree(out));
	}
	counters_close(c);

	/* An unknown counter is refused by name. */
	{
		const char *bad[] = { "dram__bytes_read.sum", "no__such_metric.sum" };

		ASSERT_EQ(counters_open(&c, bad, 2, 4), PROBE_BAD_COUNTER);
	}
	activity_stop();
	CUDA_OK(cudaFree(src));
	CUDA_OK(cudaFree(dst));
	free(host);
	return 0;
}
