## bench/local.mk - benchmark drivers (not tests: `make bench` builds them;
## `make check` too, for tests/test-opps-gpu.sh, which profiles through
## fpbench on a GPU machine).

EXTRA_PROGRAMS = bench/fpbench bench/tma-stream
bench_fpbench_SOURCES = bench/fpbench.c
bench_fpbench_LDADD = probes/libfpprobes.a $(test_kernel_libs)
CLEANFILES += $(EXTRA_PROGRAMS)
check_DATA += bench/fpbench$(EXEEXT) bench/tma-stream$(EXEEXT)

## A TMA ring's streaming rate by the shape of its stages (Hopper only:
## built for sm_90a as the wgmma kernels are, kernels/ln_linear/local.mk).
bench_tma_stream_SOURCES = bench/tma-stream.cu
bench_tma_stream_LDADD = $(CUDA_LIBS)
bench/tma-stream.$(OBJEXT): bench/tma-stream.cu
	$(lnl_sm90a_compile)

.PHONY: bench
bench: bench/fpbench$(EXEEXT) bench/tma-stream$(EXEEXT)
EXTRA_DIST += bench/gpu-suite.sh bench/lnl-zoo.sh bench/collector.sh bench/writeback.sh bench/ncu-compare.py \
	bench/ncu-sass.py \
	bench/opportunities-truth.sh \
	bench/torch-baselines.py
