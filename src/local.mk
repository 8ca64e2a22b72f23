## src/local.mk - the top floor: the fuseprof programs, their commands and
## the run loop; with the tests of the run loop's parts.

## Two programs: `fuseprof` links SQLite and libc alone and hands the GPU
## commands (run, ceilings, list workloads) to `fuseprof-gpu`, which links
## CUDA, cuBLAS and CUPTI; loading those costs every other command about
## 0.1 s of CPU time. fuseprof finds fuseprof-gpu through
## $FUSEPROF_EXEC_PATH, else beside itself (the build tree), else in
## $(pkglibexecdir). Fragments add non-GPU commands to fuseprof_SOURCES and
## fp_cmd_libs, GPU commands to fuseprof_gpu_SOURCES and fp_gpu_libs.
bin_PROGRAMS += fuseprof
fuseprof_SOURCES = \
	src/main.c src/cmd.h \
	src/gpu-exec.c \
	src/cmd-query.c \
	src/cmd-list.c
fuseprof_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) \
	-DFP_PKGLIBEXECDIR='"$(pkglibexecdir)"'
## No CUDA rpath either: nothing here needs the toolkit's libraries.
fuseprof_LDFLAGS =
fuseprof_LDADD = $(fp_cmd_libs) \
	store/libfpstore.a lib/libfpcore.a \
	$(SQLITE_LIBS) -lm

pkglibexec_PROGRAMS = fuseprof-gpu
fuseprof_gpu_SOURCES = \
	src/main.c src/cmd.h \
	src/cmd-list.c
fuseprof_gpu_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS) -DFP_GPU_PROGRAM
fuseprof_gpu_LDADD = $(fp_gpu_libs) kernels/libfpkernels.a \
	store/libfpstore.a lib/libfpcore.a \
	$(SQLITE_LIBS) $(CUDA_LIBS) -lm
