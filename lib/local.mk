## lib/local.mk - the ground floor: error reporting, small utilities and
## tables, which every other folder may use. Nothing here includes a header
## from another folder, and nothing here needs CUDA or SQLite.

noinst_LIBRARIES += lib/libfpcore.a
lib_libfpcore_a_SOURCES = \
	lib/error.c lib/error.h \
	lib/util.c lib/util.h \
	lib/par.c lib/par.h \
	lib/table.c lib/table.h \
	lib/strmap.c lib/strmap.h \
	lib/launcher.c lib/launcher.h
