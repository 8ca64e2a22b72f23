## inject/local.mk - libfuseprof-inject.so, the collector `fuseprof profile`
## loads into a program (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH).
## Top floor beside src/: it drives probes/ (CUPTI) and store/ (SQLite),
## which no lower floor may join; src/cmd-profile.c includes its
## inject.h, nothing includes src/. A shared library in someone else's
## process, linked from the position-independent objects of the folders'
## libraries (Makefile.am), exporting only its two entry points
## (inject.map). Built as a program of its own directory with -shared, so
## that automake installs it without libtool.

injectdir = $(pkglibdir)
inject_PROGRAMS = libfuseprof-inject.so
libfuseprof_inject_so_SOURCES = \
	inject/inject.c inject/inject.h \
	inject/collect.c inject/collect.h \
	inject/args.c inject/args-pick.c inject/args.h
libfuseprof_inject_so_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) \
	-I$(top_srcdir)/inject
libfuseprof_inject_so_LDFLAGS = -shared -Wl,-z,defs \
	-Wl,--version-script=$(srcdir)/inject/inject.map \
	$(CUDA_LDFLAGS) -L$(CUDA_STUBS_DIR)
## The counters' L2 flush is a kernel of fuseprof's own (probes/counters.cu),
## launched through a CUDA runtime linked in statically: the program's
## runtime, if it has one, may be another version, or static in it.
libfuseprof_inject_so_LDADD = probes/libfpprobes.a store/libfpstore.a \
	lib/libfpcore.a $(SQLITE_LIBS) -lcupti -lcudart_static -lcuda -lstdc++ \
	-lrt -lpthread -ldl -lm
libfuseprof_inject_so_DEPENDENCIES = probes/libfpprobes.a store/libfpstore.a \
	lib/libfpcore.a $(srcdir)/inject/inject.map
EXTRA_DIST += inject/inject.map

### tests #####################################################################
## The pipeline from records to the store, on synthetic records: range
## paths, ops and samples, the kernel filter and limit (no GPU).
check_PROGRAMS += tests/test-profile
TESTS += tests/test-profile
tests_test_profile_SOURCES = tests/test-profile.c \
	inject/collect.c inject/collect.h
tests_test_profile_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) -I$(top_srcdir)/inject
tests_test_profile_LDADD = store/libfpstore.a probes/libfpprobes.a \
	lib/libfpcore.a $(SQLITE_LIBS) -lm

## Which words of a launch's arguments are device pointers (no GPU).
check_PROGRAMS += tests/test-args
TESTS += tests/test-args
tests_test_args_SOURCES = tests/test-args.c inject/args-pick.c inject/args.h
tests_test_args_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/inject
tests_test_args_LDADD = lib/libfpcore.a

## The command line of `fuseprof profile` (its refusals, the environment
## it gives the program, exit statuses, a program with no CUDA work) and
## what report, compare, query and export make of synthetic profiled runs;
## tests/jsoncheck parses the exported trace as strict JSON and checks the
## Trace Event Format's rules (no GPU).
check_PROGRAMS += tests/jsoncheck
tests_jsoncheck_SOURCES = tests/jsoncheck.c
tests_jsoncheck_LDADD = -lm
TESTS += tests/test-profile-cli.sh tests/test-export.sh
EXTRA_DIST += tests/test-profile-cli.sh tests/test-export.sh

## On a GPU (skips with 77 without one): a CUDA program the test builds
## with nvcc (tests/profile-app.cu), profiled plain, forking and killed;
## a PyTorch script when PyTorch is there.
TESTS += tests/test-profile-gpu.sh
EXTRA_DIST += tests/test-profile-gpu.sh tests/profile-app.cu tests/profile-torch.py
AM_TESTS_ENVIRONMENT += NVCC='$(NVCC)'; export NVCC; \
	NVCC_GENCODE='$(NVCC_GENCODE)'; export NVCC_GENCODE;
