/* fuseprof/kernels.h - fuseprof's fused kernels as a C library
 * (libfuseprof-kernels): LayerNorm+Linear, LayerNorm+GELU, softmax,
 * RMSNorm, SwiGLU, softplus, bias+ReLU and bias+dropout+residual, forward
 * and backward, on device pointers the caller owns.
 *
 * Build against it with `pkg-config --cflags --libs fuseprof-kernels`.
 *
 * Conventions of every function below:
 *
 *   - Tensors are row-major and contiguous: an M x K tensor is M rows of K
 *     elements, the row's elements adjacent. Every pointer is a device
 *     pointer (cudaMalloc'd, or from an allocator that gets its memory
 *     from it) on the current device, aligned to 16 bytes. Inputs and
 *     outputs must not overlap.
 *   - dtype is FPK_F32 (float) or FPK_BF16 (__nv_bfloat16 storage): every
 *     tensor argument of a call has that dtype unless its description says
 *     float. Arithmetic is fp32 for both.
 *   - A call only enqueues work on `stream` (0: the legacy default stream)
 *     and returns: it does not synchronize, allocates no device memory and
 *     copies nothing to or from the host. Scratch memory comes from the
 *     caller as `workspace` of `workspace_bytes` (ask the matching
 *     fpk_*_workspace function; a larger one is fine, a NULL one is fine
 *     when that function says 0). The buffers must stay valid until the
 *     work on the stream has run.
 *   - Every function returning int returns FPK_OK (0) or an FPK_E* status,
 *     and on failure leaves a one-line message naming the function and
 *     what was wrong, which fpk_last_error() returns on the same thread.
 *     Arguments are checked before any work is enqueued: a call that
 *     returns FPK_EINVAL or FPK_EUNSUPPORTED has touched nothing.
 *     FPK_ECUDA means a CUDA call failed; the stream may then hold part of
 *     the work.
 *   - Gradients are written, never accumulated into.
 *   - The first call for a device and dtype may take milliseconds (it
 *     sets the kernels' shared-memory limits and, for the LayerNorm+Linear
 *     backward, plans cuBLASLt's GEMMs for the shape, kept per shape for
 *     the next calls); later calls cost microseconds of host time.
 *   - Thread-safe: calls may come from several threads at once.
 *
 * The kernels are the ones `fuseprof run` measures as the workloads'
 * `fused` variants with their default kernel options (the README's
 * Workloads table), with one exception, in fpk_ln_linear_fwd. */
#ifndef FUSEPROF_KERNELS_H
#define FUSEPROF_KERNELS_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version: major * 10000 + minor * 100 + patch. A caller may
 * compare fpk_version() (the library it runs with) with FPK_VERSION (the
 * header it was built with). */
#define FPK_VERSION 101
int fpk_version(void);

/* Storage types. */
enum fpk_dtype {
	FPK_F32 = 0,   /* float */
	FPK_BF16 = 1   /* __nv_bfloat16: storage only, math in fp32 */
};

/* Status codes. */
enum fpk_status {
	FPK_OK = 0,
	FPK_EINVAL = 1,        /* a bad argument: NULL or misaligned pointer,
	                          a size below 1 or too large, an unknown
	                          dtype, a workspace too small */
	FPK_EUNSUPPORTED = 2,  /* valid, but not something these kernels do:
	                          a row too wide for a kernel, a device too old */
	FPK_ECUDA = 3          /* a CUDA call or launch failed */
};

/* A static string describing status ("invalid argument", ...). */
const char *fpk_strerror(int status);

/* The message of the last failed call on this thread ("fpk_ln_linear_fwd:
 * K=0: must be at least 1"), or "" if none failed yet. Valid until this
 * thread's next call into the library. */
const char *fpk_last_error(void);

/* ------------------------------------------------------------------------
 * LayerNorm + Linear:  y = LayerNorm(x; gamma, beta) W^T + b
 *
 * x: M x K; gamma, beta: K; W: N x K (the layout of PyTorch's
 * nn.Linear.weight); b: N; y: M x N. LayerNorm uses the biased variance
 * and eps = 1e-5 inside the square root, as torch.nn.LayerNorm does.
 * Limits: 1 <= M, K, N < 2^31, M K and N K below 2^40 elements.
 *
 * The forward runs on a fold of the parameters (FlashNorm): W' = W with
 * column k scaled by gamma_k, b' = W beta + b, s = the row sums of W'. The
 * fold depends on the parameters alone: compute it once per version of
 * gamma, beta, W and b, and keep it while they do not change. */

/* Bytes of the fold of a K x N layer. */
size_t fpk_ln_linear_folded_bytes(long K, long N, int dtype);

/* Fold gamma, beta, W and b into `folded` (folded_bytes at least
 * fpk_ln_linear_folded_bytes(K, N, dtype)). The fold's layout is the
 * library's own (it may differ between devices and versions): pass it to
 * fpk_ln_linear_fwd of the same K, N and dtype on the same device only. */
int fpk_ln_linear_fold(const void *gamma, const void *beta, const void *W,
		       const void *b, long K, long N, int dtype, void *folded,
		       size_t folded_bytes, cudaStream_t stream);

/* Workspace bytes of fpk_ln_linear_fwd for this shape on the current
 * device (0 for some): the rows' statistics where the bf16 forward may
 * take them in a pass of their own, x~ (M x K bf16, x less each row's
 * first element) where 17 to 64 bf16 rows may take a pass over x, and, for
 * few rows (decode: the tiles
 * of y fewer than the device's multiprocessors), the fp32 partial sums of
 * the slices of K the forward then splits into. It depends on the
 * device's multiprocessor count: ask it with the device current that
 * fpk_ln_linear_fwd will run on (with no device it leaves the partials
 * out, and fpk_ln_linear_fwd then says what it needs). */
size_t fpk_ln_linear_fwd_workspace(long M, long K, long N, int dtype);

/* y = LayerNorm(x; gamma, beta) W^T + b in one fused kernel, from x and
 * the fold of the parameters; for few rows, a kernel over slices of K
 * then a deterministic reduction of their partial sums in slice order
 * (split-K: the same bits every run), as `fuseprof run` does. The
 * exception to the kernels of `fuseprof run`: there the bf16 forward on a
 * Hopper GPU with K >= 512 picks between a warp-specialized kernel for
 * many rows and a smaller tile for few rows of x, whose folds differ; the
 * library's fold is one, so where that smaller tile would run without
 * splitting K it uses the warp-specialized kernel (the split-K kernel
 * reads either fold). */
int fpk_ln_linear_fwd(const void *x, const void *folded, void *y, long M,
		      long K, long N, int dtype, void *workspace,
		      size_t workspace_bytes, cudaStream_t stream);

/* Workspace bytes of fpk_ln_linear_bwd for this shape. */
size_t fpk_ln_linear_bwd_workspace(long M, long K, long N, int dtype);

/* The gradients of L = sum(dy * y) for the forward above: dx (M x K),
 * dgamma and dbeta (K each), dW (N x K) and db (N), from dy (M x N), x,
 * gamma, beta and W (the row statistics are recomputed from x; nothing of
 * the forward is needed). dgamma, dbeta and db are deterministic column
 * sums (the same bits every run). */
int fpk_ln_linear_bwd(const void *dy, const void *x, const void *gamma,
		      const void *beta, const void *W, void *dx, void *dgamma,
		      void *dbeta, void *dW, void *db, long M, long K, long N,
		      int dtype, void *workspace, size_t workspace_bytes,
		      cudaStream_t stream);

/* ------------------------------------------------------------------------
 * LayerNorm + GELU:  y = GELU(LayerNorm(x; gamma, beta))
 *
 * x, y: M x N; gamma, beta: N. erf = 0: GELU's tanh form, 0.5 h (1 +
 * tanh(sqrt(2/pi) (h + 0.044715 h^3))); erf = 1: the exact h Phi(h).
 * eps = 1e-5. Limits: 1 <= M < 2^31, 1 <= N < 2^31. */

int fpk_ln_gelu_fwd(const void *x, const void *gamma, const void *beta,
		    void *y, long M, long N, int erf, int dtype,
		    cudaStream_t stream);

/* Workspace bytes of fpk_ln_gelu_bwd (the column sums' partial rows). */
size_t fpk_ln_gelu_bwd_workspace(long M, long N, int dtype);

/* dx (M x N), dgamma and dbeta (N each) from dy, x, gamma and beta (the
 * statistics recomputed from x), in one row kernel and a fixed-order sum
 * of its partial rows (deterministic). */
int fpk_ln_gelu_bwd(const void *dy, const void *x, const void *gamma,
		    const void *beta, void *dx, void *dgamma, void *dbeta,
		    long M, long N, int erf, int dtype, void *workspace,
		    size_t workspace_bytes, cudaStream_t stream);

/* ------------------------------------------------------------------------
 * Softmax over rows:  y = softmax(x * scale)
 *
 * x, y: M x N. scale > 0 and finite. causal = 1 treats the rows as blocks
 * of N queries over N keys (attention scores [..., N, N], M a multiple of
 * N): row r, query i = r mod N, sees keys 0..i and writes 0 to the others.
 * x may hold -inf; a row whose entries are all -inf gives zeros. Limits:
 * 1 <= M < 2^31, 1 <= N < 2^31. */

int fpk_softmax_fwd(const void *x, void *y, long M, long N, float scale,
		    int causal, int dtype, cudaStream_t stream);

/* dx = y (dy - sum(dy y)) per row, from the forward's output y and dy: the
 * gradient with respect to x * scale (multiply by scale for x's). */
int fpk_softmax_bwd(const void *y, const void *dy, void *dx, long M, long N,
		    int dtype, cudaStream_t stream);

/* ------------------------------------------------------------------------
 * RMSNorm:  y = x / sqrt(mean(x^2) + eps) * gamma  over rows
 *
 * x, y: M x N; gamma: N; eps = 1e-5. Limits: 1 <= M, N < 2^31. */

int fpk_rmsnorm_fwd(const void *x, const void *gamma, void *y, long M, long N,
		    int dtype, cudaStream_t stream);

/* Workspace bytes of fpk_rmsnorm_bwd (the column sums' partial rows). */
size_t fpk_rmsnorm_bwd_workspace(long M, long N, int dtype);

/* dx (M x N) and dgamma (N) from dy, x and gamma (rstd recomputed from x;
 * dgamma a deterministic column sum). */
int fpk_rmsnorm_bwd(const void *dy, const void *x, const void *gamma, void *dx,
		    void *dgamma, long M, long N, int dtype, void *workspace,
		    size_t workspace_bytes, cudaStream_t stream);

/* ------------------------------------------------------------------------
 * SwiGLU:  y = silu(a) * b  on a packed input
 *
 * xp: M x 2N, row i holding a (columns 0..N-1) then b (N..2N-1), as
 * LLaMA-style MLPs pack their gate and up projections; y: M x N. Finite for
 * |a| up to 1e4 and beyond. Limits: 1 <= M, N < 2^31. */

int fpk_swiglu_fwd(const void *xp, void *y, long M, long N, int dtype,
		   cudaStream_t stream);

/* The packed gradient dxp (M x 2N: da then db per row) from dy (M x N) and
 * xp; silu(a) is recomputed, nothing of the forward is needed. */
int fpk_swiglu_bwd(const void *dy, const void *xp, void *dxp, long M, long N,
		   int dtype, cudaStream_t stream);

/* ------------------------------------------------------------------------
 * Softplus:  y = log(1 + exp(x)), elementwise over n values
 *
 * Computed as max(x, 0) + log1p(exp(-|x|)): finite for every finite x (the
 * formula as written overflows fp32 above 88.7). 1 <= n < 2^40. */

int fpk_softplus_fwd(const void *x, void *y, size_t n, int dtype,
		     cudaStream_t stream);

/* dx = dy * sigmoid(x), recomputed from x. */
int fpk_softplus_bwd(const void *dy, const void *x, void *dx, size_t n,
		     int dtype, cudaStream_t stream);

/* ------------------------------------------------------------------------
 * bias + ReLU:  y = relu(x + bias), with a bit mask for the backward
 *
 * x, y: M x N; bias: N; mask: fpk_bias_relu_mask_bytes(M, N) bytes, bit
 * e % 32 of 32-bit word e / 32 set where element e = i N + j of x + bias
 * is positive: 1/32 of a saved activation's fp32 bytes. */

size_t fpk_bias_relu_mask_bytes(long M, long N);
int fpk_bias_relu_fwd(const void *x, const void *bias, void *y, void *mask,
		      long M, long N, int dtype, cudaStream_t stream);

/* Workspace bytes of fpk_bias_relu_bwd (dbias's partial rows). */
size_t fpk_bias_relu_bwd_workspace(long M, long N, int dtype);

/* dx = dy where the mask's bit is set, else 0; dbias = the column sums of
 * dx (deterministic). */
int fpk_bias_relu_bwd(const void *dy, const void *mask, void *dx, void *dbias,
		      long M, long N, int dtype, void *workspace,
		      size_t workspace_bytes, cudaStream_t stream);

/* ------------------------------------------------------------------------
 * bias + dropout + residual:  y = dropout(x + bias, p) + residual
 *
 * x, residual, y: M x N; bias: N; 0 <= p < 1. Element e = i N + j is kept
 * when the Philox 4x32-10 stream of seed gives it a word at or above
 * round(p 2^32), and kept values are scaled by 1 / (1 - p): the mask is a
 * function of (seed, e) alone, so nothing is saved for the backward,
 * which regenerates it from the same seed and p. */

int fpk_bias_dropout_add_fwd(const void *x, const void *bias,
			     const void *residual, void *y, long M, long N,
			     float p, unsigned long long seed, int dtype,
			     cudaStream_t stream);

/* Workspace bytes of fpk_bias_dropout_add_bwd (dbias's partial rows). */
size_t fpk_bias_dropout_add_bwd_workspace(long M, long N, int dtype);

/* dx = dy where kept, scaled by 1 / (1 - p), else 0; dbias = the column
 * sums of dx (deterministic); the residual's gradient is dy itself. */
int fpk_bias_dropout_add_bwd(const void *dy, void *dx, void *dbias, long M,
			     long N, float p, unsigned long long seed, int dtype,
			     void *workspace, size_t workspace_bytes,
			     cudaStream_t stream);

/* ------------------------------------------------------------------------
 * The double-precision CPU references fuseprof checks these kernels
 * against (host pointers, doubles, the layouts above), for callers'
 * own tests. */

/* y (M x N) = LayerNorm(x) W^T + b. */
int fpk_ref_ln_linear_fwd(const double *x, const double *gamma,
			  const double *beta, const double *W, const double *b,
			  double *y, long M, long K, long N);

/* dx, dgamma, dbeta, dW, db of L = sum(dy * y). */
int fpk_ref_ln_linear_bwd(const double *x, const double *gamma,
			  const double *beta, const double *W, const double *dy,
			  double *dx, double *dgamma, double *dbeta, double *dW,
			  double *db, long M, long K, long N);

#ifdef __cplusplus
}
#endif
#endif
