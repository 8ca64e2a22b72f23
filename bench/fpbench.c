/* fpbench.c - quick cudaEvent timing of workloads through the contract, for
 * kernel development before (and beside) `fuseprof run`.
 *
 * Usage: fpbench [-r REPS] [-w WARMUP] [-c] [-a] [-k] [-n] [-o [WORKLOAD:]KEY=VALUE]...
 *                WORKLOAD[/VARIANT] DTYPE SHAPE...
 *   -o  a kernel option, as `fuseprof run --kernel-opt` takes it (repeatable,
 *       or a comma list); `fuseprof list workloads --options` lists them
 *   -c  also time a 1 GiB device-to-device copy (the bandwidth anchor)
 *   -k  skip the correctness check (so that a profiler attached to fpbench
 *       sees each kernel only in its timed launches)
 *   -n  for a profiler, not timed: each launch (warm-ups and repetitions)
 *       in an NVTX range named WORKLOAD/VARIANT/DTYPE/SHAPE, as `fuseprof
 *       run` names its ops, then a stream synchronisation and a host pause
 *       of PAUSE_US: under `fuseprof profile` each repetition is one
 *       instance of the op's range, and the idle stream between two reads
 *       as a host sync (v_fusion_candidates), so no candidate chain runs
 *       from one repetition into the next
 *   -a  also measure what CUPTI Activity costs: the wall time of the same
 *       warm-up and timed launches with and without Activity recording every
 *       kernel (as `fuseprof run` times them), best of three each
 * Prints one line per variant and shape: median µs over REPS launches, the
 * bandwidth counting the model's min bytes and the variant's bytes, and the
 * check's relative error; then, for a workload with options or a kernel()
 * hook, the options in force and the kernels the launcher picked. */
#include "config.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "kutil.h"
#include "probes.h"
#include "util.h"
#include "workload.h"

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/* Median of reps single-launch event timings, in ms; -1 on error. */
static float time_launches(const struct workload *w, struct fp_op *op,
			   int nsets, int warmup, int reps)
{
	cudaEvent_t *ev = xcalloc((size_t)reps + 1, sizeof *ev);
	float *ms = xcalloc((size_t)reps, sizeof *ms), med = -1;

	for (int i = 0; i <= reps; i++)
		if (CUDA_CHECK(cudaEventCreate(&ev[i])))
			goto out;
	for (int i = 0; i < warmup; i++)
		if (w->launch(op, i % nsets, 0))
			goto out;
	/* Back-to-back launches with an event between each: the gaps are the
	 * launch overhead a real model would also pay. */
	if (CUDA_CHECK(cudaEventRecord(ev[0], 0)))
		goto out;
	for (int i = 0; i < reps; i++) {
		if (w->launch(op, i % nsets, 0) || CUDA_CHECK(cudaEventRecord(ev[i + 1], 0)))
			goto out;
	}
	if (CUDA_CHECK(cudaEventSynchronize(ev[reps])))
		goto out;
	for (int i = 0; i < reps; i++)
		cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]);
	qsort(ms, (size_t)reps, sizeof *ms, cmp_float);
	med = ms[reps / 2];
out:
	for (int i = 0; i <= reps; i++)
		if (ev[i])
			cudaEventDestroy(ev[i]);
	free(ev);
	free(ms);
	return med;
}

/* The pause after each launch under -n (µs): longer than the idle time
 * v_fusion_candidates reads as a host sync (FP_OPPS_GAP_NS, 50 µs). */
#define PAUSE_US 200

/* -n: warmup + reps launches, each alone in an NVTX range named key,
 * followed by a synchronisation and a pause. 0, or -1 on error. */
static int ranged_launches(const struct workload *w, struct fp_op *op, int nsets,
			   int warmup, int reps, const char *key)
{
	for (int i = 0; i < warmup + reps; i++) {
		int rc;

		nvtxRangePushA(key);
		rc = w->launch(op, i % nsets, 0);
		nvtxRangePop();
		if (rc || CUDA_CHECK(cudaStreamSynchronize(0)))
			return -1;
		usleep(PAUSE_US);
	}
	return 0;
}

/* Wall seconds of warmup + reps launches and a synchronize, best of three:
 * timed the plain way (an event recorded after each launch, the elapsed
 * times read back), or the way `fuseprof run` times them (no events; CUPTI
 * Activity records every kernel and the records are collected). -1 on
 * error. */
static double wall_launches(const struct workload *w, struct fp_op *op,
			    int nsets, int warmup, int reps, int activity)
{
	cudaEvent_t *ev = xcalloc((size_t)reps + 1, sizeof *ev);
	double best = -1;
	float ms;

	for (int i = 0; i <= reps; i++)
		if (CUDA_CHECK(cudaEventCreate(&ev[i])))
			goto out;
	for (int t = 0; t < 3; t++) {
		struct kernel_rec *recs = NULL;
		size_t nrecs = 0;
		double t0;

		if (activity && activity_start())
			goto out;
		t0 = now_seconds();
		for (int i = 0; i < warmup; i++)
			if (w->launch(op, i % nsets, 0))
				goto out;
		if (!activity && CUDA_CHECK(cudaEventRecord(ev[0], 0)))
			goto out;
		for (int i = 0; i < reps; i++) {
			if (w->launch(op, i % nsets, 0))
				goto out;
			if (!activity && CUDA_CHECK(cudaEventRecord(ev[i + 1], 0)))
				goto out;
		}
		if (CUDA_CHECK(cudaDeviceSynchronize()))
			goto out;
		if (activity) {
			if (activity_collect(&recs, &nrecs))
				goto out;
			activity_free(recs, nrecs);
		} else {
			for (int i = 0; i < reps; i++)
				cudaEventElapsedTime(&ms, ev[i], ev[i + 1]);
		}
		t0 = now_seconds() - t0;
		if (activity)
			activity_stop();
		if (best < 0 || t0 < best)
			best = t0;
	}
out:
	for (int i = 0; i <= reps; i++)
		if (ev[i])
			cudaEventDestroy(ev[i]);
	free(ev);
	return best;
}

/* Set the -o arguments' pairs "[WORKLOAD:]KEY=VALUE[,...]" in ko, as
 * `fuseprof run --kernel-opt` reads them; a pair scoped to another
 * workload is an error here, since fpbench runs one. Returns 0, or -1
 * after a message. */
static int set_kopts(const struct workload *w, char *const *args, int n,
		     struct fp_kopts *ko)
{
	char pair[128], scope[128], key[128], value[128], why[256];

	for (int a = 0; a < n; a++) {
		for (const char *p = args[a]; *p;) {
			size_t len = strcspn(p, ",");

			snprintf(pair, sizeof pair, "%.*s", (int)len, p);
			if (workload_split_kopt(pair, scope, key, value, sizeof key)) {
				fprintf(stderr, "fpbench: -o %s: not [WORKLOAD:]KEY=VALUE\n",
					pair);
				return -1;
			}
			if (scope[0] && strcmp(scope, w->name)) {
				fprintf(stderr, "fpbench: -o %s: not for %s\n", pair,
					w->name);
				return -1;
			}
			if (workload_set_kopt(w, ko, key, value, why, sizeof why)) {
				fprintf(stderr, "fpbench: -o %s: %s\n", pair, why);
				return -1;
			}
			p += len + (p[len] ? 1 : 0);
		}
	}
	return 0;
}

static int copy_bandwidth(void)
{
	size_t n = (size_t)1 << 30;
	void *a = NULL, *b = NULL;
	cudaEvent_t e0, e1;
	float ms, best = 1e30f;

	if (CUDA_CHECK(cudaMalloc(&a, n)) || CUDA_CHECK(cudaMalloc(&b, n)))
		return -1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	for (int i = 0; i < 12; i++) {
		cudaEventRecord(e0, 0);
		cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, 0);
		cudaEventRecord(e1, 0);
		if (CUDA_CHECK(cudaEventSynchronize(e1)))
			return -1;
		cudaEventElapsedTime(&ms, e0, e1);
		if (i >= 2 && ms < best)
			best = ms;
	}
	printf("copy 1 GiB device-to-device: %.1f us, %.0f GB/s (read + write)\n",
	       best * 1e3, 2.0 * (double)n / (best * 1e-3) / 1e9);
	cudaFree(a);
	cudaFree(b);
	return 0;
}

int main(int argc, char **argv)
{
	int reps = 100, warmup = 10, c, l2 = 0, failed = 0, act = 0, skip = 0;
	int ranged = 0;
	double wall_ev = 0, wall_act = 0;
	const struct workload *w;
	char name[128], *slash, *oargs[64], kopts[256];
	struct fp_kopts ko;
	enum fp_dtype dt;
	int v0, v1, noargs = 0;

	while ((c = getopt(argc, argv, "r:w:cakno:")) != -1) {
		switch (c) {
		case 'o':
			if (noargs == (int)(sizeof oargs / sizeof *oargs))
				goto usage;
			oargs[noargs++] = optarg;
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'w':
			warmup = atoi(optarg);
			break;
		case 'a':
			act = 1;
			break;
		case 'k':
			skip = 1;
			break;
		case 'n':
			ranged = 1;
			break;
		case 'c':
			if (copy_bandwidth())
				return 1;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind < 3 || reps < 1)
		goto usage;
	snprintf(name, sizeof name, "%s", argv[optind]);
	slash = strchr(name, '/');
	if (slash)
		*slash++ = '\0';
	w = workload_find(name);
	if (!w) {
		fprintf(stderr, "fpbench: unknown workload '%s'\n", name);
		return 2;
	}
	v0 = 0;
	v1 = workload_nvariants(w);
	if (slash) {
		v0 = workload_variant(w, slash);
		if (v0 < 0) {
			fprintf(stderr, "fpbench: %s has no variant '%s'\n", name, slash);
			return 2;
		}
		v1 = v0 + 1;
	}
	memset(&ko, 0, sizeof ko);
	if (set_kopts(w, oargs, noargs, &ko))
		return 2;
	workload_format_kopts(w, &ko, kopts, sizeof kopts);
	if (fp_dtype_parse(argv[optind + 1], &dt)) {
		fprintf(stderr, "fpbench: unknown dtype '%s'\n", argv[optind + 1]);
		return 2;
	}
	cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
	printf("%-16s %-10s %-5s %-22s %10s %9s %9s %9s\n", "workload", "variant",
	       "dtype", "shape", "us", "GB/s-min", "GB/s-var", "rel_err");
	for (int a = optind + 2; a < argc; a++) {
		struct fp_shape s;
		char why[256], shape[128];

		if (workload_parse_shape(w, argv[a], &s, why, sizeof why) ||
		    w->validate(&s, dt, why, sizeof why)) {
			fprintf(stderr, "fpbench: %s: %s\n", argv[a], why);
			return 2;
		}
		workload_format_shape(w, &s, shape, sizeof shape);
		for (int v = v0; v < v1; v++) {
			struct fp_model m;
			struct fp_check r;
			struct fp_op *op = NULL;
			int nsets;
			float ms;

			w->model(&s, dt, v, &m);
			/* Rotate input sets so repeats do not run from L2. */
			nsets = (int)ceil(4.0 * l2 / m.min_bytes);
			nsets = nsets < 1 ? 1 : nsets > 16 ? 16 : nsets;
			if (w->create(&op, &s, dt, v, nsets, 0x5eed + (unsigned)a, &ko))
				return 1;
			memset(&r, 0, sizeof r);
			r.passed = 1;
			r.rel_err = NAN;
			if (!skip && w->check(op, 0, 0xc0ffee + (unsigned)v, &r))
				return 1;
			if (ranged) {
				char key[320];

				snprintf(key, sizeof key, "%s/%s/%s/%s", w->name,
					 w->variants[v].name, fp_dtype_name(dt), shape);
				if (ranged_launches(w, op, nsets, warmup, reps, key))
					return 1;
				printf("%-16s %-10s %-5s %-22s %10s %9s %9s %9.2g%s\n",
				       w->name, w->variants[v].name, fp_dtype_name(dt),
				       shape, "ranged", "-", "-", r.rel_err,
				       r.passed ? "" : "  WRONG");
				failed += !r.passed;
				w->destroy(op);
				continue;
			}
			ms = time_launches(w, op, nsets, warmup, reps);
			if (ms < 0)
				return 1;
			printf("%-16s %-10s %-5s %-22s %10.2f %9.0f %9.0f %9.2g%s\n",
			       w->name, w->variants[v].name, fp_dtype_name(dt), shape,
			       ms * 1e3, m.min_bytes / (ms * 1e-3) / 1e9,
			       m.variant_bytes / (ms * 1e-3) / 1e9, r.rel_err,
			       r.passed ? "" : "  WRONG");
			failed += !r.passed;
			if (w->kernel || *kopts) {
				char line[160] = "";

				if (w->kernel)
					w->kernel(op, line, sizeof line);
				printf("  kernel: %s%s%s%s\n", *line ? line : "(not said)",
				       *kopts ? " [" : "", kopts, *kopts ? "]" : "");
			}
			if (act) {
				double pe = wall_launches(w, op, nsets, warmup, reps, 0);
				double pa = wall_launches(w, op, nsets, warmup, reps, 1);

				if (pe < 0 || pa < 0)
					return 1;
				printf("  wall of %d launches: %.3f ms with events, %.3f ms "
				       "with Activity (%+.1f%%)\n", warmup + reps, pe * 1e3,
				       pa * 1e3, 100 * (pa / pe - 1));
				wall_ev += pe;
				wall_act += pa;
			}
			w->destroy(op);
		}
	}
	if (act)
		printf("total wall: %.3f ms with events, %.3f ms with Activity (%+.2f%%)\n",
		       wall_ev * 1e3, wall_act * 1e3, 100 * (wall_act / wall_ev - 1));
	return failed ? 1 : 0;

usage:
	fprintf(stderr, "usage: fpbench [-r REPS] [-w WARMUP] [-c] [-a] [-k] [-n] "
			"[-o [WORKLOAD:]KEY=VALUE]... WORKLOAD[/VARIANT] DTYPE SHAPE...\n");
	return 2;
}
