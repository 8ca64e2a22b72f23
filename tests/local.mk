## tests/local.mk - unit tests (one program per module), CLI tests (shell
## scripts sharing tests/setup) and GPU tests (skip with 77 without a GPU).

TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = \
	FUSEPROF='$(abs_top_builddir)/fuseprof'; export FUSEPROF; \
	srcdir='$(srcdir)'; export srcdir; \
	top_srcdir='$(top_srcdir)'; export top_srcdir; \
	top_builddir='$(top_builddir)'; export top_builddir; \
	GNUPLOT='$(GNUPLOT)'; export GNUPLOT;

EXTRA_DIST += tests/setup tests/test.h

## Libraries a test links: only what it tests, plus the core.
test_core_libs = src/libfpcore.a -lm
test_store_libs = src/libfpstore.a src/libfpcore.a $(SQLITE_LIBS) -lm
test_kernel_libs = kernels/libfpkernels.a src/libfpcore.a $(CUDA_LIBS) -lm

### GPU tests over the workload contract ######################################
check_PROGRAMS += tests/test-workloads
TESTS += tests/test-workloads
tests_test_workloads_SOURCES = tests/test-workloads.c
tests_test_workloads_LDADD = $(test_kernel_libs)
