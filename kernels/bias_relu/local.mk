## kernels/bias_relu/local.mk - the bias+ReLU workloads (bias_relu_fwd,
## bias_relu_bwd) and their CPU-only test. They share kernels/ewmask/ with
## kernels/dropout/ (listed there).

kernels_libfpkernels_a_SOURCES += kernels/bias_relu/bias_relu.h \
	kernels/bias_relu/ref.c kernels/bias_relu/bias_relu.cu
## nvcc objects get no automatic dependency tracking.
kernels/bias_relu/bias_relu.$(OBJEXT): kernels/bias_relu/bias_relu.h \
	kernels/ewmask/ewmask.cuh kernels/ewmask/colsum.cuh $(kernels_headers)

TESTS += tests/test-bias-relu-ref
check_PROGRAMS += tests/test-bias-relu-ref
tests_test_bias_relu_ref_SOURCES = tests/test-bias-relu-ref.c tests/wltest.c tests/wltest.h
tests_test_bias_relu_ref_LDADD = $(test_kernel_libs)
