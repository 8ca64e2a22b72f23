/* ewmask.cuh - what the bias-elementwise workloads with a saved mask
 * (bias_dropout_add, bias_relu) share on the device: the plan of their row
 * kernels, 1-bit-per-element mask packing, the deterministic column sums
 * (dbias): a partial row per block, then a fixed-order second pass; and
 * the fused backwards' bulk kernel (dy staged through shared memory by
 * bulk asynchronous copies, option bwd_kernel). CUDA C++ only.
 *
 * The row kernels: an M x N row-major tensor, blocks of EW_THREADS threads
 * shaped tx x ty (tx a multiple of 32 covering up to 256 vectors of a
 * row, ty rows side by side), a grid of gx column blocks by gy row groups;
 * a block takes EW_UNROLL bands of ty rows that lie together, a thread row
 * r, r + ty, ... of them in flight, then moves gy ty EW_UNROLL rows on, and
 * a thread keeps the same columns all along (its dbias partial in
 * registers). The forward's grid covers M in one pass (a thread's
 * EW_UNROLL rows and done: short blocks, no partial last wave of long
 * ones); the backward's in two, so that its partial rows stay few
 * (ew_plan_cols). Vector path when N is a multiple of the 16-byte vector width
 * V (every row then starts 16-byte aligned); otherwise each thread takes V
 * columns tx apart, scalar (coalesced, no alignment needed).
 *
 * The bit mask: bit e % 32 of word e / 32 is element e = i N + j (the
 * flattened index), ceil(M N / 32) words. In the vector path with N a
 * multiple of 32 the 32 / V lanes of a word combine their bits with shuffles
 * and one writes it; otherwise the forward runs a flattened kernel in which
 * a warp takes 32 consecutive elements and __ballot_sync builds the word. */
#ifndef FP_EWMASK_CUH
#define FP_EWMASK_CUH

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "device.cuh"
#include "kutil.h"
#include "util.h"
#include "workload.h"

/* A 16-byte vector kept as loaded, widened to fp32 at use: 4 registers a
 * vector in flight whatever the type (8 as bf16's floats). */
template <bool STREAM>
__device__ __forceinline__ uint4 ew_ldraw(const void *p)
{
	return STREAM ? __ldcs((const uint4 *)p) : __ldg((const uint4 *)p);
}

#define EW_THREADS 256
#define EW_UNROLL 4            /* rows in flight per thread */
#define EW_MAX_GY 65535        /* the grid's y limit */
#define EW_MAX_PARTIALS 1024   /* most partial rows of dbias */

struct ew_plan {
	int vec;             /* 1: the 16-byte vector path */
	int V;               /* elements per 16 bytes */
	unsigned tx, ty;     /* block shape */
	unsigned gx, gy;     /* grid */
	long prows;          /* dbias partial rows: gy (ew_plan_cols,
	                        ew_plan_bulk), else 0 */
	long brows;          /* rows a block (ew_plan_bulk), else 0 */
};

/* The forward's plan for M x N of es-byte elements (no partial rows); the
 * same on every device, as ew_plan_cols. */
static inline struct ew_plan ew_plan_rows(long M, long N, size_t es)
{
	struct ew_plan p;
	long nv, gy;

	p.V = (int)(16 / es);
	p.vec = N % p.V == 0;
	nv = (N + p.V - 1) / p.V;
	p.tx = (unsigned)(nv >= 256 ? 256 : (nv + 31) / 32 * 32);
	p.ty = EW_THREADS / p.tx;
	p.gx = (unsigned)((nv + p.tx - 1) / p.tx);
	gy = (M + (long)p.ty * EW_UNROLL - 1) / ((long)p.ty * EW_UNROLL);
	if (gy > EW_MAX_GY)
		gy = EW_MAX_GY;
	p.gy = (unsigned)(gy < 1 ? 1 : gy);
	p.prows = 0;
	p.brows = 0;
	return p;
}

/* The backward's plan for M x N of es-byte elements: blocks of one warp
 * across (32 vectors of a row) by EW_THREADS / 32 rows, so a block's
 * column sums fold into one partial row (ew_block_partial); a thread takes
 * 2 EW_UNROLL rows (the grid covers M in two passes), so prows = gy =
 * M / 64 (256 at M = 16384: 1.6 % of dx's bytes at fp32), at most
 * EW_MAX_PARTIALS. The partial rows enter device_bytes, which must not
 * touch the GPU: the plan is the same on every device. */
static inline struct ew_plan ew_plan_cols(long M, long N, size_t es)
{
	struct ew_plan p;
	long nv, gy;

	p.V = (int)(16 / es);
	p.vec = N % p.V == 0;
	nv = (N + p.V - 1) / p.V;
	p.tx = 32;
	p.ty = EW_THREADS / 32;
	p.gx = (unsigned)((nv + 31) / 32);
	gy = (M + 2L * p.ty * EW_UNROLL - 1) / (2L * p.ty * EW_UNROLL);
	if (gy > EW_MAX_PARTIALS)
		gy = EW_MAX_PARTIALS;
	p.gy = (unsigned)(gy < 1 ? 1 : gy);
	p.prows = p.gy;
	p.brows = 0;
	return p;
}

/* The bulk backward's plan (ew_bulk_bwd_kernel) for M x N of es-byte
 * elements, N a multiple of 16 / es: ew_plan_cols' blocks and column
 * strips, but a block takes EW_BULK_BLOCK_ROWS rows (more where M is so
 * large that ew_plan_cols caps its partial rows), so prows = ceil(M /
 * brows) is at most ew_plan_cols' prows: the partial rows a caller
 * allocates for that plan serve this one. The same on every device. */
#define EW_BULK_STAGES 4        /* stages of the shared-memory ring */
#define EW_BULK_RU 2            /* rows a thread takes from one stage */
#define EW_BULK_ROWS (EW_BULK_RU * EW_THREADS / 32)  /* rows a stage: 16 */
#define EW_BULK_PITCH 512       /* bytes of a stage row: 32 vectors */
#define EW_BULK_BLOCK_ROWS 128  /* rows a block, at least */
/* Blocks an SM the register budget is set for: 48 registers a thread,
 * which every instance takes without spilling under CUDA 13.0 (bf16
 * fused_regen wants 50 unbounded; at 6 blocks, 40, fused_mask spills);
 * 5 rings of 32 KB fit the shared memory too. */
#define EW_BULK_MIN_BLOCKS 5
#define EW_BULK_SMEM (EW_BULK_STAGES * EW_BULK_ROWS * EW_BULK_PITCH + \
		      EW_BULK_STAGES * 8)

static inline struct ew_plan ew_plan_bulk(long M, long N, size_t es)
{
	struct ew_plan p = ew_plan_cols(M, N, es);
	long rb = EW_BULK_BLOCK_ROWS;

	if ((M + rb - 1) / rb > p.prows) {
		rb = (M + p.prows - 1) / p.prows;
		rb = (rb + EW_BULK_ROWS - 1) / EW_BULK_ROWS * EW_BULK_ROWS;
	}
	p.brows = rb;
	p.gy = (unsigned)((M + rb - 1) / rb);
	p.prows = p.gy;
	return p;
}

/* The rows of a fused backward's grid under plan p (ew_plan_cols) for M
 * rows, its kernel fn: resident_rows on the current device, bands of ty
 * EW_UNROLL rows (the kernel's row loop is grid-stride): the grid is
 * resident, no last partial wave, every block as long as the next within
 * a band, and fewer partial rows for the column sum. The plan's prows
 * stay the bound its buffer is sized for (the model counts no partial
 * bytes). Where the device cannot be asked, gy. The fused backwards
 * that read a saved mask take it (bias_dropout_add's fused_mask and
 * fused_bytemask, bias_relu's fused_bitmask); redrawing the mask (Philox,
 * fused_regen) runs better on the plan's grid, up to 1.10x slower
 * resident, and the unfused chains keep the plan too. Measured (bench/
 * RESULTS.md, "The saved-mask backwards on a resident grid, the fp32
 * LayerNorm backward's 3-chunk rows unstaged"), on a
 * 132-SM H200: 0.93-0.95x the fused byte- and bit-mask backwards' time in
 * bf16 at 16384 x 768 and 4096, 0.95-0.97x fp32 at 4096, fp32 at 768
 * unchanged. */
static inline unsigned ew_resident_gy(const struct ew_plan *p, long M, const void *fn)
{
	int dev = 0, sms = 0, per = 0;

	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
	    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, fn, (int)(p->tx * p->ty), 0) !=
		    cudaSuccess) {
		(void)cudaGetLastError();  // not for the next launch check to find
		return p->gy;
	}
	return (unsigned)resident_rows(p->gx, p->gy, M, (long)p->ty * EW_UNROLL, per, sms);
}

/* The blocks of a flat kernel over n items, per items a block: at least
 * 1, at most 2^20 (a kernel past that loops over the rest). */
static inline unsigned ew_flat_grid(size_t n, size_t per)
{
	size_t b = (n + per - 1) / per;

	return (unsigned)(b < 1 ? 1 : b > (1u << 20) ? (1u << 20) : b);
}

/* Bits of a mask for M x N elements, in bytes: ceil(M N / 32) words. */
static inline size_t ew_bits_bytes(long M, long N)
{
	return ((size_t)M * (size_t)N + 31) / 32 * 4;
}

/* Vector path, N % 32 == 0: lane groups of 32 / V lanes hold one word's V-bit
 * pieces (lane order = element order); put the word together and let the
 * group's first lane store it at words[w]. Every lane of the warp calls it
 * (valid: whether this lane's columns exist; a group is wholly in or out). */
template <int V>
__device__ __forceinline__ void ew_store_bits(uint32_t *words, uint64_t w,
					      unsigned bits, bool valid)
{
	constexpr int G = 32 / V;
	const int lane = threadIdx.x & 31;
	uint32_t part = (uint32_t)bits << ((lane % G) * V);

#pragma unroll
	for (int o = 1; o < G; o <<= 1)
		part |= __shfl_xor_sync(FP_FULL_MASK, part, o);
	if (valid && lane % G == 0)
		words[w] = part;
}

/* The V bits of elements e .. e + V - 1 (e a multiple of V; V divides 32). */
template <int V>
__device__ __forceinline__ unsigned ew_load_bits(const uint32_t *words, uint64_t e)
{
	return (__ldg(words + (e >> 5)) >> (e & 31)) & ((1u << V) - 1u);
}

__device__ __forceinline__ unsigned ew_load_bit(const uint32_t *words, uint64_t e)
{
	return (__ldg(words + (e >> 5)) >> (e & 31)) & 1u;
}

/* The saved bit mask as the bulk backward reads it: the V bits of the
 * vector at element e (ew_load_bits). */
template <int V>
struct ew_mask_words {
	const uint32_t *words;

	__device__ __forceinline__ unsigned bits(uint64_t e) const
	{
		return ew_load_bits<V>(words, e);
	}
};

/* h = x + bias, and y = relu(h) where RELU: the unfused variants' first
 * kernel (and bias_relu's ReLU alone with bias NULL). Rows under the plan. */
template <typename T, int V, bool VEC, bool RELU>
__global__ void __launch_bounds__(EW_THREADS)
ew_bias_act_kernel(const T *__restrict__ x, const T *__restrict__ bias,
		   T *__restrict__ y, long M, long N)
{
	const long c0 = VEC ? ((long)blockIdx.x * blockDim.x + threadIdx.x) * V
			    : (long)blockIdx.x * blockDim.x * V + threadIdx.x;
	const long cs = VEC ? 1 : blockDim.x;
	// A block's EW_UNROLL bands of blockDim.y rows lie together (a thread's
	// rows rs apart), so the block streams one span of memory.
	const long r0 = (long)blockIdx.y * blockDim.y * EW_UNROLL + threadIdx.y;
	const long rs = blockDim.y;
	const long step = (long)gridDim.y * blockDim.y * EW_UNROLL;
	float b[V];

#pragma unroll
	for (int k = 0; k < V; k++)
		b[k] = 0.f;
	if (bias && VEC && c0 < N)
		ld16<false>(bias + c0, b);
	else if (bias && !VEC)
#pragma unroll
		for (int k = 0; k < V; k++)
			if (c0 + k * cs < N)
				b[k] = to_f(bias[c0 + k * cs]);
	for (long i0 = r0; i0 < M; i0 += step) {
		float v[EW_UNROLL][V];
		uint4 xr[EW_UNROLL];  // VEC: as loaded

#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const long i = i0 + u * rs;

			if (i >= M)
				continue;
			if (VEC) {
				if (c0 < N)
					xr[u] = ew_ldraw<true>(x + i * N + c0);
			} else {
#pragma unroll
				for (int k = 0; k < V; k++)
					if (c0 + k * cs < N)
						v[u][k] = to_f(x[i * N + c0 + k * cs]);
			}
		}
#pragma unroll
		for (int u = 0; u < EW_UNROLL; u++) {
			const long i = i0 + u * rs;

			if (i >= M)
				continue;
			if (VEC)
				unpack16(xr[u], v[u], T());
#pragma unroll
			for (int k = 0; k < V; k++) {
				v[u][k] += b[k];
				if (RELU)
					v[u][k] = fmaxf(v[u][k], 0.f);
			}
			if (VEC) {
				if (c0 < N)
					st16<true>(y + i * N + c0, v[u]);
			} else {
#pragma unroll
				for (int k = 0; k < V; k++)
					if (c0 + k * cs < N)
						y[i * N + c0 + k * cs] = from_f<T>(v[u][k]);
			}
		}
	}
}

/* A block's column sums under ew_plan_cols: acc[k] (column c0 + k cs of
 * this thread's rows) added over the block's rows in threadIdx.y order
 * through shared memory, then written as partial row blockIdx.y. Every
 * thread of the block calls it (it synchronizes). */
template <int V>
__device__ __forceinline__ void ew_block_partial_in(const float *acc, float *__restrict__ partial,
						    long c0, long cs, long N, float *red)
{
	const int t = threadIdx.y * blockDim.x + threadIdx.x;

#pragma unroll
	for (int k = 0; k < V; k++)
		red[k * EW_THREADS + t] = acc[k];
	__syncthreads();
	if (threadIdx.y != 0)
		return;
#pragma unroll
	for (int k = 0; k < V; k++) {
		float s = 0.f;

		for (unsigned r = 0; r < blockDim.y; r++)
			s += red[k * EW_THREADS + r * blockDim.x + threadIdx.x];
		if (c0 + k * cs < N)
			partial[(long)blockIdx.y * N + c0 + k * cs] = s;
	}
}

/* The same through a static shared buffer of V EW_THREADS floats. */
template <int V>
__device__ __forceinline__ void ew_block_partial(const float *acc, float *__restrict__ partial,
						 long c0, long cs, long N)
{
	__shared__ float red[V * EW_THREADS];

	ew_block_partial_in<V>(acc, partial, c0, cs, N, red);
}

#include "ewmask/colsum.cuh"

/* The backwards' option colsum (values[0] the default): how the second
 * pass is launched. plain: after the kernel that wrote the partial rows
 * has ended, as any launch on its stream. pdl: programmatically (sm_90):
 * the rows kernels call grid_dep_launch as they start, so the column
 * sum's blocks are scheduled while the rows kernel's last blocks run and
 * wait on the GPU for its end (grid_dep_wait) instead of the launch
 * following it. auto: ew_colsum_auto_pdl. Measured (bench/RESULTS.md,
 * session 27, H100): pdl ends the fused ops 0.7-2.6 µs sooner (their
 * span: no launch gap), but the column sum still runs 1.7-2.6 µs past
 * the rows kernel's end, about its time launched plainly, so the op's GPU
 * time is the same; and the column sum's record then spans 4-13.5 µs,
 * its wait included, which a profile shows as the kernel's time. So auto
 * is plain. */
enum { EW_CS_AUTO, EW_CS_PLAIN, EW_CS_PDL, EW_CS_NVALUES };
static const char *const ew_colsum_values[] = { "auto", "plain", "pdl", NULL };
#define EW_COLSUM_HELP "the column sum's launch (dbias's second kernel): plain " \
	"(after the rows kernel ends), pdl (programmatic dependent launch: " \
	"scheduled while the rows kernel's last blocks run, waiting for its end " \
	"on the GPU); auto: plain"
static const int ew_colsum_auto_pdl = 0;

/* Whether option value opt (an EW_CS_ value) launches the column sum
 * programmatically. */
static inline bool ew_colsum_pdl(int opt)
{
	return opt == EW_CS_PDL || (opt == EW_CS_AUTO && ew_colsum_auto_pdl);
}

/* The second pass as the backwards' kernel() line says it. */
static inline const char *ew_colsum_desc(bool pdl)
{
	return pdl ? "column partials summed in order (a programmatic launch)"
		   : "column partials summed in order";
}

/* The second pass's launch on stream st, programmatic under pdl. Returns
 * 0, or -1 if the launch failed (reported). */
template <typename T>
static inline int ew_colsum(const float *partial, long prows, long N, T *dbias,
			    bool pdl, cudaStream_t st)
{
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute at[1];

	cfg.gridDim = dim3((unsigned)((N + EW_CS_COLS - 1) / EW_CS_COLS));
	cfg.blockDim = dim3(EW_CS_COLS, EW_CS_LANES);
	cfg.stream = st;
	if (pdl) {
		at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
		at[0].val.programmaticStreamSerializationAllowed = 1;
		cfg.attrs = at;
		cfg.numAttrs = 1;
	}
	return cuda_check(cudaLaunchKernelEx(&cfg, ew_colsum_kernel<T>, partial, prows, N, dbias),
			  "launch of ew_colsum_kernel", __FILE__, __LINE__);
}

/* Column partials of g (an M x N tensor, the dx of an unfused backward)
 * into partial[prows][N] under ew_plan_cols: the unfused variants' second
 * kernel. */
template <typename T, int V, bool VEC>
__global__ void __launch_bounds__(EW_THREADS)
ew_colpart_kernel(const T *__restrict__ g, float *__restrict__ partial, long M, long N)
{
	const long c0 = VEC ? ((long)blockIdx.x * blockDim.x + threadIdx.x) * V
			    : (long)blockIdx.x * blockDim.x * V + threadIdx.x;
	const long cs = VEC ? 1 : blockDim.x;
	const long r0 = (long)blockIdx.y * blockDim.y + threadIdx.y;
	const long rs = (long)gridDim.y * blockDim.y;
	float acc[V];

	grid_dep_launch();  // the column sum may be scheduled (ew_colsum)

#pragma unroll
	for (int k = 0; k < V; k++)
		acc[k] = 0.f;
	for (long i = r0; i < M; i += rs) {
		if (VEC) {
			if (c0 < N) {
				float v[V];

				ld16<true>(g + i * N + c0, v);
#pragma unroll
				for (int k = 0; k < V; k++)
					acc[k] += v[k];
			}
		} else {
#pragma unroll
			for (int k = 0; k < V; k++)
				if (c0 + k * cs < N)
					acc[k] += to_f(g[i * N + c0 + k * cs]);
		}
	}
	ew_block_partial<V>(acc, partial, c0, cs, N);
}

/* The bulk backward: dx = dy mask scale and the dbias partials, with dy
 * staged in shared memory by 1-D bulk asynchronous copies (Hopper's TMA
 * engine, cp.async.bulk) instead of loaded into registers. Under
 * ew_plan_bulk: blocks of 32 x 8 threads, a block a strip of 32 vectors
 * (EW_BULK_PITCH bytes) of brows rows, taken in stages of EW_BULK_ROWS rows
 * through a ring of EW_BULK_STAGES stages; a stage row is one copy (one
 * contiguous row segment), the stage's copies completing on its mbarrier
 * (transaction bytes). Warp 0 refills a stage once every thread has read
 * it (a block barrier), so up to EW_BULK_STAGES stages (32 KB) a block are
 * in flight at no register cost, where the rows kernel holds its EW_UNROLL
 * vectors in flight in registers (56 of them: 4 blocks an SM; bench/
 * RESULTS.md, "The elementwise kernels' shape"). A thread takes EW_BULK_RU
 * rows of each stage, vector column threadIdx.x; its mask bits (a load,
 * or a Philox draw) are fetched before it waits for the stage, so their
 * latency hides behind the copy's. dx goes out in 16-byte streaming
 * stores; the column sums stay in registers in row order, then the
 * block's fold into its partial row as in the rows kernel (in the ring's
 * memory, free by then). Needs N a multiple of V (rows 16-byte aligned).
 * MASK gives bits(e): the V keep bits of the vector at element e. */

/* bytes (a multiple of 16) from global src (16-byte aligned) to shared
 * dst, completing on bar; pol an L2 policy (dy is read once). */
__device__ __forceinline__ void ew_bulk_load(uint32_t dst, const void *src, uint32_t bytes,
					     uint32_t bar, uint64_t pol)
{
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
		     ".L2::cache_hint [%0], [%1], %2, [%3], %4;\n"
		     :: "r"(dst), "l"(src), "r"(bytes), "r"(bar), "l"(pol) : "memory");
}

/* Warp 0 fills stage k of the ring (slot k % EW_BULK_STAGES) with rows
 * r .. r + n - 1 of the strip at src (rows rowbytes apart, w16 bytes of
 * each): lane 0 arms the slot's barrier with the stage's bytes, lane l < n
 * copies row r + l. dy is read once: evict-first in L2. */
__device__ __forceinline__ void ew_bulk_fill(unsigned char *ring, uint32_t bar0, int k,
					     const char *src, long rowbytes, long r, int n,
					     uint32_t w16)
{
	const int lane = threadIdx.x;
	const int s = k % EW_BULK_STAGES;
	const uint32_t bar = bar0 + 8 * s;

	if (lane == 0)
		mbar_expect(bar, (uint32_t)n * w16);
	__syncwarp();
	if (lane < n)
		ew_bulk_load(smem_u32(ring + (s * EW_BULK_ROWS + lane) * EW_BULK_PITCH),
			     src + (r + lane) * rowbytes, w16, bar, evict_first_policy());
}

template <typename T, int V, class MASK>
__global__ void __launch_bounds__(EW_THREADS, EW_BULK_MIN_BLOCKS)
ew_bulk_bwd_kernel(const T *__restrict__ dy, MASK mask, float scale, T *__restrict__ dx,
		   float *__restrict__ partial, long M, long N, long brows)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
	__trap();  // launched only on sm_90 and later (ew_bulk_use)
#else
	unsigned char *ring = dyn_smem();
	const uint32_t bar0 = smem_u32(ring + EW_BULK_STAGES * EW_BULK_ROWS * EW_BULK_PITCH);
	const long v0 = (long)blockIdx.x * 32, rlo = (long)blockIdx.y * brows;
	const int nw = N / V - v0 < 32 ? (int)(N / V - v0) : 32;  // vectors of the strip
	const int nr = M - rlo < brows ? (int)(M - rlo) : (int)brows;  // rows of the block
	const int nst = (nr + EW_BULK_ROWS - 1) / EW_BULK_ROWS;
	const bool col = (int)threadIdx.x < nw;
	const long c0 = (v0 + threadIdx.x) * V;
	// this thread's first element and its rows' step (8 rows) as offsets
	// from there, moved on a stage at a time
	uint64_t e = (uint64_t)(rlo + threadIdx.y) * N + c0;
	const uint64_t e8 = 8 * (uint64_t)N;
	float acc[V];

	grid_dep_launch();  // the column sum may be scheduled (ew_colsum)
#pragma unroll
	for (int j = 0; j < V; j++)
		acc[j] = 0.f;
	if (threadIdx.x == 0 && threadIdx.y == 0) {
		for (int s = 0; s < EW_BULK_STAGES; s++)
			mbar_init(bar0 + 8 * s, 1);
		// the barriers' initialisation visible to the copies' proxy
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads();
	if (threadIdx.y == 0)
		for (int k = 0; k < nst && k < EW_BULK_STAGES; k++)
			ew_bulk_fill(ring, bar0, k, (const char *)(dy + v0 * V),
				     N * (long)sizeof(T), rlo + (long)k * EW_BULK_ROWS,
				     min(nr - k * EW_BULK_ROWS, EW_BULK_ROWS), (uint32_t)nw * 16);
	for (int k = 0; k < nst; k++) {
		const int s = k % EW_BULK_STAGES;
		unsigned bits[EW_BULK_RU];

#pragma unroll
		for (int u = 0; u < EW_BULK_RU; u++) {
			const int l = k * EW_BULK_ROWS + threadIdx.y + u * 8;

			bits[u] = l < nr && col ? mask.bits(e + u * e8) : 0u;
		}
		mbar_wait(bar0 + 8 * s, (uint32_t)(k / EW_BULK_STAGES) & 1u);
#pragma unroll
		for (int u = 0; u < EW_BULK_RU; u++) {
			const int l = threadIdx.y + u * 8;
			float v[V];

			if (k * EW_BULK_ROWS + l >= nr || !col)
				continue;
			unpack16(*(const uint4 *)(ring + (s * EW_BULK_ROWS + l) * EW_BULK_PITCH +
						  threadIdx.x * 16),
				 v, T());
#pragma unroll
			for (int j = 0; j < V; j++) {
				v[j] = (bits[u] >> j) & 1u ? v[j] * scale : 0.f;
				acc[j] += v[j];
			}
			st16<true>(dx + e + u * e8, v);
		}
		e += EW_BULK_ROWS * (uint64_t)N;
		// Every thread is done with slot s: refill it, the generic
		// proxy's reads ordered before the copy's writes.
		__syncthreads();
		if (threadIdx.y == 0 && k + EW_BULK_STAGES < nst) {
			const int kn = k + EW_BULK_STAGES;

			asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
			ew_bulk_fill(ring, bar0, kn, (const char *)(dy + v0 * V),
				     N * (long)sizeof(T), rlo + (long)kn * EW_BULK_ROWS,
				     min(nr - kn * EW_BULK_ROWS, EW_BULK_ROWS), (uint32_t)nw * 16);
		}
	}
	// All copies landed and were read (the loop's last barrier): the
	// ring holds the block's column sums now.
	ew_block_partial_in<V>(acc, partial, c0, 1, N, (float *)ring);
#endif
}

/* Launch ew_bulk_bwd_kernel under plan p (ew_plan_bulk, p->vec) on st. */
template <typename T, int V, class MASK>
static inline void ew_bulk_bwd(const struct ew_plan *p, const T *dy, MASK mask, float scale,
			       T *dx, float *partial, long M, long N, cudaStream_t st)
{
	const dim3 grid(p->gx, p->gy), block(32, EW_THREADS / 32);

	ew_bulk_bwd_kernel<T, V, MASK><<<grid, block, EW_BULK_SMEM, st>>>(
		dy, mask, scale, dx, partial, M, N, p->brows);
}

/* The fused backwards' kernel option, bwd_kernel (values[0] the default):
 * the rows kernel (plain 16-byte loads, EW_UNROLL rows in flight a
 * thread) or the bulk one (ew_bulk_bwd_kernel); auto takes ew_bulk_auto's
 * choice for the dtype. */
enum { EW_BWD_AUTO, EW_BWD_ROWS, EW_BWD_BULK, EW_BWD_NVALUES };
static const char *const ew_bwd_kernel_values[] = { "auto", "rows", "bulk", NULL };
#define EW_BWD_KERNEL_HELP "the fused backward's kernel: rows (16-byte loads into " \
	"registers), bulk (dy staged in shared memory by bulk asynchronous copies; " \
	"rows where N is not a multiple of 16 bytes or before sm_90); auto: rows"

/* auto's choice, by dtype (fp32, bf16): 1 takes the bulk kernel. The one
 * line to change when measurements call for it (bench/RESULTS.md), and
 * EW_BWD_KERNEL_HELP's "auto" with it. */
static const int ew_bulk_auto[FP_NDTYPES] = { 0, 0 };

/* Whether a fused backward of rows N es-byte elements wide runs the bulk
 * kernel under option value opt (an EW_BWD_ value): asked for, or auto's
 * choice for dt; rows 16-byte aligned; a device of sm_90 or later (the
 * current one; where it cannot be asked, no). */
static inline int ew_bulk_use(int opt, enum fp_dtype dt, long N, size_t es)
{
	int dev = 0, major = 0;

	if (opt == EW_BWD_ROWS || (opt == EW_BWD_AUTO && !ew_bulk_auto[dt]))
		return 0;
	if (N % (long)(16 / es) != 0)
		return 0;
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) !=
		    cudaSuccess) {
		(void)cudaGetLastError();  // not for the next launch check to find
		return 0;
	}
	return major >= 9;
}

/* A backward check's last step: dbias (nb bytes on the device, from the
 * launch just checked) against a second launch on the same inputs, bit
 * for bit, since the column sums are added in a fixed order (no float
 * atomics): relaunch(op) enqueues the variant on stream 0 (0, or -1
 * reported). A difference fails r, naming the first byte. Returns 0, or
 * -1 when a CUDA call failed. */
template <class OP>
static int ew_check_repeat(OP *op, const void *dbias, size_t nb, int (*relaunch)(OP *),
			   struct fp_check *r)
{
	unsigned char *a = (unsigned char *)xmalloc(2 * nb);
	int rc = -1;

	if (CUDA_CHECK(cudaMemcpy(a, dbias, nb, cudaMemcpyDeviceToHost)) ||
	    dev_poison((void *)dbias, nb) || relaunch(op) ||
	    CUDA_CHECK(cudaDeviceSynchronize()) ||
	    CUDA_CHECK(cudaMemcpy(a + nb, dbias, nb, cudaMemcpyDeviceToHost)))
		goto out_free;
	for (size_t i = 0; i < nb; i++)
		if (a[i] != a[nb + i]) {
			if (r->passed) {
				r->passed = 0;
				snprintf(r->detail, sizeof r->detail, "dbias: a second launch "
					 "gave other bits (byte %zu of %zu)", i, nb);
			}
			break;
		}
	rc = 0;
out_free:
	free(a);
	return rc;
}

#endif
