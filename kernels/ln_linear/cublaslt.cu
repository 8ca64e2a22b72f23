// cublaslt.cu - the cuBLASLt plumbing of the LayerNorm+Linear workloads'
// unfused variants and fused backward: one matmul description per GEMM,
// its algorithm chosen once in create(), run with a workspace allocated in
// create(), so a timed launch allocates nothing. Column-major views of the
// row-major tensors:
//   y^T (N x M)   = W (as K x N, transposed) . h^T (K x M)   [+ b per row]
//   dW^T (K x N)  = h^T (K x M) . dy (as N x M, transposed)
//   dh^T (K x M)  = W (K x N) . dy^T (N x M)
// fp32 uses CUBLAS_COMPUTE_32F (plain SGEMM arithmetic: no TF32); bf16
// multiplies on tensor cores with fp32 accumulation.
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

// D (m x n, column-major, ldd) = op(A) op(B) [+ bias per row of D].
int lt_init(struct lt_gemm *g, cublasLtHandle_t h, cublasOperation_t ta,
	    cublasOperation_t tb, long m, long n, long k,
	    cudaDataType_t ab, long lda, long ldb, cudaDataType_t dt,
	    long ldd, const void *bias)
{
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res;
	size_t wsize = LT_WORKSPACE_BYTES;
	int nres = 0;
	cublasStatus_t s;

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
	LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
	s = cublasLtMatmulPreferenceSetAttribute(pref,
			CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsize, sizeof wsize);
	if (s == CUBLAS_STATUS_SUCCESS)
		s = cublasLtMatmulAlgoGetHeuristic(h, g->desc, g->la, g->lb, g->ld,
						   g->ld, pref, 1, &res, &nres);
	cublasLtMatmulPreferenceDestroy(pref);
	if (s != CUBLAS_STATUS_SUCCESS)
		return lt_fail("heuristic", s);
	if (nres < 1)
		return error("cublasLt: no algorithm for a %ld x %ld x %ld GEMM", m, n, k);
	g->algo = res.algo;
	return 0;
}

int lt_run(const struct lt_gemm *g, cublasLtHandle_t h, const void *A,
	   const void *B, void *D, void *workspace, cudaStream_t st)
{
	const float one = 1.f, zero = 0.f;

	LT_CHECK(cublasLtMatmul(h, g->desc, &one, A, g->la, B, g->lb, &zero, D,
				g->ld, D, g->ld, &g->algo, workspace, LT_WORKSPACE_BYTES, st));
	return 0;
}
