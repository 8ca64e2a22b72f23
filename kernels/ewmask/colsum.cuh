/* colsum.cuh - the second pass of the deterministic column sums (dbias)
 * of the bias-elementwise workloads (ewmask.cuh): CUDA source that
 * ewmask.cuh compiles for the GPU and tests/test-colsum-emu.cc for the CPU
 * (tests/cuda-emu.h runs a block's threads as threads). It uses no more of
 * CUDA than that file defines; the includer provides from_f,
 * FP_FULL_MASK and grid_dep_wait (device.cuh, or the test). */
#ifndef FP_EW_COLSUM_CUH
#define FP_EW_COLSUM_CUH

/* dbias[j] = the sum of partial[p][j] over p < prows: the fixed-order second
 * pass of the column sums (no float atomics, the same bits every run).
 * Blocks of EW_CS_COLS columns by EW_CS_LANES lanes: lane l adds rows l,
 * l + EW_CS_LANES, ... in order, EW_CS_INFLIGHT loads in flight (the
 * rows kernels' 256 partial rows in one trip to L2), then warp w adds
 * column w's lane sums by a butterfly of shuffles (the same sum in every
 * lane: a + b == b + a). The kernel is short but not free: at 4 loads in
 * flight and lane 0 adding 32 sums one after another it took 2.5-2.9 µs
 * at 256 x 4096 partials, 1.9 at 256 x 768 (H100), 2.5-2.9 % of the bf16
 * mask backwards (bench/RESULTS.md, session 18). Grid: ceil(N /
 * EW_CS_COLS). Launched programmatically (ew_colsum), its blocks wait
 * for the rows kernel that wrote the partial rows before reading them. */
#define EW_CS_COLS 32
#define EW_CS_LANES 32
#define EW_CS_INFLIGHT 8

template <typename T>
__global__ void __launch_bounds__(EW_CS_COLS * EW_CS_LANES)
ew_colsum_kernel(const float *__restrict__ partial, long prows, long N,
		 T *__restrict__ dbias)
{
	static_assert(EW_CS_COLS == 32 && EW_CS_LANES == 32, "a warp a column, a lane a lane");
	__shared__ float red[EW_CS_LANES][EW_CS_COLS + 1];
	const long j = (long)blockIdx.x * EW_CS_COLS + threadIdx.x;
	const long jw = (long)blockIdx.x * EW_CS_COLS + threadIdx.y;
	float s = 0.f, t;

	grid_dep_wait();
	if (j < N) {
		long p = threadIdx.y;

		for (; p + (EW_CS_INFLIGHT - 1) * EW_CS_LANES < prows;
		     p += EW_CS_INFLIGHT * EW_CS_LANES) {
			float a[EW_CS_INFLIGHT];

#pragma unroll
			for (int u = 0; u < EW_CS_INFLIGHT; u++)
				a[u] = partial[(p + u * EW_CS_LANES) * N + j];
#pragma unroll
			for (int u = 0; u < EW_CS_INFLIGHT; u++)
				s += a[u];
		}
		for (; p < prows; p += EW_CS_LANES)
			s += partial[p * N + j];
	}
	red[threadIdx.y][threadIdx.x] = s;
	__syncthreads();
	t = red[threadIdx.x][threadIdx.y];
#pragma unroll
	for (int o = EW_CS_LANES / 2; o >= 1; o >>= 1)
		t += __shfl_xor_sync(FP_FULL_MASK, t, o);
	if (threadIdx.x == 0 && jw < N)
		dbias[jw] = from_f<T>(t);
}

#endif
