## kernels/ln_linear/local.mk - the LayerNorm+Linear workloads (ln_linear_fwd,
## ln_linear_bwd) and the CPU-only test of their references. internal.h
## says which file holds what.

lnl_cu = kernels/ln_linear/fwd_simt.cu kernels/ln_linear/fwd_mma.cu \
	kernels/ln_linear/fwd_gemv.cu kernels/ln_linear/fwd_skinny.cu \
	kernels/ln_linear/fwd_wgmma.cu kernels/ln_linear/fwd_skinny_wg.cu \
	kernels/ln_linear/fwd_skinny_xt.cu \
	kernels/ln_linear/bwd.cu \
	kernels/ln_linear/cublaslt.cu kernels/ln_linear/check.cu \
	kernels/ln_linear/choose.cu kernels/ln_linear/workload.cu
kernels_libfpkernels_a_SOURCES += kernels/ln_linear/ln_linear.h \
	kernels/ln_linear/internal.h kernels/ln_linear/lnl-math.cuh \
	kernels/ln_linear/gemv.cuh kernels/ln_linear/skinny.cuh kernels/ln_linear/wgmma.cuh \
	kernels/ln_linear/ref.c \
	kernels/ln_linear/split.c $(lnl_cu)

## nvcc objects get no automatic dependency tracking.
lnl_objects = $(lnl_cu:.cu=.$(OBJEXT))
$(lnl_objects): kernels/ln_linear/internal.h kernels/ln_linear/ln_linear.h \
	kernels/ln_linear/lnl-math.cuh kernels/ln_linear/gemv.cuh kernels/ln_linear/skinny.cuh \
	kernels/ln_linear/wgmma.cuh $(kernels_headers)

## The Hopper kernels use wgmma, setmaxnreg and cluster multicast, which
## only the architecture-specific sm_90a target has: fwd_wgmma.cu,
## fwd_skinny_wg.cu and fwd_skinny_xt.cu alone are built for sm_90a
## wherever the configured targets ask for sm_90 (the code runs on the
## same GPUs; other targets compile their kernels empty and never launch
## them, see the guard in wgmma.cuh).
lnl_comma = ,
lnl_gencode = $(sort $(patsubst -gencode=arch=compute_90$(lnl_comma)code=sm_90,\
	-gencode=arch=compute_90a$(lnl_comma)code=sm_90a,$(NVCC_GENCODE)))
lnl_sm90a_compile = $(AM_V_NVCC)$(NVCC) $(filter-out $(NVCC_GENCODE),$(NVCCFLAGS)) \
	$(lnl_gencode) $(DEFS) $(AM_CPPFLAGS) $(CPPFLAGS) -c -o $@ $<
kernels/ln_linear/fwd_wgmma.$(OBJEXT): kernels/ln_linear/fwd_wgmma.cu
	$(lnl_sm90a_compile)
kernels/ln_linear/fwd_skinny_wg.$(OBJEXT): kernels/ln_linear/fwd_skinny_wg.cu
	$(lnl_sm90a_compile)
kernels/ln_linear/fwd_skinny_xt.$(OBJEXT): kernels/ln_linear/fwd_skinny_xt.cu
	$(lnl_sm90a_compile)

TESTS += tests/test-ln-linear-ref
check_PROGRAMS += tests/test-ln-linear-ref
tests_test_ln_linear_ref_SOURCES = tests/test-ln-linear-ref.c tests/wltest.c tests/wltest.h
tests_test_ln_linear_ref_LDADD = $(test_kernel_libs)
## The decode forward's kernels, their CUDA source run on the CPU.
TESTS += tests/test-gemv-emu
check_PROGRAMS += tests/test-gemv-emu
tests_test_gemv_emu_SOURCES = tests/test-gemv-emu.cc tests/cuda-emu.h tests/emu-check.h
tests_test_gemv_emu_CXXFLAGS = $(emu_test_cxxflags)
tests_test_gemv_emu_LDADD = $(test_kernel_libs)
EXTRA_DIST += kernels/ln_linear/gpu.sh kernels/ln_linear/torch-baseline.py
