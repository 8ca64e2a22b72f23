/* test-kernels-api.c - libfuseprof-kernels' C API without a GPU: every entry
 * point refuses bad arguments with FPK_EINVAL and a one-line message naming
 * the function and the argument, before touching CUDA; the status strings;
 * the size queries (fold, workspaces) against their formulas and
 * monotone in the shape (the forward's for decode rows as a device, or
 * none, has it: the one check that asks cudaGetDeviceCount); messages are per thread; the CPU references
 * against hand-computed values. Linked against the shared library, as a
 * user's program would be. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuseprof/kernels.h"
#include "test.h"

/* A fake device pointer, 16-byte aligned (never dereferenced: every call
 * below fails its checks first). */
static char arena[4096] __attribute__((aligned(256)));
#define P ((void *)arena)
#define Q ((void *)(arena + 256))
#define ODD ((void *)(arena + 8))

/* Status st and a message naming fn and every word of want. */
static void expect(int got, int st, const char *fn, const char *want1, const char *want2)
{
	const char *m = fpk_last_error();

	if (got != st)
		FAIL("%s: status %d, wanted %d (%s)", fn, got, st, m);
	if (strncmp(m, fn, strlen(fn)) != 0 || m[strlen(fn)] != ':')
		FAIL("%s: message '%s' does not start with '%s:'", fn, m, fn);
	if ((want1 && !strstr(m, want1)) || (want2 && !strstr(m, want2)))
		FAIL("%s: message '%s' lacks '%s' / '%s'", fn, m, want1 ? want1 : "",
		     want2 ? want2 : "");
	if (strchr(m, '\n'))
		FAIL("%s: message '%s' spans lines", fn, m);
}

static void check_status(void)
{
	ASSERT_EQ(fpk_version(), FPK_VERSION);
	ASSERT(strcmp(fpk_strerror(FPK_OK), "success") == 0);
	ASSERT(strstr(fpk_strerror(FPK_EINVAL), "invalid"));
	ASSERT(strstr(fpk_strerror(FPK_EUNSUPPORTED), "not supported"));
	ASSERT(strstr(fpk_strerror(FPK_ECUDA), "CUDA"));
	ASSERT(strstr(fpk_strerror(42), "unknown"));
	printf("ok   version %d, status strings\n", fpk_version());
}

static void check_ln_linear(void)
{
	const char *fwd = "fpk_ln_linear_fwd", *bwd = "fpk_ln_linear_bwd";
	const char *fold = "fpk_ln_linear_fold";
	size_t fb = fpk_ln_linear_folded_bytes(768, 256, FPK_BF16);

	/* W' (N rounded up to 32 rows of K bf16) and s, b' (N floats each),
	 * each padded to 512 bytes */
	ASSERT_EQ(fb, 256 * 768 * 2 + 2 * 1024);
	ASSERT_EQ(fpk_ln_linear_folded_bytes(768, 250, FPK_F32), 256 * 768 * 4 + 2 * 1024);
	/* W''s rows in room for whole 128-byte lines (lnl_row_ld) */
	ASSERT_EQ(fpk_ln_linear_folded_bytes(1000, 250, FPK_BF16), 256 * 1024 * 2 + 2 * 1024);
	ASSERT_EQ(fpk_ln_linear_folded_bytes(0, 250, FPK_F32), 0);
	ASSERT(strstr(fpk_last_error(), "K=0"));
	ASSERT_EQ(fpk_ln_linear_folded_bytes(8, 8, 7), 0);

	expect(fpk_ln_linear_fwd(P, P, Q, 0, 768, 256, FPK_F32, NULL, 0, 0), FPK_EINVAL,
	       fwd, "M=0", "at least 1");
	expect(fpk_ln_linear_fwd(P, P, Q, 16, -5, 256, FPK_F32, NULL, 0, 0), FPK_EINVAL,
	       fwd, "K=-5", NULL);
	expect(fpk_ln_linear_fwd(P, P, Q, 16, 768, 1L << 31, FPK_F32, NULL, 0, 0), FPK_EINVAL,
	       fwd, "N=2147483648", "2^31");
	expect(fpk_ln_linear_fwd(P, P, Q, 1L << 21, 1L << 20, 8, FPK_F32, NULL, 0, 0),
	       FPK_EINVAL, fwd, "x", "2^40");
	expect(fpk_ln_linear_fwd(P, P, Q, 16, 768, 256, 2, NULL, 0, 0), FPK_EINVAL, fwd,
	       "dtype=2", NULL);
	expect(fpk_ln_linear_fwd(NULL, P, Q, 16, 768, 256, FPK_F32, NULL, 0, 0), FPK_EINVAL,
	       fwd, "x is NULL", NULL);
	expect(fpk_ln_linear_fwd(P, ODD, Q, 16, 768, 256, FPK_F32, NULL, 0, 0), FPK_EINVAL,
	       fwd, "folded", "16-byte");
	expect(fpk_ln_linear_fwd(P, P, NULL, 16, 768, 256, FPK_F32, NULL, 0, 0), FPK_EINVAL,
	       fwd, "y is NULL", NULL);
	/* the bf16 statistics pass needs 3 M floats from K = 2048 on; rows
	 * too many for split-K's partials (M > K es / 16) on any device; bf16
	 * from 17 to LNL_XT_MAX_M rows, the x~ kernel's x~ and statistics
	 * (fp32 at 128 x 768 could take partials on a device: K es / 8 M = 3) */
	ASSERT_EQ(fpk_ln_linear_fwd_workspace(128, 768, 256, FPK_BF16),
		  3 * 128 * 4 + 128 * 768 * 2);
	ASSERT_EQ(fpk_ln_linear_fwd_workspace(2048, 4096, 256, FPK_F32), 0);
	ASSERT_EQ(fpk_ln_linear_fwd_workspace(1100, 4096, 256, FPK_BF16), 13312);
	expect(fpk_ln_linear_fwd(P, P, Q, 1100, 4096, 256, FPK_BF16, P, 13000, 0), FPK_EINVAL,
	       fwd, "workspace_bytes=13000", "13312");
	expect(fpk_ln_linear_fwd(P, P, Q, 1100, 4096, 256, FPK_BF16, NULL, 13312, 0),
	       FPK_EINVAL, fwd, "workspace is NULL", NULL);
	/* decode rows: the statistics (512 bytes), and on a device the
	 * split-K partials of the slices its plan takes, which depend on its
	 * SMs (none on 132, an H100's or H200's, at this shape; the plan is
	 * internal to the library, out of this test's reach): where there
	 * are some, s >= 2 slices of 1 x 2050 floats, padded. Without a
	 * device, none. Either way a byte less is refused before anything
	 * runs. */
	{
		size_t w = fpk_ln_linear_fwd_workspace(1, 2048, 2048, FPK_BF16);
		char want[64];
		int ndev = 0;

		if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
			ASSERT_EQ(w, 512);
		ASSERT(w >= 512);
		if (w > 512) {
			size_t p = 0;

			for (int s = 2; 512 + p < w; s++)
				p = ((size_t)s * 2050 * 4 + 511) & ~(size_t)511;
			if (512 + p != w)
				FAIL("workspace %zu: 512 bytes and no whole slices' partials", w);
		}
		snprintf(want, sizeof want, "workspace_bytes=%zu", w - 1);
		expect(fpk_ln_linear_fwd(P, P, Q, 1, 2048, 2048, FPK_BF16, P, w - 1, 0),
		       FPK_EINVAL, fwd, want, NULL);
	}

	expect(fpk_ln_linear_fold(P, P, P, P, 768, 256, FPK_BF16, Q, fb - 1, 0), FPK_EINVAL,
	       fold, "folded_bytes", NULL);
	expect(fpk_ln_linear_fold(P, NULL, P, P, 768, 256, FPK_BF16, Q, fb, 0), FPK_EINVAL,
	       fold, "beta is NULL", NULL);
	expect(fpk_ln_linear_fold(P, P, P, ODD, 768, 256, FPK_BF16, Q, fb, 0), FPK_EINVAL,
	       fold, "b=", "aligned");

	{
		size_t a = fpk_ln_linear_bwd_workspace(128, 768, 256, FPK_F32);
		size_t b = fpk_ln_linear_bwd_workspace(256, 768, 256, FPK_F32);
		size_t c = fpk_ln_linear_bwd_workspace(256, 768, 256, FPK_BF16);

		/* at least h and dh (M x K each) beside cuBLASLt's 32 MiB */
		ASSERT(a >= 2 * 128 * 768 * 4 + (32u << 20));
		ASSERT(b > a && c < b);
		expect(fpk_ln_linear_bwd(P, P, P, P, P, Q, Q, Q, Q, Q, 128, 768, 256, FPK_F32,
					 P, a - 1, 0), FPK_EINVAL, bwd, "workspace_bytes", NULL);
		expect(fpk_ln_linear_bwd(P, P, P, P, P, Q, Q, NULL, Q, Q, 128, 768, 256, FPK_F32,
					 P, a, 0), FPK_EINVAL, bwd, "dbeta is NULL", NULL);
		expect(fpk_ln_linear_bwd(P, P, P, P, P, Q, Q, Q, Q, Q, 128, 0, 256, FPK_F32,
					 P, a, 0), FPK_EINVAL, bwd, "K=0", NULL);
	}
	printf("ok   LayerNorm+Linear: sizes, every argument check\n");
}

static void check_rows(void)
{
	const char *gf = "fpk_ln_gelu_fwd", *gb = "fpk_ln_gelu_bwd";
	const char *sf = "fpk_softmax_fwd", *sb = "fpk_softmax_bwd";
	size_t w1 = fpk_ln_gelu_bwd_workspace(64, 768, FPK_F32);
	size_t w2 = fpk_ln_gelu_bwd_workspace(100000, 768, FPK_F32);

	/* dgamma, dbeta (2 N) and at least one partial row of 2 N floats */
	ASSERT(w1 >= 2 * 768 * 4 + 2 * 768 * 4);
	ASSERT(w2 >= w1);
	ASSERT_EQ(fpk_ln_gelu_bwd_workspace(64, 0, FPK_F32), 0);
	expect(fpk_ln_gelu_fwd(P, P, P, Q, 64, 768, 2, FPK_F32, 0), FPK_EINVAL, gf, "erf=2",
	       NULL);
	expect(fpk_ln_gelu_fwd(P, NULL, P, Q, 64, 768, 0, FPK_F32, 0), FPK_EINVAL, gf,
	       "gamma is NULL", NULL);
	expect(fpk_ln_gelu_fwd(P, P, P, Q, 64, 768, 0, -1, 0), FPK_EINVAL, gf, "dtype=-1",
	       NULL);
	expect(fpk_ln_gelu_bwd(P, P, P, P, Q, Q, Q, 64, 768, 0, FPK_F32, P, w1 - 1, 0),
	       FPK_EINVAL, gb, "workspace_bytes", NULL);
	expect(fpk_ln_gelu_bwd(P, P, P, P, Q, Q, Q, 64, 768, 0, FPK_F32, NULL, w1, 0),
	       FPK_EINVAL, gb, "workspace is NULL", NULL);
	expect(fpk_ln_gelu_bwd(P, ODD, P, P, Q, Q, Q, 64, 768, 0, FPK_F32, P, w1, 0),
	       FPK_EINVAL, gb, "x=", "aligned");
	expect(fpk_softmax_fwd(P, Q, 64, 0, 1.0f, 0, FPK_F32, 0), FPK_EINVAL, sf, "N=0", NULL);
	expect(fpk_softmax_fwd(P, Q, 64, 64, -1.0f, 0, FPK_F32, 0), FPK_EINVAL, sf,
	       "scale=-1", NULL);
	expect(fpk_softmax_fwd(P, Q, 64, 64, 1.0f / 0.0f, 0, FPK_F32, 0), FPK_EINVAL, sf,
	       "scale=inf", NULL);
	expect(fpk_softmax_fwd(P, Q, 100, 64, 1.0f, 1, FPK_F32, 0), FPK_EINVAL, sf,
	       "causal", "multiple");
	expect(fpk_softmax_fwd(P, Q, 64, 64, 1.0f, 2, FPK_F32, 0), FPK_EINVAL, sf,
	       "causal=2", NULL);
	expect(fpk_softmax_bwd(P, NULL, Q, 64, 64, FPK_BF16, 0), FPK_EINVAL, sb,
	       "dy is NULL", NULL);
	expect(fpk_rmsnorm_fwd(P, NULL, Q, 64, 768, FPK_F32, 0), FPK_EINVAL, "fpk_rmsnorm_fwd",
	       "gamma is NULL", NULL);
	w1 = fpk_rmsnorm_bwd_workspace(64, 768, FPK_BF16);
	ASSERT(w1 >= 768 * 4);
	ASSERT_EQ(fpk_rmsnorm_bwd_workspace(0, 768, FPK_BF16), 0);
	expect(fpk_rmsnorm_bwd(P, P, P, Q, Q, 64, 768, FPK_BF16, P, w1 - 1, 0), FPK_EINVAL,
	       "fpk_rmsnorm_bwd", "workspace_bytes", NULL);
	expect(fpk_swiglu_fwd(P, Q, 64, 1L << 31, FPK_F32, 0), FPK_EINVAL, "fpk_swiglu_fwd",
	       "N=2147483648", NULL);
	expect(fpk_swiglu_bwd(P, ODD, Q, 64, 64, FPK_F32, 0), FPK_EINVAL, "fpk_swiglu_bwd",
	       "xp=", "aligned");
	expect(fpk_softplus_fwd(P, Q, 0, FPK_F32, 0), FPK_EINVAL, "fpk_softplus_fwd", "n=0",
	       NULL);
	expect(fpk_softplus_bwd(P, P, NULL, 10, FPK_BF16, 0), FPK_EINVAL, "fpk_softplus_bwd",
	       "dx is NULL", NULL);
	/* one bit an element, in 32-bit words */
	ASSERT_EQ(fpk_bias_relu_mask_bytes(3, 11), 8);
	ASSERT_EQ(fpk_bias_relu_mask_bytes(16384, 4096), 16384L * 4096 / 8);
	expect(fpk_bias_relu_fwd(P, P, Q, NULL, 64, 64, FPK_F32, 0), FPK_EINVAL,
	       "fpk_bias_relu_fwd", "mask is NULL", NULL);
	w1 = fpk_bias_relu_bwd_workspace(16384, 4096, FPK_F32);
	ASSERT(w1 >= 4096 * 4);
	expect(fpk_bias_relu_bwd(P, P, Q, Q, 16384, 4096, FPK_F32, P, w1 - 1, 0), FPK_EINVAL,
	       "fpk_bias_relu_bwd", "workspace_bytes", NULL);
	expect(fpk_bias_dropout_add_fwd(P, P, P, Q, 64, 64, 1.0f, 7, FPK_F32, 0), FPK_EINVAL,
	       "fpk_bias_dropout_add_fwd", "p=1", "[0, 1)");
	expect(fpk_bias_dropout_add_fwd(P, P, NULL, Q, 64, 64, 0.1f, 7, FPK_F32, 0),
	       FPK_EINVAL, "fpk_bias_dropout_add_fwd", "residual is NULL", NULL);
	w1 = fpk_bias_dropout_add_bwd_workspace(64, 64, FPK_BF16);
	expect(fpk_bias_dropout_add_bwd(P, Q, Q, 64, 64, -0.5f, 7, FPK_BF16, P, w1, 0),
	       FPK_EINVAL, "fpk_bias_dropout_add_bwd", "p=-0.5", NULL);
	printf("ok   LayerNorm+GELU, softmax, RMSNorm, SwiGLU, softplus, bias+ReLU, "
	       "bias+dropout+residual: sizes, argument checks\n");
}

/* The references: one row of K = 2, x = (1, 3): mean 2, var 1, rstd =
 * 1/sqrt(1 + 1e-5); with gamma = (1, 1), beta = 0, h = (-r, r); W = I, b =
 * (0.5, -0.5): y = (0.5 - r, r - 0.5). The backward of dy = (1, 0): db =
 * dy, dW = dy^T h. */
static void check_refs(void)
{
	const double x[2] = { 1, 3 }, g[2] = { 1, 1 }, be[2] = { 0, 0 };
	const double W[4] = { 1, 0, 0, 1 }, b[2] = { 0.5, -0.5 }, dy[2] = { 1, 0 };
	const double r = 1 / sqrt(1 + 1e-5);
	double y[2], dx[2], dg[2], dbe[2], dW[4], db[2];

	ASSERT_EQ(fpk_ref_ln_linear_fwd(x, g, be, W, b, y, 1, 2, 2), FPK_OK);
	ASSERT_NEAR(y[0], 0.5 - r, 1e-12);
	ASSERT_NEAR(y[1], r - 0.5, 1e-12);
	ASSERT_EQ(fpk_ref_ln_linear_bwd(x, g, be, W, dy, dx, dg, dbe, dW, db, 1, 2, 2), FPK_OK);
	ASSERT_NEAR(db[0], 1, 1e-12);
	ASSERT_NEAR(db[1], 0, 1e-12);
	ASSERT_NEAR(dW[0], -r, 1e-12);
	ASSERT_NEAR(dW[1], r, 1e-12);
	ASSERT_NEAR(dW[2], 0, 1e-12);
	ASSERT_NEAR(dbe[0], 1, 1e-12);
	ASSERT_NEAR(dg[0], -r, 1e-12);
	/* LayerNorm's gradient sums to zero over the row */
	ASSERT_NEAR(dx[0] + dx[1], 0, 1e-12);
	expect(fpk_ref_ln_linear_fwd(x, g, be, NULL, b, y, 1, 2, 2), FPK_EINVAL,
	       "fpk_ref_ln_linear_fwd", "W is NULL", NULL);
	printf("ok   the CPU references: y = (%.6f, %.6f)\n", y[0], y[1]);
}

/* A failure on one thread leaves another thread's message alone. */
static void *other_thread(void *arg)
{
	(void)arg;
	if (fpk_last_error()[0] != '\0')
		return (void *)1;
	if (fpk_softmax_bwd(P, P, NULL, 4, 4, FPK_F32, 0) != FPK_EINVAL)
		return (void *)1;
	return strstr(fpk_last_error(), "dx is NULL") ? NULL : (void *)1;
}

static void check_threads(void)
{
	pthread_t t;
	void *rv;

	ASSERT_EQ(fpk_ln_gelu_fwd(P, P, P, Q, 0, 8, 0, FPK_F32, 0), FPK_EINVAL);
	ASSERT(pthread_create(&t, NULL, other_thread, NULL) == 0);
	ASSERT(pthread_join(t, &rv) == 0);
	ASSERT(rv == NULL);
	ASSERT(strstr(fpk_last_error(), "fpk_ln_gelu_fwd: M=0"));
	printf("ok   messages are per thread\n");
}

int main(void)
{
	check_status();
	check_ln_linear();
	check_rows();
	check_refs();
	check_threads();
	return 0;
}
