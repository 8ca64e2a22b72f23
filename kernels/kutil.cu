// kutil.cu - CUDA error checks, RNG, dtype conversion, poisoning, error norms.
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>

#include "error.h"
#include "device.cuh"
#include "kutil.h"
#include "util.h"

extern "C" int cuda_check(cudaError_t e, const char *call, const char *file,
			  int line)
{
	if (e == cudaSuccess)
		return 0;
	return error("%s failed: %s (%s:%d)", call, cudaGetErrorString(e),
		     file, line);
}

extern "C" int dev_alloc(void *pp, size_t n)
{
	if (n == 0) {
		*(void **)pp = NULL;
		return 0;
	}
	return CUDA_CHECK(cudaMalloc((void **)pp, n));
}

extern "C" void rng_seed(struct fp_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++, seed += 0x9e3779b97f4a7c15ull)
		r->s[i] = splitmix64(seed);
	r->have_spare = 0;
}

extern "C" void cluster_config(cudaLaunchConfig_t *cfg, cudaLaunchAttribute *attr,
			       unsigned cluster, unsigned grid, unsigned block,
			       size_t smem, cudaStream_t st)
{
	*cfg = cudaLaunchConfig_t{};
	*attr = cudaLaunchAttribute{};
	attr->id = cudaLaunchAttributeClusterDimension;
	attr->val.clusterDim.x = cluster;
	attr->val.clusterDim.y = 1;
	attr->val.clusterDim.z = 1;
	cfg->gridDim = dim3(grid);
	cfg->blockDim = dim3(block);
	cfg->dynamicSmemBytes = smem;
	cfg->stream = st;
	cfg->attrs = attr;
	cfg->numAttrs = 1;
}

extern "C" void config_programmatic(cudaLaunchConfig_t *cfg)
{
	cudaLaunchAttribute *a = &cfg->attrs[cfg->numAttrs++];

	*a = cudaLaunchAttribute{};
	a->id = cudaLaunchAttributeProgrammaticStreamSerialization;
	a->val.programmaticStreamSerializationAllowed = 1;
}

extern "C" void rng_seed_item(struct fp_rng *r, uint64_t base, long item)
{
	rng_seed(r, base ^ 0x9e3779b97f4a7c15ull * (uint64_t)(item + 1));
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

extern "C" uint64_t rng_next(struct fp_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

extern "C" double rng_uniform(struct fp_rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

extern "C" double rng_normal(struct fp_rng *r)
{
	double u, v;

	if (r->have_spare) {
		r->have_spare = 0;
		return r->spare;
	}
	do
		u = rng_uniform(r);
	while (u <= 0.0);
	v = rng_uniform(r);
	r->spare = sqrt(-2.0 * log(u)) * sin(2.0 * M_PI * v);
	r->have_spare = 1;
	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

extern "C" void host_round(double *v, size_t n, enum fp_dtype dt)
{
	for (size_t i = 0; i < n; i++)
		v[i] = dt == FP_BF16
			? (double)__bfloat162float(__float2bfloat16_rn((float)v[i]))
			: (double)(float)v[i];
}

extern "C" int dev_upload(void *dst, enum fp_dtype dt, const double *src,
			  size_t n)
{
	size_t es = fp_dtype_size(dt);
	void *h = xmalloc(n * es);
	int rc;

	if (dt == FP_BF16) {
		__nv_bfloat16 *b = (__nv_bfloat16 *)h;
		for (size_t i = 0; i < n; i++)
			b[i] = __float2bfloat16_rn((float)src[i]);
	} else {
		float *f = (float *)h;
		for (size_t i = 0; i < n; i++)
			f[i] = (float)src[i];
	}
	rc = CUDA_CHECK(cudaMemcpy(dst, h, n * es, cudaMemcpyHostToDevice));
	free(h);
	return rc;
}

extern "C" int dev_download(double *dst, const void *src, enum fp_dtype dt,
			    size_t n)
{
	size_t es = fp_dtype_size(dt);
	void *h = xmalloc(n * es);
	int rc = CUDA_CHECK(cudaMemcpy(h, src, n * es, cudaMemcpyDeviceToHost));

	if (rc == 0) {
		if (dt == FP_BF16) {
			const __nv_bfloat16 *b = (const __nv_bfloat16 *)h;
			for (size_t i = 0; i < n; i++)
				dst[i] = (double)__bfloat162float(b[i]);
		} else {
			const float *f = (const float *)h;
			for (size_t i = 0; i < n; i++)
				dst[i] = (double)f[i];
		}
	}
	free(h);
	return rc;
}

template <typename T>
__global__ void fill_normal_kernel(T *dst, size_t n, uint64_t seed, float mean,
				   float std)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		dst[i] = (T)(mean + std * draw_normal(seed, i));
	}
}

extern "C" int dev_fill_normal(void *dst, enum fp_dtype dt, size_t n,
			       uint64_t seed, float mean, float std,
			       cudaStream_t stream)
{
	unsigned blocks = (unsigned)((n + 255) / 256);

	if (n == 0)
		return 0;
	if (blocks > 65536)
		blocks = 65536;
	if (dt == FP_BF16)
		fill_normal_kernel<__nv_bfloat16><<<blocks, 256, 0, stream>>>(
			(__nv_bfloat16 *)dst, n, seed, mean, std);
	else
		fill_normal_kernel<float><<<blocks, 256, 0, stream>>>(
			(float *)dst, n, seed, mean, std);
	return CUDA_CHECK_LAUNCH("fill_normal_kernel");
}

extern "C" int dev_poison(void *p, size_t bytes)
{
	if (CUDA_CHECK(cudaMemset(p, 0xff, bytes)))
		return -1;
	return CUDA_CHECK(cudaDeviceSynchronize());
}

extern "C" void cmp_init(struct fp_cmp *c)
{
	memset(c, 0, sizeof *c);
	c->first_bad = (size_t)-1;
}

extern "C" void cmp_add(struct fp_cmp *c, const double *out, const double *ref,
			size_t n)
{
	for (size_t i = 0; i < n; i++, c->n++) {
		double d;

		if (!isfinite(ref[i])) {
			// A non-finite reference (softmax of an all -inf row)
			// must be matched exactly in kind.
			if (!(isnan(ref[i]) ? isnan(out[i]) : out[i] == ref[i])) {
				if (c->first_bad == (size_t)-1)
					c->first_bad = c->n;
				c->bad++;
			}
			continue;
		}
		if (!isfinite(out[i])) {
			if (c->first_bad == (size_t)-1)
				c->first_bad = c->n;
			c->bad++;
			continue;
		}
		d = out[i] - ref[i];
		c->sq_err += d * d;
		c->sq_ref += ref[i] * ref[i];
		if (fabs(d) > c->max_abs)
			c->max_abs = fabs(d);
	}
}

extern "C" void cmp_add_floor(struct fp_cmp *c, const double *sq, size_t n)
{
	for (size_t i = 0; i < n; i++)
		c->sq_floor += sq[i];
}

extern "C" void cmp_merge(struct fp_cmp *into, const struct fp_cmp *part)
{
	into->sq_err += part->sq_err;
	into->sq_ref += part->sq_ref;
	into->sq_floor += part->sq_floor;
	if (part->max_abs > into->max_abs)
		into->max_abs = part->max_abs;
	if (into->first_bad == (size_t)-1 && part->first_bad != (size_t)-1)
		into->first_bad = into->n + part->first_bad;
	into->bad += part->bad;
	into->n += part->n;
}

extern "C" double cmp_rel(const struct fp_cmp *c)
{
	const double den = c->sq_ref > c->sq_floor ? c->sq_ref : c->sq_floor;

	return den > 0 ? sqrt(c->sq_err / den) : sqrt(c->sq_err);
}

extern "C" void check_begin(struct fp_check *r, unsigned long long seed,
			    double tol)
{
	memset(r, 0, sizeof *r);
	r->seed = seed;
	r->tolerance = tol;
	r->passed = 1;
}

extern "C" void check_output(struct fp_check *r, const char *name,
			     const struct fp_cmp *c)
{
	double rel = cmp_rel(c);

	if (rel > r->rel_err || isnan(rel))
		r->rel_err = rel;
	if (c->max_abs > r->max_abs_err)
		r->max_abs_err = c->max_abs;
	if (!r->passed)
		return;  // keep the first failure's detail
	if (c->bad) {
		r->passed = 0;
		snprintf(r->detail, sizeof r->detail,
			 "%s: %zu of %zu elements non-finite or unwritten (first at %zu)",
			 name, c->bad, c->n, c->first_bad);
	} else if (!(rel <= r->tolerance)) {
		r->passed = 0;
		snprintf(r->detail, sizeof r->detail,
			 "%s: relative error %.3g exceeds %.3g (max abs %.3g)",
			 name, rel, r->tolerance, c->max_abs);
	}
}
