## src/local.mk - the fuseprof program, its commands, the store.

noinst_LIBRARIES += src/libfpcore.a src/libfpstore.a

## Error reporting, small utilities, tables: no CUDA, no SQLite.
src_libfpcore_a_SOURCES = \
	src/error.c src/error.h \
	src/util.c src/util.h \
	src/table.c src/table.h

## The SQLite store: schema, migrations, views, inserts and reads.
src_libfpstore_a_SOURCES = \
	src/store.c src/store.h \
	src/views.c src/views.h
src_libfpstore_a_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)

bin_PROGRAMS += fuseprof
fuseprof_SOURCES = \
	src/main.c src/cmd.h \
	src/cmd-query.c \
	src/cmd-list.c
fuseprof_CPPFLAGS = $(AM_CPPFLAGS) $(SQLITE_CFLAGS)
fuseprof_LDADD = $(fp_cmd_libs) kernels/libfpkernels.a \
	src/libfpstore.a src/libfpcore.a \
	$(SQLITE_LIBS) $(CUDA_LIBS) -lm
