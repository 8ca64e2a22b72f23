## kernels/dropout/local.mk - the bias+dropout+residual workloads
## (bias_dropout_add_fwd, bias_dropout_add_bwd), the Philox header they share
## with their CPU reference, and the tests of both.

kernels_libfpkernels_a_SOURCES += kernels/dropout/philox.h kernels/dropout/dropout.h \
	kernels/dropout/ref.c kernels/dropout/kernels.cuh kernels/dropout/dropout.cu \
	kernels/ewmask/ewmask.cuh kernels/ewmask/colsum.cuh
## nvcc objects get no automatic dependency tracking.
dropout_headers = kernels/dropout/philox.h kernels/dropout/dropout.h \
	kernels/dropout/kernels.cuh kernels/ewmask/ewmask.cuh kernels/ewmask/colsum.cuh
kernels/dropout/dropout.$(OBJEXT): $(dropout_headers) $(kernels_headers)

## The column sums' second pass, its CUDA source run on the CPU.
TESTS += tests/test-colsum-emu
check_PROGRAMS += tests/test-colsum-emu
tests_test_colsum_emu_SOURCES = tests/test-colsum-emu.cc tests/cuda-emu.h tests/emu-check.h
tests_test_colsum_emu_CXXFLAGS = $(emu_test_cxxflags)
tests_test_colsum_emu_LDADD = $(test_kernel_libs)

TESTS += tests/test-dropout-ref tests/test-dropout-gpu
check_PROGRAMS += tests/test-dropout-ref tests/test-dropout-gpu
tests_test_dropout_ref_SOURCES = tests/test-dropout-ref.c tests/wltest.c tests/wltest.h
tests_test_dropout_ref_LDADD = $(test_kernel_libs)
tests_test_dropout_gpu_SOURCES = tests/test-dropout-gpu.c
tests_test_dropout_gpu_LDADD = $(test_kernel_libs)
