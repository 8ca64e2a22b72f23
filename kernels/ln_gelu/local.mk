## kernels/ln_gelu/local.mk - the LayerNorm+GELU workloads (ln_gelu_fwd,
## ln_gelu_bwd) and their CPU-only reference test.

kernels_libfpkernels_a_SOURCES += kernels/ln_gelu/ln_gelu.cu kernels/ln_gelu/ln_gelu.h
## nvcc objects get no automatic dependency tracking.
kernels/ln_gelu/ln_gelu.$(OBJEXT): kernels/ln_gelu/ln_gelu.h $(layernorm_headers) \
	$(kernels_headers)

TESTS += tests/test-ln-gelu-ref
check_PROGRAMS += tests/test-ln-gelu-ref
tests_test_ln_gelu_ref_SOURCES = tests/test-ln-gelu-ref.c
tests_test_ln_gelu_ref_LDADD = $(test_kernel_libs)
