## kernels/softmax/local.mk - the row softmax workloads (softmax_fwd,
## softmax_masked_fwd, softmax_bwd) and the CPU test of their references.

kernels_libfpkernels_a_SOURCES += kernels/softmax/softmax.h kernels/softmax/softmax.cu
kernels/softmax/softmax.$(OBJEXT): kernels/softmax/softmax.h $(kernels_headers)

check_PROGRAMS += tests/test-softmax-ref
TESTS += tests/test-softmax-ref
tests_test_softmax_ref_SOURCES = tests/test-softmax-ref.c tests/wltest.c tests/wltest.h
tests_test_softmax_ref_LDADD = $(test_kernel_libs)
