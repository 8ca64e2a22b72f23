## kernels/softmax/local.mk - the row softmax workloads (softmax_fwd,
## softmax_masked_fwd, softmax_bwd) and the CPU test of their references.

kernels_libfpkernels_a_SOURCES += kernels/softmax/softmax.h kernels/softmax/ref.c \
	kernels/softmax/sm.h kernels/softmax/slots.cuh kernels/softmax/unfused.cu \
	kernels/softmax/fused.cu kernels/softmax/workload.cu
## nvcc objects get no automatic dependency tracking.
softmax_headers = kernels/softmax/softmax.h kernels/softmax/sm.h
kernels/softmax/unfused.$(OBJEXT) kernels/softmax/fused.$(OBJEXT): \
	kernels/softmax/slots.cuh $(softmax_headers) $(kernels_headers)
kernels/softmax/workload.$(OBJEXT): $(softmax_headers) $(kernels_headers)

check_PROGRAMS += tests/test-softmax-ref
TESTS += tests/test-softmax-ref
tests_test_softmax_ref_SOURCES = tests/test-softmax-ref.c tests/wltest.c tests/wltest.h
tests_test_softmax_ref_LDADD = $(test_kernel_libs)
