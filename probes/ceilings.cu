/* ceilings.cu - what the hardware allows, measured and quoted: DRAM
 * bandwidth at four read/write mixes (read-only, 2:1 add, copy, write-only)
 * over buffers far larger than L2, L2 bandwidth over a
 * buffer inside L2, FP32/FP64 FMA peaks from independent FMA chains, tensor
 * peaks from cuBLAS bf16 and tf32 GEMMs; and the theoretical ceilings from
 * CUPTI's *.peak_sustained metrics x the clock the hardware ran at. Also the
 * kernels of known work that tests use. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "probes.h"
#include "util.h"

#define CK(call) cuda_ok((call), #call, __LINE__)
static int cuda_ok(cudaError_t e, const char *call, int line)
{
	if (e == cudaSuccess)
		return 0;
	return error("%s failed: %s (probes/ceilings.cu:%d)", call,
		     cudaGetErrorString(e), line);
}
#define CK_LAUNCH() CK(cudaGetLastError())

/* ---- kernels, simplest first ---------------------------------------- */

/* One float per thread per step: reads 4n bytes, writes 4n bytes. Scalar on
 * purpose: tests count its bytes, and scalar accesses are what a first
 * kernel does. */
__global__ void copy_f32(float *__restrict__ dst, const float *__restrict__ src,
			 size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

/* The DRAM ceilings, one kernel per read/write mix: NR input streams (a,
 * and b when NR is 2) and W output streams (c), float4 accesses (the
 * fastest way to stream), STREAM_ILP independent ones in flight per thread
 * and stream, so the memory system sees enough requests at full occupancy.
 * Mixes by bytes written / bytes moved:
 *   <1, 0>  read-only   f = 0     (sums into a register, as read_f4)
 *   <2, 1>  c = a + b   f = 1/3   (STREAM's Add)
 *   <1, 1>  c = a       f = 1/2   (copy)
 *   <0, 1>  c = i       f = 1     (write-only: no read at all)
 * Each thread takes elements i, i + stride, ... i + 3 stride, then jumps
 * 4 strides: every access of a warp is one coalesced 512-byte run. */
/* Element j of a mix's input: the index itself (NR = 0, write-only), a[j],
 * or a[j] + b[j]. */
template <int NR>
__device__ __forceinline__ float4 mix_load(const float4 *__restrict__ a,
					   const float4 *__restrict__ b, size_t j)
{
	if (NR == 0) {
		float x = (float)j;

		return make_float4(x, x, x, x);
	}
	if (NR == 1)
		return a[j];
	float4 p = a[j], q = b[j];

	return make_float4(p.x + q.x, p.y + q.y, p.z + q.z, p.w + q.w);
}

/* Element j of a mix's output: stored (W), or summed into *acc. */
template <int W>
__device__ __forceinline__ void mix_store(float4 *__restrict__ c, size_t j, float4 v,
					  float *acc)
{
	if (W)
		c[j] = v;
	else
		*acc += v.x + v.y + v.z + v.w;
}

#define STREAM_ILP 4
template <int NR, int W>
__global__ void stream_f4(float4 *__restrict__ c, const float4 *__restrict__ a,
			  const float4 *__restrict__ b, size_t n4, float *__restrict__ sink)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	float acc = 0.f;

	for (; i < n4; i += STREAM_ILP * stride) {
		float4 v[STREAM_ILP];

#pragma unroll
		for (int u = 0; u < STREAM_ILP; u++) {
			size_t j = i + u * stride;

			if (j >= n4)
				break;
			v[u] = mix_load<NR>(a, b, j);
		}
#pragma unroll
		for (int u = 0; u < STREAM_ILP; u++) {
			size_t j = i + u * stride;

			if (j >= n4)
				break;
			mix_store<W>(c, j, v[u], &acc);
		}
	}
	if (!W && acc == 1234.5f)  /* practically never: keeps the loads alive */
		sink[blockIdx.x] = acc;
}

/* The same mixes one row a block, as row-wise kernels (LayerNorm, softmax)
 * move memory: each block loads its ILP x blockDim float4s, then
 * stores them; as many blocks as rows. On an H200 this beat the grid-wide
 * stride for every mix (copy 4.08 against 3.95 TB/s, c = a + b 4.34
 * against 4.17), so a ceiling is the best of both patterns. */
#define ROW_ILP 4
template <int NR, int W, int ILP>
__global__ void rows_f4(float4 *__restrict__ c, const float4 *__restrict__ a,
			const float4 *__restrict__ b, size_t n4, float *__restrict__ sink)
{
	size_t base = (size_t)blockIdx.x * blockDim.x * ILP + threadIdx.x;
	float4 v[ILP];
	float acc = 0.f;

#pragma unroll
	for (int u = 0; u < ILP; u++) {
		size_t j = base + (size_t)u * blockDim.x;

		if (j >= n4)
			break;
		v[u] = mix_load<NR>(a, b, j);
	}
#pragma unroll
	for (int u = 0; u < ILP; u++) {
		size_t j = base + (size_t)u * blockDim.x;

		if (j >= n4)
			break;
		mix_store<W>(c, j, v[u], &acc);
	}
	if (!W && acc == 1234.5f)  /* practically never: keeps the loads alive */
		sink[blockIdx.x] = acc;
}

/* Read-only stream; one float per block written so nothing is dead code.
 * `passes` > 1 rereads the buffer: with it inside L2 this is the L2 ceiling
 * (__ldcg skips L1, so the bytes come from L2 on every pass). */
__global__ void read_f4(const float4 *__restrict__ src, size_t n4, int passes,
			float *__restrict__ sink)
{
	float acc = 0.f;

	for (int p = 0; p < passes; p++)
		for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
		     i += (size_t)gridDim.x * blockDim.x) {
			float4 v = __ldcg(&src[i]);

			acc += v.x + v.y + v.z + v.w;
		}
	if (acc == 1234.5f)  /* practically never: keeps the loads alive */
		sink[blockIdx.x] = acc;
}

/* read_f4 with ROW_ILP independent __ldcg loads in flight a thread. */
__global__ void read_f4_ilp(const float4 *__restrict__ src, size_t n4, int passes,
			    float *__restrict__ sink)
{
	size_t stride = (size_t)gridDim.x * blockDim.x;
	float acc = 0.f;

	for (int p = 0; p < passes; p++)
		for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4;
		     i += ROW_ILP * stride) {
			float4 v[ROW_ILP];

#pragma unroll
			for (int u = 0; u < ROW_ILP; u++)
				v[u] = i + u * stride < n4 ? __ldcg(&src[i + u * stride])
							   : make_float4(0, 0, 0, 0);
#pragma unroll
			for (int u = 0; u < ROW_ILP; u++)
				acc += v[u].x + v[u].y + v[u].z + v[u].w;
		}
	if (acc == 1234.5f)  /* practically never: keeps the loads alive */
		sink[blockIdx.x] = acc;
}

/* PROBE_FMA_CHAINS independent chains per thread, so the FMA pipes never
 * wait on a previous result; a and b come from memory so nothing folds.
 * Exactly iters * PROBE_FMA_CHAINS FMA instructions per thread. */
template <typename T>
__global__ void fma_chains(T *__restrict__ out, const T *__restrict__ ab, int iters)
{
	T a = ab[0], b = ab[1], x[PROBE_FMA_CHAINS];

#pragma unroll
	for (int k = 0; k < PROBE_FMA_CHAINS; k++)
		x[k] = (T)(threadIdx.x + k);
	for (int i = 0; i < iters; i++) {
#pragma unroll
		for (int k = 0; k < PROBE_FMA_CHAINS; k++)
			x[k] = x[k] * a + b;
	}
	T s = 0;
#pragma unroll
	for (int k = 0; k < PROBE_FMA_CHAINS; k++)
		s += x[k];
	out[blockIdx.x * (size_t)blockDim.x + threadIdx.x] = s;
}

/* Deterministic, non-zero values in [-1, 1): never time on zeros. */
template <typename T>
__global__ void fill_hash(T *p, size_t n, unsigned seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		unsigned h = (unsigned)i * 2654435761u ^ seed;

		h ^= h >> 15;
		h *= 2246822519u;
		h ^= h >> 13;
		p[i] = (T)((float)(h & 0xffffff) / 8388608.0f - 1.0f);
	}
}

/* ---- launchers -------------------------------------------------------- */

static int grid_for(size_t n, int threads)
{
	int dev = 0, sms = 132;

	cudaGetDevice(&dev);
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	size_t want = (n + threads - 1) / threads;
	size_t cap = (size_t)sms * 32;
	return (int)(want < cap ? (want ? want : 1) : cap);
}

int probe_copy_f32(float *dst, const float *src, size_t n)
{
	copy_f32<<<grid_for(n, 256), 256>>>(dst, src, n);
	return CK_LAUNCH();
}

int probe_fma_f32(float *out, int blocks, int threads_per_block, int iters)
{
	/* a = 1 - 2^-20, b = 2^-20: values stay finite for any iters. The
	 * pair lives right after the outputs, which the caller allocated. */
	static float *ab;
	const float h_ab[2] = { 1.0f - 1.0f / 1048576.0f, 1.0f / 1048576.0f };

	if (!ab && CK(cudaMalloc(&ab, sizeof h_ab)))
		return -1;
	if (CK(cudaMemcpy(ab, h_ab, sizeof h_ab, cudaMemcpyHostToDevice)))
		return -1;
	fma_chains<float><<<blocks, threads_per_block>>>(out, ab, iters);
	return CK_LAUNCH();
}

/* ---- timing ----------------------------------------------------------- */

typedef int (*launch_fn)(void *arg);

/* Milliseconds of one launch of fn from reps samples after warm-up, each
 * sample `per` launches back to back between two events: the median, or
 * with best the fastest sample (STREAM's rule for a bandwidth: a ceiling
 * is what the memory can do, and an op's median may beat the ceiling
 * kernels' median by their noise). */
static int time_ms(launch_fn fn, void *arg, int reps, int per, int best, double *ms)
{
	cudaEvent_t a, b;
	double *t = (double *)xcalloc((size_t)reps, sizeof *t);
	int rc = -1;

	if (CK(cudaEventCreate(&a)))
		goto out_free;
	if (CK(cudaEventCreate(&b)))
		goto out_a;
	for (int i = 0; i < 3; i++)
		if (fn(arg))
			goto out_b;
	for (int i = 0; i < reps; i++) {
		float f;

		if (CK(cudaEventRecord(a)))
			goto out_b;
		for (int k = 0; k < per; k++)
			if (fn(arg))
				goto out_b;
		if (CK(cudaEventRecord(b)) || CK(cudaEventSynchronize(b)) ||
		    CK(cudaEventElapsedTime(&f, a, b)))
			goto out_b;
		t[i] = f / per;
	}
	if (best) {
		*ms = t[0];
		for (int i = 1; i < reps; i++)
			*ms = t[i] < *ms ? t[i] : *ms;
	} else {
		*ms = median_of(t, (size_t)reps);
	}
	rc = 0;
out_b:
	cudaEventDestroy(b);
out_a:
	cudaEventDestroy(a);
out_free:
	free(t);
	return rc;
}

struct stream_arg {
	float4 *dst;
	const float4 *src, *src2;
	size_t n4;
	int passes, grid;
	float *sink;
	int nread, write;  /* the mix of launch_mix: stream_f4<nread, write> */
	int rows;          /* > 0: rows_f4 with blocks of this many threads */
	int row_ilp;       /* rows_f4's float4s a thread and stream: 1, 2 or ROW_ILP */
};

template <int ILP>
static void launch_rows_ilp(const struct stream_arg *s)
{
	unsigned grid = (unsigned)((s->n4 + (size_t)s->rows * ILP - 1) /
				   ((size_t)s->rows * ILP));

	if (s->nread == 1 && !s->write)
		rows_f4<1, 0, ILP><<<grid, s->rows>>>(NULL, s->src, NULL, s->n4, s->sink);
	else if (s->nread == 2)
		rows_f4<2, 1, ILP><<<grid, s->rows>>>(s->dst, s->src, s->src2, s->n4, s->sink);
	else if (s->nread == 1)
		rows_f4<1, 1, ILP><<<grid, s->rows>>>(s->dst, s->src, NULL, s->n4, s->sink);
	else
		rows_f4<0, 1, ILP><<<grid, s->rows>>>(s->dst, NULL, NULL, s->n4, s->sink);
}

static int launch_rows(const struct stream_arg *s)
{
	if (s->row_ilp == 1)
		launch_rows_ilp<1>(s);
	else if (s->row_ilp == 2)
		launch_rows_ilp<2>(s);
	else
		launch_rows_ilp<ROW_ILP>(s);
	return CK_LAUNCH();
}

static int launch_mix(void *p)
{
	struct stream_arg *s = (struct stream_arg *)p;

	if (s->rows)
		return launch_rows(s);
	if (s->nread == 1 && !s->write)
		stream_f4<1, 0><<<s->grid, 256>>>(NULL, s->src, NULL, s->n4, s->sink);
	else if (s->nread == 2)
		stream_f4<2, 1><<<s->grid, 256>>>(s->dst, s->src, s->src2, s->n4, s->sink);
	else if (s->nread == 1)
		stream_f4<1, 1><<<s->grid, 256>>>(s->dst, s->src, NULL, s->n4, s->sink);
	else
		stream_f4<0, 1><<<s->grid, 256>>>(s->dst, NULL, NULL, s->n4, s->sink);
	return CK_LAUNCH();
}

static int launch_read(void *p)
{
	struct stream_arg *s = (struct stream_arg *)p;

	if (s->rows)  /* the ILP kernel */
		read_f4_ilp<<<s->grid, 256>>>(s->src, s->n4, s->passes, s->sink);
	else
		read_f4<<<s->grid, 256>>>(s->src, s->n4, s->passes, s->sink);
	return CK_LAUNCH();
}

struct fma_arg {
	void *out, *ab;
	int blocks, threads, iters, dbl;
};

static int launch_fma(void *p)
{
	struct fma_arg *f = (struct fma_arg *)p;

	if (f->dbl)
		fma_chains<double><<<f->blocks, f->threads>>>((double *)f->out,
							     (const double *)f->ab, f->iters);
	else
		fma_chains<float><<<f->blocks, f->threads>>>((float *)f->out,
							    (const float *)f->ab, f->iters);
	return CK_LAUNCH();
}

struct gemm_arg {
	cublasHandle_t h;
	int n, tf32;
	void *a, *b, *c;
};

static int launch_gemm(void *p)
{
	struct gemm_arg *g = (struct gemm_arg *)p;
	const float one = 1.0f, zero = 0.0f;
	cublasStatus_t s;

	if (g->tf32)
		s = cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one,
				 g->a, CUDA_R_32F, g->n, g->b, CUDA_R_32F, g->n, &zero,
				 g->c, CUDA_R_32F, g->n, CUBLAS_COMPUTE_32F_FAST_TF32,
				 CUBLAS_GEMM_DEFAULT);
	else
		s = cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one,
				 g->a, CUDA_R_16BF, g->n, g->b, CUDA_R_16BF, g->n, &zero,
				 g->c, CUDA_R_32F, g->n, CUBLAS_COMPUTE_32F,
				 CUBLAS_GEMM_DEFAULT);
	if (s != CUBLAS_STATUS_SUCCESS)
		return error("cuBLAS GEMM failed: %s", cublasGetStatusString(s));
	return 0;
}

static void put(struct ceiling *c, const char *name, const char *unit,
		double value, const char *prov, const char *method)
{
	memset(c, 0, sizeof *c);
	snprintf(c->name, sizeof c->name, "%s", name);
	snprintf(c->unit, sizeof c->unit, "%s", unit);
	c->value = value;
	snprintf(c->provenance, sizeof c->provenance, "%s", prov);
	snprintf(c->method, sizeof c->method, "%s", method);
}

/* The DRAM mixes in the order measured: name, streams read and written,
 * what the method says. */
static const struct {
	const char *name, *what;
	int nread, write;
} dram_mixes[] = {
	{ "dram_bw", "copy kernel c = a", 1, 1 },
	{ "dram_read_bw", "read kernel", 1, 0 },
	{ "dram_add_bw", "add kernel c = a + b", 2, 1 },
	{ "dram_write_bw", "write kernel c = i", 0, 1 },
};

/* The parts and their sizes: a device's first run pays for all of them,
 * which must stay under 15 s on an H100 (by the sizes, a few seconds at
 * most, the cuBLAS handle and the buffers' set-up included):
 *   DRAM, 4 mixes   buffers of 1 GiB (>= 20x L2), 4 access patterns each,
 *                   20 samples of 4 launches after 3 launches of warm-up;
 *                   a launch moves 1 to 3 GiB, ~0.35 to 1.1 ms at 3 TB/s:
 *                   about 1.6 s in all
 *   L2              a quarter of L2 read 50 times a launch, 10 samples
 *   FP32, FP64 FMA  1056 x 256 threads x 8 chains x 16384 (4096) FMAs,
 *                   10 samples of about 1 ms
 *   tensor          cuBLAS 8192^3 bf16 and tf32 GEMMs, 10 samples each
 * A DRAM sample is 4 launches back to back: the dirty lines a launch
 * leaves in L2 are written back during the next one, so each launch's
 * time holds the write-back of as many lines as it leaves (L2 at most,
 * under 5% of 1 GiB), and only the last launch's tail goes untimed: the
 * bytes written per launch are all counted, within L2 / 4 GiB (~1%). */
int ceilings_measure(const struct probe_device *d, struct ceiling *out, int max,
		     int verbose)
{
	size_t free_b = 0, total_b = 0, big, l2;
	struct stream_arg s;
	struct fma_arg f;
	struct gemm_arg g;
	void *buf0 = NULL, *buf1 = NULL, *buf2 = NULL, *buf3 = NULL, *ab = NULL;
	char method[160];
	double ms;
	int n = 0, rc = -1;

	memset(&g, 0, sizeof g);
	memset(&s, 0, sizeof s);
	if (max < PROBE_NMEASURED)
		return error("ceilings: room for %d, need %d", max, PROBE_NMEASURED);
	if (CK(cudaMemGetInfo(&free_b, &total_b)))
		return -1;
	/* 1 GiB a stream (>= 20x L2 on any current GPU), less if memory is
	 * short; the add kernel needs three. */
	big = (size_t)1 << 30;
	while (big > ((size_t)64 << 20) && 4 * big > free_b)
		big /= 2;
	l2 = (size_t)d->l2_bytes;
	if (CK(cudaMalloc(&buf0, big)) || CK(cudaMalloc(&buf1, big)) ||
	    CK(cudaMalloc(&buf3, big)) || CK(cudaMalloc(&buf2, 4096 * sizeof(float))))
		goto out_free;
	fill_hash<float><<<1024, 256>>>((float *)buf0, big / 4, 1);
	fill_hash<float><<<1024, 256>>>((float *)buf1, big / 4, 2);
	fill_hash<float><<<1024, 256>>>((float *)buf3, big / 4, 5);
	if (CK_LAUNCH() || CK(cudaDeviceSynchronize()))
		goto out_free;

	/* DRAM, each mix: bytes read + bytes written per second. */
	s.src = (const float4 *)buf0;
	s.src2 = (const float4 *)buf1;
	s.dst = (float4 *)buf3;
	s.n4 = big / 16;
	s.grid = d->sm_count * 8;
	s.sink = (float *)buf2;
	for (size_t i = 0; i < ARRAY_SIZE(dram_mixes); i++) {
		/* The patterns tried, the best kept: the grid-wide stride at
		 * 8 and 32 blocks an SM; a row a block of 128 and 512 threads
		 * with ROW_ILP float4s a thread and stream, and of 256 threads
		 * with 2 and 1 (the shape of the elementwise kernels of Triton
		 * and of kernels/softplus: fewer bytes in flight a thread, more
		 * blocks; on an H100 such kernels read 100.1-100.5 % of the
		 * roof the first four gave). */
		static const struct { int grid_per_sm, rows, ilp; } pat[] = {
			{ 8, 0, 0 }, { 32, 0, 0 }, { 0, 128, ROW_ILP }, { 0, 512, ROW_ILP },
			{ 0, 256, 2 }, { 0, 256, 1 },
		};
		int streams = dram_mixes[i].nread + dram_mixes[i].write;
		double best = 0;
		size_t bp = 0;

		s.nread = dram_mixes[i].nread;
		s.write = dram_mixes[i].write;
		if (verbose)
			fprintf(stderr, "ceilings: DRAM %s over %d x %zu MiB\n",
				dram_mixes[i].what, streams, big >> 20);
		for (size_t k = 0; k < ARRAY_SIZE(pat); k++) {
			s.grid = d->sm_count * pat[k].grid_per_sm;
			s.rows = pat[k].rows;
			s.row_ilp = pat[k].ilp;
			if (time_ms(launch_mix, &s, 20, 4, 1, &ms))
				goto out_free;
			if ((double)streams * big / (ms * 1e-3) > best) {
				best = (double)streams * big / (ms * 1e-3);
				bp = k;
			}
		}
		if (pat[bp].rows)
			snprintf(method, sizeof method, "%s, a row of %d float4 a block of "
				 "%d threads (best of %zu patterns), %d x %zu MiB, best of "
				 "20 samples of 4 launches", dram_mixes[i].what,
				 pat[bp].ilp * pat[bp].rows, pat[bp].rows, ARRAY_SIZE(pat),
				 streams, big >> 20);
		else
			snprintf(method, sizeof method, "%s, grid-wide stride, %d blocks an "
				 "SM, float4 x %d a thread (best of %zu patterns), %d x %zu MiB, "
				 "best of 20 samples of 4 launches", dram_mixes[i].what,
				 pat[bp].grid_per_sm, STREAM_ILP, ARRAY_SIZE(pat), streams,
				 big >> 20);
		put(&out[n++], dram_mixes[i].name, "B/s", best, "measured", method);
	}
	s.rows = 0;
	s.grid = d->sm_count * 8;
	cudaFree(buf3);
	buf3 = NULL;

	/* L2: a buffer of a quarter (or an eighth) of L2 read 50 times per
	 * launch (the first pass comes from DRAM: 2% of the bytes). H100's L2
	 * is two partitions; a quarter stays resident in both halves. The best
	 * of one load a thread at 8 blocks an SM and ROW_ILP loads a thread at
	 * 8 and 32. It stays a read test: a GEMM's L2 traffic (TMA loads,
	 * multicast, its output's writes) reached 104-105 % of it on an H100
	 * either way, and the report says to judge such an op by its DRAM
	 * roof. */
	{
		static const struct { int ilp, grid_per_sm, frac; } pat[] = {
			{ 0, 8, 4 }, { 1, 8, 4 }, { 1, 32, 4 }, { 1, 8, 8 }, { 1, 32, 8 },
		};
		double best = 0;
		size_t bp = 0;

		s.passes = 50;
		if (verbose)
			fprintf(stderr, "ceilings: L2 over %zu KiB x %d passes\n",
				(l2 / 4) >> 10, s.passes);
		for (size_t k = 0; k < ARRAY_SIZE(pat); k++) {
			s.n4 = (l2 / (size_t)pat[k].frac) / 16;
			s.rows = pat[k].ilp;
			s.grid = d->sm_count * pat[k].grid_per_sm;
			if (time_ms(launch_read, &s, 10, 1, 0, &ms))
				goto out_free;
			if ((double)s.n4 * 16 * s.passes / (ms * 1e-3) > best) {
				best = (double)s.n4 * 16 * s.passes / (ms * 1e-3);
				bp = k;
			}
		}
		s.rows = 0;
		s.grid = d->sm_count * 8;
		snprintf(method, sizeof method, "read kernel, __ldcg float4 x %d a thread, "
			 "%d blocks an SM, %zu KiB x %d passes (best of %zu patterns)",
			 pat[bp].ilp ? ROW_ILP : 1, pat[bp].grid_per_sm,
			 (l2 / (size_t)pat[bp].frac) >> 10, s.passes, ARRAY_SIZE(pat));
		put(&out[n++], "l2_bw", "B/s", best, "measured", method);
	}

	/* FP32 and FP64 FMA: every SM full, long chains. */
	{
		const float fab[2] = { 1.0f - 1.0f / 1048576.0f, 1.0f / 1048576.0f };
		const double dab[2] = { 1.0 - 1.0 / 1048576.0, 1.0 / 1048576.0 };

		if (CK(cudaMalloc(&ab, 16)))
			goto out_free;
		f.out = buf1;
		f.ab = ab;
		f.blocks = d->sm_count * 8;
		f.threads = 256;
		for (int dbl = 0; dbl < 2; dbl++) {
			double flop;

			f.dbl = dbl;
			f.iters = dbl ? 4096 : 16384;
			if (CK(cudaMemcpy(ab, dbl ? (const void *)dab : (const void *)fab,
					  dbl ? sizeof dab : sizeof fab,
					  cudaMemcpyHostToDevice)))
				goto out_free;
			if (verbose)
				fprintf(stderr, "ceilings: %s FMA chains\n", dbl ? "FP64" : "FP32");
			if (time_ms(launch_fma, &f, 10, 1, 0, &ms))
				goto out_free;
			flop = 2.0 * f.blocks * f.threads * (double)f.iters * PROBE_FMA_CHAINS;
			snprintf(method, sizeof method, "%d independent %s FMA chains x %d "
				 "per thread, %d x %d threads", PROBE_FMA_CHAINS,
				 dbl ? "fp64" : "fp32", f.iters, f.blocks, f.threads);
			put(&out[n++], dbl ? "fp64_fma" : "fp32_fma", "FLOP/s",
			    flop / (ms * 1e-3), "measured", method);
		}
	}

	/* Tensor cores through cuBLAS: 8192^3 bf16 (fp32 accumulate) and tf32. */
	{
		int gn = 8192;
		size_t need = (size_t)gn * gn * 4 * 3;

		if (need > big * 2) {  /* only when memory is very short */
			gn = 4096;
			need = (size_t)gn * gn * 4 * 3;
		}
		cudaFree(buf0);
		cudaFree(buf1);
		buf0 = buf1 = NULL;
		if (CK(cudaMalloc(&buf0, (size_t)gn * gn * 4 * 2)) ||
		    CK(cudaMalloc(&buf1, (size_t)gn * gn * 4)))
			goto out_free;
		if (cublasCreate(&g.h) != CUBLAS_STATUS_SUCCESS) {
			error("cannot create a cuBLAS handle");
			goto out_free;
		}
		g.n = gn;
		g.c = buf1;
		for (int tf32 = 0; tf32 < 2; tf32++) {
			size_t elems = (size_t)gn * gn;

			g.tf32 = tf32;
			g.a = buf0;
			if (tf32) {
				g.b = (float *)buf0 + elems;
				fill_hash<float><<<1024, 256>>>((float *)buf0, 2 * elems, 3);
			} else {
				g.b = (__nv_bfloat16 *)buf0 + elems;
				fill_hash<__nv_bfloat16><<<1024, 256>>>((__nv_bfloat16 *)buf0,
									2 * elems, 4);
			}
			if (CK_LAUNCH() || CK(cudaDeviceSynchronize()))
				goto out_free;
			if (verbose)
				fprintf(stderr, "ceilings: cuBLAS %s GEMM %d^3\n",
					tf32 ? "tf32" : "bf16", gn);
			if (time_ms(launch_gemm, &g, 10, 1, 0, &ms))
				goto out_free;
			snprintf(method, sizeof method, "cuBLAS GEMM %s %d^3, fp32 accumulate, "
				 "median of 10", tf32 ? "tf32" : "bf16", gn);
			put(&out[n++], tf32 ? "tensor_tf32" : "tensor_bf16", "FLOP/s",
			    2.0 * gn * (double)gn * gn / (ms * 1e-3), "measured", method);
		}
	}
	rc = n;
out_free:
	if (g.h)
		cublasDestroy(g.h);
	cudaFree(buf0);
	cudaFree(buf1);
	cudaFree(buf2);
	cudaFree(buf3);
	cudaFree(ab);
	return rc;
}

/* ---- theoretical ------------------------------------------------------ */

struct copy_arg {
	float *dst, *src;
	size_t n;
};

static int launch_small_copy(void *p)
{
	struct copy_arg *c = (struct copy_arg *)p;

	return probe_copy_f32(c->dst, c->src, c->n);
}

/* Each ceiling: the metrics whose product it is, times a factor. Names are
 * Nsight Compute's (its roofline sections use the same peak_sustained
 * metrics); a name the chip lacks drops only that ceiling. The DRAM peak
 * is one for every read/write mix: the bus's, which no mix reaches (the
 * measured ceilings say how far each falls short). */
static const struct {
	const char *name, *unit, *peak, *rate;
	double factor;
	const char *what;
} theory[] = {
	{ "dram_bw", "B/s", "dram__bytes.sum.peak_sustained",
	  "dram__cycles_elapsed.avg.per_second", 1, "DRAM bytes/cycle" },
	{ "dram_read_bw", "B/s", "dram__bytes.sum.peak_sustained",
	  "dram__cycles_elapsed.avg.per_second", 1, "DRAM bytes/cycle" },
	{ "dram_add_bw", "B/s", "dram__bytes.sum.peak_sustained",
	  "dram__cycles_elapsed.avg.per_second", 1, "DRAM bytes/cycle" },
	{ "dram_write_bw", "B/s", "dram__bytes.sum.peak_sustained",
	  "dram__cycles_elapsed.avg.per_second", 1, "DRAM bytes/cycle" },
	{ "l2_bw", "B/s", "lts__t_bytes.sum.peak_sustained",
	  "lts__cycles_elapsed.avg.per_second", 1, "L2 bytes/cycle" },
	{ "fp32_fma", "FLOP/s", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
	  "sm__cycles_elapsed.avg.per_second", 2, "FFMA/cycle x 2" },
	{ "fp64_fma", "FLOP/s", "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
	  "sm__cycles_elapsed.avg.per_second", 2, "DFMA/cycle x 2" },
	{ "tensor_bf16", "FLOP/s", "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
	  "sm__cycles_elapsed.avg.per_second", 1, "bf16 HGMMA ops/cycle" },
	{ "tensor_tf32", "FLOP/s", "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained",
	  "sm__cycles_elapsed.avg.per_second", 1, "tf32 HGMMA ops/cycle" },
};

int ceilings_theoretical(const struct probe_device *d, struct ceiling *out, int max)
{
	struct copy_arg c;
	double prev[2] = { 0, 0 };
	int n = 0, rc;

	(void)d;
	c.n = 1 << 20;
	if (CK(cudaMalloc(&c.dst, c.n * 4)) || CK(cudaMalloc(&c.src, c.n * 4)))
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(theory) && n < max; i++) {
		const char *m[2] = { theory[i].peak, theory[i].rate };
		double v[2];
		char method[160];

		/* The same metrics as the entry before (the DRAM mixes): its
		 * sample, not another profiler session (~0.4 s each). */
		if (i > 0 && !strcmp(m[0], theory[i - 1].peak) &&
		    !strcmp(m[1], theory[i - 1].rate)) {
			if (!(prev[0] > 0 && prev[1] > 0))
				continue;
			v[0] = prev[0];
			v[1] = prev[1];
			rc = 0;
		} else {
			rc = counters_sample(m, 2, launch_small_copy, &c, v);
			prev[0] = prev[1] = 0;
			if (rc == 0) {
				prev[0] = v[0];
				prev[1] = v[1];
			}
		}
		if (rc == PROBE_DENIED || rc == PROBE_BUSY) {
			n = 0;
			break;
		}
		if (rc == PROBE_BAD_COUNTER)
			continue;  /* reported; this chip lacks it */
		if (rc) {
			n = -1;
			break;
		}
		if (!(v[0] > 0 && v[1] > 0))
			continue;
		snprintf(method, sizeof method, "%s x %.0f MHz: %s x %s%s",
			 theory[i].what, v[1] / 1e6, theory[i].peak, theory[i].rate,
			 theory[i].factor != 1 ? " x 2" : "");
		put(&out[n++], theory[i].name, theory[i].unit,
		    v[0] * v[1] * theory[i].factor, "theoretical", method);
	}
	cudaFree(c.dst);
	cudaFree(c.src);
	return n;
}
