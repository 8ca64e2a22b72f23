## tests/local.mk - unit tests (one program per module), CLI tests (shell
## scripts sharing tests/setup) and GPU tests (skip with 77 without a GPU).

TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = \
	FUSEPROF='$(abs_top_builddir)/fuseprof'; export FUSEPROF; \
	srcdir='$(srcdir)'; export srcdir; \
	top_srcdir='$(top_srcdir)'; export top_srcdir; \
	top_builddir='$(top_builddir)'; export top_builddir; \
	GNUPLOT='$(GNUPLOT)'; export GNUPLOT; \
	CC='$(CC)'; export CC; \
	CUDA_CPPFLAGS='$(CUDA_CPPFLAGS)'; export CUDA_CPPFLAGS; \
	CUDA_LDFLAGS='$(CUDA_LDFLAGS)'; export CUDA_LDFLAGS;

EXTRA_DIST += tests/setup tests/test.h tests/data/schema1.db
## The lock the GPU tests share (tests/test.h, gpu_test_lock).
CLEANFILES += tests/gpu-test.lock

## Libraries a test links: only what it tests, plus the core.
test_core_libs = lib/libfpcore.a -lm
test_store_libs = store/libfpstore.a lib/libfpcore.a $(SQLITE_LIBS) -lm
test_kernel_libs = kernels/libfpkernels.a lib/libfpcore.a $(CUDA_LIBS) -lm
## The tests that run a kernel's CUDA source on the CPU (tests/cuda-emu.h):
## C++20, and no strict aliasing (a kernel reads a vector through another type).
emu_test_cxxflags = -std=c++20 -O2 -fno-strict-aliasing -pthread -Wall -Wextra \
	-Wno-unknown-pragmas

### GPU tests over the workload contract ######################################
check_PROGRAMS += tests/test-workloads
TESTS += tests/test-workloads
tests_test_workloads_SOURCES = tests/test-workloads.c
tests_test_workloads_LDADD = $(test_kernel_libs)

### forward/backward pairs ##################################################
## Every forward's backward and the bytes its variants keep for it, over
## the registry's models (no GPU).
check_PROGRAMS += tests/test-backward
TESTS += tests/test-backward
tests_test_backward_SOURCES = tests/test-backward.c
tests_test_backward_LDADD = $(test_kernel_libs)

### the store #################################################################
check_PROGRAMS += tests/test-store tests/store-writer
TESTS += tests/test-store
tests_test_store_SOURCES = tests/test-store.c
tests_test_store_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_test_store_LDADD = $(test_store_libs)
tests_store_writer_SOURCES = tests/store-writer.c
tests_store_writer_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_store_writer_LDADD = $(test_store_libs)
check_PROGRAMS += tests/test-store-status
TESTS += tests/test-store-status
tests_test_store_status_SOURCES = tests/test-store-status.c
tests_test_store_status_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_test_store_status_LDADD = $(test_store_libs)
store_sh_tests = tests/test-store-kill.sh tests/test-store-concurrent.sh \
	tests/test-store-fresh.sh tests/test-store-env.sh \
	tests/test-store-readonly.sh tests/test-store-killed.sh
TESTS += $(store_sh_tests)
EXTRA_DIST += $(store_sh_tests)

### fuseprof merge ############################################################
## store/merge.c on synthetic inputs (runs through the store API, profiled
## ranks through the collector's pipeline, the schema-1 sample), and the
## command line: refusals, exit statuses, messages.
check_PROGRAMS += tests/test-merge
TESTS += tests/test-merge tests/test-merge-cli.sh
tests_test_merge_SOURCES = tests/test-merge.c tests/synth.c tests/synth.h \
	inject/collect.c inject/collect.h
tests_test_merge_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) -I$(top_srcdir)/inject
tests_test_merge_LDADD = store/libfpstore.a probes/libfpprobes.a $(test_store_libs)
EXTRA_DIST += tests/test-merge-cli.sh

### fusion opportunities #####################################################
## v_fusion_candidates on synthetic profiled runs (chains, boundaries,
## streams, byte accounting, ranking); the query and the report's section
## from the command line; on a GPU, the unfused LayerNorm+GELU profiled.
check_PROGRAMS += tests/test-opps
TESTS += tests/test-opps tests/test-opps-cli.sh tests/test-opps-gpu.sh \
	tests/test-truth-from.sh
tests_test_opps_SOURCES = tests/test-opps.c
tests_test_opps_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_test_opps_LDADD = $(test_store_libs)
EXTRA_DIST += tests/test-opps-cli.sh tests/test-opps-gpu.sh tests/test-truth-from.sh

### number formatting ########################################################
check_PROGRAMS += tests/test-format
TESTS += tests/test-format
tests_test_format_SOURCES = tests/test-format.c
tests_test_format_LDADD = $(test_core_libs)

### an op's time from kernels that may overlap ###############################
check_PROGRAMS += tests/test-busy
TESTS += tests/test-busy
tests_test_busy_SOURCES = tests/test-busy.c
tests_test_busy_LDADD = $(test_core_libs)

### a process's rank from its launcher, per-process file names ###############
check_PROGRAMS += tests/test-launcher
TESTS += tests/test-launcher
tests_test_launcher_SOURCES = tests/test-launcher.c
tests_test_launcher_LDADD = $(test_core_libs)

### threads for the checks ###################################################
check_PROGRAMS += tests/test-par
TESTS += tests/test-par
tests_test_par_SOURCES = tests/test-par.c
tests_test_par_LDADD = $(test_core_libs)

### the command line ##########################################################
TESTS += tests/test-cli.sh
EXTRA_DIST += tests/test-cli.sh

### the floors ################################################################
## No folder includes a header from a floor above it (README.md).
TESTS += tests/test-layers.sh
EXTRA_DIST += tests/test-layers.sh

### kernel options ############################################################
## The registry's option functions (a test-only workload), then the command
## line, the store and the readers (any build; no GPU).
check_PROGRAMS += tests/test-kopts
TESTS += tests/test-kopts tests/test-kopts-cli.sh
tests_test_kopts_SOURCES = tests/test-kopts.c
tests_test_kopts_LDADD = $(test_kernel_libs)
EXTRA_DIST += tests/test-kopts-cli.sh

### what a new user runs into: query, report, the command line, set-up ######
user_tests = tests/test-query-stream.sh tests/test-query-refuse.sh \
	tests/test-cli-order.sh tests/test-report-stale.sh tests/test-deps.sh \
	tests/test-torch-baselines.sh
TESTS += $(user_tests)
EXTRA_DIST += $(user_tests)

### refusals and the manual: run --dry-run, report, the man page ############
## run --dry-run checks what a run would before the GPU and estimates the
## time; report's refusals and gnuplot's failure; fuseprof.1 renders
## cleanly and matches each command's --help (skips without groff).
cli_tests = tests/test-run-dryrun.sh tests/test-report-args.sh tests/test-man.sh
TESTS += $(cli_tests)
EXTRA_DIST += $(cli_tests)

### the checks' shared CPU pieces ##############################################
check_PROGRAMS += tests/test-checkref
TESTS += tests/test-checkref
tests_test_checkref_SOURCES = tests/test-checkref.c
tests_test_checkref_LDADD = $(test_kernel_libs)

### the benchmark scripts' readers ############################################
## bench/ncu-sass.py on a small export of ncu's SASS page (skips without
## python3).
TESTS += tests/test-ncu-sass.sh
EXTRA_DIST += tests/test-ncu-sass.sh tests/data/ncu-sass.csv
TESTS += tests/test-tma-stream.sh
EXTRA_DIST += tests/test-tma-stream.sh
