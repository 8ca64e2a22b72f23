// workload.cu - the attention + residual + LayerNorm workload's contract
// (attn_res_ln_fwd): y = LayerNorm(x + Attention(Q, K, V); gamma, beta),
// unfused, flash_then_ln and fused, fp32 and bf16 (bf16 storage, fp32
// math): the unfused chain's cuBLAS plumbing, shapes, napkin math, the
// kernel option, the instances' lifecycle and the check.
//
// The room: arl.h and ref.c (the CPU reference and the inputs), flash.cuh
// (the flash loop), kernels.cu (the kernels and launchers), then this file.
//
// Napkin math, with E = B S H D (the elements of Q, of x, of y), N = H D,
// K' = the keys the queries see in all (arl_keys_total: S(S+1)/2 causal,
// S^2 not) and es = 4 fp32 / 2 bf16:
//   FLOP      4 B H D K' (Q K^T and P V, an FMA 2) + 5 B H K' (scale, max,
//             exp, sum, normalise a kept score; exp counts 1) + 9 E (the
//             residual add 1, then LayerNorm's two-pass statistics: sum 1,
//             centre 1, square-accumulate 2; the output: centre 1, times
//             rstd 1, gamma and beta as an FMA 2)
//   min bytes es (5 E + 2 N): Q, K, V, x read, y written, gamma and beta
//   unfused   + the scores: written by the first GEMM (B H S^2), the kept
//             ones read by the softmax, which writes B H S^2 probabilities
//             back that the second GEMM reads; the attention output o
//             (written, read by the residual add) and the residual sum r
//             (written, read by the LayerNorm): es (9 E + 3 B H S^2 + B H K'
//             + 2 N)
//   flash_then_ln  + o written by the flash kernel and read by the
//             residual+LayerNorm kernel: es (7 E + 2 N)
//   fused     the minimum
// K and V are read by every query tile of their head (S / 64 times), from
// L2: a head's K and V are 2 S D es bytes (256 KB at S = 1024 bf16).
// At GPT-2 small (B 16, H 12, S 1024, causal) bf16: 26.4 GFLOP (25.8 the
// two GEMMs); 126 MB minimum, 1.64 GB unfused (13x), 176 MB flash_then_ln.
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "error.h"
#include "checkref.h"
#include "kutil.h"
#include "layernorm/layernorm.h"
#include "par.h"
#include "attn_res_ln/internal.h"
#include "util.h"

enum { V_UNFUSED, V_FLASH, V_FUSED, ARL_NVARIANTS };
enum { P_B, P_H, P_S, P_D, P_CAUSAL };

// cuBLAS's workspace, one a set (a launch writes it): what cuBLAS asks for
// on Hopper.
#define ARL_WORKSPACE_BYTES (32u << 20)
#define ARL_TOL_FP32 1e-5
#define ARL_TOL_BF16 1e-2

// Bytes of one set's buffers (each as dev_pad counts it): the inputs, and
// what a launch writes.
struct arl_sizes {
	size_t qkv, x, par;           // each of Q, K, V; x; each of gamma, beta
	size_t y, scores, o, r, ws;   // written
	size_t in_set, wset;
};

static void sizes(const struct fp_shape *s, enum fp_dtype dt, int variant,
		  struct arl_sizes *z)
{
	const size_t es = fp_dtype_size(dt), B = (size_t)s->v[P_B], H = (size_t)s->v[P_H];
	const size_t S = (size_t)s->v[P_S], D = (size_t)s->v[P_D], E = B * S * H * D;

	memset(z, 0, sizeof *z);
	z->qkv = dev_pad(E * es);
	z->x = dev_pad(E * es);
	z->par = dev_pad(H * D * es);
	z->y = dev_pad(E * es);
	if (variant == V_UNFUSED) {
		z->scores = dev_pad(B * H * S * S * es);
		z->o = dev_pad(E * es);
		z->r = dev_pad(E * es);
		z->ws = dev_pad(ARL_WORKSPACE_BYTES);
	} else if (variant == V_FLASH) {
		z->o = dev_pad(E * es);
	}
	z->in_set = 3 * z->qkv + z->x + 2 * z->par;
	z->wset = z->y + z->scores + z->o + z->r + z->ws;
}

// An instance (struct fp_op is opaque to the run loop).
struct fp_op {
	enum fp_dtype dt;
	int variant, nsets, causal, cluster;
	int heads, hpc;                // clusters=heads: that path, heads a CTA
	int resident;                  // fused: clusters the device holds at once
	long B, H, S, D;
	struct fp_kopts ko;
	struct arl_sizes z;
	char *in, *wbuf;               // nsets * z.in_set, nsets * z.wset
	// Set 0's buffers, carved out of in and wbuf; set s's lie s * in_set
	// (inputs) or s * wset (written) further on.
	void *Q, *K, *V, *x, *gamma, *beta;
	void *y, *scores, *o, *r, *ws;
	cublasHandle_t cb;             // unfused only
};

static int cublas_fail(const char *what, cublasStatus_t s)
{
	return error("cuBLAS %s failed: %s", what, cublasGetStatusString(s));
}

#define CB_CHECK(call) do { \
	cublasStatus_t s_ = (call); \
	if (s_ != CUBLAS_STATUS_SUCCESS) \
		return cublas_fail(#call, s_); \
} while (0)

// The unfused chain on set `set`: per head, in cuBLAS's column-major view
// of the row-major tensors,
//   scores^T (S keys x S queries) = K (as D x S, transposed) . Q (D x S)
//   o^T (D x S)                   = V (D x S) . P^T (S x S)
// both strided-batched over the B H heads, o in [B, H, S, D]; then the
// scaled masked softmax in place, the residual add reading o across heads,
// and the LayerNorm module's forward. fp32 multiplies as SGEMM (compute
// 32F, default math: no TF32); bf16 on tensor cores with fp32
// accumulation, the scores stored as bf16 (as eager PyTorch's math path).
static int unfused_launch(struct fp_op *op, const void *Q, const void *K,
			  const void *V, const void *x, const void *gamma,
			  const void *beta, void *y, void *scores, void *o, void *r,
			  void *ws, cudaStream_t st)
{
	const cudaDataType_t ty = op->dt == FP_BF16 ? CUDA_R_16BF : CUDA_R_32F;
	const long S = op->S, D = op->D, BH = op->B * op->H;
	const float one = 1.f, zero = 0.f;

	CB_CHECK(cublasSetStream(op->cb, st));
	CB_CHECK(cublasSetWorkspace(op->cb, ws, ARL_WORKSPACE_BYTES));
	CB_CHECK(cublasGemmStridedBatchedEx(op->cb, CUBLAS_OP_T, CUBLAS_OP_N, (int)S, (int)S,
					    (int)D, &one, K, ty, (int)D, S * D, Q, ty,
					    (int)D, S * D, &zero, scores, ty, (int)S, S * S,
					    (int)BH, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	if (arl_softmax(op->dt, scores, BH * S, (int)S, op->causal,
			(float)(1.0 / sqrt((double)D)), st))
		return -1;
	CB_CHECK(cublasGemmStridedBatchedEx(op->cb, CUBLAS_OP_N, CUBLAS_OP_N, (int)D, (int)S,
					    (int)S, &one, V, ty, (int)D, S * D, scores, ty,
					    (int)S, S * S, &zero, o, ty, (int)D, S * D,
					    (int)BH, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
	if (arl_residual_add(op->dt, x, o, r, op->B, op->H, S, D, st))
		return -1;
	return layernorm_fwd(op->dt, r, gamma, beta, y, NULL, op->B * S, op->H * D, st);
}

static int arl_launch(struct fp_op *op, int set, cudaStream_t st)
{
	const size_t ioff = (size_t)set * op->z.in_set, woff = (size_t)set * op->z.wset;
	const void *Q = dev_in_set(op->Q, ioff), *K = dev_in_set(op->K, ioff);
	const void *V = dev_in_set(op->V, ioff), *x = dev_in_set(op->x, ioff);
	const void *gamma = dev_in_set(op->gamma, ioff), *beta = dev_in_set(op->beta, ioff);
	void *y = dev_in_set(op->y, woff), *o = dev_in_set(op->o, woff);

	if (set < 0 || set >= op->nsets)
		return error("attn_res_ln: set %d out of range [0, %d)", set, op->nsets);
	switch (op->variant) {
	case V_UNFUSED:
		return unfused_launch(op, Q, K, V, x, gamma, beta, y,
				      dev_in_set(op->scores, woff), o,
				      dev_in_set(op->r, woff), dev_in_set(op->ws, woff), st);
	case V_FLASH:
		if (arl_flash(op->dt, op->causal, Q, K, V, o, op->B, op->H, op->S, st))
			return -1;
		return arl_res_ln(op->dt, x, o, gamma, beta, y, op->B * op->S,
				  op->H * op->D, st);
	default:
		if (op->heads)
			return arl_fused_heads(op->dt, op->causal, Q, K, V, x, gamma, beta, y,
					       op->B, op->H, op->S, op->hpc, st);
		return arl_fused(op->dt, op->causal, Q, K, V, x, gamma, beta, y, op->B,
				 op->H, op->S, op->cluster, st);
	}
}

// The one kernel option: the fused kernel's cluster size, or its
// clusters=heads path (k_fused_heads: a CTA a head, as the flash kernel).
static const char *const cluster_values[] = { "auto", "1", "2", "4", "8", "heads", "heads2",
					       "heads3", NULL };
#define CLUSTERS_HEADS 5  // cluster_values' index of "heads" (heads2, heads3 follow)
static const struct fp_kopt arl_kopts[] = {
	{ "clusters", cluster_values,
	  "fused: heads: a CTA a head with the flash kernel's loop and "
	  "occupancy, outputs in registers, clusters of ceil(H/ceil(H/16)) CTAs "
	  "(1.3-3.7x faster than the kernel splitting the heads, at every suite "
	  "shape, both dtypes, on an H200); heads2: the same kernel with two heads "
	  "a CTA, clusters of ceil(H/2) (bf16: the first head's outputs wait in "
	  "shared memory); heads3: three, clusters of ceil(H/3), the first two "
	  "heads' outputs waiting in shared memory (bf16 rounded, fp32 as they "
	  "are); auto: heads2 or heads3 by a cost model over the "
	  "clusters the device holds at once (the kernel line says which); 1, 2, "
	  "4, 8: the kernel splitting the "
	  "heads, with as many "
	  "CTAs a cluster splitting the heads (a value that cannot hold H at 4 "
	  "heads a CTA is raised to ceil(H/4))", "4,heads,heads3" },
	{ NULL, NULL, NULL, NULL },
};

static int asked_cluster(const struct fp_kopts *ko)
{
	return ko && ko->v[0] && ko->v[0] < CLUSTERS_HEADS ? atoi(cluster_values[ko->v[0]]) : 0;
}

static void arl_kernel(const struct fp_op *op, char *buf, size_t n)
{
	const int ask = asked_cluster(&op->ko);
	const long hpc = op->heads ? op->hpc : (op->H + op->cluster - 1) / op->cluster;
	const char *mma = op->dt == FP_BF16 ? "mma.sync bf16" : "3xTF32 mma.sync";

	buf[0] = '\0';
	if (op->variant == V_FUSED && op->heads) {
		snprintf(buf, n, "%s, the flash kernel's loop a head at a time, clusters of %d "
			 "CTA%s, %ld head%s a CTA, statistics through DSMEM, %d clusters "
			 "resident", mma, op->cluster, op->cluster > 1 ? "s" : "", hpc,
			 hpc > 1 ? "s" : "", op->resident);
	} else if (op->variant == V_FLASH) {
		snprintf(buf, n, "flash: %s, 64 x 64 tiles; residual+LayerNorm a row a block", mma);
	} else if (op->variant == V_FUSED) {
		int len = snprintf(buf, n, "%s, clusters of %d CTA%s, %ld head%s a CTA, "
				   "%d clusters resident", mma, op->cluster,
				   op->cluster > 1 ? "s" : "", hpc, hpc > 1 ? "s" : "", op->resident);

		if (ask && ask != op->cluster && len >= 0 && (size_t)len < n)
			snprintf(buf + len, n - (size_t)len, " (asked %d)", ask);
	}
}

#define ARL_MAX_ROWS ((long)INT_MAX)  // the softmax's grid: a block a row of scores

static int arl_validate(const struct fp_shape *s, enum fp_dtype dt, char *why,
			size_t n)
{
	const long B = s->v[P_B], H = s->v[P_H], S = s->v[P_S], D = s->v[P_D];

	if (dt != FP_F32 && dt != FP_BF16)
		snprintf(why, n, "dtype %d is not supported (fp32, bf16)", (int)dt);
	else if (B < 1 || H < 1 || S < 1 || D < 1)
		snprintf(why, n, "B, H, S and D must be at least 1");
	else if (D != ARL_FLASH_D)
		snprintf(why, n, "D=%ld: flash_then_ln and fused are built for a head dimension "
			 "of %d (the unfused chain alone takes D <= 256)", D, ARL_FLASH_D);
	else if (H > ARL_MAX_HEADS)
		snprintf(why, n, "fused: H*D=%ld exceeds the fused kernel's on-chip tile limit "
			 "of %d (H <= %d at D=%d: clusters of up to %d CTAs, each holding %d "
			 "heads' outputs for %d query rows in shared memory; clusters=heads: "
			 "%d CTAs of 2 heads in registers)", H * D,
			 ARL_MAX_HEADS * ARL_FLASH_D, ARL_MAX_HEADS, ARL_FLASH_D,
			 ARL_MAX_CLUSTER, ARL_MAX_HEADS_CTA, ARL_BQ, ARL_HEADS_CLUSTER);
	else if (B * H * S > ARL_MAX_ROWS)
		snprintf(why, n, "B*H*S=%ld: unfused: the softmax takes a block a row of "
			 "scores, at most %ld rows", B * H * S, ARL_MAX_ROWS);
	else
		return 0;
	return -1;
}

static size_t arl_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	struct arl_sizes z;

	sizes(s, dt, variant, &z);
	return (size_t)nsets * (z.in_set + z.wset);
}

// Key tiles the flash and fused kernels multiply in all for one head:
// every query tile's (fl_key_tiles), each 64 x 64 scores.
static double key_tiles(long S, int causal)
{
	const long ntq = (S + ARL_BQ - 1) / ARL_BQ, all = (S + ARL_BK - 1) / ARL_BK;
	double t = 0;

	for (long q = 0; q < ntq; q++)
		t += causal ? (q + 1 < all ? q + 1 : all) : all;
	return t;
}

static void arl_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	const double B = (double)s->v[P_B], H = (double)s->v[P_H], S = (double)s->v[P_S];
	const double D = (double)s->v[P_D], es = (double)fp_dtype_size(dt);
	const double E = B * S * H * D, N = H * D, SS = B * H * S * S;
	const double kept = B * H * arl_keys_total(s->v[P_S], (int)s->v[P_CAUSAL]);
	const double rest = 9 * E;  // residual add and LayerNorm

	memset(m, 0, sizeof *m);
	m->flops = 4 * D * kept + 5 * kept + rest;
	m->min_bytes = es * (5 * E + 2 * N);
	m->saved_bytes = 0;  // no backward workload
	switch (variant) {
	case V_UNFUSED:
		m->variant_bytes = es * (9 * E + 3 * SS + kept + 2 * N);
		// The GEMMs multiply the whole square; the softmax only the kept.
		m->executed_flops = 4 * D * SS + 5 * kept + rest;
		break;
	case V_FLASH:
		m->variant_bytes = es * (7 * E + 2 * N);
		break;
	default:
		m->variant_bytes = m->min_bytes;
		break;
	}
	if (variant != V_UNFUSED) {
		// Whole 64 x 64 tiles, padding rows and masked keys included;
		// fp32's Q K^T and P V run as 3xTF32 (flash.cuh): three tensor
		// products for each of theirs.
		const double sc = B * H * key_tiles(s->v[P_S], (int)s->v[P_CAUSAL]) *
				  ARL_BQ * ARL_BK;

		m->executed_flops = (dt == FP_F32 ? 3 : 1) * 4 * D * sc + 5 * sc + rest;
	}
}

static void arl_destroy(struct fp_op *op)
{
	if (!op)
		return;
	if (op->cb)
		cublasDestroy(op->cb);
	cudaFree(op->in);
	cudaFree(op->wbuf);
	free(op);
}

static int arl_create(struct fp_op **out, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	struct fp_op *op;
	char why[256], *cur;
	size_t E, N;
	int want;

	*out = NULL;
	if (arl_validate(s, dt, why, sizeof why))
		return error("attn_res_ln_fwd: %s", why);
	if (nsets < 1 || variant < 0 || variant >= ARL_NVARIANTS)
		return error("attn_res_ln_fwd: bad instance (variant %d, %d input sets)",
			     variant, nsets);
	if (ko && ko->v[0] >= sizeof cluster_values / sizeof *cluster_values - 1)
		return error("attn_res_ln_fwd: kernel option clusters: no value %d", ko->v[0]);
	op = (struct fp_op *)xcalloc(1, sizeof *op);
	if (ko)
		op->ko = *ko;
	op->dt = dt;
	op->variant = variant;
	op->nsets = nsets;
	op->B = s->v[P_B];
	op->H = s->v[P_H];
	op->S = s->v[P_S];
	op->D = s->v[P_D];
	op->causal = (int)s->v[P_CAUSAL];
	op->heads = !ko || ko->v[0] == 0 || ko->v[0] >= CLUSTERS_HEADS;
	op->hpc = 1;
	want = !ko || ko->v[0] == 0 ? 0 : ko->v[0] - CLUSTERS_HEADS + 1;
	if (variant == V_FUSED && op->heads && want == 0 &&
	    arl_heads_auto(dt, op->causal, op->B, op->H, op->S, &want))
		goto out_free;
	op->cluster = op->heads ? arl_heads_cluster(op->H, want, &op->hpc)
				: arl_fused_cluster(op->H, asked_cluster(ko));
	sizes(s, dt, variant, &op->z);
	E = (size_t)(op->B * op->S * op->H * op->D);
	N = (size_t)(op->H * op->D);

	if (variant == V_UNFUSED) {
		cublasStatus_t st = cublasCreate(&op->cb);

		if (st != CUBLAS_STATUS_SUCCESS) {
			op->cb = NULL;
			cublas_fail("cublasCreate", st);
			goto out_free;
		}
		// Default math: fp32 GEMMs stay SGEMM (no TF32).
		if ((st = cublasSetMathMode(op->cb, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS) {
			cublas_fail("cublasSetMathMode", st);
			goto out_free;
		}
	} else if (arl_prepare() ||
		   (variant == V_FUSED &&
		    arl_fused_fits(dt, op->causal, op->H, op->heads ? op->hpc : 0, op->cluster,
				   &op->resident))) {
		goto out_free;
	}
	if (dev_alloc(&op->in, (size_t)nsets * op->z.in_set) ||
	    dev_alloc(&op->wbuf, (size_t)nsets * op->z.wset))
		goto out_free;
	cur = op->in;  // set 0's inputs, in arl_sizes' order
	op->Q = dev_carve(&cur, op->z.qkv);
	op->K = dev_carve(&cur, op->z.qkv);
	op->V = dev_carve(&cur, op->z.qkv);
	op->x = dev_carve(&cur, op->z.x);
	op->gamma = dev_carve(&cur, op->z.par);
	op->beta = dev_carve(&cur, op->z.par);
	cur = op->wbuf;
	op->y = dev_carve(&cur, op->z.y);
	op->scores = dev_carve(&cur, op->z.scores);
	op->o = dev_carve(&cur, op->z.o);
	op->r = dev_carve(&cur, op->z.r);
	op->ws = dev_carve(&cur, op->z.ws);

	// Profile-0 inputs for timing, drawn on the device.
	for (int i = 0; i < nsets; i++) {
		const size_t off = (size_t)i * op->z.in_set;
		const uint64_t sd = splitmix64(seed + 0x100 * (uint64_t)i);

		if (dev_fill_normal(dev_in_set(op->Q, off), dt, E, sd, 0.f, 1.f, 0) ||
		    dev_fill_normal(dev_in_set(op->K, off), dt, E, splitmix64(sd + 1), 0.f, 1.f, 0) ||
		    dev_fill_normal(dev_in_set(op->V, off), dt, E, splitmix64(sd + 2), 0.f, 1.f, 0) ||
		    dev_fill_normal(dev_in_set(op->x, off), dt, E, splitmix64(sd + 3), 0.f, 1.f, 0) ||
		    dev_fill_normal(dev_in_set(op->gamma, off), dt, N, splitmix64(sd + 4), 1.f, 0.5f, 0) ||
		    dev_fill_normal(dev_in_set(op->beta, off), dt, N, splitmix64(sd + 5), 0.f, 0.5f, 0))
			goto out_free;
	}
	if (CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	*out = op;
	return 0;

out_free:
	arl_destroy(op);
	return -1;
}

// The check. What one case computes on the CPU is kept in the reference
// cache (checkref.h) under shape, dtype, profile and seed: the inputs as
// the device holds them and the reference of the compared rows, so the
// other variants of the case, checked on the same seed, only upload, run
// and compare.
struct arl_ref {
	char *Q, *K, *V, *x;    // as dt's bytes
	double *gamma, *beta;   // N each, rounded to dt
	long nrows;             // rows of y compared (b S + s), all unless large
	long *rows;
	double *o;              // nrows x N: the attention output of rows[i]
	double *ref;            // nrows x N: y of rows[i]
};

static void arl_ref_free(void *p)
{
	struct arl_ref *e = (struct arl_ref *)p;

	free(e->Q);
	free(e->K);
	free(e->V);
	free(e->x);
	free(e->gamma);
	free(e->beta);
	free(e->rows);
	free(e->o);
	free(e->ref);
	free(e);
}

struct arl_job {
	const struct fp_op *op;
	struct arl_ref *e;
	enum arl_profile p;
	uint64_t seed;
};

// Heads [lo, hi) (b H + h) of the inputs: K, then V, then Q (which under
// the large profile aims at rows of K), each row drawn, rounded, stored.
static void gen_heads(size_t lo, size_t hi, void *arg)
{
	const struct arl_job *j = (const struct arl_job *)arg;
	const long S = j->op->S, D = j->op->D;
	const size_t es = fp_dtype_size(j->op->dt), hsz = (size_t)S * D;
	double *kk = (double *)xmalloc(hsz * sizeof *kk), *v = (double *)xmalloc(D * sizeof *v);

	for (size_t bh = lo; bh < hi; bh++) {
		for (long s = 0; s < S; s++) {
			const long row = (long)bh * S + s;

			arl_gen_row(kk + s * D, D, ARL_K, row, j->p, j->op->dt, j->seed, NULL, S,
				    j->op->causal);
			arl_gen_row(v, D, ARL_V, row, j->p, j->op->dt, j->seed, NULL, S,
				    j->op->causal);
			check_encode(j->e->V + (size_t)row * D * es, j->op->dt, v, D);
		}
		check_encode(j->e->K + bh * hsz * es, j->op->dt, kk, hsz);
		for (long s = 0; s < S; s++) {
			const long row = (long)bh * S + s;

			arl_gen_row(v, D, ARL_Q, row, j->p, j->op->dt, j->seed, kk, S,
				    j->op->causal);
			check_encode(j->e->Q + (size_t)row * D * es, j->op->dt, v, D);
		}
	}
	free(kk);
	free(v);
}

// Rows [lo, hi) (b S + s) of x.
static void gen_x(size_t lo, size_t hi, void *arg)
{
	const struct arl_job *j = (const struct arl_job *)arg;
	const long N = j->op->H * j->op->D;
	const size_t es = fp_dtype_size(j->op->dt);
	double *v = (double *)xmalloc((size_t)N * sizeof *v);

	for (size_t r = lo; r < hi; r++) {
		arl_gen_row(v, N, ARL_X, (long)r, j->p, j->op->dt, j->seed, NULL,
			    j->op->S, j->op->causal);
		check_encode(j->e->x + r * N * es, j->op->dt, v, (size_t)N);
	}
	free(v);
}

// The attention output of the compared rows, heads [lo, hi): K and V of
// each head decoded once, then every compared row of its batch.
static void ref_heads(size_t lo, size_t hi, void *arg)
{
	const struct arl_job *j = (const struct arl_job *)arg;
	const struct arl_ref *e = j->e;
	const long S = j->op->S, D = j->op->D, H = j->op->H, N = H * D;
	const size_t es = fp_dtype_size(j->op->dt), hsz = (size_t)S * D;
	const double scale = 1.0 / sqrt((double)D);
	double *K = (double *)xmalloc(2 * hsz * sizeof *K), *V = K + hsz;
	double *q = (double *)xmalloc(D * sizeof *q);

	for (size_t bh = lo; bh < hi; bh++) {
		const long b = (long)bh / H, h = (long)bh % H;

		check_decode(K, e->K + bh * hsz * es, j->op->dt, hsz);
		check_decode(V, e->V + bh * hsz * es, j->op->dt, hsz);
		for (long i = 0; i < e->nrows; i++) {
			const long s = e->rows[i] - b * S;

			if (s < 0 || s >= S)
				continue;
			check_decode(q, e->Q + (bh * hsz + (size_t)s * D) * es, j->op->dt, D);
			arl_ref_head(q, K, V, arl_keys(s, S, j->op->causal), D, scale,
				     e->o + (size_t)i * N + h * D);
		}
	}
	free(K);
	free(q);
}

// y of compared rows [lo, hi) from x and the attention output.
static void ref_rows(size_t lo, size_t hi, void *arg)
{
	const struct arl_job *j = (const struct arl_job *)arg;
	const struct arl_ref *e = j->e;
	const long N = j->op->H * j->op->D;
	const size_t es = fp_dtype_size(j->op->dt);
	double *x = (double *)xmalloc((size_t)N * sizeof *x);

	for (size_t i = lo; i < hi; i++) {
		check_decode(x, e->x + (size_t)e->rows[i] * N * es, j->op->dt, (size_t)N);
		arl_ref_ln_row(x, e->o + i * N, e->gamma, e->beta, N, e->ref + i * N);
	}
	free(x);
}

static struct arl_ref *arl_reference(const struct fp_op *op, enum arl_profile p,
				     unsigned long long seed)
{
	const long B = op->B, H = op->H, S = op->S, D = op->D, N = H * D;
	const size_t es = fp_dtype_size(op->dt), E = (size_t)(B * S * N);
	struct ref_key key;
	struct arl_ref *e;
	struct arl_job job;

	memset(&key, 0, sizeof key);
	snprintf(key.what, sizeof key.what, "attn_res_ln_fwd causal=%d", op->causal);
	key.dims[0] = B;
	key.dims[1] = H;
	key.dims[2] = S;
	key.dims[3] = D;
	key.dt = op->dt;
	key.profile = (int)p;
	key.seed = seed;
	if ((e = (struct arl_ref *)refcache_find(&key)))
		return e;
	e = (struct arl_ref *)xcalloc(1, sizeof *e);
	e->Q = (char *)xmalloc(E * es);
	e->K = (char *)xmalloc(E * es);
	e->V = (char *)xmalloc(E * es);
	e->x = (char *)xmalloc(E * es);
	e->gamma = (double *)xmalloc((size_t)N * sizeof *e->gamma);
	e->beta = (double *)xmalloc((size_t)N * sizeof *e->beta);
	arl_gen_params(e->gamma, e->beta, N, op->dt, seed);
	job = (struct arl_job){ op, e, p, seed };
	par_for((size_t)(B * H), 1, gen_heads, &job);
	par_for((size_t)(B * S), par_grain_rows((size_t)N), gen_x, &job);
	// A row's reference costs H times its keys times D multiply-adds
	// (about a nanosecond each, an eighth of a row-wise element's cost).
	e->nrows = check_sample_rows(B * S, (double)H * D *
				     (arl_keys_total(S, op->causal) / (double)S) / 8,
				     seed ^ 0x94d049bb133111ebull, &e->rows);
	e->o = (double *)xmalloc((size_t)e->nrows * N * sizeof *e->o);
	e->ref = (double *)xmalloc((size_t)e->nrows * N * sizeof *e->ref);
	par_for((size_t)(B * H), 1, ref_heads, &job);
	par_for((size_t)e->nrows, par_grain_rows((size_t)N), ref_rows, &job);
	refcache_keep(&key, e, 4 * E * es + 2 * (size_t)e->nrows * N * sizeof(double),
		      arl_ref_free);
	return e;
}

// Fresh host inputs of the profile into set 0, y and the intermediates
// poisoned, one run, y compared with the double reference computed on the
// very values the GPU saw: every row, or a sample when the reference would
// cost too much (check_sample_rows; the detail says how many).
static int arl_check(struct fp_op *op, int profile, unsigned long long seed,
		     struct fp_check *r)
{
	const long N = op->H * op->D, M = op->B * op->S;
	const size_t es = fp_dtype_size(op->dt), E = (size_t)M * N;
	const struct arl_ref *e;
	char *got = NULL;
	struct fp_cmp c;
	int rc = -1;

	if (profile < 0 || profile >= ARL_NPROFILES)
		return error("attn_res_ln_fwd: no input profile %d", profile);
	e = arl_reference(op, (enum arl_profile)profile, seed);
	if (CUDA_CHECK(cudaMemcpy(op->Q, e->Q, E * es, cudaMemcpyHostToDevice)) ||
	    CUDA_CHECK(cudaMemcpy(op->K, e->K, E * es, cudaMemcpyHostToDevice)) ||
	    CUDA_CHECK(cudaMemcpy(op->V, e->V, E * es, cudaMemcpyHostToDevice)) ||
	    CUDA_CHECK(cudaMemcpy(op->x, e->x, E * es, cudaMemcpyHostToDevice)) ||
	    dev_upload(op->gamma, op->dt, e->gamma, (size_t)N) ||
	    dev_upload(op->beta, op->dt, e->beta, (size_t)N) ||
	    dev_poison(op->y, E * es) ||
	    (op->scores && dev_poison(op->scores, (size_t)(op->B * op->H * op->S) *
				      (size_t)op->S * es)) ||
	    (op->o && dev_poison(op->o, E * es)) || (op->r && dev_poison(op->r, E * es)) ||
	    arl_launch(op, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	got = (char *)xmalloc(E * es);
	if (CUDA_CHECK(cudaMemcpy(got, op->y, E * es, cudaMemcpyDeviceToHost)))
		goto out_free;
	check_begin(r, seed, op->dt == FP_BF16 ? ARL_TOL_BF16 : ARL_TOL_FP32);
	check_compare_rows(&c, got, op->dt, N, e->rows, e->nrows, e->ref);
	check_output(r, "y", &c);
	check_note_rows(r, e->nrows, M);
	rc = 0;
out_free:
	free(got);
	return rc;
}

static const struct fp_param arl_params[] = {
	{ "B", 16, 1, 65535, "batch" },
	{ "H", 12, 1, 64, "heads" },
	{ "S", FP_REQUIRED, 1, 32768, "sequence length (queries and keys)" },
	{ "D", 64, 1, 256, "head dimension" },
	{ "causal", 1, 0, 1, "1: query s sees keys 0..s; 0: every key" },
	{ NULL, 0, 0, 0, NULL },
};

// Index i is enum arl_profile i.
static const char *const arl_profiles[] = {
	"normal", "large_logits", "offset", "uniform", NULL,
};

static const struct fp_variant arl_variants[] = {
	{ "unfused", FP_UNFUSED,
	  "5 kernels: cuBLAS batched Q K^T (scores in DRAM), scaled masked softmax in place, "
	  "cuBLAS batched P V, residual add, LayerNorm", NULL, "fused" },
	{ "flash_then_ln", FP_UNFUSED,
	  "2 kernels: flash attention (online softmax, scores on chip) writing o, then "
	  "residual+LayerNorm", NULL, "fused" },
	{ "fused", FP_FUSED,
	  "1 kernel: a cluster of CTAs splits the heads of 64 query rows, keeps their "
	  "outputs on chip, adds x and normalises across the cluster" },
	{ NULL, FP_UNFUSED, NULL, NULL },
};

extern "C" const struct workload wl_attn_res_ln_fwd = {
	.name = "attn_res_ln_fwd",
	.summary = "y = LayerNorm(x + attention(Q, K, V)) over H*D; Q, K, V [B,H,S,D], "
		   "x, y [B,S,H*D]",
	.params = arl_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = arl_variants,
	.profiles = arl_profiles,
	.suite = "B=16,H=12,S=1024;B=8,H=25,S=1024;B=4,H=12,S=2048;B=2,H=12,S=4096;"
		 "B=16,H=12,S=1000",
	.quick = "B=2,H=12,S=256",
	.tests = "B=1,H=1,S=1;B=1,H=25,S=1,causal=0;B=2,H=12,S=37;B=2,H=4,S=37,causal=0;"
		 "B=1,H=25,S=129;B=3,H=1,S=200;B=1,H=12,S=64,causal=0;B=1,H=32,S=70;"
		 "B=2,H=2,S=129,causal=0",
	.kopts = arl_kopts,
	.backward = NULL,
	.validate = arl_validate,
	.device_bytes = arl_device_bytes,
	.model = arl_model,
	.create = arl_create,
	.kernel = arl_kernel,
	.launch = arl_launch,
	.check = arl_check,
	.destroy = arl_destroy,
};
