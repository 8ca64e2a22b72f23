// cublaslt.cu - the cuBLASLt plumbing of the LayerNorm+Linear workloads'
// unfused variants and fused backward: one matmul description per GEMM,
// its algorithm chosen once in create(), run with a workspace allocated in
// create(), so a timed launch allocates nothing. Column-major views of the
// row-major tensors:
//   y^T (N x M)   = W (as K x N, transposed) . h^T (K x M)   [+ b per row]
//   dW^T (K x N)  = h^T (K x M) . dy (as N x M, transposed)
//   dh^T (K x M)  = W (K x N) . dy^T (N x M)
// fp32 uses CUBLAS_COMPUTE_32F (plain SGEMM arithmetic: no TF32); bf16
// multiplies on tensor cores with fp32 accumulation. The algorithm is the
// heuristic's first choice, or with option lt_algo=fastest the fastest of
// those it offers, timed once when the op is made (lt_tune).
#include "config.h"

#include <string.h>

#include <cublasLt.h>

#include "error.h"
#include "internal.h"

static int lt_fail(const char *what, cublasStatus_t s)
{
	return error("cublasLt %s failed: %s", what, cublasGetStatusString(s));
}

#define LT_CHECK(call) do { \
	cublasStatus_t s_ = (call); \
	if (s_ != CUBLAS_STATUS_SUCCESS) \
		return lt_fail(#call, s_); \
} while (0)

void lt_release(struct lt_gemm *g)
{
	if (g->desc)
		cublasLtMatmulDescDestroy(g->desc);
	if (g->la)
		cublasLtMatrixLayoutDestroy(g->la);
	if (g->lb)
		cublasLtMatrixLayoutDestroy(g->lb);
	if (g->ld)
		cublasLtMatrixLayoutDestroy(g->ld);
	memset(g, 0, sizeof *g);
}

// Up to want algorithms cuBLASLt's heuristic offers for g's case (within
// LT_WORKSPACE_BYTES of workspace), best first, into res; *nres of them.
// 0, or -1 (reported).
static int lt_heuristic(const struct lt_gemm *g, cublasLtHandle_t h, int want,
			cublasLtMatmulHeuristicResult_t *res, int *nres)
{
	cublasLtMatmulPreference_t pref = NULL;
	size_t wsize = LT_WORKSPACE_BYTES;
	cublasStatus_t s;

	LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
	s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						 &wsize, sizeof wsize);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulAlgoGetHeuristic(h, g->desc, g->la, g->lb, g->ld, g->ld, pref,
						   want, res, nres);
	cublasLtMatmulPreferenceDestroy(pref);
	return s == CUBLAS_STATUS_SUCCESS ? 0 : lt_fail("heuristic", s);
}

// D (m x n, column-major, ldd) = op(A) op(B) [+ bias per row of D].
int lt_init(struct lt_gemm *g, cublasLtHandle_t h, cublasOperation_t ta,
	    cublasOperation_t tb, long m, long n, long k,
	    cudaDataType_t ab, long lda, long ldb, cudaDataType_t dt,
	    long ldd, const void *bias)
{
	cublasLtMatmulHeuristicResult_t res;
	int nres = 0;

	LT_CHECK(cublasLtMatmulDescCreate(&g->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	LT_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
	LT_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
	if (bias) {
		cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_BIAS;
		int32_t bt = dt;

		LT_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep));
		LT_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
		LT_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt));
	}
	LT_CHECK(cublasLtMatrixLayoutCreate(&g->la, ab, ta == CUBLAS_OP_N ? m : k,
					    ta == CUBLAS_OP_N ? k : m, lda));
	LT_CHECK(cublasLtMatrixLayoutCreate(&g->lb, ab, tb == CUBLAS_OP_N ? k : n,
					    tb == CUBLAS_OP_N ? n : k, ldb));
	LT_CHECK(cublasLtMatrixLayoutCreate(&g->ld, dt, m, n, ldd));
	if (lt_heuristic(g, h, 1, &res, &nres))
		return -1;
	if (nres < 1)
		return error("cublasLt: no algorithm for a %ld x %ld x %ld GEMM", m, n, k);
	g->algo = res.algo;
	g->rank = 0;
	g->offered = 1;
	return 0;
}

// One run of g's GEMM with algorithm algo; its cuBLAS status.
static cublasStatus_t lt_matmul(const struct lt_gemm *g, cublasLtHandle_t h,
				const cublasLtMatmulAlgo_t *algo, const void *A, const void *B,
				void *D, void *workspace, cudaStream_t st)
{
	const float one = 1.f, zero = 0.f;

	return cublasLtMatmul(h, g->desc, &one, A, g->la, B, g->lb, &zero, D, g->ld, D, g->ld,
			      algo, workspace, LT_WORKSPACE_BYTES, st);
}

int lt_tune(struct lt_gemm *g, cublasLtHandle_t h, const void *A, const void *B, void *D,
	    void *workspace, cudaStream_t st)
{
	cublasLtMatmulHeuristicResult_t res[LT_TUNE_ALGOS];
	cudaEvent_t ev[2] = { NULL, NULL };
	float best = -1.f;
	int nres = 0, rc = -1;

	if (lt_heuristic(g, h, LT_TUNE_ALGOS, res, &nres))
		return -1;
	if (CUDA_CHECK(cudaEventCreate(&ev[0])) || CUDA_CHECK(cudaEventCreate(&ev[1])))
		goto out;
	g->offered = nres;
	for (int i = 0; i < nres; i++) {
		float ms = 0.f;
		int reps = 1;

		// One untimed run (an algorithm that fails is skipped), one
		// timed, then as many back to back as take about
		// LT_TUNE_SPAN_MS (LT_TUNE_REPS to 100), their mean compared.
		if (res[i].state != CUBLAS_STATUS_SUCCESS ||
		    lt_matmul(g, h, &res[i].algo, A, B, D, workspace, st) != CUBLAS_STATUS_SUCCESS)
			continue;
		for (int pass = 0; pass < 2; pass++) {
			if (CUDA_CHECK(cudaEventRecord(ev[0], st)))
				goto out;
			for (int r = 0; r < reps; r++)
				lt_matmul(g, h, &res[i].algo, A, B, D, workspace, st);
			if (CUDA_CHECK(cudaEventRecord(ev[1], st)) ||
			    CUDA_CHECK(cudaEventSynchronize(ev[1])) ||
			    CUDA_CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1])))
				goto out;
			ms /= (float)reps;
			reps = ms > 0.f ? (int)(LT_TUNE_SPAN_MS / ms) : 100;
			reps = reps < LT_TUNE_REPS ? LT_TUNE_REPS : reps > 100 ? 100 : reps;
		}
		if (best < 0 || ms < best) {
			best = ms;
			g->algo = res[i].algo;
			g->rank = i;
		}
	}
	rc = best < 0 ? error("cublasLt: none of the %d algorithms offered for the GEMM ran",
			      nres) : 0;
out:
	for (int i = 0; i < 2; i++)
		if (ev[i])
			cudaEventDestroy(ev[i]);
	return rc;
}

int lt_run(const struct lt_gemm *g, cublasLtHandle_t h, const void *A,
	   const void *B, void *D, void *workspace, cudaStream_t st)
{
	LT_CHECK(lt_matmul(g, h, &g->algo, A, B, D, workspace, st));
	return 0;
}
