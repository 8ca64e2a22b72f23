/* lnl-math.cuh - LayerNorm+Linear arithmetic that host and device code
 * share and that a CPU test also compiles with its own definitions of the
 * CUDA qualifiers (tests/cuda-emu.h): where the fold of W puts an
 * output column, and the row statistics from shifted sums. Include it after
 * ln_linear.h. */
#ifndef FP_LNL_MATH_CUH
#define FP_LNL_MATH_CUH

/* The row of the warp-specialized kernel's W' (k_fold with perm) that
 * holds output column n: within each group of 32, n = 32 b + 8 t + 2 u + e
 * sits at row 32 b + 8 u + 2 t + e (see that kernel's epilogue). Its own
 * inverse, and it keeps n's group of 32 and its bit 0 (so a pair of
 * columns 2j, 2j + 1 lands on a pair of rows). */
__host__ __device__ __forceinline__ long perm32(long n)
{
	return (n & ~31L) | (n >> 1 & 3) << 3 | (n >> 3 & 3) << 1 | (n & 1);
}

// Row statistics from shifted sums (see the top of internal.h): returns
// mean - c in *mt and rstd in *rs.
__device__ __forceinline__ void shifted_stats(float s1, float s2, int K,
					      float *mt, float *rs)
{
	float m = s1 / (float)K, var = fmaxf(s2 / (float)K - m * m, 0.f);

	*mt = m;
	*rs = rsqrtf(var + (float)LNL_EPS);
}

#endif
