/* test-gemv-emu.cc - the decode forward's kernels (kernels/ln_linear/
 * gemv.cuh: k_fwd_gemv, k_fwd_split_reduce), their CUDA source run on the
 * CPU by tests/cuda-emu.h, with the plans lnl_fwd_gemv makes (split.c):
 * every row count 1 to 8 (x~ for 1, 2, 4 and 8 rows a lane), both dtypes,
 * W' in column order and in perm32's, one slice and several (the
 * reduction after), a warp taking one chunk of K and several, K's last
 * chunk short, N past the last row block, and fewer blocks than row blocks
 * (each block taking several in turn). Each y against the double
 * LayerNorm+Linear of the same inputs and the same rounded fold, outputs
 * poisoned first, the partials too; and the same bits from a second run.
 * No GPU: what it cannot show is the hardware's (timing, the launcher's
 * occupancy query). */
#include "config.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cuda-emu.h"

#include "ln_linear/ln_linear.h"

/* What internal.h and device.cuh give the kernels on the GPU. */
inline float to_f(float v)
{
	return v;
}

inline float to_f(__nv_bfloat16 v)
{
	return __bfloat162float(v);
}

inline float warp_sum(float v)
{
	for (int o = 16; o; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

#include "ln_linear/lnl-math.cuh"
#include "ln_linear/gemv.cuh"

#include "emu-check.h"

template <typename T>
static T from_f(float v)
{
	if constexpr (sizeof(T) == 2)
		return __float2bfloat16_rn(v);
	else
		return v;
}

struct shape {
	long M, K, N;
	int sms;    /* the device the plan is made for */
	int wperm;  /* W' in perm32's order */
};

/* One plan's kernels on x, the folded W' (Np rows in the stored order),
 * s and b' into y (M x N); grid_x blocks along W''s rows. */
template <typename T, int MP>
static void run(const struct lnl_gemv &g, const std::vector<T> &x, const std::vector<T> &wf,
		const std::vector<float> &sw, const std::vector<float> &bf, long M, long K,
		long N, long Np, int wperm, unsigned grid_x, std::vector<T> &y,
		std::vector<float> &part)
{
	const T *xp = x.data(), *wp = wf.data();
	const float *sp = sw.data(), *bp = bf.data();
	T *yp = y.data();
	float *pp = g.splits > 1 ? part.data() : nullptr;
	const long nw = wperm ? Np : N;

	emu_launch(dim3(grid_x, (unsigned)g.splits), dim3(32 * (unsigned)g.warps), [=] {
		k_fwd_gemv<T, MP>(xp, wp, lnl_row_ld(K, sizeof(T) == 2 ? FP_BF16 : FP_F32), sp,
				  bp, yp, (int)M, (int)K, (int)N, nw, wperm,
				  g.brows, g.blocks, g.cps, pp);
	});
	if (g.splits > 1)
		emu_launch(dim3((unsigned)((M * N + 255) / 256)), dim3(256), [=] {
			k_fwd_split_reduce<T>(pp, g.splits, M, (int)K, (int)N, sp, bp, yp, nullptr);
		});
}

/* run() for the plan's rows of x a lane (g.mp). */
template <typename T>
static void run_mp(const struct lnl_gemv &g, const std::vector<T> &x, const std::vector<T> &wf,
		   const std::vector<float> &sw, const std::vector<float> &bf, long M, long K,
		   long N, long Np, int wperm, unsigned grid_x, std::vector<T> &y,
		   std::vector<float> &part)
{
	switch (g.mp) {
	case 1: run<T, 1>(g, x, wf, sw, bf, M, K, N, Np, wperm, grid_x, y, part); break;
	case 2: run<T, 2>(g, x, wf, sw, bf, M, K, N, Np, wperm, grid_x, y, part); break;
	case 4: run<T, 4>(g, x, wf, sw, bf, M, K, N, Np, wperm, grid_x, y, part); break;
	case 8: run<T, 8>(g, x, wf, sw, bf, M, K, N, Np, wperm, grid_x, y, part); break;
	default: CHECK(0, "mp %d", g.mp);
	}
}

template <typename T>
static void check(const struct shape &s, enum fp_dtype dt, std::mt19937_64 &rng)
{
	const long M = s.M, K = s.K, N = s.N, Np = (N + 31) / 32 * 32;
	const long ld = lnl_row_ld(K, dt);  /* W''s rows, as the workload folds them */
	std::normal_distribution<double> normal;
	std::vector<T> x(M * K), wf(Np * ld), y(M * N), y2(M * N);
	std::vector<double> W(N * K), gamma(K), beta(K), b(N);
	std::vector<float> sw(N), bf(N), part;
	struct lnl_gemv g;
	double worst = 0, scale = 0;
	unsigned grid_x;

	if (!lnl_fwd_gemv(M, K, N, dt, s.sms, &g)) {
		CHECK(0, "%ldx%ld->%ld: no plan", M, K, N);
		return;
	}
	/* x with a mean far from 0 (the shift's reason), W, gamma, beta, b */
	for (auto &v : x)
		v = from_f<T>((float)(3.0 + normal(rng)));
	for (auto &v : W)
		v = normal(rng);
	for (long k = 0; k < K; k++) {
		gamma[k] = 1.0 + 0.5 * normal(rng);
		beta[k] = 0.5 * normal(rng);
	}
	for (auto &v : b)
		v = normal(rng);
	/* The fold as k_fold makes it: W' rounded to the dtype (rows past N
	 * zero in perm32's order), s its rows' sums, b' = W beta + b; rows ld
	 * apart, NaN past K here (k_fold writes zeros), which the kernel must
	 * not read. */
	std::fill(wf.begin(), wf.end(), from_f<T>(0.f));
	for (long r = 0; r < Np; r++)
		for (long k = K; k < ld; k++)
			wf[r * ld + k] = from_f<T>(NAN);
	for (long n = 0; n < N; n++) {
		const long r = s.wperm ? perm32(n) : n;
		double sum = 0, bb = b[n];

		for (long k = 0; k < K; k++) {
			const T w = from_f<T>((float)(W[n * K + k] * gamma[k]));

			wf[r * ld + k] = w;
			sum += to_f(w);
			bb += W[n * K + k] * beta[k];
		}
		sw[n] = (float)sum;
		bf[n] = (float)bb;
	}
	part.assign((size_t)g.splits * M * (N + 2), NAN);
	std::fill(y.begin(), y.end(), from_f<T>(NAN));
	/* fewer blocks than row blocks where there are several */
	grid_x = (unsigned)(g.blocks > 3 ? 3 : g.blocks);
	run_mp<T>(g, x, wf, sw, bf, M, K, N, Np, s.wperm, grid_x, y, part);
	/* The double reference over the same inputs and the same rounded W'. */
	for (long m = 0; m < M; m++) {
		double mean = 0, var = 0;

		for (long k = 0; k < K; k++)
			mean += to_f(x[m * K + k]);
		mean /= (double)K;
		for (long k = 0; k < K; k++) {
			const double d = to_f(x[m * K + k]) - mean;

			var += d * d;
		}
		var /= (double)K;
		for (long n = 0; n < N; n++) {
			const long r = s.wperm ? perm32(n) : n;
			double acc = 0, got = to_f(y[m * N + n]);

			for (long k = 0; k < K; k++)
				acc += (to_f(x[m * K + k]) - mean) / std::sqrt(var + LNL_EPS) *
				       to_f(wf[r * ld + k]);
			acc += bf[n];
			scale = std::fmax(scale, std::fabs(acc));
			worst = std::isfinite(got) ? std::fmax(worst, std::fabs(got - acc)) : INFINITY;
		}
	}
	const double tol = dt == FP_BF16 ? 8e-3 : 2e-5;

	CHECK(worst <= tol * scale, "%s %ldx%ld->%ld (sms %d%s): error %.3g of %.3g", dt == FP_BF16 ? "bf16" : "fp32",
	      M, K, N, s.sms, s.wperm ? ", perm" : "", worst, scale);
	/* the same bits again */
	std::fill(y2.begin(), y2.end(), from_f<T>(NAN));
	run_mp<T>(g, x, wf, sw, bf, M, K, N, Np, s.wperm, grid_x, y2, part);
	CHECK(std::memcmp(y.data(), y2.data(), y.size() * sizeof(T)) == 0,
	      "%ldx%ld->%ld: different bits on a second run", M, K, N);
	std::printf("%s %s %ldx%ld->%ld sms %d%s: mp %d, %d rows a row block, %ld row blocks "
		    "on %u blocks, %d chunks, %d slice%s of %d, %d warps: error %.2g of %.3g\n",
		    worst <= tol * scale ? "ok  " : "FAIL", dt == FP_BF16 ? "bf16" : "fp32", M, K,
		    N, s.sms, s.wperm ? " perm" : "", g.mp, g.brows, g.blocks, grid_x, g.chunks,
		    g.splits, g.splits == 1 ? "" : "s", g.cps, g.warps, worst, scale);
}

int main(void)
{
	/* Plans (on the sms given; bf16's are fp32's but where lnl_split_max
	 * caps the slices), each row count a lane (mp 1, 2, 4, 8) with one
	 * slice and several, W' in column order and permuted:
	 *   mp 1: 520 -> 70, row blocks of 8 on 3 blocks; 1032 -> 50
	 *         permuted, 9 chunks on 8 warps, the last short; 2048 -> 40
	 *         in 4 slices; 776 -> 60 permuted in 4 slices
	 *   mp 2: 520 -> 40; 1160 -> 33 permuted, 10 chunks on 8 warps, the
	 *         last short; 1000 -> 33 in 4 slices; 264 -> 50 permuted in
	 *         2 (bf16) or 3 slices
	 *   mp 4: 3 rows (padded) permuted, N past a row block; 4 x 1160 ->
	 *         64, 10 chunks on 8 warps; 4 x 1000 -> 40 in 4 slices; 3 x
	 *         520 -> 36 permuted in 3 or 5 slices
	 *   mp 8: 5 rows in 4 slices; 8 rows with every warp taking several
	 *         chunks (33, 17), K's last chunk short, in order and
	 *         permuted; 7 rows at a K under one chunk; 6 rows permuted in
	 *         4 slices */
	static const struct shape shapes[] = {
		{ 1, 520, 70, 4, 0 },   { 1, 1032, 50, 2, 1 },  { 1, 2048, 40, 16, 0 },
		{ 1, 776, 60, 24, 1 },
		{ 2, 520, 40, 1, 0 },   { 2, 1160, 33, 3, 1 },  { 2, 1000, 33, 16, 0 },
		{ 2, 264, 50, 12, 1 },
		{ 3, 264, 100, 2, 1 },  { 4, 1160, 64, 1, 0 },  { 4, 1000, 40, 16, 0 },
		{ 3, 520, 36, 24, 1 },
		{ 5, 1000, 30, 24, 0 }, { 8, 4104, 40, 1, 0 },  { 8, 2056, 36, 1, 1 },
		{ 7, 48, 20, 1, 0 },    { 6, 776, 65, 40, 1 },
	};
	std::mt19937_64 rng(20261127);

	for (const auto &s : shapes) {
		check<__nv_bfloat16>(s, FP_BF16, rng);
		check<float>(s, FP_F32, rng);
	}
	std::printf("%s: %d failure%s\n", emu_failures ? "FAIL" : "ok", emu_failures,
		    emu_failures == 1 ? "" : "s");
	return emu_failures ? 1 : 0;
}
