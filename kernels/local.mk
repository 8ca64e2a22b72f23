## kernels/local.mk - the workloads library: the contract, the registry and
## the helpers every workload shares. Each workload's own sources and tests
## live in kernels/NAME.mk, included below.

noinst_LIBRARIES += kernels/libfpkernels.a
kernels_libfpkernels_a_SOURCES = \
	kernels/workload.h kernels/registry.c \
	kernels/kutil.h kernels/kutil.cu

## nvcc objects do not get automake's dependency tracking.
kernels_headers = kernels/workload.h kernels/kutil.h kernels/device.cuh \
	src/error.h src/util.h
$(kernels_libfpkernels_a_OBJECTS): $(kernels_headers)
EXTRA_DIST += kernels/device.cuh
