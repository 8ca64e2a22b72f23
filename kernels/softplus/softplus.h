/* softplus.h - the softplus chain workloads' double-precision CPU references
 * and input profiles (kernels/softplus/ref.c), exposed for tests (the
 * workloads themselves are reached through the registry:
 * softplus_chain_fwd, softplus_chain_bwd). C and C++ (nvcc) clean. */
#ifndef FP_SOFTPLUS_H
#define FP_SOFTPLUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* w = log(exp(x) + 1) in the stable form every kernel computes:
 * max(x, 0) + log1p(exp(-|x|)). Finite for every finite x: exp(-|x|) is in
 * (0, 1], so nothing overflows, and log1p keeps the relative accuracy of
 * the small result where x is very negative. */
double softplus_ref(double x);

/* The same function written as the chain reads, log(exp(x) + 1): +inf
 * once exp(x) overflows (x > ~709.78 in double, ~88.72 in fp32), and 0
 * instead of exp(x) once exp(x) + 1 rounds to 1 (x < ~-36.7). For the
 * tests that show why the kernels do not compute it so. */
double softplus_ref_naive(double x);

/* dw/dx = sigmoid(x) = 1 / (1 + exp(-x)), stably: from e = exp(-|x|),
 * 1 / (1 + e) for x >= 0 and e / (1 + e) below. In [0, 1]. */
double softplus_ref_grad(double x);

/* w[i] = softplus_ref(x[i]); dx[i] = dy[i] softplus_ref_grad(x[i]);
 * n elements each. */
void softplus_ref_fwd(const double *x, double *w, size_t n);
void softplus_ref_bwd(const double *dy, const double *x, double *dx, size_t n);

/* The backward from what a forward saved, as stored (so rounded to the
 * dtype), n elements each: the checks' references for the backward
 * variants that read a saved tensor.
 *   _s:  dx = dy s, s the saved sigmoid(x) (fused_save)
 *   _de: de = dy / (1 + e), e the saved exp(-|x|) (unfused3, log1p's
 *        backward)
 *   _e:  dx = dy [x >= 0] - sgn(x) e de, sgn(0) = +1, from the stored e
 *        and de (unfused3, the backward of exp(-|x|) and max(x, 0))
 *   _xe: dx = dy (x >= 0 ? 1 : e) / (1 + e), from the stored e
 *        (fused_tape: unfused3's two ops, de unrounded)
 * With the exact e and s, each chain gives softplus_ref_bwd's dx. */
void softplus_ref_bwd_s(const double *dy, const double *s, double *dx,
			size_t n);
void softplus_ref_bwd_de(const double *dy, const double *e, double *de,
			 size_t n);
void softplus_ref_bwd_e(const double *dy, const double *x, const double *e,
			const double *de, double *dx, size_t n);
void softplus_ref_bwd_xe(const double *dy, const double *x, const double *e,
			 double *dx, size_t n);

/* Input profiles of x (dy is always N(0, 1)). Index i is the workloads'
 * profiles[i]:
 *   SP_NORMAL  N(0, 1): what timing uses
 *   SP_LARGE   +-1e4: rows around +1e4, rows around -1e4 (unit spread),
 *              rows uniform over [-1e4, 1e4]: exp(x) overflows fp32
 *              above 88.72 and double above 709.78, so the naive chain
 *              gives inf (forward) and inf/inf = NaN (backward)
 *   SP_EDGES   values near the switch points: exact zeros and +-1e-30
 *              (the branch on the sign), around +-17 (fp32 x + log1p(e)
 *              rounds to x), +-88.72 (fp32 exp(x) overflows), -87.34
 *              (fp32 exp(-|x|) goes subnormal), -103.97 (it underflows to
 *              0), +-709.78 (double exp(x) overflows)
 *   SP_TAIL    uniform over [-40, -8]: w ~ exp(x) is small, so a
 *              materialised 1 + exp(-|x|) (rounded to 1 within 2^-24 in
 *              fp32, 2^-8 in bf16) loses it; log1p keeps it
 * Not rounded to a dtype: the caller applies host_round(). */
enum sp_profile { SP_NORMAL, SP_LARGE, SP_EDGES, SP_TAIL, SP_NPROFILES };

/* Row r of an input of profile p (N values into x): each row its own
 * stream of seed, so rows drawn in any order, on any thread, come out the
 * same. */
void softplus_gen_row(double *x, long r, long N, enum sp_profile p,
		      uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
