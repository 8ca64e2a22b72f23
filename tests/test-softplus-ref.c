/* test-softplus-ref.c - CPU-only checks of the softplus chain workloads:
 * the stable double reference against the chain as written (which
 * overflows), the backward reference against central finite differences of
 * the forward reference on every input profile, and the host-side contract
 * (shapes, validate, models and saved bytes by hand, device bytes, the
 * forward/backward pairing). Needs no GPU. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kutil.h"
#include "softplus/softplus.h"
#include "softplus/sp.h"
#include "test.h"
#include "wltest.h"
#include "workload.h"

extern const struct workload wl_softplus_chain_fwd, wl_softplus_chain_bwd;

/* The chain as written overflows where the stable form does not, in double
 * above ~709.78 and in fp32 above ~88.72, and loses the tail where 1 +
 * exp(x) rounds to 1; the stable form agrees with it where both are
 * representable. */
static void check_overflow(void)
{
	volatile double big = 710.0, ok = 709.0, huge = 1e4;
	volatile float f89 = 89.0f, f88 = 88.0f, fm20 = -20.0f;

	/* double: the naive reference itself breaks above log(DBL_MAX) */
	ASSERT(isfinite(softplus_ref_naive(ok)));
	ASSERT(isinf(softplus_ref_naive(big)));
	ASSERT(isinf(softplus_ref_naive(huge)));
	ASSERT(softplus_ref(big) == big);
	ASSERT(softplus_ref(huge) == huge);
	ASSERT(softplus_ref(-huge) == 0.0);
	ASSERT_NEAR(softplus_ref_naive(ok), softplus_ref(ok), 1e-15);
	/* and its gradient exp(x) / (exp(x) + 1) is inf / inf */
	ASSERT(isnan(exp(big) / (exp(big) + 1.0)));
	ASSERT(softplus_ref_grad(big) == 1.0 && softplus_ref_grad(-big) >= 0.0);
	ASSERT(softplus_ref_grad(huge) == 1.0 && softplus_ref_grad(-huge) == 0.0);
	/* the tail: 1 + exp(-40) is 1 in double, so the chain says 0 */
	ASSERT(softplus_ref_naive(-40.0) == 0.0);
	ASSERT_NEAR(softplus_ref(-40.0) / exp(-40.0), 1.0, 1e-15);
	/* fp32, what a kernel computing the chain literally would do */
	ASSERT(isfinite(logf(expf(f88) + 1.0f)));
	ASSERT(isinf(logf(expf(f89) + 1.0f)));
	ASSERT(isinf(softplus_ref_naive(89.0)) == 0);
	/* a materialised fp32 1 + e rounds e = exp(-20) away; log1p keeps it */
	ASSERT(logf(1.0f + expf(fm20)) == 0.0f);
	ASSERT(log1pf(expf(fm20)) > 0.0f);
	/* where both forms are representable they agree */
	for (double x = -30; x <= 700; x += 0.731) {
		/* 1 + e keeps e only to 2^-53 absolute */
		double tol = 1e-13 + DBL_EPSILON / softplus_ref(x);

		if (fabs(softplus_ref_naive(x) - softplus_ref(x)) >
		    tol * softplus_ref(x))
			FAIL("x=%g: naive %.17g, stable %.17g", x, softplus_ref_naive(x),
			     softplus_ref(x));
	}
	printf("ok   the chain as written overflows (double above 709.78, fp32 "
	       "above 88.72) and loses the tail; the stable form does neither\n");
}

/* Identities: softplus(x) - softplus(-x) = x; softplus(0) = log 2;
 * sigmoid(x) + sigmoid(-x) = 1; positive everywhere. */
static void check_identities(void)
{
	ASSERT_NEAR(softplus_ref(0.0), M_LN2, 1e-16);
	ASSERT(softplus_ref_grad(0.0) == 0.5);
	ASSERT(softplus_ref_grad(-0.0) == 0.5);
	for (double x = -50; x <= 50; x += 0.37) {
		ASSERT_NEAR(softplus_ref(x) - softplus_ref(-x), x, 1e-14);
		ASSERT_NEAR(softplus_ref_grad(x) + softplus_ref_grad(-x), 1.0, 1e-15);
		ASSERT(softplus_ref(x) > 0 && softplus_ref(x) >= x);
	}
	printf("ok   softplus and sigmoid identities\n");
}

/* Central difference of softplus at x, step 1e-5 max(1, x) taken as the
 * difference actually represented: the tail (x < 0, f ~ e^x) needs an
 * absolute step so that the truncation error h^2 / 6 stays relative to
 * f'; large positive x (f ~ x) a relative one so that the rounding of f
 * stays below the step. */
static double fd(double x)
{
	volatile double up = x + 1e-5 * (x > 1 ? x : 1);
	double h = up - x;

	return (softplus_ref(x + h) - softplus_ref(x - h)) / (2 * h);
}

/* dx = dy sigmoid(x) against dy times the finite difference, on rows of
 * every input profile. */
static void check_grad(uint64_t seed)
{
	enum { N = 513 };
	double x[N], dy[N], dx[N], w[N];
	struct fp_rng r;

	rng_seed(&r, seed);
	for (int p = 0; p < SP_NPROFILES; p++) {
		double worst = 0;

		for (long row = 0; row < 6; row++) {
			softplus_gen_row(x, row, N, (enum sp_profile)p, seed);
			for (int k = 0; k < N; k++)
				dy[k] = rng_normal(&r);
			softplus_ref_fwd(x, w, N);
			softplus_ref_bwd(dy, x, dx, N);
			for (int k = 0; k < N; k++) {
				double want = dy[k] * fd(x[k]);
				double err = fabs(dx[k] - want);

				ASSERT(isfinite(w[k]) && w[k] >= 0 && isfinite(dx[k]));
				if (err > 1e-7 * fabs(want) + 1e-300)
					FAIL("profile %d x=%.17g: dx %.17g, finite difference "
					     "%.17g", p, x[k], dx[k], want);
				/* subnormal f has few bits: held to the floor only */
				if (fabs(want) >= DBL_MIN && err / fabs(want) > worst)
					worst = err / fabs(want);
			}
		}
		printf("ok   grad against finite differences, profile %d: worst rel "
		       "err %.2g\n", p, worst);
	}
}

/* The backward from saved tensors (the checks' references of fused_save
 * and unfused3): with the exact e and s they give softplus_ref_bwd's dx on
 * every profile; with s stored in a dtype, dx follows the stored s to the
 * dtype's rounding of s (2^-8 relative in bf16) where s is normal, and
 * not where it is subnormal: bf16 keeps 2 bits of sigmoid(-92), so the
 * exact dx is 17 % away from what a correct kernel computes from that s
 * (why the checks start from the stored tensor). */
static void check_saved_chains(uint64_t seed)
{
	enum { N = 257 };
	double x[N], dy[N], e[N], s[N], de[N], want[N], dxs[N], dxe[N], dxt[N];
	double sr[N];
	struct fp_rng r;

	rng_seed(&r, seed ^ 0x5a5a);
	for (int p = 0; p < SP_NPROFILES; p++) {
		softplus_gen_row(x, 3, N, (enum sp_profile)p, seed);
		for (int k = 0; k < N; k++) {
			dy[k] = rng_normal(&r);
			e[k] = exp(-fabs(x[k]));
			s[k] = softplus_ref_grad(x[k]);
		}
		softplus_ref_bwd(dy, x, want, N);
		softplus_ref_bwd_s(dy, s, dxs, N);
		softplus_ref_bwd_de(dy, e, de, N);
		softplus_ref_bwd_e(dy, x, e, de, dxe, N);
		softplus_ref_bwd_xe(dy, x, e, dxt, N);
		for (int k = 0; k < N; k++) {
			ASSERT_NEAR(dxs[k], want[k], 1e-15 * fabs(want[k]) + 1e-300);
			ASSERT_NEAR(dxe[k], want[k], 1e-15 * fabs(dy[k]) + 1e-300);
			ASSERT_NEAR(dxt[k], want[k], 1e-15 * fabs(want[k]) + 1e-300);
		}
		memcpy(sr, s, sizeof s);
		host_round(sr, N, FP_BF16);
		softplus_ref_bwd_s(dy, sr, dxs, N);
		for (int k = 0; k < N; k++)
			if (s[k] >= FLT_MIN)
				ASSERT_NEAR(dxs[k], want[k], 0x1p-8 * fabs(want[k]));
	}
	x[0] = -92.0;
	dy[0] = 1.0;
	s[0] = softplus_ref_grad(x[0]);
	sr[0] = s[0];
	host_round(sr, 1, FP_BF16);
	ASSERT(sr[0] > 0 && sr[0] < FLT_MIN);
	softplus_ref_bwd_s(dy, sr, dxs, 1);
	softplus_ref_bwd(dy, x, want, 1);
	ASSERT(fabs(dxs[0] - want[0]) > 0.1 * want[0]);
	printf("ok   the backward from the saved e or s is softplus_ref_bwd's; a "
	       "subnormal bf16 s is %.0f %% off\n",
	       100 * fabs(dxs[0] - want[0]) / want[0]);
}

/* The profiles are what they say: large reaches +-1e4 (beyond double's
 * overflow of the chain), edges hits zeros and each switch point, tail
 * stays in [-40, -8]; the same row comes out the same. */
static void check_profiles(uint64_t seed)
{
	enum { N = 4096 };
	static double x[N], y[N];
	int zeros = 0, near17 = 0, near88 = 0, near104 = 0, near709 = 0, over = 0;

	softplus_gen_row(x, 2, N, SP_LARGE, seed);  /* row 2: uniform */
	for (int k = 0; k < N; k++) {
		ASSERT(fabs(x[k]) <= 1e4);
		over += isinf(softplus_ref_naive(x[k]));
	}
	ASSERT(over > N / 4);
	softplus_gen_row(x, 0, N, SP_LARGE, seed);
	for (int k = 0; k < N; k++)
		ASSERT(fabs(x[k] - 1e4) < 10);
	softplus_gen_row(x, 1, N, SP_LARGE, seed);
	for (int k = 0; k < N; k++)
		ASSERT(fabs(x[k] + 1e4) < 10);
	softplus_gen_row(x, 5, N, SP_EDGES, seed);
	for (int k = 0; k < N; k++) {
		zeros += x[k] == 0;
		near17 += fabs(fabs(x[k]) - 17) <= 0.5;
		near88 += fabs(fabs(x[k]) - 88.72) <= 0.5;
		near104 += fabs(x[k] + 103.97) <= 0.5;
		near709 += fabs(fabs(x[k]) - 709.78) <= 0.5;
	}
	ASSERT(zeros > 0 && near17 > 0 && near88 > 0 && near104 > 0 && near709 > 0);
	softplus_gen_row(x, 7, N, SP_TAIL, seed);
	for (int k = 0; k < N; k++)
		ASSERT(x[k] <= -8 && x[k] >= -40);
	softplus_gen_row(y, 7, N, SP_TAIL, seed);
	ASSERT(!memcmp(x, y, sizeof x));
	printf("ok   input profiles\n");
}

/* The model, device bytes and saved bytes of every variant by hand, in
 * tensors T of M N elements: forward x + w + (e, l | s | - | e), backward
 * x + dy + dx + (e, de | s | - | e). */
static void check_models(void)
{
	const struct workload *f = &wl_softplus_chain_fwd, *b = &wl_softplus_chain_bwd;
	/* bytes moved, device tensors, saved tensors: unfused3, fused_save,
	 * fused_recompute, fused_tape (unfused3's bytes less l's write and
	 * read, de's) */
	const double fmoved[] = { 7, 3, 2, 3 }, bmoved[] = { 8, 3, 3, 4 };
	const size_t fdev[] = { 4, 3, 2, 3 }, bdev[] = { 5, 4, 3, 4 };
	const double saved[] = { 1, 1, 0, 1 };
	struct fp_shape s, s2;
	char why[256];

	ASSERT_EQ(workload_nvariants(f), 4);
	ASSERT_EQ(workload_parse_shape(f, "M=16384,N=4096", &s, why, sizeof why), 0);
	for (int dt = 0; dt < FP_NDTYPES; dt++) {
		const double E = 16384.0 * 4096, T = E * (double)fp_dtype_size(dt);

		for (int v = 0; v < 4; v++) {
			struct fp_model mf, mb;
			size_t one;

			f->model(&s, (enum fp_dtype)dt, v, &mf);
			b->model(&s, (enum fp_dtype)dt, v, &mb);
			ASSERT_NEAR(mf.flops, 6 * E, 1e-15);
			ASSERT_NEAR(mb.flops, 6 * E, 1e-15);
			/* fp32's expf and log1pf expand into 8 + 27 FLOP where the
			 * model counts 1 each; fused_save adds its reciprocal and
			 * product (8 a element before the expansion) */
			if (dt == FP_F32)
				ASSERT_NEAR(mf.executed_flops, ((v == 1 ? 8 : 6) + 33) * E, 1e-15);
			else
				ASSERT_NEAR(mf.executed_flops, v == 1 ? 8 * E : 0, 1e-15);
			ASSERT_NEAR(mf.min_bytes, 2 * T, 1e-15);
			ASSERT_NEAR(mb.min_bytes, 3 * T, 1e-15);
			ASSERT_NEAR(mf.variant_bytes, fmoved[v] * T, 1e-15);
			ASSERT_NEAR(mb.variant_bytes, bmoved[v] * T, 1e-15);
			ASSERT_NEAR(mf.saved_bytes, saved[v] * T, 1e-15);
			/* a forward and its backward of the same name agree */
			ASSERT(mf.saved_bytes == mb.saved_bytes);
			ASSERT(mf.variant_bytes >= mf.min_bytes);
			ASSERT(mb.variant_bytes >= mb.min_bytes);
			/* T is a whole number of 512-byte blocks here: exact */
			one = f->device_bytes(&s, (enum fp_dtype)dt, v, 1);
			ASSERT_EQ(one, fdev[v] * (size_t)T);
			ASSERT_EQ(f->device_bytes(&s, (enum fp_dtype)dt, v, 3), 3 * one);
			one = b->device_bytes(&s, (enum fp_dtype)dt, v, 1);
			ASSERT_EQ(one, bdev[v] * (size_t)T);
			ASSERT_EQ(b->device_bytes(&s, (enum fp_dtype)dt, v, 2), 2 * one);
		}
	}
	/* the point of the table: fused_recompute keeps nothing and moves the
	 * fewest bytes over forward + backward; unfused3 the most */
	{
		struct fp_model m[3][2];
		double total[3];

		for (int v = 0; v < 3; v++) {
			f->model(&s, FP_BF16, v, &m[v][0]);
			b->model(&s, FP_BF16, v, &m[v][1]);
			total[v] = m[v][0].variant_bytes + m[v][1].variant_bytes;
		}
		ASSERT(total[2] < total[1] && total[1] < total[0]);
		ASSERT(m[2][0].saved_bytes == 0 && m[1][0].saved_bytes > 0);
	}
	/* small and odd: every buffer is one padded block; device bytes grow
	 * with the shape */
	ASSERT_EQ(workload_parse_shape(f, "M=3,N=5", &s, why, sizeof why), 0);
	ASSERT_EQ(f->device_bytes(&s, FP_BF16, 0, 1), 4 * 512);
	ASSERT_EQ(b->device_bytes(&s, FP_BF16, 0, 1), 5 * 512);
	ASSERT_EQ(b->device_bytes(&s, FP_F32, 2, 1), 3 * 512);
	for (long n = 1; n < 5000; n += 37) {
		for (int v = 0; v < 4; v++) {
			size_t a, c;

			s2 = s;
			s2.v[1] = n;
			a = b->device_bytes(&s2, FP_F32, v, 1);
			ASSERT(a >= (size_t)(3 * 3 * n * 4));
			s2.v[1] = n + 129;
			c = b->device_bytes(&s2, FP_F32, v, 1);
			ASSERT(c >= a);
			ASSERT(f->device_bytes(&s2, FP_F32, v, 1) < c);
		}
	}
	printf("ok   models, saved bytes, device bytes\n");
}

static void check_contract(const struct workload *w)
{
	const struct workload *f = &wl_softplus_chain_fwd, *b = &wl_softplus_chain_bwd;
	struct fp_shape s;
	struct fp_kopts ko;
	struct fp_op *op;
	char why[256];

	ASSERT(workload_find(w->name) == w);
	ASSERT_EQ(workload_nprofiles(w), SP_NPROFILES);
	ASSERT_STR_EQ(w->profiles[0], "normal");
	ASSERT_STR_EQ(w->suite, "M=16384,N=768;M=16384,N=4096");
	assert_shapes_run(w, w->suite, 2);
	assert_shapes_run(w, w->quick, 1);
	assert_shapes_run(w, w->tests, 6);
	/* the tests hold a single element, fewer than a vector, odd counts
	 * (a scalar tail) and a wide row */
	ASSERT(strstr(w->tests, "M=1,N=1;") && strstr(w->tests, "M=1,N=3;"));
	ASSERT(strstr(w->tests, "N=1023") && strstr(w->tests, "N=65537"));
	/* forward and backward take the same parameters and pair by name */
	ASSERT_EQ(workload_nparams(w), 2);
	ASSERT_STR_EQ(w->params[0].name, "M");
	ASSERT_STR_EQ(w->params[1].name, "N");
	ASSERT_EQ(workload_nvariants(f), workload_nvariants(b));
	for (int v = 0; v < workload_nvariants(f); v++) {
		ASSERT_STR_EQ(f->variants[v].name, b->variants[v].name);
		ASSERT_EQ(f->variants[v].role, b->variants[v].role);
	}
	ASSERT_EQ(workload_variant(w, "fused_save"), 1);
	ASSERT_EQ(w->variants[0].role, FP_UNFUSED);
	ASSERT(w->variants[1].role == FP_FUSED && w->variants[2].role == FP_FUSED);
	/* unfused3's twin: fused_tape, its kernels fused, keeping its e */
	ASSERT_EQ(workload_variant(w, "fused_tape"), 3);
	ASSERT_EQ(w->variants[3].role, FP_FUSED);
	ASSERT_STR_EQ(w->variants[0].twin, "fused_tape");
	for (int v = 1; v < workload_nvariants(w); v++)
		ASSERT(w->variants[v].twin == NULL);
	ASSERT_STR_EQ(f->backward, "softplus_chain_bwd");
	ASSERT(workload_find(f->backward) == b);
	ASSERT(b->backward == NULL);
	/* M and N are required and at least 1 */
	ASSERT_EQ(workload_parse_shape(w, "N=4096", &s, why, sizeof why), -1);
	ASSERT(strstr(why, "'M'"));
	ASSERT_EQ(workload_parse_shape(w, "M=0,N=4", &s, why, sizeof why), -1);
	ASSERT_EQ(workload_parse_shape(w, "M=4,N=4,erf=1", &s, why, sizeof why), -1);
	/* validate: a tensor past any GPU is refused in one line naming it */
	ASSERT_EQ(workload_parse_shape(w, "M=2147483648,N=1073741824", &s, why,
				       sizeof why), 0);
	ASSERT_EQ(w->validate(&s, FP_BF16, why, sizeof why), -1);
	ASSERT(strstr(why, "M=2147483648") && strstr(why, "bf16") && !strchr(why, '\n'));
	ASSERT_EQ(workload_parse_shape(w, "M=16384,N=4096", &s, why, sizeof why), 0);
	ASSERT_EQ(w->validate(&s, FP_F32, why, sizeof why), 0);
	ASSERT_EQ(w->validate(&s, (enum fp_dtype)FP_NDTYPES, why, sizeof why), -1);
	ASSERT(strstr(why, "fp32 or bf16"));
	/* one option, vectors a thread: auto (see check_vectors), 1, 2 or 4;
	 * a value past the list is refused before anything is allocated */
	ASSERT_EQ(workload_nkopts(w), 1);
	ASSERT_EQ(workload_kopt(w, "vectors"), 0);
	ASSERT(w->kernel != NULL);
	ASSERT_EQ(workload_parse_kopts(w, "vectors=4", &ko, why, sizeof why), 0);
	ASSERT_EQ(ko.v[0], 3);
	ASSERT_EQ(workload_parse_kopts(w, "vectors=3", &ko, why, sizeof why), -1);
	memset(&ko, 0, sizeof ko);
	ko.v[0] = 4;
	op = (struct fp_op *)&ko;
	ASSERT_EQ(w->create(&op, &s, FP_F32, 0, 1, 1, &ko), -1);
	ASSERT(op == NULL);
	printf("ok   contract %s\n", w->name);
}

/* The vectors a thread of each kernel takes, and the launcher's refusal of
 * any other count (before it looks at n or touches the GPU). */
static void check_vectors(void)
{
	const void *in[4] = { NULL, NULL, NULL, NULL };
	void *out[2] = { NULL, NULL };

	for (int d = 0; d < 2; d++) {
		const enum fp_dtype dt = d ? FP_BF16 : FP_F32;

		static const enum sp_kop all[] = { SP_K_FWD, SP_K_EXP, SP_K_LOG1P,
			SP_K_FWD_SAVE, SP_K_ADD, SP_K_BWD_RECOMPUTE, SP_K_BWD_SAVE,
			SP_K_BWD_LOG1P, SP_K_BWD_EXP };

		for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
			ASSERT_EQ(sp_vectors(all[i], dt, 0), 1);
			ASSERT_EQ(sp_vectors(all[i], dt, 2), 2);
		}
		ASSERT_EQ(sp_vectors(SP_K_BWD_EXP, dt, 4), 4);
		ASSERT_EQ(sp_vectors(SP_K_FWD, dt, 1), 1);
	}
	ASSERT_EQ(sp_launch_op(SP_K_FWD, FP_F32, 3, in, out, 0, 0), -1);
	ASSERT_EQ(sp_launch_op(SP_K_FWD, FP_BF16, 8, in, out, 0, 0), -1);
	ASSERT_EQ(sp_launch_op(SP_K_FWD, FP_F32, 4, in, out, 0, 0), 0);
	printf("ok   vectors a thread: 1 by default, as asked otherwise; 3 and 8 "
	       "refused\n");
}

int main(void)
{
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

	printf("seed %llu\n", (unsigned long long)seed);
	check_overflow();
	check_identities();
	check_grad(seed);
	check_saved_chains(seed);
	check_vectors();
	check_profiles(seed);
	check_models();
	check_contract(&wl_softplus_chain_fwd);
	check_contract(&wl_softplus_chain_bwd);
	return 0;
}
