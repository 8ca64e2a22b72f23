/* test-workloads.c - GPU test: every registered workload, variant, dtype and
 * input profile at the workload's test shapes, checked through the contract
 * against its double-precision CPU reference on fresh random inputs, with
 * the default kernel options and again with each option value the
 * workload names for testing (fp_kopt.tested) wherever it changes the
 * kernels that run (the kernel line); and
 * each instance again with two sets: set 1 launched, device_bytes() held
 * against the memory create() took.
 *
 * Usage: test-workloads [-o [WORKLOAD:]KEY=VALUE]... [WORKLOAD...]
 * (default: all; also $FUSEPROF_TEST_WORKLOADS, comma-separated). -o sets
 * a kernel option, as `fuseprof run --kernel-opt` does, of every selected
 * workload that declares KEY (or of WORKLOAD alone); an option no selected
 * workload declares, or a value it does not allow, fails. With options,
 * each instance's kernel line is printed too ("kern ..."), so a run shows
 * which shapes reached the kernel asked for. $FUSEPROF_SEED fixes the seed
 * to reproduce a failure; otherwise a fresh one is drawn and printed. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "test.h"
#include "util.h"
#include "workload.h"

/* The loosest relative error a workload may claim as its tolerance. */
#define MAX_TOL_FP32 1e-4
#define MAX_TOL_BF16 1e-2

/* The workloads named on the command line (nnames of them), else the
 * environment's list, else all. */
static int selected(const char *name, int nnames, char **names)
{
	const char *env = getenv("FUSEPROF_TEST_WORKLOADS");

	if (nnames > 0) {
		for (int i = 0; i < nnames; i++)
			if (!strcmp(names[i], name))
				return 1;
		return 0;
	}
	return !env || !*env || list_has(env, name);
}

/* The -o options (nopts of them) that apply to w, set in *ko (zeroed
 * here: the defaults); used[i] set for each option that applied. A value
 * w does not allow, or a key it lacks where the option names w, fails. */
static void set_kopts(const struct workload *w, char **opts, int nopts, int *used,
		      struct fp_kopts *ko)
{
	char scope[64], key[64], value[64], why[256];

	memset(ko, 0, sizeof *ko);
	for (int i = 0; i < nopts; i++) {
		if (workload_split_kopt(opts[i], scope, key, value, sizeof key))
			FAIL("-o '%s': not [WORKLOAD:]KEY=VALUE", opts[i]);
		if (*scope && strcmp(scope, w->name))
			continue;
		if (!*scope && workload_kopt(w, key) < 0)
			continue;
		if (workload_set_kopt(w, ko, key, value, why, sizeof why))
			FAIL("-o '%s': %s", opts[i], why);
		used[i] = 1;
	}
}

static unsigned long long mix(unsigned long long x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* An instance of two sets: create() takes from the device what
 * device_bytes() says (within the driver's rounding, where the instance is
 * big enough for that to be told apart), and a launch of set 1 runs on set
 * 1's buffers (run under compute-sanitizer, it sees their offsets). Returns
 * the number of failures. */
static int check_sets(const struct workload *w, const struct fp_shape *s,
		      enum fp_dtype dt, int v, const char *shape,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	const size_t want = w->device_bytes(s, dt, v, 2);
	const double slack = 32.0 * (1 << 20) + want / 50.0;
	size_t free0 = 0, free1 = 0, total = 0;
	struct fp_op *op = NULL;
	double used;

	if (cudaMemGetInfo(&free0, &total) != cudaSuccess)
		FAIL("cudaMemGetInfo failed");
	if (w->create(&op, s, dt, v, 2, seed, ko))
		FAIL("%s/%s %s: create with 2 sets failed", w->name,
		     w->variants[v].name, shape);
	if (cudaMemGetInfo(&free1, &total) != cudaSuccess)
		FAIL("cudaMemGetInfo failed");
	if (w->launch(op, 1, 0) || cudaDeviceSynchronize() != cudaSuccess)
		FAIL("%s/%s/%s/%s: the launch of set 1 failed", w->name,
		     w->variants[v].name, fp_dtype_name(dt), shape);
	w->destroy(op);
	used = (double)free0 - (double)free1;
	if (want >= (256u << 20) && fabs(used - (double)want) > slack) {
		printf("FAIL %s/%s/%s/%s: 2 sets took %.0f bytes, device_bytes "
		       "says %zu\n", w->name, w->variants[v].name,
		       fp_dtype_name(dt), shape, used, want);
		return 1;
	}
	printf("ok   %s/%s/%s/%s sets=2 device_bytes=%zu taken=%.0f\n", w->name,
	       w->variants[v].name, fp_dtype_name(dt), shape, want, used);
	return 0;
}

/* Every profile of one instance (variant v, kernel options ko, NULL for
 * the defaults; opt names them in the lines, "" for the defaults) checked
 * against the reference. kernel, when not NULL, gets the instance's kernel
 * line (w->kernel) before it is destroyed. Returns the number of failures. */
static int check_profiles(const struct workload *w, const struct fp_shape *s,
			  enum fp_dtype dt, int v, const struct fp_kopts *ko,
			  const char *opt, const char *shape, unsigned long long seed,
			  int *nchecks, char *kernel, size_t kn)
{
	struct fp_op *op = NULL;
	int failed = 0;

	if (w->create(&op, s, dt, v, 1, seed, ko))
		FAIL("%s/%s%s %s: create failed", w->name, w->variants[v].name, opt, shape);
	if (kernel) {
		kernel[0] = '\0';
		if (w->kernel)
			w->kernel(op, kernel, kn);
	}
	for (int p = 0; w->profiles[p]; p++) {
		struct fp_check r;
		unsigned long long cs = mix(seed + 1000003ull * (unsigned)p +
					    7919ull * (unsigned)v);
		double bound = dt == FP_BF16 ? MAX_TOL_BF16 : MAX_TOL_FP32;

		if (w->check(op, p, cs, &r))
			FAIL("%s/%s%s %s: check could not run", w->name,
			     w->variants[v].name, opt, shape);
		(*nchecks)++;
		printf("%-4s %s/%s%s/%s/%s profile=%s rel_err=%.3g "
		       "max_abs=%.3g tol=%.3g%s%s\n",
		       r.passed ? "ok" : "FAIL", w->name, w->variants[v].name, opt,
		       fp_dtype_name(dt), shape, w->profiles[p], r.rel_err,
		       r.max_abs_err, r.tolerance, r.passed ? "" : ": ", r.detail);
		if (!r.passed)
			failed++;
		if (!(r.tolerance > 0 && r.tolerance <= bound)) {
			printf("FAIL tolerance %.3g is outside (0, %.0e]\n",
			       r.tolerance, bound);
			failed++;
		}
		if (r.seed != cs) {
			printf("FAIL check recorded seed %llu, not %llu\n", r.seed, cs);
			failed++;
		}
	}
	w->destroy(op);
	return failed;
}

/* The values of each kernel option that the workload names for testing
 * (struct fp_kopt's tested: paths the default never takes at the test
 * shapes), one option at a time, on variant v wherever the value changes
 * the kernel line from the default's (dflt): there it runs kernels of its
 * own. Returns the number of failures. */
static int check_kopts(const struct workload *w, const struct fp_shape *s,
		       enum fp_dtype dt, int v, const char *shape, const char *dflt,
		       unsigned long long seed, int *nchecks)
{
	char kernel[256], opt[96];
	int failed = 0;

	for (int i = 0; w->kopts && w->kopts[i].name; i++) {
		for (int j = 1; w->kopts[i].tested && w->kopts[i].values[j]; j++) {
			struct fp_kopts ko;
			struct fp_op *op = NULL;

			if (!list_has(w->kopts[i].tested, w->kopts[i].values[j]))
				continue;
			memset(&ko, 0, sizeof ko);
			ko.v[i] = (unsigned char)j;
			if (w->create(&op, s, dt, v, 1, seed, &ko))
				FAIL("%s/%s %s: create with %s=%s failed", w->name,
				     w->variants[v].name, shape, w->kopts[i].name,
				     w->kopts[i].values[j]);
			kernel[0] = '\0';
			if (w->kernel)
				w->kernel(op, kernel, sizeof kernel);
			w->destroy(op);
			if (!strcmp(kernel, dflt))
				continue;
			snprintf(opt, sizeof opt, "[%s=%s]", w->kopts[i].name,
				 w->kopts[i].values[j]);
			failed += check_profiles(w, s, dt, v, &ko, opt, shape, seed,
						 nchecks, NULL, 0);
		}
	}
	return failed;
}

static int run_shape(const struct workload *w, const char *spec,
		     unsigned long long seed, const struct fp_kopts *ko, int tell,
		     int *nchecks)
{
	struct fp_shape s;
	char why[256], shape[128], kernel[256];
	int failed = 0;

	if (workload_parse_shape(w, spec, &s, why, sizeof why))
		FAIL("%s: test shape '%s' does not parse: %s", w->name, spec, why);
	workload_format_shape(w, &s, shape, sizeof shape);
	for (int dt = 0; dt < FP_NDTYPES; dt++) {
		if (!(w->dtypes & FP_DTYPE_BIT(dt)))
			continue;
		if (w->validate(&s, (enum fp_dtype)dt, why, sizeof why))
			FAIL("%s %s %s: test shape rejected: %s", w->name, shape,
			     fp_dtype_name((enum fp_dtype)dt), why);
		for (int v = 0; w->variants[v].name; v++) {
			struct fp_model m;

			w->model(&s, (enum fp_dtype)dt, v, &m);
			if (!(m.flops >= 0 && m.min_bytes > 0 &&
			      m.variant_bytes >= m.min_bytes))
				FAIL("%s/%s %s: model is not sane (flops %g, min %g, "
				     "variant %g bytes)", w->name, w->variants[v].name,
				     shape, m.flops, m.min_bytes, m.variant_bytes);
			failed += check_profiles(w, &s, (enum fp_dtype)dt, v, ko, "", shape,
						 seed, nchecks, kernel, sizeof kernel);
			if (tell)
				printf("kern %s/%s/%s/%s: %s\n", w->name, w->variants[v].name,
				       fp_dtype_name((enum fp_dtype)dt), shape, kernel);
			failed += check_kopts(w, &s, (enum fp_dtype)dt, v, shape, kernel, seed,
					      nchecks);
			failed += check_sets(w, &s, (enum fp_dtype)dt, v, shape, seed, ko);
		}
	}
	return failed;
}

int main(int argc, char **argv)
{
	const char *env = getenv("FUSEPROF_SEED");
	unsigned long long seed;
	int ndev = 0, failed = 0, nchecks = 0, nworkloads = 0;
	int nopts = 0, nnames = 0, *used;
	char **opts, **names;

	opts = xcalloc((size_t)argc, sizeof *opts);
	names = xcalloc((size_t)argc, sizeof *names);
	used = xcalloc((size_t)argc, sizeof *used);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o")) {
			if (++i == argc)
				FAIL("-o wants [WORKLOAD:]KEY=VALUE");
			opts[nopts++] = argv[i];
		} else {
			names[nnames++] = argv[i];
		}
	}
	// the options first: a wrong one fails with or without a GPU
	for (const struct workload *const *w = fp_workloads; *w; w++) {
		struct fp_kopts ko;

		if (selected((*w)->name, nnames, names))
			set_kopts(*w, opts, nopts, used, &ko);
	}
	for (int i = 0; i < nopts; i++)
		if (!used[i])
			FAIL("-o '%s': no selected workload takes that option", opts[i]);
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
		SKIP("no CUDA GPU found (%s)",
		     cudaGetErrorString(cudaGetDeviceCount(&ndev)));
	gpu_test_lock();
	seed = env ? strtoull(env, NULL, 0)
		   : mix((unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32));
	printf("seed %llu (set FUSEPROF_SEED to reproduce)\n", seed);

	for (const struct workload *const *w = fp_workloads; *w; w++) {
		char *specs, *save = NULL, kbuf[256];
		struct fp_kopts ko;

		if (!selected((*w)->name, nnames, names))
			continue;
		nworkloads++;
		set_kopts(*w, opts, nopts, used, &ko);
		if (nopts) {
			workload_format_kopts(*w, &ko, kbuf, sizeof kbuf);
			printf("options %s: %s\n", (*w)->name, *kbuf ? kbuf : "(none)");
		}
		ASSERT((*w)->tests && *(*w)->tests);
		ASSERT((*w)->profiles && (*w)->profiles[0]);
		specs = strdup((*w)->tests);
		for (char *t = strtok_r(specs, ";", &save); t;
		     t = strtok_r(NULL, ";", &save))
			failed += run_shape(*w, t, seed, &ko, nopts > 0, &nchecks);
		free(specs);
	}
	if (nworkloads == 0)
		SKIP("no workload selected (registry has none, or the filter matched none)");
	printf("%d checks, %d failed\n", nchecks, failed);
	return failed ? 1 : 0;
}
