## probes/local.mk - measurement: device facts, CUPTI Activity, CUPTI Range
## Profiler counters, counter groups (text files), ceilings; the commands
## `run` and `ceilings` with the run loop and the sweep shape parser; and
## their tests.

noinst_LIBRARIES += probes/libfpprobes.a
probes_libfpprobes_a_SOURCES = \
	probes/probes.h \
	probes/device.c \
	probes/activity.c \
	probes/groups.c \
	probes/counters.cu \
	probes/ceilings.cu
probes_libfpprobes_a_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFP_GROUPS_DIR='"$(pkgdatadir)/groups"' \
	-DFP_GROUPS_SRCDIR='"$(abs_top_srcdir)/probes/groups"'

## nvcc objects do not get automake's dependency tracking.
probes_headers = probes/probes.h lib/error.h lib/util.h
probes/libfpprobes_a-counters.$(OBJEXT) probes/libfpprobes_a-ceilings.$(OBJEXT) \
probes/counters.$(OBJEXT) probes/ceilings.$(OBJEXT): $(probes_headers)

## Counter groups: plain text, installed, found by name (`--metrics NAME`).
groupsdir = $(pkgdatadir)/groups
dist_groups_DATA = \
	probes/groups/roofline.txt \
	probes/groups/memory.txt \
	probes/groups/flops.txt

## The commands and the protocol they share: in fuseprof-gpu, the program
## that links the GPU libraries (src/local.mk).
fuseprof_gpu_SOURCES += \
	src/cmd-run.c src/cmd-ceilings.c \
	src/runloop.c src/runloop.h \
	src/shape.c src/shape.h
fp_gpu_libs += probes/libfpprobes.a

### tests #####################################################################
test_probe_libs = probes/libfpprobes.a kernels/libfpkernels.a lib/libfpcore.a \
	$(CUDA_LIBS) -lm

## The sweep parser: unit test, and a fuzz driver with a fixed budget that
## runs in `make check` (tests/fuzz/fuzz-shape.c also builds as a libFuzzer
## target: see its header).
check_PROGRAMS += tests/test-shape tests/fuzz/fuzz-shape
TESTS += tests/test-shape tests/fuzz/fuzz-shape
tests_test_shape_SOURCES = tests/test-shape.c src/shape.c src/shape.h
tests_test_shape_LDADD = $(test_kernel_libs)
tests_fuzz_fuzz_shape_SOURCES = tests/fuzz/fuzz-shape.c src/shape.c src/shape.h
tests_fuzz_fuzz_shape_LDADD = $(test_kernel_libs)

## Counter groups: parsing, formulas, every shipped group file.
check_PROGRAMS += tests/test-groups
TESTS += tests/test-groups
tests_test_groups_SOURCES = tests/test-groups.c
tests_test_groups_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFP_GROUPS_SRCDIR='"$(abs_top_srcdir)/probes/groups"'
tests_test_groups_LDADD = $(test_probe_libs)

## Ceilings bookkeeping in the store (no GPU).
check_PROGRAMS += tests/test-ceilings
TESTS += tests/test-ceilings
tests_test_ceilings_SOURCES = tests/test-ceilings.c src/runloop.c src/runloop.h \
	src/shape.c src/shape.h
tests_test_ceilings_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_test_ceilings_LDADD = $(test_probe_libs) store/libfpstore.a $(SQLITE_LIBS)

## GPU: counters on kernels of known work (skips with 77 without a GPU).
check_PROGRAMS += tests/test-probes-gpu
TESTS += tests/test-probes-gpu
tests_test_probes_gpu_SOURCES = tests/test-probes-gpu.c
tests_test_probes_gpu_LDADD = $(test_probe_libs)

## The command line of `run` and `ceilings`; the GPU runs skip without one.
TESTS += tests/test-run-cli.sh tests/test-run-gpu.sh
EXTRA_DIST += tests/test-run-cli.sh tests/test-run-gpu.sh
