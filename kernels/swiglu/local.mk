## kernels/swiglu/local.mk - the SwiGLU workloads (swiglu_fwd, swiglu_bwd)
## and the CPU test of their references.

kernels_libfpkernels_a_SOURCES += kernels/swiglu/swiglu.h kernels/swiglu/ref.c \
	kernels/swiglu/swiglu.cu
## nvcc objects get no automatic dependency tracking.
kernels/swiglu/swiglu.$(OBJEXT): kernels/swiglu/swiglu.h $(layernorm_headers) \
	$(kernels_headers)

check_PROGRAMS += tests/test-swiglu-ref
TESTS += tests/test-swiglu-ref
tests_test_swiglu_ref_SOURCES = tests/test-swiglu-ref.c tests/wltest.c tests/wltest.h
tests_test_swiglu_ref_LDADD = $(test_kernel_libs)
