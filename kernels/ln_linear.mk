## kernels/ln_linear.mk - the LayerNorm+Linear workloads (ln_linear_fwd,
## ln_linear_bwd) and the CPU-only test of their references.

kernels_libfpkernels_a_SOURCES += kernels/ln_linear.cu kernels/ln_linear.h
## nvcc objects get no automatic dependency tracking.
kernels/ln_linear.$(OBJEXT): kernels/ln_linear.h $(kernels_headers)

TESTS += tests/test-ln-linear-ref
check_PROGRAMS += tests/test-ln-linear-ref
tests_test_ln_linear_ref_SOURCES = tests/test-ln-linear-ref.c tests/wltest.c tests/wltest.h
tests_test_ln_linear_ref_LDADD = $(test_kernel_libs)
EXTRA_DIST += kernels/ln_linear-gpu.sh kernels/ln_linear-torch.py
