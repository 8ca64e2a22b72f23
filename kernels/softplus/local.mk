## kernels/softplus/local.mk - the softplus chain workloads
## (softplus_chain_fwd, softplus_chain_bwd) and the CPU test of their
## references and contract.

kernels_libfpkernels_a_SOURCES += kernels/softplus/softplus.h kernels/softplus/ref.c \
	kernels/softplus/sp.h kernels/softplus/softplus.cu kernels/softplus/workload.cu
## nvcc objects get no automatic dependency tracking.
softplus_headers = kernels/softplus/softplus.h kernels/softplus/sp.h
kernels/softplus/softplus.$(OBJEXT) kernels/softplus/workload.$(OBJEXT): \
	$(softplus_headers) $(kernels_headers)

check_PROGRAMS += tests/test-softplus-ref
TESTS += tests/test-softplus-ref
tests_test_softplus_ref_SOURCES = tests/test-softplus-ref.c tests/wltest.c tests/wltest.h
tests_test_softplus_ref_LDADD = $(test_kernel_libs)
