## probes/local.mk - measurement: device facts, CUPTI Activity, CUPTI Range
## Profiler counters, counter groups (text files), ceilings; and their
## tests. The commands that drive them (`run`, `ceilings`) are in
## src/local.mk.

noinst_LIBRARIES += probes/libfpprobes.a
probes_libfpprobes_a_SOURCES = \
	probes/probes.h \
	probes/device.c \
	probes/activity.c \
	probes/ranges.c \
	probes/device-drv.c \
	probes/counters-layout.c \
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

## fuseprof-gpu links this library (src/local.mk).
fp_gpu_libs += probes/libfpprobes.a

### tests #####################################################################
test_probe_libs = probes/libfpprobes.a kernels/libfpkernels.a lib/libfpcore.a \
	$(CUDA_LIBS) -lm

## Counter groups: parsing, formulas, every shipped group file.
check_PROGRAMS += tests/test-groups
TESTS += tests/test-groups
tests_test_groups_SOURCES = tests/test-groups.c
tests_test_groups_CPPFLAGS = $(AM_CPPFLAGS) \
	-DFP_GROUPS_SRCDIR='"$(abs_top_srcdir)/probes/groups"'
tests_test_groups_LDADD = $(test_probe_libs)

## Where a collection's kernels and write-backs sit among its ranges.
check_PROGRAMS += tests/test-counters-layout
TESTS += tests/test-counters-layout
tests_test_counters_layout_SOURCES = tests/test-counters-layout.c
tests_test_counters_layout_LDADD = $(test_probe_libs)

## GPU: counters on kernels of known work (skips with 77 without a GPU).
check_PROGRAMS += tests/test-probes-gpu
TESTS += tests/test-probes-gpu
tests_test_probes_gpu_SOURCES = tests/test-probes-gpu.c
tests_test_probes_gpu_LDADD = $(test_probe_libs)
