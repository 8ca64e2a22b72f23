## bench/local.mk - benchmark drivers (not tests: `make bench` builds them).

EXTRA_PROGRAMS = bench/fpbench
bench_fpbench_SOURCES = bench/fpbench.c
bench_fpbench_LDADD = probes/libfpprobes.a $(test_kernel_libs)
CLEANFILES += $(EXTRA_PROGRAMS)

.PHONY: bench
bench: bench/fpbench$(EXEEXT)
EXTRA_DIST += bench/gpu-suite.sh bench/lnl-zoo.sh bench/collector.sh bench/writeback.sh bench/ncu-compare.py \
	bench/opportunities-truth.sh \
	bench/torch-baselines.py
