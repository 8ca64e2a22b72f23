// rows.cuh - the LayerNorm row kernels: LayerNorm of each row of an M x N
// tensor, forward and backward, optionally followed by GELU (MODE picks
// what a kernel instance does), and the templates that pick an instance
// for a row width. CUDA C++ only.
//
// Included by kernels/layernorm/layernorm.cu, which instantiates and
// launches the plain LayerNorm modes (FWD_STATS, FWD_LN, BWD_LN, BWD_LNH)
// and the partial sums, and by kernels/ln_gelu/ln_gelu.cu, which
// instantiates the modes with GELU (FWD_NORM, FWD_FUSED, BWD_DH,
// BWD_FUSED). Each mode is instantiated in one file only, so no kernel is
// compiled twice; other workloads reach LayerNorm through layernorm.h.
//
// Read top to bottom as in llm.c's dev/cuda: the device helpers, the
// kernels (simplest first, each saying what it changes), then the
// templates the launchers pick instances with.
//
// Choices every kernel shares:
// - Statistics in two passes over data already on chip: the mean first,
//   then the sums of d = x - mean and d^2. A naive E[x^2] - E[x]^2 loses
//   everything to cancellation on rows offset by 1e4. Even the mean itself
//   is not representable: near 1e4 an fp32 ulp is 2^-10, so a rounded mean
//   alone would shift every xhat by up to 5e-4 standard deviations. The mean
//   is therefore kept as hi + lo (hi the first-pass mean, lo = sum(d) / N),
//   and xhat = ((x - hi) - lo) rstd, where x - hi is exact (Sterbenz).
//   hi is rounded on its own (__fmul_rn): written s * (1 / N), ptxas may
//   contract the product into each x - hi (an FMA with the product
//   unrounded), and a kernel that writes hi for another to read
//   (FWD_STATS, FWD_LN, BWD_DH) would then have summed its lo about
//   another mean than the hi it writes. ptxas did so in fp32 rows of 32
//   threads and in full rows (16 of the 244 kernels of ln_gelu.cu and
//   layernorm.cu change their code with the rounding); the backward's
//   full rows failed the offset and constant profiles in the unfused
//   chain without it and pass with it (bench/RESULTS.md, "Full rows in
//   the backward").
//   The bf16 forward row kernel (ln_rows_fwd) takes one pass instead: hi is
//   the row's first element, lo = sum(d) / N and var = sum(d^2) / N - lo^2
//   (d = x - hi, exact: bf16 values as fp32), which cancels only as far as
//   the first element lies from the mean, at most sqrt(N - 1) standard
//   deviations, so var keeps about 24 - log2(N) bits, against the 8 a bf16
//   output keeps; it saves a pass and a row sum, 2-3 % of the kernel's time
//   (bench/RESULTS.md, "The bf16 LayerNorm forward in one pass"). Its
//   statistics (FWD_STATS) keep the form hi + lo, which every reader takes.
// - dgamma and dbeta without float atomics: each block of a persistent grid
//   accumulates its rows' contributions per thread-owned column in
//   registers, sums its row groups in
//   a fixed order into one partial row of a [grid][2N] fp32 buffer; a
//   second kernel sums the partials in a fixed order. Same device, same
//   inputs: bit-identical results.
// - GELU in fp32 is written h * sigmoid(2u), which equals 0.5 h (1 + tanh u)
//   but keeps its accuracy in the negative tail; the erf form uses erfc for
//   the same reason. bf16 outputs round to 2^-9 anyway, so the bf16 kernels
//   use the hardware tanh (tanh.approx) instead.
#ifndef FP_LAYERNORM_ROWS_CUH
#define FP_LAYERNORM_ROWS_CUH

#include <stdint.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "device.cuh"
#include "kutil.h"
#include "layernorm/layernorm.h"

/* ------------------------------------------------------------------------ */
/* Shapes and device helpers                                                */
/* ------------------------------------------------------------------------ */

// Elements of a row each thread holds in registers: 32 fp32 values forward
// (8 x 16-byte loads fp32, 4 bf16); backward holds x, dy and the two
// dgamma/dbeta accumulators, so half that. Fewer values per thread would
// mean more threads per row and more registers to spare: the kernels'
// register budgets (see ln_rows_bwd's launch bounds) assume these.
#define FWD_PER_THREAD 32
#define BWD_PER_THREAD 16
// The backward's rows past 512 threads of BWD_PER_THREAD (8192 values), up
// to twice that, take 512 threads of BWD_WIDE_PER_THREAD values each, their
// dgamma/dbeta accumulators in shared memory instead of registers
// (bwd_shape::ACCS; layernorm_bwd_wide): the wide-row kernel (kernel 4)
// took 3.4-7x the copy time of their bytes at 12288 to 16384, this one
// 2.2-4.2x less time (bench/RESULTS.md, "Wide rows in the LayerNorm
// backward's registers").
#define BWD_WIDE_PER_THREAD 32
// Per storage type (F32, BF16): the blocks per SM the backward's 256-thread
// instances ask registers for (1: no cap, 2 caps them at 128, 3 at 80, 4
// at 64). Its dgamma/dbeta accumulators live in registers: at 2 blocks per
// SM they beat accumulators in shared memory at 3 or 4 (bench/RESULTS.md,
// "LayerNorm+GELU and softmax, H200"; that variant left the product after
// it, and git history keeps it): registers cost occupancy (120 of them
// leave 16 warps per SM), shared accumulators 3 instructions per element
// more, and the kernel is short of issue slots.
#define BWD_MIN_BLOCKS_F32 1
#define BWD_MIN_BLOCKS_BF16 2
// fp32 rows of 3 chunks a thread (layernorm_bwd_held): 80 registers, 3
// blocks an SM, no spills; and no staging (bwd_shape's STAGE): with 12
// rows an SM in flight the other blocks hide a row's loads, and the copy
// cost more than it hid (768: 0.94x the fused backward's time unstaged,
// 1536 unchanged; bench/RESULTS.md, "The saved-mask backwards on a
// resident grid, the fp32 LayerNorm backward's 3-chunk rows unstaged").
#define BWD_MIN_BLOCKS_F32_3 3
// Per storage type: the backward copies its next row into shared memory
// while it computes the current one (1) or loads each row when it starts
// it (0); see ln_rows_bwd. Staging pays in bf16, where the kernel is
// short of issue slots, and in fp32 rows of up to BWD_NARROW_F32 threads
// held in 4 chunks (N <= 2048: BWD_STAGE_F32_NARROW; the 3-chunk instance
// does not stage, see above), whose three block-wide sums a row
// leave the loads idle longest against the row's bytes; it costs in wider
// fp32 rows, where the kernel waits on memory (bench/RESULTS.md, "The
// fp32 LayerNorm+GELU backward in narrow rows").
#define BWD_STAGE_F32 0
#define BWD_STAGE_F32_NARROW 1
#define BWD_NARROW_F32 128
#define BWD_STAGE_BF16 1
#define ROW_BLOCK 256      // threads per block when rows need <= 256 threads
#define WIDE_THREADS 512   // threads per row (and block) of the wide-row kernels
#define MAX_GRID (1L << 24)  // grid-stride loops take the rest
#define MAX_PARTIALS 1024    // most blocks writing dgamma/dbeta partials

// What a forward row kernel does (see kernel 1):
enum { FWD_STATS, FWD_NORM, FWD_LN, FWD_FUSED };
// BWD_LNH (the LayerNorm+Linear backward's fused form): BWD_FUSED's
// statistics from x, no GELU (dy is the gradient at the LayerNorm's
// output), and h = LayerNorm(x) written to aux for the dW GEMM: x read once.
enum { BWD_DH, BWD_LN, BWD_FUSED, BWD_LNH };

#define GELU_K 0.7978845608028654f   // sqrt(2 / pi)
#define GELU_C 0.044715f
#define GELU_KC 0.035677408136300125f    // GELU_K GELU_C
#define GELU_KC15 0.05351611220445019f   // 1.5 GELU_K GELU_C
#define RSQRT2 0.7071067811865476f
#define RSQRT2PI 0.3989422804014327f

template <bool FAST>
__device__ __forceinline__ float dev_exp(float z)
{
	return FAST ? __expf(z) : expf(z);
}

// The hardware tanh (one MUFU op, max relative error 2^-10.99): far below
// bf16's 2^-9 rounding, far above fp32's.
__device__ __forceinline__ float tanh_approx(float x)
{
	float y;

	asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

// GELU(h). fp32, tanh form, as h * sigmoid(2u): u is clamped at -40 so
// that 1 + exp(-2u) stays below 2^126, the range of __fdividef (2 ulp
// there); the clamped result is h * 1.8e-35, zero for any purpose. bf16
// (FAST) takes the textbook form with the hardware tanh and u written
// h (K + K C h^2): 5 instructions and a MUFU op instead of about 12 (the
// bf16 kernels run close to the ALU's limit).
template <bool FAST>
__device__ __forceinline__ float gelu(float h, int erf)
{
	if (erf)
		return FAST ? 0.5f * h * (1.0f + erff(h * RSQRT2))
			    : 0.5f * h * erfcf(-h * RSQRT2);
	if (FAST) {
		float hh = 0.5f * h;
		return fmaf(hh, tanh_approx(h * fmaf(GELU_KC, h * h, GELU_K)), hh);
	}
	float u = GELU_K * fmaf(GELU_C * h * h, h, h);
	float e = dev_exp<FAST>(-2.0f * fmaxf(u, -40.0f));

	return __fdividef(h, 1.0f + e);
}

// GELU'(h). fp32: with s = sigmoid(2u), 1 - s = e s (e = exp(-2u)), so
// d/dh [h s] = s (1 + 2 h u' e s): no 1 - s cancellation in either tail.
// e = 2^(-2u log2 e) from the SFU alone (exp2_ftz, the log2 e folded into
// the constants), the exponent clamped at 115.4 (80 / ln 2: 1 + e stays a
// normal float, and so does its reciprocal), s = 1 / (1 + e) by rcp_ftz:
// __expf and __fdividef took a multiply, a compare and two scalings each
// more to keep denormal results, which here only ever become e = 0 or s =
// 1 exactly. The error, about |2u| 2^-24 relative from the exponent's
// rounding, stays near 1e-6 where GELU' is not already negligible, against
// a 1e-5 bound; expf instead was measured hardly more accurate and not
// faster. 4 instructions an element fewer: the fused fp32 backward 1-2 %
// faster (bench/RESULTS.md, "The saved-mask backwards on a resident grid,
// the fp32 LayerNorm backward's 3-chunk rows unstaged").
// bf16: 0.5 (1 + t) + 0.5 h u' (1 - t^2) with the hardware tanh, the
// constants folded so that it takes 7 instructions and a MUFU op (was 11).
template <bool FAST>
__device__ __forceinline__ float gelu_grad(float h, int erf)
{
	if (erf) {
		float cdf = FAST ? 0.5f * (1.0f + erff(h * RSQRT2))
				 : 0.5f * erfcf(-h * RSQRT2);
		return fmaf(h * RSQRT2PI, dev_exp<FAST>(-0.5f * h * h), cdf);
	}
	float h2 = h * h;
	if (FAST) {
		float t = tanh_approx(h * fmaf(GELU_KC, h2, GELU_K));
		float hdu = h * fmaf(GELU_KC15, h2, 0.5f * GELU_K);  // 0.5 h u'

		return fmaf(hdu, fmaf(-t, t, 1.0f), fmaf(0.5f, t, 0.5f));
	}
	// -2u log2 e
	float m2u = h * fmaf(-2.0f * GELU_KC * LOG2E, h2, -2.0f * GELU_K * LOG2E);
	float e = exp2_ftz(fminf(m2u, 80.0f * LOG2E));
	float s = rcp_ftz(1.0f + e);
	float hdu2 = h * fmaf(6.0f * GELU_KC, h2, 2.0f * GELU_K);  // 2 h u'

	return s * fmaf(hdu2, e * s, 1.0f);
}

// Sum NV values over the TPR threads of each row group (TPR a multiple of
// 32; groups are consecutive threads). Every thread of a group gets the same
// bits: each warp sums its lanes by butterfly, lane 0 posts the warp's sum,
// and every warp reads its group's WPR sums into WPR lanes and sums them by
// butterfly again (one shared load and log2 WPR shuffles per value instead
// of WPR loads). sh holds blockDim.x / 32 * NV floats. With TPR > 32, every
// thread of the block must call it (it has barriers). GUARD puts a barrier
// first, so that the previous call's readers of sh are done before this
// call's writers; a kernel that cycles through two or more sh regions
// leaves it out, the barriers of the calls between ordering them.
// GROUP: the barriers are the row group's own (group_sync), so that a
// block's rows do not wait on one another; the slots of sh a group writes
// and reads are its own warps', so its own barriers order them.
template <int TPR, bool GROUP>
__device__ __forceinline__ void group_sync()
{
	if constexpr (GROUP && TPR < ROW_BLOCK)  // barrier 0 is __syncthreads'
		asm volatile("bar.sync %0, %1;" ::"r"(1 + (int)threadIdx.x / TPR), "r"(TPR)
			     : "memory");
	else
		__syncthreads();
}

template <int TPR, int NV, bool GUARD = true, bool GROUP = false>
__device__ __forceinline__ void row_sum(float (&v)[NV], float *sh)
{
#pragma unroll
	for (int i = 0; i < NV; i++)
		v[i] = warp_sum(v[i]);
	if constexpr (TPR > 32) {
		constexpr int WPR = TPR / 32;
		const int warp = threadIdx.x / 32;
		const int from = threadIdx.x / TPR * WPR + (threadIdx.x & (WPR - 1));

		if constexpr (GUARD)
			group_sync<TPR, GROUP>();
		if ((threadIdx.x & 31) == 0)
#pragma unroll
			for (int i = 0; i < NV; i++)
				sh[warp * NV + i] = v[i];
		group_sync<TPR, GROUP>();
#pragma unroll
		for (int i = 0; i < NV; i++) {
			float s = sh[from * NV + i];
#pragma unroll
			for (int o = WPR / 2; o; o >>= 1)
				s += __shfl_xor_sync(FP_FULL_MASK, s, o);
			v[i] = s;
		}
	}
}

// Mean (hi + lo, see the top of the file) and 1/sqrt(var + eps) of one row
// of any width, by a whole block of WIDE_THREADS threads, in two passes
// over global memory; every thread gets the same bits. Every thread of the
// block must call it. sh: WIDE_THREADS / 32 * 2 floats.
template <typename T>
__device__ __forceinline__ void wide_stats(const T *__restrict__ xr, long N,
					   float *sh, float *hi, float *lo,
					   float *rstd)
{
	const float n = (float)N;
	float s[1] = { 0.0f }, p[2] = { 0.0f, 0.0f };

	for (long j = threadIdx.x; j < N; j += WIDE_THREADS)
		s[0] += to_f(xr[j]);
	row_sum<WIDE_THREADS, 1>(s, sh);
	*hi = s[0] / n;
	for (long j = threadIdx.x; j < N; j += WIDE_THREADS) {
		float d = to_f(xr[j]) - *hi;
		p[0] += d;
		p[1] = fmaf(d, d, p[1]);
	}
	row_sum<WIDE_THREADS, 2>(p, sh);
	*lo = p[0] / n;
	*rstd = 1.0f / sqrtf(fmaxf(p[1] / n - *lo * *lo, 0.0f) + (float)LAYERNORM_EPS);
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

// The statistics pass (FWD_STATS) lets a kernel launched programmatically
// after it be scheduled as it starts (the x-as-A LayerNorm+Linear kernel
// streams W' while the statistics are summed); that kernel waits
// (grid_dep_wait) before it reads them. Other modes: nothing.
template <int MODE>
__device__ __forceinline__ void stats_let_dependents(void)
{
	if constexpr (MODE == FWD_STATS)
		grid_dep_launch();
}

// Kernel 1: LayerNorm (and GELU) of rows of any width, one block per row,
// scalar accesses, the row re-read from global memory for each pass:
// pass 1 sum(x) -> hi; pass 2 sum(x - hi), sum((x - hi)^2) -> lo, rstd;
// pass 3 writes the output. MODE picks what it does:
//   FWD_STATS  writes hi, lo, rstd to stats[0..M), [M..2M), [2M..3M)
//   FWD_NORM   reads them instead of computing them, writes h
//   FWD_LN     writes h = xhat gamma + beta
//   FWD_FUSED  writes GELU(h)
// This is the simplest correct row kernel and the fallback for rows the
// register kernel cannot take: N not a multiple of the 16-byte vector (rows
// then are not 16-byte aligned) or wider than 32 K (fp32) elements. Napkin:
// x is read three times, but one row is at most a few hundred KB, and the
// rows of the blocks in flight (132 SMs x 4 blocks) fit the 50 MB L2, so
// DRAM should see x about once. Measured: bench/RESULTS.md, "LayerNorm+GELU,
// H100" (16384 x 4097, the block-per-row kernel): slower than the register
// kernel, but not by the three reads.
template <typename T, int MODE, int ERF>
__global__ void __launch_bounds__(WIDE_THREADS)
ln_wide_fwd(const T *__restrict__ x, const T *__restrict__ gamma,
	    const T *__restrict__ beta, T *__restrict__ out,
	    float *__restrict__ stats, long M, long N)
{
	constexpr bool FAST = sizeof(T) == 2;
	__shared__ float sh[WIDE_THREADS / 32 * 2];

	stats_let_dependents<MODE>();

	for (long row = blockIdx.x; row < M; row += gridDim.x) {
		const T *xr = x + row * N;
		float hi, lo, rstd;

		if constexpr (MODE == FWD_NORM) {
			hi = stats[row];
			lo = stats[M + row];
			rstd = stats[2 * M + row];
		} else {
			wide_stats(xr, N, sh, &hi, &lo, &rstd);
			// FWD_LN saves the statistics too when asked (the
			// LayerNorm+Linear backward's recompute).
			if ((MODE == FWD_STATS || (MODE == FWD_LN && stats)) &&
			    threadIdx.x == 0) {
				stats[row] = hi;
				stats[M + row] = lo;
				stats[2 * M + row] = rstd;
			}
			if constexpr (MODE == FWD_STATS)
				continue;
		}
		if constexpr (MODE != FWD_STATS) {
			T *yr = out + row * N;

			for (long j = threadIdx.x; j < N; j += WIDE_THREADS) {
				float h = fmaf(((to_f(xr[j]) - hi) - lo) * rstd,
					       to_f(gamma[j]), to_f(beta[j]));
				yr[j] = from_f<T>(MODE == FWD_FUSED ? gelu<FAST>(h, ERF) : h);
			}
		}
	}
}

// Kernel 2: the row kept in registers. Changes over kernel 1: each thread
// loads its share of the row with 16-byte coalesced loads, all of them
// before the first use (up to 8 loads in flight per thread), and both
// statistics passes and the output pass run on registers, so x is read
// from DRAM exactly once and y written once. TPR threads per row, the
// fewest that hold it at 32 values each (layernorm_plan(): one warp up to
// N = 1024, 128 threads at 4096), in CHN 16-byte chunks a thread: 3 for
// bf16 rows that fill no more (layernorm_fwd_held), 32 / V otherwise;
// with TPR < 256 a block of 256 threads
// takes 256 / TPR rows, and a warp-per-row reduction needs no barrier at
// all; full bf16 rows of a warp stage gamma and beta in shared memory and
// loop over row groups on a grid of FWD_LOOP_BLOCKS blocks an SM (GBS
// below, layernorm_fwd_looped). Same MODEs as kernel 1.
// Napkin (FWD_FUSED, 16384 x 4096 fp32): 537 MB, the floor is the copy
// of as many bytes. Measured: bench/RESULTS.md, "LayerNorm+GELU, H100" and
// "LayerNorm+GELU and softmax on an H100, measured by fuseprof" (fused
// forward at the copy bandwidth). GELU as a template parameter made bf16
// faster (see the launchers' ERF).
template <typename T, int TPR, int MODE, int ERF, int CHN, bool FULL>
__device__ __forceinline__ void
ln_rows_fwd_body(const T *__restrict__ x, const T *__restrict__ gamma,
		 const T *__restrict__ beta, T *__restrict__ out,
		 float *__restrict__ stats, long M, long Nl)
{
	constexpr bool FAST = sizeof(T) == 2;
	constexpr int V = 16 / sizeof(T), CH = CHN;
	constexpr int BLOCK = TPR > ROW_BLOCK ? TPR : ROW_BLOCK, RPB = BLOCK / TPR;
	// FULL: rows of exactly TPR CH V elements, every chunk in the row, N
	// a constant (no guards, no padding, addresses and 1 / N folded).
	constexpr int NF = TPR * CH * V;
	__shared__ float sh[2][BLOCK / 32 * 2];  // two regions: see row_sum
	const int N = FULL ? NF : (int)Nl, t = threadIdx.x % TPR, g = threadIdx.x / TPR;
	const float rn = 1.0f / (float)N;  // a constant in FULL
	// The region of the second row sum: fp32's first sum takes sh[0]; bf16
	// has only the second, so its rows alternate regions, and a row's
	// barrier orders the one before's reads before the next one's writes.
	int reg = 1;
	// GBS: gamma and beta unpacked to fp32 in shared memory once a block,
	// where a warp takes a whole bf16 row of exactly its values (768 and
	// 1024; FWD_LN, FWD_FUSED): its 8 rows then read them as float4s
	// instead of each loading and unpacking both vectors, about two
	// instructions an element fewer: the fused forward 0.97-0.98x the
	// time, FWD_LN 0.99x. At 64 threads a row and more (4 rows a block
	// or fewer) the staging cost more than it saved (2048: 1.025x, 4096:
	// 1.064x), and FWD_NORM, which sums nothing, did not gain
	// (bench/RESULTS.md, "gamma and beta staged for rows of a warp").
	// Element j of the row lies at gbs[(j % 8) / 4][j / 8 * 4 + j % 4]
	// (gamma; beta in gbs[2 + ...]), so a thread's 8 values are two
	// float4s 16 bytes from its neighbours' (no bank conflicts).
	constexpr bool GBS = FULL && FAST && TPR == 32 &&
			     (MODE == FWD_LN || MODE == FWD_FUSED);
	__shared__ __align__(16) float gbs[GBS ? 4 : 1][GBS ? NF / 2 : 1];
	if constexpr (GBS) {
		for (int q = threadIdx.x; q < NF / V; q += BLOCK) {
			float gq[V], bq[V];

			ld16<false>(gamma + q * V, gq);
			ld16<false>(beta + q * V, bq);
			*(float4 *)&gbs[0][q * 4] = make_float4(gq[0], gq[1], gq[2], gq[3]);
			*(float4 *)&gbs[1][q * 4] = make_float4(gq[4], gq[5], gq[6], gq[7]);
			*(float4 *)&gbs[2][q * 4] = make_float4(bq[0], bq[1], bq[2], bq[3]);
			*(float4 *)&gbs[3][q * 4] = make_float4(bq[4], bq[5], bq[6], bq[7]);
		}
		__syncthreads();
	}

	stats_let_dependents<MODE>();

	// The loop bound is the same for the whole block: barriers stay matched.
	for (long r0 = (long)blockIdx.x * RPB; r0 < M; r0 += (long)gridDim.x * RPB) {
		if constexpr (FAST)
			reg ^= 1;
		const long row = r0 + g;
		const bool live = row < M;
		const T *xr = x + row * N;
		float v[CH][V], hi, lo, rstd;

#pragma unroll
		for (int c = 0; c < CH; c++) {
			const int j = (c * TPR + t) * V;
			if (live && (FULL || j < N))
				ld16<true>(xr + j, v[c]);
			else
#pragma unroll
				for (int k = 0; k < V; k++)
					v[c][k] = 0.0f;
		}
		if constexpr (MODE == FWD_NORM) {
			hi = live ? stats[row] : 0.0f;
			lo = live ? stats[M + row] : 0.0f;
			rstd = live ? stats[2 * M + row] : 0.0f;
#pragma unroll
			for (int c = 0; c < CH; c++)
#pragma unroll
				for (int k = 0; k < V; k++)
					v[c][k] -= hi;
		} else {
			float p[2] = { 0.0f, 0.0f };

			// hi: the first pass's mean, or in bf16 the row's first
			// element (one pass and one row sum fewer; see the top)
			if constexpr (FAST) {
				hi = live ? to_f(xr[0]) : 0.0f;
			} else {
				float s[1] = { 0.0f };

#pragma unroll
				for (int c = 0; c < CH; c++)
#pragma unroll
					for (int k = 0; k < V; k++)
						s[0] += v[c][k];
				row_sum<TPR, 1, false>(s, sh[0]);
				hi = __fmul_rn(s[0], rn);  // rounded: see the top
			}
#pragma unroll
			for (int c = 0; c < CH; c++) {
				if (FULL || (c * TPR + t) * V < N) {  // padding stays 0
#pragma unroll
					for (int k = 0; k < V; k++) {
						v[c][k] -= hi;
						p[0] += v[c][k];
						p[1] = fmaf(v[c][k], v[c][k], p[1]);
					}
				}
			}
			row_sum<TPR, 2, false>(p, sh[reg]);
			lo = p[0] * rn;
			rstd = rsqrtf(fmaxf(p[1] * rn - lo * lo, 0.0f) + (float)LAYERNORM_EPS);
			if ((MODE == FWD_STATS || (MODE == FWD_LN && stats)) &&
			    live && t == 0) {
				stats[row] = hi;
				stats[M + row] = lo;
				stats[2 * M + row] = rstd;
			}
			if constexpr (MODE == FWD_STATS)
				continue;
		}
		if constexpr (MODE != FWD_STATS) {
			if (!live)
				continue;  // no barrier follows in this iteration
			T *yr = out + row * N;
			// xhat = ((x - hi) - lo) rstd as one FMA on v = x - hi:
			// v rstd + (-lo rstd), lo the mean's small remainder, so
			// one rounding fewer than the subtraction and the product,
			// and an instruction an element fewer (bench/RESULTS.md,
			// "Why the fused LayerNorm+GELU forward is slow in small
			// bf16 rows")
			const float nlr = -lo * rstd;
#pragma unroll
			for (int c = 0; c < CH; c++) {
				const int j = (c * TPR + t) * V;
				if (FULL || j < N) {
					float gm[V], bt[V];

					if constexpr (GBS) {
						const int q = (c * TPR + t) * 4;
						const float4 g0 = *(const float4 *)&gbs[0][q];
						const float4 g1 = *(const float4 *)&gbs[1][q];
						const float4 b0 = *(const float4 *)&gbs[2][q];
						const float4 b1 = *(const float4 *)&gbs[3][q];

						gm[0] = g0.x; gm[1] = g0.y; gm[2] = g0.z; gm[3] = g0.w;
						gm[4] = g1.x; gm[5] = g1.y; gm[6] = g1.z; gm[7] = g1.w;
						bt[0] = b0.x; bt[1] = b0.y; bt[2] = b0.z; bt[3] = b0.w;
						bt[4] = b1.x; bt[5] = b1.y; bt[6] = b1.z; bt[7] = b1.w;
					} else {
						ld16<false>(gamma + j, gm);
						ld16<false>(beta + j, bt);
					}
#pragma unroll
					for (int k = 0; k < V; k++) {
						float h = fmaf(fmaf(v[c][k], rstd, nlr), gm[k], bt[k]);
						v[c][k] = MODE == FWD_FUSED ? gelu<FAST>(h, ERF) : h;
					}
					st16<true>(yr + j, v[c]);
				}
			}
		}
	}
}

#define FWD_ARGS const T *__restrict__ x, const T *__restrict__ gamma,      \
	const T *__restrict__ beta, T *__restrict__ out, float *__restrict__ stats, \
	long M, long N
template <typename T, int TPR, int MODE, int ERF, int CHN = FWD_PER_THREAD / (16 / sizeof(T))>
__global__ void __launch_bounds__(TPR > ROW_BLOCK ? TPR : ROW_BLOCK)
ln_rows_fwd(FWD_ARGS)
{
	ln_rows_fwd_body<T, TPR, MODE, ERF, CHN, false>(x, gamma, beta, out, stats, M, N);
}

// Rows of exactly TPR CH V elements (layernorm_fwd_full: N = TPR CH V, up
// to ROW_BLOCK threads a row): the same kernel with N a constant. Known
// full, every chunk is in the row: no guards, no padding, no 1 / N, row
// addresses folded; 12-19 % fewer instructions (cubin text sizes). FULL
// lets ptxas hoist more loads, at up to 79 registers: capped at 64, 4
// blocks an SM as the general instance (bf16 rows of 3 chunks: 48, 5
// blocks, in the general instance; capped at 48 the full one spilled and
// took 1.05-1.10x the time, at 64 it takes 0.99-1.0x).
template <typename T, int TPR, int MODE, int ERF, int CHN = FWD_PER_THREAD / (16 / sizeof(T))>
__global__ void __launch_bounds__(ROW_BLOCK, 4)
ln_rows_fwd_full(FWD_ARGS)
{
	ln_rows_fwd_body<T, TPR, MODE, ERF, CHN, true>(x, gamma, beta, out, stats, M, N);
}
#undef FWD_ARGS

// Kernel 3: sums the per-block dgamma/dbeta partials, partial[P][2N] fp32,
// into dgb[0..N) = dgamma and dgb[N..2N) = dbeta. RED_COLS columns per
// block (128-byte coalesced rows); RED_SLICES slices of the P partials,
// each summed in order, then the slice sums added pairwise in a fixed
// order: deterministic.
// Napkin: reads P 2N 4 bytes (17 MB at P = 528, N = 4096, written just
// before by the row kernel and mostly still in L2), writes 2N s. It is
// latency-bound: 32 slices give every SM 2048 threads with a few loads in
// flight each (under ncu, with L2 flushed, 32 slices took half the time
// of 8 at half the partials).
#define RED_COLS 32
#define RED_SLICES 32
template <typename T>
__global__ void __launch_bounds__(RED_COLS * RED_SLICES)
reduce_partials(const float *__restrict__ partial, int P, long N,
		T *__restrict__ dgamma, T *__restrict__ dbeta)
{
	__shared__ float sh[RED_SLICES][RED_COLS + 1];
	const long W = 2 * N, col = (long)blockIdx.x * RED_COLS + threadIdx.x;
	float s = 0.0f;

	if (col < W)
#pragma unroll 4
		for (int p = threadIdx.y; p < P; p += RED_SLICES)
			s += partial[(size_t)p * W + col];
	sh[threadIdx.y][threadIdx.x] = s;
	for (int h = RED_SLICES / 2; h; h >>= 1) {
		__syncthreads();
		if ((int)threadIdx.y < h)
			sh[threadIdx.y][threadIdx.x] += sh[threadIdx.y + h][threadIdx.x];
	}
	if (threadIdx.y == 0 && col < W) {
		if (col < N)
			dgamma[col] = from_f<T>(sh[0][threadIdx.x]);
		else
			dbeta[col - N] = from_f<T>(sh[0][threadIdx.x]);
	}
}

// Kernel 4: the backward for rows of any width, one block per row of a
// persistent grid, scalar accesses, passes over global memory (the
// fallback, like kernel 1). MODE:
//   BWD_DH     dh = dy GELU'(h) with h recomputed; writes dh to out and the
//              row statistics (the first kernel of the unfused backward)
//   BWD_LN     reads dh (in dy) and the statistics; LayerNorm backward
//   BWD_FUSED  both in one: dy, x in; dx out
//   BWD_LNH    BWD_LN with the statistics recomputed from x and h =
//              LayerNorm(x) written to aux in the dh pass (the
//              LayerNorm+Linear backward's fused form: x read once)
// BWD_LN, BWD_FUSED and BWD_LNH add dh xhat and dh into this block's
// partial row (each column always owned by the same thread: no race,
// fixed order), then dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat
// xhat)) in one more pass. Reads x four times and dy twice, mostly from
// L2. The fallback for rows no register kernel holds (not a multiple of
// the 16-byte vector, or past 16384: layernorm_bwd_wide).
template <typename T, int MODE, int ERF>
__global__ void __launch_bounds__(WIDE_THREADS)
ln_wide_bwd(const T *__restrict__ dy, const T *__restrict__ x,
	    const T *__restrict__ gamma, const T *__restrict__ beta,
	    T *__restrict__ out, float *__restrict__ stats,
	    float *__restrict__ partial, long M, long N, T *__restrict__ aux)
{
	constexpr bool FAST = sizeof(T) == 2;
	__shared__ float sh[WIDE_THREADS / 32 * 2];
	const float n = (float)N;
	float *pg = partial + (size_t)blockIdx.x * 2 * N, *pb = pg + N;

	if constexpr (MODE != BWD_DH)
		for (long j = threadIdx.x; j < N; j += WIDE_THREADS)
			pg[j] = pb[j] = 0.0f;
	for (long row = blockIdx.x; row < M; row += gridDim.x) {
		const T *xr = x + row * N, *dyr = dy + row * N;
		T *outr = out + row * N;
		float hi, lo, rstd, p[2] = { 0.0f, 0.0f };

		if constexpr (MODE == BWD_LN) {
			hi = stats[row];
			lo = stats[M + row];
			rstd = stats[2 * M + row];
		} else {
			wide_stats(xr, N, sh, &hi, &lo, &rstd);
			if (MODE == BWD_DH && threadIdx.x == 0) {
				stats[row] = hi;
				stats[M + row] = lo;
				stats[2 * M + row] = rstd;
			}
		}
		for (long j = threadIdx.x; j < N; j += WIDE_THREADS) {
			float xh = ((to_f(xr[j]) - hi) - lo) * rstd, gm = to_f(gamma[j]);
			float dh = to_f(dyr[j]);

			if constexpr (MODE == BWD_LNH)
				aux[row * N + j] = from_f<T>(fmaf(xh, gm, to_f(beta[j])));
			else if constexpr (MODE != BWD_LN)
				dh *= gelu_grad<FAST>(fmaf(xh, gm, to_f(beta[j])), ERF);
			if constexpr (MODE == BWD_DH) {
				outr[j] = from_f<T>(dh);
			} else {
				float dxh = __fmul_rn(dh, gm);  // as in the dx pass

				pg[j] = fmaf(dh, xh, pg[j]);
				pb[j] += dh;
				p[0] += dxh;
				p[1] = fmaf(dxh, xh, p[1]);
			}
		}
		if constexpr (MODE != BWD_DH) {
			row_sum<WIDE_THREADS, 2>(p, sh);
			const float a = p[0] / n, b = p[1] / n;

			for (long j = threadIdx.x; j < N; j += WIDE_THREADS) {
				float xh = ((to_f(xr[j]) - hi) - lo) * rstd, gm = to_f(gamma[j]);
				float dh = to_f(dyr[j]);

				if constexpr (MODE != BWD_LN && MODE != BWD_LNH)
					dh *= gelu_grad<FAST>(fmaf(xh, gm, to_f(beta[j])), ERF);
				// __fmul_rn: no FMA contraction, so dxhat is the same
				// rounded value the row sums saw, and a row of N = 1
				// gives exactly 0.
				outr[j] = from_f<T>(rstd * (__fmul_rn(dh, gm) - fmaf(xh, b, a)));
			}
		}
	}
}

// The shape of one instance of kernel 5, shared with its launcher, which
// passes SMEM bytes of dynamic shared memory. The dgamma/dbeta
// accumulators take 32 of the thread's ~110 registers and hold the kernel
// to 2 blocks per SM (see BWD_MIN_BLOCKS_*). STAGE: the next row of x and dy is
// copied into shared memory (cp.async, [2][RPB][CH][TPR] 16-byte chunks,
// each thread its own) while the current one is computed.
template <typename T, int TPR, int MODE, int CHN = BWD_PER_THREAD / (16 / sizeof(T))>
struct bwd_shape {
	static constexpr int V = 16 / sizeof(T), CH = CHN;
	static constexpr int BLOCK = TPR > ROW_BLOCK ? TPR : ROW_BLOCK, RPB = BLOCK / TPR;
	static constexpr int CAP = TPR * CH * V;  // widest row this instance holds
	static constexpr bool NARROW = sizeof(T) == 4 && TPR <= BWD_NARROW_F32;
	// dgamma/dbeta accumulators in shared memory (BWD_WIDE_PER_THREAD)
	static constexpr bool ACCS = CH * V > BWD_PER_THREAD && MODE != BWD_DH;
	// The 3-chunk fp32 instance never stages (see BWD_MIN_BLOCKS_F32_3);
	// the wide one stages bf16 only (fp32's ring and accumulators would
	// take 256 KB).
	static constexpr bool STAGE = (sizeof(T) == 2 ? BWD_STAGE_BF16 : NARROW ?
				       BWD_STAGE_F32_NARROW : BWD_STAGE_F32) &&
				      MODE != BWD_DH && CH * V >= BWD_PER_THREAD;
	// blocks an SM its registers are budgeted for (__launch_bounds__)
	static constexpr int MIN_BLOCKS = TPR > ROW_BLOCK ? 1 : sizeof(T) == 2 ?
		BWD_MIN_BLOCKS_BF16 : CH < BWD_PER_THREAD / V ? BWD_MIN_BLOCKS_F32_3 :
		BWD_MIN_BLOCKS_F32;
	// blocks an SM the full-row instance (ln_rows_bwd_full) is capped
	// to: those the general instance reaches with the registers it takes
	// (112 in fp32 rows of 4 chunks: 2; BWD_DH, without dgamma and dbeta,
	// 3, or 4 in fp32 rows of 3 chunks)
	static constexpr int FULL_BLOCKS = MODE == BWD_DH ?
		(sizeof(T) == 4 && CH < BWD_PER_THREAD / V ? 4 : 3) :
		MIN_BLOCKS > 2 ? MIN_BLOCKS : 2;
	static constexpr size_t STAGE_BYTES = STAGE ? (size_t)2 * RPB * CH * TPR * 16 : 0;
	static constexpr size_t SMEM = STAGE_BYTES + (ACCS ? (size_t)2 * CAP * 4 : 0);
};

// Kernel 5: the backward with the row in registers (changes over kernel 4
// as kernel 2 over kernel 1): x and dy loaded once with 16-byte loads,
// statistics, GELU', dxhat and its row sums on registers, dx stored once.
// The grid is persistent and each thread keeps the same columns for every
// row it takes, so its dgamma/dbeta contributions accumulate in registers
// across rows; at the end the block's row
// groups are summed in group order and written as the block's partial row.
// Same MODEs as kernel 4, and BWD_LNH (BWD_DH runs on a plain,
// non-persistent grid).
// The row's steps are serial (load; mean; variance; GELU' and dxhat; their
// row sums; dx), three of them block-wide sums, so while a block computes
// it would have no loads in flight: with STAGE it copies its next row into
// shared memory meanwhile, and DRAM stays busy with few blocks per SM.
// Napkin (BWD_FUSED, 16384 x 4096 fp32): 805 MB + partials (P 2N 4 bytes
// written, read back by kernel 3, mostly from L2). bf16: 403 MB, but about
// 45 instructions per element in SASS (GELU' and dxhat 21, statistics 6,
// loads and conversions 4, dx 5, the three row sums and per-row
// bookkeeping the rest): on an H200 the issue time is about the memory
// time, so the arithmetic barely hides under it. Measured with kernel 3
// (the two kernels summed), and the ncu profile that shows the bf16 kernel
// bound by issue and latency, not bandwidth: bench/RESULTS.md,
// "LayerNorm+GELU and softmax, H200" (with the gain from STAGE, the leaner
// GELU' and row sums) and "LayerNorm+GELU and softmax on an H100, measured
// by fuseprof".
//
// FULL: rows of exactly TPR CH V elements (layernorm_bwd_full), every
// chunk in the row: N a constant, no guards, no padding (see
// ln_rows_bwd_full).
// The row sums synchronise the row's own threads only (row_sum's GROUP:
// a named barrier per row group where a block holds several rows), so
// that a row waits on no other row's three sums: 0.93-0.95x the fused
// LayerNorm+GELU backward's time at 1024 (fp32, bf16), 0.96-0.99x at 768
// and 2048, the unfused chain 0.92-0.99x (H200, bench/RESULTS.md, "Row sums
// on the row's own barrier"). The forward keeps __syncthreads: with
// its one or two row sums a row, the named barrier cost it 1-2 % at bf16
// 2048 and 4096, as it did RMSNorm's backward at bf16 4096.
#define BWD_ARGS                                                              \
	const T *__restrict__ dy, const T *__restrict__ x,                    \
	const T *__restrict__ gamma, const T *__restrict__ beta,              \
	T *__restrict__ out, float *__restrict__ stats,                       \
	float *__restrict__ partial, long M, long Nl, T *__restrict__ aux
template <typename T, int TPR, int MODE, int ERF, int CHN, bool FULL>
__device__ __forceinline__ void ln_rows_bwd_body(BWD_ARGS)
{
	using S = bwd_shape<T, TPR, MODE, CHN>;
	constexpr bool FAST = sizeof(T) == 2, STAGE = S::STAGE;
	constexpr int V = S::V, CH = S::CH, BLOCK = S::BLOCK, RPB = S::RPB, CAP = S::CAP;
	// One region per row_sum call of an iteration (see row_sum); BWD_LN
	// makes one call only, and guards it.
	__shared__ float sh[3][BLOCK / 32 * 2];
	extern __shared__ __align__(16) unsigned char dsm[];
	const int N = FULL ? CAP : (int)Nl, t = threadIdx.x % TPR, g = threadIdx.x / TPR;
	// Multiplying by 1/N instead of dividing (1 ulp more, a few
	// instructions less per row sum: the row's fixed costs are spread
	// over only BWD_PER_THREAD elements per thread).
	const float inv_n = 1.0f / (float)N;
	const long stride = (long)gridDim.x * RPB;
	// dgamma/dbeta accumulators of this thread's columns: registers, or
	// (ACCS) its slots of shared memory after the staging ring, laid out
	// [2][CH V][TPR] so that a warp's threads touch consecutive words.
	float ag[S::ACCS ? 1 : CH][V], ab[S::ACCS ? 1 : CH][V];
	float *const sacc = (float *)(dsm + S::STAGE_BYTES) + t;
	auto acc_g = [&](int c, int k) -> float & {
		if constexpr (S::ACCS)
			return sacc[(c * V + k) * TPR];
		else
			return ag[c][k];
	};
	auto acc_b = [&](int c, int k) -> float & {
		if constexpr (S::ACCS)
			return sacc[(CH * V + c * V + k) * TPR];
		else
			return ab[c][k];
	};
	// This thread's staged chunk c: stx[c * TPR] (x), sty[c * TPR] (dy).
	uint4 *const stx = (uint4 *)dsm + g * CH * TPR + t;
	uint4 *const sty = stx + RPB * CH * TPR;
	const uint64_t pol = STAGE ? evict_first_policy() : 0;
	auto stage = [&](long row) {
		if (row < M) {
			const T *xs = x + row * N + t * V, *ds = dy + row * N + t * V;
#pragma unroll
			for (int c = 0; c < CH; c++)
				if (FULL || (c * TPR + t) * V < N) {
					cp_async16_hint(smem_u32(stx + c * TPR), xs + c * TPR * V, pol);
					cp_async16_hint(smem_u32(sty + c * TPR), ds + c * TPR * V, pol);
				}
		}
		cp_async_commit();
	};

#pragma unroll
	for (int c = 0; c < CH; c++)
#pragma unroll
		for (int k = 0; k < V; k++)
			acc_g(c, k) = acc_b(c, k) = 0.0f;
	if constexpr (STAGE) {
		// The slots no copy will ever fill are zeroed once (padding
		// columns; every column of a group whose first row is past M),
		// so the loop reads its staged row without conditions.
		const long first = (long)blockIdx.x * RPB + g;
#pragma unroll
		for (int c = 0; c < CH; c++)
			if (first >= M || (!FULL && (c * TPR + t) * V >= N))
				stx[c * TPR] = sty[c * TPR] = make_uint4(0, 0, 0, 0);
		stage(first);
	}
	for (long r0 = (long)blockIdx.x * RPB; r0 < M; r0 += stride) {
		const long row = r0 + g;
		const bool live = row < M;
		const T *xr = x + row * N, *dyr = dy + row * N;
		float xv[CH][V], gv[CH][V], hi, lo, rstd, p[2] = { 0.0f, 0.0f };

		if constexpr (STAGE) {
			// A group past M reads the previous row again (or zeros);
			// its dy is taken as 0, so that it adds nothing to dgamma
			// and dbeta, and it stores nothing.
			cp_async_wait_all();
#pragma unroll
			for (int c = 0; c < CH; c++) {
				uint4 d = sty[c * TPR];

				unpack16(stx[c * TPR], xv[c], T());
				unpack16(live ? d : make_uint4(0, 0, 0, 0), gv[c], T());
			}
			// Each staged chunk is read and rewritten by its own
			// thread only; the barrier orders this read before the
			// next row's copy.
			__syncwarp();
			stage(row + stride);
		} else {
#pragma unroll
			for (int c = 0; c < CH; c++) {
				const int j = (c * TPR + t) * V;
				if (live && (FULL || j < N)) {
					ld16<true>(xr + j, xv[c]);
					ld16<true>(dyr + j, gv[c]);
				} else {
#pragma unroll
					for (int k = 0; k < V; k++)
						xv[c][k] = gv[c][k] = 0.0f;
				}
			}
		}
		if constexpr (MODE == BWD_LN) {
			hi = live ? stats[row] : 0.0f;
			lo = live ? stats[M + row] : 0.0f;
			rstd = live ? stats[2 * M + row] : 0.0f;
#pragma unroll
			for (int c = 0; c < CH; c++)
#pragma unroll
				for (int k = 0; k < V; k++)
					xv[c][k] -= hi;
		} else {
			float s[1] = { 0.0f };

#pragma unroll
			for (int c = 0; c < CH; c++)
#pragma unroll
				for (int k = 0; k < V; k++)
					s[0] += xv[c][k];
			row_sum<TPR, 1, false, true>(s, sh[0]);
			hi = __fmul_rn(s[0], inv_n);  // rounded: see the top
#pragma unroll
			for (int c = 0; c < CH; c++) {
				if (FULL || (c * TPR + t) * V < N) {
#pragma unroll
					for (int k = 0; k < V; k++) {
						xv[c][k] -= hi;
						p[0] += xv[c][k];
						p[1] = fmaf(xv[c][k], xv[c][k], p[1]);
					}
				}
			}
			row_sum<TPR, 2, false, true>(p, sh[1]);
			lo = p[0] * inv_n;
			rstd = rsqrtf(fmaxf(p[1] * inv_n - lo * lo, 0.0f) + (float)LAYERNORM_EPS);
			p[0] = p[1] = 0.0f;
			if (MODE == BWD_DH && live && t == 0) {
				stats[row] = hi;
				stats[M + row] = lo;
				stats[2 * M + row] = rstd;
			}
		}
		const float nlr = -lo * rstd;  // xhat = (x - hi) rstd - lo rstd
		// xv becomes xhat; gv becomes dh (BWD_DH) or dxhat = dh gamma.
#pragma unroll
		for (int c = 0; c < CH; c++) {
			const int j = (c * TPR + t) * V;
			if (FULL || j < N) {
				float gm[V], bt[V], dh[V];

				ld16<false>(gamma + j, gm);
				if constexpr (MODE != BWD_LN)
					ld16<false>(beta + j, bt);
#pragma unroll
				for (int k = 0; k < V; k++) {
					const float xh = fmaf(xv[c][k], rstd, nlr);

					dh[k] = gv[c][k];
					if constexpr (MODE == BWD_LNH)
						bt[k] = fmaf(xh, gm[k], bt[k]);  // h, stored below
					else if constexpr (MODE != BWD_LN)
						dh[k] *= gelu_grad<FAST>(fmaf(xh, gm[k], bt[k]), ERF);
					xv[c][k] = xh;
					if constexpr (MODE == BWD_DH) {
						gv[c][k] = dh[k];
					} else {
						const float dxh = __fmul_rn(dh[k], gm[k]);

						acc_g(c, k) = fmaf(dh[k], xh, acc_g(c, k));
						acc_b(c, k) += dh[k];
						gv[c][k] = dxh;
						p[0] += dxh;
						p[1] = fmaf(dxh, xh, p[1]);
					}
				}
				if constexpr (MODE == BWD_LNH)
					if (live)
						st16<false>(aux + row * N + j, bt);
			}
		}
		if constexpr (MODE == BWD_DH) {
			if (live)
#pragma unroll
				for (int c = 0; c < CH; c++) {
					const int j = (c * TPR + t) * V;
					if (FULL || j < N)
						st16<false>(out + row * N + j, gv[c]);
				}
			continue;
		} else {
			row_sum<TPR, 2, MODE == BWD_LN, true>(p, sh[2]);
			const float a = p[0] * inv_n, b = p[1] * inv_n;

			if (!live)
				continue;
#pragma unroll
			for (int c = 0; c < CH; c++) {
				const int j = (c * TPR + t) * V;
				if (FULL || j < N) {
					float d[V];
#pragma unroll
					for (int k = 0; k < V; k++)
						d[k] = rstd * (gv[c][k] - fmaf(xv[c][k], b, a));
					st16<true>(out + row * N + j, d);
				}
			}
		}
	}
	if constexpr (MODE != BWD_DH) {
		float *pg = partial + (size_t)blockIdx.x * 2 * N, *pb = pg + N;

		if constexpr (RPB == 1) {
#pragma unroll
			for (int c = 0; c < CH; c++) {
				const int j = (c * TPR + t) * V;
				if (FULL || j < N)
#pragma unroll
					for (int k = 0; k < V; k += 4) {
						float g4[4], b4[4];
#pragma unroll
						for (int e = 0; e < 4; e++) {
							g4[e] = acc_g(c, k + e);
							b4[e] = acc_b(c, k + e);
						}
						st16<false>(pg + j + k, g4);
						st16<false>(pb + j + k, b4);
					}
			}
		} else {
			__shared__ float acc[2 * CAP];

			for (int s = 0; s < RPB; s++) {
				if (g == s)
#pragma unroll
					for (int c = 0; c < CH; c++)
#pragma unroll
						for (int k = 0; k < V; k++) {
							const int j = (c * TPR + t) * V + k;
							acc[j] = s ? acc[j] + acc_g(c, k) : acc_g(c, k);
							acc[CAP + j] = s ? acc[CAP + j] + acc_b(c, k) :
									   acc_b(c, k);
						}
				__syncthreads();
			}
			for (int j = threadIdx.x; j < N; j += BLOCK) {
				pg[j] = acc[j];
				pb[j] = acc[CAP + j];
			}
		}
	}
}

template <typename T, int TPR, int MODE, int ERF,
	  int CHN = BWD_PER_THREAD / (16 / sizeof(T))>
__global__ void __launch_bounds__(bwd_shape<T, TPR, MODE, CHN>::BLOCK,
				  bwd_shape<T, TPR, MODE, CHN>::MIN_BLOCKS)
ln_rows_bwd(BWD_ARGS)
{
	ln_rows_bwd_body<T, TPR, MODE, ERF, CHN, false>(dy, x, gamma, beta, out, stats,
							 partial, M, Nl, aux);
}

// Rows of exactly TPR CH V elements (layernorm_bwd_full): the same kernel
// with N a constant, as the forward's ln_rows_fwd_full. Knowing every load
// in range, ptxas hoists more of them and would take more registers than
// the general instance; the cap keeps its blocks an SM
// (bwd_shape::FULL_BLOCKS).
template <typename T, int TPR, int MODE, int ERF,
	  int CHN = BWD_PER_THREAD / (16 / sizeof(T))>
__global__ void __launch_bounds__(bwd_shape<T, TPR, MODE, CHN>::BLOCK,
				  bwd_shape<T, TPR, MODE, CHN>::FULL_BLOCKS)
ln_rows_bwd_full(BWD_ARGS)
{
	ln_rows_bwd_body<T, TPR, MODE, ERF, CHN, true>(dy, x, gamma, beta, out, stats,
							partial, M, Nl, aux);
}
#undef BWD_ARGS

/* ------------------------------------------------------------------------ */
/* Picking an instance                                                      */
/* ------------------------------------------------------------------------ */

// A kernel picked for a row width: its address for cudaLaunchKernel (every
// forward kernel takes x, gamma, beta, out, stats, M, N; every backward
// one dy, x, gamma, beta, out, stats, partial, M, N), its block size,
// how many rows one block takes per iteration and its dynamic shared
// memory (bytes; kcfg_ready() lets the kernel have it).
struct kcfg {
	const void *fn;
	int block, rpb;
	size_t smem;
	int per_sm;  // forward: most blocks an SM the grid holds (0: no cap)
};

// The general or the full-row instance (only the one asked for is
// instantiated).
template <typename T, int TPR, int MODE, int ERF, int CH, bool FULL>
static inline const void *fwd_fn()
{
	if constexpr (FULL)
		return (const void *)ln_rows_fwd_full<T, TPR, MODE, ERF, CH>;
	else
		return (const void *)ln_rows_fwd<T, TPR, MODE, ERF, CH>;
}

#define FWD_CASE_F(TPR, T, MODE, ERF, CH, FULL)                               \
	return { fwd_fn<T, TPR, MODE, ERF, CH, FULL>(),                         \
		 TPR > ROW_BLOCK ? TPR : ROW_BLOCK, TPR > ROW_BLOCK ? 1 : ROW_BLOCK / TPR, 0, 0 }
// DIR FWD or BWD. full: rows of exactly TPR CH V elements take the FULL
// instance (layernorm_fwd_full, layernorm_bwd_full), up to ROW_BLOCK
// threads a row.
#define CASE_CH(DIR, TPR, T, MODE, ERF, CH)                                   \
	do {                                                                  \
		if constexpr (TPR <= ROW_BLOCK)                                 \
			if (full)                                             \
				DIR##_CASE_F(TPR, T, MODE, ERF, CH, true);     \
		DIR##_CASE_F(TPR, T, MODE, ERF, CH, false);                   \
	} while (0)
// chunks: the 16-byte chunks of a row each thread holds (see
// layernorm_fwd_held); bf16 rows of 3 at 32-256 threads take an instance
// of their own.
#define FWD_CASE(TPR, T, MODE, ERF)                                           \
	case TPR:                                                             \
		if constexpr (sizeof(T) == 2 && TPR <= ROW_BLOCK)             \
			if (chunks == 3)                                      \
				CASE_CH(FWD, TPR, T, MODE, ERF, 3);          \
		CASE_CH(FWD, TPR, T, MODE, ERF, FWD_PER_THREAD / (16 / sizeof(T)))

// The general or the full-row backward instance.
template <typename T, int TPR, int MODE, int ERF, int CH, bool FULL>
static inline const void *bwd_fn()
{
	if constexpr (FULL)
		return (const void *)ln_rows_bwd_full<T, TPR, MODE, ERF, CH>;
	else
		return (const void *)ln_rows_bwd<T, TPR, MODE, ERF, CH>;
}

#define BWD_CASE_F(TPR, T, MODE, ERF, CH, FULL)                               \
	return { bwd_fn<T, TPR, MODE, ERF, CH, FULL>(),                         \
		 bwd_shape<T, TPR, MODE, CH>::BLOCK, bwd_shape<T, TPR, MODE, CH>::RPB, \
		 bwd_shape<T, TPR, MODE, CH>::SMEM, 0 }
// chunks: the 16-byte chunks of a row each thread holds (see
// layernorm_bwd_held); fp32 rows of 3 at 64-256 threads take an instance
// of their own, and so do rows of 512 threads holding BWD_WIDE_PER_THREAD.
#define BWD_CASE(TPR, T, MODE, ERF)                                           \
	case TPR:                                                             \
		if constexpr (sizeof(T) == 4 && TPR >= 64 && TPR <= ROW_BLOCK) \
			if (chunks == 3)                                      \
				CASE_CH(BWD, TPR, T, MODE, ERF, 3);          \
		if constexpr (TPR == WIDE_THREADS)                            \
			if (chunks == BWD_WIDE_PER_THREAD / (16 / sizeof(T)))   \
				CASE_CH(BWD, TPR, T, MODE, ERF,              \
					BWD_WIDE_PER_THREAD / (16 / sizeof(T))); \
		CASE_CH(BWD, TPR, T, MODE, ERF, BWD_PER_THREAD / (16 / sizeof(T)))

template <typename T, int MODE, int ERF>
static struct kcfg fwd_kernel(int tpr, int chunks, bool full)
{
	switch (tpr) {
	FWD_CASE(32, T, MODE, ERF);
	FWD_CASE(64, T, MODE, ERF);
	FWD_CASE(128, T, MODE, ERF);
	FWD_CASE(256, T, MODE, ERF);
	FWD_CASE(512, T, MODE, ERF);
	FWD_CASE(1024, T, MODE, ERF);
	default: return { (const void *)ln_wide_fwd<T, MODE, ERF>, WIDE_THREADS, 1, 0, 0 };
	}
}

// No 1024-thread backward: at 1024 threads a thread gets 64 registers, and
// x, dy and the two accumulators alone take 64 (it spilled).
template <typename T, int MODE, int ERF>
static struct kcfg bwd_kernel(int tpr, int chunks, bool full)
{
	switch (tpr) {
	BWD_CASE(32, T, MODE, ERF);
	BWD_CASE(64, T, MODE, ERF);
	BWD_CASE(128, T, MODE, ERF);
	BWD_CASE(256, T, MODE, ERF);
	BWD_CASE(512, T, MODE, ERF);
	default:
		return { (const void *)ln_wide_bwd<T, MODE, ERF>, WIDE_THREADS, 1, 0, 0 };
	}
}

// Let k's kernel have its dynamic shared memory: beyond 48 KB a kernel
// must ask for it. 0 or -1 after error().
static inline int kcfg_ready(const struct kcfg *k)
{
	if (!k->smem)
		return 0;
	return CUDA_CHECK(cudaFuncSetAttribute(k->fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
					       (int)k->smem));
}

// Full bf16 rows of a warp (768, 1024; layernorm_fwd_looped) run on a
// grid of FWD_LOOP_BLOCKS blocks an SM, twice the 4 that fit at once
// (ln_rows_fwd_full's launch bounds), each looping over row groups,
// instead of a block a row group: fewer blocks to start and, where gamma
// and beta are staged (GBS), fewer stagings. The fused forward 0.96x the
// time at 768, 0.99x at 1024, the unfused chains' LayerNorm kernels
// 0.98-1.0x; fp32 rows of a warp lost (1.01-1.03x) and keep a block a row
// group (bench/RESULTS.md, "gamma and beta staged for rows of a warp").
#define FWD_LOOP_BLOCKS 8

// The kernel of MODE (and GELU form ERF) for rows of N of dtype dt: the
// register kernel of layernorm_plan()'s width, or the wide-row one. The
// GELU form is a template parameter: as a run-time argument the compiler
// if-converted both forms into every element (select between a tanh and an
// erf result), doubling the arithmetic. Modes without GELU take ERF = 0.
template <int MODE, int ERF>
static struct kcfg fwd_pick(long N, enum fp_dtype dt)
{
	const int tpr = layernorm_plan(0, N, dt);
	const int chunks = layernorm_fwd_held(N, dt) / (16 / (int)fp_dtype_size(dt));
	const bool full = layernorm_fwd_full(N, dt);
	struct kcfg k = dt == FP_BF16 ? fwd_kernel<__nv_bfloat16, MODE, ERF>(tpr, chunks, full)
				      : fwd_kernel<float, MODE, ERF>(tpr, chunks, full);

	k.per_sm = layernorm_fwd_looped(N, dt) ? FWD_LOOP_BLOCKS : 0;
	return k;
}

template <int MODE, int ERF>
static struct kcfg bwd_pick(long N, enum fp_dtype dt)
{
	const int tpr = layernorm_bwd_threads(N, dt);
	const int chunks = layernorm_bwd_held(N, dt) / (16 / (int)fp_dtype_size(dt));
	const bool full = layernorm_bwd_full(N, dt);

	return dt == FP_BF16 ? bwd_kernel<__nv_bfloat16, MODE, ERF>(tpr, chunks, full)
			     : bwd_kernel<float, MODE, ERF>(tpr, chunks, full);
}

// Blocks of a plain (non-persistent) grid: one per row group, grid-stride
// past MAX_GRID.
static inline unsigned row_grid(const struct kcfg *k, long M)
{
	long groups = (M + k->rpb - 1) / k->rpb;

	return (unsigned)(groups < MAX_GRID ? groups : MAX_GRID);
}

// The current device's SMs in *sms; 0 or -1 (reported).
static inline int device_sms(int *sms)
{
	int dev;

	return CUDA_CHECK(cudaGetDevice(&dev)) ||
	       CUDA_CHECK(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev)) ? -1 : 0;
}

// The persistent grid of the kernel writing partials: as many blocks as
// fit on the device at once, at most one per row group, at most
// MAX_PARTIALS.
static inline int persistent_grid(const struct kcfg *k, long M, int *grid)
{
	int sms, per_sm;
	long g;

	if (device_sms(&sms) ||
	    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->fn,
								      k->block, k->smem)))
		return -1;
	g = (long)sms * (per_sm > 0 ? per_sm : 1);
	if (g > MAX_PARTIALS)
		g = MAX_PARTIALS;
	if (g > (M + k->rpb - 1) / k->rpb)
		g = (M + k->rpb - 1) / k->rpb;
	*grid = (int)g;
	return 0;
}

// Enqueue forward row kernel k over M rows of N on st; 0 or -1 (reported).
static inline int launch_fwd(const struct kcfg *k, const void *x, const void *g,
			     const void *b, void *out, float *stats, long M, long N,
			     cudaStream_t st)
{
	void *args[] = { &x, &g, &b, &out, &stats, &M, &N };
	unsigned grid = row_grid(k, M);

	if (k->per_sm) {
		int sms;

		if (device_sms(&sms))
			return -1;
		if ((long)grid > (long)sms * k->per_sm)
			grid = (unsigned)(sms * k->per_sm);
	}
	return CUDA_CHECK(cudaLaunchKernel(k->fn, dim3(grid), dim3(k->block),
					   args, k->smem, st));
}

// Enqueue backward row kernel k on a grid of grid blocks; 0 or -1.
static inline int launch_bwd(const struct kcfg *k, unsigned grid, const void *dy,
			     const void *x, const void *g, const void *b, void *out,
			     float *stats, float *partial, long M, long N, void *aux,
			     cudaStream_t st)
{
	void *args[] = { &dy, &x, &g, &b, &out, &stats, &partial, &M, &N, &aux };

	return CUDA_CHECK(cudaLaunchKernel(k->fn, dim3(grid), dim3(k->block), args,
					   k->smem, st));
}

#endif
