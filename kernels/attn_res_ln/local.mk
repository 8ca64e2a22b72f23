## kernels/attn_res_ln/local.mk - the attention + residual + LayerNorm
## workload (attn_res_ln_fwd) and the CPU test of its reference. internal.h
## says which file holds what.

arl_cu = kernels/attn_res_ln/kernels.cu kernels/attn_res_ln/workload.cu
kernels_libfpkernels_a_SOURCES += kernels/attn_res_ln/arl.h \
	kernels/attn_res_ln/internal.h kernels/attn_res_ln/flash.cuh \
	kernels/attn_res_ln/kernels.cuh kernels/attn_res_ln/ref.c $(arl_cu)

## nvcc objects get no automatic dependency tracking.
$(arl_cu:.cu=.$(OBJEXT)): kernels/attn_res_ln/arl.h kernels/attn_res_ln/internal.h \
	kernels/attn_res_ln/flash.cuh kernels/attn_res_ln/kernels.cuh $(kernels_headers)

check_PROGRAMS += tests/test-attn-res-ln-ref
TESTS += tests/test-attn-res-ln-ref
tests_test_attn_res_ln_ref_SOURCES = tests/test-attn-res-ln-ref.c tests/wltest.c tests/wltest.h
tests_test_attn_res_ln_ref_LDADD = $(test_kernel_libs)
EXTRA_DIST += kernels/attn_res_ln/gpu.sh
