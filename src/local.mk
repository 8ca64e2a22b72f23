## src/local.mk - the top floor: the fuseprof programs, their commands (one
## cmd-*.c each), the run loop and the sweep parser; with their tests.

## Two programs: `fuseprof` links SQLite and libc alone and hands the GPU
## commands (run, ceilings, list workloads) to `fuseprof-gpu`, which links
## CUDA, cuBLAS and CUPTI; loading those costs every other command about
## 0.1 s of CPU time. fuseprof finds fuseprof-gpu through
## $FUSEPROF_EXEC_PATH, else beside itself (the build tree), else in
## $(pkglibexecdir). Every command's file is listed here; the folders below
## add their libraries to fp_cmd_libs (fuseprof) and fp_gpu_libs
## (fuseprof-gpu).
bin_PROGRAMS += fuseprof
fuseprof_SOURCES = \
	src/main.c src/cmd.h \
	src/gpu-exec.c \
	src/cmd-query.c \
	src/cmd-list.c \
	src/cmd-report.c \
	src/cmd-compare.c \
	src/cmd-profile.c \
	src/cmd-export.c \
	src/cmd-merge.c
fuseprof_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) \
	-DFP_PKGLIBEXECDIR='"$(pkglibexecdir)"' \
	-DFP_PKGLIBDIR='"$(pkglibdir)"' -I$(top_srcdir)/inject
## No CUDA rpath either: nothing here needs the toolkit's libraries.
fuseprof_LDFLAGS =
fuseprof_LDADD = $(fp_cmd_libs) probes/libfpprobes.a \
	store/libfpstore.a lib/libfpcore.a \
	$(SQLITE_LIBS) -lm

## `run` and `ceilings` with the measurement protocol they share: the op
## list (run-ops.c), the run loop in phases (runloop.c), one run on several
## GPUs (run-devices.c), the dry run's checks and estimate
## (run-estimate.c), the ceilings bookkeeping (run-ceilings.c), the sweep
## parser (shape.c).
pkglibexec_PROGRAMS = fuseprof-gpu
fuseprof_gpu_SOURCES = \
	src/main.c src/cmd.h \
	src/cmd-list.c \
	src/cmd-run.c src/cmd-ceilings.c \
	src/runloop.c src/runloop.h src/run-devices.c \
	src/run-ops.c src/run-ops.h \
	src/run-ceilings.c src/run-ceilings.h \
	src/run-estimate.c src/run-estimate.h \
	src/shape.c src/shape.h
fuseprof_gpu_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) -DFP_GPU_PROGRAM
fuseprof_gpu_LDADD = $(fp_gpu_libs) kernels/libfpkernels.a \
	store/libfpstore.a lib/libfpcore.a \
	$(SQLITE_LIBS) $(CUDA_LIBS) -lm

### tests #####################################################################
## The sweep parser: unit test, and a fuzz driver with a fixed budget that
## runs in `make check` (tests/fuzz/fuzz-shape.c also builds as a libFuzzer
## target: see its header).
check_PROGRAMS += tests/test-shape tests/fuzz/fuzz-shape
TESTS += tests/test-shape tests/fuzz/fuzz-shape
tests_test_shape_SOURCES = tests/test-shape.c src/shape.c src/shape.h
tests_test_shape_LDADD = $(test_kernel_libs)
tests_fuzz_fuzz_shape_SOURCES = tests/fuzz/fuzz-shape.c src/shape.c src/shape.h
tests_fuzz_fuzz_shape_LDADD = $(test_kernel_libs)

## Ceilings bookkeeping in the store (no GPU).
check_PROGRAMS += tests/test-ceilings
TESTS += tests/test-ceilings
tests_test_ceilings_SOURCES = tests/test-ceilings.c \
	src/run-ceilings.c src/run-ceilings.h
tests_test_ceilings_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
tests_test_ceilings_LDADD = store/libfpstore.a $(test_probe_libs) $(SQLITE_LIBS)

## The command line of `run` and `ceilings`; the GPU runs skip without one.
TESTS += tests/test-run-cli.sh tests/test-run-gpu.sh
EXTRA_DIST += tests/test-run-cli.sh tests/test-run-gpu.sh

## Several GPUs (skips with fewer than two): `run --device all`, and a
## two-rank torchrun program profiled a rank a file and merged.
TESTS += tests/test-multi-gpu.sh
EXTRA_DIST += tests/test-multi-gpu.sh tests/ranks-torch.py
