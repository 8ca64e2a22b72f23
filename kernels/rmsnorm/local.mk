## kernels/rmsnorm/local.mk - the RMSNorm workloads (rmsnorm_fwd,
## rmsnorm_bwd) and the CPU test of their references.

kernels_libfpkernels_a_SOURCES += kernels/rmsnorm/rmsnorm.h kernels/rmsnorm/ref.c \
	kernels/rmsnorm/kernels.cuh kernels/rmsnorm/rmsnorm.cu
## nvcc objects get no automatic dependency tracking.
kernels/rmsnorm/rmsnorm.$(OBJEXT): kernels/rmsnorm/rmsnorm.h kernels/rmsnorm/kernels.cuh \
	$(layernorm_headers) $(kernels_headers)

check_PROGRAMS += tests/test-rmsnorm-ref
TESTS += tests/test-rmsnorm-ref
tests_test_rmsnorm_ref_SOURCES = tests/test-rmsnorm-ref.c tests/wltest.c tests/wltest.h
tests_test_rmsnorm_ref_LDADD = $(test_kernel_libs)
