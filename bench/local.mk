## bench/local.mk - benchmark drivers (not tests: `make bench` builds them;
## `make check` too, for tests/test-opps-gpu.sh, which profiles through
## fpbench on a GPU machine).

EXTRA_PROGRAMS = bench/fpbench
bench_fpbench_SOURCES = bench/fpbench.c
bench_fpbench_LDADD = probes/libfpprobes.a $(test_kernel_libs)
CLEANFILES += $(EXTRA_PROGRAMS)
check_DATA += bench/fpbench$(EXEEXT)

.PHONY: bench
bench: bench/fpbench$(EXEEXT)
EXTRA_DIST += bench/gpu-suite.sh bench/lnl-zoo.sh bench/collector.sh bench/writeback.sh bench/ncu-compare.py \
	bench/ncu-sass.py \
	bench/opportunities-truth.sh \
	bench/torch-baselines.py
