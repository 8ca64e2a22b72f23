// kernels.cu - the launchers of the attention + residual + LayerNorm
// kernels (kernels.cuh): each picks the template for the dtype and the
// mask, sizes the grid and lets the kernels have their shared memory.
#include "config.h"

#include <math.h>
#include <stdint.h>

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "kutil.h"
#include "attn_res_ln/internal.h"
#include "attn_res_ln/kernels.cuh"

// ---------------------------------------------------------------------------
// Launchers.

size_t arl_fused_smem(enum fp_dtype dt, int hpc)
{
	return dt == FP_BF16 ? fused_smem_bytes(fl_layout<__nv_bfloat16>::SMEM, hpc, 2)
			     : fused_smem_bytes(fl_layout<float>::SMEM, hpc, 4);
}

size_t arl_fused_heads_smem(enum fp_dtype dt, int hpc)
{
	return (dt == FP_BF16 ? fl_layout<__nv_bfloat16>::SMEM : fl_layout<float>::SMEM) +
	       heads_stash_bytes((int)fp_dtype_size(dt), hpc) + ARL_BQ * sizeof(float2);
}

template <typename F>
static int smem_attr(F *kernel, size_t bytes)
{
	return CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
					       (int)bytes));
}

// The clusters=heads kernels: their shared memory, and clusters of up to
// ARL_HEADS_CLUSTER (more than the portable 8).
template <typename T, int HPC>
static int heads_attr(size_t bytes)
{
	return smem_attr(k_fused_heads<T, false, HPC>, bytes) ||
	       smem_attr(k_fused_heads<T, true, HPC>, bytes) ||
	       CUDA_CHECK(cudaFuncSetAttribute(k_fused_heads<T, false, HPC>,
					       cudaFuncAttributeNonPortableClusterSizeAllowed, 1)) ||
	       CUDA_CHECK(cudaFuncSetAttribute(k_fused_heads<T, true, HPC>,
					       cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}

int arl_prepare(void)
{
	static int done;
	const size_t fb = arl_fused_smem(FP_BF16, ARL_MAX_HEADS_CTA);
	const size_t ff = arl_fused_smem(FP_F32, ARL_MAX_HEADS_CTA);

	if (done)
		return 0;
	if (smem_attr(k_flash<__nv_bfloat16, false>, fl_layout<__nv_bfloat16>::SMEM) ||
	    smem_attr(k_flash<__nv_bfloat16, true>, fl_layout<__nv_bfloat16>::SMEM) ||
	    smem_attr(k_flash<float, false>, fl_layout<float>::SMEM) ||
	    smem_attr(k_flash<float, true>, fl_layout<float>::SMEM) ||
	    smem_attr(k_fused<__nv_bfloat16, false>, fb) ||
	    smem_attr(k_fused<__nv_bfloat16, true>, fb) ||
	    smem_attr(k_fused<float, false>, ff) || smem_attr(k_fused<float, true>, ff) ||
	    heads_attr<__nv_bfloat16, 1>(arl_fused_heads_smem(FP_BF16, 1)) ||
	    heads_attr<__nv_bfloat16, 2>(arl_fused_heads_smem(FP_BF16, 2)) ||
	    heads_attr<__nv_bfloat16, 3>(arl_fused_heads_smem(FP_BF16, 3)) ||
	    heads_attr<float, 1>(arl_fused_heads_smem(FP_F32, 1)) ||
	    heads_attr<float, 2>(arl_fused_heads_smem(FP_F32, 2)) ||
	    heads_attr<float, 3>(arl_fused_heads_smem(FP_F32, 3)))
		return -1;
	done = 1;
	return 0;
}

static float scale_log2(long D)
{
	return (float)(1.0 / sqrt((double)D)) * LOG2E;
}

int arl_softmax(enum fp_dtype dt, void *P, long rows, int S, int causal,
		float scale, cudaStream_t st)
{
	const float sl = scale * LOG2E;

	if (rows < 1)
		return 0;
	if (dt == FP_BF16 && S % 8 == 0)
		k_softmax<__nv_bfloat16, true><<<(unsigned)rows, SMX_THREADS, 0, st>>>(
			(__nv_bfloat16 *)P, S, causal, sl);
	else if (dt == FP_BF16)
		k_softmax<__nv_bfloat16, false><<<(unsigned)rows, SMX_THREADS, 0, st>>>(
			(__nv_bfloat16 *)P, S, causal, sl);
	else if (S % 4 == 0)
		k_softmax<float, true><<<(unsigned)rows, SMX_THREADS, 0, st>>>(
			(float *)P, S, causal, sl);
	else
		k_softmax<float, false><<<(unsigned)rows, SMX_THREADS, 0, st>>>(
			(float *)P, S, causal, sl);
	return CUDA_CHECK_LAUNCH("k_softmax");
}

int arl_residual_add(enum fp_dtype dt, const void *x, const void *o, void *r,
				long B, long H, long S, long D, cudaStream_t st)
{
	const long n = B * S * H * D;
	const long blocks = (n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536;

	if (dt == FP_BF16)
		k_residual_add<<<(unsigned)blocks, 256, 0, st>>>(
			(const __nv_bfloat16 *)x, (const __nv_bfloat16 *)o,
			(__nv_bfloat16 *)r, n, (int)H, (int)S, (int)D);
	else
		k_residual_add<<<(unsigned)blocks, 256, 0, st>>>(
			(const float *)x, (const float *)o, (float *)r, n, (int)H,
			(int)S, (int)D);
	return CUDA_CHECK_LAUNCH("k_residual_add");
}

template <typename T>
static void flash_launch(int causal, const void *Q, const void *K, const void *V,
			 void *O, long B, long H, long S, cudaStream_t st)
{
	const unsigned grid = (unsigned)(B * H * ((S + ARL_BQ - 1) / ARL_BQ));
	const float sl = scale_log2(ARL_FLASH_D);

	if (causal)
		k_flash<T, true><<<grid, FL_THREADS, fl_layout<T>::SMEM, st>>>(
			(const T *)Q, (const T *)K, (const T *)V, (T *)O, (int)B, (int)H,
			(int)S, sl);
	else
		k_flash<T, false><<<grid, FL_THREADS, fl_layout<T>::SMEM, st>>>(
			(const T *)Q, (const T *)K, (const T *)V, (T *)O, (int)B, (int)H,
			(int)S, sl);
}

int arl_flash(enum fp_dtype dt, int causal, const void *Q, const void *K,
			 const void *V, void *O, long B, long H, long S, cudaStream_t st)
{
	if (arl_prepare())
		return -1;
	if (dt == FP_BF16)
		flash_launch<__nv_bfloat16>(causal, Q, K, V, O, B, H, S, st);
	else
		flash_launch<float>(causal, Q, K, V, O, B, H, S, st);
	return CUDA_CHECK_LAUNCH("k_flash");
}

int arl_res_ln(enum fp_dtype dt, const void *x, const void *o,
			  const void *gamma, const void *beta, void *y, long M, long N,
			  cudaStream_t st)
{
	if (N > (long)RL_THREADS * RL_PER)
		return error("attn_res_ln: rows of %ld are wider than the residual+LayerNorm "
			     "kernel's %d", N, RL_THREADS * RL_PER);
	if (dt == FP_BF16)
		k_res_ln<<<(unsigned)M, RL_THREADS, 0, st>>>(
			(const __nv_bfloat16 *)x, (const __nv_bfloat16 *)o,
			(const __nv_bfloat16 *)gamma, (const __nv_bfloat16 *)beta,
			(__nv_bfloat16 *)y, (int)N);
	else
		k_res_ln<<<(unsigned)M, RL_THREADS, 0, st>>>(
			(const float *)x, (const float *)o, (const float *)gamma,
			(const float *)beta, (float *)y, (int)N);
	return CUDA_CHECK_LAUNCH("k_res_ln");
}

template <typename T, bool CAUSAL>
static int fused_launch(const void *Q, const void *K, const void *V, const void *x,
			const void *gamma, const void *beta, void *y, long B, long H,
			long S, int cluster, size_t smem, cudaStream_t st)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute attr;
	const unsigned grid = (unsigned)(B * ((S + ARL_BQ - 1) / ARL_BQ) * cluster);

	cluster_config(&cfg, &attr, (unsigned)cluster, grid, FL_THREADS, smem, st);
	return CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_fused<T, CAUSAL>, (const T *)Q,
					     (const T *)K, (const T *)V, (const T *)x,
					     (const T *)gamma, (const T *)beta, (T *)y,
					     (int)B, (int)H, (int)S,
					     scale_log2(ARL_FLASH_D)));
}

int arl_fused(enum fp_dtype dt, int causal, const void *Q, const void *K,
			 const void *V, const void *x, const void *gamma,
			 const void *beta, void *y, long B, long H, long S, int cluster,
			 cudaStream_t st)
{
	const int hpc = (int)((H + cluster - 1) / cluster);
	const size_t smem = arl_fused_smem(dt, hpc);

	if (cluster < 1 || cluster > ARL_MAX_CLUSTER || hpc > ARL_MAX_HEADS_CTA)
		return error("attn_res_ln: fused: clusters of %d cannot hold H=%ld heads "
			     "(at most %d a CTA, %d CTAs)", cluster, H,
			     ARL_MAX_HEADS_CTA, ARL_MAX_CLUSTER);
	if (arl_prepare())
		return -1;
	if (dt == FP_BF16)
		return causal ? fused_launch<__nv_bfloat16, true>(Q, K, V, x, gamma, beta, y,
								  B, H, S, cluster, smem, st)
			      : fused_launch<__nv_bfloat16, false>(Q, K, V, x, gamma, beta, y,
								   B, H, S, cluster, smem, st);
	return causal ? fused_launch<float, true>(Q, K, V, x, gamma, beta, y, B, H, S,
						  cluster, smem, st)
		      : fused_launch<float, false>(Q, K, V, x, gamma, beta, y, B, H, S,
						   cluster, smem, st);
}

// The clusters=heads kernel for a type, mask and heads a CTA (1 to 3:
// arl_heads_cluster), a template argument so that each head's outputs have
// registers (or stash slots) of their own.
static const void *heads_kernel(enum fp_dtype dt, int causal, int hpc)
{
	static const void *const k[2][2][3] = {
		{ { (const void *)k_fused_heads<float, false, 1>,
		    (const void *)k_fused_heads<float, false, 2>,
		    (const void *)k_fused_heads<float, false, 3> },
		  { (const void *)k_fused_heads<float, true, 1>,
		    (const void *)k_fused_heads<float, true, 2>,
		    (const void *)k_fused_heads<float, true, 3> } },
		{ { (const void *)k_fused_heads<__nv_bfloat16, false, 1>,
		    (const void *)k_fused_heads<__nv_bfloat16, false, 2>,
		    (const void *)k_fused_heads<__nv_bfloat16, false, 3> },
		  { (const void *)k_fused_heads<__nv_bfloat16, true, 1>,
		    (const void *)k_fused_heads<__nv_bfloat16, true, 2>,
		    (const void *)k_fused_heads<__nv_bfloat16, true, 3> } },
	};

	return k[dt == FP_BF16][causal != 0][hpc - 1];
}

// The launch of the clusters=heads kernel: clusters of `cluster` CTAs
// placed by the load-balancing policy (the CTAs of a cluster on as few SMs
// as fit them; the default spreads them one an SM), which on an H100
// holds 39 clusters of 12 at once where spreading holds 37, and keeps the
// SMs busy 90 % of the kernel's time where spreading keeps them 77 %.
static void heads_config(cudaLaunchConfig_t *cfg, cudaLaunchAttribute attr[2],
			 unsigned cluster, unsigned grid, size_t smem, cudaStream_t st)
{
	cluster_config(cfg, &attr[0], cluster, grid, FL_THREADS, smem, st);
	attr[1] = cudaLaunchAttribute{};
	attr[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
	attr[1].val.clusterSchedulingPolicyPreference = cudaClusterSchedulingPolicyLoadBalancing;
	cfg->attrs = attr;
	cfg->numAttrs = 2;
}

int arl_fused_fits(enum fp_dtype dt, int causal, long H, int heads, int cluster,
		   int *resident)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute attr[2];
	int hpc = 1, n = 0;
	size_t smem;
	const void *k;

	if (arl_prepare())
		return -1;
	if (heads) {
		hpc = heads;
		smem = arl_fused_heads_smem(dt, hpc);
		k = heads_kernel(dt, causal, hpc);
		heads_config(&cfg, attr, (unsigned)cluster, (unsigned)cluster, smem, 0);
	} else {
		hpc = (int)((H + cluster - 1) / cluster);
		smem = arl_fused_smem(dt, hpc);
		k = dt == FP_BF16 ? (causal ? (const void *)k_fused<__nv_bfloat16, true>
					    : (const void *)k_fused<__nv_bfloat16, false>)
				  : (causal ? (const void *)k_fused<float, true>
					    : (const void *)k_fused<float, false>);
		cluster_config(&cfg, &attr[0], (unsigned)cluster, (unsigned)cluster, FL_THREADS,
			       smem, 0);
	}
	if (CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, k, &cfg)))
		return -1;
	if (n < 1)
		return error("attn_res_ln: fused: this device cannot hold a cluster of %d CTAs "
			     "of %zu bytes of shared memory each (H=%ld, %d head%s a CTA); "
			     "try another clusters value", cluster, smem, H, hpc,
			     hpc > 1 ? "s" : "");
	*resident = n;
	return 0;
}

// auto's heads a CTA: the cheaper of two and three by arl_heads_cost
// (ref.c), with the clusters this device holds of each. Three heads a CTA
// pack a GPC's SMs better (at H = 25: clusters of 9, 54 resident on an
// H100, against 32 of 13) and leave fewer idle head slots, but make each
// CTA half as long again. On an H100 the model picks as the measurements
// did at all eleven shapes of bench/RESULTS.md's table (heads3 at
// B=16,H=12,S=1024 and H = 25; heads2 at S = 2048 and 4096, H = 6, 16 and
// 32), and in fp32 (where three heads stash the first two's outputs) at
// nine of the same eleven, not at B=16,H=6 and
// B=32,H=12,S=512, where two heads were 8 % and 12 % faster;
// tests/test-attn-res-ln-ref holds it to them. Ties go to two.
int arl_heads_auto(enum fp_dtype dt, int causal, long B, long H, long S, int *want)
{
	double best = 0.;

	*want = 2;
	for (int w = 2; w <= 3; w++) {
		int hpc, n = 0, c = arl_heads_cluster(H, w, &hpc);
		double cost;

		if (hpc != w)  // H too small for w
			continue;
		if (arl_fused_fits(dt, causal, H, hpc, c, &n))
			return -1;
		cost = arl_heads_cost(B, S, causal, hpc, n);
		if (w == 2 || cost < best) {
			best = cost;
			*want = w;
		}
	}
	return 0;
}

int arl_fused_heads(enum fp_dtype dt, int causal, const void *Q, const void *K,
		    const void *V, const void *x, const void *gamma, const void *beta,
		    void *y, long B, long H, long S, int hpc, cudaStream_t st)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute attr[2];
	int cluster, b = (int)B, h = (int)H, s = (int)S;
	float sl = scale_log2(ARL_FLASH_D);
	void *args[] = { &Q, &K, &V, &x, &gamma, &beta, &y, &b, &h, &s, &sl };

	if (H < 1 || H > ARL_MAX_HEADS)
		return error("attn_res_ln: fused: H=%ld heads: clusters=heads takes 1 to %d",
			     H, ARL_MAX_HEADS);
	if (hpc < 1 || hpc > 3)
		return error("attn_res_ln: fused: %d heads a CTA: the heads kernel takes 1 to 3",
			     hpc);
	if (arl_prepare())
		return -1;
	cluster = (int)((H + hpc - 1) / hpc);
	heads_config(&cfg, attr, (unsigned)cluster,
		     (unsigned)(B * ((S + ARL_BQ - 1) / ARL_BQ) * cluster),
		     arl_fused_heads_smem(dt, hpc), st);
	// The pointers go as they are: the kernel's T * parameters have their
	// size and representation.
	return CUDA_CHECK(cudaLaunchKernelExC(&cfg, heads_kernel(dt, causal, hpc), args));
}
