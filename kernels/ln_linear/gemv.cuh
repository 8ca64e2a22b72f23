/* gemv.cuh - the kernel of the decode forward (k_fwd_gemv) and the split-K
 * reduction both decode and tensor-core split-K forwards end with
 * (k_fwd_split_reduce): CUDA source that fwd_gemv.cu compiles for the GPU
 * and tests/test-gemv-emu.cc compiles for the CPU, where tests/cuda-emu.h
 * runs a block's threads as threads. It uses no more of CUDA than that
 * file defines; the includer provides to_f, warp_sum, perm32 and
 * shifted_stats (internal.h, or the test), after ln_linear.h. */
#ifndef FP_LNL_GEMV_CUH
#define FP_LNL_GEMV_CUH

// E = LNL_GEMV_E (4) elements at p as floats: a streaming load (W', read
// once) or a cached one (x, which every block reads) of 16 bytes (fp32) or
// 8 (bf16). Four elements for both dtypes, not 16 bytes' worth, so that a
// lane's x~ and W' registers (E x mp and E x group floats) are as many for
// bf16 as for fp32: with 8 bf16 a load they were twice that, and the bf16
// instances spilled or ran one 8-warp block an SM.
template <typename T, bool STREAM>
__device__ __forceinline__ void gemv_load(const T *__restrict__ p, float *out)
{
	static_assert(LNL_GEMV_E == 4, "a float4 or two bfloat162 a load");
	if constexpr (sizeof(T) == 4) {
		const float4 q = STREAM ? __ldcs((const float4 *)p) : __ldg((const float4 *)p);

		out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
	} else {
		const uint2 q = STREAM ? __ldcs((const uint2 *)p) : __ldg((const uint2 *)p);
		const __nv_bfloat162 *h = (const __nv_bfloat162 *)&q;

#pragma unroll
		for (int j = 0; j < 2; j++) {
			const float2 f = __bfloat1622float2(h[j]);

			out[2 * j] = f.x, out[2 * j + 1] = f.y;
		}
	}
}

// V = 2^v values a lane in (V <= 32), one out: the warp's sum of value
// lane >> (5 - v), which the 2^(5 - v) lanes of each aligned group hold
// alike. The first v steps each halve the values a lane keeps (the half its
// lane bit S picks) and add the partner's copy of that half (V - 1
// shuffles in all); the rest add across the lanes that hold the same value.
template <int S, int C>
__device__ __forceinline__ void scatter_step(float *v, int lane)
{
	const bool up = lane & S;

#pragma unroll
	for (int i = 0; i < C / 2; i++) {
		const float send = up ? v[i] : v[i + C / 2];
		const float keep = up ? v[i + C / 2] : v[i];

		v[i] = keep + __shfl_xor_sync(0xffffffffu, send, S);
	}
}

template <int C, int S>
__device__ __forceinline__ void halve(float *v, int lane)
{
	if constexpr (C >= 2) {
		scatter_step<S, C>(v, lane);
		halve<C / 2, S / 2>(v, lane);
	}
}

template <int V>
__device__ __forceinline__ float reduce_scatter(float (&v)[V], int lane)
{
	static_assert(V >= 1 && V <= 32 && (V & (V - 1)) == 0, "V a power of two");
	halve<V, 16>(v, lane);
	float t = v[0];

#pragma unroll
	for (int s = 16 / V; s >= 1; s >>= 1)
		t += __shfl_xor_sync(0xffffffffu, t, s);
	return t;
}

// x~ = x - c of rows m < M over the E columns from k (zeros past M and
// past K) into xr.
template <typename T, int MP>
__device__ __forceinline__ void gemv_x(const T *__restrict__ x, const float *c, int M,
				       int K, int k, float (&xr)[MP][LNL_GEMV_E])
{
	constexpr int E = LNL_GEMV_E;

#pragma unroll
	for (int m = 0; m < MP; m++) {
		if (m < M && k < K) {
			gemv_load<T, false>(x + (long)m * K + k, xr[m]);
#pragma unroll
			for (int e = 0; e < E; e++)
				xr[m][e] -= c[m];
		} else {
#pragma unroll
			for (int e = 0; e < E; e++)
				xr[m][e] = 0.f;
		}
	}
}

// A row block's end: each of its rows x mx sums (row r of the block, row m
// of x at red[w * rstride + r mx + m], warp w's),
// added over the nw warps in warp order, into the slice's partials (part)
// or, with the rows' statistics (sst[(w mx + m) 2 + 0, 1], added the same
// way), through the epilogue into y; then, from a slice's first row block,
// the slice's statistics. Between two barriers of the whole block.
template <typename T>
__device__ __forceinline__ void gemv_row_block_end(
	const float *red, int rstride, const float *sst, int mx, int nw, int rows,
	long rb, int M, int K, int N, long Nw, int wperm, const float *__restrict__ sW,
	const float *__restrict__ bf, T *__restrict__ y, float *__restrict__ part)
{
	for (int i = threadIdx.x; i < rows * mx; i += blockDim.x) {
		const int r = i / mx, m = i % mx;
		const long j = rb * rows + r, n = wperm ? perm32(j) : j;
		float tot = 0.f, a1 = 0.f, a2 = 0.f, mt, rs;

		if (m >= M || j >= Nw || n >= N)
			continue;
		for (int w = 0; w < nw; w++)
			tot += red[w * rstride + i];
		if (part) {
			part[((size_t)blockIdx.y * M + m) * N + n] = tot;
			continue;
		}
		for (int w = 0; w < nw; w++) {
			a1 += sst[(w * mx + m) * 2];
			a2 += sst[(w * mx + m) * 2 + 1];
		}
		shifted_stats(a1, a2, K, &mt, &rs);
		const float v = rs * (tot - mt * sW[n]) + bf[n];

		if constexpr (sizeof(T) == 2)
			y[(long)m * N + n] = __float2bfloat16_rn(v);
		else
			y[(long)m * N + n] = v;
	}
	if (part && rb == 0) {
		float *pst = part + (size_t)gridDim.y * M * N;

		for (int m = threadIdx.x; m < M; m += blockDim.x) {
			float a1 = 0.f, a2 = 0.f;

			for (int w = 0; w < nw; w++) {
				a1 += sst[(w * mx + m) * 2];
				a2 += sst[(w * mx + m) * 2 + 1];
			}
			pst[(size_t)blockIdx.y * 2 * M + 2 * m] = a1;
			pst[(size_t)blockIdx.y * 2 * M + 2 * m + 1] = a2;
		}
	}
}

// Blocks (blockIdx.x, blockIdx.y) take row blocks blockIdx.x, + gridDim.x,
// ... of nrb: rows [brows rb, + brows) of W' (Nw of them: N, or Np in
// perm32's order, whose rows past N are zero), over chunks [cps
// blockIdx.y, + cps) of K. part: NULL (one slice: y here) or the split-K
// partials (gridDim.y slices). A row block's sums go to red[warp][i], i =
// row r of the block x MP + row m of x. The rows' statistics over the
// slice are summed once a block; where each warp has one chunk at most
// (the usual case), its x~ is loaded once too. The launch bounds give
// ptxas the budget (64K registers over LNL_GEMV_MIN_BLOCKS blocks of
// LNL_GEMV_WARPS warps): with the block's size alone it picks one of its
// own, and it took 64 registers at 512 threads and spilled (bf16, one row).
template <typename T, int MP>
__global__ void __launch_bounds__(32 * LNL_GEMV_WARPS, LNL_GEMV_MIN_BLOCKS(MP, sizeof(T)))
k_fwd_gemv(const T *__restrict__ x, const T *__restrict__ Wf, long ldw,
	   const float *__restrict__ sW, const float *__restrict__ bf, T *__restrict__ y,
	   int M, int K, int N, long Nw, int wperm, int brows, long nrb, int cps,
	   float *__restrict__ part)
{
	// G rows' chunks loaded at a time (E G floats a lane), V = G MP sums
	constexpr int E = LNL_GEMV_E, G = LNL_GEMV_GROUP(MP);
	constexpr int V = G * MP, LOGV = V >= 32 ? 5 : V >= 16 ? 4 : V >= 8 ? 3 : V >= 4 ? 2 : V >= 2 ? 1 : 0;
	__shared__ float red[LNL_GEMV_WARPS][LNL_GEMV_SUMS];
	__shared__ float sst[LNL_GEMV_WARPS][MP][2];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
	const int chunks = (K + 32 * E - 1) / (32 * E), groups = brows / G;
	const int cb = (int)blockIdx.y * cps, ce = min(chunks, cb + cps);
	const bool one = ce - cb <= nw;  // each warp one chunk at most
	// the sum this lane holds after a reduce-scatter, and whether it writes it
	const int mine = lane >> (5 - LOGV), writer = (lane & ((32 >> LOGV) - 1)) == 0;
	float c[MP], s1[MP], s2[MP], xr[MP][E];

#pragma unroll
	for (int m = 0; m < MP; m++) {
		c[m] = m < M ? to_f(x[(long)m * K]) : 0.f;
		s1[m] = s2[m] = 0.f;
	}
	// The statistics of this warp's chunks; xr keeps the last (with one
	// chunk a warp, the one it multiplies into every row block).
	for (int ch = cb + warp; ch < ce; ch += nw) {
		gemv_x<T, MP>(x, c, M, K, (ch * 32 + lane) * E, xr);
#pragma unroll
		for (int m = 0; m < MP; m++)
#pragma unroll
			for (int e = 0; e < E; e++) {
				s1[m] += xr[m][e];
				s2[m] = fmaf(xr[m][e], xr[m][e], s2[m]);
			}
	}
#pragma unroll
	for (int m = 0; m < MP; m++) {
		s1[m] = warp_sum(s1[m]);
		s2[m] = warp_sum(s2[m]);
	}
	if (lane == 0) {
#pragma unroll
		for (int m = 0; m < MP; m++) {
			sst[warp][m][0] = s1[m];
			sst[warp][m][1] = s2[m];
		}
	}

	for (long rb = blockIdx.x; rb < nrb; rb += gridDim.x) {
		const long row0 = rb * brows;

		for (int i = lane; i < brows * MP; i += 32)
			red[warp][i] = 0.f;
		__syncwarp();  // a writer lane adds to what another lane zeroed

		for (int ch = cb + warp; ch < ce; ch += nw) {
			const int k = (ch * 32 + lane) * E;  // K % E == 0: all in or all out

			if (!one)
				gemv_x<T, MP>(x, c, M, K, k, xr);
			// two groups' loads in flight for fp32 at one row, which
			// has the registers (3 blocks an SM); elsewhere the
			// registers go to more warps instead (LNL_GEMV_MIN_BLOCKS)
#pragma unroll (MP == 1 && sizeof(T) == 4 ? 2 : 1)
			for (int gi = 0; gi < groups; gi++) {
				float w[G][E], v[V];

#pragma unroll
				for (int r = 0; r < G; r++) {
					const long j = row0 + (long)gi * G + r;

					if (j < Nw && k < K) {
						gemv_load<T, true>(Wf + j * ldw + k, w[r]);
					} else {
#pragma unroll
						for (int e = 0; e < E; e++)
							w[r][e] = 0.f;
					}
				}
#pragma unroll
				for (int i = 0; i < V; i++)
					v[i] = 0.f;
#pragma unroll
				for (int r = 0; r < G; r++)
#pragma unroll
					for (int e = 0; e < E; e++)
#pragma unroll
						for (int m = 0; m < MP; m++)
							v[r * MP + m] = fmaf(w[r][e], xr[m][e],
									     v[r * MP + m]);
				const float t = reduce_scatter<V>(v, lane);

				if (writer)
					red[warp][gi * V + mine] += t;
			}
		}
		__syncthreads();  // every warp's sums (and, the first time, sst)

		gemv_row_block_end<T>(&red[0][0], LNL_GEMV_SUMS, &sst[0][0][0], MP, nw, brows,
				      rb, M, K, N, Nw, wperm, sW, bf, y, part);
		__syncthreads();  // red is free for the next row block
	}
}

// The split-K forward's second kernel: y = rstd (acc - (mean - c) s) + b'
// with acc, and the row statistics' shifted sums, added over the slices in
// slice order (deterministic). One thread an output; the statistics of its
// row summed again by each (splits x 2 floats, from L1/L2), or where stats
// is not NULL read from there (mean - c at stats[r], rstd at stats[M + r]:
// the x~ pass's, whose slices leave no sums).
template <typename T>
__global__ void k_fwd_split_reduce(const float *__restrict__ part, int splits, long M,
				   int K, int N, const float *__restrict__ sW,
				   const float *__restrict__ bf, T *__restrict__ y,
				   const float *__restrict__ stats)
{
	const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= M * N)
		return;
	const long r = i / N, c = i - r * N;
	const float *pst = part + (size_t)splits * M * N;
	float acc = 0.f, a1 = 0.f, a2 = 0.f, mt, rs;

	for (int z = 0; z < splits; z++)
		acc += part[(size_t)z * M * N + i];
	if (stats) {
		mt = stats[r];
		rs = stats[M + r];
	} else {
		for (int z = 0; z < splits; z++) {
			a1 += pst[(size_t)z * 2 * M + 2 * r];
			a2 += pst[(size_t)z * 2 * M + 2 * r + 1];
		}
		shifted_stats(a1, a2, K, &mt, &rs);
	}
	const float v = rs * (acc - mt * sW[c]) + bf[c];

	if constexpr (sizeof(T) == 2)
		y[i] = __float2bfloat16_rn(v);
	else
		y[i] = v;
}

#endif
