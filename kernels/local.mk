## kernels/local.mk - the workloads library: the contract, the registry and
## the helpers every workload shares. Each workload family's own sources and
## tests live in its folder's local.mk (kernels/NAME/local.mk), included
## from Makefile.am.

noinst_LIBRARIES += kernels/libfpkernels.a
kernels_libfpkernels_a_SOURCES = \
	kernels/workload.h kernels/registry.c \
	kernels/kutil.h kernels/kutil.cu kernels/device.cuh \
	kernels/checkref.h kernels/checkref.c

## nvcc objects do not get automake's dependency tracking: every .cu object
## depends on these, the shared headers any family may include (a folder's
## local.mk adds the headers of its own).
kernels_headers = kernels/workload.h kernels/kutil.h kernels/device.cuh \
	kernels/checkref.h lib/par.h \
	kernels/layernorm/layernorm.h lib/error.h lib/util.h
$(kernels_libfpkernels_a_OBJECTS): $(kernels_headers)
